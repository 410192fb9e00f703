//! Running the `gpib-diag` binary in tests, through `assert_cmd` (shared by cli.rs and
//! hostile.rs).

#![allow(dead_code)] // each test binary uses some of these

pub mod held_out;
pub mod peers;
pub mod turns;

use std::process::Output;
use std::time::Duration;

use assert_cmd::Command;
use predicates::prelude::*;

/// The built `gpib-diag`, killed if it runs longer than a minute (a hang detector,
/// not a timing claim).
pub fn gpib_diag() -> Command {
    let mut c = Command::cargo_bin("gpib-diag").expect("gpib-diag is built");
    c.timeout(Duration::from_secs(60));
    c
}

/// Runs `args` and returns what it did, whatever its exit status.
pub fn diag(args: &[&str]) -> Output {
    gpib_diag().args(args).output().expect("gpib-diag runs")
}

/// Runs `args`, expects success, and returns standard output.
pub fn ok(args: &[&str]) -> String {
    let out = gpib_diag().args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).expect("UTF-8 output")
}

/// Runs `args`, expects exit `code`, `needle` on standard error and no panic.
pub fn fails(args: &[&str], code: i32, needle: &str) -> Output {
    gpib_diag()
        .args(args)
        .assert()
        .code(code)
        .stderr(predicate::str::contains(needle))
        .stderr(predicate::str::contains("panicked").not())
        .get_output()
        .clone()
}

/// Runs `args`, killed after `secs` (a hang or a runaway read fails the test).
pub fn diag_within(args: &[&str], secs: u64) -> Output {
    let out = gpib_diag()
        .args(args)
        .timeout(Duration::from_secs(secs))
        .assert()
        .get_output()
        .clone();
    assert!(
        out.status.code().is_some(),
        "gpib-diag {args:?} still running after {secs} s (or killed by a signal)"
    );
    out
}

/// The environment that gives libgpib's simulated bus `config`: `GPIB_SIM_CONFIG` for
/// compat's library, `GPIB_VBOARD_CONFIG` for the virtual board under linux-gpib's own
/// (vboard/ci.sh runs the hardware-path tests on both).
#[allow(dead_code)] // not every test binary runs on libgpib
pub fn libgpib_bus(config: impl AsRef<std::ffi::OsStr>) -> [(&'static str, std::ffi::OsString); 2] {
    let c = config.as_ref().to_os_string();
    [("GPIB_SIM_CONFIG", c.clone()), ("GPIB_VBOARD_CONFIG", c)]
}

/// The causes of a doctor report's problems (not its notes), in the report's order.
pub fn problems(report: &serde_json::Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == "problem")
        .map(|f| f["cause"].as_str().expect("cause").to_string())
        .collect()
}
