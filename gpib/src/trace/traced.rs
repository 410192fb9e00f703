//! [`TracedBackend`]: any backend, with one [`Call`] record per call, stamped on the
//! backend's own clock (virtual on the simulator, wall time elsewhere).

use std::borrow::Cow;
use std::time::Duration;

use crate::address::{Address, PrimaryAddress};
use crate::backend::{
    Backend, BackendExt, BoardControl, ClockKind, DeviceLevel, Eos, ReadStatus, Turns, VirtualTime,
    WireStats, WriteReadError,
};
use crate::error::{Error, ErrorKind, Result};
use crate::status::{BoardStatus, BusLines, StatusByte};
use crate::timeout::Timeout;
use crate::trace::format::{status, Call, CallOp, Record};
use crate::trace::sink::{SharedSink, TraceSink};

/// A backend whose calls are traced into a sink.
///
/// ```
/// use gpib::backend::fake::{FakeBoard, FakeInstrument};
/// use gpib::trace::{CallOp, MemorySink, Record, SharedSink, TracedBackend};
/// use gpib::Bus;
/// let mem = MemorySink::new();
/// let fake = FakeBoard::new().with(22, FakeInstrument::new().answer("*IDN?", "ACME,DMM-1,0,1.0"))?;
/// let bus = Bus::new(TracedBackend::new(fake, SharedSink::new(mem.clone()), 0));
/// bus.device(22)?.query("*IDN?")?;
/// let calls = mem.take();
/// assert!(calls.iter().all(|r| matches!(r, Record::Call(_))));
/// assert!(calls.iter().any(|r| matches!(r, Record::Call(c) if c.op == CallOp::Read)));
/// # Ok::<(), gpib::Error>(())
/// ```
pub struct TracedBackend<B> {
    inner: B,
    sink: SharedSink,
    board: u16,
}

impl<B> std::fmt::Debug for TracedBackend<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TracedBackend")
            .field("board", &self.board)
            .finish()
    }
}

impl<B: Backend> TracedBackend<B> {
    /// Traces `inner`'s calls into `sink`; `board` names the handle in the records.
    pub fn new(inner: B, sink: SharedSink, board: u16) -> Self {
        Self { inner, sink, board }
    }

    /// The traced backend.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    /// Runs `f` on the inner backend and records it: `what` gives the record's details
    /// from the result.
    fn traced<'d, T>(
        &mut self,
        op: CallOp,
        device: Option<Address>,
        f: impl FnOnce(&mut B) -> Result<T>,
        what: impl FnOnce(&Result<T>) -> Details<'d>,
    ) -> Result<T> {
        let t0 = self.inner.now();
        let out = f(&mut self.inner);
        let d = what(&out);
        self.finish(op, device, t0, &out, d);
        out
    }

    /// Records the call that began at `t0` and ended now with `out`.
    fn finish<T>(
        &mut self,
        op: CallOp,
        device: Option<Address>,
        t0: Duration,
        out: &Result<T>,
        d: Details<'_>,
    ) {
        let t1 = self.inner.now();
        self.record(op, device, (t0, t1), out.as_ref().err(), d);
    }

    /// Records one call from `span.0` to `span.1` that failed with `error` (or
    /// succeeded: `None`).
    fn record(
        &mut self,
        op: CallOp,
        device: Option<Address>,
        span: (Duration, Duration),
        error: Option<&Error>,
        d: Details<'_>,
    ) {
        let (t0, t1) = span;
        let (mut st, error, message, count) = match error {
            None => (status::CMPL, None, Cow::Borrowed(""), d.count),
            Some(e) => {
                let mut st = status::ERR;
                if matches!(e.kind(), ErrorKind::Timeout | ErrorKind::CommandTimeout) {
                    st |= status::TIMO;
                }
                let count = e.transferred().map_or(d.count, |n| n as u64);
                (st, Some(e.kind()), Cow::Owned(e.to_string()), count)
            }
        };
        st |= d.status;
        let record = Call {
            board: self.board,
            op,
            device: device.map(|a| a.primary.get()),
            secondary: device.and_then(|a| a.secondary).map(|s| s.get()),
            status: st,
            error,
            eoi: d.eoi,
            start_ns: ns(t0),
            duration_ns: ns(t1.saturating_sub(t0)),
            count,
            requested: d.requested,
            data: Cow::Borrowed(d.data),
            message,
        };
        self.sink.record(&Record::Call(record));
    }
}

impl<B: Backend> TracedBackend<B> {
    /// Records the first half of a combined call (`command_then_write`,
    /// `command_then_read`), which the inner backend made as one call from `t0` to now.
    ///
    /// # How a combined call is recorded
    ///
    /// The inner backend does both halves in one call (the simulator under one lock, a
    /// VXI-11 client with both RPCs sent before it waits), so the trace cannot see where
    /// one half ends: it gets two records, both starting when the call began, the first
    /// half with duration 0 and the second with the whole call's duration. When the
    /// call fails with an error only the commands can give (command timeout, not
    /// controller-in-charge, unsupported), the commands record carries the error and
    /// the whole duration, and no second record follows (the second half never
    /// started). Returns when the call ended, for the second half's record, or `None`
    /// when there is none.
    fn commands_half(
        &mut self,
        t0: Duration,
        commands: &[u8],
        error: Option<&Error>,
    ) -> Option<Duration> {
        let t1 = self.inner.now();
        let failed = error.filter(|e| only_commands_give(e));
        let d = Details {
            count: if failed.is_none() {
                commands.len() as u64
            } else {
                0
            },
            requested: commands.len() as u64,
            data: commands,
            ..Details::default()
        };
        let end = if failed.is_some() { t1 } else { t0 };
        self.record(CallOp::Command, None, (t0, end), failed, d);
        failed.is_none().then_some(t1)
    }
}

/// An error only the commands of a combined call give (the transfer after them never
/// started).
fn only_commands_give(e: &Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::CommandTimeout | ErrorKind::NotControllerInCharge | ErrorKind::Unsupported
    )
}

/// What a call's record says beyond its result.
#[derive(Default)]
struct Details<'a> {
    count: u64,
    requested: u64,
    eoi: bool,
    status: u16,
    data: &'a [u8],
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A timeout as the trace records it: in ns, [`Timeout::Never`] as `u64::MAX`.
fn timeout_ns(t: Timeout) -> u64 {
    t.duration().map_or(u64::MAX, ns)
}

fn read_details<'a>(r: &Result<ReadStatus>, buf: &'a [u8]) -> Details<'a> {
    read_half_details(
        r.as_ref()
            .map(|s| *s)
            .map_err(|e| e.transferred().unwrap_or(0)),
        buf,
    )
}

/// A read's details: its status, or the count it moved before it failed.
fn read_half_details(r: std::result::Result<ReadStatus, usize>, buf: &[u8]) -> Details<'_> {
    let (n, end) = match r {
        Ok(s) => (s.count, s.is_end()),
        Err(n) => (n, false),
    };
    Details {
        count: n as u64,
        requested: buf.len() as u64,
        status: if end { status::END } else { 0 },
        data: &buf[..n.min(buf.len())],
        ..Details::default()
    }
}

fn flag(b: &Result<bool>) -> Details<'static> {
    let on = matches!(b, Ok(true));
    Details {
        count: u64::from(on),
        ..Details::default()
    }
}

fn none<T>(_: &Result<T>) -> Details<'static> {
    Details::default()
}

impl<B: Backend> Backend for TracedBackend<B> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn board_address(&self) -> PrimaryAddress {
        self.inner.board_address()
    }

    fn command(&mut self, bytes: &[u8]) -> Result<()> {
        self.traced(
            CallOp::Command,
            None,
            |b| b.command(bytes),
            |r| Details {
                count: if r.is_ok() { bytes.len() as u64 } else { 0 },
                requested: bytes.len() as u64,
                data: bytes,
                ..Details::default()
            },
        )
    }

    fn write(&mut self, data: &[u8], eoi: bool) -> Result<usize> {
        self.traced(
            CallOp::Write,
            None,
            |b| b.write(data, eoi),
            |r| write_details(r, data, eoi),
        )
    }

    fn read(&mut self, buf: &mut [u8], eos: Option<Eos>) -> Result<ReadStatus> {
        let t0 = self.inner.now();
        let r = self.inner.read(buf, eos);
        let d = read_details(&r, buf);
        self.finish(CallOp::Read, None, t0, &r, d);
        r
    }

    /// One call to the inner backend, as untraced; recorded as its two halves (see
    /// `commands_half`).
    fn command_then_write(&mut self, commands: &[u8], data: &[u8], eoi: bool) -> Result<usize> {
        let t0 = self.inner.now();
        let out = self.inner.command_then_write(commands, data, eoi);
        if let Some(t1) = self.commands_half(t0, commands, out.as_ref().err()) {
            let d = write_details(&out, data, eoi);
            self.record(CallOp::Write, None, (t0, t1), out.as_ref().err(), d);
        }
        out
    }

    /// One call to the inner backend, as untraced; recorded as its two halves (see
    /// `commands_half`).
    fn command_then_read(
        &mut self,
        commands: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        let t0 = self.inner.now();
        let out = self.inner.command_then_read(commands, buf, eos);
        if let Some(t1) = self.commands_half(t0, commands, out.as_ref().err()) {
            let d = read_details(&out, buf);
            self.record(CallOp::Read, None, (t0, t1), out.as_ref().err(), d);
        }
        out
    }

    /// A query: made as its two halves on the inner backend, each one call as
    /// untraced ([`Backend::command_then_write`], [`Backend::command_then_read`]), so
    /// that the trace shows when the write ended and the read began. The halves follow
    /// each other on the bus whether or not they are one call (unlike a device-level
    /// query's, which overlap), so this puts the same bytes on the wire at the same
    /// times: the one thing a tracer does not forward as the one call it is. The
    /// read half's error is the write half's when only commands give it (command
    /// timeout, not controller-in-charge, unsupported): nothing was read.
    fn command_write_command_read(
        &mut self,
        listen: &[u8],
        data: &[u8],
        talk: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        self.command_then_write(listen, data, true)
            .map_err(WriteReadError::Write)?;
        self.command_then_read(talk, buf, eos).map_err(|e| {
            if only_commands_give(&e) {
                WriteReadError::Write(e)
            } else {
                WriteReadError::Read(e)
            }
        })
    }

    fn interface_clear(&mut self) -> Result<()> {
        self.traced(CallOp::InterfaceClear, None, |b| b.interface_clear(), none)
    }

    fn remote_enable(&mut self, on: bool) -> Result<()> {
        self.traced(
            CallOp::RemoteEnable,
            None,
            |b| b.remote_enable(on),
            |_| Details {
                requested: u64::from(on),
                ..Details::default()
            },
        )
    }

    fn set_timeout(&mut self, timeout: Timeout) -> Result<Timeout> {
        self.traced(
            CallOp::SetTimeout,
            None,
            |b| b.set_timeout(timeout),
            |r| Details {
                requested: timeout_ns(timeout),
                count: r.as_ref().map_or(0, |d| timeout_ns(*d)),
                ..Details::default()
            },
        )
    }

    fn timeout(&self) -> Timeout {
        self.inner.timeout()
    }

    fn now(&self) -> Duration {
        self.inner.now()
    }

    fn tuning(&mut self) -> Option<&mut dyn crate::backend::tuning::BoardTuning> {
        self.inner.tuning()
    }

    fn serial_poll(&mut self, device: Address) -> Result<StatusByte> {
        let t0 = self.inner.now();
        let out = self.inner.serial_poll(device);
        let byte = [out.as_ref().map_or(0, |s| s.0)];
        let d = Details {
            count: u64::from(out.is_ok()),
            requested: 1,
            data: if out.is_ok() { &byte } else { &[] },
            ..Details::default()
        };
        self.finish(CallOp::SerialPoll, Some(device), t0, &out, d);
        out
    }

    fn wire_stats(&self) -> Option<WireStats> {
        self.inner.wire_stats()
    }

    fn srq(&mut self) -> Result<bool> {
        self.traced(CallOp::Srq, None, |b| b.srq(), flag)
    }

    fn wait_srq(&mut self, timeout: Timeout) -> Result<bool> {
        self.traced(CallOp::WaitSrq, None, |b| b.wait_srq(timeout), srq_details)
    }

    // The capabilities the inner backend has, each wrapped to be traced.
    fn device_level(&mut self) -> Option<&mut dyn DeviceLevel> {
        self.inner.device_level()?;
        Some(self)
    }

    fn board_control(&mut self) -> Option<&mut dyn BoardControl> {
        self.inner.board_control()?;
        Some(self)
    }

    fn virtual_time(&mut self) -> Option<&mut dyn VirtualTime> {
        self.inner.virtual_time()?;
        Some(self)
    }
}

/// The inner backend's device-level operations (present: [`TracedBackend`] offers its
/// own only when the inner backend has them).
fn device_ops<B: Backend>(b: &mut B) -> Result<&mut dyn DeviceLevel> {
    b.device_level()
        .ok_or_else(|| Error::unsupported("device-level operations", "the traced backend"))
}

impl<B: Backend> DeviceLevel for TracedBackend<B> {
    fn device_write(&mut self, device: Address, data: &[u8], eoi: bool) -> Result<usize> {
        self.traced(
            CallOp::DeviceWrite,
            Some(device),
            |b| device_ops(b)?.device_write(device, data, eoi),
            |r| write_details(r, data, eoi),
        )
    }

    fn device_read(
        &mut self,
        device: Address,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        let t0 = self.inner.now();
        let r = device_ops(&mut self.inner).and_then(|d| d.device_read(device, buf, eos));
        let d = read_details(&r, buf);
        self.finish(CallOp::DeviceRead, Some(device), t0, &r, d);
        r
    }

    /// One call to the inner backend, as untraced; recorded as its two halves, a
    /// `device_write` and a `device_read`, both starting when the call began: the
    /// write with duration 0 and the read with the whole call's (the halves overlap
    /// on the wire). A failed write half is recorded alone, with the whole duration.
    fn device_write_read(
        &mut self,
        device: Address,
        data: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        let t0 = self.inner.now();
        let out = match device_ops(&mut self.inner) {
            Ok(d) => d.device_write_read(device, data, buf, eos),
            Err(e) => Err(WriteReadError::Write(e)),
        };
        let t1 = self.inner.now();
        let dev = Some(device);
        match &out {
            Err(WriteReadError::Write(e)) => {
                let d = write_half_details(e.transferred().unwrap_or(0), data, true);
                self.record(CallOp::DeviceWrite, dev, (t0, t1), Some(e), d);
            }
            Ok(_) | Err(WriteReadError::Read(_)) => {
                let d = write_half_details(data.len(), data, true);
                self.record(CallOp::DeviceWrite, dev, (t0, t0), None, d);
                let (read, error) = match &out {
                    Ok(st) => (Ok(*st), None),
                    Err(WriteReadError::Read(e)) | Err(WriteReadError::Write(e)) => {
                        (Err(e.transferred().unwrap_or(0)), Some(e))
                    }
                };
                let d = read_half_details(read, buf);
                self.record(CallOp::DeviceRead, dev, (t0, t1), error, d);
            }
        }
        out
    }

    fn device_clear(&mut self, device: Address) -> Result<()> {
        self.traced(
            CallOp::DeviceClear,
            Some(device),
            |b| device_ops(b)?.device_clear(device),
            none,
        )
    }

    fn device_trigger(&mut self, device: Address) -> Result<()> {
        self.traced(
            CallOp::DeviceTrigger,
            Some(device),
            |b| device_ops(b)?.device_trigger(device),
            none,
        )
    }

    fn device_remote(&mut self, device: Address) -> Result<()> {
        self.traced(
            CallOp::DeviceRemote,
            Some(device),
            |b| device_ops(b)?.device_remote(device),
            none,
        )
    }

    fn device_local(&mut self, device: Address) -> Result<()> {
        self.traced(
            CallOp::DeviceLocal,
            Some(device),
            |b| device_ops(b)?.device_local(device),
            none,
        )
    }
}

impl<B: Backend> BoardControl for TracedBackend<B> {
    fn parallel_poll(&mut self) -> Result<u8> {
        self.traced(
            CallOp::ParallelPoll,
            None,
            |b| b.parallel_poll(),
            |r| Details {
                count: r.as_ref().map_or(0, |v| u64::from(*v)),
                ..Details::default()
            },
        )
    }

    fn lines(&mut self) -> Result<BusLines> {
        self.inner.lines()
    }

    fn board_status(&mut self) -> Result<BoardStatus> {
        self.inner.board_status()
    }

    fn go_to_standby(&mut self) -> Result<()> {
        self.traced(CallOp::GoToStandby, None, |b| b.go_to_standby(), none)
    }

    fn take_control(&mut self) -> Result<()> {
        self.traced(CallOp::TakeControl, None, |b| b.take_control(), none)
    }

    fn listener_present(&mut self, address: Address) -> Result<bool> {
        self.traced(
            CallOp::ListenerPresent,
            Some(address),
            |b| b.listener_present(address),
            flag,
        )
    }
}

impl<B: Backend> VirtualTime for TracedBackend<B> {
    fn clock_kind(&mut self) -> ClockKind {
        self.inner.clock_kind()
    }

    fn delay(&mut self, duration: Duration) {
        self.inner.delay(duration);
    }

    fn modelled_host_cpu(&mut self) -> Option<Duration> {
        self.inner.modelled_host_cpu()
    }

    fn waits_in_wall_time(&mut self) -> bool {
        self.inner.waits_in_wall_time()
    }

    fn wait_srq_step(&mut self, deadline: Duration) -> Result<Option<bool>> {
        self.traced(
            CallOp::WaitSrq,
            None,
            |b| b.wait_srq_step(deadline),
            |r| {
                let on = matches!(r, Ok(Some(true)));
                Details {
                    count: u64::from(on),
                    status: if on { status::SRQI } else { 0 },
                    ..Details::default()
                }
            },
        )
    }

    fn turns(&mut self) -> Option<std::sync::Arc<dyn Turns>> {
        self.inner.turns()
    }
}

fn write_details<'a>(r: &Result<usize>, data: &'a [u8], eoi: bool) -> Details<'a> {
    let n = match r {
        Ok(n) => *n,
        Err(e) => e.transferred().unwrap_or(0),
    };
    write_half_details(n, data, eoi)
}

/// A write's details, `n` bytes of `data` sent.
fn write_half_details(n: usize, data: &[u8], eoi: bool) -> Details<'_> {
    Details {
        count: n as u64,
        requested: data.len() as u64,
        eoi,
        data: &data[..n.min(data.len())],
        ..Details::default()
    }
}

fn srq_details(r: &Result<bool>) -> Details<'static> {
    let on = matches!(r, Ok(true));
    Details {
        count: u64::from(on),
        status: if on { status::SRQI } else { 0 },
        ..Details::default()
    }
}
