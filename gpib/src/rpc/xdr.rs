//! XDR (RFC 4506): big-endian 4-byte units; opaque data and strings carry a length
//! and are padded to a multiple of 4.

/// Why XDR data could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XdrError {
    /// Fewer bytes than the item needs.
    #[error("XDR data truncated: {what} needs {need} byte(s) at offset {at}, {have} left")]
    Truncated {
        /// The item being read.
        what: &'static str,
        /// Bytes it needs.
        need: u64,
        /// Bytes left.
        have: usize,
        /// Where it starts.
        at: usize,
    },
    /// A length beyond what the item allows.
    #[error("XDR {what} claims {claimed} byte(s); at most {max} allowed")]
    TooLong {
        /// The item being read.
        what: &'static str,
        /// Its claimed length.
        claimed: u32,
        /// The bound.
        max: usize,
    },
    /// A boolean that is neither 0 nor 1.
    #[error("XDR boolean is {0}, not 0 or 1")]
    BadBool(u32),
}

/// Reads XDR items from a byte slice.
#[derive(Debug, Clone)]
pub struct XdrReader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> XdrReader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    fn take(&mut self, what: &'static str, n: u64) -> Result<&'a [u8], XdrError> {
        let have = self.buf.len() - self.pos;
        if n > have as u64 {
            return Err(XdrError::Truncated {
                what,
                need: n,
                have,
                at: self.pos,
            });
        }
        let n = n as usize;
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// An unsigned 32-bit integer.
    pub fn u32(&mut self) -> Result<u32, XdrError> {
        let b = self.take("an integer", 4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A signed 32-bit integer.
    pub fn i32(&mut self) -> Result<i32, XdrError> {
        Ok(self.u32()? as i32)
    }

    /// A boolean (0 or 1).
    pub fn bool(&mut self) -> Result<bool, XdrError> {
        match self.u32()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(XdrError::BadBool(v)),
        }
    }

    /// Variable-length opaque data of at most `max` bytes (the padding is skipped).
    pub fn opaque(&mut self, max: usize) -> Result<&'a [u8], XdrError> {
        let len = self.u32()?;
        if len as u64 > max as u64 {
            return Err(XdrError::TooLong {
                what: "opaque data",
                claimed: len,
                max,
            });
        }
        let padded = (u64::from(len) + 3) & !3;
        let all = self.take("opaque data", padded)?;
        Ok(&all[..len as usize])
    }

    /// A string of at most `max` bytes (bytes as sent; not checked for UTF-8).
    pub fn string(&mut self, max: usize) -> Result<&'a [u8], XdrError> {
        self.opaque(max)
    }
}

/// Builds XDR data.
#[derive(Debug, Clone, Default)]
pub struct XdrWriter {
    buf: Vec<u8>,
}

impl XdrWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// A writer that continues `buf`.
    pub fn from_vec(buf: Vec<u8>) -> Self {
        Self { buf }
    }

    /// An unsigned 32-bit integer.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// A signed 32-bit integer.
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.u32(v as u32)
    }

    /// A boolean.
    pub fn bool(&mut self, v: bool) -> &mut Self {
        self.u32(u32::from(v))
    }

    /// Variable-length opaque data (at most 4 GiB - 1; longer data is cut there, which
    /// no caller here can reach: records are bounded far below).
    pub fn opaque(&mut self, data: &[u8]) -> &mut Self {
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        let data = &data[..len as usize];
        self.u32(len);
        self.buf.extend_from_slice(data);
        let pad = (4 - data.len() % 4) % 4;
        self.buf.extend_from_slice(&[0u8; 3][..pad]);
        self
    }

    /// The bytes.
    pub fn into_vec(self) -> Vec<u8> {
        self.buf
    }

    /// The bytes so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut w = XdrWriter::new();
        w.u32(7).i32(-2).bool(true).opaque(b"abcde").opaque(b"");
        let v = w.into_vec();
        assert_eq!(v.len(), 4 + 4 + 4 + 4 + 8 + 4);
        let mut r = XdrReader::new(&v);
        assert_eq!(r.u32().unwrap(), 7);
        assert_eq!(r.i32().unwrap(), -2);
        assert!(r.bool().unwrap());
        assert_eq!(r.opaque(10).unwrap(), b"abcde");
        assert_eq!(r.opaque(0).unwrap(), b"");
        assert!(r.remaining().is_empty());
    }

    #[test]
    fn hostile_input() {
        // An opaque claiming 4 GiB - 1 in a 12-byte message.
        let mut w = XdrWriter::new();
        w.u32(u32::MAX).u32(0).u32(0);
        let v = w.into_vec();
        assert!(matches!(
            XdrReader::new(&v).opaque(usize::MAX),
            Err(XdrError::Truncated {
                need: 0x1_0000_0000,
                ..
            })
        ));
        assert!(matches!(
            XdrReader::new(&v).opaque(40),
            Err(XdrError::TooLong {
                claimed: u32::MAX,
                ..
            })
        ));
        assert!(matches!(
            XdrReader::new(&[0, 0]).u32(),
            Err(XdrError::Truncated { .. })
        ));
        assert!(matches!(
            XdrReader::new(&[0, 0, 0, 2]).bool(),
            Err(XdrError::BadBool(2))
        ));
        // Padding missing.
        assert!(XdrReader::new(&[0, 0, 0, 1, b'x']).opaque(10).is_err());
    }
}
