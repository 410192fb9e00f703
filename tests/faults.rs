//! Every injected fault gives the error a real board gives, and the bus stays usable.

use gpib::sim::Fault;
use gpib::{Eos, ErrorKind};
use gpib_suite::{Fixture, HP3565, SCPI};

/// After the fault is removed and the bus is reset (IFC, as a program recovering would),
/// the same device answers again.
fn still_usable(fx: &Fixture) {
    let host = fx.host.as_ref().unwrap();
    host.clear_faults(0, Fixture::addr(SCPI)).unwrap();
    fx.bus.interface_clear().unwrap();
    let dmm = fx.bus.device(SCPI).unwrap();
    dmm.clear().unwrap();
    assert_eq!(dmm.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
}

fn with_fault(f: Fault) -> Fixture {
    let fx = Fixture::sim_bench();
    fx.host
        .as_ref()
        .unwrap()
        .inject(0, Fixture::addr(SCPI), f)
        .unwrap();
    fx
}

#[test]
fn absent_device_means_no_listener() {
    let fx = with_fault(Fault::Absent);
    let dmm = fx.bus.device(SCPI).unwrap();
    let t0 = fx.bus.now();
    let e = dmm.write_str("*IDN?").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoListener);
    assert_eq!(e.transferred(), Some(0));
    // The addressing went out and took its time; the write that found no listener
    // took none: the clock stands where the same addressing alone ends.
    let failed = fx.bus.now() - t0;
    let t1 = fx.bus.now();
    let board = fx.bus.with_backend(|b| b.board_address());
    let addressing = gpib::addressing::to_devices(board, &[Fixture::addr(SCPI)]);
    fx.bus
        .with_backend(|b| b.command(addressing.as_bytes()))
        .unwrap();
    assert!(failed > std::time::Duration::ZERO);
    assert_eq!(failed, fx.bus.now() - t1);
    let e = dmm.read_to_end().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(!dmm.is_present().unwrap());
    let found = fx.bus.find_listeners().unwrap();
    assert_eq!(found, [Fixture::addr(HP3565)]);
    still_usable(&fx);
}

#[test]
fn never_talks_times_out_with_nothing() {
    let fx = with_fault(Fault::NeverTalks);
    let dmm = fx.bus.device(SCPI).unwrap();
    let t0 = fx.bus.now();
    let e = dmm.query("*IDN?").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert_eq!(e.transferred(), Some(0));
    // The board's 10 s timeout passed in virtual time, not in wall time.
    assert!(fx.bus.now() - t0 >= std::time::Duration::from_secs(10));
    still_usable(&fx);
}

#[test]
fn timeout_mid_block_reports_bytes_received() {
    let fx = with_fault(Fault::StopsAfter(1000));
    let dmm = fx.bus.device(SCPI).unwrap();
    let mut buf = vec![0u8; 5000];
    let e = dmm.query_block_into("BLOCK? 4000", &mut buf).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    // 1000 bytes came: a 6-byte header and 994 body bytes, already in the buffer.
    assert_eq!(e.transferred(), Some(1000));
    assert_eq!(buf[993], (993 % 256) as u8);
    // read_to_end_into keeps what arrived.
    dmm.clear().unwrap();
    dmm.write_str("BLOCK? 4000").unwrap();
    let mut v = Vec::new();
    let e = dmm.read_to_end_into(&mut v).unwrap_err();
    assert_eq!(e.transferred(), Some(1000));
    assert_eq!(v.len(), 1000);
    assert_eq!(&v[..6], b"#44000");
    still_usable(&fx);
}

#[test]
fn stuck_srq() {
    let fx = with_fault(Fault::SrqStuck);
    assert!(fx.bus.srq().unwrap());
    let e = fx
        .bus
        .wait_for_service(
            &[Fixture::addr(HP3565), Fixture::addr(SCPI)],
            std::time::Duration::from_secs(1).into(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::SrqStuck);
    assert!(e.to_string().contains("[11, 22]"), "{e}");
    still_usable(&fx);
}

#[test]
fn held_nrfd_stalls_commands_and_writes() {
    let fx = with_fault(Fault::HoldsNrfd);
    let dmm = fx.bus.device(SCPI).unwrap();
    let e = dmm.write_str("*IDN?").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CommandTimeout);
    assert!(fx.bus.lines().unwrap().nrfd);
    still_usable(&fx);
}

#[test]
fn second_talker_is_a_bus_conflict() {
    let fx = Fixture::sim_bench();
    let host = fx.host.as_ref().unwrap();
    host.inject(0, Fixture::addr(HP3565), Fault::SecondTalker)
        .unwrap();
    let dmm = fx.bus.device(SCPI).unwrap();
    let e = dmm.query("*IDN?").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BusConflict);
    assert!(e.to_string().contains("device 11"), "{e}");
    host.clear_faults(0, Fixture::addr(HP3565)).unwrap();
    still_usable(&fx);
}

#[test]
fn dropped_eoi() {
    let fx = with_fault(Fault::DropsEoi);
    let mut dmm = fx.bus.device(SCPI).unwrap();
    // END never comes: the read times out, with the whole answer received.
    let e = dmm.query("*IDN?").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert_eq!(e.transferred(), Some(25));
    // With EOS on NL the same answer ends normally.
    dmm.set_eos(Some(Eos::NEWLINE));
    assert_eq!(dmm.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
    still_usable(&fx);
}

#[test]
fn no_device_at_all_means_no_listener_for_commands() {
    let host = gpib::sim::SimHost::new("empty");
    host.add_board(
        "gpib0",
        gpib::PrimaryAddress::try_from(0u8).unwrap(),
        Default::default(),
        std::time::Duration::from_secs(1).into(),
    );
    let bus = gpib::Bus::new(host.board(0).unwrap());
    let e = bus.device(5).unwrap().write_str("X").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoListener);
}

/// Every fault x every operation: a typed result (never a panic or a hang), and once
/// the fault is removed the bus answers again.
#[test]
fn every_fault_times_every_operation() {
    use gpib::block::BlockFormat;
    use std::time::Duration;
    type Op = fn(&Fixture) -> gpib::Result<()>;
    let ops: [(&str, Op); 11] = [
        ("write", |fx| fx.bus.device(SCPI)?.write_str("*CLS")),
        ("query", |fx| fx.bus.device(SCPI)?.query("*IDN?").map(drop)),
        ("read", |fx| fx.bus.device(SCPI)?.read_to_end().map(drop)),
        ("block read", |fx| {
            fx.bus.device(SCPI)?.query_block("BLOCK? 5000").map(drop)
        }),
        ("block write", |fx| {
            fx.bus
                .device(SCPI)?
                .write_block(b"DATA ", BlockFormat::Definite, &[b'\n'; 3000])
        }),
        ("serial poll", |fx| {
            fx.bus.device(SCPI)?.serial_poll().map(drop)
        }),
        ("clear", |fx| fx.bus.device(SCPI)?.clear()),
        ("trigger", |fx| fx.bus.device(SCPI)?.trigger()),
        ("find listeners", |fx| fx.bus.find_listeners().map(drop)),
        ("wait for service", |fx| {
            fx.bus
                .wait_for_service(
                    &[Fixture::addr(HP3565), Fixture::addr(SCPI)],
                    Duration::from_millis(100).into(),
                )
                .map(drop)
        }),
        ("interface clear", |fx| fx.bus.interface_clear()),
    ];
    let faults = [
        Fault::Absent,
        Fault::NeverTalks,
        Fault::StopsAfter(10),
        Fault::SrqStuck,
        Fault::HoldsNrfd,
        Fault::SecondTalker,
        Fault::DropsEoi,
    ];
    for fault in faults {
        for (name, op) in ops {
            let fx = with_fault(fault);
            if let Err(e) = op(&fx) {
                // A typed error with its bus meaning, and a message.
                assert!(!e.to_string().is_empty(), "{fault:?} x {name}");
                let _ = e.kind();
            }
            still_usable(&fx);
        }
    }
}
