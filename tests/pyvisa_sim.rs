//! pyvisa-sim device files on the simulated bus, driven through `gpib::Bus`
//! (gpib/configs/pyvisa-sim-bench.toml and its YAML file).

use std::time::Duration;

use gpib::sim::instruments::PyvisaSimInstrument;
use gpib::{Address, Bus, ErrorKind};

const PSU: u8 = 5;
const GEN: u8 = 8;
const SLOW_GEN: u8 = 12;

fn bench() -> (gpib::sim::SimHost, Bus) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/gpib/configs/pyvisa-sim-bench.toml"
    );
    let host = gpib::sim::load(path).unwrap();
    let bus = Bus::new(host.board(0).unwrap());
    (host, bus)
}

#[test]
fn queries_answer_byte_for_byte_with_the_file_termination() {
    let (_host, bus) = bench();
    let gen = bus.device(GEN).unwrap();
    gen.write_str("?IDN").unwrap();
    assert_eq!(gen.read_to_end().unwrap(), b"ACME SIGGEN 1\r\n");
    let psu = bus.device(PSU).unwrap();
    assert_eq!(psu.query("*IDN?").unwrap(), "ACME,PSU-2,0,1.0");
    assert_eq!(psu.query("VOLT?").unwrap(), "+1.00000000E+00");
}

#[test]
fn setters_validate_and_errors_are_queued() {
    let (_host, bus) = bench();
    let gen = bus.device(GEN).unwrap();
    assert_eq!(gen.query("!FREQ 2500.5").unwrap(), "OK");
    assert_eq!(gen.query("?FREQ").unwrap(), "2500.50");
    assert_eq!(gen.query("!FREQ 0.50").unwrap(), "FREQ_ERROR");
    assert_eq!(gen.query("?FREQ").unwrap(), "2500.50");
    assert_eq!(gen.query("BOGUS").unwrap(), "ERROR");

    let psu = bus.device(PSU).unwrap();
    // Out of range, no error response: silent, and a command error.
    psu.write_str("VOLT 31.000").unwrap();
    assert_eq!(psu.query("VOLT?").unwrap(), "+1.00000000E+00");
    assert_eq!(psu.query("*ESR?").unwrap(), "32");
    assert_eq!(psu.query("SYST:ERR?").unwrap(), "-100,\"Command error\"");
    assert_eq!(psu.query("SYST:ERR?").unwrap(), "0,\"No error\"");
    psu.write_str("OUTP2 1").unwrap();
    assert_eq!(psu.query("OUTP2?").unwrap(), "1");
    assert_eq!(psu.query("OUTP1?").unwrap(), "0");
}

#[test]
fn status_byte_has_mav_and_eav_and_srq_follows_sre() {
    let (_host, bus) = bench();
    let psu = bus.device(PSU).unwrap();
    assert_eq!(psu.serial_poll().unwrap().0, 0);
    psu.write_str("*IDN?").unwrap();
    let stb = psu.serial_poll().unwrap();
    assert!(stb.mav() && !stb.rqs(), "{stb}");
    psu.read_to_end().unwrap();
    assert!(!psu.serial_poll().unwrap().mav());
    // An error in the queue: EAV (bit 2).
    psu.write_str("NOPE").unwrap();
    assert_eq!(psu.serial_poll().unwrap().0, 0x04);
    assert_eq!(psu.query("SYST:ERR?").unwrap(), "-100,\"Command error\"");
    // *SRE is ours (the file does not define it): SRQ on MAV.
    psu.write_str("*SRE 16").unwrap();
    assert!(!bus.srq().unwrap());
    psu.write_str("VOLT?").unwrap();
    assert!(bus.srq().unwrap());
    let stb = psu.serial_poll().unwrap();
    assert!(stb.rqs() && stb.mav(), "{stb}");
    assert!(!bus.srq().unwrap(), "the poll clears RQS");
    assert_eq!(psu.read_string().unwrap(), "+1.00000000E+00");
    // RQS stays latched until a poll, as IEEE 488.2 has it: this answer's MAV
    // requested service again.
    assert_eq!(psu.query("*SRE?").unwrap(), "16");
    assert!(bus.srq().unwrap() && psu.serial_poll().unwrap().rqs());
    // A value *SRE cannot take is a command error.
    psu.write_str("*SRE 300").unwrap();
    assert_eq!(psu.query("SYST:ERR?").unwrap(), "-100,\"Command error\"");
}

#[test]
fn device_clear_drops_the_answer_and_trigger_runs_trg() {
    let (host, bus) = bench();
    let mut gen = bus.device(GEN).unwrap();
    gen.write_str("?IDN").unwrap();
    gen.clear().unwrap();
    assert!(!gen.serial_poll().unwrap().mav());
    gen.set_timeout(Some(Duration::from_millis(100).into()));
    assert_eq!(gen.read_to_end().unwrap_err().kind(), ErrorKind::Timeout);
    gen.trigger().unwrap();
    assert!(gen.serial_poll().unwrap().mav());
    assert_eq!(gen.read_to_end().unwrap(), b"TRIGGERED\r\n");
    let addr = Address::new(GEN, None).unwrap();
    let n = host
        .with_instrument_as(0, addr, |i: &mut PyvisaSimInstrument| i.triggers())
        .unwrap();
    assert_eq!(n, Some(1));
    // The PSU's file has no *TRG: a trigger is counted and answers nothing.
    let psu = bus.device(PSU).unwrap();
    psu.trigger().unwrap();
    assert!(!psu.serial_poll().unwrap().mav());
}

#[test]
fn response_time_in_virtual_time() {
    let (_host, bus) = bench();
    let elapsed = |pad: u8| {
        let d = bus.device(pad).unwrap();
        d.write_str("?FREQ").unwrap();
        let t = bus.now();
        let mav_at_once = d.serial_poll().unwrap().mav();
        assert_eq!(d.read_to_end().unwrap(), b"1000.00\r\n");
        (mav_at_once, bus.now() - t)
    };
    let (mav, fast) = elapsed(GEN);
    assert!(mav && fast < Duration::from_millis(1), "{fast:?}");
    let (mav, slow) = elapsed(SLOW_GEN);
    assert!(!mav, "no MAV before the response time is over");
    assert!(
        slow >= Duration::from_micros(1900) && slow < Duration::from_millis(3),
        "{slow:?}"
    );
}
