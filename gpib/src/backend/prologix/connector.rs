//! The Prologix backend's resource strings, as pyvisa-py names them:
//! `PRLGX-TCPIP<n>::host::1234::INTFC` and `PRLGX-ASRL<n>::/dev/ttyUSB0::INTFC`, an
//! interface that stands as board `GPIB<n>`, and this crate's one-string device form
//! `PRLGX-TCPIP<n>::host::1234::22::INSTR` (device 22 on that adapter, which the
//! manager opens once and shares between the devices on it).

use crate::address::Address;
use crate::backend::Backend;
use crate::connector::{Connector, OnInterface};
use crate::error::{Error, Result};
use crate::resource::{NetworkResource, PrologixLink, Resource};

/// Opens Prologix adapters.
pub(crate) struct PrologixConnector;

impl Connector for PrologixConnector {
    fn name(&self) -> &str {
        "prologix"
    }

    fn device_interface(&self, resource: &str) -> Option<Result<OnInterface>> {
        let text = resource.trim();
        let (interface, device) = one_string(text)?;
        let in_text = |e: Error| match e {
            Error::InvalidResource { reason, .. } => Error::InvalidResource {
                text: text.to_string(),
                reason,
            },
            e => e,
        };
        Some((|| {
            let interface = interface.parse::<NetworkResource>().map_err(in_text)?;
            match device.parse::<Resource>().map_err(in_text)? {
                Resource::Instrument { address, .. } => Ok(OnInterface {
                    interface: interface.to_string(),
                    address,
                    attach: true,
                }),
                Resource::Interface { .. } => {
                    Err(Error::InvalidArgument(format!("{text} names no device")))
                }
            }
        })())
    }

    fn open_device(&self, resource: &str) -> Option<Result<(Box<dyn Backend>, Address)>> {
        match resource.trim().parse::<NetworkResource>().ok()? {
            r @ NetworkResource::Prologix { board, .. } => {
                Some(Err(Error::InvalidArgument(format!(
                    "{} is a Prologix adapter (an interface): open_interface attaches it, \
                     then GPIB{board}::<address>::INSTR opens a device on it (or in one \
                     string: {}::<address>::INSTR)",
                    resource.trim(),
                    r.to_string().trim_end_matches("::INTFC")
                ))))
            }
            _ => None,
        }
    }

    fn open_interface(&self, resource: &str) -> Option<Result<(Box<dyn Backend>, u16)>> {
        match resource.parse::<NetworkResource>().ok()? {
            NetworkResource::Prologix { board, link } => Some(open(&link).map(|b| (b, board))),
            _ => None,
        }
    }
}

/// Opens the adapter at the end of `link`.
fn open(link: &PrologixLink) -> Result<Box<dyn Backend>> {
    match link {
        PrologixLink::Tcp { host, port } => Ok(Box::new(super::PrologixBoard::connect_tcp(
            &crate::resource::host_port(host, *port),
        )?)),
        #[cfg(feature = "prologix-serial")]
        PrologixLink::Serial { path } => Ok(Box::new(super::PrologixBoard::open_serial(path)?)),
        #[cfg(not(feature = "prologix-serial"))]
        PrologixLink::Serial { .. } => Err(Error::BackendUnavailable {
            backend: "prologix (serial)".into(),
            hint: "not in this build: rebuild with the gpib crate's `prologix-serial` feature"
                .into(),
        }),
    }
}

/// A one-string Prologix device resource, `PRLGX-TCPIP<n>::<host>::<port>::<pad>[::<sad>]::INSTR`
/// or `PRLGX-ASRL<n>::<path>::<pad>[::<sad>]::INSTR`, as the adapter's interface resource
/// (`...::INTFC`) and the device's `GPIB<n>::<pad>[::<sad>]::INSTR`; `None` for any other
/// string. The parts are checked when each is parsed.
fn one_string(text: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = text.split("::").collect();
    let first = parts.first()?.to_ascii_uppercase();
    if !parts.last()?.eq_ignore_ascii_case("INSTR") {
        return None;
    }
    let (prefix, link_fields) = if first.starts_with("PRLGX-TCPIP") {
        ("PRLGX-TCPIP", 2) // host, port
    } else if first.starts_with("PRLGX-ASRL") {
        ("PRLGX-ASRL", 1) // path
    } else {
        return None;
    };
    let board = parts[0].get(prefix.len()..)?;
    let fields = &parts[1..parts.len() - 1];
    if fields.len() <= link_fields || fields.len() > link_fields + 2 {
        return None;
    }
    let (link, address) = fields.split_at(link_fields);
    Some((
        format!("{}::{}::INTFC", parts[0], link.join("::")),
        format!("GPIB{board}::{}::INSTR", address.join("::")),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_string_devices_split_into_the_adapter_and_the_device() {
        let split = one_string;
        assert_eq!(
            split("PRLGX-TCPIP::10.0.0.6::1234::22::INSTR"),
            Some((
                "PRLGX-TCPIP::10.0.0.6::1234::INTFC".into(),
                "GPIB::22::INSTR".into()
            ))
        );
        assert_eq!(
            split("prlgx-tcpip1::host::1234::5::3::instr"),
            Some((
                "prlgx-tcpip1::host::1234::INTFC".into(),
                "GPIB1::5::3::INSTR".into()
            ))
        );
        assert_eq!(
            split("PRLGX-ASRL2::/dev/ttyUSB0::9::INSTR"),
            Some((
                "PRLGX-ASRL2::/dev/ttyUSB0::INTFC".into(),
                "GPIB2::9::INSTR".into()
            ))
        );
        for not_one in [
            "PRLGX-TCPIP::host::1234::INTFC",
            "PRLGX-TCPIP::host::22::INSTR", // the port is not optional here
            "PRLGX-TCPIP::host::1234::22::3::4::INSTR",
            "PRLGX-ASRL::/dev/ttyUSB0::INSTR",
            "TCPIP0::host::gpib0,22::INSTR",
            "GPIB0::22::INSTR",
        ] {
            assert_eq!(split(not_one), None, "{not_one}");
        }
    }

    #[test]
    fn one_spelling_of_the_adapter_for_every_device_on_it() {
        let c = PrologixConnector;
        let a = c
            .device_interface("PRLGX-TCPIP1::host::1234::22::INSTR")
            .unwrap()
            .unwrap();
        let b = c
            .device_interface("prlgx-tcpip1::host::1234::5::instr")
            .unwrap()
            .unwrap();
        assert_eq!(a.interface, b.interface);
        assert_eq!(a.address, Address::new(22, None).unwrap());
        assert!(a.attach);
    }
}
