//! `gpib-diag trace check`: handshake violations in a trace or a logic analyzer's VCD.

use std::fmt::Write as _;
use std::io::Read;

use gpib::trace::check::{self, Checker, Limits};
use gpib::trace::format::MAGIC;
use gpib::trace::{vcd, wave};
use serde_json::json;

use super::input::{self, emit};
use super::{CheckArgs, TraceFormat};
use crate::error::Result;

/// What a checked file is, from its first bytes.
enum Format {
    Trace,
    Vcd,
}

/// A gpib-rs trace (its magic), a VCD (text whose first word is a `$` command), or
/// neither: an error that says what the file starts with and what is accepted.
fn detect(a: &CheckArgs) -> Result<Format> {
    let mut start = [0u8; 64];
    let mut f = std::fs::File::open(&a.file).map_err(|e| input::input(&a.file, e.to_string()))?;
    let mut n = 0;
    while n < start.len() {
        match f.read(&mut start[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(input::input(&a.file, e.to_string())),
        }
    }
    let start = &start[..n];
    if start.starts_with(&MAGIC) {
        return Ok(Format::Trace);
    }
    let text = start.iter().position(|b| !b.is_ascii_whitespace());
    if text.is_some_and(|i| start[i] == b'$') {
        return Ok(Format::Vcd);
    }
    let shown = &start[..start.len().min(MAGIC.len())];
    Err(input::input(
        &a.file,
        format!(
            "not a gpib trace file (bad magic {shown:02X?}, a trace starts with {MAGIC:02X?}, \
             \"GPIBTRC\\x1a\") and not a VCD (text starting with a $ command such as $date, \
             $timescale or $var): trace check reads these two formats"
        ),
    ))
}

/// Runs the command.
pub fn run(a: &CheckArgs) -> Result<()> {
    let limits = Limits {
        t1_ns: a.t1_ns,
        first_t1_ns: a.first_t1_ns,
        t7_ns: a.t7_ns,
    };
    let mut checker = Checker::new(limits, a.max);
    let refused = |e: String| input::input(&a.file, e);
    let source = match detect(a)? {
        Format::Trace => {
            let mut reader = input::open(&a.file)?;
            // Drawn at 1 ns a tick (the model's timing exactly), checked in ps, as it goes.
            let mut synth = wave::Synth::new(1);
            while reader
                .draw_next(&mut synth, &mut |t, s| {
                    checker.change(t.saturating_mul(1000), s)
                })
                .map_err(|e| refused(e.to_string()))?
            {}
            "trace"
        }
        Format::Vcd => {
            let f = std::fs::File::open(&a.file).map_err(|e| refused(e.to_string()))?;
            let mut r = vcd::VcdReader::new(std::io::BufReader::new(f))
                .map_err(|e| refused(e.to_string()))?;
            while let Some((t, s)) = r.next_change().map_err(|e| refused(e.to_string()))? {
                checker.change(t, s);
            }
            "VCD"
        }
    };
    let changes = checker.changes();
    let (found, count) = checker.finish();
    let text = match a.format {
        TraceFormat::Json => {
            let doc = json!({
                "file": a.file.display().to_string(),
                "source": source,
                "changes": changes,
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
                changes
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
