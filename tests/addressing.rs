//! The command bytes the typed layer puts on the bus, read back from the transcript.

use gpib::sim::EventKind;
use gpib::InterfaceMessage::*;
use gpib::{PrimaryAddress, ReadEnd};
use gpib_suite::{Fixture, HP3565, SCPI};

fn pa(n: u8) -> PrimaryAddress {
    PrimaryAddress::try_from(n).unwrap()
}

#[test]
fn query_addresses_then_reuses_addressing() {
    let fx = Fixture::sim_bench();
    let host = fx.host.unwrap();
    host.record(64);
    let dmm = fx.bus.device(SCPI).unwrap();
    assert_eq!(dmm.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
    let events = host.take_events();
    let commands: Vec<_> = events
        .iter()
        .map(|e| e.messages())
        .filter(|m| !m.is_empty())
        .collect();
    // Board at 0 talks, device 22 listens; then device talks, board listens (the 1988 io_test's listencmd).
    assert_eq!(commands[0], [Unlisten, Talk(pa(0)), Listen(pa(22))]);
    assert_eq!(commands[1], [Unlisten, Talk(pa(22)), Listen(pa(0))]);
    assert_eq!(commands.len(), 2);
    match &events[1].kind {
        EventKind::Write { bytes, eoi, .. } => {
            assert_eq!(bytes, b"*IDN?\n");
            assert!(*eoi);
        }
        other => panic!("expected the write, got {other:?}"),
    }
    match &events[3].kind {
        EventKind::Read {
            talker, bytes, eoi, ..
        } => {
            assert_eq!(*talker, SCPI);
            assert_eq!(bytes, b"SIMULATED,SCPI-DMM,0,1.0\n");
            assert!(*eoi);
        }
        other => panic!("expected the read, got {other:?}"),
    }
    // A second read from the same device needs no new addressing.
    dmm.write_str("*OPC?").unwrap();
    let mut buf = [0u8; 8];
    let st = dmm.read(&mut buf).unwrap();
    assert_eq!((&buf[..st.count], st.end), (&b"1\n"[..], ReadEnd::Eoi));
    let commands: Vec<_> = host
        .take_events()
        .iter()
        .map(|e| e.messages())
        .filter(|m| !m.is_empty())
        .collect();
    assert_eq!(
        commands,
        [
            vec![Unlisten, Talk(pa(0)), Listen(pa(22))],
            vec![Unlisten, Talk(pa(22)), Listen(pa(0))]
        ]
    );
}

#[test]
fn clear_trigger_local_and_lockout_bytes() {
    let fx = Fixture::sim_bench();
    let host = fx.host.unwrap();
    let dmm = fx.bus.device(SCPI).unwrap();
    host.record(16);
    dmm.clear().unwrap();
    dmm.trigger().unwrap();
    dmm.go_to_local().unwrap();
    fx.bus.local_lockout().unwrap();
    fx.bus.device_clear_all().unwrap();
    fx.bus
        .trigger_group(&[Fixture::addr(SCPI), Fixture::addr(HP3565)])
        .unwrap();
    let msgs: Vec<_> = host
        .take_events()
        .iter()
        .flat_map(|e| e.messages())
        .collect();
    assert_eq!(
        msgs,
        [
            Unlisten,
            Talk(pa(0)),
            Listen(pa(22)),
            SelectedDeviceClear,
            Unlisten,
            Talk(pa(0)),
            Listen(pa(22)),
            GroupExecuteTrigger,
            Unlisten,
            Talk(pa(0)),
            Listen(pa(22)),
            GoToLocal,
            LocalLockout,
            DeviceClear,
            Unlisten,
            Listen(pa(22)),
            Listen(pa(11)),
            GroupExecuteTrigger,
        ]
    );
}

#[test]
fn readdress_sends_addressing_every_time() {
    let fx = Fixture::sim_bench();
    let host = fx.host.unwrap();
    let dmm = fx.bus.device(SCPI).unwrap();
    let count_commands = |host: &gpib::sim::SimHost| {
        host.take_events()
            .iter()
            .filter(|e| !e.messages().is_empty())
            .count()
    };
    host.record(8);
    dmm.write_str("*CLS").unwrap();
    dmm.write_str("*CLS").unwrap();
    assert_eq!(
        count_commands(&host),
        1,
        "the second write reuses the addressing"
    );
    fx.bus.set_readdress(true);
    dmm.write_str("*CLS").unwrap();
    dmm.write_str("*CLS").unwrap();
    assert_eq!(count_commands(&host), 2);
}

#[test]
fn transcript_is_binary_safe_and_clipped() {
    let fx = Fixture::sim_bench();
    let host = fx.host.unwrap();
    host.record(4);
    let dmm = fx.bus.device(SCPI).unwrap();
    let body = dmm.query_block("BLOCK? 300").unwrap();
    assert_eq!(body.len(), 300);
    let ev = host.stop_recording();
    let reads: Vec<(usize, usize)> = ev
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Read { bytes, len, .. } => Some((bytes.len(), *len)),
            _ => None,
        })
        .collect();
    // A small block comes in one read, header, body and the final NL (306 bytes), as
    // a raw read until END takes it; the transcript keeps the first 4 bytes.
    assert_eq!(reads, [(4, 306)]);
    // Into a buffer of exactly the block's size: the buffer's worth, the 5 body bytes
    // that did not fit beside the header, and the NL in a read of its own.
    host.record(4);
    let mut exact = [0u8; 300];
    dmm.query_block_into("BLOCK? 300", &mut exact).unwrap();
    let lens: Vec<usize> = host
        .stop_recording()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Read { len, .. } => Some(*len),
            _ => None,
        })
        .collect();
    assert_eq!(lens, [300, 5, 1]);
    let text: Vec<String> = ev.iter().map(|e| e.to_string()).collect();
    assert!(
        text.iter().any(|t| t.contains("ATN UNL MTA0 MLA22")),
        "{text:?}"
    );
    // Timestamps never go backwards.
    assert!(ev.windows(2).all(|w| w[0].at <= w[1].at));
}
