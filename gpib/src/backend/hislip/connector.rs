//! The HiSLIP backend's resource strings: `TCPIP[n]::host::hislip0[,port]::INSTR` (an
//! instrument, opened as address 0) and `TCPIP::host::hislip_gpib0_22::INSTR` (device
//! 22 behind a `gpib-diag serve` gateway).

use crate::address::Address;
use crate::backend::Backend;
use crate::connector::Connector;
use crate::error::Result;
use crate::resource::NetworkResource;

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
            r.open().map(|b| (b, address))
        }))
    }
}
