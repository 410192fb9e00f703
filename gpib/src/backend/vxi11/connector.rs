//! The VXI-11 backend's resource strings: `TCPIP[n]::host[,port]::gpib0,22::INSTR` (a
//! device behind a LAN/GPIB gateway), `TCPIP[n]::host::inst0::INSTR` (a LAN
//! instrument), and `TCPIP<n>::host::gpib0::INSTR` as an interface (the gateway's bus,
//! as board `GPIB<n>`).

use crate::address::Address;
use crate::backend::Backend;
use crate::connector::Connector;
use crate::error::Result;
use crate::resource::NetworkResource;

use super::{Vxi11Board, Vxi11Options};

/// Opens VXI-11 resources.
pub(crate) struct Vxi11Connector;

impl Connector for Vxi11Connector {
    fn name(&self) -> &str {
        "vxi11"
    }

    fn open_device(&self, resource: &str) -> Option<Result<(Box<dyn Backend>, Address)>> {
        let r = resource.parse::<NetworkResource>().ok()?;
        let NetworkResource::Vxi11 {
            host, port, device, ..
        } = &r
        else {
            return None;
        };
        Some((|| {
            let opts = Vxi11Options {
                port: *port,
                ..Default::default()
            };
            let mut gateway = Vxi11Board::connect(host, opts)?;
            gateway.use_interface(r.interface());
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
                Some(r.open().map(|b| (b, board)))
            }
            _ => None,
        }
    }
}
