//! Reading a trace file: checks every field and refuses a bad file with a
//! [`TraceError`] that says where (the byte offset) and what was wrong. A length field
//! never allocates more than the file holds: variable parts are read as they arrive.

use std::borrow::Cow;
use std::io::{self, Read};

use crate::trace::format::{
    error_from_code, flags, tag, BusError, Call, CallOp, Header, Line, LineChange, Record,
    Transfer, CALL_FIXED, ERROR_FIXED, FRAME, HEADER_FIXED, LINE_BODY, MAGIC, MAX_LABEL,
    TRANSFER_FIXED, VERSION,
};

/// Why a trace file was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file does not start with [`MAGIC`].
    #[error(
        "not a gpib trace file (bad magic {found:02X?}: a gpib-rs trace, as gpib-diag trace record writes it, starts with {MAGIC:02X?}, \"GPIBTRC\\x1a\")"
    )]
    BadMagic {
        /// The first bytes found.
        found: Vec<u8>,
    },
    /// A version this build does not read.
    #[error("trace format version {0} is not supported: this build reads version {VERSION}")]
    Version(u16),
    /// The file ends inside a header or record.
    #[error("at offset {offset}: the file ends inside {what} ({needed} more bytes needed, {found} present)")]
    Truncated {
        /// Where the cut item starts.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// Bytes it needed from `offset`.
        needed: u64,
        /// Bytes there were.
        found: u64,
    },
    /// A field holds a value the format does not allow.
    #[error("at offset {offset}: {what}")]
    Invalid {
        /// Where the record (or header) starts.
        offset: u64,
        /// What was wrong.
        what: String,
    },
    /// A record that reads well but whose times cannot be drawn as a waveform.
    #[error("at offset {offset}: {source}")]
    Wave {
        /// Where the record starts.
        offset: u64,
        /// Which field of it, and its value.
        #[source]
        source: crate::trace::wave::WaveError,
    },
    /// Reading failed.
    #[error("reading the trace: {0}")]
    Io(#[from] io::Error),
}

/// Reads a trace's header, then its records one at a time (also as an iterator).
#[derive(Debug)]
pub struct TraceReader<R: Read> {
    input: R,
    header: Header,
    offset: u64,
    failed: bool,
}

/// Little-endian fields out of a byte slice known to be long enough.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(b: &'a [u8]) -> Self {
        Self { b, at: 0 }
    }
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        out.copy_from_slice(&self.b[self.at..self.at + N]);
        self.at += N;
        out
    }
    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
}

/// Reads exactly `buf.len()` bytes, or says how many there were.
fn fill(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

impl<R: Read> TraceReader<R> {
    /// Reads and checks the header.
    pub fn new(mut input: R) -> Result<Self, TraceError> {
        let mut fixed = [0u8; HEADER_FIXED];
        let got = fill(&mut input, &mut fixed)?;
        if got < MAGIC.len() || fixed[..MAGIC.len()] != MAGIC {
            return Err(TraceError::BadMagic {
                found: fixed[..got.min(MAGIC.len())].to_vec(),
            });
        }
        if got < HEADER_FIXED {
            return Err(TraceError::Truncated {
                offset: 0,
                what: "the header",
                needed: HEADER_FIXED as u64,
                found: got as u64,
            });
        }
        let mut c = Cursor::new(&fixed[MAGIC.len()..]);
        let version = c.u16();
        if version != VERSION {
            return Err(TraceError::Version(version));
        }
        let clock = c.u8();
        let clock = super::format::clock_from_code(clock).ok_or_else(|| TraceError::Invalid {
            offset: 10,
            what: format!("clock {clock} is neither 0 (wall) nor 1 (virtual)"),
        })?;
        let reserved = c.u8();
        if reserved != 0 {
            return Err(TraceError::Invalid {
                offset: 11,
                what: format!("reserved header byte is {reserved}, not 0"),
            });
        }
        let len = c.u32() as usize;
        if len > MAX_LABEL {
            return Err(TraceError::Invalid {
                offset: 12,
                what: format!("label length {len} is over the format's {MAX_LABEL} bytes"),
            });
        }
        let mut label = vec![0u8; len];
        let got = fill(&mut input, &mut label)?;
        if got < len {
            return Err(TraceError::Truncated {
                offset: HEADER_FIXED as u64,
                what: "the header's label",
                needed: len as u64,
                found: got as u64,
            });
        }
        let label = String::from_utf8(label).map_err(|_| TraceError::Invalid {
            offset: HEADER_FIXED as u64,
            what: "the label is not UTF-8".into(),
        })?;
        Ok(Self {
            input,
            header: Header { clock, label },
            offset: (HEADER_FIXED + len) as u64,
            failed: false,
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Offset of the next record.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads the next record and draws it with `synth` (`out(tick, state)` for each
    /// line change); `false` at the end of the file. A record that cannot be drawn is a
    /// [`TraceError::Wave`] with its offset. Nothing is kept: memory stays that of one
    /// record, however long the file.
    pub fn draw_next(
        &mut self,
        synth: &mut crate::trace::wave::Synth,
        out: &mut impl FnMut(u64, u16),
    ) -> Result<bool, TraceError> {
        let at = self.offset;
        let Some(r) = self.next_record()? else {
            return Ok(false);
        };
        synth
            .feed(&r, out)
            .map_err(|source| TraceError::Wave { offset: at, source })?;
        Ok(true)
    }

    /// The next record, `None` at the end of the file.
    pub fn next_record(&mut self) -> Result<Option<Record<'static>>, TraceError> {
        let at = self.offset;
        let mut frame = [0u8; FRAME];
        let got = fill(&mut self.input, &mut frame)?;
        if got == 0 {
            return Ok(None);
        }
        if got < FRAME {
            return Err(truncated(at, "a record's frame", FRAME as u64, got as u64));
        }
        let mut c = Cursor::new(&frame);
        let tag = c.u8();
        let len = c.u64();
        let body_at = at + FRAME as u64;
        let end = body_at
            .checked_add(len)
            .ok_or_else(|| TraceError::Invalid {
                offset: at,
                what: format!("record length {len} runs past any file"),
            })?;
        let record = match tag {
            tag::TRANSFER => self.transfer(at, len)?,
            tag::LINE => self.line(at, len)?,
            tag::ERROR => self.error(at, len)?,
            tag::CALL => self.call(at, len)?,
            _ => {
                let skipped = io::copy(&mut (&mut self.input).take(len), &mut io::sink())?;
                if skipped < len {
                    return Err(truncated(at, "a record of unknown kind", len, skipped));
                }
                Record::Unknown { tag, len }
            }
        };
        self.offset = end;
        Ok(Some(record))
    }

    /// Reads `N` fixed bytes of the record at `at`.
    fn fixed<const N: usize>(
        &mut self,
        at: u64,
        what: &'static str,
    ) -> Result<[u8; N], TraceError> {
        let mut b = [0u8; N];
        let got = fill(&mut self.input, &mut b)?;
        if got < N {
            return Err(truncated(
                at,
                what,
                (FRAME + N) as u64,
                (FRAME + got) as u64,
            ));
        }
        Ok(b)
    }

    /// Reads `n` bytes as they arrive (never more allocated than the file holds).
    fn rest(&mut self, at: u64, n: u64, what: &'static str) -> Result<Vec<u8>, TraceError> {
        let mut v = Vec::new();
        let got = (&mut self.input).take(n).read_to_end(&mut v)? as u64;
        if got < n {
            return Err(truncated(at, what, n, got));
        }
        Ok(v)
    }

    fn transfer(&mut self, at: u64, len: u64) -> Result<Record<'static>, TraceError> {
        let data_len = body_at_least(at, len, TRANSFER_FIXED, "transfer")?;
        let b = self.fixed::<TRANSFER_FIXED>(at, "a transfer record")?;
        let mut c = Cursor::new(&b);
        let mut t = Transfer {
            board: c.u16(),
            flags: c.u8(),
            talker: c.u8(),
            listeners: c.u32(),
            start_ns: c.u64(),
            ready_ns: c.u64(),
            first_ns: c.u64(),
            byte_ns: c.u64(),
            end_ns: c.u64(),
            t1_ns: c.u32(),
            accept_ns: c.u32(),
            bytes: Cow::Borrowed(&[]),
        };
        if t.flags & !flags::ALL != 0 {
            return Err(invalid(
                at,
                format!("transfer flags 0x{:02X} have undefined bits", t.flags),
            ));
        }
        if t.talker > 30 {
            return Err(invalid(
                at,
                format!("talker address {} is over 30", t.talker),
            ));
        }
        if t.listeners >> 31 != 0 {
            return Err(invalid(
                at,
                "listener bit 31 is set (addresses are 0 to 30)".into(),
            ));
        }
        t.bytes = Cow::Owned(self.rest(at, data_len, "a transfer's data bytes")?);
        Ok(Record::Transfer(t))
    }

    fn line(&mut self, at: u64, len: u64) -> Result<Record<'static>, TraceError> {
        if len != LINE_BODY as u64 {
            return Err(invalid(
                at,
                format!("line record of {len} bytes, not {LINE_BODY}"),
            ));
        }
        let b = self.fixed::<LINE_BODY>(at, "a line record")?;
        let mut c = Cursor::new(&b);
        let board = c.u16();
        let code = c.u8();
        let level = c.u8();
        let line = Line::from_code(code).ok_or_else(|| {
            invalid(
                at,
                format!("line code {code} is not SRQ (0), REN (1) or IFC (2)"),
            )
        })?;
        if level > 1 {
            return Err(invalid(
                at,
                format!("line level {level} is neither 0 nor 1"),
            ));
        }
        Ok(Record::Line(LineChange {
            board,
            line,
            asserted: level == 1,
            at_ns: c.u64(),
            end_ns: c.u64(),
        }))
    }

    fn error(&mut self, at: u64, len: u64) -> Result<Record<'static>, TraceError> {
        let text_len = body_at_least(at, len, ERROR_FIXED, "error")?;
        let b = self.fixed::<ERROR_FIXED>(at, "an error record")?;
        let mut c = Cursor::new(&b);
        let board = c.u16();
        let code = c.u8();
        let kind = match error_from_code(code) {
            Ok(Some(k)) => k,
            _ => {
                return Err(invalid(
                    at,
                    format!("error kind code {code} is not defined"),
                ))
            }
        };
        let at_ns = c.u64();
        let text = self.rest(at, text_len, "an error's text")?;
        let text =
            String::from_utf8(text).map_err(|_| invalid(at, "error text is not UTF-8".into()))?;
        Ok(Record::Error(BusError {
            board,
            kind,
            at_ns,
            text: Cow::Owned(text),
        }))
    }

    fn call(&mut self, at: u64, len: u64) -> Result<Record<'static>, TraceError> {
        let var = body_at_least(at, len, CALL_FIXED + 8, "call")?;
        let b = self.fixed::<{ CALL_FIXED + 8 }>(at, "a call record")?;
        let mut c = Cursor::new(&b);
        let board = c.u16();
        let op = c.u8();
        let op = CallOp::from_code(op)
            .ok_or_else(|| invalid(at, format!("call code {op} is not defined")))?;
        let device = address_field(at, c.u8(), "device")?;
        let secondary = address_field(at, c.u8(), "secondary address")?;
        let status = c.u16();
        let code = c.u8();
        let error = error_from_code(code)
            .map_err(|()| invalid(at, format!("error kind code {code} is not defined")))?;
        let eoi = c.u8();
        if eoi > 1 {
            return Err(invalid(at, format!("EOI flag {eoi} is neither 0 nor 1")));
        }
        let (start_ns, duration_ns, count, requested) = (c.u64(), c.u64(), c.u64(), c.u64());
        let data_len = c.u64();
        if data_len > var {
            return Err(invalid(
                at,
                format!("call data of {data_len} bytes does not fit its record's {var}"),
            ));
        }
        let data = self.rest(at, data_len, "a call's data bytes")?;
        let message = self.rest(at, var - data_len, "a call's message")?;
        let message = String::from_utf8(message)
            .map_err(|_| invalid(at, "call message is not UTF-8".into()))?;
        Ok(Record::Call(Call {
            board,
            op,
            device,
            secondary,
            status,
            error,
            eoi: eoi == 1,
            start_ns,
            duration_ns,
            count,
            requested,
            data: Cow::Owned(data),
            message: Cow::Owned(message),
        }))
    }
}

impl<R: Read> Iterator for TraceReader<R> {
    type Item = Result<Record<'static>, TraceError>;

    /// The next record; after an error, `None` (a bad file is not read further).
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.next_record() {
            Ok(r) => r.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

fn truncated(offset: u64, what: &'static str, needed: u64, found: u64) -> TraceError {
    TraceError::Truncated {
        offset,
        what,
        needed,
        found,
    }
}

fn invalid(offset: u64, what: String) -> TraceError {
    TraceError::Invalid { offset, what }
}

/// The variable length after a fixed part of `fixed` bytes, or an error.
fn body_at_least(at: u64, len: u64, fixed: usize, what: &str) -> Result<u64, TraceError> {
    len.checked_sub(fixed as u64).ok_or_else(|| {
        invalid(
            at,
            format!("{what} record of {len} bytes is shorter than its {fixed} fixed bytes"),
        )
    })
}

fn address_field(at: u64, v: u8, what: &str) -> Result<Option<u8>, TraceError> {
    match v {
        0xFF => Ok(None),
        0..=30 => Ok(Some(v)),
        _ => Err(invalid(
            at,
            format!("{what} {v} is over 30 (0xFF means none)"),
        )),
    }
}
