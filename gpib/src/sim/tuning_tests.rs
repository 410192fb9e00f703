//! The simulated board's [`crate::backend::tuning::BoardTuning`] through [`crate::Bus::tuning`]:
//! each setting read back, and what it changes in the modelled time (exact figures of
//! the model).

use std::time::Duration;

use crate::backend::tuning::T1Delay;
use crate::sim::timing::handshake_ns;
use crate::sim::{Config, EventKind, SimHost};
use crate::{Address, Bus};

/// A DMA board (20 µs a call, 2 µs a command byte) with a SCPI instrument at 22 that
/// accepts a byte in 700 ns, and `extra` device lines.
fn host(board_extra: &str, extra: &str) -> SimHost {
    Config::parse(&format!(
        "name = \"t\"\n[[board]]\nname = \"gpib0\"\ntransfer = \"dma\"\n{board_extra}\n\
         [[board.device]]\naddress = 22\nmodel = \"scpi\"\naccept_ns = 700\n{extra}"
    ))
    .unwrap()
    .build()
    .unwrap()
}

fn dev22() -> Address {
    Address::try_from(22).unwrap()
}

/// Virtual time of one 1000-byte write to 22 (addressed before), with the board's T1 `t1`.
fn write_time(t1: T1Delay) -> Duration {
    let h = host("", "");
    let bus = Bus::new(h.board(0).unwrap());
    assert_eq!(bus.tuning(|t| t.set_t1(t1)).unwrap(), t1);
    assert_eq!(bus.tuning(|t| t.t1()).unwrap(), t1);
    bus.transaction(|tx| tx.address_to_device(dev22())).unwrap();
    let t0 = bus.now();
    bus.transaction(|tx| tx.write(&[b'x'; 1000], true)).unwrap();
    bus.now() - t0
}

#[test]
fn t1_changes_each_byte_of_a_board_write_by_the_t1_difference() {
    let slow = write_time(T1Delay::Ns2000);
    let mid = write_time(T1Delay::Ns500);
    let fast = write_time(T1Delay::Ns350);
    // The board talks: each byte is its T1 plus the instrument's 700 ns acceptance
    // (2.7 µs, 1.2 µs, 1.05 µs: all above the 1 µs ceiling, so T1 decides).
    let per = |t1: T1Delay| handshake_ns(t1.nanos(), 700, false);
    assert_eq!(per(T1Delay::Ns2000) - per(T1Delay::Ns350), 1650);
    assert_eq!(slow - fast, Duration::from_nanos(1000 * 1650));
    assert_eq!(mid - fast, Duration::from_nanos(1000 * 150));
    // 20 µs call + 1000 bytes of 2.7 µs.
    assert_eq!(slow, Duration::from_micros(20 + 2700));
}

#[test]
fn autopoll_serial_polls_an_srq_storm_on_the_bus_and_the_cpu_only_when_on() {
    let run = |on: bool| {
        let h = host("", "srq_every_us = 100\n");
        let bus = Bus::new(h.board(0).unwrap());
        assert!(!bus.tuning(|t| t.autopoll()).unwrap(), "off by default");
        assert_eq!(bus.tuning(|t| t.set_autopoll(on)).unwrap(), on);
        assert_eq!(bus.tuning(|t| t.autopoll()).unwrap(), on);
        let cpu0 = bus.modelled_host_cpu().unwrap();
        bus.delay(Duration::from_millis(10));
        (h.bus_busy(0), bus.modelled_host_cpu().unwrap() - cpu0)
    };
    assert_eq!(run(false), (Duration::ZERO, Duration::ZERO));
    // One poll: 20 µs call + 6 command bytes at 2 µs + the status byte at the 1 µs
    // ceiling = 33 µs; the instrument asks again 100 µs after each.
    let polls = 1 + (10_000 - 100) / 133;
    let one = Duration::from_micros(33);
    assert_eq!(run(true), (one * polls, one * polls));
}

#[test]
fn autopoll_switched_on_polls_a_pending_request_from_now_not_in_the_past() {
    // Before the fix the request pending since 100 µs was polled back to then: 10 ms
    // of polls happened in the past, 150 instead of 76.
    let h = host("", "srq_every_us = 100\n");
    let bus = Bus::new(h.board(0).unwrap());
    bus.delay(Duration::from_millis(10));
    assert!(bus.srq().unwrap(), "nobody polls: SRQ stays asserted");
    bus.tuning(|t| t.set_autopoll(true)).unwrap();
    bus.delay(Duration::from_millis(10));
    assert_eq!(
        h.bus_busy(0),
        Duration::from_micros(33) * (1 + 10_000 / 133)
    );
}

/// Command bytes sent for three 4-byte writes to 22 through a [`crate::Device`].
fn command_bytes(tune: impl FnOnce(&Bus)) -> (usize, Vec<Vec<u8>>) {
    let h = host("", "");
    let bus = Bus::new(h.board(0).unwrap());
    tune(&bus);
    h.record(64);
    let dev = bus.device(22).unwrap();
    for _ in 0..3 {
        dev.write(b"*CLS").unwrap();
    }
    let cmds: Vec<Vec<u8>> = h
        .take_events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Command(b) => Some(b),
            _ => None,
        })
        .collect();
    (cmds.iter().map(Vec::len).sum(), cmds)
}

#[test]
fn readdress_and_unaddress_change_the_command_bytes_of_each_call() {
    // Cached: UNL, MTA 0, MLA 22 once.
    let (n, _) = command_bytes(|_| {});
    assert_eq!(n, 3);
    // Every call: 3 bytes before each write.
    let (n, _) = command_bytes(|bus| {
        assert!(bus.tuning(|t| t.set_readdress(true)).unwrap());
        assert!(bus.tuning(|t| t.readdress()).unwrap());
        assert!(bus.readdresses());
    });
    assert_eq!(n, 9);
    // Unaddressing after each call: UNL UNT after each write, and so the addressing
    // again before the next.
    let (n, cmds) = command_bytes(|bus| {
        assert!(bus.tuning(|t| t.set_unaddress(true)).unwrap());
        assert!(bus.tuning(|t| t.unaddress()).unwrap());
    });
    assert_eq!(n, 15);
    assert_eq!(cmds[1], vec![0x3F, 0x5F], "UNL UNT, linux-gpib's order");
    // Off again: back to the cached addressing.
    let (n, _) = command_bytes(|bus| {
        bus.tuning(|t| t.set_readdress(true)).unwrap();
        assert!(!bus.tuning(|t| t.set_readdress(false)).unwrap());
        assert!(!bus.readdresses());
    });
    assert_eq!(n, 3);
}

#[test]
fn a_traced_board_keeps_its_tuning_and_its_addressing_on_every_call() {
    // Before the fix TracedBackend did not forward addresses_every_call: a Bus over a
    // traced every-call board addressed once.
    let h = host("addressing = \"every-call\"", "");
    let traced = crate::trace::TracedBackend::new(
        h.board(0).unwrap(),
        crate::trace::SharedSink::new(crate::trace::MemorySink::new()),
        0,
    );
    let bus = Bus::new(traced);
    assert!(bus.readdresses());
    assert!(bus.tuning(|t| t.readdress()).unwrap());
    assert_eq!(
        bus.tuning(|t| t.set_t1(T1Delay::Ns350)).unwrap(),
        T1Delay::Ns350
    );
    assert_eq!(h.board_timing(0).unwrap().t1_ns, 350);
}

/// The commands of two `*IDN?` queries (`query_into`, `query`) with `setup` applied.
fn query_commands(setup: impl FnOnce(&Bus)) -> Vec<Vec<u8>> {
    let h = crate::sim::bench();
    let bus = Bus::new(h.board(0).unwrap());
    setup(&bus);
    let dev = bus.device(22).unwrap();
    h.record(16);
    let mut buf = [0u8; 64];
    dev.query_into(b"*IDN?", &mut buf).unwrap();
    assert!(dev
        .query("*IDN?")
        .unwrap()
        .starts_with("SIMULATED,SCPI-DMM"));
    h.take_events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Command(b) => Some(b),
            _ => None,
        })
        .collect()
}

#[test]
fn a_query_made_as_one_call_addresses_as_its_two_halves_did() {
    let (listen, talk) = (vec![0x3F, 0x40, 0x36], vec![0x3F, 0x56, 0x20]);
    let unl_unt = vec![0x3F, 0x5F];
    // Each query: UNL MTA0 MLA22 before the write, UNL MTA22 MLA0 before the read.
    let both = vec![listen.clone(), talk.clone(), listen.clone(), talk.clone()];
    assert_eq!(query_commands(|_| {}), both);
    assert_eq!(
        query_commands(|bus| {
            bus.tuning(|t| t.set_readdress(true)).unwrap();
        }),
        both
    );
    // Unaddressing after every transfer: UNL UNT after the write; after the read of
    // `query_into` too, not after `query`'s (more reads of the answer may follow).
    let unaddressed = query_commands(|bus| {
        bus.tuning(|t| t.set_unaddress(true)).unwrap();
    });
    assert_eq!(
        unaddressed,
        [
            listen.clone(),
            unl_unt.clone(),
            talk.clone(),
            unl_unt.clone(),
            listen,
            unl_unt,
            talk,
        ]
    );
}
