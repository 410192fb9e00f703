//! `gpib-diag serve` under load: 100 VXI-11 clients on the 15 instruments of one
//! served board, each storing a token in its instrument (`DATA #2NN<token>`) under the
//! instrument's lock and reading it back (`DATA?`), for a bounded number of rounds.
//! Every token must come back as written (0 crossed: another client's token; 0 lost:
//! an error or no answer), the server's memory must stay flat from round to round, and
//! a client killed in the middle of a transfer, holding a lock, must leave its
//! instrument usable for the others (its lock released, the device cleared).
//!
//! Loopback only; every loop is bounded in count and every wait in time.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use gpib::backend::vxi11::{proto, Vxi11Board, Vxi11Options};
use gpib::backend::{Backend, DeviceLevel};
use gpib::rpc::{msg, record};
use gpib::Address;

/// Clients at once.
const CLIENTS: usize = 100;
/// Instruments on the served board (primary addresses 1 to 15).
const INSTRUMENTS: u8 = 15;
/// Tokens each client stores and reads back per round.
const PER_ROUND: usize = 4;
/// Generous limit for waits that must end (a hang detector, not a timing claim).
const HANG: Duration = Duration::from_secs(60);

/// The served board: 15 SCPI instruments, which store a block (`DATA`) and give it
/// back (`DATA?`).
fn config() -> String {
    let mut s = String::from(
        "name = \"load\"\ndescription = \"one board, 15 SCPI instruments\"\n\n\
         [[board]]\nname = \"gpib0\"\naddress = 0\ntransfer = \"dma\"\n",
    );
    for a in 1..=INSTRUMENTS {
        s.push_str(&format!(
            "\n  [[board.device]]\n  address = {a}\n  model = \"scpi\"\n  idn = \"LOAD,STORE-{a},0,1.0\"\n"
        ));
    }
    s
}

struct Served {
    child: Child,
    vxi11: SocketAddr,
    dir: std::path::PathBuf,
}

impl Served {
    fn start() -> Self {
        let dir = std::env::temp_dir().join(format!("gpib-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let conf = dir.join("load.toml");
        std::fs::write(&conf, config()).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
            .args(["serve", "--bus"])
            .arg(&conf)
            .args([
                "--no-prologix",
                "--vxi11-port",
                "0",
                "--no-portmap",
                "--no-hislip",
                "--max-connections",
                "512",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("gpib-diag serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let vxi11 = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("vxi11="))
            .unwrap_or_else(|| panic!("no vxi11= in {line:?}"))
            .parse()
            .unwrap();
        Self { child, vxi11, dir }
    }

    /// The server's resident memory, KiB.
    fn rss_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// What came back.
#[derive(Debug, Default)]
struct Tally {
    ok: AtomicU64,
    crossed: AtomicU64,
    lost: AtomicU64,
}

/// One client's gateway connection (no interrupt channel: 100 of them are not the
/// point here).
fn connect(at: SocketAddr) -> gpib::Result<Vxi11Board> {
    let mut g = Vxi11Board::connect(
        &at.to_string(),
        Vxi11Options {
            interrupts: false,
            lock_timeout: Duration::from_secs(20),
            ..Vxi11Options::default()
        },
    )?;
    g.set_timeout(Duration::from_secs(10).into())?;
    Ok(g)
}

/// Stores `token` in `device` under its lock and reads it back; returns what came
/// back.
fn store_and_read(g: &mut Vxi11Board, device: Address, token: &str) -> gpib::Result<String> {
    g.lock(device)?;
    let msg = format!("DATA #2{:02}{token}\n", token.len());
    let result = (|| -> gpib::Result<String> {
        g.device_write(device, msg.as_bytes(), true)?;
        let mut buf = [0u8; 128];
        let st = g
            .device_write_read(device, b"DATA?\n", &mut buf, None)
            .map_err(|e| match e {
                gpib::backend::WriteReadError::Write(e)
                | gpib::backend::WriteReadError::Read(e) => e,
            })?;
        Ok(String::from_utf8_lossy(&buf[..st.count]).into_owned())
    })();
    let unlocked = g.unlock(device);
    let back = result?;
    unlocked?;
    Ok(back)
}

/// The token in a `DATA?` answer (a definite-length block, `#<digits><length><token>`
/// and NL), if it is one.
fn token_of(answer: &str) -> Option<&str> {
    let rest = answer.strip_prefix('#')?;
    let d: usize = rest.get(..1)?.parse().ok()?;
    let n: usize = rest.get(1..1 + d)?.parse().ok()?;
    let body = rest.get(1 + d..)?;
    (body.get(n..) == Some("\n")).then(|| &body[..n])
}

fn check(tally: &Tally, want: &str, got: gpib::Result<String>) {
    match got.as_deref().ok().and_then(token_of) {
        Some(t) if t == want => tally.ok.fetch_add(1, Ordering::Relaxed),
        Some(t) if t.starts_with('c') => {
            eprintln!("crossed: wrote {want}, read {t}");
            tally.crossed.fetch_add(1, Ordering::Relaxed)
        }
        _ => {
            eprintln!("lost: wrote {want}, got {got:?}");
            tally.lost.fetch_add(1, Ordering::Relaxed)
        }
    };
}

/// One round: every client connects, stores and reads back [`PER_ROUND`] tokens in
/// its instrument (client `c` uses instrument `c % 15 + 1`: 6 or 7 clients share
/// each), and goes.
fn round(at: SocketAddr, r: usize, tally: &Arc<Tally>) {
    let start = Arc::new(Barrier::new(CLIENTS));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (tally, start) = (tally.clone(), start.clone());
            std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || {
                    let device = Address::try_from(c as u8 % INSTRUMENTS + 1).unwrap();
                    start.wait();
                    let mut g = match connect(at) {
                        Ok(g) => g,
                        Err(e) => {
                            eprintln!("lost: client {c} cannot connect: {e}");
                            tally.lost.fetch_add(PER_ROUND as u64, Ordering::Relaxed);
                            return;
                        }
                    };
                    for k in 0..PER_ROUND {
                        let token = format!("c{c:03}r{r:03}k{k}");
                        let got = store_and_read(&mut g, device, &token);
                        check(&tally, &token, got);
                    }
                })
                .unwrap()
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
}

/// One RPC call on a raw core connection; the reply's results.
fn call(s: &mut TcpStream, xid: u32, proc_: u32, args: &[u8]) -> Vec<u8> {
    let h = msg::CallHeader {
        xid,
        prog: proto::DEVICE_CORE,
        vers: proto::VERSION,
        proc_,
    };
    record::write_record(s, &msg::encode_call(h, args), 1 << 20).unwrap();
    let mut rec = Vec::new();
    let limits = record::Limits {
        max_record: 1 << 20,
        max_fragments: 100,
    };
    record::read_record(s, limits, &mut rec).unwrap();
    msg::decode_reply(&rec, xid).unwrap().to_vec()
}

/// A client killed in the middle of a transfer: it links to `device`, locks it, writes
/// the start of a `DATA` message without END (the device holds part of a message),
/// sends half of the next `device_write` record, and its socket is dropped.
fn killed_mid_transfer(at: SocketAddr, device: u8) {
    let mut s = TcpStream::connect(at).unwrap();
    s.set_read_timeout(Some(HANG)).unwrap();
    let link = proto::CreateLink {
        client_id: 666,
        lock_device: false,
        lock_timeout: 0,
        device: format!("gpib0,{device}").into_bytes(),
    };
    let r =
        proto::CreateLinkResp::decode(&call(&mut s, 1, proto::procs::CREATE_LINK, &link.encode()))
            .unwrap();
    assert_eq!(r.error, proto::err::NONE);
    let lock = proto::Lock {
        lid: r.lid,
        flags: proto::flags::WAITLOCK,
        lock_timeout: 20_000,
    };
    let code = proto::decode_error(&call(&mut s, 2, proto::procs::DEVICE_LOCK, &lock.encode()));
    assert_eq!(code.unwrap(), proto::err::NONE);
    let w = proto::Write {
        lid: r.lid,
        io_timeout: 2000,
        lock_timeout: 0,
        flags: 0,
        data: b"DATA #250half-a-block",
    };
    let (code, n) =
        proto::decode_error_value(&call(&mut s, 3, proto::procs::DEVICE_WRITE, &w.encode()))
            .unwrap();
    assert_eq!((code, n), (proto::err::NONE, 21));
    // The next write's record, cut in the middle: the server is reading it when the
    // client dies.
    let h = msg::CallHeader {
        xid: 4,
        prog: proto::DEVICE_CORE,
        vers: proto::VERSION,
        proc_: proto::procs::DEVICE_WRITE,
    };
    let more = proto::Write {
        data: b"0123456789012345678901234567890123456789",
        flags: proto::flags::END,
        ..w
    };
    let mut rec = Vec::new();
    record::write_record(&mut rec, &msg::encode_call(h, &more.encode()), 1 << 20).unwrap();
    s.write_all(&rec[..rec.len() / 2]).unwrap();
    s.flush().unwrap();
    drop(s);
}

/// Runs `rounds` rounds, a client killed mid-transfer during the second; returns the
/// tally and the server's RSS after each round (KiB).
fn run(rounds: usize) -> (Arc<Tally>, Vec<u64>, Duration) {
    let served = Served::start();
    let at = served.vxi11;
    let tally = Arc::new(Tally::default());
    let mut rss = Vec::new();
    let t0 = Instant::now();
    for r in 0..rounds {
        let killer = (r == 1).then(|| std::thread::spawn(move || killed_mid_transfer(at, 3)));
        round(at, r, &tally);
        if let Some(k) = killer {
            k.join().unwrap();
            // The killed client's instrument, right after: its lock was released (this
            // lock is granted) and its half message cleared (this token comes back).
            let mut g = connect(at).unwrap();
            let device = Address::try_from(3u8).unwrap();
            let got = store_and_read(&mut g, device, "c999after");
            check(&tally, "c999after", got);
        }
        assert!(t0.elapsed() < HANG, "the run took over {HANG:?}");
        rss.push(served.rss_kib());
    }
    (tally, rss, t0.elapsed())
}

/// The RSS bound across rounds: after the first round (buffers and thread stacks
/// reach their working size), no later round may leave the server more than this
/// above it.
const RSS_GROWTH_KIB: u64 = 4096;

fn assert_flat(rss: &[u64]) {
    let base = rss[0];
    assert!(base > 0, "no RSS read");
    let worst = rss[1..].iter().copied().max().unwrap_or(base);
    assert!(
        worst <= base + RSS_GROWTH_KIB,
        "server RSS grew from {base} KiB to {worst} KiB: {rss:?}"
    );
}

// Three rounds of 100 clients on 15 instruments (1,200 tokens stored and read back
// under lock), one client killed mid-transfer.
#[test]
fn hundred_clients_on_fifteen_instruments_cross_and_lose_nothing() {
    let rounds = 3;
    let (tally, rss, took) = run(rounds);
    let (ok, crossed, lost) = (
        tally.ok.load(Ordering::Relaxed),
        tally.crossed.load(Ordering::Relaxed),
        tally.lost.load(Ordering::Relaxed),
    );
    eprintln!("{ok} tokens back, {crossed} crossed, {lost} lost in {took:.2?}; server RSS after each round {rss:?} KiB");
    assert_eq!((crossed, lost), (0, 0));
    assert_eq!(ok, (rounds * CLIENTS * PER_ROUND) as u64 + 1);
    assert_flat(&rss);
}

// The soak: 40 rounds (16,000 tokens), the server's RSS after each.
#[test]
#[ignore = "a soak of about 10 s: run with --ignored"]
fn hundred_clients_soak() {
    let rounds = 40;
    let (tally, rss, took) = run(rounds);
    let (ok, crossed, lost) = (
        tally.ok.load(Ordering::Relaxed),
        tally.crossed.load(Ordering::Relaxed),
        tally.lost.load(Ordering::Relaxed),
    );
    eprintln!("{ok} tokens back, {crossed} crossed, {lost} lost in {took:.2?}; server RSS after each round {rss:?} KiB");
    assert_eq!((crossed, lost), (0, 0));
    assert_eq!(ok, (rounds * CLIENTS * PER_ROUND) as u64 + 1);
    assert_flat(&rss);
}

// Waiters woken together by an unlock: the first took the lock between the second's
// wait and its taking it, and the second answered "locked by another link" at once,
// though it had asked to wait (WAITLOCK) and its lock timeout had not run out (the load
// test lost 7 of 1,200 tokens so). Waiting and taking the lock are now one step. (Here,
// not among the library's unit tests: its 16 busy threads would starve the timing
// tests that run beside those.)
#[test]
fn lock_waiters_woken_together_all_get_the_lock() {
    let served = Served::start();
    let at = served.vxi11;
    let waiters: Vec<_> = (0..16)
        .map(|w| {
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(at).unwrap();
                s.set_read_timeout(Some(HANG)).unwrap();
                let link = proto::CreateLink {
                    client_id: w,
                    lock_device: false,
                    lock_timeout: 0,
                    device: b"gpib0,1".to_vec(),
                };
                let r = call(&mut s, 1, proto::procs::CREATE_LINK, &link.encode());
                let lid = proto::CreateLinkResp::decode(&r).unwrap().lid;
                let mut codes = Vec::new();
                for k in 0..50 {
                    let p = proto::Lock {
                        lid,
                        flags: proto::flags::WAITLOCK,
                        lock_timeout: 20_000,
                    };
                    let r = call(&mut s, 2 + 2 * k, proto::procs::DEVICE_LOCK, &p.encode());
                    codes.push(proto::decode_error(&r).unwrap());
                    let r = call(
                        &mut s,
                        3 + 2 * k,
                        proto::procs::DEVICE_UNLOCK,
                        &lid.to_be_bytes(),
                    );
                    proto::decode_error(&r).unwrap();
                }
                codes
            })
        })
        .collect();
    let codes: Vec<u32> = waiters
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    assert_eq!(codes.len(), 800);
    let refused = codes.iter().filter(|&&c| c != proto::err::NONE).count();
    assert_eq!(refused, 0, "{refused} of 800 waiting locks refused");
}

#[test]
fn tokens_parse_only_as_written() {
    assert_eq!(token_of("#210c001r002k3\n"), Some("c001r002k3"));
    assert_eq!(token_of("#19c999after\n"), Some("c999after"));
    assert_eq!(token_of("#210c001r002k3"), None);
    assert_eq!(token_of("#211c001r002k3\n"), None);
    assert_eq!(token_of(""), None);
}
