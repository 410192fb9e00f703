//! The served devices' locks, one table for the VXI-11 and HiSLIP gateways: a device
//! a client of one protocol has locked is locked for the other's clients too. A lock
//! is exclusive (one holder), or shared by the holders that gave the same lock string
//! (HiSLIP's shared locks).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::holds::DeviceHolds;

pub(crate) use super::owner::{Device, Owner};

/// The locks of one device.
#[derive(Debug, Default)]
struct Lock {
    exclusive: Option<Owner>,
    /// The shared lock's string and its holders.
    shared: Option<(Vec<u8>, BTreeSet<Owner>)>,
}

impl Lock {
    fn allows(&self, o: Owner) -> bool {
        self.exclusive.is_none_or(|e| e == o)
            && self.shared.as_ref().is_none_or(|(_, h)| h.contains(&o))
    }

    fn is_free(&self) -> bool {
        self.exclusive.is_none() && self.shared.is_none()
    }

    /// Takes the exclusive lock (`key` empty) or the shared lock `key` for `o`.
    fn take(&mut self, o: Owner, key: &[u8]) -> bool {
        if key.is_empty() {
            let others_share = self
                .shared
                .as_ref()
                .is_some_and(|(_, h)| h.iter().any(|&s| s != o));
            match self.exclusive {
                Some(e) => e == o,
                None if !others_share => {
                    self.exclusive = Some(o);
                    true
                }
                None => false,
            }
        } else if self.exclusive.is_none_or(|e| e == o) {
            match &mut self.shared {
                None => {
                    self.shared = Some((key.to_vec(), BTreeSet::from([o])));
                    true
                }
                Some((k, h)) if k.as_slice() == key => {
                    h.insert(o);
                    true
                }
                Some(_) => false,
            }
        } else {
            false
        }
    }

    /// Releases `o`'s lock: `Some(true)` the exclusive one, `Some(false)` a shared
    /// one, `None` when it held none.
    fn release(&mut self, o: Owner) -> Option<bool> {
        if self.exclusive == Some(o) {
            self.exclusive = None;
            return Some(true);
        }
        let (_, h) = self.shared.as_mut().filter(|(_, h)| h.contains(&o))?;
        h.remove(&o);
        if h.is_empty() {
            self.shared = None;
        }
        Some(false)
    }
}

/// How a wait for a device ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Done: the device may be used (or the lock is taken).
    Done,
    /// Another holder kept it past the deadline.
    Locked,
    /// The caller's `stop` said to give up (a VXI-11 abort).
    Stopped,
}

/// The longest a waiter sleeps before asking its `stop` again.
const SLICE: Duration = Duration::from_millis(50);

/// Every served device's locks.
#[derive(Debug, Default)]
pub(crate) struct DeviceLocks {
    table: Mutex<HashMap<Device, Lock>>,
    changed: Condvar,
    /// Who has each device between the calls of one exchange (a query and its answer).
    pub(crate) holds: DeviceHolds,
}

impl DeviceLocks {
    fn table(&self) -> MutexGuard<'_, HashMap<Device, Lock>> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until `f` succeeds on `d`'s lock, `deadline` passes, or `stop` says so
    /// (asked between waits, never while the table is held).
    fn wait(
        &self,
        d: Device,
        deadline: Instant,
        stop: &dyn Fn() -> bool,
        mut f: impl FnMut(&mut Lock) -> bool,
    ) -> Wait {
        loop {
            {
                let mut t = self.table();
                let l = t.entry(d).or_default();
                let done = f(l);
                if l.is_free() {
                    t.remove(&d);
                }
                if done {
                    return Wait::Done;
                }
                let now = Instant::now();
                if now >= deadline {
                    return Wait::Locked;
                }
                let nap = (deadline - now).min(SLICE);
                drop(self.changed.wait_timeout(t, nap));
            }
            if stop() {
                return Wait::Stopped;
            }
        }
    }

    /// Waits until `o` may use `d`: no other holder's lock on it.
    pub(crate) fn wait_access(
        &self,
        d: Device,
        o: Owner,
        deadline: Instant,
        stop: &dyn Fn() -> bool,
    ) -> Wait {
        self.wait(d, deadline, stop, |l| l.allows(o))
    }

    /// Takes `d`'s exclusive lock (`key` empty) or its shared lock `key` for `o`,
    /// waiting until `deadline` for other holders to release theirs. A lock already
    /// held is granted again.
    pub(crate) fn lock(
        &self,
        d: Device,
        o: Owner,
        key: &[u8],
        deadline: Instant,
        stop: &dyn Fn() -> bool,
    ) -> Wait {
        self.wait(d, deadline, stop, |l| l.take(o, key))
    }

    /// Releases `o`'s lock on `d`: `Some(true)` an exclusive one, `Some(false)` a
    /// shared one, `None` when it held none.
    pub(crate) fn release(&self, d: Device, o: Owner) -> Option<bool> {
        let mut t = self.table();
        let r = t.get_mut(&d).and_then(|l| l.release(o));
        t.retain(|_, l| !l.is_free());
        drop(t);
        self.changed.notify_all();
        r
    }

    /// Releases every lock and hold of `o` (its link or session is gone).
    pub(crate) fn release_all(&self, o: Owner) {
        self.holds.release_all(o);
        let mut t = self.table();
        for l in t.values_mut() {
            l.release(o);
        }
        t.retain(|_, l| !l.is_free());
        drop(t);
        self.changed.notify_all();
    }

    /// (an exclusive lock is held, how many hold a lock) on `d`.
    pub(crate) fn info(&self, d: Device) -> (bool, u32) {
        self.table().get(&d).map_or((false, 0), |l| {
            let mut h: BTreeSet<Owner> = l.exclusive.into_iter().collect();
            if let Some((_, s)) = &l.shared {
                h.extend(s);
            }
            (l.exclusive.is_some(), h.len() as u32)
        })
    }

    /// Wakes every waiter (to ask its `stop` again).
    pub(crate) fn notify(&self) {
        self.changed.notify_all();
    }
}

/// `wait` from now, or far in the future when it cannot be represented.
pub(crate) fn deadline_after(wait: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::Address;

    fn dev() -> Device {
        (0, Address::new(22, None).unwrap())
    }

    #[test]
    fn exclusive_and_shared_locks_across_owners() {
        let l = DeviceLocks::default();
        let (a, b) = (Owner::Link(1), Owner::Session(1));
        let now = Instant::now();
        let never = &|| false;
        assert_eq!(l.lock(dev(), a, b"", now, never), Wait::Done);
        assert_eq!(l.wait_access(dev(), b, now, never), Wait::Locked);
        assert_eq!(l.lock(dev(), b, b"k", now, never), Wait::Locked);
        assert_eq!(l.info(dev()), (true, 1));
        assert_eq!(l.release(dev(), b), None);
        assert_eq!(l.release(dev(), a), Some(true));
        assert_eq!(l.lock(dev(), b, b"k", now, never), Wait::Done);
        assert_eq!(l.lock(dev(), a, b"k", now, never), Wait::Done);
        assert_eq!(l.lock(dev(), Owner::Link(2), b"", now, never), Wait::Locked);
        assert_eq!(l.info(dev()), (false, 2));
        l.release_all(a);
        l.release_all(b);
        assert_eq!(l.info(dev()), (false, 0));
        assert_eq!(
            l.wait_access(dev(), Owner::Link(2), now, &|| true),
            Wait::Done
        );
    }

    #[test]
    fn a_waiter_gets_the_lock_when_released_or_stops() {
        let l = std::sync::Arc::new(DeviceLocks::default());
        let never = &|| false;
        assert_eq!(
            l.lock(dev(), Owner::Link(1), b"", Instant::now(), never),
            Wait::Done
        );
        let l2 = l.clone();
        let t = std::thread::spawn(move || {
            l2.lock(
                dev(),
                Owner::Session(3),
                b"",
                deadline_after(Duration::from_secs(5)),
                &|| false,
            )
        });
        std::thread::sleep(Duration::from_millis(100));
        l.release(dev(), Owner::Link(1));
        assert_eq!(t.join().unwrap(), Wait::Done);
        let stopped = l.wait_access(
            dev(),
            Owner::Link(1),
            deadline_after(Duration::from_secs(5)),
            &|| true,
        );
        assert_eq!(stopped, Wait::Stopped);
    }
}
