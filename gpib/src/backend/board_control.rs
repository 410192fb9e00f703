//! The board-control capability: the bus lines and ATN, parallel poll and the listener
//! check, for boards whose driver exposes them (the simulator, linux-gpib), reached
//! through [`Backend::board_control`](super::Backend::board_control).

use crate::address::Address;
use crate::error::Result;
use crate::status::{BoardStatus, BusLines};

/// What a board's driver can sense and do below the transfers. A backend whose driver
/// lacks one of them answers it with
/// [`Error::unsupported`](crate::Error::unsupported) and its own name.
pub trait BoardControl {
    /// Conducts a parallel poll and returns the DIO byte.
    fn parallel_poll(&mut self) -> Result<u8>;

    /// A snapshot of the bus lines.
    fn lines(&mut self) -> Result<BusLines>;

    /// The board's own state (CIC, ATN, TACS, LACS, REN, SRQ), so that no layer above
    /// has to decode its own command bytes to know it.
    fn board_status(&mut self) -> Result<BoardStatus>;

    /// Releases ATN without moving data (linux-gpib's `ibgts`): the board goes to
    /// standby, the addressed talker and listeners may transfer.
    fn go_to_standby(&mut self) -> Result<()>;

    /// Asserts ATN without sending command bytes (linux-gpib's `ibcac`).
    fn take_control(&mut self) -> Result<()>;

    /// True when a device listens at `address` (addresses it to listen and senses NDAC).
    fn listener_present(&mut self, address: Address) -> Result<bool>;
}
