//! `gpib-diag shell` on a pseudo-terminal, as a user types into it: line editing is on
//! (a terminal), queries answer, a binary answer is shown escaped, history is kept.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Reads from the terminal's master side until `want` has appeared (or 20 s passed).
fn read_until(master: &mut std::fs::File, seen: &mut String, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut buf = [0u8; 4096];
    while !seen.contains(want) {
        assert!(Instant::now() < deadline, "no {want:?} in {seen:?}");
        match master.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => seen.push_str(&String::from_utf8_lossy(&buf[..n])),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(e) if e.raw_os_error() == Some(nix::libc::EIO) => break,
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn the_shell_runs_on_a_terminal() {
    let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
    let slave: OwnedFd = pty.slave;
    let home = std::env::temp_dir().join(format!("gpib-shell-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
        .args(["shell", "GPIB0::22::INSTR", "--timeout", "1"])
        .env("HOME", &home)
        .env("TERM", "xterm")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    // Non-blocking reads of the master side.
    let flags = nix::fcntl::fcntl(&pty.master, nix::fcntl::FcntlArg::F_GETFL).unwrap();
    nix::fcntl::fcntl(
        &pty.master,
        nix::fcntl::FcntlArg::F_SETFL(
            nix::fcntl::OFlag::from_bits_truncate(flags) | nix::fcntl::OFlag::O_NONBLOCK,
        ),
    )
    .unwrap();
    let mut master = std::fs::File::from(pty.master);
    let mut seen = String::new();
    read_until(&mut master, &mut seen, "GPIB0::22::INSTR> ");
    master.write_all(b"*IDN?\r").unwrap();
    read_until(&mut master, &mut seen, "SIMULATED,SCPI-DMM,0,1.0");
    // A block answer is binary: shown escaped, never raw bytes on the terminal.
    master.write_all(b"WAV:POIN 2;WAV:DATA?\r").unwrap();
    read_until(&mut master, &mut seen, "#18");
    // A query nothing answers: the timeout, in words.
    master.write_all(b"SYST:NOPE?\r").unwrap();
    read_until(&mut master, &mut seen, "timed out after 1s");
    master.write_all(b"exit\r").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the shell did not exit: {seen}");
        let mut buf = [0u8; 4096];
        if let Ok(n) = master.read(&mut buf) {
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "{status:?}: {seen}");
    let history = std::fs::read_to_string(home.join(".gpib_diag_history")).unwrap();
    assert!(
        history.contains("*IDN?") && history.contains("SYST:NOPE?"),
        "{history}"
    );
    std::fs::remove_dir_all(&home).ok();
}
