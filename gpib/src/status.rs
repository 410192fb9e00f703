//! The serial-poll status byte and a snapshot of the bus management and handshake lines.

use std::fmt;

/// A device's status byte, as returned by a serial poll (IEEE 488.2 §11.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StatusByte(pub u8);

impl StatusByte {
    /// Bit 4: Message AVailable (output queue not empty).
    pub const MAV: u8 = 0x10;
    /// Bit 5: Event Status Bit (an enabled bit of the standard event status register is set).
    pub const ESB: u8 = 0x20;
    /// Bit 6: ReQuest Service (in a serial poll answer) / MSS (in `*STB?`).
    pub const RQS: u8 = 0x40;

    /// The raw byte.
    pub const fn bits(self) -> u8 {
        self.0
    }
    /// True when the device requests service.
    pub const fn rqs(self) -> bool {
        self.0 & Self::RQS != 0
    }
    /// True when the device has a message available.
    pub const fn mav(self) -> bool {
        self.0 & Self::MAV != 0
    }
    /// True when the event status bit is set.
    pub const fn esb(self) -> bool {
        self.0 & Self::ESB != 0
    }
}

impl fmt::Display for StatusByte {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:02X}", self.0)?;
        for (set, name) in [
            (self.rqs(), "RQS"),
            (self.esb(), "ESB"),
            (self.mav(), "MAV"),
        ] {
            if set {
                write!(f, " {name}")?;
            }
        }
        Ok(())
    }
}

/// A snapshot of the bus lines (true = asserted), as linux-gpib's `iblines` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BusLines {
    /// Data valid (handshake).
    pub dav: bool,
    /// Not ready for data (handshake).
    pub nrfd: bool,
    /// Not data accepted (handshake).
    pub ndac: bool,
    /// Attention: the controller is sending commands.
    pub atn: bool,
    /// End or identify.
    pub eoi: bool,
    /// Service request.
    pub srq: bool,
    /// Interface clear.
    pub ifc: bool,
    /// Remote enable.
    pub ren: bool,
}

/// The board's own interface state, as linux-gpib's board `ibsta` shows it: whether it
/// is controller-in-charge, asserts ATN, is addressed to talk (TACS) or to listen
/// (LACS), asserts REN, and whether SRQ is asserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BoardStatus {
    /// Controller-in-charge (CIC).
    pub controller_in_charge: bool,
    /// The board asserts ATN.
    pub atn: bool,
    /// The board is addressed to talk (TACS).
    pub talker: bool,
    /// The board is addressed to listen (LACS).
    pub listener: bool,
    /// The board asserts REN.
    pub remote_enable: bool,
    /// SRQ is asserted.
    pub srq: bool,
}

impl fmt::Display for BusLines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines = [
            (self.dav, "DAV"),
            (self.nrfd, "NRFD"),
            (self.ndac, "NDAC"),
            (self.atn, "ATN"),
            (self.eoi, "EOI"),
            (self.srq, "SRQ"),
            (self.ifc, "IFC"),
            (self.ren, "REN"),
        ];
        let mut first = true;
        for (set, name) in lines {
            if set {
                if !first {
                    f.write_str(" ")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        if first {
            f.write_str("(none)")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_bits() {
        let s = StatusByte(0x50);
        assert!(s.rqs() && s.mav() && !s.esb());
        assert_eq!(s.to_string(), "0x50 RQS MAV");
        assert!(!StatusByte(0).rqs());
    }

    #[test]
    fn lines_display() {
        let l = BusLines {
            ren: true,
            srq: true,
            ..Default::default()
        };
        assert_eq!(l.to_string(), "SRQ REN");
        assert_eq!(BusLines::default().to_string(), "(none)");
    }
}
