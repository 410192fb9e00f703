//! VXI-11 discovery, the client's side: a portmapper GETPORT call for the core
//! channel (program 0x0607AF version 1 over TCP) sent over UDP to a broadcast address
//! (or one host) on port 111, and every host that answers with a port is an
//! instrument or a LAN/GPIB gateway. This is the call `lxi discover` (liblxi) and the
//! VISA finders broadcast.

use std::collections::BTreeMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use super::proto::{self, portmap};
use crate::error::{Error, Result};
use crate::rpc::msg::{self, CallHeader};
use crate::rpc::{XdrReader, XdrWriter};

/// Most hosts one discovery keeps (answers from more are dropped).
pub const MAX_RESPONDERS: usize = 4096;

/// The longest answer read (a GETPORT reply is 28 bytes).
const MAX_ANSWER: usize = 1500;

/// A host that answered discovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Responder {
    /// Where the answer came from: the instrument's or gateway's address.
    pub ip: IpAddr,
    /// The VXI-11 core channel's TCP port its portmapper named.
    pub core_port: u16,
}

/// Sends the GETPORT call for the VXI-11 core channel to `to` (a broadcast address
/// such as `255.255.255.255:111` or `192.168.1.255:111`, or one host's portmapper)
/// and collects the answers for `timeout`: each host once, by address, in address
/// order. Hosts whose portmapper has no core channel (port 0) and answers that are no
/// reply to this call are left out. The call goes out twice (at the start and a
/// third of the way through), for a datagram lost.
///
/// Errors: [`Error::Io`] when no socket can be opened or the call cannot be sent
/// (`to` a broadcast address the host has no route to, say), its message naming `to`;
/// [`Error::InvalidArgument`] for port 0 (nothing can be sent there) and for a
/// timeout the clock cannot count to ([`Duration::MAX`]).
pub fn discover(to: SocketAddr, timeout: Duration) -> Result<Vec<Responder>> {
    if to.port() == 0 {
        return Err(Error::InvalidArgument(format!(
            "cannot send the discovery call to {to}: port 0 is no port a datagram can be \
             sent to (the portmapper's is 111)"
        )));
    }
    let any = match to {
        SocketAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        SocketAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    };
    let sock = UdpSocket::bind(SocketAddr::new(any, 0))?;
    if to.is_ipv4() {
        sock.set_broadcast(true)?;
    }
    let start = Instant::now();
    let (Some(resend), Some(end)) = (start.checked_add(timeout / 3), start.checked_add(timeout))
    else {
        return Err(Error::InvalidArgument(format!(
            "a discovery timeout of {timeout:?} is past what the clock can count"
        )));
    };
    let xid = fresh_xid();
    let call = getport_call(xid);
    send(&sock, &call, to)?;
    let mut sent_again = false;
    let mut found = BTreeMap::new();
    let mut buf = [0u8; MAX_ANSWER];
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        if !sent_again && now >= resend {
            sent_again = true;
            send(&sock, &call, to)?;
        }
        let until = if sent_again { end } else { resend.min(end) };
        sock.set_read_timeout(Some(
            until
                .saturating_duration_since(now)
                .max(Duration::from_millis(1)),
        ))?;
        match sock.recv_from(&mut buf) {
            Ok((n, from)) => {
                let Some(port) = buf.get(..n).and_then(|a| core_port(a, xid)) else {
                    log::debug!("discovery: {n} bytes from {from}: no answer to the call");
                    continue;
                };
                if found.len() < MAX_RESPONDERS || found.contains_key(&from.ip()) {
                    found.insert(from.ip(), port);
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            // An ICMP "port unreachable" of a host without a portmapper: not an answer.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
            Err(e) => return Err(Error::Io(e)),
        }
    }
    Ok(found
        .into_iter()
        .map(|(ip, core_port)| Responder { ip, core_port })
        .collect())
}

/// Sends `call` to `to`; an error names the address (the system's words alone, such as
/// "Invalid argument", do not say which call failed).
fn send(sock: &UdpSocket, call: &[u8], to: SocketAddr) -> Result<()> {
    sock.send_to(call, to).map(drop).map_err(|e| {
        Error::Io(io::Error::new(
            e.kind(),
            format!("cannot send the discovery call to {to}: {e}"),
        ))
    })
}

/// The portmapper GETPORT call for the VXI-11 core channel over TCP, as one datagram.
pub fn getport_call(xid: u32) -> Vec<u8> {
    let mut args = XdrWriter::new();
    args.u32(proto::DEVICE_CORE)
        .u32(proto::VERSION)
        .u32(portmap::TCP)
        .u32(0);
    msg::encode_call(
        CallHeader {
            xid,
            prog: portmap::PROG,
            vers: portmap::VERS,
            proc_: portmap::GETPORT,
        },
        args.as_bytes(),
    )
}

/// The core port a GETPORT reply to call `xid` names, when it is one and not 0.
fn core_port(answer: &[u8], xid: u32) -> Option<u16> {
    let results = msg::decode_reply(answer, xid).ok()?;
    let port = XdrReader::new(results).u32().ok()?;
    u16::try_from(port).ok().filter(|&p| p != 0)
}

/// An xid unlike the last run's: the clock's nanoseconds and the process id mixed.
fn fresh_xid() -> u32 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() ^ (d.as_secs() as u32));
    t ^ std::process::id().rotate_left(16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpc::msg::{encode_reply, AcceptStat};

    #[test]
    fn the_call_is_the_one_lxi_discover_sends() {
        // liblxi's datagram (src/vxi11.c, rpc_GETPORT_msg): xid 1000, CALL, RPC 2,
        // program 100000 v2 procedure 3, AUTH_NONE twice, then 0x0607AF, 1, TCP, 0.
        let want: [u32; 14] = [1000, 0, 2, 100_000, 2, 3, 0, 0, 0, 0, 0x0607AF, 1, 6, 0];
        let bytes: Vec<u8> = want.iter().flat_map(|w| w.to_be_bytes()).collect();
        assert_eq!(getport_call(1000), bytes);
    }

    #[test]
    fn a_timeout_past_the_clock_is_an_error() {
        let to = SocketAddr::from(([127, 0, 0, 1], 9));
        let e = discover(to, Duration::MAX).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{e}");
    }

    #[test]
    fn port_0_is_refused_naming_the_address() {
        let to = SocketAddr::from(([127, 0, 0, 1], 0));
        let e = discover(to, Duration::from_millis(10)).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{e}");
        let text = e.to_string();
        assert!(
            text.contains("127.0.0.1:0") && text.contains("port 0"),
            "{text}"
        );
    }

    #[test]
    fn answers_are_checked() {
        let mut w = XdrWriter::new();
        w.u32(40001);
        assert_eq!(
            core_port(&encode_reply(7, AcceptStat::Success, w.as_bytes()), 7),
            Some(40001)
        );
        // Another call's, port 0, a port past 65535, an error reply, garbage.
        assert_eq!(
            core_port(&encode_reply(8, AcceptStat::Success, w.as_bytes()), 7),
            None
        );
        let mut z = XdrWriter::new();
        z.u32(0);
        assert_eq!(
            core_port(&encode_reply(7, AcceptStat::Success, z.as_bytes()), 7),
            None
        );
        let mut big = XdrWriter::new();
        big.u32(70000);
        assert_eq!(
            core_port(&encode_reply(7, AcceptStat::Success, big.as_bytes()), 7),
            None
        );
        assert_eq!(
            core_port(&encode_reply(7, AcceptStat::ProgUnavail, &[]), 7),
            None
        );
        assert_eq!(core_port(b"\0\0\0\x07garbage", 7), None);
        assert_eq!(core_port(&[], 7), None);
    }
}
