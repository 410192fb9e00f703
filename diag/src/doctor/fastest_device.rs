//! The board's fastest device as a reference: other devices on the same board (the
//! ones `--reference` names) read and written at the probed device's largest size, so
//! that a slow transfer is put on the device (the others run faster through the same
//! board, cable and host) or on everything else (they run as slowly).

use serde::Serialize;

use crate::measure::{Session, SessionOptions};
use crate::sample::Direction;
use crate::target::Target;

use super::advice::{problem, rate_text};
use super::sweep::Sweep;
use super::{Cause, Finding};

/// A device this many times faster than the probed one, at the same size through the
/// same board, puts the slowness on the probed device.
pub const FASTER: f64 = 2.0;

/// Devices within this ratio of the probed one run "as slowly".
pub const AS_SLOW: f64 = 1.5;

/// One device's transfers at the reference size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceRate {
    /// Its primary address.
    pub address: u8,
    /// Bytes of each transfer.
    pub bytes: u64,
    /// Median seconds of its reads.
    pub read_seconds: Option<f64>,
    /// Median seconds of its writes.
    pub write_seconds: Option<f64>,
    /// Why it could not be measured (a listen-only device cannot talk).
    pub failure: Option<String>,
}

impl DeviceRate {
    /// Its rate in `d`, B/s.
    pub fn rate(&self, d: Direction) -> Option<f64> {
        let s = match d {
            Direction::Read => self.read_seconds,
            Direction::Write => self.write_seconds,
        }?;
        (s > 0.0).then(|| self.bytes as f64 / s)
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len().checked_sub(1)? / 2).copied()
}

/// Reads and writes `bytes` `repeats` times on each of `devices` (driven as `opts`
/// says, at their own addresses); a device that fails is kept with the failure.
pub fn measure(
    target: &Target,
    opts: &SessionOptions,
    devices: &[u8],
    bytes: u64,
    repeats: u32,
) -> Vec<DeviceRate> {
    devices
        .iter()
        .map(|&address| {
            let mut rate = DeviceRate {
                address,
                bytes,
                read_seconds: None,
                write_seconds: None,
                failure: None,
            };
            let opts = SessionOptions {
                device: Some(address),
                ..*opts
            };
            let run = || -> crate::error::Result<(f64, f64)> {
                let mut s = Session::open(target, &opts, bytes)?;
                let (mut r, mut w) = (Vec::new(), Vec::new());
                for _ in 0..repeats.max(1) {
                    r.push(s.read(bytes)?.seconds);
                    w.push(s.write(bytes)?.seconds);
                }
                Ok((median(r).unwrap_or(0.0), median(w).unwrap_or(0.0)))
            };
            match run() {
                Ok((r, w)) => {
                    rate.read_seconds = Some(r);
                    rate.write_seconds = Some(w);
                }
                Err(e) => rate.failure = Some(e.to_string()),
            }
            rate
        })
        .collect()
}

/// What the other devices say of `device`'s transfers at their size in `sweep`: a
/// `slow-device` finding when one of them runs [`FASTER`] at least; when every one
/// measured runs within [`AS_SLOW`] of it, a line saying the device is not the cause
/// (for the evidence of what is).
pub fn judge(
    device: u8,
    sweep: &Sweep,
    others: &[DeviceRate],
) -> (Option<Finding>, Option<String>) {
    let measured: Vec<&DeviceRate> = others.iter().filter(|o| o.failure.is_none()).collect();
    let Some(bytes) = measured.first().map(|o| o.bytes) else {
        return (None, None);
    };
    // The probed device at the same size: its median run.
    let own = |d: Direction| {
        sweep
            .median(d, bytes)
            .filter(|p| p.seconds > 0.0)
            .map(|p| p.bytes as f64 / p.seconds)
    };
    // The direction where the fastest other device is furthest ahead.
    let mut best: Option<(f64, Direction, f64, &DeviceRate)> = None;
    let mut all_as_slow = true;
    for d in [Direction::Read, Direction::Write] {
        let Some(mine) = own(d) else { continue };
        for o in &measured {
            let Some(theirs) = o.rate(d) else { continue };
            let ratio = theirs / mine;
            if ratio > AS_SLOW {
                all_as_slow = false;
            }
            if best.is_none_or(|(r, ..)| ratio > r) {
                best = Some((ratio, d, mine, o));
            }
        }
    }
    let Some((ratio, d, mine, fastest)) = best else {
        return (None, None);
    };
    let theirs = fastest.rate(d).unwrap_or(0.0);
    let verb = match d {
        Direction::Read => "reads",
        Direction::Write => "writes",
    };
    if ratio >= FASTER {
        let mut f = problem(
            Cause::SlowDevice,
            format!(
                "device {device} is the slow one: its {verb} of {bytes} B run at {}, while device {} \
                 on the same board runs them {ratio:.1}x faster ({})",
                rate_text(mine),
                fastest.address,
                rate_text(theirs)
            ),
            vec![format!(
                "the board, its cable and this host move {bytes} B {verb} for device {} at {}",
                fastest.address,
                rate_text(theirs)
            )],
            &format!(
                "look at device {device}: how fast it accepts or sends each byte (its settings, \
                 its output format, its firmware); the board and the host are not the limit"
            ),
        );
        f.speedup = Some(ratio);
        return (Some(f), None);
    }
    let line = all_as_slow.then(|| {
        format!(
            "device {} on the same board is as slow ({} against {} for {bytes} B {verb}): \
             the board, its cable, a device listening to every byte or the host, rather than \
             device {device}",
            fastest.address,
            rate_text(theirs),
            rate_text(mine)
        )
    });
    (None, line)
}
