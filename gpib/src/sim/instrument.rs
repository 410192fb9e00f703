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
/// buffer ([`Output::push_shared`]), which costs no copy until the controller reads it.
/// Text pushed after a shared buffer (a block's final NL) waits behind it.
#[derive(Debug, Default)]
pub struct Output {
    head: Vec<u8>,
    head_pos: usize,
    shared: Option<(Arc<[u8]>, usize, usize)>,
    tail: Vec<u8>,
    end: bool,
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
        self.end = false;
        if start == end {
            return; // nothing to queue (an empty block body)
        }
        if let Some((old, p, e)) = self.shared.take() {
            // Flatten what is queued into the head, then queue the new buffer.
            self.head.drain(..self.head_pos);
            self.head_pos = 0;
            self.head.extend_from_slice(&old[p..e]);
            let tail = std::mem::take(&mut self.tail);
            self.head.extend_from_slice(&tail);
        }
        self.shared = Some((buf, start, end));
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
        let (a, b, c) = self.slices();
        a.len() + b.len() + c.len()
    }

    /// True when nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head_pos == self.head.len()
            && self.shared.as_ref().is_none_or(|(_, p, e)| p == e)
            && self.tail.is_empty()
    }

    /// True when the last queued byte carries END.
    pub fn ends_message(&self) -> bool {
        self.end
    }

    /// The queued bytes as three slices, in order.
    #[inline]
    pub(crate) fn slices(&self) -> (&[u8], &[u8], &[u8]) {
        let a = &self.head[self.head_pos..];
        let b = self
            .shared
            .as_ref()
            .map_or(&[][..], |(buf, p, e)| &buf[*p..*e]);
        (a, b, &self.tail)
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
            if let Some((_, p, e)) = self.shared.as_mut() {
                let s = (*e - *p).min(n);
                *p += s;
                n -= s;
            }
        }
        // The shared buffer is used up only once everything before it was taken.
        if self.head_pos == self.head.len() && matches!(self.shared, Some((_, p, e)) if p == e) {
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
        let (a, b, c) = self.slices();
        let mut n = 0usize;
        let mut hit = false;
        for part in [a, b, c] {
            if n == buf.len() || hit {
                break;
            }
            let room = buf.len() - n;
            let mut take = part.len().min(room);
            if let Some(e) = eos {
                if let Some(i) = e.find(&part[..take]) {
                    take = i + 1;
                    hit = true;
                }
            }
            buf[n..n + take].copy_from_slice(&part[..take]);
            n += take;
        }
        self.consume(n);
        (n, hit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Eos;

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
