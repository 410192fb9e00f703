//! Misbehaving network peers on 127.0.0.1 for `gpib-diag` to talk to: each serves
//! one connection, bounded in what it sends and how long it runs.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use gpib::backend::vxi11::proto::{self, err, procs, reason};
use gpib::rpc::msg::{self, AcceptStat};
use gpib::rpc::record::{self, Limits};

/// The peers stop by themselves after this long.
const LIFETIME: Duration = Duration::from_secs(40);
/// Most bytes a streaming peer sends.
const MAX_BYTES: usize = 200 << 20;

/// Serves one connection with `serve` (given the time to be done by), on a thread.
fn peer(serve: impl FnOnce(TcpStream, Instant) + Send + 'static) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = l.local_addr().unwrap();
    std::thread::spawn(move || {
        l.set_nonblocking(true).unwrap();
        let end = Instant::now() + LIFETIME;
        while Instant::now() < end {
            if let Ok((s, _)) = l.accept() {
                s.set_nonblocking(false).unwrap();
                s.set_read_timeout(Some(Duration::from_millis(100)))
                    .unwrap();
                s.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
                return serve(s, end);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    at
}

/// A Prologix adapter that answers `++ver` and streams `x` without END (up to
/// 200 MiB) for every `++read`.
pub fn streaming_adapter() -> SocketAddr {
    peer(|mut s, end| {
        let mut input = s.try_clone().unwrap();
        let (mut line, mut buf, chunk) = (Vec::new(), [0u8; 4096], vec![b'x'; 64 * 1024]);
        while Instant::now() < end {
            let n = match input.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => n,
                Err(_) => continue,
            };
            for &b in &buf[..n] {
                if b != b'\n' {
                    line.push(b);
                    continue;
                }
                let l = String::from_utf8_lossy(&line).into_owned();
                line.clear();
                if l == "++ver" && s.write_all(b"fake adapter\r\n").is_err() {
                    return;
                }
                if l.split_whitespace().next() == Some("++read") {
                    let mut sent = 0;
                    while sent < MAX_BYTES && Instant::now() < end {
                        if s.write_all(&chunk).is_err() {
                            return;
                        }
                        sent += chunk.len();
                    }
                }
            }
        }
    })
}

/// A VXI-11 core channel that creates links and takes writes at once, but sends
/// each `device_read` reply one byte every 100 ms.
pub fn dripping_gateway() -> SocketAddr {
    peer(|mut s, end| {
        let mut reader = s.try_clone().unwrap();
        let mut rec = Vec::new();
        while Instant::now() < end {
            match record::read_record(&mut reader, Limits::DEFAULT, &mut rec) {
                Ok(()) => {}
                Err(e) if e.is_timeout() => continue,
                Err(_) => return,
            }
            let Ok((h, args)) = msg::decode_call(&rec) else {
                return;
            };
            let (results, drip) = match h.proc_ {
                procs::CREATE_LINK => {
                    let r = proto::CreateLinkResp {
                        error: err::NONE,
                        lid: 1,
                        abort_port: 0,
                        max_recv_size: 1 << 20,
                    };
                    (r.encode(), false)
                }
                procs::DEVICE_WRITE => {
                    let n = proto::Write::decode(args, 1 << 20).map_or(0, |w| w.data.len());
                    (proto::encode_error_value(err::NONE, n as u32), false)
                }
                procs::DEVICE_READ => (
                    proto::encode_read_resp(err::NONE, reason::END, b"DRIP\n"),
                    true,
                ),
                _ => (proto::encode_error(err::NONE), false),
            };
            let reply = msg::encode_reply(h.xid, AcceptStat::Success, &results);
            let mut wire = Vec::new();
            record::write_record(&mut wire, &reply, 1 << 20).unwrap();
            let step = if drip { 1 } else { wire.len() };
            for piece in wire.chunks(step) {
                if Instant::now() >= end || s.write_all(piece).is_err() {
                    return;
                }
                if drip {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    })
}
