//! Device handles: one address on a [`Bus`], with message, block and status operations.

use std::time::Duration;

use crate::address::Address;
use crate::backend::{BackendExt, Eos, ReadEnd, ReadStatus, WriteReadError};
use crate::block::{self, BlockFormat, BlockValue, Endian, HeaderParse, MAX_HEADER_LEN};
use crate::bus::Bus;

mod link;
use crate::error::{Error, Result};
use crate::message::InterfaceMessage;
use crate::status::StatusByte;
use crate::timeout::Timeout;
use link::Link;

/// Commands up to this length are sent with their terminator in one backend write.
const SMALL_WRITE: usize = 512;
/// Commands shorter than this are put together with their terminator in 64 bytes.
const SHORT_WRITE: usize = 64;
/// The first read of a text answer on a device-level backend (the rest follows it).
const FIRST_ANSWER: usize = 256;
/// Growth step when reading into a `Vec` of unknown final size.
const GROW_STEP: usize = 64 * 1024;
/// Largest single allocation made ahead of data that has not arrived yet.
const MAX_AHEAD: usize = 1 << 20;

/// The longest response [`Device::query`], [`Device::read_to_end`] and the calls like
/// them read by default, and the longest block body [`Device::read_block`] and
/// [`Device::query_block`] take: 64 MiB (change it per handle with
/// [`Device::set_max_read`]).
/// A talker that goes on past it without END or EOS gets
/// [`Error::ResponseTooLong`] instead of all the memory.
pub const DEFAULT_MAX_READ: usize = 64 << 20;

impl Bus {
    /// A handle to the device at `address` (a number, a [`PrimaryAddress`](crate::PrimaryAddress) or an [`Address`]).
    pub fn device<A>(&self, address: A) -> Result<Device>
    where
        A: TryInto<Address>,
        Error: From<A::Error>,
    {
        Ok(Device::new(self.clone(), address.try_into()?))
    }
}

/// A device at one address on a bus.
///
/// Settings (timeout, EOS, write terminator) belong to the handle, are applied at
/// the start of each transaction, and do not affect other handles.
#[derive(Debug, Clone)]
pub struct Device {
    bus: Bus,
    address: Address,
    timeout: Option<Timeout>,
    eos: Option<Eos>,
    write_terminator: Option<u8>,
    max_read: usize,
}

/// What [`Device::read_block_into`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockInfo {
    /// The block's format.
    pub format: BlockFormat,
    /// Body bytes placed at the start of the caller's buffer.
    pub len: usize,
}

impl Device {
    pub(crate) fn new(bus: Bus, address: Address) -> Self {
        Self {
            bus,
            address,
            timeout: None,
            eos: None,
            write_terminator: Some(b'\n'),
            max_read: DEFAULT_MAX_READ,
        }
    }

    /// The device's address.
    pub fn address(&self) -> Address {
        self.address
    }

    /// The bus this device is on.
    pub fn bus(&self) -> &Bus {
        &self.bus
    }

    /// Sets this handle's I/O timeout (`None`: the bus default; [`Timeout::Never`]: no
    /// timeout at all).
    pub fn set_timeout(&mut self, timeout: Option<Timeout>) {
        self.timeout = timeout;
    }

    /// Sets the EOS byte that ends reads besides END (`None`: END only, the default).
    /// Block reads always turn EOS off while the body is read.
    pub fn set_eos(&mut self, eos: Option<Eos>) {
        self.eos = eos;
    }

    /// Sets the longest response the whole-message reads take ([`Device::query`],
    /// [`Device::read_to_end`], [`Device::read_to_end_into`], [`Device::read_string`];
    /// for [`Device::read_block`] and [`Device::query_block`], the longest block body;
    /// default [`DEFAULT_MAX_READ`], at least 1). A longer one is
    /// [`Error::ResponseTooLong`], with the bytes read.
    pub fn set_max_read(&mut self, max: usize) {
        self.max_read = max.max(1);
    }

    /// The longest response the whole-message reads take (see [`Device::set_max_read`]).
    pub fn max_read(&self) -> usize {
        self.max_read
    }

    /// Applies `settings`: each field that is set replaces this handle's
    /// ([`crate::Timeout::Never`] is no timeout at all).
    pub fn apply(&mut self, settings: &crate::settings::DeviceSettings) {
        if let Some(t) = settings.timeout {
            self.set_timeout(Some(t));
        }
        if settings.eos.is_some() {
            self.set_eos(settings.read_eos());
        }
        if let Some(t) = settings.write_terminator {
            self.set_write_terminator(t);
        }
        if let Some(m) = settings.max_read {
            self.set_max_read(m);
        }
    }

    /// Sets the byte [`Device::write_str`] and the queries append (`None`: nothing; default NL).
    pub fn set_write_terminator(&mut self, terminator: Option<u8>) {
        self.write_terminator = terminator;
    }

    fn run<T>(&self, f: impl FnOnce(&mut Link<'_, '_>) -> Result<T>) -> Result<T> {
        self.bus.transaction(|tx| {
            tx.use_timeout(self.timeout)?;
            f(&mut Link::new(tx, self.address))
        })
    }

    /// Runs `f` on `data` with the write terminator after it, as one message of one
    /// write; `None` when it takes two (a long message: the terminator goes apart).
    fn with_message<T>(&self, data: &[u8], f: impl FnOnce(&[u8]) -> T) -> Option<T> {
        match self.write_terminator {
            None => Some(f(data)),
            // Most commands and queries: a small buffer to zero and fill first.
            Some(t) if data.len() < SHORT_WRITE => Some(terminated::<SHORT_WRITE, T>(data, t, f)),
            Some(t) if data.len() < SMALL_WRITE => Some(terminated::<SMALL_WRITE, T>(data, t, f)),
            Some(_) => None,
        }
    }

    fn send(&self, tx: &mut Link<'_, '_>, data: &[u8], terminate: bool) -> Result<()> {
        // The addressing goes with the first write (one backend call where it can).
        let one = if terminate {
            self.with_message(data, |m| tx.write_to(self.address, m, true))
        } else {
            Some(tx.write_to(self.address, data, true))
        };
        match one {
            Some(sent) => {
                sent?;
            }
            None => {
                // A long message with a terminator: the terminator goes in a second write.
                let n = tx.write_to(self.address, data, false)?;
                if let Some(t) = self.write_terminator {
                    tx.write(&[t], true).map_err(|e| e.offset_transferred(n))?;
                }
            }
        }
        log::debug!("write {} byte(s) to {}", data.len(), self.address);
        Ok(())
    }

    fn receive(&self, tx: &mut Link<'_, '_>, buf: &mut [u8]) -> Result<ReadStatus> {
        let st = tx.read_from(self.address, buf, self.eos)?;
        log::debug!(
            "read {} byte(s) from {} ({:?})",
            st.count,
            self.address,
            st.end
        );
        Ok(st)
    }

    fn receive_to_end(&self, tx: &mut Link<'_, '_>, out: &mut Vec<u8>) -> Result<()> {
        // Addressed apart from the reads: an addressing error must not be taken for a
        // read's count of bytes kept.
        tx.address_from_device(self.address)?;
        let start = out.len();
        self.read_on(tx, out, start, start, None)
    }

    /// Reads on until the end of the message into `out`, which holds this message's
    /// bytes from `start` and is filled up to `filled`; keeps what arrived on an error.
    /// The read began at `began` on the backend's clock (`None`: when its first
    /// backend read returned; the clock is not read for an answer that comes in one):
    /// no backend read starts once the timeout has passed since, and none goes past
    /// [`Device::max_read`] bytes.
    fn read_on(
        &self,
        tx: &mut Link<'_, '_>,
        out: &mut Vec<u8>,
        start: usize,
        mut filled: usize,
        mut began: Option<Duration>,
    ) -> Result<()> {
        let timeout = tx.timeout();
        // Whether a backend read of this message has returned (`began` is known then).
        let mut read_before = began.is_some();
        loop {
            let got = filled - start;
            if got >= self.max_read {
                out.truncate(filled);
                return Err(Error::ResponseTooLong {
                    limit: self.max_read,
                    transferred: got,
                    data: Vec::new(),
                });
            }
            if read_before && past_deadline(tx, &mut began, timeout) {
                out.truncate(filled);
                return Err(Error::Timeout {
                    operation: "read",
                    timeout,
                    transferred: got,
                });
            }
            let left = self.max_read - got;
            if out.len() == filled {
                let step = got.clamp(256, GROW_STEP).min(left);
                out.resize(filled + step, 0);
            }
            let room = out.len().min(filled + left);
            let st = tx.read(&mut out[filled..room], self.eos);
            read_before = true;
            match st {
                Ok(st) => {
                    filled += st.count;
                    if st.is_end() {
                        out.truncate(filled);
                        return Ok(());
                    }
                }
                Err(e) => {
                    // Keep what arrived: the caller's Vec holds it, the error says how much.
                    let got = e.transferred().unwrap_or(0);
                    out.truncate(filled + got);
                    return Err(e.offset_transferred(filled - start));
                }
            }
        }
    }

    /// Sends `data` exactly as given, with EOI on the last byte.
    pub fn write(&self, data: &[u8]) -> Result<()> {
        self.run(|tx| self.send(tx, data, false))
    }

    /// Sends `text` followed by the write terminator (NL by default), with EOI.
    pub fn write_str(&self, text: &str) -> Result<()> {
        self.run(|tx| self.send(tx, text.as_bytes(), true))
    }

    /// Sends `data` without EOI (more of the same message follows).
    pub fn write_partial(&self, data: &[u8]) -> Result<usize> {
        self.run(|tx| {
            tx.address_to_device(self.address)?;
            tx.write(data, false)
        })
    }

    /// Reads into `buf` until END, EOS (if set), or `buf` is full.
    pub fn read(&self, buf: &mut [u8]) -> Result<ReadStatus> {
        self.run(|tx| self.receive(tx, buf))
    }

    /// Reads a whole message (until END or EOS) into a new `Vec`, of at most
    /// [`Device::max_read`] bytes (past it: [`Error::ResponseTooLong`] with the bytes).
    ///
    /// On a timeout the bytes that arrived are lost with the `Vec`; use
    /// [`Device::read_to_end_into`] to keep them.
    pub fn read_to_end(&self) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        let r = self.read_to_end_into(&mut v);
        with_data(r, v)
    }

    /// Appends a whole message of at most [`Device::max_read`] bytes to `out`; the
    /// device's timeout bounds the whole read. On error `out` still holds what arrived.
    pub fn read_to_end_into(&self, out: &mut Vec<u8>) -> Result<()> {
        self.run(|tx| self.receive_to_end(tx, out))
    }

    /// Reads a whole message as text, without the trailing NL (and CR).
    pub fn read_string(&self) -> Result<String> {
        let v = self.read_to_end()?;
        to_text(v)
    }

    /// Sends `command` (plus terminator) and reads the answer as text, in one
    /// transaction. The answer is at most [`Device::max_read`] bytes (past it:
    /// [`Error::ResponseTooLong`] with the bytes), and the device's timeout bounds the
    /// whole read.
    pub fn query(&self, command: &str) -> Result<String> {
        let mut v = Vec::new();
        let r = self.run(|tx| {
            if tx.device_level() {
                // The write and the first read in one backend call (a network adapter
                // overlaps them), the rest of a long answer after it.
                let began = tx.now();
                v.resize(FIRST_ANSWER.min(self.max_read), 0);
                let eos = self.eos;
                let first = self.with_message(command.as_bytes(), |m| {
                    tx.write_read(self.address, m, &mut v, eos)
                });
                match first {
                    Some(Ok(st)) if st.is_end() => {
                        v.truncate(st.count);
                        return Ok(());
                    }
                    Some(Ok(st)) => return self.read_on(tx, &mut v, 0, st.count, Some(began)),
                    Some(Err(WriteReadError::Write(e))) => {
                        v.clear();
                        return Err(e);
                    }
                    Some(Err(WriteReadError::Read(e))) => {
                        v.truncate(e.transferred().unwrap_or(0).min(FIRST_ANSWER));
                        return Err(e);
                    }
                    None => v.clear(),
                }
            }
            self.send(tx, command.as_bytes(), true)?;
            self.receive_to_end(tx, &mut v)
        });
        to_text(with_data(r, v)?)
    }

    /// Sends `command` (plus terminator) and reads the answer into `buf`, with no
    /// allocation. Returns how the read ended.
    pub fn query_into(&self, command: &[u8], buf: &mut [u8]) -> Result<ReadStatus> {
        self.run(|tx| {
            if tx.device_level() {
                // One backend call: a network adapter overlaps the write and the read.
                let eos = self.eos;
                if let Some(r) =
                    self.with_message(command, |m| tx.write_read(self.address, m, buf, eos))
                {
                    return r.map_err(WriteReadError::into_error);
                }
            }
            self.send(tx, command, true)?;
            self.receive(tx, buf)
        })
    }

    /// Reads one arbitrary block (any format in [`BlockFormat`]) straight into `buf` and
    /// returns its format and length. EOS is off while the block is read, so 0x0A in the
    /// data never ends it.
    ///
    /// Errors: [`Error::MalformedBlock`] for a bad header, a body shorter than announced,
    /// or a missing END; [`Error::InvalidArgument`] when the block is larger than `buf`
    /// (its first `buf.len()` bytes are in `buf`; clear the device before using it again).
    pub fn read_block_into(&self, buf: &mut [u8]) -> Result<BlockInfo> {
        self.run(|tx| {
            tx.address_from_device(self.address)?;
            read_block(tx, &mut SliceSink(buf))
        })
    }

    /// Reads one arbitrary block into a new `Vec` (allocation grows with what arrives,
    /// not with what the header announces). A body longer than [`Device::max_read`] is
    /// [`Error::ResponseTooLong`] with the body bytes read; the device's timeout bounds
    /// the whole read.
    pub fn read_block(&self) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        let r = self.run(|tx| {
            tx.address_from_device(self.address)?;
            read_block(tx, &mut self.vec_sink(&mut v))
        });
        with_data(r.map(drop), v)
    }

    /// Sends `command` and reads the block it answers, in one transaction (bounded as
    /// [`Device::read_block`] is).
    pub fn query_block(&self, command: &str) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        let r = self.run(|tx| {
            self.send(tx, command.as_bytes(), true)?;
            tx.address_from_device(self.address)?;
            read_block(tx, &mut self.vec_sink(&mut v))
        });
        with_data(r.map(drop), v)
    }

    fn vec_sink<'v>(&self, v: &'v mut Vec<u8>) -> VecSink<'v> {
        VecSink {
            v,
            max: self.max_read,
        }
    }

    /// Sends `command` and reads the block it answers into `buf`, in one transaction.
    pub fn query_block_into(&self, command: &str, buf: &mut [u8]) -> Result<BlockInfo> {
        self.run(|tx| {
            self.send(tx, command.as_bytes(), true)?;
            tx.address_from_device(self.address)?;
            read_block(tx, &mut SliceSink(buf))
        })
    }

    /// Sends `command`, reads the block it answers and decodes it as values of `T`.
    ///
    /// ```
    /// use gpib::backend::fake::{FakeBoard, FakeInstrument};
    /// use gpib::{block::Endian, Bus};
    /// // A scope that answers WAV:DATA? with #212<12 bytes>: three big-endian f32.
    /// let points: Vec<u8> = [0.5f32, -1.0, 2.0].iter().flat_map(|v| v.to_be_bytes()).collect();
    /// let fake = FakeInstrument::new().block("WAV:DATA?", &points);
    /// let scope = Bus::new(FakeBoard::new().with(7, fake)?).device(7)?;
    /// let wave: Vec<f32> = scope.query_values("WAV:DATA?", Endian::Big)?;
    /// assert_eq!(wave, [0.5, -1.0, 2.0]);
    /// # Ok::<(), gpib::Error>(())
    /// ```
    pub fn query_values<T: BlockValue>(&self, command: &str, endian: Endian) -> Result<Vec<T>> {
        let body = self.query_block(command)?;
        block::values(&body, endian)
    }

    /// Sends `prefix` then `data` as a block of `format`, END on the last byte, in
    /// one transaction (e.g. `WBLD 1,200000,` + `#I` + data).
    pub fn write_block(&self, prefix: &[u8], format: BlockFormat, data: &[u8]) -> Result<()> {
        let mut head = Vec::with_capacity(prefix.len() + MAX_HEADER_LEN);
        head.extend_from_slice(prefix);
        crate::block::encode_header(format, data.len(), &mut head)?;
        self.run(|tx| {
            tx.address_to_device(self.address)?;
            let mut sent = tx.write(&head, false)?;
            match format {
                BlockFormat::Indefinite => {
                    sent += tx
                        .write(data, false)
                        .map_err(|e| e.offset_transferred(sent))?;
                    tx.write(b"\n", true)
                        .map_err(|e| e.offset_transferred(sent))?;
                }
                BlockFormat::HpI => {
                    if data.is_empty() {
                        return Err(Error::InvalidArgument(
                            "an #I block needs at least one byte to carry END".into(),
                        ));
                    }
                    tx.write(data, true)
                        .map_err(|e| e.offset_transferred(sent))?;
                }
                _ => {
                    sent += tx
                        .write(data, false)
                        .map_err(|e| e.offset_transferred(sent))?;
                    match self.write_terminator {
                        Some(t) => tx.write(&[t], true),
                        None => tx.write(&[], true),
                    }
                    .map_err(|e| e.offset_transferred(sent))?;
                }
            }
            Ok(())
        })
    }

    /// SDC: clears this device (its input and output buffers, its parser).
    pub fn clear(&self) -> Result<()> {
        self.addressed_command(InterfaceMessage::SelectedDeviceClear)
    }

    /// GET: triggers this device.
    pub fn trigger(&self) -> Result<()> {
        self.addressed_command(InterfaceMessage::GroupExecuteTrigger)
    }

    /// GTL: returns this device to local (front-panel) control.
    pub fn go_to_local(&self) -> Result<()> {
        self.addressed_command(InterfaceMessage::GoToLocal)
    }

    /// Puts this device in remote: asserts REN and addresses it to listen.
    pub fn remote(&self) -> Result<()> {
        self.run(|tx| {
            if tx.device_level() {
                return crate::backend::device_level::of(tx.backend())?.device_remote(self.address);
            }
            tx.backend().remote_enable(true)?;
            tx.address_to_device(self.address)
        })
    }

    /// Serial-polls this device.
    pub fn serial_poll(&self) -> Result<StatusByte> {
        self.run(|tx| tx.backend().serial_poll(self.address))
    }

    /// True when a device listens at this address.
    pub fn is_present(&self) -> Result<bool> {
        self.run(|tx| tx.backend().listener_present(self.address))
    }

    fn addressed_command(&self, m: InterfaceMessage) -> Result<()> {
        self.run(|tx| tx.addressed_command(self.address, m))
    }
}

/// Runs `f` on `data` followed by `t`, put together in a buffer of `N` bytes on the
/// stack (`data` is shorter than `N`).
fn terminated<const N: usize, T>(data: &[u8], t: u8, f: impl FnOnce(&[u8]) -> T) -> T {
    let mut buf = [0u8; N];
    buf[..data.len()].copy_from_slice(data);
    buf[data.len()] = t;
    f(&buf[..=data.len()])
}

/// `v` when `r` is `Ok`; a [`Error::ResponseTooLong`] gets `v`, the bytes read, as its data.
fn with_data(r: Result<()>, v: Vec<u8>) -> Result<Vec<u8>> {
    match r {
        Ok(()) => Ok(v),
        Err(Error::ResponseTooLong {
            limit, transferred, ..
        }) => Err(Error::ResponseTooLong {
            limit,
            transferred,
            data: v,
        }),
        Err(e) => Err(e),
    }
}

fn to_text(mut v: Vec<u8>) -> Result<String> {
    while matches!(v.last(), Some(b'\n' | b'\r')) {
        v.pop();
    }
    String::from_utf8(v).map_err(|e| {
        Error::Protocol(format!(
            "answer is not UTF-8 text ({} bytes); read it as bytes instead",
            e.as_bytes().len()
        ))
    })
}

/// Where a block body goes.
trait Sink {
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

struct SliceSink<'a>(&'a mut [u8]);

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
struct VecSink<'a> {
    v: &'a mut Vec<u8>,
    max: usize,
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
    fn in_sink(header: block::BlockHeader, extra: usize, ended: bool, sink: &dyn Sink) -> Self {
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

/// Reads one block from the addressed talker into `sink`; the bus is already addressed.
fn read_block(tx: &mut Link<'_, '_>, sink: &mut dyn Sink) -> Result<BlockInfo> {
    let mut small = [0u8; MAX_HEADER_LEN];
    let head = match read_head_into_sink(tx, sink)? {
        Ok(h) => h,
        Err(have) => {
            small[..have].copy_from_slice(sink.filled(have));
            read_head_apart(tx, sink, &mut small, have)?
        }
    };
    read_body(tx, sink, head)
}

/// The header read into the sink itself with up to [`FIRST_READ`] bytes (one read
/// for small blocks), the body bytes that came with it moved to the sink's start.
/// `Err(n)` when the sink has less room than a longest header (then `n` is 0: nothing
/// was read) or the first read returned `n` bytes of a header without END (a backend
/// that returns what it has): [`read_head_apart`] goes on from those bytes.
fn read_head_into_sink(
    tx: &mut Link<'_, '_>,
    sink: &mut dyn Sink,
) -> Result<std::result::Result<Head, usize>> {
    let room = sink.room(0, Some(FIRST_READ));
    if room.len() <= MAX_HEADER_LEN {
        return Ok(Err(0));
    }
    let (got, ended) = match tx.read(room, None) {
        Ok(st) => (st.count, st.end == ReadEnd::Eoi),
        Err(e) => {
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
            return Err(e);
        }
    };
    let bytes = sink.filled(got);
    match block::parse_header(&bytes[..got.min(MAX_HEADER_LEN)])? {
        HeaderParse::Complete(h) => {
            let hl = h.header_len;
            sink.move_to_start(hl, got);
            Ok(Ok(Head::in_sink(h, got - hl, ended, sink)))
        }
        HeaderParse::NeedAtLeast(_) if !ended && got < MAX_HEADER_LEN => Ok(Err(got)),
        HeaderParse::NeedAtLeast(k) => {
            // The read ended inside the header (a short answer with END).
            Err(Error::MalformedBlock {
                reason: format!("END after {got} header byte(s), need at least {k}"),
                read: got,
            })
        }
    }
}

/// The header read into `head` (at most [`MAX_HEADER_LEN`] bytes, of which the first
/// `have` are there already), the body bytes that came with it copied to the sink.
fn read_head_apart(
    tx: &mut Link<'_, '_>,
    sink: &mut dyn Sink,
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
fn read_body(tx: &mut Link<'_, '_>, sink: &mut dyn Sink, head: Head) -> Result<BlockInfo> {
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
    // The device's timeout bounds the whole body, from its first read's return.
    let (timeout, mut began) = (tx.timeout(), None);
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
                if filled < len && !last_had_end && past_deadline(tx, &mut began, timeout) {
                    return Err(Error::Timeout {
                        operation: "read",
                        timeout,
                        transferred: hl + filled,
                    });
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
                if !last_had_end && past_deadline(tx, &mut began, timeout) {
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
fn past_deadline(tx: &mut Link<'_, '_>, began: &mut Option<Duration>, timeout: Timeout) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_trims_terminators() {
        assert_eq!(to_text(b"abc\r\n".to_vec()).unwrap(), "abc");
        assert_eq!(to_text(b"\n".to_vec()).unwrap(), "");
        assert!(to_text(vec![0xFF, b'\n']).is_err());
    }
}
