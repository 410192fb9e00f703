//! `gpib-diag discover`: VXI-11 instruments and gateways on the network, found by the
//! portmapper GETPORT broadcast of `lxi discover` and the VISA finders
//! ([`gpib::backend::vxi11::discover`]).

mod idn;

use std::collections::BTreeSet;
use std::io::Write as _;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use gpib::backend::vxi11::{self, Responder};

use crate::cli::DiscoverArgs;
use crate::error::{DiagError, Result};

/// Runs the command: one line per host, `TCPIP0::HOST::inst0::INSTR`.
pub fn run(a: &DiscoverArgs) -> Result<()> {
    // The option's parser keeps it within 0..=1e6 s.
    let timeout = Duration::from_secs_f64(a.timeout);
    let mut lines = BTreeSet::new();
    for &to in &a.broadcast {
        let found = vxi11::discover(to, timeout)?;
        eprintln!(
            "gpib-diag discover: {} host(s) answered the call to {to}",
            found.len()
        );
        lines.extend(found.iter().map(|r| resource(r, to.port())));
    }
    let lines: Vec<String> = lines.into_iter().collect();
    let answers = if a.idn && !lines.is_empty() {
        // The option's parser keeps it within 0..=1e6 s.
        let phase = Duration::from_secs_f64(a.idn_deadline);
        let deadline = Instant::now().checked_add(phase).ok_or_else(|| {
            DiagError::Usage(format!(
                "--idn-deadline {} is past what the clock can count",
                a.idn_deadline
            ))
        })?;
        idn::ask_all(&lines, deadline, phase)
    } else {
        Vec::new()
    };
    let mut out = std::io::stdout().lock();
    for (i, r) in lines.iter().enumerate() {
        let line = match answers.get(i) {
            Some(answer) => format!("{r}  {answer}"),
            None => r.clone(),
        };
        writeln!(out, "{line}").map_err(|source| DiagError::Output {
            path: "-".into(),
            source,
        })?;
    }
    Ok(())
}

/// The resource string of a host found through the portmapper at `pm_port`: the
/// standard `TCPIP0::HOST::inst0::INSTR` when that is 111 (VISA asks the portmapper
/// there), else with the core port, `TCPIP0::HOST,PORT::inst0::INSTR` (which this
/// library and pyvisa-py open without a portmapper).
pub fn resource(r: &Responder, pm_port: u16) -> String {
    let host = match SocketAddr::new(r.ip, 0) {
        SocketAddr::V4(v) => v.ip().to_string(),
        SocketAddr::V6(v) => format!("[{}]", v.ip()),
    };
    if pm_port == gpib::backend::vxi11::proto::portmap::PORT {
        format!("TCPIP0::{host}::inst0::INSTR")
    } else {
        format!("TCPIP0::{host},{}::inst0::INSTR", r.core_port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

    #[test]
    fn resource_strings_name_the_core_port_off_111() {
        let r = Responder {
            ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 5)),
            core_port: 40001,
        };
        assert_eq!(resource(&r, 111), "TCPIP0::10.0.0.5::inst0::INSTR");
        assert_eq!(resource(&r, 40111), "TCPIP0::10.0.0.5,40001::inst0::INSTR");
        let r6 = Responder {
            ip: IpAddr::V6(Ipv6Addr::LOCALHOST),
            core_port: 1,
        };
        assert_eq!(resource(&r6, 111), "TCPIP0::[::1]::inst0::INSTR");
    }
}
