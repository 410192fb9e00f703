//! Which clients a server takes: networks in CIDR notation (`192.168.1.0/24`,
//! `127.0.0.1/32`, `fd00::/8`; a bare address is that address alone).

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// A network of client addresses: an address and how many of its leading bits must
/// match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    addr: IpAddr,
    prefix: u8,
}

impl Network {
    /// The network of `addr`'s first `prefix` bits, or `None` when `prefix` is longer
    /// than the address (32 bits for IPv4, 128 for IPv6).
    pub fn new(addr: IpAddr, prefix: u8) -> Option<Self> {
        (prefix <= max_prefix(addr)).then_some(Self { addr, prefix })
    }

    /// Whether `ip` is in this network. An IPv4 client reached over an IPv6 socket
    /// (`::ffff:a.b.c.d`) is taken as the IPv4 address it is.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(n), IpAddr::V4(a)) => matches(
                u128::from(u32::from(n)),
                u128::from(u32::from(a)),
                32,
                self.prefix,
            ),
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                matches(u128::from(n), u128::from(a), 128, self.prefix)
            }
            _ => false,
        }
    }
}

fn max_prefix(a: IpAddr) -> u8 {
    match a {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}

/// Whether the first `prefix` of `bits` bits of `a` and `b` agree.
fn matches(a: u128, b: u128, bits: u32, prefix: u8) -> bool {
    let prefix = u32::from(prefix);
    if prefix == 0 {
        return true;
    }
    let shift = bits - prefix;
    (a >> shift) == (b >> shift)
}

/// Whether `peer` may connect: `allow` is empty (everyone), or one of its networks
/// holds it.
pub fn allowed(allow: &[Network], peer: IpAddr) -> bool {
    allow.is_empty() || allow.iter().any(|n| n.contains(peer))
}

impl FromStr for Network {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let (a, p) = match t.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (t, None),
        };
        let addr: IpAddr = a
            .parse()
            .map_err(|_| format!("{text:?}: {a:?} is not an IP address"))?;
        let prefix = match p {
            None => max_prefix(addr),
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|n| *n <= max_prefix(addr) && !p.starts_with('+'))
                .ok_or_else(|| {
                    format!(
                        "{text:?}: the prefix length must be 0 to {}",
                        max_prefix(addr)
                    )
                })?,
        };
        Ok(Self { addr, prefix })
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Network {
        s.parse().unwrap()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn networks_hold_what_their_prefix_says() {
        let lan = n("192.168.1.0/24");
        assert!(lan.contains(ip("192.168.1.0")));
        assert!(lan.contains(ip("192.168.1.255")));
        assert!(!lan.contains(ip("192.168.2.1")));
        assert!(!lan.contains(ip("::1")));
        // An IPv4 client on an IPv6 socket.
        assert!(lan.contains(ip("::ffff:192.168.1.7")));
        let one = n("127.0.0.1");
        assert_eq!(one.to_string(), "127.0.0.1/32");
        assert!(one.contains(ip("127.0.0.1")));
        assert!(!one.contains(ip("127.0.0.2")));
        assert!(n("0.0.0.0/0").contains(ip("10.1.2.3")));
        assert!(n("fd00::/8").contains(ip("fd12::1")));
        assert!(!n("fd00::/8").contains(ip("fe80::1")));
        assert!(n("::1/128").contains(ip("::1")));
        assert!(allowed(&[], ip("203.0.113.9")));
        assert!(!allowed(&[one], ip("127.0.0.2")));
        assert!(allowed(&[lan, one], ip("127.0.0.1")));
        assert_eq!(Network::new(ip("10.0.0.0"), 33), None);
    }

    #[test]
    fn bad_networks_say_why() {
        for (bad, why) in [
            ("192.168.1.0/33", "0 to 32"),
            ("::/129", "0 to 128"),
            ("192.168.1/24", "not an IP address"),
            ("lan", "not an IP address"),
            ("10.0.0.0/", "prefix length"),
            ("10.0.0.0/+8", "prefix length"),
            ("10.0.0.0/-1", "prefix length"),
        ] {
            let e = bad.parse::<Network>().unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
