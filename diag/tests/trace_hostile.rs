//! `gpib-diag trace ...` on damaged, crafted or awkward inputs and outputs: a clear
//! error that says what was wrong, never a panic or a hang; the defaults record
//! something on the default configurations; `print --from` keeps what it shows.

mod common;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{diag, diag_within, ok};
use gpib::trace::format::flags;
use gpib::trace::{Clock, Header, LineChange, Record, TraceWriter, Transfer};

/// A scratch folder of this test process.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpib-trace-hostile-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Writes `records` as a trace file at `path`.
fn write_trace(path: &Path, records: &[Record<'_>]) {
    let header = Header {
        clock: Clock::Virtual,
        label: "hostile".into(),
    };
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    for r in records {
        w.write(r).unwrap();
    }
    std::fs::write(path, w.finish().unwrap()).unwrap();
}

/// A data transfer of `bytes` from the board to device 22 whose first byte's cycle
/// begins at `first_ns`.
fn transfer(first_ns: u64, byte_ns: u64, bytes: &'static [u8]) -> Record<'static> {
    Record::Transfer(Transfer {
        board: 0,
        flags: flags::BOARD_TALKS | flags::END,
        talker: 0,
        listeners: 1 << 22,
        start_ns: first_ns,
        ready_ns: first_ns,
        first_ns,
        byte_ns,
        end_ns: first_ns,
        t1_ns: 500,
        accept_ns: 300,
        bytes: Cow::Borrowed(bytes),
    })
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Fails, no panic, with every one of `needles` on standard error.
fn refused(out: &std::process::Output, needles: &[&str]) {
    let e = stderr(out);
    assert!(!out.status.success(), "succeeded: {e}");
    assert!(!e.contains("panicked"), "{e}");
    for n in needles {
        assert!(e.contains(n), "{n:?} not in: {e}");
    }
}

#[test]
fn times_at_the_end_of_u64_are_refused_not_overflowed() {
    let d = dir("overflow");
    // Each of these overflowed an addition in the waveform synthesiser or the check.
    let cases: Vec<(&str, Vec<Record<'static>>, &str)> = vec![
        (
            "first",
            vec![transfer(u64::MAX - 100, 1000, b"AB")],
            "first_ns",
        ),
        (
            "period",
            vec![transfer(1000, u64::MAX / 2, b"ABC")],
            "byte_ns",
        ),
        (
            "ifc",
            vec![Record::Line(LineChange {
                board: 0,
                line: gpib::trace::Line::Ifc,
                asserted: true,
                at_ns: u64::MAX,
                end_ns: u64::MAX,
            })],
            "end_ns",
        ),
        (
            "atn",
            vec![Record::Transfer(Transfer {
                flags: flags::ATN | flags::BOARD_TALKS,
                ..match transfer(u64::MAX - 3000, 1000, b"?") {
                    Record::Transfer(t) => t,
                    _ => unreachable!(),
                }
            })],
            "first_ns",
        ),
    ];
    for (name, records, field) in cases {
        let f = d.join(format!("{name}.trace"));
        write_trace(&f, &records);
        let vcd = d.join(format!("{name}.vcd"));
        let sr = d.join(format!("{name}.sr"));
        for args in [
            vec!["trace", "check", arg(&f)],
            vec![
                "trace",
                "export",
                arg(&f),
                "--vcd",
                arg(&vcd),
                "--resolution-ns",
                "1",
            ],
            vec![
                "trace",
                "export",
                arg(&f),
                "--sr",
                arg(&sr),
                "--resolution-ns",
                "1",
            ],
        ] {
            let out = diag_within(&args, 30);
            refused(&out, &[field, "offset"]);
        }
    }
}

#[test]
fn an_sr_export_too_long_is_refused_before_any_work() {
    let d = dir("srlong");
    let f = d.join("long.trace");
    // Bytes 2 s apart: each under the .sr's sample limit at 1 ns, all together over it.
    write_trace(
        &f,
        &[
            transfer(1000, 1000, b"A"),
            transfer(2_000_000_000, 1000, b"B"),
            transfer(4_000_000_000, 1000, b"C"),
        ],
    );
    let sr = d.join("long.sr");
    let t0 = Instant::now();
    let out = diag_within(
        &[
            "trace",
            "export",
            arg(&f),
            "--sr",
            arg(&sr),
            "--resolution-ns",
            "1",
        ],
        60,
    );
    let took = t0.elapsed();
    refused(&out, &["coarser --resolution-ns"]);
    assert!(
        took < Duration::from_secs(5),
        "refused only after {took:?} of synthesis"
    );
}

#[test]
fn a_bad_magic_is_named_as_such_not_as_bad_utf8() {
    let d = dir("magic");
    let f = d.join("junk.trace");
    std::fs::write(&f, b"\x89PNG\r\n\x1a\n\xff\xfe\x00binary").unwrap();
    let out = diag(&["trace", "check", arg(&f)]);
    refused(&out, &["not a gpib trace file", "bad magic", "VCD"]);
    assert!(!stderr(&out).contains("UTF-8"), "{}", stderr(&out));
    for cmd in ["print", "summary"] {
        let out = diag(&["trace", cmd, arg(&f)]);
        refused(&out, &["not a gpib trace file", "bad magic"]);
    }
}

#[test]
fn a_replay_device_on_a_fifo_is_refused_not_waited_for() {
    let d = dir("fifo");
    let fifo = d.join("session.trace");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let cfg = d.join("replay.toml");
    std::fs::write(
        &cfg,
        format!(
            "name = \"replay on a fifo\"\n[[board]]\nname = \"gpib0\"\n[[board.device]]\naddress = 22\nmodel = \"replay\"\nfile = {:?}\n",
            fifo.display().to_string()
        ),
    )
    .unwrap();
    let out = diag_within(&["scan", "--bus", arg(&cfg)], 20);
    refused(&out, &["not a regular file"]);
}

#[test]
fn recording_to_a_full_disk_stops_at_once() {
    let out = diag_within(
        &[
            "trace",
            "record",
            "--bus",
            "bench",
            "--device",
            "22",
            "--repeat",
            "100000",
            "-o",
            "/dev/full",
        ],
        30,
    );
    refused(&out, &["/dev/full", "No space left on device"]);
    // Stopped before the workload ran its course: not 100000 answers.
    let answers = stderr(&out).matches("answered").count();
    assert!(
        answers < 10,
        "{answers} queries ran after the disk was full"
    );
}

#[test]
fn the_defaults_record_something_on_the_default_configurations() {
    let d = dir("defaults");
    for bus in [None, Some("bench"), Some("hp9000-350")] {
        let f = d.join(format!("{}.trace", bus.unwrap_or("default")));
        let mut args = vec!["trace", "record", "-o", arg(&f)];
        if let Some(b) = bus {
            args.extend(["--bus", b]);
        }
        let out = diag_within(&args, 60);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("records"), "{}", stderr(&out));
        // Every other subcommand's defaults work on what was recorded.
        let printed = ok(&["trace", "print", arg(&f)]);
        assert!(printed.contains("DATA"), "{printed}");
        let summary = ok(&["trace", "summary", arg(&f)]);
        assert!(summary.contains("data"), "{summary}");
        let vcd = d.join("out.vcd");
        ok(&["trace", "export", arg(&f), "--vcd", arg(&vcd)]);
        let sr = d.join("out.sr");
        ok(&["trace", "export", arg(&f), "--sr", arg(&sr)]);
        let checked = ok(&["trace", "check", arg(&f)]);
        assert!(checked.contains("0 handshake violation"), "{checked}");
    }
}

#[test]
fn print_from_keeps_the_lines_it_shows_after_from() {
    let d = dir("from");
    let f = d.join("idn.trace");
    ok(&[
        "trace",
        "record",
        "--bus",
        "bench",
        "--device",
        "22",
        "-o",
        arg(&f),
    ]);
    let all = ok(&["trace", "print", arg(&f)]);
    let from = ok(&["trace", "print", arg(&f), "--from", "1us"]);
    // Every event line shown at or after 1 µs in the full listing is in the filtered one.
    let events = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .filter(|l| {
                l.split_whitespace()
                    .next()
                    .and_then(|t| t.parse::<f64>().ok())
                    .is_some_and(|t| t >= 1.0)
            })
            .map(String::from)
            .collect()
    };
    let want = events(&all);
    assert!(want.iter().any(|l| l.contains("ATN UNL")), "{all}");
    assert_eq!(events(&from), want, "{from}");
    // And a line before --from is not.
    assert!(
        !from.contains("CALL command() -> CMPL count=3\n          46"),
        "{from}"
    );
    let to = ok(&["trace", "print", arg(&f), "--from", "21us", "--to", "23us"]);
    let shown: Vec<&str> = to.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(shown.len(), 1, "{to}");
    assert!(shown[0].contains("ATN TAD 0"), "{to}");
}
