//! The Prologix backend: a GPIB-ETHERNET adapter over TCP port 1234, or (feature
//! `prologix-serial`) a GPIB-USB adapter or AR488 clone on a serial port, in
//! controller mode.
//!
//! The adapter addresses devices itself, so this is a device-level backend
//! ([`Backend::device_level`]): [`crate::Device`] works over it unchanged, while raw
//! command bytes, raw data transfers and parallel poll are
//! [`ErrorKind::Unsupported`].
//!
//! On the wire: `++mode 1`, `++auto 0`, `++eos 3` (the adapter appends nothing),
//! `++eoi 1` (EOI with the last byte; `++eoi 0` for a write without END),
//! `++eot_enable 1` with `++eot_char` so END shows in the byte stream, `++addr PAD
//! [SAD+96]`, `++read eoi` (or `++read <byte>` when an EOS byte is set),
//! `++read_tmo_ms` (1..3000; a longer timeout is several reads), `++spoll`, `++srq`,
//! `++clr`, `++trg`, `++loc`, `++llo`, `++ifc`, `++ver`. Data sent has CR, LF, ESC and
//! `+` escaped with ESC. Data read is not escaped by the adapter, so an EOT byte in
//! binary data is told from the END marker by what follows it: the marker is the
//! last byte the adapter sends, so a candidate with nothing after it within
//! [`PrologixOptions::eot_quiet`] is END.

pub(crate) mod connector;
mod escape;
mod port;

use std::io;
use std::time::{Duration, Instant};

pub use escape::{escape_into, Unescaped, Unescaper, ESC};
#[cfg(feature = "prologix-serial")]
pub use port::SerialPort;
pub use port::{Port, TcpPort};

use crate::address::{Address, PrimaryAddress};
use crate::backend::{Backend, DeviceLevel, Eos, ReadEnd, ReadStatus, WireStats, WriteReadError};
use crate::deadline::Deadline;
use crate::error::{Error, ErrorKind, Result};
use crate::status::StatusByte;
use crate::timeout::Timeout;

/// The adapter's longest read timeout, `++read_tmo_ms 3000`.
pub const MAX_ADAPTER_TIMEOUT_MS: u32 = 3000;
/// The TCP port of a GPIB-ETHERNET adapter.
pub const DEFAULT_PORT: u16 = 1234;
/// Longest line accepted for a `++` answer.
const MAX_LINE: usize = 256;
/// Bytes moved per socket read, and per escaped write.
const CHUNK: usize = 64 * 1024;

/// Settings of a Prologix connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrologixOptions {
    /// The byte the adapter appends at END (`++eot_char`).
    pub eot_char: u8,
    /// How long to wait after an EOT byte for more data before taking it as END.
    /// Zero (the default on a loopback address) takes it as END when nothing else has
    /// arrived yet; over a real network or a serial line give it the link's jitter.
    pub eot_quiet: Duration,
    /// How much longer than the adapter's own read timeout to wait before deciding
    /// that the adapter has given up (network latency).
    pub margin: Duration,
    /// Time to wait for the connection and for the `++ver` answer at open.
    pub open_timeout: Duration,
}

impl PrologixOptions {
    /// Defaults for an adapter at `loopback` or remote address.
    pub fn for_link(loopback: bool) -> Self {
        Self {
            eot_char: 0x04,
            eot_quiet: if loopback {
                Duration::ZERO
            } else {
                Duration::from_millis(20)
            },
            margin: Duration::from_millis(if loopback { 50 } else { 300 }),
            open_timeout: Duration::from_secs(5),
        }
    }
}

/// A Prologix adapter in controller mode.
pub struct PrologixBoard {
    port: Box<dyn Port>,
    opts: PrologixOptions,
    start: Instant,
    timeout: Timeout,
    version: String,
    /// The `++addr` in force.
    addr: Option<Address>,
    /// The `++eoi` in force.
    eoi: bool,
    /// The `++read_tmo_ms` in force.
    adapter_tmo_ms: u32,
    /// Bytes received and not used yet: `rx[rx_pos..rx_end]`. `rx` is zeroed once, when
    /// made or grown, not before each receive (64 KiB of memset twice a query was a
    /// sixth of the client's time).
    rx: Vec<u8>,
    rx_pos: usize,
    rx_end: usize,
    /// A `++read` whose END has not been seen: (device, EOS).
    reading: Option<(Address, Option<Eos>)>,
    /// Nothing can have arrived since the last settle: only lines that get no answer
    /// (data, `++addr`, `++eoi`) were sent since. A settle then has nothing to drop.
    fresh: bool,
    /// While a query's lines are gathered: the bytes to send in one write, before the
    /// first wait for an answer.
    cork: Option<Vec<u8>>,
    stats: WireStats,
}

impl std::fmt::Debug for PrologixBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrologixBoard")
            .field("version", &self.version)
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

fn io_err(what: &str, e: io::Error) -> Error {
    Error::Backend {
        kind: ErrorKind::Io,
        message: format!("Prologix adapter: {what}: {e}"),
        transferred: None,
        source: Box::new(e),
    }
}

fn is_wait(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

impl PrologixBoard {
    /// Connects to a GPIB-ETHERNET adapter at `host` (`name` or `name:port`; port
    /// 1234 by default) and puts it in controller mode.
    pub fn connect_tcp(host: &str) -> Result<Self> {
        let addr = crate::backend::resolve(host, DEFAULT_PORT)?;
        let opts = PrologixOptions::for_link(addr.ip().is_loopback());
        Self::connect_tcp_with(host, opts)
    }

    /// [`PrologixBoard::connect_tcp`] with explicit options.
    pub fn connect_tcp_with(host: &str, opts: PrologixOptions) -> Result<Self> {
        let addr = crate::backend::resolve(host, DEFAULT_PORT)?;
        let stream = std::net::TcpStream::connect_timeout(&addr, opts.open_timeout)
            .map_err(|e| io_err(&format!("connecting to {addr}"), e))?;
        let port = TcpPort::new(stream).map_err(|e| io_err("socket options", e))?;
        Self::open(Box::new(port), opts)
    }

    /// Opens the adapter on a serial port (feature `prologix-serial`).
    #[cfg(feature = "prologix-serial")]
    pub fn open_serial(path: &str) -> Result<Self> {
        let port = SerialPort::open(path).map_err(|e| io_err(&format!("opening {path}"), e))?;
        let mut opts = PrologixOptions::for_link(false);
        opts.eot_quiet = Duration::from_millis(25);
        Self::open(Box::new(port), opts)
    }

    /// Takes an adapter on any byte stream and sets it up (controller mode, no
    /// read-after-write, EOI on, nothing appended, the EOT marker on), then checks
    /// that it answers `++ver`.
    pub fn open(port: Box<dyn Port>, opts: PrologixOptions) -> Result<Self> {
        let mut b = Self {
            port,
            opts,
            start: Instant::now(),
            timeout: Timeout::After(Duration::from_secs(10)),
            version: String::new(),
            addr: None,
            eoi: true,
            adapter_tmo_ms: MAX_ADAPTER_TIMEOUT_MS,
            rx: Vec::new(),
            rx_pos: 0,
            rx_end: 0,
            reading: None,
            fresh: false,
            cork: None,
            stats: WireStats::default(),
        };
        let setup = format!(
            "++mode 1\n++auto 0\n++eos 3\n++eoi 1\n++eot_enable 1\n++eot_char {}\n++read_tmo_ms {}\n",
            opts.eot_char, MAX_ADAPTER_TIMEOUT_MS
        );
        b.send(setup.as_bytes(), false)?;
        b.version = b.ask("++ver", opts.open_timeout)?;
        log::debug!("Prologix adapter: {}", b.version);
        Ok(b)
    }

    /// What the adapter answered to `++ver`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// LLO through the adapter (`++llo`): the addressed device ignores its "local" key.
    pub fn local_lockout(&mut self, device: Address) -> Result<()> {
        self.command_for(device, "++llo")
    }

    fn send(&mut self, bytes: &[u8], waits: bool) -> Result<()> {
        self.stats.requests += 1;
        if waits {
            self.stats.round_trips += 1;
            self.fresh = false; // an answer is coming
        }
        self.emit(bytes)
    }

    /// Puts `bytes` on the port, or in the cork while a query's lines are gathered.
    fn emit(&mut self, bytes: &[u8]) -> Result<()> {
        self.stats.bytes_sent += bytes.len() as u64;
        match &mut self.cork {
            Some(c) => {
                c.extend_from_slice(bytes);
                Ok(())
            }
            None => self
                .port
                .write_all_bytes(bytes)
                .map_err(|e| io_err("sending", e)),
        }
    }

    /// Sends what the cork gathered, in one write, and stops gathering.
    fn uncork(&mut self) -> Result<()> {
        match self.cork.take() {
            Some(c) if !c.is_empty() => self
                .port
                .write_all_bytes(&c)
                .map_err(|e| io_err("sending", e)),
            _ => Ok(()),
        }
    }

    /// Receives more bytes into `rx`, waiting at most `wait`. Returns false when
    /// nothing came.
    fn fill(&mut self, wait: Duration) -> Result<bool> {
        // Nothing is waited for with lines still in the cork.
        self.uncork()?;
        if self.rx_pos == self.rx_end {
            self.rx_pos = 0;
            self.rx_end = 0;
        } else if self.rx_pos > 0 && self.rx_end >= CHUNK {
            self.rx.copy_within(self.rx_pos..self.rx_end, 0);
            self.rx_end -= self.rx_pos;
            self.rx_pos = 0;
        }
        let start = self.rx_end;
        if self.rx.len() < CHUNK {
            self.rx.resize(CHUNK, 0); // the first receive
        }
        if start == self.rx.len() {
            // Every byte held is still to be used: room for one more (the buffer grows
            // only as bytes arrive).
            self.rx.push(0);
        }
        let t0 = Instant::now();
        let got = self.port.read_within(&mut self.rx[start..], wait);
        self.stats.waiting += t0.elapsed();
        match got {
            Ok(0) => Err(io_err(
                "receiving",
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the adapter closed the connection",
                ),
            )),
            Ok(n) => {
                self.rx_end = start + n;
                self.stats.bytes_received += n as u64;
                Ok(true)
            }
            Err(e) if is_wait(&e) => Ok(false),
            Err(e) => Err(io_err("receiving", e)),
        }
    }

    fn pending(&self) -> &[u8] {
        &self.rx[self.rx_pos..self.rx_end]
    }

    /// Ends what is left of an earlier read: an unfinished message is read to its
    /// END (or the adapter's timeout) and dropped; stray bytes already received are
    /// dropped.
    fn settle(&mut self) -> Result<()> {
        if self.fresh && self.reading.is_none() && self.rx_pos == self.rx_end {
            return Ok(()); // nothing was asked since the last settle: nothing to drop
        }
        if let Some((_, eos)) = self.reading.take() {
            let mut sink = vec![0u8; 4096];
            let deadline = Deadline::after(Some(self.adapter_wait()));
            loop {
                match self.collect(&mut sink, eos, deadline) {
                    Ok((_, Some(_))) => break,
                    Ok((_, None)) => continue,
                    Err(e) if e.kind() == ErrorKind::Timeout => break,
                    Err(e) => return Err(e),
                }
            }
            self.reading = None;
        }
        self.rx_pos = 0;
        self.rx_end = 0;
        // Whatever has already arrived is stale too; an adapter that keeps sending
        // unasked cannot hold the client past one adapter timeout.
        let deadline = Deadline::after(Some(self.adapter_wait()));
        while self.fill(Duration::ZERO)? {
            self.rx_pos = 0;
            self.rx_end = 0;
            if deadline.passed() {
                return Err(Error::Protocol(format!(
                    "Prologix adapter: it keeps sending unasked data (stale bytes for more than {:?})",
                    self.adapter_wait()
                )));
            }
        }
        self.fresh = true;
        Ok(())
    }

    /// How long the adapter may stay silent before it has given up on a read.
    fn adapter_wait(&self) -> Duration {
        Duration::from_millis(u64::from(self.adapter_tmo_ms)) + self.opts.margin
    }

    fn set_addr(&mut self, device: Address) -> Result<()> {
        if self.addr == Some(device) {
            return Ok(());
        }
        let line = match device.secondary {
            Some(s) => format!("++addr {} {}\n", device.primary, u16::from(s.get()) + 96),
            None => format!("++addr {}\n", device.primary),
        };
        self.send(line.as_bytes(), false)?;
        self.addr = Some(device);
        Ok(())
    }

    fn set_eoi(&mut self, on: bool) -> Result<()> {
        if self.eoi != on {
            self.send(if on { b"++eoi 1\n" } else { b"++eoi 0\n" }, false)?;
            self.eoi = on;
        }
        Ok(())
    }

    /// Sends a `++` command after addressing `device`.
    fn command_for(&mut self, device: Address, cmd: &str) -> Result<()> {
        self.settle()?;
        self.set_addr(device)?;
        self.send(format!("{cmd}\n").as_bytes(), false)
    }

    /// Sends a `++` query and returns its one-line answer (without CR LF).
    fn ask(&mut self, cmd: &str, wait: Duration) -> Result<String> {
        self.settle()?;
        self.send(format!("{cmd}\n").as_bytes(), true)?;
        let deadline = Deadline::after(Some(wait));
        let mut line = Vec::new();
        loop {
            while let Some(&b) = self.pending().first() {
                self.rx_pos += 1;
                if b == b'\n' {
                    while line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    return Ok(String::from_utf8_lossy(&line).into_owned());
                }
                if line.len() >= MAX_LINE {
                    return Err(Error::Protocol(format!(
                        "Prologix adapter: the answer to {cmd} is longer than {MAX_LINE} bytes"
                    )));
                }
                line.push(b);
            }
            let left = deadline.left().unwrap_or_default();
            if left.is_zero() {
                return Err(Error::Timeout {
                    operation: "Prologix ++ command",
                    timeout: Timeout::After(wait),
                    transferred: line.len(),
                });
            }
            self.fill(left)?;
        }
    }

    /// Moves bytes of the message being read into `buf` until END, the EOS byte, or
    /// `buf` is full; waits until `deadline` (`None`: for ever). Returns the count
    /// and how it ended (`None`: `buf` is full and END not seen).
    fn collect(
        &mut self,
        buf: &mut [u8],
        eos: Option<Eos>,
        deadline: Deadline,
    ) -> Result<(usize, Option<ReadEnd>)> {
        let eot = self.opts.eot_char;
        let mut count = 0usize;
        let mut last_byte = Instant::now();
        loop {
            while self.rx_pos < self.rx_end {
                let b = self.rx[self.rx_pos];
                if b == eot && self.rx_pos + 1 == self.rx_end {
                    // The END marker or a data byte: END if nothing follows.
                    if !self.fill(self.opts.eot_quiet)? {
                        self.rx_pos += 1;
                        return Ok((count, Some(ReadEnd::Eoi)));
                    }
                    continue;
                }
                if count == buf.len() {
                    return Ok((count, None));
                }
                self.rx_pos += 1;
                buf[count] = b;
                count += 1;
                if eos.is_some_and(|e| e.matches(b)) {
                    // The adapter stops at the EOS byte; an END marker may follow it.
                    if self.pending().is_empty() {
                        self.fill(Duration::ZERO)?;
                    }
                    if self.pending() == [eot] {
                        self.rx_pos += 1;
                        return Ok((count, Some(ReadEnd::Eoi)));
                    }
                    return Ok((count, Some(ReadEnd::Eos)));
                }
            }
            if count == buf.len() && !buf.is_empty() {
                // Full: is END next? Only what has already arrived is looked at.
                if !self.fill(Duration::ZERO)? {
                    return Ok((count, None));
                }
                continue;
            }
            let mut wait = self.adapter_wait().saturating_sub(last_byte.elapsed());
            if let Some(left) = deadline.left() {
                wait = wait.min(left);
            }
            if wait.is_zero() {
                if deadline.passed() {
                    return Err(Error::Timeout {
                        operation: "read",
                        timeout: self.timeout,
                        transferred: count,
                    });
                }
                // The adapter gave up (its timeout is shorter than ours): read on.
                let cmd = read_command(eos);
                self.send(cmd.as_bytes(), true)?;
                last_byte = Instant::now();
                continue;
            }
            if self.fill(wait)? {
                last_byte = Instant::now();
            }
        }
    }
}

fn read_command(eos: Option<Eos>) -> String {
    match eos {
        Some(e) => format!("++read {}\n", e.byte),
        None => "++read eoi\n".to_string(),
    }
}

/// The error for what the adapter cannot do.
fn cannot(what: &'static str) -> Error {
    Error::unsupported(what, "prologix")
}

impl Backend for PrologixBoard {
    fn name(&self) -> &str {
        "prologix"
    }

    fn board_address(&self) -> PrimaryAddress {
        PrimaryAddress::try_from(0u8).expect("0 is a valid address")
    }

    fn write(&mut self, _data: &[u8], _eoi: bool) -> Result<usize> {
        Err(cannot("a data write without a device address"))
    }

    fn read(&mut self, _buf: &mut [u8], _eos: Option<Eos>) -> Result<ReadStatus> {
        Err(cannot("a data read without a device address"))
    }

    fn interface_clear(&mut self) -> Result<()> {
        self.settle()?;
        self.send(b"++ifc\n", false)?;
        self.addr = None;
        Ok(())
    }

    fn remote_enable(&mut self, _on: bool) -> Result<()> {
        Err(cannot(
            "setting REN (the adapter holds it in controller mode)",
        ))
    }

    fn set_timeout(&mut self, timeout: Timeout) -> Result<Timeout> {
        self.timeout = timeout;
        Ok(timeout)
    }

    fn timeout(&self) -> Timeout {
        self.timeout
    }

    fn now(&self) -> Duration {
        self.start.elapsed()
    }

    fn serial_poll(&mut self, device: Address) -> Result<StatusByte> {
        self.settle()?;
        self.set_addr(device)?;
        let wait = self.timeout_or_default() + self.opts.margin;
        let line = self.ask("++spoll", wait)?;
        line.trim()
            .parse::<u8>()
            .map(StatusByte)
            .map_err(|_| Error::Protocol(format!("Prologix ++spoll answered {line:?}")))
    }

    fn srq(&mut self) -> Result<bool> {
        let wait = self.timeout_or_default() + self.opts.margin;
        let line = self.ask("++srq", wait)?;
        match line.trim() {
            "0" => Ok(false),
            "1" => Ok(true),
            other => Err(Error::Protocol(format!(
                "Prologix ++srq answered {other:?}"
            ))),
        }
    }

    fn wire_stats(&self) -> Option<WireStats> {
        Some(self.stats)
    }

    fn device_level(&mut self) -> Option<&mut dyn DeviceLevel> {
        Some(self)
    }
}

impl DeviceLevel for PrologixBoard {
    fn device_write(&mut self, device: Address, data: &[u8], eoi: bool) -> Result<usize> {
        self.settle()?;
        self.set_addr(device)?;
        if data.is_empty() {
            // The adapter cannot send END without a byte.
            return Ok(0);
        }
        self.set_eoi(eoi)?;
        // One line per message; long data is escaped and sent in pieces (the adapter
        // buffers a character and holds the bus off by handshake meanwhile).
        let mut line = Vec::with_capacity(data.len().min(CHUNK) * 9 / 8 + 1);
        let mut pieces = data.chunks(CHUNK).peekable();
        while let Some(p) = pieces.next() {
            line.clear();
            escape_into(p, &mut line);
            if pieces.peek().is_none() {
                line.push(b'\n');
            }
            self.emit(&line)?;
        }
        self.stats.requests += 1;
        Ok(data.len())
    }

    /// A query's lines (the data, then `++read`) go out in one write: one segment, one
    /// wake-up of the adapter, where two writes cost two.
    fn device_write_read(
        &mut self,
        device: Address,
        data: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        self.settle().map_err(WriteReadError::Write)?;
        self.cork = Some(Vec::with_capacity(data.len() + 32));
        if let Err(e) = self.device_write(device, data, true) {
            self.cork = None;
            return Err(WriteReadError::Write(e));
        }
        // The read's `++read` joins the cork, which goes out before the first wait (and
        // here, if the read never waited).
        let read = self.device_read(device, buf, eos);
        let sent = self.uncork();
        match (read, sent) {
            (Err(e), _) => Err(WriteReadError::Read(e)),
            (Ok(_), Err(e)) => Err(WriteReadError::Write(e)),
            (Ok(status), Ok(())) => Ok(status),
        }
    }

    fn device_read(
        &mut self,
        device: Address,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        if buf.is_empty() {
            return Ok(ReadStatus {
                count: 0,
                end: ReadEnd::BufferFull,
            });
        }
        if self.reading != Some((device, eos)) {
            self.settle()?;
            self.set_addr(device)?;
            let want = match self.timeout {
                Timeout::Never => MAX_ADAPTER_TIMEOUT_MS,
                Timeout::After(t) => u32::try_from(t.as_millis())
                    .unwrap_or(u32::MAX)
                    .clamp(1, MAX_ADAPTER_TIMEOUT_MS),
            };
            if want != self.adapter_tmo_ms {
                self.send(format!("++read_tmo_ms {want}\n").as_bytes(), false)?;
                self.adapter_tmo_ms = want;
            }
            self.send(read_command(eos).as_bytes(), true)?;
            self.reading = Some((device, eos));
        }
        let deadline = Deadline::after(self.timeout.duration());
        match self.collect(buf, eos, deadline) {
            Ok((count, Some(end))) => {
                self.reading = None;
                // The adapter's answer ended with its END marker and nothing after it:
                // it sends nothing more unasked (`++auto 0`), so the next call need
                // not settle.
                if end == ReadEnd::Eoi && self.pending().is_empty() {
                    self.fresh = true;
                }
                Ok(ReadStatus { count, end })
            }
            Ok((count, None)) => Ok(ReadStatus {
                count,
                end: ReadEnd::BufferFull,
            }),
            Err(e) => {
                self.reading = None;
                Err(e)
            }
        }
    }

    fn device_clear(&mut self, device: Address) -> Result<()> {
        self.command_for(device, "++clr")
    }

    fn device_trigger(&mut self, device: Address) -> Result<()> {
        self.command_for(device, "++trg")
    }

    fn device_remote(&mut self, device: Address) -> Result<()> {
        // The adapter asserts REN in controller mode; the device becomes remote when
        // next addressed to listen.
        self.settle()?;
        self.set_addr(device)
    }

    fn device_local(&mut self, device: Address) -> Result<()> {
        self.command_for(device, "++loc")
    }
}

impl PrologixBoard {
    fn timeout_or_default(&self) -> Duration {
        self.timeout.duration().unwrap_or(Duration::from_secs(10))
    }
}
