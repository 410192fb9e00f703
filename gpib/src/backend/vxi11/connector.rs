//! The VXI-11 backend's resource strings: `TCPIP[n]::host[,port]::gpib0,22::INSTR` (a
//! device behind a LAN/GPIB gateway: on the gateway's bus `gpib0`, which the manager
//! opens once for every device on it), `TCPIP[n]::host::inst0::INSTR` (a LAN
//! instrument), and `TCPIP<n>::host::gpib0::INSTR` as an interface (the gateway's bus,
//! as board `GPIB<n>`).

use crate::address::Address;
use crate::backend::Backend;
use crate::connector::{Connector, OnInterface};
use crate::error::Result;
use crate::resource::NetworkResource;

use super::{Vxi11Board, Vxi11Options};

/// Opens VXI-11 resources.
pub(crate) struct Vxi11Connector;

impl Connector for Vxi11Connector {
    fn name(&self) -> &str {
        "vxi11"
    }

    /// `gpib0,22`: device 22 on the gateway's bus `gpib0` (`TCPIP<n>::host::gpib0::INSTR`).
    fn device_interface(&self, resource: &str) -> Option<Result<OnInterface>> {
        let r = resource.parse::<NetworkResource>().ok()?;
        let address = r.address()?;
        let NetworkResource::Vxi11 {
            board, host, port, ..
        } = &r
        else {
            return None;
        };
        let bus = NetworkResource::Vxi11 {
            board: *board,
            host: host.clone(),
            port: *port,
            device: format!("gpib{}", r.interface()),
        };
        Some(Ok(OnInterface {
            interface: bus.to_string(),
            address,
            attach: false,
        }))
    }

    fn open_device(&self, resource: &str) -> Option<Result<(Box<dyn Backend>, Address)>> {
        let r = resource.parse::<NetworkResource>().ok()?;
        let NetworkResource::Vxi11 { device, .. } = &r else {
            return None;
        };
        Some((|| {
            let mut gateway = open(&r)?;
            let address = match r.address() {
                Some(a) => a,
                None => {
                    // A LAN instrument (inst0, ...): its link stands where a GPIB
                    // address would.
                    let a = Address::try_from(0u8)?;
                    gateway.name_link(a, device);
                    a
                }
            };
            Ok((Box::new(gateway) as Box<dyn Backend>, address))
        })())
    }

    fn open_interface(&self, resource: &str) -> Option<Result<(Box<dyn Backend>, u16)>> {
        match resource.parse::<NetworkResource>().ok()? {
            r @ NetworkResource::Vxi11 { board, .. } if r.address().is_none() => {
                Some(open(&r).map(|b| (Box::new(b) as Box<dyn Backend>, board)))
            }
            _ => None,
        }
    }
}

/// Connects to the gateway of a VXI-11 resource, on the interface it names.
fn open(r: &NetworkResource) -> Result<Vxi11Board> {
    let NetworkResource::Vxi11 { host, port, .. } = r else {
        return Err(crate::Error::InvalidArgument(format!("{r} is not VXI-11")));
    };
    let opts = Vxi11Options {
        port: *port,
        ..Default::default()
    };
    let mut gateway = Vxi11Board::connect(host, opts)?;
    gateway.use_interface(r.interface());
    Ok(gateway)
}
