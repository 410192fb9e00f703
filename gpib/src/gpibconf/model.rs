//! A parsed gpib.conf: its `interface` and `device` sections, typed and checked.

use crate::address::{Address, PrimaryAddress, SecondaryAddress};
use crate::backend::Eos;
use crate::settings::{DeviceSettings, EosMode, Timeout};

use super::error::ParseError;

/// linux-gpib's default timeout step, T3s (`lib/ibutil.c`: 3,000,000 µs).
pub const DEFAULT_TIMEOUT_STEP: u8 = 12;

/// The descriptor settings a section gives (linux-gpib's `descriptor_settings_t`):
/// what `ibfind` of the section's name opens the descriptor with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// `pad`: the primary address (an interface's own; default 0 for an interface, a
    /// device must give it).
    pub pad: PrimaryAddress,
    /// `sad`: the secondary address. The file writes it linux-gpib's way, 0x60 plus the
    /// address (`sad = 0x6e` is secondary 14), or 0 for none (the default).
    pub sad: Option<SecondaryAddress>,
    /// `timeout` (a step, 0 `TNONE` to 17 `T1000s`; default 12, `T3s`), `eos` (the
    /// byte, default 0) with `set-reos`, `set-bin`, `set-xeos`, and `set-eot` (default
    /// yes): each set, to the section's value or linux-gpib's default.
    pub device: DeviceSettings,
}

impl Default for Settings {
    /// linux-gpib's defaults (`init_descriptor_settings`), with primary address 0.
    fn default() -> Self {
        Self {
            pad: PrimaryAddress::new_const(0),
            sad: None,
            device: DeviceSettings {
                timeout: Timeout::from_linux_gpib_code(i32::from(DEFAULT_TIMEOUT_STEP)),
                eos: Some(EosMode::default()),
                eot: Some(true),
                ..DeviceSettings::default()
            },
        }
    }
}

impl Settings {
    /// The address (`pad`, `sad`).
    pub fn address(&self) -> Address {
        Address {
            primary: self.pad,
            secondary: self.sad,
        }
    }

    /// The timeout ([`Timeout::Never`] for `TNONE`).
    pub fn timeout(&self) -> Timeout {
        self.device.timeout.unwrap_or(Timeout::Never)
    }

    /// The timeout as linux-gpib's step (0 `TNONE` to 17 `T1000s`).
    pub fn timeout_step(&self) -> u8 {
        self.device
            .timeout
            .map_or(0, |t| u8::try_from(t.linux_gpib_code()).unwrap_or(0))
    }

    /// The EOS byte (`eos`).
    pub fn eos_byte(&self) -> u8 {
        self.device.eos_mode().byte
    }

    /// Whether writes end with EOI (`set-eot`).
    pub fn eot(&self) -> bool {
        self.device.eot()
    }

    /// The EOS mode as `ibdev`'s and `ibeos`'s `eosmode` take it: the byte, with
    /// [`crate::abi::REOS`], [`crate::abi::XEOS`] and [`crate::abi::BIN`].
    pub fn eos_mode(&self) -> i32 {
        self.device.eos_mode().linux_gpib()
    }

    /// The EOS that ends reads: `Some` when `set-reos` is on.
    pub fn read_eos(&self) -> Option<Eos> {
        self.device.read_eos()
    }

    /// The EOS mode, to be changed by the parser.
    pub(super) fn eos_mut(&mut self) -> &mut EosMode {
        self.device.eos.get_or_insert_default()
    }
}

/// An `interface { ... }` section: one board (`/dev/gpib<minor>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// The line the section starts on.
    pub line: u32,
    /// `minor`: the board index, 0..=15 (`minor = 0` is `/dev/gpib0`).
    pub minor: u8,
    /// `name`: what `ibfind` opens the board by (optional).
    pub name: Option<String>,
    /// `board_type`: the driver's name for the board ("ni_pci", "pcIIa"...).
    pub board_type: Option<String>,
    /// The board descriptor's settings (its own `pad`, `sad`, `timeout`, EOS, EOT).
    pub settings: Settings,
    /// `master` (or `controller`): the board is system controller (default no).
    pub master: bool,
    /// `base`: I/O base address, for boards without plug-and-play (default 0).
    pub base: u64,
    /// `irq`: interrupt line (default 0).
    pub irq: u32,
    /// `dma`: DMA channel (default 0, none).
    pub dma: u32,
    /// `pci_bus`: which PCI bus, to tell two boards of one driver apart.
    pub pci_bus: Option<u32>,
    /// `pci_slot`: which PCI slot, likewise.
    pub pci_slot: Option<u32>,
    /// `sysfs_device_path`: selects one piece of hardware by its sysfs path.
    pub sysfs_device_path: Option<String>,
    /// `serial_number`: selects one piece of hardware by its serial number.
    pub serial_number: Option<String>,
}

/// What a `device` section asks `ibfind` to do when it opens the device
/// (`init-flags`, deprecated in linux-gpib).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InitFlags {
    /// `LLO`: send local lockout.
    pub local_lockout: bool,
    /// `DCL` (also `set-clear`): clear the device (linux-gpib's `ibfind` sends `ibclr`).
    pub clear: bool,
    /// `EXCL`: exclusive use.
    pub exclusive: bool,
}

/// A `device { ... }` section: a named device on a board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// The line the section starts on.
    pub line: u32,
    /// `minor`: the board it is on (an interface section has this minor).
    pub minor: u8,
    /// `name`: what `ibfind` opens it by.
    pub name: String,
    /// Its address, timeout, EOS and EOT settings.
    pub settings: Settings,
    /// `init-string`: written to the device when `ibfind` opens it (deprecated in
    /// linux-gpib; at most 60 bytes).
    pub init_string: Option<String>,
    /// `autopoll`: the device takes part in automatic serial polling.
    pub autopoll: bool,
    /// `init-flags`.
    pub init_flags: InitFlags,
}

/// One section found by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry<'a> {
    /// An interface section.
    Interface(&'a Interface),
    /// A device section.
    Device(&'a Device),
}

/// A device section that cannot be opened: its board (`minor`) has no interface
/// section. linux-gpib reads such a file and fails that device alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnusableDevice {
    /// The section.
    pub device: Device,
    /// Why it cannot be opened, and where (the `minor` key).
    pub error: ParseError,
}

/// A whole gpib.conf, checked: names unique, every device of `devices` on a
/// configured board.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpibConf {
    /// The `interface` sections, in file order.
    pub interfaces: Vec<Interface>,
    /// The `device` sections on a configured board, in file order.
    pub devices: Vec<Device>,
    /// The `device` sections whose board has no interface section, in file order.
    pub unusable: Vec<UnusableDevice>,
}

impl GpibConf {
    /// The interface section of board `minor`.
    pub fn interface(&self, minor: u8) -> Option<&Interface> {
        self.interfaces.iter().find(|i| i.minor == minor)
    }

    /// The device section called `name`.
    pub fn device(&self, name: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// Why the device section called `name` cannot be opened, when it is one of
    /// [`GpibConf::unusable`].
    pub fn unusable_device(&self, name: &str) -> Option<&ParseError> {
        self.unusable
            .iter()
            .find(|u| u.device.name == name)
            .map(|u| &u.error)
    }

    /// The section called `name`, as `ibfind(name)` looks it up.
    pub fn find(&self, name: &str) -> Option<Entry<'_>> {
        if let Some(i) = self
            .interfaces
            .iter()
            .find(|i| i.name.as_deref() == Some(name))
        {
            return Some(Entry::Interface(i));
        }
        self.device(name).map(Entry::Device)
    }

    /// Every name in the file (interfaces first), for messages.
    pub fn names(&self) -> Vec<&str> {
        (self.interfaces.iter().filter_map(|i| i.name.as_deref()))
            .chain(self.devices.iter().map(|d| d.name.as_str()))
            .collect()
    }
}
