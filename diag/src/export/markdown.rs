//! Markdown: a table of the main figures, then the ratios (compare).

use std::fmt::Write;

use crate::export::{text, Ratio};
use crate::record::Record;

/// Renders the records as a GitHub-flavoured Markdown table.
pub fn render(records: &[Record], ratios: &[Ratio]) -> String {
    let mut out = String::from(
        "| config | direction | size (B) | runs | seconds | bytes/s | CPU s | CPU % | us CPU/KiB | CPU source |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for r in records {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.6} | {:.0} | {:.6} | {:.1} | {} | {} |",
            r.config.replace('|', "\\|"),
            r.direction.as_str(),
            r.size,
            r.runs,
            r.seconds,
            r.bytes_per_second,
            r.cpu_seconds,
            r.cpu_utilisation * 100.0,
            r.service_demand_us_per_kib
                .map_or("-".into(), |v| format!("{v:.1}")),
            r.cpu_source
        );
    }
    if !ratios.is_empty() {
        out.push('\n');
        for line in text::ratio_lines(records, ratios) {
            let _ = writeln!(out, "- {line}");
        }
    }
    out
}
