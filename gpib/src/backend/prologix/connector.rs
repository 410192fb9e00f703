//! The Prologix backend's resource strings, as pyvisa-py names them:
//! `PRLGX-TCPIP<n>::host::1234::INTFC` and `PRLGX-ASRL<n>::/dev/ttyUSB0::INTFC`, an
//! interface that stands as board `GPIB<n>`.

use crate::address::Address;
use crate::backend::Backend;
use crate::connector::Connector;
use crate::error::{Error, Result};
use crate::resource::NetworkResource;

/// Opens Prologix adapters.
pub(crate) struct PrologixConnector;

impl Connector for PrologixConnector {
    fn name(&self) -> &str {
        "prologix"
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
            r @ NetworkResource::Prologix { board, .. } => Some(r.open().map(|b| (b, board))),
            _ => None,
        }
    }
}
