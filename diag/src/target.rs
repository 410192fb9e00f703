//! Opening the bus a measurement runs on: backend, configuration, board, mounts.

use gpib::sim::config::SourceKind;
use gpib::sim::{Config, Fault, SimHost};
use gpib::{Address, Bus};

pub use crate::device_arg::DeviceArg;
use crate::error::{DiagError, Result};
use crate::record::Backend;
use crate::session_options::{ProtocolChoice, SessionOptions};
use crate::what_if::WhatIf;

/// A configuration to measure: `NAME|FILE[:key=value,...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusSpec {
    /// Built-in name or TOML path.
    pub config: String,
    /// Board name or index.
    pub board: Option<String>,
    /// Mount points to mount (`true`) or unmount (`false`), applied in this order.
    pub mounts: Vec<(String, bool)>,
    /// Network backends: `HOST[:PORT]`.
    pub host: Option<String>,
    /// Network backends: a resource string (instead of the backend and host).
    pub resource: Option<String>,
    /// Contention sources switched on (`true`, a typical instance added) or off, in
    /// this order, after the mounts.
    pub sources: Vec<(SourceKind, bool)>,
    /// Faults injected into devices of the board: (primary address, fault).
    pub faults: Vec<(u8, Fault)>,
    /// What-if edits of the board (simulator): transfer mode, T1, more devices.
    pub edits: Vec<WhatIf>,
}

fn parse_fault(text: &str) -> Result<(u8, Fault)> {
    let bad = || {
        DiagError::Usage(format!(
            "--fault {text:?}: expected ADDR=KIND, e.g. 11=absent (kinds: {})",
            Fault::NAMES
        ))
    };
    let (a, k) = text.split_once('=').ok_or_else(bad)?;
    let a: u8 = a.trim().parse().ok().filter(|a| *a <= 30).ok_or_else(bad)?;
    let f: Fault = k
        .trim()
        .parse()
        .map_err(|e: gpib::Error| DiagError::Usage(format!("--fault {text:?}: {e}")))?;
    Ok((a, f))
}

fn parse_source(text: &str) -> Result<SourceKind> {
    text.parse()
        .map_err(|e: gpib::Error| DiagError::Usage(e.to_string()))
}

/// The bus options as given (`--bus`, `--board`, `--mount`, ...), before they are
/// checked: plain values, whatever parsed the command line.
#[derive(Debug, Clone, Default)]
pub struct BusOptions {
    /// `--bus`: a built-in name or TOML path, perhaps with `:key=value,...` options.
    pub bus: String,
    /// `--board`.
    pub board: Option<String>,
    /// `--mount`.
    pub mount: Vec<String>,
    /// `--unmount`.
    pub unmount: Vec<String>,
    /// `--with`.
    pub with: Vec<String>,
    /// `--without`.
    pub without: Vec<String>,
    /// `--fault`.
    pub fault: Vec<String>,
    /// `--host`.
    pub host: Option<String>,
    /// `--resource`.
    pub resource: Option<String>,
}

impl BusSpec {
    /// From the `--bus/--board/--mount/--unmount` options. A mount point given to both
    /// `--mount` and `--unmount` is refused (the options carry no order).
    pub fn from_options(a: &BusOptions) -> Result<Self> {
        if let Some(m) = a.mount.iter().find(|m| a.unmount.contains(m)) {
            return Err(DiagError::Usage(format!(
                "--mount {m} and --unmount {m} contradict each other: give one"
            )));
        }
        let mounts = (a.mount.iter().map(|m| (m.clone(), true)))
            .chain(a.unmount.iter().map(|m| (m.clone(), false)))
            .collect();
        let mut sources = Vec::new();
        for w in &a.without {
            sources.push((parse_source(w)?, false));
        }
        for w in &a.with {
            sources.push((parse_source(w)?, true));
        }
        let faults = a
            .fault
            .iter()
            .map(|f| parse_fault(f))
            .collect::<Result<_>>()?;
        let mut s = Self {
            config: a.bus.clone(),
            board: a.board.clone(),
            mounts,
            host: a.host.clone(),
            resource: a.resource.clone(),
            sources,
            faults,
            edits: Vec::new(),
        };
        // `--bus NAME:options` (a spec as `compare` takes them), unless a file has that
        // very name: its options come first, the command line's after.
        if a.bus.contains(':') && !std::path::Path::new(&a.bus).exists() {
            let spec = Self::parse(&a.bus)?;
            s.config = spec.config;
            s.board = s.board.or(spec.board);
            s.mounts.splice(0..0, spec.mounts);
            s.sources.splice(0..0, spec.sources);
            s.faults.splice(0..0, spec.faults);
            s.edits = spec.edits;
        }
        Ok(s)
    }

    /// Whether the spec changes the simulated configuration (mounts, sources, faults).
    pub fn changes_simulation(&self) -> bool {
        !(self.mounts.is_empty()
            && self.sources.is_empty()
            && self.faults.is_empty()
            && self.edits.is_empty())
    }

    /// The configuration with the mounts and contention sources applied (simulator).
    pub fn config(&self) -> Result<Config> {
        let mut c = Config::from_name_or_path(&self.config)?;
        for (m, on) in &self.mounts {
            c.set_mounted(m, *on)?;
        }
        for (kind, on) in &self.sources {
            if *on {
                c.with_source(*kind, self.board.as_deref())?;
            } else {
                c.without_source(*kind);
            }
        }
        if !self.edits.is_empty() {
            let board = match &self.board {
                None => 0,
                Some(b) => c
                    .boards
                    .iter()
                    .position(|x| &x.name == b)
                    .or_else(|| b.parse().ok())
                    .ok_or_else(|| DiagError::Usage(format!("no board {b:?} in {}", c.name)))?,
            };
            for e in &self.edits {
                e.apply(&mut c, board)?;
            }
        }
        Ok(c)
    }

    /// Parses `hp9000-350:unmount=/disc,board=hpib7`; mounts and unmounts apply in the
    /// order given.
    pub fn parse(spec: &str) -> Result<Self> {
        let (config, opts) = match spec.split_once(':') {
            Some((c, o)) => (c, Some(o)),
            None => (spec, None),
        };
        if config.is_empty() {
            return Err(DiagError::Usage(format!(
                "empty configuration name in {spec:?}"
            )));
        }
        let mut s = Self {
            config: config.to_string(),
            board: None,
            mounts: Vec::new(),
            host: None,
            resource: None,
            sources: Vec::new(),
            faults: Vec::new(),
            edits: Vec::new(),
        };
        for kv in opts
            .into_iter()
            .flat_map(|o| o.split(','))
            .filter(|k| !k.is_empty())
        {
            let edit = kv.split_once('=').and_then(|(k, v)| WhatIf::parse(k, v));
            match kv.split_once('=') {
                _ if edit.is_some() => s.edits.push(edit.expect("an edit")?),
                Some(("mount", v)) => s.mounts.push((v.to_string(), true)),
                Some(("unmount", v)) => s.mounts.push((v.to_string(), false)),
                Some(("board", v)) => s.board = Some(v.to_string()),
                Some(("with", v)) => s.sources.push((parse_source(v)?, true)),
                Some(("without", v)) => s.sources.push((parse_source(v)?, false)),
                Some(("fault", v)) => s.faults.push(parse_fault(v)?),
                _ => {
                    return Err(DiagError::Usage(format!(
                        "bad option {kv:?} in {spec:?} (expected mount=, unmount=, board=, with=, without=, fault=, or the what-ifs transfer=, t1=, like=)"
                    )))
                }
            }
        }
        Ok(s)
    }

    /// How the configuration is named in reports: `hp9000-350:unmount=/disc`.
    pub fn label(&self) -> String {
        let mut opts: Vec<String> = Vec::new();
        if let Some(b) = &self.board {
            opts.push(format!("board={b}"));
        }
        opts.extend(
            self.mounts
                .iter()
                .map(|(m, on)| format!("{}={m}", if *on { "mount" } else { "unmount" })),
        );
        opts.extend(
            self.sources
                .iter()
                .map(|(k, on)| format!("{}={k}", if *on { "with" } else { "without" })),
        );
        opts.extend(self.faults.iter().map(|(a, f)| format!("fault={a}={f}")));
        opts.extend(self.edits.iter().map(WhatIf::label));
        if opts.is_empty() {
            self.config.clone()
        } else {
            format!("{}:{}", self.config, opts.join(","))
        }
    }
}

/// What [`Target::open_wrapped`] does to the board's backend.
pub type Wrap = dyn Fn(Box<dyn gpib::Backend>) -> Box<dyn gpib::Backend>;

/// An opened bus.
pub struct Target {
    /// The configuration's label.
    pub label: String,
    /// Which backend.
    pub backend: Backend,
    /// The bus.
    pub bus: Bus,
    /// The simulated host (sim backend only).
    pub host: Option<SimHost>,
    /// Index of the board on the host.
    pub board: usize,
    /// The device the resource string names (network backends).
    pub device: Option<Address>,
}

impl Target {
    /// Opens `spec` on `backend`.
    pub fn open(backend: Backend, spec: &BusSpec) -> Result<Self> {
        Self::open_wrapped(backend, spec, &|b| b)
    }

    /// Opens `spec` on `backend`, with the board's backend wrapped by `wrap` (a
    /// [`gpib::trace::TracedBackend`], for `gpib-diag trace record`).
    pub fn open_wrapped(backend: Backend, spec: &BusSpec, wrap: &Wrap) -> Result<Self> {
        if let Some(r) = &spec.resource {
            return Self::open_resource(r, wrap);
        }
        match backend {
            Backend::Sim => Self::open_sim(spec, wrap),
            Backend::LinuxGpib => Self::open_linux_gpib(spec, wrap),
            Backend::Prologix | Backend::Vxi11 => Self::open_network(backend, spec, wrap),
            Backend::Hislip => Err(hislip_needs_resource()),
        }
    }

    /// `--backend prologix|vxi11 --host HOST[:PORT]`: the adapter's interface, opened
    /// by the library as its resource string.
    fn open_network(backend: Backend, spec: &BusSpec, wrap: &Wrap) -> Result<Self> {
        let Some(host) = &spec.host else {
            return Err(DiagError::Usage(
                "--backend prologix|vxi11 needs --host HOST[:PORT] (or give --resource)".into(),
            ));
        };
        if spec.changes_simulation() {
            return Err(DiagError::Usage(
                "--mount/--unmount/--with/--without/--fault change a simulated host in this process; give them to `gpib-diag serve` instead".into(),
            ));
        }
        let resource = match backend {
            Backend::Prologix => crate::host_arg::prologix_resource(host)?,
            _ => crate::host_arg::vxi11_resource(host, 0)?,
        };
        let mut t = Self::connect(&resource, wrap)?;
        t.label = format!("{}:{host}", t.backend);
        Ok(t)
    }

    /// `--resource`: whatever the library opens it with.
    fn open_resource(text: &str, wrap: &Wrap) -> Result<Self> {
        let mut t = Self::connect(text, wrap)?;
        t.label = text.trim().to_string();
        if let Ok(r) = text.parse::<gpib::NetworkResource>() {
            // The resource's own spelling (`PRLGX-TCPIP0::...`), as reports name it.
            t.label = r.to_string();
        }
        Ok(t)
    }

    /// Opens `resource` through the library's [`gpib::ResourceManager`], its backend
    /// wrapped by `wrap` before it becomes the bus.
    fn connect(resource: &str, wrap: &Wrap) -> Result<Self> {
        let c = gpib::ResourceManager::new().connect(resource)?;
        let backend = backend_named(&c.connector)?;
        Ok(Self {
            label: resource.to_string(),
            backend,
            bus: Bus::from_box(wrap(c.backend)),
            host: None,
            board: 0,
            device: c.address,
        })
    }

    fn open_sim(spec: &BusSpec, wrap: &Wrap) -> Result<Self> {
        Self::open_config_wrapped(spec, &spec.config()?, wrap)
    }

    /// Opens the simulated host `config` describes (a variant of `spec`'s), with
    /// `spec`'s board and faults.
    pub fn open_config(spec: &BusSpec, config: &Config) -> Result<Self> {
        Self::open_config_wrapped(spec, config, &|b| b)
    }

    fn open_config_wrapped(spec: &BusSpec, config: &Config, wrap: &Wrap) -> Result<Self> {
        let host = config.build_named(&spec.config)?;
        let board = match &spec.board {
            None => host.board(0)?,
            Some(b) => match b.parse::<usize>() {
                Ok(i) => host.board(i)?,
                Err(_) => host.board_named(b)?,
            },
        };
        let index = board.index();
        for (a, f) in &spec.faults {
            host.inject(index, Address::try_from(*a)?, *f)?;
        }
        Ok(Self {
            label: spec.label(),
            backend: Backend::Sim,
            bus: Bus::from_box(wrap(Box::new(board))),
            host: Some(host),
            board: index,
            device: None,
        })
    }

    #[cfg(feature = "linux-gpib")]
    fn open_linux_gpib(spec: &BusSpec, wrap: &Wrap) -> Result<Self> {
        if spec.changes_simulation() {
            return Err(DiagError::Usage(
                "--mount/--unmount/--with/--without/--fault change a simulated host; on linux-gpib change the machine itself".into(),
            ));
        }
        let name = spec.board.clone().unwrap_or_else(|| "0".into());
        let label = format!("linux-gpib:{name}");
        let Ok(index) = name.parse::<u16>() else {
            // A gpib.conf interface name, found by linux-gpib's own ibfind.
            let board = gpib::backend::linux_gpib::LinuxGpibBoard::open_name(&name)?;
            return Ok(Self {
                label,
                backend: Backend::LinuxGpib,
                bus: Bus::from_box(wrap(Box::new(board))),
                host: None,
                board: 0,
                device: None,
            });
        };
        let mut t = Self::connect(&format!("GPIB{index}::INTFC"), wrap)?;
        t.label = label;
        t.board = usize::from(index);
        Ok(t)
    }

    #[cfg(not(feature = "linux-gpib"))]
    fn open_linux_gpib(_spec: &BusSpec, _wrap: &Wrap) -> Result<Self> {
        Err(DiagError::NoLinuxGpib)
    }

    /// The primary address `--device` names on this board: an address as given; a name
    /// looked up among the simulated host's named devices, or (linux-gpib) in the
    /// gpib.conf linux-gpib reads (`$IB_CONFIG`, else /etc/gpib.conf).
    pub fn resolve_device(&self, d: &DeviceArg) -> Result<u8> {
        let name = match d {
            DeviceArg::Address(a) => return Ok(*a),
            DeviceArg::Name(n) => n,
        };
        let (board, address, whose) = match (&self.host, self.backend) {
            (Some(host), _) => {
                let Some(nd) = host.named_device(name) else {
                    let known: Vec<String> =
                        host.named_devices().into_iter().map(|n| n.name).collect();
                    return Err(DiagError::Usage(format!(
                        "no device named {name:?} in this configuration (named devices: {})",
                        if known.is_empty() { "none".into() } else { known.join(", ") }
                    )));
                };
                (nd.board, nd.address, "the configuration")
            }
            (None, Backend::LinuxGpib) => {
                let conf = gpib::gpibconf::GpibConf::read_default()
                    .map_err(|e| DiagError::Usage(format!("--device {name}: {e}")))?;
                let Some(dev) = conf.device(name) else {
                    return Err(DiagError::Usage(format!(
                        "no device section named {name:?} in {} (names: {})",
                        gpib::gpibconf::default_path().display(),
                        conf.names().join(", ")
                    )));
                };
                (usize::from(dev.minor), dev.settings.address(), "gpib.conf")
            }
            (None, other) => {
                return Err(DiagError::Usage(format!(
                    "--device {name}: names are looked up on the simulator or in gpib.conf; give the {other} device's address"
                )))
            }
        };
        if board != self.board {
            return Err(DiagError::Usage(format!(
                "device {name:?} is on board {board} in {whose}, not on board {}: add --board {board}",
                self.board
            )));
        }
        if address.secondary.is_some() {
            log::warn!(
                "device {name:?} has a secondary address; it is measured at {}",
                address.primary
            );
        }
        Ok(address.primary.get())
    }

    /// What a measurement session on this bus is opened with: `device` (`--device`)
    /// resolved on this board, `protocol` and `timeout` (seconds, `--timeout`) as given.
    pub fn session_options(
        &self,
        device: Option<&DeviceArg>,
        protocol: ProtocolChoice,
        timeout: Option<f64>,
    ) -> Result<SessionOptions> {
        Ok(SessionOptions {
            device: device.map(|d| self.resolve_device(d)).transpose()?,
            protocol,
            timeout,
        })
    }

    /// The instruments on the board (simulator): address and model, discs left out.
    pub fn instruments(&self) -> Vec<(Address, String)> {
        self.host
            .as_ref()
            .map(|h| {
                h.devices(self.board)
                    .into_iter()
                    .filter(|(_, _, mount)| mount.is_none())
                    .map(|(a, m, _)| (a, m))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// `--backend` does not name HiSLIP (a HiSLIP server is reached through its resource).
pub fn hislip_needs_resource() -> DiagError {
    DiagError::Usage("HiSLIP is reached through --resource TCPIP::HOST::hislip0::INSTR".into())
}

/// Diag's name of the backend the library's connector `name` is.
fn backend_named(name: &str) -> Result<Backend> {
    [
        Backend::Sim,
        Backend::LinuxGpib,
        Backend::Prologix,
        Backend::Vxi11,
        Backend::Hislip,
    ]
    .into_iter()
    .find(|b| b.as_str() == name)
    .ok_or_else(|| DiagError::Usage(format!("gpib-diag does not measure on the {name} backend")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        let s = BusSpec::parse("hp9000-350:unmount=/disc").unwrap();
        assert_eq!(s.config, "hp9000-350");
        assert_eq!(s.mounts, [("/disc".to_string(), false)]);
        assert_eq!(s.label(), "hp9000-350:unmount=/disc");
        // The order of the options is kept (it was lost: unmount then mount measured
        // unmounted).
        let s = BusSpec::parse("hp9000-350:unmount=/disc,mount=/disc").unwrap();
        assert_eq!(
            s.mounts,
            [("/disc".to_string(), false), ("/disc".to_string(), true)]
        );
        assert_eq!(s.label(), "hp9000-350:unmount=/disc,mount=/disc");
        let s = BusSpec::parse("x.toml:board=gpib0,mount=/a").unwrap();
        assert_eq!(s.board.as_deref(), Some("gpib0"));
        assert_eq!(s.label(), "x.toml:board=gpib0,mount=/a");
        assert!(BusSpec::parse("hp9000-350:speed=9").is_err());
        assert!(BusSpec::parse(":unmount=/x").is_err());
    }
}
