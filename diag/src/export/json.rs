//! JSON: one document, `{"tool", "version", "command", "records": [...], "ratios": [...]}`.

use crate::error::{DiagError, Result};
use crate::export::Ratio;
use crate::record::Record;

/// Renders the document, pretty-printed, with a final newline.
pub fn render(command: &str, records: &[Record], ratios: &[Ratio]) -> Result<String> {
    let doc = serde_json::json!({
        "tool": "gpib-diag",
        "version": env!("CARGO_PKG_VERSION"),
        "command": command,
        "records": records,
        "ratios": ratios,
    });
    let mut s = serde_json::to_string_pretty(&doc)
        .map_err(|e| DiagError::Usage(format!("cannot encode JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}
