//! Writing results: one module per format, and the destination (`-` = stdout).

pub mod csv;
pub mod json;
pub mod markdown;
pub mod table;
pub mod text;

use std::io::Write;

use crate::error::{DiagError, Result};
use crate::record::Record;

/// A ratio of one configuration's figure to the reference's (compare).
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct Ratio {
    /// The configuration.
    pub config: String,
    /// "read" or "write".
    pub direction: String,
    /// seconds / reference seconds (above 1: slower).
    pub seconds_ratio: f64,
    /// CPU seconds / reference CPU seconds.
    pub cpu_ratio: Option<f64>,
}

/// Renders `records` in the non-text formats (text is per command).
pub fn render(
    format: Format,
    command: &str,
    records: &[Record],
    ratios: &[Ratio],
) -> Result<String> {
    Ok(match format {
        Format::Json => json::render(command, records, ratios)?,
        Format::Csv => csv::render(records)?,
        Format::Markdown => markdown::render(records, ratios),
        Format::Text => text::table(records, ratios),
    })
}

/// Writes `bytes` to standard output; a closed pipe (`| head`) is not an error.
pub fn to_stdout(bytes: &[u8]) -> Result<()> {
    let mut so = std::io::stdout().lock();
    match so.write_all(bytes).and_then(|_| so.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(source) => Err(DiagError::Output {
            path: "standard output".into(),
            source,
        }),
        Ok(()) => Ok(()),
    }
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Human-readable; for io-test, exactly the 1988 io_test program's seven lines.
    Text,
    /// One JSON document with a record per measurement.
    Json,
    /// One CSV row per measurement.
    Csv,
    /// A Markdown table.
    Markdown,
}

/// Writes `text` to `output` (`-` = stdout). A closed pipe is not an error
/// (`gpib-diag ... | head` is fine).
pub fn emit(output: &str, text: &str) -> Result<()> {
    let result = if output == "-" {
        let mut so = std::io::stdout().lock();
        so.write_all(text.as_bytes()).and_then(|_| so.flush())
    } else {
        std::fs::write(output, text)
    };
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(source) => Err(DiagError::Output {
            path: output.to_string(),
            source,
        }),
        Ok(()) => Ok(()),
    }
}
