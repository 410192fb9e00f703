//! Reading an IEEE 488.2 block off the bus: the header (into the caller's buffer or
//! apart from it), then the body into a sink (a slice or a growing vector), with the
//! checks of what may follow it.

use super::*;

/// Where a block body goes.
pub(super) trait Sink {
    /// Room for bytes from `filled` on, at most up to `want_end` (when known).
    fn room(&mut self, filled: usize, want_end: Option<usize>) -> &mut [u8];
    /// The final length.
    fn finish(&mut self, len: usize);
    /// The byte at `i`, already filled.
    fn byte_at(&self, i: usize) -> Option<u8>;
    /// The first `n` bytes filled (fewer if the sink holds fewer).
    fn filled(&self, n: usize) -> &[u8];
    /// Moves the bytes `from..to` to the start (drops the first `from`).
    fn move_to_start(&mut self, from: usize, to: usize);
    /// The error for a body that has no more room after `filled` bytes (`hl`: the
    /// header's length; `want_end`: the body's announced length).
    fn full(&mut self, want_end: Option<usize>, filled: usize, hl: usize) -> Error;
}

pub(super) struct SliceSink<'a>(pub(super) &'a mut [u8]);

impl Sink for SliceSink<'_> {
    fn room(&mut self, filled: usize, want_end: Option<usize>) -> &mut [u8] {
        let end = want_end.map_or(self.0.len(), |w| w.min(self.0.len()));
        &mut self.0[filled.min(end)..end]
    }
    fn finish(&mut self, _len: usize) {}
    fn byte_at(&self, i: usize) -> Option<u8> {
        self.0.get(i).copied()
    }
    fn filled(&self, n: usize) -> &[u8] {
        &self.0[..n.min(self.0.len())]
    }
    fn move_to_start(&mut self, from: usize, to: usize) {
        let to = to.min(self.0.len());
        self.0.copy_within(from.min(to)..to, 0);
    }
    fn full(&mut self, want_end: Option<usize>, filled: usize, hl: usize) -> Error {
        too_large(want_end, filled, hl)
    }
}

/// A growing `Vec` for a block body, of at most `max` bytes.
pub(super) struct VecSink<'a> {
    pub(super) v: &'a mut Vec<u8>,
    pub(super) max: usize,
}

impl Sink for VecSink<'_> {
    fn room(&mut self, filled: usize, want_end: Option<usize>) -> &mut [u8] {
        // A declared length within the limit: one allocation for all of it, zeroed by
        // the allocator (fresh pages from the system for a large one, so memory is
        // committed only as bytes arrive), and one read into it.
        if let Some(w) = want_end.filter(|&w| w <= self.max && w > self.v.len()) {
            if w > self.v.capacity() {
                let mut whole = vec![0u8; w];
                let kept = filled.min(self.v.len());
                whole[..kept].copy_from_slice(&self.v[..kept]);
                *self.v = whole;
            } else {
                self.v.resize(w, 0);
            }
        }
        let step = match want_end {
            Some(w) if w <= self.v.len() => w.saturating_sub(filled),
            Some(w) => w.saturating_sub(filled).min(MAX_AHEAD),
            None => filled.clamp(4096, GROW_STEP.max(filled / 2)).min(MAX_AHEAD),
        };
        let step = step.min(self.max.saturating_sub(filled));
        if self.v.len() < filled + step {
            self.v.resize(filled + step, 0);
        }
        &mut self.v[filled..filled + step]
    }
    fn finish(&mut self, len: usize) {
        self.v.truncate(len);
    }
    fn byte_at(&self, i: usize) -> Option<u8> {
        self.v.get(i).copied()
    }
    fn filled(&self, n: usize) -> &[u8] {
        &self.v[..n.min(self.v.len())]
    }
    fn full(&mut self, _want_end: Option<usize>, filled: usize, hl: usize) -> Error {
        self.v.truncate(filled);
        Error::ResponseTooLong {
            limit: self.max,
            transferred: hl + filled,
            data: Vec::new(),
        }
    }
    fn move_to_start(&mut self, from: usize, to: usize) {
        let to = to.min(self.v.len());
        self.v.copy_within(from.min(to)..to, 0);
    }
}

/// The first read of a block goes straight into the caller's buffer, this long at most:
/// a block this size or smaller (with its header and NL) comes in that one read, as a
/// raw `ibrd` until END would take it, and its body is then moved down over the header
/// (a copy of at most this many bytes). Larger blocks take a second read for the rest.
const FIRST_READ: usize = 4096 + MAX_HEADER_LEN + 1;

/// How the header stage of [`read_block`] ended.
struct Head {
    header: block::BlockHeader,
    /// Body bytes already read, at the sink's start.
    body: usize,
    /// Bytes read past the whole body (0 unless the block came whole with the header).
    after: usize,
    /// Those bytes are exactly the NL that ends the response.
    after_is_nl: bool,
    /// The last read ended with END.
    ended: bool,
}

impl Head {
    /// The stage's result when `extra` bytes after the header are at the sink's start.
    fn in_sink<S: Sink + ?Sized>(
        header: block::BlockHeader,
        extra: usize,
        ended: bool,
        sink: &S,
    ) -> Self {
        let body = header.body_len.map_or(extra, |l| {
            extra.min(usize::try_from(l).unwrap_or(usize::MAX))
        });
        let after = extra - body;
        Head {
            header,
            body,
            after,
            after_is_nl: after == 1 && sink.byte_at(body) == Some(b'\n'),
            ended,
        }
    }
}

/// Reads one block from the link's device into `sink`. With `query` (a whole
/// message, its terminator included) the message is sent first, in the same backend
/// call as the block's first read where the backend has one
/// ([`Link::write_read`]); without it the device is already addressed to talk.
pub(super) fn read_block<S: Sink + ?Sized>(
    tx: &mut Link<'_, '_>,
    sink: &mut S,
    query: Option<&[u8]>,
) -> Result<BlockInfo> {
    let head = match read_head_into_sink(tx, sink, query)? {
        Ok(h) => h,
        Err(have) => head_apart(tx, sink, have)?,
    };
    // The common case of a small block, all of it in the first read: its body, the
    // NL and END. The rest (more to read, a check that fails) is `read_body`'s.
    if let (Some(len), 1, true, true) = (
        head.header.body_len,
        head.after,
        head.after_is_nl,
        head.ended,
    ) {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        sink.finish(len);
        return Ok(BlockInfo {
            format: head.header.format,
            len,
        });
    }
    read_body(tx, sink, head)
}

/// [`read_head_apart`] from the `have` header bytes at the sink's start (out of line:
/// small blocks never come here).
#[inline(never)]
fn head_apart<S: Sink + ?Sized>(tx: &mut Link<'_, '_>, sink: &mut S, have: usize) -> Result<Head> {
    let mut small = [0u8; MAX_HEADER_LEN];
    small[..have].copy_from_slice(sink.filled(have));
    read_head_apart(tx, sink, &mut small, have)
}

/// The header read into the sink itself with up to [`FIRST_READ`] bytes (one read
/// for small blocks, in the same backend call as `query` when there is one), the
/// body bytes that came with it moved to the sink's start.
/// `Err(n)` when the sink has less room than a longest header (then `n` is 0: nothing
/// was read) or the first read returned `n` bytes of a header without END (a backend
/// that returns what it has): [`read_head_apart`] goes on from those bytes.
// Inlined into its one caller: what it returns stays in registers.
#[inline(always)]
fn read_head_into_sink<S: Sink + ?Sized>(
    tx: &mut Link<'_, '_>,
    sink: &mut S,
    query: Option<&[u8]>,
) -> Result<std::result::Result<Head, usize>> {
    let device = tx.device();
    let room = sink.room(0, Some(FIRST_READ));
    if room.len() <= MAX_HEADER_LEN {
        return no_room(tx, query);
    }
    let first = match query {
        Some(m) => tx.write_read(device, m, room, None),
        None => tx.read(room, None).map_err(WriteReadError::Read),
    };
    let (got, ended) = match first {
        Ok(st) => (st.count, st.end == ReadEnd::Eoi),
        // The query did not go out (or its device could not be addressed to talk):
        // nothing of the block was read.
        Err(WriteReadError::Write(e)) => return Err(e),
        Err(WriteReadError::Read(e)) => return first_read_failed(e, sink),
    };
    let bytes = &sink.filled(got)[..got.min(MAX_HEADER_LEN)];
    // A definite-length header, the common case, without a `Result` to unpack.
    let h = match block::definite_header(bytes) {
        Some(h) => h,
        None => match block::parse_header(bytes)? {
            HeaderParse::Complete(h) => h,
            HeaderParse::NeedAtLeast(k) => return header_cut(got, ended, k),
        },
    };
    let hl = h.header_len;
    sink.move_to_start(hl, got);
    Ok(Ok(Head::in_sink(h, got - hl, ended, sink)))
}

/// [`read_head_into_sink`] with a sink that has no room for a longest header: the
/// query (if any) sent, nothing read (`Err(0)`).
#[cold]
#[inline(never)]
fn no_room(
    tx: &mut Link<'_, '_>,
    query: Option<&[u8]>,
) -> Result<std::result::Result<Head, usize>> {
    if let Some(m) = query {
        let device = tx.device();
        tx.write_to(device, m, true)?;
        tx.address_from_device(device)?;
    }
    Ok(Err(0))
}

/// The first read of a block failed with `e` after the bytes it says it moved into
/// the sink: a whole short block and its NL are kept, anything else is the error
/// (with the body bytes that came moved to the sink's start).
#[cold]
#[inline(never)]
fn first_read_failed<S: Sink + ?Sized>(
    e: Error,
    sink: &mut S,
) -> Result<std::result::Result<Head, usize>> {
    let got = e.transferred().unwrap_or(0).min(FIRST_READ);
    let bytes = sink.filled(got);
    if let Some(h) = whole_definite_block(bytes) {
        // A short block and its NL, without END: accepted, as longer ones are
        // (some devices drop EOI there).
        let hl = h.header_len;
        sink.move_to_start(hl, got);
        // Nothing follows it (the read timed out): as good as END for what
        // comes after the NL.
        return Ok(Ok(Head::in_sink(h, got - hl, true, sink)));
    }
    let n = got.min(MAX_HEADER_LEN);
    let e = header_read_failed(e, &bytes[..n], 0);
    if let Ok(HeaderParse::Complete(h)) = block::parse_header(&bytes[..n]) {
        // The body bytes that came stay in the buffer, from its start.
        sink.move_to_start(h.header_len, got);
    }
    Err(e)
}

/// The first read returned `got` bytes of a header that needs `k`: read on for the
/// rest (`Err(got)`), or, when the read ended with END, a malformed block.
#[cold]
#[inline(never)]
fn header_cut(got: usize, ended: bool, k: usize) -> Result<std::result::Result<Head, usize>> {
    if !ended && got < MAX_HEADER_LEN {
        return Ok(Err(got));
    }
    // The read ended inside the header (a short answer with END).
    Err(Error::MalformedBlock {
        reason: format!("END after {got} header byte(s), need at least {k}"),
        read: got,
    })
}

/// The header read into `head` (at most [`MAX_HEADER_LEN`] bytes, of which the first
/// `have` are there already), the body bytes that came with it copied to the sink.
fn read_head_apart<S: Sink + ?Sized>(
    tx: &mut Link<'_, '_>,
    sink: &mut S,
    head: &mut [u8; MAX_HEADER_LEN],
    mut have: usize,
) -> Result<Head> {
    // One read of up to 11 bytes covers `#9<9 digits>`; rarely more is needed.
    let mut ended = false;
    let mut want = 11usize.max(have + 1).min(MAX_HEADER_LEN);
    let header = loop {
        if have < want && !ended {
            let st = match tx.read(&mut head[have..want], None) {
                Ok(st) => st,
                Err(e) => {
                    let got = have + e.transferred().unwrap_or(0).min(want - have);
                    if let Some(h) = whole_definite_block(&head[..got]) {
                        // A short block and its NL, without END: accepted, as longer
                        // ones are (some devices drop EOI there). Nothing follows it.
                        have = got;
                        ended = true;
                        break h;
                    }
                    return Err(header_read_failed(e, &head[..got], have));
                }
            };
            have += st.count;
            ended = st.end == ReadEnd::Eoi;
        }
        match block::parse_header(&head[..have])? {
            HeaderParse::Complete(h) => break h,
            HeaderParse::NeedAtLeast(k) => {
                if ended || k > MAX_HEADER_LEN {
                    return Err(Error::MalformedBlock {
                        reason: format!("END after {have} header byte(s), need at least {k}"),
                        read: have,
                    });
                }
                want = k.max(have + 1).min(MAX_HEADER_LEN);
                if want <= have {
                    return Err(Error::MalformedBlock {
                        reason: "header too long".into(),
                        read: have,
                    });
                }
            }
        }
    };
    let hl = header.header_len;
    let extra = &head[hl..have];
    let want_end = header
        .body_len
        .map(|l| usize::try_from(l).unwrap_or(usize::MAX));
    // Bytes of the body that came with the header go first.
    let in_head = want_end.map_or(extra.len(), |l| extra.len().min(l));
    if in_head > 0 {
        let room = sink.room(0, Some(want_end.unwrap_or(in_head).max(in_head)));
        if room.len() < in_head {
            let n = room.len();
            room.copy_from_slice(&extra[..n]);
            return Err(sink.full(want_end, n, hl));
        }
        room[..in_head].copy_from_slice(&extra[..in_head]);
    }
    let tail = &extra[in_head..];
    Ok(Head {
        header,
        body: in_head,
        after: tail.len(),
        after_is_nl: tail == b"\n",
        ended,
    })
}

/// The body after the header stage: `head.extra` bytes of it (and maybe what follows
/// it) are at the sink's start already.
// Out of line: a small block that came whole never needs it.
#[inline(never)]
fn read_body<S: Sink + ?Sized>(
    tx: &mut Link<'_, '_>,
    sink: &mut S,
    head: Head,
) -> Result<BlockInfo> {
    let Head {
        header,
        body,
        after,
        after_is_nl,
        ended,
    } = head;
    let hl = header.header_len;
    let have = hl + body + after;
    let want_end = header
        .body_len
        .map(|l| usize::try_from(l).unwrap_or(usize::MAX));
    let mut filled = body;
    let mut last_had_end = ended;
    // The device's timeout bounds the whole body, from its first read's return (read
    // only when a second read is needed).
    let mut began = None;
    match want_end {
        Some(len) => {
            if after > 0 {
                // The whole block and what follows it came with the header read.
                sink.finish(len);
                if !after_is_nl {
                    return Err(Error::MalformedBlock {
                        reason: format!("{after} unexpected byte(s) after the block body"),
                        read: have,
                    });
                }
                if !ended {
                    nothing_after_nl(tx, have)?;
                }
                return Ok(BlockInfo {
                    format: header.format,
                    len,
                });
            }
            // The body goes straight into the caller's buffer. When the buffer has a
            // byte to spare past the body, the same read also takes the NL that ends
            // the response (one call less per block).
            let mut terminator = None;
            while filled < len {
                if last_had_end {
                    return Err(Error::MalformedBlock {
                        reason: format!(
                            "header announces {len} byte(s) but END came after {filled}"
                        ),
                        read: hl + filled,
                    });
                }
                let room = sink.room(filled, Some(len.saturating_add(1)));
                if room.is_empty() {
                    return Err(sink.full(want_end, filled, hl));
                }
                let st = tx
                    .read(room, None)
                    .map_err(|e| e.offset_transferred(hl + filled.min(len)))?;
                filled += st.count;
                last_had_end = st.end == ReadEnd::Eoi;
                if filled > len {
                    terminator = sink.room(len, Some(len + 1)).first().copied();
                    filled = len;
                }
                if filled < len && !last_had_end {
                    let timeout = tx.timeout();
                    if past_deadline(tx, &mut began, timeout) {
                        return Err(Error::Timeout {
                            operation: "read",
                            timeout,
                            transferred: hl + filled,
                        });
                    }
                }
            }
            sink.finish(len);
            if terminator.is_none() && !last_had_end {
                // IEEE 488.2 ends the response with NL+END after the body; accept NL
                // without END too (some devices drop EOI there).
                let mut t = [0u8; 1];
                let st = tx.read(&mut t, None).map_err(|e| {
                    if e.kind() == crate::ErrorKind::Timeout {
                        Error::MalformedBlock {
                            reason: "no NL+END after the block body (timed out)".into(),
                            read: hl + len,
                        }
                    } else {
                        e.offset_transferred(hl + len)
                    }
                })?;
                terminator = (st.count == 1).then_some(t[0]);
                last_had_end = st.end == ReadEnd::Eoi;
            }
            if let Some(t) = terminator.filter(|&t| t != b'\n') {
                return Err(Error::MalformedBlock {
                    reason: format!("expected NL+END after the block body, got 0x{t:02X}"),
                    read: hl + len + 1,
                });
            }
            if terminator.is_none() && !last_had_end {
                return Err(Error::MalformedBlock {
                    reason: "expected NL+END after the block body, got nothing".into(),
                    read: hl + len,
                });
            }
            if terminator.is_some() && !last_had_end {
                nothing_after_nl(tx, hl + len + 1)?;
            }
            Ok(BlockInfo {
                format: header.format,
                len,
            })
        }
        None => {
            // Indefinite (#0) and HP #I: read until END.
            while !last_had_end {
                let room = sink.room(filled, None);
                if room.is_empty() {
                    return Err(sink.full(None, filled, hl));
                }
                let st = tx.read(room, None).map_err(|e| {
                    if e.kind() == crate::ErrorKind::Timeout {
                        let body = filled + e.transferred().unwrap_or(0);
                        missing_end(header.format, body, hl + body)
                    } else {
                        e.offset_transferred(hl + filled)
                    }
                })?;
                filled += st.count;
                last_had_end = st.end == ReadEnd::Eoi;
                if !last_had_end && past_deadline(tx, &mut began, tx.timeout()) {
                    sink.finish(filled);
                    return Err(missing_end(header.format, filled, hl + filled));
                }
            }
            let mut len = filled;
            if header.format == BlockFormat::Indefinite {
                // (Not through `room`: a Vec's room is a window of at most 1 MiB.)
                let ok = len > 0 && sink.byte_at(len - 1) == Some(b'\n');
                if !ok {
                    sink.finish(len);
                    return Err(Error::MalformedBlock {
                        reason: "indefinite-length block must end with NL+END".into(),
                        read: hl + len,
                    });
                }
                len -= 1;
            }
            sink.finish(len);
            Ok(BlockInfo {
                format: header.format,
                len,
            })
        }
    }
}

/// The NL after a block's body came without END (and the read stopped with it, its
/// buffer full): END must have been dropped (accepted, as some devices drop EOI
/// there), or more bytes follow, which is a malformed block. `read`: bytes read so far.
fn nothing_after_nl(tx: &mut Link<'_, '_>, read: usize) -> Result<()> {
    let mut t = [0u8; 1];
    match tx.read(&mut t, None) {
        Ok(st) if st.count == 0 => Ok(()),
        Ok(st) => Err(Error::MalformedBlock {
            reason: format!(
                "byte 0x{:02X}{} after the NL that ends the block",
                t[0],
                if st.end == ReadEnd::Eoi {
                    ""
                } else {
                    " and more"
                }
            ),
            read: read + 1,
        }),
        Err(e) if e.kind() == crate::ErrorKind::Timeout && e.transferred() == Some(0) => Ok(()),
        Err(e) => Err(e.offset_transferred(read)),
    }
}

/// Whether `timeout` has passed since `began` on the backend's clock;
/// `began` becomes now when it is not known yet.
pub(super) fn past_deadline(
    tx: &mut Link<'_, '_>,
    began: &mut Option<Duration>,
    timeout: Timeout,
) -> bool {
    if timeout == Timeout::Never {
        return false;
    }
    let now = tx.now();
    timeout.is_over(now.saturating_sub(*began.get_or_insert(now)))
}

/// A read of a block's header failed after `got` bytes (`have` before this read). A
/// timeout after a complete `#0` or `#I` header is the missing END of that block, as
/// it is when the body has started: `MalformedBlock` whatever the length.
fn header_read_failed(e: Error, got: &[u8], have: usize) -> Error {
    if e.kind() == crate::ErrorKind::Timeout {
        if let Ok(HeaderParse::Complete(h)) = block::parse_header(got) {
            if h.body_len.is_none() {
                return missing_end(h.format, got.len() - h.header_len, got.len());
            }
        }
    }
    e.offset_transferred(have)
}

/// The header of `bytes` when they hold a whole definite-length block followed by NL.
fn whole_definite_block(bytes: &[u8]) -> Option<block::BlockHeader> {
    let Ok(HeaderParse::Complete(h)) = block::parse_header(bytes) else {
        return None;
    };
    let end = h
        .header_len
        .checked_add(usize::try_from(h.body_len?).ok()?)?;
    (bytes.len() == end + 1 && bytes[end] == b'\n').then_some(h)
}

/// An `#0` or `#I` block whose talker stopped before END.
fn missing_end(format: BlockFormat, body: usize, read: usize) -> Error {
    Error::MalformedBlock {
        reason: format!(
            "missing END: timed out after {body} body byte(s) of an {} block",
            if format == BlockFormat::HpI {
                "#I"
            } else {
                "#0"
            }
        ),
        read,
    }
}

fn too_large(want_end: Option<usize>, filled: usize, hl: usize) -> Error {
    let what = match want_end {
        Some(l) => format!("a block of {l} byte(s)"),
        None => "the block".to_string(),
    };
    Error::InvalidArgument(format!(
        "{what} does not fit the {filled}-byte buffer ({} bytes read; clear the device before its next use)",
        hl + filled
    ))
}
