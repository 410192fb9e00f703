//! Device handles: one address on a [`Bus`], with message, block and status operations.

use std::time::Duration;

use crate::address::Address;
use crate::backend::{BackendExt, Eos, ReadEnd, ReadStatus, WriteReadError};
use crate::block::{self, BlockFormat, BlockValue, Endian, HeaderParse, MAX_HEADER_LEN};
use crate::bus::Bus;

use crate::error::{Error, Result};
use crate::message::InterfaceMessage;
use crate::status::StatusByte;
use crate::timeout::Timeout;
use block_read::{past_deadline, read_block, SliceSink, VecSink};
use link::Link;

#[cfg(test)]
mod block_query_tests;
mod block_read;
mod link;

/// Commands up to this length are sent with their terminator in one backend write.
const SMALL_WRITE: usize = 512;
/// Commands shorter than this are put together with their terminator in 64 bytes.
const SHORT_WRITE: usize = 64;
/// The first read of a text answer, in the query's call (the rest follows it).
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

    /// `data` with the write terminator after it, when that is shorter than
    /// [`SHORT_WRITE`] bytes (most commands and queries).
    fn short_message(&self, data: &[u8]) -> Option<ShortMessage> {
        let t = self.write_terminator?;
        if data.len() >= SHORT_WRITE {
            return None;
        }
        let mut m = ShortMessage {
            buf: [0; SHORT_WRITE],
            len: data.len() + 1,
        };
        m.buf[..data.len()].copy_from_slice(data);
        m.buf[data.len()] = t;
        Some(m)
    }

    /// Runs `f` on `data` with the write terminator after it, as one message of one
    /// write; `None` when it takes two (a long message: the terminator goes apart).
    #[inline(always)]
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
            // The write and the first read in one backend call (a network adapter
            // overlaps them, the simulator makes both under one lock), the rest of a
            // long answer after it. The timeout of the rest counts from when the read
            // began: on a device-level backend, when the call did (the read overlaps
            // the write); on a raw one, when the first read returned.
            let began = if tx.device_level() {
                Some(tx.now())
            } else {
                None
            };
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
                Some(Ok(st)) => {
                    let began = began.or_else(|| Some(tx.now()));
                    return self.read_on(tx, &mut v, 0, st.count, began);
                }
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
            self.send(tx, command.as_bytes(), true)?;
            self.receive_to_end(tx, &mut v)
        });
        to_text(with_data(r, v)?)
    }

    /// Sends `command` (plus terminator) and reads the answer into `buf`, with no
    /// allocation. Returns how the read ended.
    pub fn query_into(&self, command: &[u8], buf: &mut [u8]) -> Result<ReadStatus> {
        self.run(|tx| {
            // One backend call: a network adapter overlaps the write and the read, the
            // simulator makes both under one lock. (A bus unaddressed after every
            // transfer is unaddressed after the read too: the write and read apart.)
            let eos = self.eos;
            let one = if tx.unaddresses() {
                None
            } else {
                self.with_message(command, |m| tx.write_read(self.address, m, buf, eos))
            };
            if let Some(r) = one {
                let st = r.map_err(WriteReadError::into_error)?;
                log::debug!(
                    "query of {} byte(s) to {}: read {} byte(s) ({:?})",
                    command.len(),
                    self.address,
                    st.count,
                    st.end
                );
                return Ok(st);
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
            read_block(tx, &mut SliceSink(buf), None)
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
            read_block(tx, &mut self.vec_sink(&mut v), None)
        });
        with_data(r.map(drop), v)
    }

    /// Sends `command` and reads the block it answers, in one transaction (bounded as
    /// [`Device::read_block`] is).
    pub fn query_block(&self, command: &str) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        let r =
            self.run(|tx| self.query_block_on(tx, command.as_bytes(), &mut self.vec_sink(&mut v)));
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
        self.run(|tx| self.query_block_on(tx, command.as_bytes(), &mut SliceSink(buf)))
    }

    /// Sends `command` (plus terminator) and reads the block it answers into `sink`.
    /// A command that fits one message goes with the block's first read: one backend
    /// call on a device-level backend, as a query's write and read.
    fn query_block_on<S: block_read::Sink>(
        &self,
        tx: &mut Link<'_, '_>,
        command: &[u8],
        sink: &mut S,
    ) -> Result<BlockInfo> {
        if let Some(m) = self.short_message(command) {
            // In tail position: the block's result is written where the caller wants it.
            return read_block(tx, sink, Some(m.bytes()));
        }
        self.query_block_long(tx, command, sink)
    }

    /// [`Device::query_block_on`] for a command of [`SHORT_WRITE`] bytes or more, or
    /// without a terminator (out of line: most block queries are short).
    #[inline(never)]
    fn query_block_long<S: block_read::Sink>(
        &self,
        tx: &mut Link<'_, '_>,
        command: &[u8],
        sink: &mut S,
    ) -> Result<BlockInfo> {
        if let Some(r) = self.with_message(command, |m| read_block(tx, sink, Some(m))) {
            return r;
        }
        self.send(tx, command, true)?;
        tx.address_from_device(self.address)?;
        read_block(tx, sink, None)
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

/// A short command and its terminator, on the stack ([`Device::short_message`]).
struct ShortMessage {
    buf: [u8; SHORT_WRITE],
    len: usize,
}

impl ShortMessage {
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Runs `f` on `data` followed by `t`, put together in a buffer of `N` bytes on the
/// stack (`data` is shorter than `N`).
#[inline(always)]
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
