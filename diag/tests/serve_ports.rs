//! `gpib-diag serve` refuses what it cannot serve as asked: a port given that is
//! taken, a board given twice. It exits with an error naming it, instead of running
//! without the service or with a board under two names.

use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a server that should refuse to start may run before it counts as having
/// started (a hang detector, not a timing claim).
const HANG: Duration = Duration::from_secs(30);

/// Runs `gpib-diag serve ARGS` and returns how it exited; `None` when it was still
/// running after [`HANG`] (it is then killed).
fn serve(args: &[&str]) -> Option<Output> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
        .arg("serve")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gpib-diag serve starts");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stdout = Vec::new();
            let mut stderr = Vec::new();
            child
                .stdout
                .take()
                .unwrap()
                .read_to_end(&mut stdout)
                .unwrap();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_end(&mut stderr)
                .unwrap();
            return Some(Output {
                status,
                stdout,
                stderr,
            });
        }
        if start.elapsed() > HANG {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts that `serve ARGS` exits with an error whose message has every `words`.
fn refused(args: &[&str], words: &[&str]) {
    let out = serve(args).unwrap_or_else(|| panic!("serve {args:?} kept running"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "serve {args:?}: exit 0, stderr {err}"
    );
    for w in words {
        assert!(err.contains(w), "serve {args:?}: no {w:?} in {err:?}");
    }
    assert!(
        out.stdout.is_empty(),
        "serve {args:?} said it serves: {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Every port flag given a port some other socket holds: an error naming the flag or
/// the port, with a non-zero exit; the other services on free ports.
#[test]
fn a_port_given_that_is_taken_is_an_error() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let free = ["--port", "0", "--vxi11-port", "0", "--hislip-port", "0"];
    let with = |flag: &str| -> Vec<String> {
        let mut v: Vec<String> = free.iter().map(ToString::to_string).collect();
        match v.iter().position(|a| a == flag) {
            Some(i) => v[i + 1] = port.clone(),
            None => v.extend([flag.to_string(), port.clone()]),
        }
        if flag != "--portmap-port" {
            v.push("--no-portmap".into());
        }
        v
    };
    for flag in [
        "--hislip-port",
        "--portmap-port",
        "--port",
        "--vxi11-port",
        "--abort-port",
    ] {
        let args = with(flag);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, &[&format!("port {port}")]);
    }
    // The flags the library cannot tell apart are named too where it can.
    refused(
        &with("--hislip-port")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        &["--hislip-port"],
    );
    drop(taken);
}

/// `--board 0,0` would serve one board as gpib0 and gpib1, where a lock on one name
/// does not hold the other's clients off: refused, naming the board.
#[test]
fn a_board_given_twice_is_refused() {
    let free = [
        "--port",
        "0",
        "--vxi11-port",
        "0",
        "--hislip-port",
        "0",
        "--no-portmap",
    ];
    let twice = |boards: &'static str| {
        let mut v = free.to_vec();
        v.extend(["--bus", "compat/tests/two_boards.toml", "--board", boards]);
        v
    };
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    std::env::set_current_dir(root).unwrap();
    refused(&twice("0,0"), &["given twice", "board 0", "gpib0", "gpib1"]);
    refused(
        &twice("0,1,1"),
        &["given twice", "board 1", "gpib1", "gpib2"],
    );
    // Different boards are served.
    let mut ok = std::process::Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
        .arg("serve")
        .args(twice("0,1"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = [0u8; 7];
    ok.stdout.take().unwrap().read_exact(&mut line).unwrap();
    assert_eq!(&line, b"serving");
    ok.kill().unwrap();
    ok.wait().unwrap();
}
