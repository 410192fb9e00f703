//! `gpib-diag contention`: 1, 2, ... N devices active at once, as threads driving
//! different instruments of one simulated host; per-device and aggregate throughput,
//! transaction latency, host CPU and bus utilisation against N, and the knee where
//! the host CPU or a bus saturates.
//!
//! The threads are the host's participants: the curve comes from the model, and the
//! same configuration gives the same figures run after run.

use std::fmt::Write as _;
use std::time::Duration;

use gpib::{Address, Bus};
use serde::Serialize;

use crate::cli::{ContentionArgs, Format, Workload};
use crate::error::{DiagError, Result};
use crate::export;
use crate::export::csv::Num;
use crate::export::table::{Align, Grid};
use crate::plot::contention::{contention_svg, KneeMark};
use crate::plot::Series;
use crate::stats;

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
    /// Bytes per second of each device, in the order they were made active.
    pub per_device_bytes_per_second: Vec<f64>,
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

/// Runs the command.
pub fn run(args: &ContentionArgs) -> Result<()> {
    let devices = instruments(&args.bus, args.workload)?;
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
    let points = (1..=n_max)
        .map(|n| point(&args.bus, &devices[..n], args.workload, size, span))
        .collect::<Result<Vec<_>>>()?;
    let knee = knee(&points);
    if let Some(path) = &args.plot {
        let svg = svg(&args.bus, &points, knee.as_ref())?;
        std::fs::write(path, svg).map_err(|source| DiagError::Output {
            path: path.display().to_string(),
            source,
        })?;
    }
    let out = match args.out.format {
        Format::Text | Format::Markdown => text(&args.bus, &points, knee.as_ref()),
        Format::Json => {
            let doc = serde_json::json!({
                "tool": "gpib-diag", "command": "contention", "config": args.bus,
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
fn instruments(config: &str, workload: Workload) -> Result<Vec<(usize, Address)>> {
    let host = gpib::sim::load(config)?;
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
        return Err(DiagError::Usage(format!("{config} has no instruments")));
    }
    Ok(out)
}

/// What one device did: bytes moved, its time, each transaction's latency.
struct Stream {
    bytes: u64,
    elapsed: Duration,
    latencies: Vec<f64>,
}

fn point(
    config: &str,
    devices: &[(usize, Address)],
    workload: Workload,
    size: usize,
    span: Duration,
) -> Result<Point> {
    let host = gpib::sim::load(config)?;
    let start_cpu = host.cpu();
    let workers: Vec<_> = devices.iter().map(|_| host.participant()).collect();
    let mut threads = Vec::new();
    for (p, &(board, address)) in workers.into_iter().zip(devices) {
        let bus = Bus::new(host.board(board)?);
        threads.push(std::thread::spawn(move || -> gpib::Result<Stream> {
            p.enter();
            let dev = bus.device(address)?;
            let data = vec![b'x'; size];
            let t0 = bus.now();
            let mut s = Stream {
                bytes: 0,
                elapsed: Duration::ZERO,
                latencies: Vec::new(),
            };
            while bus.now().saturating_sub(t0) < span && s.latencies.len() < MAX_TRANSACTIONS {
                let t = bus.now();
                let moved = match workload {
                    Workload::Write => {
                        dev.write(&data)?;
                        size
                    }
                    Workload::Query => dev.query("*IDN?")?.len() + 1,
                };
                s.bytes += moved as u64;
                s.latencies.push((bus.now() - t).as_secs_f64());
            }
            s.elapsed = bus.now().saturating_sub(t0);
            Ok(s)
        }));
    }
    let mut streams = Vec::new();
    for t in threads {
        let s = t
            .join()
            .map_err(|_| DiagError::Usage("a device's thread panicked".into()))??;
        streams.push(s);
    }
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
    let mut lat: Vec<f64> = streams
        .iter()
        .flat_map(|s| s.latencies.iter().copied())
        .collect();
    lat.sort_by(f64::total_cmp);
    let pct = |p: f64| stats::percentile_sorted(&lat, p);
    let names = host.board_names();
    let mut boards: Vec<usize> = devices.iter().map(|(b, _)| *b).collect();
    boards.dedup();
    Ok(Point {
        devices: devices.len(),
        aggregate_bytes_per_second: rates.iter().sum(),
        per_device_bytes_per_second: rates,
        latency_p50_s: pct(0.50),
        latency_p90_s: pct(0.90),
        latency_p99_s: pct(0.99),
        cpu_utilisation: (host.cpu() - start_cpu).as_secs_f64() / (secs * host.cpu_count() as f64),
        bus_utilisation: boards
            .into_iter()
            .map(|b| (names[b].clone(), host.bus_busy(b).as_secs_f64() / secs))
            .collect(),
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
        let (name, u) = p
            .bus_utilisation
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .cloned()
            .unwrap_or_default();
        grid.row(vec![
            p.devices.to_string(),
            format!("{:.1}", p.aggregate_bytes_per_second),
            format!("{:.1}", mean(&p.per_device_bytes_per_second)),
            format!("{:.3}", p.latency_p50_s * 1e3),
            format!("{:.3}", p.latency_p90_s * 1e3),
            format!("{:.3}", p.latency_p99_s * 1e3),
            format!("{:.1}", p.cpu_utilisation * 100.0),
            format!("{name} {:.1} %", u * 100.0),
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
