//! The libgpib calls the backend makes, through linux-gpib-rs's safe wrappers
//! (`lowlevel::traditional`, `lowlevel::multidevice`, `lowlevel::utility`), each
//! returning what the call reports or a [`LibgpibError`] with linux-gpib's figures.
//!
//! What the wrappers drop is recovered here, with what linux-gpib-rs exports:
//! - a failed transfer's count: its `ibrd`/`ibwrt`/`ibcmd` answer
//!   `DriverError(status, error)` without it, and their error path reads only
//!   `ThreadIbsta`/`ThreadIberr`, which leave the count alone, so
//!   `utility::ThreadIbcntl()` right after, on the same thread, is that call's count;
//! - an error code linux-gpib-rs has no name for (`ECNF`, 17): its wrapper answers a
//!   `ValueError`; the thread's own `ThreadIbsta`/`ThreadIberr` still tell it.
//!
//! One call goes to linux-gpib-sys instead ([`super::sys`]): `ibwrt` of data that is
//! not UTF-8 while linux-gpib-rs's debug logging is on, which its wrapper sends and
//! then fails.
//!
//! Every call reports its outcome in the calling thread's status (linux-gpib-rs reads
//! the `Thread*` values with its `linuxgpib` feature), so two threads never see each
//! other's status; a call that succeeds costs no further call into libgpib beyond a
//! transfer's count.

use std::os::raw::c_int;

use linux_gpib_rs::error::{GpibError, IbError};
use linux_gpib_rs::lowlevel::multidevice;
use linux_gpib_rs::lowlevel::traditional;
use linux_gpib_rs::lowlevel::utility::{self, Addr4882};
use linux_gpib_rs::types::{
    IbEosMode, IbLineStatus, IbOnline, IbOption, IbSendEOI, IbTimeout, PrimaryAddress,
    SecondaryAddress,
};

use super::status::{Done, LibgpibError};
use super::sys;
use crate::abi;

/// linux-gpib's 18 timeout codes (`TNONE` = 0 ... `T1000s` = 17) as linux-gpib-rs names them.
const TIMEOUTS: [IbTimeout; 18] = [
    IbTimeout::TNone,
    IbTimeout::T10us,
    IbTimeout::T30us,
    IbTimeout::T100us,
    IbTimeout::T300us,
    IbTimeout::T1ms,
    IbTimeout::T3ms,
    IbTimeout::T10ms,
    IbTimeout::T30ms,
    IbTimeout::T100ms,
    IbTimeout::T300ms,
    IbTimeout::T1s,
    IbTimeout::T3s,
    IbTimeout::T10s,
    IbTimeout::T30s,
    IbTimeout::T100s,
    IbTimeout::T300s,
    IbTimeout::T1000s,
];

/// An argument refused before any call into libgpib (what linux-gpib answers such
/// an argument with: `ERR`, `EARG`).
fn bad_argument(call: &'static str) -> LibgpibError {
    LibgpibError {
        call,
        ibsta: abi::ERR,
        iberr: abi::EARG,
        count: 0,
    }
}

/// The number linux-gpib gives `error`.
fn iberr_of(error: &IbError) -> i32 {
    match error {
        IbError::EDVR(_) => abi::EDVR,
        IbError::ECIC => abi::ECIC,
        IbError::ENOL => abi::ENOL,
        IbError::EADR => abi::EADR,
        IbError::EARG => abi::EARG,
        IbError::ESAC => abi::ESAC,
        IbError::EABO => abi::EABO,
        IbError::ENEB => abi::ENEB,
        IbError::EDMA => abi::EDMA,
        IbError::EOIP => abi::EOIP,
        IbError::ECAP => abi::ECAP,
        IbError::EFSO(_) => abi::EFSO,
        IbError::EBUS => abi::EBUS,
        IbError::ESTB => abi::ESTB,
        IbError::ESRQ => abi::ESRQ,
        IbError::ETAB => abi::ETAB,
        IbError::ELCK => 21,
        IbError::EARM => 22,
        IbError::EHDL => 23,
        IbError::ECFG => 24,
        IbError::EWIP => 26,
        IbError::ERST => 27,
        IbError::EPWR => 28,
    }
}

/// The figures of the call named `call` that linux-gpib-rs answered `e` for: its
/// status and error (linux-gpib-rs's `IbStatus` and `IbError`), and its count, read
/// right after the call on this thread. Called at once after the wrapper returns,
/// before any other libgpib call. Out of line: the calls' success path stays small.
#[cold]
#[inline(never)]
fn failed(call: &'static str, e: GpibError) -> LibgpibError {
    #[allow(clippy::useless_conversion)] // c_long is 32 bits on 32-bit targets
    let count = i64::from(utility::ThreadIbcntl());
    match e {
        GpibError::DriverError(status, error) => LibgpibError {
            call,
            ibsta: status.as_ibsta(),
            iberr: iberr_of(&error),
            count,
        },
        // An iberr linux-gpib-rs has no name for, or a figure it refused after the
        // call: the thread's own status tells what libgpib said.
        _ => {
            let ibsta = utility::ThreadIbsta();
            let iberr = if ibsta & abi::ERR != 0 {
                utility::ThreadIberr()
            } else {
                abi::EDVR
            };
            LibgpibError {
                call,
                ibsta: ibsta | abi::ERR,
                iberr,
                count,
            }
        }
    }
}

/// The option linux-gpib numbers `code` (one of [`abi`]'s `OPT_*`).
fn option(call: &'static str, code: c_int) -> Result<IbOption, LibgpibError> {
    Ok(match code {
        abi::OPT_PAD => IbOption::PAD,
        abi::OPT_TMO => IbOption::TMO,
        abi::OPT_AUTOPOLL => IbOption::AUTOPOLL,
        abi::OPT_SC => IbOption::SC,
        abi::OPT_TIMING => IbOption::TIMING,
        abi::OPT_UN_ADDR => IbOption::UnAddr,
        abi::OPT_BNA => IbOption::BNA,
        _ => return Err(bad_argument(call)),
    })
}

/// A timeout code (0..=17) as linux-gpib-rs's [`IbTimeout`].
fn timeout(call: &'static str, code: c_int) -> Result<IbTimeout, LibgpibError> {
    usize::try_from(code)
        .ok()
        .and_then(|i| TIMEOUTS.get(i).copied())
        .ok_or_else(|| bad_argument(call))
}

/// An `ibeos` mode word (REOS, XEOS, BIN and the byte) as linux-gpib-rs's [`IbEosMode`].
fn eos_mode(mode: c_int) -> IbEosMode {
    IbEosMode {
        reos: mode & abi::REOS != 0,
        xeos: mode & abi::XEOS != 0,
        bin: mode & abi::BIN != 0,
        eos_char: (mode & 0xff) as u8,
    }
}

/// Whether EOI goes with the last byte of writes, as linux-gpib-rs's [`IbSendEOI`].
fn send_eoi(on: bool) -> IbSendEOI {
    if on {
        IbSendEOI::Enabled(1)
    } else {
        IbSendEOI::Disabled
    }
}

/// `ibfind(name)`: the descriptor of the board or device called `name` in gpib.conf.
pub fn find(name: &str) -> Result<c_int, LibgpibError> {
    if name.contains('\0') {
        return Err(bad_argument("ibfind"));
    }
    traditional::ibfind(name).map_err(|e| failed("ibfind", e))
}

/// `ibdev(board, pad, sad, timo, send_eoi, eosmode)`: a device descriptor. `sad` is
/// 0 for none or 0x60..=0x7e.
pub fn dev(
    board: c_int,
    pad: c_int,
    sad: c_int,
    timo: c_int,
    eoi: bool,
    eosmode: c_int,
) -> Result<c_int, LibgpibError> {
    let pad = PrimaryAddress::new(pad).map_err(|_| bad_argument("ibdev"))?;
    let sad = SecondaryAddress::new(sad).map_err(|_| bad_argument("ibdev"))?;
    let timo = timeout("ibdev", timo)?;
    traditional::ibdev(board, pad, sad, timo, send_eoi(eoi), eos_mode(eosmode))
        .map_err(|e| failed("ibdev", e))
}

/// `ibask(ud, option)`: the option's value.
pub fn ask(ud: c_int, code: c_int) -> Result<c_int, LibgpibError> {
    traditional::ibask(ud, option("ibask", code)?).map_err(|e| failed("ibask", e))
}

/// `ibconfig(ud, option, value)`.
pub fn config(ud: c_int, code: c_int, value: c_int) -> Result<(), LibgpibError> {
    traditional::ibconfig(ud, option("ibconfig", code)?, value).map_err(|e| failed("ibconfig", e))
}

/// `ibeos(ud, mode)`.
pub fn eos(ud: c_int, mode: c_int) -> Result<(), LibgpibError> {
    traditional::ibeos(ud, eos_mode(mode)).map_err(|e| failed("ibeos", e))
}

/// `ibeot(ud, on)`: EOI with the last byte of writes.
pub fn eot(ud: c_int, on: bool) -> Result<(), LibgpibError> {
    traditional::ibeot(ud, send_eoi(on)).map_err(|e| failed("ibeot", e))
}

/// `ibtmo(ud, code)`: one of the 18 timeout codes.
pub fn tmo(ud: c_int, code: c_int) -> Result<(), LibgpibError> {
    traditional::ibtmo(ud, timeout("ibtmo", code)?).map_err(|e| failed("ibtmo", e))
}

/// `ibonl(ud, 0)`: closes a descriptor.
pub fn close(ud: c_int) -> Result<(), LibgpibError> {
    traditional::ibonl(ud, IbOnline::Close).map_err(|e| failed("ibonl", e))
}

/// `ibcmd(ud, bytes)`: command bytes with ATN (on an error, the count sent is in
/// the error).
pub fn cmd(ud: c_int, bytes: &[u8]) -> Result<(), LibgpibError> {
    traditional::ibcmd(ud, bytes).map_err(|e| failed("ibcmd", e))
}

/// `ibwrt(ud, data)`: data bytes; the count sent.
pub fn wrt(ud: c_int, data: &[u8]) -> Result<i64, LibgpibError> {
    if sys::wrapper_would_fail_write(data) {
        return sys::ibwrt(ud, data);
    }
    match traditional::ibwrt(ud, data) {
        // A slice is never longer than isize::MAX, so its count fits an i64.
        Ok(n) => Ok(i64::try_from(n).unwrap_or(i64::MAX)),
        Err(e) => Err(failed("ibwrt", e)),
    }
}

/// `ibrd(ud, buf)`: reads at most `buf.len()` bytes into `buf`.
pub fn rd(ud: c_int, buf: &mut [u8]) -> Result<Done, LibgpibError> {
    match traditional::ibrd(ud, buf) {
        // The one bit a read's status is read for (no status word built back).
        Ok((status, n)) => Ok(Done {
            end: status.end,
            count: i64::try_from(n).unwrap_or(i64::MAX),
        }),
        Err(e) => Err(failed("ibrd", e)),
    }
}

/// `ibclr(ud)`: selected device clear.
pub fn clr(ud: c_int) -> Result<(), LibgpibError> {
    traditional::ibclr(ud).map_err(|e| failed("ibclr", e))
}

/// `ibtrg(ud)`: group execute trigger.
pub fn trg(ud: c_int) -> Result<(), LibgpibError> {
    traditional::ibtrg(ud).map_err(|e| failed("ibtrg", e))
}

/// `ibloc(ud)`: go to local.
pub fn loc(ud: c_int) -> Result<(), LibgpibError> {
    traditional::ibloc(ud).map_err(|e| failed("ibloc", e))
}

/// `ibsic(ud)`: interface clear.
pub fn sic(ud: c_int) -> Result<(), LibgpibError> {
    traditional::ibsic(ud).map_err(|e| failed("ibsic", e))
}

/// `ibsre(ud, on)`: remote enable.
pub fn sre(ud: c_int, on: bool) -> Result<(), LibgpibError> {
    traditional::ibsre(ud, c_int::from(on)).map_err(|e| failed("ibsre", e))
}

/// `ibrpp(ud)`: the parallel poll byte.
pub fn rpp(ud: c_int) -> Result<u8, LibgpibError> {
    // The byte's bits, whatever the sign of C's char.
    traditional::ibrpp(ud)
        .map(|b| b as u8)
        .map_err(|e| failed("ibrpp", e))
}

/// `iblines(ud)`: the line status word (`ValidXXX` in the low byte, `BusXXX` in the high).
pub fn lines(ud: c_int) -> Result<i32, LibgpibError> {
    traditional::iblines(ud)
        .map(|l| line_word(&l))
        .map_err(|e| failed("iblines", e))
}

/// linux-gpib's 16-bit `iblines` word of linux-gpib-rs's [`IbLineStatus`].
fn line_word(l: &IbLineStatus) -> i32 {
    [
        l.valid_dav,
        l.valid_ndac,
        l.valid_nrfd,
        l.valid_ifc,
        l.valid_ren,
        l.valid_srq,
        l.valid_atn,
        l.valid_eoi,
        l.bus_dav,
        l.bus_ndac,
        l.bus_nrfd,
        l.bus_ifc,
        l.bus_ren,
        l.bus_srq,
        l.bus_atn,
        l.bus_eoi,
    ]
    .iter()
    .enumerate()
    .fold(0, |w, (bit, &on)| if on { w | 1 << bit } else { w })
}

/// `ibln(ud, pad, sad)`: whether a listener answers at that address (`sad` 0 for
/// none or 0x60..=0x7e).
pub fn ln(ud: c_int, pad: c_int, sad: c_int) -> Result<bool, LibgpibError> {
    let pad = PrimaryAddress::new(pad).map_err(|_| bad_argument("ibln"))?;
    let sad = SecondaryAddress::new(sad).map_err(|_| bad_argument("ibln"))?;
    traditional::ibln(ud, pad, sad).map_err(|e| failed("ibln", e))
}

/// `ReadStatusByte(board, address)`: serial-polls one device (address as
/// `MakeAddr(pad, sad)`).
pub fn read_status_byte(board: c_int, address: u16) -> Result<u8, LibgpibError> {
    multidevice::ReadStatusByte(board, Addr4882 { addr: address })
        .map(|r| (r & 0xff) as u8)
        .map_err(|e| failed("ReadStatusByte", e))
}

/// `TestSRQ(board)`: whether SRQ is asserted.
pub fn test_srq(board: c_int) -> Result<bool, LibgpibError> {
    multidevice::TestSRQ(board).map_err(|e| failed("TestSRQ", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_words_keep_every_bit() {
        for word in [0, 1, 0x00ff, 0xff00, 0x8001, 0xa5a5, 0xffff] {
            let l = IbLineStatus {
                valid_dav: word & 0x1 != 0,
                valid_ndac: word & 0x2 != 0,
                valid_nrfd: word & 0x4 != 0,
                valid_ifc: word & 0x8 != 0,
                valid_ren: word & 0x10 != 0,
                valid_srq: word & 0x20 != 0,
                valid_atn: word & 0x40 != 0,
                valid_eoi: word & 0x80 != 0,
                bus_dav: word & 0x100 != 0,
                bus_ndac: word & 0x200 != 0,
                bus_nrfd: word & 0x400 != 0,
                bus_ifc: word & 0x800 != 0,
                bus_ren: word & 0x1000 != 0,
                bus_srq: word & 0x2000 != 0,
                bus_atn: word & 0x4000 != 0,
                bus_eoi: word & 0x8000 != 0,
            };
            assert_eq!(line_word(&l), word);
        }
    }

    #[test]
    fn eos_words_round_trip() {
        for mode in [
            0,
            abi::REOS | 0x0a,
            abi::REOS | abi::BIN | 0xff,
            abi::XEOS | 0x0d,
        ] {
            assert_eq!(eos_mode(mode).as_mode(), mode);
        }
    }

    #[test]
    fn bad_arguments_are_refused_before_libgpib() {
        assert_eq!(timeout("ibtmo", 18).err(), Some(bad_argument("ibtmo")));
        assert_eq!(timeout("ibtmo", -1).err(), Some(bad_argument("ibtmo")));
        assert_eq!(
            option("ibask", 0x7777).err().map(|e| e.iberr),
            Some(abi::EARG)
        );
        assert_eq!(find("a\0b").unwrap_err(), bad_argument("ibfind"));
    }
}
