//! The command line of `gpib-diag trace` and its subcommands.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::BusArgs;
use crate::size::parse_size;

/// `trace`.
#[derive(Debug, Clone, Args)]
pub struct TraceArgs {
    /// What to do with traces.
    #[command(subcommand)]
    pub command: TraceCommand,
}

/// The `trace` subcommands.
#[derive(Debug, Clone, Subcommand)]
// Parsed once per run: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
pub enum TraceCommand {
    /// Run a workload on a configuration and write its trace: every backend call and,
    /// on the simulator, every byte on the bus with its handshake timing.
    Record(RecordArgs),
    /// Print a trace decoded like a bus analyzer: ATN UNL, ATN TAD 11, data bytes in hex
    /// and ASCII with END, SRQ edges, calls with their durations.
    Print(PrintArgs),
    /// Bytes/s per transfer, time per call, time in addressing, data and serial polls.
    Summary(SummaryArgs),
    /// Export the 16 bus lines as a waveform (VCD for GTKWave, PulseView and sigrok).
    Export(ExportArgs),
    /// Check the three-wire handshake (T1 settling, NRFD/NDAC order, response to ATN)
    /// of a trace or of a logic analyzer's VCD capture.
    Check(CheckArgs),
}

/// What `trace record` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TraceWorkload {
    /// Send `--command` (default `*IDN?`) and read the answer.
    Query,
    /// A timed read of `--size` bytes, as io-test does it (HP3565 or SCPI).
    Read,
    /// A timed write of `--size` bytes, as io-test does it, read back and checked.
    Write,
    /// An IEEE 488.2 block read: `--command` (default `BLOCK? <size>`), then the block.
    Block,
}

/// `trace record`.
#[derive(Debug, Clone, Args)]
pub struct RecordArgs {
    /// The trace file to write.
    #[arg(long, short, value_name = "FILE.trace")]
    pub output: PathBuf,
    /// What to run. Default: what the device answers: `query` (`*IDN?`, or
    /// `--command`) on a SCPI instrument, `read` (as io-test) on an HP3565.
    #[arg(long, value_enum)]
    pub workload: Option<TraceWorkload>,
    /// The instrument command of `query` and `block`.
    #[arg(long, value_name = "TEXT")]
    pub command: Option<String>,
    /// Bytes for `read`, `write` and `block` (suffixes as io-test's).
    #[arg(long, default_value = "4096", value_parser = parse_size)]
    pub size: u64,
    /// The instrument: its primary address, 0 to 30, or its name (a named device of
    /// the simulated configuration; on linux-gpib, a gpib.conf `device` section).
    /// Default: the first instrument.
    #[arg(long, value_name = "ADDR|NAME")]
    pub device: Option<crate::device_arg::DeviceArg>,
    /// Times to run the workload.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub repeat: u32,
    #[command(flatten)]
    pub bus: BusArgs,
}

/// Text or JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TraceFormat {
    /// For people.
    Text,
    /// One JSON document.
    Json,
}

/// Record kinds for `--kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// Command bytes (ATN).
    Command,
    /// Data bytes.
    Data,
    /// Serial poll status bytes.
    Poll,
    /// SRQ edges.
    Srq,
    /// REN and IFC.
    Line,
    /// Errors on the bus.
    Error,
    /// Backend calls.
    Call,
}

/// `trace print`.
#[derive(Debug, Clone, Args)]
pub struct PrintArgs {
    /// The trace file.
    pub file: PathBuf,
    /// Only what concerns this primary address (addressed, talking, listening, called).
    #[arg(long, value_name = "ADDR", value_parser = clap::value_parser!(u8).range(0..=30))]
    pub device: Option<u8>,
    /// Only these kinds (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub kind: Vec<Kind>,
    /// Only from this time on (`1.5ms`, `20us`, `0.3s`, `500ns`; a bare number is seconds).
    #[arg(long, value_parser = parse_time)]
    pub from: Option<u64>,
    /// Only up to this time.
    #[arg(long, value_parser = parse_time)]
    pub to: Option<u64>,
    /// Data bytes shown per transfer (0: all).
    #[arg(long, default_value_t = 64)]
    pub max_bytes: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TraceFormat::Text)]
    pub format: TraceFormat,
}

/// `trace summary`.
#[derive(Debug, Clone, Args)]
pub struct SummaryArgs {
    /// The trace file.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TraceFormat::Text)]
    pub format: TraceFormat,
    /// Data transfers listed (the longest first).
    #[arg(long, default_value_t = 10)]
    pub top: usize,
}

/// `trace export`.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// The trace file.
    pub file: PathBuf,
    /// Write a VCD (value change dump) here: 16 one-bit wires DIO1..DIO8, EOI, DAV, NRFD,
    /// NDAC, IFC, SRQ, ATN, REN, asserted = 0.
    #[arg(long, value_name = "OUT.vcd")]
    pub vcd: Option<PathBuf>,
    /// Write sigrok's own session format here (`.sr`: deflated raw samples, a small
    /// fraction of the VCD's size for long transfers; PulseView and `sigrok-cli -i`
    /// open it).
    #[arg(long, value_name = "OUT.sr")]
    pub sr: Option<PathBuf>,
    /// Time resolution in nanoseconds: the VCD's timescale, and the .sr's sample period
    /// (1, 10, 100 or 1000, the timescales VCD allows; 10 resolves an HS488 handshake,
    /// 100 a 1 MB/s one).
    #[arg(long, default_value_t = 10, value_parser = resolution)]
    pub resolution_ns: u64,
}

/// `trace check`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// A trace file, or a VCD (a logic analyzer's capture exported by sigrok or PulseView).
    pub file: PathBuf,
    /// Least T1 settling per byte, ns (IEEE 488.1: 350 at best, 500 NI's default, 2000
    /// safest).
    #[arg(long, default_value_t = 350)]
    pub t1_ns: u64,
    /// Least settling of the first byte after ATN changes, ns.
    #[arg(long, default_value_t = 2000)]
    pub first_t1_ns: u64,
    /// Longest response to ATN (T7), ns.
    #[arg(long, default_value_t = 200)]
    pub t7_ns: u64,
    /// Violations listed (all are counted).
    #[arg(long, default_value_t = 50)]
    pub max: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TraceFormat::Text)]
    pub format: TraceFormat,
}

/// A time: a number with `s`, `ms`, `us`, `µs` or `ns` (seconds without), in ns.
pub fn parse_time(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')
        })
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{text:?} is not a time (e.g. 1.5ms, 20us, 0.3s)"))?;
    let scale = match unit.trim() {
        "" | "s" => 1e9,
        "ms" => 1e6,
        "us" | "µs" => 1e3,
        "ns" => 1.0,
        u => {
            return Err(format!(
                "unknown time unit {u:?} in {text:?} (s, ms, us, ns)"
            ))
        }
    };
    let ns = v * scale;
    if !(0.0..=1.8e19).contains(&ns) {
        return Err(format!("{text:?} is out of range"));
    }
    Ok(ns as u64)
}

pub(crate) fn resolution(text: &str) -> std::result::Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n @ (1 | 10 | 100 | 1000)) => Ok(n),
        _ => Err(format!(
            "{text:?}: VCD timescales are 1, 10, 100 or 1000 ns"
        )),
    }
}
