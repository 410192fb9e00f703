//! A traced run puts the same calls on the wire as an untraced one: the tracer
//! forwards combined calls (a query's write and read, addressing and a transfer) as
//! the one call they are, except a raw backend's query, whose halves follow each other
//! on the bus anyway: those it makes a call each, to record when the write ended.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use gpib::backend::tuning::BoardTuning;
use gpib::backend::{BoardControl, DeviceLevel, VirtualTime, WireStats, WriteReadError};
use gpib::trace::{CallOp, MemorySink, Record, SharedSink, TracedBackend};
use gpib::{Address, Backend, Bus, Eos, PrimaryAddress, ReadStatus, StatusByte};
use gpib_suite::{Fixture, SCPI};

#[test]
fn a_traced_vxi11_query_costs_one_round_trip_as_untraced() {
    let mem = MemorySink::new();
    let fx = Fixture::vxi11_bench_traced(SharedSink::new(mem.clone()));
    let dmm = fx.bus.device(SCPI).unwrap();
    dmm.query("*IDN?").unwrap(); // the link in place
    mem.take();
    let before = fx.bus.wire_stats().unwrap();
    assert_eq!(dmm.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
    let after = fx.bus.wire_stats().unwrap();
    assert_eq!(
        after.round_trips - before.round_trips,
        1,
        "one query, traced"
    );
    // Recorded as its two halves, the write at the call's start with no time of its own.
    let calls: Vec<_> = mem
        .take()
        .into_iter()
        .filter_map(|r| match r {
            Record::Call(c) => Some(c),
            _ => None,
        })
        .collect();
    let ops: Vec<_> = calls.iter().map(|c| c.op).collect();
    assert_eq!(ops, [CallOp::DeviceWrite, CallOp::DeviceRead], "{calls:?}");
    assert_eq!(&calls[0].data[..], b"*IDN?\n");
    assert_eq!(calls[0].duration_ns, 0);
    assert_eq!(calls[0].start_ns, calls[1].start_ns);
    assert_eq!(&calls[1].data[..], b"SIMULATED,SCPI-DMM,0,1.0\n");
}

type Log = Arc<Mutex<Vec<&'static str>>>;

/// Any backend, with the name of each of its calls logged (every method forwarded).
struct Counting<B>(B, Log);

impl<B: Backend> Counting<B> {
    fn log(&self, op: &'static str) {
        self.1.lock().unwrap().push(op);
    }
}

impl<B: Backend> Backend for Counting<B> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn board_address(&self) -> PrimaryAddress {
        self.0.board_address()
    }
    fn command(&mut self, bytes: &[u8]) -> gpib::Result<()> {
        self.log("command");
        self.0.command(bytes)
    }
    fn write(&mut self, data: &[u8], eoi: bool) -> gpib::Result<usize> {
        self.log("write");
        self.0.write(data, eoi)
    }
    fn read(&mut self, buf: &mut [u8], eos: Option<Eos>) -> gpib::Result<ReadStatus> {
        self.log("read");
        self.0.read(buf, eos)
    }
    fn command_then_write(&mut self, c: &[u8], data: &[u8], eoi: bool) -> gpib::Result<usize> {
        self.log("command_then_write");
        self.0.command_then_write(c, data, eoi)
    }
    fn command_then_read(
        &mut self,
        c: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> gpib::Result<ReadStatus> {
        self.log("command_then_read");
        self.0.command_then_read(c, buf, eos)
    }
    fn command_write_command_read(
        &mut self,
        listen: &[u8],
        data: &[u8],
        talk: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus, WriteReadError> {
        self.log("command_write_command_read");
        self.0
            .command_write_command_read(listen, data, talk, buf, eos)
    }
    fn interface_clear(&mut self) -> gpib::Result<()> {
        self.log("interface_clear");
        self.0.interface_clear()
    }
    fn remote_enable(&mut self, on: bool) -> gpib::Result<()> {
        self.log("remote_enable");
        self.0.remote_enable(on)
    }
    fn set_timeout(&mut self, t: gpib::Timeout) -> gpib::Result<gpib::Timeout> {
        self.log("set_timeout");
        self.0.set_timeout(t)
    }
    fn timeout(&self) -> gpib::Timeout {
        self.0.timeout()
    }
    fn now(&self) -> Duration {
        self.0.now()
    }
    fn serial_poll(&mut self, device: Address) -> gpib::Result<StatusByte> {
        self.log("serial_poll");
        self.0.serial_poll(device)
    }
    fn srq(&mut self) -> gpib::Result<bool> {
        self.log("srq");
        self.0.srq()
    }
    fn wait_srq(&mut self, t: gpib::Timeout) -> gpib::Result<bool> {
        self.log("wait_srq");
        self.0.wait_srq(t)
    }
    fn device_level(&mut self) -> Option<&mut dyn DeviceLevel> {
        self.0.device_level()
    }
    fn board_control(&mut self) -> Option<&mut dyn BoardControl> {
        self.0.board_control()
    }
    fn virtual_time(&mut self) -> Option<&mut dyn VirtualTime> {
        self.0.virtual_time()
    }
    fn tuning(&mut self) -> Option<&mut dyn BoardTuning> {
        self.0.tuning()
    }
    fn wire_stats(&self) -> Option<WireStats> {
        self.0.wire_stats()
    }
}

/// The calls two queries make on a fresh `bench`, traced or not, the bus events they
/// make and the virtual time they take.
fn two_queries(traced: bool) -> (Vec<&'static str>, Vec<String>, Duration) {
    let host = gpib::sim::bench();
    let log = Log::default();
    let board = Counting(host.board(0).unwrap(), log.clone());
    let bus = if traced {
        let sink = SharedSink::new(MemorySink::new());
        Bus::new(TracedBackend::new(board, sink, 0))
    } else {
        Bus::new(board)
    };
    let dmm = bus.device(SCPI).unwrap();
    host.record(64);
    let t0 = bus.now();
    for _ in 0..2 {
        assert_eq!(dmm.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
    }
    let taken = bus.now() - t0;
    let events = host.take_events().iter().map(|e| e.to_string()).collect();
    let calls = std::mem::take(&mut *log.lock().unwrap());
    (calls, events, taken)
}

#[test]
fn a_traced_sim_query_puts_the_same_events_on_the_bus_as_untraced() {
    let (plain, plain_events, plain_time) = two_queries(false);
    let (traced, traced_events, traced_time) = two_queries(true);
    // Untraced, a query is one call: its addressings, its write and its read under
    // one lock. Traced, its two halves are a call each, so that the trace shows when
    // the write ended.
    assert_eq!(plain, ["command_write_command_read"; 2]);
    assert_eq!(
        traced,
        ["command_then_write", "command_then_read"].repeat(2)
    );
    assert_eq!(traced_events.len(), 2 * 4, "{traced_events:#?}");
    assert_eq!(traced_events, plain_events, "the bus events of two queries");
    assert_eq!(traced_time, plain_time, "the virtual time they take");
}

/// A traced handle of a simulated board that a `Bus` already drives records its calls:
/// `Bus::new` wraps the backend it is given, and sharing a board is the manager's job
/// (issue 31 item 1). Before, the new `Bus` joined the open board's and dropped the
/// tracer, so nothing was recorded.
#[test]
fn a_traced_handle_of_an_open_board_records_its_calls() {
    let host = gpib::sim::bench();
    let open = Bus::new(host.board(0).unwrap());
    open.device(SCPI).unwrap().query("*IDN?").unwrap();
    let mem = MemorySink::new();
    let traced = Bus::new(TracedBackend::new(
        host.board(0).unwrap(),
        SharedSink::new(mem.clone()),
        0,
    ));
    let idn = traced.device(SCPI).unwrap().query("*IDN?").unwrap();
    assert_eq!(idn, "SIMULATED,SCPI-DMM,0,1.0");
    let calls = mem
        .take()
        .into_iter()
        .filter(|r| matches!(r, Record::Call(_)))
        .count();
    assert!(
        calls >= 2,
        "the query's write and read recorded, got {calls}"
    );
}
