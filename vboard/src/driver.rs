//! The hardware under the kernel layer: what linux-gpib's board drivers do for the
//! board-independent code (`interface->command`, `read`, `write`, `take_control`,
//! `line_status`...), done on a board of the simulated bus. Errors come back as the
//! errno a driver gives.

use gpib_sim::backend::BoardControl as _;
use gpib_sim::sim::SimBoard;
use gpib_sim::{Backend, Eos, ErrorKind, ReadStatus, Timeout};

use crate::user::Errno;

/// What an operation was, for its errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Command bytes (ATN asserted).
    Command,
    /// Data bytes out.
    Write,
    /// Data bytes in.
    Read,
}

/// The errno a driver reports for a simulator error: a handshake that did not finish
/// is `ETIMEDOUT`; command bytes nobody accepts are `ENOTCONN` and data nobody listens
/// to `ECOMM` (libgpib turns both into ENOL); a board not addressed to take part in a
/// transfer waits for a handshake that never comes, so it times out too.
pub fn errno_of(e: &gpib_sim::Error, op: Op) -> Errno {
    match e.kind() {
        ErrorKind::Timeout | ErrorKind::CommandTimeout | ErrorKind::NotAddressed => libc::ETIMEDOUT,
        ErrorKind::NoListener if op == Op::Command => libc::ENOTCONN,
        ErrorKind::NoListener => libc::ECOMM,
        _ => libc::EIO,
    }
}

/// The driver's timeout for the next operation: `usec` of the board's timeout (0:
/// none).
pub fn set_timeout(sim: &mut SimBoard, usec: u32) {
    let t = if usec == 0 {
        Timeout::Never
    } else {
        Timeout::After(std::time::Duration::from_micros(u64::from(usec)))
    };
    if sim.timeout() != t {
        // The simulator's boards take any timeout.
        let _ = sim.set_timeout(t);
    }
}

/// The board's own status bits: CIC, ATN, TACS, LACS (what `update_status` reports).
pub fn board_bits(sim: &mut SimBoard) -> i32 {
    use gpib_sim::abi::{ATN, CIC, LACS, TACS};
    let s = sim.board_status().unwrap_or_default();
    let mut bits = 0;
    if s.controller_in_charge {
        bits |= CIC;
    }
    if s.atn {
        bits |= ATN;
    }
    if s.talker {
        bits |= TACS;
    }
    if s.listener {
        bits |= LACS;
    }
    bits
}

/// The SRQ line.
pub fn srq(sim: &mut SimBoard) -> bool {
    sim.srq().unwrap_or(false)
}

/// `IBLINES`: every line valid, and the ones asserted.
pub fn lines(sim: &mut SimBoard) -> Result<i16, Errno> {
    let l = sim.lines().map_err(|_| libc::EIO)?;
    Ok(gpib_sim::abi::iblines_word(&l))
}

/// `ibcac`: not CIC is an error (-1, EPERM); with ATN already asserted nothing to do;
/// else take control (a synchronous take that cannot work falls back on an
/// asynchronous one, which the simulator's board always does).
pub fn take_control(sim: &mut SimBoard) -> Result<(), Errno> {
    let bits = board_bits(sim);
    if bits & gpib_sim::abi::CIC == 0 {
        return Err(libc::EPERM);
    }
    if bits & gpib_sim::abi::ATN != 0 {
        return Ok(());
    }
    sim.take_control().map_err(|_| libc::EIO)
}

/// `ibgts`: not CIC is an error (-1, EPERM); else release ATN.
pub fn go_to_standby(sim: &mut SimBoard) -> Result<(), Errno> {
    if board_bits(sim) & gpib_sim::abi::CIC == 0 {
        return Err(libc::EPERM);
    }
    sim.go_to_standby().map_err(|_| libc::EIO)
}

/// `ibcmd` of the kernel: CIC required (EIO), take control, send. Returns the bytes
/// sent and the error, if any, after them.
pub fn command(sim: &mut SimBoard, bytes: &[u8], usec: u32) -> (usize, Result<(), Errno>) {
    if board_bits(sim) & gpib_sim::abi::CIC == 0 {
        return (0, Err(libc::EIO));
    }
    set_timeout(sim, usec);
    if let Err(e) = take_control(sim) {
        return (0, Err(e));
    }
    if bytes.is_empty() {
        return (0, Ok(()));
    }
    match sim.command(bytes) {
        Ok(()) => (bytes.len(), Ok(())),
        Err(e) => (
            e.transferred().unwrap_or(0).min(bytes.len()),
            Err(errno_of(&e, Op::Command)),
        ),
    }
}

/// `ibwrt` of the kernel: a system controller goes to standby first, then the bytes go
/// out, EOI with the last if `eoi`.
pub fn write(
    sim: &mut SimBoard,
    master: bool,
    data: &[u8],
    eoi: bool,
    usec: u32,
) -> (usize, Result<(), Errno>) {
    if master {
        if let Err(e) = go_to_standby(sim) {
            return (0, Err(e));
        }
    }
    set_timeout(sim, usec);
    match sim.write(data, eoi) {
        Ok(n) => (n, Ok(())),
        Err(e) => (
            e.transferred().unwrap_or(0).min(data.len()),
            Err(errno_of(&e, Op::Write)),
        ),
    }
}

/// `ibrd` of the kernel: a system controller goes to standby first, then bytes come
/// in until END (EOI, or the EOS byte when reads stop on it) or `buf` is full.
/// Returns the bytes read, whether END came, and the error, if any, after them.
pub fn read(
    sim: &mut SimBoard,
    master: bool,
    buf: &mut [u8],
    eos: Option<Eos>,
    usec: u32,
) -> (usize, bool, Result<(), Errno>) {
    if master {
        if let Err(e) = go_to_standby(sim) {
            return (0, false, Err(e));
        }
    }
    set_timeout(sim, usec);
    match sim.read(buf, eos) {
        Ok(ReadStatus { count, end }) => (count, end != gpib_sim::ReadEnd::BufferFull, Ok(())),
        Err(e) => (
            e.transferred().unwrap_or(0).min(buf.len()),
            false,
            Err(errno_of(&e, Op::Read)),
        ),
    }
}
