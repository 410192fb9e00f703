//! A simulated host whose boards and named devices come from a linux-gpib gpib.conf,
//! with the instruments attached by name in the TOML beside it.
//!
//! ```toml
//! name = "lab"
//! gpib_conf = "gpib.conf"      # relative to this file
//!
//! [[instrument]]
//! name = "voltmeter"           # a gpib.conf device section
//! model = "scpi"
//! idn = "ACME,DMM-7,1,1.0"
//!
//! [[instrument]]
//! minor = 0                    # or a board and address with no device section
//! address = 11
//! model = "hp3565"
//! ```
//!
//! Each `interface` becomes a board ([`BoardConfig`]) with the interface's name
//! (`gpib<minor>` when it has none or an empty one), primary address, timeout and EOS
//! settings, as board number `minor` (0..=15, as linux-gpib's `GPIB_MAX_NUM_BOARDS`):
//! a minor below the highest that has no interface section becomes a plain board
//! `gpib<minor>` (linux-gpib has no board there), since the simulator numbers its
//! boards 0, 1, 2... Each `device` becomes a named device ([`DeviceConfig`] with its
//! `name`) with its section's address, timeout, EOS and EOT settings, and the
//! instrument its `[[instrument]]` gives, or a plain SCPI instrument when none does.
//! Hardware settings (`board_type`, `base`, `irq`, `dma`, PCI and sysfs selection),
//! an interface's `sad` and `master` (a simulated board is always system controller)
//! and `init-string`/`init-flags` do not apply to the simulator and are not used.
//! A device whose minor has no interface section is left out, with why
//! ([`Config::unusable_devices`]); a device with `name = ""` is there without a name.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{BoardConfig, Config, DeviceConfig};
use crate::error::{Error, Result};
use crate::gpibconf::{GpibConf, Settings};

super::keys::config_struct! {
/// An instrument attached to a gpib.conf's device: by the device section's `name`, or
/// at `minor` + `address` (+ `secondary`) for an instrument no section names.
///
/// The other fields are [`DeviceConfig`]'s, with the same meaning and limits.
///
/// With `gpib_conf`, each `interface` becomes a board with the interface's name
/// (`gpib<minor>` when it has none), primary address, timeout and EOS settings, as
/// board number `minor` (a lower minor without a section becomes a plain board); each `device` becomes a named device
/// with its section's address, timeout, EOS and EOT settings, and the instrument its
/// `[[instrument]]` gives, or a plain SCPI instrument when none does. Hardware
/// settings, an interface's `sad` and `master`, and `init-string`/`init-flags` are not
/// used by the simulator.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InstrumentConfig {
    /// The gpib.conf device section it is (its `name`).
    pub name: Option<String>,
    /// Without `name`: the board (gpib.conf `minor`).
    pub minor: Option<u8>,
    /// Without `name`: the primary address, 0..=30.
    pub address: Option<u8>,
    /// Without `name`: the secondary address, 0..=30.
    pub secondary: Option<u8>,
    /// "scpi", "hp3565", "terminal" or "disc".
    pub model: String,
    /// `*IDN?` answer of a SCPI instrument.
    pub idn: Option<String>,
    /// Disc model ("7958").
    pub disc: Option<String>,
    /// Mount point of a disc.
    pub mount: Option<String>,
    /// Whether the disc starts mounted (default true when it has a mount point).
    pub mounted: Option<bool>,
    @timing,
    @measurement,
}
}

impl InstrumentConfig {
    /// A plain SCPI instrument (what a device section without an instrument gets).
    fn plain_scpi() -> Self {
        Self {
            model: "scpi".into(),
            ..Self::default()
        }
    }

    fn device(self, address: u8, secondary: Option<u8>) -> DeviceConfig {
        let mut d = DeviceConfig {
            address,
            secondary,
            model: self.model,
            idn: self.idn,
            disc: self.disc,
            mount: self.mount,
            mounted: self.mounted,
            ..DeviceConfig::default()
        };
        super::keys::copy_timing!(self => d);
        d
    }
}

/// Sets the descriptor fields of `$config`, a [`BoardConfig`] or a [`DeviceConfig`]
/// (they have the same names: `timeout_s`, `eos`, `set_reos`, `set_bin`, `set_xeos`,
/// `eot`), from the [`Settings`] of a gpib.conf section.
macro_rules! set_descriptor {
    ($config:expr, $settings:expr) => {{
        let (config, s): (_, &Settings) = (&mut $config, $settings);
        let eos = s.device.eos_mode();
        config.timeout_s = Some(s.timeout().duration().map_or(0.0, |d| d.as_secs_f64()));
        config.eos = Some(eos.byte);
        config.set_reos = eos.reos;
        config.set_bin = eos.bin;
        config.set_xeos = eos.xeos;
        config.eot = Some(s.eot());
    }};
}

impl Config {
    /// A host with the boards and named devices of `conf` and no other instrument
    /// than a plain SCPI one on each named device; `name` is the host's name.
    pub fn from_gpib_conf(name: impl Into<String>, conf: &GpibConf) -> Result<Self> {
        let mut c = Config {
            name: name.into(),
            description: String::new(),
            cpus: None,
            boards: Vec::new(),
            gpib_conf: None,
            instruments: Vec::new(),
            base_dir: None,
            unusable_devices: Vec::new(),
        };
        c.add_gpib_conf(conf)?;
        Ok(c)
    }

    /// Reads the gpib.conf at `path` as a host ([`Config::from_gpib_conf`], named after
    /// the file).
    pub fn from_gpib_conf_file(path: &Path) -> Result<Self> {
        let conf = GpibConf::read(path)?;
        Self::from_gpib_conf(path.display().to_string(), &conf)
    }

    /// [`Config::read_file`], with `fallback` as the gpib.conf of a file that gives
    /// neither `gpib_conf` nor `[[board]]` (only `[[instrument]]`s, say): the
    /// compatibility library passes `IB_CONFIG` (relative to the working folder).
    pub fn read_file_with(path: &Path, fallback: Option<&Path>) -> Result<Self> {
        let text = super::read_text_file(path, super::MAX_CONFIG_BYTES)?;
        let mut cfg = Self::parse(&text).map_err(|e| super::in_file(path, e))?;
        cfg.base_dir = folder_of(path).map(Path::to_path_buf);
        if cfg.gpib_conf.is_none() && cfg.boards.is_empty() {
            if let Some(f) = fallback {
                cfg.gpib_conf = Some(std::path::absolute(f).unwrap_or_else(|_| f.to_path_buf()));
            }
        }
        cfg.expand_gpib_conf(folder_of(path))
            .map_err(|e| super::in_file(path, e))?;
        Ok(cfg)
    }

    /// When the configuration names a gpib.conf (`gpib_conf`, relative to `base`, the
    /// folder of the TOML file, or else the working folder), reads it and turns it and
    /// the `[[instrument]]` entries into boards and devices (see [`InstrumentConfig`]).
    /// Afterwards `gpib_conf` and `instruments` are empty and `boards`
    /// holds the host.
    pub fn expand_gpib_conf(&mut self, base: Option<&Path>) -> Result<()> {
        let Some(path) = self.gpib_conf.take() else {
            if self.instruments.is_empty() {
                return Ok(());
            }
            return Err(Error::Config(
                "[[instrument]] entries attach instruments to a gpib.conf's devices: \
                 give its path as gpib_conf = \"...\""
                    .into(),
            ));
        };
        let path: PathBuf = match base {
            Some(dir) if path.is_relative() => dir.join(path),
            _ => path,
        };
        let conf = GpibConf::read(&path)?;
        self.add_gpib_conf(&conf)
    }

    fn add_gpib_conf(&mut self, conf: &GpibConf) -> Result<()> {
        if !self.boards.is_empty() {
            return Err(Error::Config(
                "a configuration takes its boards from gpib_conf or from [[board]], not both"
                    .into(),
            ));
        }
        if conf.interfaces.is_empty() {
            return Err(Error::Config(
                "the gpib.conf has no interface section: the host would have no board".into(),
            ));
        }
        // Board index = minor; a minor below the highest without an interface
        // section gets a plain board, so that the others keep their numbers.
        let highest = conf.interfaces.iter().map(|i| i.minor).max().unwrap_or(0);
        for minor in 0..=highest {
            let mut board = match conf.interface(minor) {
                Some(i) => {
                    let mut board = BoardConfig {
                        name: i
                            .name
                            .clone()
                            .filter(|n| !n.is_empty())
                            .unwrap_or_else(|| format!("gpib{minor}")),
                        address: i.settings.pad.get(),
                        ..BoardConfig::default()
                    };
                    set_descriptor!(board, &i.settings);
                    board
                }
                None => BoardConfig {
                    name: format!("gpib{minor}"),
                    description: format!("no interface section has minor = {minor}"),
                    ..BoardConfig::default()
                },
            };
            // A filler's name may be an interface's: make it unique.
            if conf.interface(minor).is_none()
                && conf
                    .interfaces
                    .iter()
                    .any(|i| i.name.as_deref() == Some(board.name.as_str()))
            {
                board.name = format!("gpib{minor}-unconfigured");
            }
            self.boards.push(board);
        }
        self.unusable_devices = conf
            .unusable
            .iter()
            .map(|u| (u.device.name.clone(), u.error.to_string()))
            .collect();
        let mut instruments = std::mem::take(&mut self.instruments);
        for d in &conf.devices {
            let s = &d.settings;
            let (address, secondary) = (s.pad.get(), s.sad.map(|a| a.get()));
            let board = &self.boards[usize::from(d.minor)].name;
            if let Some(other) = conf
                .devices
                .iter()
                .take_while(|o| o.name != d.name)
                .find(|o| o.minor == d.minor && o.settings.address() == s.address())
            {
                return Err(Error::Config(format!(
                    "gpib.conf devices {:?} and {:?} are both at {} on board {board}: \
                     the simulator names one device per address",
                    other.name,
                    d.name,
                    s.address()
                )));
            }
            let mut by_name = instruments
                .iter()
                .enumerate()
                .filter(|(_, i)| i.name.as_deref() == Some(d.name.as_str()));
            let chosen = by_name.next().map(|(n, _)| n);
            if by_name.next().is_some() {
                return Err(Error::Config(format!(
                    "two [[instrument]] entries for {:?}: one instrument a device",
                    d.name
                )));
            }
            let inst = match chosen {
                Some(n) => instruments.remove(n),
                None => InstrumentConfig::plain_scpi(),
            };
            if inst.minor.is_some() || inst.address.is_some() || inst.secondary.is_some() {
                return Err(Error::Config(format!(
                    "[[instrument]] {:?}: give name or minor + address, not both (the gpib.conf \
                     section gives its address)",
                    d.name
                )));
            }
            let mut dev = inst.device(address, secondary);
            // `name = ""`: linux-gpib's ibfind("") would find it; the simulator's
            // names are never empty, so the device is there without a name.
            dev.name = Some(d.name.clone()).filter(|n| !n.is_empty());
            if dev.name.is_some() {
                set_descriptor!(dev, s);
            }
            self.boards[usize::from(d.minor)].devices.push(dev);
        }
        for inst in instruments {
            if let Some(name) = &inst.name {
                return Err(Error::Config(format!(
                    "[[instrument]] name = {name:?}: no device section of the gpib.conf has that \
                     name (names: {})",
                    conf.names().join(", ")
                )));
            }
            let (Some(minor), Some(address)) = (inst.minor, inst.address) else {
                return Err(Error::Config(format!(
                    "[[instrument]] (model {:?}) needs name = \"...\" (a gpib.conf device) or \
                     minor and address",
                    inst.model
                )));
            };
            let Some(board) = self.boards.get_mut(usize::from(minor)) else {
                return Err(Error::Config(format!(
                    "[[instrument]] minor = {minor}: the gpib.conf has no interface with that minor"
                )));
            };
            let secondary = inst.secondary;
            board.devices.push(inst.device(address, secondary));
        }
        Ok(())
    }
}

/// The folder `path` is in (for a `gpib_conf` relative to its TOML file).
pub(super) fn folder_of(path: &Path) -> Option<&Path> {
    path.parent().map(|p| {
        if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        }
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::address::Address;
    use crate::settings::{DeviceSettings, EosMode, Timeout};
    use crate::sim::NamedDevice;

    const EXAMPLE: &str = include_str!("../../../configs/gpib.conf.example");

    fn example_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("configs")
    }

    /// A host from TOML `toml` beside a gpib.conf holding `conf`, in a folder of its own.
    fn host_with(test: &str, conf: &str, toml: &str) -> Result<crate::sim::SimHost> {
        let dir = std::env::temp_dir().join(format!("gpibconf-sim-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("gpib.conf"), conf).unwrap();
        let path = dir.join("sim.toml");
        std::fs::write(
            &path,
            format!("name = 'x'\ngpib_conf = 'gpib.conf'\n{toml}"),
        )
        .unwrap();
        let host = crate::sim::load(path.to_str().unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
        host
    }

    fn error(test: &str, conf: &str, toml: &str) -> String {
        host_with(test, conf, toml).unwrap_err().to_string()
    }

    #[test]
    fn the_example_gives_its_board_and_named_devices() {
        let cfg = Config::read_file(&example_dir().join("gpib-conf-sim.toml")).unwrap();
        assert_eq!(cfg.gpib_conf, None, "read and expanded");
        assert_eq!(cfg.boards.len(), 1);
        let b = &cfg.boards[0];
        assert_eq!(
            (b.name.as_str(), b.address, b.timeout_s),
            ("violet", 0, Some(3.0))
        );
        assert_eq!(
            (b.eos, b.set_reos, b.set_bin, b.eot),
            (Some(0x0a), true, false, Some(true))
        );
        let host = cfg.build().unwrap();
        assert_eq!(host.board_names(), ["violet"]);
        let models: Vec<_> = host
            .devices(0)
            .into_iter()
            .map(|(a, m, _)| (a.to_string(), m))
            .collect();
        assert_eq!(
            models,
            [
                ("7".into(), "SCPI".into()),
                ("8".into(), "SCPI".into()),
                ("11".into(), "HP3565".into())
            ]
        );
        assert_eq!(
            host.named_device("voltmeter"),
            Some(NamedDevice {
                name: "voltmeter".into(),
                board: 0,
                address: Address::new(7, None).unwrap(),
                settings: DeviceSettings {
                    timeout: Some(Timeout::After(Duration::from_secs(3))),
                    eos: Some(EosMode {
                        byte: 0x0a,
                        reos: false,
                        bin: false,
                        xeos: false,
                    }),
                    eot: Some(true),
                    ..DeviceSettings::default()
                },
            })
        );
        assert_eq!(host.named_device("scope").unwrap().eos_mode(), 0);
        assert_eq!(host.named_devices().len(), 2);
    }

    #[test]
    fn a_gpib_conf_alone_gives_plain_scpi_instruments() {
        let conf = crate::gpibconf::parse(EXAMPLE).unwrap();
        let host = Config::from_gpib_conf("example", &conf)
            .unwrap()
            .build()
            .unwrap();
        let bus = crate::Bus::new(host.board_named("violet").unwrap());
        for name in ["voltmeter", "scope"] {
            let dev = conf.open_device(&bus, name).unwrap();
            assert_eq!(
                dev.query("*IDN?").unwrap(),
                "SIMULATED,SCPI-DMM,0,1.0",
                "{name}"
            );
        }
        let host = Config::from_gpib_conf_file(&example_dir().join("gpib.conf.example")).unwrap();
        assert_eq!(host.boards[0].devices.len(), 2);
    }

    #[test]
    fn settings_and_names_carry_over() {
        let conf = "interface { minor = 1 pad = 3 timeout = TNONE }\n\
                    interface { minor = 0 name = \"first\" }\n\
                    device { minor = 1 name = dmm pad = 9 sad = 0x62 timeout = T100ms \
                    eos = 0x0d set-reos = yes set-bin = yes set-xeos = yes set-eot = no }";
        let host = host_with("carry", conf, "").unwrap();
        assert_eq!(
            host.board_names(),
            ["first", "gpib1"],
            "minor order; gpib<minor> when unnamed"
        );
        assert_eq!(
            crate::Backend::timeout(&host.board(1).unwrap()),
            crate::Timeout::Never,
            "TNONE"
        );
        let d = host.named_device("dmm").unwrap();
        assert_eq!((d.board, d.address.to_string()), (1, "9.2".to_string()));
        assert_eq!(
            d.settings.timeout,
            Some(Timeout::After(Duration::from_millis(100)))
        );
        assert_eq!(d.eos_mode(), 0x0d | 0x400 | 0x800 | 0x1000);
        assert!(!d.settings.eot());
    }

    #[test]
    fn interfaces_on_minors_10_to_12_give_those_boards() {
        let conf = "interface { minor = 10 name = \"ten\" }\ninterface { minor = 11 }\n\
                    interface { minor = 12 }\ndevice { minor = 11 name = dmm pad = 3 }\n";
        let host = host_with("minors", conf, "").unwrap();
        let names = host.board_names();
        assert_eq!(names.len(), 13, "{names:?}");
        assert_eq!((names[10].as_str(), names[11].as_str()), ("ten", "gpib11"));
        assert_eq!(host.named_device("dmm").unwrap().board, 11);
    }

    #[test]
    fn a_device_without_its_interface_leaves_the_rest_usable() {
        let conf = "interface { minor = 0 }\ndevice { minor = 0 name = dmm pad = 3 }\n\
                    device { minor = 5 name = lost pad = 4 }\n";
        let dir = std::env::temp_dir().join(format!("gpibconf-sim-lost-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("gpib.conf");
        std::fs::write(&path, conf).unwrap();
        let cfg = Config::from_gpib_conf_file(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(cfg.unusable_devices.len(), 1);
        let (name, why) = &cfg.unusable_devices[0];
        assert_eq!(name, "lost");
        assert!(
            why.contains("line 3") && why.contains("no interface section has minor = 5"),
            "{why}"
        );
        let host = cfg.build().unwrap();
        assert!(host.named_device("dmm").is_some());
        assert!(host.named_device("lost").is_none());
    }

    #[test]
    fn an_empty_device_name_leaves_the_device_unnamed() {
        let conf =
            "interface { minor = 0 name = \"\" }\ndevice { minor = 0 name = \"\" pad = 3 }\n";
        let host = host_with("empty-name", conf, "").unwrap();
        assert_eq!(host.board_names(), ["gpib0"]);
        assert!(host.named_devices().is_empty());
        assert_eq!(host.devices(0).len(), 1);
    }

    #[test]
    fn mistakes_are_named() {
        let one = "interface { minor = 0 }\ndevice { minor = 0 name = dmm pad = 4 }\n";
        for (conf, toml, says) in [
            (one, "[[instrument]]\nname = 'dvm'\nmodel = 'scpi'", "no device section of the gpib.conf has that name (names: dmm)"),
            (one, "[[instrument]]\nname = 'dmm'\nmodel = 'scpi'\n[[instrument]]\nname = 'dmm'\nmodel = 'scpi'", "two [[instrument]] entries for \"dmm\""),
            (one, "[[instrument]]\nname = 'dmm'\naddress = 4\nmodel = 'scpi'", "not both"),
            (one, "[[instrument]]\nmodel = 'scpi'", "needs name"),
            (one, "[[instrument]]\nminor = 1\naddress = 3\nmodel = 'scpi'", "no interface with that minor"),
            (one, "[[instrument]]\nminor = 0\naddress = 4\nmodel = 'scpi'", "two devices at address 4"),
            (one, "[[instrument]]\nname = 'dmm'\nmodel = 'toaster'", "unknown model \"toaster\""),
            (one, "[[instrument]]\nname = 'dmm'\nmodel = 'scpi'\nvolts = 3", "unknown field `volts`"),
            (one, "[[board]]\nname = 'b'", "not both"),
            ("", "", "no interface section"),
            ("interface { minor = 0 }\ndevice { minor = 0 name = a pad = 4 }\ndevice { minor = 0 name = b pad = 4 }", "", "both at 4"),
            ("interface { minor = 0 pad = 4 }\ndevice { minor = 0 name = a pad = 4 }", "", "the board's own address"),
            ("interface { minor = 0 pad = 40 }", "", "gpib.conf line 1, column 29: pad: 40 is out of range"),
        ] {
            let e = error("mistakes", conf, toml);
            assert!(e.contains(says), "{toml:?}: {e}");
            assert!(e.contains("sim.toml"), "names the file: {e}");
        }
        let e = Config::parse("name = 'x'\n[[instrument]]\nname = 'a'\nmodel = 'scpi'\n")
            .unwrap()
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("give its path as gpib_conf"), "{e}");
        let e = error("missing", "", "").replace("gpib.conf\"", "");
        assert!(e.contains("no interface section"), "{e}");
    }
}
