//! Simulated hosts described in TOML, and the built-in ones (files in `gpib/configs/`).
//!
//! ```toml
//! name = "my-bench"
//! [[board]]
//! name = "gpib0"
//! address = 0
//! transfer = "dma"          # or "pio"
//!   [[board.device]]
//!   address = 22
//!   model = "scpi"          # "scpi", "hp3565", "terminal", "disc", "pyvisa-sim"
//!                           # or "replay" (file = "session.trace", a recorded device)
//!   idn = "ACME,DMM,1,2"
//!   name = "voltmeter"      # optional: what libgpib's ibfind("voltmeter") opens,
//!   timeout_s = 3           # with these optional settings (gpib.conf's device
//!   eos = 0x0a              # section: timeout, eos, set-reos, set-bin, set-xeos,
//!   set_reos = true         # set-eot)
//! ```
//!
//! Or the boards and named devices come from a linux-gpib gpib.conf, with the
//! instruments attached by name (see [`InstrumentConfig`]):
//!
//! ```toml
//! name = "lab"
//! gpib_conf = "gpib.conf"   # relative to this file
//! [[instrument]]
//! name = "voltmeter"        # a gpib.conf device section
//! model = "scpi"
//! ```
//!
//! Every timing field is optional; see [`BoardConfig`] and [`DeviceConfig`] for the
//! defaults, the units (each field's name ends with its unit) and the limits. Names
//! of boards and devices are unique on a host. Files are read by [`load`] and
//! [`Config::read_file`]: regular files of at most [`MAX_CONFIG_BYTES`] (1 MiB).

use std::time::Duration;

use serde::Deserialize;

use crate::address::{Address, PrimaryAddress};
use crate::error::{Error, Result};
use crate::settings::{DeviceSettings, EosMode, Timeout};
use crate::sim::behaviour::{AddressingMode, BoardBehaviour, DeviceBehaviour};
use crate::sim::host::SimHost;
use crate::sim::instrument::Instrument;
use crate::sim::instruments::{Disc, Hp3565, Replay, ScpiInstrument, Terminal};
use crate::sim::named::NamedDevice;
use crate::sim::timing::{BoardTiming, DeviceTiming, TransferMode, MIN_T1_NS};

/// The largest configuration file read (1 MiB); a bigger file is refused unread.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The built-in configurations: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "hp9000-350",
        include_str!("../../../configs/hp9000-350.toml"),
    ),
    ("bench", include_str!("../../../configs/bench.toml")),
    (
        "vax-780-terminals",
        include_str!("../../../configs/vax-780-terminals.toml"),
    ),
    (
        "three-adapters",
        include_str!("../../../configs/three-adapters.toml"),
    ),
    (
        "pio-instruments",
        include_str!("../../../configs/pio-instruments.toml"),
    ),
];

/// A whole host.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The host's name.
    pub name: String,
    /// What it is.
    #[serde(default)]
    pub description: String,
    /// How many CPUs the host has, 1 to [`MAX_CPUS`] (default 1): PIO transfers, call
    /// overhead, interrupts and the driver's polls take CPU time on them.
    pub cpus: Option<u64>,
    /// Its boards, in index order.
    #[serde(rename = "board", default)]
    pub boards: Vec<BoardConfig>,
    /// The folder relative paths in the file (pyvisa-sim files) start from: the
    /// configuration file's (set by [`Config::read_file`]; else the working folder).
    #[serde(skip)]
    pub base_dir: Option<std::path::PathBuf>,
    /// A linux-gpib gpib.conf that gives the boards and named devices instead of
    /// `[[board]]` (relative to the TOML file's folder); see [`InstrumentConfig`].
    pub gpib_conf: Option<std::path::PathBuf>,
    /// Instruments attached to the gpib.conf's devices.
    #[serde(rename = "instrument", default)]
    pub instruments: Vec<InstrumentConfig>,
    /// The gpib.conf's device sections that cannot be opened (their board has no
    /// interface section), as (name, why): what opens one by name says why.
    #[serde(skip)]
    pub unusable_devices: Vec<(String, String)>,
}

/// Longest cable a configuration may give (`cable_m`): 1000 m.
pub const MAX_CABLE_M: f64 = 1000.0;
/// Most background traffic of a device (`activity_bytes_per_s`): 100 MB/s.
pub const MAX_ACTIVITY_BYTES_PER_S: u64 = 100_000_000;

/// Most CPUs a configured host may have.
pub const MAX_CPUS: u64 = 256;

keys::config_struct! {
/// One board; timing defaults are [`BoardTiming::default`]'s.
///
/// Times are checked when the host is built: per-call and per-command-byte times at
/// most [`MAX_CALL_US`] (1 s), per-byte and settling times at most [`MAX_BYTE_NS`]
/// (1 s), the timeout at most [`MAX_TIMEOUT_S`] (1000 s); NaN and infinities are
/// refused. An error names the field and its limit.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardConfig {
    /// The board's name (what `ibfind()` finds); unique on the host.
    pub name: String,
    /// What it is.
    #[serde(default)]
    pub description: String,
    /// The board's primary address (default 0).
    #[serde(default)]
    pub address: u8,
    @timeout,
    /// "pio" or "dma".
    pub transfer: Option<TransferMode>,
    /// Driver entry and set-up per call (reads and writes without their own below,
    /// commands, polls), µs (at most 1 s).
    pub call_overhead_us: Option<f64>,
    /// A read call's entry and set-up, where it differs from `call_overhead_us`, µs (at
    /// most 1 s; `gpib-diag calibrate` writes it where reads and writes were measured
    /// apart).
    pub read_call_overhead_us: Option<f64>,
    /// A write call's entry and set-up, where it differs from `call_overhead_us`, µs
    /// (at most 1 s).
    pub write_call_overhead_us: Option<f64>,
    /// Time per command byte (with ATN), µs (at most 1 s).
    pub command_byte_us: Option<f64>,
    /// CPU time per byte read by programmed I/O, ns (at most 1 s).
    pub pio_read_byte_ns: Option<u64>,
    /// CPU time per byte written by programmed I/O, ns (at most 1 s).
    pub pio_write_byte_ns: Option<u64>,
    /// Time per byte of the DMA engine, ns (at most 1 s).
    pub dma_byte_ns: Option<u64>,
    /// CPU time to set up one DMA transfer, µs (at most 1 s).
    pub dma_setup_us: Option<f64>,
    /// Bytes per DMA interrupt (at most 16 MiB; 0 counts as 1).
    pub dma_block_bytes: Option<u64>,
    /// CPU time per interrupt, µs (at most 1 s).
    pub interrupt_us: Option<f64>,
    /// T1 settling time when the board talks, ns (350 ns to 1 s).
    pub t1_ns: Option<u64>,
    /// Acceptance time when the board listens, ns (at most 1 s).
    pub accept_ns: Option<u64>,
    /// HS488 is enabled.
    #[serde(default)]
    pub hs488: bool,
    /// The host driver polls mounted discs on this board.
    #[serde(default)]
    pub polled: bool,
    /// Time one poll of this board takes, µs (at most 1 s).
    pub poll_us: Option<f64>,
    @eos,
    /// The driver serial-polls devices that request service as soon as the bus is free
    /// (linux-gpib's autopoll; default false). With a device's `srq_every_us`, an SRQ
    /// storm.
    #[serde(default)]
    pub autopoll: bool,
    /// When the driver sends addressing bytes: "cached" (default: only when the
    /// addressed device changes) or "every-call" (UNL, MTA/MLA before every read and
    /// write, as linux-gpib's device-level calls).
    pub addressing: Option<AddressingMode>,
    /// Total cable length, m (0 to 1000; default: a short bus). Each metre adds 5 ns a
    /// way to every handshake; past IEEE 488.1's 20 m, or 2 m a device, talkers need
    /// its 2 µs settling time.
    pub cable_m: Option<f64>,
    /// Its devices.
    #[serde(rename = "device", default)]
    pub devices: Vec<DeviceConfig>,
    /// Devices from a pyvisa-sim file's GPIB resources (see [`PyvisaSimBoard`]).
    pub pyvisa_sim: Option<PyvisaSimBoard>,
}
}

keys::config_struct! {
/// One device; timing defaults are [`DeviceTiming::default`]'s.
///
/// Per-byte, settling and holdoff times are at most [`MAX_BYTE_NS`] (1 s), the
/// response latency at most [`MAX_RESPONSE_LATENCY_US`] (1000 s).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Primary address, 0..=30.
    pub address: u8,
    /// Secondary address, 0..=30.
    pub secondary: Option<u8>,
    /// "scpi", "hp3565", "terminal", "disc", "pyvisa-sim" or "replay".
    pub model: String,
    /// A pyvisa-sim device's YAML file, or the trace a `replay` device plays back (its
    /// device at this address); relative to the configuration file.
    pub file: Option<String>,
    /// Which device of the pyvisa-sim file (needed when it has more than one).
    pub device: Option<String>,
    /// Or which resource of the pyvisa-sim file (`GPIB0::8::INSTR`): its device,
    /// channel ids and termination.
    pub resource: Option<String>,
    /// Whose `eom` (terminations) a pyvisa-sim device uses (default "GPIB INSTR").
    pub interface: Option<String>,
    /// Time from a query's arrival until a pyvisa-sim device queues its answer, µs
    /// (at most 1000 s; default 0). Unlike `response_latency_us`, the status byte
    /// shows no MAV until then.
    pub response_time_us: Option<f64>,
    /// `*IDN?` answer of a SCPI instrument.
    pub idn: Option<String>,
    /// Disc model ("7958").
    pub disc: Option<String>,
    /// Mount point of a disc (only a disc has one).
    pub mount: Option<String>,
    /// Whether the disc starts mounted (default true when it has a mount point).
    pub mounted: Option<bool>,
    @timing,
    /// The device listens to every data byte without being addressed (IEEE 488's
    /// listen-only mode, a printer logging the bus): every transfer's handshake waits
    /// for its acceptance time (default false).
    #[serde(default)]
    pub listen_only: bool,
    /// After each message it receives, the device holds NRFD this long, µs (at most
    /// 1 s): the next command bytes on the bus, anyone's, wait for it.
    pub nrfd_hold_us: Option<f64>,
    /// The device requests service again this long after each serial poll, µs (1 µs to
    /// 1000 s): an SRQ storm on a board with `autopoll`.
    pub srq_every_us: Option<f64>,
    /// Background traffic of the device (a busy disc), bytes a second (at most
    /// 100,000,000): interrupts (DMA board) or byte moves (PIO board) on the host CPU.
    pub activity_bytes_per_s: Option<u64>,
    @measurement,
    /// The device's name, as in linux-gpib's gpib.conf `device { name = "voltmeter" }`:
    /// `ibfind("voltmeter")` of the compatibility library opens a device descriptor with
    /// the settings below. Unique on the host (also among board names).
    pub name: Option<String>,
    @timeout,
    @eos,
    /// Faults the device has from the start, as `--fault ADDR=KIND` names them
    /// (`drops-eoi`, `never-talks`, `stops-after:N`, ...): a planted cause for a
    /// program that opens the configuration by name (the compatibility library).
    #[serde(default)]
    pub faults: Vec<String>,
}
}

/// The EOS mode and EOT of the descriptor keys `eos`, `set_reos`, `set_bin`, `set_xeos`
/// and `eot` (a board's and a named device's alike; the timeout is checked apart).
pub(crate) fn descriptor(
    eos: Option<u8>,
    reos: bool,
    bin: bool,
    xeos: bool,
    eot: Option<bool>,
) -> DeviceSettings {
    DeviceSettings {
        eos: Some(EosMode {
            byte: eos.unwrap_or(0),
            reos,
            bin,
            xeos,
        }),
        eot: Some(eot.unwrap_or(true)),
        ..DeviceSettings::default()
    }
}

impl BoardConfig {
    /// The board descriptor's EOS mode and EOT (its timeout is the built board's).
    pub fn descriptor(&self) -> DeviceSettings {
        keys::descriptor_of!(self)
    }
}

impl DeviceConfig {
    /// A named device's EOS mode and EOT (its timeout is checked when the host is built).
    pub fn descriptor(&self) -> DeviceSettings {
        keys::descriptor_of!(self)
    }

    fn has_named_settings(&self) -> bool {
        self.timeout_s.is_some()
            || self.eos.is_some()
            || self.set_reos
            || self.set_bin
            || self.set_xeos
            || self.eot.is_some()
    }
}

/// Longest I/O timeout a configuration may give: 1000 s (linux-gpib's longest step,
/// T1000s). 0 means no timeout.
pub const MAX_TIMEOUT_S: f64 = 1000.0;
impl Config {
    /// Parses TOML text.
    pub fn parse(text: &str) -> Result<Self> {
        toml::from_str(text).map_err(|e| Error::Config(e.to_string()))
    }

    /// Reads and parses the TOML file at `path` (a regular file of at most
    /// [`MAX_CONFIG_BYTES`]; see [`read_text_file`]), and the gpib.conf it names
    /// ([`Config::expand_gpib_conf`], relative to the file's folder). Errors name the file.
    pub fn read_file(path: &std::path::Path) -> Result<Self> {
        Self::read_file_with(path, None)
    }

    /// A built-in configuration by name, or else the TOML file at `name_or_path`.
    pub fn from_name_or_path(name_or_path: &str) -> Result<Self> {
        match BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            Some((_, text)) => Self::parse(text),
            None => Self::read_file(std::path::Path::new(name_or_path)),
        }
    }
}

/// The names of the built-in configurations.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// Builds a built-in configuration by name.
pub fn builtin(name: &str) -> Result<SimHost> {
    let text = BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            Error::Config(format!(
                "unknown configuration {name:?} (built in: {})",
                builtin_names().join(", ")
            ))
        })?;
    Config::parse(text)?.build()
}

/// Builds a host from a built-in name or a TOML file path.
///
/// A file is read through [`Config::read_file`] (a regular file of at most
/// [`MAX_CONFIG_BYTES`]); every error about it names the file once.
pub fn load(name_or_path: &str) -> Result<SimHost> {
    Config::from_name_or_path(name_or_path)?.build_named(name_or_path)
}

impl Config {
    /// Builds the host of this configuration, read from `name_or_path` (a built-in
    /// name or a file): an error about a file names it once.
    pub fn build_named(&self, name_or_path: &str) -> Result<SimHost> {
        if BUILTIN.iter().any(|(n, _)| *n == name_or_path) {
            return self.build();
        }
        self.build()
            .map_err(|e| in_file(std::path::Path::new(name_or_path), e))
    }
}

mod build;
mod fields;
mod file;
mod gpib_conf;
mod host_source;
mod keys;
mod pyvisa_sim;
mod sources;
#[cfg(test)]
mod tests;

use fields::{int_field, ns_field, own_overhead, secs_field, timeout_field, us_field};
pub use fields::{MAX_BYTE_NS, MAX_CALL_US, MAX_DMA_BLOCK_BYTES, MAX_RESPONSE_LATENCY_US};
use file::in_file;
pub use file::read_text_file;
pub use gpib_conf::InstrumentConfig;
pub use host_source::HostSource;
pub use pyvisa_sim::PyvisaSimBoard;
pub use sources::{Source, SourceKind};
