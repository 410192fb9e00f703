//! The simulated host: its boards, their devices, the virtual clock, and what one bus
//! operation does to all of them.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::address::{Address, PrimaryAddress};
use crate::backend::{Eos, ReadEnd, ReadStatus};
use crate::error::{Error, Result};
use crate::message::{CommandDecoder, InterfaceMessage};
use crate::sim::board::SimBoard;
use crate::sim::fault::Fault;
use crate::sim::instrument::{DeviceIo, Instrument, Output};
use crate::sim::timing::{self, BoardTiming, DeviceTiming, Direction};
use crate::sim::transcript::{Event, EventKind, Recorder};
use crate::status::{BusLines, StatusByte};

/// Who is addressed to talk on a board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Talker {
    Nobody,
    Board,
    Device(usize),
}

/// A primary address seen last, waiting for a possible MSA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    None,
    Listen(u8),
    Talk(u8),
}

pub(crate) struct DeviceSlot {
    pub(crate) address: Address,
    pub(crate) instrument: Box<dyn Instrument>,
    pub(crate) timing: DeviceTiming,
    output: Output,
    ready_at: Duration,
    sent_in_message: usize,
    pub(crate) faults: Vec<Fault>,
    pub(crate) mount: Option<String>,
    pub(crate) mounted: bool,
    listening: bool,
    remote: bool,
    lockout: bool,
    ppe: Option<(bool, u8)>,
}

impl DeviceSlot {
    fn has(&self, f: Fault) -> bool {
        self.faults.contains(&f)
    }
    fn stops_after(&self) -> Option<usize> {
        self.faults.iter().find_map(|f| match f {
            Fault::StopsAfter(n) => Some(*n),
            _ => None,
        })
    }
    fn present(&self) -> bool {
        !self.has(Fault::Absent)
    }
    fn io(&mut self, now: Duration) -> (&mut dyn Instrument, DeviceIo<'_>) {
        (
            self.instrument.as_mut(),
            DeviceIo {
                output: &mut self.output,
                now,
                executed: false,
            },
        )
    }
    /// Runs `f` on the instrument; applies the response latency if it executed a command.
    fn call(&mut self, now: Duration, f: impl FnOnce(&mut dyn Instrument, &mut DeviceIo<'_>)) {
        let latency = self.timing.response_latency;
        let (inst, mut io) = self.io(now);
        f(inst, &mut io);
        if io.executed {
            self.ready_at = self.ready_at.max(now.saturating_add(latency));
        }
    }
    fn status(&mut self, now: Duration) -> StatusByte {
        let (inst, io) = self.io(now);
        let mut s = inst.status(&io);
        if self.has(Fault::SrqStuck) {
            s = StatusByte(s.0 & !StatusByte::RQS);
        }
        s
    }
    fn requests_service(&mut self, now: Duration) -> bool {
        self.present() && (self.has(Fault::SrqStuck) || self.status(now).rqs())
    }
}

pub(crate) struct BoardState {
    pub(crate) name: String,
    pub(crate) address: PrimaryAddress,
    pub(crate) timing: BoardTiming,
    pub(crate) timeout: Duration,
    pub(crate) devices: Vec<DeviceSlot>,
    talker: Talker,
    board_listens: bool,
    spe: bool,
    ren: bool,
    decoder: CommandDecoder,
    pending: Pending,
    srq_seen: bool,
}

impl BoardState {
    fn slot_at(&self, primary: u8, secondary: Option<u8>) -> Option<usize> {
        self.devices.iter().position(|d| {
            d.present()
                && d.address.primary.get() == primary
                && d.address.secondary.map(|s| s.get()) == secondary
        })
    }
    fn any_present(&self) -> bool {
        self.devices.iter().any(DeviceSlot::present)
    }
}

pub(crate) struct HostInner {
    pub(crate) name: String,
    pub(crate) now: Duration,
    pub(crate) cpu: Duration,
    pub(crate) realtime: bool,
    pub(crate) boards: Vec<BoardState>,
    named: Vec<NamedDevice>,
    rec: Recorder,
}

/// A simulated host computer with one or more GPIB boards, in virtual time.
///
/// Cloning gives another handle to the same host. Boards are used through
/// [`SimHost::board`], which returns a [`crate::Backend`].
///
/// ```
/// use gpib::{Bus, sim};
/// let host = sim::builtin("hp9000-350").unwrap();
/// let bus = Bus::new(host.board_named("hpib7").unwrap());
/// assert_eq!(bus.device(11).unwrap().query("NEW 10;NEW?").unwrap(), "1");
/// ```
#[derive(Clone)]
pub struct SimHost {
    pub(crate) inner: Arc<Mutex<HostInner>>,
}

impl std::fmt::Debug for SimHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let g = self.lock();
        f.debug_struct("SimHost")
            .field("name", &g.name)
            .field("boards", &g.boards.len())
            .field("now", &g.now)
            .finish()
    }
}

/// A device with a name (linux-gpib's gpib.conf `device { name = ... }`) and the
/// settings a descriptor opened by that name starts with (`ibfind("name")`).
#[derive(Debug, Clone, PartialEq)]
pub struct NamedDevice {
    /// Its name, unique on the host (also among board names).
    pub name: String,
    /// Index of its board.
    pub board: usize,
    /// Its address.
    pub address: Address,
    /// Its I/O timeout (`Duration::ZERO`: none); `None`: its board's.
    pub timeout: Option<Duration>,
    /// The end-of-string byte.
    pub eos: u8,
    /// Reads end on the EOS byte (REOS).
    pub reos: bool,
    /// The EOS byte is compared on 8 bits (BIN).
    pub bin: bool,
    /// EOI goes with the EOS byte on writes (XEOS).
    pub xeos: bool,
    /// EOI with the last byte of writes.
    pub eot: bool,
}

impl NamedDevice {
    /// The EOS mode as linux-gpib's `ibeos()` takes it: the byte, with REOS (0x400),
    /// XEOS (0x800) and BIN (0x1000).
    pub fn eos_mode(&self) -> u16 {
        u16::from(self.eos)
            | if self.reos { 0x0400 } else { 0 }
            | if self.xeos { 0x0800 } else { 0 }
            | if self.bin { 0x1000 } else { 0 }
    }
}

/// Where a device sits: board index and address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceRef {
    /// Board index.
    pub board: usize,
    /// Device address.
    pub address: Address,
}

impl SimHost {
    /// An empty host named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            inner: Arc::new(Mutex::new(HostInner {
                name: name.into(),
                now: Duration::ZERO,
                cpu: Duration::ZERO,
                realtime: false,
                boards: Vec::new(),
                named: Vec::new(),
                rec: Recorder {
                    on: false,
                    capture: 256,
                    events: Vec::new(),
                },
            })),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, HostInner> {
        match self.inner.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// A number that identifies this host (all its handles) while any handle is alive.
    pub(crate) fn identity(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    /// The host's name (its configuration's).
    pub fn name(&self) -> String {
        self.lock().name.clone()
    }

    /// Adds a board; returns its index.
    pub fn add_board(
        &self,
        name: impl Into<String>,
        address: PrimaryAddress,
        timing: BoardTiming,
        timeout: Duration,
    ) -> usize {
        let mut g = self.lock();
        g.boards.push(BoardState {
            name: name.into(),
            address,
            timing,
            timeout,
            devices: Vec::new(),
            talker: Talker::Nobody,
            board_listens: false,
            spe: false,
            ren: false,
            decoder: CommandDecoder::new(),
            pending: Pending::None,
            srq_seen: false,
        });
        g.boards.len() - 1
    }

    /// Attaches an instrument to board `board` at `address`.
    pub fn attach(
        &self,
        board: usize,
        address: Address,
        instrument: Box<dyn Instrument>,
        timing: DeviceTiming,
    ) -> Result<DeviceRef> {
        let mut g = self.lock();
        let b = g
            .boards
            .get_mut(board)
            .ok_or_else(|| Error::Config(format!("no board {board}")))?;
        if address.primary == b.address && address.secondary.is_none() {
            return Err(Error::Config(format!(
                "address {address} is the board's own address"
            )));
        }
        if b.devices.iter().any(|d| d.address == address) {
            return Err(Error::Config(format!(
                "two devices at address {address} on board {}",
                b.name
            )));
        }
        b.devices.push(DeviceSlot {
            address,
            instrument,
            timing,
            output: Output::default(),
            ready_at: Duration::ZERO,
            sent_in_message: 0,
            faults: Vec::new(),
            mount: None,
            mounted: false,
            listening: false,
            remote: false,
            lockout: false,
            ppe: None,
        });
        Ok(DeviceRef { board, address })
    }

    /// Declares that the device at `at` is a disc mounted (or not) at `mount_point`.
    ///
    /// Fails when the device is not a [`Disc`](crate::sim::instruments::Disc) or another
    /// disc already has that mount point.
    pub fn set_mount_point(&self, at: DeviceRef, mount_point: &str, mounted: bool) -> Result<()> {
        let (taken, board_name) = {
            let g = self.lock();
            let taken = g.boards.iter().enumerate().any(|(i, b)| {
                b.devices.iter().any(|d| {
                    !(i == at.board && d.address == at.address)
                        && d.mount.as_deref() == Some(mount_point)
                })
            });
            let name = g
                .boards
                .get(at.board)
                .map_or_else(|| at.board.to_string(), |b| b.name.clone());
            (taken, name)
        };
        if taken {
            return Err(Error::Config(format!(
                "mount point {mount_point:?}: two discs cannot share it (device {} on board {board_name} is the second)",
                at.address
            )));
        }
        self.with_slot(at, |s| {
            let is_disc = s
                .instrument
                .as_any_mut()
                .is_some_and(|a| a.is::<crate::sim::instruments::Disc>());
            if !is_disc {
                return Err(Error::Config(format!(
                    "device {} on board {board_name} is a {}, not a disc: it cannot be mounted at {mount_point:?}",
                    at.address,
                    s.instrument.model()
                )));
            }
            s.mount = Some(mount_point.to_string());
            s.mounted = mounted;
            Ok(())
        })?
    }

    fn with_slot<T>(&self, at: DeviceRef, f: impl FnOnce(&mut DeviceSlot) -> T) -> Result<T> {
        let mut g = self.lock();
        let slot = g
            .boards
            .get_mut(at.board)
            .and_then(|b| b.devices.iter_mut().find(|d| d.address == at.address))
            .ok_or_else(|| {
                Error::Config(format!("no device at {} on board {}", at.address, at.board))
            })?;
        Ok(f(slot))
    }

    /// A backend for board `index`.
    pub fn board(&self, index: usize) -> Result<SimBoard> {
        let g = self.lock();
        let address = g.boards.get(index).map(|b| b.address);
        let Some(address) = address else {
            return Err(Error::BackendUnavailable {
                backend: "sim".into(),
                hint: format!(
                    "the simulated host {:?} has {} board(s); board {index} does not exist",
                    g.name,
                    g.boards.len()
                ),
            });
        };
        drop(g);
        Ok(SimBoard::new(self.clone(), index, address))
    }

    /// A backend for the board named `name`.
    pub fn board_named(&self, name: &str) -> Result<SimBoard> {
        let index = {
            let g = self.lock();
            g.boards
                .iter()
                .position(|b| b.name == name)
                .ok_or_else(|| Error::BackendUnavailable {
                    backend: "sim".into(),
                    hint: format!(
                        "no board named {name:?}; boards: {}",
                        g.boards
                            .iter()
                            .map(|b| b.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                })?
        };
        self.board(index)
    }

    /// Gives the device at `device.board`/`device.address` its name and settings.
    /// Fails for an empty name, a name already used by a device or a board, or no
    /// device there.
    pub fn add_named_device(&self, device: NamedDevice) -> Result<()> {
        let mut g = self.lock();
        if device.name.trim().is_empty() {
            return Err(Error::Config("a device name must not be empty".into()));
        }
        if g.named.iter().any(|n| n.name == device.name) {
            return Err(Error::Config(format!(
                "two devices named {:?}: device names must be unique",
                device.name
            )));
        }
        if g.boards.iter().any(|b| b.name == device.name) {
            return Err(Error::Config(format!(
                "device name {:?} is also a board's name: names must be unique",
                device.name
            )));
        }
        let exists = g
            .boards
            .get(device.board)
            .is_some_and(|b| b.devices.iter().any(|d| d.address == device.address));
        if !exists {
            return Err(Error::Config(format!(
                "no device at {} on board {} to name {:?}",
                device.address, device.board, device.name
            )));
        }
        g.named.push(device);
        Ok(())
    }

    /// The named devices, in the order they were named (a configuration's order).
    pub fn named_devices(&self) -> Vec<NamedDevice> {
        self.lock().named.clone()
    }

    /// The device called `name`, if any.
    pub fn named_device(&self, name: &str) -> Option<NamedDevice> {
        self.lock().named.iter().find(|n| n.name == name).cloned()
    }

    /// Board names, in index order.
    pub fn board_names(&self) -> Vec<String> {
        self.lock().boards.iter().map(|b| b.name.clone()).collect()
    }

    /// The devices on board `board`: address, model, and mount point for discs.
    pub fn devices(&self, board: usize) -> Vec<(Address, String, Option<String>)> {
        let g = self.lock();
        g.boards.get(board).map_or_else(Vec::new, |b| {
            b.devices
                .iter()
                .map(|d| (d.address, d.instrument.model().to_string(), d.mount.clone()))
                .collect()
        })
    }

    /// Mounts the disc at `mount_point` (on whichever board it is).
    pub fn mount(&self, mount_point: &str) -> Result<()> {
        self.set_mounted(mount_point, true)
    }

    /// Unmounts the disc at `mount_point`.
    pub fn unmount(&self, mount_point: &str) -> Result<()> {
        self.set_mounted(mount_point, false)
    }

    fn set_mounted(&self, mount_point: &str, on: bool) -> Result<()> {
        let mut g = self.lock();
        let mut known = Vec::new();
        for b in &mut g.boards {
            for d in &mut b.devices {
                if let Some(m) = &d.mount {
                    if m == mount_point {
                        d.mounted = on;
                        return Ok(());
                    }
                    known.push(m.clone());
                }
            }
        }
        Err(Error::Config(format!(
            "unknown mount point {mount_point:?} on host {:?} (known: {})",
            g.name,
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )))
    }

    /// Mount points with their state: (mount point, board name, mounted).
    pub fn mounts(&self) -> Vec<(String, String, bool)> {
        let g = self.lock();
        let mut out = Vec::new();
        for b in &g.boards {
            for d in &b.devices {
                if let Some(m) = &d.mount {
                    out.push((m.clone(), b.name.clone(), d.mounted));
                }
            }
        }
        out
    }

    /// Injects `fault` into the device at `address` on board `board`.
    pub fn inject(&self, board: usize, address: Address, fault: Fault) -> Result<()> {
        self.with_slot(DeviceRef { board, address }, |s| {
            if !s.faults.contains(&fault) {
                s.faults.push(fault);
            }
        })
    }

    /// Removes every fault from the device.
    pub fn clear_faults(&self, board: usize, address: Address) -> Result<()> {
        self.with_slot(DeviceRef { board, address }, |s| s.faults.clear())
    }

    /// Runs `f` on the instrument at `address`.
    pub fn with_instrument<T>(
        &self,
        board: usize,
        address: Address,
        f: impl FnOnce(&mut dyn Instrument) -> T,
    ) -> Result<T> {
        self.with_slot(DeviceRef { board, address }, |s| f(s.instrument.as_mut()))
    }

    /// Runs `f` on the instrument at `address` as its concrete type `T` (built-in
    /// instruments, and yours if they implement [`Instrument::as_any_mut`]). `Ok(None)`
    /// when it is another type.
    pub fn with_instrument_as<T: 'static, R>(
        &self,
        board: usize,
        address: Address,
        f: impl FnOnce(&mut T) -> R,
    ) -> Result<Option<R>> {
        self.with_slot(DeviceRef { board, address }, |s| {
            s.instrument
                .as_any_mut()
                .and_then(|a| a.downcast_mut::<T>())
                .map(f)
        })
    }

    /// Starts recording every bus event, keeping at most `capture` data bytes per event.
    pub fn record(&self, capture: usize) {
        let mut g = self.lock();
        g.rec.on = true;
        g.rec.capture = capture;
    }

    /// Stops recording and returns the events recorded so far.
    pub fn stop_recording(&self) -> Vec<Event> {
        let mut g = self.lock();
        g.rec.on = false;
        std::mem::take(&mut g.rec.events)
    }

    /// Takes the events recorded so far (recording goes on).
    pub fn take_events(&self) -> Vec<Event> {
        std::mem::take(&mut self.lock().rec.events)
    }

    /// Virtual time now.
    pub fn now(&self) -> Duration {
        self.lock().now
    }

    /// Host CPU time modelled so far.
    pub fn cpu(&self) -> Duration {
        self.lock().cpu
    }

    /// Real-time mode: every operation also sleeps for its modelled duration.
    pub fn set_realtime(&self, on: bool) {
        self.lock().realtime = on;
    }
}

/// Outcome of one operation: what it cost in virtual time, to sleep in real-time mode.
pub(crate) struct Spent(pub(crate) Duration);

fn timeout_error(operation: &'static str, timeout: Duration, transferred: usize) -> Error {
    Error::Timeout {
        operation,
        timeout,
        transferred,
    }
}

impl HostInner {
    /// Moves virtual time on. Time saturates at `Duration::MAX` (about 584 billion
    /// years) instead of overflowing: a timeout of `Duration::MAX` ends there.
    fn advance(&mut self, elapsed: Duration, cpu: Duration) -> Spent {
        self.now = self.now.saturating_add(elapsed);
        self.cpu = self.cpu.saturating_add(cpu);
        Spent(elapsed)
    }

    /// Polls of other interfaces per byte of a PIO transfer on `board`: total poll time.
    fn polling_ns(&self, board: usize) -> u64 {
        self.boards
            .iter()
            .enumerate()
            .filter(|(i, b)| *i != board && b.timing.polled)
            .map(|(_, b)| {
                let discs = b
                    .devices
                    .iter()
                    .filter(|d| d.mount.is_some() && d.mounted)
                    .count() as u64;
                discs.saturating_mul(
                    u64::try_from(b.timing.poll_cost.as_nanos()).unwrap_or(u64::MAX),
                )
            })
            .fold(0u64, u64::saturating_add)
    }

    fn note_srq(&mut self, board: usize) {
        if !self.rec.on {
            return; // SRQ changes are only worth polling for when someone records them
        }
        let now = self.now;
        let on = self.srq_line(board);
        let b = &mut self.boards[board];
        if on != b.srq_seen {
            b.srq_seen = on;
            self.rec.push(now, board, EventKind::Srq(on));
        }
    }

    pub(crate) fn srq_line(&mut self, board: usize) -> bool {
        let now = self.now;
        self.boards[board]
            .devices
            .iter_mut()
            .any(|d| d.requests_service(now))
    }

    pub(crate) fn command(&mut self, board: usize, bytes: &[u8]) -> Result<Spent> {
        let now = self.now;
        if self.rec.on {
            self.rec
                .push(now, board, EventKind::Command(bytes.to_vec()));
        }
        let b = &mut self.boards[board];
        if !b.any_present() {
            return Err(Error::NoListener { transferred: 0 });
        }
        if b.devices
            .iter()
            .any(|d| d.present() && d.has(Fault::HoldsNrfd))
        {
            let t = b.timeout;
            self.advance(t, t);
            return Err(Error::CommandTimeout {
                transferred: 0,
                total: bytes.len(),
            });
        }
        let elapsed = b
            .timing
            .call_overhead
            .saturating_add(timing::times(b.timing.command_byte, bytes.len() as u64));
        let me = b.address.get();
        for &byte in bytes {
            let m = b.decoder.next_message(byte);
            apply_message(b, me, m, now);
        }
        let spent = self.advance(elapsed, elapsed);
        self.note_srq(board);
        Ok(spent)
    }

    pub(crate) fn write(&mut self, board: usize, data: &[u8], eoi: bool) -> Result<(usize, Spent)> {
        let start = self.now;
        let poll_ns = self.polling_ns(board);
        let b = &mut self.boards[board];
        if b.talker != Talker::Board {
            return Err(Error::InvalidArgument(
                "the board is not addressed to talk: address it (MTA) before writing".into(),
            ));
        }
        // The addressed listeners, without allocating: a device is one when it listens.
        let is_listener = |d: &DeviceSlot| d.listening && d.present();
        if !b.devices.iter().any(is_listener) {
            let e = Error::NoListener { transferred: 0 };
            self.rec.push(start, board, EventKind::Error(e.to_string()));
            return Err(e);
        }
        let timeout = b.timeout;
        if b.devices
            .iter()
            .any(|d| is_listener(d) && d.has(Fault::HoldsNrfd))
        {
            self.advance(timeout, timeout);
            return Err(timeout_error("write", timeout, 0));
        }
        let (mut ready, mut accept, mut recovery) = (Duration::ZERO, 0, 0);
        for d in b.devices.iter().filter(|d| is_listener(d)) {
            ready = ready.max(d.ready_at);
            accept = accept.max(d.timing.accept_ns);
            recovery = recovery.max(d.timing.holdoff_recovery_listen_ns);
        }
        let wait = ready.saturating_sub(start);
        let hs = timing::handshake_ns(b.timing.t1_ns, accept, b.timing.hs488);
        let per = timing::byte_cost(&b.timing, Direction::Write, hs, poll_ns, recovery);
        let mut n = data.len();
        let mut timed_out = false;
        if !timeout.is_zero() {
            let full = wait.saturating_add(timing::call_cost(&b.timing, per, n as u64).elapsed);
            if full > timeout {
                timed_out = true;
                let budget = timeout
                    .saturating_sub(wait)
                    .saturating_sub(b.timing.call_overhead);
                n = n.min((budget.as_nanos() / u128::from(per.elapsed_ns.max(1))) as usize);
            }
        }
        let cost = timing::call_cost(&b.timing, per, n as u64);
        let end_flag = eoi && !timed_out;
        let deliver_at = start.saturating_add(wait).saturating_add(cost.elapsed);
        for d in b.devices.iter_mut().filter(|d| is_listener(d)) {
            d.call(deliver_at, |inst, io| inst.listen(&data[..n], end_flag, io));
        }
        if self.rec.on {
            let bytes = self.rec.clip(&data[..n]);
            self.rec.push(
                start,
                board,
                EventKind::Write {
                    bytes,
                    len: n,
                    eoi: end_flag,
                },
            );
        }
        let (elapsed, cpu) = if timed_out {
            (timeout, timeout.min(cost.cpu.saturating_add(wait)))
        } else {
            (wait.saturating_add(cost.elapsed), cost.cpu)
        };
        let spent = self.advance(elapsed, cpu);
        self.note_srq(board);
        if timed_out {
            let e = timeout_error("write", timeout, n);
            self.rec.push(start, board, EventKind::Error(e.to_string()));
            return Err(e);
        }
        Ok((n, spent))
    }

    pub(crate) fn read(
        &mut self,
        board: usize,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<(ReadStatus, Spent)> {
        let start = self.now;
        let poll_ns = self.polling_ns(board);
        let b = &mut self.boards[board];
        let timeout = b.timeout;
        if !b.board_listens {
            return Err(Error::InvalidArgument(
                "the board is not addressed to listen: address it (MLA) before reading".into(),
            ));
        }
        let talker = match b.talker {
            Talker::Device(i) => i,
            Talker::Board => {
                return Err(Error::InvalidArgument(
                    "the board is addressed to talk, not to listen".into(),
                ))
            }
            Talker::Nobody => {
                self.advance(timeout, Duration::ZERO);
                let e = timeout_error("read", timeout, 0);
                self.rec.push(start, board, EventKind::Error(e.to_string()));
                return Err(e);
            }
        };
        if let Some(other) = b
            .devices
            .iter()
            .position(|d| d.present() && d.has(Fault::SecondTalker))
            .filter(|&o| o != talker)
        {
            let detail = format!(
                "device {} drives DIO while device {} is the addressed talker",
                b.devices[other].address, b.devices[talker].address
            );
            let e = Error::BusConflict {
                detail,
                transferred: 0,
            };
            self.rec.push(start, board, EventKind::Error(e.to_string()));
            return Err(e);
        }
        let me_t1 = b.devices[talker].timing.t1_ns;
        let hs = timing::handshake_ns(me_t1, b.timing.accept_ns, b.timing.hs488);
        let recovery = b.devices[talker].timing.holdoff_recovery_talk_ns;
        let per = timing::byte_cost(&b.timing, Direction::Read, hs, poll_ns, recovery);
        let tim = b.timing.clone();
        let spe = b.spe;
        let slot = &mut b.devices[talker];
        let wait = slot.ready_at.saturating_sub(start);
        let talker_addr = slot.address.primary.get();

        if spe {
            // Serial poll: the talker sends its status byte (once per SPE).
            let (inst, io) = slot.io(start);
            let stb = inst.serial_poll(&io);
            let stb = if slot.has(Fault::SrqStuck) {
                StatusByte(stb.0 & !StatusByte::RQS)
            } else {
                stb
            };
            if let Some(first) = buf.first_mut() {
                *first = stb.0;
            }
            let n = buf.len().min(1);
            let cost = timing::call_cost(&tim, per, n as u64);
            self.rec.push(
                start,
                board,
                EventKind::SerialPoll {
                    device: talker_addr,
                    status: stb,
                },
            );
            let spent = self.advance(cost.elapsed, cost.cpu);
            self.note_srq(board);
            return Ok((
                ReadStatus {
                    count: n,
                    end: ReadEnd::BufferFull,
                },
                spent,
            ));
        }

        let silent = slot.has(Fault::NeverTalks) || slot.output.is_empty();
        if silent || (!timeout.is_zero() && wait >= timeout) {
            self.advance(timeout.max(Duration::ZERO), Duration::ZERO);
            let e = timeout_error("read", timeout, 0);
            self.rec.push(start, board, EventKind::Error(e.to_string()));
            return Err(e);
        }
        let avail = slot.output.len();
        let ends = slot.output.ends_message() && !slot.has(Fault::DropsEoi);
        let mut limit = buf.len();
        let mut cut_by_fault = false;
        if let Some(k) = slot.stops_after() {
            let left = k.saturating_sub(slot.sent_in_message);
            if left < limit.min(avail) {
                limit = left;
                cut_by_fault = true;
            }
        }
        let mut cut_by_time = false;
        if !timeout.is_zero() {
            let budget = timeout
                .saturating_sub(wait)
                .saturating_sub(tim.call_overhead);
            let fit = (budget.as_nanos() / u128::from(per.elapsed_ns.max(1))) as usize;
            if fit < limit.min(avail) {
                limit = fit;
                cut_by_time = true;
            }
        }
        let (n, hit) = slot.output.copy_out(&mut buf[..limit], eos);
        slot.sent_in_message += n;
        let end = if hit {
            Some(ReadEnd::Eos)
        } else if n == avail && ends {
            Some(ReadEnd::Eoi)
        } else if n == buf.len() && !cut_by_fault && !cut_by_time {
            Some(ReadEnd::BufferFull)
        } else {
            None // the talker stopped sending before an end: time out
        };
        if slot.output.is_empty() {
            slot.sent_in_message = 0;
        }
        let cost = timing::call_cost(&tim, per, n as u64);
        if self.rec.on {
            let bytes = self.rec.clip(&buf[..n]);
            self.rec.push(
                start,
                board,
                EventKind::Read {
                    talker: talker_addr,
                    bytes,
                    len: n,
                    eoi: end == Some(ReadEnd::Eoi),
                },
            );
        }
        match end {
            Some(end) => {
                let spent = self.advance(wait.saturating_add(cost.elapsed), cost.cpu);
                self.note_srq(board);
                Ok((ReadStatus { count: n, end }, spent))
            }
            None => {
                let elapsed = if timeout.is_zero() {
                    wait.saturating_add(cost.elapsed)
                } else {
                    timeout
                };
                self.advance(elapsed, cost.cpu.min(elapsed));
                self.note_srq(board);
                let e = timeout_error("read", timeout, n);
                self.rec.push(start, board, EventKind::Error(e.to_string()));
                Err(e)
            }
        }
    }

    pub(crate) fn interface_clear(&mut self, board: usize) -> Spent {
        let now = self.now;
        let b = &mut self.boards[board];
        b.talker = Talker::Nobody;
        b.board_listens = false;
        b.spe = false;
        b.pending = Pending::None;
        b.decoder = CommandDecoder::new();
        for d in &mut b.devices {
            d.listening = false;
        }
        self.rec.push(now, board, EventKind::Ifc);
        // IFC is asserted for at least 100 µs.
        self.advance(Duration::from_micros(100), Duration::from_micros(100))
    }

    pub(crate) fn remote_enable(&mut self, board: usize, on: bool) -> Spent {
        let now = self.now;
        let b = &mut self.boards[board];
        b.ren = on;
        for d in &mut b.devices {
            if !on {
                d.remote = false;
                d.lockout = false;
                let (r, l) = (d.remote, d.lockout);
                d.instrument.remote_changed(r, l);
            }
        }
        self.rec.push(now, board, EventKind::Ren(on));
        self.advance(Duration::from_micros(1), Duration::from_micros(1))
    }

    pub(crate) fn set_timeout(&mut self, board: usize, timeout: Duration) {
        self.boards[board].timeout = timeout;
    }

    pub(crate) fn timeout(&self, board: usize) -> Duration {
        self.boards[board].timeout
    }

    pub(crate) fn delay(&mut self, d: Duration) -> Spent {
        self.advance(d, Duration::ZERO)
    }

    pub(crate) fn wait_srq(&mut self, board: usize, timeout: Duration) -> (bool, Spent) {
        if self.srq_line(board) {
            return (true, Spent(Duration::ZERO));
        }
        // Nothing in the model changes SRQ without bus traffic: wait out the timeout.
        (false, self.advance(timeout, Duration::ZERO))
    }

    pub(crate) fn listener_present(&mut self, board: usize, a: Address) -> (bool, Spent) {
        let b = &self.boards[board];
        let present = b
            .slot_at(a.primary.get(), a.secondary.map(|s| s.get()))
            .is_some();
        // UNL, MLA [MSA], then sensing NDAC: a few command-byte times.
        let t = b
            .timing
            .call_overhead
            .saturating_add(timing::times(b.timing.command_byte, 3));
        (present, self.advance(t, t))
    }

    pub(crate) fn parallel_poll(&mut self, board: usize) -> (u8, Spent) {
        let now = self.now;
        let mut dio = 0u8;
        for d in &mut self.boards[board].devices {
            if let Some((sense, line)) = d.ppe {
                if d.present() && d.status(now).rqs() == sense {
                    dio |= 1 << line;
                }
            }
        }
        let t = self.boards[board]
            .timing
            .call_overhead
            .saturating_add(Duration::from_micros(2));
        (dio, self.advance(t, t))
    }

    pub(crate) fn lines(&mut self, board: usize) -> BusLines {
        let srq = self.srq_line(board);
        let b = &self.boards[board];
        BusLines {
            dav: false,
            nrfd: b
                .devices
                .iter()
                .any(|d| d.present() && d.has(Fault::HoldsNrfd)),
            ndac: b.devices.iter().any(|d| d.present() && d.listening),
            atn: false,
            eoi: false,
            srq,
            ifc: false,
            ren: b.ren,
        }
    }
}

/// What one interface message does to the board's state and its devices.
fn apply_message(b: &mut BoardState, me: u8, m: InterfaceMessage, now: Duration) {
    use InterfaceMessage as M;
    let pending = std::mem::replace(&mut b.pending, Pending::None);
    match m {
        M::Listen(a) => {
            let a = a.get();
            if a == me {
                b.board_listens = true;
            }
            for d in b.devices.iter_mut() {
                if d.present() && d.address.primary.get() == a && d.address.secondary.is_none() {
                    d.listening = true;
                }
            }
            b.pending = Pending::Listen(a);
        }
        M::Talk(a) => {
            let a = a.get();
            b.talker = if a == me {
                Talker::Board
            } else {
                match b.slot_at(a, None) {
                    Some(i) => Talker::Device(i),
                    None => Talker::Nobody,
                }
            };
            b.pending = Pending::Talk(a);
        }
        M::Secondary(s) => match pending {
            Pending::Listen(p) => {
                if let Some(i) = b.slot_at(p, Some(s.get())) {
                    b.devices[i].listening = true;
                }
            }
            Pending::Talk(p) => {
                if let Some(i) = b.slot_at(p, Some(s.get())) {
                    b.talker = Talker::Device(i);
                }
            }
            Pending::None => {}
        },
        M::Unlisten => {
            b.board_listens = false;
            for d in b.devices.iter_mut() {
                d.listening = false;
            }
        }
        M::Untalk => b.talker = Talker::Nobody,
        M::SelectedDeviceClear | M::DeviceClear => {
            let all = m == M::DeviceClear;
            for d in b.devices.iter_mut().filter(|d| d.present()) {
                if all || d.listening {
                    d.sent_in_message = 0;
                    d.call(now, |inst, io| inst.clear(io));
                }
            }
        }
        M::GroupExecuteTrigger => {
            for d in b.devices.iter_mut().filter(|d| d.present() && d.listening) {
                d.call(now, |inst, io| inst.trigger(io));
            }
        }
        M::GoToLocal => {
            for d in b.devices.iter_mut().filter(|d| d.present() && d.listening) {
                d.remote = false;
                let l = d.lockout;
                d.instrument.remote_changed(false, l);
            }
        }
        M::LocalLockout => {
            for d in b.devices.iter_mut().filter(|d| d.present()) {
                d.lockout = true;
                let r = d.remote;
                d.instrument.remote_changed(r, true);
            }
        }
        M::SerialPollEnable => b.spe = true,
        M::SerialPollDisable => b.spe = false,
        M::ParallelPollEnable { sense, line } => {
            for d in b.devices.iter_mut().filter(|d| d.listening) {
                d.ppe = Some((sense, line));
            }
        }
        M::ParallelPollDisable => {
            for d in b.devices.iter_mut().filter(|d| d.listening) {
                d.ppe = None;
            }
        }
        M::ParallelPollUnconfigure => {
            for d in b.devices.iter_mut() {
                d.ppe = None;
            }
        }
        M::ParallelPollConfigure | M::TakeControl | M::Undefined(_) => {}
    }
    // Listening with REN asserted puts a device in remote.
    if b.ren {
        for d in b.devices.iter_mut().filter(|d| d.listening && !d.remote) {
            d.remote = true;
            let l = d.lockout;
            d.instrument.remote_changed(true, l);
        }
    }
}
