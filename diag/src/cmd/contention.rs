//! `gpib-diag contention`: 1, 2, ... N devices active at once, each driving its own
//! instrument of one simulated host; per-device and aggregate throughput,
//! transaction latency, host CPU and bus utilisation against N, and the knee where
//! the host CPU or a bus saturates.
//!
//! On the simulator the devices are lanes of one thread, run in virtual-time order
//! (`SimHost::run_lanes`): the curve comes from the model, the same configuration gives
//! the same figures run after run, and a point costs no thread hand-offs. On
//! linux-gpib boards (`--backend linux-gpib --devices 0:11,0:12`), a Prologix adapter or
//! a VXI-11 gateway (`--backend vxi11 --host HOST --devices 11,22`) the curve is
//! measured: a thread per device, wall clock, and the machine's CPU from /proc/stat (or
//! the process's getrusage).

use std::fmt::Write as _;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use gpib::sim::config::SourceKind;
use gpib::sim::{Config, SimHost};
use gpib::{Address, Bus};
use serde::Serialize;

use crate::cli::{ContentionArgs, Format, Workload};
use crate::cpu::{self, CpuSnapshot};
use crate::error::{DiagError, Result};
use crate::export;
use crate::export::csv::Num;
use crate::export::table::{Align, Grid};
use crate::plot::contention::{contention_svg, KneeMark};
use crate::plot::Series;
use crate::record::{Backend, Clock};
use crate::stats;
use crate::target::{BusSpec, Target};

use analysis::{knee, knee_says, mean};
use load::point;
use render::{csv, svg, text};

mod analysis;
mod load;
mod render;

/// Rate per device below this share of one device's alone: past the knee.
const KNEE: f64 = 0.95;
/// A resource busier than this share is saturated.
const SATURATED: f64 = 0.95;
/// Most transactions a device makes per point (bounds the wall time of fast buses).
const MAX_TRANSACTIONS: usize = 200_000;

/// One point of the curve: `devices` active at once.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Point {
    /// Devices active.
    pub devices: usize,
    /// Bytes per second of all devices together.
    pub aggregate_bytes_per_second: f64,
    /// Bytes per second of each device, in the order they were made active:
    /// `per_device_bytes / per_device_seconds`.
    pub per_device_bytes_per_second: Vec<f64>,
    /// Bytes each device moved.
    pub per_device_bytes: Vec<u64>,
    /// Transactions each device made.
    pub per_device_transactions: Vec<u64>,
    /// Seconds each device was active (its clock: virtual on the simulator, else wall).
    pub per_device_seconds: Vec<f64>,
    /// Bytes sent and received on the network during the point, framing included
    /// (network backends).
    pub wire_bytes: Option<u64>,
    /// Transaction latency percentiles, seconds.
    pub latency_p50_s: f64,
    /// 90th percentile.
    pub latency_p90_s: f64,
    /// 99th percentile.
    pub latency_p99_s: f64,
    /// Host CPU busy, as a share of all its CPUs' time.
    pub cpu_utilisation: f64,
    /// Each board's bus busy, as a share of the time.
    pub bus_utilisation: Vec<(String, f64)>,
}

/// Where the per-device rate starts to fall, and why.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Knee {
    /// Devices active at the knee.
    pub devices: usize,
    /// "host CPU", a board's bus (by name), or "none" (the devices themselves).
    pub saturated: String,
    /// That resource's utilisation there.
    pub utilisation: f64,
    /// Per-device rate there, as a share of one device's alone.
    pub per_device_share: f64,
}

/// Where the devices are: a simulated host (the model's curves) or real boards.
enum Where {
    /// A simulated configuration, with its contention sources as asked.
    Sim(Box<Config>),
    /// linux-gpib boards, measured on the wall clock.
    LinuxGpib,
    /// A Prologix adapter or a VXI-11 gateway (board 0), measured on the wall clock:
    /// a connection a point, shared by the devices as a board is.
    Network {
        /// `--backend`.
        kind: Backend,
        /// `--host` or `--resource`.
        spec: BusSpec,
        /// Which protocol the connection speaks.
        backend: Backend,
    },
}

impl Where {
    /// The backend and clock of the figures.
    fn backend_and_clock(&self) -> (Backend, Clock) {
        match self {
            Where::Sim(_) => (Backend::Sim, Clock::Virtual),
            Where::LinuxGpib => (Backend::LinuxGpib, Clock::Wall),
            Where::Network { backend, .. } => (*backend, Clock::Wall),
        }
    }
}

/// The simulated configuration (a spec: `NAME|FILE[:options]`, what-ifs included) with
/// `--with`/`--without` applied.
fn sim_config(args: &ContentionArgs) -> Result<Config> {
    let mut c = crate::target::BusSpec::parse(&args.bus)?.config()?;
    for w in &args.without {
        let k: SourceKind = w
            .parse()
            .map_err(|e: gpib::Error| DiagError::Usage(e.to_string()))?;
        c.without_source(k);
    }
    for w in &args.with {
        let k: SourceKind = w
            .parse()
            .map_err(|e: gpib::Error| DiagError::Usage(e.to_string()))?;
        c.with_source(k, None)?;
    }
    Ok(c)
}

/// `--devices 0:11,1:5` (or `11,22`: board 0): (board index, address) pairs.
fn device_list(args: &ContentionArgs) -> Result<Vec<(usize, Address)>> {
    if args.devices.is_empty() {
        return Err(DiagError::Usage(
            "contention on hardware needs --devices BOARD:ADDR,... (e.g. --devices 0:11,0:12,1:5)"
                .into(),
        ));
    }
    args.devices
        .iter()
        .map(|d| {
            let bad = || {
                DiagError::Usage(format!(
                    "--devices {d:?}: expected BOARD:ADDR or ADDR, e.g. 0:11"
                ))
            };
            let (b, a) = d.split_once(':').unwrap_or(("0", d));
            let b: usize = b.trim().parse().ok().filter(|b| *b < 16).ok_or_else(bad)?;
            let a: u8 = a.trim().parse().map_err(|_| bad())?;
            Ok((b, Address::try_from(a)?))
        })
        .collect()
}

/// Where the devices are, which to make active (board index, address), and the run's
/// label.
type Placed = (Where, Vec<(usize, Address)>, String);

/// A Prologix adapter or VXI-11 gateway: where it is, checked by connecting once, and
/// the devices to make active (board 0).
fn network(args: &ContentionArgs, kind: Backend) -> Result<Placed> {
    let spec = BusSpec {
        config: String::new(),
        board: None,
        mounts: Vec::new(),
        host: args.host.clone(),
        resource: args.resource.clone(),
        sources: Vec::new(),
        faults: Vec::new(),
        edits: Vec::new(),
    };
    let target = Target::open(kind, &spec)?;
    let devices = match (args.devices.is_empty(), target.device) {
        (true, Some(d)) => vec![(0, d)],
        _ => device_list(args)?,
    };
    if let Some((b, a)) = devices.iter().find(|(b, _)| *b != 0) {
        return Err(DiagError::Usage(format!(
            "--devices {b}:{a}: a {} connection is one board, board 0",
            target.backend
        )));
    }
    let label = format!(
        "{} {}",
        target.label,
        devices
            .iter()
            .map(|(_, a)| a.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    Ok((
        Where::Network {
            kind,
            spec,
            backend: target.backend,
        },
        devices,
        label,
    ))
}

/// Runs the command.
pub fn run(args: &ContentionArgs) -> Result<()> {
    // A resource names its backend, as for the other commands.
    let kind = match (&args.resource, args.backend) {
        (Some(_), Backend::Sim | Backend::LinuxGpib) => Backend::Vxi11,
        (_, kind) => kind,
    };
    let network_given = args.host.is_some() || args.resource.is_some();
    if network_given && matches!(kind, Backend::Sim | Backend::LinuxGpib) {
        return Err(DiagError::Usage(
            "--host is for --backend prologix or vxi11 (or give --resource)".into(),
        ));
    }
    if kind != Backend::Sim && !(args.with.is_empty() && args.without.is_empty()) {
        return Err(DiagError::Usage(
            "--with/--without change a simulated host; on hardware change the machine itself \
             (or give them to `gpib-diag serve`)"
                .into(),
        ));
    }
    let (place, devices, label) = match kind {
        Backend::Sim => {
            if !args.devices.is_empty() {
                return Err(DiagError::Usage(
                    "--devices is for hardware; on the simulator every instrument of --bus takes part".into(),
                ));
            }
            let config = sim_config(args)?;
            let devices = instruments(&config, &args.bus, args.workload)?;
            (Where::Sim(Box::new(config)), devices, args.bus.clone())
        }
        Backend::LinuxGpib => (
            Where::LinuxGpib,
            device_list(args)?,
            format!("linux-gpib {}", args.devices.join(",")),
        ),
        Backend::Prologix | Backend::Vxi11 => network(args, kind)?,
        Backend::Hislip => return Err(crate::target::hislip_needs_resource()),
    };
    let n_max = args
        .max
        .map_or(devices.len(), |m| (m as usize).min(devices.len()));
    let span = Duration::try_from_secs_f64(args.seconds)
        .map_err(|_| DiagError::Usage(format!("--seconds {} is not a time", args.seconds)))?;
    if span.is_zero() {
        return Err(DiagError::Usage("--seconds must be more than 0".into()));
    }
    let size = usize::try_from(args.size)
        .ok()
        .filter(|&s| s <= 1 << 20)
        .ok_or_else(|| DiagError::Usage("--size: at most 1 MiB per write here".into()))?;
    let interval = match args.interval_ms {
        None => None,
        Some(ms) if ms.is_finite() && ms > 0.0 && ms <= 1e6 => {
            Some(Duration::from_secs_f64(ms / 1e3))
        }
        Some(ms) => {
            return Err(DiagError::Usage(format!(
                "--interval-ms {ms} is out of range: above 0, at most 1,000,000 (1000 s)"
            )))
        }
    };
    let points = (1..=n_max)
        .map(|n| {
            point(
                &place,
                &args.bus,
                &devices[..n],
                args.workload,
                size,
                span,
                interval,
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let knee = knee(&points);
    if let Some(path) = &args.plot {
        let svg = svg(&label, &points, knee.as_ref())?;
        std::fs::write(path, svg).map_err(|source| DiagError::Output {
            path: path.display().to_string(),
            source,
        })?;
    }
    let out = match args.out.format {
        Format::Text | Format::Markdown => text(&label, &points, knee.as_ref()),
        Format::Json => {
            let (backend, clock) = place.backend_and_clock();
            let doc = serde_json::json!({
                "tool": "gpib-diag", "command": "contention", "config": label,
                "backend": backend, "clock": clock.name(), "workload": args.workload,
                "seconds": args.seconds, "size": size, "points": points, "knee": knee,
            });
            serde_json::to_string_pretty(&doc).map_err(|e| DiagError::Usage(e.to_string()))? + "\n"
        }
        Format::Csv => csv(&points)?,
    };
    export::emit(&args.out.output, &out)
}

/// The configuration's instruments (discs left out; for queries, those that answer
/// `*IDN?`), board by board.
fn instruments(config: &Config, name: &str, workload: Workload) -> Result<Vec<(usize, Address)>> {
    let host = config.build_named(name)?;
    let mut out = Vec::new();
    for b in 0..host.board_names().len() {
        for (a, model, mount) in host.devices(b) {
            let silent = ["HP3565", "TERMINAL"]
                .iter()
                .any(|m| model.eq_ignore_ascii_case(m));
            if mount.is_none() && !(workload == Workload::Query && silent) {
                out.push((b, a));
            }
        }
    }
    if out.is_empty() {
        return Err(DiagError::Usage(format!("{name} has no instruments")));
    }
    Ok(out)
}
