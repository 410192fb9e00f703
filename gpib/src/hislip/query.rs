//! Whether a program message holds a query: a `?` in a program header (IEEE 488.2
//! 7.3), not inside a string or a block. The HiSLIP gateway reads the device's answer
//! after a message that holds one; the client knows by it whether an answer comes
//! unasked. Fed a piece at a time (a message may come in
//! several Data messages); memory is constant.

/// The scanner's place in a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// In a program header (a message's start, or after `;`).
    Header,
    /// In program data.
    Data,
    /// In a string quoted by this byte.
    Quoted(u8),
    /// After `#`: the digit count comes next.
    Hash,
    /// Reading a definite block's length: digits left, length so far.
    Digits(u8, u64),
    /// Inside a definite block: bytes left.
    Block(u64),
    /// Inside an indefinite block (`#0`): to the end of the message.
    Indefinite,
}

/// A streaming query detector over one program message.
#[derive(Debug, Clone)]
pub(crate) struct QueryScan {
    at: At,
    query: bool,
}

impl Default for QueryScan {
    fn default() -> Self {
        Self {
            at: At::Header,
            query: false,
        }
    }
}

impl QueryScan {
    /// Feeds the next bytes of the message.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            self.at = match self.at {
                At::Header => match b {
                    b'?' => {
                        self.query = true;
                        At::Header
                    }
                    b' ' | b'\t' => At::Data,
                    _ => At::Header,
                },
                At::Data => match b {
                    b'"' | b'\'' => At::Quoted(b),
                    b'#' => At::Hash,
                    b';' | b'\n' => At::Header,
                    _ => At::Data,
                },
                At::Quoted(q) if b == q => At::Data,
                At::Quoted(q) => At::Quoted(q),
                At::Hash => match b {
                    b'0' => At::Indefinite,
                    b'1'..=b'9' => At::Digits(b - b'0', 0),
                    // `#H1F`, `#Q17`, `#B101`: non-decimal numbers, data.
                    b'H' | b'h' | b'Q' | b'q' | b'B' | b'b' => At::Data,
                    // Not IEEE 488.2: a device's own binary format (the HP 3565's
                    // `#I` blocks, ended by END), binary to the end of the message.
                    _ => At::Indefinite,
                },
                At::Digits(left, len) => {
                    if !b.is_ascii_digit() {
                        At::Data
                    } else {
                        let len = len.saturating_mul(10).saturating_add(u64::from(b - b'0'));
                        match left - 1 {
                            0 if len == 0 => At::Data,
                            0 => At::Block(len),
                            l => At::Digits(l, len),
                        }
                    }
                }
                At::Block(left) => {
                    // Skip the block's bytes in one step.
                    let here = (bytes.len() - i) as u64;
                    let skip = left.min(here);
                    i += skip as usize;
                    let rest = left - skip;
                    self.at = if rest == 0 { At::Data } else { At::Block(rest) };
                    continue;
                }
                At::Indefinite => At::Indefinite,
            };
            i += 1;
        }
    }

    /// Whether the message so far holds a query.
    pub(crate) fn is_query(&self) -> bool {
        self.query
    }

    /// Starts over for the next message.
    pub(crate) fn reset(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::QueryScan;

    fn query(pieces: &[&[u8]]) -> bool {
        let mut q = QueryScan::default();
        for p in pieces {
            q.feed(p);
        }
        q.is_query()
    }

    #[test]
    fn queries_are_found_in_headers_only() {
        assert!(query(&[b"*IDN?\n"]));
        assert!(query(&[b"*RST;MEAS:VOLT? (@101)\n"]));
        assert!(query(&[b"*CLS;", b"*ES", b"R?"]));
        assert!(!query(&[b"*RST\n"]));
        assert!(!query(&[b"DISP:TEXT \"why?\"\n"]));
        assert!(!query(&[b"DISP:TEXT 'a?b'\n"]));
        // A definite block holding '?' bytes, split across pieces.
        assert!(!query(&[b"DATA #15ab", b"??c\n"]));
        assert!(query(&[b"DATA #15ab??c;DATA:LEN?\n"]));
        assert!(!query(&[b"DATA #0??????\n"]));
        assert!(!query(&[b"DATA #9999999999999999999"]));
        assert!(query(&[b"DATA #HFF;DATA?\n"]));
        // A device's own binary block (HP 3565 `#I`): its bytes hold '\n' and '?'.
        assert!(!query(&[b"WBLD 1,4,#I", b"\x00\n?\x01\x02\x03\x04\n"]));
    }
}
