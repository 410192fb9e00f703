//! `gpib::trace::vcd::VcdReader` (a logic analyzer's VCD, as `gpib-diag trace check`
//! reads it) on arbitrary bytes, its changes fed to the handshake check.
//!
//! Asserts: no panic; times never decrease; a header read has a GPIB line; memory
//! stays bounded whatever the header claims (libFuzzer's -rss_limit_mb catches a
//! token list or a line kept whole).
#![no_main]

use gpib::trace::check::{Checker, Limits};
use gpib::trace::vcd::VcdReader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(mut r) = VcdReader::new(data) else {
        return;
    };
    assert_ne!(r.present(), 0);
    assert!(r.tick_ps() > 0);
    let mut checker = Checker::new(Limits::default(), 8);
    let mut last = 0u64;
    while let Ok(Some((t, s))) = r.next_change() {
        assert!(t >= last, "time went back from {last} to {t}");
        last = t;
        checker.change(t, s);
    }
    let (kept, count) = checker.finish();
    assert!(kept.len() as u64 <= count && kept.len() <= 8);
});
