//! A pyvisa-sim device file, then writes to its devices: the input is the file's
//! text, a NUL byte, then the writes (one per line). A line starting with `*` and a
//! digit `n` is the rest of the line repeated 4^n times (up to 64 KiB), for writes
//! as large as a bus carries against the file's setter patterns.
//!
//! Asserts: no panic; the file holds at most `expanded_budget` bytes once its aliases
//! are expanded; every write is answered within a time bound (3 s, far above what a
//! bounded pattern takes even under ASan and coverage instrumentation, far below what
//! an unbounded one took: a write must never run long while the simulator is
//! locked); answers are bounded.
#![no_main]

use std::time::{Duration, Instant};

use gpib::sim::instruments::pyvisa_sim::{expanded_budget, DeviceFile, MAX_INPUT};
use libfuzzer_sys::fuzz_target;

/// The largest write made from one line.
const MAX_WRITE: usize = 64 << 10;
/// The most one write may take.
const BOUND: Duration = Duration::from_secs(3);

fn write_of(line: &str) -> Vec<u8> {
    let b = line.as_bytes();
    if let [b'*', n @ b'0'..=b'9', rest @ ..] = b {
        if rest.is_empty() {
            return Vec::new();
        }
        let times = 4usize.saturating_pow(u32::from(n - b'0'));
        let len = rest
            .len()
            .saturating_mul(times)
            .min(MAX_WRITE)
            .min(MAX_INPUT);
        return rest.iter().copied().cycle().take(len).collect();
    }
    b.to_vec()
}

fuzz_target!(|data: &[u8]| {
    let (file, writes) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(text) = std::str::from_utf8(file) else {
        return;
    };
    let Ok(f) = DeviceFile::parse(text) else {
        return;
    };
    assert!(
        f.expanded_size() <= expanded_budget(text.len()),
        "{} bytes expanded from {}",
        f.expanded_size(),
        text.len()
    );
    let writes = String::from_utf8_lossy(writes);
    for name in f.device_names().unwrap_or_default().iter().take(4) {
        let Ok(mut dev) = f.device(name, "GPIB INSTR") else {
            continue;
        };
        for line in writes.lines().take(16) {
            let msg = write_of(line);
            let mut extra = |_: &[u8]| None;
            let started = Instant::now();
            let (answers, _error) = dev.message(&msg, &mut extra);
            let took = started.elapsed();
            assert!(took < BOUND, "a write of {} bytes took {took:?}", msg.len());
            assert!(answers.len() <= 1024, "{} answers", answers.len());
        }
    }
});
