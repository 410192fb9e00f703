//! A wrapper changes nothing: every method of [`Backend`] and of its capabilities,
//! provided ones included, called through [`TracedBackend`] or `Box<dyn Backend>`,
//! reaches the wrapped backend's own method of that name, once, and nothing else.
//!
//! The wrapped backend ([`Probe`]) overrides every method and logs the operations it
//! is asked for; a trait's default reached in the wrapper instead (a combined call made
//! as its two halves, an `Unsupported` answered without asking) shows in the log as
//! other calls or none, and the test names the method. One exception, on purpose: the
//! tracer makes a raw backend's query (`command_write_command_read`) as its two halves,
//! whose record then shows when the write ended; the halves follow each other on the
//! bus either way.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::address::{Address, PrimaryAddress};
use crate::backend::tuning::{BoardTuning, T1Delay};
use crate::backend::{
    Backend, BoardControl, ClockKind, DeviceLevel, Eos, ReadEnd, ReadStatus, Turns, VirtualTime,
    WireStats, WriteReadError,
};
use crate::error::Result;
use crate::status::{BoardStatus, BusLines, StatusByte};
use crate::trace::{MemorySink, SharedSink, TracedBackend};
use crate::Timeout;

type Log = Arc<Mutex<Vec<&'static str>>>;

/// A backend that has every capability and overrides every method, logging each
/// operation (not the clock, the name or the capability look-ups: a tracer reads those).
struct Probe(Log);

impl Probe {
    fn log(&self, op: &'static str) {
        self.0.lock().unwrap().push(op);
    }
}

const OK_READ: ReadStatus = ReadStatus {
    count: 0,
    end: ReadEnd::Eoi,
};

const STATS: WireStats = WireStats {
    requests: 7,
    round_trips: 5,
    bytes_sent: 3,
    bytes_received: 2,
    waiting: Duration::from_nanos(1),
};

impl Backend for Probe {
    fn name(&self) -> &str {
        "probe"
    }
    fn board_address(&self) -> PrimaryAddress {
        PrimaryAddress::new_const(0)
    }
    fn command(&mut self, _: &[u8]) -> Result<()> {
        self.log("command");
        Ok(())
    }
    fn write(&mut self, data: &[u8], _: bool) -> Result<usize> {
        self.log("write");
        Ok(data.len())
    }
    fn read(&mut self, _: &mut [u8], _: Option<Eos>) -> Result<ReadStatus> {
        self.log("read");
        Ok(OK_READ)
    }
    fn command_then_write(&mut self, _: &[u8], data: &[u8], _: bool) -> Result<usize> {
        self.log("command_then_write");
        Ok(data.len())
    }
    fn command_then_read(&mut self, _: &[u8], _: &mut [u8], _: Option<Eos>) -> Result<ReadStatus> {
        self.log("command_then_read");
        Ok(OK_READ)
    }
    fn command_write_command_read(
        &mut self,
        _: &[u8],
        _: &[u8],
        _: &[u8],
        _: &mut [u8],
        _: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        self.log("command_write_command_read");
        Ok(OK_READ)
    }
    fn interface_clear(&mut self) -> Result<()> {
        self.log("interface_clear");
        Ok(())
    }
    fn remote_enable(&mut self, _: bool) -> Result<()> {
        self.log("remote_enable");
        Ok(())
    }
    fn set_timeout(&mut self, t: Timeout) -> Result<Timeout> {
        self.log("set_timeout");
        Ok(t)
    }
    fn timeout(&self) -> Timeout {
        Timeout::Never
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
    fn serial_poll(&mut self, _: Address) -> Result<StatusByte> {
        self.log("serial_poll");
        Ok(StatusByte(0x40))
    }
    fn srq(&mut self) -> Result<bool> {
        self.log("srq");
        Ok(true)
    }
    fn wait_srq(&mut self, _: Timeout) -> Result<bool> {
        self.log("wait_srq");
        Ok(true)
    }
    fn device_level(&mut self) -> Option<&mut dyn DeviceLevel> {
        Some(self)
    }
    fn board_control(&mut self) -> Option<&mut dyn BoardControl> {
        Some(self)
    }
    fn virtual_time(&mut self) -> Option<&mut dyn VirtualTime> {
        Some(self)
    }
    fn tuning(&mut self) -> Option<&mut dyn BoardTuning> {
        Some(self)
    }
    fn wire_stats(&self) -> Option<WireStats> {
        Some(STATS)
    }
}

impl DeviceLevel for Probe {
    fn device_write(&mut self, _: Address, data: &[u8], _: bool) -> Result<usize> {
        self.log("device_write");
        Ok(data.len())
    }
    fn device_read(&mut self, _: Address, _: &mut [u8], _: Option<Eos>) -> Result<ReadStatus> {
        self.log("device_read");
        Ok(OK_READ)
    }
    fn device_write_read(
        &mut self,
        _: Address,
        _: &[u8],
        _: &mut [u8],
        _: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        self.log("device_write_read");
        Ok(OK_READ)
    }
    fn device_clear(&mut self, _: Address) -> Result<()> {
        self.log("device_clear");
        Ok(())
    }
    fn device_trigger(&mut self, _: Address) -> Result<()> {
        self.log("device_trigger");
        Ok(())
    }
    fn device_remote(&mut self, _: Address) -> Result<()> {
        self.log("device_remote");
        Ok(())
    }
    fn device_local(&mut self, _: Address) -> Result<()> {
        self.log("device_local");
        Ok(())
    }
}

impl BoardControl for Probe {
    fn parallel_poll(&mut self) -> Result<u8> {
        self.log("parallel_poll");
        Ok(1)
    }
    fn lines(&mut self) -> Result<BusLines> {
        self.log("lines");
        Ok(BusLines::default())
    }
    fn board_status(&mut self) -> Result<BoardStatus> {
        self.log("board_status");
        Ok(BoardStatus::default())
    }
    fn go_to_standby(&mut self) -> Result<()> {
        self.log("go_to_standby");
        Ok(())
    }
    fn take_control(&mut self) -> Result<()> {
        self.log("take_control");
        Ok(())
    }
    fn listener_present(&mut self, _: Address) -> Result<bool> {
        self.log("listener_present");
        Ok(true)
    }
}

impl VirtualTime for Probe {
    fn clock_kind(&mut self) -> ClockKind {
        self.log("clock_kind");
        ClockKind::Virtual
    }
    fn delay(&mut self, _: Duration) {
        self.log("delay");
    }
    fn modelled_host_cpu(&mut self) -> Option<Duration> {
        self.log("modelled_host_cpu");
        None
    }
    fn waits_in_wall_time(&mut self) -> bool {
        self.log("waits_in_wall_time");
        false
    }
    fn wait_srq_step(&mut self, _: Duration) -> Result<Option<bool>> {
        self.log("wait_srq_step");
        Ok(Some(true))
    }
    fn turns(&mut self) -> Option<Arc<dyn Turns>> {
        self.log("turns");
        None
    }
}

impl BoardTuning for Probe {
    fn t1(&mut self) -> Result<T1Delay> {
        self.log("t1");
        Ok(T1Delay::from_nanos(500))
    }
    fn set_t1(&mut self, t1: T1Delay) -> Result<T1Delay> {
        self.log("set_t1");
        Ok(t1)
    }
    fn autopoll(&mut self) -> Result<bool> {
        self.log("autopoll");
        Ok(false)
    }
    fn set_autopoll(&mut self, on: bool) -> Result<bool> {
        self.log("set_autopoll");
        Ok(on)
    }
    fn readdress(&mut self) -> Result<bool> {
        self.log("readdress");
        Ok(false)
    }
    fn set_readdress(&mut self, on: bool) -> Result<bool> {
        self.log("set_readdress");
        Ok(on)
    }
    fn unaddress(&mut self) -> Result<bool> {
        self.log("unaddress");
        Ok(false)
    }
    fn set_unaddress(&mut self, on: bool) -> Result<bool> {
        self.log("set_unaddress");
        Ok(on)
    }
}

/// Calls every operation of `b` (and of each capability it returns), checking after
/// each that `log` holds exactly that operation's name once. Returns the names checked.
fn every_method_reaches_the_inner_one(b: &mut dyn Backend, log: &Log) -> usize {
    let dev = Address::primary(PrimaryAddress::new_const(5));
    let mut buf = [0u8; 4];
    let mut checked = 0;
    let mut expect = |name: &'static str, log: &Log| {
        let got = std::mem::take(&mut *log.lock().unwrap());
        assert_eq!(
            got,
            [name],
            "{name}: the wrapper did not forward it as one call"
        );
        checked += 1;
    };
    b.command(b"?").unwrap();
    expect("command", log);
    b.write(b"x", true).unwrap();
    expect("write", log);
    b.read(&mut buf, None).unwrap();
    expect("read", log);
    b.command_then_write(b"?", b"x", true).unwrap();
    expect("command_then_write", log);
    b.command_then_read(b"?", &mut buf, None).unwrap();
    expect("command_then_read", log);
    b.interface_clear().unwrap();
    expect("interface_clear", log);
    b.remote_enable(true).unwrap();
    expect("remote_enable", log);
    b.set_timeout(Duration::from_secs(1).into()).unwrap();
    expect("set_timeout", log);
    assert_eq!(b.serial_poll(dev).unwrap(), StatusByte(0x40));
    expect("serial_poll", log);
    assert!(b.srq().unwrap());
    expect("srq", log);
    assert!(b.wait_srq(Duration::from_secs(1).into()).unwrap());
    expect("wait_srq", log);
    assert_eq!(b.wire_stats(), Some(STATS), "wire_stats");

    let d = b.device_level().expect("device_level forwarded");
    d.device_write(dev, b"x", true).unwrap();
    expect("device_write", log);
    d.device_read(dev, &mut buf, None).unwrap();
    expect("device_read", log);
    d.device_write_read(dev, b"x", &mut buf, None).unwrap();
    expect("device_write_read", log);
    d.device_clear(dev).unwrap();
    expect("device_clear", log);
    d.device_trigger(dev).unwrap();
    expect("device_trigger", log);
    d.device_remote(dev).unwrap();
    expect("device_remote", log);
    d.device_local(dev).unwrap();
    expect("device_local", log);

    let c = b.board_control().expect("board_control forwarded");
    c.parallel_poll().unwrap();
    expect("parallel_poll", log);
    c.lines().unwrap();
    expect("lines", log);
    c.board_status().unwrap();
    expect("board_status", log);
    c.go_to_standby().unwrap();
    expect("go_to_standby", log);
    c.take_control().unwrap();
    expect("take_control", log);
    c.listener_present(dev).unwrap();
    expect("listener_present", log);

    let v = b.virtual_time().expect("virtual_time forwarded");
    assert_eq!(v.clock_kind(), ClockKind::Virtual);
    expect("clock_kind", log);
    v.delay(Duration::from_millis(1));
    expect("delay", log);
    v.modelled_host_cpu();
    expect("modelled_host_cpu", log);
    v.waits_in_wall_time();
    expect("waits_in_wall_time", log);
    v.wait_srq_step(Duration::from_secs(1)).unwrap();
    expect("wait_srq_step", log);
    assert!(v.turns().is_none());
    expect("turns", log);

    let t = b.tuning().expect("tuning forwarded");
    t.t1().unwrap();
    expect("t1", log);
    t.set_t1(T1Delay::from_nanos(2000)).unwrap();
    expect("set_t1", log);
    t.autopoll().unwrap();
    expect("autopoll", log);
    t.set_autopoll(true).unwrap();
    expect("set_autopoll", log);
    t.readdress().unwrap();
    expect("readdress", log);
    t.set_readdress(true).unwrap();
    expect("set_readdress", log);
    t.unaddress().unwrap();
    expect("unaddress", log);
    t.set_unaddress(true).unwrap();
    expect("set_unaddress", log);
    checked
}

/// Every operation of the trait and its four capabilities (the 12 of `Backend` less
/// `wire_stats`, checked by value; 7 + 6 + 6 + 8).
const OPERATIONS: usize = 11 + 7 + 6 + 6 + 8;

#[test]
fn the_tracer_forwards_every_method_provided_ones_included() {
    let log = Log::default();
    let mem = MemorySink::new();
    let mut traced = TracedBackend::new(Probe(log.clone()), SharedSink::new(mem.clone()), 0);
    assert_eq!(
        every_method_reaches_the_inner_one(&mut traced, &log),
        OPERATIONS
    );
    assert!(!mem.take().is_empty(), "the calls were traced");
}

#[test]
fn a_boxed_backend_forwards_every_method_provided_ones_included() {
    let log = Log::default();
    let mut boxed: Box<dyn Backend> = Box::new(Probe(log.clone()));
    assert_eq!(
        every_method_reaches_the_inner_one(&mut boxed, &log),
        OPERATIONS
    );
    // And a box of a traced backend, as `gpib-diag trace record` builds it.
    let mut both: Box<dyn Backend> = Box::new(TracedBackend::new(
        Probe(log.clone()),
        SharedSink::new(MemorySink::new()),
        0,
    ));
    assert_eq!(
        every_method_reaches_the_inner_one(&mut both, &log),
        OPERATIONS
    );
}

/// A backend whose combined calls fail as told, each taking 5 us of its clock.
struct Failing {
    clock: std::sync::atomic::AtomicU64,
    read_half: bool,
}

impl Failing {
    fn spend(&self) {
        self.clock
            .fetch_add(5_000, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Backend for Failing {
    fn name(&self) -> &str {
        "failing"
    }
    fn board_address(&self) -> PrimaryAddress {
        PrimaryAddress::new_const(0)
    }
    fn write(&mut self, _: &[u8], _: bool) -> Result<usize> {
        unreachable!("only combined calls are made")
    }
    fn read(&mut self, _: &mut [u8], _: Option<Eos>) -> Result<ReadStatus> {
        unreachable!("only combined calls are made")
    }
    fn command_then_write(&mut self, _: &[u8], data: &[u8], _: bool) -> Result<usize> {
        self.spend();
        if self.read_half {
            return Ok(data.len());
        }
        Err(crate::Error::CommandTimeout {
            transferred: 1,
            total: 3,
        })
    }
    fn command_then_read(
        &mut self,
        _: &[u8],
        buf: &mut [u8],
        _: Option<Eos>,
    ) -> Result<ReadStatus> {
        self.spend();
        buf[..2].copy_from_slice(b"ab");
        Err(crate::Error::NoListener { transferred: 2 })
    }
    fn interface_clear(&mut self) -> Result<()> {
        Ok(())
    }
    fn remote_enable(&mut self, _: bool) -> Result<()> {
        Ok(())
    }
    fn set_timeout(&mut self, t: Timeout) -> Result<Timeout> {
        Ok(t)
    }
    fn timeout(&self) -> Timeout {
        Timeout::Never
    }
    fn now(&self) -> Duration {
        Duration::from_nanos(self.clock.load(std::sync::atomic::Ordering::Relaxed))
    }
    fn device_level(&mut self) -> Option<&mut dyn DeviceLevel> {
        Some(self)
    }
}

impl DeviceLevel for Failing {
    fn device_write(&mut self, _: Address, _: &[u8], _: bool) -> Result<usize> {
        unreachable!("only combined calls are made")
    }
    fn device_read(&mut self, _: Address, _: &mut [u8], _: Option<Eos>) -> Result<ReadStatus> {
        unreachable!("only combined calls are made")
    }
    fn device_write_read(
        &mut self,
        _: Address,
        _: &[u8],
        buf: &mut [u8],
        _: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        self.spend();
        if self.read_half {
            buf[..2].copy_from_slice(b"ab");
            Err(WriteReadError::Read(crate::Error::NoListener {
                transferred: 2,
            }))
        } else {
            Err(WriteReadError::Write(crate::Error::Protocol(
                "refused".into(),
            )))
        }
    }
    fn device_clear(&mut self, _: Address) -> Result<()> {
        Ok(())
    }
    fn device_trigger(&mut self, _: Address) -> Result<()> {
        Ok(())
    }
    fn device_remote(&mut self, _: Address) -> Result<()> {
        Ok(())
    }
    fn device_local(&mut self, _: Address) -> Result<()> {
        Ok(())
    }
}

/// (op, error kind, start, duration, count, data) of each call record.
type Shown = (
    crate::trace::CallOp,
    Option<crate::ErrorKind>,
    u64,
    u64,
    u64,
    Vec<u8>,
);

fn calls_of(mem: &MemorySink) -> Vec<Shown> {
    mem.take()
        .into_iter()
        .filter_map(|r| match r {
            crate::trace::Record::Call(c) => Some((
                c.op,
                c.error,
                c.start_ns,
                c.duration_ns,
                c.count,
                c.data.into_owned(),
            )),
            _ => None,
        })
        .collect()
}

// A failed combined call: the half that failed carries the error and the call's time;
// a second half that never started is not recorded.
#[test]
fn a_failed_combined_call_is_recorded_in_the_half_that_failed() {
    use crate::trace::CallOp as Op;
    use crate::ErrorKind as K;
    let dev = Address::primary(PrimaryAddress::new_const(5));
    let mut buf = [0u8; 8];
    for read_half in [false, true] {
        let mem = MemorySink::new();
        let inner = Failing {
            clock: Default::default(),
            read_half,
        };
        let mut t = TracedBackend::new(inner, SharedSink::new(mem.clone()), 0);
        let d = t.device_level().unwrap();
        assert!(d.device_write_read(dev, b"Q?", &mut buf, None).is_err());
        let want: Vec<Shown> = if read_half {
            vec![
                (Op::DeviceWrite, None, 0, 0, 2, b"Q?".to_vec()),
                (
                    Op::DeviceRead,
                    Some(K::NoListener),
                    0,
                    5_000,
                    2,
                    b"ab".to_vec(),
                ),
            ]
        } else {
            vec![(Op::DeviceWrite, Some(K::Protocol), 0, 5_000, 0, vec![])]
        };
        assert_eq!(calls_of(&mem), want, "read half failing: {read_half}");
    }
    let mem = MemorySink::new();
    let inner = Failing {
        clock: Default::default(),
        read_half: false,
    };
    let mut t = TracedBackend::new(inner, SharedSink::new(mem.clone()), 0);
    // The commands time out: no write follows them.
    assert!(t.command_then_write(b"?5 ", b"x", true).is_err());
    assert_eq!(
        calls_of(&mem),
        [(
            Op::Command,
            Some(K::CommandTimeout),
            0,
            5_000,
            1,
            b"?5 ".to_vec()
        )]
    );
    // No listener for the read: the commands went out, the read failed.
    assert!(t.command_then_read(b"_U ", &mut buf, None).is_err());
    assert_eq!(
        calls_of(&mem),
        [
            (Op::Command, None, 5_000, 0, 3, b"_U ".to_vec()),
            (
                Op::Read,
                Some(K::NoListener),
                5_000,
                5_000,
                2,
                b"ab".to_vec()
            ),
        ]
    );
}

// A query on a raw backend: a box forwards it as the one call it is; the tracer makes
// it as its two halves, each one call, so that its record shows when the write ended
// (the halves follow each other on the bus either way).
#[test]
fn a_raw_query_is_forwarded_whole_by_a_box_and_in_its_two_halves_by_the_tracer() {
    use crate::trace::CallOp as Op;
    let log = Log::default();
    let mut buf = [0u8; 4];
    let mut boxed: Box<dyn Backend> = Box::new(Probe(log.clone()));
    boxed
        .command_write_command_read(b"?%", b"Q?", b"%?", &mut buf, None)
        .unwrap();
    assert_eq!(
        std::mem::take(&mut *log.lock().unwrap()),
        ["command_write_command_read"]
    );

    let mem = MemorySink::new();
    let mut traced = TracedBackend::new(Probe(log.clone()), SharedSink::new(mem.clone()), 0);
    traced
        .command_write_command_read(b"?%", b"Q?", b"%?", &mut buf, None)
        .unwrap();
    assert_eq!(
        std::mem::take(&mut *log.lock().unwrap()),
        ["command_then_write", "command_then_read"]
    );
    let ops: Vec<_> = calls_of(&mem).into_iter().map(|c| (c.0, c.5)).collect();
    assert_eq!(
        ops,
        [
            (Op::Command, b"?%".to_vec()),
            (Op::Write, b"Q?".to_vec()),
            (Op::Command, b"%?".to_vec()),
            (Op::Read, vec![]),
        ]
    );
}

// A traced query's error says which half failed: the write half's commands, or the
// read (its bytes at the start of the buffer).
#[test]
fn a_failed_traced_query_says_which_half_failed() {
    use crate::trace::CallOp as Op;
    use crate::ErrorKind as K;
    let mut buf = [0u8; 8];
    for read_half in [false, true] {
        let mem = MemorySink::new();
        let inner = Failing {
            clock: Default::default(),
            read_half,
        };
        let mut t = TracedBackend::new(inner, SharedSink::new(mem.clone()), 0);
        let r = t.command_write_command_read(b"?%", b"Q?", b"%?", &mut buf, None);
        let ops: Vec<_> = calls_of(&mem).into_iter().map(|c| (c.0, c.1)).collect();
        match r {
            Err(WriteReadError::Write(e)) if !read_half => {
                assert_eq!(e.kind(), K::CommandTimeout);
                assert_eq!(ops, [(Op::Command, Some(K::CommandTimeout))]);
            }
            Err(WriteReadError::Read(e)) if read_half => {
                assert_eq!((e.kind(), e.transferred()), (K::NoListener, Some(2)));
                assert_eq!(&buf[..2], b"ab");
                assert_eq!(
                    ops,
                    [
                        (Op::Command, None),
                        (Op::Write, None),
                        (Op::Command, None),
                        (Op::Read, Some(K::NoListener)),
                    ]
                );
            }
            other => panic!("read half {read_half}: {other:?}"),
        }
    }
}
