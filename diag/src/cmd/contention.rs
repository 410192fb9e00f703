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
    export::emit(&args.out, &out)
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

/// What one device did: bytes moved, its time, each transaction's latency.
struct Stream {
    bytes: u64,
    elapsed: Duration,
    latencies: Vec<f64>,
}

/// One device's workload, one bus call at a time: a paced wait or a transaction.
struct DeviceLoop {
    bus: Bus,
    dev: gpib::Device,
    workload: Workload,
    data: Vec<u8>,
    span: Duration,
    interval: Option<Duration>,
    t0: Duration,
    /// The lane's clock after its last step: its clock is readable only while it runs
    /// (after `run_lanes` the thread's own clock answers `now()`).
    end: Duration,
    /// The last step waited for a paced transaction: this one makes it.
    waited: bool,
    /// Network backends: end with a round trip (the service request line's state), so
    /// writes an adapter has taken but not yet made (a Prologix adapter answers nothing
    /// to them) are done before the device's time stops.
    sync_at_end: bool,
    stream: Stream,
    error: Option<gpib::Error>,
}

impl DeviceLoop {
    fn new(
        bus: Bus,
        address: Address,
        workload: Workload,
        size: usize,
        span: Duration,
        interval: Option<Duration>,
    ) -> gpib::Result<Self> {
        let dev = bus.device(address)?;
        let t0 = bus.now();
        // Network backends count their bytes on the wire; the others' calls return
        // once the bytes are moved.
        let sync_at_end = bus.wire_stats().is_some();
        Ok(Self {
            bus,
            dev,
            workload,
            data: vec![b'x'; size],
            span,
            interval,
            t0,
            end: t0,
            waited: false,
            sync_at_end,
            stream: Stream {
                bytes: 0,
                elapsed: Duration::ZERO,
                latencies: Vec::new(),
            },
            error: None,
        })
    }

    /// One bus call: the wait until the next paced transaction is due, or the next
    /// transaction; `Break` once the span is over, the transaction limit reached or a
    /// call failed.
    fn step(&mut self) -> ControlFlow<()> {
        let flow = self.step_once();
        self.end = self.bus.now();
        flow
    }

    fn step_once(&mut self) -> ControlFlow<()> {
        let now = self.bus.now();
        let done = self.stream.latencies.len();
        let waited = std::mem::take(&mut self.waited);
        if !waited && (now.saturating_sub(self.t0) >= self.span || done >= MAX_TRANSACTIONS) {
            if self.sync_at_end {
                match self.bus.srq() {
                    Err(e) if e.kind() != gpib::ErrorKind::Unsupported => self.error = Some(e),
                    _ => {}
                }
            }
            return ControlFlow::Break(());
        }
        if let (Some(every), false) = (self.interval, waited) {
            // Paced: transaction k starts at t0 + k x interval, or at once when the
            // device is behind.
            let k = u32::try_from(done).unwrap_or(u32::MAX);
            let due = self.t0.saturating_add(every.saturating_mul(k));
            if due > now {
                self.bus.delay(due - now);
                self.waited = true;
                return ControlFlow::Continue(());
            }
        }
        let moved = match self.workload {
            Workload::Write => self.dev.write(&self.data).map(|()| self.data.len()),
            Workload::Query => self.dev.query("*IDN?").map(|a| a.len() + 1),
        };
        match moved {
            Ok(n) => {
                self.stream.bytes += n as u64;
                let latency = self.bus.now().saturating_sub(now);
                self.stream.latencies.push(latency.as_secs_f64());
                ControlFlow::Continue(())
            }
            Err(e) => {
                self.error = Some(e);
                ControlFlow::Break(())
            }
        }
    }

    /// What the device did, or the error that stopped it.
    fn finish(mut self) -> gpib::Result<Stream> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.stream.elapsed = self.end.saturating_sub(self.t0);
        Ok(self.stream)
    }
}

/// Opens board `index` of `host` (simulator), linux-gpib board `index`, or a new
/// connection to the adapter or gateway (board 0).
fn open_board(place: &Where, host: Option<&SimHost>, index: usize) -> Result<Bus> {
    match (host, place) {
        (Some(h), _) => Ok(Bus::new(h.board(index)?)),
        (None, Where::Network { kind, spec, .. }) => Ok(Target::open(*kind, spec)?.bus),
        (None, _) => open_linux_gpib(index),
    }
}

#[cfg(feature = "linux-gpib")]
fn open_linux_gpib(index: usize) -> Result<Bus> {
    let i = i32::try_from(index).map_err(|_| DiagError::Usage(format!("no board {index}")))?;
    Ok(Bus::new(
        gpib::backend::linux_gpib::LinuxGpibBoard::open_index(i)?,
    ))
}

#[cfg(not(feature = "linux-gpib"))]
fn open_linux_gpib(_index: usize) -> Result<Bus> {
    Err(DiagError::NoLinuxGpib)
}

fn point(
    place: &Where,
    name: &str,
    devices: &[(usize, Address)],
    workload: Workload,
    size: usize,
    span: Duration,
    interval: Option<Duration>,
) -> Result<Point> {
    let host = match place {
        Where::Sim(config) => Some(config.build_named(name)?),
        Where::LinuxGpib | Where::Network { .. } => None,
    };
    let start_cpu = host.as_ref().map(SimHost::cpu);
    let cpu0 = CpuSnapshot::take_before();
    let wall0 = Instant::now();
    // One Bus per board, shared by its devices (a linux-gpib board opens once).
    let mut buses: Vec<(usize, Bus)> = Vec::new();
    let mut loops = Vec::new();
    for &(board, address) in devices {
        let bus = match buses.iter().find(|(b, _)| *b == board) {
            Some((_, bus)) => bus.clone(),
            None => {
                let bus = open_board(place, host.as_ref(), board)?;
                buses.push((board, bus.clone()));
                bus
            }
        };
        loops.push(DeviceLoop::new(
            bus, address, workload, size, span, interval,
        )?);
    }
    let wire0: Vec<_> = buses.iter().map(|(_, b)| b.wire_stats()).collect();
    let streams = match &host {
        // The simulator: every device a lane of this thread, the earliest first: the
        // order participant threads would take turns in, without their hand-offs.
        Some(host) => {
            host.run_lanes(&mut loops, DeviceLoop::step);
            loops
                .into_iter()
                .map(DeviceLoop::finish)
                .collect::<gpib::Result<Vec<_>>>()?
        }
        // Hardware and network: a thread per device, in wall time.
        None => {
            let threads: Vec<_> = loops
                .into_iter()
                .map(|mut l| {
                    std::thread::spawn(move || {
                        while l.step().is_continue() {}
                        l.finish()
                    })
                })
                .collect();
            let mut streams = Vec::new();
            for t in threads {
                let s = t
                    .join()
                    .map_err(|_| DiagError::Usage("a device's thread panicked".into()))??;
                streams.push(s);
            }
            streams
        }
    };
    // Utilisation over the time the devices were active (each stops after its last
    // transaction past the span).
    let secs = streams
        .iter()
        .map(|s| s.elapsed.as_secs_f64())
        .fold(span.as_secs_f64(), f64::max);
    let rates: Vec<f64> = streams
        .iter()
        .map(|s| s.bytes as f64 / s.elapsed.as_secs_f64().max(1e-12))
        .collect();
    // Bytes on the wire, both ways, over every connection (network backends).
    let wire_bytes = buses
        .iter()
        .zip(&wire0)
        .map(|((_, b), w0)| {
            let (w0, w1) = ((*w0)?, b.wire_stats()?);
            let total = |w: gpib::WireStats| w.bytes_sent.saturating_add(w.bytes_received);
            Some(total(w1).saturating_sub(total(w0)))
        })
        .try_fold(0u64, |sum, w| w.map(|w| sum.saturating_add(w)));
    let mut lat: Vec<f64> = streams
        .iter()
        .flat_map(|s| s.latencies.iter().copied())
        .collect();
    lat.sort_by(f64::total_cmp);
    let pct = |p: f64| stats::percentile_sorted(&lat, p);
    let mut boards: Vec<usize> = devices.iter().map(|(b, _)| *b).collect();
    boards.dedup();
    let (cpu_utilisation, bus_utilisation) = match &host {
        Some(host) => {
            let names = host.board_names();
            let busy = host.cpu() - start_cpu.unwrap_or_default();
            (
                busy.as_secs_f64() / (secs * host.cpu_count() as f64),
                boards
                    .into_iter()
                    .map(|b| (names[b].clone(), host.bus_busy(b).as_secs_f64() / secs))
                    .collect(),
            )
        }
        None => {
            // Hardware: the machine's CPU from /proc/stat (all modes but idle and
            // iowait), else this process's user + system time; bus time is not known.
            let usage = cpu::usage_between(&cpu0, &CpuSnapshot::take(), wall0.elapsed());
            let cpus = std::thread::available_parallelism().map_or(1, usize::from) as f64;
            let share = match usage.machine {
                Some(m) => m.user + m.system + m.irq + m.softirq,
                None => {
                    (usage.process_user_s + usage.process_system_s)
                        / (wall0.elapsed().as_secs_f64().max(1e-9) * cpus)
                }
            };
            (share, Vec::new())
        }
    };
    Ok(Point {
        devices: devices.len(),
        aggregate_bytes_per_second: rates.iter().sum(),
        per_device_bytes_per_second: rates,
        per_device_bytes: streams.iter().map(|s| s.bytes).collect(),
        per_device_transactions: streams.iter().map(|s| s.latencies.len() as u64).collect(),
        per_device_seconds: streams.iter().map(|s| s.elapsed.as_secs_f64()).collect(),
        wire_bytes,
        latency_p50_s: pct(0.50),
        latency_p90_s: pct(0.90),
        latency_p99_s: pct(0.99),
        cpu_utilisation,
        bus_utilisation,
    })
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The first point whose per-device rate falls below [`KNEE`] of one device's alone,
/// and the resource saturated there.
fn knee(points: &[Point]) -> Option<Knee> {
    let alone = mean(&points.first()?.per_device_bytes_per_second);
    let p = points
        .iter()
        .find(|p| mean(&p.per_device_bytes_per_second) < KNEE * alone)?;
    let bus = p
        .bus_utilisation
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .cloned();
    let (saturated, utilisation) = if p.cpu_utilisation >= SATURATED {
        ("host CPU".to_string(), p.cpu_utilisation)
    } else {
        match bus {
            Some((name, u)) if u >= SATURATED => (format!("bus of {name}"), u),
            _ => ("none".to_string(), p.cpu_utilisation),
        }
    };
    Some(Knee {
        devices: p.devices,
        saturated,
        utilisation,
        per_device_share: mean(&p.per_device_bytes_per_second) / alone,
    })
}

/// What the knee's line says: where it is and what saturates there.
fn knee_says(k: &Knee) -> String {
    if k.saturated == "none" {
        format!("knee: {} devices, no resource saturated", k.devices)
    } else {
        format!(
            "knee: {} devices, the {} saturates ({:.0} %)",
            k.devices,
            k.saturated,
            k.utilisation * 100.0
        )
    }
}

/// The figure: aggregate and per-device rate, host CPU and the busiest bus, against N
/// (the text table's columns).
fn svg(config: &str, points: &[Point], knee: Option<&Knee>) -> Result<String> {
    let curve = |label: &str, y: &dyn Fn(&Point) -> Option<f64>| Series {
        label: label.to_string(),
        points: points
            .iter()
            .filter_map(|p| y(p).map(|v| (p.devices as f64, v)))
            .collect(),
    };
    let rates = [
        curve("aggregate", &|p| Some(p.aggregate_bytes_per_second)),
        curve("per device (mean)", &|p| {
            Some(mean(&p.per_device_bytes_per_second))
        }),
    ];
    let utilisation = [
        curve("host CPU", &|p| Some(p.cpu_utilisation * 100.0)),
        curve("busiest bus", &|p| {
            p.bus_utilisation
                .iter()
                .map(|(_, u)| u * 100.0)
                .reduce(f64::max)
        }),
    ];
    let mark = knee.map(|k| KneeMark {
        devices: k.devices as f64,
        text: knee_says(k),
    });
    contention_svg(
        &format!("gpib-diag contention: {config}"),
        &rates,
        &utilisation,
        mark.as_ref(),
    )
}

fn text(config: &str, points: &[Point], knee: Option<&Knee>) -> String {
    let mut grid = Grid::new(&[
        ("devices", Align::Right),
        ("aggregate B/s", Align::Right),
        ("per device B/s", Align::Right),
        ("p50 ms", Align::Right),
        ("p90 ms", Align::Right),
        ("p99 ms", Align::Right),
        ("cpu %", Align::Right),
        ("busiest bus", Align::Left),
    ]);
    for p in points {
        let busiest = p
            .bus_utilisation
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or_else(
                || "n/a".to_string(),
                |(name, u)| format!("{name} {:.1} %", u * 100.0),
            );
        grid.row(vec![
            p.devices.to_string(),
            format!("{:.1}", p.aggregate_bytes_per_second),
            format!("{:.1}", mean(&p.per_device_bytes_per_second)),
            format!("{:.3}", p.latency_p50_s * 1e3),
            format!("{:.3}", p.latency_p90_s * 1e3),
            format!("{:.3}", p.latency_p99_s * 1e3),
            format!("{:.1}", p.cpu_utilisation * 100.0),
            busiest,
        ]);
    }
    let mut s = grid.text();
    match knee {
        Some(k) => {
            let _ = writeln!(
                s,
                "\nknee at {} devices on {config}: {} ({:.1} % busy); each device runs at {:.0} % of its rate alone",
                k.devices,
                if k.saturated == "none" {
                    "no resource is saturated (the devices slow each other)".to_string()
                } else {
                    format!("the {} saturates", k.saturated)
                },
                k.utilisation * 100.0,
                k.per_device_share * 100.0
            );
        }
        None => {
            let _ = writeln!(
                s,
                "\nno knee up to {} devices on {config}: each runs at full rate",
                points.len()
            );
        }
    }
    s
}

/// A CSV row: the text table's columns, unrounded.
#[derive(Serialize)]
struct CsvRow {
    devices: usize,
    aggregate_bytes_per_second: Num,
    per_device_bytes_per_second: Num,
    latency_p50_s: Num,
    latency_p90_s: Num,
    latency_p99_s: Num,
    cpu_utilisation: Num,
    busiest_bus_utilisation: Num,
}

fn csv(points: &[Point]) -> Result<String> {
    export::csv::rows(
        &[],
        points.iter().map(|p| CsvRow {
            devices: p.devices,
            aggregate_bytes_per_second: Num(p.aggregate_bytes_per_second),
            per_device_bytes_per_second: Num(mean(&p.per_device_bytes_per_second)),
            latency_p50_s: Num(p.latency_p50_s),
            latency_p90_s: Num(p.latency_p90_s),
            latency_p99_s: Num(p.latency_p99_s),
            cpu_utilisation: Num(p.cpu_utilisation),
            busiest_bus_utilisation: Num(p.bus_utilisation.iter().map(|b| b.1).fold(0.0, f64::max)),
        }),
    )
}
