//! The portmapper over UDP: where VXI-11 discovery looks. `lxi discover` (liblxi),
//! NI-VISA's and Keysight's finders broadcast a portmapper GETPORT call for the VXI-11
//! core channel to port 111 and take every host that answers for an instrument.
//!
//! ONC RPC over UDP has no record marking: one datagram is one call, and the reply
//! goes back to the sender's address. A datagram longer than [`MAX_DATAGRAM`] is
//! dropped unread (a portmapper call is 56 bytes); one that is no RPC call (too short,
//! a reply, garbage) is dropped; a call for another program, version or procedure gets
//! the RPC error reply the TCP portmapper sends. No answer is longer than its call. The buffer is one, fixed: a flood
//! costs time, never memory.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Duration;

use super::rpc_server::answer;
use super::{allow, portmap, Shared};
use crate::backend::vxi11::proto::portmap as pm;

/// The longest datagram read; longer ones are dropped.
pub(crate) const MAX_DATAGRAM: usize = 8192;

/// How often the loop looks at the stop flag when no datagram wakes it.
const POLL: Duration = Duration::from_millis(500);

/// The UDP portmapper's thread, and its address (to wake it when stopping).
pub(crate) struct UdpService {
    pub(crate) local: SocketAddr,
    pub(crate) thread: JoinHandle<()>,
}

/// Binds `addr` and answers portmapper calls there for a core channel at `core_port`,
/// until `sh.stop` is set (and [`wake`] called).
pub(crate) fn start(addr: SocketAddr, core_port: u16, sh: &Shared) -> io::Result<UdpService> {
    let sock = UdpSocket::bind(addr)?;
    sock.set_read_timeout(Some(POLL))?;
    let local = sock.local_addr()?;
    let (stop, registry, allowed) = (sh.stop.clone(), sh.registry.clone(), sh.allow.clone());
    let thread = std::thread::Builder::new()
        .name(format!("portmap-udp-{}", local.port()))
        .stack_size(256 * 1024)
        .spawn(move || {
            // One byte more than the longest datagram kept: a longer one fills it.
            let mut buf = vec![0u8; MAX_DATAGRAM + 1];
            loop {
                let got = sock.recv_from(&mut buf);
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let (n, peer) = match got {
                    Ok(g) => g,
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock
                                | io::ErrorKind::TimedOut
                                | io::ErrorKind::Interrupted
                        ) =>
                    {
                        continue
                    }
                    Err(e) => {
                        // An ICMP error of an earlier reply, say.
                        log::debug!("portmapper (UDP): {e}");
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    }
                };
                let reply = match buf.get(..n) {
                    Some(call) if n <= MAX_DATAGRAM && answerable(peer, &allowed) => answer(
                        call,
                        (pm::PROG, pm::VERS),
                        "portmapper (UDP)",
                        &peer.to_string(),
                        &mut |p, a| portmap::procedure(core_port, p, a),
                    )
                    // No answer longer than the call (a spoofed sender gains nothing):
                    // every whole call is longer than its reply; a 12-byte call of
                    // another RPC version is not.
                    .filter(|r| r.len() <= n),
                    _ => None,
                };
                let Some(r) = reply else {
                    registry.udp_ignored.fetch_add(1, Ordering::Relaxed);
                    continue;
                };
                // Counted before it goes: a client that has its answer sees it counted.
                registry.udp_replies.fetch_add(1, Ordering::Relaxed);
                if let Err(e) = sock.send_to(&r, peer) {
                    log::debug!("portmapper (UDP) reply to {peer}: {e}");
                    registry.udp_replies.fetch_sub(1, Ordering::Relaxed);
                    registry.udp_ignored.fetch_add(1, Ordering::Relaxed);
                }
            }
        })?;
    Ok(UdpService { local, thread })
}

/// Whether a datagram from `peer` gets an answer: an address a reply can go to
/// (not a broadcast, multicast or unspecified one, not port 0: no reflection) in the
/// allowed networks.
fn answerable(peer: SocketAddr, allowed: &[super::Network]) -> bool {
    let ip = peer.ip();
    let reachable = peer.port() != 0
        && !ip.is_unspecified()
        && !ip.is_multicast()
        && ip != IpAddr::V4(Ipv4Addr::BROADCAST);
    if reachable && !allow::allowed(allowed, ip) {
        log::debug!("portmapper (UDP): ignored {peer}: not in the allowed networks");
        return false;
    }
    reachable
}

/// Ends the wait of the service at `local` (whose stop flag is set) at once: an empty
/// datagram to it. Without it the loop still ends within [`POLL`].
pub(crate) fn wake(local: SocketAddr) {
    let mut to = local;
    if to.ip().is_unspecified() {
        to.set_ip(match to {
            SocketAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            SocketAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
        });
    }
    let any = match to {
        SocketAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
        SocketAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
    };
    if let Ok(s) = UdpSocket::bind(any) {
        let _ = s.send_to(&[], to);
    }
}
