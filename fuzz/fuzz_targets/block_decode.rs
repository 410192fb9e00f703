//! `block::parse_header` and `block::decode` on arbitrary bytes.
//!
//! Asserts: no panic; a complete header is no longer than the input and than
//! `MAX_HEADER_LEN`; when `decode` succeeds, the body is a slice of the input that
//! starts right after the header, and re-encoding it in the detected format and
//! decoding again gives the same body (and, for the formats whose encoding is
//! canonical, the same bytes).
#![no_main]

use gpib::block::{self, BlockFormat, HeaderParse, MAX_HEADER_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&flags, data)) = input.split_first() else {
        return;
    };
    let ended = flags & 1 != 0;

    let header = match block::parse_header(data) {
        Ok(HeaderParse::Complete(h)) => {
            assert!(h.header_len <= data.len(), "{h:?} longer than {} bytes", data.len());
            assert!(h.header_len <= MAX_HEADER_LEN, "{h:?}");
            Some(h)
        }
        Ok(HeaderParse::NeedAtLeast(k)) => {
            assert!(k > data.len(), "NeedAtLeast({k}) with {} bytes", data.len());
            None
        }
        Err(e) => {
            assert_eq!(e.kind(), gpib::ErrorKind::MalformedBlock, "{e}");
            assert!(e.transferred().unwrap_or(0) <= data.len(), "{e}");
            None
        }
    };

    match block::decode(data, ended) {
        Ok(body) => {
            let h = header.expect("decode succeeded but parse_header did not give a header");
            assert_eq!(
                body.as_ptr() as usize - data.as_ptr() as usize,
                h.header_len,
                "body does not start after the header {h:?}"
            );
            if let Some(len) = h.body_len {
                assert_eq!(body.len() as u64, len, "{h:?}");
            }
            let mut wire = Vec::new();
            block::encode(h.format, body, &mut wire)
                .unwrap_or_else(|e| panic!("re-encoding {} bytes as {:?}: {e}", body.len(), h.format));
            let again = block::decode(&wire, true)
                .unwrap_or_else(|e| panic!("decoding our own {:?} encoding: {e}", h.format));
            assert_eq!(again, body, "{:?} round trip", h.format);
            match h.format {
                // One encoding per body: the wire form is ours up to the optional NL
                // after a definite-length body (and leading zeros in the length digits).
                BlockFormat::HpA | BlockFormat::HpI | BlockFormat::Indefinite => {
                    let original = if h.format == BlockFormat::HpA {
                        &data[..h.header_len + body.len()]
                    } else {
                        data
                    };
                    assert_eq!(&wire[..], original, "{:?} canonical form", h.format);
                }
                BlockFormat::Definite | BlockFormat::Parenthesised => {}
            }
        }
        Err(e) => {
            assert_eq!(e.kind(), gpib::ErrorKind::MalformedBlock, "{e}");
            assert!(e.transferred().unwrap_or(0) <= data.len(), "{e}");
        }
    }
});
