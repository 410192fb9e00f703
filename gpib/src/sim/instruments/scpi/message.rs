//! IEEE 488.2 program messages as the instrument parses them: where a message ends
//! (a NL outside any block), block parameters, and the small text helpers.

use crate::block::{self, BlockFormat, HeaderParse};

use super::MAX_BLOCK;

/// Where the program message at the start of `msg` ends, as far as the bytes so far
/// tell: `Ok(n)` when a NL outside any block ends it after `n` bytes, `Err(k)` when
/// more bytes are needed (scanning may resume at `k`: no block starts before it).
///
/// A block whose length cannot be held (over [`MAX_BLOCK`], or overflowing) is not
/// waited for: the next NL or END ends its message, whose unit then reports the error.
pub(super) fn message_end(msg: &[u8], from: usize) -> Result<usize, usize> {
    let mut i = from;
    while i < msg.len() {
        match msg[i] {
            b'\n' => return Ok(i + 1),
            b'#' => match block::parse_header(&msg[i..]) {
                Ok(HeaderParse::Complete(h)) => match h.body_len.map(usize::try_from) {
                    Some(Ok(l)) if l <= MAX_BLOCK => {
                        let end = i + h.header_len + l;
                        if end > msg.len() {
                            return Err(i);
                        }
                        i = end;
                    }
                    Some(_) => i += h.header_len,
                    // `#0` and `#I` end only with END.
                    None => return Err(i),
                },
                Ok(HeaderParse::NeedAtLeast(_)) => return Err(i),
                Err(_) => i += 1,
            },
            _ => i += 1,
        }
    }
    Err(msg.len())
}

/// A reading in SCPI's NR3 form: `+1.23456789E+00`.
pub(super) fn sci(v: f64) -> String {
    let s = format!("{v:+.8E}");
    match s.split_once('E') {
        Some((m, e)) => {
            let exp: i32 = e.parse().unwrap_or(0);
            format!("{m}E{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
        }
        None => s,
    }
}

pub(super) fn trim(b: &[u8]) -> &[u8] {
    let s = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let e = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(s, |e| e + 1);
    &b[s..e.max(s)]
}

/// The block parameter starting at `msg[at]` (a `#`): its body when it is valid,
/// and where the next unit starts. An invalid block gives its SCPI error (code, text)
/// and where the rest of its unit ends: a body shorter than announced, a length over [`MAX_BLOCK`], or
/// bytes other than white space between the body and the `;` or NL that follows.
pub(super) fn block_parameter(
    msg: &[u8],
    at: usize,
) -> (Result<&[u8], (i32, &'static str)>, usize) {
    let unit_end = |from: usize| {
        msg[from.min(msg.len())..]
            .iter()
            .position(|&b| matches!(b, b';' | b'\n'))
            .map_or(msg.len(), |k| from + k + 1)
    };
    let h = match block::parse_header(&msg[at..]) {
        Ok(HeaderParse::Complete(h)) => h,
        _ => {
            return (Err((-161, "Invalid block data")), unit_end(at));
        }
    };
    let body_start = at + h.header_len;
    let Some(len) = h.body_len else {
        // `#0` (and `#I`): the body runs to the END that ended the message.
        let mut body = &msg[body_start..];
        if h.format == BlockFormat::Indefinite {
            match body.split_last() {
                Some((b'\n', rest)) => body = rest,
                _ => {
                    return (Err((-161, "Invalid block data")), msg.len());
                }
            }
        }
        return (Ok(body), msg.len());
    };
    let body_end = match usize::try_from(len) {
        Ok(l) if l <= MAX_BLOCK => body_start + l,
        _ => {
            return (Err((-223, "Too much data")), unit_end(body_start));
        }
    };
    if body_end > msg.len() {
        return (Err((-161, "Invalid block data")), msg.len());
    }
    let mut j = body_end;
    while j < msg.len() && matches!(msg[j], b' ' | b'\t' | b'\r') {
        j += 1;
    }
    if j < msg.len() && !matches!(msg[j], b';' | b'\n') {
        return (Err((-161, "Invalid block data")), unit_end(j));
    }
    (Ok(&msg[body_start..body_end]), (j + 1).min(msg.len()))
}
