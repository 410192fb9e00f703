//! One way to open an instrument on every backend: a resource string in, a
//! [`Device`] out, as PyVISA's `ResourceManager().open_resource(name)`.
//!
//! | resource | opens |
//! |---|---|
//! | `GPIB0::22::INSTR`, `GPIB1::5::3::INSTR` | device 22 (secondary 3) of board 0: a board [attached](ResourceManager::attach) to the manager (a simulated host's boards, a Prologix adapter opened as `GPIB<n>`), else linux-gpib's board (feature `linux-gpib`) |
//! | `TCPIP0::host::gpib0,22::INSTR`, `TCPIP::host,1024::gpib0,22::INSTR` | device 22 behind a VXI-11 LAN/GPIB gateway (`gpib1,5`: device 5 on its second interface) |
//! | `TCPIP0::host::inst0::INSTR` | a VXI-11 instrument on the LAN (no GPIB address) |
//! | `PRLGX-TCPIP::host::1234::INTFC`, `PRLGX-ASRL::/dev/ttyUSB0::INTFC` | a Prologix adapter, as pyvisa-py names it: [`ResourceManager::open_interface`] attaches it as `GPIB<n>`, then `GPIB<n>::22::INSTR` is a device on it |
//! | `PRLGX-TCPIP::host::1234::22::INSTR`, `PRLGX-ASRL::/dev/ttyUSB0::22::INSTR` | device 22 on a Prologix adapter in one string (this crate's: the adapter is opened, or shared while this manager has it open, and stands as `GPIB<n>` unless a board of that number is open; the TCP form always names the port) |
//! | `voltmeter` | the gpib.conf device section of that name (`$IB_CONFIG` or `/etc/gpib.conf`): its board, address, timeout and EOS |
//!
//! Each backend says which of these strings it opens through its
//! [`Connector`] (one in its own module, one list of the
//! built-in ones in `manager/builtin.rs`); [`ResourceManager::register`] adds an app's
//! own, asked first.
//!
//! [`crate::open`] opens through the process's one manager ([`ResourceManager::global`]):
//! a second device on a board, adapter or gateway that is open shares it (one [`Bus`],
//! one connection, one set of linux-gpib descriptors), and a board the manager opened
//! is released when the last device and `Bus` on it are dropped (opened again when it
//! is next named). A manager made with [`ResourceManager::new`] shares nothing with it.
//!
//! Any [`Bus`] can be attached as a board (here the core's fake board, as in an
//! application's tests):
//!
//! ```
//! use gpib::backend::fake::{FakeBoard, FakeInstrument};
//! let board = FakeBoard::new()
//!     .with(11, FakeInstrument::new().answer("*IDN?", "ACME,COUNTER,0,1.0"))?
//!     .with(22, FakeInstrument::new().answer("*IDN?", "ACME,DMM-1,0,1.0"))?;
//! let mut rm = gpib::ResourceManager::new();
//! rm.attach(0, gpib::Bus::new(board));
//! let dmm = rm.open("GPIB0::22::INSTR")?;
//! assert_eq!(dmm.query("*IDN?")?, "ACME,DMM-1,0,1.0");
//! assert_eq!(rm.open("GPIB0::11")?.query("*IDN?")?, "ACME,COUNTER,0,1.0");
//! # Ok::<(), gpib::Error>(())
//! ```
//!
//! With the `sim` feature, `ResourceManager::simulated("bench")` attaches every board
//! of a simulated host, and [`ResourceManager::from_env`] does so when
//! `GPIB_SIM_CONFIG` names a configuration (as the compatibility library does), so a
//! program that opens `GPIB0::22::INSTR` runs unchanged on the simulator.

mod builtin;
mod gpib_conf;
mod pattern;

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

pub use pattern::Pattern;

use crate::address::Address;
use crate::bus::{Bus, WeakBus};
use crate::connector::{Connection, Connector, OnInterface};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::gpibconf::GpibConf;
use crate::resource::Resource;
use crate::settings::{DeviceSettings, Timeout};

/// The boards a program's resource strings name, and the settings its devices open with.
pub struct ResourceManager {
    /// Boards by their `GPIB<n>` number.
    boards: BTreeMap<u16, Held>,
    /// What every device opens with, unless its resource says otherwise.
    settings: DeviceSettings,
    /// The gpib.conf device names are looked up in (`None`: read the default file when
    /// a name is opened).
    gpib_conf: Option<GpibConf>,
    /// The backends resource strings are opened by, asked in this order: those
    /// [registered](ResourceManager::register) (the latest first), then the built-in ones.
    connectors: Vec<Box<dyn Connector>>,
    /// Interfaces opened for device resources ([`Connector::device_interface`]), by
    /// their interface resource: a second device on one adapter or gateway shares its
    /// connection while a device on it is open.
    interfaces: BTreeMap<String, WeakBus>,
}

/// A board of the manager.
enum Held {
    /// Attached by the application ([`ResourceManager::attach`], an interface it
    /// opened): kept open by the manager.
    Attached(Bus),
    /// Opened by the manager for a resource: open while a device or `Bus` on it is,
    /// then opened again when named again (a board whose link broke is not kept).
    Opened(WeakBus),
}

impl Held {
    fn bus(&self) -> Option<Bus> {
        match self {
            Held::Attached(bus) => Some(bus.clone()),
            Held::Opened(weak) => weak.upgrade(),
        }
    }
}

impl std::fmt::Debug for ResourceManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceManager")
            .field("boards", &self.boards())
            .field("settings", &self.settings)
            .field(
                "connectors",
                &self.connectors.iter().map(|c| c.name()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Default for ResourceManager {
    fn default() -> Self {
        Self::new()
    }
}

/// Opens `resource` with the process's manager ([`ResourceManager::global`]): see the
/// [module](crate::manager) for the strings it takes. A second device on a board (or
/// adapter, or gateway) that is open shares it: one [`Bus`], one connection.
pub fn open(resource: &str) -> Result<Device> {
    ResourceManager::global()?.open(resource)
}

/// The process's manager ([`ResourceManager::global`]), made on first use.
static GLOBAL: Mutex<Option<ResourceManager>> = Mutex::new(None);

thread_local! {
    /// Whether this thread holds [`GLOBAL`] (a second lock by it would never return).
    static HOLDING: Cell<bool> = const { Cell::new(false) };
}

/// The process's manager, locked: other threads' [`crate::open`] wait until it is
/// dropped ([`ResourceManager::global`]).
pub struct GlobalManager {
    guard: MutexGuard<'static, Option<ResourceManager>>,
}

impl std::ops::Deref for GlobalManager {
    type Target = ResourceManager;
    fn deref(&self) -> &ResourceManager {
        self.guard
            .as_ref()
            .expect("made before the guard is handed out")
    }
}

impl std::ops::DerefMut for GlobalManager {
    fn deref_mut(&mut self) -> &mut ResourceManager {
        self.guard
            .as_mut()
            .expect("made before the guard is handed out")
    }
}

impl Drop for GlobalManager {
    fn drop(&mut self) {
        HOLDING.with(|h| h.set(false));
    }
}

impl std::fmt::Debug for GlobalManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl ResourceManager {
    /// The process's one manager, the one [`crate::open`] and `gpib::aio::open`
    /// (feature `tokio`) use, as PyVISA keeps one per library: made by
    /// [`ResourceManager::from_env`] on first use. A device opened through it on a board (an adapter, a gateway) that is open
    /// shares that board, whoever opened the first; a board is released when the last
    /// device and [`Bus`] on it are dropped. What is [registered](ResourceManager::register)
    /// or attached on it is seen by every later [`crate::open`]:
    ///
    /// ```
    /// use gpib::backend::fake::{FakeBoard, FakeInstrument};
    /// let board = FakeBoard::new().with(9, FakeInstrument::new().answer("*IDN?", "ACME,PSU,0,1"))?;
    /// gpib::ResourceManager::global()?.attach(7, gpib::Bus::new(board));
    /// assert_eq!(gpib::open("GPIB7::9::INSTR")?.query("*IDN?")?, "ACME,PSU,0,1");
    /// # Ok::<(), gpib::Error>(())
    /// ```
    ///
    /// An application that wants a manager of its own makes one
    /// ([`ResourceManager::new`]): it shares nothing with this one.
    ///
    /// The manager is locked while the handle lives. Errors: those of
    /// [`ResourceManager::from_env`] (it is made again on the next call), and
    /// [`Error::InvalidArgument`] when this thread holds the handle already (opening
    /// through [`crate::open`] meanwhile would wait for ever).
    pub fn global() -> Result<GlobalManager> {
        if HOLDING.with(Cell::get) {
            return Err(Error::InvalidArgument(
                "this thread holds the process's resource manager (ResourceManager::global) \
                 already: open through that handle, or drop it first"
                    .into(),
            ));
        }
        let mut guard = GLOBAL.lock().unwrap_or_else(PoisonError::into_inner);
        if guard.is_none() {
            *guard = Some(Self::from_env()?);
        }
        HOLDING.with(|h| h.set(true));
        Ok(GlobalManager { guard })
    }

    /// A manager with no board attached and every built-in backend: `GPIB<n>` resources
    /// go to linux-gpib's boards (feature `linux-gpib`), network resources to their
    /// adapters.
    pub fn new() -> Self {
        Self::with_connectors(builtin::connectors())
    }

    fn with_connectors(connectors: Vec<Box<dyn Connector>>) -> Self {
        Self {
            boards: BTreeMap::new(),
            settings: DeviceSettings::default(),
            gpib_conf: None,
            connectors,
            interfaces: BTreeMap::new(),
        }
    }

    /// [`ResourceManager::new`], or, with the `sim` feature and `GPIB_SIM_CONFIG` set
    /// (a built-in name such as `bench` or a TOML file), the simulated host it names.
    pub fn from_env() -> Result<Self> {
        #[cfg(feature = "sim")]
        if let Ok(name) = std::env::var("GPIB_SIM_CONFIG") {
            if !name.is_empty() {
                return Self::simulated(&name);
            }
        }
        Ok(Self::new())
    }

    /// A manager with every board of the simulated host `config` (a built-in name or a
    /// TOML file) attached as `GPIB0`, `GPIB1`, ...: the simulator's connector is
    /// [registered](ResourceManager::register) on a [`ResourceManager::new`], so
    /// `GPIB<n>` resources name its boards only (not linux-gpib's), network resources
    /// open as there.
    #[cfg(feature = "sim")]
    pub fn simulated(config: &str) -> Result<Self> {
        Self::with_host(crate::sim::config::load(config)?)
    }

    /// A manager with every board of `host` attached as `GPIB0`, `GPIB1`, ..., as
    /// [`ResourceManager::simulated`] makes for a configuration: the one place the
    /// host's boards are opened, so every device and [`Bus`] taken from it
    /// ([`ResourceManager::open`], [`ResourceManager::open_interface`]) shares one
    /// `Bus` per board.
    ///
    /// ```
    /// let host = gpib::sim::bench();
    /// let mut rm = gpib::ResourceManager::with_host(host)?;
    /// let dmm = rm.open("GPIB0::22::INSTR")?;
    /// let bus = rm.open_interface("GPIB0::INTFC")?; // the Bus `dmm` is on
    /// println!("{}", dmm.query("*IDN?")?);
    /// bus.device(11)?.write_str("ABRT")?;
    /// # Ok::<(), gpib::Error>(())
    /// ```
    #[cfg(feature = "sim")]
    pub fn with_host(host: crate::sim::SimHost) -> Result<Self> {
        let sim = crate::sim::SimConnector::new(host);
        let interfaces = sim.list();
        let mut rm = Self::new();
        rm.register(Box::new(sim));
        for name in interfaces {
            rm.open_interface(&name)?;
        }
        Ok(rm)
    }

    /// Adds a backend: resource strings are offered to `connector` before the backends
    /// registered earlier and the built-in ones, and [`ResourceManager::list_resources`]
    /// lists what it finds.
    pub fn register(&mut self, connector: Box<dyn Connector>) {
        self.connectors.insert(0, connector);
    }

    /// Makes `bus` board `GPIB<board>` of this manager (replacing one attached before),
    /// kept open as long as the manager is.
    pub fn attach(&mut self, board: u16, bus: Bus) {
        self.boards.insert(board, Held::Attached(bus));
    }

    /// The numbers of the boards attached, and of those opened for a resource that are
    /// still open.
    pub fn boards(&self) -> Vec<u16> {
        self.boards
            .iter()
            .filter(|(_, held)| held.bus().is_some())
            .map(|(n, _)| *n)
            .collect()
    }

    /// Sets what every device opens with ([`DeviceSettings`]; a gpib.conf section's own
    /// timeout and EOS win over these).
    pub fn set_default_settings(&mut self, settings: DeviceSettings) {
        self.settings = settings;
    }

    /// Looks gpib.conf device names up in `conf` instead of the default file
    /// (`$IB_CONFIG` or `/etc/gpib.conf`).
    pub fn set_gpib_conf(&mut self, conf: GpibConf) {
        self.gpib_conf = Some(conf);
    }

    /// Sets the timeout every device opens with.
    pub fn set_timeout(&mut self, timeout: Timeout) {
        self.settings.timeout = Some(timeout);
    }

    /// Opens the device `resource` names (see the [module](crate::manager)).
    ///
    /// Errors: [`Error::InvalidArgument`] for a string that names nothing openable (the
    /// message says what was expected), the backend's errors when it cannot be reached.
    pub fn open(&mut self, resource: &str) -> Result<Device> {
        let text = resource.trim();
        match text.parse::<Resource>() {
            Ok(Resource::Instrument { board, address }) => {
                let bus = self.board(board)?;
                return self.device_on(&bus, address, DeviceSettings::default());
            }
            Ok(Resource::Interface { .. }) => {
                return Err(Error::InvalidArgument(format!(
                    "{text} is an interface: open_interface opens it; open takes a device \
                     (GPIB<n>::<address>::INSTR)"
                )))
            }
            Err(_) => {}
        }
        if let Some(on) = self
            .connectors
            .iter()
            .find_map(|c| c.device_interface(text))
        {
            let on = on?;
            let bus = self.interface(&on)?;
            return self.device_on(&bus, on.address, DeviceSettings::default());
        }
        if let Some(opened) = self.connectors.iter().find_map(|c| c.open_device(text)) {
            let (backend, address) = opened?;
            return self.device_on(&Bus::from_box(backend), address, DeviceSettings::default());
        }
        if !text.contains("::") && !text.is_empty() {
            return self.open_named(text);
        }
        Err(not_a_resource(text))
    }

    /// Opens the interface `resource` names and attaches it: `GPIB<n>::INTFC` (the board
    /// itself), `PRLGX-TCPIP<n>::host::port::INTFC` or `PRLGX-ASRL<n>::path::INTFC` (a
    /// Prologix adapter, then board `GPIB<n>`), `TCPIP<n>::host::gpib0::INSTR` (a VXI-11
    /// gateway's bus, then board `GPIB<n>`), or an interface of a registered backend.
    pub fn open_interface(&mut self, resource: &str) -> Result<Bus> {
        let text = resource.trim();
        if let Ok(Resource::Interface { board }) = text.parse::<Resource>() {
            let bus = self.board(board)?;
            self.attach(board, bus.clone());
            return Ok(bus);
        }
        match self.connectors.iter().find_map(|c| c.open_interface(text)) {
            Some(opened) => {
                let (backend, board) = opened?;
                let bus = Bus::from_box(backend);
                self.attach(board, bus.clone());
                Ok(bus)
            }
            None => Err(Error::InvalidArgument(format!(
                "{text:?} is not an interface: expected GPIB<n>::INTFC, \
                 PRLGX-TCPIP::<host>::<port>::INTFC or PRLGX-ASRL::<path>::INTFC"
            ))),
        }
    }

    /// Opens the backend `resource` is on without sharing it or attaching it, for a
    /// caller that wraps it first (a trace recorder) and then makes it a [`Bus`]: an
    /// interface (`GPIB<n>::INTFC`, a Prologix adapter, a VXI-11 gateway's `gpib0`)
    /// has no address, a device (`GPIB0::22::INSTR`, `TCPIP::host::gpib0,22::INSTR`,
    /// `hislip0`) its address on the bus. Boards attached to this manager are not
    /// used: the backend is opened anew.
    ///
    /// Errors: as [`ResourceManager::open`]'s.
    pub fn connect(&self, resource: &str) -> Result<Connection> {
        let text = resource.trim();
        let gpib = text.parse::<Resource>().ok();
        let interface = gpib.map_or_else(|| text.to_string(), |r| interface_of(r.board()));
        for c in &self.connectors {
            if let Some(opened) = c.open_interface(&interface) {
                let (backend, _) = opened?;
                return Ok(Connection {
                    backend,
                    address: gpib.and_then(|r| r.address()),
                    connector: c.name().to_string(),
                });
            }
        }
        if gpib.is_none() {
            for c in &self.connectors {
                if let Some(on) = c.device_interface(text) {
                    let on = on?;
                    let Some(opened) = c.open_interface(&on.interface) else {
                        continue;
                    };
                    return Ok(Connection {
                        backend: opened?.0,
                        address: Some(on.address),
                        connector: c.name().to_string(),
                    });
                }
                if let Some(opened) = c.open_device(text) {
                    let (backend, address) = opened?;
                    return Ok(Connection {
                        backend,
                        address: Some(address),
                        connector: c.name().to_string(),
                    });
                }
            }
        }
        Err(match gpib {
            Some(r) => self.no_board(r.board()),
            None => not_a_resource(text),
        })
    }

    /// The resources this manager can reach whose names match the VISA expression
    /// `pattern` ([`Pattern`]: `?*::INSTR` for every instrument): each attached board's
    /// listeners (found by addressing each address to listen, where the board can) and
    /// the board itself; the boards the backends find (with `linux-gpib`, the boards
    /// of the machine) likewise, and what registered backends list.
    pub fn list_resources(&mut self, pattern: &str) -> Result<Vec<String>> {
        let pattern = Pattern::parse(pattern).map_err(Error::InvalidArgument)?;
        let found: Vec<String> = self.connectors.iter().flat_map(|c| c.list()).collect();
        let mut others = Vec::new();
        // The boards listed, open while they are looked at.
        let mut open: Vec<(u16, Bus)> = Vec::new();
        for name in found {
            match name.parse::<Resource>() {
                // Listed by two backends (linux-gpib's and the simulator's): once.
                Ok(Resource::Interface { board }) if open.iter().any(|(b, _)| *b == board) => {}
                Ok(Resource::Interface { board }) => {
                    // A board that does not open is not listed.
                    if let Ok(bus) = self.board(board) {
                        open.push((board, bus));
                    }
                }
                _ => others.push(name),
            }
        }
        for (board, held) in &self.boards {
            if let Some(bus) = held.bus() {
                if !open.iter().any(|(b, _)| b == board) {
                    open.push((*board, bus));
                }
            }
        }
        open.sort_by_key(|(board, _)| *board);
        let mut out = Vec::new();
        for (board, bus) in &open {
            out.push(interface_of(*board));
            // A device-level backend (a gateway, an adapter) cannot look for listeners.
            if let Ok(listeners) = bus.find_listeners() {
                for a in listeners {
                    out.push(
                        Resource::Instrument {
                            board: *board,
                            address: a,
                        }
                        .to_string(),
                    );
                }
            }
        }
        for name in others {
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out.retain(|name| pattern.matches(name));
        Ok(out)
    }

    /// The interface a device resource is on ([`Connector::device_interface`]): the one
    /// this manager has open for the same interface resource, else opened (and, when
    /// the connector says so and no open board has that number, made board `GPIB<n>`).
    fn interface(&mut self, on: &OnInterface) -> Result<Bus> {
        if let Some(bus) = self
            .interfaces
            .get(&on.interface)
            .and_then(WeakBus::upgrade)
        {
            return Ok(bus);
        }
        let opened = self
            .connectors
            .iter()
            .find_map(|c| c.open_interface(&on.interface))
            .ok_or_else(|| not_a_resource(&on.interface))?;
        let (backend, board) = opened?;
        let bus = Bus::from_box(backend);
        self.interfaces.retain(|_, weak| weak.upgrade().is_some());
        self.interfaces
            .insert(on.interface.clone(), bus.downgrade());
        // A board of that number that is open keeps its place.
        if on.attach && self.boards.get(&board).and_then(Held::bus).is_none() {
            self.boards.insert(board, Held::Opened(bus.downgrade()));
        }
        Ok(bus)
    }

    /// Board `GPIB<board>`: attached or open, else opened by the first backend that has
    /// it (and kept while a device on it is open).
    fn board(&mut self, board: u16) -> Result<Bus> {
        if let Some(bus) = self.boards.get(&board).and_then(Held::bus) {
            return Ok(bus);
        }
        let name = interface_of(board);
        match self.connectors.iter().find_map(|c| c.open_interface(&name)) {
            Some(opened) => {
                let (backend, _) = opened?;
                let bus = Bus::from_box(backend);
                self.boards.insert(board, Held::Opened(bus.downgrade()));
                Ok(bus)
            }
            None => Err(self.no_board(board)),
        }
    }

    fn no_board(&self, board: u16) -> Error {
        let why = if cfg!(feature = "linux-gpib") {
            ""
        } else {
            ", and linux-gpib boards are not in this build (the gpib crate's `linux-gpib` \
             feature)"
        };
        Error::InvalidArgument(format!(
            "no board GPIB{board}: attached are {:?}{why}",
            self.boards()
        ))
    }

    fn device_on(&self, bus: &Bus, address: Address, own: DeviceSettings) -> Result<Device> {
        let mut d = bus.device(address)?;
        d.apply(&own.or(self.settings));
        Ok(d)
    }

    /// The one gpib.conf opener: the device section `name` of the manager's gpib.conf
    /// ([`ResourceManager::set_gpib_conf`], else the default file) on its board, with
    /// the section's settings (timeout, EOS when it ends reads, ...) over the manager's.
    fn open_named(&mut self, name: &str) -> Result<Device> {
        let conf = match self.gpib_conf.take() {
            Some(c) => c,
            None => GpibConf::read_default()?,
        };
        let opened = self.open_in(&conf, name);
        self.gpib_conf = Some(conf);
        opened
    }

    fn open_in(&mut self, conf: &GpibConf, name: &str) -> Result<Device> {
        let entry = gpib_conf::section(conf, name)?;
        let bus = self.board(u16::from(entry.minor))?;
        self.device_on(&bus, entry.settings.address(), gpib_conf::settings(entry))
    }
}

impl GpibConf {
    /// A handle to the device section called `name` on `bus` (the bus of board
    /// `minor` of that section), with the section's address and settings, as
    /// [`ResourceManager::open`] opens a gpib.conf name.
    ///
    /// The handle always ends writes with EOI and appends its write terminator (NL) to
    /// text: `set-eot = no` and `set-xeos` are linux-gpib descriptor settings that a
    /// [`Device`] does not have. Errors: [`Error::InvalidArgument`] when no device
    /// section has that name, or when that section's board has no interface section
    /// (the message says where).
    pub fn open_device(&self, bus: &Bus, name: &str) -> Result<Device> {
        let entry = gpib_conf::section(self, name)?;
        let mut rm = ResourceManager::with_connectors(Vec::new());
        rm.attach(u16::from(entry.minor), bus.clone());
        rm.open_in(self, name)
    }
}

#[cfg(feature = "linux-gpib")]
impl crate::backend::linux_gpib::LinuxGpibBoard {
    /// Opens the gpib.conf device section called `name`: its board (the section's
    /// `minor`), and a [`Device`] on it with the section's address and settings, as
    /// [`ResourceManager::open`] opens a gpib.conf name. Each transfer is then one
    /// `ibwrt`/`ibrd` on an `ibdev(minor, pad, sad, ...)` descriptor with those
    /// settings applied.
    ///
    /// Errors: [`Error::InvalidArgument`] when no device section has that name, else as
    /// [`crate::LinuxGpibBoard::open_index`].
    pub fn open_named_device(conf: &GpibConf, name: &str) -> Result<Device> {
        let mut rm = ResourceManager::with_connectors(vec![Box::new(
            crate::backend::linux_gpib::connector::LinuxGpibConnector,
        )]);
        rm.open_in(conf, name)
    }
}

/// `GPIB<board>::INTFC`.
fn interface_of(board: u16) -> String {
    Resource::Interface { board }.to_string()
}

fn not_a_resource(text: &str) -> Error {
    Error::InvalidArgument(format!(
        "{text:?} is not a resource: expected GPIB<n>::<address>[::<secondary>]::INSTR, \
         TCPIP[n]::<host>::gpib0,<address>::INSTR, TCPIP[n]::<host>::inst0::INSTR, \
         TCPIP[n]::<host>::hislip0::INSTR, \
         PRLGX-TCPIP[n]::<host>::<port>::<address>::INSTR, or a gpib.conf device name"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_parts_of_a_prologix_device_string_say_what_is_wrong() {
        let mut rm = ResourceManager::new();
        for (bad, says) in [
            ("PRLGX-TCPIP::host::99999::22::INSTR", "port"),
            ("PRLGX-TCPIP::host::1234::31::INSTR", "31"),
            ("PRLGX-TCPIPx::host::1234::22::INSTR", "board number"),
        ] {
            let e = rm.open(bad).unwrap_err();
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
        let e = rm.open("PRLGX-TCPIP::host::1234::INTFC").unwrap_err();
        assert!(
            e.to_string()
                .contains("PRLGX-TCPIP0::host::1234::<address>::INSTR"),
            "{e}"
        );
    }
}
