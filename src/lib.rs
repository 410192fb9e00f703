//! Support for the workspace's examples and integration tests (not published).
//!
//! [`Fixture`] is what every shared integration test body gets: a [`Bus`] on some
//! backend, plus the simulated host behind it when the test can reach it (fault
//! injection and transcripts need it).
#![forbid(unsafe_code)]

use gpib::sim::{self, SimHost};
use gpib::{Address, Bus};

/// Address of the SCPI instrument on the `bench` configuration.
pub const SCPI: u8 = 22;
/// Address of the HP3565 on the `bench` configuration.
pub const HP3565: u8 = 11;

/// A bus to test on.
pub struct Fixture {
    /// The bus.
    pub bus: Bus,
    /// The simulated host, when the test runs in-process on the simulator.
    pub host: Option<SimHost>,
}

impl Fixture {
    /// Board 0 of the built-in `bench` configuration, on the simulator backend.
    pub fn sim_bench() -> Self {
        let host = sim::bench();
        let board = host.board(0).expect("bench has board 0");
        Self {
            bus: Bus::new(board),
            host: Some(host),
        }
    }

    /// The address `pad` as an [`Address`].
    pub fn addr(pad: u8) -> Address {
        Address::try_from(pad).expect("valid test address")
    }
}

/// Runs a test body once per backend compiled in: `fn name(fx: Fixture) { ... }`
/// becomes a module `name` with one `#[test]` per backend.
#[macro_export]
macro_rules! on_every_backend {
    ($(fn $name:ident($fx:ident : Fixture) $body:block)*) => {$(
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            fn body($fx: $crate::Fixture) $body
            #[test]
            fn sim() {
                body($crate::Fixture::sim_bench())
            }
        }
    )*};
}
