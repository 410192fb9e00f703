//! Participants: threads whose operations on one host interleave in virtual-time
//! order, so that a workload gives the same virtual times run after run.

use std::sync::atomic::Ordering;
use std::sync::MutexGuard;

use crate::backend::Turns;
use crate::sim::host::SimHost;
use crate::sim::world::World;

/// A caller registered for deterministic turn-taking on a [`SimHost`].
///
/// Made by [`SimHost::participant`] on the thread that starts the workload (it starts
/// at that thread's virtual time), moved to the thread that does the work, and
/// [`entered`](Participant::enter) there. From then on, among participants, the one
/// with the earliest virtual time runs its next operation; the others wait (in wall
/// time, not in virtual time). Dropping it lets the others go on without it.
///
/// A registered participant holds the others back until it runs: start every
/// participant's thread before waiting for any of them, and do not let a participant
/// wait on something outside the simulator (a channel fed by another participant):
/// both deadlock.
///
/// ```
/// use gpib::{Bus, sim};
/// let host = sim::bench();
/// let workers: Vec<_> = (0..2).map(|_| host.participant()).collect();
/// // Start every worker before joining any: a registered participant that never
/// // runs holds the others back.
/// let threads: Vec<_> = workers
///     .into_iter()
///     .map(|p| {
///         let bus = Bus::new(host.board(0).unwrap());
///         std::thread::spawn(move || {
///             p.enter();
///             bus.device(22).unwrap().query("*IDN?").unwrap();
///             bus.now()
///         })
///     })
///     .collect();
/// let times: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
/// assert!(times[0] != times[1], "one waited for the bus while the other used it");
/// ```
#[derive(Debug)]
pub struct Participant {
    host: SimHost,
    id: u64,
}

impl SimHost {
    /// Registers a participant that starts at the calling thread's virtual time (see
    /// [`Participant`]).
    pub fn participant(&self) -> Participant {
        let id = self.lock().callers.register();
        self.inner.participants.fetch_add(1, Ordering::SeqCst);
        Participant {
            host: self.clone(),
            id,
        }
    }
}

impl Turns for SimHost {
    /// Waits (in wall time) until the calling thread may run: at once for a thread
    /// that is not a participant, or that holds the turn already.
    fn acquire(&self) {
        if !self.has_participants() {
            return; // no thread takes turns
        }
        let g = self.lock();
        drop(self.take_turn(g));
    }

    fn release(&self) {
        if !self.has_participants() {
            return;
        }
        let g = self.lock();
        self.give_turn(g);
    }
}

impl SimHost {
    /// Whether any participant is registered. A thread that is one keeps the count
    /// above zero while it runs; for the others the answer does not matter (they take
    /// no turns), so a stale one is harmless.
    pub(crate) fn has_participants(&self) -> bool {
        self.inner.participants.load(Ordering::SeqCst) > 0
    }

    /// Takes the turn for the calling thread with the host locked (waiting, in wall
    /// time, while another participant's turn comes first); returns the lock and the
    /// participant number, if the thread is one.
    pub(crate) fn take_turn<'a>(
        &'a self,
        mut g: MutexGuard<'a, World>,
    ) -> (MutexGuard<'a, World>, Option<u64>) {
        let me = g.callers.participant();
        if let Some(me) = me {
            while !g.callers.try_take_turn(me) {
                // Parked until the participant before it gives the turn away: that
                // one wakes only the participant whose turn comes next.
                g.callers.park(me, std::thread::current());
                drop(g);
                std::thread::park();
                g = self.lock();
                g.callers.unpark(me);
            }
        }
        (g, me)
    }

    /// Gives back one taking of the turn by the calling thread, unlocks the host and
    /// wakes the waiting participants, if any.
    pub(crate) fn give_turn(&self, mut g: MutexGuard<'_, World>) {
        if let Some(me) = g.callers.participant() {
            g.callers.give_turn(me);
        }
        self.unlock_and_wake(g);
    }

    /// Unlocks the host, and wakes the participant whose turn comes next if it waits.
    ///
    /// Only that one can take the turn, so only that one is woken: waking every
    /// waiting participant after each operation (a condition variable's broadcast)
    /// made each operation cost one wake-up per participant, and a system call even
    /// with nobody waiting.
    pub(crate) fn unlock_and_wake(&self, g: MutexGuard<'_, World>) {
        let next = g.callers.parked_next();
        drop(g);
        if let Some(thread) = next {
            thread.unpark();
        }
    }
}

impl Participant {
    /// Binds this participant to the calling thread: its operations from now on take
    /// turns with the other participants'.
    pub fn enter(&self) {
        let mut g = self.host.lock();
        g.callers.bind(self.id);
        self.host.unlock_and_wake(g);
    }
}

impl Drop for Participant {
    fn drop(&mut self) {
        let mut g = self.host.lock();
        g.callers.leave(self.id);
        self.host.inner.participants.fetch_sub(1, Ordering::SeqCst);
        self.host.unlock_and_wake(g);
    }
}
