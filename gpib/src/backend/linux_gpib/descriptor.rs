//! One transfer on one descriptor: the EOS, EOI and timeout settings it needs applied
//! (only when they changed), then one `ibwrt` or `ibrd`; addresses in libgpib's forms.

use std::os::raw::c_int;

use super::errors::{clamp_count, driver_error};
use super::status::LibgpibError;
use super::{calls, Applied, Call};
use crate::abi;
use crate::address::Address;
use crate::backend::{Eos, ReadEnd, ReadStatus};
use crate::error::Result;
use crate::Timeout;

/// Sets the EOS mode for the next read on `ud`: REOS (and BIN for 8-bit compares)
/// with the byte, or nothing at all; never XEOS.
pub(super) fn apply_eos(
    ud: c_int,
    applied: &mut Applied,
    eos: Option<Eos>,
    t: Timeout,
) -> Result<()> {
    if applied.eos == Some(eos) {
        return Ok(());
    }
    set_eos(ud, applied, eos, t)
}

/// [`apply_eos`] when the mode changes: one `ibeos` (out of line: most reads keep
/// the mode of the one before).
#[inline(never)]
fn set_eos(ud: c_int, applied: &mut Applied, eos: Option<Eos>, t: Timeout) -> Result<()> {
    applied.eos = None;
    calls::eos(ud, eos_mode(eos)).map_err(|e| driver_error("ibeos", Call::Other, e, None, t))?;
    applied.eos = Some(eos);
    Ok(())
}

/// Sets whether the next write on `ud` asserts EOI with its last byte.
pub(super) fn apply_eot(ud: c_int, applied: &mut Applied, eoi: bool, t: Timeout) -> Result<()> {
    if applied.eot == Some(eoi) {
        return Ok(());
    }
    set_eot(ud, applied, eoi, t)
}

/// [`apply_eot`] when the setting changes: one `ibeot` (out of line, as [`set_eos`]).
#[inline(never)]
fn set_eot(ud: c_int, applied: &mut Applied, eoi: bool, t: Timeout) -> Result<()> {
    applied.eot = None;
    calls::eot(ud, eoi).map_err(|e| driver_error("ibeot", Call::Other, e, None, t))?;
    applied.eot = Some(eoi);
    Ok(())
}

/// Sets `ud`'s timeout to the board's `t`.
pub(super) fn apply_timeout(ud: c_int, applied: &mut Applied, t: Timeout) -> Result<()> {
    if applied.timeout == Some(t) {
        return Ok(());
    }
    applied.timeout = None;
    calls::tmo(ud, t.linux_gpib_code())
        .map_err(|e| driver_error("ibtmo", Call::Other, e, None, t))?;
    applied.timeout = Some(t);
    Ok(())
}

/// One `ibwrt` on `ud`, EOI with the last byte when `eoi`.
pub(super) fn write_on(
    ud: c_int,
    applied: &mut Applied,
    data: &[u8],
    eoi: bool,
    t: Timeout,
) -> Result<usize> {
    apply_eot(ud, applied, eoi, t)?;
    match calls::wrt(ud, data) {
        Ok(sent) => Ok(clamp_count(sent, data.len())),
        Err(e) => Err(transfer_error("write", Call::Write, e, data.len(), t)),
    }
}

/// One `ibrd` on `ud` into `buf`, ending on EOS too when `eos` is given.
pub(super) fn read_on(
    ud: c_int,
    applied: &mut Applied,
    buf: &mut [u8],
    eos: Option<Eos>,
    t: Timeout,
) -> Result<ReadStatus> {
    if buf.is_empty() {
        return Ok(ReadStatus {
            count: 0,
            end: ReadEnd::BufferFull,
        });
    }
    apply_eos(ud, applied, eos, t)?;
    match calls::rd(ud, buf) {
        Ok(done) => {
            let n = clamp_count(done.count, buf.len());
            let on_eos = n > 0 && eos.is_some_and(|e| e.matches(buf[n - 1]));
            let end = if on_eos {
                ReadEnd::Eos
            } else if done.end {
                ReadEnd::Eoi
            } else if n == buf.len() {
                ReadEnd::BufferFull
            } else {
                // linux-gpib ends a short read only on END; treat anything else
                // as the end of the message rather than read again blindly.
                log::warn!("ibrd returned {n} of {} byte(s) without END", buf.len());
                ReadEnd::Eoi
            };
            Ok(ReadStatus { count: n, end })
        }
        Err(e) => Err(transfer_error("read", Call::Read, e, buf.len(), t)),
    }
}

/// The error of a failed `ibwrt` or `ibrd` of `len` bytes, with the count it moved
/// (out of line: the transfers' own code stays small).
#[cold]
#[inline(never)]
fn transfer_error(
    what: &'static str,
    call: Call,
    e: LibgpibError,
    len: usize,
    t: Timeout,
) -> crate::Error {
    let moved = clamp_count(e.count, len);
    driver_error(what, call, e, Some(moved), t)
}

/// The `ibeos` mode word for `eos`: REOS (with BIN for 8-bit compares) and the byte,
/// or 0 (no EOS); never XEOS.
pub(super) fn eos_mode(eos: Option<Eos>) -> i32 {
    match eos {
        None => 0,
        Some(e) => abi::REOS | if e.eight_bit { abi::BIN } else { 0 } | i32::from(e.byte),
    }
}

/// `a` as libgpib's `(pad, sad)` arguments: the secondary address in its 0x60-offset
/// form (0x60 is secondary address 0), or 0 for none.
pub(super) fn lg_address(a: Address) -> (i32, i32) {
    let sad = a.secondary.map_or(0, |s| i32::from(s.to_ni()));
    (i32::from(a.primary.get()), sad)
}

/// `a` as an IEEE 488.2 `Addr4882_t` (`MakeAddr(pad, sad)`).
pub(super) fn addr4882(a: Address) -> u16 {
    let (pad, sad) = lg_address(a);
    // pad is 0..=30 and sad 0 or 0x60..=0x7e: both fit their byte.
    (pad as u16 & 0xff) | ((sad as u16 & 0xff) << 8)
}
