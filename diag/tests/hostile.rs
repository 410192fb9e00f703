//! Regression tests for `gpib-diag` driven as a hostile user would (the reliability
//! issue's items, numbered as filed): every one gets a typed error that says what was
//! wrong, keeps what was measured, and never panics.

mod common;

use common::{fails, ok};

fn temp_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("gpib-diag-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

// Item 6: a sweep that fails at a later size prints what it measured, then the error.
#[test]
fn sweep_keeps_what_it_measured() {
    // At 1 MB/s, 4 MiB takes 4 s: past the 2 s timeout. 1 B .. 1 MiB are measured.
    let out = fails(
        &[
            "sweep",
            "--bus",
            "bench",
            "--device",
            "22",
            "--to",
            "16M",
            "--timeout",
            "2",
            "--format",
            "csv",
        ],
        1,
        "at 4194304 bytes",
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    let rows = csv.lines().skip(1).count();
    assert_eq!(rows, 2 * 11, "read and write of 11 sizes: {csv}");
    assert!(csv.contains(",1048576,"), "{csv}");
}

#[test]
fn compare_keeps_what_it_measured() {
    let out = fails(
        &[
            "compare",
            "--bus",
            "hp9000-350:unmount=/disc",
            "--bus",
            "hp9000-350",
            "--timeout",
            "5",
            "400000",
        ],
        1,
        "with hp9000-350",
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("hp9000-350:unmount=/disc"), "{text}");
    assert!(
        text.contains("437302"),
        "the unmounted run is reported: {text}"
    );
}

// Item 7: an odd --to on the HP3565 (16-bit words) panicked with an index out of range.
#[test]
fn odd_sweep_sizes_on_the_hp3565() {
    let text = ok(&["sweep", "--to", "1001", "--format", "csv"]);
    assert!(text.contains(",1002,"), "{text}");
}

// Item 9: durations from the command line are checked.
#[test]
fn huge_timeouts_are_refused_with_their_limit() {
    fails(
        &["io-test", "--timeout", "1e20", "4K"],
        2,
        "0 (no timeout) to 1000000",
    );
    fails(&["io-test", "--timeout", "-1", "4K"], 2, "out of range");
    fails(&["io-test", "--timeout", "nan", "4K"], 2, "out of range");
    fails(
        &["scan", "--idn-timeout", "1e20"],
        2,
        "0 (no timeout) to 1000000",
    );
}

// Item 12: sizes over the instrument's or the machine's limit are refused before
// anything is allocated, naming the limit.
#[test]
fn sizes_over_the_limits_are_refused() {
    fails(&["io-test", "9223372036854775808"], 2, "32 MiB");
    fails(&["io-test", "18446744073709551615"], 2, "32 MiB");
    fails(&["io-test", "8G"], 2, "the HP3565's largest block");
    fails(&["io-test", "33M"], 2, "33554432 bytes");
    fails(
        &["io-test", "--bus", "bench", "--device", "22", "65M"],
        2,
        "64 MiB",
    );
    // At the limit it works.
    let text = ok(&["io-test", "--unmount", "/disc", "32M"]);
    assert!(text.contains("transfer size: 33554432"), "{text}");
}

// Item 15: unclear errors.
#[test]
fn errors_say_what_was_wrong() {
    fails(
        &["io-test", "--protocol", "scpi", "4K"],
        2,
        "does not fit the HP3565 at 11",
    );
    fails(
        &[
            "io-test",
            "--bus",
            "bench",
            "--device",
            "22",
            "--protocol",
            "hp3565",
            "4K",
        ],
        2,
        "does not fit the SCPI at 22",
    );
    fails(
        &["io-test", "--device", "999", "4K"],
        2,
        "999 is not a primary address (0 to 30)",
    );
    fails(&["io-test", "--warmup", "1000000000", "4K"], 2, "100000");
    for c in ["-1", "nan", "inf", "0", "1"] {
        fails(&["io-test", "--confidence", c, "4K"], 2, "between 0 and 1");
    }
    fails(&["io-test", "4k"], 2, "ambiguous");
    fails(
        &["io-test", "--mount", "/disc", "--unmount", "/disc", "4K"],
        2,
        "contradict",
    );
}

#[test]
fn compare_applies_mount_options_in_order() {
    // unmount then mount: measured mounted (58x slower), not unmounted.
    let text = ok(&[
        "compare",
        "--bus",
        "hp9000-350:unmount=/disc",
        "--bus",
        "hp9000-350:unmount=/disc,mount=/disc",
        "--format",
        "json",
        "400000",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ratio = doc["ratios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["direction"] == "read")
        .unwrap()["seconds_ratio"]
        .as_f64()
        .unwrap();
    assert!(ratio > 50.0, "remounted is the slow case: {ratio}");
}

#[test]
fn scan_finds_devices_at_secondary_addresses() {
    let cfg = temp_file(
        "secondary.toml",
        r#"
name = "mainframe"
[[board]]
name = "gpib0"
  [[board.device]]
  address = 9
  secondary = 3
  model = "scpi"
  idn = "ACME,PLUGIN,3,1"
  [[board.device]]
  address = 22
  model = "scpi"
"#,
    );
    let text = ok(&["scan", "--bus", &cfg]);
    assert!(
        text.contains("GPIB0::9::3::INSTR") && text.contains("ACME,PLUGIN,3,1"),
        "{text}"
    );
    assert!(text.contains("GPIB0::22::INSTR"), "{text}");
}

// Reads and network item 1: `io-test` without `--protocol` probes with `*IDN?`, and a
// device that answers without END made the probe read until the process died. The
// probe is bounded (4 KiB, 1 s); the run ends with an error, not a runaway read.
#[test]
fn io_test_probe_of_an_endless_talker_is_bounded() {
    let at = common::peers::streaming_adapter().to_string();
    let t0 = std::time::Instant::now();
    let out = common::gpib_diag()
        .env("RUST_LOG", "info")
        .args([
            "io-test",
            "--backend",
            "prologix",
            "--host",
            &at,
            "--device",
            "5",
            "--timeout",
            "1",
            "1K",
        ])
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code().is_some(), "killed: {err}");
    assert!(!err.contains("panicked"), "{err}");
    // The probe stopped at its 4 KiB, not at what the talker could send.
    let probe = err
        .lines()
        .find(|l| l.contains("does not answer *IDN?"))
        .unwrap_or_else(|| panic!("no probe result: {err}"));
    assert!(probe.contains("4096-byte maximum read length"), "{probe}");
    assert!(took < std::time::Duration::from_secs(20), "{took:?}: {err}");
}

// Reads and network item 3: with `--timeout 1`, `io-test --backend vxi11` hung past
// 30 s against a gateway that drips its replies (the socket timeout restarted on
// every byte). It fails with a timeout within a few seconds.
#[test]
fn io_test_against_a_dripping_gateway_times_out() {
    let at = common::peers::dripping_gateway().to_string();
    let t0 = std::time::Instant::now();
    let out = common::diag_within(
        &[
            "io-test",
            "--backend",
            "vxi11",
            "--host",
            &at,
            "--device",
            "5",
            "--timeout",
            "1",
            "--protocol",
            "scpi",
            "1K",
        ],
        30,
    );
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("timed out"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(took < std::time::Duration::from_secs(10), "{took:?}: {err}");
}
