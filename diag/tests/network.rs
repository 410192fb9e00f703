//! `gpib-diag serve` against hostile clients: garbage, truncated records, lengths
//! claiming 4 GB (and HiSLIP payloads claiming 2^64-1 bytes), a client that never speaks, 1,000 connections. Each gets an error
//! (its connection closed, or an RPC error reply) while the server keeps serving the
//! others with bounded memory, and Ctrl-C stops it cleanly.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use gpib::backend::hislip::HislipSession;
use gpib::backend::prologix::PrologixBoard;
use gpib::backend::vxi11::{Vxi11Board, Vxi11Options};
use gpib::hislip::{self, kind};
use gpib::rpc::{msg, record, XdrWriter};
use gpib::Bus;

/// Generous limit for waits that must end (a hang detector, not a timing claim).
const HANG: Duration = Duration::from_secs(30);

struct Served {
    /// The server; `None` once [`Served::interrupt`] has stopped it.
    child: Option<Child>,
    prologix: SocketAddr,
    vxi11: SocketAddr,
    hislip: SocketAddr,
    /// Reads the server's stderr as it comes (a trace fills a pipe nobody reads, and
    /// the server then blocks on it).
    stderr: std::thread::JoinHandle<String>,
}

impl Served {
    fn start(extra: &[&str]) -> Self {
        Self::start_on("bench", "22", extra)
    }

    /// Serves configuration `bus`, `device` the address Prologix clients start at.
    fn start_on(bus: &str, device: &str, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
            .args([
                "serve",
                "--bus",
                bus,
                "--port",
                "0",
                "--vxi11-port",
                "0",
                "--hislip-port",
                "0",
                "--no-portmap",
                "--default-device",
                device,
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("gpib-diag serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            err.read_to_string(&mut s).ok();
            s
        });
        let field = |name: &str| -> SocketAddr {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{name}=")))
                .unwrap_or_else(|| panic!("no {name}= in {line:?}"))
                .parse()
                .unwrap()
        };
        Self {
            prologix: field("prologix"),
            vxi11: field("vxi11"),
            hislip: field("hislip"),
            child: Some(child),
            stderr,
        }
    }

    /// A well-behaved client on each protocol still gets its answers.
    fn still_serves(&self) {
        let p = Bus::new(PrologixBoard::connect_tcp(&self.prologix.to_string()).unwrap());
        assert_eq!(
            p.device(22).unwrap().query("*IDN?").unwrap(),
            "SIMULATED,SCPI-DMM,0,1.0"
        );
        let v = Bus::new(
            Vxi11Board::connect(&self.vxi11.to_string(), Vxi11Options::default()).unwrap(),
        );
        assert_eq!(
            v.device(22).unwrap().query("*IDN?").unwrap(),
            "SIMULATED,SCPI-DMM,0,1.0"
        );
        let ip = self.hislip.ip().to_string();
        let mut h = HislipSession::connect(&ip, self.hislip.port(), "hislip0", HANG).unwrap();
        assert_eq!(h.query(b"*IDN?\n").unwrap(), b"SIMULATED,SCPI-DMM,0,1.0\n");
    }

    fn rss_kib(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        s.lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    /// Ctrl-C (SIGINT): the server stops cleanly and reports what it saw.
    fn interrupt(mut self) -> String {
        let st = Command::new("kill")
            .args(["-INT", &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let mut child = self.child.take().expect("the server runs");
        let status = child.wait().unwrap();
        assert!(status.success(), "serve exited with {status:?}");
        let stderr = std::mem::replace(&mut self.stderr, std::thread::spawn(String::new));
        stderr.join().unwrap()
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }
}

/// A test that fails before [`Served::interrupt`] leaves no server running.
impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// True when the server closes `s` (EOF or reset) before [`HANG`].
fn closed_by_server(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(HANG)).unwrap();
    let mut b = [0u8; 256];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

fn call(xid: u32, proc_: u32, args: &[u8]) -> Vec<u8> {
    msg::encode_call(
        msg::CallHeader {
            xid,
            prog: 0x0607AF,
            vers: 1,
            proc_,
        },
        args,
    )
}

#[test]
fn hostile_clients_lose_only_their_own_connection() {
    let _turn = common::turns::beside_others();
    let srv = Served::start(&["--idle-timeout", "60"]);
    srv.still_serves();

    // Garbage on the VXI-11 port: "GET / H" read as a fragment header claims 1.2 GB.
    let mut g = TcpStream::connect(srv.vxi11).unwrap();
    g.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert!(closed_by_server(&mut g), "garbage: connection kept");

    // A fragment header claiming 2 GiB, the largest a header can say.
    let mut h = TcpStream::connect(srv.vxi11).unwrap();
    h.write_all(&0xFFFF_FFFFu32.to_be_bytes()).unwrap();
    assert!(closed_by_server(&mut h), "2 GiB fragment: connection kept");

    // A truncated record: 1000 bytes announced, 10 sent, then the write side closed.
    let mut t = TcpStream::connect(srv.vxi11).unwrap();
    t.write_all(&(0x8000_0000u32 | 1000).to_be_bytes()).unwrap();
    t.write_all(&[0u8; 10]).unwrap();
    t.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(
        closed_by_server(&mut t),
        "truncated record: connection kept"
    );

    // A well-framed device_write whose data claims 4 GiB - 1: an RPC GARBAGE_ARGS
    // reply, and the same connection still answers the next call.
    let mut c = TcpStream::connect(srv.vxi11).unwrap();
    c.set_read_timeout(Some(HANG)).unwrap();
    let mut w = XdrWriter::new();
    w.u32(1).u32(1000).u32(1000).u32(8).u32(u32::MAX);
    record::write_record(&mut c, &call(7, 11, w.as_bytes()), 4000).unwrap();
    let mut rec = Vec::new();
    record::read_record(&mut c, record::Limits::DEFAULT, &mut rec).unwrap();
    let e = msg::decode_reply(&rec, 7).unwrap_err();
    assert!(e.to_string().contains("garbage arguments"), "{e}");
    let mut w = XdrWriter::new();
    w.i32(1).bool(false).u32(0).opaque(b"gpib0,22");
    record::write_record(&mut c, &call(8, 10, w.as_bytes()), 4000).unwrap();
    record::read_record(&mut c, record::Limits::DEFAULT, &mut rec).unwrap();
    let res = msg::decode_reply(&rec, 8).unwrap();
    assert_eq!(&res[..4], &[0, 0, 0, 0], "create_link after the bad call");

    // An unknown program and an RPC version 3 call get RPC error replies.
    let mut bad = msg::encode_call(
        msg::CallHeader {
            xid: 9,
            prog: 1,
            vers: 1,
            proc_: 0,
        },
        &[],
    );
    record::write_record(&mut c, &bad, 4000).unwrap();
    record::read_record(&mut c, record::Limits::DEFAULT, &mut rec).unwrap();
    assert!(msg::decode_reply(&rec, 9)
        .unwrap_err()
        .to_string()
        .contains("program unavailable"));
    bad[8..12].copy_from_slice(&3u32.to_be_bytes());
    record::write_record(&mut c, &bad, 4000).unwrap();
    record::read_record(&mut c, record::Limits::DEFAULT, &mut rec).unwrap();
    assert!(msg::decode_reply(&rec, 9)
        .unwrap_err()
        .to_string()
        .contains("version mismatch"));

    // Prologix: a megabyte of binary garbage without a line end, an over-long ++
    // command, then a real command on the same connection.
    let mut p = TcpStream::connect(srv.prologix).unwrap();
    p.set_read_timeout(Some(HANG)).unwrap();
    let junk: Vec<u8> = (0..1_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .filter(|b| !matches!(b, b'\r' | b'\n' | 0x1B | b'+'))
        .collect();
    p.write_all(&junk).unwrap();
    p.write_all(b"\n++").unwrap();
    p.write_all(&[b'x'; 10_000]).unwrap();
    p.write_all(b"\n++ver\n").unwrap();
    let mut line = String::new();
    BufReader::new(&p).read_line(&mut line).unwrap();
    assert!(line.starts_with("Prologix GPIB-ETHERNET"), "{line:?}");

    // HiSLIP: a stranger's bytes get FatalError and the connection closes; a session
    // whose DataEnd claims 2^64-1 bytes gets Error (message too large), and its
    // connection closes when the stream ends inside the claimed payload.
    let mut g = TcpStream::connect(srv.hislip).unwrap();
    g.set_read_timeout(Some(HANG)).unwrap();
    g.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert_eq!(
        hislip::read_message(&mut g, 4096).unwrap().header.kind,
        kind::FATAL_ERROR
    );
    assert!(closed_by_server(&mut g), "HiSLIP garbage: connection kept");
    let mut sync = TcpStream::connect(srv.hislip).unwrap();
    sync.set_read_timeout(Some(HANG)).unwrap();
    let init = hislip::initialize_param(hislip::VERSION, *b"XX");
    sync.write_all(&hislip::encode(kind::INITIALIZE, 0, init, b"hislip0"))
        .unwrap();
    let session = hislip::read_message(&mut sync, 0).unwrap().header.param & 0xffff;
    let mut asy = TcpStream::connect(srv.hislip).unwrap();
    asy.set_read_timeout(Some(HANG)).unwrap();
    asy.write_all(&hislip::encode(kind::ASYNC_INITIALIZE, 0, session, &[]))
        .unwrap();
    hislip::read_message(&mut asy, 0).unwrap();
    let huge = hislip::Header::new(kind::DATA_END, 0, hislip::FIRST_MESSAGE_ID, u64::MAX);
    sync.write_all(&huge.encode()).unwrap();
    sync.write_all(&[b'x'; 100_000]).unwrap();
    let m = hislip::read_message(&mut sync, 4096).unwrap();
    assert_eq!(
        (m.header.kind, m.header.control),
        (kind::ERROR, hislip::error::TOO_LARGE)
    );
    sync.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(
        closed_by_server(&mut sync),
        "HiSLIP huge claim: connection kept"
    );

    srv.still_serves();
    assert!(
        srv.rss_kib() < 256 * 1024,
        "server RSS {} KiB",
        srv.rss_kib()
    );
    let report = srv.interrupt();
    assert!(report.contains("stopped"), "{report}");
}

#[test]
fn silent_clients_are_closed_and_the_cap_refuses_the_rest() {
    let _turn = common::turns::beside_others();
    let srv = Served::start(&["--idle-timeout", "0.5"]);
    // A client that connects and never speaks is closed after the idle timeout.
    let mut quiet = TcpStream::connect(srv.prologix).unwrap();
    assert!(closed_by_server(&mut quiet), "idle client kept");
    let mut quiet = TcpStream::connect(srv.vxi11).unwrap();
    assert!(closed_by_server(&mut quiet), "idle VXI-11 client kept");
    let mut quiet = TcpStream::connect(srv.hislip).unwrap();
    assert!(closed_by_server(&mut quiet), "idle HiSLIP client kept");
    srv.still_serves();
    srv.interrupt();

    let srv = Served::start(&["--max-connections", "64"]);

    // 1,000 connections at once: at most 64 are kept, the others closed at once.
    let mut conns = Vec::new();
    let mut failed = 0;
    for _ in 0..1000 {
        match TcpStream::connect_timeout(&srv.prologix, Duration::from_secs(5)) {
            Ok(s) => conns.push(s),
            Err(_) => failed += 1,
        }
    }
    let mut refused = 0;
    for s in &mut conns {
        s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let mut b = [0u8; 1];
        if matches!(s.read(&mut b), Ok(0))
            || matches!(s.read(&mut b), Err(ref e) if e.kind() == std::io::ErrorKind::ConnectionReset)
        {
            refused += 1;
        }
    }
    assert!(
        refused + failed >= 1000 - 64,
        "only {refused} closed and {failed} failed of 1000"
    );
    drop(conns);
    // Once they are gone, others are served.
    let mut served = false;
    for _ in 0..200 {
        if let Ok(b) = PrologixBoard::connect_tcp(&srv.prologix.to_string()) {
            let bus = Bus::new(b);
            if bus.device(22).and_then(|d| d.query("*IDN?")).is_ok() {
                served = true;
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(served, "no service after the flood");
    let report = srv.interrupt();
    let n = stopped_count(&report, "refused");
    assert!(n >= 900, "{report}");
}

/// The count before `what` in the server's closing line (`stopped (12 connection(s)
/// served, 3 refused, 1 not allowed)`).
fn stopped_count(report: &str, what: &str) -> u64 {
    let line = report
        .lines()
        .find(|l| l.contains("stopped ("))
        .unwrap_or_else(|| panic!("no closing line in {report}"));
    line.split(['(', ',', ')'])
        .find_map(|part| part.trim().strip_suffix(what)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {what} count in {line}"))
}

// `--allow`: a client from outside the allowed networks has its connection closed at
// once, on every service; one inside is served. From loopback the only addresses are
// 127.0.0.0/8: the refused client binds its socket to 127.0.0.2.
#[test]
fn clients_outside_allow_are_closed_and_counted() {
    let _turn = common::turns::beside_others();
    let srv = Served::start(&["--allow", "127.0.0.1/32"]);
    let from = |ip: &str, to: SocketAddr| -> TcpStream {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        let local: SocketAddr = format!("{ip}:0").parse().unwrap();
        s.bind(&local.into()).unwrap();
        s.connect_timeout(&to.into(), HANG).unwrap();
        s.into()
    };
    for to in [srv.prologix, srv.vxi11] {
        let mut outside = from("127.0.0.2", to);
        // Even a whole request gets no answer: the connection is closed.
        let _ = outside.write_all(b"++ver\n");
        assert!(
            closed_by_server(&mut outside),
            "{to}: client from 127.0.0.2 kept"
        );
    }
    // From 127.0.0.1 (bound explicitly), the same services answer.
    let mut inside = from("127.0.0.1", srv.prologix);
    inside.write_all(b"++addr 22\n*IDN?\n++read eoi\n").unwrap();
    inside.set_read_timeout(Some(HANG)).unwrap();
    let mut line = String::new();
    BufReader::new(inside).read_line(&mut line).unwrap();
    assert_eq!(line.trim_end(), "SIMULATED,SCPI-DMM,0,1.0");
    srv.still_serves();
    let report = srv.interrupt();
    assert_eq!(stopped_count(&report, "not allowed"), 2, "{report}");
    assert_eq!(stopped_count(&report, "refused"), 0, "{report}");
    assert!(
        report.contains("clients from 127.0.0.1/32 only"),
        "{report}"
    );
}

// `--trace` prints one line per call: the client, what it sent and got back, and what
// it took on the bus's clock (in virtual time, the modelled duration: every call returns
// at once).
#[test]
fn trace_shows_what_each_client_sends_one_line_per_call() {
    let _turn = common::turns::beside_others();
    let s = Served::start(&["--trace"]);
    s.still_serves();
    let stderr = s.interrupt();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("gpib-diag serve: 127.0.0.1:"))
        .collect();
    // Prologix: the commands and the data line, each with the client's address.
    assert!(
        lines.iter().any(|l| l.contains(" prologix ++addr 22: ")),
        "{stderr}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" prologix \"*IDN?\\n\" to 22: ") && l.ends_with("ms on the bus")),
        "{stderr}"
    );
    // VXI-11: every call of still_serves' query, in order, each once.
    let vxi: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains(" vxi11 "))
        .collect();
    let order = [
        " vxi11 create_link \"gpib0,22\": ok, link ",
        " vxi11 device_write gpib0,22 \"*IDN?\\n\" END: ok, 6 bytes, ",
        " vxi11 device_read gpib0,22 up to ",
    ];
    let mut at = 0;
    for want in order {
        let i = vxi[at..]
            .iter()
            .position(|l| l.contains(want))
            .unwrap_or_else(|| panic!("no {want:?} after line {at} in\n{}", vxi.join("\n")));
        at += i + 1;
    }
    assert!(
        vxi[at - 1].contains(": ok, \"SIMULATED,SCPI-DMM,0,1.0\\n\" END, "),
        "{}",
        vxi[at - 1]
    );
    // A query's write took modelled bus time, not zero.
    let ms: Vec<f64> = lines
        .iter()
        .filter_map(|l| {
            l.strip_suffix(" ms on the bus")?
                .rsplit(' ')
                .next()?
                .parse()
                .ok()
        })
        .collect();
    assert!(ms.iter().any(|&m| m > 0.0), "{lines:?}");
    assert!(ms.len() >= 5, "{lines:?}");
}

// `io-test -v` over the network: the machine line once read all zeros, or "system 100 %"
// from a single /proc/stat tick, on a transfer of a fraction of a millisecond; the CPU
// share once read over 100 % (the cost of reading /proc/stat charged to the transfer).
// A short transfer now says the machine's modes are not resolved, and no share is above
// 100 %.
#[test]
fn verbose_network_runs_print_only_figures_they_measured() {
    let _turn = common::turns::beside_others();
    let served = Served::start(&[]);
    for backend in ["vxi11", "prologix"] {
        let host = match backend {
            "vxi11" => served.vxi11,
            _ => served.prologix,
        }
        .to_string();
        let out = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
            .args([
                "io-test",
                "--backend",
                backend,
                "--host",
                &host,
                "--device",
                "22",
            ])
            .args(["--protocol", "scpi", "-v", "4096"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let machine: Vec<&str> = text.lines().filter(|l| l.contains("machine ")).collect();
        assert_eq!(machine.len(), 2, "{text}");
        for l in machine {
            assert!(
                l.contains("not resolved: /proc/stat counts in 10 ms ticks"),
                "{l}"
            );
        }
        for l in text.lines().filter(|l| l.trim_start().starts_with("cpu ")) {
            let share: f64 = l
                .split('(')
                .nth(1)
                .and_then(|r| r.split('%').next())
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("no share in {l}"));
            assert!((0.0..=100.0).contains(&share), "{l}");
        }
    }
    served.interrupt();
}

/// The doctor (and calibrate) on a network backend: through `serve --realtime`, the 1988
/// machine behind a LAN gateway. From the client the gateway's CPU cannot be seen: its
/// thread idles while bytes take 134 us each, two orders of magnitude above the
/// handshake, so the bus (the gateway and what is behind it) is named.
#[test]
fn doctor_and_calibrate_run_on_vxi11_prologix_and_hislip_through_serve() {
    let _turn = common::turns::alone();
    let served = Served::start_on("hp9000-350", "11", &["--realtime"]);
    let at = |b: &str, host: String| -> Vec<String> {
        ["--backend", b, "--host", &host, "--device", "11"]
            .map(String::from)
            .to_vec()
    };
    // Over HiSLIP the HP 3565 leaves `*IDN?` unanswered: the clear after that read
    // timed out waited behind the gateway's read of it, and timed out itself.
    let hislip = format!(
        "TCPIP::{}::hislip_gpib0_11,{}::INSTR",
        served.hislip.ip(),
        served.hislip.port()
    );
    for (backend, target) in [
        ("vxi11", at("vxi11", served.vxi11.to_string())),
        ("prologix", at("prologix", served.prologix.to_string())),
        ("hislip", vec!["--resource".to_string(), hislip]),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
            .arg("doctor")
            .args(&target)
            .args(["--large", "1K", "--format", "json"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(3),
            "{backend}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let first = r["findings"][0]["cause"].as_str().unwrap().to_string();
        assert!(
            ["slow-device", "below-ceiling"].contains(&first.as_str()),
            "{backend}: {first}: {r:#}"
        );
        // 134 us a byte: the 1988 figure, seen through the network. The fit is of wall
        // time on a shared machine: its slope moved to 129.5 us in one loaded run, so
        // the bound is 10 % below the figure (and the doctor's cause above is exact).
        let b = r["sweep"]["read"]["time"]["slope"].as_f64().unwrap();
        assert!((120e-6..200e-6).contains(&b), "{backend}: {b}");
        // Calibrate's held-out sizes on a wall clock: common::held_out's rule.
        common::held_out::best_of_three(backend, || {
            let out = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
                .arg("calibrate")
                .args(&target)
                .args(["--large", "1K", "--format", "json"])
                .output()
                .unwrap();
            let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
                panic!("{backend}: {e}: {}", String::from_utf8_lossy(&out.stderr))
            });
            (out.status.code().expect("exit code"), c)
        });
    }
    served.interrupt();
}

/// The program's read size tried on the network: over VXI-11 each read call is a
/// device_read RPC and a bus read behind the gateway, so 64-byte calls are named; a
/// Prologix adapter reads the whole message at one `++read` whatever the calls ask
/// for, so the same trial finds nothing to gain there.
///
/// The budget is 2 s: the sweep then reaches 16 KiB and the trial reads a 4 KiB message
/// in 64 calls (1.6-1.7x over VXI-11, p < 0.001). With 1 s the sweep sometimes stopped
/// at 256 bytes, a message of four calls (1.2-1.6x, p up to 0.002), and on a loaded
/// machine the trial missed VXI-11's small reads twice in eight runs.
#[test]
fn the_read_size_is_tried_over_vxi11_and_prologix() {
    let _turn = common::turns::alone();
    let served = Served::start_on("bench", "11", &["--realtime"]);
    let dir = std::env::temp_dir().join(format!("gpib-read-size-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut saved = Vec::new();
    for (backend, host) in [
        ("vxi11", served.vxi11.to_string()),
        ("prologix", served.prologix.to_string()),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
            .args(["doctor", "--backend", backend, "--host", &host])
            .args(["--device", "11", "--budget", "2", "--read-size", "64"])
            .args(["--format", "json"])
            .output()
            .unwrap();
        let file = dir.join(format!("{backend}.json"));
        std::fs::write(&file, &out.stdout).unwrap();
        saved.push(file.to_string_lossy().into_owned());
        let r: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{backend}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let t = r["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["setting"] == "read-size")
            .unwrap_or_else(|| panic!("{backend}: no read-size trial: {r:#}"))
            .clone();
        let named = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["cause"] == "small-reads");
        let speedup = t["speedup"].as_f64().unwrap();
        if backend == "vxi11" {
            assert!(named, "{backend}: {r:#}");
            assert!(speedup > 1.1, "{backend}: {t:#}");
            assert!(t["test"]["p"].as_f64().unwrap() < 0.05, "{t:#}");
        } else {
            assert!(!named, "{backend}: {r:#}");
            assert!(speedup < 1.1, "{backend}: {t:#}");
        }
    }
    served.interrupt();
    // A doctor's run on a wall clock keeps each transfer's three runs, so two runs
    // compare with intervals: the same bench through either protocol.
    let c = diag_json(&["compare", &saved[0], &saved[1], "--format", "json"]);
    let figures = c["comparison"]["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 5, "{c:#}");
    for f in figures {
        assert_eq!(
            (f["before"]["n"].as_u64(), f["after"]["n"].as_u64()),
            (Some(3), Some(3)),
            "{f:#}"
        );
        assert!(f["p"].as_f64().is_some(), "{f:#}");
        let ratio = f["ratio"].as_f64().unwrap();
        if let Some([lo, hi]) = f["ratio_ci95"]
            .as_array()
            .map(|v| [v[0].as_f64().unwrap(), v[1].as_f64().unwrap()])
        {
            assert!(lo <= ratio && ratio <= hi, "{f:#}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Behind a gateway in virtual time (serve without --realtime) transfers come back
/// faster than any bus: the doctor says the clock cannot be trusted and compares no
/// times. Regression: it used to try the read size (and T1) anyway, timing only the
/// host's noise; one such trial through linux-gpib's library came out "significant"
/// (1.17x, p = 0.017) and was reported as a problem.
#[test]
fn no_setting_is_tried_when_transfers_run_faster_than_any_bus() {
    let _turn = common::turns::beside_others();
    let served = Served::start_on("bench", "11", &[]);
    let out = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
        .args([
            "doctor",
            "--backend",
            "vxi11",
            "--host",
            &served.vxi11.to_string(),
        ])
        .args(["--device", "11", "--budget", "1", "--read-size", "64"])
        .args(["--format", "json"])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(3), "{r:#}");
    assert_eq!(common::problems(&r), ["faster-than-the-bus"], "{r:#}");
    assert_eq!(r["settings"], serde_json::json!([]), "{r:#}");
    served.interrupt();
}

/// Runs `gpib-diag ARGS`, expects success, and parses its JSON.
fn diag_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Checks a contention run's points for what cannot be wrong on any clock: each device
/// moved `per_transaction` bytes a transaction and its rate is its bytes over its
/// seconds, the aggregate is the sum of the devices' rates (within 0.5 %), the wire
/// carried at least the payload, no CPU share is above 100 %. Returns each device's
/// bytes over all points, by address.
fn check_contention(doc: &serde_json::Value, devices: &[u64], per_transaction: u64) -> Vec<u64> {
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), devices.len(), "{doc}");
    let mut total = vec![0u64; devices.len()];
    for (i, p) in points.iter().enumerate() {
        let n = i + 1;
        assert_eq!(p["devices"], n as u64, "{p}");
        let list = |k: &str| p[k].as_array().unwrap().clone();
        let (rates, bytes, txs, secs) = (
            list("per_device_bytes_per_second"),
            list("per_device_bytes"),
            list("per_device_transactions"),
            list("per_device_seconds"),
        );
        for v in [&rates, &bytes, &txs, &secs] {
            assert_eq!(v.len(), n, "{p}");
        }
        let mut sum = 0.0;
        for d in 0..n {
            let (b, t, s, r) = (
                bytes[d].as_u64().unwrap(),
                txs[d].as_u64().unwrap(),
                secs[d].as_f64().unwrap(),
                rates[d].as_f64().unwrap(),
            );
            assert!(t > 0 && s > 0.0, "{p}");
            assert_eq!(b, t * per_transaction, "{p}");
            assert!((r - b as f64 / s).abs() <= 1e-9 * r, "{p}");
            sum += r;
            total[d] += b;
        }
        let agg = p["aggregate_bytes_per_second"].as_f64().unwrap();
        assert!((agg - sum).abs() <= 0.005 * sum, "{p}");
        let cpu = p["cpu_utilisation"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&cpu), "{p}");
        let wire = p["wire_bytes"].as_u64().unwrap();
        assert!(
            wire >= bytes.iter().map(|b| b.as_u64().unwrap()).sum::<u64>(),
            "{p}"
        );
        let (p50, p90, p99) = (
            p["latency_p50_s"].as_f64().unwrap(),
            p["latency_p90_s"].as_f64().unwrap(),
            p["latency_p99_s"].as_f64().unwrap(),
        );
        assert!(0.0 < p50 && p50 <= p90 && p90 <= p99, "{p}");
    }
    total
}

// contention on a Prologix adapter and a VXI-11 gateway (`gpib-diag serve`), measured
// on the wall clock: only shapes that cannot be wrong are asserted, not speed. On
// Prologix the server's trace counts the bytes each device received, and they are the
// bytes the run says each moved: a Prologix adapter answers nothing to a write, so a
// device's run ends with a round trip that waits for its writes to be made (without it
// the writes still queued in the connection were counted as moved: 628,950 bytes said,
// 203,140 made in one run).
#[test]
fn contention_runs_on_network_backends() {
    let _turn = common::turns::beside_others();
    let served = Served::start(&["--trace"]);
    let mut prologix_bytes = Vec::new();
    for backend in ["vxi11", "prologix"] {
        let host = match backend {
            "vxi11" => served.vxi11,
            _ => served.prologix,
        }
        .to_string();
        let doc = diag_json(&[
            "contention",
            "--backend",
            backend,
            "--host",
            &host,
            "--devices",
            "11,22",
            "--seconds",
            "0.2",
            "--format",
            "json",
        ]);
        assert_eq!(doc["backend"], backend);
        assert_eq!(doc["clock"], "wall");
        assert_eq!(doc["workload"], "write");
        assert_eq!(doc["config"], format!("{backend}:{host} 11,22"));
        let total = check_contention(&doc, &[11, 22], 35);
        if backend == "prologix" {
            prologix_bytes = total;
        }
    }
    // A resource names the backend and the device.
    let resource = format!("TCPIP::127.0.0.1,{}::gpib0,22::INSTR", served.vxi11.port());
    let doc = diag_json(&[
        "contention",
        "--resource",
        &resource,
        "--workload",
        "query",
        "--seconds",
        "0.1",
        "--format",
        "json",
    ]);
    assert_eq!(doc["backend"], "vxi11");
    // `SIMULATED,SCPI-DMM,0,1.0` and its newline.
    check_contention(&doc, &[22], 25);

    // What does not go with a network backend.
    let prologix = served.prologix.to_string();
    for (args, says) in [
        (
            vec!["--backend", "vxi11", "--devices", "22"],
            "--backend prologix|vxi11 needs --host",
        ),
        (
            vec![
                "--backend",
                "prologix",
                "--host",
                &prologix,
                "--devices",
                "1:22",
            ],
            "a prologix connection is one board, board 0",
        ),
        (
            vec![
                "--backend",
                "prologix",
                "--host",
                &prologix,
                "--devices",
                "22",
                "--without",
                "pio",
            ],
            "--with/--without change a simulated host",
        ),
        (
            vec!["--host", &prologix],
            "--host is for --backend prologix or vxi11",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
            .arg("contention")
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }

    let stderr = served.interrupt();
    let mut received = [0u64; 2];
    for l in stderr.lines().filter(|l| l.contains(" prologix \"")) {
        // `... prologix "DATA" to 11: ...` or `... prologix "DATA"... (N bytes) to 11: ...`
        let (head, tail) = l.rsplit_once(" to ").expect("a data line names its device");
        let n = match head.rsplit_once(" (") {
            Some((_, count)) if count.ends_with(" bytes)") => {
                count.trim_end_matches(" bytes)").parse().unwrap()
            }
            _ => escaped_len(head.split_once(" prologix ").unwrap().1),
        };
        match tail.split(':').next().unwrap() {
            "11" => received[0] += n,
            "22" => received[1] += n,
            other => panic!("a write to {other}: {l}"),
        }
    }
    assert_eq!(
        prologix_bytes, received,
        "said moved, and received by the server"
    );
}

// `compare` on wall-clock runs (a VXI-11 gateway): the runs differ, so each figure gets
// an interval of some width around its ratio and a p-value; no virtual-time note. A
// simulated run against a measured one is compared too, and said to be on two clocks.
#[test]
fn compare_takes_wall_clock_runs() {
    let _turn = common::turns::beside_others();
    let served = Served::start(&[]);
    let dir = std::env::temp_dir().join(format!("gpib-compare-wall-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let host = served.vxi11.to_string();
    let save = |name: &str, network: bool| {
        let p = dir.join(name).to_str().unwrap().to_string();
        let mut args = vec!["io-test", "4096", "--device", "22", "--repeat", "5"];
        if network {
            args.extend(["--backend", "vxi11", "--host", &host]);
        } else {
            args.extend(["--bus", "bench"]);
        }
        args.extend(["--format", "json", "-o", &p]);
        let out = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
            .args(&args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        p
    };
    let (a, b, sim) = (
        save("a.json", true),
        save("b.json", true),
        save("sim.json", false),
    );
    let doc = diag_json(&["compare", &a, &b, "--format", "json"]);
    let figures = doc["comparison"]["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 2, "{doc}");
    for f in figures {
        assert_eq!(f["before"]["clock"], "wall");
        assert_eq!(
            (&f["before"]["n"], &f["after"]["n"]),
            (&5.into(), &5.into())
        );
        let ratio = f["ratio"].as_f64().unwrap();
        let ci = &f["ratio_ci95"];
        match (ci[0].as_f64(), ci[1].as_f64()) {
            (Some(lo), Some(hi)) => assert!(lo < ratio && ratio < hi, "{f}"),
            // Fieller's interval is unbounded when a side's mean is not clear of zero
            // by its own spread (a run the shared machine held up): then say so.
            _ => {
                let clear = |side: &serde_json::Value| {
                    side["mean"].as_f64().unwrap()
                        / (side["stddev"].as_f64().unwrap() / 5f64.sqrt())
                };
                let least = clear(&f["before"]).min(clear(&f["after"]));
                assert!(least < 3.5, "no interval, yet both means are clear: {f}");
            }
        }
        let p = f["p"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p), "{f}");
        assert_eq!(f["significant"], p < 0.05, "{f}");
    }
    let text = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
        .args(["compare", &sim, &a])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("clocks: virtual before, wall after: one run is simulated"),
        "{text}"
    );
    assert!(!text.contains("virtual clock:"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
    served.interrupt();
}

/// The bytes a trace's quoted `"..."` (Rust's `escape_ascii`) stands for.
fn escaped_len(quoted: &str) -> u64 {
    let inner = quoted.trim().trim_start_matches('"').trim_end_matches('"');
    let mut n = 0;
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.next() == Some('x') {
            chars.next();
            chars.next();
        }
        n += 1;
    }
    n
}

/// A device that never asserts EOI behind a gateway: `++read eoi` (Prologix) and a
/// VXI-11 read without termChar wait out the timeout; the doctor's query with reads
/// ending on the newline (`++read 10`, termChar) ends at once, and the cause is named.
#[test]
fn a_device_without_eoi_is_named_over_prologix_and_vxi11() {
    let _turn = common::turns::beside_others();
    let config = format!("{}/../compat/tests/no_eoi.toml", env!("CARGO_MANIFEST_DIR"));
    let served = Served::start_on(&config, "22", &[]);
    for (backend, host) in [
        ("vxi11", served.vxi11.to_string()),
        ("prologix", served.prologix.to_string()),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
            .args(["doctor", "--backend", backend, "--host", &host])
            .args(["--device", "22", "--budget", "1", "--timeout", "0.2"])
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(3),
            "{backend}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["findings"][0]["cause"], "no-eoi", "{backend}: {r:#}");
        assert_eq!(r["read_end"]["stalled_after"], 25, "{backend}");
    }
    served.interrupt();
}

/// HiSLIP resource strings reach the served devices from every `--resource` command:
/// `hislip0` (the default device) and `hislip_gpib0_22`.
#[test]
fn hislip_resources_work_with_resource_commands() {
    let _turn = common::turns::beside_others();
    let srv = Served::start(&[]);
    let port = srv.hislip.port();
    for (args, want) in [
        (
            vec![
                "query".to_string(),
                format!("TCPIP::127.0.0.1::hislip_gpib0_22,{port}::INSTR"),
                "*IDN?".into(),
            ],
            "SIMULATED,SCPI-DMM,0,1.0",
        ),
        (
            vec![
                "io-test".to_string(),
                "--resource".into(),
                format!("TCPIP::127.0.0.1::hislip0,{port}::INSTR"),
                "10000".into(),
            ],
            "transfer size: 10000",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
            .args(&args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains(want),
            "{args:?}: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    srv.interrupt();
}
