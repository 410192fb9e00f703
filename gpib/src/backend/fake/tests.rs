use super::*;
use crate::backend::BackendExt;
use crate::block::Endian;
use crate::{Bus, ErrorKind};

fn dmm() -> FakeInstrument {
    FakeInstrument::new()
        .answer("*IDN?", "ACME,DMM-1,0,1.0")
        .answer("READ?", "+1.25E+00")
}

fn bus_with(address: u8, i: FakeInstrument) -> Bus {
    Bus::new(FakeBoard::new().with(address, i).unwrap())
}

#[test]
fn queries_are_answered_by_their_exact_text_and_recorded() {
    let i = dmm();
    let d = bus_with(22, i.clone()).device(22).unwrap();
    assert_eq!(d.query("*IDN?").unwrap(), "ACME,DMM-1,0,1.0");
    d.write_str("CONF:VOLT:DC 10").unwrap();
    assert_eq!(d.query("READ?").unwrap(), "+1.25E+00");
    assert_eq!(i.received(), ["*IDN?", "CONF:VOLT:DC 10", "READ?"]);
    // Text is matched exactly: another spelling is not answered.
    let e = d.query("*idn?").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert_eq!(e.transferred(), Some(0));
}

#[test]
fn closures_answer_what_the_exact_answers_do_not_and_keep_state() {
    let mut volts = 0.0;
    let psu = FakeInstrument::new()
        .answer("VOLT?", "exact wins")
        .respond(move |m| {
            if let Some(v) = m.strip_prefix("VOLT ") {
                volts = v.parse().ok()?;
            }
            (m == "MEAS?").then(|| format!("{volts:.3}"))
        })
        .respond(|m| m.ends_with('?').then(|| "second".to_string()));
    let d = bus_with(5, psu).device(5).unwrap();
    d.write_str("VOLT 12.5").unwrap();
    assert_eq!(d.query("MEAS?").unwrap(), "12.500");
    assert_eq!(d.query("VOLT?").unwrap(), "exact wins");
    assert_eq!(d.query("OTHER?").unwrap(), "second");
}

#[test]
fn answers_queue_in_order_and_reads_end_at_end_eos_or_a_full_buffer() {
    let i = FakeInstrument::new().answer("A?", "first\nline");
    let d = bus_with(3, i.clone()).device(3).unwrap();
    d.write_str("A?").unwrap();
    i.queue("second");
    let mut buf = [0u8; 4];
    let st = d.read(&mut buf).unwrap();
    assert_eq!((st.count, st.end, &buf), (4, ReadEnd::BufferFull, b"firs"));
    let mut d2 = d.clone();
    d2.set_eos(Some(Eos::NEWLINE));
    let mut buf = [0u8; 16];
    let st = d2.read(&mut buf).unwrap();
    assert_eq!((&buf[..st.count], st.end), (&b"t\n"[..], ReadEnd::Eos));
    let st = d2.read(&mut buf).unwrap();
    // The answer's last byte is both EOS and END: END it is.
    assert_eq!((&buf[..st.count], st.end), (&b"line\n"[..], ReadEnd::Eoi));
    assert_eq!(d.read_string().unwrap(), "second");
    assert_eq!(d.read(&mut buf).unwrap_err().kind(), ErrorKind::Timeout);
}

#[test]
fn blocks_read_as_definite_length_blocks() {
    let values = [1.5f32, -2.0, 0.25];
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    let d = bus_with(7, FakeInstrument::new().block("CURV?", &data))
        .device(7)
        .unwrap();
    let got: Vec<f32> = d.query_values("CURV?", Endian::Big).unwrap();
    assert_eq!(got, values);
    let mut buf = [0u8; 64];
    let too_small = d.query_block_into("CURV?", &mut buf[..2]).unwrap_err();
    assert_eq!(too_small.kind(), ErrorKind::InvalidArgument, "{too_small}");
}

#[test]
fn serial_poll_reads_the_status_byte_and_clears_rqs() {
    let a = FakeInstrument::new().answer("*IDN?", "A");
    let b = FakeInstrument::new();
    let bus = Bus::new(
        FakeBoard::new()
            .with(4, a.clone())
            .unwrap()
            .with(9, b.clone())
            .unwrap(),
    );
    let both = [
        Address::new(4, None).unwrap(),
        Address::new(9, None).unwrap(),
    ];
    assert_eq!(bus.device(4).unwrap().serial_poll().unwrap(), StatusByte(0));
    bus.device(4).unwrap().write_str("*IDN?").unwrap();
    assert!(bus.device(4).unwrap().serial_poll().unwrap().mav());
    assert_eq!(
        bus.find_requester(&both).unwrap_err().kind(),
        ErrorKind::SrqStuck
    );
    b.set_status(StatusByte(StatusByte::RQS | 0x01));
    let (who, stb) = bus.find_requester(&both).unwrap();
    assert_eq!((who.primary.get(), stb), (9, StatusByte(0x41)));
    // The poll cleared RQS; the rest of the status byte stays.
    assert_eq!(b.status(), StatusByte(0x01));
    assert_eq!(
        bus.find_requester(&both).unwrap_err().kind(),
        ErrorKind::SrqStuck
    );
    // The read the polls came between is still there.
    assert_eq!(bus.device(4).unwrap().read_string().unwrap(), "A");
    // SRQ follows the scripted RQS bits: nobody requests service now, then 9 does.
    let e = bus
        .wait_for_service(&both, Duration::from_millis(1).into())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    b.set_status(StatusByte(StatusByte::RQS));
    let (who, stb) = bus
        .wait_for_service(&both, Duration::from_secs(1).into())
        .unwrap();
    assert_eq!((who.primary.get(), stb), (9, StatusByte(0x40)));
}

#[test]
fn clear_trigger_remote_and_local_reach_the_addressed_instrument_only() {
    let (a, b) = (dmm(), dmm());
    let bus = Bus::new(
        FakeBoard::new()
            .with(1, a.clone())
            .unwrap()
            .with(2, b.clone())
            .unwrap(),
    );
    let d = bus.device(1).unwrap();
    d.write_str("*IDN?").unwrap();
    d.clear().unwrap();
    assert_eq!(
        d.read(&mut [0u8; 8]).unwrap_err().kind(),
        ErrorKind::Timeout
    );
    d.trigger().unwrap();
    d.trigger().unwrap();
    d.remote().unwrap();
    assert_eq!((a.clears(), a.triggers(), a.is_remote()), (1, 2, true));
    assert_eq!((b.clears(), b.triggers(), b.is_remote()), (0, 0, false));
    d.go_to_local().unwrap();
    assert!(!a.is_remote());
    bus.device_clear_all().unwrap();
    assert_eq!((a.clears(), b.clears()), (2, 1));
    bus.trigger_group(&[
        Address::new(1, None).unwrap(),
        Address::new(2, None).unwrap(),
    ])
    .unwrap();
    assert_eq!((a.triggers(), b.triggers()), (3, 1));
}

#[test]
fn secondary_addresses_name_their_own_instruments() {
    let plain = FakeInstrument::new().answer("*IDN?", "MAINFRAME");
    let slot = FakeInstrument::new().answer("*IDN?", "PLUG-IN 3");
    let bus = Bus::new(
        FakeBoard::new()
            .with(6, plain)
            .unwrap()
            .with(Address::new(6, Some(3)).unwrap(), slot.clone())
            .unwrap(),
    );
    assert_eq!(bus.device(6).unwrap().query("*IDN?").unwrap(), "MAINFRAME");
    let plug_in = bus.device(Address::new(6, Some(3)).unwrap()).unwrap();
    assert_eq!(plug_in.query("*IDN?").unwrap(), "PLUG-IN 3");
    assert_eq!(slot.received(), ["*IDN?"]);
    let nobody = bus.device(Address::new(6, Some(4)).unwrap()).unwrap();
    assert_eq!(
        nobody.write_str("*IDN?").unwrap_err().kind(),
        ErrorKind::NoListener
    );
}

#[test]
fn nobody_there_is_no_listener_binary_data_is_kept_whole() {
    let i = FakeInstrument::new();
    let bus = bus_with(8, i.clone());
    let e = bus.device(9).unwrap().write_str("X").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoListener, "{e}");
    let empty = Bus::new(FakeBoard::new());
    let e = empty.device(9).unwrap().write_str("X").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoListener, "{e}");
    // A block written in two parts is one message, line feeds inside it included.
    let d = bus.device(8).unwrap();
    d.write_block(b"DATA ", BlockFormat::Definite, b"a\nb\x00")
        .unwrap();
    assert_eq!(i.received_bytes(), [b"DATA #14a\nb\x00".to_vec()]);
}

#[test]
fn srq_and_the_listener_check_come_from_the_script() {
    let meter = dmm();
    let bus = Bus::new(
        FakeBoard::new()
            .with(22, meter.clone())
            .unwrap()
            .with(5, FakeInstrument::new())
            .unwrap(),
    );
    let five = Address::new(5, None).unwrap();
    let meter_at = Address::new(22, None).unwrap();
    assert_eq!(bus.find_listeners().unwrap(), [five, meter_at]);
    assert!(!bus.srq().unwrap());
    assert!(!bus.wait_srq(Duration::from_millis(5).into()).unwrap());
    meter.set_status(StatusByte(StatusByte::RQS));
    assert!(bus.wait_srq(Duration::from_secs(1).into()).unwrap());
    let (who, stb) = bus.find_requester(&[five, meter_at]).unwrap();
    assert_eq!(who, meter_at);
    assert!(stb.rqs());
    assert!(!bus.srq().unwrap(), "the serial poll cleared RQS");
}

#[test]
fn the_board_is_a_plain_backend() {
    let mut b = FakeBoard::new().with(22, dmm()).unwrap();
    assert!(FakeBoard::new().with(0, dmm()).is_err());
    assert!(FakeBoard::new().with(31u8, dmm()).is_err());
    assert_eq!(b.name(), "fake");
    assert_eq!(
        b.set_timeout(Duration::from_millis(250).into()).unwrap(),
        Timeout::After(Duration::from_millis(250))
    );
    assert_eq!(b.timeout(), Timeout::After(Duration::from_millis(250)));
    assert_eq!(
        BackendExt::parallel_poll(&mut b).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
    let e = BackendExt::parallel_poll(&mut b).unwrap_err();
    assert!(e.to_string().contains("fake"), "{e}");
    assert!(b.tuning().is_none());
    let bus = Bus::new(b);
    bus.interface_clear().unwrap();
    assert_eq!(
        bus.device(22).unwrap().query("*IDN?").unwrap(),
        "ACME,DMM-1,0,1.0"
    );
    assert!(format!("{bus:?}").contains("fake"));
}
