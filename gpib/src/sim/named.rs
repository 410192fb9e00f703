//! Named devices: linux-gpib's gpib.conf `device { name = ... }` on the simulator.

use std::time::Duration;

use crate::address::Address;

/// A device with a name (linux-gpib's gpib.conf `device { name = ... }`) and the
/// settings a descriptor opened by that name starts with (`ibfind("name")`).
#[derive(Debug, Clone, PartialEq)]
pub struct NamedDevice {
    /// Its name, unique on the host (also among board names).
    pub name: String,
    /// Index of its board.
    pub board: usize,
    /// Its address.
    pub address: Address,
    /// Its I/O timeout (`Duration::ZERO`: none); `None`: its board's.
    pub timeout: Option<Duration>,
    /// The end-of-string byte.
    pub eos: u8,
    /// Reads end on the EOS byte (REOS).
    pub reos: bool,
    /// The EOS byte is compared on 8 bits (BIN).
    pub bin: bool,
    /// EOI goes with the EOS byte on writes (XEOS).
    pub xeos: bool,
    /// EOI with the last byte of writes.
    pub eot: bool,
}

impl NamedDevice {
    /// The EOS mode as linux-gpib's `ibeos()` takes it: the byte, with REOS (0x400),
    /// XEOS (0x800) and BIN (0x1000).
    pub fn eos_mode(&self) -> u16 {
        u16::from(self.eos)
            | if self.reos { 0x0400 } else { 0 }
            | if self.xeos { 0x0800 } else { 0 }
            | if self.bin { 0x1000 } else { 0 }
    }
}
