//! Message exchange with the SCPI instrument: queries, status registers, the error queue.

use gpib::{Eos, ErrorKind, ReadEnd};
use gpib_suite::{on_every_backend, Fixture, SCPI};

on_every_backend! {
    fn idn_and_common_commands(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        assert_eq!(dmm.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
        assert_eq!(dmm.query("*OPC?").unwrap(), "1");
        dmm.write_str("*ESE 33;*SRE 48").unwrap();
        assert_eq!(dmm.query("*ESE?;*SRE?").unwrap(), "33;48");
        let v: f64 = dmm.query("MEAS:VOLT?").unwrap().parse().unwrap();
        assert!((1.0..2.0).contains(&v), "{v}");
    }

    fn error_queue(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        dmm.write_str("BOGUS:CMD 1").unwrap();
        assert_eq!(dmm.query("*ESR?").unwrap(), "32");
        assert_eq!(dmm.query("SYST:ERR?").unwrap(), "-113,\"Undefined header\"");
        assert_eq!(dmm.query("SYST:ERR?").unwrap(), "0,\"No error\"");
    }

    fn read_into_small_buffer_keeps_the_rest(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        dmm.write_str("*IDN?").unwrap();
        let mut buf = [0u8; 10];
        let st = dmm.read(&mut buf).unwrap();
        assert_eq!((st.count, st.end), (10, ReadEnd::BufferFull));
        assert_eq!(&buf, b"SIMULATED,");
        assert_eq!(dmm.read_string().unwrap(), "SCPI-DMM,0,1.0");
    }

    fn eos_ends_reads(fx: Fixture) {
        let mut dmm = fx.bus.device(SCPI).unwrap();
        dmm.set_eos(Some(Eos { byte: b',', eight_bit: true }));
        dmm.write_str("*IDN?").unwrap();
        let mut buf = [0u8; 64];
        let st = dmm.read(&mut buf).unwrap();
        assert_eq!((&buf[..st.count], st.end), (&b"SIMULATED,"[..], ReadEnd::Eos));
    }

    fn device_clear_discards_output(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        dmm.write_str("*IDN?").unwrap();
        dmm.clear().unwrap();
        let e = dmm.read_to_end().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert_eq!(e.transferred(), Some(0));
        // Usable afterwards.
        assert_eq!(dmm.query("*OPC?").unwrap(), "1");
    }

    fn trigger_queues_a_reading(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        dmm.trigger().unwrap();
        let v: f64 = dmm.read_string().unwrap().parse().unwrap();
        assert!(v > 0.0);
    }
}

#[test]
fn get_and_trg_both_trigger() {
    use gpib::sim::instruments::ScpiInstrument;
    let fx = Fixture::sim_bench();
    let host = fx.host.unwrap();
    let dmm = fx.bus.device(SCPI).unwrap();
    dmm.trigger().unwrap();
    dmm.clear().unwrap();
    dmm.write_str("*TRG").unwrap();
    let count = host
        .with_instrument_as::<ScpiInstrument, _>(0, Fixture::addr(SCPI), |i| i.triggers())
        .unwrap();
    assert_eq!(count, Some(2));
}

#[test]
fn invalid_addresses_are_typed_errors() {
    let fx = Fixture::sim_bench();
    for bad in [31u8, 127, 255] {
        assert_eq!(
            fx.bus.device(bad).unwrap_err().kind(),
            ErrorKind::InvalidAddress
        );
    }
}

#[test]
fn queries_take_virtual_time() {
    let fx = Fixture::sim_bench();
    let dmm = fx.bus.device(SCPI).unwrap();
    let t0 = fx.bus.now();
    dmm.query("*IDN?").unwrap();
    let dt = fx.bus.now() - t0;
    // Two calls with addressing, the response latency (50 us), and 31 bytes of handshake.
    assert!(dt > std::time::Duration::from_micros(100), "{dt:?}");
    assert!(dt < std::time::Duration::from_millis(1), "{dt:?}");
}

#[test]
fn a_network_query_costs_one_round_trip() {
    // The write and the read of a query go out together: VXI-11 sends both RPCs
    // before it waits (two round trips before), Prologix both lines in one write.
    for (name, fx) in [
        ("vxi11", Fixture::vxi11_bench()),
        ("prologix", Fixture::prologix_bench()),
    ] {
        let dmm = fx.bus.device(SCPI).unwrap();
        dmm.query("*IDN?").unwrap(); // the link and the adapter's settings in place
        let before = fx.bus.wire_stats().unwrap();
        assert_eq!(dmm.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
        let mut buf = [0u8; 64];
        let st = dmm.query_into(b"*IDN?", &mut buf).unwrap();
        assert_eq!(&buf[..st.count], b"SIMULATED,SCPI-DMM,0,1.0\n", "{name}");
        let after = fx.bus.wire_stats().unwrap();
        assert_eq!(
            after.round_trips - before.round_trips,
            2,
            "{name}: two queries"
        );
    }
}

#[test]
fn a_network_query_to_a_silent_device_fails_and_the_next_one_works() {
    for (name, fx) in [
        ("vxi11", Fixture::vxi11_bench()),
        ("prologix", Fixture::prologix_bench()),
    ] {
        // Nothing at address 5: the query fails (whichever half), and the answers
        // that were not wanted do not reach the next query.
        let ghost = fx.bus.device(5).unwrap();
        assert!(ghost.query("*IDN?").is_err(), "{name}");
        let dmm = fx.bus.device(SCPI).unwrap();
        assert_eq!(
            dmm.query("*IDN?").unwrap(),
            "SIMULATED,SCPI-DMM,0,1.0",
            "{name}"
        );
        assert_eq!(dmm.query("*OPC?").unwrap(), "1", "{name}");
    }
}
