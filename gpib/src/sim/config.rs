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
//!   model = "scpi"          # "scpi", "hp3565" or "disc"
//!   idn = "ACME,DMM,1,2"
//!   name = "voltmeter"      # optional: what libgpib's ibfind("voltmeter") opens,
//!   timeout_s = 3           # with these optional settings (gpib.conf's device
//!   eos = 0x0a              # section: timeout, eos, set-reos, set-bin, set-xeos,
//!   set_reos = true         # set-eot)
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
use crate::sim::host::SimHost;
use crate::sim::instrument::Instrument;
use crate::sim::instruments::{Disc, Hp3565, ScpiInstrument};
use crate::sim::named::NamedDevice;
use crate::sim::timing::{BoardTiming, DeviceTiming, TransferMode, MIN_T1_NS};

/// The largest configuration file read (1 MiB); a bigger file is refused unread.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The built-in configurations: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("hp9000-350", include_str!("../../configs/hp9000-350.toml")),
    ("bench", include_str!("../../configs/bench.toml")),
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
    /// Its boards, in index order.
    #[serde(rename = "board", default)]
    pub boards: Vec<BoardConfig>,
}

/// One board; timing defaults are [`BoardTiming::default`]'s.
///
/// Times are checked when the host is built: per-call and per-command-byte times at
/// most [`MAX_CALL_US`] (1 s), per-byte and settling times at most [`MAX_BYTE_NS`]
/// (1 s), the timeout at most [`MAX_TIMEOUT_S`] (1000 s); NaN and infinities are
/// refused. An error names the field and its limit.
#[derive(Debug, Clone, Deserialize)]
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
    /// I/O timeout in seconds, 0 to 1000; 0 = none (default 10).
    pub timeout_s: Option<f64>,
    /// "pio" or "dma".
    pub transfer: Option<TransferMode>,
    /// Driver entry and set-up per read or write call, µs (at most 1 s).
    pub call_overhead_us: Option<f64>,
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
    /// Its devices.
    #[serde(rename = "device", default)]
    pub devices: Vec<DeviceConfig>,
}

/// One device; timing defaults are [`DeviceTiming::default`]'s.
///
/// Per-byte, settling and holdoff times are at most [`MAX_BYTE_NS`] (1 s), the
/// response latency at most [`MAX_RESPONSE_LATENCY_US`] (1000 s).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Primary address, 0..=30.
    pub address: u8,
    /// Secondary address, 0..=30.
    pub secondary: Option<u8>,
    /// "scpi", "hp3565" or "disc".
    pub model: String,
    /// `*IDN?` answer of a SCPI instrument.
    pub idn: Option<String>,
    /// Disc model ("7958").
    pub disc: Option<String>,
    /// Mount point of a disc (only a disc has one).
    pub mount: Option<String>,
    /// Whether the disc starts mounted (default true when it has a mount point).
    pub mounted: Option<bool>,
    /// T1 settling time when the device talks, ns (350 ns to 1 s).
    pub t1_ns: Option<u64>,
    /// Acceptance time when the device listens, ns (at most 1 s).
    pub accept_ns: Option<u64>,
    /// Time after a command before the device talks or listens again, µs (at most 1000 s).
    pub response_latency_us: Option<f64>,
    /// Time the firmware needs to resume talking after a held-off handshake, ns (at most 1 s).
    pub holdoff_recovery_talk_ns: Option<u64>,
    /// Time the firmware needs to resume listening after a held-off handshake, ns (at most 1 s).
    pub holdoff_recovery_listen_ns: Option<u64>,
    /// The device's name, as in linux-gpib's gpib.conf `device { name = "voltmeter" }`:
    /// `ibfind("voltmeter")` of the compatibility library opens a device descriptor with
    /// the settings below. Unique on the host (also among board names).
    pub name: Option<String>,
    /// A named device's I/O timeout in seconds, 0 to 1000; 0 = none (default: its board's).
    pub timeout_s: Option<f64>,
    /// A named device's end-of-string byte (default 0).
    pub eos: Option<u8>,
    /// Reads end on the EOS byte (gpib.conf `set-reos`; linux-gpib's REOS).
    #[serde(default, alias = "set-reos")]
    pub set_reos: bool,
    /// The EOS byte is compared on all 8 bits (gpib.conf `set-bin`; BIN).
    #[serde(default, alias = "set-bin")]
    pub set_bin: bool,
    /// EOI is sent with the EOS byte on writes (gpib.conf `set-xeos`; XEOS).
    #[serde(default, alias = "set-xeos")]
    pub set_xeos: bool,
    /// EOI with the last byte of writes (gpib.conf `set-eot`; default true).
    #[serde(alias = "set-eot")]
    pub eot: Option<bool>,
}

impl DeviceConfig {
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
/// Longest time per call or per command byte (`call_overhead_us`, `command_byte_us`,
/// `dma_setup_us`, `interrupt_us`, `poll_us`): 1 s, in µs.
pub const MAX_CALL_US: f64 = 1e6;
/// Longest time per byte or settling time (every `..._ns` field): 1 s, in ns.
pub const MAX_BYTE_NS: u64 = 1_000_000_000;
/// Longest response latency of a device (`response_latency_us`): 1000 s, in µs.
pub const MAX_RESPONSE_LATENCY_US: f64 = 1e9;
/// Largest DMA block (`dma_block_bytes`): 16 MiB.
pub const MAX_DMA_BLOCK_BYTES: u64 = 1 << 24;

/// A time in microseconds from the file: finite, 0..=`max_us`.
fn us_field(
    v: Option<f64>,
    default: Duration,
    field: &str,
    max_us: f64,
    on: &str,
) -> Result<Duration> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && (0.0..=max_us).contains(&x) => {
            Ok(Duration::from_secs_f64(x / 1e6))
        }
        Some(x) => Err(Error::Config(format!(
            "{on}: {field} = {x:?} is out of range: 0 to {max_us} us ({})",
            secs_text(max_us / 1e6)
        ))),
    }
}

/// A time in seconds from the file: finite, 0..=`max_s`.
fn secs_field(
    v: Option<f64>,
    default: Duration,
    field: &str,
    max_s: f64,
    on: &str,
) -> Result<Duration> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && (0.0..=max_s).contains(&x) => Ok(Duration::from_secs_f64(x)),
        Some(x) => Err(Error::Config(format!(
            "{on}: {field} = {x:?} is out of range: 0 to {} (0 = none)",
            secs_text(max_s)
        ))),
    }
}

/// A whole number from the file: 0..=`max` (`unit` after the limit in the message).
fn int_field(
    v: Option<u64>,
    default: u64,
    field: &str,
    max: u64,
    unit: &str,
    on: &str,
) -> Result<u64> {
    match v {
        None => Ok(default),
        Some(x) if x <= max => Ok(x),
        Some(x) => Err(Error::Config(format!(
            "{on}: {field} = {x:?} is out of range: 0 to {max} {unit}"
        ))),
    }
}

/// A per-byte or settling time in ns: 0..=[`MAX_BYTE_NS`].
fn ns_field(v: Option<u64>, default: u64, field: &str, on: &str) -> Result<u64> {
    int_field(v, default, field, MAX_BYTE_NS, "ns (1 s)", on)
}

fn secs_text(s: f64) -> String {
    format!("{s} s")
}

impl Config {
    /// Parses TOML text.
    pub fn parse(text: &str) -> Result<Self> {
        toml::from_str(text).map_err(|e| Error::Config(e.to_string()))
    }

    /// Reads and parses the TOML file at `path` (a regular file of at most
    /// [`MAX_CONFIG_BYTES`]; see [`read_text_file`]). Errors name the file.
    pub fn read_file(path: &std::path::Path) -> Result<Self> {
        let text = read_text_file(path, MAX_CONFIG_BYTES)?;
        Self::parse(&text).map_err(|e| in_file(path, e))
    }

    /// A built-in configuration by name, or else the TOML file at `name_or_path`.
    pub fn from_name_or_path(name_or_path: &str) -> Result<Self> {
        match BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            Some((_, text)) => Self::parse(text),
            None => Self::read_file(std::path::Path::new(name_or_path)),
        }
    }

    /// Builds the host this configuration describes.
    pub fn build(&self) -> Result<SimHost> {
        if self.boards.is_empty() {
            return Err(Error::Config(format!(
                "host {:?} has no [[board]]",
                self.name
            )));
        }
        for (i, b) in self.boards.iter().enumerate() {
            if self.boards[..i].iter().any(|o| o.name == b.name) {
                return Err(Error::Config(format!(
                    "two boards named {:?}: board names must be unique",
                    b.name
                )));
            }
        }
        let mut names: Vec<&str> = Vec::new();
        for b in &self.boards {
            for dev in &b.devices {
                let Some(name) = &dev.name else { continue };
                if name.trim().is_empty() {
                    return Err(Error::Config(format!(
                        "device {} on board {}: name must not be empty",
                        dev.address, b.name
                    )));
                }
                if names.contains(&name.as_str()) {
                    return Err(Error::Config(format!(
                        "two devices named {name:?}: device names must be unique"
                    )));
                }
                if self.boards.iter().any(|o| o.name == *name) {
                    return Err(Error::Config(format!(
                        "device name {name:?} is also a board's name: names must be unique"
                    )));
                }
                names.push(name);
            }
        }
        let host = SimHost::new(self.name.clone());
        for b in &self.boards {
            let on = format!("board {}", b.name);
            let on = on.as_str();
            let d = BoardTiming::default();
            let timing = BoardTiming {
                mode: b.transfer.unwrap_or(d.mode),
                call_overhead: us_field(
                    b.call_overhead_us,
                    d.call_overhead,
                    "call_overhead_us",
                    MAX_CALL_US,
                    on,
                )?,
                command_byte: us_field(
                    b.command_byte_us,
                    d.command_byte,
                    "command_byte_us",
                    MAX_CALL_US,
                    on,
                )?,
                pio_read_byte_ns: ns_field(
                    b.pio_read_byte_ns,
                    d.pio_read_byte_ns,
                    "pio_read_byte_ns",
                    on,
                )?,
                pio_write_byte_ns: ns_field(
                    b.pio_write_byte_ns,
                    d.pio_write_byte_ns,
                    "pio_write_byte_ns",
                    on,
                )?,
                dma_byte_ns: ns_field(b.dma_byte_ns, d.dma_byte_ns, "dma_byte_ns", on)?,
                dma_setup: us_field(b.dma_setup_us, d.dma_setup, "dma_setup_us", MAX_CALL_US, on)?,
                dma_block: int_field(
                    b.dma_block_bytes,
                    d.dma_block,
                    "dma_block_bytes",
                    MAX_DMA_BLOCK_BYTES,
                    "bytes",
                    on,
                )?
                .max(1),
                interrupt_cpu: us_field(
                    b.interrupt_us,
                    d.interrupt_cpu,
                    "interrupt_us",
                    MAX_CALL_US,
                    on,
                )?,
                t1_ns: ns_field(b.t1_ns, d.t1_ns, "t1_ns", on)?,
                accept_ns: ns_field(b.accept_ns, d.accept_ns, "accept_ns", on)?,
                hs488: b.hs488,
                polled: b.polled,
                poll_cost: us_field(b.poll_us, d.poll_cost, "poll_us", MAX_CALL_US, on)?,
            };
            check_t1(timing.t1_ns, &b.name)?;
            let timeout = secs_field(
                b.timeout_s,
                Duration::from_secs(10),
                "timeout_s",
                MAX_TIMEOUT_S,
                on,
            )?;
            let address = PrimaryAddress::try_from(b.address)
                .map_err(|e| Error::Config(format!("board {}: {e}", b.name)))?;
            let index = host.add_board(b.name.clone(), address, timing, timeout);
            for dev in &b.devices {
                let addr = Address::new(dev.address, dev.secondary)
                    .map_err(|e| Error::Config(format!("board {}: {e}", b.name)))?;
                let on = format!("device {addr} on board {}", b.name);
                let on = on.as_str();
                let dd = DeviceTiming::default();
                let timing = DeviceTiming {
                    t1_ns: ns_field(dev.t1_ns, dd.t1_ns, "t1_ns", on)?,
                    accept_ns: ns_field(dev.accept_ns, dd.accept_ns, "accept_ns", on)?,
                    response_latency: us_field(
                        dev.response_latency_us,
                        dd.response_latency,
                        "response_latency_us",
                        MAX_RESPONSE_LATENCY_US,
                        on,
                    )?,
                    holdoff_recovery_talk_ns: ns_field(
                        dev.holdoff_recovery_talk_ns,
                        dd.holdoff_recovery_talk_ns,
                        "holdoff_recovery_talk_ns",
                        on,
                    )?,
                    holdoff_recovery_listen_ns: ns_field(
                        dev.holdoff_recovery_listen_ns,
                        dd.holdoff_recovery_listen_ns,
                        "holdoff_recovery_listen_ns",
                        on,
                    )?,
                };
                check_t1(timing.t1_ns, &format!("device {addr} on {}", b.name))?;
                let instrument: Box<dyn Instrument> = match dev.model.to_ascii_lowercase().as_str()
                {
                    "scpi" => Box::new(match &dev.idn {
                        Some(i) => ScpiInstrument::new(i.clone()),
                        None => ScpiInstrument::default(),
                    }),
                    "hp3565" => Box::new(Hp3565::new()),
                    "disc" => {
                        Box::new(Disc::new(dev.disc.clone().unwrap_or_else(|| "disc".into())))
                    }
                    other => {
                        return Err(Error::Config(format!(
                        "device {addr} on {}: unknown model {other:?} (known: scpi, hp3565, disc)",
                        b.name
                    )))
                    }
                };
                let at = host.attach(index, addr, instrument, timing)?;
                match &dev.name {
                    Some(name) => host.add_named_device(NamedDevice {
                        name: name.clone(),
                        board: index,
                        address: addr,
                        timeout: match dev.timeout_s {
                            None => None,
                            t => Some(secs_field(
                                t,
                                Duration::ZERO,
                                "timeout_s",
                                MAX_TIMEOUT_S,
                                on,
                            )?),
                        },
                        eos: dev.eos.unwrap_or(0),
                        reos: dev.set_reos,
                        bin: dev.set_bin,
                        xeos: dev.set_xeos,
                        eot: dev.eot.unwrap_or(true),
                    })?,
                    None if dev.has_named_settings() => {
                        return Err(Error::Config(format!(
                            "{on}: timeout_s, eos, set_reos, set_bin, set_xeos and eot apply \
                             only to a named device (add name = \"...\")"
                        )))
                    }
                    None => {}
                }
                if let Some(m) = &dev.mount {
                    host.set_mount_point(at, m, dev.mounted.unwrap_or(true))?;
                }
            }
        }
        Ok(host)
    }
}

fn check_t1(t1: u64, what: &str) -> Result<()> {
    if t1 < MIN_T1_NS {
        return Err(Error::Config(format!(
            "{what}: T1 of {t1} ns is below IEEE 488.1's minimum of {MIN_T1_NS} ns"
        )));
    }
    Ok(())
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
    if BUILTIN.iter().any(|(n, _)| *n == name_or_path) {
        return builtin(name_or_path);
    }
    let path = std::path::Path::new(name_or_path);
    Config::read_file(path)?
        .build()
        .map_err(|e| in_file(path, e))
}

/// `e` as a configuration error about `path`: "simulator configuration: PATH: why".
fn in_file(path: &std::path::Path, e: Error) -> Error {
    let why = match e {
        Error::Config(why) => why,
        other => other.to_string(),
    };
    Error::Config(format!("{}: {why}", path.display()))
}

/// Reads the regular file at `path`, at most `limit` bytes, as UTF-8 text.
///
/// The file is opened without blocking (a FIFO with no writer answers at once), its
/// opened handle is checked to be a regular file (not a folder, device, FIFO or
/// socket), and at most `limit + 1` bytes are read, so that a file growing meanwhile
/// is refused too. Errors are [`Error::Config`] naming the file.
pub fn read_text_file(path: &std::path::Path, limit: u64) -> Result<String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let shown = path.display();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::Config(format!(
                    "unknown configuration {shown:?}: not a built-in ({}) and no such file",
                    builtin_names().join(", ")
                ))
            } else {
                Error::Config(format!("{shown}: cannot open: {e}"))
            }
        })?;
    let meta = file
        .metadata()
        .map_err(|e| Error::Config(format!("{shown}: cannot stat: {e}")))?;
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(Error::Config(format!(
            "{shown} is a directory, not a configuration file"
        )));
    }
    if !kind.is_file() {
        return Err(Error::Config(format!(
            "{shown} is not a regular file (a device, FIFO or socket); \
             configurations are read from regular files only"
        )));
    }
    let too_big = || {
        Error::Config(format!(
            "{shown} is larger than {}, the most a configuration file may hold",
            size_text(limit)
        ))
    };
    if meta.len() > limit {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::Config(format!("{shown}: cannot read: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| {
        Error::Config(format!(
            "{shown} is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

fn size_text(bytes: u64) -> String {
    if bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn builtins_build() {
        for name in builtin_names() {
            builtin(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let h = builtin("hp9000-350").unwrap();
        assert_eq!(h.board_names(), ["hpib7", "disc", "hpib8"]);
        assert_eq!(h.mounts().len(), 3);
    }

    #[test]
    fn bad_configs_say_why() {
        let cases = [
            ("name='x'", "no [[board]]"),
            ("name='x'\n[[board]]\nname='b'\naddress=31", "31"),
            (
                "name='x'\n[[board]]\nname='b'\nt1_ns=100",
                "below IEEE 488.1",
            ),
            (
                "name='x'\n[[board]]\nname='b'\n[[board.device]]\naddress=3\nmodel='toaster'",
                "unknown model",
            ),
            (
                "name='x'\n[[board]]\nname='b'\n[[board.device]]\naddress=0\nmodel='scpi'",
                "board's own address",
            ),
            ("name='x'\n[[board]]\nname='b'\nbogus=1", "unknown field"),
        ];
        for (text, why) in cases {
            let e = Config::parse(text).and_then(|c| c.build()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Config, "{text}");
            assert!(e.to_string().contains(why), "{text}: {e}");
        }
        let e = load("no-such-config").unwrap_err();
        assert!(e.to_string().contains("hp9000-350"), "{e}");
    }

    /// A scratch folder for one test (removed at the end of the test).
    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn new(test: &str) -> Self {
            let p = std::env::temp_dir().join(format!("gpib-config-{test}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Self(p)
        }
        fn file(&self, name: &str, text: &[u8]) -> String {
            let p = self.0.join(name);
            std::fs::write(&p, text).unwrap();
            p.display().to_string()
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// `load(path)` in a thread, given `secs` to answer (a hang fails the test).
    fn load_within(path: &str, secs: u64) -> Result<SimHost> {
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.to_string();
        std::thread::spawn(move || {
            let _ = tx.send(load(&p));
        });
        rx.recv_timeout(std::time::Duration::from_secs(secs))
            .unwrap_or_else(|_| panic!("load({path:?}) did not answer within {secs} s"))
    }

    fn config_error(path: &str) -> String {
        let e = load_within(path, 10).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config, "{path}: {e}");
        e.to_string()
    }

    #[test]
    fn config_files_are_size_capped_and_regular() {
        let dir = Scratch::new("regular");
        // A regular file over the cap: refused, with the limit, before parsing.
        let mut big = b"name = 'x'\n".to_vec();
        big.resize(MAX_CONFIG_BYTES as usize + 1, b'#');
        let path = dir.file("big.toml", &big);
        let e = config_error(&path);
        assert!(e.contains(&path) && e.contains("larger than 1 MiB"), "{e}");
        // Exactly at the cap is fine (a comment line of padding).
        let mut ok = b"name = 'x'\n[[board]]\nname = 'b'\n#".to_vec();
        ok.resize(MAX_CONFIG_BYTES as usize, b'#');
        let path = dir.file("ok.toml", &ok);
        load_within(&path, 10).unwrap();
        // A folder: named, said once.
        let folder = dir.0.display().to_string();
        let e = config_error(&folder);
        assert!(e.contains(&folder) && e.contains("is a directory"), "{e}");
        assert_eq!(e.matches("directory").count(), 1, "{e}");
        // A character device: refused without reading it.
        let e = config_error("/dev/zero");
        assert!(
            e.contains("/dev/zero") && e.contains("not a regular file"),
            "{e}"
        );
        // A FIFO nobody writes to: refused at once, not waited on.
        let fifo = dir.0.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let fifo = fifo.display().to_string();
            let e = config_error(&fifo);
            assert!(e.contains(&fifo) && e.contains("not a regular file"), "{e}");
        }
        // Not UTF-8.
        let path = dir.file("latin1.toml", b"name = '\xe9'\n");
        let e = config_error(&path);
        assert!(e.contains(&path) && e.contains("UTF-8"), "{e}");
    }

    #[test]
    fn file_errors_name_the_file_once() {
        let dir = Scratch::new("once");
        for (text, why) in [
            ("name='x'\n[[board]]\nname='b'\nbogus=1", "unknown field"),
            ("name='x'", "no [[board]]"),
            (
                "name='x'\n[[board]]\nname='b'\nt1_ns=100",
                "below IEEE 488.1",
            ),
        ] {
            let path = dir.file("bad.toml", text.as_bytes());
            let e = config_error(&path);
            assert!(e.contains(why), "{e}");
            assert_eq!(e.matches("simulator configuration").count(), 1, "{e}");
            assert_eq!(e.matches(path.as_str()).count(), 1, "{e}");
        }
    }

    fn build_error(text: &str) -> String {
        let r = std::panic::catch_unwind(|| Config::parse(text).and_then(|c| c.build()));
        let e = r
            .unwrap_or_else(|_| panic!("building panicked on {text:?}"))
            .err()
            .unwrap_or_else(|| panic!("accepted {text:?}"));
        assert_eq!(e.kind(), ErrorKind::Config, "{text}");
        e.to_string()
    }

    #[test]
    fn numbers_out_of_range_are_refused_with_their_field_and_limit() {
        let board = "name='x'\n[[board]]\nname='b'\n";
        let device = "name='x'\n[[board]]\nname='b'\n[[board.device]]\naddress=3\nmodel='scpi'\n";
        let cases = [
            (board, "timeout_s = 1e300", "timeout_s", "1000 s"),
            (board, "timeout_s = 1001", "timeout_s", "1000 s"),
            (board, "timeout_s = nan", "timeout_s", "1000 s"),
            (board, "timeout_s = inf", "timeout_s", "1000 s"),
            (board, "timeout_s = -1", "timeout_s", "1000 s"),
            (
                board,
                "call_overhead_us = 1e300",
                "call_overhead_us",
                "1000000 us",
            ),
            (
                board,
                "command_byte_us = 1e25",
                "command_byte_us",
                "1000000 us",
            ),
            (board, "interrupt_us = 1e22", "interrupt_us", "1000000 us"),
            (board, "dma_setup_us = inf", "dma_setup_us", "1000000 us"),
            (board, "poll_us = 2e6", "poll_us", "1000000 us"),
            (
                board,
                "pio_read_byte_ns = 9223372036854775807",
                "pio_read_byte_ns",
                "1000000000 ns",
            ),
            (
                board,
                "pio_write_byte_ns = 9223372036854775000",
                "pio_write_byte_ns",
                "1000000000 ns",
            ),
            (
                board,
                "dma_byte_ns = 1000000001",
                "dma_byte_ns",
                "1000000000 ns",
            ),
            (
                board,
                "t1_ns = 9223372036854775807",
                "t1_ns",
                "1000000000 ns",
            ),
            (
                board,
                "accept_ns = 9223372036854775807",
                "accept_ns",
                "1000000000 ns",
            ),
            (
                board,
                "dma_block_bytes = 9223372036854775807",
                "dma_block_bytes",
                "16777216",
            ),
            (
                device,
                "t1_ns = 9223372036854775807",
                "t1_ns",
                "1000000000 ns",
            ),
            (
                device,
                "accept_ns = 9223372036854775807",
                "accept_ns",
                "1000000000 ns",
            ),
            (
                device,
                "holdoff_recovery_talk_ns = 9223372036854775807",
                "holdoff_recovery_talk_ns",
                "1000000000 ns",
            ),
            (
                device,
                "holdoff_recovery_listen_ns = 9223372036854775807",
                "holdoff_recovery_listen_ns",
                "1000000000 ns",
            ),
            (
                device,
                "response_latency_us = 1e300",
                "response_latency_us",
                "1000000000 us",
            ),
            (
                device,
                "response_latency_us = nan",
                "response_latency_us",
                "1000000000 us",
            ),
        ];
        for (head, line, field, limit) in cases {
            let text = format!("{head}{line}\n");
            let e = build_error(&text);
            assert!(e.contains(field) && e.contains(limit), "{line}: {e}");
        }
        // The limits themselves are accepted.
        let text = format!(
            "{board}timeout_s = 1000\ncall_overhead_us = 1e6\npio_read_byte_ns = 1000000000\n\
             [[board.device]]\naddress = 3\nmodel = 'scpi'\nresponse_latency_us = 1e9\n"
        );
        Config::parse(&text).unwrap().build().unwrap();
    }

    #[test]
    fn duplicate_board_names_and_mounts_on_non_discs_are_refused() {
        let e =
            build_error("name='x'\n[[board]]\nname='gpib0'\n[[board]]\nname='gpib0'\naddress=1\n");
        assert!(e.contains("two boards named \"gpib0\""), "{e}");
        let e = build_error(
            "name='x'\n[[board]]\nname='b'\n[[board.device]]\naddress=3\nmodel='scpi'\nmount='/data'\n",
        );
        assert!(
            e.contains("device 3 on board b") && e.contains("not a disc"),
            "{e}"
        );
        assert!(e.contains("/data"), "{e}");
        // Through the API too.
        let host = builtin("bench").unwrap();
        let at = crate::sim::DeviceRef {
            board: 0,
            address: Address::new(22, None).unwrap(),
        };
        let e = host.set_mount_point(at, "/x", true).unwrap_err();
        assert!(e.to_string().contains("not a disc"), "{e}");
        assert!(host.mounts().is_empty());
        // Two discs at one mount point: the second would be hidden.
        let e = build_error(
            "name='x'\n[[board]]\nname='b'\n[[board.device]]\naddress=3\nmodel='disc'\nmount='/d'\n\
             [[board.device]]\naddress=4\nmodel='disc'\nmount='/d'\n",
        );
        assert!(
            e.contains("mount point \"/d\"") && e.contains("two discs"),
            "{e}"
        );
    }

    #[test]
    fn named_devices_carry_their_settings() {
        let text = "name='x'\n[[board]]\nname='gpib0'\ntimeout_s=10\n\
            [[board.device]]\naddress=22\nmodel='scpi'\nname='voltmeter'\ntimeout_s=3\n\
            eos=10\nset_reos=true\nset_bin=true\neot=false\n\
            [[board.device]]\naddress=5\nsecondary=2\nmodel='scpi'\nname='scope'\n\
            [[board.device]]\naddress=6\nmodel='scpi'\n\
            [[board]]\nname='gpib1'\n[[board.device]]\naddress=9\nmodel='scpi'\nname='dmm'\n\
            'set-xeos'=true\neos=13\n";
        let host = Config::parse(text).unwrap().build().unwrap();
        let named = host.named_devices();
        assert_eq!(
            named,
            [
                NamedDevice {
                    name: "voltmeter".into(),
                    board: 0,
                    address: Address::new(22, None).unwrap(),
                    timeout: Some(Duration::from_secs(3)),
                    eos: 10,
                    reos: true,
                    bin: true,
                    xeos: false,
                    eot: false,
                },
                NamedDevice {
                    name: "scope".into(),
                    board: 0,
                    address: Address::new(5, Some(2)).unwrap(),
                    timeout: None,
                    eos: 0,
                    reos: false,
                    bin: false,
                    xeos: false,
                    eot: true,
                },
                NamedDevice {
                    name: "dmm".into(),
                    board: 1,
                    address: Address::new(9, None).unwrap(),
                    timeout: None,
                    eos: 13,
                    reos: false,
                    bin: false,
                    xeos: true,
                    eot: true,
                },
            ]
        );
        assert_eq!(named[0].eos_mode(), 0x0400 | 0x1000 | 10);
        assert_eq!(named[2].eos_mode(), 0x0800 | 13);
        assert_eq!(host.named_device("scope"), Some(named[1].clone()));
        assert_eq!(host.named_device("nosuch"), None);
        // The bench names its SCPI instrument.
        let bench = builtin("bench").unwrap();
        let v = bench.named_device("voltmeter").unwrap();
        assert_eq!((v.board, v.address.primary.get()), (0, 22));

        let dev = "name='x'\n[[board]]\nname='gpib0'\n[[board.device]]\naddress=3\nmodel='scpi'\n";
        for (extra, why) in [
            (
                "name='a'\n[[board.device]]\naddress=4\nmodel='scpi'\nname='a'",
                "two devices named \"a\"",
            ),
            ("name='gpib0'", "\"gpib0\" is also a board's name"),
            ("name=''", "empty"),
            ("timeout_s=3", "only to a named device"),
            ("set_reos=true", "only to a named device"),
            ("name='a'\ntimeout_s=1e300", "timeout_s"),
            ("name='a'\neos=256", "eos"),
        ] {
            let e = build_error(&format!("{dev}{extra}\n"));
            assert!(e.contains(why), "{extra}: {e}");
        }
    }
}
