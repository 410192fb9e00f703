//! `gpib::trace::TraceReader` on arbitrary bytes.
//!
//! Asserts: no panic, no allocation beyond the input (libFuzzer's -rss_limit_mb catches
//! a length field believed), every record read writes back to the same bytes).
#![no_main]

use gpib::trace::{TraceReader, TraceWriter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = TraceReader::new(data) else {
        return;
    };
    let header = reader.header().clone();
    let mut records = Vec::new();
    let mut good_end = reader.offset();
    loop {
        match reader.next_record() {
            Ok(Some(r)) => {
                records.push(r);
                good_end = reader.offset();
            }
            Ok(None) => break,
            Err(_) => break,
        }
    }
    // What was read writes back byte for byte (unknown records are not kept).
    if records.iter().all(|r| !matches!(r, gpib::trace::Record::Unknown { .. })) {
        let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
        for r in &records {
            w.write(r).unwrap();
        }
        let out = w.finish().unwrap();
        assert_eq!(&out[..], &data[..good_end as usize]);
    }
});
