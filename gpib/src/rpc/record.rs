//! RPC record marking over a byte stream (RFC 5531 section 11): each record is one or
//! more fragments, each behind a 4-byte header (bit 31: last fragment; bits 0-30:
//! length). Records are reassembled here, within limits.

use std::io::{self, Read, Write};

/// Bit 31 of a fragment header: this is the record's last fragment.
pub const LAST_FRAGMENT: u32 = 0x8000_0000;

/// Bounds on what one record may claim and hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest record (all fragments together), in bytes.
    pub max_record: usize,
    /// Most fragments in one record (zero-length fragments count too).
    pub max_fragments: usize,
}

impl Limits {
    /// 16 MiB records, 100,000 fragments.
    pub const DEFAULT: Limits = Limits {
        max_record: 16 << 20,
        max_fragments: 100_000,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Why a record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The peer closed the stream between records (a clean end).
    #[error("the peer closed the connection")]
    Closed,
    /// The stream ended inside a fragment header or body.
    #[error("record truncated: the stream ended {got} byte(s) into a {what}")]
    Truncated {
        /// "fragment header" or "fragment of N bytes".
        what: String,
        /// Bytes of it that arrived.
        got: usize,
    },
    /// The record is longer than the limit.
    #[error("record too long: a fragment claims {claimed} byte(s), making {total} with the earlier fragments; the limit is {max}")]
    TooLong {
        /// The fragment's claimed length.
        claimed: u64,
        /// Record length with it.
        total: u64,
        /// The limit.
        max: usize,
    },
    /// More fragments than the limit.
    #[error("record has more than {max} fragments")]
    TooManyFragments {
        /// The limit.
        max: usize,
    },
    /// An I/O error (a timeout shows as `WouldBlock` or `TimedOut`).
    #[error("I/O error reading a record: {0}")]
    Io(#[from] io::Error),
}

impl RecordError {
    /// True for a read timeout on the socket.
    pub fn is_timeout(&self) -> bool {
        matches!(self, RecordError::Io(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut))
    }
}

/// Fills `buf` from `r`; returns the count read before EOF (`buf.len()` when full).
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Reads one whole record into `out` (cleared first). Memory grows only with bytes
/// that arrive, never with what a header claims.
pub fn read_record(
    r: &mut impl Read,
    limits: Limits,
    out: &mut Vec<u8>,
) -> Result<(), RecordError> {
    out.clear();
    let mut fragments = 0usize;
    loop {
        let mut head = [0u8; 4];
        let got = read_full(r, &mut head)?;
        if got == 0 && fragments == 0 {
            return Err(RecordError::Closed);
        }
        if got < 4 {
            return Err(RecordError::Truncated {
                what: "fragment header".into(),
                got,
            });
        }
        fragments += 1;
        if fragments > limits.max_fragments {
            return Err(RecordError::TooManyFragments {
                max: limits.max_fragments,
            });
        }
        let h = u32::from_be_bytes(head);
        let len = u64::from(h & !LAST_FRAGMENT);
        let total = (out.len() as u64).saturating_add(len);
        if total > limits.max_record as u64 {
            return Err(RecordError::TooLong {
                claimed: len,
                total,
                max: limits.max_record,
            });
        }
        let before = out.len();
        // `take` + `read_to_end`: the Vec grows with what arrives, bounded by `len`.
        let n = r.by_ref().take(len).read_to_end(out)?;
        if (n as u64) < len {
            return Err(RecordError::Truncated {
                what: format!("fragment of {len} bytes"),
                got: out.len() - before,
            });
        }
        if h & LAST_FRAGMENT != 0 {
            return Ok(());
        }
    }
}

/// Writes `data` as one record of fragments of at most `max_fragment` bytes (at least
/// one fragment, so an empty record is one empty last fragment) and flushes `w`.
/// Returns the bytes put on the stream.
pub fn write_record(w: &mut impl Write, data: &[u8], max_fragment: usize) -> io::Result<usize> {
    let sent = put_record(w, data, max_fragment)?;
    w.flush()?;
    Ok(sent)
}

/// [`write_record`] without the flush: records put one after the other into a
/// buffered writer go out together at its next flush (one segment for two small
/// calls).
pub fn put_record(w: &mut impl Write, data: &[u8], max_fragment: usize) -> io::Result<usize> {
    let max_fragment = max_fragment.clamp(1, (!LAST_FRAGMENT) as usize);
    let mut chunks = data.chunks(max_fragment).peekable();
    if data.is_empty() {
        w.write_all(&LAST_FRAGMENT.to_be_bytes())?;
        return Ok(4);
    }
    let mut sent = 0usize;
    // Small records go out in one write (one segment with TCP_NODELAY).
    let mut small = Vec::new();
    while let Some(c) = chunks.next() {
        let last = chunks.peek().is_none();
        let h = c.len() as u32 | if last { LAST_FRAGMENT } else { 0 };
        if data.len() <= 64 * 1024 {
            small.extend_from_slice(&h.to_be_bytes());
            small.extend_from_slice(c);
        } else {
            w.write_all(&h.to_be_bytes())?;
            w.write_all(c)?;
        }
        sent += 4 + c.len();
    }
    if !small.is_empty() {
        w.write_all(&small)?;
    }
    Ok(sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(last: bool, data: &[u8]) -> Vec<u8> {
        let mut v = (data.len() as u32 | if last { LAST_FRAGMENT } else { 0 })
            .to_be_bytes()
            .to_vec();
        v.extend_from_slice(data);
        v
    }

    fn read(bytes: &[u8], limits: Limits) -> Result<Vec<u8>, RecordError> {
        let mut out = Vec::new();
        read_record(&mut &bytes[..], limits, &mut out).map(|()| out)
    }

    #[test]
    fn reassembles_fragments_and_round_trips() {
        let data: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        let mut wire = Vec::new();
        let sent = write_record(&mut wire, &data, 4000).unwrap();
        assert_eq!(sent, wire.len());
        // 100,000 bytes in 4000-byte fragments: 25 fragments, as libtirpc sends 26.
        assert_eq!(wire.len(), data.len() + 25 * 4);
        assert_eq!(read(&wire, Limits::DEFAULT).unwrap(), data);
        let mut wire = Vec::new();
        write_record(&mut wire, b"", 10).unwrap();
        assert_eq!(read(&wire, Limits::DEFAULT).unwrap(), b"");
    }

    #[test]
    fn zero_length_fragments_are_fine_up_to_the_limit() {
        let mut wire = Vec::new();
        for _ in 0..10 {
            wire.extend(frag(false, b""));
        }
        wire.extend(frag(true, b"ab"));
        assert_eq!(read(&wire, Limits::DEFAULT).unwrap(), b"ab");
        let tight = Limits {
            max_record: 100,
            max_fragments: 5,
        };
        assert!(matches!(
            read(&wire, tight),
            Err(RecordError::TooManyFragments { max: 5 })
        ));
    }

    #[test]
    fn hostile_lengths_and_truncation_are_errors() {
        // A fragment claiming 2 GiB - 1: refused before any allocation.
        let wire = 0xFFFF_FFFFu32.to_be_bytes();
        match read(&wire, Limits::DEFAULT) {
            Err(RecordError::TooLong { claimed, .. }) => assert_eq!(claimed, 0x7FFF_FFFF),
            other => panic!("{other:?}"),
        }
        // Two fragments that together pass the limit.
        let limits = Limits {
            max_record: 10,
            max_fragments: 10,
        };
        let mut wire = frag(false, b"123456");
        wire.extend(frag(true, b"789012"));
        assert!(matches!(
            read(&wire, limits),
            Err(RecordError::TooLong { total: 12, .. })
        ));
        // Truncated header, truncated body, nothing at all.
        assert!(matches!(
            read(&[0x80, 0], Limits::DEFAULT),
            Err(RecordError::Truncated { got: 2, .. })
        ));
        let mut wire = frag(true, b"hello");
        wire.truncate(6);
        assert!(matches!(
            read(&wire, Limits::DEFAULT),
            Err(RecordError::Truncated { got: 2, .. })
        ));
        assert!(matches!(
            read(&[], Limits::DEFAULT),
            Err(RecordError::Closed)
        ));
        // A non-last fragment and then EOF.
        assert!(matches!(
            read(&frag(false, b"x"), Limits::DEFAULT),
            Err(RecordError::Truncated { got: 0, .. })
        ));
    }

    #[test]
    fn garbage_never_panics() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..2000 {
            let mut bytes = Vec::new();
            for _ in 0..(x % 64) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                bytes.push(x as u8);
            }
            let _ = read(
                &bytes,
                Limits {
                    max_record: 1 << 16,
                    max_fragments: 8,
                },
            );
        }
    }
}
