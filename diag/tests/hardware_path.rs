//! `gpib-diag doctor` on the hardware path: the linux-gpib backend over `libgpib.so.0`
//! (compat/ci.sh links the simulator's compatibility library and runs these with
//! `--features linux-gpib`), in real time (`GPIB_SIM_REALTIME=1`), so the doctor sees
//! only what it would see on a real board: wall time, its thread's CPU, the host.
//!
//! Each planted cause is found when present and not when absent. Timing is compared as
//! ratios measured in one run (the same sweep in the model's virtual time), never
//! against fixed wall-clock figures. The tests take turns (`common::turns::alone`): each
//! is a real-time run whose CPU figures another run beside it would disturb.

#![cfg(feature = "linux-gpib")]

mod common;

use std::process::{Command, Stdio};

use serde_json::Value;

/// The sweep's budget on the hardware path: a few sizes each way on the 1988 machine.
const BUDGET: &str = "1.5";

fn report(out: std::process::Output, what: &str) -> (i32, Value) {
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let r: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{what}: not JSON ({e}): {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().expect("exit code"), r)
}

/// The doctor through libgpib on `config`, in real time unless `realtime` is false.
fn through_libgpib(config: &str, realtime: bool, extra: &[&str]) -> (i32, Value) {
    let mut c = common::gpib_diag();
    c.args(["doctor", "--backend", "linux-gpib", "--device", "11"])
        .args(["--budget", BUDGET, "--format", "json"])
        .args(extra)
        .envs(common::libgpib_bus(config));
    if realtime {
        c.env("GPIB_SIM_REALTIME", "1");
    } else {
        // Virtual time: compat's default, the virtual board's when asked.
        c.env("GPIB_SIM_REALTIME", "0");
    }
    report(c.output().expect("gpib-diag runs"), config)
}

/// The same doctor on the simulator in virtual time, with the sizes the real-time run
/// chose (`r`'s largest): the model's own figures.
fn on_the_model(config: &str, r: &Value) -> Value {
    on_the_model_with(config, r, &[])
}

/// [`on_the_model`] with more arguments.
fn on_the_model_with(config: &str, r: &Value, extra: &[&str]) -> Value {
    let largest = r["sweep"]["sizes"]
        .as_array()
        .and_then(|s| s.last())
        .and_then(Value::as_u64)
        .expect("a sweep ran");
    let out = common::gpib_diag()
        .args(["doctor", "--bus", config, "--device", "11"])
        .args(["--large", &largest.to_string(), "--format", "json"])
        .args(extra)
        .output()
        .expect("gpib-diag runs");
    report(out, config).1
}

fn fit(r: &Value, direction: &str, what: &str) -> f64 {
    r["sweep"][direction][what]["slope"]
        .as_f64()
        .unwrap_or_else(|| panic!("no {direction} {what} fit: {r:#}"))
}

/// The share of each byte's time the thread ran or waited to run.
fn wanted_share(r: &Value, direction: &str) -> f64 {
    let t = fit(r, direction, "time");
    let cpu = fit(r, direction, "cpu").max(0.0);
    let waiting = r["sweep"][direction]["waiting"]["slope"]
        .as_f64()
        .unwrap_or(0.0)
        .max(0.0);
    (cpu + waiting) / t
}

/// The largest transfer of `direction` in real time over the same in the model: a
/// real-time operation never ends before its modelled time, and a loaded machine
/// makes it later.
fn against_the_model(r: &Value, model: &Value, direction: &str) -> f64 {
    let key = format!("{direction}_large");
    let t = |x: &Value| x["transfers"][&key]["seconds"].as_f64().expect("timed");
    assert_eq!(
        r["transfers"][&key]["bytes"],
        model["transfers"][&key]["bytes"]
    );
    t(r) / t(model)
}

fn config(name: &str) -> String {
    format!("{}/../compat/tests/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_1988_machine_is_cpu_bound_two_orders_of_magnitude_above_the_handshake() {
    let _turn = common::turns::alone();
    let (code, r) = through_libgpib("hp9000-350", true, &[]);
    let model = on_the_model("hp9000-350", &r);
    let found = common::problems(&r);
    assert_eq!(code, 3, "{r:#}");
    assert!(
        matches!(
            found.first().map(String::as_str),
            Some("cpu-bound" | "cpu-contention")
        ),
        "{found:?}: {r:#}"
    );
    for d in ["read", "write"] {
        // The time is the model's (wall time can only add to it).
        let ratio = against_the_model(&r, &model, d);
        assert!((0.98..2.0).contains(&ratio), "{d}: {ratio}x the model");
        // Two orders of magnitude above the 1 us a byte of the handshake.
        assert!(fit(&r, d, "time") > 100e-6, "{d}");
        // The thread runs (or waits to run) through each byte: the CPU is the limit.
        assert!(wanted_share(&r, d) >= 0.8, "{d}: {}", wanted_share(&r, d));
    }
    let f = &r["findings"][0];
    assert!(
        f["advice"]
            .as_str()
            .unwrap()
            .contains("takes the CPU between bytes")
            || f["cause"] == "cpu-contention",
        "{f:#}"
    );
    // The host evidence is there: the thread's shares and the machine's CPUs.
    let evidence = f["evidence"].to_string();
    assert!(evidence.contains("the measuring thread ran"), "{evidence}");
}

#[test]
fn a_healthy_bench_has_no_problem_in_real_time() {
    let _turn = common::turns::alone();
    let (code, r) = through_libgpib("bench", true, &[]);
    assert_eq!((code, common::problems(&r)), (0, vec![]), "{r:#}");
    // The driver's T1 setting, and no HS488: linux-gpib has none.
    assert_eq!(
        (
            r["handshake"]["t1_ns"].as_u64(),
            r["handshake"]["hs488"].as_bool()
        ),
        (Some(500), Some(false))
    );
    // DMA at the handshake's pace: about 1 us a byte, the CPU idle.
    for d in ["read", "write"] {
        let t = fit(&r, d, "time");
        assert!((0.9e-6..3e-6).contains(&t), "{d}: {t}");
        assert!(fit(&r, d, "cpu") < 0.2 * t, "{d}");
    }
    // linux-gpib addresses the device on every call. On this bench a sequence is about
    // 30 us against a small read's 72 us to 157 us, depending on how late this machine
    // wakes a sleeping thread: whether it reaches the note's quarter is the machine's,
    // not the doctor's (one CI run saw 22-24 % in five runs out of five; the note on
    // a board whose command bytes are slow is the next test's). The note must agree
    // with the report's own figures.
    let (_, share, note) = addressing(&r);
    assert_eq!(
        note.is_some(),
        (0.25..=1.0).contains(&share),
        "{share}: {r:#}"
    );
}

// Regression: the test above asked for the readdressing note in one run of five on
// `bench`, where the sequence is a quarter of a small read only while the machine wakes
// sleepers on time; a CI run found 22-24 % five times out of five and failed. The note
// is asserted here on a board that sends each command byte in 25 us: three bytes, 75 us
// of handshakes in every sequence and every read. A sequence measured 96-99 us against
// a least small read of 138-152 us (63-71 %); a sleep that wakes 85 us late, the worst
// seen, leaves it over 40 % of a read that alone woke late.
#[test]
fn a_board_with_slow_command_bytes_gets_the_readdressing_note() {
    let _turn = common::turns::alone();
    let (code, r) = through_libgpib(&config("slow_commands.toml"), true, &[]);
    assert_eq!((code, common::problems(&r)), (0, vec![]), "{r:#}");
    // UNL, the board's talk address, the device's listen address: 3 x 25 us, the call's
    // own cost (about 20 us on this bench) and what a late wake-up adds (the least of
    // the sequences is kept).
    let (sequence, share, note) = addressing(&r);
    assert!((75e-6..250e-6).contains(&sequence), "{sequence}");
    let note = note.unwrap_or_else(|| panic!("no readdressing note: {r:#}"));
    assert!((0.25..=1.0).contains(&share), "{share}: {r:#}");
    assert_eq!(note["severity"], "note");
    let summary = note["summary"].as_str().unwrap();
    let figure = format!(
        "an addressing sequence sent alone takes {:.1} us, {:.0} % of a 16-byte read's",
        sequence * 1e6,
        100.0 * share
    );
    assert!(summary.contains(&figure), "{summary}\n{figure}");
}

/// One addressing sequence's time, its share of the least small read, and the report's
/// readdressing note.
fn addressing(r: &Value) -> (f64, f64, Option<&Value>) {
    let addressing = r["transfers"]["addressing_seconds"].as_f64().unwrap();
    assert!(addressing > 0.0, "{r:#}");
    let read = r["transfers"]["read_small"]["run_seconds"]
        .as_array()
        .expect("a wall clock's runs")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    let note = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["cause"] == "readdressing");
    (addressing, addressing / read, note)
}

#[test]
fn a_simulator_in_virtual_time_behind_libgpib_is_faster_than_any_bus() {
    let _turn = common::turns::alone();
    let (code, r) = through_libgpib("bench", false, &[]);
    assert_eq!(code, 3);
    assert_eq!(common::problems(&r), ["faster-than-the-bus"], "{r:#}");
    // The clock cannot be trusted: no setting is tried (a trial would time noise).
    assert_eq!(r["settings"], serde_json::json!([]), "{r:#}");
    let s = r["findings"][0]["summary"].as_str().unwrap();
    assert!(
        s.starts_with("transfers ran faster than IEEE 488 allows"),
        "{s}"
    );
}

#[test]
fn a_slow_listen_only_device_is_found_and_named_among_the_listeners() {
    let _turn = common::turns::alone();
    let (code, r) = through_libgpib(&config("slow_listener.toml"), true, &[]);
    assert_eq!(code, 3);
    assert_eq!(common::problems(&r), ["slow-device"], "{r:#}");
    // 20 us a byte (its acceptance), the model's figure, with the CPU idle.
    let model = on_the_model(&config("slow_listener.toml"), &r);
    for d in ["read", "write"] {
        let ratio = against_the_model(&r, &model, d);
        assert!((0.98..2.0).contains(&ratio), "{d}: {ratio}x the model");
        assert!(wanted_share(&r, d) <= 0.2, "{d}");
    }
    let evidence = r["findings"][0]["evidence"].to_string();
    assert!(
        evidence.contains("other devices that listen on this bus: 30"),
        "{evidence}"
    );
}

/// A busy loop on the CPU the doctor is pinned to, killed when dropped.
struct Spinner(std::process::Child);

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn another_process_keeping_the_cpu_busy_is_found() {
    let _turn = common::turns::alone();
    let _spinner = Spinner(
        Command::new("taskset")
            .args(["-c", "0", "sh", "-c", "while :; do :; done"])
            .stdout(Stdio::null())
            .spawn()
            .expect("taskset runs (util-linux)"),
    );
    let out = Command::new("taskset")
        .args(["-c", "0"])
        .arg(env!("CARGO_BIN_EXE_gpib-diag"))
        .args(["doctor", "--backend", "linux-gpib", "--device", "11"])
        .args(["--budget", BUDGET, "--format", "json"])
        .envs(common::libgpib_bus("hp9000-350"))
        .env("GPIB_SIM_REALTIME", "1")
        .output()
        .expect("gpib-diag runs");
    let (code, r) = report(out, "pinned beside a busy loop");
    assert_eq!(code, 3);
    assert_eq!(
        common::problems(&r).first().map(String::as_str),
        Some("cpu-contention"),
        "{r:#}"
    );
    // The runs of the settings' trials are disturbed too: a T1 that cannot make the
    // difference they show is not named (it was, at p = 0.049, before trials were held
    // to what a setting can make).
    assert!(
        !common::problems(&r).iter().any(|p| p == "slow-t1"),
        "{r:#}"
    );
    // Sharing one CPU with a busy loop, the thread waits for it about half the time.
    let waiting =
        r["sweep"]["read"]["waiting"]["slope"].as_f64().unwrap() / fit(&r, "read", "time");
    assert!(waiting >= 0.25, "{waiting}");
}

/// calibrate through libgpib in real time: the held-out sizes as the model predicts
/// them, against what the hardware path measured there (common::held_out: 5 % as
/// calibrate says, within three runs; the best of them within 10 % on a busy machine).
fn calibrated(config: &str, sizes: &[&str]) -> Value {
    common::held_out::best_of_three(config, || {
        let out = common::gpib_diag()
            .args(["calibrate", "--backend", "linux-gpib", "--device", "11"])
            .args(sizes)
            .args(["--format", "json"])
            .envs(common::libgpib_bus(config))
            .env("GPIB_SIM_REALTIME", "1")
            .output()
            .expect("gpib-diag runs");
        report(out, config)
    })
}

#[test]
fn calibrate_predicts_held_out_sizes_on_five_buses() {
    let _turn = common::turns::alone();
    // The 1988 machine moves 7.5 kB/s: 16 B to 1 KiB, 512 B held out.
    let polled = calibrated("hp9000-350", &["--large", "1K"]);
    assert_eq!(polled["model"]["mode"], "pio");
    let pio = calibrated(&config("pio_bench.toml"), &["--budget", "3"]);
    assert_eq!(pio["model"]["mode"], "pio");
    let dma = calibrated("bench", &["--budget", "3"]);
    assert_eq!(dma["model"]["mode"], "dma");
    // On a wall clock every swept size ran three times in the sweep and once in each of
    // the eight rounds that also ran the held-out sizes, each way.
    for c in [&polled, &pio, &dma] {
        let sweep = &c["device"]["sweep"];
        assert_eq!(sweep["repeats"], 11, "{c:#}");
        let points = sweep["points"].as_array().unwrap();
        for size in sweep["sizes"].as_array().unwrap() {
            for d in ["read", "write"] {
                let runs = points
                    .iter()
                    .filter(|p| p["bytes"] == *size && p["direction"] == d)
                    .count();
                assert_eq!(runs, 11, "{d} {size}: {c:#}");
            }
        }
    }
    // Issue 28 item 12: buses a slow listener limits (every byte, SCPI headers too, at
    // 25.5 us) and a slow device limits one way (writes at 25.5 us, reads at 1 us).
    for (name, read, write) in [
        ("scpi_slow_listener.toml", 25.5e-6, 25.5e-6),
        ("scpi_slow_device.toml", 1.0e-6, 25.5e-6),
    ] {
        let c = calibrated(&config(name), &["--budget", "3"]);
        assert_eq!(c["model"]["mode"], "dma", "{name}");
        let costs = &c["device"]["costs"];
        for (key, want) in [("read_byte_s", read), ("write_byte_s", write)] {
            let got = costs[key].as_f64().unwrap();
            assert!((got / want - 1.0).abs() < 0.05, "{name}: {key} {got}");
        }
    }
    // The per-byte costs are the model's: the hardware path adds only per-call time.
    let per_byte = |c: &Value| c["device"]["costs"]["read_byte_s"].as_f64().unwrap();
    assert!(
        (per_byte(&polled) / 133.608e-6 - 1.0).abs() < 0.05,
        "{}",
        per_byte(&polled)
    );
    assert!(
        (per_byte(&pio) / 2.286e-6 - 1.0).abs() < 0.05,
        "{}",
        per_byte(&pio)
    );
    assert!(
        (per_byte(&dma) / 1.0e-6 - 1.0).abs() < 0.05,
        "{}",
        per_byte(&dma)
    );
}

/// The speedup of trial `setting` in a doctor's report.
fn trial(r: &Value, setting: &str) -> Value {
    r["settings"]
        .as_array()
        .expect("settings")
        .iter()
        .find(|t| t["setting"] == setting)
        .unwrap_or_else(|| panic!("no {setting} trial: {r:#}"))
        .clone()
}

#[test]
fn a_slow_t1_setting_is_found_by_trying_the_other_and_named_with_the_call() {
    let _turn = common::turns::alone();
    let (code, r) = through_libgpib(&config("slow_t1.toml"), true, &[]);
    assert_eq!(code, 3);
    assert_eq!(
        common::problems(&r).first().map(String::as_str),
        Some("slow-t1"),
        "{r:#}"
    );
    let t = trial(&r, "t1");
    assert_eq!(
        (t["found"].as_str(), t["tried"].as_str()),
        (Some("2 µs"), Some("350 ns"))
    );
    assert!(t["test"]["p"].as_f64().unwrap() < 0.05, "{t:#}");
    // The speedup is the model's for the same writes (virtual time, same sizes).
    let model = on_the_model(&config("slow_t1.toml"), &r);
    let ratio = t["speedup"].as_f64().unwrap() / trial(&model, "t1")["speedup"].as_f64().unwrap();
    assert!((0.8..1.1).contains(&ratio), "{ratio}: {t:#}");
    assert!(r["findings"][0]["advice"]
        .as_str()
        .unwrap()
        .starts_with("ibconfig(board, IbcTIMING, 3)"));
}

#[test]
fn autopoll_under_an_srq_storm_is_found_by_trying_it_off() {
    let _turn = common::turns::alone();
    // Twenty 16-byte reads a sample, nine samples each way: a run the shared machine
    // disturbed can miss the 5 % level over the trials (a clean-clone CI run measured
    // 1.10x at p = 0.037 twice running; alone it is named at once), so up to three runs.
    let mut last = Value::Null;
    for _ in 0..3 {
        let mut c = common::gpib_diag();
        // The program polls automatically (linux-gpib's library opens a board with
        // autopoll off: the program asks for it).
        c.args(["doctor", "--backend", "linux-gpib", "--device", "22"])
            .args(["--budget", BUDGET, "--format", "json", "--autopoll", "on"])
            .envs(common::libgpib_bus(config("srq_storm.toml")))
            .env("GPIB_SIM_REALTIME", "1");
        let (code, r) = report(c.output().expect("gpib-diag runs"), "srq_storm");
        if code == 3 && common::problems(&r).first().map(String::as_str) == Some("autopoll") {
            let t = trial(&r, "autopoll");
            assert!(t["test"]["p"].as_f64().unwrap() < 0.05, "{t:#}");
            assert!(t["speedup"].as_f64().unwrap() > 1.1, "{t:#}");
            return;
        }
        last = r;
    }
    panic!("autopoll not named in three runs: {last:#}");
}

#[test]
fn reading_in_small_calls_is_found_by_reading_in_one_call() {
    let _turn = common::turns::alone();
    // A program reading 16 B a call pays each ibrd's addressing and the driver's
    // per-call cost 64 times for 1 KiB.
    let (code, r) = through_libgpib("bench", true, &["--read-size", "16"]);
    assert_eq!(code, 3, "{r:#}");
    assert_eq!(common::problems(&r), ["small-reads"], "{r:#}");
    let t = trial(&r, "read-size");
    // The message is the largest swept size the budget holds in 16-byte calls.
    let bytes = t["bytes"].as_u64().unwrap();
    assert!(bytes >= 256, "{t:#}");
    let tried = format!("{bytes} B a call");
    assert_eq!(
        (t["found"].as_str(), t["tried"].as_str()),
        (Some("16 B a call"), Some(tried.as_str()))
    );
    assert!(t["test"]["p"].as_f64().unwrap() < 0.05, "{t:#}");
    let advice = r["findings"][0]["advice"].as_str().unwrap();
    assert!(
        advice.starts_with(&format!(
            "read with a buffer of {bytes} B or more: ibrd(ud, buf, {bytes})"
        )),
        "{advice}"
    );
    // The speedup is about the model's for the same reads (virtual time): calls in real
    // time cost more than modelled (the library's own work and a wakeup a call: 1.8x
    // the model's speedup on a machine busy building), never less.
    let model = on_the_model_with("bench", &r, &["--read-size", "16"]);
    let ratio =
        t["speedup"].as_f64().unwrap() / trial(&model, "read-size")["speedup"].as_f64().unwrap();
    assert!((0.9..3.0).contains(&ratio), "{ratio}: {t:#}");
    // Calls of 1 KiB cost a few per-call costs over the message (about 1.08x through
    // libgpib in real time): tried, and not named.
    let (code, r) = through_libgpib("bench", true, &["--read-size", "1K"]);
    assert_eq!((code, common::problems(&r)), (0, vec![]), "{r:#}");
    assert!(trial(&r, "read-size")["speedup"].as_f64().unwrap() < 1.5);
}

#[test]
fn a_slow_device_is_put_on_the_device_by_the_boards_fastest_device() {
    let _turn = common::turns::alone();
    // The HP3565 at 11 takes 20 us a byte; the SCPI instrument at 22 runs at the
    // handshake's pace through the same board: the doctor says which is slow.
    let cfg = config("slow_instrument.toml");
    let (code, r) = through_libgpib(&cfg, true, &["--reference", "22"]);
    assert_eq!(code, 3, "{r:#}");
    assert_eq!(
        common::problems(&r).first().map(String::as_str),
        Some("slow-device"),
        "{r:#}"
    );
    let f = &r["findings"][0];
    assert!(
        f["summary"]
            .as_str()
            .unwrap()
            .starts_with("device 11 is the slow one:"),
        "{f:#}"
    );
    // About the model's 20x, measured in this run on both devices.
    let speedup = f["speedup"].as_f64().unwrap();
    let model = on_the_model_with(&cfg, &r, &["--reference", "22"]);
    let ratio = speedup / model["findings"][0]["speedup"].as_f64().unwrap();
    assert!((0.7..1.3).contains(&ratio), "{ratio}: {f:#}");
}

#[test]
fn a_device_that_never_asserts_eoi_is_found_by_ending_reads_on_a_newline() {
    let _turn = common::turns::alone();
    // Each read that waits for END waits out the 0.2 s timeout; with REOS on the newline
    // a query ends at once.
    let mut c = common::gpib_diag();
    c.args(["doctor", "--backend", "linux-gpib", "--device", "22"])
        .args(["--budget", "1", "--timeout", "0.2", "--format", "json"])
        .envs(common::libgpib_bus(config("no_eoi.toml")))
        .env("GPIB_SIM_REALTIME", "1");
    let (code, r) = report(c.output().expect("gpib-diag runs"), "no_eoi");
    assert_eq!(code, 3, "{r:#}");
    assert_eq!(
        common::problems(&r).first().map(String::as_str),
        Some("no-eoi"),
        "{r:#}"
    );
    assert_eq!(r["read_end"]["stalled_after"], 25);
    // The query with REOS ends in a few milliseconds, not at the 0.2 s timeout.
    let quick = r["read_end"]["with_newline_seconds"].as_f64().unwrap();
    assert!(quick < 0.05, "{quick}");
}
