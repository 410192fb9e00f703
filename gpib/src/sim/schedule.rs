//! Virtual time: each caller's own clock, the resources operations take turns on, the
//! instruments' timers, and the turn-taking that keeps runs deterministic.
//!
//! * **Callers.** Every thread that uses a simulated host has its own position in
//!   virtual time; an operation starts at the caller's time (or later, when what it
//!   needs is busy) and moves the caller to its end.
//! * **Resources.** A resource carries one operation at a time and is free again at
//!   the end of the last one: each board's bus (and its DMA engine), each instrument
//!   (its own processing: response latency, measurements), and the host's CPUs (one
//!   or more, each taken by whoever asks first in virtual time). An operation takes
//!   what it needs when all of it is free.
//! * **Timers.** An instrument asks to be woken at a virtual time; it is called back
//!   before any operation that starts at or after that time looks at it.
//! * **Turns.** Threads registered as [`Participant`]s take turns: the one with the
//!   earliest clock runs its next operation (ties go to the lower participant
//!   number), so the same workload gives the same virtual times whatever the
//!   operating system does with the threads. Unregistered threads run as they come
//!   (deterministic on their own, not interleaved with each other). A participant
//!   waiting for its turn is parked; the one that gives the turn away wakes only the
//!   participant whose turn comes next, so a hand-off costs one wake-up however many
//!   participants there are.
//! * **Lanes.** Callers that are not threads: one thread runs many of them, the
//!   earliest first, in the order participants would take turns, with no hand-off
//!   between threads at all (see `SimHost::run_lanes`).

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A virtual time as whole nanoseconds, saturating (u64 nanoseconds last 584 years):
/// the resources keep their timelines in these, which cost a few instructions to add
/// and compare where `Duration`'s seconds and nanoseconds cost tens.
pub(crate) fn nanos(d: Duration) -> u64 {
    d.as_secs()
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::from(d.subsec_nanos()))
}

/// One resource's timeline: it carries one operation at a time.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Timeline {
    /// When the last operation on it ends, ns.
    free_at: u64,
    /// Time it was busy, in all, ns.
    busy: u64,
}

impl Timeline {
    /// Takes the resource for `[start, end)` ns (`start` no earlier than `free_at`).
    pub(crate) fn take(&mut self, start: u64, end: u64) {
        self.busy = self.busy.saturating_add(end.saturating_sub(start));
        self.free_at = self.free_at.max(end);
    }

    /// When the last operation on it ends, ns.
    pub(crate) fn free_at(&self) -> u64 {
        self.free_at
    }

    /// Time it was busy, in all.
    pub(crate) fn busy(&self) -> Duration {
        Duration::from_nanos(self.busy)
    }
}

/// The host's CPUs.
#[derive(Debug, Clone)]
pub(crate) struct Cpus {
    cpus: Vec<Timeline>,
}

impl Cpus {
    /// `n` CPUs (at least one).
    pub(crate) fn new(n: usize) -> Self {
        Self {
            cpus: vec![Timeline::default(); n.max(1)],
        }
    }

    /// Number of CPUs.
    pub(crate) fn count(&self) -> usize {
        self.cpus.len()
    }

    /// Runs `work` ns of CPU time on the CPU free first, no earlier than `earliest`
    /// ns; returns when the work ends.
    pub(crate) fn run(&mut self, earliest: u64, work: u64) -> u64 {
        if work == 0 {
            return earliest;
        }
        let cpu = match self.cpus.as_mut_slice() {
            [one] => one,
            many => match many.iter_mut().min_by_key(|c| c.free_at) {
                Some(cpu) => cpu,
                None => return earliest, // `new` makes at least one
            },
        };
        let start = earliest.max(cpu.free_at);
        let end = start.saturating_add(work);
        cpu.take(start, end);
        end
    }

    /// CPU time used so far, all CPUs together.
    pub(crate) fn busy(&self) -> Duration {
        Duration::from_nanos(self.cpus.iter().fold(0, |a, c| a.saturating_add(c.busy)))
    }
}

/// A timer an instrument set: wake device `device` of board `board` with `token`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Timer {
    pub(crate) at: Duration,
    /// Order of setting, so that timers due at one time fire in the order they were set.
    pub(crate) seq: u64,
    pub(crate) board: usize,
    pub(crate) device: usize,
    pub(crate) token: u64,
}

/// The timers of every instrument on a host, earliest first.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    heap: BinaryHeap<Reverse<Timer>>,
    seq: u64,
}

impl Timers {
    /// Sets a timer.
    pub(crate) fn set(&mut self, at: Duration, board: usize, device: usize, token: u64) {
        self.seq += 1;
        self.heap.push(Reverse(Timer {
            at,
            seq: self.seq,
            board,
            device,
            token,
        }));
    }

    /// When the next timer is due.
    pub(crate) fn next_due(&self) -> Option<Duration> {
        self.heap.peek().map(|Reverse(t)| t.at)
    }

    /// Takes the next timer if it is due at or before `t`.
    pub(crate) fn pop_due(&mut self, t: Duration) -> Option<Timer> {
        match self.heap.peek() {
            Some(Reverse(timer)) if timer.at <= t => self.heap.pop().map(|Reverse(t)| t),
            _ => None,
        }
    }

    /// Drops the timers of one device (it was cleared).
    pub(crate) fn cancel_device(&mut self, board: usize, device: usize) {
        self.heap
            .retain(|Reverse(t)| !(t.board == board && t.device == device));
    }
}

/// Caller keys: one per thread, one per lane (see [`AsLane`]); never 0.
static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The thread's own key, 0 until its first use (a plain load after that: no lazy
    /// initialisation to check on every operation).
    static KEY: Cell<u64> = const { Cell::new(0) };
    /// The lane the thread runs as, or 0.
    static LANE: Cell<u64> = const { Cell::new(0) };
}

/// A caller key nobody else has (for a lane).
pub(crate) fn new_key() -> u64 {
    NEXT_KEY.fetch_add(1, Ordering::Relaxed)
}

/// The calling caller's number, unique in the process: the lane the thread runs as,
/// else the thread's own. Cheaper to get and to hash than
/// `std::thread::current().id()` (every operation looks its caller up twice).
fn thread_key() -> u64 {
    match LANE.with(Cell::get) {
        0 => KEY.with(|k| match k.get() {
            0 => {
                let key = new_key();
                k.set(key);
                key
            }
            key => key,
        }),
        lane => lane,
    }
}

/// While alive, the calling thread's operations are lane `key`'s: they start at that
/// lane's clock and move it (see `SimHost::run_lanes`).
pub(crate) struct AsLane {
    before: u64,
}

impl AsLane {
    /// The calling thread runs as lane `key` until the guard drops.
    pub(crate) fn enter(key: u64) -> Self {
        Self {
            before: LANE.with(|l| l.replace(key)),
        }
    }
}

impl Drop for AsLane {
    fn drop(&mut self) {
        LANE.with(|l| l.set(self.before));
    }
}

/// Hashes the small integer keys of [`Callers`]' maps (thread keys and participant
/// numbers, which nobody outside chooses) with one multiplication instead of SipHash.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        // Fibonacci hashing: spreads consecutive numbers over the high bits, which
        // hashbrown uses for its control bytes.
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;

/// One caller's place in virtual time.
#[derive(Debug, Clone, Copy, Default)]
struct Caller {
    /// Its clock, ns.
    now: u64,
    /// The participant number, for registered callers.
    participant: Option<u64>,
}

/// The callers of a host and their clocks.
#[derive(Debug, Default)]
pub(crate) struct Callers {
    /// By [`thread_key`], all but the recent caller's.
    threads: KeyMap<Caller>,
    /// The caller that used the host last (key 0: none), kept out of `threads`: the
    /// next operation is most often the same caller's (each of a transaction's), and
    /// finds its clock without a lookup.
    recent: (u64, Caller),
    /// Registered participants: number -> clock (removed once it left).
    participants: KeyMap<Duration>,
    /// Participants waiting (in wall time) for their turn, with their threads.
    parked: KeyMap<std::thread::Thread>,
    next_participant: u64,
    /// The latest time any caller reached, ns: where a new caller starts.
    frontier: u64,
    /// The participant that holds the turn, and how many times it took it (a bus
    /// transaction holds it across its operations).
    holding: Option<(u64, usize)>,
}

impl Callers {
    /// Caller `key`'s entry, made the recent one (a new caller starts at the
    /// frontier).
    #[inline]
    fn entry(&mut self, key: u64) -> &mut Caller {
        if self.recent.0 != key {
            self.make_recent(key);
        }
        &mut self.recent.1
    }

    /// Makes caller `key` the recent one (the uncommon case: another caller's turn).
    #[cold]
    #[inline(never)]
    fn make_recent(&mut self, key: u64) {
        let fresh = Caller {
            now: self.frontier,
            participant: None,
        };
        let c = self.threads.remove(&key).unwrap_or(fresh);
        let (before, was) = std::mem::replace(&mut self.recent, (key, c));
        if before != 0 {
            self.threads.insert(before, was);
        }
    }

    /// Caller `key`'s entry, if it has one.
    fn get(&self, key: u64) -> Option<&Caller> {
        if self.recent.0 == key {
            Some(&self.recent.1)
        } else {
            self.threads.get(&key)
        }
    }

    /// The current thread's clock (a new caller starts at the frontier).
    pub(crate) fn now(&mut self) -> Duration {
        Duration::from_nanos(self.now_ns())
    }

    /// [`Callers::now`] in nanoseconds, as the operations count.
    #[inline(always)]
    pub(crate) fn now_ns(&mut self) -> u64 {
        self.entry(thread_key()).now
    }

    /// Moves the current thread's clock to `t` (never backwards).
    pub(crate) fn set_now(&mut self, t: Duration) {
        self.set_now_ns(nanos(t));
    }

    /// [`Callers::set_now`] in nanoseconds.
    #[inline(always)]
    pub(crate) fn set_now_ns(&mut self, t: u64) {
        let c = self.entry(thread_key());
        c.now = c.now.max(t);
        let (now, participant) = (c.now, c.participant);
        if let Some(p) = participant {
            self.participants.insert(p, Duration::from_nanos(now));
        }
        self.frontier = self.frontier.max(now);
    }

    /// Adds a caller that is not a thread (a lane), starting at the current thread's
    /// time; returns its key.
    pub(crate) fn add_lane(&mut self) -> u64 {
        let now = self.now_ns();
        let key = new_key();
        *self.entry(key) = Caller {
            now,
            participant: None,
        };
        key
    }

    /// Lane `key`'s clock.
    pub(crate) fn lane_now(&self, key: u64) -> Duration {
        Duration::from_nanos(self.get(key).map_or(self.frontier, |c| c.now))
    }

    /// Lane `key` is done: its clock is forgotten.
    pub(crate) fn remove_lane(&mut self, key: u64) {
        if self.recent.0 == key {
            self.recent = (0, Caller::default());
        }
        self.threads.remove(&key);
    }

    /// Registers a participant starting at the current thread's time.
    pub(crate) fn register(&mut self) -> u64 {
        let now = self.now();
        let id = self.next_participant;
        self.next_participant += 1;
        self.participants.insert(id, now);
        id
    }

    /// Binds participant `id` to the current thread.
    pub(crate) fn bind(&mut self, id: u64) {
        let now = self
            .participants
            .get(&id)
            .map_or(self.frontier, |&t| nanos(t));
        *self.entry(thread_key()) = Caller {
            now,
            participant: Some(id),
        };
    }

    /// Participant `id` leaves: it no longer holds others back.
    pub(crate) fn leave(&mut self, id: u64) {
        self.participants.remove(&id);
        self.threads.retain(|_, c| c.participant != Some(id));
        if self.recent.1.participant == Some(id) {
            self.recent = (0, Caller::default());
        }
        if matches!(self.holding, Some((h, _)) if h == id) {
            self.holding = None;
        }
    }

    /// Takes the turn for participant `me`, if it may run now (see [`Callers::my_turn`]);
    /// a participant that holds it already takes it once more.
    pub(crate) fn try_take_turn(&mut self, me: u64) -> bool {
        match &mut self.holding {
            Some((h, depth)) if *h == me => {
                *depth += 1;
                true
            }
            Some(_) => false,
            None => {
                let t = self
                    .participants
                    .get(&me)
                    .copied()
                    .unwrap_or(Duration::from_nanos(self.frontier));
                if self.my_turn(me, t) {
                    self.holding = Some((me, 1));
                    true
                } else {
                    false
                }
            }
        }
    }

    /// Gives back one taking of the turn by `me`; true when the turn is free again.
    pub(crate) fn give_turn(&mut self, me: u64) -> bool {
        match &mut self.holding {
            Some((h, depth)) if *h == me => {
                *depth -= 1;
                if *depth == 0 {
                    self.holding = None;
                    return true;
                }
                false
            }
            _ => false,
        }
    }

    /// Participant `me` waits for its turn on `thread`.
    pub(crate) fn park(&mut self, me: u64, thread: std::thread::Thread) {
        self.parked.insert(me, thread);
    }

    /// Participant `me` no longer waits.
    pub(crate) fn unpark(&mut self, me: u64) {
        self.parked.remove(&me);
    }

    /// The thread of the participant whose turn comes next, if the turn is free and
    /// that participant waits for it.
    pub(crate) fn parked_next(&self) -> Option<std::thread::Thread> {
        if self.holding.is_some() || self.parked.is_empty() {
            return None;
        }
        let (&next, _) = self
            .participants
            .iter()
            .min_by_key(|&(&id, &at)| (at, id))?;
        self.parked.get(&next).cloned()
    }

    /// The current thread's participant number, if it is one.
    pub(crate) fn participant(&self) -> Option<u64> {
        if self.participants.is_empty() {
            return None; // no participants: no lookup
        }
        self.get(thread_key()).and_then(|c| c.participant)
    }

    /// Whether participant `me` at `t` may run now: no other participant is earlier
    /// (or as early with a lower number).
    pub(crate) fn my_turn(&self, me: u64, t: Duration) -> bool {
        self.participants
            .iter()
            .all(|(&id, &at)| id == me || (at, id) > (t, me))
    }

    /// The earliest clock of the other participants, if any.
    pub(crate) fn earliest_other(&self, me: u64) -> Option<Duration> {
        self.participants
            .iter()
            .filter(|(&id, _)| id != me)
            .map(|(_, &t)| t)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn one_cpu_serialises_work_two_cpus_overlap_it() {
        let n = |m: u64| m * 1_000_000;
        let mut one = Cpus::new(1);
        assert_eq!(one.run(n(0), n(10)), n(10));
        assert_eq!(one.run(n(0), n(10)), n(20), "waits for the busy CPU");
        assert_eq!(one.run(n(50), n(1)), n(51), "an idle CPU starts at once");
        assert_eq!(one.busy(), ms(21));
        let mut two = Cpus::new(2);
        assert_eq!(two.run(n(0), n(10)), n(10));
        assert_eq!(two.run(n(0), n(10)), n(10));
        assert_eq!(two.run(n(0), n(10)), n(20));
        assert_eq!(two.count(), 2);
        assert_eq!(Cpus::new(0).count(), 1);
    }

    #[test]
    fn timers_fire_in_time_then_setting_order() {
        let mut t = Timers::default();
        t.set(ms(5), 0, 1, 10);
        t.set(ms(2), 0, 2, 20);
        t.set(ms(5), 0, 3, 30);
        assert_eq!(t.next_due(), Some(ms(2)));
        assert!(t.pop_due(ms(1)).is_none());
        let order: Vec<u64> = std::iter::from_fn(|| t.pop_due(ms(9)).map(|x| x.token)).collect();
        assert_eq!(order, [20, 10, 30]);
        t.set(ms(1), 1, 0, 1);
        t.set(ms(1), 1, 1, 2);
        t.cancel_device(1, 0);
        assert_eq!(t.pop_due(ms(1)).map(|x| x.token), Some(2));
    }

    #[test]
    fn callers_have_their_own_clocks_and_start_at_the_frontier() {
        let mut c = Callers::default();
        assert_eq!(c.now(), ms(0));
        c.set_now(ms(7));
        c.set_now(ms(3));
        assert_eq!(c.now(), ms(7), "never backwards");
        let mut other = std::thread::scope(|s| {
            s.spawn(|| {
                let mut c2 = Callers::default();
                c2.set_now(ms(1));
                c2
            })
            .join()
            .unwrap()
        });
        // A thread new to `other` starts where the others got to.
        assert_eq!(other.now(), ms(1));
    }

    #[test]
    fn the_earliest_participant_has_the_turn() {
        let mut c = Callers::default();
        c.set_now(ms(10));
        let a = c.register();
        let b = c.register();
        assert!(
            c.my_turn(a, ms(10)) && !c.my_turn(b, ms(10)),
            "ties: lower number"
        );
        c.participants.insert(a, ms(20));
        assert!(c.my_turn(b, ms(10)) && !c.my_turn(a, ms(20)));
        assert_eq!(c.earliest_other(a), Some(ms(10)));
        c.leave(b);
        assert!(c.my_turn(a, ms(20)));
        assert_eq!(c.earliest_other(a), None);
    }

    #[test]
    fn a_held_turn_is_held_until_given_back_as_often_as_taken() {
        let mut c = Callers::default();
        let a = c.register();
        let b = c.register();
        assert!(!c.try_take_turn(b), "a is earlier (lower number)");
        assert!(c.try_take_turn(a));
        assert!(c.try_take_turn(a), "nested");
        c.participants.insert(a, ms(50));
        assert!(!c.try_take_turn(b), "a still holds it");
        assert!(!c.give_turn(a));
        assert!(c.give_turn(a));
        assert!(c.try_take_turn(b), "b is earliest now");
        c.leave(b);
        assert!(c.try_take_turn(a));
    }
}
