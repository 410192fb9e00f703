//! The exported C functions of `libgpib.so.0`, with linux-gpib's names and signatures
//! (see `include/gpib/ib.h`). Each checks its C arguments, runs one operation of
//! `engine` on the descriptor, and leaves the status in the calling thread's values
//! and the globals. A null pointer or a negative count is EARG, and so is an unknown
//! descriptor (a board index without a board too, as in linux-gpib); a panic inside is caught
//! and reported as EDVR, never unwound into C.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_int, c_long, c_short, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::consts::*;
use crate::crossings::{self, Op};
use crate::engine::{self, decode_addr, decode_list, library, Desc, Fail, Library, Res};
use crate::status::{self, finish, Values};

mod last_call;
// The tests call every entry point as `ffi::NAME`.
#[cfg(test)]
pub use last_call::*;
mod ieee4882;
// The tests call every entry point as `ffi::NAME`.
#[cfg(test)]
pub use ieee4882::*;

/// `Addr4882_t`.
#[allow(non_camel_case_types)]
pub type Addr4882_t = u16;

/// Longest address list read before giving up on a missing NOADDR.
const MAX_LIST: usize = 4096;

/// Runs `f`, turning a panic into EDVR and `fallback`.
fn guard<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => {
            finish(ERR, Some(EDVR), Some(EIO));
            fallback
        }
    }
}

/// The answer to a descriptor that is not open: EARG with no count, as linux-gpib's
/// `ibCheckDescriptor` (lib/ibutil.c:212-219) gives for any descriptor without a
/// configuration, a board index without an interface section included. A configuration
/// that did not load keeps its own answer (ENEB for board indices, EDVR otherwise).
fn unknown_descriptor(lib: &Library, ud: c_int) -> c_int {
    if lib.load_error.is_none() {
        finish(ERR, Some(EARG), None)
    } else if (0..MAX_BOARDS as c_int).contains(&ud) {
        finish(ERR, Some(ENEB), None)
    } else {
        finish(ERR, Some(EDVR), Some(EINVAL))
    }
}

/// A call on a board descriptor whose kernel handle `ibonl(ud, 0)` closed: the
/// kernel knows no such handle (EINVAL), and the status it would report cannot be
/// read, so ibsta is ERR with only the library's own TIMO (the call timed out) and END
/// (of the last transfer) (lib/ibutil.c ibstatus, general_exit_library).
fn closed_handle(timo: bool, end: bool) -> c_int {
    let mut sta = ERR;
    if timo {
        sta |= TIMO;
    }
    if end {
        sta |= END;
    }
    finish(sta, Some(EDVR), Some(EINVAL))
}

/// Which descriptors a call accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Any,
    Board,
    Device,
}

/// Runs `f` on descriptor `ud` (locked for the call: one user per descriptor at a time)
/// and ends the call with its status. `io`: the call fails with EOIP while an
/// asynchronous I/O waits to be resynchronized.
fn call(ud: c_int, want: Want, io: bool, f: impl FnOnce(&Library, &mut Desc) -> Res) -> c_int {
    guard(ERR, || {
        crossings::served();
        let lib = library();
        let Some(slot) = lib.get(ud) else {
            return unknown_descriptor(lib, ud);
        };
        let mut d = slot.lock().unwrap_or_else(|p| p.into_inner());
        if d.handle_closed {
            // What goes by the board's file alone still happens; what needs the handle
            // fails; the status query at the end (on the handle) fails in any case.
            let mut timo = false;
            if d.board < lib.boards.len() && want != Want::Device {
                lib.board(d.board).lock().handle_closed_call = true;
                timo = f(lib, &mut d).is_err_and(|f| f.timo);
                lib.board(d.board).lock().handle_closed_call = false;
                lib.trace_flush();
            }
            return closed_handle(timo, d.end);
        }
        d.timed_out = false;
        if d.board >= lib.boards.len() {
            return lost_board();
        }
        let r = if (want == Want::Board && !d.is_board) || (want == Want::Device && d.is_board) {
            Err(Fail::code(EARG))
        } else if io && d.pending.is_some() {
            Err(Fail::code(EOIP))
        } else {
            f(lib, &mut d)
        };
        let (err, cnt) = match r {
            Ok(c) => (None, c),
            Err(fail) => {
                if fail.timo {
                    d.timed_out = true;
                }
                (Some(fail.iberr), fail.count)
            }
        };
        let mut sta = lib.status(&d);
        if err.is_some() {
            sta |= ERR;
        }
        let (err, cnt) = board_check(lib, &d, err, cnt);
        drop(d);
        lib.trace_flush();
        finish(sta, err, cnt)
    })
}

/// A call on a descriptor whose board has no file (a lost descriptor): the ioctl on
/// fd -1 fails with EBADF, and so does the status query after it, so ibsta is ERR
/// alone (lib/ibutil.c general_exit_library).
fn lost_board() -> c_int {
    let f = engine::no_board_file();
    finish(ERR, Some(f.iberr), f.count)
}

/// What a device call reports when its board's descriptor was taken offline: its
/// status query asks the board whether it is controller first (lib/ibWait.c my_wait,
/// lib/ibutil.c is_cic, on handle 0), which fails with EINVAL and leaves EDVR and
/// ibcnt 22 behind, the call going on as if it were controller.
fn board_check(
    lib: &Library,
    d: &Desc,
    err: Option<i32>,
    cnt: Option<i64>,
) -> (Option<i32>, Option<i64>) {
    if d.is_board {
        return (err, cnt);
    }
    let closed = d.board < lib.boards.len() && lib.board(d.board).lock().handle0_free;
    if closed {
        (Some(EDVR), Some(EINVAL))
    } else {
        (err, cnt)
    }
}

/// Like [`call`], for the waits: `f` gets the descriptor's lock itself, and takes it
/// only while it looks at the descriptor.
fn call_unlocked(
    ud: c_int,
    want: Want,
    f: impl FnOnce(&Library, &std::sync::Mutex<Desc>) -> Res,
) -> c_int {
    guard(ERR, || {
        crossings::served();
        let lib = library();
        let Some(slot) = lib.get(ud) else {
            return unknown_descriptor(lib, ud);
        };
        let (wrong, lost) = {
            let mut d = engine::lock_desc(&slot);
            if d.handle_closed {
                return closed_handle(false, d.end);
            }
            d.timed_out = false;
            (
                (want == Want::Board && !d.is_board) || (want == Want::Device && d.is_board),
                d.board >= lib.boards.len(),
            )
        };
        if lost {
            return lost_board();
        }
        let r = if wrong {
            Err(Fail::code(EARG))
        } else {
            f(lib, &slot)
        };
        let mut d = engine::lock_desc(&slot);
        let (err, cnt) = match r {
            Ok(c) => (None, c),
            Err(fail) => {
                if fail.timo {
                    d.timed_out = true;
                }
                (Some(fail.iberr), fail.count)
            }
        };
        let mut sta = lib.status(&d);
        if err.is_some() {
            sta |= ERR;
        }
        let (err, cnt) = board_check(lib, &d, err, cnt);
        drop(d);
        lib.trace_flush();
        finish(sta, err, cnt)
    })
}

/// An IEEE 488.2 call on board descriptor `board`.
fn call4882(board: c_int, f: impl FnOnce(&Library, &mut Desc) -> Res) {
    call(board, Want::Board, true, f);
}

/// Runs an asynchronous I/O to completion and keeps its result for ibwait/ibstop; the
/// call itself reports the I/O as in progress (no CMPL).
fn call_async(ud: c_int, want: Want, f: impl FnOnce(&Library, &mut Desc) -> Res) -> c_int {
    call(ud, want, true, |lib, d| {
        let r = f(lib, d);
        let mut sta = lib.status(d);
        let v = match r {
            Ok(c) => Values {
                sta,
                err: 0,
                cntl: c.unwrap_or(0),
            },
            Err(fail) => {
                sta |= ERR;
                if fail.timo {
                    sta |= TIMO;
                }
                Values {
                    sta,
                    err: fail.iberr,
                    cntl: fail.count.unwrap_or(0),
                }
            }
        };
        d.pending = Some(v);
        Ok(None)
    })
}

/// The `count` bytes at `p` (EARG: null with a count, or a negative count).
///
/// # Safety
/// `p` must point to `count` readable bytes when it is not null and `count > 0`.
unsafe fn bytes<'a>(p: *const c_void, count: c_long) -> Res<&'a [u8]> {
    match usize::try_from(count) {
        Ok(0) => Ok(&[]),
        Ok(n) if !p.is_null() && n <= isize::MAX as usize => {
            // SAFETY: non-null, and the caller promises `n` readable bytes at `p`.
            Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) })
        }
        _ => Err(Fail::code(EARG)),
    }
}

/// The `count` writable bytes at `p`.
///
/// # Safety
/// `p` must point to `count` writable bytes, used by nothing else during the call,
/// when it is not null and `count > 0`.
unsafe fn bytes_mut<'a>(p: *mut c_void, count: c_long) -> Res<&'a mut [u8]> {
    match usize::try_from(count) {
        Ok(0) => Ok(&mut []),
        Ok(n) if !p.is_null() && n <= isize::MAX as usize => {
            // SAFETY: non-null, and the caller promises `n` writable bytes at `p`
            // that nothing else uses while the call runs.
            Ok(unsafe { std::slice::from_raw_parts_mut(p.cast::<u8>(), n) })
        }
        _ => Err(Fail::code(EARG)),
    }
}

/// The NUL-terminated UTF-8 string at `p`.
///
/// # Safety
/// `p` must be null or point to a NUL-terminated string.
unsafe fn text<'a>(p: *const c_char) -> Res<&'a str> {
    if p.is_null() {
        return Err(Fail::code(EARG));
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map_err(|_| Fail::code(EARG))
}

/// The address list at `p`, up to (not including) NOADDR; null is an empty list.
///
/// # Safety
/// `p` must be null or point to an array ending with NOADDR.
unsafe fn raw_list(p: *const Addr4882_t) -> Res<Vec<u16>> {
    let mut out = Vec::new();
    if p.is_null() {
        return Ok(out);
    }
    for i in 0..MAX_LIST {
        // SAFETY: the array ends with NOADDR, and we stop there: elements up to it exist.
        let a = unsafe { p.add(i).read() };
        if a == NOADDR {
            return Ok(out);
        }
        out.push(a);
    }
    Err(Fail::code(EARG))
}

/// The address list at `p`, decoded (EARG with the index of a bad entry in ibcnt).
///
/// # Safety
/// As [`raw_list`].
unsafe fn list(p: *const Addr4882_t) -> Res<Vec<gpib_sim::Address>> {
    // SAFETY: forwarded contract.
    decode_list(&unsafe { raw_list(p) }?)
}

/// Stores `v` at `p` (EARG for null).
///
/// # Safety
/// `p` must be null or valid for a write of one `T`.
unsafe fn store<T>(p: *mut T, v: T) -> Res<()> {
    if p.is_null() {
        return Err(Fail::code(EARG));
    }
    // SAFETY: non-null and writable by the caller's contract.
    unsafe { p.write(v) };
    Ok(())
}

fn one_address(a: Addr4882_t) -> Res<gpib_sim::Address> {
    decode_addr(a).ok_or(Fail::code(EARG))
}

// ---------------------------------------------------------------------------------
// Traditional API.
// ---------------------------------------------------------------------------------

/// Opens a device descriptor on board `board_index` (no bus traffic).
#[no_mangle]
pub extern "C" fn ibdev(
    board_index: c_int,
    pad: c_int,
    sad: c_int,
    timo: c_int,
    send_eoi: c_int,
    eosmode: c_int,
) -> c_int {
    guard(-1, || {
        let lib = library();
        open_result(
            lib,
            engine::dev(lib, board_index, pad, sad, timo, send_eoi, eosmode),
        )
    })
}

/// Opens a board descriptor for the board with this name in the configuration.
///
/// # Safety
/// `dev` must be null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ibfind(dev: *const c_char) -> c_int {
    guard(-1, || {
        let lib = library();
        let r = if dev.is_null() {
            Err(Fail::code(EARG))
        } else {
            // SAFETY: non-null and NUL-terminated by the caller's contract.
            match unsafe { CStr::from_ptr(dev) }.to_str() {
                Ok(name) => engine::find(lib, name),
                // Looked up like any name: not in the configuration.
                Err(_) => Err(engine::not_configured()),
            }
        };
        open_result(lib, r)
    })
}

fn open_result(lib: &Library, r: Res<i32>) -> c_int {
    match r {
        Ok(ud) => {
            let sta = lib.get(ud).map_or(CMPL, |d| {
                lib.status(&d.lock().unwrap_or_else(|p| p.into_inner()))
            });
            finish(sta, None, None);
            ud
        }
        Err(f) => {
            finish(ERR, Some(f.iberr), f.count);
            -1
        }
    }
}

/// Closes (0) or resets (non-zero) a descriptor.
#[no_mangle]
pub extern "C" fn ibonl(ud: c_int, onl: c_int) -> c_int {
    // A board taken offline stays so: reinit_descriptor's first ioctl is on its closed
    // handle (lib/ibOnl.c), and nothing else is done.
    if let Some(end) = library().get(ud).and_then(|s| {
        let d = engine::lock_desc(&s);
        d.handle_closed.then_some(d.end)
    }) {
        return guard(ERR, || closed_handle(false, end));
    }
    call(ud, Want::Any, false, |lib, d| engine::onl(lib, ud, d, onl))
}

/// Reads up to `count` bytes.
///
/// # Safety
/// `buf` must point to `count` writable bytes (or be null with `count` 0).
#[no_mangle]
pub unsafe extern "C" fn ibrd(ud: c_int, buf: *mut c_void, count: c_long) -> c_int {
    call(ud, Want::Any, true, |lib, d| {
        // SAFETY: forwarded contract.
        let b = unsafe { bytes_mut(buf, count) }?;
        crossings::charge(Op::Rd, d);
        engine::rd(lib, d, b)
    })
}

/// Reads asynchronously (completed at once; resynchronize with ibwait or ibstop).
///
/// # Safety
/// As [`ibrd`].
#[no_mangle]
pub unsafe extern "C" fn ibrda(ud: c_int, buf: *mut c_void, count: c_long) -> c_int {
    // SAFETY: forwarded contract; the transfer completes before this call returns.
    let b = match unsafe { bytes_mut(buf, count) } {
        Ok(b) => b,
        Err(f) => return call(ud, Want::Any, true, |_, _| Err(f)),
    };
    call_async(ud, Want::Any, |lib, d| engine::rd(lib, d, b))
}

/// Reads until END into a file.
///
/// # Safety
/// `file_path` must be null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ibrdf(ud: c_int, file_path: *const c_char) -> c_int {
    call(ud, Want::Any, true, |lib, d| {
        // SAFETY: forwarded contract.
        let p = unsafe { text(file_path) }?;
        engine::rdf(lib, d, p)
    })
}

/// Writes `count` bytes.
///
/// # Safety
/// `buf` must point to `count` readable bytes (or be null with `count` 0).
#[no_mangle]
pub unsafe extern "C" fn ibwrt(ud: c_int, buf: *const c_void, count: c_long) -> c_int {
    call(ud, Want::Any, true, |lib, d| {
        // SAFETY: forwarded contract.
        let b = unsafe { bytes(buf, count) }?;
        let chunks = crossings::write_chunks(d, b);
        crossings::charge(Op::Wrt { chunks }, d);
        engine::wrt(lib, d, b)
    })
}

/// Writes asynchronously (completed at once; resynchronize with ibwait or ibstop).
///
/// # Safety
/// As [`ibwrt`].
#[no_mangle]
pub unsafe extern "C" fn ibwrta(ud: c_int, buf: *const c_void, count: c_long) -> c_int {
    // SAFETY: forwarded contract; the transfer completes before this call returns.
    let b = match unsafe { bytes(buf, count) } {
        Ok(b) => b,
        Err(f) => return call(ud, Want::Any, true, |_, _| Err(f)),
    };
    call_async(ud, Want::Any, |lib, d| engine::wrt(lib, d, b))
}

/// Writes a file's contents.
///
/// # Safety
/// `file_path` must be null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ibwrtf(ud: c_int, file_path: *const c_char) -> c_int {
    call(ud, Want::Any, true, |lib, d| {
        // SAFETY: forwarded contract.
        let p = unsafe { text(file_path) }?;
        engine::wrtf(lib, d, p)
    })
}

/// Sends command bytes with ATN (board descriptors).
///
/// # Safety
/// `cmd` must point to `cnt` readable bytes (or be null with `cnt` 0).
#[no_mangle]
pub unsafe extern "C" fn ibcmd(ud: c_int, cmd: *const c_void, cnt: c_long) -> c_int {
    call(ud, Want::Board, true, |lib, d| {
        // SAFETY: forwarded contract.
        let b = unsafe { bytes(cmd, cnt) }?;
        crossings::charge(Op::Cmd, d);
        engine::cmd_no_count(lib, d, b)
    })
}

/// Sends command bytes asynchronously (completed at once).
///
/// # Safety
/// As [`ibcmd`].
#[no_mangle]
pub unsafe extern "C" fn ibcmda(ud: c_int, cmd: *const c_void, cnt: c_long) -> c_int {
    // SAFETY: forwarded contract; the transfer completes before this call returns.
    let b = match unsafe { bytes(cmd, cnt) } {
        Ok(b) => b,
        Err(f) => return call(ud, Want::Board, true, |_, _| Err(f)),
    };
    call_async(ud, Want::Board, |lib, d| engine::cmd(lib, d, b))
}

/// Queries a setting.
///
/// # Safety
/// `value` must be null or valid for writing an `int`.
#[no_mangle]
pub unsafe extern "C" fn ibask(ud: c_int, option: c_int, value: *mut c_int) -> c_int {
    call(ud, Want::Any, false, |lib, d| {
        let v = engine::ask(lib, d, option)?;
        // SAFETY: forwarded contract.
        unsafe { store(value, v) }?;
        Ok(None)
    })
}

/// Changes a setting.
#[no_mangle]
pub extern "C" fn ibconfig(ud: c_int, option: c_int, value: c_int) -> c_int {
    call(ud, Want::Any, false, |lib, d| {
        engine::config(lib, d, option, value)
    })
}

/// Moves a device descriptor to the board with this name.
///
/// # Safety
/// `board_name` must be null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ibbna(ud: c_int, board_name: *mut c_char) -> c_int {
    call(ud, Want::Device, true, |lib, d| {
        // SAFETY: forwarded contract.
        let name = unsafe { text(board_name) }?;
        engine::bna(lib, d, name)
    })
}

/// Becomes active controller, asserting ATN (board descriptors; the simulated board
/// is always controller-in-charge).
#[no_mangle]
pub extern "C" fn ibcac(ud: c_int, synchronous: c_int) -> c_int {
    let _ = synchronous;
    call(ud, Want::Board, true, engine::cac)
}

/// Goes to standby, releasing ATN (board descriptors).
#[no_mangle]
pub extern "C" fn ibgts(ud: c_int, shadow_handshake: c_int) -> c_int {
    let _ = shadow_handshake;
    call(ud, Want::Board, true, engine::gts)
}

/// SDC to the device.
#[no_mangle]
pub extern "C" fn ibclr(ud: c_int) -> c_int {
    call(ud, Want::Device, true, |lib, d| {
        crossings::charge(Op::AddressedCommand, d);
        engine::clr(lib, d)
    })
}

/// GET to the device.
#[no_mangle]
pub extern "C" fn ibtrg(ud: c_int) -> c_int {
    call(ud, Want::Device, true, |lib, d| {
        crossings::charge(Op::AddressedCommand, d);
        engine::trg(lib, d)
    })
}

/// GTL to the device.
#[no_mangle]
pub extern "C" fn ibloc(ud: c_int) -> c_int {
    call(ud, Want::Any, true, |lib, d| {
        crossings::charge(Op::Loc, d);
        engine::loc(lib, d)
    })
}

/// Enables DMA (a setting only).
#[no_mangle]
pub extern "C" fn ibdma(ud: c_int, v: c_int) -> c_int {
    call(ud, Want::Board, false, |lib, d| {
        engine::config(lib, d, OPT_DMA, v)
    })
}

/// EOI with the last byte of writes.
#[no_mangle]
pub extern "C" fn ibeot(ud: c_int, v: c_int) -> c_int {
    call(ud, Want::Any, false, |_, d| {
        crossings::charge(Op::Setting, d);
        d.s.device.eot = Some(v != 0);
        Ok(None)
    })
}

/// End-of-string mode.
#[no_mangle]
pub extern "C" fn ibeos(ud: c_int, v: c_int) -> c_int {
    call(ud, Want::Any, false, |_, d| {
        crossings::charge(Op::Setting, d);
        engine::eos(d, v)
    })
}

/// The oldest board event (the simulated board, always controller, has none).
///
/// # Safety
/// `event` must be null or valid for writing a `short`.
#[no_mangle]
pub unsafe extern "C" fn ibevent(ud: c_int, event: *mut c_short) -> c_int {
    call(ud, Want::Board, true, |_, _| {
        // SAFETY: forwarded contract.
        unsafe { store(event, 0) }?;
        Ok(None)
    })
}

/// Sets the individual status bit.
#[no_mangle]
pub extern "C" fn ibist(ud: c_int, ist: c_int) -> c_int {
    call(ud, Want::Board, false, |lib, d| {
        engine::config(lib, d, OPT_IST, ist)
    })
}

/// The state of the bus lines (board descriptors: EARG on a device, as in libgpib).
///
/// # Safety
/// `line_status` must be null or valid for writing a `short`.
#[no_mangle]
pub unsafe extern "C" fn iblines(ud: c_int, line_status: *mut c_short) -> c_int {
    call(ud, Want::Board, true, |lib, d| {
        crossings::charge(Op::Lines, d);
        let v = engine::lines(lib, d)?;
        // SAFETY: forwarded contract.
        unsafe { store(line_status, v) }?;
        Ok(None)
    })
}

/// Whether a listener answers at `pad`/`sad`.
///
/// # Safety
/// `found_listener` must be null or valid for writing a `short`.
#[no_mangle]
pub unsafe extern "C" fn ibln(
    ud: c_int,
    pad: c_int,
    sad: c_int,
    found_listener: *mut c_short,
) -> c_int {
    call(ud, Want::Any, true, |lib, d| {
        // On a device descriptor linux-gpib's ibln addresses the bus, then fails with
        // EARG when it reads the lines (lib/ibLines.c:25-28, internal_iblines takes
        // board descriptors only): it never answers there.
        if found_listener.is_null() {
            return Err(Fail::code(EARG));
        }
        if !d.is_board {
            return engine::ln_on_device(lib, d, pad, sad).map(|_| None);
        }
        let v = engine::ln(lib, d, pad, sad)?;
        // SAFETY: forwarded contract.
        unsafe { store(found_listener, c_short::from(v)) }?;
        Ok(None)
    })
}

/// Sets the primary address.
#[no_mangle]
pub extern "C" fn ibpad(ud: c_int, v: c_int) -> c_int {
    call(ud, Want::Any, true, |_, d| engine::pad(d, v))
}

/// Sets the secondary address.
#[no_mangle]
pub extern "C" fn ibsad(ud: c_int, v: c_int) -> c_int {
    call(ud, Want::Any, true, |_, d| engine::sad(d, v))
}

/// Passes control: not possible on the simulated bus (ECAP).
#[no_mangle]
pub extern "C" fn ibpct(ud: c_int) -> c_int {
    call(ud, Want::Device, true, |_, _| Err(Fail::code(ECAP)))
}

/// Parallel poll configuration.
#[no_mangle]
pub extern "C" fn ibppc(ud: c_int, v: c_int) -> c_int {
    call(ud, Want::Any, true, |lib, d| engine::ppc(lib, d, v))
}

/// Conducts a parallel poll.
///
/// # Safety
/// `ppr` must be null or valid for writing a `char`.
#[no_mangle]
pub unsafe extern "C" fn ibrpp(ud: c_int, ppr: *mut c_char) -> c_int {
    call(ud, Want::Any, true, |lib, d| {
        if ppr.is_null() {
            return Err(Fail::code(EARG));
        }
        let v = engine::rpp(lib, d)?;
        // SAFETY: forwarded contract.
        unsafe { store(ppr, v as c_char) }?;
        Ok(None)
    })
}

/// Requests (1) or releases (0) system control.
#[no_mangle]
pub extern "C" fn ibrsc(ud: c_int, v: c_int) -> c_int {
    call(ud, Want::Board, true, |lib, d| {
        engine::config(lib, d, OPT_SC, v)
    })
}

/// Serial-polls the device.
///
/// # Safety
/// `spr` must be null or valid for writing a `char`.
#[no_mangle]
pub unsafe extern "C" fn ibrsp(ud: c_int, spr: *mut c_char) -> c_int {
    call(ud, Want::Device, true, |lib, d| {
        if spr.is_null() {
            return Err(Fail::code(EARG));
        }
        crossings::charge(Op::Rsp, d);
        let v = engine::rsp(lib, d)?;
        // SAFETY: forwarded contract.
        unsafe { store(spr, v as c_char) }?;
        Ok(None)
    })
}

/// Sets the status byte the board answers serial polls with.
#[no_mangle]
pub extern "C" fn ibrsv(ud: c_int, status_byte: c_int) -> c_int {
    call(ud, Want::Board, true, |lib, d| {
        engine::config(lib, d, OPT_RSV, status_byte)
    })
}

/// Sets the status byte and whether to request service anew.
#[no_mangle]
pub extern "C" fn ibrsv2(ud: c_int, status_byte: c_int, new_reason_for_service: c_int) -> c_int {
    let _ = new_reason_for_service;
    call(ud, Want::Board, true, |lib, d| {
        engine::config(lib, d, OPT_RSV, status_byte)
    })
}

/// Pulses IFC.
#[no_mangle]
pub extern "C" fn ibsic(ud: c_int) -> c_int {
    call(ud, Want::Board, true, |lib, d| {
        crossings::charge(Op::Sic, d);
        engine::sic(lib, d)
    })
}

/// Status bytes queued by automatic serial polling for the device.
///
/// # Safety
/// `sp_bytes` must be null or valid for writing a `short`.
#[no_mangle]
pub unsafe extern "C" fn ibspb(ud: c_int, sp_bytes: *mut c_short) -> c_int {
    call(ud, Want::Device, true, |lib, d| {
        let n = engine::spb(lib, d);
        // SAFETY: forwarded contract.
        unsafe { store(sp_bytes, n) }?;
        Ok(None)
    })
}

/// Asserts (non-zero) or releases REN.
#[no_mangle]
pub extern "C" fn ibsre(ud: c_int, v: c_int) -> c_int {
    call(ud, Want::Board, true, |lib, d| {
        crossings::charge(Op::Sre, d);
        engine::sre(lib, d, v != 0)
    })
}

/// Ends (resynchronizes) a pending asynchronous I/O.
#[no_mangle]
pub extern "C" fn ibstop(ud: c_int) -> c_int {
    call(ud, Want::Any, false, |_, d| engine::stop(d))
}

/// Sets the I/O timeout (0..=17).
#[no_mangle]
pub extern "C" fn ibtmo(ud: c_int, v: c_int) -> c_int {
    call(ud, Want::Any, false, |_, d| {
        crossings::charge(Op::Setting, d);
        engine::tmo(d, v)
    })
}

/// The library's version string.
///
/// # Safety
/// `version` must be null or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn ibvers(version: *mut *mut c_char) {
    if !version.is_null() {
        // SAFETY: non-null and writable by the caller's contract; the string is static.
        unsafe { version.write(VERSION.as_ptr().cast_mut()) };
    }
}

/// Waits for a status condition (see `engine::wait`).
#[no_mangle]
pub extern "C" fn ibwait(ud: c_int, mask: c_int) -> c_int {
    call_unlocked(ud, Want::Any, |lib, slot| engine::wait(lib, slot, mask))
}

/// The text of an error code (static).
#[no_mangle]
pub extern "C" fn gpib_error_string(iberr: c_int) -> *const c_char {
    error_text(iberr).as_ptr()
}

/// Calls this library has served in this process (every exported call that looked up
/// a descriptor). Not part of linux-gpib's API: for benchmarks (see `crossings.rs`).
#[no_mangle]
pub extern "C" fn gpib_sim_library_calls() -> u64 {
    crossings::counts().0
}

/// The driver crossings (ioctls) real libgpib would have made for the calls served in
/// this process, as far as the table in `crossings.rs` models them. Not part of
/// linux-gpib's API: for benchmarks.
#[no_mangle]
pub extern "C" fn gpib_sim_driver_crossings() -> u64 {
    crossings::counts().1
}

/// Calls served that the crossing table does not model (they add no crossings).
#[no_mangle]
pub extern "C" fn gpib_sim_unmodelled_calls() -> u64 {
    crossings::counts().2
}
