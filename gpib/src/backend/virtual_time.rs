//! The virtual-time capability: a backend whose clock and host CPU are modelled (the
//! simulator), reached through
//! [`Backend::virtual_time`](super::Backend::virtual_time).

use std::sync::Arc;
use std::time::Duration;

use crate::clock::ClockKind;
use crate::error::Result;

/// Turn-taking among the threads that share a backend's clock (the simulator's
/// participants, `gpib::sim::Participant`): [`crate::Bus`] takes the turn before
/// it locks the board and gives it back after, so that a whole transaction runs in
/// one turn and never waits for a turn while it holds the board.
pub trait Turns: Send + Sync {
    /// Waits until the calling thread may run (at once for a thread that takes no
    /// turns, or that holds the turn already), then holds the turn.
    fn acquire(&self);
    /// Gives back one [`Turns::acquire`].
    fn release(&self);
}

/// A backend in modelled time. Without this capability a backend's clock is the wall
/// clock: [`Backend::now`](super::Backend::now) is elapsed time, a delay sleeps, CPU
/// time is measured from the operating system, and the backend is its board's only
/// handle.
pub trait VirtualTime {
    /// Whether [`Backend::now`](super::Backend::now) is virtual or wall time.
    fn clock_kind(&mut self) -> ClockKind;

    /// Waits `duration` on the backend's clock (advances virtual time).
    fn delay(&mut self, duration: Duration);

    /// Host CPU time modelled so far; `None` when CPU time must be measured from the
    /// operating system instead.
    fn modelled_host_cpu(&mut self) -> Option<Duration>;

    /// Whether waiting (for SRQ, or a delay) takes wall time: the simulator in
    /// real-time mode. [`crate::Bus::wait_srq`] then waits with the bus unlocked, so
    /// other threads' transactions go on during the wait.
    fn waits_in_wall_time(&mut self) -> bool;

    /// One step of a wait for SRQ until `deadline` on the backend's clock:
    /// `Some(true)` when SRQ is asserted, `Some(false)` when the deadline passed, `None`
    /// when the wait is not over but other callers' operations come first (call again,
    /// after unlocking).
    fn wait_srq_step(&mut self, deadline: Duration) -> Result<Option<bool>>;

    /// The turn-taking this backend's callers share, if any (see [`Turns`]).
    fn turns(&mut self) -> Option<Arc<dyn Turns>>;
}
