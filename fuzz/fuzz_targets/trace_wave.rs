//! Waveform synthesis of a trace read from arbitrary bytes, as `gpib-diag trace
//! export` and `trace check` do it: record by record through `TraceReader::draw_next`
//! into a `VcdWriter` and the handshake `Checker`, with the sample count an `.sr`
//! export measures first. The first byte picks the tick (1, 10, 100 or 1000 ns).
//!
//! Asserts: no panic (overflow checks on: every time from the file is checked);
//! ticks never decrease; a record that cannot be drawn is a `TraceError::Wave`.
#![no_main]

use gpib::trace::check::{Checker, Limits};
use gpib::trace::vcd::VcdWriter;
use gpib::trace::wave::Synth;
use gpib::trace::{TraceError, TraceReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, trace)) = data.split_first() else {
        return;
    };
    let tick_ns = [1u64, 10, 100, 1000][usize::from(pick & 3)];
    let Ok(mut reader) = TraceReader::new(trace) else {
        return;
    };
    let mut vcd = VcdWriter::new(std::io::sink(), tick_ns, &reader.header().label.clone())
        .expect("a sink takes the header");
    let mut checker = Checker::new(Limits::default(), 4);
    let mut synth = Synth::new(tick_ns);
    let mut last = 0u64;
    loop {
        let mut out = |t: u64, s: u16| {
            assert!(t >= last, "tick went back from {last} to {t}");
            last = t;
            vcd.change(t, s);
            checker.change(t.saturating_mul(tick_ns).saturating_mul(1000), s);
        };
        match reader.draw_next(&mut synth, &mut out) {
            Ok(true) => {}
            Ok(false) => break,
            Err(TraceError::Wave { source, .. }) => {
                assert!(!source.field.is_empty());
                break;
            }
            Err(_) => break,
        }
    }
    assert_eq!(synth.cursor(), last);
    // What an .sr export would count: the last tick and the final state's samples.
    let _samples = synth.cursor().saturating_add(11);
    vcd.finish().expect("a sink takes everything");
    let _ = checker.finish();
});
