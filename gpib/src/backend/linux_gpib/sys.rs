//! The one libgpib call the backend makes through linux-gpib-sys (the crate
//! linux-gpib-rs is built on) instead of linux-gpib-rs: `ibwrt` of data that is not
//! UTF-8 while linux-gpib-rs's debug logging is on.
//!
//! Why: linux-gpib-rs's `traditional::ibwrt` formats the data as UTF-8 for its debug
//! log line, after the call, with `?`: binary data is sent and the wrapper then
//! answers `ValueError` instead of the count (and with the status of a failed write
//! lost). Only then is this call made; otherwise the wrapper is used.

use std::os::raw::{c_long, c_void};

use linux_gpib_rs::lowlevel::utility;

use super::status::LibgpibError;
use crate::abi;

/// Where linux-gpib-rs's `ibwrt` wrapper logs (`log::debug!` in its module).
const WRAPPER_TARGET: &str = "linux_gpib_rs::lowlevel::traditional";

/// Whether linux-gpib-rs's `ibwrt` would send `data` and then fail: its debug log is
/// on and `data` is not UTF-8. Costs one check of the log level when logging is off.
pub fn wrapper_would_fail_write(data: &[u8]) -> bool {
    log::log_enabled!(target: WRAPPER_TARGET, log::Level::Debug)
        && std::str::from_utf8(data).is_err()
}

/// `ibwrt(ud, data)` through linux-gpib-sys: the count sent, or the call's figures.
pub fn ibwrt(ud: i32, data: &[u8]) -> Result<i64, LibgpibError> {
    // A slice is never longer than isize::MAX, which fits a 64-bit long; on a 32-bit
    // long the count is capped and the call sends at most that many bytes.
    let count = c_long::try_from(data.len()).unwrap_or(c_long::MAX);
    // SAFETY: the pointer and count describe `data` (at most its length), which ibwrt
    // only reads and which outlives the call: ibwrt is synchronous and keeps no
    // pointer after it returns.
    #[allow(unsafe_code)]
    let ibsta = unsafe { linux_gpib_sys::ibwrt(ud, data.as_ptr().cast::<c_void>(), count) };
    // The count and error, right after the call on this thread (linux-gpib-rs's
    // utility functions: each a plain read of the thread's status).
    #[allow(clippy::useless_conversion)] // c_long is 32 bits on 32-bit targets
    let sent = i64::from(utility::ThreadIbcntl());
    if ibsta & abi::ERR != 0 {
        return Err(LibgpibError {
            call: "ibwrt",
            ibsta,
            iberr: utility::ThreadIberr(),
            count: sent,
        });
    }
    Ok(sent)
}
