//! Host names for the network backends.

use std::net::{SocketAddr, ToSocketAddrs};

use crate::error::{Error, Result};

/// `host` or `host:port` (`[v6]:port` too) as a socket address; `default_port` when
/// none is given.
pub(crate) fn resolve(host: &str, default_port: u16) -> Result<SocketAddr> {
    let host = host.trim();
    let with_port = if host.parse::<SocketAddr>().is_ok()
        || (host.rsplit_once(':').is_some_and(|(h, p)| {
            !h.contains(':') && !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())
        })) {
        host.to_string()
    } else if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{default_port}")
    } else {
        format!("{host}:{default_port}")
    };
    with_port
        .to_socket_addrs()
        .map_err(|e| Error::InvalidArgument(format!("cannot resolve {host:?}: {e}")))?
        .next()
        .ok_or_else(|| Error::InvalidArgument(format!("{host:?} resolves to no address")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_ports() {
        assert_eq!(resolve("127.0.0.1", 1234).unwrap().port(), 1234);
        assert_eq!(resolve("127.0.0.1:99", 1234).unwrap().port(), 99);
        assert_eq!(resolve("::1", 7).unwrap().port(), 7);
        assert_eq!(resolve("[::1]:8", 7).unwrap().port(), 8);
        assert!(resolve("no such host.invalid", 1).is_err());
    }
}
