//! The boards open in this process: a board is opened once (libgpib aborts when one
//! descriptor is used from two threads at once).
//!
//! This refuses; it shares nothing. Sharing a board is the resource manager's job
//! ([`crate::open`] asks the linux-gpib connector only for a board its map does not
//! hold), but a [`LinuxGpibBoard`](super::LinuxGpibBoard) is a backend, not a `Bus`:
//! a second `open_index` of a board (directly, or by a second, isolated
//! `ResourceManager`) has no bus to join, and handing it a descriptor would let two
//! threads reach libgpib at once. So it is refused, pointing at the shared way.

use std::os::raw::c_int;
use std::sync::Mutex;

use super::NAME;
use crate::error::Error;

/// Board indices (or, when the index is unknown, descriptors) in use in this process.
static IN_USE: Mutex<Vec<c_int>> = Mutex::new(Vec::new());

pub(super) fn claim(key: c_int) -> bool {
    let mut v = IN_USE.lock().unwrap_or_else(|p| p.into_inner());
    if v.contains(&key) {
        false
    } else {
        v.push(key);
        true
    }
}

pub(super) fn release(key: c_int) {
    let mut v = IN_USE.lock().unwrap_or_else(|p| p.into_inner());
    v.retain(|&k| k != key);
}

pub(super) fn in_use(what: &str) -> Error {
    Error::BackendUnavailable {
        backend: NAME.into(),
        hint: format!(
            "{what} is already open in this process: open its devices through gpib::open \
             (the process's manager shares the board), or clone the one gpib::Bus on it \
             (libgpib aborts when one descriptor is used from two threads at once)"
        ),
    }
}
