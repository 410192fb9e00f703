//! `gpib::open` opens through one manager per process (`ResourceManager::global`): two
//! devices on one board share it, on the simulator (`GPIB_SIM_CONFIG`, set here before
//! the manager is made: a binary of its own), a Prologix adapter and a VXI-11 gateway
//! (served in-process, their connections counted); a backend registered on it is seen
//! by `gpib::open`; a board it opened is released with its last device.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once};

use gpib::backend::fake::{FakeBoard, FakeInstrument};
use gpib::{sim, ResourceManager};

const IDN: &str = "SIMULATED,SCPI-DMM,0,1.0";

/// The process's manager is made from `GPIB_SIM_CONFIG=bench`, whichever test is first.
fn simulated_bench() {
    static SET: Once = Once::new();
    SET.call_once(|| {
        std::env::set_var("GPIB_SIM_CONFIG", "bench");
        drop(ResourceManager::global().expect("the simulated bench"));
    });
}

fn served() -> (sim::SimHost, gpib::serve::Server) {
    let host = sim::bench();
    let opts = gpib::serve::ServeOptions {
        default_address: Some(gpib::Address::try_from(22u8).unwrap()),
        ..gpib::serve::ServeOptions::ephemeral()
    };
    let server = gpib::serve::Server::start(gpib::Bus::new(host.board(0).unwrap()), opts).unwrap();
    (host, server)
}

#[test]
fn two_devices_on_a_simulated_board_share_it() {
    simulated_bench();
    let dmm = gpib::open("GPIB0::22::INSTR").unwrap();
    dmm.write_str("*ESE 33").unwrap();
    // A second open: the same simulated host, not a second one loaded from the config.
    let again = gpib::open("GPIB0::22::INSTR").unwrap();
    assert_eq!(again.query("*ESE?").unwrap(), "33");
    let hp = gpib::open("GPIB0::11::INSTR").unwrap();
    hp.write_str("ABRT;DISA").unwrap();
    assert_eq!(dmm.query("*IDN?").unwrap(), IDN);
    dmm.write_str("*ESE 0").unwrap();
}

#[test]
fn two_devices_on_a_prologix_adapter_share_one_connection() {
    simulated_bench();
    let (_host, server) = served();
    let port = server.prologix_addr().unwrap().port();
    let dmm = gpib::open(&format!("PRLGX-TCPIP4::127.0.0.1::{port}::22::INSTR")).unwrap();
    let hp = gpib::open(&format!("prlgx-tcpip4::127.0.0.1::{port}::11::instr")).unwrap();
    assert_eq!(dmm.query("*IDN?").unwrap(), IDN);
    hp.write_str("ABRT;DISA").unwrap();
    assert_eq!(dmm.query("*OPC?").unwrap(), "1");
    assert_eq!(server.stats().accepted, 1, "one adapter, one connection");
    // The simulated bench keeps GPIB0; the adapter stands as GPIB4 while it is open.
    assert_eq!(
        gpib::open("GPIB4::22::INSTR")
            .unwrap()
            .query("*IDN?")
            .unwrap(),
        IDN
    );
    // Released with its last device, the adapter is connected again when next named.
    drop((dmm, hp));
    let dmm = gpib::open(&format!("PRLGX-TCPIP4::127.0.0.1::{port}::22::INSTR")).unwrap();
    assert_eq!(dmm.query("*IDN?").unwrap(), IDN);
    assert_eq!(server.stats().accepted, 2);
}

#[test]
fn two_devices_behind_a_vxi11_gateway_share_one_connection() {
    simulated_bench();
    let (_host, server) = served();
    let port = server.vxi11_addr().unwrap().port();
    let dmm = gpib::open(&format!("TCPIP0::127.0.0.1,{port}::gpib0,22::INSTR")).unwrap();
    let hp = gpib::open(&format!("TCPIP0::127.0.0.1,{port}::gpib0,11::INSTR")).unwrap();
    assert_eq!(dmm.query("*IDN?").unwrap(), IDN);
    hp.write_str("ABRT;DISA").unwrap();
    assert_eq!(dmm.query("*OPC?").unwrap(), "1");
    let one = server.stats().accepted;
    assert_eq!(one, 1, "one gateway, one core channel for both devices");
    // A third device resource on the gateway: no connection more.
    let third = gpib::open(&format!("TCPIP0::127.0.0.1,{port}::gpib0,22::INSTR")).unwrap();
    assert_eq!(third.query("*IDN?").unwrap(), IDN);
    assert_eq!(server.stats().accepted, one, "one gateway, one connection");
    // An isolated manager has a connection of its own.
    let mut own = ResourceManager::new();
    let theirs = own
        .open(&format!("TCPIP0::127.0.0.1,{port}::gpib0,22::INSTR"))
        .unwrap();
    assert_eq!(theirs.query("*IDN?").unwrap(), IDN);
    assert!(server.stats().accepted > one);
}

/// `GPIB9::INTFC`: a fake board with a power supply at 5, counting how often it is opened.
struct Counted(Arc<AtomicUsize>);

impl gpib::Connector for Counted {
    fn name(&self) -> &str {
        "counted"
    }

    fn open_interface(
        &self,
        resource: &str,
    ) -> Option<gpib::Result<(Box<dyn gpib::Backend>, u16)>> {
        (resource == "GPIB9::INTFC").then(|| {
            self.0.fetch_add(1, Ordering::SeqCst);
            let psu = FakeInstrument::new().answer("*IDN?", "ACME,PSU,0,1.0");
            let board: Box<dyn gpib::Backend> = Box::new(FakeBoard::new().with(5, psu)?);
            Ok((board, 9))
        })
    }
}

#[test]
fn a_backend_registered_on_it_is_seen_by_open_and_its_board_released_with_its_devices() {
    simulated_bench();
    let opened = Arc::new(AtomicUsize::new(0));
    ResourceManager::global()
        .unwrap()
        .register(Box::new(Counted(opened.clone())));
    let a = gpib::open("GPIB9::5::INSTR").unwrap();
    let b = gpib::open("GPIB9::5::INSTR").unwrap();
    assert_eq!(a.query("*IDN?").unwrap(), "ACME,PSU,0,1.0");
    assert_eq!(b.query("*IDN?").unwrap(), "ACME,PSU,0,1.0");
    assert_eq!(opened.load(Ordering::SeqCst), 1, "one board for both");
    drop((a, b));
    let c = gpib::open("GPIB9::5::INSTR").unwrap();
    assert_eq!(c.query("*IDN?").unwrap(), "ACME,PSU,0,1.0");
    assert_eq!(
        opened.load(Ordering::SeqCst),
        2,
        "released, then opened again"
    );
}

#[test]
fn holding_the_manager_and_opening_through_gpib_open_is_an_error_not_a_hang() {
    simulated_bench();
    let held = ResourceManager::global().unwrap();
    let e = gpib::open("GPIB0::22::INSTR").unwrap_err();
    assert_eq!(e.kind(), gpib::ErrorKind::InvalidArgument);
    assert!(
        e.to_string()
            .contains("holds the process's resource manager"),
        "{e}"
    );
    drop(held);
    assert_eq!(
        gpib::open("GPIB0::22::INSTR")
            .unwrap()
            .query("*IDN?")
            .unwrap(),
        IDN
    );
}

/// `GPIB8::INTFC`: fails to open the first time (an adapter not yet plugged in), then opens.
struct FailsFirst(Arc<AtomicUsize>);

impl gpib::Connector for FailsFirst {
    fn name(&self) -> &str {
        "fails-first"
    }

    fn open_interface(
        &self,
        resource: &str,
    ) -> Option<gpib::Result<(Box<dyn gpib::Backend>, u16)>> {
        (resource == "GPIB8::INTFC").then(|| {
            if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
                return Err(gpib::Error::InvalidArgument("not plugged in yet".into()));
            }
            let psu = FakeInstrument::new().answer("*IDN?", "ACME,PSU,0,1.0");
            let board: Box<dyn gpib::Backend> = Box::new(FakeBoard::new().with(5, psu)?);
            Ok((board, 8))
        })
    }
}

#[test]
fn a_board_that_failed_to_open_is_not_kept() {
    simulated_bench();
    let tries = Arc::new(AtomicUsize::new(0));
    ResourceManager::global()
        .unwrap()
        .register(Box::new(FailsFirst(tries.clone())));
    let e = gpib::open("GPIB8::5::INSTR").unwrap_err();
    assert!(e.to_string().contains("not plugged in yet"), "{e}");
    let psu = gpib::open("GPIB8::5::INSTR").unwrap();
    assert_eq!(psu.query("*IDN?").unwrap(), "ACME,PSU,0,1.0");
    assert_eq!(tries.load(Ordering::SeqCst), 2);
}
