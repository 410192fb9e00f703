//! The libgpib calls the backend makes, declared here from linux-gpib's `gpib/ib.h`
//! (the numbers are in [`crate::abi`]), each behind a safe function that returns the
//! call's status or a [`LibgpibError`].
//!
//! Declaring the 24 functions here, instead of depending on linux-gpib-rs, keeps an app's
//! build to this crate's own dependencies: linux-gpib-sys runs bindgen (with clang) at
//! build time and linux-gpib-rs always brings env_logger, together 30-odd packages. The
//! declarations are checked against the C header by compat's symbol check and by every
//! test that runs this backend over the libgpib-compatible library.
//!
//! Every call reports its outcome in the calling thread's status: the traditional calls
//! return the new `ibsta`; the error code (`ThreadIberr`) and the count
//! (`ThreadIbcntl`) are read right after the call on the same thread, and only when
//! needed (an error, or a transfer's count), so two threads never see each other's
//! status and a call that succeeds costs no further call into libgpib.

use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_long, c_short, c_void};

use crate::abi;

#[link(name = "gpib")]
extern "C" {
    fn ThreadIbsta() -> c_int;
    fn ThreadIberr() -> c_int;
    fn ThreadIbcntl() -> c_long;

    fn ibask(ud: c_int, option: c_int, value: *mut c_int) -> c_int;
    fn ibclr(ud: c_int) -> c_int;
    fn ibcmd(ud: c_int, cmd: *const c_void, cnt: c_long) -> c_int;
    fn ibconfig(ud: c_int, option: c_int, value: c_int) -> c_int;
    fn ibdev(
        board_index: c_int,
        pad: c_int,
        sad: c_int,
        timo: c_int,
        send_eoi: c_int,
        eosmode: c_int,
    ) -> c_int;
    fn ibeot(ud: c_int, v: c_int) -> c_int;
    fn ibeos(ud: c_int, v: c_int) -> c_int;
    fn ibfind(dev: *const c_char) -> c_int;
    fn iblines(ud: c_int, line_status: *mut c_short) -> c_int;
    fn ibln(ud: c_int, pad: c_int, sad: c_int, found_listener: *mut c_short) -> c_int;
    fn ibloc(ud: c_int) -> c_int;
    fn ibonl(ud: c_int, onl: c_int) -> c_int;
    fn ibrd(ud: c_int, buf: *mut c_void, count: c_long) -> c_int;
    fn ibrpp(ud: c_int, ppr: *mut c_char) -> c_int;
    fn ibsic(ud: c_int) -> c_int;
    fn ibsre(ud: c_int, v: c_int) -> c_int;
    fn ibtmo(ud: c_int, v: c_int) -> c_int;
    fn ibtrg(ud: c_int) -> c_int;
    fn ibwrt(ud: c_int, buf: *const c_void, count: c_long) -> c_int;
    fn ReadStatusByte(board_desc: c_int, address: u16, result: *mut c_short);
    fn TestSRQ(board_desc: c_int, result: *mut c_short);
}

/// A libgpib call that set `ERR` in its status: the call, its `ibsta`, `iberr` and
/// count. The source of the backend's errors, so a program can see linux-gpib's own
/// figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibgpibError {
    /// The call, e.g. `"ibrd"`.
    pub call: &'static str,
    /// Its status word (`ThreadIbsta`).
    pub ibsta: i32,
    /// Its error code (`ThreadIberr`).
    pub iberr: i32,
    /// Bytes it transferred (`ThreadIbcntl`), or the `errno` with `EDVR`/`EFSO`.
    pub count: i64,
}

impl LibgpibError {
    /// Whether `TIMO` is set in the status.
    pub fn timed_out(&self) -> bool {
        self.ibsta & abi::TIMO != 0
    }
}

impl std::fmt::Display for LibgpibError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (name, meaning) = abi::IBERR_NAMES
            .iter()
            .find(|(c, ..)| *c == self.iberr)
            .map_or(("iberr", "unknown error"), |(_, n, m)| (*n, *m));
        write!(
            f,
            "{}: {name} ({meaning}), iberr {}, ibsta {}, ibcntl {}",
            self.call,
            self.iberr,
            StatusWord(self.ibsta),
            self.count
        )
    }
}

impl std::error::Error for LibgpibError {}

/// An `ibsta` word, shown as its hexadecimal value and the names of its set bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusWord(pub i32);

impl std::fmt::Display for StatusWord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const NAMES: [(i32, &str); 16] = [
            (abi::ERR, "ERR"),
            (abi::TIMO, "TIMO"),
            (abi::END, "END"),
            (abi::SRQI, "SRQI"),
            (abi::RQS, "RQS"),
            (abi::SPOLL, "SPOLL"),
            (abi::EVENT, "EVENT"),
            (abi::CMPL, "CMPL"),
            (abi::LOK, "LOK"),
            (abi::REM, "REM"),
            (abi::CIC, "CIC"),
            (abi::ATN, "ATN"),
            (abi::TACS, "TACS"),
            (abi::LACS, "LACS"),
            (abi::DTAS, "DTAS"),
            (abi::DCAS, "DCAS"),
        ];
        write!(f, "0x{:04x}", self.0 & 0xffff)?;
        let mut first = true;
        for (bit, name) in NAMES {
            if self.0 & bit != 0 {
                f.write_str(if first { " [" } else { " " })?;
                f.write_str(name)?;
                first = false;
            }
        }
        if !first {
            f.write_str("]")?;
        }
        Ok(())
    }
}

/// What a call that succeeded reports: its status word and count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    /// `ibsta` (e.g. `END` after a read that ended on EOI).
    pub ibsta: i32,
    /// `ibcntl`: bytes transferred.
    pub count: i64,
}

/// The calling thread's status after a call named `call` that does not return it
/// (`ibdev`, `ibfind`, the IEEE 488.2 calls).
fn outcome(call: &'static str) -> Result<Done, LibgpibError> {
    // SAFETY: ThreadIbsta takes no arguments and reads the calling thread's copy of the
    // last call's status; it has no preconditions.
    let ibsta = unsafe { ThreadIbsta() };
    status(call, ibsta, false)
}

/// The outcome of a call named `call` that returned `ibsta` (every traditional call
/// returns the thread's new `ibsta`): its error code and count are read from the
/// thread's status only when needed (an error, or `counted` for a transfer), so a call
/// that succeeds costs no further calls into libgpib.
fn status(call: &'static str, ibsta: c_int, counted: bool) -> Result<Done, LibgpibError> {
    let failed = ibsta & abi::ERR != 0;
    let count = if failed || counted {
        // SAFETY: as in `outcome`: no arguments, no preconditions.
        let n = unsafe { ThreadIbcntl() };
        #[allow(clippy::useless_conversion)] // c_long is 32 bits on 32-bit targets
        let n = i64::from(n);
        n
    } else {
        0
    };
    if failed {
        // SAFETY: as in `outcome`.
        let iberr = unsafe { ThreadIberr() };
        Err(LibgpibError {
            call,
            ibsta,
            iberr,
            count,
        })
    } else {
        Ok(Done { ibsta, count })
    }
}

/// A buffer length as libgpib's `long` count (a slice is never longer than
/// `isize::MAX`, which fits a 64-bit `long`; on a 32-bit `long` the count is capped and
/// the call moves at most that many bytes).
fn count_of(len: usize) -> c_long {
    c_long::try_from(len).unwrap_or(c_long::MAX)
}

/// `ibfind(name)`: the descriptor of the board or device called `name` in gpib.conf.
pub fn find(name: &str) -> Result<c_int, LibgpibError> {
    let Ok(c) = CString::new(name) else {
        return Err(LibgpibError {
            call: "ibfind",
            ibsta: abi::ERR,
            iberr: abi::EARG,
            count: 0,
        });
    };
    // SAFETY: `c` is a NUL-terminated string that lives across the call; ibfind only
    // reads it.
    let ud = unsafe { ibfind(c.as_ptr()) };
    outcome("ibfind")?;
    Ok(ud)
}

/// `ibdev(board, pad, sad, timo, send_eoi, eosmode)`: a device descriptor. `sad` is
/// 0 for none or 0x60..=0x7e.
pub fn dev(
    board: c_int,
    pad: c_int,
    sad: c_int,
    timo: c_int,
    send_eoi: bool,
    eosmode: c_int,
) -> Result<c_int, LibgpibError> {
    // SAFETY: plain integer arguments.
    let ud = unsafe { ibdev(board, pad, sad, timo, c_int::from(send_eoi), eosmode) };
    outcome("ibdev")?;
    if ud < 0 {
        return Err(LibgpibError {
            call: "ibdev",
            ibsta: abi::ERR,
            iberr: abi::EDVR,
            count: 0,
        });
    }
    Ok(ud)
}

/// `ibask(ud, option)`: the option's value.
pub fn ask(ud: c_int, option: c_int) -> Result<c_int, LibgpibError> {
    let mut value: c_int = 0;
    // SAFETY: `value` is a valid, writable c_int for the call's duration.
    let ibsta = unsafe { ibask(ud, option, &mut value) };
    status("ibask", ibsta, false)?;
    Ok(value)
}

/// `ibconfig(ud, option, value)`.
pub fn config(ud: c_int, option: c_int, value: c_int) -> Result<Done, LibgpibError> {
    // SAFETY: plain integer arguments.
    let ibsta = unsafe { ibconfig(ud, option, value) };
    status("ibconfig", ibsta, false)
}

/// `ibeos(ud, mode)`.
pub fn eos(ud: c_int, mode: c_int) -> Result<Done, LibgpibError> {
    // SAFETY: plain integer arguments.
    let ibsta = unsafe { ibeos(ud, mode) };
    status("ibeos", ibsta, false)
}

/// `ibeot(ud, on)`: EOI with the last byte of writes.
pub fn eot(ud: c_int, on: bool) -> Result<Done, LibgpibError> {
    // SAFETY: plain integer arguments.
    let ibsta = unsafe { ibeot(ud, c_int::from(on)) };
    status("ibeot", ibsta, false)
}

/// `ibtmo(ud, code)`: one of the 18 timeout codes.
pub fn tmo(ud: c_int, code: c_int) -> Result<Done, LibgpibError> {
    // SAFETY: plain integer arguments.
    let ibsta = unsafe { ibtmo(ud, code) };
    status("ibtmo", ibsta, false)
}

/// `ibonl(ud, 0)`: closes a descriptor.
pub fn close(ud: c_int) -> Result<Done, LibgpibError> {
    // SAFETY: plain integer arguments.
    let ibsta = unsafe { ibonl(ud, 0) };
    status("ibonl", ibsta, false)
}

/// `ibcmd(ud, bytes)`: command bytes with ATN.
pub fn cmd(ud: c_int, bytes: &[u8]) -> Result<Done, LibgpibError> {
    // SAFETY: the pointer and count describe `bytes`, which ibcmd only reads and which
    // outlives the (synchronous) call.
    let ibsta = unsafe { ibcmd(ud, bytes.as_ptr().cast(), count_of(bytes.len())) };
    status("ibcmd", ibsta, true)
}

/// `ibwrt(ud, data)`: data bytes.
pub fn wrt(ud: c_int, data: &[u8]) -> Result<Done, LibgpibError> {
    // SAFETY: the pointer and count describe `data`, which ibwrt only reads and which
    // outlives the (synchronous) call.
    let ibsta = unsafe { ibwrt(ud, data.as_ptr().cast(), count_of(data.len())) };
    status("ibwrt", ibsta, true)
}

/// `ibrd(ud, buf)`: reads at most `buf.len()` bytes into `buf`.
pub fn rd(ud: c_int, buf: &mut [u8]) -> Result<Done, LibgpibError> {
    // SAFETY: the pointer and count describe `buf`, which is writable and outlives the
    // (synchronous) call; ibrd writes at most `count` bytes.
    let ibsta = unsafe { ibrd(ud, buf.as_mut_ptr().cast(), count_of(buf.len())) };
    status("ibrd", ibsta, true)
}

/// `ibclr(ud)`: selected device clear.
pub fn clr(ud: c_int) -> Result<Done, LibgpibError> {
    // SAFETY: plain integer argument.
    let ibsta = unsafe { ibclr(ud) };
    status("ibclr", ibsta, false)
}

/// `ibtrg(ud)`: group execute trigger.
pub fn trg(ud: c_int) -> Result<Done, LibgpibError> {
    // SAFETY: plain integer argument.
    let ibsta = unsafe { ibtrg(ud) };
    status("ibtrg", ibsta, false)
}

/// `ibloc(ud)`: go to local.
pub fn loc(ud: c_int) -> Result<Done, LibgpibError> {
    // SAFETY: plain integer argument.
    let ibsta = unsafe { ibloc(ud) };
    status("ibloc", ibsta, false)
}

/// `ibsic(ud)`: interface clear.
pub fn sic(ud: c_int) -> Result<Done, LibgpibError> {
    // SAFETY: plain integer argument.
    let ibsta = unsafe { ibsic(ud) };
    status("ibsic", ibsta, false)
}

/// `ibsre(ud, on)`: remote enable.
pub fn sre(ud: c_int, on: bool) -> Result<Done, LibgpibError> {
    // SAFETY: plain integer arguments.
    let ibsta = unsafe { ibsre(ud, c_int::from(on)) };
    status("ibsre", ibsta, false)
}

/// `ibrpp(ud)`: the parallel poll byte.
pub fn rpp(ud: c_int) -> Result<u8, LibgpibError> {
    let mut ppr: c_char = 0;
    // SAFETY: `ppr` is a valid, writable char for the call's duration.
    let ibsta = unsafe { ibrpp(ud, &mut ppr) };
    status("ibrpp", ibsta, false)?;
    Ok(ppr as u8)
}

/// `iblines(ud)`: the line status word (`ValidXXX` and `BusXXX` bits).
pub fn lines(ud: c_int) -> Result<i32, LibgpibError> {
    let mut l: c_short = 0;
    // SAFETY: `l` is a valid, writable short for the call's duration.
    let ibsta = unsafe { iblines(ud, &mut l) };
    status("iblines", ibsta, false)?;
    // The word is 16 bits of flags: keep them as such.
    Ok(i32::from(l as u16))
}

/// `ibln(ud, pad, sad)`: whether a listener answers at that address.
pub fn ln(ud: c_int, pad: c_int, sad: c_int) -> Result<bool, LibgpibError> {
    let mut found: c_short = 0;
    // SAFETY: `found` is a valid, writable short for the call's duration.
    let ibsta = unsafe { ibln(ud, pad, sad, &mut found) };
    status("ibln", ibsta, false)?;
    Ok(found != 0)
}

/// `ReadStatusByte(board, address)`: serial-polls one device (address as
/// `MakeAddr(pad, sad)`).
pub fn read_status_byte(board: c_int, address: u16) -> Result<u8, LibgpibError> {
    let mut result: c_short = 0;
    // SAFETY: `result` is a valid, writable short for the call's duration.
    unsafe { ReadStatusByte(board, address, &mut result) };
    outcome("ReadStatusByte")?;
    Ok((result & 0xff) as u8)
}

/// `TestSRQ(board)`: whether SRQ is asserted.
pub fn test_srq(board: c_int) -> Result<bool, LibgpibError> {
    let mut result: c_short = 0;
    // SAFETY: `result` is a valid, writable short for the call's duration.
    unsafe { TestSRQ(board, &mut result) };
    outcome("TestSRQ")?;
    Ok(result != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_words_name_their_bits() {
        assert_eq!(StatusWord(0).to_string(), "0x0000");
        assert_eq!(
            StatusWord(abi::ERR | abi::TIMO | abi::CMPL).to_string(),
            "0xc100 [ERR TIMO CMPL]"
        );
    }

    #[test]
    fn errors_name_the_call_and_code() {
        let e = LibgpibError {
            call: "ibrd",
            ibsta: abi::ERR | abi::TIMO,
            iberr: abi::EABO,
            count: 7,
        };
        assert!(e.timed_out());
        assert_eq!(
            e.to_string(),
            "ibrd: EABO (I/O aborted), iberr 6, ibsta 0xc000 [ERR TIMO], ibcntl 7"
        );
    }
}
