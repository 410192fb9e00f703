//! One way to open an instrument on every backend: a resource string in, a
//! [`Device`] out, as PyVISA's `ResourceManager().open_resource(name)`.
//!
//! | resource | opens |
//! |---|---|
//! | `GPIB0::22::INSTR`, `GPIB1::5::3::INSTR` | device 22 (secondary 3) of board 0: a board [attached](ResourceManager::attach) to the manager (a simulated host's boards, a Prologix adapter opened as `GPIB<n>`), else linux-gpib's board (feature `linux-gpib`) |
//! | `TCPIP0::host::gpib0,22::INSTR`, `TCPIP::host,1024::gpib0,22::INSTR` | device 22 behind a VXI-11 LAN/GPIB gateway (`gpib1,5`: device 5 on its second interface) |
//! | `TCPIP0::host::inst0::INSTR` | a VXI-11 instrument on the LAN (no GPIB address) |
//! | `PRLGX-TCPIP::host::1234::INTFC`, `PRLGX-ASRL::/dev/ttyUSB0::INTFC` | a Prologix adapter, as pyvisa-py names it: [`ResourceManager::open_interface`] attaches it as `GPIB<n>`, then `GPIB<n>::22::INSTR` is a device on it |
//! | `PRLGX-TCPIP::host::1234::22::INSTR`, `PRLGX-ASRL::/dev/ttyUSB0::22::INSTR` | device 22 on a Prologix adapter in one string (this crate's: the adapter is opened, or taken again when this manager opened it before, and attached as `GPIB<n>`, then its device; the TCP form always names the port) |
//! | `voltmeter` | the gpib.conf device section of that name (`$IB_CONFIG` or `/etc/gpib.conf`): its board, address, timeout and EOS |
//!
//! Each backend says which of these strings it opens through its
//! [`Connector`] (one in its own module, one list of the
//! built-in ones in `manager/builtin.rs`); [`ResourceManager::register`] adds an app's
//! own, asked first.
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
mod pattern;

use std::collections::BTreeMap;

pub use pattern::Pattern;

use crate::address::Address;
use crate::bus::Bus;
use crate::connector::{Connection, Connector};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::resource::{NetworkResource, Resource};
use crate::settings::{DeviceSettings, Timeout};

/// The boards a program's resource strings name, and the settings its devices open with.
pub struct ResourceManager {
    /// Boards by their `GPIB<n>` number.
    boards: BTreeMap<u16, Bus>,
    /// What every device opens with, unless its resource says otherwise.
    settings: DeviceSettings,
    /// The gpib.conf device names are looked up in (`None`: read the default file when
    /// a name is opened).
    gpib_conf: Option<crate::gpibconf::GpibConf>,
    /// The backends resource strings are opened by, asked in this order: those
    /// [registered](ResourceManager::register) (the latest first), then the built-in ones.
    connectors: Vec<Box<dyn Connector>>,
    /// Prologix adapters opened for one-string device resources, by their interface
    /// resource: a second device on one adapter shares its connection.
    prologix: BTreeMap<String, Bus>,
}

impl std::fmt::Debug for ResourceManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceManager")
            .field("boards", &self.boards.keys().collect::<Vec<_>>())
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

/// Opens `resource` with a [`ResourceManager::from_env`]: see the [module](crate::manager)
/// for the strings it takes.
pub fn open(resource: &str) -> Result<Device> {
    ResourceManager::from_env()?.open(resource)
}

impl ResourceManager {
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
            prologix: BTreeMap::new(),
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
    /// TOML file) attached as `GPIB0`, `GPIB1`, ...; `GPIB<n>` resources name its
    /// boards only (not linux-gpib's), network resources open as with
    /// [`ResourceManager::new`].
    #[cfg(feature = "sim")]
    pub fn simulated(config: &str) -> Result<Self> {
        let host = crate::sim::config::load(config)?;
        let sim = crate::sim::SimConnector::new(host);
        let interfaces = sim.list();
        let mut connectors: Vec<Box<dyn Connector>> = vec![Box::new(sim)];
        connectors.extend(builtin::network());
        let mut rm = Self::with_connectors(connectors);
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

    /// Makes `bus` board `GPIB<board>` of this manager (replacing one attached before).
    pub fn attach(&mut self, board: u16, bus: Bus) {
        self.boards.insert(board, bus);
    }

    /// The attached boards' numbers.
    pub fn boards(&self) -> Vec<u16> {
        self.boards.keys().copied().collect()
    }

    /// Sets what every device opens with ([`DeviceSettings`]; a gpib.conf section's own
    /// timeout and EOS win over these).
    pub fn set_default_settings(&mut self, settings: DeviceSettings) {
        self.settings = settings;
    }

    /// Looks gpib.conf device names up in `conf` instead of the default file
    /// (`$IB_CONFIG` or `/etc/gpib.conf`).
    pub fn set_gpib_conf(&mut self, conf: crate::gpibconf::GpibConf) {
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
        if let Some((interface, device)) = prologix_device(text) {
            return self.open_prologix_device(text, &interface, &device);
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
            return self.board(board);
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
        for name in found {
            match name.parse::<Resource>() {
                Ok(Resource::Interface { board }) => {
                    if !self.boards.contains_key(&board) {
                        // A board that does not open is not listed.
                        if let Some(Ok((backend, _))) =
                            self.connectors.iter().find_map(|c| c.open_interface(&name))
                        {
                            self.attach(board, Bus::from_box(backend));
                        }
                    }
                }
                _ => others.push(name),
            }
        }
        let mut out = Vec::new();
        for (board, bus) in &self.boards {
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

    /// Device `device` (`GPIB<n>::<address>::INSTR`) on the Prologix adapter
    /// `interface` (`PRLGX-...::INTFC`), the parts of the one string `text`: the adapter
    /// is opened and attached as `GPIB<n>` unless this manager has it open already.
    fn open_prologix_device(
        &mut self,
        text: &str,
        interface: &str,
        device: &str,
    ) -> Result<Device> {
        let in_text = |e: Error| match e {
            Error::InvalidResource { reason, .. } => Error::InvalidResource {
                text: text.to_string(),
                reason,
            },
            e => e,
        };
        let key = interface
            .parse::<NetworkResource>()
            .map_err(in_text)?
            .to_string();
        let (board, address) = match device.parse::<Resource>().map_err(in_text)? {
            Resource::Instrument { board, address } => (board, address),
            Resource::Interface { .. } => {
                return Err(Error::InvalidArgument(format!("{text} names no device")))
            }
        };
        let bus = match self.prologix.get(&key) {
            Some(bus) => {
                let bus = bus.clone();
                self.attach(board, bus.clone());
                bus
            }
            None => {
                let bus = self.open_interface(interface)?;
                self.prologix.insert(key, bus.clone());
                bus
            }
        };
        self.device_on(&bus, address, DeviceSettings::default())
    }

    /// Board `GPIB<board>`: attached, else opened by the first backend that has it
    /// (and attached).
    fn board(&mut self, board: u16) -> Result<Bus> {
        if let Some(b) = self.boards.get(&board) {
            return Ok(b.clone());
        }
        let name = interface_of(board);
        match self.connectors.iter().find_map(|c| c.open_interface(&name)) {
            Some(opened) => {
                let (backend, _) = opened?;
                let bus = Bus::from_box(backend);
                self.attach(board, bus.clone());
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

    fn open_named(&mut self, name: &str) -> Result<Device> {
        let conf = match self.gpib_conf.take() {
            Some(c) => c,
            None => crate::gpibconf::GpibConf::read_default()?,
        };
        let opened = self.open_in(&conf, name);
        self.gpib_conf = Some(conf);
        opened
    }

    fn open_in(&mut self, conf: &crate::gpibconf::GpibConf, name: &str) -> Result<Device> {
        if let Some(why) = conf.unusable_device(name) {
            return Err(Error::InvalidArgument(format!(
                "the gpib.conf's device {name:?} cannot be opened: {why}"
            )));
        }
        let entry = conf.device(name).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{name:?} is no resource and no device section of {} (names: {})",
                crate::gpibconf::default_path().display(),
                conf.names().join(", ")
            ))
        })?;
        let bus = self.board(u16::from(entry.minor))?;
        let own = DeviceSettings {
            timeout: entry.settings.device.timeout,
            // Only an EOS that ends reads: a section's byte alone leaves the manager's.
            eos: entry.settings.device.eos.filter(|m| m.reos),
            ..DeviceSettings::default()
        };
        self.device_on(&bus, entry.settings.address(), own)
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

/// A one-string Prologix device resource, `PRLGX-TCPIP<n>::<host>::<port>::<pad>[::<sad>]::INSTR`
/// or `PRLGX-ASRL<n>::<path>::<pad>[::<sad>]::INSTR`, as the adapter's interface resource
/// (`...::INTFC`) and the device's `GPIB<n>::<pad>[::<sad>]::INSTR`; `None` for any other
/// string. The parts are checked when each is parsed.
fn prologix_device(text: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = text.split("::").collect();
    let first = parts.first()?.to_ascii_uppercase();
    if !parts.last()?.eq_ignore_ascii_case("INSTR") {
        return None;
    }
    let (prefix, link_fields) = if first.starts_with("PRLGX-TCPIP") {
        ("PRLGX-TCPIP", 2) // host, port
    } else if first.starts_with("PRLGX-ASRL") {
        ("PRLGX-ASRL", 1) // path
    } else {
        return None;
    };
    let board = &parts[0][prefix.len()..];
    let fields = &parts[1..parts.len() - 1];
    if fields.len() <= link_fields || fields.len() > link_fields + 2 {
        return None;
    }
    let (link, address) = fields.split_at(link_fields);
    Some((
        format!("{}::{}::INTFC", parts[0], link.join("::")),
        format!("GPIB{board}::{}::INSTR", address.join("::")),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prologix_device_strings_split_into_the_adapter_and_the_device() {
        let split = prologix_device;
        assert_eq!(
            split("PRLGX-TCPIP::10.0.0.6::1234::22::INSTR"),
            Some((
                "PRLGX-TCPIP::10.0.0.6::1234::INTFC".into(),
                "GPIB::22::INSTR".into()
            ))
        );
        assert_eq!(
            split("prlgx-tcpip1::host::1234::5::3::instr"),
            Some((
                "prlgx-tcpip1::host::1234::INTFC".into(),
                "GPIB1::5::3::INSTR".into()
            ))
        );
        assert_eq!(
            split("PRLGX-ASRL2::/dev/ttyUSB0::9::INSTR"),
            Some((
                "PRLGX-ASRL2::/dev/ttyUSB0::INTFC".into(),
                "GPIB2::9::INSTR".into()
            ))
        );
        for not_one in [
            "PRLGX-TCPIP::host::1234::INTFC",
            "PRLGX-TCPIP::host::22::INSTR", // the port is not optional here
            "PRLGX-TCPIP::host::1234::22::3::4::INSTR",
            "PRLGX-ASRL::/dev/ttyUSB0::INSTR",
            "TCPIP0::host::gpib0,22::INSTR",
            "GPIB0::22::INSTR",
        ] {
            assert_eq!(split(not_one), None, "{not_one}");
        }
    }

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
