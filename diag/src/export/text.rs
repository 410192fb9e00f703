//! Text for people: the 1988 io_test program's lines for io-test, tables for the rest.

use std::fmt::Write;

use crate::export::table::{Align, Grid};
use crate::export::Ratio;
use crate::record::Clock;
use crate::record::Record;
use crate::size::human;

/// The 1988 io_test program's output, to the character: `read time: %2.6f`, `transfer rate: %f`,
/// `transfer size: %d`, a blank line, then the same three for the write.
pub fn io_test_lines(read: &Record, write: &Record) -> String {
    format!(
        "read time: {:.6}\ntransfer rate: {:.6}\ntransfer size: {}\n\n\
         write time: {:.6}\ntransfer rate: {:.6}\ntransfer size: {}\n",
        read.seconds,
        read.bytes_per_second,
        read.size,
        write.seconds,
        write.bytes_per_second,
        write.size
    )
}

/// Statistics and CPU cost of each record, for `--verbose`.
pub fn details(records: &[Record]) -> String {
    let mut out = String::new();
    for r in records {
        let s = &r.stats;
        let _ = writeln!(
            out,
            "\n{} {} of {} on {} ({} clock, {} run(s)):",
            r.direction.as_str(),
            r.protocol,
            human(r.size),
            r.config,
            r.clock,
            r.runs
        );
        let _ = writeln!(
            out,
            "  time      median {:.6} s  mean {:.6} s  min {:.6} s  max {:.6} s  sd {:.6} s  95% CI ±{:.6} s",
            s.median, s.mean, s.min, s.max, s.stddev, s.ci95_half_width
        );
        if !s.outliers.is_empty() {
            let _ = writeln!(out, "  warning   {} outlier(s) (modified Z-score > 3.5): runs {:?}; try --warmup or a quieter machine", s.outliers.len(), s.outliers);
        }
        let _ = writeln!(
            out,
            "  cpu       {:.6} s {} ({:.1}% of one core over the transfer), service demand {} us/KiB",
            r.cpu_seconds,
            r.cpu_source,
            r.cpu_utilisation * 100.0,
            r.service_demand_us_per_kib
                .map_or("-".into(), |v| format!("{v:.2}"))
        );
        let _ = writeln!(
            out,
            "  process   user {:.6} s  system {:.6} s  wall {:.6} s",
            r.process_user_s, r.process_system_s, r.wall_seconds
        );
        if let Some(n) = &r.network {
            let _ = writeln!(
                out,
                "  network   {:.0} request(s), {:.0} round trip(s) of {:.1} us, {:.0} bytes on the wire ({:.0} beyond the payload)",
                n.requests, n.round_trips, n.rtt_us, n.bytes, n.overhead_bytes
            );
        }
        if r.machine.is_none() && r.clock == Clock::Wall {
            let cpus = crate::cpu::machine_cpus();
            // /proc/stat's ticks: 100 a second per CPU.
            let enough = crate::cpu::MIN_MACHINE_TICKS as f64 / (100.0 * cpus as f64);
            let _ = writeln!(
                out,
                "  machine   not resolved: /proc/stat counts in 10 ms ticks, too coarse for this run (a transfer of {enough:.2} s or more on this machine gives it)"
            );
        }
        if let Some(m) = &r.machine {
            let _ = writeln!(
                out,
                "  machine   user {:.1}%  system {:.1}%  irq {:.1}%  softirq {:.1}%  iowait {:.1}%  idle {:.1}%",
                m.user * 100.0,
                m.system * 100.0,
                m.irq * 100.0,
                m.softirq * 100.0,
                m.iowait * 100.0,
                m.idle * 100.0
            );
        }
    }
    out
}

/// "read 58.4x faster with hp9000-350:unmount=/disc than with hp9000-350, CPU 58.4x less".
pub fn ratio_lines(records: &[Record], ratios: &[Ratio]) -> Vec<String> {
    let reference = records.first().map_or("", |r| r.config.as_str());
    let factor = |ratio: f64, up: &'static str, down: &'static str| {
        if ratio >= 1.0 {
            (ratio, up)
        } else {
            (1.0 / ratio, down)
        }
    };
    ratios
        .iter()
        .map(|q| {
            let (f, word) = factor(q.seconds_ratio, "slower", "faster");
            let mut line = format!(
                "{} {f:.1}x {word} with {} than with {reference}",
                q.direction, q.config
            );
            if let Some(c) = q.cpu_ratio.filter(|c| c.is_finite() && *c > 0.0) {
                let (f, word) = factor(c, "more", "less");
                line.push_str(&format!(", CPU {f:.1}x {word}"));
            }
            line
        })
        .collect()
}

/// A table of records (sweep and compare).
pub fn table(records: &[Record], ratios: &[Ratio]) -> String {
    let mut grid = Grid::new(&[
        ("config", Align::Left),
        ("dir", Align::Left),
        ("size", Align::Right),
        ("seconds", Align::Right),
        ("bytes/s", Align::Right),
        ("cpu s", Align::Right),
        ("us cpu/KiB", Align::Right),
        ("runs", Align::Right),
    ]);
    for r in records {
        grid.row(vec![
            r.config.clone(),
            r.direction.as_str().to_string(),
            human(r.size),
            format!("{:.6}", r.seconds),
            format!("{:.0}", r.bytes_per_second),
            format!("{:.6}", r.cpu_seconds),
            r.service_demand_us_per_kib
                .map_or("-".into(), |v| format!("{v:.2}")),
            r.runs.to_string(),
        ]);
    }
    let mut out = grid.text();
    if !ratios.is_empty() {
        out.push('\n');
        for line in ratio_lines(records, ratios) {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}
