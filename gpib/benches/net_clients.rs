//! Our own network clients against a running `gpib-diag serve`: `*IDN?` round trips
//! and 1 MiB block reads through the Prologix backend and the VXI-11 backend, each
//! with its own connection to the same server. `bench/targets/6-network.sh` starts the
//! server and runs this interleaved with pyvisa-py's sessions, so that both sides are
//! measured in the same run against the same server.
//!
//! ```text
//! cargo bench -p gpib --bench net_clients -- --prologix 127.0.0.1:PORT --vxi11 127.0.0.1:PORT \
//!     [--device 22] [--seconds 0.5] [--block 1048576] [--echo]
//! ```
//!
//! Prints one JSON object: queries per second and block bytes per second for each
//! protocol given. Loopback only: other hosts are refused. `--echo` (with
//! `--prologix`) also records the bytes one Prologix `*IDN?` exchanges with the
//! server, then sends the same bytes to an echo server that answers each request with
//! the recorded answer: a loopback round trip with no server work behind it, the floor
//! any server is measured against. Twice: the echo server in a process of its own, as
//! `gpib-diag serve` is (`echo_queries_per_second`: this program started again with
//! `--echo-server`), and on a thread of this process (`echo_thread_queries_per_second`,
//! which saves the switch between two address spaces on each wake-up). With
//! `--vxi11` too, the same for one VXI-11 `*IDN?` (its device_write and device_read
//! calls, which the client sends together), in a process of its own:
//! `vxi11_echo_queries_per_second`.

use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gpib::backend::prologix::PrologixBoard;
use gpib::backend::vxi11::{Vxi11Board, Vxi11Options};
use gpib::{Bus, Device};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn loopback(what: &str, s: &str) -> SocketAddr {
    let a: SocketAddr = s
        .parse()
        .unwrap_or_else(|e| panic!("{what} {s:?}: not IP:PORT ({e})"));
    assert!(a.ip().is_loopback(), "{what} {s}: loopback addresses only");
    a
}

/// Operations per second of `op` over about `budget` (at least 3 operations).
fn rate(budget: Duration, mut op: impl FnMut()) -> f64 {
    let t0 = Instant::now();
    let mut n = 0u32;
    while n < 3 || t0.elapsed() < budget {
        op();
        n += 1;
    }
    f64::from(n) / t0.elapsed().as_secs_f64()
}

/// (`*IDN?` queries per second, block bytes per second) on `dev`.
fn measure(dev: &Device, budget: Duration, block: usize) -> (f64, f64) {
    let mut idn = [0u8; 256];
    let st = dev.query_into(b"*IDN?", &mut idn).expect("*IDN?");
    assert!(
        idn[..st.count].starts_with(b"SIMULATED"),
        "unexpected *IDN? answer"
    );
    let cmd = format!("BLOCK? {block}");
    let mut buf = vec![0u8; block + 64];
    let info = dev.query_block_into(&cmd, &mut buf).expect("BLOCK?");
    assert_eq!(info.len, block);
    assert!(
        buf[..block].iter().enumerate().all(|(i, &b)| b == i as u8),
        "block bytes"
    );
    let q = rate(budget, || {
        black_box(dev.query_into(b"*IDN?", &mut idn).expect("*IDN?"));
    });
    let b = rate(budget, || {
        black_box(dev.query_block_into(&cmd, &mut buf).expect("BLOCK?"));
    });
    (q, b * block as f64)
}

/// What passed one way through the recording proxy.
type Log = Arc<Mutex<Vec<u8>>>;

/// Copies `from` to `to`, appending what passes to `log` first (so that what the far
/// side has received is already in the log), until `from` ends.
fn pump(mut from: TcpStream, mut to: TcpStream, log: Log) {
    let mut buf = [0u8; 64 * 1024];
    while let Ok(n @ 1..) = from.read(&mut buf) {
        log.lock().expect("log").extend_from_slice(&buf[..n]);
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// The bytes one of our clients sends for one `*IDN?` of `device` and the bytes it
/// gets back, recorded by a proxy in front of `server` after three warm-up queries;
/// `connect` opens the client's board at the proxy's address.
fn record_query(
    server: SocketAddr,
    device: u8,
    connect: impl FnOnce(SocketAddr) -> Bus,
) -> (Vec<u8>, Vec<u8>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("proxy listener");
    let proxy = listener.local_addr().expect("proxy address");
    let (up, down): (Log, Log) = (Arc::default(), Arc::default());
    let (up2, down2) = (Arc::clone(&up), Arc::clone(&down));
    std::thread::spawn(move || {
        let (client, _) = listener.accept().expect("proxy accept");
        let upstream = TcpStream::connect(server).expect("proxy connect");
        for s in [&client, &upstream] {
            s.set_nodelay(true).expect("nodelay");
        }
        let (c2, u2) = (
            client.try_clone().expect("clone"),
            upstream.try_clone().expect("clone"),
        );
        std::thread::spawn(move || pump(c2, u2, up2));
        pump(upstream, client, down2);
    });
    let bus = connect(proxy);
    let dev = bus.device(device).expect("address");
    let mut idn = [0u8; 256];
    for _ in 0..3 {
        dev.query_into(b"*IDN?", &mut idn).expect("*IDN?");
    }
    up.lock().expect("log").clear();
    down.lock().expect("log").clear();
    dev.query_into(b"*IDN?", &mut idn).expect("*IDN?");
    let request = up.lock().expect("log").clone();
    let answer = down.lock().expect("log").clone();
    assert!(
        !request.is_empty() && !answer.is_empty(),
        "nothing recorded"
    );
    (request, answer)
}

/// Answers each `n`-byte request of one connection on `listener` with `reply`, until
/// the connection ends.
fn echo_serve(listener: TcpListener, n: usize, reply: &[u8]) {
    let (mut s, _) = listener.accept().expect("echo accept");
    s.set_nodelay(true).expect("nodelay");
    let mut buf = vec![0u8; n];
    while s.read_exact(&mut buf).is_ok() && s.write_all(reply).is_ok() {}
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// `--echo-server N ANSWER-HEX`: the echo server as a process of its own; prints its
/// port, serves one connection.
fn echo_server_main(n: &str, answer: &str) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("echo listener");
    println!("{}", listener.local_addr().expect("echo address").port());
    std::io::stdout().flush().expect("stdout");
    echo_serve(listener, n.parse().expect("request length"), &unhex(answer));
}

/// Round trips per second of `request` -> `answer` between a bare TCP client and an
/// echo server that answers each `request` with `answer`: in a process of its own
/// (`own_process`), else on a thread of this one.
fn echo_rate(request: Vec<u8>, answer: Vec<u8>, budget: Duration, own_process: bool) -> f64 {
    let (addr, child) = if own_process {
        let mut child = std::process::Command::new(std::env::current_exe().expect("this program"))
            .args(["--echo-server", &request.len().to_string(), &hex(&answer)])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start the echo server");
        let mut port = String::new();
        let mut out = child.stdout.take().expect("stdout");
        let mut byte = [0u8; 1];
        while out.read(&mut byte).expect("echo server's port") == 1 && byte[0] != b'\n' {
            port.push(char::from(byte[0]));
        }
        let port: u16 = port.trim().parse().expect("echo server's port");
        (SocketAddr::from(([127, 0, 0, 1], port)), Some(child))
    } else {
        let listener = TcpListener::bind("127.0.0.1:0").expect("echo listener");
        let addr = listener.local_addr().expect("echo address");
        let (n, reply) = (request.len(), answer.clone());
        std::thread::spawn(move || echo_serve(listener, n, &reply));
        (addr, None)
    };
    let mut c = TcpStream::connect(addr).expect("echo connect");
    c.set_nodelay(true).expect("nodelay");
    let mut got = vec![0u8; answer.len()];
    let r = rate(budget, || {
        c.write_all(&request).expect("echo write");
        c.read_exact(&mut got).expect("echo read");
    });
    drop(c);
    if let Some(mut child) = child {
        let _ = child.wait();
    }
    r
}

/// A bus on our Prologix client, connected to `a`.
fn prologix_bus(a: SocketAddr) -> Bus {
    let bus = Bus::new(PrologixBoard::connect_tcp(&a.to_string()).expect("Prologix connect"));
    bus.set_timeout(Duration::from_secs(10).into())
        .expect("timeout");
    bus
}

/// A bus on our VXI-11 client, its core channel connected to `a` (no portmapper, no
/// interrupt channel).
fn vxi11_bus(a: SocketAddr) -> Bus {
    let opts = Vxi11Options {
        port: Some(a.port()),
        interrupts: false,
        ..Vxi11Options::default()
    };
    let bus = Bus::new(Vxi11Board::connect(&a.ip().to_string(), opts).expect("VXI-11 connect"));
    bus.set_timeout(Duration::from_secs(10).into())
        .expect("timeout");
    bus
}

fn main() {
    if let (Some(n), Some(answer)) = (arg("--echo-server"), std::env::args().nth(3)) {
        return echo_server_main(&n, &answer);
    }
    let device: u8 = arg("--device").map_or(22, |d| d.parse().expect("--device N"));
    let budget =
        Duration::from_secs_f64(arg("--seconds").map_or(0.5, |s| s.parse().expect("--seconds S")));
    let block: usize = arg("--block").map_or(1 << 20, |s| s.parse().expect("--block N"));
    let mut fields = Vec::new();
    let echo = std::env::args().any(|a| a == "--echo");
    if let Some(p) = arg("--prologix") {
        let a = loopback("--prologix", &p);
        let bus = prologix_bus(a);
        let dev = bus.device(device).expect("address");
        let (q, b) = measure(&dev, budget, block);
        fields.push(format!(
            "\"prologix_queries_per_second\": {q}, \"prologix_block_bytes_per_second\": {b}"
        ));
        if echo {
            let (request, answer) = record_query(a, device, prologix_bus);
            let (out, back) = (request.len(), answer.len());
            let e = echo_rate(request.clone(), answer.clone(), budget, true);
            let t = echo_rate(request, answer, budget, false);
            fields.push(format!(
                "\"echo_queries_per_second\": {e}, \"echo_thread_queries_per_second\": {t}, \"echo_request_bytes\": {out}, \"echo_answer_bytes\": {back}"
            ));
        }
    }
    if let Some(v) = arg("--vxi11") {
        let a = loopback("--vxi11", &v);
        let bus = vxi11_bus(a);
        let dev = bus.device(device).expect("address");
        let (q, b) = measure(&dev, budget, block);
        fields.push(format!(
            "\"vxi11_queries_per_second\": {q}, \"vxi11_block_bytes_per_second\": {b}"
        ));
        if echo {
            let (request, answer) = record_query(a, device, vxi11_bus);
            let (out, back) = (request.len(), answer.len());
            let e = echo_rate(request, answer, budget, true);
            fields.push(format!(
                "\"vxi11_echo_queries_per_second\": {e}, \"vxi11_echo_request_bytes\": {out}, \"vxi11_echo_answer_bytes\": {back}"
            ));
        }
    }
    println!("{{\"block\": {block}, {}}}", fields.join(", "));
}
