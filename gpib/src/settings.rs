//! What a device handle is opened with: its timeout, termination and read limit, in
//! one type for every way a device is opened and described ([`crate::open`], gpib.conf
//! sections, a simulated host's named devices, the compatibility library's
//! descriptors).

use crate::abi;
use crate::backend::Eos;
pub use crate::timeout::Timeout;

/// The end-of-string byte and what it does: linux-gpib's EOS mode (`ibeos`, a gpib.conf
/// section's `eos`, `set-reos`, `set-xeos`, `set-bin`).
///
/// ```
/// use gpib::{abi, EosMode};
/// let m = EosMode { byte: b'\n', reos: true, ..EosMode::default() };
/// assert_eq!(m.linux_gpib(), 0x0a | abi::REOS);
/// assert_eq!(EosMode::from_linux_gpib(m.linux_gpib()), m);
/// assert_eq!(m.read_eos(), Some(gpib::Eos { byte: b'\n', eight_bit: false }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EosMode {
    /// The byte (default 0).
    pub byte: u8,
    /// Reads end on the byte (REOS).
    pub reos: bool,
    /// EOI is sent with the byte on writes (XEOS).
    pub xeos: bool,
    /// The byte is compared on all 8 bits (BIN), else on the low 7.
    pub bin: bool,
}

impl EosMode {
    /// The mode as `ibeos` and `ibdev` take it: the byte, with [`abi::REOS`],
    /// [`abi::XEOS`] and [`abi::BIN`].
    pub fn linux_gpib(self) -> i32 {
        let flag = |on: bool, bit: i32| if on { bit } else { 0 };
        i32::from(self.byte)
            | flag(self.reos, abi::REOS)
            | flag(self.xeos, abi::XEOS)
            | flag(self.bin, abi::BIN)
    }

    /// The mode `ibeos` value `mode` stands for (bits outside the byte and the three
    /// flags are not looked at).
    pub fn from_linux_gpib(mode: i32) -> Self {
        Self {
            byte: (mode & 0xff) as u8,
            reos: mode & abi::REOS != 0,
            xeos: mode & abi::XEOS != 0,
            bin: mode & abi::BIN != 0,
        }
    }

    /// The EOS that ends reads: `Some` when [`EosMode::reos`] is on.
    pub fn read_eos(self) -> Option<Eos> {
        self.reos.then_some(Eos {
            byte: self.byte,
            eight_bit: self.bin,
        })
    }
}

impl From<Eos> for EosMode {
    /// Reads end on `eos`.
    fn from(eos: Eos) -> Self {
        Self {
            byte: eos.byte,
            reos: true,
            xeos: false,
            bin: eos.eight_bit,
        }
    }
}

/// The settings of a device handle or descriptor, in one value: what
/// [`crate::Device`]'s setters set, and what a gpib.conf section, a simulated named
/// device and a libgpib descriptor give their device (each keeps beside it what is
/// its own alone: an address, a name, a board).
///
/// `None` fields leave the default: the bus's timeout, END only, EOI with the last
/// byte, NL after text, [`crate::DEFAULT_MAX_READ`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeviceSettings {
    /// The I/O timeout (`None`: the bus's).
    pub timeout: Option<Timeout>,
    /// The end-of-string byte and what it does (`None`: reads end on END only).
    pub eos: Option<EosMode>,
    /// EOI with the last byte of writes (linux-gpib's EOT; `None`: yes). A
    /// [`crate::Device`] always sends it; the compatibility library's descriptors
    /// follow this.
    pub eot: Option<bool>,
    /// The byte appended to text writes and queries (`None`: the default NL).
    pub write_terminator: Option<Option<u8>>,
    /// The longest whole-message read (`None`: the default).
    pub max_read: Option<usize>,
}

impl DeviceSettings {
    /// These settings where they are set, `other`'s elsewhere.
    pub fn or(self, other: DeviceSettings) -> DeviceSettings {
        DeviceSettings {
            timeout: self.timeout.or(other.timeout),
            eos: self.eos.or(other.eos),
            eot: self.eot.or(other.eot),
            write_terminator: self.write_terminator.or(other.write_terminator),
            max_read: self.max_read.or(other.max_read),
        }
    }

    /// The EOS mode, the default (byte 0, no flag) when none is set.
    pub fn eos_mode(&self) -> EosMode {
        self.eos.unwrap_or_default()
    }

    /// The EOS that ends reads: `Some` when the EOS mode has REOS.
    pub fn read_eos(&self) -> Option<Eos> {
        self.eos.and_then(EosMode::read_eos)
    }

    /// Whether writes end with EOI (EOT), yes unless set otherwise.
    pub fn eot(&self) -> bool {
        self.eot.unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn eos_modes_are_linux_gpib_s_bits() {
        for mode in [
            0,
            0x0a,
            0x0d | abi::REOS,
            0xff | abi::REOS | abi::XEOS | abi::BIN,
        ] {
            assert_eq!(
                EosMode::from_linux_gpib(mode).linux_gpib(),
                mode,
                "{mode:#x}"
            );
        }
        let m = EosMode::from_linux_gpib(0x0d | abi::XEOS);
        assert_eq!((m.byte, m.reos, m.xeos, m.bin), (0x0d, false, true, false));
        assert_eq!(m.read_eos(), None, "XEOS alone does not end reads");
        assert_eq!(
            EosMode::from(Eos::NEWLINE).linux_gpib(),
            0x0a | abi::REOS | abi::BIN
        );
    }

    #[test]
    fn unset_settings_take_the_other_s_then_the_defaults() {
        let own = DeviceSettings {
            timeout: Some(Timeout::Never),
            ..DeviceSettings::default()
        };
        let base = DeviceSettings {
            timeout: Some(Timeout::After(Duration::from_secs(1))),
            eot: Some(false),
            ..DeviceSettings::default()
        };
        let s = own.or(base);
        assert_eq!((s.timeout, s.eot()), (Some(Timeout::Never), false));
        assert!(DeviceSettings::default().eot());
        assert_eq!(DeviceSettings::default().eos_mode(), EosMode::default());
        assert_eq!(DeviceSettings::default().read_eos(), None);
    }
}
