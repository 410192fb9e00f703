//! Peak memory of `gpib-diag trace` on large and crafted inputs, measured: the largest
//! resident set of the children this test process waited for (`getrusage`'s
//! `RUSAGE_CHILDREN`), so every child run here must stay under the bound asserted.
//! Its own test binary: no other test's children count.

mod common;

use std::path::{Path, PathBuf};

use common::diag_within;

/// Peak resident set of every child waited for so far, in MiB.
fn children_peak_mib() -> u64 {
    use nix::sys::resource::{getrusage, UsageWho};
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    // Linux gives ru_maxrss in KiB.
    u64::try_from(usage.max_rss()).unwrap_or(0) / 1024
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpib-trace-memory-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Most a command may take here, MiB (the binary and its buffers: a few MiB).
const BOUND_MIB: u64 = 64;

/// Runs `args` (any exit) and asserts no child so far went over [`BOUND_MIB`].
fn bounded(args: &[&str]) -> std::process::Output {
    let out = diag_within(args, 120);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!e.contains("panicked"), "{args:?}: {e}");
    let peak = children_peak_mib();
    assert!(
        peak < BOUND_MIB,
        "{args:?} peaked at {peak} MiB (bound {BOUND_MIB}): {e}"
    );
    out
}

#[test]
fn memory_stays_bounded_whatever_the_input_holds() {
    let d = dir("all");
    // A header, then 40 MB of zeros: 4.4 million empty records of tag 0.
    let zeros = d.join("zeros.trace");
    {
        let mut bytes = b"GPIBTRC\x1a\x01\x00\x01\x00\x00\x00\x00\x00".to_vec();
        bytes.resize(40 << 20, 0);
        std::fs::write(&zeros, bytes).unwrap();
    }
    let vcd = d.join("zeros.vcd");
    let sr = d.join("zeros.sr");
    bounded(&["trace", "check", arg(&zeros)]);
    bounded(&["trace", "summary", arg(&zeros)]);
    bounded(&["trace", "export", arg(&zeros), "--vcd", arg(&vcd)]);
    bounded(&["trace", "export", arg(&zeros), "--sr", arg(&sr)]);
    let cfg = d.join("replay.toml");
    std::fs::write(
        &cfg,
        format!(
            "name = \"replay\"\n[[board]]\nname = \"gpib0\"\n[[board.device]]\naddress = 22\nmodel = \"replay\"\nfile = {:?}\n",
            zeros.display().to_string()
        ),
    )
    .unwrap();
    bounded(&["scan", "--bus", arg(&cfg)]);

    // A recorded 2 MB block: checked at 1 ns a tick, 14 million line changes.
    let block = d.join("block.trace");
    let out = diag_within(
        &[
            "trace",
            "record",
            "--bus",
            "bench",
            "--device",
            "22",
            "--workload",
            "block",
            "--size",
            "2000000",
            "-o",
            arg(&block),
        ],
        120,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = bounded(&["trace", "check", arg(&block)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A VCD whose header never ends: 40 MB of words in a $comment-less command.
    let endless = d.join("endless.vcd");
    {
        let mut text =
            b"$timescale 1 ns $end\n$scope module la $end\n$var wire 1 ! DAV $end\n$foo ".to_vec();
        while text.len() < 40 << 20 {
            text.extend_from_slice(b"a b c d e f g h i j k l m n o p\n");
        }
        std::fs::write(&endless, text).unwrap();
    }
    let out = bounded(&["trace", "check", arg(&endless)]);
    assert!(!out.status.success());
    // One line of 40 MB.
    let long = d.join("long.vcd");
    {
        let mut text = b"$comment ".to_vec();
        text.resize(40 << 20, b'x');
        std::fs::write(&long, text).unwrap();
    }
    let out = bounded(&["trace", "check", arg(&long)]);
    assert!(!out.status.success());
    let _ = std::fs::remove_dir_all(&d);
}
