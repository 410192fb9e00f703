//! `gpib-diag trace export --vcd` and `--sr` decoded by sigrok's `ieee488` decoder: the
//! addresses and every byte of a `*IDN?` query and of a 400,000-byte block read come
//! out as they went over the simulated bus, from the VCD and from sigrok's own session
//! format.
//!
//! Needs `sigrok-cli` (Debian's package). Without it each test prints `SKIPPED:` on
//! the terminal (past the test harness's capture, so that a run without the tool does
//! not read as a run with it) and returns; with `GPIB_REQUIRE_SIGROK=1` (CI sets it
//! after installing the package) it fails instead. Likewise GTKWave's `vcd2fst` with
//! `GPIB_REQUIRE_GTKWAVE=1`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use gpib::trace::{self, Record};

const CHANNELS: &str = "ieee488:dio1=DIO1:dio2=DIO2:dio3=DIO3:dio4=DIO4:dio5=DIO5:dio6=DIO6:\
dio7=DIO7:dio8=DIO8:eoi=EOI:dav=DAV:nrfd=NRFD:ndac=NDAC:ifc=IFC:srq=SRQ:atn=ATN:ren=REN";

/// Says on the terminal that `test` did not run, and why. Written to the process's
/// stderr itself: what `eprintln!` writes is captured and never shown for a test that
/// passes.
fn skipped(test: &str, why: &str) {
    use std::io::Write;
    let line = format!("SKIPPED: {test}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Whether the environment variable `env` asks for a tool (set, not empty, not 0).
fn required(env: &str) -> bool {
    std::env::var_os(env).is_some_and(|v| !v.is_empty() && v != "0")
}

fn sigrok_present() -> bool {
    let found = Command::new("sigrok-cli")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            !required("GPIB_REQUIRE_SIGROK"),
            "GPIB_REQUIRE_SIGROK is set but sigrok-cli is not installed"
        );
        skipped(
            "sigrok",
            "sigrok-cli not found (apt-get install sigrok-cli; GPIB_REQUIRE_SIGROK=1 makes this a failure)",
        );
    }
    found
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpib-sigrok-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn diag(args: &[&str]) {
    let out = common::gpib_diag().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "gpib-diag {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `gpib-diag trace record` of device 22 on the bench (with `workload`, more
/// `trace record` options) to `trace`, then a `gpib-diag trace export` of it with
/// each of `exports` (its options: `--vcd PATH`, `--sr PATH`, ...).
fn record_and_export(trace: &Path, workload: &[&str], exports: &[&[&str]]) {
    let trace = trace.to_str().unwrap();
    let record = ["trace", "record", "--bus", "bench", "--device", "22"];
    diag(&[&record[..], workload, &["-o", trace]].concat());
    for options in exports {
        diag(&[&["trace", "export", trace][..], options].concat());
    }
}

/// `path` as an argument.
fn arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn sigrok(vcd: &Path, output: &str) -> Vec<u8> {
    let out = Command::new("sigrok-cli")
        .arg("-i")
        .arg(vcd)
        .args(["-P", CHANNELS])
        .args(output.split(' '))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "sigrok-cli: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The data bytes (not ATN) of a trace, in order.
fn data_bytes(path: &Path) -> Vec<u8> {
    let (_, records) = trace::read_file(path).unwrap();
    records
        .iter()
        .filter_map(|r| match r {
            Record::Transfer(t) if !t.is_command() && t.byte_ns > 0 => Some(t.bytes.to_vec()),
            _ => None,
        })
        .flatten()
        .collect()
}

#[test]
fn sigrok_decodes_an_idn_query() {
    if !sigrok_present() {
        return;
    }
    let d = dir("idn");
    let (t, v, sr) = (d.join("idn.trace"), d.join("idn.vcd"), d.join("idn.sr"));
    record_and_export(&t, &[], &[&["--vcd", arg(&v)], &["--sr", arg(&sr)]]);
    let text = String::from_utf8(sigrok(&v, "-A ieee488=gpib")).unwrap();
    assert_eq!(
        String::from_utf8(sigrok(&sr, "-A ieee488=gpib")).unwrap(),
        text,
        "the .sr decodes as the VCD does"
    );
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.trim_start_matches("ieee488-1: "))
        .collect();
    let want = [
        "Unlisten",
        "Talk 0",
        "Listen 22",
        "*",
        "I",
        "D",
        "N",
        "?",
        "[LF]",
        "Unlisten",
        "Talk 22",
        "Listen 0",
    ];
    assert_eq!(&lines[..want.len()], &want[..], "{text}");
    let answer: String = lines[want.len()..]
        .iter()
        .map(|l| if *l == "[LF]" { "\n" } else { l })
        .collect();
    assert_eq!(answer, "SIMULATED,SCPI-DMM,0,1.0\n");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn sigrok_decodes_every_byte_of_a_400000_byte_block() {
    if !sigrok_present() {
        return;
    }
    let d = dir("block");
    let (t, v, sr) = (
        d.join("block.trace"),
        d.join("block.vcd"),
        d.join("block.sr"),
    );
    // 100 ns resolves the 1 µs handshake and keeps sigrok's sample count down.
    record_and_export(
        &t,
        &["--workload", "block", "--size", "400000"],
        &[&["--vcd", arg(&v), "--sr", arg(&sr), "--resolution-ns", "100"]],
    );
    let sent = data_bytes(&t);
    let (vcd_len, sr_len) = (
        std::fs::metadata(&v).unwrap().len(),
        std::fs::metadata(&sr).unwrap().len(),
    );
    assert!(
        sr_len * 10 < vcd_len,
        ".sr {sr_len} B against VCD {vcd_len} B"
    );
    let from_sr = sigrok(&sr, "-B ieee488=data");
    let decoded = sigrok(&v, "-B ieee488=data");
    assert!(from_sr == decoded, "the .sr decodes as the VCD does");
    let header = b"BLOCK? 400000\n#6400000";
    assert_eq!(sent.len(), header.len() + 400_000 + 1);
    assert_eq!(decoded.len(), sent.len());
    if let Some(i) = decoded.iter().zip(&sent).position(|(a, b)| a != b) {
        panic!(
            "byte {i}: sigrok decoded 0x{:02X}, the bus carried 0x{:02X}",
            decoded[i], sent[i]
        );
    }
    assert_eq!(&decoded[..header.len()], header);
    // The instrument's block: 0, 1, ... 255, 0, ...
    let body = &decoded[header.len()..header.len() + 400_000];
    assert!(body.iter().enumerate().all(|(i, &b)| b == i as u8));
    assert_eq!(decoded.last(), Some(&b'\n'));
    let _ = std::fs::remove_dir_all(&d);
}

fn gtkwave_present() -> bool {
    let found = Command::new("vcd2fst").arg("--help").output().is_ok()
        && Command::new("fst2vcd").arg("--help").output().is_ok();
    if !found {
        assert!(
            !required("GPIB_REQUIRE_GTKWAVE"),
            "GPIB_REQUIRE_GTKWAVE is set but GTKWave's vcd2fst/fst2vcd are not installed"
        );
        skipped(
            "gtkwave",
            "vcd2fst/fst2vcd not found (apt-get install gtkwave; GPIB_REQUIRE_GTKWAVE=1 makes this a failure)",
        );
    }
    found
}

/// With `GPIB_REQUIRE_SIGROK=1` / `GPIB_REQUIRE_GTKWAVE=1` (CI), the tools must be
/// there: this fails rather than letting the tests above skip.
#[test]
fn required_tools_are_installed() {
    if required("GPIB_REQUIRE_SIGROK") {
        assert!(sigrok_present(), "sigrok-cli is required");
    }
    if required("GPIB_REQUIRE_GTKWAVE") {
        assert!(gtkwave_present(), "vcd2fst/fst2vcd are required");
    }
}

/// GTKWave's own VCD reader (`vcd2fst`, which GTKWave runs on every VCD it opens)
/// takes the export, and its FST converted back holds the same waveform.
#[test]
fn gtkwave_reads_the_vcd_export() {
    if !gtkwave_present() {
        return;
    }
    let d = dir("gtkwave");
    let (t, v, fst) = (d.join("q.trace"), d.join("q.vcd"), d.join("q.fst"));
    record_and_export(&t, &[], &[&["--vcd", arg(&v)]]);
    let st = Command::new("vcd2fst").arg(&v).arg(&fst).output().unwrap();
    assert!(
        st.status.success(),
        "vcd2fst: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    let back = Command::new("fst2vcd").arg(&fst).output().unwrap();
    assert!(
        back.status.success(),
        "fst2vcd: {}",
        String::from_utf8_lossy(&back.stderr)
    );
    let ours =
        gpib::trace::vcd::read_vcd(std::io::BufReader::new(std::fs::File::open(&v).unwrap()))
            .unwrap();
    let theirs = gpib::trace::vcd::read_vcd(&back.stdout[..]).unwrap();
    assert_eq!(theirs.present, 0xFFFF, "all 16 lines");
    assert!(ours.changes.len() > 100);
    assert_eq!(
        theirs.changes, ours.changes,
        "GTKWave holds the same waveform"
    );
    let _ = std::fs::remove_dir_all(&d);
}
