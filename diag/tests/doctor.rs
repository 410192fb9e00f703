//! `gpib-diag doctor` on the simulator: it names the right cause for each contention
//! source and each injected fault, reports nothing on a healthy bus, and its exit
//! status says whether it found a problem.

mod common;

use serde_json::Value;

/// Runs the doctor with `--format json`; (exit code, report).
fn doctor(args: &[&str]) -> (i32, Value) {
    let out = common::gpib_diag()
        .arg("doctor")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("gpib-diag runs");
    let code = out.status.code().expect("exit code");
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let report: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{args:?}: not JSON ({e}): {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (code, report)
}

fn problems(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == "problem")
        .map(|f| f["cause"].as_str().expect("cause").to_string())
        .collect()
}

/// The doctor finds exactly `cause` as the first problem, and exits 3.
fn names(args: &[&str], cause: &str) -> Value {
    let (code, report) = doctor(args);
    let found = problems(&report);
    assert_eq!(
        found.first().map(String::as_str),
        Some(cause),
        "{args:?}: {report:#}"
    );
    assert_eq!(code, 3, "{args:?}: a problem found exits 3");
    report
}

#[test]
fn a_healthy_bus_has_no_findings_and_exits_0() {
    for args in [
        &["--bus", "bench"][..],
        &["--bus", "bench", "--device", "22"],
        &["--bus", "hp9000-350", "--unmount", "/disc"],
    ] {
        let (code, report) = doctor(args);
        assert_eq!(
            problems(&report),
            Vec::<String>::new(),
            "{args:?}: {report:#}"
        );
        assert_eq!(code, 0, "{args:?}");
        assert!(
            report["transfers"]["read_large"]["seconds"]
                .as_f64()
                .unwrap()
                > 0.0
        );
    }
}

#[test]
fn programmed_io_is_a_note_not_a_problem() {
    let (code, report) = doctor(&["--bus", "hp9000-350", "--unmount", "/disc"]);
    assert_eq!(code, 0);
    let notes: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "note")
        .collect();
    assert_eq!(notes.len(), 1, "{report:#}");
    assert_eq!(notes[0]["cause"], "pio");
    assert!(
        notes[0]["speedup"].as_f64().unwrap() > 2.0,
        "DMA would be faster"
    );
}

#[test]
fn a_mounted_polled_disc_is_named_with_the_1988_slowdown() {
    let report = names(&["--bus", "hp9000-350"], "mounted-disc");
    let f = &report["findings"][0];
    let summary = f["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("reads from 11 run at 7.48 kB/s, 58.3x below this board's 437 kB/s"),
        "{summary}"
    );
    assert!(summary.contains("/disc is mounted on hpib8"), "{summary}");
    assert!(f["advice"].as_str().unwrap().contains("unmount /disc"));
    // Without the disc the baseline is the unmounted measurement.
    let base = report["baseline"]["read_large"]["seconds"]
        .as_f64()
        .unwrap();
    let now = report["transfers"]["read_large"]["seconds"]
        .as_f64()
        .unwrap();
    assert!((now / base - 58.3).abs() < 0.1, "{now} / {base}");
}

#[test]
fn a_slow_listener_is_named() {
    let r = names(
        &["--bus", "bench", "--with", "slow-listener"],
        "slow-listener",
    );
    assert!(
        r["findings"][0]["speedup"].as_f64().unwrap() > 10.0,
        "{r:#}"
    );
}

#[test]
fn an_nrfd_holder_is_named() {
    names(
        &["--bus", "bench", "--device", "22", "--with", "nrfd-holder"],
        "nrfd-holder",
    );
}

#[test]
fn an_srq_storm_is_named() {
    names(
        &["--bus", "bench", "--device", "22", "--with", "srq-storm"],
        "srq-storm",
    );
}

#[test]
fn many_small_transactions_with_addressing_on_every_call_are_named() {
    let r = names(
        &[
            "--bus",
            "bench",
            "--device",
            "22",
            "--with",
            "every-call-addressing",
        ],
        "every-call-addressing",
    );
    assert_eq!(r["transfers"]["addresses_every_call"], true);
    let evidence = r["findings"][0]["evidence"].to_string();
    assert!(
        evidence.contains("one addressing sequence takes 26.0 us"),
        "{evidence}"
    );
}

#[test]
fn a_busy_disc_is_named_on_a_programmed_io_board() {
    names(
        &[
            "--bus",
            "hp9000-350",
            "--unmount",
            "/disc",
            "--with",
            "busy-disc",
        ],
        "busy-disc",
    );
}

#[test]
fn a_long_cable_is_named() {
    names(&["--bus", "bench", "--with", "long-cable"], "long-cable");
}

#[test]
fn the_largest_slowdown_comes_first_when_there_are_several() {
    let r = names(
        &["--bus", "hp9000-350", "--with", "busy-disc"],
        "mounted-disc",
    );
    assert_eq!(problems(&r), ["mounted-disc", "busy-disc"]);
    let speedups: Vec<f64> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["speedup"].as_f64())
        .collect();
    assert!(speedups[0] > speedups[1], "{speedups:?}");
}

#[test]
fn switching_a_source_off_on_the_command_line_cures_it() {
    let (code, r) = doctor(&["--bus", "hp9000-350", "--without", "mounted-disc"]);
    assert_eq!((code, problems(&r)), (0, vec![]), "{r:#}");
}

#[test]
fn no_listener_is_named() {
    let r = names(
        &["--bus", "bench", "--device", "22", "--fault", "22=absent"],
        "no-listener",
    );
    assert_eq!(r["bus"]["listeners"], serde_json::json!([11]));
}

#[test]
fn a_stuck_srq_is_named() {
    let r = names(
        &[
            "--bus",
            "bench",
            "--device",
            "22",
            "--fault",
            "22=srq-stuck",
        ],
        "srq-stuck",
    );
    assert_eq!(r["bus"]["srq"], true);
}

#[test]
fn a_held_nrfd_is_named() {
    let r = names(&["--bus", "bench", "--fault", "11=holds-nrfd"], "nrfd-held");
    assert_eq!(r["bus"]["nrfd_held"], true);
}

#[test]
fn the_text_report_says_what_to_try() {
    let out = common::gpib_diag()
        .args(["doctor", "--bus", "hp9000-350"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("1 problem found:"), "{text}");
    assert!(
        text.contains("1. [mounted-disc] reads from 11 run at 7.48 kB/s"),
        "{text}"
    );
    assert!(
        text.contains("try: unmount /disc, or move the disc to the DMA interface"),
        "{text}"
    );
    let again = common::gpib_diag()
        .args(["doctor", "--bus", "hp9000-350"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(again.stdout).unwrap(),
        text,
        "deterministic"
    );
}

#[test]
fn bad_doctor_arguments_are_refused_with_the_reason() {
    for (args, needle) in [
        (
            &["--threshold", "0.5"][..],
            "--threshold 0.5 must be a ratio above 1",
        ),
        (
            &["--with", "gremlins"],
            "unknown contention source \"gremlins\"",
        ),
        (&["--fault", "11"], "expected ADDR=KIND"),
        (&["--fault", "11=melted"], "unknown fault \"melted\""),
        (&["--baseline=-3"], "--baseline -3 must be a rate above 0"),
    ] {
        let out = common::gpib_diag()
            .arg("doctor")
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
