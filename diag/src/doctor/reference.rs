//! What a bus can do at best, from the standard alone: the IEEE 488.1 handshake
//! ceiling for the board's T1, the reference the doctor holds measurements against on
//! any backend, with no simulator to compare with.
//!
//! Each byte of the three-wire handshake takes at least the talker's T1 settling time
//! plus the slowest listener's acceptance, and never less than the standard's ceiling:
//! 1 µs a byte (1 MB/s), or 125 ns with HS488. When the board writes, its own T1 counts;
//! when it reads, the instrument's T1 does, which the host cannot ask, so only the
//! ceiling is sure.

use gpib::ieee488::{HS488_MIN_BYTE_NS, IEEE488_MIN_BYTE_NS};
use serde::Serialize;

use crate::sample::Direction;

/// What the board's settings say about the handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Handshake {
    /// The board's T1 settling time, ns, when the backend can tell.
    pub t1_ns: Option<u64>,
    /// Whether HS488 is on (8 MB/s ceiling), when the backend can tell.
    pub hs488: Option<bool>,
}

impl Handshake {
    /// The shortest time a byte can take on any IEEE 488 bus this board could drive:
    /// 125 ns unless HS488 is known to be off, then 1 µs.
    pub fn physical_floor_ns(&self) -> u64 {
        if self.hs488 == Some(false) {
            IEEE488_MIN_BYTE_NS
        } else {
            HS488_MIN_BYTE_NS
        }
    }

    /// The shortest time a byte takes in `direction` with the board's settings: T1
    /// (when the board talks) and the ceiling of the handshake in use.
    pub fn byte_ns(&self, direction: Direction) -> u64 {
        let floor = if self.hs488 == Some(true) {
            HS488_MIN_BYTE_NS
        } else {
            IEEE488_MIN_BYTE_NS
        };
        match (direction, self.t1_ns) {
            (Direction::Write, Some(t1)) => t1.max(floor),
            _ => floor,
        }
    }

    /// What the reference is, in words: "T1 500 ns, IEEE 488.1".
    pub fn describe(&self) -> String {
        let t1 = match self.t1_ns {
            Some(t) => format!("T1 {t} ns"),
            None => "T1 unknown".into(),
        };
        let mode = match self.hs488 {
            Some(true) => "HS488",
            Some(false) => "IEEE 488.1",
            None => "IEEE 488.1 (HS488 not known)",
        };
        format!("{t1}, {mode}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_board_t1_bounds_writes_and_the_standard_bounds_reads() {
        let slow = Handshake {
            t1_ns: Some(2000),
            hs488: Some(false),
        };
        assert_eq!(slow.byte_ns(Direction::Write), 2000);
        assert_eq!(slow.byte_ns(Direction::Read), 1000);
        assert_eq!(slow.physical_floor_ns(), 1000);
        let fast = Handshake {
            t1_ns: Some(350),
            hs488: Some(false),
        };
        assert_eq!(fast.byte_ns(Direction::Write), 1000, "never past 1 MB/s");
        let hs = Handshake {
            t1_ns: Some(350),
            hs488: Some(true),
        };
        assert_eq!(hs.byte_ns(Direction::Write), 350);
        assert_eq!(hs.byte_ns(Direction::Read), 125);
        // Nothing known (a network adapter): the IEEE 488.1 ceiling alone.
        let unknown = Handshake {
            t1_ns: None,
            hs488: None,
        };
        assert_eq!(unknown.byte_ns(Direction::Write), 1000);
        assert_eq!(
            unknown.physical_floor_ns(),
            125,
            "an unknown board might run HS488"
        );
        assert_eq!(slow.describe(), "T1 2000 ns, IEEE 488.1");
    }
}
