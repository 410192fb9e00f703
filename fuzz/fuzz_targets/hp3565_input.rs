//! The built-in HP3565 driven by a script (format: `fuzz/src/lib.rs`): writes of
//! arbitrary bytes with fuzz-chosen EOI and split points, interleaved with reads,
//! block reads, device clears, serial polls and triggers.
//! Asserts: no panic, no hang (run with `-timeout=10`).
#![no_main]

use gpib::sim::instruments::Hp3565;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|script: &[u8]| {
    gpib_fuzz::drive(Box::new(Hp3565::new()), script);
});
