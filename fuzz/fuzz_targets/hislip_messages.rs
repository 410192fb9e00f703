//! The HiSLIP message codec the gateway and the client use, and the sub-address
//! parser, on arbitrary bytes. Reading must return an error, never panic, and never
//! hold more than the input's length plus a header, whatever a header claims.
#![no_main]

use gpib::hislip;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = data;
    // Messages one after another, as a channel reads them, within a 64 KiB limit.
    while let Ok(m) = hislip::read_message(&mut r, 1 << 16) {
        assert!(m.payload.len() <= data.len());
        assert_eq!(m.header.len, m.payload.len() as u64);
        let again = hislip::encode(m.header.kind, m.header.control, m.header.param, &m.payload);
        assert_eq!(hislip::read_message(&mut &again[..], 1 << 16).unwrap(), m);
    }
    // A payload too large is skipped as the gateway does: drained, never held.
    let mut r = data;
    if let Ok(h) = hislip::read_header(&mut r) {
        let _ = hislip::discard(&mut r, h.len);
    }
    if let Ok(name) = std::str::from_utf8(data) {
        if let Ok(Some((b, a))) = hislip::sub_address_target(name) {
            let again = hislip::gateway_sub_address(b, a.primary.get());
            assert_eq!(hislip::sub_address_target(&again), Ok(Some((b, a))));
        }
        let _ = name.parse::<gpib::NetworkResource>();
    }
});
