//! The HiSLIP gateway, message by message: through the project's client
//! ([`HislipSession`]) and raw sockets for what no client sends.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::{ServeOptions, Server};
use crate::backend::hislip::HislipSession;
use crate::hislip::{self, fatal, kind, lock, remote_local, Header};
use crate::{Address, Bus};

const IDN: &[u8] = b"SIMULATED,SCPI-DMM,0,1.0\n";
const T: Duration = Duration::from_secs(5);

fn served() -> Server {
    served_on(crate::sim::bench())
}

/// The gateway over `host`'s board 0 (device 22 at start).
fn served_on(host: crate::sim::SimHost) -> Server {
    let bus = Bus::new(host.board(0).unwrap());
    let opts = ServeOptions {
        default_address: Some(Address::new(22, None).unwrap()),
        ..ServeOptions::ephemeral()
    };
    Server::start(bus, opts).unwrap()
}

fn session(srv: &Server) -> HislipSession {
    let a = srv.hislip_addr().unwrap();
    HislipSession::connect(&a.ip().to_string(), a.port(), "hislip0", T).unwrap()
}

/// A raw connection, with a read timeout.
fn raw(at: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(at).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    s
}

fn read(s: &mut TcpStream) -> hislip::Message {
    hislip::read_message(s, 1 << 20).unwrap()
}

#[test]
fn hislip_initialize_gives_a_session_in_synchronized_mode() {
    let srv = served();
    let mut s = raw(srv.hislip_addr().unwrap());
    let init = hislip::encode(
        kind::INITIALIZE,
        0,
        hislip::initialize_param(0x0100, *b"XX"),
        b"hislip0",
    );
    s.write_all(&init).unwrap();
    let m = read(&mut s);
    assert_eq!(m.header.kind, kind::INITIALIZE_RESPONSE);
    assert_eq!(m.header.control, 0, "synchronized mode");
    assert_eq!(m.header.param >> 16, 0x0100, "version 1.0");
    let id = m.header.param & 0xffff;
    let mut a = raw(srv.hislip_addr().unwrap());
    a.write_all(&hislip::encode(kind::ASYNC_INITIALIZE, 0, id, &[]))
        .unwrap();
    let m = read(&mut a);
    assert_eq!(m.header.kind, kind::ASYNC_INITIALIZE_RESPONSE);
    assert_eq!(m.header.param, super::hislip::VENDOR_ID);
    // A second asynchronous channel for the same session is refused.
    let mut b = raw(srv.hislip_addr().unwrap());
    b.write_all(&hislip::encode(kind::ASYNC_INITIALIZE, 0, id, &[]))
        .unwrap();
    let m = read(&mut b);
    assert_eq!(
        (m.header.kind, m.header.control),
        (kind::FATAL_ERROR, fatal::BAD_INITIALIZATION)
    );
}

#[test]
fn hislip_sub_addresses_name_devices() {
    let srv = served();
    let a = srv.hislip_addr().unwrap();
    let host = a.ip().to_string();
    let mut s = HislipSession::connect(&host, a.port(), "hislip_gpib0_22", T).unwrap();
    assert_eq!(s.query(b"*IDN?\n").unwrap(), IDN);
    for bad in [
        "hislip_gpib0_31",
        "hislip_gpib7_22",
        "inst0",
        "hislip_gpib0",
    ] {
        let e = HislipSession::connect(&host, a.port(), bad, T).unwrap_err();
        assert!(e.to_string().contains("fatal error"), "{bad}: {e}");
    }
}

#[test]
fn hislip_data_end_query_is_answered_with_its_message_id() {
    let srv = served();
    let mut s = session(&srv);
    assert_eq!(s.query(b"*IDN?\n").unwrap(), IDN);
    assert_eq!(s.query(b"*IDN?\n").unwrap(), IDN);
    // A message in several Data pieces, the query at the end.
    s.set_max_message_size(1 << 20).unwrap();
    let mut raw_sync = raw(srv.hislip_addr().unwrap());
    let init = hislip::encode(
        kind::INITIALIZE,
        0,
        hislip::initialize_param(0x0100, *b"XX"),
        b"hislip0",
    );
    raw_sync.write_all(&init).unwrap();
    let id = read(&mut raw_sync).header.param & 0xffff;
    let mut raw_async = raw(srv.hislip_addr().unwrap());
    raw_async
        .write_all(&hislip::encode(kind::ASYNC_INITIALIZE, 0, id, &[]))
        .unwrap();
    read(&mut raw_async);
    raw_sync
        .write_all(&hislip::encode(kind::DATA, 0, 0xffff_ff00, b"*CLS;"))
        .unwrap();
    raw_sync
        .write_all(&hislip::encode(kind::DATA_END, 0, 0xffff_ff02, b"*IDN?\n"))
        .unwrap();
    let m = read(&mut raw_sync);
    assert_eq!(
        (m.header.kind, m.header.param),
        (kind::DATA_END, 0xffff_ff02)
    );
    assert_eq!(m.payload, IDN);
}

#[test]
fn hislip_a_large_block_goes_both_ways_in_pieces() {
    let srv = served();
    let mut s = session(&srv);
    s.set_max_message_size(4096).unwrap();
    let data: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
    let mut msg = b"DATA #6100000".to_vec();
    msg.extend_from_slice(&data);
    msg.push(b'\n');
    s.write(&msg).unwrap();
    assert_eq!(s.query(b"DATA:LEN?\n").unwrap(), b"100000\n");
    let back = s.query(b"DATA?\n").unwrap();
    assert_eq!(&back[..8], b"#6100000");
    assert_eq!(&back[8..100_008], &data[..]);
}

#[test]
fn hislip_maximum_message_size_is_negotiated() {
    let srv = served();
    let mut s = session(&srv);
    assert_eq!(s.set_max_message_size(1 << 30).unwrap(), 1 << 20);
    assert_eq!(s.max_message_size(), 1 << 20);
}

#[test]
fn hislip_lock_a_second_client_waits_for_the_release() {
    let srv = served();
    let mut a = session(&srv);
    let mut b = session(&srv);
    assert!(a.lock("", Duration::ZERO).unwrap());
    assert_eq!(a.lock_info().unwrap(), (true, 1));
    assert!(
        !b.lock("", Duration::from_millis(100)).unwrap(),
        "held by a"
    );
    let t0 = Instant::now();
    let waiter = std::thread::spawn(move || {
        let got = b.lock("", Duration::from_secs(5)).unwrap();
        (got, t0.elapsed(), b)
    });
    std::thread::sleep(Duration::from_millis(300));
    // a still uses the device while holding the lock.
    assert_eq!(a.query(b"*IDN?\n").unwrap(), IDN);
    assert_eq!(a.unlock().unwrap(), lock::SUCCESS);
    let (got, took, mut b) = waiter.join().unwrap();
    assert!(got && took >= Duration::from_millis(250), "{took:?}");
    assert_eq!(a.unlock().unwrap(), lock::ERROR, "a holds none now");
    assert_eq!(b.unlock().unwrap(), lock::SUCCESS);
    assert_eq!(b.lock_info().unwrap(), (false, 0));
    // Shared locks: two sessions with the same key hold it together.
    assert!(a.lock("k", Duration::ZERO).unwrap());
    assert!(b.lock("k", Duration::ZERO).unwrap());
    assert_eq!(b.lock_info().unwrap(), (false, 2));
    assert_eq!(a.unlock().unwrap(), lock::SUCCESS_SHARED);
    assert_eq!(b.unlock().unwrap(), lock::SUCCESS_SHARED);
}

#[test]
fn hislip_a_dropped_session_releases_its_lock() {
    let srv = served();
    let mut a = session(&srv);
    let mut b = session(&srv);
    assert!(a.lock("", Duration::ZERO).unwrap());
    drop(a);
    assert!(b.lock("", Duration::from_secs(2)).unwrap());
}

#[test]
fn hislip_device_clear_discards_the_answer() {
    let srv = served();
    let mut s = session(&srv);
    s.write(b"*IDN?\n").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert_ne!(
        s.status_byte().unwrap() & 0x10,
        0,
        "MAV: an answer not read"
    );
    s.clear().unwrap();
    assert_eq!(
        s.status_byte().unwrap() & 0x10,
        0,
        "MAV clear after the clear"
    );
    assert_eq!(s.query(b"*IDN?\n").unwrap(), IDN, "usable after");
}

#[test]
fn hislip_status_query_has_mav_until_the_answer_is_taken() {
    let srv = served();
    let mut s = session(&srv);
    assert_eq!(s.status_byte().unwrap() & 0x10, 0);
    s.write(b"*IDN?\n").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert_ne!(s.status_byte().unwrap() & 0x10, 0);
    assert_eq!(s.read().unwrap(), IDN);
    assert_eq!(s.status_byte().unwrap() & 0x10, 0);
}

#[test]
fn hislip_trigger_queues_a_reading_fetched_on_the_status_query() {
    let srv = served();
    let mut s = session(&srv);
    s.trigger().unwrap();
    let t0 = Instant::now();
    while s.status_byte().unwrap() & 0x10 == 0 {
        assert!(t0.elapsed() < T, "no MAV after a trigger");
        std::thread::sleep(Duration::from_millis(20));
    }
    let reading = String::from_utf8(s.read().unwrap()).unwrap();
    assert!(reading.trim().parse::<f64>().unwrap() > 0.0, "{reading:?}");
}

#[test]
fn hislip_srq_is_delivered_on_the_asynchronous_channel() {
    let srv = served();
    let mut s = session(&srv);
    assert_eq!(s.wait_srq(Duration::from_millis(50)).unwrap(), None);
    s.write(b"*CLS;*ESE 1;*SRE 32;*OPC\n").unwrap();
    let stb = s.wait_srq(T).unwrap().expect("AsyncServiceRequest");
    assert_eq!(stb & 0x60, 0x60, "RQS and ESB: {stb:#x}");
}

#[test]
fn hislip_remote_local_control_drives_ren() {
    let host = crate::sim::bench();
    let bus = Bus::new(host.board(0).unwrap());
    let opts = ServeOptions {
        default_address: Some(Address::new(22, None).unwrap()),
        ..ServeOptions::ephemeral()
    };
    let srv = Server::start(bus.clone(), opts).unwrap();
    let mut s = session(&srv);
    s.remote_local(remote_local::ENABLE_AND_GOTO_REMOTE)
        .unwrap();
    assert!(bus.lines().unwrap().ren);
    s.remote_local(remote_local::JUST_GTL).unwrap();
    s.remote_local(remote_local::DISABLE_REMOTE).unwrap();
    assert!(!bus.lines().unwrap().ren);
    // An unknown code: Error, and the channel goes on.
    assert!(s.remote_local(9).is_err());
    assert_eq!(s.status_byte().unwrap() & 0x10, 0);
}

#[test]
fn hislip_malformed_headers_end_the_connection_with_a_fatal_error() {
    let srv = served();
    let at = srv.hislip_addr().unwrap();
    // Not a HiSLIP header.
    let mut s = raw(at);
    s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let m = read(&mut s);
    assert_eq!(
        (m.header.kind, m.header.control),
        (kind::FATAL_ERROR, fatal::BAD_HEADER)
    );
    assert_eq!(s.read(&mut [0u8; 16]).unwrap(), 0, "closed");
    // Data before Initialize.
    let mut s = raw(at);
    s.write_all(&hislip::encode(kind::DATA_END, 0, 0, b"*IDN?\n"))
        .unwrap();
    let m = read(&mut s);
    assert_eq!(
        (m.header.kind, m.header.control),
        (kind::FATAL_ERROR, fatal::BAD_INITIALIZATION)
    );
    // AsyncInitialize for no session.
    let mut s = raw(at);
    s.write_all(&hislip::encode(kind::ASYNC_INITIALIZE, 0, 999, &[]))
        .unwrap();
    assert_eq!(read(&mut s).header.kind, kind::FATAL_ERROR);
}

#[test]
fn hislip_a_huge_payload_claim_is_refused_without_allocating_it() {
    let srv = served();
    let mut s = session(&srv);
    let at = srv.hislip_addr().unwrap();
    // On a session's synchronous channel: Error (message too large), then the
    // payload is drained; a claim of 2^64-1 bytes never arrives, so the connection
    // ends at the message timeout, not by allocating.
    let mut c = raw(at);
    let init = hislip::encode(
        kind::INITIALIZE,
        0,
        hislip::initialize_param(0x0100, *b"XX"),
        b"hislip0",
    );
    c.write_all(&init).unwrap();
    let id = read(&mut c).header.param & 0xffff;
    let mut a = raw(at);
    a.write_all(&hislip::encode(kind::ASYNC_INITIALIZE, 0, id, &[]))
        .unwrap();
    read(&mut a);
    c.write_all(&Header::new(kind::DATA_END, 0, 0xffff_ff00, u64::MAX).encode())
        .unwrap();
    let m = read(&mut c);
    assert_eq!(
        (m.header.kind, m.header.control),
        (kind::ERROR, hislip::error::TOO_LARGE)
    );
    // On the asynchronous channel: a lock string past the limit, then a good message.
    a.write_all(&Header::new(kind::ASYNC_LOCK, 1, 0, 5000).encode())
        .unwrap();
    a.write_all(&[b'k'; 5000]).unwrap();
    assert_eq!(read(&mut a).header.kind, kind::ERROR);
    a.write_all(&hislip::encode(kind::ASYNC_LOCK_INFO, 0, 0, &[]))
        .unwrap();
    assert_eq!(read(&mut a).header.kind, kind::ASYNC_LOCK_INFO_RESPONSE);
    // An unknown message type on the asynchronous channel: Error, not fatal.
    a.write_all(&hislip::encode(77, 0, 0, b"xyz")).unwrap();
    let m = read(&mut a);
    assert_eq!(
        (m.header.kind, m.header.control),
        (kind::ERROR, hislip::error::UNRECOGNIZED_TYPE)
    );
    // Other sessions are untouched.
    assert_eq!(s.query(b"*IDN?\n").unwrap(), IDN);
}

#[test]
fn hislip_ports_line_names_the_service() {
    let srv = served();
    let line = srv.ports_line();
    assert!(
        line.ends_with(&format!(" hislip={}", srv.hislip_addr().unwrap())),
        "{line}"
    );
}

#[test]
fn hislip_and_vxi11_share_device_locks() {
    use crate::backend::vxi11::proto::{self, err, flags, procs};
    let srv = served();
    let (mut v, lid) = super::tests::link(&srv, "gpib0,22");
    let lock = |v: &mut super::tests::Rpc, fl: u32| {
        let p = proto::Lock {
            lid,
            flags: fl,
            lock_timeout: 2000,
        };
        proto::decode_error(&v.call(procs::DEVICE_LOCK, &p.encode())).unwrap()
    };
    assert_eq!(lock(&mut v, 0), err::NONE);
    let mut h = session(&srv);
    assert!(
        !h.lock("", Duration::from_millis(100)).unwrap(),
        "VXI-11 holds it"
    );
    assert_eq!(h.lock_info().unwrap(), (true, 1));
    // A HiSLIP session waiting for the lock gets it when the VXI-11 link lets go.
    let waiter = std::thread::spawn(move || (h.lock("", T).unwrap(), h));
    std::thread::sleep(Duration::from_millis(200));
    let r = v.call(procs::DEVICE_UNLOCK, &lid.to_be_bytes());
    assert_eq!(proto::decode_error(&r).unwrap(), err::NONE);
    let (got, mut h) = waiter.join().unwrap();
    assert!(got);
    // Now the VXI-11 link waits in vain, and its writes are refused.
    assert_eq!(lock(&mut v, flags::WAITLOCK), err::LOCKED);
    let w = proto::Write {
        lid,
        io_timeout: 1000,
        lock_timeout: 0,
        flags: flags::END,
        data: b"*IDN?\n",
    };
    let r = v.call(procs::DEVICE_WRITE, &w.encode());
    assert_eq!(proto::decode_error_value(&r).unwrap().0, err::LOCKED);
    // A dropped HiSLIP session releases it for VXI-11.
    assert_eq!(h.query(b"*IDN?\n").unwrap(), IDN);
    drop(h);
    let t0 = Instant::now();
    while lock(&mut v, flags::WAITLOCK) != err::NONE {
        assert!(t0.elapsed() < T, "the lock stayed after the session went");
    }
}

#[test]
fn hislip_a_status_query_does_not_wait_for_an_answer_the_client_has_not_read() {
    let srv = served();
    let mut s = session(&srv);
    // 4 MB: more than the sockets hold, so the gateway is still sending it.
    s.write(b"BLOCK? 4000000\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let t0 = Instant::now();
    assert_ne!(
        s.status_byte().unwrap() & 0x10,
        0,
        "MAV: an answer on its way"
    );
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    s.set_max_read(8 << 20);
    let back = s.read().unwrap();
    assert_eq!(&back[..9], b"#74000000");
    assert_eq!(back.len(), 9 + 4_000_000 + 1);
    assert_eq!(s.status_byte().unwrap() & 0x10, 0);
}

#[test]
fn hislip_overlapped_mode_answers_queries_sent_back_to_back_in_order() {
    let srv = served();
    let mut s = session(&srv);
    assert!(!s.overlapped(), "the gateway prefers synchronized mode");
    assert!(
        s.set_overlapped(true).unwrap(),
        "granted at the device clear"
    );
    s.write(b"*IDN?\n").unwrap();
    s.write(b"*OPC?\n").unwrap();
    s.write(b"*ESE 4;*ESE?\n").unwrap();
    assert_eq!(s.read().unwrap(), IDN);
    assert_eq!(s.read().unwrap(), b"1\n");
    assert_eq!(s.read().unwrap(), b"4\n");
    assert!(!s.set_overlapped(false).unwrap(), "and back");
    assert_eq!(s.query(b"*IDN?\n").unwrap(), IDN);
}

#[test]
fn hislip_a_clear_after_a_read_that_timed_out_is_served_and_the_next_query_gets_its_answer() {
    // The bench's HP 3565 (11) does not answer `*IDN?`: the gateway's read of the
    // answer waits on the bus (its own timeout is 10 s) after the client's (1 s)
    // ended. The client then clears; the clear must stop that read. In real time: the
    // gateway's bus timeout is waited out, as on a real bus.
    let host = crate::sim::bench();
    host.set_realtime(true);
    let srv = served_on(host);
    let a = srv.hislip_addr().unwrap();
    let timeout = Duration::from_secs(1);
    let mut s =
        HislipSession::connect(&a.ip().to_string(), a.port(), "hislip_gpib0_11", timeout).unwrap();
    s.write(b"NEW 16\n").unwrap();
    let id = s.query(b"NEW?\n").unwrap();
    let e = s.query(b"*IDN?\n").unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::Timeout, "{e}");
    let t0 = Instant::now();
    s.clear().unwrap();
    let took = t0.elapsed();
    assert!(took < 3 * timeout, "the clear took {took:?}");
    // Its own answer (the block id), not a stale one nor a timeout.
    assert_eq!(s.query(b"NEW?\n").unwrap(), id);
}

#[test]
fn hislip_a_device_binary_block_is_not_taken_for_a_query() {
    // HP 3565 `WBLD id,words,#I` then the words, ended by END: bytes '\n' and '?' in
    // them are data. Taken for a query, the gateway waited for an answer that never
    // came, and the next message waited behind it.
    let srv = served();
    let a = srv.hislip_addr().unwrap();
    let timeout = Duration::from_secs(1);
    let mut s =
        HislipSession::connect(&a.ip().to_string(), a.port(), "hislip_gpib0_11", timeout).unwrap();
    s.write(b"NEW 2\n").unwrap();
    let id = s.query(b"NEW?\n").unwrap();
    let id = String::from_utf8(id).unwrap();
    let block = format!("WBLD {},2,#I", id.trim());
    s.write_partial(block.as_bytes()).unwrap();
    s.write(b"\n?\x3f\n").unwrap();
    let t0 = Instant::now();
    assert_eq!(s.query(b"NEW?\n").unwrap(), id.as_bytes());
    let took = t0.elapsed();
    assert!(took < 3 * timeout, "the next query took {took:?}");
}
