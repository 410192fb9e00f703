//! Regression tests for the HiSLIP client against misbehaving servers (issue 28 item
//! 1): small fake HiSLIP servers on 127.0.0.1, each bounded in what it sends and how
//! long it runs. Every wait of the client is bounded by its call's deadline, whatever
//! the server sends: a failure is a typed timeout within a few times the timeout.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use gpib::backend::hislip::HislipSession;
use gpib::hislip::{self, kind};
use gpib::{Error, ErrorKind};

/// The servers stop by themselves after this long.
const PEER_LIFETIME: Duration = Duration::from_secs(20);
/// The timeout the clients use.
const TIMEOUT: Duration = Duration::from_secs(1);
/// A typed timeout must come within this (3x the timeout: the machine is shared).
const BOUND: Duration = Duration::from_secs(3);
/// The answer of a [`Hostile::Drip`] server.
const DRIP_ANSWER: &[u8] = b"DRIP,DRIP,DRIP,DRIP\n";

/// What a fake server does wrong.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Hostile {
    /// Accepts the connections and says nothing.
    Silent,
    /// Floods AsyncServiceRequest instead of answering AsyncMaximumMessageSize (the
    /// last step of a connect).
    FloodAtConnect,
    /// Connects normally and answers queries; from then on floods AsyncServiceRequest
    /// on the asynchronous channel and answers nothing there.
    FloodAsync,
    /// Answers a query with stale answers (message ids of earlier messages) and
    /// AsyncServiceRequest on the synchronous channel, without end, never the answer.
    FloodSync,
    /// Answers a query with a header at once and its payload a byte every 200 ms.
    Drip,
    /// Reads the synchronous channel's data 1 KiB every 50 ms.
    SlowReader,
}

/// Writes AsyncServiceRequest messages on `s`, 64 every millisecond, until `end` or
/// until the client goes away.
fn flood_srq(s: &mut TcpStream, end: Instant) {
    let one = hislip::encode(kind::ASYNC_SERVICE_REQUEST, 0x40, 0, &[]);
    let batch: Vec<u8> = one.iter().copied().cycle().take(one.len() * 64).collect();
    while Instant::now() < end {
        if s.write_all(&batch).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The next message from the client, waiting until `end`; `None` when it went away.
fn next(s: &mut TcpStream, end: Instant) -> Option<hislip::Message> {
    while Instant::now() < end {
        match hislip::read_message(s, 64 << 20) {
            Ok(m) => return Some(m),
            Err(e) if e.is_timeout() => continue,
            Err(_) => return None,
        }
    }
    None
}

/// Serves the synchronous channel (its Initialize read).
fn serve_sync(mut s: TcpStream, end: Instant, how: Hostile) {
    let _ = hislip::write_message(&mut s, kind::INITIALIZE_RESPONSE, 0, 0x0100_0001, &[]);
    if how == Hostile::SlowReader {
        let mut piece = [0u8; 1024];
        while Instant::now() < end {
            match s.read(&mut piece) {
                Ok(0) => return,
                Ok(_) => std::thread::sleep(Duration::from_millis(50)),
                Err(_) => {}
            }
        }
        return;
    }
    while let Some(m) = next(&mut s, end) {
        if m.header.kind != kind::DATA_END {
            continue;
        }
        let id = m.header.param;
        match how {
            Hostile::FloodSync => {
                let mut batch = Vec::new();
                for _ in 0..32 {
                    batch.extend(hislip::encode(
                        kind::DATA_END,
                        0,
                        id.wrapping_sub(2),
                        b"OLD\n",
                    ));
                    batch.extend(hislip::encode(kind::ASYNC_SERVICE_REQUEST, 0x40, 0, &[]));
                }
                while Instant::now() < end {
                    if s.write_all(&batch).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            Hostile::Drip => {
                let h = hislip::Header::new(kind::DATA_END, 0, id, DRIP_ANSWER.len() as u64);
                if s.write_all(&h.encode()).is_err() {
                    return;
                }
                for &b in DRIP_ANSWER {
                    if Instant::now() >= end || s.write_all(&[b]).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
            _ => {
                let answer = hislip::encode(kind::DATA_END, 0, id, b"FAKE,HISLIP,0,1\n");
                if s.write_all(&answer).is_err() {
                    return;
                }
            }
        }
    }
}

/// Serves the asynchronous channel.
fn serve_async(mut s: TcpStream, end: Instant, how: Hostile) {
    let _ = hislip::write_message(&mut s, kind::ASYNC_INITIALIZE_RESPONSE, 0, 0x4641_4b45, &[]);
    while let Some(m) = next(&mut s, end) {
        let reply = match m.header.kind {
            kind::ASYNC_MAXIMUM_MESSAGE_SIZE if how == Hostile::FloodAtConnect => {
                return flood_srq(&mut s, end)
            }
            kind::ASYNC_MAXIMUM_MESSAGE_SIZE => hislip::encode(
                kind::ASYNC_MAXIMUM_MESSAGE_SIZE_RESPONSE,
                0,
                0,
                &(1u64 << 20).to_be_bytes(),
            ),
            _ if how == Hostile::FloodAsync => return flood_srq(&mut s, end),
            kind::ASYNC_STATUS_QUERY => hislip::encode(kind::ASYNC_STATUS_RESPONSE, 0, 0, &[]),
            _ => continue,
        };
        if s.write_all(&reply).is_err() {
            return;
        }
        if how == Hostile::FloodAsync {
            // Connected: the flood starts, whatever the client asks.
            return flood_srq(&mut s, end);
        }
    }
}

/// A fake HiSLIP server on 127.0.0.1 that misbehaves as `how` says; it serves the
/// connections that come (the two channels of a session, and the probe a
/// [`gpib::backend::hislip::HislipBoard`] makes) until [`PEER_LIFETIME`] is over.
fn server(how: Hostile) -> (SocketAddr, JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = l.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        l.set_nonblocking(true).unwrap();
        let end = Instant::now() + PEER_LIFETIME;
        let mut conns = Vec::new();
        while Instant::now() < end {
            let Ok((mut s, _)) = l.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            s.set_nonblocking(false).unwrap();
            s.set_read_timeout(Some(Duration::from_millis(100)))
                .unwrap();
            s.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
            conns.push(std::thread::spawn(move || {
                let Some(first) = next(&mut s, end) else {
                    return;
                };
                match (how, first.header.kind) {
                    (Hostile::Silent, _) => while next(&mut s, end).is_some() {},
                    (_, kind::INITIALIZE) => serve_sync(s, end, how),
                    (_, kind::ASYNC_INITIALIZE) => serve_async(s, end, how),
                    _ => {}
                }
            }));
        }
        for c in conns {
            let _ = c.join();
        }
    });
    (at, t)
}

/// Runs `f` on a thread and fails (instead of hanging the run) if it takes longer than
/// `limit` of wall time.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(_) => panic!("operation hung: no answer within {limit:?} of wall time"),
    }
}

/// Opens `hislip0` on the server `at` through its resource string, with [`TIMEOUT`].
fn device(at: SocketAddr) -> gpib::Device {
    let mut d = gpib::open(&format!("TCPIP::127.0.0.1::hislip0,{}::INSTR", at.port())).unwrap();
    d.set_timeout(Some(TIMEOUT.into()));
    d
}

/// Runs `op` on a device of the server `how` (within a wall-time guard); its error
/// and how long it took.
fn fails(
    how: Hostile,
    op: impl FnOnce(&gpib::Device) -> gpib::Result<()> + Send + 'static,
) -> (Error, Duration) {
    let (at, _server) = server(how);
    within(Duration::from_secs(15), move || {
        let dev = device(at);
        let t0 = Instant::now();
        let e = op(&dev).expect_err("the hostile server's operation succeeded");
        (e, t0.elapsed())
    })
}

/// Asserts `e` is a typed timeout that came within [`BOUND`].
fn timed_out(e: &Error, took: Duration) {
    assert!(matches!(e, Error::Timeout { .. }), "{e:?}");
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(took < BOUND, "{took:?}: {e}");
}

// Issue 28 item 1: a server that floods AsyncServiceRequest while the client waits
// for the end of its connect (AsyncMaximumMessageSizeResponse) kept `gpib-diag query
// ... --timeout 2` waiting for ever: every message restarted the wait.
#[test]
fn hislip_a_service_request_flood_at_connect_is_a_timeout() {
    let (e, took) = fails(Hostile::FloodAtConnect, |d| d.query("*IDN?").map(drop));
    timed_out(&e, took);
}

// Issue 28 item 1: the same flood in answer to a status query (what a read makes when
// no query's answer is due) kept the read waiting for ever.
#[test]
fn hislip_a_service_request_flood_in_a_status_query_is_a_timeout() {
    let (e, took) = fails(Hostile::FloodAsync, |d| {
        assert_eq!(d.query("*IDN?").unwrap(), "FAKE,HISLIP,0,1");
        d.serial_poll().map(drop)
    });
    timed_out(&e, took);
    let (e, took) = fails(Hostile::FloodAsync, |d| {
        d.write_str("*TRG")?;
        let mut buf = [0u8; 64];
        d.read(&mut buf).map(drop)
    });
    timed_out(&e, took);
}

// Issue 28 item 1: SRQ on a HiSLIP board reads the service requests that came, then
// the status byte: a flood of them kept it taking them for ever.
#[test]
fn hislip_srq_under_a_service_request_flood_is_bounded() {
    let (at, _server) = server(Hostile::FloodAsync);
    let (r, took) = within(Duration::from_secs(15), move || {
        let dev = device(at);
        dev.query("*IDN?").unwrap();
        let t0 = Instant::now();
        let r = dev.bus().srq();
        (r, t0.elapsed())
    });
    assert!(took < BOUND, "{took:?}: {r:?}");
    if let Err(e) = r {
        timed_out(&e, took);
    }
}

// Issue 28 item 1: every asynchronous call of a session (locks, clear, remote/local)
// is bounded by its deadline under the flood.
#[test]
fn hislip_every_asynchronous_call_is_bounded_under_a_flood() {
    type Op = fn(&mut HislipSession) -> gpib::Result<()>;
    let ops: [(&str, Op); 6] = [
        ("status byte", |s| s.status_byte().map(drop)),
        ("clear", |s| s.clear()),
        ("lock", |s| s.lock("", Duration::from_millis(500)).map(drop)),
        ("unlock", |s| s.unlock().map(drop)),
        ("lock info", |s| s.lock_info().map(drop)),
        ("remote/local", |s| {
            s.remote_local(hislip::remote_local::JUST_GTL)
        }),
    ];
    for (name, op) in ops {
        let (at, _server) = server(Hostile::FloodAsync);
        let (e, took) = within(Duration::from_secs(15), move || {
            let mut s = HislipSession::connect("127.0.0.1", at.port(), "hislip0", TIMEOUT).unwrap();
            let t0 = Instant::now();
            let e = op(&mut s).expect_err(name);
            (e, t0.elapsed())
        });
        // A lock waits its own timeout (0.5 s) on top of the session's.
        let bound = BOUND + Duration::from_millis(500);
        assert!(matches!(e, Error::Timeout { .. }), "{name}: {e:?}");
        assert!(took < bound, "{name}: {took:?}: {e}");
    }
}

// Issue 28 item 1: answers to earlier messages and service requests on the
// synchronous channel, without end, are skipped only until the read's deadline.
#[test]
fn hislip_stale_answers_without_end_are_a_timeout() {
    let (e, took) = fails(Hostile::FloodSync, |d| d.query("*IDN?").map(drop));
    timed_out(&e, took);
}

// Issue 28 item 1: an answer that drips (a byte every 200 ms) times out with the
// timeout, and the read says how many bytes it got; the session then says its framing
// is lost instead of reading the rest as a new message.
#[test]
fn hislip_a_dripping_answer_times_out_with_the_bytes_it_got() {
    let (at, _server) = server(Hostile::Drip);
    let (e, took, next) = within(Duration::from_secs(15), move || {
        let dev = device(at);
        dev.write_str("*IDN?").unwrap();
        let mut buf = [0u8; 64];
        let t0 = Instant::now();
        let e = dev.read(&mut buf).unwrap_err();
        let took = t0.elapsed();
        let got = e.transferred().unwrap_or(0);
        assert_eq!(&buf[..got], &DRIP_ANSWER[..got], "{e}");
        let t1 = Instant::now();
        let next = dev.query("*IDN?").unwrap_err();
        assert!(t1.elapsed() < Duration::from_millis(500), "{next}");
        (e, took, next)
    });
    timed_out(&e, took);
    let got = e.transferred().unwrap();
    assert!(got > 0 && got < DRIP_ANSWER.len(), "{got}: {e}");
    assert!(next.to_string().contains("framing is lost"), "{next}");
}

// Issue 28 item 1: a server that reads slowly kept a long write going for ever: the
// socket's write timeout restarted with every piece it took.
#[test]
fn hislip_a_slow_reader_makes_a_write_time_out() {
    let (e, took) = fails(Hostile::SlowReader, |d| d.write(&vec![b'x'; 32 << 20]));
    timed_out(&e, took);
    let sent = e.transferred().unwrap();
    assert!(sent < 32 << 20, "{sent}: {e}");
}

// Issue 28 item 1: a server that accepts and says nothing is a typed timeout.
#[test]
fn hislip_a_silent_server_is_a_typed_timeout() {
    let (e, took) = fails(Hostile::Silent, |d| d.query("*IDN?").map(drop));
    timed_out(&e, took);
    assert!(!e.to_string().contains("os error"), "{e}");
}
