//! calibrate's held-out sizes measured on a wall clock (the hardware path in real time,
//! the network through `serve --realtime`): what a test can hold them to on a shared
//! machine.
//!
//! calibrate's own verdict is 5 % (its exit status 3 beyond that), and on a quiet
//! machine it holds there (bench/targets/3-hw-path.sh measures it: target 3.4). A test
//! run beside other builds sees the scheduler in the measurement: one CI run found a
//! held-out size more than 5 % off twice in a row on a bus that holds to 0.5 % when
//! quiet. So a test takes the first of three runs within 5 %, else the best, and holds
//! that to [`ON_A_SHARED_MACHINE`]: twice calibrate's margin for a disturbed run, near
//! enough to catch a model that leaves out a cost (the DMA bus's read call overhead left
//! out would be 12 % at 512 B: 70 us of 586 us; a per-byte cost, far more).

use serde_json::Value;

/// What calibrate itself holds a prediction to (diag/src/calibrate: `WITHIN`).
pub const CALIBRATE_WITHIN: f64 = 0.05;

/// What a test holds the best of three wall-clock runs to.
pub const ON_A_SHARED_MACHINE: f64 = 0.10;

/// The worst held-out error of a calibrate report (`--format json`).
pub fn worst_error(report: &Value, what: &str) -> f64 {
    let held = report["device"]["held_out"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no held-out sizes: {report:#}"));
    assert!(!held.is_empty(), "{what}: no held-out sizes: {report:#}");
    held.iter()
        .map(|h| {
            let p = h["predicted_seconds"].as_f64().expect("predicted_seconds");
            let m = h["measured_seconds"].as_f64().expect("measured_seconds");
            assert!(m > 0.0 && p > 0.0, "{what}: {h}");
            (p / m - 1.0).abs()
        })
        .fold(0.0, f64::max)
}

/// Runs `calibrate` (which gives its exit status and report) up to three times and
/// returns the first report within 5 %, else the best, after checking that its exit
/// status agrees with its own figures (0 within 5 %, 3 beyond) and that the best is
/// within [`ON_A_SHARED_MACHINE`].
pub fn best_of_three(what: &str, mut calibrate: impl FnMut() -> (i32, Value)) -> Value {
    let mut best: Option<(f64, Value)> = None;
    for _ in 0..3 {
        let (code, report) = calibrate();
        let worst = worst_error(&report, what);
        let want = if worst <= CALIBRATE_WITHIN { 0 } else { 3 };
        assert_eq!(
            code, want,
            "{what}: worst held-out error {worst:.4}: exit {code}"
        );
        if worst <= CALIBRATE_WITHIN {
            return report;
        }
        if best.as_ref().is_none_or(|(w, _)| worst < *w) {
            best = Some((worst, report));
        }
    }
    let (worst, report) = best.expect("three runs");
    assert!(
        worst <= ON_A_SHARED_MACHINE,
        "{what}: the best of three runs has a held-out size {:.1} % off: {report:#}",
        100.0 * worst
    );
    eprintln!(
        "{what}: three runs beyond 5 % on this machine, the best {:.1} % off",
        100.0 * worst
    );
    report
}
