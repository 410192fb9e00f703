//! What limits transfers, judged against the handshake ceiling with no simulator to
//! compare with: the host CPU (busy through each byte), the bus (a device holding the
//! handshake while the CPU idles), or figures no IEEE 488 bus can produce.

use crate::sample::Direction;

use super::advice::{problem, rate_text};
use super::probe::Transfers;
use super::reference::Handshake;
use super::sweep::{DirectionFit, Sweep};
use super::{Cause, Finding, Severity};

/// Bytes taking this many times the handshake ceiling make a finding: an order of
/// magnitude, past what T1, cable length and an ordinary instrument explain.
pub const SLOW_RATIO: f64 = 10.0;

/// A CPU busy this share of each byte's time is the limit.
pub const CPU_BOUND_SHARE: f64 = 0.8;

/// A CPU busy at most this share of each byte's time is not.
pub const CPU_IDLE_SHARE: f64 = 0.2;

/// A transfer thread that waits for a CPU this share of each byte's time is held up
/// by other work on the machine.
pub const CONTENDED_SHARE: f64 = 0.25;

fn us(seconds: f64) -> String {
    if seconds >= 1e-3 {
        format!("{:.3} ms", seconds * 1e3)
    } else {
        format!("{:.1} us", seconds * 1e6)
    }
}

/// A direction's per-call and per-byte costs, with their 95 % intervals, in words.
pub fn fit_line(d: Direction, f: &DirectionFit) -> String {
    let ci = |x: f64| {
        if x.is_finite() {
            format!(" ± {}", us(x))
        } else {
            String::new()
        }
    };
    format!(
        "{:<5} per call {}{}, per byte {}{} ({}); CPU {} a byte ({:.0} % of each byte's time){}",
        d.as_str(),
        us(f.time.intercept.max(0.0)),
        ci(f.time.intercept_ci95),
        us(f.byte_seconds()),
        ci(f.time.slope_ci95),
        if f.byte_seconds() > 0.0 {
            rate_text(1.0 / f.byte_seconds())
        } else {
            "no time a byte".into()
        },
        us(f.cpu_byte_seconds()),
        100.0 * f.cpu_share(),
        if f.waiting.is_some() {
            format!(", waiting for a CPU {:.0} %", 100.0 * f.waiting_share())
        } else {
            String::new()
        }
    )
}

/// How a direction's bytes compare with the ceiling.
#[derive(Debug, Clone, Copy)]
struct Slow {
    direction: Direction,
    byte_s: f64,
    ceiling_s: f64,
    cpu_share: f64,
    cpu_byte_s: f64,
    waiting_share: f64,
}

impl Slow {
    fn ratio(&self) -> f64 {
        self.byte_s / self.ceiling_s
    }

    /// The share of each byte's time the thread ran or wanted to.
    fn wanted_share(&self) -> f64 {
        (self.cpu_share + self.waiting_share).min(1.0)
    }

    fn evidence(&self) -> String {
        format!(
            "{}s: {} a byte, {:.0}x the {} a byte the handshake needs; the CPU is busy {:.0} % of it ({} a byte){}",
            self.direction.as_str(),
            us(self.byte_s),
            self.ratio(),
            us(self.ceiling_s),
            100.0 * self.cpu_share,
            us(self.cpu_byte_s),
            if self.waiting_share >= 0.005 {
                format!(
                    ", and the transfer waits for a CPU {:.0} % of it",
                    100.0 * self.waiting_share
                )
            } else {
                String::new()
            }
        )
    }
}

/// The findings of the sweep against the handshake: a rate no bus can reach, or bytes
/// an order of magnitude slower than the ceiling, with what the CPU did meanwhile.
pub fn findings(
    sweep: &Sweep,
    transfers: &Transfers,
    hs: &Handshake,
    others: &[u8],
) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(f) = faster_than_the_bus(transfers, hs) {
        out.push(f);
        // The clock cannot be trusted: nothing more to say about speed.
        return out;
    }
    let slow: Vec<Slow> = [Direction::Read, Direction::Write]
        .into_iter()
        .filter_map(|d| {
            let f = sweep.fit(d)?;
            let s = Slow {
                direction: d,
                byte_s: f.byte_seconds(),
                ceiling_s: hs.byte_ns(d) as f64 * 1e-9,
                cpu_share: f.cpu_share(),
                cpu_byte_s: f.cpu_byte_seconds(),
                waiting_share: f.waiting_share(),
            };
            (s.ratio() >= SLOW_RATIO).then_some(s)
        })
        .collect();
    let host_bound = |s: &&Slow| s.wanted_share() >= CPU_BOUND_SHARE;
    let contended: Vec<Slow> = slow
        .iter()
        .filter(host_bound)
        .filter(|s| s.waiting_share >= CONTENDED_SHARE)
        .copied()
        .collect();
    let cpu: Vec<Slow> = slow
        .iter()
        .filter(host_bound)
        .filter(|s| s.waiting_share < CONTENDED_SHARE)
        .copied()
        .collect();
    let idle: Vec<Slow> = slow
        .iter()
        .copied()
        .filter(|s| s.wanted_share() <= CPU_IDLE_SHARE)
        .collect();
    let mixed: Vec<Slow> = slow
        .iter()
        .copied()
        .filter(|s| s.wanted_share() > CPU_IDLE_SHARE && s.wanted_share() < CPU_BOUND_SHARE)
        .collect();
    if !contended.is_empty() {
        let s = contended[0];
        out.push(problem(
            Cause::CpuContention,
            format!(
                "other work holds the CPU: {}s take {} a byte, {:.0}x the {} a byte the handshake needs ({}), and the transfer waits for a CPU {:.0} % of that time",
                s.direction.as_str(),
                us(s.byte_s),
                s.ratio(),
                us(s.ceiling_s),
                hs.describe(),
                100.0 * s.waiting_share
            ),
            contended.iter().map(Slow::evidence).collect(),
            "other threads or processes keep this machine's CPUs busy while it transfers: find \
             them (top, pidstat -t), move that work to another time or machine, or give the \
             transfer a CPU of its own (taskset, a higher priority)",
        ));
    }
    if !cpu.is_empty() {
        let s = cpu[0];
        out.push(problem(
            Cause::CpuBound,
            format!(
                "transfers are CPU-bound: {}s take {} of CPU a byte, {:.0}x the {} a byte the handshake needs ({}); the CPU, not the bus, sets the rate",
                s.direction.as_str(),
                us(s.cpu_byte_s),
                s.ratio(),
                us(s.ceiling_s),
                hs.describe()
            ),
            cpu.iter().map(Slow::evidence).collect(),
            "something takes the CPU between bytes: the driver's byte loop is interrupted or \
             slowed by other work. Look at the interrupts that fire during transfers (another \
             interface's driver polling a mounted disc, a busy disc or network card), at other \
             processes on the machine, and at the driver's transfer mode (programmed I/O with a \
             wait per byte); unmount or move what shares the interface, or use a DMA board",
        ));
    }
    if !idle.is_empty() {
        let s = idle[0];
        let mut evidence: Vec<String> = idle.iter().map(Slow::evidence).collect();
        if !others.is_empty() {
            evidence.push(format!(
                "other devices that listen on this bus: {} (each listener must accept every byte it is addressed for; a listen-only one accepts them all)",
                others
                    .iter()
                    .map(u8::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        out.push(problem(
            Cause::SlowDevice,
            format!(
                "the bus waits for a device: {}s take {} a byte, {:.0}x the {} a byte the handshake needs ({}), with the CPU idle",
                s.direction.as_str(),
                us(s.byte_s),
                s.ratio(),
                us(s.ceiling_s),
                hs.describe()
            ),
            evidence,
            "a device holds the handshake: the instrument itself (its output format, display \
             updates, internal buffer) or a slow listener elsewhere on the bus (every listener \
             must accept each byte: listen-only printers and plotters). Switch other devices \
             off or out of listen-only mode one at a time and measure again. Behind a LAN \
             gateway or adapter the wait may be the gateway's own (its host's CPU, its \
             driver): run the doctor on the gateway's host to see its side",
        ));
    }
    if !mixed.is_empty() {
        let s = mixed[0];
        out.push(problem(
            Cause::BelowCeiling,
            format!(
                "{}s take {} a byte, {:.0}x the {} a byte the handshake needs ({}); the CPU is busy {:.0} % of that time",
                s.direction.as_str(),
                us(s.byte_s),
                s.ratio(),
                us(s.ceiling_s),
                hs.describe(),
                100.0 * s.cpu_share
            ),
            mixed.iter().map(Slow::evidence).collect(),
            "both the host and the bus take part: look at what else runs on the host during \
             transfers, and at the devices on the bus; `gpib-diag trace` shows where each byte's \
             time goes",
        ));
    }
    let host = sweep.host.as_ref().map(|h| h.lines()).unwrap_or_default();
    for f in &mut out {
        f.evidence.extend(host.iter().cloned());
    }
    if let Some(h) = sweep.host.as_ref().filter(|h| !h.board_holders.is_empty()) {
        out.push(Finding {
            cause: Cause::BoardShared,
            severity: Severity::Note,
            summary: format!(
                "{} other process{} hold{} a GPIB board open: {} program{} take{} turns with this one on the bus",
                h.board_holders.len(),
                if h.board_holders.len() == 1 { "" } else { "es" },
                if h.board_holders.len() == 1 { "s" } else { "" },
                if h.board_holders.len() == 1 { "that" } else { "those" },
                if h.board_holders.len() == 1 { "" } else { "s" },
                if h.board_holders.len() == 1 { "s" } else { "" },
            ),
            evidence: h
                .board_holders
                .iter()
                .map(|x| format!("process {} ({}) holds {} open", x.pid, x.command, x.device))
                .collect(),
            advice: "stop the other program while measuring, or give it its own board".into(),
            speedup: None,
        });
    }
    out
}

/// A transfer faster than the physical ceiling: not a real bus, or the clock is wrong.
fn faster_than_the_bus(t: &Transfers, hs: &Handshake) -> Option<Finding> {
    let ceiling = 1e9 / hs.physical_floor_ns() as f64;
    let fast: Vec<String> = t
        .each()
        .into_iter()
        .filter(|(n, _)| *n != super::probe::QUERIES)
        .filter(|(_, x)| x.bytes > 0 && x.rate() > ceiling)
        .map(|(n, x)| format!("{n} of {} bytes: {}", x.bytes, rate_text(x.rate())))
        .collect();
    (!fast.is_empty()).then(|| Finding {
        cause: Cause::FasterThanTheBus,
        severity: Severity::Problem,
        summary: format!(
            "transfers ran faster than IEEE 488 allows ({} at most, {}): not a real bus, or the clock is wrong",
            rate_text(ceiling),
            if hs.hs488 == Some(false) {
                "1 us a byte"
            } else {
                "125 ns a byte with HS488"
            }
        ),
        evidence: fast,
        advice: "check that the backend talks to a real board (a simulated one in virtual time \
                 answers at once: give it GPIB_SIM_REALTIME=1) and that the clock measures wall time"
            .into(),
        speedup: None,
    })
}

/// A share of a small read at or above which addressing on every call is worth a note.
pub const ADDRESSING_SHARE: f64 = 0.25;

/// A note when the driver addresses the device on every call (linux-gpib's `ibrd` and
/// `ibwrt` on a device descriptor, whatever `IbcREADDR` says) and one addressing
/// sequence is a large share of a small read: what a program of many small calls to
/// one device pays, and how it can address once instead. Both are the undisturbed
/// figures (the least of their runs on a wall clock), so that a late wake-up of the
/// measuring thread in one of them does not move the share across the line.
pub fn addressing_note(transfers: &Transfers) -> Option<Finding> {
    let a = transfers.addressing_seconds?;
    let t = transfers.read_small.as_ref()?;
    let read = t.least_seconds();
    let share = a / read.max(f64::MIN_POSITIVE);
    if !transfers.addresses_every_call || !(ADDRESSING_SHARE..=1.0).contains(&share) {
        return None;
    }
    let mut f = problem(
        Cause::Setting("readdress"),
        format!(
            "the driver addresses the device on every call: an addressing sequence sent \
             alone takes {}, {:.0} % of a {}-byte read's {}",
            us(a),
            100.0 * share,
            t.bytes,
            us(read)
        ),
        Vec::new(),
        "many small calls to one device: address it once (ibcmd of UNL, the board's talk \
         address and the device's listen address, or the reverse to read) and move the data \
         with ibwrt/ibrd on the board descriptor; or make fewer, larger calls",
    );
    f.severity = Severity::Note;
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::probe::Timing;

    /// A device-level backend's transfers: a 16-byte read's runs and one addressing
    /// sequence's least time.
    fn read_in(runs: &[f64], addressing: f64) -> Transfers {
        let mut sorted = runs.to_vec();
        sorted.sort_by(f64::total_cmp);
        Transfers {
            read_small: Some(Timing {
                bytes: 16,
                seconds: sorted[sorted.len() / 2],
                cpu_seconds: 0.0,
                run_seconds: runs.to_vec(),
            }),
            addressing_seconds: Some(addressing),
            addresses_every_call: true,
            ..Default::default()
        }
    }

    // Regression: through linux-gpib's library on the virtual board, a quiet run's
    // 16-byte reads took 72 us, 133 us and 140 us (two of the DMA waits woke late), so
    // the median put a 33 us addressing sequence at 24.7 % of a read and the note went
    // missing. The undisturbed read is the least.
    #[test]
    fn the_addressing_note_compares_with_the_undisturbed_small_read() {
        let t = read_in(&[133.4e-6, 72.0e-6, 140.0e-6], 33.0e-6);
        let f = addressing_note(&t).expect("a readdressing note");
        assert_eq!(
            (f.cause, f.severity),
            (Cause::Setting("readdress"), Severity::Note)
        );
        assert!(
            f.summary
                .contains("33.0 us, 46 % of a 16-byte read's 72.0 us"),
            "{}",
            f.summary
        );
    }

    #[test]
    fn addressing_that_is_a_small_share_of_the_read_or_not_sent_each_call_is_no_note() {
        // 14 % of the undisturbed read: below the line.
        assert!(addressing_note(&read_in(&[72.0e-6, 75.0e-6, 74.0e-6], 10.0e-6)).is_none());
        // A board that addresses once.
        let mut t = read_in(&[72.0e-6], 33.0e-6);
        t.addresses_every_call = false;
        assert!(addressing_note(&t).is_none());
        // Longer than the read itself: a measurement to distrust, not a note.
        assert!(addressing_note(&read_in(&[72.0e-6], 80.0e-6)).is_none());
    }
}
