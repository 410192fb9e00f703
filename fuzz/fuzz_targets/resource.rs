//! `str::parse::<gpib::Resource>()` on arbitrary text.
//!
//! The input is tried as UTF-8 when it is, and always as its lossy conversion.
//! Asserts: no panic; errors are `InvalidResource`; on success Display then parse
//! gives the same value, and Display is a fixed point.
#![no_main]

use gpib::{ErrorKind, Resource};
use libfuzzer_sys::fuzz_target;

fn check(text: &str) {
    match text.parse::<Resource>() {
        Ok(r) => {
            let shown = r.to_string();
            let back: Resource = shown
                .parse()
                .unwrap_or_else(|e| panic!("{text:?} parsed as {r:?}, shown {shown:?}, which does not parse: {e}"));
            assert_eq!(back, r, "{text:?} -> {shown:?}");
            assert_eq!(back.to_string(), shown);
            assert!(shown.starts_with("GPIB"), "{shown:?}");
        }
        Err(e) => assert_eq!(e.kind(), ErrorKind::InvalidResource, "{text:?}: {e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        check(s);
    } else {
        check(&String::from_utf8_lossy(data));
    }
});
