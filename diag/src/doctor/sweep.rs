//! The doctor's size sweep: reads and writes of growing sizes, within a time budget,
//! fitted to `t = a + b·n` in each direction (the per-call cost `a`, the per-byte cost
//! `b`) and the same for the CPU the transfers took.
//!
//! Sizes grow fourfold from the small size to the largest (`--large`, or as large as
//! the budget allows, at most [`DEFAULT_LARGEST`]). Before each size the cost of that
//! step is predicted from the steps already run (a line through their costs), and the
//! sweep stops when the prediction would pass the budget. The budget is counted on the
//! bus's clock: wall time on hardware and through a network, modelled time on the
//! simulator, so a simulated bus is probed with the sizes the same hardware would be.

use std::time::Duration;

use gpib::ClockKind;
use serde::Serialize;

use crate::error::Result;
use crate::host::{HostEvidence, Window};
use crate::linear_fit::{self, LinearFit};
use crate::measure::Session;
use crate::sample::{Direction, Sample};
use crate::target::Target;

/// The largest transfer the budget may choose when `--large` is not given.
pub const DEFAULT_LARGEST: u64 = 64 * 1024;

/// Repeats of each size on a wall clock (the simulator's virtual time repeats exactly).
pub const WALL_REPEATS: u32 = 3;

/// One timed transfer of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    /// Read or write.
    pub direction: Direction,
    /// Bytes moved.
    pub bytes: u64,
    /// Seconds on the bus's clock.
    pub seconds: f64,
    /// CPU seconds of the calling thread (or the model's).
    pub cpu_seconds: f64,
    /// Seconds the thread waited for a CPU (wall clocks on Linux).
    pub waiting_seconds: Option<f64>,
}

/// The fits of one direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DirectionFit {
    /// Seconds against bytes.
    pub time: LinearFit,
    /// CPU seconds against bytes.
    pub cpu: LinearFit,
    /// Seconds waiting for a CPU against bytes, where the system tells them.
    pub waiting: Option<LinearFit>,
}

impl DirectionFit {
    /// Seconds one byte takes (the slope), never below 0.
    pub fn byte_seconds(&self) -> f64 {
        self.time.slope.max(0.0)
    }

    /// CPU seconds one byte takes.
    pub fn cpu_byte_seconds(&self) -> f64 {
        self.cpu.slope.max(0.0)
    }

    /// The share of each byte's time the CPU was busy (CPU per byte over time per
    /// byte), 0 when bytes take no time.
    pub fn cpu_share(&self) -> f64 {
        self.share_of(self.cpu_byte_seconds())
    }

    /// Seconds a byte waited for a CPU (0 where unknown).
    pub fn waiting_byte_seconds(&self) -> f64 {
        self.waiting.map_or(0.0, |w| w.slope.max(0.0))
    }

    /// The share of each byte's time the thread was ready to run but waited for a CPU.
    pub fn waiting_share(&self) -> f64 {
        self.share_of(self.waiting_byte_seconds())
    }

    fn share_of(&self, seconds: f64) -> f64 {
        let t = self.byte_seconds();
        // Below a nanosecond a byte (a network answering from memory) the slopes are
        // noise, and so would their ratio be.
        if t >= 1e-9 {
            (seconds / t).min(1.0)
        } else {
            0.0
        }
    }
}

/// What the sweep ran and what the fits say.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Sweep {
    /// The budget, seconds of bus time.
    pub budget_seconds: f64,
    /// Seconds of bus time the sweep took (settling and read-back checks included).
    pub spent_seconds: f64,
    /// Times each size ran in each direction.
    pub repeats: u32,
    /// The sizes run, smallest first.
    pub sizes: Vec<u64>,
    /// A larger size was left out because the budget would not hold it.
    pub stopped_by_budget: bool,
    /// Every timed transfer.
    pub points: Vec<Point>,
    /// The read fit (at least two sizes; through each size's median).
    pub read: Option<DirectionFit>,
    /// The write fit.
    pub write: Option<DirectionFit>,
    /// What failed, if a transfer did (the sweep stops there).
    pub failure: Option<String>,
    /// When the failure was a read that got bytes and then waited out its timeout:
    /// the bytes it got.
    pub stalled_after: Option<u64>,
    /// What else the host did meanwhile (wall clocks).
    pub host: Option<HostEvidence>,
}

impl Sweep {
    /// The fit of `direction`.
    pub fn fit(&self, direction: Direction) -> Option<&DirectionFit> {
        match direction {
            Direction::Read => self.read.as_ref(),
            Direction::Write => self.write.as_ref(),
        }
    }

    /// The transfer of `direction` at `size` whose time is the median of its repeats.
    pub fn median(&self, direction: Direction, size: u64) -> Option<Point> {
        let mut at: Vec<Point> = self
            .points
            .iter()
            .copied()
            .filter(|p| p.direction == direction && p.bytes == size)
            .collect();
        at.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
        at.get(at.len().checked_sub(1)? / 2).copied()
    }
}

/// The sizes from `small` to `largest`: `small`, then the powers of four from 64 above
/// it, then `largest`.
pub fn ladder(small: u64, largest: u64) -> Vec<u64> {
    let mut sizes = vec![small];
    let mut s: u64 = 64;
    while s < largest {
        if s > small {
            sizes.push(s);
        }
        match s.checked_mul(4) {
            Some(n) => s = n,
            None => break,
        }
    }
    if largest > small {
        sizes.push(largest);
    }
    sizes
}

fn point(direction: Direction, s: &Sample) -> Point {
    Point {
        direction,
        bytes: s.bytes,
        seconds: s.seconds,
        cpu_seconds: s.cpu_seconds,
        waiting_seconds: s.waiting_seconds,
    }
}

/// Runs the sweep on `session` over `sizes` (see [`ladder`]): every size when `fixed`
/// (the user chose `--large`), else while the budget holds. A transfer that fails ends
/// the sweep, with its error in [`Sweep::failure`] and what ran before it kept.
pub fn run(
    target: &Target,
    session: &mut Session,
    sizes: &[u64],
    fixed: bool,
    budget: Duration,
) -> Sweep {
    let bus = &target.bus;
    let wall = bus.clock_kind() != ClockKind::Virtual;
    let repeats = if wall { WALL_REPEATS } else { 1 };
    let mut sweep = Sweep {
        budget_seconds: budget.as_secs_f64(),
        repeats,
        ..Default::default()
    };
    // (size, seconds of bus time the step took)
    let mut steps: Vec<(f64, f64)> = Vec::new();
    let start = bus.now();
    let window = wall.then(Window::start);
    for &size in sizes {
        if !fixed && steps.len() >= 2 {
            let spent = bus.now().saturating_sub(start).as_secs_f64();
            let predicted = predict(&steps, size as f64);
            if spent + predicted > sweep.budget_seconds {
                sweep.stopped_by_budget = true;
                break;
            }
        }
        let t0 = bus.now();
        if let Err(e) = step(session, size, repeats, &mut sweep.points) {
            sweep.failure = Some(e.to_string());
            sweep.stalled_after = e.stalled_after();
            break;
        }
        steps.push((size as f64, bus.now().saturating_sub(t0).as_secs_f64()));
        sweep.sizes.push(size);
    }
    sweep.spent_seconds = bus.now().saturating_sub(start).as_secs_f64();
    let moved = sweep
        .points
        .iter()
        .map(|p| p.bytes)
        .fold(0u64, u64::saturating_add);
    sweep.host = window.map(|w| w.finish(moved));
    sweep.read = fit_direction(&sweep.points, Direction::Read, Pick::Median);
    sweep.write = fit_direction(&sweep.points, Direction::Write, Pick::Median);
    sweep
}

/// One size, `repeats` times each way.
pub fn step(session: &mut Session, size: u64, repeats: u32, points: &mut Vec<Point>) -> Result<()> {
    for _ in 0..repeats {
        let r = session.read(size)?;
        points.push(point(Direction::Read, &r));
        let w = session.write(size)?;
        points.push(point(Direction::Write, &w));
    }
    Ok(())
}

/// The predicted seconds of a step at `size`: a line through the steps run so far (at
/// least the last step's cost scaled to the size, when the line bends down).
fn predict(steps: &[(f64, f64)], size: f64) -> f64 {
    let (last_size, last_cost) = steps[steps.len() - 1];
    let scaled = if last_size > 0.0 {
        last_cost * size / last_size
    } else {
        last_cost
    };
    match linear_fit::fit(steps) {
        Some(f) => f.at(size).max(last_cost),
        None => scaled,
    }
}

/// Which of a size's repeats stands for it in a fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// The median: the typical transfer (the doctor's).
    Median,
    /// The least: the transfer other work disturbed least (calibrate's: on a wall
    /// clock, disturbances only ever add time).
    Least,
}

/// The fits of `direction`: through each size's median or least value (of its
/// repeats), so that one transfer the scheduler held up does not bend the line.
pub fn fit_direction(points: &[Point], direction: Direction, pick: Pick) -> Option<DirectionFit> {
    let mut sizes: Vec<u64> = points
        .iter()
        .filter(|p| p.direction == direction)
        .map(|p| p.bytes)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let medians = |value: &dyn Fn(&Point) -> Option<f64>| -> Option<Vec<(f64, f64)>> {
        sizes
            .iter()
            .map(|&n| {
                let mut v: Vec<f64> = points
                    .iter()
                    .filter(|p| p.direction == direction && p.bytes == n)
                    .map(value)
                    .collect::<Option<_>>()?;
                v.sort_by(f64::total_cmp);
                let value = match pick {
                    Pick::Median => median_of_sorted(&v)?,
                    Pick::Least => *v.first()?,
                };
                Some((n as f64, value))
            })
            .collect()
    };
    Some(DirectionFit {
        time: linear_fit::fit(&medians(&|p| Some(p.seconds))?)?,
        cpu: linear_fit::fit(&medians(&|p| Some(p.cpu_seconds))?)?,
        waiting: medians(&|p| p.waiting_seconds).and_then(|m| linear_fit::fit(&m)),
    })
}

fn median_of_sorted(v: &[f64]) -> Option<f64> {
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_grow_fourfold_between_small_and_largest() {
        assert_eq!(
            ladder(16, 64 * 1024),
            [16, 64, 256, 1024, 4096, 16384, 65536]
        );
        assert_eq!(ladder(16, 5000), [16, 64, 256, 1024, 4096, 5000]);
        assert_eq!(ladder(100, 1000), [100, 256, 1000]);
        assert_eq!(ladder(64, 64), [64]);
        // 1, the 29 powers of four from 2^6 to 2^62, and the largest: no overflow.
        assert_eq!(ladder(1, u64::MAX).len(), 31);
    }

    #[test]
    fn a_step_is_predicted_from_the_line_through_the_steps_before() {
        // 10 ms a call and 100 us a byte: the line predicts 4 KiB exactly.
        let steps = [(16.0, 0.0116), (64.0, 0.0164), (256.0, 0.0356)];
        let p = predict(&steps, 4096.0);
        assert!((p - (0.01 + 4096.0 * 100e-6)).abs() < 1e-9, "{p}");
        // One step: its cost scaled to the size.
        assert!((predict(&[(1000.0, 2.0)], 4000.0) - 8.0).abs() < 1e-12);
    }

    #[test]
    fn the_median_repeat_stands_for_a_size() {
        let p = |s: f64| Point {
            direction: Direction::Read,
            bytes: 16,
            seconds: s,
            cpu_seconds: 0.0,
            waiting_seconds: None,
        };
        let sweep = Sweep {
            points: vec![p(3.0), p(1.0), p(2.0)],
            ..Default::default()
        };
        assert_eq!(sweep.median(Direction::Read, 16).unwrap().seconds, 2.0);
        assert!(sweep.median(Direction::Write, 16).is_none());
    }
}
