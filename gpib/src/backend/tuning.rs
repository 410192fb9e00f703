//! [`BoardTuning`]: the driver settings of a board that a program can read and change
//! (linux-gpib's `ibconfig`/`ibask` options `IbcTIMING`, `IbcAUTOPOLL`, `IbcREADDR`,
//! `IbcUnAddr`), an optional capability of a [`crate::Backend`]
//! ([`crate::Backend::tuning`]).
//!
//! A program asks for the shortest T1 where the board's driver has the setting, and
//! goes on where it has none (the fake board, a network adapter):
//!
//! ```
//! use gpib::backend::fake::FakeBoard;
//! use gpib::backend::tuning::T1Delay;
//! use gpib::{Bus, ErrorKind};
//!
//! fn fastest_t1(bus: &Bus) -> gpib::Result<Option<T1Delay>> {
//!     match bus.tuning(|t| t.set_t1(T1Delay::Ns350)) {
//!         Ok(applied) => Ok(Some(applied)),
//!         Err(e) if e.kind() == ErrorKind::Unsupported => Ok(None),
//!         Err(e) => Err(e),
//!     }
//! }
//!
//! assert_eq!(fastest_t1(&Bus::new(FakeBoard::new()))?, None);
//! // A simulated board (feature `sim`) models the driver's settings, as linux-gpib has them:
//! # #[cfg(feature = "sim")]
//! assert_eq!(fastest_t1(&Bus::new(gpib::sim::bench().board(0)?))?, Some(T1Delay::Ns350));
//! # Ok::<(), gpib::Error>(())
//! ```

use crate::abi::{T1_DELAY_2000NS, T1_DELAY_350NS, T1_DELAY_500NS};
use crate::error::Result;
use crate::ieee488::{MIN_T1_NS, T1_STANDARD_NS, T1_TRISTATE_NS};

/// The three T1 settling times IEEE 488.1 names, which linux-gpib's `IbcTIMING` selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum T1Delay {
    /// 2 µs: open-collector drivers or long cables (`T1_DELAY_2000ns`).
    Ns2000,
    /// 500 ns: tri-state drivers (`T1_DELAY_500ns`).
    Ns500,
    /// 350 ns: the shortest the standard allows (`T1_DELAY_350ns`).
    Ns350,
}

impl T1Delay {
    /// The settling time in nanoseconds.
    pub const fn nanos(self) -> u64 {
        match self {
            T1Delay::Ns2000 => T1_STANDARD_NS,
            T1Delay::Ns500 => T1_TRISTATE_NS,
            T1Delay::Ns350 => MIN_T1_NS,
        }
    }

    /// The setting a board settling in `ns` answers `ibask(IbaTIMING)` with, as
    /// linux-gpib's library rounds the driver's figure: under 500 ns is 350 ns, under
    /// 2 µs is 500 ns, anything longer 2 µs.
    pub const fn from_nanos(ns: u64) -> Self {
        if ns < T1_TRISTATE_NS {
            T1Delay::Ns350
        } else if ns < T1_STANDARD_NS {
            T1Delay::Ns500
        } else {
            T1Delay::Ns2000
        }
    }

    /// linux-gpib's code for it (`T1_DELAY_2000ns` = 1, `500ns` = 2, `350ns` = 3).
    pub const fn code(self) -> i32 {
        match self {
            T1Delay::Ns2000 => T1_DELAY_2000NS,
            T1Delay::Ns500 => T1_DELAY_500NS,
            T1Delay::Ns350 => T1_DELAY_350NS,
        }
    }

    /// The setting of linux-gpib code `code`, if it is one.
    pub const fn from_code(code: i32) -> Option<Self> {
        match code {
            T1_DELAY_2000NS => Some(T1Delay::Ns2000),
            T1_DELAY_500NS => Some(T1Delay::Ns500),
            T1_DELAY_350NS => Some(T1Delay::Ns350),
            _ => None,
        }
    }
}

impl std::fmt::Display for T1Delay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            T1Delay::Ns2000 => f.write_str("2 µs"),
            T1Delay::Ns500 => f.write_str("500 ns"),
            T1Delay::Ns350 => f.write_str("350 ns"),
        }
    }
}

/// A board driver's settings that change what each call costs on the bus.
///
/// Each setter returns the value the driver actually applied, which may differ from
/// the one asked for (a NEC 7210 board has no 350 ns T1 and settles 500 ns; linux-gpib
/// readdresses on every call whatever `IbcREADDR` says). A setting the backend cannot
/// change is an [`crate::ErrorKind::Unsupported`] error; a driver error keeps its
/// kind.
pub trait BoardTuning {
    /// The T1 settling time the board uses when it talks (`ibask(IbaTIMING)`).
    fn t1(&mut self) -> Result<T1Delay>;
    /// Sets the board's T1 (`ibconfig(IbcTIMING)`); returns the one in force after.
    fn set_t1(&mut self, t1: T1Delay) -> Result<T1Delay>;

    /// Whether the driver serial-polls devices as soon as SRQ is asserted
    /// (`ibask(IbaAUTOPOLL)`).
    fn autopoll(&mut self) -> Result<bool>;
    /// Switches automatic serial polling (`ibconfig(IbcAUTOPOLL)`); returns whether it
    /// is on after.
    fn set_autopoll(&mut self, on: bool) -> Result<bool>;

    /// Whether every device read and write sends its addressing bytes (UNL, MTA/MLA,
    /// secondaries), even when the same device was last addressed the same way.
    fn readdress(&mut self) -> Result<bool>;
    /// Switches addressing on every call (`IbcREADDR`); returns whether it is on after.
    fn set_readdress(&mut self, on: bool) -> Result<bool>;

    /// Whether every device read and write ends with UNL and UNT (`ibask(IbaUnAddr)`).
    fn unaddress(&mut self) -> Result<bool>;
    /// Switches unaddressing after every call (`ibconfig(IbcUnAddr)`); returns whether
    /// it is on after.
    fn set_unaddress(&mut self, on: bool) -> Result<bool>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_nanoseconds_are_linux_gpibs() {
        for t in [T1Delay::Ns2000, T1Delay::Ns500, T1Delay::Ns350] {
            assert_eq!(T1Delay::from_code(t.code()), Some(t));
            assert_eq!(T1Delay::from_nanos(t.nanos()), t);
        }
        assert_eq!(
            (
                T1Delay::Ns2000.code(),
                T1Delay::Ns500.code(),
                T1Delay::Ns350.code()
            ),
            (1, 2, 3)
        );
        assert_eq!(T1Delay::from_code(0), None);
        assert_eq!(T1Delay::from_code(4), None);
        // linux-gpib's query_board_t1_delay rounding.
        assert_eq!(T1Delay::from_nanos(499), T1Delay::Ns350);
        assert_eq!(T1Delay::from_nanos(1999), T1Delay::Ns500);
        assert_eq!(T1Delay::from_nanos(10_000), T1Delay::Ns2000);
        assert_eq!(T1Delay::Ns350.to_string(), "350 ns");
    }
}
