//! Faults a simulated device can be given, each producing the error a real board gives,
//! and the set a device carries, asked in one place by the bus operations.

/// A fault injected into one simulated device (see [`crate::sim::SimHost::inject`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fault {
    /// The device does not respond to its address: writes to it find no listener
    /// ([`crate::ErrorKind::NoListener`]), reads from it time out.
    Absent,
    /// The device listens but never talks: reads time out with 0 bytes.
    NeverTalks,
    /// The device stops talking after this many bytes of a message: the read times out
    /// and reports the bytes it got.
    StopsAfter(usize),
    /// The device asserts SRQ but its status byte never has RQS: finding the requester
    /// fails with [`crate::ErrorKind::SrqStuck`].
    SrqStuck,
    /// The device holds NRFD: no byte is accepted, so command bytes time out
    /// ([`crate::ErrorKind::CommandTimeout`]) and writes time out.
    HoldsNrfd,
    /// The device also drives the bus when another device is addressed to talk: reads
    /// from that other device fail with [`crate::ErrorKind::BusConflict`].
    SecondTalker,
    /// The device never asserts EOI: reads end only by EOS, a full buffer, or a timeout.
    DropsEoi,
}

impl Fault {
    /// The names [`Fault::from_str`](std::str::FromStr) takes.
    pub const NAMES: &'static str =
        "absent, never-talks, stops-after:N, srq-stuck, holds-nrfd, second-talker, drops-eoi";
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Absent => f.write_str("absent"),
            Fault::NeverTalks => f.write_str("never-talks"),
            Fault::StopsAfter(n) => write!(f, "stops-after:{n}"),
            Fault::SrqStuck => f.write_str("srq-stuck"),
            Fault::HoldsNrfd => f.write_str("holds-nrfd"),
            Fault::SecondTalker => f.write_str("second-talker"),
            Fault::DropsEoi => f.write_str("drops-eoi"),
        }
    }
}

impl std::str::FromStr for Fault {
    type Err = crate::Error;

    /// `absent`, `never-talks`, `stops-after:N`, `srq-stuck`, `holds-nrfd`,
    /// `second-talker` or `drops-eoi`.
    fn from_str(s: &str) -> crate::Result<Self> {
        let bad = || crate::Error::Config(format!("unknown fault {s:?} (known: {})", Fault::NAMES));
        Ok(match s {
            "absent" => Fault::Absent,
            "never-talks" => Fault::NeverTalks,
            "srq-stuck" => Fault::SrqStuck,
            "holds-nrfd" => Fault::HoldsNrfd,
            "second-talker" => Fault::SecondTalker,
            "drops-eoi" => Fault::DropsEoi,
            _ => match s.strip_prefix("stops-after:") {
                Some(n) => Fault::StopsAfter(n.parse().map_err(|_| {
                    crate::Error::Config(format!(
                        "fault {s:?}: stops-after takes a byte count, e.g. stops-after:100"
                    ))
                })?),
                None => return Err(bad()),
            },
        })
    }
}

/// The faults one device has; every question the bus operations ask of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FaultSet(Vec<Fault>);

impl FaultSet {
    /// Adds a fault (once).
    pub(crate) fn insert(&mut self, f: Fault) {
        if !self.0.contains(&f) {
            self.0.push(f);
        }
    }

    /// Removes every fault.
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    fn has(&self, f: Fault) -> bool {
        self.0.contains(&f)
    }

    /// The device answers to its address.
    pub(crate) fn present(&self) -> bool {
        !self.has(Fault::Absent)
    }

    /// The device holds NRFD: it accepts no byte, command or data.
    pub(crate) fn holds_nrfd(&self) -> bool {
        self.present() && self.has(Fault::HoldsNrfd)
    }

    /// The device sends nothing when addressed to talk.
    pub(crate) fn never_talks(&self) -> bool {
        self.has(Fault::NeverTalks)
    }

    /// How many more bytes of the current message the device sends, when it stops early.
    pub(crate) fn bytes_left(&self, sent_in_message: usize) -> Option<usize> {
        self.0.iter().find_map(|f| match f {
            Fault::StopsAfter(n) => Some(n.saturating_sub(sent_in_message)),
            _ => None,
        })
    }

    /// The device drives DIO whoever is the addressed talker.
    pub(crate) fn drives_dio(&self) -> bool {
        self.present() && self.has(Fault::SecondTalker)
    }

    /// The device never sends EOI.
    pub(crate) fn drops_eoi(&self) -> bool {
        self.has(Fault::DropsEoi)
    }

    /// The device asserts SRQ whatever its status byte says.
    pub(crate) fn srq_stuck(&self) -> bool {
        self.present() && self.has(Fault::SrqStuck)
    }

    /// The status byte as the device sends it in a serial poll (RQS hidden when SRQ is
    /// stuck).
    pub(crate) fn status(&self, status: u8) -> u8 {
        if self.has(Fault::SrqStuck) {
            status & !crate::status::StatusByte::RQS
        } else {
            status
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_about_a_fault_set() {
        let mut f = FaultSet::default();
        assert!(f.present() && !f.holds_nrfd() && f.bytes_left(3).is_none());
        f.insert(Fault::StopsAfter(10));
        f.insert(Fault::SrqStuck);
        f.insert(Fault::SrqStuck);
        assert_eq!(f.0.len(), 2);
        assert_eq!(f.bytes_left(4), Some(6));
        assert_eq!(f.bytes_left(40), Some(0));
        assert!(f.srq_stuck());
        assert_eq!(f.status(0x50), 0x10);
        f.insert(Fault::Absent);
        assert!(!f.present() && !f.srq_stuck() && !f.drives_dio());
        f.clear();
        assert!(f.present());
    }

    #[test]
    fn faults_by_name_round_trip() {
        for f in [
            Fault::Absent,
            Fault::NeverTalks,
            Fault::StopsAfter(12),
            Fault::SrqStuck,
            Fault::HoldsNrfd,
            Fault::SecondTalker,
            Fault::DropsEoi,
        ] {
            assert_eq!(f.to_string().parse::<Fault>().unwrap(), f);
        }
        let e = "stuck".parse::<Fault>().unwrap_err().to_string();
        assert!(e.contains("\"stuck\"") && e.contains("holds-nrfd"), "{e}");
        assert!("stops-after:x".parse::<Fault>().is_err());
    }
}
