//! Several boards behind one gateway (`gpib0`, `gpib1`), and what a client that goes
//! away in the middle of a message leaves behind.

use std::collections::BTreeMap;
use std::time::Duration;

use super::tests::{create_link, link, Rpc};
use super::{ServeOptions, Server};
use crate::backend::vxi11::proto::{self, err, flags, procs};
use crate::{Bus, ResourceManager};

/// The first two boards of the three-adapters host, served as gpib0 and gpib1 (each
/// has a digitizer at 1 whose `*IDN?` names its board: 1, 2).
fn two_boards() -> (Server, crate::sim::SimHost) {
    let host = crate::sim::config::load("three-adapters").unwrap();
    let boards = BTreeMap::from([
        (0, Bus::new(host.board(0).unwrap())),
        (1, Bus::new(host.board(1).unwrap())),
    ]);
    let srv = Server::start_boards(boards, ServeOptions::ephemeral()).unwrap();
    (srv, host)
}

#[test]
fn serve_boards_are_reached_as_gpib0_and_gpib1() {
    let (srv, _host) = two_boards();
    let at = srv.vxi11_addr().unwrap();
    let mut rm = ResourceManager::new();
    let idn = |rm: &mut ResourceManager, name: &str| {
        let res = format!("TCPIP::{},{}::{name}::INSTR", at.ip(), at.port());
        rm.open(&res).unwrap().query("*IDN?").unwrap()
    };
    assert_eq!(
        idn(&mut rm, "gpib0,1"),
        "SIMULATED,STREAMING DIGITIZER,1,1.0"
    );
    assert_eq!(
        idn(&mut rm, "gpib1,1"),
        "SIMULATED,STREAMING DIGITIZER,2,1.0"
    );
    // The second interface as a bus of its own: its devices are gpib1's.
    let res = format!("TCPIP::{},{}::gpib1::INSTR", at.ip(), at.port());
    let bus = rm.open_interface(&res).unwrap();
    let d = bus.device(1).unwrap();
    assert_eq!(
        d.query("*IDN?").unwrap(),
        "SIMULATED,STREAMING DIGITIZER,2,1.0"
    );
    // Interface links on each board answer bus status; a third board is not there.
    let (mut c, lid) = link(&srv, "gpib1");
    let p = proto::Docmd {
        lid,
        flags: 0,
        io_timeout: 2000,
        lock_timeout: 0,
        cmd: proto::docmd::BUS_STATUS,
        network_order: true,
        datasize: 2,
        data_in: &proto::docmd::STATUS_SYSTEM_CONTROLLER.to_be_bytes(),
    };
    let r = c.call(procs::DEVICE_DOCMD, &p.encode());
    assert_eq!(
        proto::decode_docmd_resp(&r, 16).unwrap(),
        (err::NONE, vec![0, 1])
    );
    for name in ["gpib2,1", "gpib2", "gpib7,1"] {
        assert_eq!(
            create_link(&mut c, name).error,
            err::INVALID_ADDRESS,
            "{name}"
        );
    }
    srv.stop();
}

#[test]
fn serve_boards_locks_are_per_board() {
    let (srv, _host) = two_boards();
    let (mut a, la) = link(&srv, "gpib0,1");
    let (mut b, lb) = link(&srv, "gpib1,1");
    let lock = |c: &mut Rpc, lid| {
        let p = proto::Lock {
            lid,
            flags: 0,
            lock_timeout: 0,
        };
        proto::decode_error(&c.call(procs::DEVICE_LOCK, &p.encode())).unwrap()
    };
    // Device 1 of each board is a device of its own: both locks are granted.
    assert_eq!(lock(&mut a, la), err::NONE);
    assert_eq!(lock(&mut b, lb), err::NONE);
    let (mut c, lc) = link(&srv, "gpib1,1");
    assert_eq!(lock(&mut c, lc), err::LOCKED);
    srv.stop();
}

#[test]
fn serve_boards_none_is_refused() {
    let e = Server::start_boards(BTreeMap::new(), ServeOptions::ephemeral()).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
}

/// Waits until the server has closed every connection (its handlers' ends run).
fn gone(srv: &Server) {
    gone_but(srv, 0);
}

/// Waits until the server has `open` connections left.
fn gone_but(srv: &Server, open: usize) {
    let t0 = std::time::Instant::now();
    while srv.stats().open > open {
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", srv.stats());
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn write(c: &mut Rpc, lid: u32, data: &[u8], end: bool) -> (u32, u32) {
    let w = proto::Write {
        lid,
        io_timeout: 1000,
        lock_timeout: 0,
        flags: if end { flags::END } else { 0 },
        data,
    };
    proto::decode_error_value(&c.call(procs::DEVICE_WRITE, &w.encode())).unwrap()
}

fn read(c: &mut Rpc, lid: u32) -> (u32, Vec<u8>) {
    let r = proto::Read {
        lid,
        request_size: 4096,
        io_timeout: 1000,
        lock_timeout: 0,
        flags: 0,
        term_char: 0,
    };
    let resp = c.call(procs::DEVICE_READ, &r.encode());
    let (code, _, data) = proto::decode_read_resp(&resp, 4096).unwrap();
    (code, data.to_vec())
}

// A client that dies after writing part of a message (device_write without END) left
// it in the device: the next client's `*IDN?` was read as its continuation
// (`*IDN*IDN?`, an undefined header) and never answered. The connection's end now
// clears the device, as it did for an answer left half read.
#[test]
fn serve_a_message_left_half_written_is_cleared_with_its_connection() {
    let srv = super::tests::served();
    let (mut dead, ld) = link(&srv, "gpib0,22");
    assert_eq!(write(&mut dead, ld, b"*IDN", false), (err::NONE, 4));
    drop(dead);
    gone(&srv);
    let (mut next, ln) = link(&srv, "gpib0,22");
    assert_eq!(write(&mut next, ln, b"*IDN?\n", true), (err::NONE, 6));
    let answer = read(&mut next, ln);
    assert_eq!(
        (answer.0, String::from_utf8_lossy(&answer.1).into_owned()),
        (err::NONE, "SIMULATED,SCPI-DMM,0,1.0\n".to_string())
    );
    srv.stop();
}

// A whole message (the last write with END) leaves nothing to clear: a client that
// goes away after it does not discard the answer another link is about to read.
#[test]
fn serve_a_whole_message_is_not_cleared_when_its_writer_goes() {
    let srv = super::tests::served();
    let (mut w, lw) = link(&srv, "gpib0,22");
    let (mut r, lr) = link(&srv, "gpib0,22");
    assert_eq!(write(&mut w, lw, b"*IDN", false), (err::NONE, 4));
    assert_eq!(write(&mut w, lw, b"?\n", true), (err::NONE, 2));
    drop(w);
    gone_but(&srv, 1);
    let (code, data) = read(&mut r, lr);
    assert_eq!(
        (code, String::from_utf8_lossy(&data).into_owned()),
        (err::NONE, "SIMULATED,SCPI-DMM,0,1.0\n".to_string())
    );
    srv.stop();
}
