//! Resource strings of the network backends, as pyvisa-py spells them:
//! `PRLGX-TCPIP::host::1234::INTFC`, `PRLGX-ASRL::/dev/ttyUSB0::INTFC`, VXI-11's
//! `TCPIP::host::gpib0,22::INSTR` (`host,port` for a fixed core port), and HiSLIP's
//! `TCPIP::host::hislip0::INSTR` (`hislip0,port` for another port than 4880;
//! `hislip_gpib0_22` for device 22 of a `gpib-diag serve` gateway).
//!
//! Parsing only: each backend's [`crate::Connector`] opens its own.

use std::fmt;
use std::str::FromStr;

use crate::address::Address;
use crate::backend::vxi11::proto::{self, DeviceName};
use crate::error::{Error, Result};

/// How a Prologix adapter is reached.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PrologixLink {
    /// GPIB-ETHERNET: host and port.
    Tcp {
        /// Host name or address.
        host: String,
        /// TCP port (1234).
        port: u16,
    },
    /// GPIB-USB or AR488 on a serial port.
    Serial {
        /// The device path.
        path: String,
    },
}

/// A network backend's resource string.
///
/// ```
/// use gpib::NetworkResource;
/// let r: NetworkResource = "TCPIP::10.0.0.5::gpib0,22::INSTR".parse().unwrap();
/// assert_eq!(r.address().unwrap().primary.get(), 22);
/// let p: NetworkResource = "PRLGX-TCPIP::10.0.0.6::1234::INTFC".parse().unwrap();
/// assert_eq!(p.to_string(), "PRLGX-TCPIP0::10.0.0.6::1234::INTFC");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NetworkResource {
    /// A Prologix adapter (an interface: devices are then `GPIB<board>::N::INSTR`).
    Prologix {
        /// The interface number in the resource (`PRLGX-TCPIP<board>`).
        board: u16,
        /// How it is reached.
        link: PrologixLink,
    },
    /// A device (or the interface) behind a VXI-11 gateway.
    Vxi11 {
        /// The interface number in the resource (`TCPIP<board>`).
        board: u16,
        /// Host name or address.
        host: String,
        /// A fixed core channel port, when given as `host,port`.
        port: Option<u16>,
        /// The device name (`gpib0,22`, `inst0`).
        device: String,
    },
    /// A HiSLIP server's device: an instrument (`hislip0`) or a device behind a
    /// gateway (`hislip_gpib0_22`).
    Hislip {
        /// The interface number in the resource (`TCPIP<board>`).
        board: u16,
        /// Host name or address.
        host: String,
        /// The port, when given as `hislip0,PORT` (4880 otherwise).
        port: Option<u16>,
        /// The sub-address (`hislip0`, `hislip_gpib0_22`).
        device: String,
    },
}

fn bad(text: &str, reason: impl Into<String>) -> Error {
    Error::InvalidResource {
        text: text.to_string(),
        reason: reason.into(),
    }
}

fn board_of(text: &str, prefix: &str, first: &str) -> Result<u16> {
    let n = &first[prefix.len()..];
    if n.is_empty() {
        return Ok(0);
    }
    if n.len() > 4 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(text, format!("board number {n:?} is not a number")));
    }
    n.parse()
        .map_err(|_| bad(text, "board number out of range"))
}

fn port_of(text: &str, p: &str) -> Result<u16> {
    if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(text, format!("port {p:?} is not a number")));
    }
    p.parse()
        .map_err(|_| bad(text, format!("port {p} is out of range")))
}

impl FromStr for NetworkResource {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        let t = text.trim();
        let parts: Vec<&str> = t.split("::").collect();
        let first = parts[0].to_ascii_uppercase();
        let class = parts
            .last()
            .map(|c| c.to_ascii_uppercase())
            .unwrap_or_default();
        if first.starts_with("PRLGX-TCPIP") {
            let board = board_of(text, "PRLGX-TCPIP", &first)?;
            if class != "INTFC" {
                return Err(bad(text, "a Prologix resource ends with ::INTFC"));
            }
            let (host, port) = match &parts[1..parts.len() - 1] {
                [h] => (*h, crate::backend::prologix::DEFAULT_PORT),
                [h, p] => (*h, port_of(text, p)?),
                _ => return Err(bad(text, "expected PRLGX-TCPIP::HOST[::PORT]::INTFC")),
            };
            if host.is_empty() {
                return Err(bad(text, "empty host"));
            }
            return Ok(Self::Prologix {
                board,
                link: PrologixLink::Tcp {
                    host: host.to_string(),
                    port,
                },
            });
        }
        if first.starts_with("PRLGX-ASRL") {
            let board = board_of(text, "PRLGX-ASRL", &first)?;
            match (
                &parts[1..parts.len().saturating_sub(1).max(1)],
                class.as_str(),
            ) {
                ([path], "INTFC") if !path.is_empty() => {
                    return Ok(Self::Prologix {
                        board,
                        link: PrologixLink::Serial {
                            path: path.to_string(),
                        },
                    })
                }
                _ => return Err(bad(text, "expected PRLGX-ASRL::/dev/ttyUSB0::INTFC")),
            }
        }
        if first.starts_with("TCPIP") {
            let board = board_of(text, "TCPIP", &first)?;
            if class != "INSTR" {
                return Err(bad(text, "a VXI-11 resource ends with ::INSTR"));
            }
            let (hostport, device) = match &parts[1..parts.len() - 1] {
                [h] => (*h, "inst0"),
                [h, d] => (*h, *d),
                _ => return Err(bad(text, "expected TCPIP::HOST[,PORT]::DEVICE::INSTR")),
            };
            if device.to_ascii_lowercase().starts_with("hislip") {
                if hostport.is_empty() || hostport.contains(',') {
                    return Err(bad(
                        text,
                        "expected TCPIP::HOST::hislip0[,PORT]::INSTR (a HiSLIP port goes after the sub-address)",
                    ));
                }
                let (name, port) = match device.split_once(',') {
                    Some((d, p)) => (d, Some(port_of(text, p)?)),
                    None => (device, None),
                };
                crate::hislip::sub_address_target(name).map_err(|why| bad(text, why))?;
                return Ok(Self::Hislip {
                    board,
                    host: hostport.to_string(),
                    port,
                    device: name.to_string(),
                });
            }
            let (host, port) = match hostport.split_once(',') {
                Some((h, p)) => (h, Some(port_of(text, p)?)),
                None => (hostport, None),
            };
            if host.is_empty() {
                return Err(bad(text, "empty host"));
            }
            proto::parse_link_name(device, Some(Address::try_from(0u8).expect("valid")))
                .map_err(|why| bad(text, why))?;
            return Ok(Self::Vxi11 {
                board,
                host: host.to_string(),
                port,
                device: device.to_string(),
            });
        }
        Err(bad(
            text,
            "expected PRLGX-TCPIP::HOST::PORT::INTFC, PRLGX-ASRL::PATH::INTFC, TCPIP::HOST::gpib0,N::INSTR or TCPIP::HOST::hislip0::INSTR",
        ))
    }
}

impl NetworkResource {
    /// The device it names (VXI-11 `gpib0,N[,S]`, HiSLIP `hislip_gpib0_N`); `None`
    /// for an interface or a LAN instrument (`inst0`, `hislip0`).
    pub fn address(&self) -> Option<Address> {
        match self {
            Self::Hislip { device, .. } => crate::hislip::sub_address_target(device)
                .ok()
                .flatten()
                .map(|(_, a)| a),
            Self::Vxi11 { device, .. } => match proto::parse_link_name(device, None) {
                Ok((_, DeviceName::Device(a))) => Some(a),
                _ => None,
            },
            Self::Prologix { .. } => None,
        }
    }

    /// The gateway's interface a VXI-11 or HiSLIP resource names: 1 for `gpib1,5`,
    /// `gpib1` or `hislip_gpib1_5`; 0 for `gpib0,N`, `inst0`, `hislip0` and a Prologix
    /// adapter.
    pub fn interface(&self) -> u16 {
        match self {
            Self::Hislip { device, .. } => crate::hislip::sub_address_target(device)
                .ok()
                .flatten()
                .map_or(0, |(b, _)| b),
            Self::Vxi11 { device, .. } => proto::parse_link_name(device, None)
                .map(|(b, _)| b)
                .unwrap_or(0),
            Self::Prologix { .. } => 0,
        }
    }
}

/// `host:port`, an IPv6 address in brackets.
pub(crate) fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

impl fmt::Display for NetworkResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Prologix {
                board,
                link: PrologixLink::Tcp { host, port },
            } => write!(f, "PRLGX-TCPIP{board}::{host}::{port}::INTFC"),
            Self::Prologix {
                board,
                link: PrologixLink::Serial { path },
            } => write!(f, "PRLGX-ASRL{board}::{path}::INTFC"),
            Self::Vxi11 {
                board,
                host,
                port,
                device,
            } => match port {
                Some(p) => write!(f, "TCPIP{board}::{host},{p}::{device}::INSTR"),
                None => write!(f, "TCPIP{board}::{host}::{device}::INSTR"),
            },
            Self::Hislip {
                board,
                host,
                port,
                device,
            } => match port {
                Some(p) => write!(f, "TCPIP{board}::{host}::{device},{p}::INSTR"),
                None => write!(f, "TCPIP{board}::{host}::{device}::INSTR"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pyvisa_spellings() {
        for (s, shown) in [
            (
                "PRLGX-TCPIP::127.0.0.1::1234::INTFC",
                "PRLGX-TCPIP0::127.0.0.1::1234::INTFC",
            ),
            (
                "prlgx-tcpip1::lab-gpib::intfc",
                "PRLGX-TCPIP1::lab-gpib::1234::INTFC",
            ),
            (
                "PRLGX-ASRL::/dev/ttyUSB0::INTFC",
                "PRLGX-ASRL0::/dev/ttyUSB0::INTFC",
            ),
            (
                "TCPIP::10.0.0.5::gpib0,22::INSTR",
                "TCPIP0::10.0.0.5::gpib0,22::INSTR",
            ),
            (
                "TCPIP0::10.0.0.5,4000::gpib0,22,5::INSTR",
                "TCPIP0::10.0.0.5,4000::gpib0,22,5::INSTR",
            ),
            ("TCPIP::h::INSTR", "TCPIP0::h::inst0::INSTR"),
            ("TCPIP::h::hislip0::INSTR", "TCPIP0::h::hislip0::INSTR"),
            (
                "tcpip0::10.0.0.5::hislip0,4881::instr",
                "TCPIP0::10.0.0.5::hislip0,4881::INSTR",
            ),
            (
                "TCPIP::h::hislip_gpib1_22::INSTR",
                "TCPIP0::h::hislip_gpib1_22::INSTR",
            ),
        ] {
            let r: NetworkResource = s.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(r.to_string(), shown);
        }
        let r: NetworkResource = "TCPIP::h::hislip_gpib1_22::INSTR".parse().unwrap();
        assert_eq!((r.interface(), r.address().unwrap().primary.get()), (1, 22));
        let r: NetworkResource = "TCPIP::h::hislip0::INSTR".parse().unwrap();
        assert_eq!((r.interface(), r.address()), (0, None));
        let r: NetworkResource = "TCPIP::h::gpib0,22,5::INSTR".parse().unwrap();
        assert_eq!(r.address().unwrap().secondary.unwrap().get(), 5);
        assert_eq!(
            "TCPIP::h::inst0::INSTR"
                .parse::<NetworkResource>()
                .unwrap()
                .address(),
            None
        );
    }

    #[test]
    fn refuses_with_reasons() {
        for (s, why) in [
            ("PRLGX-TCPIP::h::99999::INTFC", "port"),
            ("PRLGX-TCPIP::h::1234::INSTR", "INTFC"),
            ("PRLGX-TCPIP::::INTFC", "empty host"),
            ("TCPIP::h::gpib0,31::INSTR", "31"),
            ("TCPIP::h,x::gpib0,1::INSTR", "port"),
            ("TCPIP::h,4880::hislip0::INSTR", "after the sub-address"),
            ("TCPIP::h::hislip0,x::INSTR", "port"),
            ("TCPIP::h::hislip_gpib0_31::INSTR", "31"),
            ("TCPIP::h::hislipx::INSTR", "hislip"),
            ("GPIB0::22::INSTR", "expected"),
            ("PRLGX-ASRL::INTFC", "PRLGX-ASRL"),
            ("TCPIP€::h::INSTR", "board number"),
        ] {
            let e = s.parse::<NetworkResource>().unwrap_err();
            assert!(e.to_string().contains(why), "{s}: {e}");
        }
    }
}
