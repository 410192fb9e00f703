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

/// The doctor finds exactly `cause` as the first problem, and exits 3.
fn names(args: &[&str], cause: &str) -> Value {
    let (code, report) = doctor(args);
    let found = common::problems(&report);
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
            common::problems(&report),
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
        summary.starts_with("reads from 11 run at 7.48 kB/s, 58.0x below this board's 434 kB/s"),
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
    // The budget's largest read is 16 KiB (the 1988 io_test figure, 58.4x, is at
    // 400,000 bytes, where the per-call cost weighs less).
    assert_eq!(report["transfers"]["read_large"]["bytes"], 16384);
    assert!((now / base - 58.0).abs() < 0.05, "{now} / {base}");
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
    // The handshake reference says the same without the simulator's A/B run: 20 us a
    // byte (the plotter's acceptance plus T1) with the CPU idle.
    let evidence = r["findings"][0]["evidence"].to_string();
    assert!(
        evidence.contains("the bus waits for a device: reads take 20.5 us a byte, 20x the 1.0 us a byte the handshake needs (T1 500 ns, IEEE 488.1), with the CPU idle"),
        "{evidence}"
    );
}

/// The fit `t = a + b·n` over the sweep, on the 1988 machine with its disc mounted: in
/// virtual time the points lie on the line, so the figures are the model's own.
#[test]
fn the_sweep_fits_the_1988_per_byte_and_per_call_costs() {
    let (_, r) = doctor(&["--bus", "hp9000-350"]);
    let s = &r["sweep"];
    // 30 s of bus time hold 16 KiB each way (9.0 s); 64 KiB would take about 26 s more.
    assert_eq!(
        s["sizes"],
        serde_json::json!([16, 64, 256, 1024, 4096, 16384])
    );
    assert_eq!(s["stopped_by_budget"], true);
    assert_eq!(s["repeats"], 1);
    let spent = s["spent_seconds"].as_f64().unwrap();
    assert!((spent - 8.994266).abs() < 1e-6, "{spent}");
    let f = |d: &str, what: &str, k: &str| s[d][what][k].as_f64().unwrap();
    // Reads: 133.608 us a byte and 300 us a call; writes 118.519 us a byte.
    assert!((f("read", "time", "slope") - 133.608e-6).abs() < 1e-12);
    assert!((f("read", "time", "intercept") - 300e-6).abs() < 1e-12);
    assert!((f("write", "time", "slope") - 118.519e-6).abs() < 1e-12);
    assert!((f("write", "time", "intercept") - 300e-6).abs() < 1e-12);
    // Programmed I/O under the polling driver: the CPU is busy for every byte.
    assert_eq!(f("read", "cpu", "slope"), f("read", "time", "slope"));
    assert_eq!(f("write", "cpu", "slope"), f("write", "time", "slope"));
    assert!(f("read", "time", "slope_ci95") < 1e-15, "on the line");
    // The slope is the large and small reads' difference per byte.
    let t = &r["transfers"];
    let (big, small) = (&t["read_large"], &t["read_small"]);
    let per_byte =
        (big["seconds"].as_f64().unwrap() - small["seconds"].as_f64().unwrap()) / (16384.0 - 16.0);
    assert!((per_byte / f("read", "time", "slope") - 1.0).abs() < 1e-9);
    // Against the handshake: T1 of hpib7 is 600 ns, so 1 us a byte each way.
    assert_eq!(
        r["handshake"],
        serde_json::json!({"t1_ns": 600, "hs488": false})
    );
    // The disc is the cause; "CPU-bound, 134x the handshake" is its evidence.
    let evidence = r["findings"][0]["evidence"].to_string();
    assert!(
        evidence.contains("transfers are CPU-bound: reads take 133.6 us of CPU a byte, 134x the 1.0 us a byte the handshake needs (T1 600 ns, IEEE 488.1); the CPU, not the bus, sets the rate"),
        "{evidence}"
    );
}

#[test]
fn the_budget_sizes_the_probes_and_an_explicit_large_size_is_run_whatever_it_costs() {
    let (_, r) = doctor(&["--bus", "hp9000-350", "--budget", "1"]);
    assert_eq!(r["sweep"]["sizes"], serde_json::json!([16, 64, 256, 1024]));
    assert!(r["sweep"]["spent_seconds"].as_f64().unwrap() <= 1.0);
    assert_eq!(r["transfers"]["read_large"]["bytes"], 1024);
    let (_, r) = doctor(&["--bus", "hp9000-350", "--budget", "1", "--large", "4K"]);
    assert_eq!(
        r["sweep"]["sizes"],
        serde_json::json!([16, 64, 256, 1024, 4096])
    );
    assert_eq!(r["sweep"]["stopped_by_budget"], false);
    // A fast bus reaches the largest default size well within the budget.
    let (_, r) = doctor(&["--bus", "bench"]);
    assert_eq!(
        r["sweep"]["sizes"],
        serde_json::json!([16, 64, 256, 1024, 4096, 16384, 65536])
    );
    assert_eq!(r["sweep"]["stopped_by_budget"], false);
    let text = common::gpib_diag()
        .args(["doctor", "--bus", "hp9000-350", "--budget", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("  sweep: 4 sizes from 16 B to 1024 B, once each way (0.9 s of the 1.0 s budget; the next size would pass it)"),
        "{text}"
    );
    assert!(
        text.contains("    read  per call 300.0 us ± 0.0 us, per byte 133.6 us ± 0.0 us (7.48 kB/s); CPU 133.6 us a byte (100 % of each byte's time)"),
        "{text}"
    );
}

#[test]
fn a_healthy_bus_has_no_limit_findings() {
    // DMA at the handshake's pace, and the 1988 machine without its disc: 2.3 us a
    // byte by programmed I/O, within 10x of the 1 us ceiling.
    for args in [
        &["--bus", "bench"][..],
        &["--bus", "hp9000-350", "--unmount", "/disc"],
    ] {
        let (_, r) = doctor(args);
        let causes: Vec<&str> = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["cause"].as_str().unwrap())
            .collect();
        for c in [
            "cpu-bound",
            "slow-device",
            "below-ceiling",
            "cpu-contention",
            "faster-than-the-bus",
        ] {
            assert!(!causes.contains(&c), "{args:?}: {causes:?}");
        }
    }
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
    assert_eq!(common::problems(&r), ["mounted-disc", "busy-disc"]);
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
    assert_eq!((code, common::problems(&r)), (0, vec![]), "{r:#}");
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
        (
            &["--budget", "0"],
            "--budget 0 must be a number of seconds above 0",
        ),
        (
            &["--budget=-1"],
            "--budget -1 must be a number of seconds above 0",
        ),
        (
            &["--budget", "inf"],
            "--budget inf must be a number of seconds above 0",
        ),
        (
            &["--large", "0"],
            "the transfer size must be at least 1 byte",
        ),
        (
            &["--read-size", "0"],
            "the transfer size must be at least 1 byte",
        ),
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

fn compat_config(name: &str) -> String {
    format!("{}/../compat/tests/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The board's settings tried the other way: a T1 of 2 us where 350 ns would do.
#[test]
fn a_slow_t1_is_found_by_trying_350_ns_and_put_back() {
    let r = names(&["--bus", &compat_config("slow_t1.toml")], "slow-t1");
    let t = &r["settings"][0];
    assert_eq!(t["setting"], "t1");
    assert_eq!(t["found"], "2 µs");
    assert_eq!(t["tried"], "350 ns");
    assert_eq!(t["significant"], true);
    // 65536 bytes at 2.5 us (T1 and the HP3565's 500 ns acceptance) against 1 us.
    let s = t["speedup"].as_f64().unwrap();
    assert!((s - 2.30).abs() < 0.005, "{s}");
    assert_eq!(
        r["findings"][0]["advice"],
        "ibconfig(board, IbcTIMING, 3) (T1 350 ns); the shorter T1 needs a cable of 15 m at most with every device powered"
    );
}

#[test]
fn autopoll_under_an_srq_storm_is_tried_off_and_named_in_the_storms_evidence() {
    let r = names(
        &["--bus", &compat_config("srq_storm.toml"), "--device", "22"],
        "srq-storm",
    );
    let t = r["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["setting"] == "autopoll")
        .unwrap()
        .clone();
    // Twenty 16-byte reads with autopoll on and off: 1.225x (virtual time: exact).
    assert!(
        (t["speedup"].as_f64().unwrap() - 1.225).abs() < 0.0005,
        "{t}"
    );
    let evidence = r["findings"][0]["evidence"].to_string();
    assert!(
        evidence.contains(
            "autopoll on slows reads of 16 B: with off they run 1.23x faster (virtual time: exact)"
        ),
        "{evidence}"
    );
}

/// The program's read size tried against one call: on the bench, a call costs 20 us and
/// a byte 1 us, so 4096 B in 256 calls of 16 B take 256 x 36 us = 9216 us against
/// 20 + 4096 = 4116 us in one: 2.239x.
#[test]
fn reading_in_small_calls_is_named_with_the_buffer_to_use() {
    let r = names(&["--bus", "bench", "--read-size", "16"], "small-reads");
    let t = r["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["setting"] == "read-size")
        .unwrap()
        .clone();
    assert_eq!(
        (t["found"].as_str(), t["tried"].as_str()),
        (Some("16 B a call"), Some("4096 B a call"))
    );
    let s = t["speedup"].as_f64().unwrap();
    assert!((s - 9216.0 / 4116.0).abs() < 1e-9, "{s}");
    assert_eq!(
        r["findings"][0]["summary"],
        "reads in calls of 16 B are slow: reading 4096 B in one call runs 2.24x faster (virtual time: exact)"
    );
    // Without --read-size there is nothing to try; a read size the size of the
    // message has nothing to gain.
    let (_, r) = doctor(&["--bus", "bench"]);
    assert!(r["settings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["setting"] != "read-size"));
    let (code, r) = doctor(&["--bus", "bench", "--read-size", "64K"]);
    assert_eq!((code, common::problems(&r)), (0, vec![]), "{r:#}");
}

/// The board's fastest device as a reference: the HP3565 at 11 takes 20 us a byte
/// while the SCPI instrument at 22 runs at the handshake's pace through the same DMA
/// board, so the slowness is put on device 11.
#[test]
fn a_slow_device_is_told_from_a_slow_board_by_the_boards_fastest_device() {
    let config = compat_config("slow_instrument.toml");
    let r = names(
        &["--bus", &config, "--device", "11", "--reference", "22"],
        "slow-device",
    );
    let d = &r["devices"][0];
    assert_eq!(
        (d["address"].as_u64(), d["bytes"].as_u64()),
        (Some(22), Some(65536))
    );
    let f = &r["findings"][0];
    assert_eq!(
        f["summary"],
        "device 11 is the slow one: 65536 B transfers run at 49.5 kB/s read, 48.8 kB/s \
         written, while device 22 on the same board runs them 20.2x and 20.5x faster"
    );
    // The same figure as the two devices' own writes: 65536 B at 20.5 us a byte (the
    // HP3565's acceptance and the handshake) against 1 us.
    let ratio = d["bytes"].as_f64().unwrap()
        / d["write_seconds"].as_f64().unwrap()
        / (r["transfers"]["write_large"]["bytes"].as_f64().unwrap()
            / r["transfers"]["write_large"]["seconds"].as_f64().unwrap());
    assert!(
        (f["speedup"].as_f64().unwrap() - ratio).abs() < 1e-9,
        "{f:#}"
    );
    assert!(
        f["evidence"]
            .to_string()
            .contains("the bus waits for a device"),
        "the handshake reference stays as evidence: {f:#}"
    );
    // Without a reference the doctor still finds the bus waiting, but cannot say it is
    // this device rather than the board.
    let r = names(&["--bus", &config, "--device", "11"], "slow-device");
    assert!(r["devices"].as_array().unwrap().is_empty());
    assert!(r["findings"][0]["summary"]
        .as_str()
        .unwrap()
        .starts_with("the bus waits for a device"));
    // A reference nobody answers at is reported, not fatal.
    let (code, r) = doctor(&["--bus", &config, "--device", "11", "--reference", "5"]);
    assert_eq!(code, 3);
    assert_eq!(r["devices"][0]["address"], 5);
    assert!(r["devices"][0]["failure"].as_str().is_some(), "{r:#}");
}

/// A device that never asserts EOI: its answers end with a newline, so every read that
/// waits for END waits out its timeout. The doctor tries a short query with reads
/// ending on the newline too, and names the cause with the calls that fix it.
#[test]
fn a_device_that_never_asserts_eoi_is_named_by_ending_reads_on_a_newline() {
    let config = compat_config("no_eoi.toml");
    let r = names(
        &["--bus", &config, "--device", "22", "--timeout", "0.2"],
        "no-eoi",
    );
    assert_eq!(
        r["findings"][0]["summary"],
        "device 22 ends its answers without END (EOI): a read got 25 B and then waited for \
         the end until its timeout; with reads ending on a newline too, a short query took \
         0.000147 s"
    );
    assert_eq!(
        r["findings"][0]["evidence"][0],
        "without it: read timed out after 200ms with 25 byte(s) transferred"
    );
    assert!(r["findings"][0]["advice"]
        .as_str()
        .unwrap()
        .contains("`++read 10` instead of `++read eoi` on a Prologix adapter"));
    // "SIMULATED,SCPI-DMM,0,1.0\n": the 25 bytes the read got.
    assert_eq!(r["read_end"]["stalled_after"], 25);
    // A device that ends its answers is not tried.
    let (_, r) = doctor(&["--bus", "bench", "--device", "22"]);
    assert!(r["read_end"].is_null(), "{r:#}");
    // The configuration's fault is the command line's: the same finding either way.
    let r2 = names(
        &[
            "--bus",
            "bench",
            "--device",
            "22",
            "--timeout",
            "0.2",
            "--fault",
            "22=drops-eoi",
        ],
        "no-eoi",
    );
    assert_eq!(r2["read_end"]["stalled_after"], 25);
}

/// `--autopoll on` probes with the program's automatic serial polling on, and the
/// doctor tries it off (linux-gpib's library opens a board with it off, so a program
/// that polls automatically says so); a word other than on or off is a usage error.
#[test]
fn the_programs_autopoll_is_set_before_the_probe_and_the_other_tried() {
    let autopoll = |r: &Value| {
        r["settings"]
            .as_array()
            .expect("settings")
            .iter()
            .find(|s| s["setting"] == "autopoll")
            .map(|s| {
                (
                    s["found"].as_str().unwrap().to_string(),
                    s["tried"].as_str().unwrap().to_string(),
                )
            })
    };
    let (_, off) = doctor(&["--bus", "bench", "--device", "22", "--budget", "0.5"]);
    assert_eq!(
        autopoll(&off),
        None,
        "bench has autopoll off: nothing to try: {off:#}"
    );
    let (_, on) = doctor(&[
        "--bus",
        "bench",
        "--device",
        "22",
        "--budget",
        "0.5",
        "--autopoll",
        "on",
    ]);
    assert_eq!(autopoll(&on), Some(("on".into(), "off".into())), "{on:#}");
    common::fails(
        &["doctor", "--bus", "bench", "--autopoll", "yes"],
        2,
        "say on or off",
    );
}
