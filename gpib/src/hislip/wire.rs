//! Reading and writing HiSLIP messages on a byte stream, within limits: a payload
//! is read into memory only up to a limit the reader sets, and grows with the bytes
//! that arrive, never with what a header claims.

use std::io::{self, Read, Write};

use super::{encode, Header, Message, HEADER_LEN};

/// Why a message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The peer closed the stream between messages (a clean end).
    #[error("the peer closed the connection")]
    Closed,
    /// The stream ended inside a header or payload.
    #[error("message truncated: the stream ended {got} byte(s) into a {what}")]
    Truncated {
        /// "header" or "payload of N bytes".
        what: String,
        /// Bytes of it that arrived.
        got: usize,
    },
    /// The header does not start with `HS`.
    #[error("not a HiSLIP header: it starts with {}, expected \"HS\"", super::prologue_text(*.0))]
    BadPrologue([u8; 2]),
    /// The payload is longer than the reader takes.
    #[error("a {kind} message claims a {len}-byte payload; the limit is {limit}")]
    TooLarge {
        /// The message type's name.
        kind: &'static str,
        /// The claimed length.
        len: u64,
        /// The limit.
        limit: u64,
        /// The header, so that the caller may discard the payload and go on.
        header: Header,
    },
    /// A read timed out (or another I/O error), after `got` bytes of the message.
    #[error("I/O error after {got} byte(s) of a message: {source}")]
    Io {
        /// Bytes of the message read before the error.
        got: usize,
        /// The error (a timeout is `WouldBlock` or `TimedOut`).
        source: io::Error,
    },
}

impl ReadError {
    /// True for a read timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, ReadError::Io { source, .. } if matches!(source.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut))
    }
}

/// Fills `buf` from `r`; returns the count read before EOF, or the error with the
/// count read before it.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, (usize, io::Error)> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((got, e)),
        }
    }
    Ok(got)
}

/// Reads one header. A stream that ends before its first byte is [`ReadError::Closed`].
pub fn read_header(r: &mut impl Read) -> Result<Header, ReadError> {
    let mut b = [0u8; HEADER_LEN];
    let got = read_full(r, &mut b).map_err(|(got, source)| ReadError::Io { got, source })?;
    if got == 0 {
        return Err(ReadError::Closed);
    }
    if got < HEADER_LEN {
        // Two bytes are enough to tell a stranger from a short header.
        if got >= 2 && b[..2] != super::PROLOGUE {
            return Err(ReadError::BadPrologue([b[0], b[1]]));
        }
        return Err(ReadError::Truncated {
            what: "header".into(),
            got,
        });
    }
    Header::decode(&b).map_err(ReadError::BadPrologue)
}

/// Reads the payload of `h` into `out` (cleared first) when it is at most `limit`
/// bytes; memory grows with what arrives.
pub fn read_payload(
    r: &mut impl Read,
    h: &Header,
    limit: u64,
    out: &mut Vec<u8>,
) -> Result<(), ReadError> {
    out.clear();
    if h.len > limit {
        return Err(ReadError::TooLarge {
            kind: super::kind_name(h.kind),
            len: h.len,
            limit,
            header: *h,
        });
    }
    let n = r
        .by_ref()
        .take(h.len)
        .read_to_end(out)
        .map_err(|source| ReadError::Io {
            got: HEADER_LEN + out.len(),
            source,
        })?;
    if (n as u64) < h.len {
        return Err(ReadError::Truncated {
            what: format!("payload of {} bytes", h.len),
            got: n,
        });
    }
    Ok(())
}

/// Reads one message whose payload is at most `limit` bytes.
pub fn read_message(r: &mut impl Read, limit: u64) -> Result<Message, ReadError> {
    let header = read_header(r)?;
    let mut payload = Vec::new();
    read_payload(r, &header, limit, &mut payload)?;
    Ok(Message { header, payload })
}

/// Reads and drops `len` bytes (a payload not taken), a piece at a time.
pub fn discard(r: &mut impl Read, len: u64) -> Result<(), ReadError> {
    let n = io::copy(&mut r.by_ref().take(len), &mut io::sink())
        .map_err(|source| ReadError::Io { got: 0, source })?;
    if n < len {
        return Err(ReadError::Truncated {
            what: format!("payload of {len} bytes"),
            got: usize::try_from(n).unwrap_or(usize::MAX),
        });
    }
    Ok(())
}

/// Writes one message.
pub fn write_message(
    w: &mut impl Write,
    kind: u8,
    control: u8,
    param: u32,
    payload: &[u8],
) -> io::Result<()> {
    w.write_all(&encode(kind, control, param, payload))
}
