//! `gpib-diag doctor`'s reasoning: probes on a board, A/B runs with each contention
//! source switched off (simulator), and findings in plain words with their evidence.
//!
//! Findings are a typed list ([`Finding`], [`Cause`]) so that tests can check that the
//! right cause is named; the command prints them as text or JSON.

mod advice;
pub mod fastest_device;
mod limits;
pub mod probe;
pub mod read_end;
pub mod reference;
pub mod settings_ab;
pub mod sweep;

pub use advice::rate_text as advice_rate;
pub use limits::fit_line;

use std::time::Duration;

use gpib::sim::config::{Source, SourceKind};
use gpib::sim::Config;
use serde::Serialize;

use crate::error::Result;
use crate::measure::SessionOptions;
use crate::target::{BusSpec, Target};
use probe::{BusState, Transfers};
use reference::Handshake;
use sweep::Sweep;

/// What a finding says is wrong (in JSON: its name, e.g. `"mounted-disc"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Nothing answers at the device's address.
    NoListener,
    /// SRQ is asserted and no device's status byte has RQS.
    SrqStuck,
    /// NRFD is asserted while nothing is transferred.
    NrfdHeld,
    /// A contention source of the configuration (found by switching it off).
    Source(SourceKind),
    /// Transfers run below the given baseline and no cause could be isolated.
    BelowBaseline,
    /// A transfer failed.
    TransferFailed,
    /// Bytes take an order of magnitude longer than the handshake needs, with the CPU
    /// busy throughout: the host sets the rate.
    CpuBound,
    /// Bytes take an order of magnitude longer than the handshake needs, with the CPU
    /// idle: a device holds the handshake.
    SlowDevice,
    /// Bytes take an order of magnitude longer than the handshake needs, the CPU busy
    /// part of the time.
    BelowCeiling,
    /// A rate above what any IEEE 488 bus can carry: not a real bus, or a wrong clock.
    FasterThanTheBus,
    /// Bytes take an order of magnitude longer than the handshake needs, and the
    /// transfer's thread waits for a CPU that other work holds.
    CpuContention,
    /// Another process holds a GPIB board open.
    BoardShared,
    /// The device ends its answers without END (EOI): reads wait for their timeout,
    /// and end at once on a newline.
    NoEoi,
    /// A board setting (`t1`, `autopoll`, `readdress`, `unaddress`) or the program's
    /// read size (`read-size`) that, tried the other way, made its probe significantly
    /// faster.
    Setting(&'static str),
}

impl Cause {
    /// The cause's name in reports: `no-listener`, `mounted-disc`, ...
    pub fn name(self) -> &'static str {
        match self {
            Cause::NoListener => "no-listener",
            Cause::SrqStuck => "srq-stuck",
            Cause::NrfdHeld => "nrfd-held",
            Cause::Source(k) => k.name(),
            Cause::BelowBaseline => "below-baseline",
            Cause::TransferFailed => "transfer-failed",
            Cause::CpuBound => "cpu-bound",
            Cause::SlowDevice => "slow-device",
            Cause::BelowCeiling => "below-ceiling",
            Cause::FasterThanTheBus => "faster-than-the-bus",
            Cause::CpuContention => "cpu-contention",
            Cause::BoardShared => "board-shared",
            Cause::NoEoi => "no-eoi",
            Cause::Setting("t1") => "slow-t1",
            Cause::Setting("autopoll") => "autopoll",
            Cause::Setting("readdress") => "readdressing",
            Cause::Setting("unaddress") => "unaddressing",
            Cause::Setting("read-size") => "small-reads",
            Cause::Setting(_) => "setting",
        }
    }
}

impl Serialize for Cause {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something is wrong or slows transfers down.
    Problem,
    /// Worth knowing; not a fault (programmed I/O on a board that could use DMA).
    Note,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// What is wrong.
    pub cause: Cause,
    /// How much it matters.
    pub severity: Severity,
    /// What was found, in plain words.
    pub summary: String,
    /// The figures behind it.
    pub evidence: Vec<String>,
    /// What to try.
    pub advice: String,
    /// How much faster the slowest-hit transfer ran without the cause.
    pub speedup: Option<f64>,
}

/// Everything the doctor found on one board.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The configuration or board examined.
    pub target: String,
    /// The device probed.
    pub device: Option<u8>,
    /// Lines, listeners, SRQ.
    pub bus: BusState,
    /// The transfers as measured.
    pub transfers: Transfers,
    /// The size sweep and its fits (`t = a + b·n` each way).
    pub sweep: Sweep,
    /// The handshake's ceiling for this board's settings.
    pub handshake: Handshake,
    /// The board's settings, each tried the other way.
    pub settings: Vec<settings_ab::Trial>,
    /// The other devices `--reference` named, at the probed device's largest size.
    pub devices: Vec<fastest_device::DeviceRate>,
    /// A read stalled: a short query tried with reads ending on a newline.
    pub read_end: Option<read_end::ReadEndTrial>,
    /// The same transfers with every contention source switched off (simulator).
    pub baseline: Option<Transfers>,
    /// The contention sources the configuration has (simulator).
    pub sources: Vec<Source>,
    /// The findings, problems first, the largest slowdown first.
    pub findings: Vec<Finding>,
}

impl Report {
    /// Whether a problem was found.
    pub fn found_problem(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.severity == Severity::Problem)
    }
}

/// What the doctor is asked to do.
#[derive(Debug, Clone)]
pub struct Request {
    /// Which bus.
    pub spec: BusSpec,
    /// Which device, and how it is driven.
    pub session: SessionOptions,
    /// Small transfer size.
    pub small: u64,
    /// Large transfer size (default: as large as the budget allows).
    pub large: Option<u64>,
    /// Bus time the size sweep may take.
    pub budget: Duration,
    /// The expected rate, B/s (hardware).
    pub baseline: Option<f64>,
    /// The speedup that makes a contention source count.
    pub threshold: f64,
    /// The bytes each read call of the user's program asks for, tried against one call.
    pub read_size: Option<u64>,
    /// The user's program's automatic serial polling, set before the probe.
    pub autopoll: Option<bool>,
    /// Other devices on the board to measure as references.
    pub references: Vec<u8>,
}

/// Examines the bus `req` names: on the simulator, also every contention source.
pub fn examine(req: &Request, simulated: bool, target: Target) -> Result<Report> {
    let config = if simulated {
        Some(req.spec.config()?)
    } else {
        None
    };
    if let Some(on) = req.autopoll {
        target.bus.tuning(|t| t.set_autopoll(on))?;
    }
    let bus = probe::bus_state(&target);
    let target_board = target.board;
    let mut findings = Vec::new();
    let mut report = Report {
        target: target.label.clone(),
        device: req.session.device,
        bus: bus.clone(),
        transfers: Transfers::default(),
        sweep: Sweep::default(),
        handshake: handshake(&target, config.as_ref()),
        settings: Vec::new(),
        devices: Vec::new(),
        read_end: None,
        baseline: None,
        sources: config.as_ref().map(Config::sources).unwrap_or_default(),
        findings: Vec::new(),
    };
    if bus.nrfd_held {
        findings.push(advice::nrfd_held());
    }
    if bus.srq_stuck {
        findings.push(advice::srq_stuck());
    }
    let device = match device_to_probe(req, &target, &bus) {
        Ok(d) => d,
        Err(f) => {
            findings.push(f);
            report.findings = findings;
            return Ok(report);
        }
    };
    report.device = device;
    if bus.nrfd_held {
        // Every command byte would time out: nothing more to learn from transfers.
        report.findings = findings;
        return Ok(report);
    }
    let session = SessionOptions {
        device,
        ..req.session
    };
    let (measured, swept) = probe::swept(&target, &session, req.small, req.large, req.budget)?;
    if let Some(e) = &measured.failure {
        let trial = measured
            .stalled_after
            .map(|n| read_end::run(&target, &session, n));
        let lead = trial.as_ref().and_then(|t| read_end::finding(t, device, e));
        report.read_end = trial;
        findings.push(lead.unwrap_or_else(|| advice::transfer_failed(e)));
    }
    let large = swept.sizes.last().copied().unwrap_or(req.small);
    let others: Vec<u8> = bus
        .listeners
        .iter()
        .copied()
        .filter(|a| Some(*a) != device)
        .collect();
    let mut limits = limits::findings(&swept, &measured, &report.handshake, &others);
    if config.is_none() {
        // On the simulator, a board addressing on every call is a contention source.
        limits.extend(limits::addressing_note(&measured));
    }
    // Transfers faster than any bus: the clock cannot be trusted, so no comparison of
    // times (the devices against each other, a setting tried both ways) is run: on a
    // simulator in virtual time behind a wall-clock backend it would time only the
    // host's noise, and a trial could come out "significant" by chance.
    let clock_trusted = !limits.iter().any(|l| l.cause == Cause::FasterThanTheBus);
    if let (Some(dev), Some(&bytes), None, true) =
        (device, swept.sizes.last(), &measured.failure, clock_trusted)
    {
        let refs: Vec<u8> = req
            .references
            .iter()
            .copied()
            .filter(|&a| a != dev)
            .collect();
        report.devices = fastest_device::measure(&target, &session, &refs, bytes, swept.repeats);
        let (finding, line) = fastest_device::judge(dev, &swept, &report.devices);
        let limit = limits.iter().position(|l| l.cause == Cause::SlowDevice);
        match (finding, limit) {
            (Some(mut f), Some(i)) => {
                f.evidence.push(limits.remove(i).summary);
                limits.insert(i, f);
            }
            (Some(f), None) => limits.push(f),
            (None, _) => {}
        }
        if let Some(line) = line {
            for l in limits.iter_mut().filter(|l| l.cause == Cause::SlowDevice) {
                l.evidence.push(line.clone());
            }
        }
    }
    if measured.failure.is_none() && clock_trusted {
        let plan = settings_ab::Plan {
            small: req.small,
            bytes: ab_bytes(&swept, req.budget),
            read_bytes: req
                .read_size
                .map_or(0, |n| read_size_bytes(&swept, req.budget, n)),
            t1_ns: report.handshake.t1_ns,
            read_size: req.read_size,
        };
        report.settings = settings_ab::run(&target, &session, plan)?;
        limits.extend(settings_ab::findings(&report.settings, req.threshold));
    }
    if let Some(config) = &config {
        let board = config
            .boards
            .get(target_board)
            .map(|b| b.name.clone())
            .unwrap_or_default();
        let (baseline, mut causes) = ab_runs(req, config, &board, &session, large, &measured)?;
        findings.append(&mut causes);
        if let Some(b) = &baseline {
            if let Some(f) = findings
                .iter_mut()
                .find(|f| f.severity == Severity::Problem && matches!(f.cause, Cause::Source(_)))
            {
                advice::lead_with_slowdown(f, &measured, b, device);
            }
        }
        report.baseline = baseline;
    } else if let Some(rate) = req.baseline {
        if let Some(f) = advice::below_baseline(&measured, rate, req.threshold) {
            findings.push(f);
        }
    }
    fold_limits(&mut findings, limits);
    findings.sort_by(|a, b| {
        (a.severity != Severity::Problem)
            .cmp(&(b.severity != Severity::Problem))
            .then(
                b.speedup
                    .unwrap_or(0.0)
                    .total_cmp(&a.speedup.unwrap_or(0.0)),
            )
    });
    report.transfers = measured;
    report.sweep = swept;
    report.findings = findings;
    Ok(report)
}

/// Times each way a settings trial runs a probe: once in virtual time (the sweep ran
/// each size once), else [`settings_ab::WALL_REPEATS`].
fn trial_repeats(s: &Sweep) -> f64 {
    if s.repeats > 1 {
        settings_ab::WALL_REPEATS as f64
    } else {
        1.0
    }
}

/// The size of the settings' write probe: the largest swept size whose write takes at
/// most a sixteenth of the budget over the repeats (each of up to four settings runs it
/// twice a repeat), else the smallest.
fn ab_bytes(s: &Sweep, budget: Duration) -> u64 {
    let allowed = budget.as_secs_f64() / 16.0 / trial_repeats(s);
    s.sizes
        .iter()
        .rev()
        .find(|&&n| {
            s.median(crate::sample::Direction::Write, n)
                .is_some_and(|p| p.seconds <= allowed)
        })
        .or(s.sizes.first())
        .copied()
        .unwrap_or(16)
}

/// The message the read-size trial reads in calls of `call` bytes: the largest swept
/// size (at most [`settings_ab::MOST_CALLS`] calls' worth) whose read in such calls,
/// estimated from the fit (a call's cost for each call, a byte's for each byte), takes
/// at most an eighth of the budget over the repeats; never fewer than
/// [`settings_ab::FEWEST_CALLS`] calls' worth, so the size asked for is always tried
/// (a loaded machine's fit, or none, does not make the trial vanish).
fn read_size_bytes(s: &Sweep, budget: Duration, call: u64) -> u64 {
    let call = call.max(1);
    let fewest = call.saturating_mul(settings_ab::FEWEST_CALLS);
    let smallest = s.sizes.first().copied().unwrap_or(16).max(fewest);
    let Some(fit) = s.fit(crate::sample::Direction::Read) else {
        return smallest;
    };
    let allowed = budget.as_secs_f64() / 8.0 / trial_repeats(s);
    s.sizes
        .iter()
        .rev()
        .map(|&n| n.min(call.saturating_mul(settings_ab::MOST_CALLS)))
        .find(|&n| {
            let calls = n.div_ceil(call) as f64;
            calls * fit.time.intercept.max(0.0) + fit.byte_seconds() * n as f64 <= allowed
        })
        .unwrap_or(smallest)
        .max(fewest)
}

/// The handshake reference of the board `target` drives: its T1 and HS488 where the
/// backend tells them (a simulated configuration's own figures, else the driver's T1
/// setting; linux-gpib never runs HS488).
pub fn handshake(target: &Target, config: Option<&Config>) -> Handshake {
    match config.and_then(|c| c.boards.get(target.board)) {
        Some(b) => Handshake {
            t1_ns: Some(
                b.t1_ns
                    .unwrap_or(gpib::sim::timing::BoardTiming::default().t1_ns),
            ),
            hs488: Some(b.hs488),
        },
        None => Handshake {
            t1_ns: target.bus.tuning(|t| t.t1()).ok().map(|t| t.nanos()),
            // linux-gpib has no HS488: its ibask(IbaHSCableLength) is always 0 and
            // ibconfig(IbcHSCableLength) of a length is refused.
            hs488: (target.backend == crate::record::Backend::LinuxGpib).then_some(false),
        },
    }
}

/// Adds what the handshake reference says: as findings of their own when nothing else
/// explains the slowdown, else as evidence of the cause that does (a contention source
/// the simulator isolated names it more precisely than "CPU-bound").
fn fold_limits(findings: &mut Vec<Finding>, limits: Vec<Finding>) {
    let lead = findings.iter().position(|f| {
        f.severity == Severity::Problem
            && matches!(f.cause, Cause::Source(_) | Cause::BelowBaseline)
    });
    for l in limits {
        match lead {
            Some(i) if l.cause != Cause::FasterThanTheBus => findings[i].evidence.push(l.summary),
            _ => findings.push(l),
        }
    }
}

/// The device to probe: the one asked for, else the first instrument (simulator) or
/// listener; a finding when it does not answer.
fn device_to_probe(
    req: &Request,
    target: &Target,
    bus: &BusState,
) -> std::result::Result<Option<u8>, Finding> {
    let asked = req.session.device;
    let wanted = asked.or_else(|| {
        target
            .instruments()
            .first()
            .map(|(a, _)| a.primary.get())
            .or_else(|| bus.listeners.first().copied())
    });
    match wanted {
        Some(a) if !bus.listeners.is_empty() && !bus.listeners.contains(&a) => {
            Err(advice::no_listener(a, &bus.listeners))
        }
        Some(a) => Ok(Some(a)),
        None if bus.listeners.is_empty() && !target.bus.device_level() => {
            Err(advice::no_listener_at_all())
        }
        None => Ok(None),
    }
}

/// Runs the transfers with every source switched off (the baseline) and with each
/// kind switched off alone; a finding for each kind whose absence makes a transfer
/// faster by the threshold.
fn ab_runs(
    req: &Request,
    config: &Config,
    board: &str,
    session: &SessionOptions,
    large: u64,
    measured: &Transfers,
) -> Result<(Option<Transfers>, Vec<Finding>)> {
    let sources = config.sources();
    let mut findings = Vec::new();
    if sources.is_empty() {
        return Ok((None, findings));
    }
    let run = |c: &Config| -> Result<Transfers> {
        let target = Target::open_config(&req.spec, c)?;
        probe::transfers(&target, session, req.small, large)
    };
    let mut kinds: Vec<SourceKind> = sources.iter().map(|s| s.kind).collect();
    kinds.dedup();
    let causes: Vec<SourceKind> = kinds
        .iter()
        .copied()
        .filter(|k| *k != SourceKind::ProgrammedIo)
        .collect();
    let mut all_off = config.clone();
    for k in &causes {
        all_off.without_source(*k);
    }
    let baseline = if causes.is_empty() {
        None
    } else {
        Some(run(&all_off)?)
    };
    for kind in causes {
        let mut variant = config.clone();
        variant.without_source(kind);
        let without = run(&variant)?;
        let Some((which, speedup)) = measured.speedup_in(&without) else {
            continue;
        };
        if speedup >= req.threshold {
            let of_kind: Vec<&Source> = sources.iter().filter(|s| s.kind == kind).collect();
            findings.push(advice::source(
                kind, &of_kind, which, speedup, measured, &without,
            ));
        }
    }
    let pio_here = sources
        .iter()
        .any(|s| s.kind == SourceKind::ProgrammedIo && s.board == board);
    if pio_here {
        let mut dma = all_off.clone();
        dma.without_source(SourceKind::ProgrammedIo);
        let reference = baseline.clone().unwrap_or_else(|| measured.clone());
        let with_dma = run(&dma)?;
        if let Some((which, speedup)) = reference.speedup_in(&with_dma) {
            if speedup >= 1.5 {
                let of_kind: Vec<&Source> = sources
                    .iter()
                    .filter(|s| s.kind == SourceKind::ProgrammedIo && s.board == board)
                    .collect();
                let mut f = advice::source(
                    SourceKind::ProgrammedIo,
                    &of_kind,
                    which,
                    speedup,
                    &reference,
                    &with_dma,
                );
                f.severity = Severity::Note;
                findings.push(f);
            }
        }
    }
    Ok((baseline, findings))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read size asked for is always tried: with no read fit (a sweep that could not
    /// fit one, or a loaded machine's), the message was the smallest swept size, 16
    /// bytes, and a 64-byte read size was never smaller than it, so no trial ran.
    #[test]
    fn the_read_size_message_holds_several_calls_without_a_fit() {
        let s = Sweep {
            sizes: vec![16, 256, 4096],
            ..Sweep::default()
        };
        let budget = Duration::from_secs(1);
        assert_eq!(
            read_size_bytes(&s, budget, 64),
            64 * settings_ab::FEWEST_CALLS
        );
        assert_eq!(read_size_bytes(&s, budget, 1), 16);
        assert_eq!(read_size_bytes(&s, budget, 0), 16);
    }
}
