//! The three renderings of the points: the SVG figure, the text table and CSV.

use super::*;

/// The figure: aggregate and per-device rate, host CPU and the busiest bus, against N
/// (the text table's columns).
pub(super) fn svg(config: &str, points: &[Point], knee: Option<&Knee>) -> Result<String> {
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

pub(super) fn text(config: &str, points: &[Point], knee: Option<&Knee>) -> String {
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

pub(super) fn csv(points: &[Point]) -> Result<String> {
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
