//! The SRQ line as the recorder sees it, with the devices' RQS kept between operations
//! ([`crate::sim::Instrument::status_changes_with_time`]): an instrument that says its
//! status follows time is asked every time; one that says it does not is asked again
//! after each thing that can change it (its calls, reads from its output queue, the
//! host reaching into it), and the recorded SRQ edges are the same.

use std::time::Duration;

use crate::sim::instruments::ScpiInstrument;
use crate::sim::timing::{BoardTiming, DeviceTiming};
use crate::sim::transcript::EventKind;
use crate::sim::Fault;
use crate::sim::{DeviceIo, Instrument, SimHost};
use crate::status::StatusByte;
use crate::{Address, Bus, PrimaryAddress};

/// Requests service from virtual time `from` on, with no call to tell it so.
struct Alarm {
    from: Duration,
}

impl Instrument for Alarm {
    fn model(&self) -> &str {
        "ALARM"
    }
    fn listen(&mut self, _data: &[u8], _end: bool, _io: &mut DeviceIo<'_>) {}
    fn status(&mut self, io: &DeviceIo<'_>) -> StatusByte {
        StatusByte(if io.now() >= self.from { 0x40 } else { 0 })
    }
}

/// Requests service while its flag is set from outside (the host's `with_instrument_as`).
struct Flag {
    on: bool,
}

impl Instrument for Flag {
    fn model(&self) -> &str {
        "FLAG"
    }
    fn status_changes_with_time(&self) -> bool {
        false
    }
    fn listen(&mut self, _data: &[u8], _end: bool, _io: &mut DeviceIo<'_>) {}
    fn status(&mut self, _io: &DeviceIo<'_>) -> StatusByte {
        StatusByte(if self.on { 0x40 } else { 0 })
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }
}

fn at(p: u8) -> Address {
    Address::try_from(p).unwrap()
}

/// A recording host with `devices` on one board.
fn recorded(devices: Vec<(u8, Box<dyn Instrument>)>) -> (SimHost, Bus) {
    let host = SimHost::new("srq");
    let b = host.add_board(
        "gpib0",
        PrimaryAddress::try_from(0u8).unwrap(),
        BoardTiming::default(),
        Duration::from_secs(1).into(),
    );
    for (a, device) in devices {
        host.attach(b, at(a), device, DeviceTiming::default())
            .unwrap();
    }
    host.record(64);
    let bus = Bus::new(host.board(b).unwrap());
    (host, bus)
}

/// The SRQ edges recorded so far, in order.
fn edges(host: &SimHost) -> Vec<bool> {
    host.take_events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Srq(on) => Some(on),
            _ => None,
        })
        .collect()
}

#[test]
fn a_status_that_follows_time_is_asked_after_every_operation() {
    let alarm = Alarm {
        from: Duration::from_millis(5),
    };
    let (host, bus) = recorded(vec![
        (3, Box::new(alarm)),
        (7, Box::new(ScpiInstrument::new("ACME,METER,1,1.0"))),
    ]);
    let meter = bus.device(at(7)).unwrap();
    meter.write(b"*CLS").unwrap();
    meter.write(b"*CLS").unwrap();
    assert_eq!(edges(&host), [], "no request before 5 ms");
    bus.delay(Duration::from_millis(10));
    // Nothing was said to the alarm; the next operation on the bus sees its request.
    meter.write(b"*CLS").unwrap();
    assert_eq!(edges(&host), [true]);
}

#[test]
fn a_status_that_follows_time_is_asked_with_nothing_else_on_the_bus() {
    let alarm = Alarm {
        from: Duration::from_millis(5),
    };
    let (_host, bus) = recorded(vec![
        (3, Box::new(alarm)),
        (7, Box::new(ScpiInstrument::new("ACME,METER,1,1.0"))),
    ]);
    assert!(!bus.srq().unwrap());
    assert!(!bus.srq().unwrap());
    bus.delay(Duration::from_millis(10));
    assert!(
        bus.srq().unwrap(),
        "the line looked at again, with no device called"
    );
    assert!(bus.lines().unwrap().srq);
}

/// Requests service while it has output queued: a message answers each one it hears.
struct Eager;

impl Instrument for Eager {
    fn model(&self) -> &str {
        "EAGER"
    }
    fn status_changes_with_time(&self) -> bool {
        false
    }
    fn listen(&mut self, _data: &[u8], end: bool, io: &mut DeviceIo<'_>) {
        if end {
            io.output.push_str("READY\n");
            io.output.finish_message();
        }
    }
    fn status(&mut self, io: &DeviceIo<'_>) -> StatusByte {
        StatusByte(if io.output.is_empty() { 0 } else { 0x40 })
    }
}

#[test]
fn a_kept_status_follows_the_output_queue() {
    let (host, bus) = recorded(vec![(5, Box::new(Eager))]);
    let eager = bus.device(at(5)).unwrap();
    eager.write(b"GO").unwrap();
    assert_eq!(edges(&host), [true], "an answer queued");
    assert_eq!(eager.read_string().unwrap(), "READY");
    assert_eq!(edges(&host), [false], "the answer read: nothing queued");
    eager.write(b"GO").unwrap();
    assert_eq!(edges(&host), [true]);
}

#[test]
fn a_kept_status_follows_the_serial_poll() {
    let (host, bus) = recorded(vec![(7, Box::new(ScpiInstrument::new("ACME,METER,1,1.0")))]);
    let meter = bus.device(at(7)).unwrap();
    meter.write(b"*SRE 16").unwrap(); // request service when a message is available
    assert_eq!(edges(&host), []);
    meter.write(b"*IDN?").unwrap();
    assert_eq!(edges(&host), [true], "MAV with the answer queued");
    assert_eq!(meter.read_string().unwrap(), "ACME,METER,1,1.0");
    assert_eq!(edges(&host), [], "RQS is latched until the poll");
    assert_eq!(meter.serial_poll().unwrap().0, 0x40);
    assert_eq!(edges(&host), [false]);
}

#[test]
fn a_kept_status_is_asked_again_after_the_host_changes_the_instrument() {
    let (host, bus) = recorded(vec![
        (3, Box::new(Flag { on: false })),
        (7, Box::new(ScpiInstrument::new("ACME,METER,1,1.0"))),
    ]);
    let meter = bus.device(at(7)).unwrap();
    meter.write(b"*CLS").unwrap();
    assert_eq!(edges(&host), []);
    host.with_instrument_as::<Flag, _>(0, at(3), |f| f.on = true)
        .unwrap()
        .unwrap();
    meter.write(b"*CLS").unwrap();
    assert_eq!(edges(&host), [true]);
    host.with_instrument_as::<Flag, _>(0, at(3), |f| f.on = false)
        .unwrap()
        .unwrap();
    meter.write(b"*CLS").unwrap();
    assert_eq!(edges(&host), [false]);
}

#[test]
fn a_kept_answer_is_worked_out_again_after_a_fault_changes() {
    let (host, bus) = recorded(vec![
        (3, Box::new(ScpiInstrument::new("ACME,SOURCE,1,1.0"))),
        (7, Box::new(ScpiInstrument::new("ACME,METER,1,1.0"))),
    ]);
    // Operations on the meter only: the source is not called.
    let meter = bus.device(at(7)).unwrap();
    meter.write(b"*CLS").unwrap();
    assert_eq!(edges(&host), []);
    host.inject(0, at(3), Fault::SrqStuck).unwrap();
    meter.write(b"*CLS").unwrap();
    assert_eq!(edges(&host), [true], "SRQ held by the source's fault");
    host.clear_faults(0, at(3)).unwrap();
    meter.write(b"*CLS").unwrap();
    assert_eq!(edges(&host), [false]);
}
