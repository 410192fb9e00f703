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
pub fn load(name_or_path: &str) -> Result<SimHost> {
    if BUILTIN.iter().any(|(n, _)| *n == name_or_path) {
        return builtin(name_or_path);
    }
    let path = std::path::Path::new(name_or_path);
    if path.exists() {
        let text = std::fs::read_to_string(path)?;
        return Config::parse(&text)
            .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?
            .build();
    }
    Err(Error::Config(format!(
        "unknown configuration {name_or_path:?}: not a built-in ({}) and no such file",
        builtin_names().join(", ")
    )))
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
}
