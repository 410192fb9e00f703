//! The controller-side layer: a [`Bus`] owns one board and does the addressing.
//!
//! A `Bus` is a cheap, clonable handle (`Send + Sync`). Every transaction (the
//! addressing command bytes plus the transfer that follows) holds the board's lock
//! from start to end, so threads sharing a bus never interleave their bytes and never
//! read each other's responses.

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use crate::address::{Address, PrimaryAddress, SecondaryAddress};
use crate::backend::tuning::BoardTuning;
use crate::backend::{Backend, BackendExt, ClockKind, Eos, ReadStatus, Turns, WriteReadError};
use crate::error::{Error, Result};
use crate::message::{addressing, InterfaceMessage};
use crate::status::{BusLines, StatusByte};
use crate::timeout::Timeout;

/// Which way the last addressing pointed, so it need not be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Addressed {
    Nothing,
    /// Board talks, device listens.
    ToDevice(Address),
    /// Device talks, board listens.
    FromDevice(Address),
}

/// What the lock protects: the backend and what the layer knows of the bus state.
pub(crate) struct BusState {
    pub(crate) backend: Box<dyn Backend>,
    addressed: Addressed,
    /// The timeout last applied to the backend.
    applied_timeout: Timeout,
    /// The timeout devices get unless they set their own.
    default_timeout: Timeout,
    /// Send the addressing before every transfer, even when it is in place.
    readdress: bool,
    /// Send UNL and UNT after every device transfer (the board tuning's unaddressing:
    /// [`crate::backend::BackendExt::driver_addressing`]).
    unaddress: bool,
}

struct Shared {
    state: Mutex<BusState>,
    name: String,
    /// The backend's turn-taking, taken before `state` is locked (see [`Turns`]).
    turns: Option<Arc<dyn Turns>>,
}

/// The bus locked, inside the caller's turn: the lock is released before the turn.
pub(crate) struct Locked<'a> {
    guard: MutexGuard<'a, BusState>,
    _turn: Option<Turn<'a>>,
}

struct Turn<'a>(&'a dyn Turns);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

impl std::ops::Deref for Locked<'_> {
    type Target = BusState;
    fn deref(&self) -> &BusState {
        &self.guard
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut BusState {
        &mut self.guard
    }
}

/// A [`Bus`] that is not kept open by this handle ([`Bus::downgrade`]).
#[derive(Clone)]
pub(crate) struct WeakBus(Weak<Shared>);

impl WeakBus {
    /// The bus, while some `Bus` or device handle keeps it open.
    pub(crate) fn upgrade(&self) -> Option<Bus> {
        self.0.upgrade().map(|shared| Bus { shared })
    }
}

/// While waiting for SRQ in wall time, the bus is locked for at most this long at a time.
const SRQ_WAIT_SLICE: Duration = Duration::from_millis(5);

/// A GPIB board used as system controller, shared by device handles and threads.
///
/// ```
/// use gpib::backend::fake::{FakeBoard, FakeInstrument};
/// use gpib::Bus;
/// let dmm = FakeInstrument::new().answer("*IDN?", "ACME,DMM-1,0,1.0");
/// let bus = Bus::new(FakeBoard::new().with(22, dmm)?); // or a board of any backend
/// let dmm = bus.device(22)?;
/// assert_eq!(dmm.query("*IDN?")?, "ACME,DMM-1,0,1.0");
/// // Another thread shares the bus through a clone: one transaction at a time.
/// let other = bus.clone();
/// std::thread::spawn(move || other.device(22)?.write_str("*CLS")).join().unwrap()?;
/// # Ok::<(), gpib::Error>(())
/// ```
#[derive(Clone)]
pub struct Bus {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Bus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bus")
            .field("backend", &self.shared.name)
            .finish()
    }
}

impl Bus {
    /// Wraps a backend.
    pub fn new(backend: impl Backend + 'static) -> Self {
        Self::from_box(Box::new(backend))
    }

    /// Wraps a backend chosen at run time.
    ///
    /// Every call makes a new bus (its own lock and addressing state): a board carries
    /// one transaction at a time and has one addressing state, so open it once and
    /// share the `Bus` by cloning it. A [`crate::ResourceManager`] does that for the
    /// boards it opens (a second device on an open board gets the same `Bus`), and
    /// [`crate::open`] through the process's one manager.
    pub fn from_box(mut backend: Box<dyn Backend>) -> Self {
        let name = backend.name().to_string();
        let turns = backend.turns();
        let timeout = backend.timeout();
        let (readdress, unaddress) = backend.driver_addressing();
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(BusState {
                    backend,
                    addressed: Addressed::Nothing,
                    applied_timeout: timeout,
                    default_timeout: timeout,
                    readdress,
                    unaddress,
                }),
                name,
                turns,
            }),
        }
    }

    /// A handle that does not keep the bus open: the manager's record of a board it
    /// opened, released when the last `Bus` and [`crate::Device`] on it are dropped.
    pub(crate) fn downgrade(&self) -> WeakBus {
        WeakBus(Arc::downgrade(&self.shared))
    }

    /// The backend's name.
    pub fn backend_name(&self) -> &str {
        &self.shared.name
    }

    /// Runs `f` with the board locked: nothing else uses the bus until it returns.
    ///
    /// The closure gets a [`Transaction`] for raw command and data operations.
    pub fn transaction<T>(&self, f: impl FnOnce(&mut Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut guard = self.lock();
        let mut tx = Transaction { state: &mut guard };
        let out = f(&mut tx);
        if out.is_err() {
            // After an error the bus state is not known: address again next time.
            guard.addressed = Addressed::Nothing;
        }
        out
    }

    pub(crate) fn lock(&self) -> Locked<'_> {
        // The turn first: a thread never waits for its turn while it holds the board.
        let turn = self.shared.turns.as_deref().map(|t| {
            t.acquire();
            Turn(t)
        });
        // A panic in another thread while it held the lock leaves the bus usable: the
        // state is re-derived (addressing is re-sent after any doubt).
        let guard = match self.shared.state.lock() {
            Ok(g) => g,
            Err(poisoned) => {
                let mut g = poisoned.into_inner();
                g.addressed = Addressed::Nothing;
                g
            }
        };
        Locked { guard, _turn: turn }
    }

    /// Time on the backend's clock (virtual time on the simulator).
    pub fn now(&self) -> Duration {
        self.lock().backend.now()
    }

    /// Whether the backend's clock is wall or virtual time.
    pub fn clock_kind(&self) -> ClockKind {
        self.lock().backend.clock_kind()
    }

    /// What a network backend has put on the wire so far (see
    /// [`Backend::wire_stats`]); `None` for other backends.
    pub fn wire_stats(&self) -> Option<crate::backend::WireStats> {
        self.lock().backend.wire_stats()
    }

    /// Whether the backend addresses devices itself (see [`Backend::device_level`]).
    pub fn device_level(&self) -> bool {
        self.lock().backend.is_device_level()
    }

    /// Host CPU time modelled by the backend so far, if it models it.
    pub fn modelled_host_cpu(&self) -> Option<Duration> {
        self.lock().backend.modelled_host_cpu()
    }

    /// Waits on the backend's clock.
    pub fn delay(&self, duration: Duration) {
        self.lock().backend.delay(duration)
    }

    /// Sets the timeout devices use unless they set their own; returns what was applied.
    pub fn set_timeout(&self, timeout: Timeout) -> Result<Timeout> {
        let mut g = self.lock();
        let applied = g.backend.set_timeout(timeout)?;
        g.applied_timeout = applied;
        g.default_timeout = applied;
        Ok(applied)
    }

    /// The default timeout.
    pub fn timeout(&self) -> Timeout {
        self.lock().default_timeout
    }

    /// Whether to send the addressing (UNL, MTA, MLA) before every read and write even
    /// when the same device was last addressed the same way (NI-488.2's `IbcREADDR`).
    ///
    /// Off by default, as in NI-488.2: a second read from the same talker goes straight
    /// to the data. Turn it on when something else may change the addressing behind
    /// the bus's back (a device powered on after it was addressed, another controller);
    /// [`Bus::interface_clear`] also makes the next transfer address again.
    pub fn set_readdress(&self, on: bool) {
        let mut g = self.lock();
        g.readdress = on;
        g.addressed = Addressed::Nothing;
    }

    /// Whether every read and write sends its addressing bytes again
    /// ([`Bus::set_readdress`], or a backend whose driver does so).
    pub fn readdresses(&self) -> bool {
        self.lock().readdress
    }

    /// Pulses IFC: all devices unaddressed, the board is controller-in-charge.
    pub fn interface_clear(&self) -> Result<()> {
        self.transaction(|tx| {
            tx.state.addressed = Addressed::Nothing;
            tx.state.backend.interface_clear()
        })
    }

    /// Asserts or releases REN.
    pub fn remote_enable(&self, on: bool) -> Result<()> {
        self.transaction(|tx| tx.state.backend.remote_enable(on))
    }

    /// Sends interface messages with ATN.
    pub fn command(&self, messages: &[InterfaceMessage]) -> Result<()> {
        self.transaction(|tx| tx.command_messages(messages))
    }

    /// LLO: every device ignores its front-panel "local" key.
    pub fn local_lockout(&self) -> Result<()> {
        self.command(&[InterfaceMessage::LocalLockout])
    }

    /// DCL: every device on the bus clears.
    pub fn device_clear_all(&self) -> Result<()> {
        self.command(&[InterfaceMessage::DeviceClear])
    }

    /// GET to several devices at once: UNL, then each MLA \[MSA\], then one GET, so
    /// they trigger together.
    pub fn trigger_group(&self, devices: &[Address]) -> Result<()> {
        if devices.is_empty() {
            return Err(Error::InvalidArgument(
                "a group trigger needs at least one device".into(),
            ));
        }
        self.transaction(|tx| {
            let mut msgs = vec![InterfaceMessage::Unlisten];
            for d in devices {
                msgs.push(InterfaceMessage::Listen(d.primary));
                if let Some(s) = d.secondary {
                    msgs.push(InterfaceMessage::Secondary(s));
                }
            }
            msgs.push(InterfaceMessage::GroupExecuteTrigger);
            tx.command_messages(&msgs)
        })
    }

    /// True while SRQ is asserted.
    pub fn srq(&self) -> Result<bool> {
        self.transaction(|tx| tx.state.backend.srq())
    }

    /// Waits up to `timeout` for SRQ; returns whether it came. A zero timeout checks
    /// once; [`Timeout::Never`] waits as long as it takes.
    ///
    /// The wait does not hold the bus: where waiting takes wall time (hardware, the
    /// simulator in real-time mode) the bus is locked only for slices of at most 5 ms,
    /// so other threads' transactions, such as the one that makes a device request
    /// service, go on meanwhile. In virtual time the wait costs no wall time.
    pub fn wait_srq(&self, timeout: Timeout) -> Result<bool> {
        if !self.lock().backend.waits_in_wall_time() {
            // In steps, each in a transaction of its own: other callers' operations
            // that come first in virtual time run between them.
            let deadline = self
                .now()
                .saturating_add(timeout.duration().unwrap_or(Duration::MAX));
            loop {
                if let Some(srq) =
                    self.transaction(|tx| tx.state.backend.wait_srq_step(deadline))?
                {
                    return Ok(srq);
                }
            }
        }
        let start = Instant::now();
        loop {
            let left = timeout
                .duration()
                .map_or(Duration::MAX, |t| t.saturating_sub(start.elapsed()));
            let slice = Timeout::After(left.min(SRQ_WAIT_SLICE));
            if self.transaction(|tx| tx.state.backend.wait_srq(slice))? {
                return Ok(true);
            }
            if timeout.is_over(start.elapsed()) {
                return Ok(false);
            }
            // Unlocked: a thread waiting for the bus takes it now.
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Serial-polls one device.
    pub fn serial_poll(&self, device: Address) -> Result<StatusByte> {
        self.transaction(|tx| {
            tx.state.addressed = Addressed::Nothing;
            tx.state.backend.serial_poll(device)
        })
    }

    /// Waits up to `timeout` for SRQ (zero: checks once; [`Timeout::Never`]: as long as
    /// it takes), then serial-polls `candidates` in order until one has RQS set, and
    /// returns it with its status byte (polling clears its request).
    ///
    /// Errors: [`Error::Timeout`] when SRQ does not come, [`Error::SrqStuck`] when SRQ is
    /// asserted but no candidate requests service.
    pub fn wait_for_service(
        &self,
        candidates: &[Address],
        timeout: Timeout,
    ) -> Result<(Address, StatusByte)> {
        if !self.wait_srq(timeout)? {
            return Err(Error::Timeout {
                operation: "wait for SRQ",
                timeout,
                transferred: 0,
            });
        }
        self.find_requester(candidates)
    }

    /// Serial-polls `candidates` in order and returns the first with RQS set.
    pub fn find_requester(&self, candidates: &[Address]) -> Result<(Address, StatusByte)> {
        self.transaction(|tx| {
            tx.state.addressed = Addressed::Nothing;
            let mut polled = Vec::with_capacity(candidates.len());
            for &c in candidates {
                let stb = tx.state.backend.serial_poll(c)?;
                polled.push(c.primary.get());
                if stb.rqs() {
                    log::debug!("device {c} requested service, status {stb}");
                    return Ok((c, stb));
                }
            }
            Err(Error::SrqStuck { polled })
        })
    }

    /// Checks every primary address except the board's own and returns those where a
    /// device listens.
    pub fn find_listeners(&self) -> Result<Vec<Address>> {
        self.transaction(|tx| {
            tx.state.addressed = Addressed::Nothing;
            let me = tx.state.backend.board_address();
            let mut found = Vec::new();
            for pad in PrimaryAddress::all().filter(|&p| p != me) {
                let a = Address::primary(pad);
                if tx.state.backend.listener_present(a)? {
                    found.push(a);
                }
            }
            Ok(found)
        })
    }

    /// Like [`Bus::find_listeners`], and where no device listens at a primary address,
    /// checks its 31 secondary addresses too: a device that answers only at a
    /// secondary address (a plug-in of a mainframe, a channel) is found as `pad.sad`.
    pub fn find_listeners_with_secondaries(&self) -> Result<Vec<Address>> {
        self.transaction(|tx| {
            tx.state.addressed = Addressed::Nothing;
            let me = tx.state.backend.board_address();
            let mut found = Vec::new();
            for pad in PrimaryAddress::all().filter(|&p| p != me) {
                if tx.state.backend.listener_present(Address::primary(pad))? {
                    found.push(Address::primary(pad));
                    continue;
                }
                for sad in SecondaryAddress::all() {
                    let a = Address {
                        primary: pad,
                        secondary: Some(sad),
                    };
                    if tx.state.backend.listener_present(a)? {
                        found.push(a);
                    }
                }
            }
            Ok(found)
        })
    }

    /// A snapshot of the bus lines.
    pub fn lines(&self) -> Result<BusLines> {
        self.transaction(|tx| tx.state.backend.lines())
    }

    /// Conducts a parallel poll.
    pub fn parallel_poll(&self) -> Result<u8> {
        self.transaction(|tx| tx.state.backend.parallel_poll())
    }

    /// Runs `f` on the board's driver settings ([`BoardTuning`]: T1, autopoll,
    /// readdressing, unaddressing), with the bus locked.
    ///
    /// Afterwards the bus follows the driver's addressing: it sends the addressing
    /// before every transfer when the driver readdresses on every call (or when
    /// [`Bus::set_readdress`] asked for it before), and UNL UNT after each device transfer
    /// when the driver unaddresses.
    ///
    /// Errors: kind `Unsupported` when the backend has no such settings
    /// ([`Backend::tuning`] is `None`); else what `f` returns.
    pub fn tuning<T>(&self, f: impl FnOnce(&mut dyn BoardTuning) -> Result<T>) -> Result<T> {
        let mut g = self.lock();
        g.addressed = Addressed::Nothing;
        let (before, _) = g.backend.driver_addressing();
        let out = match g.backend.tuning() {
            Some(t) => f(t),
            None => Err(Error::unsupported("board tuning", &self.shared.name)),
        };
        let (after, unaddress) = g.backend.driver_addressing();
        if before != after {
            g.readdress = after;
        }
        g.unaddress = unaddress;
        out
    }

    /// Runs `f` on the backend itself, with the bus locked (for backend-specific calls).
    pub fn with_backend<T>(&self, f: impl FnOnce(&mut dyn Backend) -> T) -> T {
        let mut g = self.lock();
        g.addressed = Addressed::Nothing;
        f(g.backend.as_mut())
    }
}

/// Raw bus operations inside one locked transaction (see [`Bus::transaction`]).
pub struct Transaction<'a> {
    state: &'a mut BusState,
}

impl Transaction<'_> {
    /// The board's own primary address.
    pub fn board_address(&self) -> PrimaryAddress {
        self.state.backend.board_address()
    }

    /// Whether the backend addresses devices itself (see [`Backend::device_level`]).
    pub fn device_level(&mut self) -> bool {
        self.state.backend.is_device_level()
    }

    /// Applies `timeout` (or the bus default) to the backend if it is not in force already.
    pub(crate) fn use_timeout(&mut self, timeout: Option<Timeout>) -> Result<()> {
        let want = timeout.unwrap_or(self.state.default_timeout);
        if want != self.state.applied_timeout {
            self.state.applied_timeout = self.state.backend.set_timeout(want)?;
        }
        Ok(())
    }

    /// The timeout in force.
    pub fn timeout(&self) -> Timeout {
        self.state.applied_timeout
    }

    /// Sends raw command bytes with ATN.
    pub fn command(&mut self, bytes: &[u8]) -> Result<()> {
        self.state.addressed = Addressed::Nothing;
        self.state.backend.command(bytes)
    }

    /// Sends interface messages with ATN.
    pub fn command_messages(&mut self, messages: &[InterfaceMessage]) -> Result<()> {
        let mut buf = [0u8; 64];
        for chunk in messages.chunks(buf.len()) {
            for (b, m) in buf.iter_mut().zip(chunk) {
                *b = m.byte();
            }
            self.command(&buf[..chunk.len()])?;
        }
        Ok(())
    }

    /// UNL, MTA board, MLA device \[MSA\].
    /// Addresses `device` to listen and the board to talk (UNL, MTA board, MLA device
    /// \[MSA\]), unless that addressing is already in place.
    pub fn address_to_device(&mut self, device: Address) -> Result<()> {
        if !self.state.readdress && self.state.addressed == Addressed::ToDevice(device) {
            return Ok(());
        }
        self.command(addressing::to_devices(self.board_address(), &[device]).as_bytes())?;
        self.state.addressed = Addressed::ToDevice(device);
        Ok(())
    }

    /// Addresses every one of `devices` to listen and the board to talk (UNL, MTA
    /// board, MLA \[MSA\] of each), always.
    pub fn address_to_devices(&mut self, devices: &[Address]) -> Result<()> {
        self.command(addressing::to_devices(self.board_address(), devices).as_bytes())?;
        if let [one] = devices {
            self.state.addressed = Addressed::ToDevice(*one);
        }
        Ok(())
    }

    /// Addresses `device` to talk and the board to listen (UNL, MTA device \[MSA\],
    /// MLA board), unless that addressing is already in place. This is the 1988 io_test
    /// program's `listencmd`.
    pub fn address_from_device(&mut self, device: Address) -> Result<()> {
        if !self.state.readdress && self.state.addressed == Addressed::FromDevice(device) {
            return Ok(());
        }
        self.command(addressing::from_device(self.board_address(), device).as_bytes())?;
        self.state.addressed = Addressed::FromDevice(device);
        Ok(())
    }

    /// Addresses `device` to listen (as [`Transaction::address_to_device`]) and writes
    /// `data` to it: one backend call ([`Backend::command_then_write`]) when the
    /// addressing must be sent.
    pub fn write_to_device(&mut self, device: Address, data: &[u8], eoi: bool) -> Result<usize> {
        if !self.state.readdress && self.state.addressed == Addressed::ToDevice(device) {
            let n = self.state.backend.write(data, eoi)?;
            self.unaddress_if_asked()?;
            return Ok(n);
        }
        let cmd = addressing::to_devices(self.board_address(), &[device]);
        self.state.addressed = Addressed::Nothing;
        let n = self
            .state
            .backend
            .command_then_write(cmd.as_bytes(), data, eoi)?;
        self.state.addressed = Addressed::ToDevice(device);
        self.unaddress_if_asked()?;
        Ok(n)
    }

    /// UNL UNT after a device transfer, when the driver unaddresses after every call
    /// (the board tuning's unaddressing:
    /// [`crate::backend::BackendExt::driver_addressing`]): the next transfer addresses
    /// again.
    #[inline(always)]
    fn unaddress_if_asked(&mut self) -> Result<()> {
        if self.state.unaddress {
            self.command(addressing::unaddress().as_bytes())?;
        }
        Ok(())
    }

    /// Addresses `device` to talk (as [`Transaction::address_from_device`]) and reads
    /// from it: one backend call ([`Backend::command_then_read`]) when the addressing
    /// must be sent.
    pub fn read_from_device(
        &mut self,
        device: Address,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        if !self.state.readdress && self.state.addressed == Addressed::FromDevice(device) {
            let st = self.state.backend.read(buf, eos)?;
            self.unaddress_if_asked()?;
            return Ok(st);
        }
        let cmd = addressing::from_device(self.board_address(), device);
        self.state.addressed = Addressed::Nothing;
        let st = self
            .state
            .backend
            .command_then_read(cmd.as_bytes(), buf, eos)?;
        self.state.addressed = Addressed::FromDevice(device);
        self.unaddress_if_asked()?;
        Ok(st)
    }

    /// Whether the bus is unaddressed after every device transfer (the board tuning's
    /// unaddressing, [`crate::backend::BackendExt::driver_addressing`]).
    pub(crate) fn unaddresses(&self) -> bool {
        self.state.unaddress
    }

    /// A query: addresses `device` to listen and writes `data` (END on its last byte),
    /// then addresses it to talk and reads its answer ([`Transaction::write_to_device`],
    /// [`Transaction::read_from_device`]), in one backend call
    /// ([`Backend::command_write_command_read`]) when both addressings must be sent, as
    /// they are unless the bus is left addressed between calls. The bus stays addressed
    /// after the read (more reads of the answer may follow), also when it is
    /// unaddressed after every other transfer.
    pub fn write_read_device(
        &mut self,
        device: Address,
        data: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        if self.state.unaddress
            || (!self.state.readdress && self.state.addressed == Addressed::ToDevice(device))
        {
            self.write_to_device(device, data, true)
                .map_err(WriteReadError::Write)?;
            self.address_from_device(device)
                .map_err(WriteReadError::Write)?;
            return self.read(buf, eos).map_err(WriteReadError::Read);
        }
        let board = self.board_address();
        let listen = addressing::to_devices(board, &[device]);
        let talk = addressing::from_device(board, device);
        self.state.addressed = Addressed::Nothing;
        let st = self.state.backend.command_write_command_read(
            listen.as_bytes(),
            data,
            talk.as_bytes(),
            buf,
            eos,
        )?;
        self.state.addressed = Addressed::FromDevice(device);
        Ok(st)
    }

    /// Sends one addressed command (SDC, GET, GTL...) to `device`: always with its
    /// addressing (UNL, MTA board, MLA device \[MSA\], command) in one command call, so
    /// it reaches the device whatever the bus state was. The addressing stays in place.
    pub fn addressed_command(&mut self, device: Address, m: InterfaceMessage) -> Result<()> {
        let mut cmd = addressing::to_devices(self.board_address(), &[device]);
        cmd.push(m);
        self.command(cmd.as_bytes())?;
        self.state.addressed = Addressed::ToDevice(device);
        Ok(())
    }

    /// Writes data to the addressed listeners (EOI on the last byte when `eoi`).
    pub fn write(&mut self, data: &[u8], eoi: bool) -> Result<usize> {
        self.state.backend.write(data, eoi)
    }

    /// Reads from the addressed talker.
    pub fn read(&mut self, buf: &mut [u8], eos: Option<Eos>) -> Result<ReadStatus> {
        self.state.backend.read(buf, eos)
    }

    /// The backend, for operations the transaction does not wrap.
    pub fn backend(&mut self) -> &mut dyn Backend {
        self.state.addressed = Addressed::Nothing;
        self.state.backend.as_mut()
    }
}
