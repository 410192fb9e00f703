//! What linux-gpib-rs's safe wrappers would lose, kept by the linux-gpib backend
//! (feature `linux-gpib`), through libgpib (the compatibility library in CI): a
//! timed-out read's count, and binary writes while linux-gpib-rs logs at debug level.
//!
//! Each body runs in a child process of this test binary: libgpib reads
//! `GPIB_SIM_CONFIG` once per process, and the logger is set once per process.

#![cfg(feature = "linux-gpib")]

use gpib::block::BlockFormat;
use gpib::{Bus, ErrorKind, LinuxGpibBoard};
use gpib_suite::SCPI;

/// Set in the child: which body to run.
const CHILD: &str = "GPIB_TEST_LINUX_GPIB_RS_CHILD";

/// Runs the test `name` (this module's) again in a child process with `GPIB_SIM_CONFIG`
/// and `GPIB_VBOARD_CONFIG` = `config` (a file under compat/tests, or None for the default bench), and checks
/// that it ran and passed there. Returns true in the child, where the body runs.
fn in_child(name: &str, config: Option<&str>) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return true;
    }
    let mut c = std::process::Command::new(std::env::current_exe().unwrap());
    c.args([&format!("linux_gpib_rs::{name}"), "--exact", "--nocapture"])
        .env(CHILD, name)
        .env_remove("GPIB_SIM_REALTIME")
        .env_remove("GPIB_SIM_CONFIG")
        .env_remove("GPIB_VBOARD_CONFIG");
    if let Some(file) = config {
        let path = format!("{}/compat/tests/{file}", env!("CARGO_MANIFEST_DIR"));
        // compat's library reads the first, the virtual board under linux-gpib's own
        // library the second (vboard/ci.sh runs these tests on both).
        c.env("GPIB_SIM_CONFIG", &path)
            .env("GPIB_VBOARD_CONFIG", &path);
    }
    let out = c.output().expect("the test binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the child failed:\n{text}");
    assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
    false
}

/// A timed-out read through libgpib (a device that stops mid-answer,
/// compat/tests/stops_mid_answer.toml) reports the bytes it got, as on the simulator:
/// linux-gpib-rs's `ibrd` drops that count; the backend reads it back (`ThreadIbcntl`).
#[test]
fn timed_out_read_keeps_its_count() {
    if !in_child(
        "timed_out_read_keeps_its_count",
        Some("stops_mid_answer.toml"),
    ) {
        return;
    }
    let bus = Bus::new(LinuxGpibBoard::open_index(0).expect("board 0 through libgpib"));
    let dmm = bus.device(SCPI).unwrap();
    let mut buf = vec![0u8; 5000];
    let e = dmm.query_block_into("BLOCK? 4000", &mut buf).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    // 1000 bytes came: a 6-byte header and 994 body bytes, already in the buffer.
    assert_eq!(e.transferred(), Some(1000), "{e}");
    assert_eq!(buf[993], (993 % 256) as u8);
    dmm.clear().unwrap();
    dmm.write_str("BLOCK? 4000").unwrap();
    let mut v = Vec::new();
    let e = dmm.read_to_end_into(&mut v).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert_eq!(e.transferred(), Some(1000), "{e}");
    assert_eq!(v.len(), 1000);
    assert_eq!(&v[..6], b"#44000");
}

/// Takes every log record at debug level and keeps none (what an app with
/// `RUST_LOG=debug` has, without the output).
struct Everything;

impl log::Log for Everything {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, _: &log::Record) {}
    fn flush(&self) {}
}

static EVERYTHING: Everything = Everything;

/// With debug logging on, a binary block (not UTF-8) is written and counted like any
/// other: linux-gpib-rs's `ibwrt` would send it and then fail formatting it for its log.
#[test]
fn binary_writes_with_debug_logging() {
    if !in_child("binary_writes_with_debug_logging", None) {
        return;
    }
    log::set_logger(&EVERYTHING).unwrap();
    log::set_max_level(log::LevelFilter::Debug);
    assert!(log::log_enabled!(target: "linux_gpib_rs::lowlevel::traditional", log::Level::Debug));
    let bus = Bus::new(LinuxGpibBoard::open_index(0).expect("board 0 through libgpib"));
    let dmm = bus.device(SCPI).unwrap();
    let data: Vec<u8> = (0..=255u8).rev().collect();
    assert!(std::str::from_utf8(&data).is_err());
    dmm.write_str("*CLS").unwrap();
    dmm.write_block(b"DATA ", BlockFormat::Definite, &data)
        .expect("a binary write with debug logging on");
    assert_eq!(dmm.query("DATA:LEN?").unwrap(), "256");
    assert_eq!(dmm.query_block("DATA?").unwrap(), data);
    // Text still goes through linux-gpib-rs's wrapper, logged.
    assert_eq!(dmm.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
}
