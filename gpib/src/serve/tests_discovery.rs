//! The portmapper over UDP (VXI-11 discovery) on loopback, spoken to as `lxi discover`
//! speaks to it, and the client's [`discover`] against it; each board's Prologix port.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::time::Duration;

use super::{ServeOptions, Server};
use crate::backend::prologix::PrologixBoard;
use crate::backend::vxi11::proto::{self, portmap};
use crate::backend::vxi11::{discover, getport_call, Responder};
use crate::rpc::msg::{self, CallHeader};
use crate::rpc::{XdrReader, XdrWriter};
use crate::Bus;

fn served(opts: ServeOptions) -> Server {
    let bus = Bus::new(crate::sim::bench().board(0).unwrap());
    Server::start(
        bus,
        ServeOptions {
            portmap_port: Some(0),
            ..opts
        },
    )
    .unwrap()
}

/// A client socket on loopback that waits at most 2 s for an answer.
fn client() -> UdpSocket {
    let c = UdpSocket::bind("127.0.0.1:0").unwrap();
    c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    c
}

/// Sends `datagram` to `to` and returns the answer, if one comes within 2 s.
fn ask(c: &UdpSocket, to: SocketAddr, datagram: &[u8]) -> Option<Vec<u8>> {
    c.send_to(datagram, to).unwrap();
    let mut buf = [0u8; 2048];
    let (n, from) = c.recv_from(&mut buf).ok()?;
    assert_eq!(from, to);
    Some(buf[..n].to_vec())
}

fn port_of(reply: &[u8], xid: u32) -> u32 {
    XdrReader::new(msg::decode_reply(reply, xid).unwrap())
        .u32()
        .unwrap()
}

fn call(xid: u32, prog: u32, vers: u32, proc_: u32, args: &[u8]) -> Vec<u8> {
    msg::encode_call(
        CallHeader {
            xid,
            prog,
            vers,
            proc_,
        },
        args,
    )
}

#[test]
fn the_udp_portmapper_answers_getport_with_the_core_port() {
    let srv = served(ServeOptions::ephemeral());
    let (tcp, udp) = (srv.portmap_addr().unwrap(), srv.portmap_udp_addr().unwrap());
    // The same port number as the TCP portmapper's, on the same address.
    assert_eq!(udp, tcp);
    let core = srv.vxi11_addr().unwrap().port();
    let c = client();
    // liblxi's call: xid 1000.
    let r = ask(&c, udp, &getport_call(1000)).unwrap();
    assert_eq!(port_of(&r, 1000), u32::from(core));
    // NULL: an empty success.
    let r = ask(
        &c,
        udp,
        &call(5, portmap::PROG, portmap::VERS, portmap::NULL, &[]),
    )
    .unwrap();
    assert_eq!(msg::decode_reply(&r, 5).unwrap(), b"");
    // GETPORT for another program, or UDP: 0.
    let mut w = XdrWriter::new();
    w.u32(proto::DEVICE_INTR).u32(1).u32(portmap::TCP).u32(0);
    let r = ask(
        &c,
        udp,
        &call(
            6,
            portmap::PROG,
            portmap::VERS,
            portmap::GETPORT,
            w.as_bytes(),
        ),
    );
    assert_eq!(port_of(&r.unwrap(), 6), 0);
    let mut w = XdrWriter::new();
    w.u32(proto::DEVICE_CORE).u32(1).u32(17).u32(0);
    let r = ask(
        &c,
        udp,
        &call(
            7,
            portmap::PROG,
            portmap::VERS,
            portmap::GETPORT,
            w.as_bytes(),
        ),
    );
    assert_eq!(port_of(&r.unwrap(), 7), 0);
    assert_eq!(srv.stats().udp_replies, 4);
    // The ports line names one portmapper port: TCP's and UDP's.
    let line = srv.ports_line();
    let named = format!("portmap={tcp}");
    assert!(line.split_whitespace().any(|w| w == named), "{line}");
}

#[test]
fn discover_finds_the_server_on_loopback() {
    let srv = served(ServeOptions::ephemeral());
    let core = srv.vxi11_addr().unwrap().port();
    let found = discover(srv.portmap_udp_addr().unwrap(), Duration::from_millis(300)).unwrap();
    assert_eq!(
        found,
        [Responder {
            ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            core_port: core
        }]
    );
    // Nobody there: nothing found, no error, within the time given.
    let quiet = UdpSocket::bind("127.0.0.1:0").unwrap();
    let t = std::time::Instant::now();
    let none = discover(quiet.local_addr().unwrap(), Duration::from_millis(200)).unwrap();
    assert!(none.is_empty());
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
}

/// Bound to 0.0.0.0 (clients of 127.0.0.0/8 only), the server answers a broadcast to
/// loopback's broadcast address, as it answers `lxi discover`'s on a LAN.
#[test]
fn a_broadcast_on_loopback_is_answered() {
    let srv = served(ServeOptions {
        bind: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        allow: vec!["127.0.0.0/8".parse().unwrap()],
        ..ServeOptions::ephemeral()
    });
    let port = srv.portmap_udp_addr().unwrap().port();
    let to = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 255, 255, 255)), port);
    let found = discover(to, Duration::from_millis(300)).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].ip, IpAddr::V4(Ipv4Addr::LOCALHOST));
    assert_eq!(found[0].core_port, srv.vxi11_addr().unwrap().port());
}

#[test]
fn hostile_datagrams_are_dropped_or_refused_and_the_portmapper_keeps_answering() {
    let srv = served(ServeOptions::ephemeral());
    let udp = srv.portmap_udp_addr().unwrap();
    let c = client();
    c.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let good = getport_call(1000);
    let mut huge = good.clone();
    huge.resize(9000, 0xA5);
    let reply = msg::encode_reply(1000, msg::AcceptStat::Success, &[0, 0, 0, 1]);
    // Credentials claiming 4 GiB.
    let mut cred = XdrWriter::new();
    cred.u32(1)
        .u32(0)
        .u32(2)
        .u32(portmap::PROG)
        .u32(2)
        .u32(3)
        .u32(1)
        .u32(u32::MAX);
    let dropped: Vec<&[u8]> = vec![
        b"",
        &good[..3],
        &good[..20],
        &huge,
        &reply,
        cred.as_bytes(),
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
    ];
    for d in &dropped {
        assert_eq!(ask(&c, udp, d), None, "{} bytes answered", d.len());
    }
    c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    // Arguments cut short: GARBAGE_ARGS, as over TCP.
    let short = &good[..good.len() - 4];
    let r = ask(&c, udp, short).unwrap();
    let e = msg::decode_reply(&r, 1000).unwrap_err();
    assert!(e.to_string().contains("garbage arguments"), "{e}");
    // Another program, another version, another procedure, another RPC version.
    let r = ask(&c, udp, &call(2, proto::DEVICE_CORE, 1, 10, &[])).unwrap();
    assert!(msg::decode_reply(&r, 2)
        .unwrap_err()
        .to_string()
        .contains("program unavailable"));
    let r = ask(&c, udp, &call(3, portmap::PROG, 4, portmap::GETPORT, &[])).unwrap();
    assert!(msg::decode_reply(&r, 3)
        .unwrap_err()
        .to_string()
        .contains("2..=2"));
    let r = ask(&c, udp, &call(4, portmap::PROG, portmap::VERS, 99, &[])).unwrap();
    assert!(msg::decode_reply(&r, 4)
        .unwrap_err()
        .to_string()
        .contains("procedure unavailable"));
    let mut v3 = call(5, portmap::PROG, portmap::VERS, portmap::NULL, &[]);
    v3[11] = 3;
    let r = ask(&c, udp, &v3).unwrap();
    assert!(matches!(
        msg::decode_reply(&r, 5),
        Err(msg::RpcError::Denied(_))
    ));
    // A call cut after its RPC version (3): the mismatch reply would be longer than
    // the call, so none comes.
    c.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    assert_eq!(ask(&c, udp, &v3[..12]), None);
    c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    // A flood of garbage, then a good call: still answered.
    for i in 0..2000u32 {
        let _ = c.send_to(&i.to_be_bytes().repeat((i % 300) as usize), udp);
    }
    let core = srv.vxi11_addr().unwrap().port();
    let mut answered = None;
    for _ in 0..20 {
        // Answers to flood datagrams do not come: the first answer is the good one's.
        if let Some(r) = ask(&c, udp, &getport_call(77)) {
            if msg::peek_xid(&r) == Some(77) {
                answered = Some(port_of(&r, 77));
                break;
            }
        }
    }
    assert_eq!(answered, Some(u32::from(core)));
    let st = srv.stats();
    assert!(st.udp_ignored >= dropped.len() as u64, "{st:?}");
    srv.stop();
}

#[test]
fn clients_outside_the_allowed_networks_get_no_answer() {
    let srv = served(ServeOptions {
        allow: vec!["10.0.0.0/8".parse().unwrap()],
        ..ServeOptions::ephemeral()
    });
    let c = client();
    c.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    assert_eq!(
        ask(&c, srv.portmap_udp_addr().unwrap(), &getport_call(1)),
        None
    );
    assert_eq!(srv.stats().udp_ignored, 1);
    assert_eq!(srv.stats().udp_replies, 0);
}

#[test]
fn no_udp_portmapper_without_a_portmapper_and_stop_is_prompt() {
    let srv = Server::start(
        Bus::new(crate::sim::bench().board(0).unwrap()),
        ServeOptions::ephemeral(),
    )
    .unwrap();
    assert_eq!(srv.portmap_udp_addr(), None);
    let srv = served(ServeOptions::ephemeral());
    let udp = srv.portmap_udp_addr().unwrap();
    let t = std::time::Instant::now();
    srv.stop();
    assert!(
        t.elapsed() < Duration::from_millis(400),
        "{:?}",
        t.elapsed()
    );
    // The port is free again: nothing answers there.
    let c = client();
    c.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let _ = c.send_to(&getport_call(1), udp);
    let mut buf = [0u8; 64];
    assert!(c.recv_from(&mut buf).is_err());
}

/// Each board on a Prologix port of its own: the first on the port given, the next on
/// the port after it; `prologix1=` names the second in the ports line.
#[test]
fn each_board_has_its_own_prologix_port() {
    let host = crate::sim::config::load("three-adapters").unwrap();
    let boards = BTreeMap::from([
        (0, Bus::new(host.board(0).unwrap())),
        (1, Bus::new(host.board(1).unwrap())),
    ]);
    let srv = Server::start_boards(boards, ServeOptions::ephemeral()).unwrap();
    let at = srv.prologix_addrs().to_vec();
    assert_eq!(at.len(), 2);
    assert_eq!(srv.prologix_addr(), Some(at[0].1));
    assert_eq!((at[0].0, at[1].0), (0, 1));
    assert_ne!(at[0].1, at[1].1);
    let idn = |a: SocketAddr| {
        let b = Bus::new(PrologixBoard::connect_tcp(&a.to_string()).unwrap());
        b.device(1).unwrap().query("*IDN?").unwrap()
    };
    assert_eq!(idn(at[0].1), "SIMULATED,STREAMING DIGITIZER,1,1.0");
    assert_eq!(idn(at[1].1), "SIMULATED,STREAMING DIGITIZER,2,1.0");
    assert!(
        srv.ports_line()
            .ends_with(&format!(" prologix1={}", at[1].1)),
        "{}",
        srv.ports_line()
    );
    assert_eq!(super::prologix_port(1234, 1).unwrap(), 1235);
    assert_eq!(super::prologix_port(0, 5).unwrap(), 0);
    let e = super::prologix_port(65535, 1).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
}
