//! The built-in backends' connectors, in the order they are asked: each backend's own
//! is defined in its module; this is the one list of them.

use crate::backend::hislip::connector::HislipConnector;
use crate::backend::prologix::connector::PrologixConnector;
use crate::backend::vxi11::connector::Vxi11Connector;
use crate::connector::Connector;

/// Every built-in backend of this build (the simulator's is registered on top of
/// these by `ResourceManager::simulated`).
pub(super) fn connectors() -> Vec<Box<dyn Connector>> {
    vec![
        Box::new(Vxi11Connector),
        Box::new(HislipConnector),
        Box::new(PrologixConnector),
        #[cfg(feature = "linux-gpib")]
        Box::new(crate::backend::linux_gpib::connector::LinuxGpibConnector),
    ]
}
