//! The requests that move bytes or wait: `IBRD`, `IBWRT`, `IBCMD` (in pieces of the
//! driver's buffer, the count of what moved reported even after an error), `IBRSP`
//! (from the device's queue, else a serial poll on the bus), `IBRPP`, `IBWAIT` (the
//! status and its masks, the timeout in wall time), and automatic serial polling.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gpib_sim::abi::{RQS, SRQI, TIMO};
use gpib_sim::backend::BoardControl as _;
use gpib_sim::Backend as _;

use crate::abi::*;
use crate::board::{push_status_byte, tid, Board, State};
use crate::driver;
use crate::file::{Descriptor, OpenFile};
use crate::user::{read_bytes, read_in, write_bytes, write_out, Errno};

/// Serial polls made by automatic polling wait this long for each byte.
const AUTOPOLL_USEC: u32 = 1_000_000;

/// Marks the descriptor's I/O as in progress until dropped.
struct InProgress<'a>(&'a Descriptor, bool);

impl Drop for InProgress<'_> {
    fn drop(&mut self) {
        if self.1 {
            self.0.set_io(false);
        }
    }
}

fn transfer(file: &Arc<OpenFile>, arg: usize) -> Result<(ReadWrite, Arc<Descriptor>), Errno> {
    let cmd: ReadWrite = read_in(arg)?;
    if cmd.completed_transfer_count > cmd.requested_transfer_count {
        return Err(libc::EINVAL);
    }
    let desc = file.descriptor(i64::from(cmd.handle))?;
    Ok((cmd, desc))
}

/// `IBRD`.
pub fn read(file: &Arc<OpenFile>, board: &Board, arg: usize) -> Result<i32, Errno> {
    let (mut cmd, desc) = transfer(file, arg)?;
    let (mut sim, master, eos, usec) = {
        let st = board.lock();
        (st.sim()?, st.p.master, st.read_eos(), st.usec_timeout)
    };
    let mut at = cmd
        .buffer_ptr
        .saturating_add(u64::from(cmd.completed_transfer_count));
    let mut remain = (cmd.requested_transfer_count - cmd.completed_transfer_count) as usize;
    // The whole buffer must be there before anything is read from the bus (no byte is
    // taken from the device into a buffer that cannot hold it).
    if remain > 0 {
        crate::user::probe(at, remain)?;
    }
    desc.set_io(true);
    let _io = InProgress(&desc, true);
    let mut end = false;
    let mut result = Ok(());
    let mut fault = None;
    let mut buf = vec![0u8; remain.min(BUFFER_LENGTH)];
    while remain > 0 && !end {
        let n = remain.min(BUFFER_LENGTH);
        let (got, e, r) = driver::read(&mut sim, master, &mut buf[..n], eos, usec);
        end = e;
        result = r;
        if got == 0 {
            break;
        }
        if let Err(f) = write_bytes(at, &buf[..got]) {
            fault = Some(f);
            break;
        }
        remain -= got;
        at += got as u64;
        if result.is_err() {
            break;
        }
    }
    cmd.completed_transfer_count = cmd.requested_transfer_count - remain as u32;
    cmd.end = i32::from(end);
    // An error after every byte asked for, or after END, is not reported.
    if remain == 0 || end {
        result = Ok(());
    }
    if let Some(f) = fault {
        return Err(f);
    }
    write_out(arg, &cmd)?;
    result.map(|()| 0)
}

/// `IBWRT`.
pub fn write(file: &Arc<OpenFile>, board: &Board, arg: usize) -> Result<i32, Errno> {
    let (mut cmd, desc) = transfer(file, arg)?;
    let (mut sim, master, usec) = {
        let st = board.lock();
        (st.sim()?, st.p.master, st.usec_timeout)
    };
    let mut at = cmd
        .buffer_ptr
        .saturating_add(u64::from(cmd.completed_transfer_count));
    let mut remain = (cmd.requested_transfer_count - cmd.completed_transfer_count) as usize;
    // Each piece is copied in before it goes out: a buffer shorter than its count fails
    // (EFAULT) at the piece that runs past it, as the kernel's copy_from_user does.
    desc.set_io(true);
    let _io = InProgress(&desc, true);
    let mut result = Ok(());
    let mut buf = vec![0u8; remain.min(BUFFER_LENGTH)];
    while remain > 0 {
        let n = remain.min(BUFFER_LENGTH);
        let eoi = remain <= BUFFER_LENGTH && cmd.end != 0;
        if let Err(f) = read_bytes(at, &mut buf[..n]) {
            result = Err(f);
            break;
        }
        let (sent, r) = driver::write(&mut sim, master, &buf[..n], eoi, usec);
        remain -= sent;
        at += sent as u64;
        result = r;
        if result.is_err() {
            break;
        }
        if sent == 0 {
            result = Err(libc::EIO);
            break;
        }
    }
    cmd.completed_transfer_count = cmd.requested_transfer_count - remain as u32;
    if remain == 0 {
        result = Ok(());
    }
    write_out(arg, &cmd)?;
    result.map(|()| 0)
}

/// `IBCMD`: `end` set means the command is the addressing of an asynchronous transfer,
/// and the descriptor stays "in progress" (CMPL clear) after it.
pub fn command(file: &Arc<OpenFile>, board: &Board, arg: usize) -> Result<i32, Errno> {
    let (mut cmd, desc) = transfer(file, arg)?;
    let keep_in_progress = cmd.end != 0;
    cmd.end = 0;
    let (mut sim, usec) = {
        let st = board.lock();
        (st.sim()?, st.usec_timeout)
    };
    let mut at = cmd
        .buffer_ptr
        .saturating_add(u64::from(cmd.completed_transfer_count));
    let mut remain = (cmd.requested_transfer_count - cmd.completed_transfer_count) as usize;
    desc.set_io(true);
    let mut result;
    let mut fault = false;
    let mut buf = vec![0u8; remain.min(BUFFER_LENGTH)];
    // The driver is called at least once, even for no bytes (it takes control).
    loop {
        let n = remain.min(BUFFER_LENGTH);
        if let Err(f) = read_bytes(at, &mut buf[..n]) {
            result = Err(f);
            fault = true;
            break;
        }
        let (sent, r) = driver::command(&mut sim, &buf[..n], usec);
        remain -= sent;
        at += sent as u64;
        result = r;
        if result.is_err() {
            desc.set_io(false);
            break;
        }
        if remain == 0 {
            break;
        }
    }
    cmd.completed_transfer_count = cmd.requested_transfer_count - remain as u32;
    if !fault {
        if let Err(f) = write_out(arg, &cmd) {
            desc.set_io(false);
            return Err(f);
        }
    }
    if !keep_in_progress || fault {
        desc.set_io(false);
    }
    result.map(|()| 0)
}

/// `IBRPP`: take control, then a parallel poll.
pub fn parallel_poll(board: &Board, arg: usize) -> Result<i32, Errno> {
    let (mut sim, usec) = {
        let st = board.lock();
        (st.sim()?, st.usec_timeout)
    };
    driver::set_timeout(&mut sim, usec);
    driver::take_control(&mut sim).map_err(|_| libc::EPERM)?;
    let byte = sim.parallel_poll().map_err(|_| libc::EPERM)?;
    write_out(arg, &byte).map(|()| 0)
}

/// One serial poll byte from `pad`/`sad` with the poll already enabled: take control,
/// its talk address, standby, one byte.
fn poll_byte(
    sim: &mut gpib_sim::sim::SimBoard,
    pad: u32,
    sad: i32,
    usec: u32,
) -> Result<u8, Errno> {
    let mut talk = vec![mta(pad)];
    if sad >= 0 {
        talk.push(msa(sad));
    }
    let (sent, r) = driver::command(sim, &talk, usec);
    r?;
    if sent < talk.len() {
        return Err(libc::EIO);
    }
    let _ = driver::go_to_standby(sim);
    let mut b = [0u8; 1];
    // The board went to standby above: the byte is read as it comes.
    let (got, _, r) = driver::read(sim, false, &mut b, None, usec);
    match r {
        Err(libc::ETIMEDOUT) => Err(libc::ETIMEDOUT),
        Err(_) => Err(libc::EIO),
        Ok(()) if got < 1 => Err(libc::EIO),
        Ok(()) => Ok(b[0]),
    }
}

fn poll_setup(
    sim: &mut gpib_sim::sim::SimBoard,
    st_pad: u32,
    st_sad: i32,
    usec: u32,
) -> Result<(), Errno> {
    let mut setup = vec![UNL, mla(st_pad)];
    if st_sad >= 0 {
        setup.push(msa(st_sad));
    }
    setup.push(SPE);
    let (sent, r) = driver::command(sim, &setup, usec);
    r?;
    if sent < setup.len() {
        return Err(libc::EIO);
    }
    Ok(())
}

fn poll_cleanup(sim: &mut gpib_sim::sim::SimBoard, usec: u32) -> Result<(), Errno> {
    let (sent, r) = driver::command(sim, &[SPD, UNT], usec);
    r?;
    if sent < 2 {
        return Err(libc::EIO);
    }
    Ok(())
}

/// `IBRSP`: a status byte automatic polling kept for the device, else a serial poll
/// (`dvrsp`): CIC needed (-1, EPERM), addresses up to 30 (-1), ETIMEDOUT if it timed
/// out, EIO if the bus failed.
pub fn serial_poll(board: &Board, arg: usize) -> Result<i32, Errno> {
    let mut cmd: SerialPoll = read_in(arg)?;
    let mut st = board.lock();
    if let Some(q) = st.queue(cmd.pad, cmd.sad) {
        if !q.bytes.is_empty() {
            if q.dropped {
                q.dropped = false;
                return Err(libc::EPIPE);
            }
            cmd.status_byte = q.bytes.pop_front().unwrap_or(0);
            drop(st);
            return write_out(arg, &cmd).map(|()| 0);
        }
    }
    let mut sim = st.sim()?;
    let (pad, sad, usec) = (st.p.pad, st.p.sad, st.usec_timeout);
    drop(st);
    if driver::board_bits(&mut sim) & gpib_sim::abi::CIC == 0 {
        return Err(libc::EPERM);
    }
    if cmd.pad > 30 || cmd.sad > 30 {
        return Err(libc::EPERM);
    }
    poll_setup(&mut sim, pad, sad, usec)?;
    let byte = poll_byte(&mut sim, cmd.pad, cmd.sad, usec);
    let cleanup = poll_cleanup(&mut sim, usec);
    cmd.status_byte = byte?;
    cleanup?;
    write_out(arg, &cmd).map(|()| 0)
}

/// `IBSPOLL_BYTES`: how many status bytes wait for a device.
pub fn spoll_bytes(board: &Board, arg: usize) -> Result<i32, Errno> {
    let mut cmd: SpollBytes = read_in(arg)?;
    autopoll(board);
    let mut st = board.lock();
    cmd.num_bytes = st
        .queue(cmd.pad, cmd.sad)
        .map_or(0, |q| q.bytes.len() as u32);
    drop(st);
    write_out(arg, &cmd).map(|()| 0)
}

/// Automatic serial polling, as the kernel's polling thread does it when SRQ is
/// asserted, the board is system controller and a file asked for it: every open
/// device polled once under the user lock, the bytes with RQS queued. A poll that
/// finds nobody requesting service marks SRQ stuck (no more polling until a device is
/// opened). The thread runs when the lock is free; here it runs then too, at the
/// moment a status is asked for.
pub fn autopoll(board: &Board) {
    let me = tid();
    let (mut sim, pad, sad, devices) = {
        let st = board.lock();
        if !st.p.master || st.autospollers == 0 || st.stuck_srq {
            return;
        }
        let Some(sim) = st.sim.clone() else { return };
        let mut sim = sim;
        if !driver::srq(&mut sim) {
            return;
        }
        if st.devices.is_empty() {
            return;
        }
        let devices: Vec<(u32, i32)> = st.devices.iter().map(|d| (d.pad, d.sad)).collect();
        (sim, st.p.pad, st.p.sad, devices)
    };
    if !board.user.try_lock(me) {
        return;
    }
    let mut found = 0;
    let mut failed = poll_setup(&mut sim, pad, sad, AUTOPOLL_USEC).is_err();
    if !failed {
        for (dpad, dsad) in devices {
            let Ok(byte) = poll_byte(&mut sim, dpad, dsad, AUTOPOLL_USEC) else {
                continue;
            };
            if byte & RQS_BIT != 0 {
                let mut st = board.lock();
                if let Some(q) = st.queue(dpad, dsad) {
                    push_status_byte(q, byte);
                    found += 1;
                }
            }
        }
        failed = poll_cleanup(&mut sim, AUTOPOLL_USEC).is_err();
    }
    let _ = board.user.unlock(me);
    if failed || found == 0 {
        board.lock().stuck_srq = true;
    }
}

fn status_of(st: &mut State, desc: &Descriptor, clear: i32, set: i32, with_desc: bool) -> i32 {
    let queue = (!desc.is_board).then(|| desc.address());
    st.status(queue, with_desc.then_some((desc, clear, set)))
}

/// `IBWAIT`: with no mask, the status now (after `clear`/`set` of CMPL); else waits
/// until a bit of the mask is set, TIMO once `usec_timeout` (wall time) has passed,
/// then clears the reported bits of `clear_mask`.
pub fn wait(file: &Arc<OpenFile>, board: &Board, arg: usize) -> Result<i32, Errno> {
    let mut cmd: Wait = read_in(arg)?;
    let desc = file.descriptor(i64::from(cmd.handle))?;
    if cmd.wait_mask == 0 {
        let mut st = board.lock();
        cmd.ibsta = status_of(&mut st, &desc, cmd.clear_mask, cmd.set_mask, true);
        drop(st);
        return write_out(arg, &cmd).map(|()| 0);
    }
    let start = Instant::now();
    let limit = (cmd.usec_timeout > 0).then(|| Duration::from_micros(u64::from(cmd.usec_timeout)));
    let waits_for_srq = cmd.wait_mask & (SRQI | RQS) != 0;
    // On a simulator in virtual time (GPIB_SIM_REALTIME=0) the bus's clock follows the
    // wall time this wait takes, no more: a wait of 10 ms is 10 ms for the instruments.
    let virtual_start = board.lock().sim.as_mut().and_then(|sim| {
        let virtual_clock = !sim.virtual_time().is_some_and(|v| v.waits_in_wall_time());
        virtual_clock.then(|| sim.now())
    });
    let status = loop {
        if waits_for_srq {
            autopoll(board);
        }
        let timed_out = limit.is_some_and(|l| start.elapsed() >= l);
        let mut s = status_of(&mut board.lock(), &desc, 0, 0, true);
        if timed_out {
            s |= TIMO;
        } else {
            s &= !TIMO;
        }
        if s & cmd.wait_mask != 0 {
            break s;
        }
        let left = limit.map_or(Duration::from_millis(10), |l| {
            l.saturating_sub(start.elapsed())
        });
        let slice = left.min(Duration::from_millis(10));
        let sim = board.lock().sim.clone();
        match sim {
            Some(mut sim) if virtual_start.is_some() => {
                // Virtual time: step the bus's clock to where the wall clock is.
                let waited = limit.map_or(start.elapsed(), |l| start.elapsed().min(l));
                let target = virtual_start.unwrap_or_default().saturating_add(waited);
                let behind = target.saturating_sub(sim.now());
                if !behind.is_zero() {
                    if waits_for_srq {
                        let _ = sim.wait_srq(gpib_sim::Timeout::After(behind));
                    } else if let Some(v) = sim.virtual_time() {
                        v.delay(behind);
                    }
                }
                if !waits_for_srq || !driver::srq(&mut sim) {
                    std::thread::sleep(slice.min(Duration::from_millis(1)));
                }
            }
            Some(mut sim) if waits_for_srq => {
                // The simulated instruments move on while the caller waits: an event
                // they have due within the slice (a measurement ending) happens.
                let before = Instant::now();
                let _ = sim.wait_srq(gpib_sim::Timeout::After(slice));
                if before.elapsed() < slice / 2 && !driver::srq(&mut sim) {
                    std::thread::sleep(slice.min(Duration::from_millis(1)));
                }
            }
            _ => std::thread::sleep(slice.min(Duration::from_millis(1))),
        }
    };
    cmd.ibsta = status;
    if status & cmd.clear_mask != 0 || cmd.set_mask != 0 {
        let mut st = board.lock();
        let _ = status_of(&mut st, &desc, status & cmd.clear_mask, cmd.set_mask, false);
    }
    write_out(arg, &cmd).map(|()| 0)
}
