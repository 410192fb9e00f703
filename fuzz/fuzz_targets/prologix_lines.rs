//! The Prologix server's side: arbitrary bytes from a client (`++` command lines, data
//! lines with ESC escapes, `++read` of the bench's instruments) fed to one connection's
//! parser over the simulated bench.
//!
//! Asserts, besides no panic and no hang: the answers stay bounded by what the input
//! can ask for (each line gets at most one answer line or one device response).
#![no_main]

use gpib::{sim, Address, Bus};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() > 4096 {
        return;
    }
    let bus = Bus::new(sim::bench().board(0).unwrap());
    let mut out = Vec::new();
    let default = Address::try_from(22u8).ok();
    gpib::serve::prologix_session(bus, data, &mut out, default);
    // A line is at least one byte; the bench's longest answer is a block of at most
    // 64 MiB, which no 4 KiB script can ask for more than a few hundred times.
    let lines = data.iter().filter(|&&b| b == b'\n' || b == b'\r').count() + 1;
    assert!(out.len() <= lines.saturating_mul(64 << 20), "{} bytes out", out.len());
});
