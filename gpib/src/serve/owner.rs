//! Who uses a served device: a VXI-11 link, a HiSLIP session or a Prologix
//! connection, as the device locks and holds name them.

use crate::address::Address;

/// A device on a served board.
pub(crate) type Device = (u16, Address);

/// Who holds a lock or a device: a VXI-11 link, a HiSLIP session, a Prologix connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Owner {
    /// A VXI-11 link id.
    Link(u32),
    /// A HiSLIP session id.
    Session(u16),
    /// A Prologix connection (its number; Prologix has no locks, only holds).
    Prologix(u64),
}
