//! Command-line arguments (clap derive): shared options flattened into each subcommand.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::device_arg::DeviceArg;
pub use crate::export::Format;
use crate::record::Backend;
use crate::size::parse_size;

mod backend;
mod format;
pub mod instrument;
mod plain;
pub mod trace;

/// Longest timeout the options take, in seconds (11.6 days): long enough for any
/// transfer an instrument holds at 10 B/s, short enough to stay far from overflow.
pub const MAX_TIMEOUT_S: f64 = 1e6;

/// A number of seconds from 0 to [`MAX_TIMEOUT_S`].
fn parse_seconds(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(0.0..=MAX_TIMEOUT_S).contains(&v) {
        return Err(format!(
            "{text} s is out of range: give 0 (no timeout) to {MAX_TIMEOUT_S:.0} seconds"
        ));
    }
    Ok(v)
}

/// The longest run `contention --seconds` takes (11.6 days, as for timeouts).
pub const MAX_RUN_S: f64 = 1e6;

/// A number of seconds above 0, at most [`MAX_RUN_S`]; `what` says what it is the
/// length of in the message for one out of range.
fn positive_seconds(text: &str, what: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(v > 0.0 && v <= MAX_RUN_S) {
        return Err(format!(
            "{text} s is out of range: give {what} more than 0 and at most {MAX_RUN_S:.0} \
             seconds"
        ));
    }
    Ok(v)
}

/// The length of a run (`contention --seconds`).
fn parse_run_seconds(text: &str) -> Result<f64, String> {
    positive_seconds(text, "the length of each point's run:")
}

/// The length of `discover --idn`'s phase.
fn parse_idn_deadline(text: &str) -> Result<f64, String> {
    positive_seconds(text, "the time all the *IDN? queries may take:")
}

/// A fraction strictly between 0 and 1.
fn parse_fraction(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if !(v > 0.0 && v < 1.0) {
        return Err(format!(
            "{text} is out of range: give a fraction between 0 and 1, e.g. 0.05 for 5 %"
        ));
    }
    Ok(v)
}

/// Time GPIB transfers like io_test, measure their CPU cost, compare bus configurations.
///
/// Runs on the simulated bus by default (virtual time: a 53 s transfer returns at once
/// and reports 53 s), or on real hardware with `--backend linux-gpib`.
#[derive(Debug, Parser)]
#[command(name = "gpib-diag", version = version(), about, long_about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Time one read and one write of SIZE bytes, like the 1988 HP 9000/350 io_test.
    ///
    /// The io_test program of the 1988 HP 9000/350 measurement, its seven output lines
    /// kept as they were (the story: docs/hp9000-350-1988.md).
    IoTest(IoTestArgs),
    /// Throughput, latency and CPU cost as a function of transfer size.
    Sweep(SweepArgs),
    /// The same measurement under several configurations, side by side; or two saved
    /// runs (before and after a change), with confidence intervals and significance.
    Compare(CompareArgs),
    /// Find listeners on a board and ask each `*IDN?`.
    Scan(ScanArgs),
    /// Find VXI-11 instruments and LAN/GPIB gateways on the network, as `lxi discover`
    /// and the VISA finders do: a portmapper GETPORT call broadcast over UDP (port 111);
    /// prints one resource string for each host that answers.
    Discover(DiscoverArgs),
    /// Throughput, latency and CPU against the number of concurrently active devices,
    /// and the knee where the bus or the host CPU saturates (simulator, linux-gpib,
    /// Prologix, VXI-11).
    Contention(ContentionArgs),
    /// Bus traces: record a workload, print it like a bus analyzer, summarise it, export
    /// it as a waveform (VCD, sigrok), check its handshake.
    Trace(trace::TraceArgs),
    /// Probe a board and name what slows it down: listeners, line states, stuck SRQ,
    /// small and large transfers each way against the board's baseline, addressing
    /// overhead and CPU cost per call, and (simulator) A/B runs with each contention
    /// source switched off.
    ///
    /// Exit status: 0 when nothing was found, 3 when a problem was found (1 and 2 are
    /// errors, as for every command).
    Doctor(DoctorArgs),
    /// Measure a bus on any backend (per-call and per-byte cost each way, CPU per byte,
    /// response latency, the board's transfer mode as observed) and write a simulator
    /// configuration of it, checked against sizes the fit did not use.
    ///
    /// The configuration goes to --output (default: standard output, the report to
    /// standard error); io-test, sweep, compare, contention and doctor take it as
    /// --bus FILE, and what they print then is the model's prediction. Exit status 3
    /// when a held-out size is predicted more than 5 % off.
    Calibrate(CalibrateArgs),
    /// Serve boards on the network, as a VXI-11 and HiSLIP LAN/GPIB gateway and a
    /// Prologix GPIB-ETHERNET adapter, until Ctrl-C: simulated ones, linux-gpib's, or a
    /// relay.
    Serve(ServeArgs),
    /// Send TEXT to an instrument and print its answer (any resource string).
    Query(instrument::QueryArgs),
    /// Send TEXT to an instrument.
    Write(instrument::WriteArgs),
    /// Read an answer from an instrument: text, or a block into a file.
    Read(instrument::ReadArgs),
    /// The resources reachable: every board's instruments, as VISA names them.
    List(instrument::ListArgs),
    /// An interactive session with instruments (like ibterm and pyvisa-shell): queries,
    /// writes, reads, serial poll, clear, trigger, timeout and EOS, with line editing.
    Shell(instrument::ShellArgs),
    /// Print a shell completion script to standard output.
    ///
    /// E.g. `gpib-diag completions bash > ~/.local/share/bash-completion/completions/gpib-diag`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff) to standard output.
    ///
    /// E.g. `gpib-diag manpage > ~/.local/share/man/man1/gpib-diag.1`.
    Manpage,
}

/// The optional features compiled into this build, in `Cargo.toml`'s order.
pub const FEATURES: &[(&str, bool)] = &[
    ("linux-gpib", cfg!(feature = "linux-gpib")),
    ("prologix-serial", cfg!(feature = "prologix-serial")),
];

/// `--version`'s text after the name: `0.1.0 (features: linux-gpib)`, or
/// `0.1.0 (features: none)`.
pub fn version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| {
        let on: Vec<&str> = FEATURES
            .iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| *name)
            .collect();
        let list = if on.is_empty() {
            "none".to_string()
        } else {
            on.join(", ")
        };
        format!("{} (features: {list})", env!("CARGO_PKG_VERSION"))
    })
}

/// `completions`.
#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to write the completion script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// How the instrument is driven for a timed transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    /// HP3565 when the device is one, else SCPI.
    Auto,
    /// The HP3565's commands, as the 1988 io_test program sends them: `NEW`, `RBLD`,
    /// `WBLD ...,#I`.
    Hp3565,
    /// IEEE 488.2 blocks: `BLOCK? <n>` to read, `DATA #<n><len>...` to write.
    Scpi,
    /// No instrument commands; each transfer takes exactly 1 µs a byte (tests).
    #[value(hide = true)]
    Mock,
}

/// Where the bus is and which device to use.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Bus")]
pub struct BusArgs {
    /// Backend.
    #[arg(long, value_enum, default_value_t = Backend::Sim)]
    pub backend: Backend,
    /// Simulated configuration: a built-in name (hp9000-350, bench) or a TOML file.
    #[arg(long = "bus", value_name = "NAME|FILE", default_value = "hp9000-350")]
    pub bus: String,
    /// Board: a name or index in the simulated configuration; for linux-gpib, a board
    /// index or a name from /etc/gpib.conf. Default: the configuration's first board.
    #[arg(long, value_name = "NAME|INDEX")]
    pub board: Option<String>,
    /// Mount a disc for this run (simulator).
    #[arg(long, value_name = "MOUNTPOINT")]
    pub mount: Vec<String>,
    /// Unmount a disc for this run (simulator); `--unmount /disc` is test #2 of
    /// the 1988 HP 9000/350 measurement.
    #[arg(long, value_name = "MOUNTPOINT")]
    pub unmount: Vec<String>,
    /// Add a typical contention source for this run (simulator): mounted-disc,
    /// slow-listener, nrfd-holder, srq-storm, every-call-addressing, busy-disc,
    /// long-cable, pio. Applied in the order given, after --without.
    #[arg(long = "with", value_name = "SOURCE")]
    pub with: Vec<String>,
    /// Switch off every contention source of this kind for this run (simulator), e.g.
    /// `--without mounted-disc`.
    #[arg(long = "without", value_name = "SOURCE")]
    pub without: Vec<String>,
    /// Inject a fault into a device (simulator): `ADDR=KIND`, KIND one of absent,
    /// never-talks, stops-after:N, srq-stuck, holds-nrfd, second-talker, drops-eoi.
    #[arg(long = "fault", value_name = "ADDR=KIND")]
    pub fault: Vec<String>,
    /// Network backends: the adapter or gateway, `HOST[:PORT]` (Prologix: port 1234 by
    /// default; VXI-11: a given port is the core channel's, else the portmapper is
    /// asked).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub host: Option<String>,
    /// Network backends: a VISA resource instead of --backend/--host:
    /// `PRLGX-TCPIP::HOST::PORT::INTFC`, `PRLGX-ASRL::/dev/ttyUSB0::INTFC`,
    /// `TCPIP::HOST[,PORT]::gpib0,N::INSTR` (which also gives the device).
    #[arg(long, value_name = "RESOURCE")]
    pub resource: Option<String>,
}

/// Repeats, statistics and output.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Measurement")]
pub struct RunArgs {
    /// The instrument: its primary address, 0 to 30, or its name (a named device of
    /// the simulated configuration; on linux-gpib, a gpib.conf `device` section).
    /// Default: the first instrument on the board.
    #[arg(long, value_name = "ADDR|NAME")]
    pub device: Option<DeviceArg>,
    /// How to drive the instrument.
    #[arg(long, value_enum, default_value_t = Protocol::Auto)]
    pub protocol: Protocol,
    /// Measured runs.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub repeat: u32,
    /// Unmeasured runs first (at most 100,000).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub warmup: u32,
    /// Keep repeating (up to --max-repeat) until the 95 % confidence interval of the mean
    /// is narrower than this fraction of it (netperf's -I), e.g. 0.05; between 0 and 1.
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction, allow_negative_numbers = true)]
    pub confidence: Option<f64>,
    /// Most runs --confidence may take (netperf's -i; at most 100,000).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_repeat: u32,
    /// Timeout per I/O call in seconds, 0 (none) to 1,000,000. Default: the board's,
    /// raised to 10 s + 1 s per 10 kB of the largest transfer (a board with none keeps
    /// none).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub timeout: Option<f64>,
}

/// Output options.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the output here (`-` = standard output).
    #[arg(long, short, value_name = "FILE", default_value = "-")]
    pub output: String,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Text format: add statistics and CPU cost after io-test's seven lines.
    #[arg(long, short)]
    pub verbose: bool,
}

/// `io-test`.
#[derive(Debug, Clone, Args)]
pub struct IoTestArgs {
    /// Transfer size in bytes (suffixes: K = 1024, M = 1024², kB = 1000, MB = 1000²;
    /// `k` and `KB`, read both ways, are refused).
    #[arg(value_parser = parse_size)]
    pub size: u64,
    #[command(flatten)]
    pub bus: BusArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// `sweep`.
#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    /// Smallest size.
    #[arg(long, default_value = "1", value_parser = parse_size)]
    pub from: u64,
    /// Largest size.
    #[arg(long, default_value = "16M", value_parser = parse_size)]
    pub to: u64,
    /// Size ratio between steps (2 or 4).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(2..=16))]
    pub factor: u64,
    /// Draw throughput and service demand against size into this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub bus: BusArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// `compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// SIZE: the transfer size in bytes to measure each configuration at. Or BEFORE.json
    /// AFTER.json: two runs saved with `--format json` by io-test, sweep, contention or
    /// doctor (measure, change the machine, measure again), compared figure by figure:
    /// the rates, their ratio with its 95 % confidence interval, and whether the
    /// difference is significant (Welch's t test; save runs with --repeat N for it).
    #[arg(required = true, num_args = 1..=2, value_name = "SIZE | BEFORE.json AFTER.json")]
    pub what: Vec<String>,
    /// A configuration: NAME|FILE, optionally with `:key=value,...` where key is mount,
    /// unmount, board, with, without or fault (e.g. `hp9000-350:unmount=/disc`). The
    /// first is the reference. Given once (default: hp9000-350), it is compared with
    /// itself with each of its contention sources switched off in turn.
    #[arg(long = "bus", value_name = "SPEC", num_args = 1)]
    pub buses: Vec<String>,
    /// Backend.
    #[arg(long, value_enum, default_value_t = Backend::Sim)]
    pub backend: Backend,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// `scan`.
#[derive(Debug, Clone, Args)]
pub struct ScanArgs {
    #[command(flatten)]
    pub bus: BusArgs,
    /// Seconds to wait for each `*IDN?` answer (0 to 1,000,000).
    #[arg(long, default_value_t = 0.5, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub idn_timeout: f64,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// `discover`.
#[derive(Debug, Clone, Args)]
pub struct DiscoverArgs {
    /// Where the call goes: a broadcast address (255.255.255.255 reaches the network of
    /// the default route; 192.168.1.255 one network) or one host, with `:PORT` for a
    /// portmapper elsewhere than 111; give it again (or a list) for several networks.
    #[arg(
        long,
        value_name = "ADDR[:PORT]",
        value_delimiter = ',',
        default_value = "255.255.255.255",
        value_parser = parse_portmapper
    )]
    pub broadcast: Vec<std::net::SocketAddr>,
    /// Seconds to wait for answers (0 to 1,000,000).
    #[arg(long, default_value_t = 1.0, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub timeout: f64,
    /// Ask each host's `inst0` `*IDN?` and print the answer after its resource string
    /// (32 hosts at a time, each query waiting up to 2 s).
    #[arg(long)]
    pub idn: bool,
    /// Seconds the whole `--idn` phase may take (more than 0, at most 1,000,000): a host not answered
    /// by then is shown as such.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = parse_idn_deadline, allow_negative_numbers = true)]
    pub idn_deadline: f64,
}

/// `ADDR` (port 111) or `ADDR:PORT`, IPv4 or `[IPv6]:PORT`.
fn parse_portmapper(text: &str) -> Result<std::net::SocketAddr, String> {
    let t = text.trim();
    if let Ok(ip) = t.parse::<std::net::IpAddr>() {
        return Ok(std::net::SocketAddr::new(ip, 111));
    }
    let at: std::net::SocketAddr = t.parse().map_err(|_| {
        format!(
            "{text:?} is no address: give ADDR or ADDR:PORT, e.g. 192.168.1.255 or 127.0.0.1:40111"
        )
    })?;
    if at.port() == 0 {
        return Err(format!(
            "{at}: port 0 is no port the call can be sent to: give the portmapper's \
             (111, the default, or e.g. 127.0.0.1:40111)"
        ));
    }
    Ok(at)
}

/// What each active device does in a contention run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// Writes of `--size` bytes (any listener takes them).
    Write,
    /// `*IDN?` queries (SCPI instruments).
    Query,
}

/// `contention`.
#[derive(Debug, Clone, Args)]
pub struct ContentionArgs {
    /// Simulated configuration: a built-in name (vax-780-terminals, bench, hp9000-350)
    /// or a TOML file. Its instruments (discs left out), board by board, are the
    /// devices made active one more at a time.
    #[arg(
        long = "bus",
        value_name = "NAME|FILE",
        default_value = "vax-780-terminals"
    )]
    pub bus: String,
    /// Most devices active at once (default: every instrument of the configuration).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=480))]
    pub max: Option<u32>,
    /// What each device does.
    #[arg(long, value_enum, default_value_t = Workload::Write)]
    pub workload: Workload,
    /// Bytes per write.
    #[arg(long, default_value = "35", value_parser = parse_size)]
    pub size: u64,
    /// Seconds each point of the curve runs (virtual on the simulator), more than 0 and
    /// at most 1,000,000.
    #[arg(long, default_value_t = 20.0, value_parser = parse_run_seconds, allow_negative_numbers = true)]
    pub seconds: f64,
    /// Draw throughput (aggregate, per device) and utilisation (host CPU, busiest bus)
    /// against the devices active, with the knee marked, into this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Backend: sim (the model's curves, the same every run), or measured on the wall
    /// clock with the machine's CPU from /proc/stat: linux-gpib boards, a Prologix
    /// adapter or a VXI-11 gateway (`--host`, or `--resource`).
    #[arg(long, value_enum, default_value_t = Backend::Sim)]
    pub backend: Backend,
    /// Prologix and VXI-11: the adapter or gateway, `HOST[:PORT]` (as io-test's).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub host: Option<String>,
    /// Prologix and VXI-11: a VISA resource instead of --backend/--host (as io-test's);
    /// a device it names is the one made active when --devices is not given.
    #[arg(long, value_name = "RESOURCE")]
    pub resource: Option<String>,
    /// Each device starts one transaction every this many milliseconds (a paced
    /// acquisition loop polling its instruments); default: back to back.
    #[arg(long, value_name = "MS")]
    pub interval_ms: Option<f64>,
    /// Hardware and network backends: the devices to make active, in order, as
    /// `BOARD:ADDR` (linux-gpib's board index; a Prologix adapter or VXI-11 gateway is
    /// board 0, and `ADDR` alone means board 0), e.g. `--devices 0:11,0:12,1:5`.
    #[arg(long, value_delimiter = ',', value_name = "[BOARD:]ADDR")]
    pub devices: Vec<String>,
    /// Simulator: add a typical contention source (as io-test's --with).
    #[arg(long = "with", value_name = "SOURCE")]
    pub with: Vec<String>,
    /// Simulator: switch a contention source off (as io-test's --without).
    #[arg(long = "without", value_name = "SOURCE")]
    pub without: Vec<String>,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// What `doctor` and `calibrate` probe: the bus, the instrument, and the sizes swept
/// within a budget (under the help heading "Probe", after "Bus").
#[derive(Debug, Clone, Args)]
pub struct ProbeArgs {
    #[command(flatten)]
    pub bus: BusArgs,
    /// The instrument: its primary address, 0 to 30, or its name (simulator: a named
    /// device; linux-gpib: a gpib.conf `device` section). Default: the first
    /// instrument on the board, or the first listener found.
    #[arg(long, value_name = "ADDR|NAME", help_heading = "Probe")]
    pub device: Option<DeviceArg>,
    /// How to drive the instrument.
    #[arg(long, value_enum, default_value_t = Protocol::Auto, help_heading = "Probe")]
    pub protocol: Protocol,
    /// Bytes of the smallest transfer swept (one call's worth of a short message).
    #[arg(long, default_value = "16", value_parser = parse_size, help_heading = "Probe")]
    pub small: u64,
    /// Bytes of the largest transfer (default: as large as the budget allows, at most
    /// 64K).
    #[arg(long, value_parser = parse_size, help_heading = "Probe")]
    pub large: Option<u64>,
    /// Seconds of bus time the measurement may take (wall time on hardware, modelled
    /// time on the simulator); the sizes stop where the next would pass it.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 30.0,
        help_heading = "Probe"
    )]
    pub budget: f64,
}

/// `doctor`.
#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub probe: ProbeArgs,
    /// The rate this board should reach, B/s (hardware: what to compare with; the
    /// simulator computes it with every contention source switched off).
    #[arg(long, value_name = "B/S", help_heading = "Doctor")]
    pub baseline: Option<f64>,
    /// A contention source counts when switching it off makes some transfer at least
    /// this much faster.
    #[arg(long, default_value_t = 1.1, help_heading = "Doctor")]
    pub threshold: f64,
    /// The bytes your program asks for in each read call (ibrd's count, VISA's
    /// chunk_size, a VXI-11 requestSize): a message is read in calls of this size and
    /// in one call, alternately, and the difference tested.
    #[arg(long, value_name = "BYTES", value_parser = parse_size, help_heading = "Doctor")]
    pub read_size: Option<u64>,
    /// Your program's automatic serial polling (linux-gpib's IbcAUTOPOLL): the board is
    /// set so before the probe, as your program sets it (linux-gpib's library opens a
    /// board with it off), and the doctor then tries the other.
    #[arg(long, value_name = "on|off", value_parser = parse_on_off, help_heading = "Doctor")]
    pub autopoll: Option<bool>,
    /// Other devices on the same board to read and write at the probed device's
    /// largest size (addresses or names, comma-separated): the board's fastest device
    /// as a reference, which tells a slow device from a slow board, cable or host.
    #[arg(
        long,
        value_name = "ADDR|NAME,...",
        value_delimiter = ',',
        help_heading = "Doctor"
    )]
    pub reference: Vec<DeviceArg>,
    /// Timeout per I/O call in seconds, 0 (none) to 1,000,000. Default: the board's,
    /// raised to 10 s + 1 s per 10 kB of the largest transfer (a board with none keeps
    /// none). A device that never ends its answers costs this at each read.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, allow_negative_numbers = true, help_heading = "Doctor")]
    pub timeout: Option<f64>,
    /// Output format: text or json.
    #[arg(long, value_enum, default_value_t = Format::Text, help_heading = "Doctor")]
    pub format: Format,
}

/// `calibrate`.
#[derive(Debug, Clone, Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub probe: ProbeArgs,
    /// Where the configuration goes (`-`: standard output).
    #[arg(
        short,
        long,
        value_name = "FILE",
        default_value = "-",
        help_heading = "Calibrate"
    )]
    pub output: String,
    /// The report: text or json.
    #[arg(long, value_enum, default_value_t = Format::Text, help_heading = "Calibrate")]
    pub format: Format,
}

/// `serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// What is served: the simulator, linux-gpib's boards, or a relay of a Prologix
    /// adapter or a VXI-11 gateway at --host.
    #[arg(long, value_enum, default_value_t = Backend::Sim)]
    pub backend: Backend,
    /// Simulated configuration: a built-in name (bench, hp9000-350) or a TOML file.
    #[arg(long = "bus", value_name = "NAME|FILE", default_value = "bench")]
    pub bus: String,
    /// A board to serve; give it again (or a list, 0,1) for several, served as gpib0,
    /// gpib1, ... in the order given. Simulator: a name or index in the configuration
    /// (default: its first board); linux-gpib: the board's minor number (default 0);
    /// vxi11: the gateway's interface (default 0).
    #[arg(long, value_name = "NAME|INDEX", value_delimiter = ',')]
    pub board: Vec<String>,
    /// The adapter or gateway relayed (--backend prologix|vxi11): `HOST` or `HOST:PORT`.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub host: Option<String>,
    /// Address to listen on (loopback unless told otherwise; 0.0.0.0 for every
    /// interface).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Serve only clients in this network (CIDR: 192.168.1.0/24, or one address);
    /// give it again for several. Others have their connection closed at once.
    /// Default: every client that reaches --bind.
    #[arg(long, value_name = "NETWORK", value_delimiter = ',')]
    pub allow: Vec<gpib::serve::Network>,
    /// Prologix port of the first board (0: any free port); each further board is an
    /// adapter of its own on the port after (1235, ...), `prologix1=` in the first line.
    #[arg(long, default_value_t = 1234)]
    pub port: u16,
    /// VXI-11 core channel port (0: any free port).
    #[arg(long, default_value_t = 0)]
    pub vxi11_port: u16,
    /// VXI-11 abort channel port (0: any free port).
    #[arg(long, default_value_t = 0)]
    pub abort_port: u16,
    /// Portmapper port, TCP and UDP (default 111, the standard one, where discovery
    /// broadcasts; binding it needs root). When the default cannot be bound the server
    /// runs without it, and says so (give clients the core port); a port given that
    /// cannot be bound is an error.
    #[arg(long, value_name = "PORT")]
    pub portmap_port: Option<u16>,
    /// No portmapper at all.
    #[arg(long)]
    pub no_portmap: bool,
    /// No Prologix service.
    #[arg(long)]
    pub no_prologix: bool,
    /// No VXI-11 service.
    #[arg(long)]
    pub no_vxi11: bool,
    /// HiSLIP port (default 4880, the standard one; 0: any free port). Clients open
    /// TCPIP::HOST::hislip0::INSTR (the default device), or
    /// TCPIP::HOST::hislip0,PORT::INSTR on another port. When the default is taken the
    /// server runs without HiSLIP, and says so; a port given that is taken is an error.
    #[arg(long, value_name = "PORT")]
    pub hislip_port: Option<u16>,
    /// No HiSLIP service.
    #[arg(long)]
    pub no_hislip: bool,
    /// Most connections at once (more are refused).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    pub max_connections: u64,
    /// Close a connection silent for this many seconds (default, or 0: never; TCP
    /// keepalive reaps dead peers). A request (a Prologix line, an RPC record) must
    /// arrive whole within this, or 60 s, of its first byte, whichever is shorter.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub idle_timeout: Option<f64>,
    /// The device `inst0` names, and the Prologix address at connection.
    #[arg(long, value_name = "ADDR", value_parser = clap::value_parser!(u8).range(0..=30))]
    pub default_device: Option<u8>,
    /// Real time: each simulated call takes its modelled duration of wall time
    /// (default: virtual time, each call returns at once).
    #[arg(long)]
    pub realtime: bool,
    /// Print each request on stderr, one line per call: the client, what it sent
    /// (the procedure or command, the device, the bytes), what it got back, and the
    /// duration on the bus's clock (modelled time on the simulator).
    #[arg(long)]
    pub trace: bool,
}

/// `--budget SECONDS` as a duration: a number of seconds above 0.
pub fn budget(seconds: f64) -> Result<std::time::Duration, crate::error::DiagError> {
    std::time::Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|b| !b.is_zero())
        .ok_or_else(|| {
            crate::error::DiagError::Usage(format!(
                "--budget {seconds} must be a number of seconds above 0"
            ))
        })
}

/// `on` or `off`.
fn parse_on_off(s: &str) -> std::result::Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("{s:?}: say on or off")),
    }
}
