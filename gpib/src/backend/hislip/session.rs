//! A HiSLIP client (IVI-6.1, synchronized and overlapped mode): one session on a HiSLIP server's
//! device (`TCPIP::host::hislip0::INSTR`), its synchronous and asynchronous channels.
//!
//! ```no_run
//! use std::time::Duration;
//! use gpib::backend::hislip::HislipSession;
//! let mut s = HislipSession::connect("10.0.0.5", 4880, "hislip0", Duration::from_secs(5))?;
//! println!("{}", String::from_utf8_lossy(&s.query(b"*IDN?\n")?));
//! println!("status byte {:#04x}", s.status_byte()?);
//! # Ok::<(), gpib::Error>(())
//! ```

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::deadline::{Deadline, TimedReader};
use crate::error::{Error, Result};
use crate::hislip::{self, kind, Header, QueryScan, ReadError};

/// The vendor id this client gives in Initialize ("GD", gpib-diag).
const VENDOR: [u8; 2] = *b"GD";
/// The most an answer may hold unless raised ([`HislipSession::set_max_read`]).
const DEFAULT_MAX_READ: usize = 64 << 20;
/// The longest payload taken on the asynchronous channel.
const MAX_ASYNC_PAYLOAD: u64 = 4096;

/// One channel: a reader held to a deadline, and the socket to write on.
struct Channel {
    r: TimedReader,
    w: TcpStream,
}

impl Channel {
    fn connect(addr: std::net::SocketAddr, timeout: Duration) -> Result<Self> {
        let s = TcpStream::connect_timeout(&addr, timeout)?;
        s.set_nodelay(true)?;
        s.set_write_timeout(Some(timeout))?;
        let w = s.try_clone()?;
        Ok(Self {
            r: TimedReader::new(s, 64 * 1024),
            w,
        })
    }

    fn send(&mut self, k: u8, control: u8, param: u32, payload: &[u8]) -> Result<()> {
        hislip::write_message(&mut self.w, k, control, param, payload)?;
        Ok(())
    }
}

/// Maps a read error: a timeout reports the bytes that came.
fn read_error(e: ReadError, operation: &'static str, timeout: Duration, got: usize) -> Error {
    if e.is_timeout() {
        return Error::Timeout {
            operation,
            timeout,
            transferred: got,
        };
    }
    match e {
        ReadError::Io { source, .. } => Error::Io(source),
        e => Error::Protocol(format!("HiSLIP: {e}")),
    }
}

/// A HiSLIP session on one device.
pub struct HislipSession {
    sync: Channel,
    async_: Channel,
    session_id: u16,
    overlapped: bool,
    server_vendor: u32,
    timeout: Duration,
    /// The id of the next Data, DataEnd or Trigger.
    next_id: u32,
    /// The id of the last one sent (answers carry it).
    last_id: Option<u32>,
    /// The last answer was read to its DataEnd (RMT-delivered for the next message).
    rmt: bool,
    max_message: u64,
    max_read: usize,
    /// Service requests (status bytes) that came while waiting for something else.
    srq: Vec<u8>,
    /// The message being sent, scanned for a query.
    scan: QueryScan,
    /// The last message sent holds a query whose answer is not read yet.
    answer_due: bool,
    /// Overlapped mode: the message ids of the queries whose answers are not read,
    /// oldest first.
    asked: std::collections::VecDeque<u32>,
}

/// Service requests kept at most (older ones go).
const MAX_SRQ_KEPT: usize = 64;

impl std::fmt::Debug for HislipSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HislipSession")
            .field("session_id", &self.session_id)
            .field("overlapped", &self.overlapped)
            .finish_non_exhaustive()
    }
}

impl HislipSession {
    /// Opens a session on `sub_address` (`hislip0`) at `host`:`port`: Initialize on
    /// the synchronous channel, AsyncInitialize on the asynchronous one, then the
    /// maximum message size. `timeout` bounds the connection and every later call.
    pub fn connect(host: &str, port: u16, sub_address: &str, timeout: Duration) -> Result<Self> {
        let addr = (host, port)
            .to_socket_addrs()
            .map_err(|e| Error::InvalidArgument(format!("cannot resolve {host:?}: {e}")))?
            .next()
            .ok_or_else(|| Error::InvalidArgument(format!("{host:?} resolves to no address")))?;
        let mut sync = Channel::connect(addr, timeout)?;
        sync.send(
            kind::INITIALIZE,
            0,
            hislip::initialize_param(hislip::VERSION, VENDOR),
            sub_address.as_bytes(),
        )?;
        let h = Self::expect(&mut sync, kind::INITIALIZE_RESPONSE, timeout)?.0;
        let session_id = (h.param & 0xffff) as u16;
        let mut async_ = Channel::connect(addr, timeout)?;
        async_.send(kind::ASYNC_INITIALIZE, 0, u32::from(session_id), &[])?;
        let a = Self::expect(&mut async_, kind::ASYNC_INITIALIZE_RESPONSE, timeout)?.0;
        let mut s = Self {
            sync,
            async_,
            session_id,
            overlapped: h.control & 1 != 0,
            server_vendor: a.param,
            timeout,
            next_id: hislip::FIRST_MESSAGE_ID,
            last_id: None,
            rmt: false,
            max_message: hislip::DEFAULT_MAX_MESSAGE,
            max_read: DEFAULT_MAX_READ,
            srq: Vec::new(),
            scan: QueryScan::default(),
            answer_due: false,
            asked: std::collections::VecDeque::new(),
        };
        s.set_max_message_size(hislip::DEFAULT_MAX_MESSAGE)?;
        Ok(s)
    }

    /// Reads the next message on `ch` within `timeout`.
    fn next(ch: &mut Channel, timeout: Duration) -> Result<hislip::Message> {
        ch.r.set_deadline(Deadline::after(Some(timeout)));
        hislip::read_message(&mut ch.r, MAX_ASYNC_PAYLOAD)
            .map_err(|e| read_error(e, "HiSLIP response", timeout, 0))
    }

    /// Reads the next message on `ch`, which must be of type `want` (an Error or
    /// FatalError from the server is an error that says what it said).
    fn expect(ch: &mut Channel, want: u8, timeout: Duration) -> Result<(Header, Vec<u8>)> {
        let m = Self::next(ch, timeout)?;
        if m.header.kind == want {
            return Ok((m.header, m.payload));
        }
        Err(Self::unexpected(&m.header, &m.payload, want))
    }

    fn unexpected(h: &Header, payload: &[u8], want: u8) -> Error {
        let said = String::from_utf8_lossy(payload);
        Error::Protocol(match h.kind {
            kind::FATAL_ERROR => format!("HiSLIP fatal error {}: {said}", h.control),
            kind::ERROR => format!("HiSLIP error {}: {said}", h.control),
            k => format!(
                "HiSLIP: expected {}, got {}",
                hislip::kind_name(want),
                hislip::kind_name(k)
            ),
        })
    }

    /// The next asynchronous response of type `want`; service requests that come
    /// first are kept for [`HislipSession::wait_srq`].
    fn async_response(&mut self, want: u8) -> Result<(Header, Vec<u8>)> {
        loop {
            let m = Self::next(&mut self.async_, self.timeout)?;
            match m.header.kind {
                k if k == want => return Ok((m.header, m.payload)),
                kind::ASYNC_SERVICE_REQUEST => self.keep_srq(m.header.control),
                _ => return Err(Self::unexpected(&m.header, &m.payload, want)),
            }
        }
    }

    /// The session id the server gave.
    pub fn session_id(&self) -> u16 {
        self.session_id
    }

    /// Whether the session is in overlapped mode (the server's choice at Initialize,
    /// then what the last device clear set: [`HislipSession::set_overlapped`]).
    pub fn overlapped(&self) -> bool {
        self.overlapped
    }

    /// The server's vendor id (AsyncInitializeResponse).
    pub fn server_vendor(&self) -> u32 {
        self.server_vendor
    }

    /// The maximum message size the server takes.
    pub fn max_message_size(&self) -> u64 {
        self.max_message
    }

    /// Tells the server the largest message this client takes; returns the server's.
    pub fn set_max_message_size(&mut self, size: u64) -> Result<u64> {
        self.async_
            .send(kind::ASYNC_MAXIMUM_MESSAGE_SIZE, 0, 0, &size.to_be_bytes())?;
        let (_, p) = self.async_response(kind::ASYNC_MAXIMUM_MESSAGE_SIZE_RESPONSE)?;
        let b = <[u8; 8]>::try_from(p.as_slice())
            .map_err(|_| Error::Protocol("HiSLIP: maximum message size is not 8 bytes".into()))?;
        // At least a header and a byte, whatever the server says.
        self.max_message = u64::from_be_bytes(b).max(hislip::HEADER_LEN as u64 + 1);
        Ok(self.max_message)
    }

    /// The most one answer may hold (longer: an error).
    pub fn set_max_read(&mut self, max: usize) {
        self.max_read = max.max(1);
    }

    /// The timeout of every call.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout.max(Duration::from_millis(1));
        let _ = self.sync.w.set_write_timeout(Some(self.timeout));
        let _ = self.async_.w.set_write_timeout(Some(self.timeout));
    }

    fn take_id(&mut self) -> u32 {
        let id = self.next_id;
        self.last_id = Some(id);
        self.next_id = id.wrapping_add(2);
        id
    }

    fn rmt_control(&mut self) -> u8 {
        u8::from(std::mem::take(&mut self.rmt))
    }

    /// Sends `data` as one message (Data pieces within the server's maximum, the last
    /// a DataEnd).
    pub fn write(&mut self, data: &[u8]) -> Result<()> {
        self.send_data(data, true)
    }

    /// Sends `data` as part of a message (Data messages, no END): the next
    /// [`HislipSession::write`] ends it.
    pub fn write_partial(&mut self, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        self.send_data(data, false)
    }

    fn send_data(&mut self, data: &[u8], end: bool) -> Result<()> {
        let piece = usize::try_from(self.max_message - hislip::HEADER_LEN as u64)
            .unwrap_or(usize::MAX)
            .max(1);
        self.scan.feed(data);
        let mut chunks = data.chunks(piece).peekable();
        if chunks.peek().is_none() {
            let (c, id) = (self.rmt_control(), self.take_id());
            self.sync.send(kind::DATA_END, c, id, &[])?;
        }
        while let Some(c) = chunks.next() {
            let k = if end && chunks.peek().is_none() {
                kind::DATA_END
            } else {
                kind::DATA
            };
            let (ctl, id) = (self.rmt_control(), self.take_id());
            self.sync.send(k, ctl, id, c)?;
        }
        if end {
            self.answer_due = self.scan.is_query();
            self.scan.reset();
            if self.answer_due && self.overlapped {
                self.asked.push_back(self.last_id.unwrap_or(0));
            }
        }
        Ok(())
    }

    /// Whether the last message sent holds a query (IEEE 488.2: a `?` in a program
    /// header) whose answer has not been read: the server sends that answer unasked.
    /// Another answer (a triggered reading) comes after a status query shows MAV.
    pub fn answer_due(&self) -> bool {
        self.answer_due
    }

    fn keep_srq(&mut self, stb: u8) {
        if self.srq.len() >= MAX_SRQ_KEPT {
            self.srq.remove(0);
        }
        self.srq.push(stb);
    }

    /// Takes what has arrived on the asynchronous channel without waiting for more;
    /// the oldest service request's status byte, if one came.
    pub fn poll_srq(&mut self) -> Result<Option<u8>> {
        loop {
            self.async_
                .r
                .set_deadline(Deadline::after(Some(Duration::from_millis(1))));
            match self.async_.r.wait_for_data() {
                Ok(true) => {}
                Ok(false) => {
                    return Err(Error::Protocol(
                        "HiSLIP: the server closed the connection".into(),
                    ))
                }
                Err(_) => break,
            }
            let m = Self::next(&mut self.async_, self.timeout)?;
            if m.header.kind != kind::ASYNC_SERVICE_REQUEST {
                return Err(Self::unexpected(
                    &m.header,
                    &m.payload,
                    kind::ASYNC_SERVICE_REQUEST,
                ));
            }
            self.keep_srq(m.header.control);
        }
        Ok((!self.srq.is_empty()).then(|| self.srq.remove(0)))
    }

    /// Reads one answer, to its DataEnd. Answers to earlier messages are dropped.
    /// A timeout reports the bytes that came.
    pub fn read(&mut self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.sync
            .r
            .set_deadline(Deadline::after(Some(self.timeout)));
        loop {
            let h = hislip::read_header(&mut self.sync.r)
                .map_err(|e| read_error(e, "read", self.timeout, out.len()))?;
            // Synchronized: the answer to the last message; overlapped: to the oldest
            // query not read (answers come in the order of the queries).
            let want = if self.overlapped {
                self.asked.front().copied().or(self.last_id)
            } else {
                self.last_id
            };
            let mine = h.param == hislip::ANY_MESSAGE_ID || Some(h.param) == want;
            match h.kind {
                kind::DATA | kind::DATA_END if mine => {
                    let room = (self.max_read - out.len().min(self.max_read)) as u64;
                    if h.len > room {
                        return Err(Error::Protocol(format!(
                            "HiSLIP answer longer than {} bytes",
                            self.max_read
                        )));
                    }
                    let before = out.len();
                    let mut piece = Vec::new();
                    hislip::read_payload(&mut self.sync.r, &h, room, &mut piece)
                        .map_err(|e| read_error(e, "read", self.timeout, before))?;
                    out.extend_from_slice(&piece);
                    if h.kind == kind::DATA_END {
                        self.rmt = true;
                        if self.overlapped {
                            self.asked.pop_front();
                            self.answer_due = !self.asked.is_empty();
                        } else {
                            self.answer_due = false;
                        }
                        return Ok(out);
                    }
                }
                kind::ERROR | kind::FATAL_ERROR | kind::INTERRUPTED => {
                    let mut p = Vec::new();
                    hislip::read_payload(&mut self.sync.r, &h, MAX_ASYNC_PAYLOAD, &mut p)
                        .map_err(|e| read_error(e, "read", self.timeout, out.len()))?;
                    return Err(Self::unexpected(&h, &p, kind::DATA_END));
                }
                _ => hislip::discard(&mut self.sync.r, h.len)
                    .map_err(|e| read_error(e, "read", self.timeout, out.len()))?,
            }
        }
    }

    /// Writes `command` and reads the answer.
    pub fn query(&mut self, command: &[u8]) -> Result<Vec<u8>> {
        self.write(command)?;
        self.read()
    }

    /// Group execute trigger (Trigger on the synchronous channel).
    pub fn trigger(&mut self) -> Result<()> {
        self.answer_due = self.overlapped && !self.asked.is_empty();
        self.scan.reset();
        let (c, id) = (self.rmt_control(), self.take_id());
        self.sync.send(kind::TRIGGER, c, id, &[])
    }

    /// The device's status byte (AsyncStatusQuery).
    pub fn status_byte(&mut self) -> Result<u8> {
        let c = self.rmt_control();
        self.async_
            .send(kind::ASYNC_STATUS_QUERY, c, self.next_id, &[])?;
        Ok(self.async_response(kind::ASYNC_STATUS_RESPONSE)?.0.control)
    }

    /// Device clear: AsyncDeviceClear, then DeviceClearComplete once acknowledged.
    pub fn clear(&mut self) -> Result<()> {
        self.clear_with(self.overlapped).map(|_| ())
    }

    /// Device clear asking for overlapped mode (`true`) or synchronized mode; returns
    /// the mode the server set (true: overlapped). In overlapped mode queries may be
    /// sent back to back, their answers read afterwards in order.
    pub fn set_overlapped(&mut self, on: bool) -> Result<bool> {
        self.clear_with(on)
    }

    fn clear_with(&mut self, overlap: bool) -> Result<bool> {
        self.async_.send(kind::ASYNC_DEVICE_CLEAR, 0, 0, &[])?;
        self.async_response(kind::ASYNC_DEVICE_CLEAR_ACKNOWLEDGE)?;
        self.sync
            .send(kind::DEVICE_CLEAR_COMPLETE, u8::from(overlap), 0, &[])?;
        // Answers sent before the clear are dropped on the way to the acknowledge.
        self.sync
            .r
            .set_deadline(Deadline::after(Some(self.timeout)));
        loop {
            let h = hislip::read_header(&mut self.sync.r)
                .map_err(|e| read_error(e, "device clear", self.timeout, 0))?;
            if h.kind == kind::DEVICE_CLEAR_ACKNOWLEDGE {
                self.overlapped = h.control & 1 != 0;
                hislip::discard(&mut self.sync.r, h.len)
                    .map_err(|e| read_error(e, "device clear", self.timeout, 0))?;
                break;
            }
            hislip::discard(&mut self.sync.r, h.len)
                .map_err(|e| read_error(e, "device clear", self.timeout, 0))?;
        }
        self.next_id = hislip::FIRST_MESSAGE_ID;
        self.last_id = None;
        self.rmt = false;
        self.answer_due = false;
        self.scan.reset();
        self.asked.clear();
        Ok(self.overlapped)
    }

    /// Requests the exclusive lock (`key` empty) or the shared lock `key`, waiting up
    /// to `timeout`. True when granted.
    pub fn lock(&mut self, key: &str, timeout: Duration) -> Result<bool> {
        let ms = u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX);
        self.async_
            .send(kind::ASYNC_LOCK, hislip::lock::REQUEST, ms, key.as_bytes())?;
        // The server may wait the whole lock timeout before answering.
        let saved = self.timeout;
        self.timeout = saved.saturating_add(timeout);
        let r = self.async_response(kind::ASYNC_LOCK_RESPONSE);
        self.timeout = saved;
        match r?.0.control {
            hislip::lock::SUCCESS => Ok(true),
            hislip::lock::FAILURE => Ok(false),
            c => Err(Error::Protocol(format!(
                "HiSLIP lock request: response {c}"
            ))),
        }
    }

    /// Releases this session's lock: the response code
    /// ([`hislip::lock::SUCCESS`], [`hislip::lock::SUCCESS_SHARED`],
    /// [`hislip::lock::ERROR`] when none was held).
    pub fn unlock(&mut self) -> Result<u8> {
        let id = self.last_id.unwrap_or(0);
        self.async_
            .send(kind::ASYNC_LOCK, hislip::lock::RELEASE, id, &[])?;
        Ok(self.async_response(kind::ASYNC_LOCK_RESPONSE)?.0.control)
    }

    /// (an exclusive lock is held, sessions holding locks) on the device.
    pub fn lock_info(&mut self) -> Result<(bool, u32)> {
        self.async_.send(kind::ASYNC_LOCK_INFO, 0, 0, &[])?;
        let h = self.async_response(kind::ASYNC_LOCK_INFO_RESPONSE)?.0;
        Ok((h.control != 0, h.param))
    }

    /// AsyncRemoteLocalControl with `code` ([`hislip::remote_local`]).
    pub fn remote_local(&mut self, code: u8) -> Result<()> {
        let id = self.last_id.unwrap_or(0);
        self.async_
            .send(kind::ASYNC_REMOTE_LOCAL_CONTROL, code, id, &[])?;
        self.async_response(kind::ASYNC_REMOTE_LOCAL_RESPONSE)
            .map(|_| ())
    }

    /// Waits up to `timeout` for AsyncServiceRequest; its status byte, or `None`.
    pub fn wait_srq(&mut self, timeout: Duration) -> Result<Option<u8>> {
        if let Some(s) = self.poll_srq()? {
            return Ok(Some(s));
        }
        match Self::expect(&mut self.async_, kind::ASYNC_SERVICE_REQUEST, timeout) {
            Ok((h, _)) => Ok(Some(h.control)),
            Err(Error::Timeout { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
}
