//! How a backend says which resource strings it opens: the [`Connector`] each backend
//! registers with the [`crate::ResourceManager`] (probe-rs's `ProbeFactory`), so that the
//! choice of backend by resource string is made in one place.
//!
//! The built-in backends register one connector each, in their own module: linux-gpib
//! (`GPIB<n>::INTFC`, feature `linux-gpib`), VXI-11 (`TCPIP::host::gpib0[,22]::INSTR`,
//! `inst0`), HiSLIP (`TCPIP::host::hislip0::INSTR`), Prologix (`PRLGX-TCPIP::...::INTFC`),
//! and a simulated host's boards (feature `sim`). An app or another crate adds its own
//! with [`crate::ResourceManager::register`].
//!
//! ```
//! use gpib::{Address, Backend, Connector, Error, ResourceManager, Result};
//!
//! /// `USBTMC::<serial>::INSTR`: a backend of the app's own.
//! struct Usbtmc;
//!
//! impl Connector for Usbtmc {
//!     fn name(&self) -> &str {
//!         "usbtmc"
//!     }
//!     fn open_device(&self, resource: &str) -> Option<Result<(Box<dyn Backend>, Address)>> {
//!         let serial = resource.strip_prefix("USBTMC::")?.strip_suffix("::INSTR")?;
//!         // A real backend opens the device here.
//!         Some(Err(Error::InvalidArgument(format!("no USB instrument {serial}"))))
//!     }
//! }
//!
//! let mut rm = ResourceManager::new();
//! rm.register(Box::new(Usbtmc));
//! let e = rm.open("USBTMC::MY4711::INSTR").unwrap_err();
//! assert_eq!(e.to_string(), "invalid argument: no USB instrument MY4711");
//! ```

use crate::address::Address;
use crate::backend::Backend;
use crate::error::Result;

/// A backend's way in from a resource string.
///
/// Each method answers `None` for a string that is not one of this backend's (the
/// manager asks the next connector), and `Some(Err(..))` for one of its own that
/// cannot be opened (bad host, no such board): the error says why.
pub trait Connector: Send + Sync {
    /// The backend's name, for messages (`vxi11`, `linux-gpib`).
    fn name(&self) -> &str;

    /// Opens the device `resource` names: the bus it is on (unshared: the manager makes
    /// it a [`crate::Bus`], a caller may first wrap it, as a trace recorder does) and the
    /// device's address on that bus. `GPIB<n>::<address>::INSTR` is not asked for: it is
    /// opened on the board [`Connector::open_interface`] gives for `GPIB<n>::INTFC`. The
    /// default: this backend has no device resources of its own.
    fn open_device(&self, resource: &str) -> Option<Result<(Box<dyn Backend>, Address)>> {
        let _ = resource;
        None
    }

    /// Where the device `resource` names is, when it is on an interface of this backend
    /// (a Prologix adapter, a VXI-11 gateway's bus): that interface's resource, opened
    /// with [`Connector::open_interface`] and shared by every device resource on it, and
    /// the device's address there. Asked before [`Connector::open_device`]. The
    /// default: none (each device resource of this backend has a link of its own).
    fn device_interface(&self, resource: &str) -> Option<Result<OnInterface>> {
        let _ = resource;
        None
    }

    /// Opens the interface `resource` names (a board, an adapter, a gateway's bus) and
    /// the board number `GPIB<n>` it stands as. The default: this backend has none.
    fn open_interface(&self, resource: &str) -> Option<Result<(Box<dyn Backend>, u16)>> {
        let _ = resource;
        None
    }

    /// The resources of this backend that can be found without being named. An
    /// interface `GPIB<n>::INTFC` among them is opened by the manager, and listed with
    /// the listeners found on it, only when it opens; other names are listed as given.
    /// The default: none (a network backend cannot tell where to look).
    fn list(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A device resource as an interface and an address on it
/// ([`Connector::device_interface`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnInterface {
    /// The interface's resource, in one spelling for every device on it (the manager
    /// shares one open interface between the device resources that give the same).
    pub interface: String,
    /// The device's address on the interface.
    pub address: Address,
    /// Whether the interface then stands as board `GPIB<n>` of the manager (a Prologix
    /// adapter does; a VXI-11 gateway opened for a device resource does not, so as not
    /// to take the place of a board of that number).
    pub attach: bool,
}

/// A backend opened for a resource string, before it is shared as a [`crate::Bus`]
/// ([`crate::ResourceManager::connect`]).
pub struct Connection {
    /// The bus the resource is on.
    pub backend: Box<dyn Backend>,
    /// The device the resource names on it; `None` for an interface.
    pub address: Option<Address>,
    /// The name of the connector that opened it ([`Connector::name`]).
    pub connector: String,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("address", &self.address)
            .field("connector", &self.connector)
            .finish_non_exhaustive()
    }
}
