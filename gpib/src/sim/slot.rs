//! One device on a simulated board: its instrument, output queue, timing, faults and
//! the interface state IEEE 488.1 gives it (remote, lockout, parallel poll response).

use std::time::Duration;

use crate::address::Address;
use crate::sim::behaviour::DeviceBehaviour;
use crate::sim::fault::FaultSet;
use crate::sim::instrument::{DeviceIo, Instrument, Output};
use crate::sim::schedule::nanos;
use crate::sim::timing::DeviceTiming;
use crate::status::StatusByte;

/// A device attached to a board.
pub(crate) struct Slot {
    pub(crate) address: Address,
    pub(crate) instrument: Box<dyn Instrument>,
    pub(crate) timing: DeviceTiming,
    pub(crate) output: Output,
    /// The device's own timeline: busy executing a command until then, ns.
    pub(crate) ready_at: u64,
    /// Bytes of the current output message already sent.
    pub(crate) sent_in_message: usize,
    pub(crate) faults: FaultSet,
    pub(crate) remote: bool,
    pub(crate) lockout: bool,
    /// Parallel poll response: (sense, DIO line index).
    pub(crate) ppe: Option<(bool, u8)>,
    /// Contention sources of this device.
    pub(crate) behaviour: DeviceBehaviour,
    /// The device holds NRFD until then (after a message, [`DeviceBehaviour::nrfd_hold`]),
    /// ns.
    pub(crate) nrfd_until: u64,
    /// An SRQ storm's next request (pending once virtual time reaches it).
    pub(crate) next_request: Option<Duration>,
}

impl Slot {
    /// A device at `address`, idle and unaddressed.
    pub(crate) fn new(
        address: Address,
        instrument: Box<dyn Instrument>,
        timing: DeviceTiming,
    ) -> Self {
        Self {
            address,
            instrument,
            timing,
            output: Output::default(),
            ready_at: 0,
            sent_in_message: 0,
            faults: FaultSet::default(),
            remote: false,
            lockout: false,
            ppe: None,
            behaviour: DeviceBehaviour::default(),
            nrfd_until: 0,
            next_request: None,
        }
    }

    /// Sets the device's contention sources; an SRQ storm's first request comes one
    /// period after `now`.
    pub(crate) fn set_behaviour(&mut self, behaviour: DeviceBehaviour, now: Duration) {
        self.next_request = behaviour.srq_every.map(|p| now.saturating_add(p));
        self.behaviour = behaviour;
    }

    /// Whether an SRQ storm's request is pending at `now`.
    pub(crate) fn storm_pending(&self, now: Duration) -> bool {
        self.next_request.is_some_and(|at| at <= now)
    }

    /// Data delivered to the device at `at` ns, ending a message when `end`: it holds
    /// NRFD for its hold time afterwards.
    pub(crate) fn received(&mut self, at: u64, end: bool) {
        if end && !self.behaviour.nrfd_hold.is_zero() {
            self.nrfd_until = self
                .nrfd_until
                .max(at.saturating_add(nanos(self.behaviour.nrfd_hold)));
        }
    }

    /// The device answers to its address.
    pub(crate) fn present(&self) -> bool {
        self.faults.present()
    }

    /// Runs `f` on the instrument at virtual time `now`. Applies the response latency
    /// if it executed a command, and returns the timers it asked for.
    pub(crate) fn call(
        &mut self,
        now: Duration,
        f: impl FnOnce(&mut dyn Instrument, &mut DeviceIo<'_>),
    ) -> Vec<(Duration, u64)> {
        let mut io = DeviceIo::new(&mut self.output, now);
        f(self.instrument.as_mut(), &mut io);
        if io.executed {
            self.ready_at = self
                .ready_at
                .max(nanos(now).saturating_add(nanos(self.timing.response_latency)));
        }
        io.wakes
    }

    /// The status byte now (RQS as the instrument reports it, before faults).
    fn raw_status(&mut self, now: Duration) -> StatusByte {
        let io = DeviceIo::new(&mut self.output, now);
        self.instrument.status(&io)
    }

    /// The status byte as the device sends it (RQS hidden by a stuck SRQ).
    pub(crate) fn status(&mut self, now: Duration) -> StatusByte {
        let mut s = self.raw_status(now).0;
        if self.storm_pending(now) {
            s |= StatusByte::RQS;
        }
        StatusByte(self.faults.status(s))
    }

    /// A serial poll: the status byte sent, and the request cleared (a storm's next
    /// request comes one period later).
    pub(crate) fn serial_poll(&mut self, now: Duration) -> StatusByte {
        let io = DeviceIo::new(&mut self.output, now);
        let mut s = self.instrument.serial_poll(&io).0;
        if self.storm_pending(now) {
            s |= StatusByte::RQS;
            self.next_request = self.behaviour.srq_every.map(|p| now.saturating_add(p));
        }
        StatusByte(self.faults.status(s))
    }

    /// Whether the device asserts SRQ.
    pub(crate) fn requests_service(&mut self, now: Duration) -> bool {
        self.present()
            && (self.faults.srq_stuck() || self.storm_pending(now) || self.raw_status(now).rqs())
    }

    /// SDC/DCL: the instrument clears, and its message count starts again.
    pub(crate) fn clear(&mut self, now: Duration) -> Vec<(Duration, u64)> {
        self.sent_in_message = 0;
        self.call(now, |inst, io| inst.clear(io))
    }

    /// Sets remote and lockout, telling the instrument when they change.
    pub(crate) fn set_remote(&mut self, remote: bool, lockout: bool) {
        if (remote, lockout) != (self.remote, self.lockout) {
            self.remote = remote;
            self.lockout = lockout;
            self.instrument.remote_changed(remote, lockout);
        }
    }
}
