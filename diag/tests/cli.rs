//! The `gpib-diag` binary on the simulator: the 1988 HP 9000/350 figures, every format, and the
//! error messages for bad arguments.

mod common;

use approx::assert_relative_eq;
use common::{diag, diag_within, fails, ok};

/// Parses io-test's seven lines into (read time, read rate, size, write time, write rate).
fn io_test_figures(text: &str) -> (f64, f64, u64, f64, f64) {
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "{text}");
    assert_eq!(lines[3], "");
    let val = |i: usize, prefix: &str| -> f64 {
        let rest = lines[i]
            .strip_prefix(prefix)
            .unwrap_or_else(|| panic!("line {i}: {}", lines[i]));
        // The program's own %f format: six digits after the point.
        assert_eq!(
            rest.split('.').nth(1).map(str::len),
            Some(6),
            "{}",
            lines[i]
        );
        rest.parse().unwrap()
    };
    let size: u64 = lines[2]
        .strip_prefix("transfer size: ")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(lines[6], format!("transfer size: {size}"));
    (
        val(0, "read time: "),
        val(1, "transfer rate: "),
        size,
        val(4, "write time: "),
        val(5, "transfer rate: "),
    )
}

#[test]
fn hp9000_350_1988_test_1_disc_mounted() {
    let (rt, rr, size, wt, wr) = io_test_figures(&ok(&["io-test", "400000"]));
    assert_eq!(size, 400_000);
    assert_relative_eq!(rt, 53.444, max_relative = 0.0005);
    assert_relative_eq!(rr, 7_484.0, max_relative = 0.0005);
    assert_relative_eq!(wt, 47.408, max_relative = 0.0005);
    assert_relative_eq!(wr, 8_437.0, max_relative = 0.0005);
}

#[test]
fn hp9000_350_1988_test_2_disc_unmounted() {
    let (rt, rr, _, wt, wr) = io_test_figures(&ok(&[
        "io-test",
        "--bus",
        "hp9000-350",
        "--unmount",
        "/disc",
        "400000",
    ]));
    assert_relative_eq!(rt, 0.915, max_relative = 0.0005);
    assert_relative_eq!(rr, 437_166.0, max_relative = 0.0005);
    assert_relative_eq!(wt, 1.034, max_relative = 0.0005);
    assert_relative_eq!(wr, 386_940.0, max_relative = 0.0005);
}

#[test]
fn json_records() {
    let out = ok(&[
        "io-test",
        "--format",
        "json",
        "--repeat",
        "3",
        "--unmount",
        "/disc",
        "400000",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["command"], "io-test");
    let recs = doc["records"].as_array().unwrap();
    assert_eq!(recs.len(), 2);
    let read = &recs[0];
    assert_eq!(read["direction"], "read");
    assert_eq!(read["config"], "hp9000-350:unmount=/disc");
    assert_eq!(read["backend"], "sim");
    assert_eq!(read["clock"], "virtual");
    assert_eq!(read["protocol"], "hp3565");
    assert_eq!(read["runs"], 3);
    assert_eq!(read["size"], 400_000);
    assert_relative_eq!(
        read["seconds"].as_f64().unwrap(),
        0.915,
        max_relative = 0.0005
    );
    assert_eq!(read["cpu_source"], "modelled");
    // Programmed I/O keeps the CPU busy through the transfer: 100 % utilisation, and a
    // service demand of (CPU us) / (KiB) = 0.9147e6 / 390.625.
    assert_relative_eq!(
        read["cpu_utilisation"].as_f64().unwrap(),
        1.0,
        max_relative = 1e-9
    );
    assert_relative_eq!(
        read["service_demand_us_per_kib"].as_f64().unwrap(),
        0.9147e6 / 390.625,
        max_relative = 1e-3
    );
    assert_eq!(read["stats"]["n"], 3);
    assert_eq!(recs[1]["direction"], "write");
}

#[test]
fn csv_and_markdown() {
    let csv = ok(&["io-test", "--format", "csv", "--unmount", "/disc", "4K"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("config,backend,clock,device,protocol,direction,size"));
    let read: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(read[5], "read");
    assert_eq!(read[6], "4096");
    let secs: f64 = read[8].parse().unwrap();
    assert_relative_eq!(secs, 300e-6 + 4096.0 * 2.286e-6, max_relative = 1e-6);
    let md = ok(&["io-test", "--format", "markdown", "4K"]);
    let cells = |line: &str| -> Vec<String> {
        line.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines.len(), 4, "{md}");
    assert_eq!(
        cells(lines[0])[..3],
        ["config", "direction", "size (B)"],
        "{md}"
    );
    // Names left-aligned, numbers right-aligned.
    let rule = cells(lines[1]);
    assert!(!rule[0].ends_with(':') && rule[2].ends_with("-:"), "{md}");
    assert_eq!(cells(lines[2])[..3], ["hp9000-350", "read", "4096"], "{md}");
}

#[test]
fn output_to_file() {
    let dir = std::env::temp_dir().join(format!("gpib-diag-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("out.json");
    let p = path.to_str().unwrap();
    assert_eq!(ok(&["io-test", "--format", "json", "-o", p, "1K"]), "");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(doc["records"][0]["size"], 1024);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn compare_gives_the_1988_ratios() {
    let out = ok(&[
        "compare",
        "--bus",
        "hp9000-350",
        "--bus",
        "hp9000-350:unmount=/disc",
        "--format",
        "json",
        "400000",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ratios = doc["ratios"].as_array().unwrap();
    assert_eq!(ratios.len(), 2);
    assert_relative_eq!(
        1.0 / ratios[0]["seconds_ratio"].as_f64().unwrap(),
        58.4,
        epsilon = 0.05
    );
    assert_relative_eq!(
        1.0 / ratios[1]["seconds_ratio"].as_f64().unwrap(),
        45.9,
        epsilon = 0.05
    );
    let text = ok(&[
        "compare",
        "--bus",
        "hp9000-350",
        "--bus",
        "hp9000-350:unmount=/disc",
        "400000",
    ]);
    assert!(
        text.contains("read 58.4x faster with hp9000-350:unmount=/disc than with hp9000-350"),
        "{text}"
    );
}

#[test]
fn sweep_table_and_plot() {
    let dir = std::env::temp_dir().join(format!("gpib-diag-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("sweep.svg");
    let out = ok(&[
        "sweep",
        "--bus",
        "bench",
        "--board",
        "gpib0",
        "--device",
        "22",
        "--from",
        "1",
        "--to",
        "1M",
        "--format",
        "json",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let recs = doc["records"].as_array().unwrap();
    // 1, 4, 16 ... 1 MiB: 11 sizes, read and write each.
    assert_eq!(recs.len(), 22);
    assert_eq!(recs[0]["protocol"], "scpi");
    // Throughput grows with size while the per-call cost is amortised.
    let rate = |i: usize| recs[i]["bytes_per_second"].as_f64().unwrap();
    assert!(rate(20) > 20.0 * rate(0), "{} vs {}", rate(20), rate(0));
    // A 1 MiB block on the DMA board runs at the IEEE 488.1 ceiling of 1 MB/s.
    assert_relative_eq!(rate(20), 1e6, max_relative = 0.01);
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.starts_with("<svg") && picture.contains("read") && picture.contains("write"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn large_transfers_get_a_long_enough_timeout() {
    // 16 MiB at the bench's 1 MB/s takes 17 s: longer than the board's 10 s timeout,
    // so the tool raises it unless told otherwise.
    let (rt, _, size, wt, _) =
        io_test_figures(&ok(&["io-test", "--bus", "bench", "--device", "22", "16M"]));
    assert_eq!(size, 16 << 20);
    assert!(rt > 16.0 && wt > 16.0, "{rt} {wt}");
    let out = diag(&[
        "io-test",
        "--bus",
        "bench",
        "--device",
        "22",
        "--timeout",
        "10",
        "16M",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    // What arrived before the timeout is reported: about 10 s of the 1 MB/s body (the
    // block's first read, its header and first 4 KiB, has a timeout of its own).
    let got: u64 = err
        .split("timed out after 10s with ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!((9_990_000..=10_010_000).contains(&got), "{err}");
}

// Issue 31 item 3: `--timeout 0` is "none", as the option says, not "do not wait".
#[test]
fn a_zero_io_test_timeout_is_none() {
    let out = ok(&[
        "io-test",
        "--bus",
        "bench",
        "--device",
        "22",
        "--timeout",
        "0",
        "64K",
    ]);
    let (_, _, size, _, _) = io_test_figures(&out);
    assert_eq!(size, 64 << 10);
}

#[test]
fn scan_finds_the_bench() {
    let out = ok(&["scan", "--bus", "bench"]);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["11", "GPIB0::11::INSTR", "(no", "answer)"],
            vec!["22", "GPIB0::22::INSTR", "SIMULATED,SCPI-DMM,0,1.0"]
        ]
    );
}

#[test]
fn confidence_iteration_stops_when_tight() {
    let out = ok(&[
        "io-test",
        "--format",
        "json",
        "--confidence",
        "0.05",
        "--max-repeat",
        "10",
        "1K",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    // Virtual time is exact: two runs already give a zero-width interval.
    assert_eq!(doc["records"][0]["runs"], 2);
}

#[test]
fn bad_arguments_say_what_is_wrong() {
    fails(&["io-test", "0"], 2, "at least 1 byte");
    fails(
        &["io-test", "--bus", "no-such-bus", "400000"],
        2,
        "unknown configuration \"no-such-bus\"",
    );
    fails(
        &["io-test", "--unmount", "/nowhere", "400000"],
        2,
        "unknown mount point \"/nowhere\"",
    );
    fails(
        &["io-test", "--device", "31", "400000"],
        2,
        "31 is not a primary address (0 to 30)",
    );
    fails(
        &["io-test", "--device", "5", "400000"],
        2,
        "no instrument at address 5",
    );
    fails(
        &[
            "compare",
            "--backend",
            "linux-gpib",
            "--bus",
            "hp9000-350",
            "400000",
        ],
        2,
        "at least two",
    );
    fails(
        &[
            "compare",
            "--bus",
            "hp9000-350",
            "--bus",
            "hp9000-350:speed=1",
            "4K",
        ],
        2,
        "bad option",
    );
}

#[cfg(not(feature = "linux-gpib"))]
#[test]
fn missing_feature_says_how_to_rebuild() {
    fails(
        &["io-test", "--backend", "linux-gpib", "400000"],
        2,
        "--features linux-gpib",
    );
}

/// Through linux-gpib-rs and the libgpib-compatible simulator library (compat/ci.sh
/// links it and sets LD_LIBRARY_PATH): the same bytes move as on `--backend sim`, and
/// every write is read back and compared by the tool.
#[cfg(feature = "linux-gpib")]
#[test]
fn io_test_through_linux_gpib() {
    for config in ["hp9000-350", "bench"] {
        let out = common::gpib_diag()
            .args([
                "io-test",
                "--backend",
                "linux-gpib",
                "--format",
                "json",
                "65536",
            ])
            .env("GPIB_SIM_CONFIG", config)
            .output()
            .expect("gpib-diag runs");
        assert!(
            out.status.success(),
            "{config}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let recs = doc["records"].as_array().unwrap();
        assert_eq!(recs.len(), 2);
        for r in recs {
            assert_eq!(r["backend"], "linux-gpib");
            assert_eq!(r["clock"], "wall");
            assert_eq!(r["cpu_source"], "measured");
            assert_eq!(r["size"], 65536);
            // hp9000-350's board 0 is hpib7 with the HP3565; bench's first listener is too.
            assert_eq!(r["protocol"], "hp3565");
            assert_eq!(r["device"], "11");
        }
    }
}

#[test]
fn bus_files_that_are_not_configurations_are_refused_by_name_once() {
    for (bus, why) in [
        ("/etc", "/etc is a directory"),
        ("/dev/zero", "/dev/zero is not a regular file"),
    ] {
        let out = diag_within(&["scan", "--bus", bus], 20);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bus}: {err}");
        assert!(err.contains(why), "{bus}: {err}");
        assert_eq!(err.lines().count(), 1, "said once, on one line: {err}");
    }
}

#[test]
fn version_lists_the_features_of_the_build() {
    let on: Vec<&str> = [
        ("linux-gpib", cfg!(feature = "linux-gpib")),
        ("prologix-serial", cfg!(feature = "prologix-serial")),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(name, _)| *name)
    .collect();
    let features = if on.is_empty() {
        "none".to_string()
    } else {
        on.join(", ")
    };
    let expected = format!(
        "gpib-diag {} (features: {features})\n",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(ok(&["--version"]), expected);
    assert_eq!(ok(&["-V"]), expected);
}

#[test]
fn completions_for_every_shell() {
    for (shell, marker) in [
        ("bash", "complete -F _gpib__diag"),
        ("zsh", "#compdef gpib-diag"),
        ("fish", "complete -c gpib-diag"),
        ("elvish", "gpib-diag"),
        ("powershell", "gpib-diag"),
    ] {
        let script = ok(&["completions", shell]);
        assert!(
            script.contains(marker),
            "{shell}: no {marker:?} in\n{script}"
        );
        // The subcommands and their options are in it.
        assert!(script.contains("io-test"), "{shell}");
        assert!(script.contains("--unmount"), "{shell}");
    }
    fails(&["completions", "tcsh"], 2, "invalid value 'tcsh'");
}

#[test]
fn manpage_is_roff_with_every_subcommand() {
    let page = ok(&["manpage"]);
    assert!(page.starts_with(".ie \\n(.g .ds Aq"), "{}", &page[..80]);
    assert!(page.contains(".TH gpib-diag 1"), "{page}");
    for sub in [
        "io\\-test",
        "sweep",
        "compare",
        "scan",
        "serve",
        "completions",
    ] {
        assert!(page.contains(sub), "no {sub} in the manual page");
    }
}

// The mock driver (hidden `--protocol mock`) sends the instrument nothing and takes
// exactly 1 µs a byte of the bus's clock: on the simulator every figure is exact.
#[test]
fn the_mock_driver_gives_exact_figures() {
    let text = ok(&[
        "io-test",
        "--bus",
        "bench",
        "--device",
        "22",
        "--protocol",
        "mock",
        "250000",
    ]);
    assert_eq!(
        text,
        "read time: 0.250000\ntransfer rate: 1000000.000000\ntransfer size: 250000\n\n\
         write time: 0.250000\ntransfer rate: 1000000.000000\ntransfer size: 250000\n"
    );
    let csv = ok(&[
        "sweep",
        "--bus",
        "bench",
        "--device",
        "22",
        "--protocol",
        "mock",
        "--from",
        "1000",
        "--to",
        "16000",
        "--format",
        "csv",
    ]);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for row in csv.lines().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        let size: f64 = f[col("size")].parse().unwrap();
        assert_eq!(f[col("protocol")], "mock");
        assert_eq!(
            f[col("seconds")].parse::<f64>().unwrap(),
            size * 1e-6,
            "{row}"
        );
        assert_eq!(f[col("cpu_seconds")].parse::<f64>().unwrap(), 0.0, "{row}");
    }
    assert_eq!(csv.lines().count(), 1 + 2 * 3, "1000, 4000, 16000 each way");
}

// The configuration shaped like the 1983 VAX-11/780 terminal measurement: the knee is at
// seven lines, named as the host CPU, and the rate per line falls past it; the curve
// is the same run after run.
#[test]
fn contention_finds_the_cpu_knee_at_seven_terminals() {
    let json = ok(&[
        "contention",
        "--bus",
        "vax-780-terminals",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["knee"]["devices"], 7, "{json}");
    assert_eq!(doc["knee"]["saturated"], "host CPU");
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 8);
    let per_device = |i: usize| {
        let v = points[i]["per_device_bytes_per_second"].as_array().unwrap();
        v.iter().map(|x| x.as_f64().unwrap()).sum::<f64>() / v.len() as f64
    };
    let cpu = |i: usize| points[i]["cpu_utilisation"].as_f64().unwrap();
    for n in 1..4 {
        assert!(
            (cpu(n) - cpu(0) * (n + 1) as f64).abs() < 0.02,
            "CPU linear: {n}"
        );
    }
    assert!(per_device(7) < per_device(6) && per_device(6) < 0.95 * per_device(0));
    let text = ok(&["contention", "--bus", "vax-780-terminals"]);
    assert!(
        text.contains("knee at 7 devices") && text.contains("host CPU"),
        "{text}"
    );
    assert_eq!(
        ok(&[
            "contention",
            "--bus",
            "vax-780-terminals",
            "--format",
            "json"
        ]),
        json
    );
}

/// Checks the figures a contention user reads at every point: each device's rate is
/// what its back-to-back transactions give (`bytes` / p50 latency, within 0.5 %, where
/// every transaction takes the same time), and no utilisation is above 100 %.
fn assert_contention_figures_are_possible(doc: &serde_json::Value, bytes: f64) {
    for p in doc["points"].as_array().unwrap() {
        let cpu = p["cpu_utilisation"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&cpu), "CPU {cpu} in {p}");
        for b in p["bus_utilisation"].as_array().unwrap() {
            let u = b[1].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&u), "bus {u} in {p}");
        }
        let p50 = p["latency_p50_s"].as_f64().unwrap();
        let p99 = p["latency_p99_s"].as_f64().unwrap();
        let rates = p["per_device_bytes_per_second"].as_array().unwrap();
        let sum: f64 = rates.iter().map(|r| r.as_f64().unwrap()).sum();
        let agg = p["aggregate_bytes_per_second"].as_f64().unwrap();
        assert!((agg - sum).abs() <= 1e-9 * agg.max(1.0), "{p}");
        if (p99 - p50).abs() < 1e-9 {
            for r in rates {
                let r = r.as_f64().unwrap();
                assert!(
                    (r - bytes / p50).abs() < 0.005 * r,
                    "rate {r} against {} B / {p50} s in {p}",
                    bytes
                );
            }
        }
    }
}

// The rates of `contention` on the simulator: one terminal of the VAX configuration
// moves its 35-byte lines at 922 B/s (the README's figure), two reach 1,844 B/s, and
// past the knee the aggregate stays at 5,754 B/s; CPU and bus never read over 100 %.
// (A refactor once divided by a run length of zero: 1.8e16 B/s a terminal.)
#[test]
fn contention_rates_are_what_the_devices_moved() {
    let json = ok(&[
        "contention",
        "--bus",
        "vax-780-terminals",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_contention_figures_are_possible(&doc, 35.0);
    let agg = |i: usize| {
        doc["points"][i]["aggregate_bytes_per_second"]
            .as_f64()
            .unwrap()
    };
    assert_relative_eq!(agg(0), 922.0, max_relative = 0.001);
    assert_relative_eq!(agg(1), 1843.6, max_relative = 0.001);
    assert_relative_eq!(agg(7), 5754.5, max_relative = 0.001);
    let json = ok(&[
        "contention",
        "--bus",
        "three-adapters",
        "--size",
        "64K",
        "--seconds",
        "2",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_contention_figures_are_possible(&doc, 65536.0);
    let agg = |i: usize| {
        doc["points"][i]["aggregate_bytes_per_second"]
            .as_f64()
            .unwrap()
    };
    assert_relative_eq!(agg(0), 2.207e6, max_relative = 0.001);
    assert_relative_eq!(agg(2), 6.589e6, max_relative = 0.001);
}

// `compare` with no configuration once refused to run ("--bus <SPEC> required"); with
// none it takes the default one and switches each of its contention sources off in turn.
#[test]
fn compare_defaults_to_each_source_of_the_default_configuration_off() {
    let json = ok(&["compare", "4K", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let configs: Vec<&str> = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["config"].as_str().unwrap())
        .collect();
    assert_eq!(
        configs,
        [
            "hp9000-350",
            "hp9000-350",
            "hp9000-350:without=mounted-disc",
            "hp9000-350:without=mounted-disc",
            "hp9000-350:without=pio",
            "hp9000-350:without=pio"
        ],
        "{json}"
    );
    let text = ok(&["compare", "--bus", "hp9000-350:unmount=/disc", "4K"]);
    assert!(
        text.contains("hp9000-350:unmount=/disc,without=pio"),
        "{text}"
    );
    fails(
        &["compare", "--bus", "bench", "4K"],
        2,
        "bench has no contention source to switch off",
    );
}

// The contention figure: a well-formed SVG with the rate and utilisation curves, a
// point per device count on each, and the knee marked where the JSON says it is.
#[test]
fn contention_plot_marks_the_knee() {
    let dir = std::env::temp_dir().join(format!("gpib-diag-contention-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("contention.svg");
    ok(&[
        "contention",
        "--bus",
        "vax-780-terminals",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let picture = std::fs::read_to_string(&svg).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let doc = roxmltree::Document::parse(&picture).expect("well-formed SVG");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::trim))
        .collect();
    for label in [
        "gpib-diag contention: vax-780-terminals",
        "aggregate",
        "per device (mean)",
        "host CPU",
        "busiest bus",
        "devices active at once",
    ] {
        assert!(texts.contains(&label), "missing {label}: {texts:?}");
    }
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("knee: 7 devices, the host CPU saturates")),
        "{texts:?}"
    );
    // Eight device counts: a circle each on the two rate curves, the CPU's and the bus's.
    let circles = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert_eq!(circles, 8 * 4);
}

// The configuration shaped like the 1996 IBM adapter measurements: three boards on one
// CPU; the aggregate grows almost threefold and the CPU left over shrinks to little.
#[test]
fn contention_on_three_adapters_sharing_a_host() {
    let json = ok(&[
        "contention",
        "--bus",
        "three-adapters",
        "--size",
        "64K",
        "--seconds",
        "2",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    let agg = |i: usize| points[i]["aggregate_bytes_per_second"].as_f64().unwrap();
    let cpu = |i: usize| points[i]["cpu_utilisation"].as_f64().unwrap();
    assert!(agg(2) > 2.9 * agg(0) && agg(2) < 3.0 * agg(0), "{json}");
    assert!(cpu(0) > 0.25 && cpu(0) < 0.35, "{json}");
    assert!(cpu(2) > 0.9 && cpu(2) < 1.0, "{json}");
    assert!(doc["knee"].is_null(), "no knee: {json}");
}

// Contention sources switch on for a contention run as for io-test: a 60 m cable slows
// every device's writes.
#[test]
fn contention_takes_contention_sources() {
    let rate = |extra: &[&str]| {
        let mut args = vec![
            "contention",
            "--bus",
            "bench",
            "--size",
            "4K",
            "--seconds",
            "1",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--format", "json"]);
        let doc: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
        doc["points"][0]["aggregate_bytes_per_second"]
            .as_f64()
            .unwrap()
    };
    let (short, long) = (rate(&[]), rate(&["--with", "long-cable"]));
    assert!(long < 0.8 * short, "{long} against {short}");
    fails(
        &["contention", "--bus", "bench", "--devices", "0:11"],
        2,
        "--devices is for hardware",
    );
    fails(
        &["contention", "--bus", "bench", "--with", "gremlins"],
        2,
        "unknown contention source",
    );
}

// The GPIB configuration shaped like the 1983 VAX-11/780 terminal measurement: eight
// instruments polled by programmed I/O every 12 ms; the CPU saturates at seven and
// the rate per instrument falls past it.
#[test]
fn contention_of_paced_pio_instruments_saturates_the_cpu_at_seven() {
    let json = ok(&[
        "contention",
        "--bus",
        "pio-instruments",
        "--workload",
        "query",
        "--interval-ms",
        "12",
        "--seconds",
        "5",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["knee"]["devices"], 7, "{json}");
    assert_eq!(doc["knee"]["saturated"], "host CPU");
    let points = doc["points"].as_array().unwrap();
    let cpu = |i: usize| points[i]["cpu_utilisation"].as_f64().unwrap();
    let agg = |i: usize| points[i]["aggregate_bytes_per_second"].as_f64().unwrap();
    assert!((cpu(0) - 0.152).abs() < 0.01, "{}", cpu(0));
    assert!((cpu(3) - 4.0 * cpu(0)).abs() < 0.01, "CPU grows linearly");
    assert!(
        agg(7) < 1.01 * agg(6),
        "the aggregate stops growing past the knee"
    );
    fails(
        &["contention", "--bus", "bench", "--interval-ms", "0"],
        2,
        "--interval-ms 0 is out of range",
    );
}

// `--device` takes a name: the simulated configuration's named devices (on linux-gpib,
// gpib.conf's device sections), resolved on the board.
#[test]
fn devices_are_named_as_in_gpib_conf() {
    assert_eq!(
        ok(&["io-test", "--bus", "bench", "--device", "voltmeter", "4096"]),
        ok(&["io-test", "--bus", "bench", "--device", "22", "4096"])
    );
    fails(
        &["io-test", "--bus", "bench", "--device", "dmm", "4096"],
        2,
        "no device named \"dmm\" in this configuration (named devices: voltmeter)",
    );
    fails(
        &["io-test", "--bus", "bench", "--device", "31", "4096"],
        2,
        "31 is not a primary address (0 to 30)",
    );
}

// Everyday instrument work on any resource string: query, write, read, list, through
// the library's one entry point. On the simulator each command is a fresh bench.
#[test]
fn query_write_read_and_list_take_resource_strings() {
    assert_eq!(
        ok(&["query", "GPIB0::22::INSTR", "*IDN?"]),
        "SIMULATED,SCPI-DMM,0,1.0\n"
    );
    assert_eq!(ok(&["write", "GPIB0::22::INSTR", "*CLS"]), "");
    assert_eq!(
        ok(&["list"]),
        "GPIB0::INTFC\nGPIB0::11::INSTR\nGPIB0::22::INSTR\n"
    );
    assert_eq!(
        ok(&["list", "?*::INSTR", "--bus", "vax-780-terminals"])
            .lines()
            .count(),
        8
    );
    let dir = std::env::temp_dir().join(format!("gpib-diag-query-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let wave = dir.join("wave.bin");
    let out = diag(&[
        "query",
        "GPIB0::22::INSTR",
        "WAV:DATA?",
        "--block",
        wave.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    // The bench's default waveform: 1000 points of f32.
    assert_eq!(std::fs::metadata(&wave).unwrap().len(), 4000);
    std::fs::remove_dir_all(&dir).ok();
    // An instrument that does not answer: a timeout that says how much it got.
    fails(
        &["query", "GPIB0::11::INSTR", "*IDN?", "--timeout", "1"],
        1,
        "timed out after 1s with 0 byte(s)",
    );
    fails(&["query", "GPIB9::22::INSTR", "*IDN?"], 1, "no board GPIB9");
    fails(&["list", "GPIB[0"], 1, "not closed");
    fails(
        &["query", "nonsense::", "x", "--timeout", "forever"],
        2,
        "is not a timeout",
    );
}

// `serve` options that cannot go together, or a board that is not there, are usage
// errors before anything listens.
#[test]
fn serve_refuses_what_it_cannot_serve() {
    fails(
        &["serve", "--backend", "prologix", "--no-portmap"],
        2,
        "--backend prologix relays an adapter: give --host HOST[:PORT]",
    );
    fails(
        &["serve", "--backend", "vxi11", "--host", "pi:x"],
        2,
        "--host pi:x: expected HOST or HOST:PORT",
    );
    fails(
        &[
            "serve",
            "--backend",
            "prologix",
            "--host",
            "pi",
            "--board",
            "1",
        ],
        2,
        "a Prologix adapter has one bus",
    );
    fails(
        &["serve", "--backend", "vxi11", "--host", "pi", "--realtime"],
        2,
        "--realtime is for the simulator",
    );
    fails(
        &["serve", "--allow", "10.0.0.0/33"],
        2,
        "the prefix length must be 0 to 32",
    );
    fails(&["serve", "--board", "7"], 1, "7");
    if cfg!(not(feature = "linux-gpib")) {
        fails(
            &["serve", "--backend", "linux-gpib", "--board", "0"],
            2,
            "linux-gpib",
        );
    }
}

/// Issue 28 item 11: `contention --seconds` is the length of each point's run, so its
/// message speaks of that and of the range it takes (0 is no run length).
#[test]
fn contention_seconds_out_of_range_speak_of_the_run_length() {
    for bad in ["1e12", "0", "-1"] {
        let out = fails(
            &["contention", "--bus", "three-adapters", "--seconds", bad],
            2,
            "more than 0 and at most 1000000 seconds",
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("run"), "{bad}: {stderr}");
        assert!(!stderr.contains("no timeout"), "{bad}: {stderr}");
    }
}
