//! CSV through the `csv` crate: a header line from the row type's field names, then
//! one row per item (RFC 4180 quoting). Numbers are written as Rust prints them
//! (`0.000028`, `1`), not in the exponent form of a float serializer.

use serde::{Serialize, Serializer};

use crate::error::{DiagError, Result};
use crate::record::{Backend, Clock, CpuSource, Record};

/// The column names of [`render`], in order.
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

/// A number written with `Display` (`0.000028`, `35714.28571428572`, `1`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Num(pub f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// One row of [`render`]: a record, flattened (field names are [`COLUMNS`]).
#[derive(Serialize)]
struct Row<'a> {
    config: &'a str,
    backend: Backend,
    #[serde(serialize_with = "crate::record::clock_name")]
    clock: Clock,
    device: &'a str,
    protocol: crate::driver::ProtocolKind,
    direction: crate::measure::Direction,
    size: u64,
    runs: usize,
    seconds: Num,
    bytes_per_second: Num,
    min_s: Num,
    max_s: Num,
    mean_s: Num,
    stddev_s: Num,
    ci95_half_width_s: Num,
    outliers: usize,
    cpu_seconds: Num,
    cpu_source: CpuSource,
    cpu_utilisation: Num,
    service_demand_us_per_kib: Option<Num>,
    process_user_s: Num,
    process_system_s: Num,
    wall_seconds: Num,
    net_requests: Option<Num>,
    net_round_trips: Option<Num>,
    net_bytes: Option<Num>,
    net_overhead_bytes: Option<Num>,
    net_rtt_us: Option<Num>,
}

impl<'a> From<&'a Record> for Row<'a> {
    fn from(r: &'a Record) -> Self {
        let net = |f: fn(&crate::record::Network) -> f64| r.network.as_ref().map(|n| Num(f(n)));
        Row {
            config: &r.config,
            backend: r.backend,
            clock: r.clock,
            device: &r.device,
            protocol: r.protocol,
            direction: r.direction,
            size: r.size,
            runs: r.runs,
            seconds: Num(r.seconds),
            bytes_per_second: Num(r.bytes_per_second),
            min_s: Num(r.stats.min),
            max_s: Num(r.stats.max),
            mean_s: Num(r.stats.mean),
            stddev_s: Num(r.stats.stddev),
            ci95_half_width_s: Num(r.stats.ci95_half_width),
            outliers: r.stats.outliers.len(),
            cpu_seconds: Num(r.cpu_seconds),
            cpu_source: r.cpu_source,
            cpu_utilisation: Num(r.cpu_utilisation),
            service_demand_us_per_kib: r.service_demand_us_per_kib.map(Num),
            process_user_s: Num(r.process_user_s),
            process_system_s: Num(r.process_system_s),
            wall_seconds: Num(r.wall_seconds),
            net_requests: net(|n| n.requests),
            net_round_trips: net(|n| n.round_trips),
            net_bytes: net(|n| n.bytes),
            net_overhead_bytes: net(|n| n.overhead_bytes),
            net_rtt_us: net(|n| n.rtt_us),
        }
    }
}

/// Writes `rows` as CSV: a header of the row type's field names (nothing for no
/// rows, unless `header` gives the names), then a line per row.
pub fn rows<T: Serialize>(header: &[&str], rows: impl IntoIterator<Item = T>) -> Result<String> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(header.is_empty())
        .from_writer(Vec::new());
    let failed = |e: csv::Error| DiagError::Usage(format!("cannot encode CSV: {e}"));
    if !header.is_empty() {
        w.write_record(header).map_err(failed)?;
    }
    for row in rows {
        w.serialize(row).map_err(failed)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| DiagError::Usage(format!("cannot encode CSV: {e}")))?;
    String::from_utf8(bytes).map_err(|e| DiagError::Usage(format!("cannot encode CSV: {e}")))
}

/// Renders the records, with the [`COLUMNS`] header even when there are none.
pub fn render(records: &[Record]) -> Result<String> {
    rows(COLUMNS, records.iter().map(Row::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Pair<'a> {
        name: &'a str,
        value: Option<Num>,
    }

    #[test]
    fn quoting_numbers_and_empty_options() {
        let text = rows(
            &["name", "value"],
            [
                Pair {
                    name: "a,b",
                    value: Some(Num(0.000028)),
                },
                Pair {
                    name: "say \"hi\"",
                    value: None,
                },
                Pair {
                    name: "plain",
                    value: Some(Num(1.0)),
                },
            ],
        )
        .unwrap();
        assert_eq!(
            text,
            "name,value\n\"a,b\",0.000028\n\"say \"\"hi\"\"\",\nplain,1\n"
        );
    }

    #[test]
    fn header_from_the_field_names() {
        let text = rows(
            &[],
            [Pair {
                name: "x",
                value: Some(Num(35714.28571428572)),
            }],
        )
        .unwrap();
        assert_eq!(text, "name,value\nx,35714.28571428572\n");
        assert_eq!(render(&[]).unwrap(), COLUMNS.join(",") + "\n");
    }
}
