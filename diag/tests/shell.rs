//! `gpib-diag shell` on a pseudo-terminal, as a user types into it: line editing is on
//! (a terminal), queries answer, a binary answer is shown escaped, history is kept;
//! input is bytes (what is not UTF-8 is shown escaped, never fatal), a paste is bounded,
//! a long line is not redrawn at every key; and the same through a pipe.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Reads from the terminal's master side until `want` has appeared (or 20 s passed).
fn read_until(master: &mut std::fs::File, seen: &mut String, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut buf = [0u8; 4096];
    while !seen.contains(want) {
        if Instant::now() >= deadline {
            // The end of what was seen (a runaway redraw is megabytes).
            let tail: String = seen
                .chars()
                .rev()
                .take(2000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            panic!("no {want:?} in {} bytes seen, ending {tail:?}", seen.len());
        }
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

/// The shell on a fresh pseudo-terminal (its master side read without blocking), with
/// HOME in a directory of its own: the child, the master side and that directory.
fn shell_on_a_pty(name: &str) -> (std::process::Child, std::fs::File, std::path::PathBuf) {
    let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
    let slave: OwnedFd = pty.slave;
    let home = std::env::temp_dir().join(format!("gpib-shell-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
        .args(["shell", "GPIB0::22::INSTR", "--timeout", "1"])
        .env("HOME", &home)
        .env("TERM", "xterm")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    let flags = nix::fcntl::fcntl(&pty.master, nix::fcntl::FcntlArg::F_GETFL).unwrap();
    nix::fcntl::fcntl(
        &pty.master,
        nix::fcntl::FcntlArg::F_SETFL(
            nix::fcntl::OFlag::from_bits_truncate(flags) | nix::fcntl::OFlag::O_NONBLOCK,
        ),
    )
    .unwrap();
    (child, std::fs::File::from(pty.master), home)
}

/// Types `exit` and waits for the shell to end: its status.
fn leave(
    child: &mut std::process::Child,
    master: &mut std::fs::File,
    seen: &mut String,
) -> std::process::ExitStatus {
    master.write_all(b"exit\r").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(Instant::now() < deadline, "the shell did not exit: {seen}");
        let mut buf = [0u8; 4096];
        if let Ok(n) = master.read(&mut buf) {
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Issue 28 item 8: a byte that is not UTF-8 is shown escaped and sent, never the end
/// of the session (it ended it, exit 2); a paste that never ends gives way to Ctrl-C;
/// `open` alone and `exit now` are answered, not sent to the instrument.
#[test]
fn bytes_pastes_and_commands_on_a_terminal() {
    let (mut child, mut master, home) = shell_on_a_pty("bytes");
    let mut seen = String::new();
    read_until(&mut master, &mut seen, "GPIB0::22::INSTR> ");
    master.write_all(b"A\xffB\r").unwrap();
    read_until(&mut master, &mut seen, "A\\xffB");
    master.write_all(b"*IDN?\r").unwrap();
    read_until(&mut master, &mut seen, "SIMULATED,SCPI-DMM,0,1.0");
    // A paste that never ends, then Ctrl-C: the line is given up, the shell goes on.
    master.write_all(b"\x1b[200~*RST\x04\x03").unwrap();
    read_until(&mut master, &mut seen, "^C");
    master.write_all(b"open\r").unwrap();
    read_until(&mut master, &mut seen, "error: open needs a resource");
    master.write_all(b"exit now\r").unwrap();
    read_until(&mut master, &mut seen, "error: exit takes nothing after it");
    seen.clear();
    master.write_all(b"*IDN?\r").unwrap();
    read_until(&mut master, &mut seen, "SIMULATED,SCPI-DMM,0,1.0");
    let status = leave(&mut child, &mut master, &mut seen);
    assert!(status.success(), "{status:?}: {seen}");
    let history = std::fs::read(home.join(".gpib_diag_history")).unwrap();
    assert!(history.windows(3).any(|w| w == b"A\xffB"), "{history:?}");
    std::fs::remove_dir_all(&home).ok();
}

/// Issue 28 item 8: 32 KiB typed on one line is drawn in about as many bytes (each key
/// redrew the line: 7.3 MB of output); under 4 times the input here.
#[test]
fn a_long_typed_line_is_drawn_in_linear_output() {
    let (mut child, mut master, home) = shell_on_a_pty("long");
    let mut seen = String::new();
    read_until(&mut master, &mut seen, "GPIB0::22::INSTR> ");
    let typed = 32 << 10;
    let mut input = vec![b'x'; typed];
    input.extend_from_slice(b"\r*IDN?\r");
    // The master side does not block: what the terminal cannot take yet is written
    // again once the shell has read some (and drawn it, which is read here).
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut sent, mut drawn) = (0, 0);
    let mut buf = [0u8; 65536];
    seen.clear();
    while sent < input.len() {
        assert!(
            Instant::now() < deadline,
            "the shell took {sent} bytes of {typed}"
        );
        match master.write(&input[sent..(sent + 256).min(input.len())]) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => panic!("{e}"),
        }
        while let Ok(n @ 1..) = master.read(&mut buf) {
            drawn += n;
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }
    let before = seen.len();
    read_until(&mut master, &mut seen, "SIMULATED,SCPI-DMM,0,1.0");
    drawn += seen.len() - before;
    eprintln!("{typed} bytes typed on one line: {drawn} bytes drawn");
    assert!(drawn < 4 * typed, "{drawn} bytes drawn for {typed} typed");
    let status = leave(&mut child, &mut master, &mut seen);
    assert!(status.success(), "{status:?}");
    std::fs::remove_dir_all(&home).ok();
}

/// Issue 28 item 8: through a pipe, input is lines of bytes too: one that is not UTF-8
/// is sent and the session goes on (it ended with exit 2).
#[test]
fn piped_bytes_that_are_not_utf8_do_not_end_the_session() {
    let home = std::env::temp_dir().join(format!("gpib-shell-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
        .args(["shell", "GPIB0::22::INSTR", "--timeout", "1"])
        .env("HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"VOLT \xff\xfe\r\n*IDN?\nopen\nquit xyz\n*IDN?\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}: {stdout} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.matches("SIMULATED,SCPI-DMM,0,1.0").count(),
        2,
        "{stdout}"
    );
    assert!(stdout.contains("error: open needs a resource"), "{stdout}");
    assert!(
        stdout.contains("error: quit takes nothing after it"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&home).ok();
}
