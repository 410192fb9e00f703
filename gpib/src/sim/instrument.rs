//! The trait a simulated instrument implements, and what the bus hands it.

use std::sync::Arc;
use std::time::Duration;

use crate::status::StatusByte;

/// A simulated device on a simulated bus.
///
/// The simulator calls these methods as the bus addresses and drives the device; the
/// device answers by queueing bytes on its [`Output`]. Implement it for your own
/// instruments (see `examples/custom_instrument.rs`).
///
/// ```
/// use gpib::sim::{DeviceIo, Instrument};
///
/// /// Answers every message with its length.
/// struct Counter { line: Vec<u8> }
///
/// impl Instrument for Counter {
///     fn model(&self) -> &str { "COUNTER" }
///     fn listen(&mut self, data: &[u8], end: bool, io: &mut DeviceIo<'_>) {
///         self.line.extend_from_slice(data);
///         if end {
///             let n = self.line.len();
///             self.line.clear();
///             io.output.push_str(&format!("{n}\n"));
///             io.output.finish_message();
///             io.executed();
///         }
///     }
/// }
/// ```
pub trait Instrument: Send {
    /// A short model name for transcripts and tables.
    fn model(&self) -> &str;

    /// Data bytes from the controller while the device is addressed to listen; `end` is
    /// true when EOI came with the last byte of `data`.
    fn listen(&mut self, data: &[u8], end: bool, io: &mut DeviceIo<'_>);

    /// SDC or DCL: clear input and output. The default clears the output queue.
    fn clear(&mut self, io: &mut DeviceIo<'_>) {
        io.output.clear();
    }

    /// GET (group execute trigger). The default ignores it.
    fn trigger(&mut self, io: &mut DeviceIo<'_>) {
        let _ = io;
    }

    /// The status byte now; bit 6 (RQS) set means the device asserts SRQ.
    fn status(&mut self, io: &DeviceIo<'_>) -> StatusByte {
        let _ = io;
        StatusByte(0)
    }

    /// Whether [`Instrument::status`] can change with virtual time alone: between the
    /// simulator's calls to this instrument (listen, clear, trigger, timers, polls,
    /// remote changes, [`crate::sim::SimHost::with_instrument`]) and the bytes read
    /// from its output queue. Asked once, when the device is attached.
    ///
    /// The default, `true`, is always right: the simulator asks for the status each time
    /// it looks at SRQ (after every operation while a trace is recorded). An instrument
    /// whose status follows only those events (every built-in one: their status is
    /// their registers and whether output is queued) returns `false`, and is asked again
    /// only after one of them.
    fn status_changes_with_time(&self) -> bool {
        true
    }

    /// A serial poll: returns the status byte and clears the service request (IEEE
    /// 488.2: RQS is reset by the poll). The default returns [`Instrument::status`].
    fn serial_poll(&mut self, io: &DeviceIo<'_>) -> StatusByte {
        self.status(io)
    }

    /// A timer the instrument set ([`DeviceIo::wake_at`]) is due: `token` says which.
    /// `io.now()` is the time it was set for. The default ignores it.
    fn timer(&mut self, token: u64, io: &mut DeviceIo<'_>) {
        let _ = (token, io);
    }

    /// REN/GTL/LLO changed the device's remote or lockout state.
    fn remote_changed(&mut self, remote: bool, lockout: bool) {
        let _ = (remote, lockout);
    }

    /// Why the instrument stopped answering, when it knows (a [`crate::sim::instruments::Replay`]
    /// sent what its recording does not have): a read that would time out fails with
    /// this text instead, as a [`crate::ErrorKind::Protocol`] error. `None` by default.
    fn diagnosis(&self) -> Option<String> {
        None
    }

    /// The instrument as `Any`, so tests can inspect its state
    /// ([`crate::sim::SimHost::with_instrument_as`]). `None` by default.
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
}

/// What the simulator lends an instrument during a call.
pub struct DeviceIo<'a> {
    /// The device's output queue (what it will send when addressed to talk).
    pub output: &'a mut Output,
    pub(crate) now: Duration,
    pub(crate) executed: bool,
    /// Timers asked for during the call: (when, token).
    pub(crate) wakes: Vec<(Duration, u64)>,
}

impl<'a> DeviceIo<'a> {
    /// What a call at virtual time `now` lends the instrument.
    pub(crate) fn new(output: &'a mut Output, now: Duration) -> Self {
        Self {
            output,
            now,
            executed: false,
            wakes: Vec::new(),
        }
    }
}

impl DeviceIo<'_> {
    /// Virtual time now.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// Asks to be called back ([`Instrument::timer`] with `token`) at virtual time `at`
    /// (at once, if `at` is not later than now): a measurement that ends, an operation
    /// that completes, a reading produced in free-run.
    pub fn wake_at(&mut self, at: Duration, token: u64) {
        self.wakes.push((at.max(self.now), token));
    }

    /// Asks to be called back `after` from now (see [`DeviceIo::wake_at`]).
    pub fn wake_after(&mut self, after: Duration, token: u64) {
        self.wake_at(self.now.saturating_add(after), token);
    }

    /// Marks that the device executed a command: it is busy for its configured response
    /// latency before it talks or listens again.
    pub fn executed(&mut self) {
        self.executed = true;
    }
}

/// A device's output queue: bytes it sends when addressed to talk, with END (EOI) on
/// the last byte of each finished message.
///
/// Small answers are copied into reused buffers; a large one can be queued as a shared
/// buffer ([`Output::push_shared`]), which costs no copy until the controller reads it,
/// or as a pattern repeated to any length ([`Output::push_repeating`]), which takes no
/// memory of that length at all. Text pushed after either (a block's final NL) waits
/// behind it.
#[derive(Debug, Default)]
pub struct Output {
    head: Vec<u8>,
    head_pos: usize,
    shared: Option<Run>,
    tail: Vec<u8>,
    end: bool,
}

/// Queued shared bytes: the positions `pos..end` of `buf` repeated, byte `i` being
/// `buf[i % buf.len()]` (a plain shared buffer has `end <= buf.len()`).
#[derive(Debug)]
struct Run {
    buf: Arc<[u8]>,
    pos: usize,
    end: usize,
}

impl Run {
    fn len(&self) -> usize {
        self.end - self.pos
    }

    /// Copies the run's first bytes into `dst` (at most its length), stopping after
    /// an EOS match; consumes nothing. Returns (count, stopped at EOS).
    fn copy_to(&self, dst: &mut [u8], eos: Option<crate::backend::Eos>) -> (usize, bool) {
        let want = dst.len().min(self.len());
        let period = self.buf.len();
        let mut n = 0;
        while n < want {
            let i = (self.pos + n) % period;
            let take = (period - i).min(want - n);
            let src = &self.buf[i..i + take];
            if let Some(k) = eos.and_then(|e| e.find(src)) {
                dst[n..=n + k].copy_from_slice(&src[..=k]);
                return (n + k + 1, true);
            }
            dst[n..n + take].copy_from_slice(src);
            n += take;
        }
        (n, false)
    }
}

impl Output {
    /// Appends bytes (nothing, and END stays as it was, for an empty slice).
    pub fn push(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if self.shared.is_some() {
            self.tail.extend_from_slice(bytes);
        } else {
            if self.head_pos == self.head.len() && self.head_pos > 0 {
                self.head.clear();
                self.head_pos = 0;
            }
            self.head.extend_from_slice(bytes);
        }
        self.end = false;
    }

    /// Appends text.
    pub fn push_str(&mut self, text: &str) {
        self.push(text.as_bytes());
    }

    /// Appends `buf[range]` without copying it (copies only when a shared buffer is
    /// already queued).
    pub fn push_shared(&mut self, buf: Arc<[u8]>, range: std::ops::Range<usize>) {
        let end = range.end.min(buf.len());
        let start = range.start.min(end);
        self.push_run(Run {
            buf,
            pos: start,
            end,
        });
    }

    /// Appends `len` bytes of `pattern` repeated from its start (`pattern[i %
    /// pattern.len()]`), generated as they are read: a long answer of a periodic
    /// pattern (a ramp) costs one copy into the reader's buffer and no memory of its
    /// length. Nothing is queued for an empty pattern or `len` 0.
    pub fn push_repeating(&mut self, pattern: Arc<[u8]>, len: usize) {
        if pattern.is_empty() {
            self.end = false;
            return;
        }
        self.push_run(Run {
            buf: pattern,
            pos: 0,
            end: len,
        });
    }

    fn push_run(&mut self, run: Run) {
        self.end = false;
        if run.len() == 0 {
            return; // nothing to queue (an empty block body)
        }
        if let Some(old) = self.shared.take() {
            // Flatten what is queued into the head, then queue the new run.
            self.head.drain(..self.head_pos);
            self.head_pos = 0;
            let at = self.head.len();
            self.head.resize(at + old.len(), 0);
            old.copy_to(&mut self.head[at..], None);
            let tail = std::mem::take(&mut self.tail);
            self.head.extend_from_slice(&tail);
        }
        self.shared = Some(run);
    }

    /// Marks the end of a message: EOI goes with the last queued byte.
    pub fn finish_message(&mut self) {
        self.end = !self.is_empty();
    }

    /// Discards everything queued.
    pub fn clear(&mut self) {
        self.head.clear();
        self.head_pos = 0;
        self.shared = None;
        self.tail.clear();
        self.end = false;
    }

    /// Bytes waiting.
    #[inline]
    pub fn len(&self) -> usize {
        (self.head.len() - self.head_pos)
            + self.shared.as_ref().map_or(0, Run::len)
            + self.tail.len()
    }

    /// True when nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head_pos == self.head.len()
            && self.shared.as_ref().is_none_or(|r| r.len() == 0)
            && self.tail.is_empty()
    }

    /// True when the last queued byte carries END.
    pub fn ends_message(&self) -> bool {
        self.end
    }

    /// Removes `n` bytes from the front (after they were copied out).
    pub(crate) fn consume(&mut self, mut n: usize) {
        let t = (self.head.len() - self.head_pos).min(n);
        self.head_pos += t;
        n -= t;
        if self.head_pos == self.head.len() {
            self.head.clear();
            self.head_pos = 0;
        }
        if n > 0 {
            if let Some(r) = self.shared.as_mut() {
                let s = r.len().min(n);
                r.pos += s;
                n -= s;
            }
        }
        // The shared buffer is used up only once everything before it was taken.
        if self.head_pos == self.head.len() && self.shared.as_ref().is_some_and(|r| r.len() == 0) {
            self.shared = None;
            // What waited behind the shared buffer moves to the head.
            std::mem::swap(&mut self.head, &mut self.tail);
            self.tail.clear();
            self.head_pos = 0;
        }
        if n > 0 && self.shared.is_none() {
            let t = (self.head.len() - self.head_pos).min(n);
            self.head_pos += t;
        }
        if self.is_empty() {
            self.head.clear();
            self.head_pos = 0;
            self.end = false;
        }
    }

    /// Copies up to `buf.len()` bytes into `buf` (stopping after an EOS match when
    /// `eos` says so) and consumes them. Returns (count, stopped at EOS).
    pub(crate) fn copy_out(
        &mut self,
        buf: &mut [u8],
        eos: Option<crate::backend::Eos>,
    ) -> (usize, bool) {
        if self.shared.is_none() && self.tail.is_empty() {
            // Only copied text queued (every short answer): one slice.
            let part = &self.head[self.head_pos..];
            let mut take = part.len().min(buf.len());
            let mut hit = false;
            if let Some(i) = eos.and_then(|e| e.find(&part[..take])) {
                take = i + 1;
                hit = true;
            }
            buf[..take].copy_from_slice(&part[..take]);
            // `consume` for the head alone: emptied, the queue starts again.
            self.head_pos += take;
            if self.head_pos == self.head.len() {
                self.head.clear();
                self.head_pos = 0;
                self.end = false;
            }
            return (take, hit);
        }
        let mut n = 0usize;
        let mut hit = copy_part(&self.head[self.head_pos..], buf, &mut n, eos);
        if let (false, Some(r)) = (hit, self.shared.as_ref()) {
            let (took, h) = r.copy_to(&mut buf[n..], eos);
            n += took;
            hit = h;
        }
        if !hit {
            hit = copy_part(&self.tail, buf, &mut n, eos);
        }
        self.consume(n);
        (n, hit)
    }
}

/// Copies `part` (or its first bytes, up to an EOS match) into `buf` from `*n`;
/// returns whether it stopped at EOS.
fn copy_part(part: &[u8], buf: &mut [u8], n: &mut usize, eos: Option<crate::backend::Eos>) -> bool {
    let mut take = part.len().min(buf.len() - *n);
    let mut hit = false;
    if let Some(i) = eos.and_then(|e| e.find(&part[..take])) {
        take = i + 1;
        hit = true;
    }
    buf[*n..*n + take].copy_from_slice(&part[..take]);
    *n += take;
    hit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Eos;

    #[test]
    fn a_repeated_pattern_reads_as_its_bytes_across_periods_and_reads() {
        let ramp: Arc<[u8]> = (0..=255u8).collect();
        let want: Vec<u8> = (0..1000usize).map(|i| i as u8).collect();
        let mut o = Output::default();
        o.push(b"#41000");
        o.push_repeating(ramp.clone(), 1000);
        o.push(b"\n");
        o.finish_message();
        assert_eq!(o.len(), 6 + 1000 + 1);
        // Reads of odd sizes, each crossing the pattern's end at another place.
        let mut got = Vec::new();
        let mut buf = [0u8; 77];
        while !o.is_empty() {
            let (n, hit) = o.copy_out(&mut buf, None);
            assert!(!hit);
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(&got[..6], b"#41000");
        assert_eq!(&got[6..1006], &want[..]);
        assert_eq!(&got[1006..], b"\n");
        // EOS inside the run: byte 10 of the ramp is the newline.
        o.push_repeating(ramp.clone(), 300);
        let mut big = [0u8; 512];
        let (n, hit) = o.copy_out(&mut big, Some(Eos::NEWLINE));
        assert_eq!((n, hit), (11, true));
        let (n, hit) = o.copy_out(&mut big, Some(Eos::NEWLINE));
        // The next newline is at 256 + 10.
        assert_eq!((n, hit), (256, true));
        assert_eq!(big[n - 1], b'\n');
        assert_eq!(o.len(), 300 - 11 - 256);
        // A second run behind the first flattens the first into the head, unchanged.
        o.push_repeating(ramp, 3);
        let (n, _) = o.copy_out(&mut big, None);
        let mut expect: Vec<u8> = (267..300usize).map(|i| i as u8).collect();
        expect.extend_from_slice(&[0, 1, 2]);
        assert_eq!(&big[..n], &expect[..]);
        assert!(o.is_empty());
        // Nothing for an empty pattern or length.
        o.push_repeating(Arc::from(&b""[..]), 10);
        o.push_repeating(Arc::from(&b"x"[..]), 0);
        assert!(o.is_empty());
    }

    #[test]
    fn output_orders_text_and_shared() {
        let mut o = Output::default();
        o.push(b"#210");
        let data: Arc<[u8]> = Arc::from(&b"0123\n56789"[..]);
        o.push_shared(data, 0..10);
        o.push(b"\n");
        o.finish_message();
        assert_eq!(o.len(), 15);
        assert!(o.ends_message());
        let mut buf = [0u8; 8];
        let (n, hit) = o.copy_out(&mut buf, Some(Eos::NEWLINE));
        assert_eq!((&buf[..n], hit), (&b"#2100123"[..], false));
        let (n, hit) = o.copy_out(&mut buf, Some(Eos::NEWLINE));
        assert_eq!((&buf[..n], hit), (&b"\n"[..], true));
        let (n, _) = o.copy_out(&mut buf, None);
        assert_eq!(&buf[..n], b"56789\n");
        o.push(b"ab");
        o.push_shared(Arc::from(&b"cd"[..]), 0..2);
        o.push_shared(Arc::from(&b"ef"[..]), 0..2);
        o.push(b"g");
        let mut all = [0u8; 16];
        let (n, _) = o.copy_out(&mut all, None);
        assert_eq!(&all[..n], b"abcdefg");
        assert!(o.is_empty() && !o.ends_message());
    }
}
