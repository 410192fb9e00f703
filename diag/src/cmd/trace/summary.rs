//! `gpib-diag trace summary`: where the time went (Analyzer488's MEASURE, and more):
//! bytes/s per transfer, time per call, time in addressing, data and serial polls.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use gpib::trace::{Record, Transfer};
use serde_json::json;

use super::input::{self, emit};
use super::{SummaryArgs, TraceFormat};
use crate::error::Result;

/// Time and count of one kind of bus activity.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    count: u64,
    bytes: u64,
    ns: u64,
}

impl Tally {
    fn add(&mut self, bytes: u64, ns: u64) {
        self.count += 1;
        self.bytes += bytes;
        self.ns = self.ns.saturating_add(ns);
    }
}

/// A data transfer's figures.
#[derive(Debug, Clone)]
struct Row {
    start_ns: u64,
    talker: u8,
    listeners: String,
    bytes: u64,
    /// From the first byte's cycle to the end of the operation.
    ns: u64,
}

impl Row {
    fn rate(&self) -> f64 {
        self.bytes as f64 / (self.ns.max(1) as f64 / 1e9)
    }
}

fn span(t: &Transfer<'_>) -> u64 {
    t.end_ns.saturating_sub(t.start_ns)
}

/// The largest first, then the earliest.
fn order(x: &Row, y: &Row) -> std::cmp::Ordering {
    y.bytes.cmp(&x.bytes).then(x.start_ns.cmp(&y.start_ns))
}

/// Keeps `rows` at most twice `top` long (plus room for the next): the `top` first in
/// [`order`] are all that is listed, so memory does not grow with the trace.
fn keep_top(rows: &mut Vec<Row>, top: usize) {
    let cap = top.saturating_mul(2).max(64);
    if rows.len() >= cap {
        rows.sort_by(order);
        rows.truncate(top);
    }
}

/// Runs the command.
pub fn run(a: &SummaryArgs) -> Result<()> {
    let mut reader = input::open(&a.file)?;
    let label = reader.header().label.clone();
    let (mut addressing, mut data, mut polls) =
        (Tally::default(), Tally::default(), Tally::default());
    let mut srq_edges = 0u64;
    let mut errors = 0u64;
    let mut calls: BTreeMap<&'static str, (u64, u64, u64)> = BTreeMap::new(); // count, total, max
    let mut rows: Vec<Row> = Vec::new();
    let (mut first, mut last) = (u64::MAX, 0u64);
    while let Some(r) = reader
        .next_record()
        .map_err(|e| input::input(&a.file, e.to_string()))?
    {
        match &r {
            Record::Transfer(t) => {
                first = first.min(t.start_ns);
                last = last.max(t.end_ns);
                let n = t.bytes.len() as u64;
                if t.is_command() {
                    addressing.add(n, span(t));
                } else if t.is_serial_poll() {
                    polls.add(n, span(t));
                } else {
                    data.add(n, span(t));
                    keep_top(&mut rows, a.top);
                    rows.push(Row {
                        start_ns: t.start_ns,
                        talker: t.talker,
                        listeners: t
                            .listener_addresses()
                            .map(|x| x.to_string())
                            .collect::<Vec<_>>()
                            .join(","),
                        bytes: n,
                        ns: t.end_ns.saturating_sub(t.first_ns),
                    });
                }
            }
            Record::Line(l) => {
                if l.line == gpib::trace::Line::Srq {
                    srq_edges += 1;
                }
            }
            Record::Error(_) => errors += 1,
            Record::Call(c) => {
                first = first.min(c.start_ns);
                last = last.max(c.start_ns.saturating_add(c.duration_ns));
                let e = calls.entry(c.op.name()).or_default();
                e.0 += 1;
                e.1 = e.1.saturating_add(c.duration_ns);
                e.2 = e.2.max(c.duration_ns);
            }
            Record::Unknown { .. } => {}
        }
    }
    let total = last.saturating_sub(first.min(last));
    rows.sort_by(order);
    let shown = &rows[..rows.len().min(a.top)];
    let text = match a.format {
        TraceFormat::Json => {
            let tally = |t: &Tally| json!({"count": t.count, "bytes": t.bytes, "ns": t.ns});
            let doc = json!({
                "label": label,
                "span_ns": total,
                "addressing": tally(&addressing),
                "data": tally(&data),
                "serial_polls": tally(&polls),
                "srq_edges": srq_edges,
                "errors": errors,
                "calls": calls.iter().map(|(op, (n, t, m))| json!({"op": op, "count": n, "total_ns": t, "max_ns": m, "mean_ns": t / n.max(&1)})).collect::<Vec<_>>(),
                "transfers": shown.iter().map(|r| json!({"start_ns": r.start_ns, "talker": r.talker, "listeners": r.listeners, "bytes": r.bytes, "ns": r.ns, "bytes_per_s": r.rate()})).collect::<Vec<_>>(),
            });
            serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
        }
        TraceFormat::Text => {
            let mut s = String::new();
            let pct = |ns: u64| 100.0 * ns as f64 / total.max(1) as f64;
            let _ = writeln!(s, "{label}: {:.6} s traced", total as f64 / 1e9);
            for (name, t) in [
                ("addressing (ATN)", &addressing),
                ("data", &data),
                ("serial polls", &polls),
            ] {
                let _ = writeln!(
                    s,
                    "  {name:<17} {:>8} ops {:>12} bytes {:>14.6} s {:>6.1} %",
                    t.count,
                    t.bytes,
                    t.ns as f64 / 1e9,
                    pct(t.ns)
                );
            }
            let _ = writeln!(s, "  SRQ edges {srq_edges}, errors {errors}");
            if !calls.is_empty() {
                let _ = writeln!(
                    s,
                    "calls:\n  {:<18} {:>8} {:>14} {:>14} {:>14}",
                    "op", "count", "total (s)", "mean (us)", "max (us)"
                );
                for (op, (n, t, m)) in &calls {
                    let _ = writeln!(
                        s,
                        "  {op:<18} {n:>8} {:>14.6} {:>14.3} {:>14.3}",
                        *t as f64 / 1e9,
                        *t as f64 / 1e3 / (*n).max(1) as f64,
                        *m as f64 / 1e3
                    );
                }
            }
            if !shown.is_empty() {
                let _ = writeln!(
                    s,
                    "largest data transfers:\n  {:>14} {:>6} {:>10} {:>12} {:>12} {:>14}",
                    "at (us)", "talker", "listeners", "bytes", "time (us)", "bytes/s"
                );
                for r in shown {
                    let _ = writeln!(
                        s,
                        "  {:>14.3} {:>6} {:>10} {:>12} {:>12.3} {:>14.0}",
                        r.start_ns as f64 / 1e3,
                        r.talker,
                        r.listeners,
                        r.bytes,
                        r.ns as f64 / 1e3,
                        r.rate()
                    );
                }
            }
            s
        }
    };
    emit(&text)
}
