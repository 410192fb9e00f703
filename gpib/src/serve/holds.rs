//! Who has a served device between the calls of one exchange, for every protocol:
//! a query's write and the read of its answer, or the pieces of one message, are one
//! transaction on the device. Another client's call waits until the exchange is over
//! (or the holder lets [`GAP`] pass without its next call), so clients without a lock
//! never get each other's answers nor write into each other's messages.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::owner::{Device, Owner};

/// How long a client that has asked a query (or sent part of a message) keeps its
/// device between that call and its next one: the read of the answer, the rest of
/// the message. Past it, other clients go ahead.
pub(crate) const GAP: Duration = Duration::from_secs(2);

/// The longest a waiter sleeps before asking its `stop` again.
const SLICE: Duration = Duration::from_millis(50);

/// One device's holder.
#[derive(Debug, Clone, Copy)]
struct Hold {
    owner: Owner,
    /// `None` while its call runs; then when it lapses.
    until: Option<Instant>,
}

impl Hold {
    fn lets(&self, o: Owner, now: Instant) -> bool {
        self.owner == o || self.until.is_some_and(|u| now >= u)
    }
}

/// Every served device's holder.
#[derive(Debug, Default)]
pub(crate) struct DeviceHolds {
    table: Mutex<HashMap<Device, Hold>>,
    changed: Condvar,
    /// Calls waiting on `changed` (counted under `table`'s lock): with none, a call's
    /// end wakes nobody, and makes no system call for it.
    waiting: AtomicUsize,
}

impl DeviceHolds {
    fn table(&self) -> MutexGuard<'_, HashMap<Device, Hold>> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until no other client holds `d`, then holds it for `o` while its call
    /// runs. False when `deadline` passed or `stop` said to give up first.
    pub(crate) fn begin(
        &self,
        d: Device,
        o: Owner,
        deadline: Instant,
        stop: &dyn Fn() -> bool,
    ) -> bool {
        loop {
            {
                let mut t = self.table();
                let now = Instant::now();
                if t.get(&d).is_none_or(|h| h.lets(o, now)) {
                    t.insert(
                        d,
                        Hold {
                            owner: o,
                            until: None,
                        },
                    );
                    return true;
                }
                if now >= deadline {
                    return false;
                }
                let lapse = t
                    .get(&d)
                    .and_then(|h| h.until)
                    .map_or(SLICE, |u| u.saturating_duration_since(now));
                let nap = (deadline - now)
                    .min(SLICE)
                    .min(lapse.max(Duration::from_millis(1)));
                self.waiting.fetch_add(1, Ordering::Relaxed);
                let (t, _) = self
                    .changed
                    .wait_timeout(t, nap)
                    .unwrap_or_else(|p| p.into_inner());
                self.waiting.fetch_sub(1, Ordering::Relaxed);
                drop(t);
            }
            if stop() {
                return false;
            }
        }
    }

    /// Ends `o`'s call on `d`. With `more` (its query's answer is still to be read, or
    /// its message is half sent) `o` keeps `d` for [`GAP`]; otherwise `d` is free.
    pub(crate) fn end(&self, d: Device, o: Owner, more: bool) {
        let mut t = self.table();
        if t.get(&d).is_some_and(|h| h.owner == o) {
            if more {
                t.insert(
                    d,
                    Hold {
                        owner: o,
                        until: Some(Instant::now() + GAP),
                    },
                );
            } else {
                t.remove(&d);
            }
        }
        drop(t);
        self.wake();
    }

    /// Lets go of every device `o` holds (its link, session or connection is gone).
    pub(crate) fn release_all(&self, o: Owner) {
        self.table().retain(|_, h| h.owner != o);
        self.wake();
    }

    /// Wakes the waiting calls, if any. A waiter counts itself while it holds the
    /// table's lock, before it waits (which lets the lock go): a change made under the
    /// lock after that sees it counted, and one made before, it sees in the table.
    fn wake(&self) {
        if self.waiting.load(Ordering::Relaxed) > 0 {
            self.changed.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::Address;

    fn dev() -> Device {
        (0, Address::new(22, None).unwrap())
    }

    #[test]
    fn a_held_device_waits_for_its_holders_next_call() {
        let h = std::sync::Arc::new(DeviceHolds::default());
        let (a, b) = (Owner::Link(1), Owner::Session(1));
        let never = &|| false;
        let now = Instant::now();
        assert!(h.begin(dev(), a, now, never));
        h.end(dev(), a, true);
        // Held for a's next call: b waits; a goes on.
        assert!(!h.begin(dev(), b, Instant::now(), never));
        assert!(h.begin(dev(), a, Instant::now(), never));
        let h2 = h.clone();
        let t = std::thread::spawn(move || {
            h2.begin(dev(), b, Instant::now() + Duration::from_secs(20), &|| {
                false
            })
        });
        std::thread::sleep(Duration::from_millis(100));
        h.end(dev(), a, false);
        assert!(t.join().unwrap());
        // A holder that goes away lets go.
        h.end(dev(), b, true);
        h.release_all(b);
        assert!(h.begin(dev(), a, Instant::now(), never));
        // `stop` ends a wait.
        assert!(!h.begin(dev(), b, Instant::now() + Duration::from_secs(20), &|| true));
    }
}
