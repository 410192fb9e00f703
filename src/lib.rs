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
    /// Exclusive use of the shared board, for backends whose board is one per process
    /// (dropped last, after the bus).
    _lease: Option<lease::Lease>,
}

impl Fixture {
    /// Board 0 of the built-in `bench` configuration, on the simulator backend.
    pub fn sim_bench() -> Self {
        let host = sim::bench();
        let board = host.board(0).expect("bench has board 0");
        Self {
            bus: Bus::new(board),
            host: Some(host),
            _lease: None,
        }
    }

    /// Board 0 on the linux-gpib backend (feature `linux-gpib`), for the shared bodies.
    ///
    /// In CI the linked libgpib is the compatibility library over the simulator
    /// (`compat/`), serving the built-in `bench`: the same instruments as
    /// [`Fixture::sim_bench`], but one host for the whole process. So tests take the
    /// board one at a time, and each starts from a known state: IFC, REN released,
    /// the bench's 10 s timeout, DCL, `*RST;*CLS;*ESE 0;*SRE 0` to the SCPI
    /// instrument and `ERR?` (which resets its error count) to the HP3565.
    #[cfg(feature = "linux-gpib")]
    pub fn linux_gpib_bench() -> Self {
        let lease = lease::Lease::take();
        let board = gpib::LinuxGpibBoard::open_index(0)
            .expect("board 0 through linux-gpib (is LD_LIBRARY_PATH set? see compat/README.md)");
        let bus = Bus::new(board);
        bus.interface_clear().expect("IFC");
        bus.remote_enable(false).expect("REN off");
        bus.set_timeout(std::time::Duration::from_secs(10))
            .expect("timeout");
        bus.device_clear_all().expect("DCL");
        bus.device(SCPI)
            .and_then(|d| d.write_str("*RST;*CLS;*ESE 0;*SRE 0"))
            .expect("reset the SCPI instrument");
        bus.device(HP3565)
            .and_then(|d| d.query("ERR?"))
            .expect("reset the HP3565's error count");
        Self {
            bus,
            host: None,
            _lease: Some(lease),
        }
    }

    /// The address `pad` as an [`Address`].
    pub fn addr(pad: u8) -> Address {
        Address::try_from(pad).expect("valid test address")
    }
}

/// Runs a test body once per backend compiled in: `fn name(fx: Fixture) { ... }`
/// becomes a module `name` with one `#[test]` per backend: `sim` always, and
/// `linux_gpib` with the root package's `linux-gpib` feature.
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
            #[cfg(feature = "linux-gpib")]
            #[test]
            fn linux_gpib() {
                body($crate::Fixture::linux_gpib_bench())
            }
        }
    )*};
}

mod lease {
    use std::sync::{Condvar, Mutex};

    static TAKEN: Mutex<bool> = Mutex::new(false);
    static FREED: Condvar = Condvar::new();

    /// One test at a time on a board shared by the whole process (`Send`, unlike a
    /// mutex guard, so a fixture can still move between threads).
    pub(crate) struct Lease(());

    impl Lease {
        #[cfg_attr(not(feature = "linux-gpib"), allow(dead_code))]
        pub(crate) fn take() -> Self {
            let mut taken = TAKEN.lock().unwrap_or_else(|p| p.into_inner());
            while *taken {
                taken = FREED.wait(taken).unwrap_or_else(|p| p.into_inner());
            }
            *taken = true;
            Lease(())
        }
    }

    impl Drop for Lease {
        fn drop(&mut self) {
            *TAKEN.lock().unwrap_or_else(|p| p.into_inner()) = false;
            FREED.notify_one();
        }
    }
}
