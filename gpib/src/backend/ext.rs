//! [`BackendExt`]: the questions a caller asks of any backend, answered through its
//! capabilities where it has them and with the wall clock's or an honest "unsupported"
//! answer where it does not. Implemented for every [`Backend`]; nothing to implement.

use std::sync::Arc;
use std::time::Duration;

use crate::address::Address;
use crate::error::{Error, Result};
use crate::status::{BoardStatus, BusLines};

use super::{Backend, ClockKind, Turns};

/// Calls on any [`Backend`] that go through its optional capabilities
/// ([`Backend::virtual_time`], [`Backend::board_control`], [`Backend::device_level`],
/// [`Backend::tuning`]). Bring it into scope (`use gpib::backend::BackendExt`) to call
/// them; a backend never implements it (a blanket implementation covers all).
pub trait BackendExt: Backend {
    /// Whether [`Backend::now`] is wall time or virtual time.
    fn clock_kind(&mut self) -> ClockKind {
        self.virtual_time()
            .map_or(ClockKind::Wall, |v| v.clock_kind())
    }

    /// Waits `duration` on the backend's clock: advances virtual time on the simulator,
    /// sleeps elsewhere.
    fn delay(&mut self, duration: Duration) {
        match self.virtual_time() {
            Some(v) => v.delay(duration),
            None => std::thread::sleep(duration),
        }
    }

    /// Host CPU time modelled so far (the simulator); `None` when CPU time must be
    /// measured from the operating system.
    fn modelled_host_cpu(&mut self) -> Option<Duration> {
        self.virtual_time().and_then(|v| v.modelled_host_cpu())
    }

    /// Whether waiting (for SRQ, or a delay) takes wall time: on hardware, over a
    /// network, and on the simulator in real-time mode.
    fn waits_in_wall_time(&mut self) -> bool {
        self.virtual_time().is_none_or(|v| v.waits_in_wall_time())
    }

    /// One step of a wait for SRQ until `deadline` on the backend's clock (see
    /// [`VirtualTime::wait_srq_step`](super::VirtualTime::wait_srq_step)); without
    /// virtual time, the whole wait in one step ([`Backend::wait_srq`]).
    fn wait_srq_step(&mut self, deadline: Duration) -> Result<Option<bool>> {
        if let Some(v) = self.virtual_time() {
            return v.wait_srq_step(deadline);
        }
        let left = deadline.saturating_sub(self.now());
        self.wait_srq(crate::Timeout::After(left)).map(Some)
    }

    /// The turn-taking this backend's callers share, if any (see [`Turns`]).
    fn turns(&mut self) -> Option<Arc<dyn Turns>> {
        self.virtual_time().and_then(|v| v.turns())
    }

    /// Whether the backend addresses devices itself ([`Backend::device_level`]).
    fn is_device_level(&mut self) -> bool {
        self.device_level().is_some()
    }

    /// Whether the board's driver addresses the bus before every transfer, and whether
    /// it unaddresses after each (its [`BoardTuning`](super::tuning::BoardTuning)'s
    /// readdressing and unaddressing), for a backend whose transfers
    /// [`crate::Bus`] addresses with command bytes. Both false for a device-level
    /// backend (its driver does its own addressing) and where the settings cannot be
    /// read.
    fn driver_addressing(&mut self) -> (bool, bool) {
        if self.is_device_level() {
            return (false, false);
        }
        match self.tuning() {
            Some(t) => (
                t.readdress().unwrap_or(false),
                t.unaddress().unwrap_or(false),
            ),
            None => (false, false),
        }
    }

    /// Conducts a parallel poll and returns the DIO byte
    /// ([`BoardControl::parallel_poll`](super::BoardControl::parallel_poll)).
    fn parallel_poll(&mut self) -> Result<u8> {
        if let Some(c) = self.board_control() {
            return c.parallel_poll();
        }
        Err(Error::unsupported("parallel poll", self.name()))
    }

    /// A snapshot of the bus lines
    /// ([`BoardControl::lines`](super::BoardControl::lines)).
    fn lines(&mut self) -> Result<BusLines> {
        if let Some(c) = self.board_control() {
            return c.lines();
        }
        Err(Error::unsupported("reading the bus lines", self.name()))
    }

    /// The board's own state
    /// ([`BoardControl::board_status`](super::BoardControl::board_status)).
    fn board_status(&mut self) -> Result<BoardStatus> {
        if let Some(c) = self.board_control() {
            return c.board_status();
        }
        Err(Error::unsupported(
            "reading the board's status",
            self.name(),
        ))
    }

    /// Releases ATN without moving data
    /// ([`BoardControl::go_to_standby`](super::BoardControl::go_to_standby)).
    fn go_to_standby(&mut self) -> Result<()> {
        if let Some(c) = self.board_control() {
            return c.go_to_standby();
        }
        Err(Error::unsupported("going to standby", self.name()))
    }

    /// Asserts ATN without sending command bytes
    /// ([`BoardControl::take_control`](super::BoardControl::take_control)).
    fn take_control(&mut self) -> Result<()> {
        if let Some(c) = self.board_control() {
            return c.take_control();
        }
        Err(Error::unsupported("taking control", self.name()))
    }

    /// True when a device listens at `address`
    /// ([`BoardControl::listener_present`](super::BoardControl::listener_present)).
    fn listener_present(&mut self, address: Address) -> Result<bool> {
        if let Some(c) = self.board_control() {
            return c.listener_present(address);
        }
        Err(Error::unsupported("the listener check", self.name()))
    }
}

impl<B: Backend + ?Sized> BackendExt for B {}
