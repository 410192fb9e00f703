//! `--host HOST[:PORT]` of the network backends, as the resource string the library
//! opens: `PRLGX-TCPIP::HOST::PORT::INTFC`, `TCPIP::HOST[,PORT]::gpib<n>::INSTR`.

use crate::error::{DiagError, Result};

/// The Prologix adapter at `host` (port 1234 unless given).
pub fn prologix_resource(host: &str) -> Result<String> {
    let (h, p) = split_host(host)?;
    let p = p.unwrap_or(gpib::backend::prologix::DEFAULT_PORT);
    Ok(format!("PRLGX-TCPIP::{h}::{p}::INTFC"))
}

/// Interface `board` (`gpib<board>`) of the VXI-11 gateway at `host`.
pub fn vxi11_resource(host: &str, board: u16) -> Result<String> {
    let hp = match split_host(host)? {
        (h, Some(p)) => format!("{h},{p}"),
        (h, None) => h,
    };
    Ok(format!("TCPIP::{hp}::gpib{board}::INSTR"))
}

/// `host`, `host:port`, `[v6]:port`, `v6` into the host and the port.
fn split_host(text: &str) -> Result<(String, Option<u16>)> {
    let bad = || DiagError::Usage(format!("--host {text}: expected HOST or HOST:PORT"));
    let port = |p: &str| p.parse::<u16>().map_err(|_| bad());
    if let Some(rest) = text.strip_prefix('[') {
        let (h, tail) = rest.split_once(']').ok_or_else(bad)?;
        return match tail.strip_prefix(':') {
            Some(p) => Ok((h.to_string(), Some(port(p)?))),
            None if tail.is_empty() => Ok((h.to_string(), None)),
            None => Err(bad()),
        };
    }
    match text.split(':').count() {
        1 if !text.is_empty() => Ok((text.to_string(), None)),
        2 => {
            let (h, p) = text.split_once(':').ok_or_else(bad)?;
            if h.is_empty() {
                return Err(bad());
            }
            Ok((h.to_string(), Some(port(p)?)))
        }
        // A bare IPv6 address.
        n if n > 2 => Ok((text.to_string(), None)),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_split_into_host_and_port() {
        assert_eq!(split_host("pi").unwrap(), ("pi".into(), None));
        assert_eq!(
            split_host("10.0.0.5:1234").unwrap(),
            ("10.0.0.5".into(), Some(1234))
        );
        assert_eq!(split_host("[::1]:99").unwrap(), ("::1".into(), Some(99)));
        assert_eq!(split_host("fe80::1").unwrap(), ("fe80::1".into(), None));
        for bad in ["", ":80", "pi:x", "pi:70000", "[::1", "[::1]x"] {
            assert!(split_host(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hosts_become_the_resource_strings_the_library_opens() {
        assert_eq!(
            prologix_resource("10.0.0.5").unwrap(),
            "PRLGX-TCPIP::10.0.0.5::1234::INTFC"
        );
        assert_eq!(
            prologix_resource("pi:99").unwrap(),
            "PRLGX-TCPIP::pi::99::INTFC"
        );
        assert_eq!(
            vxi11_resource("gw:1024", 1).unwrap(),
            "TCPIP::gw,1024::gpib1::INSTR"
        );
        assert_eq!(vxi11_resource("gw", 0).unwrap(), "TCPIP::gw::gpib0::INSTR");
        for r in [
            prologix_resource("pi:99").unwrap(),
            vxi11_resource("gw", 2).unwrap(),
        ] {
            assert!(r.parse::<gpib::NetworkResource>().is_ok(), "{r}");
        }
        assert!(prologix_resource("pi:x").is_err());
    }
}
