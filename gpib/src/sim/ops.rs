//! What one bus operation does on a simulated host: to the addressing state, to the
//! devices, and in virtual time (which resources it takes, for how long).

use std::borrow::Cow;
use std::time::Duration;

use crate::address::Address;
use crate::backend::{Eos, ReadEnd, ReadStatus, WriteReadError};
use crate::error::{Error, Result};
use crate::sim::poller;
use crate::sim::state488::Effect;
use crate::sim::timing::{self, Direction, TransferMode};
use crate::sim::world::{ns, World};
use crate::status::{BoardStatus, BusLines};
use crate::timeout::Timeout;
use crate::trace::format::flags as trace_flags;
use crate::trace::{BusError, Line, LineChange, Record, Transfer};

fn timeout_error(operation: &'static str, timeout: Timeout, transferred: usize) -> Error {
    Error::Timeout {
        operation,
        timeout,
        transferred,
    }
}

/// How long a wait that runs out takes on the simulated clock, ns: the timeout, and no
/// time for [`Timeout::Never`] (a wait for ever for what will not come is reported at
/// once, as [`Error::Timeout`] with no timeout, instead of hanging). Worked out on the
/// paths that time out only.
fn spent_ns(timeout: Timeout) -> u64 {
    timeout.duration().map_or(0, ns)
}

/// Whether waiting `wait_ns` for a device runs out `timeout`: only a wait there is
/// (with nothing to wait for, even a zero timeout lets the operation start).
fn waits_out(timeout: Timeout, wait_ns: u64) -> bool {
    wait_ns > 0 && timeout.duration().is_some_and(|d| wait_ns >= ns(d))
}

/// How a wait for SRQ ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SrqWait {
    /// SRQ is asserted.
    Asserted,
    /// The timeout ran out.
    TimedOut,
    /// Virtual time reached the limit given (another caller's turn comes first).
    Limit,
}

/// What a read's trace record says beyond its bytes.
struct ReadTrace {
    /// When the read was called, the talker was ready, the first byte went and the
    /// read ended, ns.
    t: u64,
    ready: u64,
    first: u64,
    end: u64,
    byte_ns: u64,
    talker: u8,
    t1_ns: u64,
    flags: u8,
}

/// A nanosecond figure of the model as the format's u32 (settling and acceptance
/// times are at most 1 s).
fn clamp32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl World {
    /// Records `e` as the operation's error and returns it.
    fn failed(&mut self, at_ns: u64, board: usize, e: Error) -> Error {
        if self.rec.active() {
            self.rec.emit(&Record::Error(BusError {
                board: board as u16,
                kind: e.kind(),
                at_ns,
                text: Cow::Owned(e.to_string()),
            }));
        }
        e
    }

    /// `e` for an operation refused at `t` before it took the bus: the caller's clock
    /// stands at `t` (where the command before it in the same call ended, if any).
    #[cold]
    fn refused(&mut self, t: u64, e: Error) -> Error {
        self.end_at_ns(t);
        e
    }

    /// A transfer held up from `start` (ns) until `limit` runs out: the bus and the
    /// CPU (which spins through the wait) taken for the timeout, the caller's clock
    /// moved to its end; returns the end.
    #[cold]
    fn held_for_timeout(&mut self, board: usize, start: u64, limit: Timeout) -> u64 {
        let timeout = spent_ns(limit);
        let end = self.occupy_ns(board, start, timeout, self.stretch_ns(timeout), false);
        self.end_at_ns(end);
        end
    }

    /// Traces command bytes sent from `t`: the first byte's cycle at `first`, one
    /// every `byte_ns` (0: none went out), the operation ending at `end`.
    #[inline]
    fn trace_command(
        &mut self,
        board: usize,
        t: u64,
        first: u64,
        byte_ns: u64,
        end: u64,
        bytes: &[u8],
    ) {
        if self.rec.active() {
            self.record_command(board, t, first, byte_ns, end, bytes);
        }
    }

    // Out of line: an unrecorded command's code stays as small as without it.
    #[inline(never)]
    fn record_command(
        &mut self,
        board: usize,
        t: u64,
        first: u64,
        byte_ns: u64,
        end: u64,
        bytes: &[u8],
    ) {
        let b = &self.boards[board];
        // Every present device takes part in the ATN handshake: kept in the board's
        // index, not walked per record.
        let accept = b
            .index
            .slowest_present_accept_ns()
            .unwrap_or(b.timing.accept_ns);
        let mut flags = trace_flags::ATN | trace_flags::BOARD_TALKS;
        if byte_ns == 0 {
            flags |= trace_flags::INCOMPLETE;
        }
        let record = Transfer {
            board: board as u16,
            flags,
            talker: b.address.get(),
            listeners: b.index.present_mask(),
            start_ns: t,
            ready_ns: first,
            first_ns: first,
            byte_ns,
            end_ns: end,
            t1_ns: clamp32(b.timing.t1_ns),
            accept_ns: clamp32(accept),
            bytes: Cow::Borrowed(bytes),
        };
        self.rec.emit(&Record::Transfer(record));
    }

    /// Sends command bytes with ATN.
    pub(crate) fn command(&mut self, board: usize, bytes: &[u8]) -> Result<()> {
        let t = self.begin_ns();
        let end = self.command_from(board, t, bytes)?;
        self.end_at_ns(end);
        Ok(())
    }

    /// Sends command bytes, then data to the addressed listeners: [`World::command`] and
    /// [`World::write`] one after the other, the write starting when the command ends
    /// (the caller's clock is not read back in between).
    pub(crate) fn command_then_write(
        &mut self,
        board: usize,
        commands: &[u8],
        data: &[u8],
        eoi: bool,
    ) -> Result<usize> {
        let t = self.begin_ns();
        let end = self.command_from(board, t, commands)?;
        let t = self.begin_at_ns(end);
        self.write_from(board, t, data, eoi)
    }

    /// A whole query: [`World::command_then_write`], then
    /// [`World::command_then_read_apart`], its result made in the caller's place.
    #[inline(never)]
    pub(crate) fn command_write_command_read(
        &mut self,
        board: usize,
        listen: &[u8],
        data: &[u8],
        talk: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        if let Err(e) = self.command_then_write(board, listen, data, true) {
            return Err(WriteReadError::Write(e));
        }
        self.command_then_read_apart(board, talk, buf, eos)
    }

    /// Sends command bytes, then reads from the addressed talker: [`World::command`]
    /// and [`World::read`] one after the other, as [`World::command_then_write`].
    pub(crate) fn command_then_read(
        &mut self,
        board: usize,
        commands: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        self.command_then_read_apart(board, commands, buf, eos)
            .map_err(WriteReadError::into_error)
    }

    /// [`World::command_then_read`] with its errors apart: the command's as
    /// [`WriteReadError::Write`] (nothing was read), the read's as
    /// [`WriteReadError::Read`].
    pub(crate) fn command_then_read_apart(
        &mut self,
        board: usize,
        commands: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        let t = self.begin_ns();
        let end = self
            .command_from(board, t, commands)
            .map_err(WriteReadError::Write)?;
        let t = self.begin_at_ns(end);
        self.read_from(board, t, buf, eos)
            .map_err(WriteReadError::Read)
    }

    /// [`World::command`] called at `t`: returns when it ended, for the caller's clock
    /// (which a failure has moved already). Out of line, one copy for every caller:
    /// inlined into both of the calls that address and transfer, it ran 7 % slower in
    /// wall time (`sim_speed`) for 2 % fewer instructions.
    #[inline(never)]
    fn command_from(&mut self, board: usize, t: u64, bytes: &[u8]) -> Result<u64> {
        let b = &self.boards[board];
        if !b.any_present() {
            self.trace_command(board, t, t, 0, t, bytes);
            return Err(Error::NoListener { transferred: 0 });
        }
        // In nanoseconds: a few instructions an addition where `Duration` takes tens.
        let start = self.bus_start_ns(board, t);
        let b = &self.boards[board];
        let call_overhead = b.nanos.call_overhead;
        // Every device takes part in the ATN handshake: one holding NRFD holds up the
        // first byte, which goes out after the call's overhead.
        let held = b
            .nrfd_released_at()
            .saturating_sub(start.saturating_add(call_overhead));
        let limit = b.timeout;
        if b.index.nrfd_held_by_fault() || waits_out(limit, held) {
            let end = self.held_for_timeout(board, start, limit);
            self.trace_command(board, t, start, 0, end, bytes);
            return Err(Error::CommandTimeout {
                transferred: 0,
                total: bytes.len(),
            });
        }
        // The first byte goes out once the call is set up and NRFD is released.
        let overhead = call_overhead.saturating_add(held);
        let byte_ns = b.nanos.command_byte;
        let elapsed = overhead.saturating_add(byte_ns.saturating_mul(bytes.len() as u64));
        // Most commands only address (one pass over the bytes); a byte whose effect the
        // devices must see is applied before the bytes after it run.
        let ren = self.boards[board].ren;
        let mut rest = bytes;
        while !rest.is_empty() {
            let (used, effect) = self.boards[board]
                .addressing
                .commands_until_effect(rest, ren);
            if effect != Effect::None {
                self.apply(board, effect, start);
            }
            rest = &rest[used..];
        }
        // Command bytes go out by programmed I/O on every board: the CPU is busy.
        let cpu = self.stretch_ns(elapsed);
        let end = self.occupy_ns(board, start, elapsed, cpu, false);
        if self.rec.active() {
            let first = start.saturating_add(overhead);
            self.record_command(board, t, first, byte_ns.max(1), end, bytes);
        }
        self.note_srq(board, end);
        Ok(end)
    }

    /// What an interface message other than an addressing byte does to the devices.
    /// Out of line: most command bytes only address.
    #[inline(never)]
    fn apply(&mut self, board: usize, effect: Effect, now_ns: u64) {
        if effect == Effect::Listen {
            // A listen address with REN asserted (`commands_until_effect` gives one
            // only then) puts its device in remote.
            let b = &mut self.boards[board];
            let a = b.addressing.listened();
            b.remote_at(a);
        } else {
            self.apply_to_devices(board, effect, Duration::from_nanos(now_ns));
        }
    }

    fn apply_to_devices(&mut self, board: usize, effect: Effect, now: Duration) {
        let b = &mut self.boards[board];
        let listeners: Vec<usize> = b.listeners().collect();
        let mut wakes = Vec::new();
        match effect {
            // Handled by `apply`.
            Effect::None | Effect::Listen => {}
            Effect::Clear { all } => {
                let targets: Vec<usize> = if all {
                    (0..b.devices.len())
                        .filter(|&i| b.devices[i].present())
                        .collect()
                } else {
                    listeners.clone()
                };
                for i in targets {
                    wakes.push((i, b.devices[i].clear(now)));
                    self.timers.cancel_device(board, i);
                }
            }
            Effect::Trigger => {
                for &i in &listeners {
                    wakes.push((i, b.devices[i].call(now, |inst, io| inst.trigger(io))));
                }
            }
            Effect::GoToLocal => {
                for &i in &listeners {
                    let l = b.devices[i].lockout;
                    b.devices[i].set_remote(false, l);
                }
            }
            Effect::LocalLockout => {
                for d in b.devices.iter_mut().filter(|d| d.present()) {
                    let r = d.remote;
                    d.set_remote(r, true);
                }
            }
            Effect::ParallelPollEnable { sense, line } => {
                for &i in &listeners {
                    b.devices[i].ppe = Some((sense, line));
                }
            }
            Effect::ParallelPollDisable => {
                for &i in &listeners {
                    b.devices[i].ppe = None;
                }
            }
            Effect::ParallelPollUnconfigure => {
                for d in &mut b.devices {
                    d.ppe = None;
                }
            }
        }
        for (i, w) in wakes {
            self.schedule(board, i, w);
        }
    }

    /// Sends data to the addressed listeners (EOI with the last byte when `eoi`).
    pub(crate) fn write(&mut self, board: usize, data: &[u8], eoi: bool) -> Result<usize> {
        let t = self.begin_ns();
        self.write_from(board, t, data, eoi)
    }

    /// [`World::write`] called at `t`.
    fn write_from(&mut self, board: usize, t: u64, data: &[u8], eoi: bool) -> Result<usize> {
        let poll_ns = poller::poll_ns(&mut self.boards, board);
        let b = &self.boards[board];
        if !b.addressing.board_talks() {
            let e = Error::NotAddressed(
                "the board is not addressed to talk: address it (MTA) before writing".into(),
            );
            return Err(self.refused(t, e));
        }
        // Each data listener, and whether it is addressed (not only listen-only), in a
        // list kept from one write to the next.
        let mut listeners = std::mem::take(&mut self.listeners_buf);
        b.data_listeners(&mut listeners);
        if listeners.is_empty() {
            self.listeners_buf = listeners;
            let e = self.failed(t, board, Error::NoListener { transferred: 0 });
            return Err(self.refused(t, e));
        }
        let limit = b.timeout;
        // In nanoseconds, as `command`.
        let start = self.bus_start_ns(board, t);
        let b = &self.boards[board];
        if b.index.nrfd_held_by_fault()
            && listeners
                .iter()
                .any(|&(i, _)| b.devices[i].faults().holds_nrfd())
        {
            self.held_for_timeout(board, start, limit);
            return Err(timeout_error("write", limit, 0));
        }
        let (mut ready, mut accept, mut recovery) = (0, 0, 0);
        for &(i, _) in &listeners {
            let d = &b.devices[i];
            ready = ready.max(d.ready_at).max(d.nrfd_until);
            accept = accept.max(d.timing.accept_ns);
            recovery = recovery.max(d.timing.holdoff_recovery_listen_ns);
        }
        let wait = ready.saturating_sub(start);
        let hs = b.handshake_ns(b.timing.t1_ns, accept);
        let per = timing::byte_cost(&b.timing, Direction::Write, hs, poll_ns, recovery);
        let (n, timed_out) =
            timing::bytes_within_ns(&b.nanos, Direction::Write, per, data.len(), wait, limit);
        let (cost_elapsed, cost_cpu) =
            timing::call_cost_ns(&b.timing, &b.nanos, Direction::Write, per, n as u64);
        let dma = b.timing.mode == TransferMode::Dma;
        let end_flag = eoi && !timed_out;
        let deliver_ns = start.saturating_add(wait).saturating_add(cost_elapsed);
        let deliver_at = Duration::from_nanos(deliver_ns);
        let (talker, t1_ns, overhead) = (
            b.address.get(),
            b.timing.t1_ns,
            b.timing.data_call_overhead(Direction::Write),
        );
        let b = &mut self.boards[board];
        b.addressing.data_transfer();
        // Listen-only devices accept the bytes (the handshake waits for them) and keep
        // them to themselves; the addressed listeners' instruments get them.
        for &(i, _) in &listeners {
            b.devices[i].received(deliver_ns, end_flag);
            let until = b.devices[i].nrfd_until;
            b.index.nrfd_held_until(until);
        }
        for &(i, addressed) in &listeners {
            if addressed {
                let b = &mut self.boards[board];
                let w =
                    b.devices[i].call(deliver_at, |inst, io| inst.listen(&data[..n], end_flag, io));
                self.schedule(board, i, w);
            }
        }
        let (elapsed, cpu) = if timed_out {
            // The CPU spins through the wait on a PIO board.
            let timeout = spent_ns(limit);
            (timeout, timeout.min(cost_cpu.saturating_add(wait)))
        } else {
            (wait.saturating_add(cost_elapsed), cost_cpu)
        };
        let cpu = self.stretch_ns(cpu);
        let end = self.occupy_ns(board, start, elapsed, cpu, dma);
        self.end_at_ns(end);
        if self.rec.active() {
            let ready = start.saturating_add(wait);
            let mut flags = trace_flags::BOARD_TALKS;
            if end_flag {
                flags |= trace_flags::END;
            }
            if timed_out {
                flags |= trace_flags::INCOMPLETE;
            }
            let record = Transfer {
                board: board as u16,
                flags,
                talker,
                listeners: self.address_mask(board, listeners.iter().map(|&(i, _)| i)),
                start_ns: t,
                ready_ns: ready,
                first_ns: ready.saturating_add(ns(overhead)),
                byte_ns: per.elapsed_ns,
                end_ns: end,
                t1_ns: clamp32(t1_ns),
                accept_ns: clamp32(accept),
                bytes: Cow::Borrowed(&data[..n]),
            };
            self.rec.emit(&Record::Transfer(record));
        }
        self.listeners_buf = listeners;
        self.note_srq(board, end);
        if timed_out {
            let e = timeout_error("write", limit, n);
            return Err(self.failed(t, board, e));
        }
        Ok(n)
    }

    /// Reads from the addressed talker into `buf`.
    pub(crate) fn read(
        &mut self,
        board: usize,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        let t = self.begin_ns();
        self.read_from(board, t, buf, eos)
    }

    /// [`World::read`] called at `t`.
    fn read_from(
        &mut self,
        board: usize,
        t: u64,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        let poll_ns = poller::poll_ns(&mut self.boards, board);
        let b = &self.boards[board];
        let tmo = b.timeout;
        if !b.addressing.board_listens() {
            let e = Error::NotAddressed(
                "the board is not addressed to listen: address it (MLA) before reading".into(),
            );
            return Err(self.refused(t, e));
        }
        if b.addressing.board_talks() {
            let e = Error::NotAddressed("the board is addressed to talk, not to listen".into());
            return Err(self.refused(t, e));
        }
        let Some(talker) = b.addressing.talker().and_then(|a| b.slot_at(a)) else {
            self.end_at_ns(t.saturating_add(spent_ns(tmo)));
            return Err(self.failed(t, board, timeout_error("read", tmo, 0)));
        };
        if let Some(&other) = b.index.dio_drivers().iter().find(|&&i| i != talker) {
            let detail = format!(
                "device {} drives DIO while device {} is the addressed talker",
                b.devices[other].address, b.devices[talker].address
            );
            let e = Error::BusConflict {
                detail,
                transferred: 0,
            };
            let e = self.failed(t, board, e);
            return Err(self.refused(t, e));
        }
        // In nanoseconds, as `command`.
        let start = self.bus_start_ns(board, t);
        let me_t1 = b.devices[talker].timing.t1_ns;
        let accept = b.slowest_accept_ns(b.timing.accept_ns);
        let hs = b.handshake_ns(me_t1, accept);
        let recovery = b.devices[talker].timing.holdoff_recovery_talk_ns;
        let per = timing::byte_cost(&b.timing, Direction::Read, hs, poll_ns, recovery);
        let dma = b.timing.mode == TransferMode::Dma;
        let overhead = b.nanos.call(Direction::Read);
        let talker_addr = b.devices[talker].address.primary.get();
        self.boards[board].addressing.data_transfer();

        if self.boards[board].addressing.serial_poll() {
            // Serial poll mode: the talker sources its status byte on every handshake
            // for as long as the controller keeps reading (IEEE 488.1's SPAS has no
            // END), with RQS only in the first (the poll answers the request).
            let b = &mut self.boards[board];
            let now = Duration::from_nanos(start);
            let n = buf.len();
            if let Some((first, rest)) = buf.split_first_mut() {
                *first = b.devices[talker].serial_poll(now).0;
                if !rest.is_empty() {
                    rest.fill(b.devices[talker].serial_poll(now).0);
                }
            }
            let (elapsed, cpu) =
                timing::call_cost_ns(&b.timing, &b.nanos, Direction::Read, per, n as u64);
            let cpu = self.stretch_ns(cpu);
            let end = self.occupy_ns(board, start, elapsed, cpu, false);
            self.end_at_ns(end);
            if self.rec.active() {
                self.record_read(
                    board,
                    ReadTrace {
                        t,
                        ready: start,
                        first: start.saturating_add(overhead),
                        end,
                        byte_ns: per.elapsed_ns,
                        talker: talker_addr,
                        t1_ns: me_t1,
                        flags: trace_flags::SERIAL_POLL,
                    },
                    &buf[..n],
                );
            }
            self.note_srq(board, end);
            return Ok(ReadStatus {
                count: n,
                end: ReadEnd::BufferFull,
            });
        }

        // A talker with nothing to say yet may have it once its timers fire (a
        // measurement that ends): the handshake waits for it, within the timeout.
        let mut data_at = start;
        if self.boards[board].devices[talker].output().is_empty() {
            let start = Duration::from_nanos(start);
            let deadline = tmo
                .duration()
                .map_or(Duration::MAX, |l| start.saturating_add(l));
            let mut at_last = start;
            while self.boards[board].devices[talker].output().is_empty() {
                match self.timers.next_due() {
                    Some(at) if at <= deadline => {
                        self.fire_timers(at);
                        at_last = at_last.max(at);
                    }
                    _ => break,
                }
            }
            data_at = ns(at_last);
        }
        let b = &mut self.boards[board];
        let (slot, tim, tim_ns) = (&mut b.devices[talker], &b.timing, &b.nanos);
        let wait = slot.ready_at.max(data_at).saturating_sub(start);
        let silent = slot.faults().never_talks() || slot.output().is_empty();
        if silent {
            if let Some(why) = slot.instrument().diagnosis() {
                self.end_at_ns(start);
                let e = Error::Protocol(format!("device {talker_addr}: {why}"));
                return Err(self.failed(t, board, e));
            }
        }
        if silent || waits_out(tmo, wait) {
            self.end_at_ns(start.saturating_add(spent_ns(tmo)));
            return Err(self.failed(t, board, timeout_error("read", tmo, 0)));
        }
        let avail = slot.output().len();
        let ends = slot.output().ends_message() && !slot.faults().drops_eoi();
        let mut limit = buf.len();
        let mut cut_by_fault = false;
        if let Some(left) = slot.faults().bytes_left(slot.sent_in_message) {
            if left < limit.min(avail) {
                limit = left;
                cut_by_fault = true;
            }
        }
        let (fit, cut_by_time) =
            timing::bytes_within_ns(tim_ns, Direction::Read, per, limit.min(avail), wait, tmo);
        if cut_by_time {
            limit = fit;
        }
        let (n, hit) = slot.copy_out(&mut buf[..limit], eos);
        slot.sent_in_message += n;
        let end = if hit {
            Some(ReadEnd::Eos)
        } else if n == avail && ends {
            Some(ReadEnd::Eoi)
        } else if n == buf.len() && !cut_by_fault && !cut_by_time {
            Some(ReadEnd::BufferFull)
        } else {
            None // the talker stopped sending before an end: time out
        };
        if slot.output().is_empty() {
            slot.sent_in_message = 0;
        }
        let (cost_elapsed, cost_cpu) =
            timing::call_cost_ns(tim, tim_ns, Direction::Read, per, n as u64);
        let (elapsed, cpu) = match end {
            Some(_) => (wait.saturating_add(cost_elapsed), cost_cpu),
            None => {
                let elapsed = match tmo {
                    Timeout::Never => wait.saturating_add(cost_elapsed),
                    Timeout::After(limit) => ns(limit),
                };
                (elapsed, cost_cpu.min(elapsed))
            }
        };
        let cpu = self.stretch_ns(cpu);
        let done = self.occupy_ns(board, start, elapsed, cpu, dma);
        self.end_at_ns(done);
        let ready = start.saturating_add(wait);
        // END in the trace: the talker sent EOI with the last byte read, whether the
        // read stopped on it or on the EOS byte that came with it.
        let flags = match end {
            None => trace_flags::INCOMPLETE,
            Some(_) if n == avail && ends => trace_flags::END,
            Some(_) => 0,
        };
        if self.rec.active() {
            self.record_read(
                board,
                ReadTrace {
                    t,
                    ready,
                    first: ready.saturating_add(overhead),
                    end: done,
                    byte_ns: per.elapsed_ns,
                    talker: talker_addr,
                    t1_ns: me_t1,
                    flags,
                },
                &buf[..n],
            );
        }
        self.note_srq(board, done);
        match end {
            Some(end) => Ok(ReadStatus { count: n, end }),
            None => Err(self.failed(t, board, timeout_error("read", tmo, n))),
        }
    }

    /// Records a data byte transfer from a device to the board (when recording).
    fn record_read(&mut self, board: usize, r: ReadTrace, bytes: &[u8]) {
        let b = &self.boards[board];
        let record = Transfer {
            board: board as u16,
            flags: r.flags,
            talker: r.talker,
            listeners: 1 << b.address.get(),
            start_ns: r.t,
            ready_ns: r.ready,
            first_ns: r.first,
            byte_ns: r.byte_ns,
            end_ns: r.end,
            t1_ns: clamp32(r.t1_ns),
            accept_ns: clamp32(b.timing.accept_ns),
            bytes: Cow::Borrowed(bytes),
        };
        self.rec.emit(&Record::Transfer(record));
    }

    /// Traces a control line change (a pulse from `at` to `end` for IFC).
    fn trace_line(
        &mut self,
        board: usize,
        line: Line,
        asserted: bool,
        at: Duration,
        end: Duration,
    ) {
        if self.rec.active() {
            self.rec.emit(&Record::Line(LineChange {
                board: board as u16,
                line,
                asserted,
                at_ns: ns(at),
                end_ns: ns(end),
            }));
        }
    }

    /// Pulses IFC.
    pub(crate) fn interface_clear(&mut self, board: usize) {
        let t = self.begin();
        self.boards[board].addressing.interface_clear();
        // IFC is asserted for at least 100 µs.
        let start = self.bus_start(board, t);
        let d = Duration::from_micros(100);
        let end = self.occupy(board, start, d, d, false);
        self.end_at(end);
        self.trace_line(board, Line::Ifc, true, start, start.saturating_add(d));
    }

    /// Asserts or releases REN.
    pub(crate) fn remote_enable(&mut self, board: usize, on: bool) {
        let t = self.begin();
        let b = &mut self.boards[board];
        b.ren = on;
        if !on {
            for d in &mut b.devices {
                d.set_remote(false, false);
            }
        }
        let d = Duration::from_micros(1);
        let start = self.bus_start(board, t);
        self.trace_line(board, Line::Ren, on, start, start);
        let end = self.occupy(board, start, d, d, false);
        self.end_at(end);
    }

    /// Waits `d` of virtual time.
    pub(crate) fn delay(&mut self, d: Duration) {
        let t = self.begin();
        let until = t.saturating_add(d);
        self.fire_timers(until);
        self.autopoll(until);
        self.end_at(until);
    }

    /// Waits for SRQ on `board` until `deadline`, firing the timers due on the way, but
    /// not past `limit`.
    pub(crate) fn wait_srq(
        &mut self,
        board: usize,
        deadline: Duration,
        limit: Duration,
    ) -> SrqWait {
        let mut t = self.begin();
        loop {
            if self.srq_line(board, t) {
                self.end_at(t);
                return SrqWait::Asserted;
            }
            let stop = deadline.min(limit);
            match self.timers.next_due() {
                Some(at) if at <= stop => {
                    self.fire_timers(at);
                    t = t.max(at);
                }
                _ if stop == Duration::MAX => {
                    // No timeout, no other caller, no timer: nothing will ever raise
                    // SRQ, and the wait is reported at once instead of hanging.
                    self.end_at(t);
                    return SrqWait::TimedOut;
                }
                _ => {
                    self.end_at(stop.max(t));
                    return if stop == deadline {
                        SrqWait::TimedOut
                    } else {
                        SrqWait::Limit
                    };
                }
            }
        }
    }

    /// Whether a device listens at `a`: UNL, MLA \[MSA\], then sensing NDAC.
    pub(crate) fn listener_present(&mut self, board: usize, a: Address) -> bool {
        let t = self.begin();
        // UNL, MLA [MSA] are command bytes: ATN is asserted.
        self.boards[board].addressing.assert_atn();
        let b = &self.boards[board];
        let present = b.slot_at(a).is_some();
        let d = b
            .timing
            .call_overhead
            .saturating_add(timing::times(b.timing.command_byte, 3));
        let start = self.bus_start(board, t);
        let end = self.occupy(board, start, d, d, false);
        self.end_at(end);
        present
    }

    /// A parallel poll: the DIO byte the configured devices answer with.
    pub(crate) fn parallel_poll(&mut self, board: usize) -> u8 {
        let t = self.begin();
        // The poll is ATN with EOI; the controller stays active (ATN) afterwards.
        self.boards[board].addressing.assert_atn();
        let mut dio = 0u8;
        for d in &mut self.boards[board].devices {
            if let Some((sense, line)) = d.ppe {
                if d.present() && d.status(t).rqs() == sense {
                    dio |= 1 << line;
                }
            }
        }
        let d = self.boards[board]
            .timing
            .call_overhead
            .saturating_add(Duration::from_micros(2));
        let start = self.bus_start(board, t);
        let end = self.occupy(board, start, d, d, false);
        self.end_at(end);
        dio
    }

    /// The bus lines now.
    pub(crate) fn lines(&mut self, board: usize) -> BusLines {
        let t = self.begin();
        let srq = self.srq_line(board, t);
        let b = &self.boards[board];
        BusLines {
            dav: false,
            nrfd: b.index.nrfd_held_by_fault() || b.nrfd_released_at() > ns(t),
            ndac: b.listeners().next().is_some(),
            atn: b.addressing.atn(),
            eoi: false,
            srq,
            ifc: false,
            ren: b.ren,
        }
    }

    /// The board's own interface state.
    pub(crate) fn board_status(&mut self, board: usize) -> BoardStatus {
        let t = self.begin();
        let srq = self.srq_line(board, t);
        let b = &self.boards[board];
        BoardStatus {
            controller_in_charge: true,
            atn: b.addressing.atn(),
            talker: b.addressing.board_talks(),
            listener: b.addressing.board_listens(),
            remote_enable: b.ren,
            srq,
        }
    }
}
