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
    /// The simulated host, when the test runs in-process on the simulator (for the
    /// network backends: the host behind the in-process server).
    pub host: Option<SimHost>,
    /// The in-process server the network backends talk to (stopped after the bus).
    _server: Option<gpib::serve::Server>,
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
            _server: None,
            _lease: None,
        }
    }

    /// A fresh `bench` served on 127.0.0.1 (free ports) by an in-process
    /// [`gpib::serve::Server`], for the network backends.
    fn served_bench() -> (SimHost, gpib::serve::Server) {
        let host = sim::bench();
        let board = host.board(0).expect("bench has board 0");
        let opts = gpib::serve::ServeOptions {
            default_address: Some(Self::addr(SCPI)),
            ..gpib::serve::ServeOptions::ephemeral()
        };
        let server = gpib::serve::Server::start(Bus::new(board), opts).expect("start the server");
        (host, server)
    }

    /// The `bench` through the Prologix backend, over TCP to an in-process server
    /// emulating a GPIB-ETHERNET adapter. The bus timeout is 2 s of wall time (a
    /// read that gets nothing waits that long on a network backend).
    pub fn prologix_bench() -> Self {
        let (host, server) = Self::served_bench();
        let at = server
            .prologix_addr()
            .expect("prologix service")
            .to_string();
        let board = gpib::backend::prologix::PrologixBoard::connect_tcp(&at)
            .expect("connect to the Prologix service");
        Self::network(Bus::new(board), host, server)
    }

    /// The `bench` through the VXI-11 backend, over TCP to an in-process server
    /// acting as a LAN/GPIB gateway (core channel at a fixed port, interrupt channel
    /// for SRQ). The bus timeout is 2 s of wall time.
    pub fn vxi11_bench() -> Self {
        let (host, server) = Self::served_bench();
        let at = server.vxi11_addr().expect("vxi11 service").to_string();
        let board = gpib::backend::vxi11::Vxi11Board::connect(&at, Default::default())
            .expect("connect to the VXI-11 service");
        Self::network(Bus::new(board), host, server)
    }

    /// [`Fixture::vxi11_bench`] with the VXI-11 backend traced into `sink` (as
    /// `gpib-diag trace record` wraps its backend).
    pub fn vxi11_bench_traced(sink: gpib::trace::SharedSink) -> Self {
        let (host, server) = Self::served_bench();
        let at = server.vxi11_addr().expect("vxi11 service").to_string();
        let board = gpib::backend::vxi11::Vxi11Board::connect(&at, Default::default())
            .expect("connect to the VXI-11 service");
        let traced = gpib::trace::TracedBackend::new(board, sink, 0);
        Self::network(Bus::new(traced), host, server)
    }

    /// The `bench` through the HiSLIP backend: each device a session on an in-process
    /// gateway (`hislip_gpib0_<PAD>`).
    pub fn hislip_bench() -> Self {
        let (host, server) = Self::served_bench();
        let at = server.hislip_addr().expect("hislip service").to_string();
        let board = gpib::backend::hislip::HislipBoard::connect(&at, 0)
            .expect("connect to the HiSLIP service");
        Self::network(Bus::new(board), host, server)
    }

    fn network(bus: Bus, host: SimHost, server: gpib::serve::Server) -> Self {
        bus.set_timeout(std::time::Duration::from_secs(2).into())
            .expect("timeout");
        Self {
            bus,
            _server: Some(server),
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
        bus.set_timeout(std::time::Duration::from_secs(10).into())
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
            _server: None,
            _lease: Some(lease),
        }
    }

    /// Runs `f` while holding the process's linux-gpib board 0, which the shared
    /// bodies on the linux-gpib backend take one at a time (feature `linux-gpib`).
    #[cfg(feature = "linux-gpib")]
    pub fn with_linux_gpib_board<T>(f: impl FnOnce() -> T) -> T {
        let _lease = lease::Lease::take();
        f()
    }

    /// The address `pad` as an [`Address`].
    pub fn addr(pad: u8) -> Address {
        Address::try_from(pad).expect("valid test address")
    }
}

/// Runs a test body once per backend compiled in: `fn name(fx: Fixture) { ... }`
/// becomes a module `name` with one `#[test]` per backend: `sim`, `prologix`, `vxi11`
/// and `hislip` (each over TCP to an in-process server on a fresh bench) always, and
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
            #[test]
            fn prologix() {
                body($crate::Fixture::prologix_bench())
            }
            #[test]
            fn vxi11() {
                body($crate::Fixture::vxi11_bench())
            }
            #[test]
            fn hislip() {
                body($crate::Fixture::hislip_bench())
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
