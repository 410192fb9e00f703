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

/// A number the configuration `text` gives `key` (`key = 1.5   # comment`).
fn toml_number(text: &str, key: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.trim_start().strip_prefix('='))
        .and_then(|v| v.split('#').next()?.trim().parse().ok())
}

#[test]
fn on_buses_a_slow_listener_or_device_limits_every_held_out_size_holds_each_way() {
    // Issue 28 item 12: a SCPI block's timed read and write are several calls on the
    // model, and their headers' bytes wait for the slow listener too. The measured
    // intercepts taken as the call overhead added about 1 ms to every transfer
    // (512 B read +7 %, write +10 %: exit 3).
    for (name, read_us, write_us) in [
        // Device-limited both ways: the plotter at 30 paces every byte; the driver's
        // read and write calls cost 339.6 and 442.1 us.
        ("scpi_slow_listener.toml", 339.6, 442.1),
        // Mixed: writes at the instrument's 25 us, reads at the bus's 1 us.
        ("scpi_slow_device.toml", 20.0, 20.0),
    ] {
        let bus = compat_config(name);
        let file = scratch(name);
        let out = common::gpib_diag()
            .args([
                "calibrate",
                "--bus",
                &bus,
                "--device",
                "11",
                "--budget",
                "3",
            ])
            .arg("-o")
            .arg(&file)
            .args(["--format", "json"])
            .output()
            .unwrap();
        let c: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let held = c["device"]["held_out"].as_array().unwrap();
        // 512 B and 2048 B each way, the sizes the issue saw off.
        let sizes: Vec<(String, u64)> = held
            .iter()
            .map(|h| {
                let d = h["direction"].as_str().unwrap().to_string();
                (d, h["bytes"].as_u64().unwrap())
            })
            .collect();
        for size in [512, 2048] {
            for d in ["read", "write"] {
                assert!(sizes.contains(&(d.to_string(), size)), "{name}: {sizes:?}");
            }
        }
        for h in held {
            let (m, p) = (
                h["measured_seconds"].as_f64().unwrap(),
                h["predicted_seconds"].as_f64().unwrap(),
            );
            assert!(
                (p / m - 1.0).abs() <= 0.05,
                "{name}: {} {} B predicted {:+.2} % off",
                h["direction"],
                h["bytes"],
                100.0 * (p / m - 1.0)
            );
        }
        assert_eq!(out.status.code(), Some(0), "{name}: {c:#}");
        // A read call's overhead and a write call's, each as the bus has it, in the
        // report and in the configuration written.
        let m = &c["model"];
        let config = std::fs::read_to_string(&file).unwrap();
        for (key, want) in [
            ("read_call_overhead_us", read_us),
            ("write_call_overhead_us", write_us),
        ] {
            let got = m[key].as_f64().unwrap();
            assert!((got - want).abs() < 0.05, "{name}: {key} {got}, not {want}");
            assert_eq!(toml_number(&config, key), Some(got), "{name}: {config}");
        }
        // And far past the sizes measured: io-test at 400,000 bytes.
        let (r0, w0) = io_test(&bus, "400000");
        let (r1, w1) = io_test(file.to_str().unwrap(), "400000");
        assert!(
            (r1 / r0 - 1.0).abs() < 1e-3,
            "{name}: read {r1} against {r0}"
        );
        assert!(
            (w1 / w0 - 1.0).abs() < 1e-3,
            "{name}: write {w1} against {w0}"
        );
    }
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
