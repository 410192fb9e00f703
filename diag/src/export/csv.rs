//! CSV: a header line, then one row per record (RFC 4180 quoting).

use std::fmt::Write;

use crate::record::Record;

/// The column names, in order.
pub const COLUMNS: &[&str] = &[
    "config",
    "backend",
    "clock",
    "device",
    "protocol",
    "direction",
    "size",
    "runs",
    "seconds",
    "bytes_per_second",
    "min_s",
    "max_s",
    "mean_s",
    "stddev_s",
    "ci95_half_width_s",
    "outliers",
    "cpu_seconds",
    "cpu_source",
    "cpu_utilisation",
    "service_demand_us_per_kib",
    "process_user_s",
    "process_system_s",
    "wall_seconds",
    "net_requests",
    "net_round_trips",
    "net_bytes",
    "net_overhead_bytes",
    "net_rtt_us",
];

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Renders the records.
pub fn render(records: &[Record]) -> String {
    let mut out = COLUMNS.join(",");
    out.push('\n');
    for r in records {
        let cells = [
            field(&r.config),
            r.backend.to_string(),
            r.clock.to_string(),
            field(&r.device),
            r.protocol.to_string(),
            r.direction.as_str().to_string(),
            r.size.to_string(),
            r.runs.to_string(),
            r.seconds.to_string(),
            r.bytes_per_second.to_string(),
            r.stats.min.to_string(),
            r.stats.max.to_string(),
            r.stats.mean.to_string(),
            r.stats.stddev.to_string(),
            r.stats.ci95_half_width.to_string(),
            r.stats.outliers.len().to_string(),
            r.cpu_seconds.to_string(),
            r.cpu_source.to_string(),
            r.cpu_utilisation.to_string(),
            r.service_demand_us_per_kib
                .map_or(String::new(), |v| v.to_string()),
            r.process_user_s.to_string(),
            r.process_system_s.to_string(),
            r.wall_seconds.to_string(),
            r.network.map_or(String::new(), |n| n.requests.to_string()),
            r.network
                .map_or(String::new(), |n| n.round_trips.to_string()),
            r.network.map_or(String::new(), |n| n.bytes.to_string()),
            r.network
                .map_or(String::new(), |n| n.overhead_bytes.to_string()),
            r.network.map_or(String::new(), |n| n.rtt_us.to_string()),
        ];
        let _ = writeln!(out, "{}", cells.join(","));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("plain"), "plain");
    }
}
