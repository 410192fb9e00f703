//! The simulated host as its users hold it: a handle to its boards, devices, faults,
//! mounts and transcript. What one bus operation does is `ops.rs`; virtual time and
//! its resources are `schedule.rs`.

use std::io::Write as _;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::address::{Address, PrimaryAddress};
use crate::error::{Error, Result};
use crate::sim::behaviour::{BoardBehaviour, DeviceBehaviour};
use crate::sim::fault::Fault;
use crate::sim::instrument::Instrument;
use crate::sim::named::NamedDevice;
use crate::sim::slot::Slot;
use crate::sim::timing::{BoardTiming, DeviceTiming};
use crate::sim::transcript::Event;
use crate::sim::world::{Board, World};
use crate::trace::TraceSink;

pub(crate) struct Shared {
    pub(crate) world: Mutex<World>,
    /// Participants registered and not dropped: while there are none, a bus
    /// transaction need not lock the host to learn that its thread takes no turns.
    pub(crate) participants: AtomicUsize,
}

/// A simulated host computer with one or more GPIB boards, in virtual time.
///
/// Cloning gives another handle to the same host. Boards are used through
/// [`SimHost::board`], which returns a [`crate::Backend`]. Each thread that uses the
/// host has its own position in virtual time (see [`SimHost::participant`] for
/// threads whose operations must interleave deterministically).
///
/// ```
/// use gpib::{Bus, sim};
/// let host = sim::builtin("hp9000-350").unwrap();
/// let bus = Bus::new(host.board_named("hpib7").unwrap());
/// assert_eq!(bus.device(11).unwrap().query("NEW 10;NEW?").unwrap(), "1");
/// ```
#[derive(Clone)]
pub struct SimHost {
    pub(crate) inner: Arc<Shared>,
}

impl std::fmt::Debug for SimHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let g = self.lock();
        f.debug_struct("SimHost")
            .field("name", &g.name)
            .field("boards", &g.boards.len())
            .field("cpus", &g.cpus.count())
            .finish()
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
    /// An empty host named `name`, with one CPU.
    pub fn new(name: impl Into<String>) -> Self {
        Self::with_cpus(name, 1)
    }

    /// An empty host named `name` with `cpus` CPUs (at least one).
    pub fn with_cpus(name: impl Into<String>, cpus: usize) -> Self {
        Self {
            inner: Arc::new(Shared {
                world: Mutex::new(World::new(name.into(), cpus)),
                participants: AtomicUsize::new(0),
            }),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, World> {
        match self.inner.world.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// The host's name (its configuration's).
    pub fn name(&self) -> String {
        self.lock().name.clone()
    }

    /// How many CPUs the host has.
    pub fn cpu_count(&self) -> usize {
        self.lock().cpus.count()
    }

    /// Adds a board; returns its index.
    pub fn add_board(
        &self,
        name: impl Into<String>,
        address: PrimaryAddress,
        timing: BoardTiming,
        timeout: crate::Timeout,
    ) -> usize {
        let mut g = self.lock();
        g.boards
            .push(Board::new(name.into(), address, timing, timeout));
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
        b.devices.push(Slot::new(address, instrument, timing));
        b.reindex();
        Ok(DeviceRef { board, address })
    }

    /// Declares that the device at `at` is a disc mounted (or not) at `mount_point`.
    ///
    /// Fails when the device is not a [`Disc`](crate::sim::instruments::Disc) or another
    /// disc already has that mount point.
    pub fn set_mount_point(&self, at: DeviceRef, mount_point: &str, mounted: bool) -> Result<()> {
        let (taken, board_name) = {
            let mut g = self.lock();
            let taken = g.boards.iter_mut().enumerate().any(|(i, b)| {
                b.devices.iter_mut().any(|d| {
                    !(i == at.board && d.address == at.address)
                        && d.disc().and_then(|x| x.mount_point()) == Some(mount_point)
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
            let model = s.instrument().model().to_string();
            match s.disc() {
                Some(d) => {
                    d.set_mount_point(mount_point, mounted);
                    Ok(())
                }
                None => Err(Error::Config(format!(
                    "device {} on board {board_name} is a {model}, not a disc: it cannot be mounted at {mount_point:?}",
                    at.address
                ))),
            }
        })?
    }

    fn with_slot<T>(&self, at: DeviceRef, f: impl FnOnce(&mut Slot) -> T) -> Result<T> {
        let mut g = self.lock();
        let b = g.boards.get_mut(at.board).ok_or_else(|| {
            Error::Config(format!("no device at {} on board {}", at.address, at.board))
        })?;
        let slot = b
            .devices
            .iter_mut()
            .find(|d| d.address == at.address)
            .ok_or_else(|| {
                Error::Config(format!("no device at {} on board {}", at.address, at.board))
            })?;
        let out = f(slot);
        // `f` may have changed the device's faults.
        b.reindex();
        Ok(out)
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
        let mut g = self.lock();
        g.boards.get_mut(board).map_or_else(Vec::new, |b| {
            b.devices
                .iter_mut()
                .map(|d| {
                    let mount = d.disc().and_then(|x| x.mount_point().map(String::from));
                    (d.address, d.instrument().model().to_string(), mount)
                })
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
                if let Some(disc) = d.disc() {
                    match disc.mount_point() {
                        Some(m) if m == mount_point => {
                            disc.set_mounted(on);
                            return Ok(());
                        }
                        Some(m) => known.push(m.to_string()),
                        None => {}
                    }
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
        let mut g = self.lock();
        let mut out = Vec::new();
        for b in &mut g.boards {
            for d in &mut b.devices {
                if let Some(disc) = d.disc() {
                    if let Some(m) = disc.mount_point() {
                        out.push((m.to_string(), b.name.clone(), disc.is_mounted()));
                    }
                }
            }
        }
        out
    }

    /// Injects `fault` into the device at `address` on board `board`.
    pub fn inject(&self, board: usize, address: Address, fault: Fault) -> Result<()> {
        self.with_slot(DeviceRef { board, address }, |s| {
            s.faults_mut().insert(fault)
        })?;
        if fault == Fault::Absent {
            self.forget_addressing(board, address);
        }
        Ok(())
    }

    /// Removes every fault from the device. A device that was absent comes back
    /// unaddressed (it saw none of the addressing sent meanwhile).
    pub fn clear_faults(&self, board: usize, address: Address) -> Result<()> {
        let was_absent = self.with_slot(DeviceRef { board, address }, |s| {
            let absent = !s.present();
            s.faults_mut().clear();
            absent
        })?;
        if was_absent {
            self.forget_addressing(board, address);
        }
        Ok(())
    }

    fn forget_addressing(&self, board: usize, address: Address) {
        if let Some(b) = self.lock().boards.get_mut(board) {
            b.addressing.forget(address);
        }
    }

    /// Runs `f` on the instrument at `address`.
    pub fn with_instrument<T>(
        &self,
        board: usize,
        address: Address,
        f: impl FnOnce(&mut dyn Instrument) -> T,
    ) -> Result<T> {
        self.with_slot(DeviceRef { board, address }, |s| f(s.instrument_mut()))
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
            s.instrument_mut()
                .as_any_mut()
                .and_then(|a| a.downcast_mut::<T>())
                .map(f)
        })
    }

    /// Starts recording every bus event, keeping at most `capture` data bytes per event.
    pub fn record(&self, capture: usize) {
        self.lock().rec.start_transcript(capture);
    }

    /// Stops recording and returns the events recorded so far.
    pub fn stop_recording(&self) -> Vec<Event> {
        self.lock().rec.stop_transcript()
    }

    /// Streams every bus record of this host (all boards) to `sink` from now on, with
    /// every data byte and its handshake timing, until [`SimHost::stop_trace`]; replaces
    /// a sink set before. Memory stays bounded however long the run: the sink decides
    /// where records go (a [`crate::trace::TraceWriter`] writes a file).
    pub fn trace_to(&self, sink: impl TraceSink + 'static) {
        self.lock().rec.set_sink(Box::new(sink));
    }

    /// Stops streaming records and returns the sink (flush it to see write errors).
    pub fn stop_trace(&self) -> Option<Box<dyn TraceSink>> {
        self.lock().rec.take_sink()
    }

    /// Takes the events recorded so far (recording goes on).
    pub fn take_events(&self) -> Vec<Event> {
        self.lock().rec.take_events()
    }

    /// Whether `GPIB_SIM_TRACE` asks the libraries over the simulator (compat's
    /// libgpib, the virtual board) to print the bus's events: set, not empty, not `0`.
    pub fn trace_requested() -> bool {
        std::env::var_os("GPIB_SIM_TRACE").is_some_and(|v| !v.is_empty() && v != "0")
    }

    /// Prints the events recorded since the last call on standard error, one a line as
    /// `gpib-sim: EVENT` (what `GPIB_SIM_TRACE` shows), and flushes it.
    pub fn print_events(&self) {
        let events = self.take_events();
        if events.is_empty() {
            return;
        }
        let mut err = std::io::stderr().lock();
        for e in events {
            let _ = writeln!(err, "gpib-sim: {e}");
        }
        let _ = err.flush();
    }

    /// The calling thread's virtual time.
    pub fn now(&self) -> Duration {
        self.lock().callers.now()
    }

    /// When the next instrument event is due (a timer an instrument set: a
    /// measurement that ends, an operation that completes), if any.
    pub fn next_event(&self) -> Option<Duration> {
        self.lock().timers.next_due()
    }

    /// Host CPU time modelled so far, all CPUs together.
    pub fn cpu(&self) -> Duration {
        self.lock().cpus.busy()
    }

    /// Time board `board`'s bus has been busy so far.
    pub fn bus_busy(&self, board: usize) -> Duration {
        self.lock()
            .boards
            .get(board)
            .map_or(Duration::ZERO, |b| b.bus.busy())
    }

    /// Switches device contention sources on or off (see [`crate::sim::behaviour`]):
    /// listen-only, NRFD held after each message, an SRQ storm, background traffic.
    pub fn set_device_behaviour(
        &self,
        board: usize,
        address: Address,
        behaviour: DeviceBehaviour,
    ) -> Result<()> {
        let mut g = self.lock();
        let now = g.callers.now();
        let slot = g
            .boards
            .get_mut(board)
            .and_then(|b| b.devices.iter_mut().find(|d| d.address == address))
            .ok_or_else(|| Error::Config(format!("no device at {address} on board {board}")))?;
        slot.set_behaviour(behaviour, now);
        g.refresh_background();
        Ok(())
    }

    /// A device's contention sources.
    pub fn device_behaviour(&self, board: usize, address: Address) -> Result<DeviceBehaviour> {
        let g = self.lock();
        g.boards
            .get(board)
            .and_then(|b| b.devices.iter().find(|d| d.address == address))
            .map(|d| d.behaviour)
            .ok_or_else(|| Error::Config(format!("no device at {address} on board {board}")))
    }

    /// Switches a board driver's contention sources (autopoll, addressing on every
    /// call, cable length).
    ///
    /// Autopoll switched on polls a request left pending meanwhile (SRQ held while
    /// nobody polled) from the caller's now on, not back in the past.
    pub fn set_board_behaviour(&self, board: usize, behaviour: BoardBehaviour) -> Result<()> {
        let mut g = self.lock();
        let now = g.callers.now();
        let b = g
            .boards
            .get_mut(board)
            .ok_or_else(|| Error::Config(format!("no board {board}")))?;
        if behaviour.autopoll && !b.behaviour.autopoll {
            for d in &mut b.devices {
                if d.next_request.is_some_and(|at| at < now) {
                    d.next_request = Some(now);
                }
            }
        }
        b.behaviour = behaviour;
        g.refresh_background();
        Ok(())
    }

    /// A board driver's contention sources.
    pub fn board_behaviour(&self, board: usize) -> Result<BoardBehaviour> {
        self.lock()
            .boards
            .get(board)
            .map(|b| b.behaviour)
            .ok_or_else(|| Error::Config(format!("no board {board}")))
    }

    /// A board's timing parameters.
    pub fn board_timing(&self, board: usize) -> Result<BoardTiming> {
        self.lock()
            .boards
            .get(board)
            .map(|b| b.timing.clone())
            .ok_or_else(|| Error::Config(format!("no board {board}")))
    }

    /// Changes a board's timing parameters (its T1 when it talks, for instance), for the
    /// operations that start from now on.
    pub fn set_board_timing(&self, board: usize, timing: BoardTiming) -> Result<()> {
        let mut g = self.lock();
        let b = g
            .boards
            .get_mut(board)
            .ok_or_else(|| Error::Config(format!("no board {board}")))?;
        b.timing = timing;
        g.refresh_background();
        Ok(())
    }

    /// Real-time mode: every operation also sleeps for its modelled duration.
    pub fn set_realtime(&self, on: bool) {
        self.lock().realtime = on;
    }
}
