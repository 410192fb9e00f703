//! The library's errors built from libgpib's: the kind from `iberr`, a message with
//! linux-gpib's figures, the [`LibgpibError`] as source.

use super::{kind_for_iberr, Call, LibgpibError, StatusWord, IBERR_NAMES};
use crate::error::{Error, ErrorKind};
use crate::Timeout;

/// A count linux-gpib reported (`ibcntl`), within `0..=max`.
pub(super) fn clamp_count(count: i64, max: usize) -> usize {
    usize::try_from(count).unwrap_or(0).min(max)
}

/// Builds the library's error for a failed call, keeping linux-gpib's as its source.
#[cold]
pub(super) fn driver_error(
    what: &'static str,
    call: Call,
    e: LibgpibError,
    count: Option<usize>,
    timeout: Timeout,
) -> Error {
    let code = e.iberr;
    let kind = kind_for_iberr(code, call, e.timed_out());
    let (name, meaning) = IBERR_NAMES
        .iter()
        .find(|(c, ..)| *c == code)
        .map_or(("iberr", "unknown error"), |(_, n, m)| (*n, *m));
    let mut message = match kind {
        ErrorKind::Timeout | ErrorKind::CommandTimeout => format!(
            "{what} timed out after {} with {} byte(s) transferred",
            timeout
                .duration()
                .map_or("no timeout".into(), |d| format!("{d:?}")),
            count.unwrap_or(0)
        ),
        _ => format!("{what} failed: {meaning}"),
    };
    message.push_str(&format!(
        " (linux-gpib {name} = {code}, ibsta {})",
        StatusWord(e.ibsta)
    ));
    let transferred = match kind {
        ErrorKind::Timeout
        | ErrorKind::CommandTimeout
        | ErrorKind::NoListener
        | ErrorKind::BusConflict => Some(count.unwrap_or(0)),
        _ => count,
    };
    Error::Backend {
        kind,
        message,
        transferred,
        source: Box::new(e),
    }
}
