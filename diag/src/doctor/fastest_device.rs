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
                let median = |v: &[f64]| crate::stats::summarize(v).map_or(0.0, |s| s.median);
                Ok((median(&r), median(&w)))
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
    // The other device furthest ahead in either direction.
    let ratio_of = |o: &DeviceRate, d: Direction| Some(o.rate(d)? / own(d)?);
    let lead = |o: &DeviceRate| {
        [Direction::Read, Direction::Write]
            .into_iter()
            .filter_map(|d| ratio_of(o, d))
            .fold(0.0, f64::max)
    };
    let Some(fastest) = measured
        .iter()
        .copied()
        .max_by(|a, b| lead(a).total_cmp(&lead(b)))
    else {
        return (None, None);
    };
    let ratio = lead(fastest);
    if ratio <= 0.0 {
        return (None, None);
    }
    let rates = |rate: &dyn Fn(Direction) -> Option<f64>| {
        format!(
            "{} read, {} written",
            rate(Direction::Read).map_or("-".into(), rate_text),
            rate(Direction::Write).map_or("-".into(), rate_text)
        )
    };
    let mine = rates(&own);
    let theirs = rates(&|d| fastest.rate(d));
    let ratios = format!(
        "{} and {}",
        ratio_of(fastest, Direction::Read).map_or("-".into(), |r| format!("{r:.1}x")),
        ratio_of(fastest, Direction::Write).map_or("-".into(), |r| format!("{r:.1}x"))
    );
    if ratio >= FASTER {
        let mut f = problem(
            Cause::SlowDevice,
            format!(
                "device {device} is the slow one: {bytes} B transfers run at {mine}, while device {} \
                 on the same board runs them {ratios} faster",
                fastest.address
            ),
            vec![format!(
                "the board, its cable and this host move device {}'s {bytes} B at {theirs}",
                fastest.address
            )],
            &format!(
                "look at device {device}: how fast it accepts or sends each byte (its settings, \
                 its output format, its firmware); the board and the host are not the limit"
            ),
        );
        f.speedup = Some(ratio);
        return (Some(f), None);
    }
    let all_as_slow = measured.iter().all(|o| lead(o) <= AS_SLOW);
    let line = all_as_slow.then(|| {
        format!(
            "device {} on the same board is as slow ({theirs} against {mine} for {bytes} B): \
             the board, its cable, a device listening to every byte or the host, rather than \
             device {device}",
            fastest.address
        )
    });
    (None, line)
}

#[cfg(test)]
mod tests {
    use super::super::sweep::Point;
    use super::*;

    /// A sweep of device 11 at 4096 B: `read` and `write` seconds.
    fn sweep(read: f64, write: f64) -> Sweep {
        let point = |direction, seconds| Point {
            direction,
            bytes: 4096,
            seconds,
            cpu_seconds: 0.0,
            waiting_seconds: None,
        };
        Sweep {
            sizes: vec![4096],
            points: vec![point(Direction::Read, read), point(Direction::Write, write)],
            ..Sweep::default()
        }
    }

    fn other(address: u8, read: f64, write: f64) -> DeviceRate {
        DeviceRate {
            address,
            bytes: 4096,
            read_seconds: Some(read),
            write_seconds: Some(write),
            failure: None,
        }
    }

    #[test]
    fn a_device_twice_as_fast_puts_the_slowness_on_the_probed_one() {
        let (f, line) = judge(
            11,
            &sweep(0.08, 0.04),
            &[other(22, 0.004, 0.004), other(5, 0.08, 0.04)],
        );
        let f = f.expect("a finding");
        assert_eq!(line, None);
        assert_eq!(f.cause, Cause::SlowDevice);
        assert_eq!(f.speedup, Some(20.0), "the fastest device's lead, reads");
        assert_eq!(
            f.summary,
            "device 11 is the slow one: 4096 B transfers run at 51.2 kB/s read, 102 kB/s \
             written, while device 22 on the same board runs them 20.0x and 10.0x faster"
        );
    }

    #[test]
    fn devices_as_slow_put_it_on_the_board_and_failures_are_skipped() {
        let mut silent = other(30, 0.0, 0.0);
        silent.failure = Some("no answer".into());
        let (f, line) = judge(11, &sweep(0.08, 0.08), &[other(22, 0.07, 0.08), silent]);
        assert_eq!(f, None);
        let line = line.expect("the as-slow line");
        assert!(
            line.starts_with("device 22 on the same board is as slow"),
            "{line}"
        );
        // Between 1.5x and 2x: neither.
        assert_eq!(
            judge(11, &sweep(0.08, 0.08), &[other(22, 0.045, 0.08)]),
            (None, None)
        );
        // Nothing measured: nothing said.
        let mut only = other(22, 0.0, 0.0);
        only.failure = Some("no answer".into());
        assert_eq!(judge(11, &sweep(0.08, 0.08), &[only]), (None, None));
    }
}
