//! `gpib-diag doctor`: probes a board and prints what slows it down.

use std::io::Write;

use crate::cli::{DoctorArgs, Format};
use crate::doctor::probe::{rate_of, QUERIES};
use crate::doctor::settings_ab::p_text;
use crate::doctor::{self, Report, Request, Severity};
use crate::error::{DiagError, Result};
use crate::measure::SessionOptions;
use crate::record::Backend;
use crate::sample::Direction;
use crate::target::Target;

/// The exit status when a problem was found.
pub const FOUND_EXIT: u8 = 3;

/// Runs the doctor; `Ok(true)` when it found a problem.
pub fn run(args: &DoctorArgs) -> Result<bool> {
    if !(args.threshold.is_finite() && args.threshold > 1.0) {
        return Err(DiagError::Usage(format!(
            "--threshold {} must be a ratio above 1 (1.1: 10 % faster)",
            args.threshold
        )));
    }
    if args.probe.small == 0 || args.probe.large == Some(0) || args.read_size == Some(0) {
        return Err(DiagError::Usage(
            "--small, --large and --read-size must be at least 1 byte".into(),
        ));
    }
    let budget = crate::cli::budget(args.probe.budget)?;
    if let Some(b) = args.baseline {
        if !(b.is_finite() && b > 0.0) {
            return Err(DiagError::Usage(format!(
                "--baseline {b} must be a rate above 0 B/s"
            )));
        }
    }
    if !matches!(args.format, Format::Text | Format::Json) {
        return Err(DiagError::Usage("doctor prints text or json".into()));
    }
    let spec = args.probe.bus.spec()?;
    let target = Target::open(args.probe.bus.backend, &spec)?;
    let simulated = target.backend == Backend::Sim;
    let req = Request {
        spec,
        session: SessionOptions {
            device: args.probe.device(&target)?,
            protocol: args.probe.protocol.into(),
            timeout: args.timeout,
        },
        small: args.probe.small,
        large: args.probe.large,
        budget,
        baseline: args.baseline,
        threshold: args.threshold,
        read_size: args.read_size,
        autopoll: args.autopoll,
        references: args
            .reference
            .iter()
            .map(|d| target.resolve_device(d))
            .collect::<Result<Vec<u8>>>()?,
    };
    let report = doctor::examine(&req, simulated, target)?;
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => serde_json::to_writer_pretty(&mut out, &report)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out)),
        _ => print_text(&mut out, &report),
    }
    .map_err(|source| DiagError::Output {
        path: "-".into(),
        source,
    })?;
    Ok(report.found_problem())
}

fn print_sweep(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    let s = &r.sweep;
    if let (Some(first), Some(last)) = (s.sizes.first(), s.sizes.last()) {
        writeln!(
            out,
            "  sweep: {} size{} from {first} B to {last} B, {} each way ({:.1} s of the {:.1} s budget{})",
            s.sizes.len(),
            if s.sizes.len() == 1 { "" } else { "s" },
            match s.repeats {
                1 => "once".to_string(),
                n => format!("{n} times"),
            },
            s.spent_seconds,
            s.budget_seconds,
            if s.stopped_by_budget {
                "; the next size would pass it"
            } else {
                ""
            }
        )?;
    }
    for d in [Direction::Read, Direction::Write] {
        if let Some(f) = s.fit(d) {
            writeln!(out, "    {}", doctor::fit_line(d, f))?;
        }
    }
    let h = &r.handshake;
    writeln!(
        out,
        "  handshake ceiling: {:.2} us a byte reading, {:.2} us writing ({})",
        h.byte_ns(Direction::Read) as f64 / 1e3,
        h.byte_ns(Direction::Write) as f64 / 1e3,
        h.describe()
    )?;
    if !r.devices.is_empty() {
        writeln!(out, "  other devices on the board, for reference:")?;
    }
    for d in &r.devices {
        match &d.failure {
            Some(e) => writeln!(out, "    {}: not measured ({e})", d.address)?,
            None => writeln!(
                out,
                "    {}: {} B read at {}, written at {}",
                d.address,
                d.bytes,
                d.rate(Direction::Read)
                    .map_or("-".into(), doctor::advice_rate),
                d.rate(Direction::Write)
                    .map_or("-".into(), doctor::advice_rate),
            )?,
        }
    }
    if let Some(first) = r.settings.first() {
        writeln!(
            out,
            "  settings tried the other way ({}, alternately with the setting as found; all put back):",
            match first.as_found.len() {
                1 => "once each way".to_string(),
                n => format!("{n} runs each way"),
            }
        )?;
    }
    for t in &r.settings {
        writeln!(
            out,
            "    {} {} -> {}: {} {:.2}x as fast ({}{})",
            t.setting,
            t.found,
            t.tried,
            t.probe.describe(t.bytes),
            t.speedup,
            match (&t.test, t.significant) {
                _ if t.beyond_the_setting =>
                    "more than the setting can make: other work disturbed the runs".into(),
                (Some(w), true) => p_text(w.p),
                (Some(w), false) => format!("{}: no real difference", p_text(w.p)),
                (None, true) => "exact".into(),
                (None, false) => "exact: no difference".into(),
            },
            match t.disturbed {
                0 => String::new(),
                1 => "; 1 disturbed run left out".into(),
                n => format!("; {n} disturbed runs left out"),
            }
        )?;
    }
    Ok(())
}

fn print_text(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    writeln!(
        out,
        "gpib-diag doctor: {}{}",
        r.target,
        r.device.map_or(String::new(), |d| format!(", device {d}"))
    )?;
    let b = &r.bus;
    writeln!(
        out,
        "  listeners: {}; SRQ {}; NRFD {}",
        if b.listeners.is_empty() {
            "none found".into()
        } else {
            b.listeners
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        },
        if b.srq { "asserted" } else { "released" },
        if !b.lines_known {
            "unknown"
        } else if b.nrfd_held {
            "held"
        } else {
            "released"
        }
    )?;
    for (name, t) in r.transfers.each() {
        let base = r
            .baseline
            .as_ref()
            .and_then(|x| x.each().into_iter().find(|(n, _)| *n == name))
            .map(|(_, b)| format!(" (without contention: {})", rate_of(name, &b)))
            .unwrap_or_default();
        writeln!(
            out,
            "  {name:<13} {:>6} {}  {:>12.6} s  {:>16}  CPU {:>3.0} %{base}",
            t.bytes,
            if name == QUERIES { "x" } else { "B" },
            t.seconds,
            rate_of(name, &t),
            if t.seconds > 0.0 {
                100.0 * t.cpu_seconds / t.seconds
            } else {
                0.0
            }
        )?;
    }
    if let Some(a) = r.transfers.addressing_seconds {
        writeln!(
            out,
            "  addressing: {:.1} us a sequence, {}",
            a * 1e6,
            if r.transfers.addresses_every_call {
                "sent before every call"
            } else {
                "sent when the addressed device changes"
            }
        )?;
    }
    print_sweep(out, r)?;
    let problems = r
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Problem)
        .count();
    writeln!(out)?;
    if problems == 0 {
        writeln!(out, "No problems found.")?;
    } else {
        writeln!(
            out,
            "{problems} problem{} found:",
            if problems == 1 { "" } else { "s" }
        )?;
    }
    for (i, f) in r.findings.iter().enumerate() {
        let tag = match f.severity {
            Severity::Problem => "",
            Severity::Note => "note: ",
        };
        writeln!(out, "{}. {tag}[{}] {}", i + 1, f.cause.name(), f.summary)?;
        for e in &f.evidence {
            writeln!(out, "     - {e}")?;
        }
        writeln!(out, "     try: {}", f.advice)?;
    }
    Ok(())
}
