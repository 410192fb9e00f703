//! One device on a simulated board: its instrument, output queue, timing, faults and
//! the interface state IEEE 488.1 gives it (remote, lockout, parallel poll response).

use std::time::Duration;

use crate::address::Address;
use crate::backend::Eos;
use crate::sim::behaviour::DeviceBehaviour;
use crate::sim::fault::FaultSet;
use crate::sim::instrument::{DeviceIo, Instrument, Output};
use crate::sim::instruments::Disc;
use crate::sim::schedule::nanos;
use crate::sim::timing::DeviceTiming;
use crate::status::StatusByte;

/// A device attached to a board.
pub(crate) struct Slot {
    pub(crate) address: Address,
    /// Private, as `output` and `faults` are: everything that can change whether the
    /// device requests service goes through a method here, which forgets
    /// [`Slot::srq_seen`].
    instrument: Box<dyn Instrument>,
    pub(crate) timing: DeviceTiming,
    output: Output,
    /// Whether the device requests service, as last worked out, while nothing that could
    /// change it has happened since (`None`: work it out). Kept only for an instrument
    /// whose status does not change with time alone
    /// ([`Instrument::status_changes_with_time`]) and a device with no SRQ storm: the
    /// SRQ line is looked at after every operation when recording, and most operations
    /// leave most devices alone.
    srq_seen: Option<bool>,
    /// [`Instrument::status_changes_with_time`], asked when the device was attached.
    status_timed: bool,
    /// The device's own timeline: busy executing a command until then, ns.
    pub(crate) ready_at: u64,
    /// Bytes of the current output message already sent.
    pub(crate) sent_in_message: usize,
    /// Private: a change goes through [`Slot::faults_mut`], which forgets
    /// [`Slot::srq_seen`].
    faults: FaultSet,
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
        let status_timed = instrument.status_changes_with_time();
        Self {
            address,
            instrument,
            timing,
            output: Output::default(),
            srq_seen: None,
            status_timed,
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
        self.srq_seen = None;
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

    /// The instrument, to ask it something that does not change it.
    pub(crate) fn instrument(&self) -> &dyn Instrument {
        self.instrument.as_ref()
    }

    /// The instrument, to change it from outside the bus (a test, the host's
    /// [`crate::sim::SimHost::with_instrument`]): its status is asked again afterwards.
    pub(crate) fn instrument_mut(&mut self) -> &mut dyn Instrument {
        self.srq_seen = None;
        self.instrument.as_mut()
    }

    /// The instrument as a disc, if it is one (the host driver's poller, the mount
    /// table): a disc's status is always 0, so mounting it keeps
    /// [`Slot::srq_seen`].
    pub(crate) fn disc(&mut self) -> Option<&mut Disc> {
        self.instrument.as_any_mut()?.downcast_mut::<Disc>()
    }

    /// What the device has queued to send.
    pub(crate) fn output(&self) -> &Output {
        &self.output
    }

    /// Sends from the output queue into `buf` ([`Output::copy_out`]): up to `buf`'s
    /// length, or through an `eos` match. Returns the count and whether `eos` ended it.
    pub(crate) fn copy_out(&mut self, buf: &mut [u8], eos: Option<Eos>) -> (usize, bool) {
        self.srq_seen = None; // the queue's state is part of the status (MAV)
        self.output.copy_out(buf, eos)
    }

    /// Runs `f` on the instrument at virtual time `now`. Applies the response latency
    /// if it executed a command, and returns the timers it asked for.
    pub(crate) fn call(
        &mut self,
        now: Duration,
        f: impl FnOnce(&mut dyn Instrument, &mut DeviceIo<'_>),
    ) -> Vec<(Duration, u64)> {
        self.srq_seen = None;
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
        self.srq_seen = None;
        let io = DeviceIo::new(&mut self.output, now);
        let mut s = self.instrument.serial_poll(&io).0;
        if self.storm_pending(now) {
            s |= StatusByte::RQS;
            self.next_request = self.behaviour.srq_every.map(|p| now.saturating_add(p));
        }
        StatusByte(self.faults.status(s))
    }

    /// Whether the device asserts SRQ at `now_ns`: as last worked out while that still
    /// holds.
    #[inline]
    pub(crate) fn requests_service(&mut self, now_ns: u64) -> bool {
        match self.srq_seen {
            Some(on) => on,
            None => self.work_out_service_request(now_ns),
        }
    }

    // Out of line: the check of a known answer, made after every recorded operation,
    // stays a load and a compare.
    #[inline(never)]
    fn work_out_service_request(&mut self, now_ns: u64) -> bool {
        let now = Duration::from_nanos(now_ns);
        let on = self.present()
            && (self.faults.srq_stuck() || self.storm_pending(now) || self.raw_status(now).rqs());
        if !self.status_timed && self.next_request.is_none() {
            self.srq_seen = Some(on);
        }
        on
    }

    /// The device's faults.
    pub(crate) fn faults(&self) -> &FaultSet {
        &self.faults
    }

    /// The device's faults, to change them: whether it requests service is worked out
    /// again afterwards.
    pub(crate) fn faults_mut(&mut self) -> &mut FaultSet {
        self.srq_seen = None;
        &mut self.faults
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
            self.srq_seen = None;
            self.instrument.remote_changed(remote, lockout);
        }
    }
}
