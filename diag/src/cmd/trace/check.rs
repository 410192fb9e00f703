//! `gpib-diag trace check`: handshake violations in a trace or a logic analyzer's VCD.

use std::fmt::Write as _;
use std::io::Read;

use gpib::trace::check::{self, Limits};
use gpib::trace::format::MAGIC;
use gpib::trace::{vcd, wave};
use serde_json::json;

use super::input::{self, emit};
use super::{CheckArgs, TraceFormat};
use crate::error::Result;

/// Runs the command.
pub fn run(a: &CheckArgs) -> Result<()> {
    let mut start = [0u8; 8];
    let n = std::fs::File::open(&a.file)
        .and_then(|mut f| f.read(&mut start))
        .map_err(|e| input::input(&a.file, e.to_string()))?;
    let (changes, source) = if n == 8 && start == MAGIC {
        let (_, records) = input::load(&a.file)?;
        // Synthesised at 1 ns: the model's timing exactly.
        let ch = wave::changes(&records, 1);
        (
            ch.into_iter()
                .map(|(t, s)| (t * 1000, s))
                .collect::<Vec<_>>(),
            "trace",
        )
    } else {
        let f = std::fs::File::open(&a.file).map_err(|e| input::input(&a.file, e.to_string()))?;
        let cap = vcd::read_vcd(std::io::BufReader::new(f))
            .map_err(|e| input::input(&a.file, e.to_string()))?;
        (cap.changes, "VCD")
    };
    let limits = Limits {
        t1_ns: a.t1_ns,
        first_t1_ns: a.first_t1_ns,
        t7_ns: a.t7_ns,
    };
    let (found, count) = check::check(&changes, &limits, a.max);
    let text = match a.format {
        TraceFormat::Json => {
            let doc = json!({
                "file": a.file.display().to_string(),
                "source": source,
                "changes": changes.len(),
                "violations": count,
                "listed": found.iter().map(|v| json!({
                    "at_ns": v.at_ps as f64 / 1e3,
                    "rule": v.rule.name(),
                    "detail": v.detail,
                    "lines": check::line_names(v.lines),
                })).collect::<Vec<_>>(),
            });
            serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
        }
        TraceFormat::Text => {
            let mut s = String::new();
            for v in &found {
                let _ = writeln!(
                    s,
                    "{:>16.3} us  {:<16} {}  [{}]",
                    v.at_ps as f64 / 1e6,
                    v.rule.name(),
                    v.detail,
                    check::line_names(v.lines)
                );
            }
            if (found.len() as u64) < count {
                let _ = writeln!(s, "... {} more", count - found.len() as u64);
            }
            let _ = writeln!(
                s,
                "{}: {} line changes ({source}), {count} handshake violation(s)",
                a.file.display(),
                changes.len()
            );
            s
        }
    };
    emit(&text)?;
    if count > 0 {
        return Err(input::input(
            &a.file,
            format!("{count} handshake violation(s)"),
        ));
    }
    Ok(())
}
