//! Tests on a real board, skipped unless the environment names one (see the module
//! declaration in `linux_gpib.rs`).

use std::sync::Mutex;
use std::time::Duration;

use super::*;
use crate::backend::DeviceLevel;
use crate::error::ErrorKind;
use crate::Bus;

/// The board and instrument named by the environment, or `None` (test skipped).
fn target(test: &str) -> Option<(String, Address)> {
    let board = std::env::var("GPIB_HW_BOARD").ok()?;
    let Ok(addr) = std::env::var("GPIB_HW_ADDRESS") else {
        eprintln!("{test}: GPIB_HW_BOARD is set but GPIB_HW_ADDRESS is not: skipped");
        return None;
    };
    let (p, s) = match addr.split_once('.') {
        Some((p, s)) => (p, Some(s)),
        None => (addr.as_str(), None),
    };
    let address = Address::new(
        p.trim().parse().expect("GPIB_HW_ADDRESS: pad or pad.sad"),
        s.map(|s| s.trim().parse().expect("GPIB_HW_ADDRESS: pad or pad.sad")),
    )
    .expect("GPIB_HW_ADDRESS is a valid address");
    Some((board, address))
}

/// One test at a time holds the board (a board opens once per process).
static SERIAL: Mutex<()> = Mutex::new(());

fn with_bus(test: &str, f: impl FnOnce(&Bus, Address)) {
    let Some((board, address)) = target(test) else {
        eprintln!("{test}: set GPIB_HW_BOARD and GPIB_HW_ADDRESS to run it: skipped");
        return;
    };
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let bus = Bus::new(LinuxGpibBoard::open_name(&board).expect("open the board"));
    bus.interface_clear().expect("IFC");
    bus.set_timeout(Duration::from_secs(3).into())
        .expect("timeout");
    bus.device(address).unwrap().clear().expect("device clear");
    f(&bus, address);
}

#[test]
fn hw_tuning_reaches_the_driver() {
    use crate::backend::tuning::{BoardTuning, T1Delay};
    let test = "hw_tuning_reaches_the_driver";
    let Some((name, address)) = target(test) else {
        eprintln!("{test}: set GPIB_HW_BOARD and GPIB_HW_ADDRESS to run it: skipped");
        return;
    };
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let mut board = LinuxGpibBoard::open_name(&name).expect("open the board");
    let ud = board.descriptor();
    // Unaddressing: set on the device descriptor libgpib uses for the transfers,
    // whether it was open before or opens after.
    board
        .device_write(address, b"*CLS", true)
        .expect("a write to the device");
    assert!(board.set_unaddress(true).unwrap());
    let dev_ud = board
        .devices
        .iter()
        .find(|d| d.address == address)
        .expect("the device's descriptor")
        .ud;
    assert_eq!(calls::ask(dev_ud, abi::OPT_UN_ADDR).unwrap(), 1);
    board.device_write(address, b"*CLS", true).unwrap();
    assert!(!board.set_unaddress(false).unwrap());
    assert_eq!(calls::ask(dev_ud, abi::OPT_UN_ADDR).unwrap(), 0);
    assert!(
        board.set_readdress(false).unwrap(),
        "libgpib always readdresses"
    );
    // T1 and autopoll through the Bus: what the driver answers to ibask.
    let bus = Bus::new(board);
    let before = bus.tuning(|t| t.t1()).unwrap();
    let asked = || T1Delay::from_code(calls::ask(ud, abi::OPT_TIMING).unwrap());
    // Every driver has 2 µs.
    assert_eq!(
        bus.tuning(|t| t.set_t1(T1Delay::Ns2000)).unwrap(),
        T1Delay::Ns2000
    );
    assert_eq!(asked(), Some(T1Delay::Ns2000));
    let applied = bus.tuning(|t| t.set_t1(T1Delay::Ns350)).unwrap();
    assert_eq!(asked(), Some(applied));
    eprintln!("{test}: T1 350 ns asked, {applied} applied");
    bus.tuning(|t| t.set_t1(before)).unwrap();
    let autopoll = bus.tuning(|t| t.autopoll()).unwrap();
    assert!(bus.tuning(|t| t.set_autopoll(true)).unwrap());
    assert_eq!(calls::ask(ud, abi::OPT_AUTOPOLL).unwrap(), 1);
    bus.tuning(|t| t.set_autopoll(autopoll)).unwrap();
}

#[test]
fn hw_identify() {
    with_bus("hw_identify", |bus, address| {
        let dev = bus.device(address).unwrap();
        let idn = dev.query("*IDN?").expect("*IDN? answered");
        assert!(!idn.trim().is_empty());
        eprintln!("hw_identify: {address} is {idn}");
        // The instrument's status byte: MAV clear after the answer was read.
        let stb = dev.serial_poll().expect("serial poll");
        assert!(!stb.mav(), "{stb}");
    });
}

#[test]
fn hw_listeners_and_lines() {
    with_bus("hw_listeners_and_lines", |bus, address| {
        assert!(bus.device(address).unwrap().is_present().unwrap());
        bus.remote_enable(true).unwrap();
        let lines = bus.lines().unwrap();
        eprintln!("hw_listeners_and_lines: lines {lines}");
        let _ = bus.srq().unwrap();
        let found = bus.find_listeners().unwrap();
        assert!(
            found.iter().any(|a| a.primary == address.primary),
            "{found:?}"
        );
    });
}

#[test]
fn hw_timeouts_are_typed_and_rounded() {
    with_bus("hw_timeouts_are_typed_and_rounded", |bus, address| {
        assert_eq!(
            bus.set_timeout(Duration::from_millis(150).into()).unwrap(),
            Timeout::After(Duration::from_millis(300))
        );
        // Nothing was asked: the read times out with nothing received.
        let e = bus.device(address).unwrap().read_to_end().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
        assert_eq!(e.transferred(), Some(0));
        assert!(std::error::Error::source(&e).is_some());
    });
}

#[test]
fn hw_absent_device_is_no_listener() {
    with_bus("hw_absent_device_is_no_listener", |bus, _| {
        let me = bus.with_backend(|b| b.board_address());
        let found = bus.find_listeners().unwrap();
        let Some(free) = PrimaryAddress::all()
            .filter(|&p| p != me)
            .find(|p| !found.iter().any(|a| a.primary == *p))
        else {
            eprintln!("hw_absent_device_is_no_listener: every address answers: skipped");
            return;
        };
        let e = bus.device(free).unwrap().write_str("*CLS").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NoListener, "{e}");
    });
}

#[test]
fn hw_one_user_per_board() {
    with_bus("hw_one_user_per_board", |_bus, _| {
        let board = std::env::var("GPIB_HW_BOARD").unwrap();
        let e = LinuxGpibBoard::open_name(&board).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BackendUnavailable, "{e}");
        assert!(e.to_string().contains("already open"), "{e}");
    });
}
