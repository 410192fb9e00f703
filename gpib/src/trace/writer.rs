//! Writing a trace file: the header, then one framed record at a time through a
//! buffered writer, or handed to a writing thread ([`WriteBehind`]). No allocation per
//! record: fixed fields go through a stack buffer, data bytes straight from the
//! caller's slice.

use std::io::{self, BufWriter, Write};

use crate::trace::format::{
    error_code, tag, Call, Header, Record, Transfer, CALL_FIXED, ERROR_FIXED, LINE_BODY, MAGIC,
    MAX_LABEL, TRANSFER_FIXED, VERSION,
};
use crate::trace::sink::TraceSink;
use crate::trace::write_behind::WriteBehind;

/// Little-endian fields written one after the other into a record's fixed part, in
/// place in the output buffer when writing behind: no copy of them is read back (wide
/// loads of what narrow stores just wrote stall the processor).
struct Fields<'a, const N: usize> {
    buf: &'a mut [u8; N],
    len: usize,
}

impl<'a, const N: usize> Fields<'a, N> {
    #[inline(always)]
    fn over(buf: &'a mut [u8; N]) -> Self {
        Self { buf, len: 0 }
    }
    #[inline(always)]
    fn put(&mut self, b: &[u8]) -> &mut Self {
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
        self
    }
    #[inline(always)]
    fn u8(&mut self, v: u8) -> &mut Self {
        self.put(&[v])
    }
    #[inline(always)]
    fn u16(&mut self, v: u16) -> &mut Self {
        self.put(&v.to_le_bytes())
    }
    #[inline(always)]
    fn u32(&mut self, v: u32) -> &mut Self {
        self.put(&v.to_le_bytes())
    }
    #[inline(always)]
    fn u64(&mut self, v: u64) -> &mut Self {
        self.put(&v.to_le_bytes())
    }
    /// Checks that the fields filled their `N` bytes.
    #[inline(always)]
    fn done(&mut self) {
        debug_assert_eq!(self.len, N, "a record's fixed fields fill their buffer");
    }
}

/// Writes a trace to `W` (buffered). Also a [`TraceSink`]: as a sink it keeps the first
/// write error, and [`TraceSink::flush`] (or [`TraceWriter::finish`]) returns it.
///
/// [`crate::trace::create_file`] makes one that writes behind the program, on a thread
/// of its own.
#[derive(Debug)]
pub struct TraceWriter<W: Write> {
    out: Out<W>,
    error: Option<io::Error>,
    records: u64,
}

/// Where the encoded records go: through a buffer, or handed to a writing thread.
#[derive(Debug)]
enum Out<W: Write> {
    Buffered(BufWriter<W>),
    Behind(WriteBehind<W>),
}

impl<W: Write> Out<W> {
    /// Writes a record's `N` bytes of fixed fields (`fill` writes them, in place when
    /// writing behind) and its variable parts.
    #[inline(always)]
    fn put<const N: usize>(
        &mut self,
        fill: impl FnOnce(&mut Fields<'_, N>),
        parts: &[&[u8]],
    ) -> io::Result<()> {
        let mut here = [0; N];
        let fixed = match self {
            Out::Behind(w) => {
                w.fields::<N>(parts.iter().fold(0, |n, p| n.saturating_add(p.len())))?
            }
            Out::Buffered(_) => &mut here,
        };
        fill(&mut Fields::over(fixed));
        match self {
            Out::Buffered(b) => {
                b.write_all(&here)?;
                parts.iter().try_for_each(|p| b.write_all(p))
            }
            Out::Behind(w) => w.put_parts(N, parts),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Out::Buffered(b) => b.flush(),
            Out::Behind(w) => w.flush(),
        }
    }

    fn into_inner(self) -> io::Result<W> {
        match self {
            Out::Buffered(b) => b.into_inner().map_err(|e| e.into_error()),
            Out::Behind(w) => w.into_inner(),
        }
    }
}

/// 256 KiB: large enough that a byte-at-a-time workload makes few system calls.
const BUFFER: usize = 256 << 10;

impl<W: Write> TraceWriter<W> {
    /// Writes the header to `out`. Fails for a label longer than [`MAX_LABEL`] bytes.
    pub fn new(out: W, header: &Header) -> io::Result<Self> {
        Self::to(Out::Buffered(BufWriter::with_capacity(BUFFER, out)), header)
    }

    fn to(mut out: Out<W>, header: &Header) -> io::Result<Self> {
        if header.label.len() > MAX_LABEL {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "trace label of {} bytes is longer than the format's {MAX_LABEL}",
                    header.label.len()
                ),
            ));
        }
        out.put::<16>(
            |f| {
                f.put(&MAGIC)
                    .u16(VERSION)
                    .u8(super::format::clock_code(header.clock))
                    .u8(0)
                    .u32(header.label.len() as u32)
                    .done();
            },
            &[header.label.as_bytes()],
        )?;
        Ok(Self {
            out,
            error: None,
            records: 0,
        })
    }
}

impl<W: Write + Send + 'static> TraceWriter<W> {
    /// Writes the header to `out`, and the records after it on a thread of its own
    /// ([`crate::trace::create_file`] does this for a file). Eight buffers of 256 KiB go
    /// round between the two threads, made when this is called: memory stays at that
    /// however long the trace, and a recorder that gets ahead of `out` waits for it.
    /// It returns once the thread runs, so that a recording that starts at once does
    /// not wait for the system to start it.
    ///
    /// Dropping the writer writes out every record and returns once they are written
    /// to `out`; the thread then drops `out` on its own (closing a
    /// [`crate::trace::TraceFile`] truncates away its unused reservation, 0.1-0.3 ms the
    /// program does not wait for). [`TraceWriter::finish`] gives `out` back instead.
    pub fn behind(out: W, header: &Header) -> io::Result<Self> {
        Self::to(Out::Behind(WriteBehind::new(out)?), header)
    }
}

impl<W: Write> TraceWriter<W> {
    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Writes one record.
    pub fn write(&mut self, record: &Record<'_>) -> io::Result<()> {
        match record {
            Record::Transfer(t) => self.transfer(t),
            Record::Line(l) => self.out.put::<{ 9 + LINE_BODY }>(
                |f| {
                    f.u8(tag::LINE)
                        .u64(LINE_BODY as u64)
                        .u16(l.board)
                        .u8(l.line.code())
                        .u8(u8::from(l.asserted))
                        .u64(l.at_ns)
                        .u64(l.end_ns)
                        .done();
                },
                &[],
            ),
            Record::Error(e) => self.out.put::<{ 9 + ERROR_FIXED }>(
                |f| {
                    f.u8(tag::ERROR)
                        .u64((ERROR_FIXED + e.text.len()) as u64)
                        .u16(e.board)
                        .u8(error_code(Some(e.kind)))
                        .u64(e.at_ns)
                        .done();
                },
                &[e.text.as_bytes()],
            ),
            Record::Call(c) => self.call(c),
            Record::Unknown { .. } => Ok(()), // nothing of it was kept
        }?;
        self.records += 1;
        Ok(())
    }

    fn transfer(&mut self, t: &Transfer<'_>) -> io::Result<()> {
        self.out.put::<{ 9 + TRANSFER_FIXED }>(
            |f| {
                f.u8(tag::TRANSFER)
                    .u64((TRANSFER_FIXED + t.bytes.len()) as u64)
                    .u16(t.board)
                    .u8(t.flags)
                    .u8(t.talker)
                    .u32(t.listeners)
                    .u64(t.start_ns)
                    .u64(t.ready_ns)
                    .u64(t.first_ns)
                    .u64(t.byte_ns)
                    .u64(t.end_ns)
                    .u32(t.t1_ns)
                    .u32(t.accept_ns)
                    .done();
            },
            &[&t.bytes],
        )
    }

    fn call(&mut self, c: &Call<'_>) -> io::Result<()> {
        let body = CALL_FIXED + 8 + c.data.len() + c.message.len();
        self.out.put::<{ 9 + CALL_FIXED + 8 }>(
            |f| {
                f.u8(tag::CALL)
                    .u64(body as u64)
                    .u16(c.board)
                    .u8(c.op.code())
                    .u8(c.device.unwrap_or(0xFF))
                    .u8(c.secondary.unwrap_or(0xFF))
                    .u16(c.status)
                    .u8(error_code(c.error))
                    .u8(u8::from(c.eoi))
                    .u64(c.start_ns)
                    .u64(c.duration_ns)
                    .u64(c.count)
                    .u64(c.requested)
                    .u64(c.data.len() as u64)
                    .done();
            },
            &[&c.data, c.message.as_bytes()],
        )
    }

    /// Flushes and returns the underlying writer, or the first error seen.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.into_inner()
    }
}

impl<W: Write + Send> TraceSink for TraceWriter<W> {
    fn record(&mut self, record: &Record<'_>) {
        if self.error.is_none() {
            if let Err(e) = self.write(record) {
                self.error = Some(e);
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }
}
