//! Each finding's words: what was found, the evidence, and what to try.

use gpib::sim::config::{Source, SourceKind};

use super::probe::{rate_of, Timing, Transfers};
use super::{Cause, Finding, Severity};

/// A rate in B/s as people say it: `7.5 kB/s`, `437 kB/s`, `1.20 MB/s`.
pub fn rate_text(bps: f64) -> String {
    let (v, unit) = if bps >= 1e6 {
        (bps / 1e6, "MB/s")
    } else if bps >= 1e3 {
        (bps / 1e3, "kB/s")
    } else {
        (bps, "B/s")
    };
    if v >= 100.0 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

fn us(seconds: f64) -> String {
    format!("{:.1} us", seconds * 1e6)
}

/// A problem finding with no measured speedup.
pub(super) fn problem(
    cause: Cause,
    summary: String,
    evidence: Vec<String>,
    advice: &str,
) -> Finding {
    Finding {
        cause,
        severity: Severity::Problem,
        summary,
        evidence,
        advice: advice.to_string(),
        speedup: None,
    }
}

pub fn nrfd_held() -> Finding {
    problem(
        Cause::NrfdHeld,
        "NRFD is asserted while nothing is being transferred: a device holds it, so every \
         command byte and every write waits and times out"
            .into(),
        vec!["line states: NRFD asserted, DAV released".into()],
        "power the devices off one at a time (or unplug them) until NRFD is released; the \
         last one off holds it",
    )
}

pub fn srq_stuck() -> Finding {
    problem(
        Cause::SrqStuck,
        "SRQ is asserted but no device reports RQS in its status byte: a device holds SRQ \
         without requesting service, so every wait for SRQ returns at once"
            .into(),
        vec!["serial poll of every listener: none had RQS (bit 6) set".into()],
        "power the devices off one at a time until SRQ is released; check that device's \
         service request enable register",
    )
}

pub fn no_listener(address: u8, listeners: &[u8]) -> Finding {
    problem(
        Cause::NoListener,
        format!("nothing answers at address {address}"),
        vec![format!(
            "listeners found: {}",
            listeners
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )],
        "check the address set on the instrument, that it is powered on and its cable is \
         seated; `gpib-diag scan` lists what answers",
    )
}

pub fn no_listener_at_all() -> Finding {
    problem(
        Cause::NoListener,
        "no device answers on this board".into(),
        vec!["listeners found: none".into()],
        "check that the instruments are powered on, cabled to this board, and that at least \
         two-thirds of the devices on the bus are powered",
    )
}

pub fn transfer_failed(error: &str) -> Finding {
    problem(
        Cause::TransferFailed,
        format!("a transfer failed: {error}"),
        Vec::new(),
        "run `gpib-diag trace` on the same transfer to see where it stops",
    )
}

pub fn below_baseline(measured: &Transfers, baseline: f64, threshold: f64) -> Option<Finding> {
    let (name, t) = measured
        .each()
        .into_iter()
        .filter(|(n, _)| n.starts_with("large"))
        .min_by(|a, b| a.1.rate().total_cmp(&b.1.rate()))?;
    let ratio = baseline / t.rate();
    (ratio >= threshold).then(|| {
        let mut f = problem(
            Cause::BelowBaseline,
            format!(
                "the {name} runs at {}, {ratio:.1}x below the expected {}",
                rate_text(t.rate()),
                rate_text(baseline)
            ),
            vec![evidence_line(name, t)],
            "compare with the same transfer on a quiet bus (other devices off, discs \
             unmounted); `gpib-diag trace` shows where the time goes",
        );
        f.speedup = Some(ratio);
        f
    })
}

fn evidence_line(name: &str, t: Timing) -> String {
    format!(
        "{name} of {} bytes: {:.6} s, {}, CPU {:.0} %",
        t.bytes,
        t.seconds,
        rate_text(t.rate()),
        if t.seconds > 0.0 {
            100.0 * t.cpu_seconds / t.seconds
        } else {
            0.0
        }
    )
}

/// A finding for a contention source of `kind`, whose absence made `which` run
/// `speedup` times faster.
pub fn source(
    kind: SourceKind,
    sources: &[&Source],
    which: &str,
    speedup: f64,
    with: &Transfers,
    without: &Transfers,
) -> Finding {
    let what = sources
        .iter()
        .map(|s| s.what.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let mut evidence = Vec::new();
    for (name, t) in with.each() {
        if let Some((_, u)) = without.each().into_iter().find(|(n, _)| *n == name) {
            evidence.push(format!(
                "{name}: {} with it, {} without ({:.1}x)",
                rate_of(name, &t),
                rate_of(name, &u),
                t.seconds / u.seconds.max(f64::MIN_POSITIVE)
            ));
        }
    }
    if kind == SourceKind::EveryCallAddressing {
        if let (Some(a), Some(t)) = (with.addressing_seconds, with.read_small.as_ref()) {
            evidence.push(format!(
                "one addressing sequence takes {}, {:.0} % of a {}-byte read's {}",
                us(a),
                100.0 * a / t.seconds.max(f64::MIN_POSITIVE),
                t.bytes,
                us(t.seconds)
            ));
        }
    }
    let first = sources.first();
    let device = first.and_then(|s| s.address);
    let dev = device.map_or_else(|| "the device".to_string(), |a| format!("device {a}"));
    let board = first.map_or("the board", |s| s.board.as_str());
    let (summary, advice) = match kind {
        SourceKind::MountedDisc => (
            what.clone(),
            format!(
                "unmount {}, or move the disc to the DMA interface",
                first
                    .and_then(|s| s.what.split_whitespace().next())
                    .unwrap_or("the disc")
            ),
        ),
        SourceKind::SlowListener => (
            format!("{what}: every handshake on {board} runs at the slowest listener"),
            format!("take {dev} out of listen-only mode, or off the bus, while transferring"),
        ),
        SourceKind::NrfdHolder => (
            format!("{what}: every device takes part in the command handshake, so each addressing sequence waits for it"),
            format!("give {dev} a bus of its own, or find why it stays busy after each message"),
        ),
        SourceKind::SrqStorm => (
            format!("{what}: an SRQ storm, each request costing a serial poll (SPE, talk address, status byte, SPD, UNT) on the bus and the CPU"),
            format!("find why {dev} keeps requesting service (its service request enable register, *SRE), or switch the driver's autopoll off"),
        ),
        SourceKind::EveryCallAddressing => (
            format!("many small transactions: {what}, so each call pays UNL, MTA/MLA and any secondary"),
            "keep the device addressed between calls (board-level I/O, cached addressing), or send fewer, larger messages".to_string(),
        ),
        SourceKind::BusyDisc => (
            format!("{what}: its interrupts take CPU from transfers that need it"),
            "move the disc traffic to another time or host, or give the disc interface larger DMA blocks (fewer interrupts)".to_string(),
        ),
        SourceKind::LongCable => (
            format!("{what}: propagation and the longer settling time slow every handshake"),
            "shorten the cable to 20 m at most and 2 m a device, or split the bus with an extender".to_string(),
        ),
        SourceKind::ProgrammedIo => (
            format!("{what}: the CPU moves every byte, so transfers are bound by it and it is busy throughout"),
            "a DMA board would move the bytes without the CPU".to_string(),
        ),
    };
    Finding {
        cause: Cause::Source(kind),
        severity: Severity::Problem,
        summary,
        evidence,
        advice,
        speedup: Some(speedup),
    }
    .with_which(which)
}

impl Finding {
    fn with_which(mut self, which: &str) -> Self {
        if let Some(s) = self.speedup {
            self.evidence
                .push(format!("switched off, the {which} runs {s:.1}x faster"));
        }
        self
    }
}

/// Puts the measured slowdown against the baseline at the front of the main finding:
/// "reads from 11 run at 7.5 kB/s, 58x below this board's 437 kB/s; ...".
pub fn lead_with_slowdown(
    f: &mut Finding,
    measured: &Transfers,
    baseline: &Transfers,
    device: Option<u8>,
) {
    let pick = |t: &Transfers, n: &str| t.each().into_iter().find(|(m, _)| *m == n);
    let worst = measured
        .each()
        .into_iter()
        .filter_map(|(n, t)| pick(baseline, n).map(|(_, b)| (n, t, b)))
        .max_by(|a, b| (a.1.seconds / a.2.seconds).total_cmp(&(b.1.seconds / b.2.seconds)));
    let Some((name, t, b)) = worst else { return };
    let ratio = t.seconds / b.seconds.max(f64::MIN_POSITIVE);
    if ratio < 1.1 {
        return;
    }
    let verb = if name == super::probe::QUERIES {
        format!(
            "short queries to {}",
            device.map_or("the device".into(), |d| d.to_string())
        )
    } else if name.ends_with("read") {
        format!(
            "reads from {}",
            device.map_or("the device".into(), |d| d.to_string())
        )
    } else {
        format!(
            "writes to {}",
            device.map_or("the device".into(), |d| d.to_string())
        )
    };
    let size = if name.starts_with("small") {
        "small "
    } else {
        ""
    };
    f.summary = format!(
        "{size}{verb} run at {}, {ratio:.1}x below this board's {}; the slowdown appears only while {}",
        rate_of(name, &t),
        rate_of(name, &b),
        f.summary
    );
}
