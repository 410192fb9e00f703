//! The VXI-11 gateway spoken to as gateway clients do (python-vxi11's
//! `InterfaceDevice`, EPICS asyn's drvVxi11): raw RPC calls on loopback.

use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use super::{ServeOptions, Server};
use crate::backend::vxi11::proto::{self, docmd, err, procs};
use crate::rpc::msg::{self, CallHeader};
use crate::rpc::record::{self, Limits};
use crate::Bus;

const LIMITS: Limits = Limits {
    max_record: 1 << 21,
    max_fragments: 1000,
};

/// One RPC connection to `prog`.
pub(super) struct Rpc {
    s: TcpStream,
    prog: u32,
    xid: u32,
}

impl Rpc {
    pub(super) fn connect(at: SocketAddr, prog: u32) -> Self {
        let s = TcpStream::connect(at).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Self { s, prog, xid: 1 }
    }

    pub(super) fn call(&mut self, proc_: u32, args: &[u8]) -> Vec<u8> {
        let rec = self.reply(proc_, args);
        msg::decode_reply(&rec, self.xid).unwrap().to_vec()
    }

    /// Makes a call; returns the reply's record, whatever it says.
    fn reply(&mut self, proc_: u32, args: &[u8]) -> Vec<u8> {
        self.xid += 1;
        let vers = if self.prog == proto::portmap::PROG {
            proto::portmap::VERS
        } else {
            proto::VERSION
        };
        let h = CallHeader {
            xid: self.xid,
            prog: self.prog,
            vers,
            proc_,
        };
        record::write_record(&mut self.s, &msg::encode_call(h, args), 1 << 20).unwrap();
        let mut rec = Vec::new();
        record::read_record(&mut self.s, LIMITS, &mut rec).unwrap();
        rec
    }
}

pub(super) fn served() -> Server {
    let bus = Bus::new(crate::sim::bench().board(0).unwrap());
    Server::start(bus, ServeOptions::ephemeral()).unwrap()
}

/// A core connection with a link to `name`.
pub(super) fn link(srv: &Server, name: &str) -> (Rpc, u32) {
    let mut c = Rpc::connect(srv.vxi11_addr().unwrap(), proto::DEVICE_CORE);
    let r = create_link(&mut c, name);
    assert_eq!(r.error, err::NONE, "create_link {name}");
    (c, r.lid)
}

/// `create_link` of `name` on `c`.
pub(super) fn create_link(c: &mut Rpc, name: &str) -> proto::CreateLinkResp {
    let r = c.call(
        procs::CREATE_LINK,
        &proto::CreateLink {
            client_id: 1,
            lock_device: false,
            lock_timeout: 0,
            device: name.as_bytes().to_vec(),
        }
        .encode(),
    );
    proto::CreateLinkResp::decode(&r).unwrap()
}

fn docmd_call(c: &mut Rpc, lid: u32, cmd: i32, datasize: i32, data: &[u8]) -> (u32, Vec<u8>) {
    let p = proto::Docmd {
        lid,
        flags: 0,
        io_timeout: 2000,
        lock_timeout: 0,
        cmd,
        network_order: true,
        datasize,
        data_in: data,
    };
    let r = c.call(procs::DEVICE_DOCMD, &p.encode());
    proto::decode_docmd_resp(&r, 4096).unwrap()
}

fn status(c: &mut Rpc, lid: u32, item: u16) -> (u32, Vec<u8>) {
    docmd_call(c, lid, docmd::BUS_STATUS, 2, &item.to_be_bytes())
}

// Gateway item 1: bus status items 4 to 7 answered error 5; asyn asks for 4 and 5
// when it connects and gives up.
#[test]
fn serve_vxi11_bus_status_answers_every_item() {
    let srv = served();
    let (mut c, lid) = link(&srv, "gpib0");
    for item in 1..=8u16 {
        let (code, data) = status(&mut c, lid, item);
        assert_eq!(code, err::NONE, "item {item}");
        assert_eq!(data.len(), 2, "item {item}: {data:?}");
    }
    assert_eq!(status(&mut c, lid, 4).1, [0, 1], "system controller");
    assert_eq!(status(&mut c, lid, 5).1, [0, 1], "controller in charge");
    assert_eq!(status(&mut c, lid, 0).0, err::PARAMETER);
    assert_eq!(status(&mut c, lid, 9).0, err::PARAMETER);
    srv.stop();
}

// Gateway item 2: REN control answered no data; python-vxi11's `set_ren` unpacks
// the 2-byte echo of its argument.
#[test]
fn serve_vxi11_ren_control_echoes_its_argument() {
    let srv = served();
    let (mut c, lid) = link(&srv, "gpib0");
    for v in [1u16, 0] {
        let (code, data) = docmd_call(&mut c, lid, docmd::REN_CONTROL, 2, &v.to_be_bytes());
        assert_eq!((code, data), (err::NONE, v.to_be_bytes().to_vec()));
        assert_eq!(status(&mut c, lid, 1).1, v.to_be_bytes(), "REN now");
    }
    srv.stop();
}

// Gateway item 3: ATN control and bus address answered error 8. ATN control echoes
// (python-vxi11's `find_listeners` sends the addresses, releases ATN and reads NDAC);
// bus address sets the controller's address and echoes it as 4 bytes.
#[test]
fn serve_vxi11_atn_control_and_bus_address_work() {
    let srv = served();
    let (mut c, lid) = link(&srv, "gpib0");
    // UNL, UNT, board talks, 22 listens: a listener is there.
    let cmd = [0x3F, 0x5F, 0x40, 0x20 | 22];
    let (code, data) = docmd_call(&mut c, lid, docmd::SEND_COMMAND, 1, &cmd);
    assert_eq!(
        (code, data),
        (err::NONE, cmd.to_vec()),
        "send command echoes"
    );
    let (code, data) = docmd_call(&mut c, lid, docmd::ATN_CONTROL, 2, &[0, 0]);
    assert_eq!((code, data), (err::NONE, vec![0, 0]), "ATN off");
    assert_eq!(status(&mut c, lid, 3).1, [0, 1], "NDAC held by device 22");
    assert_eq!(
        status(&mut c, lid, 6).1,
        [0, 1],
        "the board was addressed to talk"
    );
    let (code, data) = docmd_call(&mut c, lid, docmd::ATN_CONTROL, 2, &[0, 1]);
    assert_eq!((code, data), (err::NONE, vec![0, 1]), "ATN on");
    let (code, data) = docmd_call(&mut c, lid, docmd::BUS_ADDRESS, 4, &5u32.to_be_bytes());
    assert_eq!((code, data), (err::NONE, 5u32.to_be_bytes().to_vec()));
    assert_eq!(status(&mut c, lid, 8).1, [0, 5], "bus address now");
    let (code, _) = docmd_call(&mut c, lid, docmd::BUS_ADDRESS, 4, &31u32.to_be_bytes());
    assert_eq!(code, err::PARAMETER);
    // Passing control away: the gateway is system controller and keeps control.
    let (code, _) = docmd_call(&mut c, lid, docmd::PASS_CONTROL, 4, &22u32.to_be_bytes());
    assert_eq!(code, err::NOT_SUPPORTED);
    assert_eq!(
        status(&mut c, lid, 5).1,
        [0, 1],
        "still controller in charge"
    );
    srv.stop();
}

// Gateway item 4: `device_abort` on an idle link answered 0 and made the next,
// unrelated `device_write` fail with error 23. With nothing in flight, an abort
// leaves the next call alone.
#[test]
fn serve_vxi11_abort_on_an_idle_link_leaves_the_next_call_alone() {
    let srv = served();
    let (mut c, lid) = link(&srv, "gpib0,22");
    let mut a = Rpc::connect(srv.abort_addr().unwrap(), proto::DEVICE_ASYNC);
    let r = a.call(procs::DEVICE_ABORT, &lid.to_be_bytes());
    assert_eq!(proto::decode_error(&r).unwrap(), err::NONE);
    let w = proto::Write {
        lid,
        io_timeout: 2000,
        lock_timeout: 0,
        flags: proto::flags::END,
        data: b"*IDN?\n",
    };
    let r = c.call(procs::DEVICE_WRITE, &w.encode());
    assert_eq!(proto::decode_error_value(&r).unwrap(), (err::NONE, 6));
    srv.stop();
}

// What an abort is for: a call waiting for another link's lock ends with error 23.
#[test]
fn serve_vxi11_abort_ends_a_lock_wait_in_flight() {
    let srv = served();
    let (mut holder, hl) = link(&srv, "gpib0,22");
    let lock = proto::Lock {
        lid: hl,
        flags: 0,
        lock_timeout: 0,
    };
    let r = holder.call(procs::DEVICE_LOCK, &lock.encode());
    assert_eq!(proto::decode_error(&r).unwrap(), err::NONE);
    let (mut c, lid) = link(&srv, "gpib0,22");
    let abort_at = srv.abort_addr().unwrap();
    let aborter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        let mut a = Rpc::connect(abort_at, proto::DEVICE_ASYNC);
        proto::decode_error(&a.call(procs::DEVICE_ABORT, &lid.to_be_bytes())).unwrap()
    });
    let t0 = std::time::Instant::now();
    let w = proto::Write {
        lid,
        io_timeout: 2000,
        lock_timeout: 8000,
        flags: proto::flags::END | proto::flags::WAITLOCK,
        data: b"*IDN?\n",
    };
    let r = c.call(procs::DEVICE_WRITE, &w.encode());
    assert_eq!(proto::decode_error_value(&r).unwrap().0, err::ABORT);
    assert!(t0.elapsed() < Duration::from_secs(6), "{:?}", t0.elapsed());
    assert_eq!(aborter.join().unwrap(), err::NONE);
    // The abort was for that call only.
    let w = proto::Write {
        flags: proto::flags::END,
        lock_timeout: 0,
        ..w
    };
    let r = c.call(procs::DEVICE_WRITE, &w.encode());
    assert_eq!(proto::decode_error_value(&r).unwrap().0, err::LOCKED);
    srv.stop();
}

// Gateway item 5: accepted sockets had no TCP keepalive, so with no idle timeout a
// dead peer's connection would never be reaped.
#[test]
fn serve_accepted_sockets_have_tcp_keepalive() {
    let srv = served();
    let (mut c, _) = link(&srv, "gpib0");
    let _ = status(&mut c, 1, 1);
    let live = srv.registry.live.lock().unwrap();
    assert!(!live.is_empty());
    for s in live.values() {
        assert!(
            socket2::SockRef::from(s).keepalive().unwrap(),
            "no keepalive"
        );
    }
    drop(live);
    srv.stop();
}

fn served_with(opts: ServeOptions) -> Server {
    let bus = Bus::new(crate::sim::bench().board(0).unwrap());
    Server::start(bus, opts).unwrap()
}

// Gateway item 5: idle connections were closed after 60 s by default; VISA clients
// keep sessions for hours and do not reconnect. No idle timeout by default: a
// connection silent for longer than a message may take is still served.
#[test]
fn serve_silent_connections_stay_open_by_default() {
    assert_eq!(ServeOptions::ephemeral().idle_timeout, None);
    assert_eq!(ServeOptions::default().idle_timeout, None);
    let srv = served_with(ServeOptions {
        message_timeout: Duration::from_millis(300),
        ..ServeOptions::ephemeral()
    });
    let (mut c, lid) = link(&srv, "gpib0");
    std::thread::sleep(Duration::from_millis(900));
    assert_eq!(status(&mut c, lid, 4), (err::NONE, vec![0, 1]));
    srv.stop();
}

// With no idle timeout a record must still arrive whole within the message timeout
// of its first byte: a client trickling bytes cannot hold a connection.
#[test]
fn serve_a_trickled_record_is_cut_off_without_an_idle_timeout() {
    use std::io::{Read, Write};
    let srv = served_with(ServeOptions {
        message_timeout: Duration::from_millis(500),
        ..ServeOptions::ephemeral()
    });
    let mut s = TcpStream::connect(srv.vxi11_addr().unwrap()).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let t0 = std::time::Instant::now();
    let mut rec = (0x8000_0000u32 | 64).to_be_bytes().to_vec();
    rec.extend_from_slice(&[0u8; 30]);
    let mut closed = None;
    'send: for b in rec {
        if s.write_all(&[b]).is_err() {
            closed = Some(t0.elapsed());
            break;
        }
        for _ in 0..4 {
            match s.read(&mut [0u8; 64]) {
                Ok(0) => {
                    closed = Some(t0.elapsed());
                    break 'send;
                }
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                    closed = Some(t0.elapsed());
                    break 'send;
                }
                _ => {}
            }
        }
    }
    let closed = closed.expect("the connection outlived 34 trickled bytes (about 7 s)");
    assert!(closed < Duration::from_secs(4), "{closed:?}");
    srv.stop();
}

/// Connects to `at` `n` times one after another, each time making one call (`proc_`
/// of `prog`) and closing; returns the slowest connect and the slowest connect plus
/// reply.
fn connect_burst(at: SocketAddr, prog: u32, proc_: u32, n: usize) -> (Duration, Duration) {
    let (mut connect, mut whole) = (Duration::ZERO, Duration::ZERO);
    for i in 0..n {
        let t0 = std::time::Instant::now();
        let s = TcpStream::connect_timeout(&at, Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("connect {i}: {e}"));
        connect = connect.max(t0.elapsed());
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut c = Rpc { s, prog, xid: 1 };
        let rec = c.reply(proc_, &[]);
        assert_eq!(msg::peek_xid(&rec), Some(c.xid), "reply {i}");
        whole = whole.max(t0.elapsed());
    }
    (connect, whole)
}

fn served_with_portmap() -> Server {
    served_with(ServeOptions {
        portmap_port: Some(0),
        ..ServeOptions::ephemeral()
    })
}

// Gateway item 6: in a burst of connections, every connect succeeds and is answered
// (the portmapper and the VXI-11 core channel).
#[test]
fn serve_a_thousand_sequential_connects_all_succeed() {
    let srv = served_with_portmap();
    connect_burst(srv.portmap_addr().unwrap(), proto::portmap::PROG, 0, 1000);
    connect_burst(srv.vxi11_addr().unwrap(), proto::DEVICE_CORE, 0, 1000);
    assert_eq!(srv.stats().refused, 0);
    srv.stop();
}

/// Benchmark, not a timed test: the slowest of 1,000 sequential connects on
/// loopback (`cargo test -p gpib --features sim,serve --release -- --ignored
/// serve_connect_burst_figures --nocapture`).
#[test]
#[ignore = "a benchmark: prints figures"]
fn serve_connect_burst_figures() {
    let srv = served_with_portmap();
    for (what, at, prog) in [
        (
            "portmapper",
            srv.portmap_addr().unwrap(),
            proto::portmap::PROG,
        ),
        ("vxi11 core", srv.vxi11_addr().unwrap(), proto::DEVICE_CORE),
    ] {
        let (c, w) = connect_burst(at, prog, 0, 1000);
        println!(
            "{what}: slowest of 1000 connects {:.3} ms, connect + first reply {:.3} ms",
            c.as_secs_f64() * 1e3,
            w.as_secs_f64() * 1e3
        );
    }
    srv.stop();
}

/// pyvisa-py's Prologix session writes a query and its `++read` as two segments with
/// Nagle on: the second waits for the first's ACK, which the server must send at once
/// (a delayed ACK held each query about 40 ms). The server now ACKs apart only what
/// it did not answer; an answered request's ACK rides on the answer.
#[test]
fn serve_prologix_acks_a_query_sent_apart_from_its_read_at_once() {
    use std::io::{Read, Write};
    let srv = served_with(ServeOptions {
        default_address: Some(crate::Address::new(22, None).unwrap()),
        ..ServeOptions::ephemeral()
    });
    let mut s = TcpStream::connect(srv.prologix_addr().unwrap()).unwrap();
    s.set_nodelay(false).unwrap(); // Nagle on, as pyvisa-py's socket
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"++eot_enable 1\n++eot_char 4\n").unwrap();
    let mut query = || {
        s.write_all(b"*IDN?\n").unwrap();
        s.write_all(b"++read eoi\n").unwrap();
        let mut got = Vec::new();
        let mut b = [0u8; 64];
        while got.last() != Some(&4) {
            let n = s.read(&mut b).unwrap();
            assert!(n > 0, "the server closed the connection");
            got.extend_from_slice(&b[..n]);
        }
        assert!(got.starts_with(b"SIMULATED,SCPI-DMM"), "{got:?}");
    };
    query();
    let t0 = std::time::Instant::now();
    for _ in 0..20 {
        query();
    }
    // 20 queries held by delayed ACKs take 0.8 s at least; served at once, about 2 ms.
    let took = t0.elapsed();
    assert!(took < Duration::from_millis(400), "{took:?} for 20 queries");
    drop(s);
    srv.stop();
}
