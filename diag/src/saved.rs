//! Runs saved with `--format json` (io-test, sweep, contention, and doctor's transfers),
//! read back as figures to compare: a bounded, tolerant reader that takes what it needs
//! from each document and ignores the rest.

use std::collections::HashMap;
use std::io::Read;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::place::{Each, Keyed, Listed};

use crate::error::{DiagError, Result};
use crate::size::human;
use crate::stats::{self, Moments};

/// The largest file read (64 MiB: a sweep of 13 sizes kept with 100,000 runs each is
/// about 60 MB).
pub const MAX_SAVED_BYTES: u64 = 64 << 20;

/// The highest rate a figure may have (a petabyte, or 10^15 queries, a second): past
/// it a figure is no measurement of a bus (a second's count of 10^-300, say, whose
/// rate would print with 300 digits).
pub const MAX_RATE: f64 = 1e15;

mod place;

/// What a figure's samples are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// Seconds per transfer (io-test, sweep, doctor): the rate is `size / seconds`.
    Seconds,
    /// Rates (contention: each device's bytes per second).
    Rate,
}

/// One figure of a saved run: what it is and its samples' size, mean and spread.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// What it is: "read", "write", "large read", "3 devices".
    pub what: String,
    /// Bytes per transfer (doctor's short queries: queries); contention: bytes per write.
    pub size: u64,
    /// The device (`11`), or empty for a figure over several devices.
    pub device: String,
    /// The unit of its rate: "B/s", or "queries/s".
    pub unit: &'static str,
    /// What the samples are.
    pub measure: Measure,
    /// The samples: one per run (contention: one per device).
    pub moments: Moments,
    /// The configuration it was measured on.
    pub config: String,
    /// The clock its seconds are on ("virtual", "wall"), when the file says.
    pub clock: Option<String>,
    /// Where it is in its file: `records[3]`, `points[0]`, `transfers.read_small`.
    pub place: String,
}

impl Figure {
    /// What figures are matched on: what, size and device.
    pub fn key(&self) -> (&str, u64, &str) {
        (&self.what, self.size, &self.device)
    }

    /// The figure as people read it: `read 400000 B, device 11`, `3 devices, 35 B each`,
    /// `short queries x20, device 22`.
    pub fn label(&self) -> String {
        if self.device.is_empty() {
            format!("{}, {} each", self.what, human(self.size))
        } else if self.unit == "queries/s" {
            format!("{} x{}, device {}", self.what, self.size, self.device)
        } else {
            format!("{} {}, device {}", self.what, human(self.size), self.device)
        }
    }

    /// The mean rate: `size / mean seconds`, or the mean of the rates.
    pub fn rate(&self) -> f64 {
        match self.measure {
            Measure::Seconds => self.size as f64 / self.moments.mean,
            Measure::Rate => self.moments.mean,
        }
    }
}

/// A saved run: the command that made it and its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedRun {
    /// The file.
    pub path: String,
    /// The command that saved it: io-test, sweep, contention or doctor.
    pub command: String,
    /// What each device did (contention's workload), when the file says.
    pub workload: Option<String>,
    /// Its figures, each key once.
    pub figures: Vec<Figure>,
}

/// The fields of a record `compare` reads (see `record::Record`).
#[derive(Deserialize)]
struct SavedRecord {
    config: String,
    clock: Option<String>,
    device: String,
    direction: String,
    size: u64,
    seconds: f64,
    stats: Option<SavedStats>,
    run_seconds: Option<Vec<f64>>,
}

impl Listed for SavedRecord {
    const LIST: &'static str = "records";
}

/// The fields of a summary `compare` reads (see `stats::Summary`).
#[derive(Deserialize)]
struct SavedStats {
    n: usize,
    mean: f64,
    stddev: f64,
}

/// The fields of a contention point `compare` reads.
#[derive(Deserialize)]
struct SavedPoint {
    devices: usize,
    per_device_bytes_per_second: Vec<f64>,
}

impl Listed for SavedPoint {
    const LIST: &'static str = "points";
}

/// A saved document: the fields of every kind `compare` reads, the rest ignored.
#[derive(Deserialize)]
struct Document {
    tool: Option<String>,
    command: Option<String>,
    records: Option<Each<SavedRecord>>,
    // contention
    config: Option<String>,
    clock: Option<String>,
    workload: Option<String>,
    size: Option<u64>,
    points: Option<Each<SavedPoint>>,
    // doctor
    target: Option<String>,
    device: Option<u8>,
    transfers: Option<Keyed>,
}

/// What the documents `compare` reads are, for error messages.
const EXPECTED: &str = "a run saved by gpib-diag io-test, sweep, contention or doctor \
                        with --format json";

/// Reads the run saved in `path`.
pub fn read(path: &str) -> Result<SavedRun> {
    let refuse = |what: String| DiagError::Input {
        path: path.to_string(),
        what,
    };
    let text = read_bounded(path)?;
    let doc: Document =
        serde_json::from_str(&text).map_err(|e| refuse(format!("not {EXPECTED}: {e}")))?;
    let (command, figures) = match (doc.command.as_deref(), doc.tool.as_deref()) {
        (Some("compare"), _) => {
            return Err(refuse(
                "holds a comparison (gpib-diag compare), not one run: compare two runs \
                 saved by io-test, sweep, contention or doctor"
                    .into(),
            ))
        }
        (Some(c @ ("io-test" | "sweep")), Some("gpib-diag")) => {
            let records = doc.records.as_ref().map_or(&[][..], |r| &r.0);
            (
                c,
                records
                    .iter()
                    .enumerate()
                    .map(|(i, r)| record(i, r))
                    .collect::<Result<Vec<_>, String>>(),
            )
        }
        (Some("contention"), Some("gpib-diag")) => ("contention", contention(&doc)),
        (None, _) if doc.transfers.is_some() && doc.target.is_some() => ("doctor", doctor(&doc)),
        _ => return Err(refuse(format!("not {EXPECTED}"))),
    };
    let figures = figures.map_err(refuse)?;
    if figures.is_empty() {
        return Err(refuse(format!(
            "holds no measurement ({command} saved none)"
        )));
    }
    let mut seen: HashMap<(&str, u64, &str), &Figure> = HashMap::with_capacity(figures.len());
    for f in &figures {
        if let Some(g) = seen.insert(f.key(), f) {
            return Err(refuse(format!(
                "holds {} twice ({} with {} and {} with {}): compare takes one run of \
                 each figure",
                f.label(),
                g.place,
                g.config,
                f.place,
                f.config
            )));
        }
    }
    drop(seen);
    Ok(SavedRun {
        path: path.to_string(),
        command: command.to_string(),
        workload: doc.workload,
        figures,
    })
}

/// The file's text, refused past [`MAX_SAVED_BYTES`] (checked while reading, so a
/// growing file or a pipe is bounded too).
fn read_bounded(path: &str) -> Result<String> {
    let refuse = |what: String| DiagError::Input {
        path: path.to_string(),
        what,
    };
    let file = std::fs::File::open(path).map_err(|e| {
        refuse(if e.kind() == std::io::ErrorKind::NotFound {
            "no such file (compare takes a SIZE to measure, or two saved runs: \
             BEFORE.json AFTER.json)"
                .to_string()
        } else {
            format!("cannot open: {e}")
        })
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_SAVED_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| refuse(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_SAVED_BYTES {
        return Err(refuse(format!(
            "larger than {} MiB: not {EXPECTED}",
            MAX_SAVED_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|_| refuse(format!("not text: not {EXPECTED}")))
}

/// Moments of samples that must each be finite and above 0 (seconds) or at least 0
/// (rates).
fn moments_of(values: &[f64], positive: bool, what: &str) -> Result<Moments, String> {
    if let Some(v) = values
        .iter()
        .find(|&&v| !v.is_finite() || v < 0.0 || (positive && v == 0.0))
    {
        return Err(format!("{what}: {v} is not a measurement"));
    }
    stats::summarize(values)
        .map(|s| Moments::from(&s))
        .ok_or_else(|| format!("{what}: no samples"))
}

/// The moments of a saved summary, checked.
fn moments_of_stats(s: &SavedStats, what: &str) -> Result<Moments, String> {
    if s.n == 0 || !(s.mean.is_finite() && s.mean > 0.0) || !s.stddev.is_finite() || s.stddev < 0.0
    {
        return Err(format!(
            "{what}: stats (n {}, mean {}, stddev {}) are not a summary of runs",
            s.n, s.mean, s.stddev
        ));
    }
    Ok(Moments {
        n: s.n,
        mean: s.mean,
        stddev: if s.n == 1 { 0.0 } else { s.stddev },
    })
}

/// The samples of a timed figure: each run's seconds when kept, else the summary's
/// moments (files saved before runs were kept), else its one `seconds`.
fn timed(
    what: &str,
    run_seconds: Option<&[f64]>,
    stats: Option<&SavedStats>,
    seconds: Option<f64>,
) -> Result<Moments, String> {
    match (run_seconds, stats, seconds) {
        (Some(runs), _, _) if !runs.is_empty() => moments_of(runs, true, what),
        (_, Some(s), _) => moments_of_stats(s, what),
        (_, _, Some(s)) => moments_of(&[s], true, what),
        _ => Err(format!("{what}: no seconds")),
    }
}

/// A figure whose arithmetic went past what a measurement can be (a sum of samples
/// that overflowed, a rate past [`MAX_RATE`] or below 0) refused, naming it.
fn checked(f: Figure) -> Result<Figure, String> {
    let m = f.moments;
    let rate = f.rate();
    let why = if !(m.mean.is_finite() && m.stddev.is_finite()) {
        format!(
            "its samples' mean {} or spread {} is not finite",
            m.mean, m.stddev
        )
    } else if !(rate.is_finite() && (0.0..=MAX_RATE).contains(&rate)) {
        format!(
            "its rate of {rate:e} {} is no measurement (at most {MAX_RATE:e})",
            f.unit
        )
    } else {
        return Ok(f);
    };
    Err(format!("{} ({}): {why}", f.place, f.label()))
}

/// Record `i` of an io-test or sweep run.
fn record(i: usize, r: &SavedRecord) -> Result<Figure, String> {
    let place = format!("records[{i}]");
    if !matches!(r.direction.as_str(), "read" | "write") {
        return Err(format!("{place}: its direction is {:?}", r.direction));
    }
    let what = format!("{place} ({} of {} B)", r.direction, r.size);
    if r.size == 0 {
        return Err(format!("{what}: a transfer of 0 bytes"));
    }
    checked(Figure {
        what: r.direction.clone(),
        size: r.size,
        device: r.device.clone(),
        unit: "B/s",
        measure: Measure::Seconds,
        moments: timed(
            &what,
            r.run_seconds.as_deref(),
            r.stats.as_ref(),
            Some(r.seconds),
        )?,
        config: r.config.clone(),
        clock: r.clock.clone(),
        place,
    })
}

/// Contention's points: each one's per-device rates.
fn contention(doc: &Document) -> Result<Vec<Figure>, String> {
    let size = doc.size.ok_or("a contention run without its size")?;
    doc.points
        .as_ref()
        .map_or(&[][..], |p| &p.0)
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let place = format!("points[{i}]");
            let what = format!(
                "{place} ({} device{})",
                p.devices,
                if p.devices == 1 { "" } else { "s" }
            );
            if p.devices == 0 || p.per_device_bytes_per_second.len() != p.devices {
                return Err(format!(
                    "{what}: {} per-device rates",
                    p.per_device_bytes_per_second.len()
                ));
            }
            checked(Figure {
                moments: moments_of(&p.per_device_bytes_per_second, false, &what)?,
                what: format!(
                    "{} device{}",
                    p.devices,
                    if p.devices == 1 { "" } else { "s" }
                ),
                place,
                size,
                device: String::new(),
                unit: "B/s",
                measure: Measure::Rate,
                config: doc.config.clone().unwrap_or_default(),
                clock: doc.clock.clone(),
            })
        })
        .collect()
}

/// Doctor's transfers: each named timing (`{"bytes", "seconds"}`, and `stats` or
/// `run_seconds` when it has them), read tolerantly so the report may grow.
fn doctor(doc: &Document) -> Result<Vec<Figure>, String> {
    const ORDER: [&str; 5] = [
        "read_small",
        "read_large",
        "write_small",
        "write_large",
        "queries",
    ];
    let device = doc.device.map(|d| d.to_string()).unwrap_or_default();
    let transfers = &doc.transfers.as_ref().ok_or("no transfers")?.0;
    // The report's order, then any timing it grows.
    let mut names: Vec<&String> = transfers.keys().collect();
    names.sort_by_key(|n| ORDER.iter().position(|o| o == n).unwrap_or(ORDER.len()));
    let mut out = Vec::new();
    for (name, v) in names.into_iter().map(|n| (n, &transfers[n])) {
        let Some(entry) = v.as_object() else {
            continue;
        };
        let (Some(bytes), Some(seconds)) = (
            entry.get("bytes").and_then(Value::as_u64),
            entry.get("seconds").and_then(Value::as_f64),
        ) else {
            continue;
        };
        let place = format!("transfers.{name}");
        let what = match name.as_str() {
            "read_small" => "small read".to_string(),
            "read_large" => "large read".to_string(),
            "write_small" => "small write".to_string(),
            "write_large" => "large write".to_string(),
            "queries" => "short queries".to_string(),
            other => other.replace('_', " "),
        };
        let runs: Option<Vec<f64>> = entry
            .get("run_seconds")
            .and_then(|r| serde_json::from_value(r.clone()).ok());
        let stats: Option<SavedStats> = entry
            .get("stats")
            .and_then(|s| serde_json::from_value(s.clone()).ok());
        if bytes == 0 {
            return Err(format!("{place} ({what}): a transfer of 0 bytes"));
        }
        out.push(checked(Figure {
            moments: timed(
                &format!("{place} ({what})"),
                runs.as_deref(),
                stats.as_ref(),
                Some(seconds),
            )?,
            unit: if name == "queries" {
                "queries/s"
            } else {
                "B/s"
            },
            what,
            size: bytes,
            device: device.clone(),
            measure: Measure::Seconds,
            config: doc.target.clone().unwrap_or_default(),
            clock: None,
            place,
        })?);
    }
    Ok(out)
}
