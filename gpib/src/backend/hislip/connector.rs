//! The HiSLIP backend's resource strings: `TCPIP[n]::host::hislip0[,port]::INSTR` (an
//! instrument, opened as address 0) and `TCPIP::host::hislip_gpib0_22::INSTR` (device
//! 22 behind a `gpib-diag serve` gateway).

use crate::address::Address;
use crate::backend::Backend;
use crate::connector::Connector;
use crate::error::{Error, Result};
use crate::resource::NetworkResource;

use super::HislipBoard;

/// Opens HiSLIP resources.
pub(crate) struct HislipConnector;

impl Connector for HislipConnector {
    fn name(&self) -> &str {
        "hislip"
    }

    fn open_device(&self, resource: &str) -> Option<Result<(Box<dyn Backend>, Address)>> {
        let r = resource.parse::<NetworkResource>().ok()?;
        if !matches!(r, NetworkResource::Hislip { .. }) {
            return None;
        }
        // `hislip0` (an instrument) is opened for address 0.
        Some(Address::try_from(0u8).and_then(|zero| {
            let address = r.address().unwrap_or(zero);
            open(&r).map(|b| (Box::new(b) as Box<dyn Backend>, address))
        }))
    }
}

/// A HiSLIP resource's server as a board: `hislip_gpibB_N` is device N of it,
/// another sub-address (`hislip0`) is named for address 0.
fn open(r: &NetworkResource) -> Result<HislipBoard> {
    let NetworkResource::Hislip {
        host, port, device, ..
    } = r
    else {
        return Err(Error::InvalidArgument(format!("{r} is not HiSLIP")));
    };
    let at = crate::resource::host_port(host, port.unwrap_or(crate::hislip::PORT));
    let mut b = HislipBoard::connect(&at, r.interface())?;
    if r.address().is_none() {
        b.name_session(Address::try_from(0u8).expect("0 is an address"), device);
    }
    Ok(b)
}
