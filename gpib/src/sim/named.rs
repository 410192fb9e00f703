//! Named devices: linux-gpib's gpib.conf `device { name = ... }` on the simulator.

use crate::address::Address;
use crate::settings::DeviceSettings;

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
    /// Its I/O timeout (`None`: its board's), EOS mode and EOT.
    pub settings: DeviceSettings,
}

impl NamedDevice {
    /// The EOS mode as linux-gpib's `ibeos()` takes it: the byte, with REOS (0x400),
    /// XEOS (0x800) and BIN (0x1000).
    pub fn eos_mode(&self) -> u16 {
        // The byte and three flags: at most 0x1cff.
        u16::try_from(self.settings.eos_mode().linux_gpib()).unwrap_or(u16::MAX)
    }
}
