//! Participants: threads whose operations on one host interleave in virtual-time
//! order, so that a workload gives the same virtual times run after run.

use crate::backend::Turns;
use crate::sim::host::SimHost;

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
        let mut g = self.lock();
        if let Some(me) = g.callers.participant() {
            while !g.callers.try_take_turn(me) {
                g = match self.inner.turn.wait(g) {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                };
            }
        }
    }

    fn release(&self) {
        let mut g = self.lock();
        if let Some(me) = g.callers.participant() {
            g.callers.give_turn(me);
        }
        drop(g);
        self.turn_done();
    }
}

impl SimHost {
    /// Tells waiting participants that clocks or turns moved.
    pub(crate) fn turn_done(&self) {
        self.inner.turn.notify_all();
    }
}

impl Participant {
    /// Binds this participant to the calling thread: its operations from now on take
    /// turns with the other participants'.
    pub fn enter(&self) {
        self.host.lock().callers.bind(self.id);
        self.host.turn_done();
    }
}

impl Drop for Participant {
    fn drop(&mut self) {
        self.host.lock().callers.leave(self.id);
        self.host.turn_done();
    }
}
