//! IEEE 488.2 arbitrary blocks and their vendor cousins: headers, encoding, decoding,
//! and typed values.
//!
//! | format | wire form | ends |
//! |---|---|---|
//! | [`BlockFormat::Definite`] | `#<n><len><bytes>` (n = 1..=9 digits of len) | after len bytes (then NL+END) |
//! | [`BlockFormat::Indefinite`] | `#0<bytes>` | NL with END |
//! | [`BlockFormat::HpA`] | `#A<len: u16 big-endian><bytes>` | after len bytes |
//! | [`BlockFormat::HpI`] | `#I<bytes>` | END on the last data byte |
//! | [`BlockFormat::Parenthesised`] | `#(<len>)<bytes>` (Rohde & Schwarz) | after len bytes |
//!
//! Reading a block straight from the bus into a caller's buffer is
//! [`crate::Device::read_block_into`]; this module is pure and has no I/O.

use crate::error::Error;

/// Longest header any format here has: `#(` + 20 digits + `)`.
pub const MAX_HEADER_LEN: usize = 23;

/// The block formats this crate reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockFormat {
    /// IEEE 488.2 definite length, `#<n><len>`.
    Definite,
    /// IEEE 488.2 indefinite length, `#0`, ended by NL+END.
    Indefinite,
    /// HP's `#A` with a 16-bit big-endian length.
    HpA,
    /// HP's `#I`, ended by END (EOI) on the last byte.
    HpI,
    /// Rohde & Schwarz `#(<len>)`.
    Parenthesised,
}

/// A parsed block header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHeader {
    /// Which format.
    pub format: BlockFormat,
    /// Bytes of header (including `#`).
    pub header_len: usize,
    /// The body's length, for formats that state it.
    pub body_len: Option<u64>,
}

/// Result of looking at the start of a block that may not have fully arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderParse {
    /// The header is complete.
    Complete(BlockHeader),
    /// At least this many bytes are needed in all before the header can be parsed.
    NeedAtLeast(usize),
}

fn malformed(reason: impl Into<String>, read: usize) -> Error {
    Error::MalformedBlock {
        reason: reason.into(),
        read,
    }
}

fn show(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", b as char)
    } else {
        format!("0x{b:02X}")
    }
}

/// Parses a block header from the first bytes of a response.
///
/// `bytes` is what has arrived so far; `read` in any error is `bytes.len()`.
pub fn parse_header(bytes: &[u8]) -> Result<HeaderParse, Error> {
    // The common case first, with nothing else to decide: a whole definite-length
    // header. Everything else (other formats, a header still arriving, errors) is
    // `parse_any`'s.
    match definite_header(bytes) {
        Some(h) => Ok(HeaderParse::Complete(h)),
        None => parse_any(bytes),
    }
}

/// The header at the start of `bytes` when it is a whole, well-formed
/// definite-length one (`#<n><n digits>`); `None` for anything else
/// ([`parse_header`] tells what).
#[inline]
pub(crate) fn definite_header(bytes: &[u8]) -> Option<BlockHeader> {
    let [b'#', kind @ b'1'..=b'9', rest @ ..] = bytes else {
        return None;
    };
    let digits = usize::from(kind - b'0');
    let mut len: u64 = 0;
    for &d in rest.get(..digits)? {
        if !d.is_ascii_digit() {
            return None;
        }
        // At most 9 digits: under 10^9, no overflow.
        len = len * 10 + u64::from(d - b'0');
    }
    Some(BlockHeader {
        format: BlockFormat::Definite,
        header_len: 2 + digits,
        body_len: Some(len),
    })
}

/// [`parse_header`] for every format and every outcome.
#[inline(never)]
fn parse_any(bytes: &[u8]) -> Result<HeaderParse, Error> {
    let n = bytes.len();
    let Some(&first) = bytes.first() else {
        return Ok(HeaderParse::NeedAtLeast(2));
    };
    if first != b'#' {
        return Err(malformed(
            format!(
                "expected '#' at the start of a block, found {}",
                show(first)
            ),
            n,
        ));
    }
    let Some(&kind) = bytes.get(1) else {
        return Ok(HeaderParse::NeedAtLeast(2));
    };
    match kind {
        b'0' => Ok(HeaderParse::Complete(BlockHeader {
            format: BlockFormat::Indefinite,
            header_len: 2,
            body_len: None,
        })),
        b'1'..=b'9' => {
            let digits = usize::from(kind - b'0');
            let header_len = 2 + digits;
            if n < header_len {
                return Ok(HeaderParse::NeedAtLeast(header_len));
            }
            let mut len: u64 = 0;
            for &d in &bytes[2..header_len] {
                if !d.is_ascii_digit() {
                    return Err(malformed(
                        format!(
                            "definite-length header #{} announces {digits} digit(s) but has {} among them",
                            kind as char,
                            show(d)
                        ),
                        n,
                    ));
                }
                // At most 9 digits: under 10^9, no overflow.
                len = len * 10 + u64::from(d - b'0');
            }
            Ok(HeaderParse::Complete(BlockHeader {
                format: BlockFormat::Definite,
                header_len,
                body_len: Some(len),
            }))
        }
        b'A' => {
            if n < 4 {
                return Ok(HeaderParse::NeedAtLeast(4));
            }
            Ok(HeaderParse::Complete(BlockHeader {
                format: BlockFormat::HpA,
                header_len: 4,
                body_len: Some(u64::from(u16::from_be_bytes([bytes[2], bytes[3]]))),
            }))
        }
        b'I' => Ok(HeaderParse::Complete(BlockHeader {
            format: BlockFormat::HpI,
            header_len: 2,
            body_len: None,
        })),
        b'(' => {
            let mut len: u64 = 0;
            for (i, &d) in bytes.iter().enumerate().skip(2) {
                if d == b')' {
                    if i == 2 {
                        return Err(malformed("empty length in #() header", n));
                    }
                    return Ok(HeaderParse::Complete(BlockHeader {
                        format: BlockFormat::Parenthesised,
                        header_len: i + 1,
                        body_len: Some(len),
                    }));
                }
                if !d.is_ascii_digit() {
                    return Err(malformed(
                        format!("non-digit {} in #(len) header", show(d)),
                        n,
                    ));
                }
                if i >= MAX_HEADER_LEN - 1 {
                    return Err(malformed("#(len) header longer than 20 digits", n));
                }
                len = len
                    .checked_mul(10)
                    .and_then(|l| l.checked_add(u64::from(d - b'0')))
                    .ok_or_else(|| {
                        malformed(
                            format!("#(len) length does not fit 64 bits (over {})", u64::MAX),
                            n,
                        )
                    })?;
            }
            Ok(HeaderParse::NeedAtLeast(n + 1))
        }
        other => Err(malformed(
            format!(
                "unknown block type {} after '#' (expected a digit, 'A', 'I' or '(')",
                show(other)
            ),
            n,
        )),
    }
}

/// Appends the header of a block of `format` with a body of `len` bytes to `out` (the
/// body follows it; an indefinite block then ends with NL and END).
///
/// Errors when the length does not fit the format (over 65,535 bytes for `#A`, over
/// 999,999,999 for definite length).
pub fn encode_header(format: BlockFormat, len: usize, out: &mut Vec<u8>) -> Result<(), Error> {
    match format {
        BlockFormat::Definite => {
            if len > 999_999_999 {
                return Err(Error::InvalidArgument(format!(
                    "{len} bytes do not fit a definite-length block (at most 999,999,999)"
                )));
            }
            // Up to nine digits, written without an allocation.
            let mut digits = [0u8; 9];
            let mut at = digits.len();
            let mut rest = len;
            loop {
                at -= 1;
                digits[at] = b'0' + (rest % 10) as u8;
                rest /= 10;
                if rest == 0 {
                    break;
                }
            }
            out.push(b'#');
            out.push(b'0' + (digits.len() - at) as u8);
            out.extend_from_slice(&digits[at..]);
        }
        BlockFormat::Indefinite => out.extend_from_slice(b"#0"),
        BlockFormat::HpA => {
            let l = u16::try_from(len).map_err(|_| {
                Error::InvalidArgument(format!(
                    "{len} bytes do not fit an #A block (at most 65,535)"
                ))
            })?;
            out.extend_from_slice(b"#A");
            out.extend_from_slice(&l.to_be_bytes());
        }
        BlockFormat::HpI => out.extend_from_slice(b"#I"),
        BlockFormat::Parenthesised => {
            out.extend_from_slice(b"#(");
            out.extend_from_slice(len.to_string().as_bytes());
            out.push(b')');
        }
    }
    Ok(())
}

/// Appends `data` as a block of `format` to `out`.
///
/// Errors when the data does not fit the format (over 65,535 bytes for `#A`, over
/// 999,999,999 for definite length).
pub fn encode(format: BlockFormat, data: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
    out.reserve(data.len() + MAX_HEADER_LEN + 1);
    encode_header(format, data.len(), out)?;
    out.extend_from_slice(data);
    if format == BlockFormat::Indefinite {
        out.push(b'\n');
    }
    Ok(())
}

/// Decodes a whole block held in memory; `ended` says END (EOI) came with the last byte.
///
/// Returns the body. For definite-length formats, bytes after the body other than a
/// final NL are an error; a body shorter than announced is an error that says how
/// many bytes arrived.
pub fn decode(bytes: &[u8], ended: bool) -> Result<&[u8], Error> {
    let n = bytes.len();
    let header = match parse_header(bytes)? {
        HeaderParse::Complete(h) => h,
        HeaderParse::NeedAtLeast(k) => {
            return Err(malformed(
                format!("truncated header: {n} byte(s), need at least {k}"),
                n,
            ))
        }
    };
    let rest = &bytes[header.header_len..];
    match header.body_len {
        Some(len) => {
            let len_usize = usize::try_from(len).unwrap_or(usize::MAX);
            if rest.len() < len_usize {
                return Err(malformed(
                    format!(
                        "header announces {len} byte(s) but only {} arrived",
                        rest.len()
                    ),
                    n,
                ));
            }
            let (body, tail) = rest.split_at(len_usize);
            match tail {
                [] | [b'\n'] => Ok(body),
                _ => Err(malformed(
                    format!("{} unexpected byte(s) after the block body", tail.len()),
                    n,
                )),
            }
        }
        None => {
            if !ended {
                return Err(malformed(
                    "missing END (EOI): an indefinite block ends only with END",
                    n,
                ));
            }
            if header.format == BlockFormat::Indefinite {
                match rest.split_last() {
                    Some((b'\n', body)) => Ok(body),
                    _ => Err(malformed("indefinite-length block must end with NL+END", n)),
                }
            } else {
                Ok(rest)
            }
        }
    }
}

/// Byte order of values in a binary block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Endian {
    /// Most significant byte first (IEEE 488.2's default, "normal" byte order).
    #[default]
    Big,
    /// Least significant byte first ("swapped").
    Little,
}

/// A fixed-size number that can be read from a binary block.
pub trait BlockValue: Copy + sealed::Sealed {
    /// Size in bytes.
    const SIZE: usize;
    /// Decodes one value from exactly `SIZE` bytes.
    fn from_bytes(bytes: &[u8], endian: Endian) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! block_value {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl BlockValue for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn from_bytes(bytes: &[u8], endian: Endian) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(bytes);
                match endian {
                    Endian::Big => <$t>::from_be_bytes(a),
                    Endian::Little => <$t>::from_le_bytes(a),
                }
            }
        }
    )*};
}
block_value!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// Decodes a block body into typed values.
///
/// ```
/// use gpib::block::{values, Endian};
/// let v: Vec<i16> = values(&[0x00, 0x01, 0xFF, 0xFE], Endian::Big).unwrap();
/// assert_eq!(v, [1, -2]);
/// ```
pub fn values<T: BlockValue>(body: &[u8], endian: Endian) -> Result<Vec<T>, Error> {
    if body.len() % T::SIZE != 0 {
        return Err(malformed(
            format!(
                "body of {} byte(s) is not a whole number of {}-byte values",
                body.len(),
                T::SIZE
            ),
            body.len(),
        ));
    }
    Ok(body
        .chunks_exact(T::SIZE)
        .map(|c| T::from_bytes(c, endian))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_alone() {
        let mut v = Vec::new();
        for (len, want) in [
            (0, &b"#10"[..]),
            (9, b"#19"),
            (10, b"#210"),
            (400_000, b"#6400000"),
        ] {
            v.clear();
            encode_header(BlockFormat::Definite, len, &mut v).unwrap();
            assert_eq!(v, want);
        }
        v.clear();
        encode_header(BlockFormat::Definite, 999_999_999, &mut v).unwrap();
        assert_eq!(v, b"#9999999999");
        assert!(encode_header(BlockFormat::Definite, 1_000_000_000, &mut v).is_err());
        v.clear();
        encode_header(BlockFormat::Parenthesised, 12, &mut v).unwrap();
        assert_eq!(v, b"#(12)");
        assert!(encode_header(BlockFormat::HpA, 70000, &mut v).is_err());
    }
    use crate::ErrorKind;

    const ALL: [BlockFormat; 5] = [
        BlockFormat::Definite,
        BlockFormat::Indefinite,
        BlockFormat::HpA,
        BlockFormat::HpI,
        BlockFormat::Parenthesised,
    ];

    fn sample(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 % 256) as u8).collect()
    }

    #[test]
    fn round_trip_every_format_and_size() {
        for format in ALL {
            for n in [0usize, 1, 9, 10, 11, 255, 1000, 65535] {
                let mut data = sample(n);
                if n > 3 {
                    data[1] = b'\n'; // a newline inside the data never ends a block
                    data[n / 2] = b'\n';
                }
                let mut wire = Vec::new();
                encode(format, &data, &mut wire).unwrap();
                let body = decode(&wire, true).unwrap_or_else(|e| panic!("{format:?} {n}: {e}"));
                assert_eq!(body, &data[..], "{format:?} {n}");
            }
        }
    }

    #[test]
    fn wire_forms() {
        let mut w = Vec::new();
        encode(BlockFormat::Definite, b"hello", &mut w).unwrap();
        assert_eq!(w, b"#15hello");
        w.clear();
        encode(BlockFormat::Definite, &[], &mut w).unwrap();
        assert_eq!(w, b"#10");
        w.clear();
        encode(BlockFormat::Indefinite, b"ab", &mut w).unwrap();
        assert_eq!(w, b"#0ab\n");
        w.clear();
        encode(BlockFormat::HpA, b"ab", &mut w).unwrap();
        assert_eq!(w, b"#A\x00\x02ab");
        w.clear();
        encode(BlockFormat::HpI, b"ab", &mut w).unwrap();
        assert_eq!(w, b"#Iab");
        w.clear();
        encode(BlockFormat::Parenthesised, b"abc", &mut w).unwrap();
        assert_eq!(w, b"#(3)abc");
        assert_eq!(
            encode(BlockFormat::HpA, &sample(70000), &mut w)
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidArgument
        );
    }

    #[test]
    fn definite_with_trailing_newline() {
        assert_eq!(decode(b"#15hello\n", true).unwrap(), b"hello");
        assert_eq!(decode(b"#2100123456789", true).unwrap(), b"0123456789");
    }

    fn err(bytes: &[u8], ended: bool) -> (String, usize) {
        let e = decode(bytes, ended).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MalformedBlock);
        (e.to_string(), e.transferred().unwrap())
    }

    #[test]
    fn malformed_cases_say_what_and_how_much() {
        let (m, n) = err(b"", true);
        assert!(m.contains("truncated header") && n == 0, "{m}");
        let (m, _) = err(b"X15hello", true);
        assert!(m.contains("expected '#'"), "{m}");
        let (m, n) = err(b"#3a5hello", true);
        assert!(
            m.contains("3 digit(s)") && m.contains("'a'") && n == 9,
            "{m}"
        );
        let (m, _) = err(b"#31", true);
        assert!(m.contains("truncated header"), "{m}");
        let (m, n) = err(b"#210hello", true);
        assert!(
            m.contains("announces 10 byte(s) but only 5 arrived") && n == 9,
            "{m}"
        );
        let (m, _) = err(b"#0hello", false);
        assert!(m.contains("missing END"), "{m}");
        let (m, _) = err(b"#0hello", true);
        assert!(m.contains("NL+END"), "{m}");
        let (m, _) = err(b"#Ihello", false);
        assert!(m.contains("missing END"), "{m}");
        let (m, _) = err(b"#15helloXX", true);
        assert!(m.contains("unexpected"), "{m}");
        let (m, _) = err(b"#Z", true);
        assert!(m.contains("unknown block type 'Z'"), "{m}");
        let (m, _) = err(b"#(1x)", true);
        assert!(m.contains("non-digit 'x'"), "{m}");
        let (m, _) = err(b"#()", true);
        assert!(m.contains("empty length"), "{m}");
        let (m, _) = err(b"#A\x00", true);
        assert!(m.contains("truncated"), "{m}");
        let (m, _) = err(b"#(123456789012345678901)", true);
        assert!(m.contains("longer than 20"), "{m}");
    }

    #[test]
    fn parenthesised_lengths_that_overflow_are_malformed() {
        // 2^64 + 5 wrapped to 5 in release builds and decoded "hello".
        let (m, _) = err(b"#(18446744073709551621)hello", true);
        assert!(m.contains("does not fit 64 bits"), "{m}");
        let (m, _) = err(b"#(99999999999999999999)", true);
        assert!(m.contains("does not fit 64 bits"), "{m}");
        let h = parse_header(b"#(18446744073709551615)").unwrap();
        assert!(matches!(
            h,
            HeaderParse::Complete(BlockHeader {
                body_len: Some(u64::MAX),
                ..
            })
        ));
    }

    #[test]
    fn header_needs_more() {
        assert_eq!(parse_header(b"#").unwrap(), HeaderParse::NeedAtLeast(2));
        assert_eq!(parse_header(b"#5").unwrap(), HeaderParse::NeedAtLeast(7));
        assert_eq!(parse_header(b"#(12").unwrap(), HeaderParse::NeedAtLeast(5));
        assert_eq!(
            parse_header(b"#9000000010").unwrap(),
            HeaderParse::Complete(BlockHeader {
                format: BlockFormat::Definite,
                header_len: 11,
                body_len: Some(10)
            })
        );
    }

    #[test]
    fn typed_values() {
        let f: Vec<f32> = values(&1.5f32.to_le_bytes(), Endian::Little).unwrap();
        assert_eq!(f, [1.5]);
        let d: Vec<f64> = values(&(-2.25f64).to_be_bytes(), Endian::Big).unwrap();
        assert_eq!(d, [-2.25]);
        let u: Vec<u16> = values(&[0x12, 0x34], Endian::Little).unwrap();
        assert_eq!(u, [0x3412]);
        let i: Vec<i32> = values(&[0xFF, 0xFF, 0xFF, 0xFE], Endian::Big).unwrap();
        assert_eq!(i, [-2]);
        let b: Vec<u8> = values(&[1, 2, 3], Endian::Big).unwrap();
        assert_eq!(b, [1, 2, 3]);
        let e = values::<u16>(&[1, 2, 3], Endian::Big).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MalformedBlock);
        assert!(values::<f64>(&[], Endian::Big).unwrap().is_empty());
    }
}
