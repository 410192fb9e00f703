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
//! ```
//!
//! Every timing field is optional; see [`BoardConfig`] and [`DeviceConfig`] for the
//! defaults and the units (each field's name ends with its unit).

use std::time::Duration;

use serde::Deserialize;

use crate::address::{Address, PrimaryAddress};
use crate::error::{Error, Result};
use crate::sim::host::SimHost;
use crate::sim::instrument::Instrument;
use crate::sim::instruments::{Disc, Hp3565, ScpiInstrument};
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
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct BoardConfig {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The board's primary address (default 0).
    #[serde(default)]
    pub address: u8,
    /// I/O timeout in seconds; 0 = none (default 10).
    pub timeout_s: Option<f64>,
    pub transfer: Option<TransferMode>,
    pub call_overhead_us: Option<f64>,
    pub command_byte_us: Option<f64>,
    pub pio_read_byte_ns: Option<u64>,
    pub pio_write_byte_ns: Option<u64>,
    pub dma_byte_ns: Option<u64>,
    pub dma_setup_us: Option<f64>,
    pub dma_block_bytes: Option<u64>,
    pub interrupt_us: Option<f64>,
    pub t1_ns: Option<u64>,
    pub accept_ns: Option<u64>,
    #[serde(default)]
    pub hs488: bool,
    /// The host driver polls mounted discs on this board.
    #[serde(default)]
    pub polled: bool,
    pub poll_us: Option<f64>,
    #[serde(rename = "device", default)]
    pub devices: Vec<DeviceConfig>,
}

/// One device; timing defaults are [`DeviceTiming::default`]'s.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct DeviceConfig {
    pub address: u8,
    pub secondary: Option<u8>,
    /// "scpi", "hp3565" or "disc".
    pub model: String,
    /// `*IDN?` answer of a SCPI instrument.
    pub idn: Option<String>,
    /// Disc model ("7958").
    pub disc: Option<String>,
    /// Mount point of a disc.
    pub mount: Option<String>,
    /// Whether the disc starts mounted (default true when it has a mount point).
    pub mounted: Option<bool>,
    pub t1_ns: Option<u64>,
    pub accept_ns: Option<u64>,
    pub response_latency_us: Option<f64>,
    pub holdoff_recovery_talk_ns: Option<u64>,
    pub holdoff_recovery_listen_ns: Option<u64>,
}

fn us(v: Option<f64>, default: Duration, what: &str) -> Result<Duration> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && x >= 0.0 => Ok(Duration::from_secs_f64(x / 1e6)),
        Some(x) => Err(Error::Config(format!("{what} must be >= 0, got {x}"))),
    }
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
        let host = SimHost::new(self.name.clone());
        for b in &self.boards {
            let d = BoardTiming::default();
            let timing = BoardTiming {
                mode: b.transfer.unwrap_or(d.mode),
                call_overhead: us(b.call_overhead_us, d.call_overhead, "call_overhead_us")?,
                command_byte: us(b.command_byte_us, d.command_byte, "command_byte_us")?,
                pio_read_byte_ns: b.pio_read_byte_ns.unwrap_or(d.pio_read_byte_ns),
                pio_write_byte_ns: b.pio_write_byte_ns.unwrap_or(d.pio_write_byte_ns),
                dma_byte_ns: b.dma_byte_ns.unwrap_or(d.dma_byte_ns),
                dma_setup: us(b.dma_setup_us, d.dma_setup, "dma_setup_us")?,
                dma_block: b.dma_block_bytes.unwrap_or(d.dma_block).max(1),
                interrupt_cpu: us(b.interrupt_us, d.interrupt_cpu, "interrupt_us")?,
                t1_ns: b.t1_ns.unwrap_or(d.t1_ns),
                accept_ns: b.accept_ns.unwrap_or(d.accept_ns),
                hs488: b.hs488,
                polled: b.polled,
                poll_cost: us(b.poll_us, d.poll_cost, "poll_us")?,
            };
            check_t1(timing.t1_ns, &b.name)?;
            let timeout = match b.timeout_s {
                None => Duration::from_secs(10),
                Some(t) if t.is_finite() && t >= 0.0 => Duration::from_secs_f64(t),
                Some(t) => return Err(Error::Config(format!("timeout_s must be >= 0, got {t}"))),
            };
            let address = PrimaryAddress::try_from(b.address)
                .map_err(|e| Error::Config(format!("board {}: {e}", b.name)))?;
            let index = host.add_board(b.name.clone(), address, timing, timeout);
            for dev in &b.devices {
                let addr = Address::new(dev.address, dev.secondary)
                    .map_err(|e| Error::Config(format!("board {}: {e}", b.name)))?;
                let dd = DeviceTiming::default();
                let timing = DeviceTiming {
                    t1_ns: dev.t1_ns.unwrap_or(dd.t1_ns),
                    accept_ns: dev.accept_ns.unwrap_or(dd.accept_ns),
                    response_latency: us(
                        dev.response_latency_us,
                        dd.response_latency,
                        "response_latency_us",
                    )?,
                    holdoff_recovery_talk_ns: dev
                        .holdoff_recovery_talk_ns
                        .unwrap_or(dd.holdoff_recovery_talk_ns),
                    holdoff_recovery_listen_ns: dev
                        .holdoff_recovery_listen_ns
                        .unwrap_or(dd.holdoff_recovery_listen_ns),
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
}
