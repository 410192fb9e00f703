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

use std::io::{self, Read};
use std::net::ToSocketAddrs;
use std::time::Duration;

use super::channel::{self, cuts_framing, read_error, Channel};
use crate::deadline::Deadline;
use crate::error::{Error, Result};
use crate::hislip::{self, kind, Header, QueryScan};

/// The vendor id this client gives in Initialize ("GD", gpib-diag).
const VENDOR: [u8; 2] = *b"GD";
/// The most an answer may hold unless raised ([`HislipSession::set_max_read`]).
const DEFAULT_MAX_READ: usize = 64 << 20;
/// The longest payload taken on the asynchronous channel.
const MAX_ASYNC_PAYLOAD: u64 = 4096;
/// The most messages one [`HislipSession::poll_srq`] takes (a server that floods
/// service requests cannot keep it taking them).
const MAX_POLLED: usize = 256;

/// Which of the session's two channels.
#[derive(Clone, Copy)]
enum On {
    Sync,
    Async,
}

/// A HiSLIP session on one device.
///
/// Every call is bounded by one deadline, the session's timeout from the call's
/// start (a lock request: and the lock's own timeout): a server that trickles its
/// answers, takes data slowly, or sends service requests, stale answers or other
/// messages nobody waits for cannot make a call wait longer. A call that stops part
/// way through a message leaves the channel's framing lost: the session's later calls
/// say so at once (connect again).
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
    /// Why a channel's framing is lost (a call stopped part way through a message).
    broken: Option<String>,
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

/// Reads the next message on `ch` by `dl`; an error part way through one sets `broken`.
fn next(
    ch: &mut Channel,
    dl: Deadline,
    op: &'static str,
    limit: Duration,
    broken: &mut Option<String>,
) -> Result<hislip::Message> {
    ch.r.set_deadline(dl);
    hislip::read_message(&mut ch.r, MAX_ASYNC_PAYLOAD).map_err(|e| {
        if cuts_framing(&e) {
            *broken = Some(format!("{op} stopped part way through a message ({e})"));
        }
        read_error(e, op, limit, 0)
    })
}

/// The error of a message of type `h.kind` where `want` was expected (an Error or
/// FatalError from the server says what it said).
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

/// Reads the next message on `ch` by `dl`, which must be of type `want`.
fn expect(
    ch: &mut Channel,
    want: u8,
    dl: Deadline,
    op: &'static str,
    limit: Duration,
    broken: &mut Option<String>,
) -> Result<(Header, Vec<u8>)> {
    let m = next(ch, dl, op, limit, broken)?;
    if m.header.kind == want {
        return Ok((m.header, m.payload));
    }
    Err(unexpected(&m.header, &m.payload, want))
}

impl HislipSession {
    /// Opens a session on `sub_address` (`hislip0`) at `host`:`port`: Initialize on
    /// the synchronous channel, AsyncInitialize on the asynchronous one, then the
    /// maximum message size. `timeout` bounds the whole connection (whatever the
    /// server sends meanwhile) and every later call.
    pub fn connect(host: &str, port: u16, sub_address: &str, timeout: Duration) -> Result<Self> {
        const OP: &str = "HiSLIP connect";
        let timeout = timeout.max(Duration::from_millis(1));
        let addr = (host, port)
            .to_socket_addrs()
            .map_err(|e| Error::InvalidArgument(format!("cannot resolve {host:?}: {e}")))?
            .next()
            .ok_or_else(|| Error::InvalidArgument(format!("{host:?} resolves to no address")))?;
        let dl = Deadline::after(Some(timeout));
        let mut broken = None;
        let sent = |r: std::result::Result<(), (usize, io::Error)>| {
            r.map_err(|(_, e)| channel::io_error(e, OP, timeout, 0))
        };
        let mut sync = Channel::connect(addr, dl, timeout)?;
        sent(sync.send(
            kind::INITIALIZE,
            0,
            hislip::initialize_param(hislip::VERSION, VENDOR),
            sub_address.as_bytes(),
            dl,
        ))?;
        let h = expect(
            &mut sync,
            kind::INITIALIZE_RESPONSE,
            dl,
            OP,
            timeout,
            &mut broken,
        )?
        .0;
        let session_id = (h.param & 0xffff) as u16;
        let mut async_ = Channel::connect(addr, dl, timeout)?;
        sent(async_.send(kind::ASYNC_INITIALIZE, 0, u32::from(session_id), &[], dl))?;
        let a = expect(
            &mut async_,
            kind::ASYNC_INITIALIZE_RESPONSE,
            dl,
            OP,
            timeout,
            &mut broken,
        )?
        .0;
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
            broken,
        };
        s.max_message_size_by(hislip::DEFAULT_MAX_MESSAGE, dl, OP)?;
        Ok(s)
    }

    /// A deadline the session's timeout from now.
    fn deadline(&self) -> Deadline {
        Deadline::after(Some(self.timeout))
    }

    /// An error when a channel's framing is lost.
    fn usable(&self) -> Result<()> {
        match &self.broken {
            None => Ok(()),
            Some(why) => Err(Error::Io(io::Error::new(
                io::ErrorKind::BrokenPipe,
                format!("HiSLIP: {why}: the connection's framing is lost; connect again"),
            ))),
        }
    }

    /// Sends one message on `on` by `dl`. A message cut off part way loses the
    /// channel's framing. The error of a timeout holds `done` and the payload bytes
    /// of this message that went.
    #[allow(clippy::too_many_arguments)]
    fn send(
        &mut self,
        on: On,
        k: u8,
        control: u8,
        param: u32,
        payload: &[u8],
        dl: Deadline,
        op: &'static str,
        done: usize,
    ) -> Result<()> {
        self.usable()?;
        let ch = match on {
            On::Sync => &mut self.sync,
            On::Async => &mut self.async_,
        };
        ch.send(k, control, param, payload, dl)
            .map_err(|(sent, e)| {
                if sent > 0 {
                    self.broken = Some(format!(
                        "{op} stopped part way through a {} message ({e})",
                        hislip::kind_name(k)
                    ));
                }
                let data = sent.saturating_sub(hislip::HEADER_LEN);
                channel::io_error(e, op, self.timeout, done + data)
            })
    }

    /// The next asynchronous response of type `want` by `dl`; service requests that
    /// come first are kept for [`HislipSession::wait_srq`] (they do not extend `dl`).
    fn async_response(
        &mut self,
        want: u8,
        dl: Deadline,
        op: &'static str,
        limit: Duration,
    ) -> Result<(Header, Vec<u8>)> {
        loop {
            let m = next(&mut self.async_, dl, op, limit, &mut self.broken)?;
            match m.header.kind {
                k if k == want => return Ok((m.header, m.payload)),
                kind::ASYNC_SERVICE_REQUEST => self.keep_srq(m.header.control),
                _ => return Err(unexpected(&m.header, &m.payload, want)),
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
        let dl = self.deadline();
        self.max_message_size_by(size, dl, "HiSLIP maximum message size")
    }

    fn max_message_size_by(&mut self, size: u64, dl: Deadline, op: &'static str) -> Result<u64> {
        let msg = size.to_be_bytes();
        self.send(
            On::Async,
            kind::ASYNC_MAXIMUM_MESSAGE_SIZE,
            0,
            0,
            &msg,
            dl,
            op,
            0,
        )?;
        let want = kind::ASYNC_MAXIMUM_MESSAGE_SIZE_RESPONSE;
        let (_, p) = self.async_response(want, dl, op, self.timeout)?;
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
    /// a DataEnd), all of it within the timeout; a timeout says how many bytes went.
    pub fn write(&mut self, data: &[u8]) -> Result<()> {
        let dl = self.deadline();
        self.send_data(data, true, dl)
    }

    /// Sends `data` as part of a message (Data messages, no END): the next
    /// [`HislipSession::write`] ends it.
    pub fn write_partial(&mut self, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let dl = self.deadline();
        self.send_data(data, false, dl)
    }

    fn send_data(&mut self, data: &[u8], end: bool, dl: Deadline) -> Result<()> {
        self.usable()?;
        let piece = usize::try_from(self.max_message - hislip::HEADER_LEN as u64)
            .unwrap_or(usize::MAX)
            .max(1);
        self.scan.feed(data);
        let mut chunks = data.chunks(piece).peekable();
        if chunks.peek().is_none() {
            let (c, id) = (self.rmt_control(), self.take_id());
            self.send(On::Sync, kind::DATA_END, c, id, &[], dl, "write", 0)?;
        }
        let mut done = 0;
        while let Some(c) = chunks.next() {
            let k = if end && chunks.peek().is_none() {
                kind::DATA_END
            } else {
                kind::DATA
            };
            let (ctl, id) = (self.rmt_control(), self.take_id());
            self.send(On::Sync, k, ctl, id, c, dl, "write", done)?;
            done += c.len();
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

    /// Takes what has arrived on the asynchronous channel without waiting for more
    /// (at most a few hundred messages, within the timeout); the oldest service
    /// request's status byte, if one came.
    pub fn poll_srq(&mut self) -> Result<Option<u8>> {
        self.poll_async()?;
        Ok((!self.srq.is_empty()).then(|| self.srq.remove(0)))
    }

    /// Takes what has arrived on the asynchronous channel, as
    /// [`HislipSession::poll_srq`] does, and returns every service request kept.
    pub fn take_srqs(&mut self) -> Result<Vec<u8>> {
        self.poll_async()?;
        Ok(std::mem::take(&mut self.srq))
    }

    fn poll_async(&mut self) -> Result<()> {
        self.usable()?;
        const OP: &str = "HiSLIP service request";
        let dl = self.deadline();
        for _ in 0..MAX_POLLED {
            if dl.passed() {
                break;
            }
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
            let m = next(&mut self.async_, dl, OP, self.timeout, &mut self.broken)?;
            if m.header.kind != kind::ASYNC_SERVICE_REQUEST {
                return Err(unexpected(
                    &m.header,
                    &m.payload,
                    kind::ASYNC_SERVICE_REQUEST,
                ));
            }
            self.keep_srq(m.header.control);
        }
        Ok(())
    }

    /// Reads one answer, to its DataEnd. Answers to earlier messages are dropped.
    /// A timeout reports the bytes that came.
    pub fn read(&mut self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let dl = self.deadline();
        self.read_by(&mut out, dl)?;
        Ok(out)
    }

    /// Reads one answer into `out` (appended), by `dl`; on an error `out` holds the
    /// bytes of the answer that came.
    pub(super) fn read_by(&mut self, out: &mut Vec<u8>, dl: Deadline) -> Result<()> {
        const OP: &str = "read";
        self.usable()?;
        let start = out.len();
        let timeout = self.timeout;
        self.sync.r.set_deadline(dl);
        loop {
            let got = out.len() - start;
            let h = match hislip::read_header(&mut self.sync.r) {
                Ok(h) => h,
                Err(e) => {
                    if cuts_framing(&e) {
                        self.broken =
                            Some(format!("a read stopped part way through a header ({e})"));
                    }
                    return Err(read_error(e, OP, timeout, got));
                }
            };
            // Synchronized: the answer to the last message; overlapped: to the oldest
            // query not read (answers come in the order of the queries).
            let want = if self.overlapped {
                self.asked.front().copied().or(self.last_id)
            } else {
                self.last_id
            };
            let mine = h.param == hislip::ANY_MESSAGE_ID || Some(h.param) == want;
            let cut = |what: &str, e: &dyn std::fmt::Display| {
                Some(format!(
                    "a read stopped part way through {what} of {} bytes ({e})",
                    h.len
                ))
            };
            match h.kind {
                kind::DATA | kind::DATA_END if mine => {
                    let room = (self.max_read - got.min(self.max_read)) as u64;
                    if h.len > room {
                        self.broken = cut("an answer", &"too long");
                        return Err(Error::Protocol(format!(
                            "HiSLIP answer longer than {} bytes",
                            self.max_read
                        )));
                    }
                    // Straight into `out`: on an error it holds what came.
                    match (&mut self.sync.r).take(h.len).read_to_end(out) {
                        Ok(n) if n as u64 == h.len => {}
                        Ok(n) => {
                            self.broken = cut("an answer", &"the stream ended");
                            return Err(Error::Protocol(format!(
                                "HiSLIP: the stream ended {n} byte(s) into an answer of {} bytes",
                                h.len
                            )));
                        }
                        Err(e) => {
                            self.broken = cut("an answer", &e);
                            return Err(channel::io_error(e, OP, timeout, out.len() - start));
                        }
                    }
                    if h.kind == kind::DATA_END {
                        self.rmt = true;
                        if self.overlapped {
                            self.asked.pop_front();
                            self.answer_due = !self.asked.is_empty();
                        } else {
                            self.answer_due = false;
                        }
                        return Ok(());
                    }
                }
                kind::ERROR | kind::FATAL_ERROR | kind::INTERRUPTED => {
                    let mut p = Vec::new();
                    if let Err(e) =
                        hislip::read_payload(&mut self.sync.r, &h, MAX_ASYNC_PAYLOAD, &mut p)
                    {
                        self.broken = cut("a message", &e);
                        return Err(read_error(e, OP, timeout, got));
                    }
                    return Err(unexpected(&h, &p, kind::DATA_END));
                }
                _ => {
                    if let Err(e) = hislip::discard(&mut self.sync.r, h.len) {
                        self.broken = cut("a message", &e);
                        return Err(read_error(e, OP, timeout, got));
                    }
                }
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
        let dl = self.deadline();
        self.answer_due = self.overlapped && !self.asked.is_empty();
        self.scan.reset();
        let (c, id) = (self.rmt_control(), self.take_id());
        self.send(On::Sync, kind::TRIGGER, c, id, &[], dl, "HiSLIP trigger", 0)
    }

    /// The device's status byte (AsyncStatusQuery).
    pub fn status_byte(&mut self) -> Result<u8> {
        let dl = self.deadline();
        self.status_byte_by(dl)
    }

    /// The device's status byte, by `dl`.
    pub(super) fn status_byte_by(&mut self, dl: Deadline) -> Result<u8> {
        const OP: &str = "HiSLIP status query";
        let (c, id) = (self.rmt_control(), self.next_id);
        self.send(On::Async, kind::ASYNC_STATUS_QUERY, c, id, &[], dl, OP, 0)?;
        let want = kind::ASYNC_STATUS_RESPONSE;
        Ok(self.async_response(want, dl, OP, self.timeout)?.0.control)
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
        const OP: &str = "HiSLIP device clear";
        let (dl, timeout) = (self.deadline(), self.timeout);
        self.send(On::Async, kind::ASYNC_DEVICE_CLEAR, 0, 0, &[], dl, OP, 0)?;
        self.async_response(kind::ASYNC_DEVICE_CLEAR_ACKNOWLEDGE, dl, OP, timeout)?;
        let ctl = u8::from(overlap);
        self.send(
            On::Sync,
            kind::DEVICE_CLEAR_COMPLETE,
            ctl,
            0,
            &[],
            dl,
            OP,
            0,
        )?;
        // Answers sent before the clear are dropped on the way to the acknowledge.
        self.sync.r.set_deadline(dl);
        loop {
            let h = match hislip::read_header(&mut self.sync.r) {
                Ok(h) => h,
                Err(e) => {
                    if cuts_framing(&e) {
                        self.broken = Some(format!("a device clear stopped part way ({e})"));
                    }
                    return Err(read_error(e, OP, timeout, 0));
                }
            };
            if let Err(e) = hislip::discard(&mut self.sync.r, h.len) {
                self.broken = Some(format!("a device clear stopped part way ({e})"));
                return Err(read_error(e, OP, timeout, 0));
            }
            if h.kind == kind::DEVICE_CLEAR_ACKNOWLEDGE {
                self.overlapped = h.control & 1 != 0;
                break;
            }
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
    /// to `timeout` for it (and the session's timeout on top). True when granted.
    pub fn lock(&mut self, key: &str, timeout: Duration) -> Result<bool> {
        const OP: &str = "HiSLIP lock";
        let ms = u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX);
        // The server may wait the whole lock timeout before answering.
        let limit = self.timeout.saturating_add(timeout);
        let dl = Deadline::after(Some(limit));
        let key = key.as_bytes();
        self.send(
            On::Async,
            kind::ASYNC_LOCK,
            hislip::lock::REQUEST,
            ms,
            key,
            dl,
            OP,
            0,
        )?;
        let r = self.async_response(kind::ASYNC_LOCK_RESPONSE, dl, OP, limit)?;
        match r.0.control {
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
        const OP: &str = "HiSLIP unlock";
        let (dl, id) = (self.deadline(), self.last_id.unwrap_or(0));
        let release = hislip::lock::RELEASE;
        self.send(On::Async, kind::ASYNC_LOCK, release, id, &[], dl, OP, 0)?;
        let want = kind::ASYNC_LOCK_RESPONSE;
        Ok(self.async_response(want, dl, OP, self.timeout)?.0.control)
    }

    /// (an exclusive lock is held, sessions holding locks) on the device.
    pub fn lock_info(&mut self) -> Result<(bool, u32)> {
        const OP: &str = "HiSLIP lock info";
        let dl = self.deadline();
        self.send(On::Async, kind::ASYNC_LOCK_INFO, 0, 0, &[], dl, OP, 0)?;
        let want = kind::ASYNC_LOCK_INFO_RESPONSE;
        let h = self.async_response(want, dl, OP, self.timeout)?.0;
        Ok((h.control != 0, h.param))
    }

    /// AsyncRemoteLocalControl with `code` ([`hislip::remote_local`]).
    pub fn remote_local(&mut self, code: u8) -> Result<()> {
        const OP: &str = "HiSLIP remote/local";
        let (dl, id) = (self.deadline(), self.last_id.unwrap_or(0));
        let k = kind::ASYNC_REMOTE_LOCAL_CONTROL;
        self.send(On::Async, k, code, id, &[], dl, OP, 0)?;
        let want = kind::ASYNC_REMOTE_LOCAL_RESPONSE;
        self.async_response(want, dl, OP, self.timeout).map(|_| ())
    }

    /// Waits up to `timeout` for AsyncServiceRequest; its status byte, or `None`.
    pub fn wait_srq(&mut self, timeout: Duration) -> Result<Option<u8>> {
        if let Some(s) = self.poll_srq()? {
            return Ok(Some(s));
        }
        let dl = Deadline::after(Some(timeout));
        let want = kind::ASYNC_SERVICE_REQUEST;
        let op = "wait for SRQ";
        match expect(&mut self.async_, want, dl, op, timeout, &mut self.broken) {
            Ok((h, _)) => Ok(Some(h.control)),
            Err(Error::Timeout { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
}
