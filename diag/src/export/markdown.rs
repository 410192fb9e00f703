//! Markdown: a table of the main figures, then the ratios (compare).

use std::fmt::Write;

use crate::export::table::{Align, Grid};
use crate::export::{text, Ratio};
use crate::record::Record;

/// Renders the records as a GitHub-flavoured Markdown table.
pub fn render(records: &[Record], ratios: &[Ratio]) -> String {
    let mut grid = Grid::new(&[
        ("config", Align::Left),
        ("direction", Align::Left),
        ("size (B)", Align::Right),
        ("runs", Align::Right),
        ("seconds", Align::Right),
        ("bytes/s", Align::Right),
        ("CPU s", Align::Right),
        ("CPU %", Align::Right),
        ("us CPU/KiB", Align::Right),
        ("CPU source", Align::Left),
    ]);
    for r in records {
        grid.row(vec![
            r.config.clone(),
            r.direction.as_str().to_string(),
            r.size.to_string(),
            r.runs.to_string(),
            format!("{:.6}", r.seconds),
            format!("{:.0}", r.bytes_per_second),
            format!("{:.6}", r.cpu_seconds),
            format!("{:.1}", r.cpu_utilisation * 100.0),
            r.service_demand_us_per_kib
                .map_or("-".into(), |v| format!("{v:.1}")),
            r.cpu_source.to_string(),
        ]);
    }
    let mut out = grid.markdown();
    if !ratios.is_empty() {
        out.push('\n');
        for line in text::ratio_lines(records, ratios) {
            let _ = writeln!(out, "- {line}");
        }
    }
    out
}
