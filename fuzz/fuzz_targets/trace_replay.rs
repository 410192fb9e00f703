//! The simulator's `replay` instrument built from arbitrary trace bytes, then driven
//! by a script (format: `fuzz/src/lib.rs`).
//!
//! Input: byte 0 is the recorded device's address (modulo 31), bytes 1-2 the trace's
//! length (little-endian), then the trace, then the script.
//! Asserts: no panic, no hang (run with `-timeout=10`); a replay that refuses the
//! recording says so with an error, never more memory than the trace holds.
#![no_main]

use gpib::sim::instruments::Replay;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let address = data[0] % 31;
    let len = usize::from(u16::from_le_bytes([data[1], data[2]]));
    let rest = &data[3..];
    let (trace, script) = rest.split_at(len.min(rest.len()));
    let Ok(replay) = Replay::read_from(trace, address, "fuzz") else {
        return;
    };
    gpib_fuzz::drive(Box::new(replay), script);
});
