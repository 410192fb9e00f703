//! `gpib-diag calibrate` on the simulator: the configuration it writes reproduces the
//! bus it measured, at sizes it never ran, and what it prints and refuses.

mod common;

use std::path::PathBuf;

use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpib-calibrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// io-test's read and write seconds.
fn io_test(bus: &str, size: &str) -> (f64, f64) {
    let out = common::ok(&["io-test", "--bus", bus, "--format", "json", size]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let r = doc["records"].as_array().unwrap();
    (
        r[0]["seconds"].as_f64().unwrap(),
        r[1]["seconds"].as_f64().unwrap(),
    )
}

fn compat_config(name: &str) -> String {
    format!("{}/../compat/tests/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_calibrated_model_reproduces_each_bus_far_past_the_sizes_it_measured() {
    // One with the 1988 polling, one programmed-I/O board, one DMA board.
    for (bus, name) in [
        ("hp9000-350".to_string(), "polled.toml"),
        (compat_config("pio_bench.toml"), "pio.toml"),
        ("bench".to_string(), "dma.toml"),
    ] {
        let file = scratch(name);
        let out = common::gpib_diag()
            .args(["calibrate", "--bus", &bus, "--device", "11", "-o"])
            .arg(&file)
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{bus}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let c: Value = serde_json::from_slice(&out.stdout).unwrap();
        // In virtual time the model is the bus's own: every held-out size exactly.
        let held = c["device"]["held_out"].as_array().unwrap();
        assert_eq!(held.len(), 6, "{bus}: {c:#}");
        for h in held {
            let (m, p) = (
                h["measured_seconds"].as_f64().unwrap(),
                h["predicted_seconds"].as_f64().unwrap(),
            );
            assert!((p / m - 1.0).abs() < 1e-6, "{bus}: {h}");
        }
        // And io-test at 400,000 bytes, six times the largest size swept.
        let file = file.to_str().unwrap();
        let (r0, w0) = io_test(&bus, "400000");
        let (r1, w1) = io_test(file, "400000");
        assert!(
            (r1 / r0 - 1.0).abs() < 1e-4,
            "{bus}: read {r1} against {r0}"
        );
        assert!(
            (w1 / w0 - 1.0).abs() < 1e-4,
            "{bus}: write {w1} against {w0}"
        );
    }
    // The 1988 figures themselves, from the calibrated model.
    let (r, w) = io_test(scratch("polled.toml").to_str().unwrap(), "400000");
    assert!((r - 53.4435).abs() < 1e-4, "{r}");
    assert!((w - 47.4079).abs() < 1e-4, "{w}");
}

#[test]
fn the_mode_and_costs_are_what_the_bus_does() {
    let out = common::ok(&["calibrate", "--bus", "hp9000-350", "--format", "json"]);
    let c: Value = serde_json::from_str(&out).unwrap();
    let m = &c["model"];
    assert_eq!(m["mode"], "pio");
    assert_eq!(m["call_overhead_us"], 300.0);
    // 133.608 us a byte read: 1 us of handshake, the rest the CPU's (the 68020's byte
    // loop and the disc driver's poll of the external card).
    assert_eq!(m["pio_read_byte_ns"], 132_608);
    assert_eq!(m["pio_write_byte_ns"], 117_519);
    let out = common::ok(&["calibrate", "--bus", "bench", "--format", "json"]);
    let c: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(c["model"]["mode"], "dma");
    assert_eq!(c["model"]["call_overhead_us"], 20.0);
    // The HP3565 talks and listens at the handshake's ceiling, 1 us a byte.
    assert_eq!(c["model"]["devices"][0]["t1_ns"], 800);
    assert_eq!(c["model"]["devices"][0]["accept_ns"], 500);
}

#[test]
fn without_output_the_configuration_goes_to_stdout_and_the_report_to_stderr() {
    let out = common::gpib_diag()
        .args(["calibrate", "--bus", "bench", "--budget", "5"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let config = String::from_utf8(out.stdout).unwrap();
    let report = String::from_utf8(out.stderr).unwrap();
    assert!(
        config.starts_with("# Calibrated by `gpib-diag calibrate` on bench"),
        "{config}"
    );
    assert!(config.contains("transfer = \"dma\""), "{config}");
    assert!(
        report.starts_with("gpib-diag calibrate: bench, device 11 (hp3565)"),
        "{report}"
    );
    assert!(
        report.contains("the model holds within 5 % at every held-out size"),
        "{report}"
    );
    // What it wrote is a configuration the other commands take.
    let file = scratch("stdout.toml");
    std::fs::write(&file, &config).unwrap();
    let scan = common::ok(&["scan", "--bus", file.to_str().unwrap()]);
    assert!(scan.contains("11"), "{scan}");
}

#[test]
fn bad_calibrate_arguments_are_refused_with_the_reason() {
    for (args, needle) in [
        (
            &["--budget", "0"][..],
            "--budget 0 must be a number of seconds above 0",
        ),
        (
            &["--budget=-2"],
            "--budget -2 must be a number of seconds above 0",
        ),
        (
            &["--large", "0"],
            "the transfer size must be at least 1 byte",
        ),
        (&["--format", "csv"], "calibrate prints text or json"),
    ] {
        common::fails(&[&["calibrate"][..], args].concat(), 2, needle);
    }
    // One size cannot be fitted: it says what to do.
    common::fails(
        &["calibrate", "--small", "1K", "--large", "1K"],
        2,
        "calibrate needs two at least",
    );
}
