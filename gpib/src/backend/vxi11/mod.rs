//! The VXI-11 backend: a LAN/GPIB gateway (VXI-11.2) reached over ONC RPC on TCP,
//! through the portmapper on port 111 or at a fixed port.
//!
//! The gateway addresses devices itself, so this is a device-level backend
//! ([`Backend::device_level`]): each device gets a link (`create_link` with
//! `gpib0,N` or `gpib0,N,S`) the first time it is used, and [`crate::Device`] works
//! over it unchanged. Writes are `device_write` calls of at most the gateway's
//! `maxRecvSize` bytes, END on the last when asked; reads are `device_read` calls
//! until END, the termination character or a full buffer (the reasons END, CHR,
//! REQCNT). Serial poll is `device_readstb`; clear, trigger, remote and local are
//! `device_clear`, `device_trigger`, `device_remote`, `device_local`. Locks:
//! [`Vxi11Board::lock`] and [`Vxi11Board::unlock`] with the lock timeout of
//! [`Vxi11Options`]. SRQ comes on the interrupt channel: this client serves program
//! 0x0607B1 v1, calls `create_intr_chan` (family TCP) before the first link, when
//! the timeout is known, and `device_enable_srq` on every link; the line itself is
//! read on the gateway's `gpib0` interface link (`device_docmd` bus status), which
//! also gives IFC and REN. Raw command bytes, raw data transfers and parallel poll
//! are [`ErrorKind::Unsupported`]. Closing sends the `destroy_link` calls together
//! and waits for their replies a short while in all (not at all from a gateway that
//! did not answer the last call).
//!
//! [`discover`] finds instruments and gateways on a network: the portmapper GETPORT
//! call that `lxi discover` and the VISA finders broadcast over UDP.

mod channel;
pub(crate) mod connector;
mod discover;
mod intr;
pub mod proto;
mod traits;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use crate::address::{Address, PrimaryAddress};
use crate::backend::{Backend, DeviceLevel, Eos, ReadEnd, ReadStatus, WireStats, WriteReadError};
use crate::error::{Error, ErrorKind, Result};
use crate::rpc::record::Limits;
use crate::settings::Timeout;
use crate::status::StatusByte;
use channel::Channel;
pub use discover::{discover, getport_call, Responder, MAX_RESPONDERS};
use proto::{err, flags, procs, reason};

/// Settings of a VXI-11 connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vxi11Options {
    /// The core channel's port; `None`: ask the portmapper.
    pub port: Option<u16>,
    /// The portmapper's port (111).
    pub portmapper_port: u16,
    /// How long an operation waits for a lock held by another link ([`Vxi11Board::lock`]
    /// this long; an I/O operation no longer than its own timeout, which bounds the
    /// whole operation).
    pub lock_timeout: Duration,
    /// Time to wait for connections.
    pub open_timeout: Duration,
    /// Set up the interrupt channel for SRQ.
    pub interrupts: bool,
}

impl Default for Vxi11Options {
    fn default() -> Self {
        Self {
            port: None,
            portmapper_port: proto::portmap::PORT,
            lock_timeout: Duration::from_secs(10),
            open_timeout: Duration::from_secs(5),
            interrupts: true,
        }
    }
}

/// Bound on the result of one call: a read's data (at most what was asked for, and
/// at most this) plus headers.
const MAX_REPLY: usize = 16 << 20;
/// Largest single `device_read` asked for.
const MAX_READ: usize = 8 << 20;
/// Network latency allowed on top of an operation's own timeouts, at most (a quarter
/// of the I/O timeout when that is shorter, at least [`MIN_MARGIN`]).
const MARGIN: Duration = Duration::from_secs(5);
/// The least network latency allowed on top of an operation's own timeouts.
const MIN_MARGIN: Duration = Duration::from_millis(50);
/// The longest closing waits for the gateway's replies (all of them together).
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// A VXI-11 LAN/GPIB gateway.
pub struct Vxi11Board {
    core: Channel,
    max_recv_size: usize,
    links: HashMap<Address, u32>,
    /// Link names given by [`Vxi11Board::name_link`] (else `gpib0,N[,S]`).
    link_names: HashMap<Address, String>,
    /// The `gpib<board>` interface link: `None` not tried yet, `Some(None)` refused.
    interface: Option<Option<u32>>,
    /// Which of the gateway's interfaces the devices are on ([`Vxi11Board::use_interface`]).
    board: u16,
    timeout: Timeout,
    lock_timeout: Duration,
    start: Instant,
    intr: Option<intr::IntrServer>,
    /// The interrupt channel is still to be set up (at the first link, when the
    /// timeout is known).
    want_interrupts: bool,
    abort_port: u16,
    peer: SocketAddr,
}

impl std::fmt::Debug for Vxi11Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vxi11Board")
            .field("peer", &self.peer)
            .field("links", &self.links)
            .finish_non_exhaustive()
    }
}

/// The network margin for an I/O timeout `t`: a quarter of it, within
/// [`MIN_MARGIN`]..=[`MARGIN`].
fn margin(t: Duration) -> Duration {
    (t / 4).clamp(MIN_MARGIN, MARGIN)
}

fn ms(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

/// The error for a VXI-11 error code.
fn device_error(op: &'static str, code: u32, timeout: Timeout, transferred: usize) -> Error {
    match code {
        err::IO_TIMEOUT => Error::Timeout {
            operation: op,
            timeout,
            transferred,
        },
        err::NOT_SUPPORTED => Error::unsupported(op, "vxi11"),
        _ => {
            let kind = match code {
                err::LOCKED | err::NO_LOCK => ErrorKind::BusConflict,
                err::INVALID_ADDRESS | err::PARAMETER | err::SYNTAX => ErrorKind::InvalidArgument,
                err::NOT_ACCESSIBLE => ErrorKind::NoListener,
                _ => ErrorKind::Io,
            };
            Error::Backend {
                kind,
                message: format!("VXI-11 {op}: error {code} ({})", err::describe(code)),
                transferred: Some(transferred),
                source: Box::new(std::io::Error::other(err::describe(code))),
            }
        }
    }
}

fn decode<T>(what: &str, r: std::result::Result<T, crate::rpc::XdrError>) -> Result<T> {
    r.map_err(|e| Error::Protocol(format!("VXI-11 {what} reply: {e}")))
}

/// What one `device_read` reply `res` (for `want` bytes) adds to `buf`, filled up to
/// `count`: the new count, and how the read ended if it did.
fn read_reply(
    res: &[u8],
    want: usize,
    buf: &mut [u8],
    mut count: usize,
    timeout: Timeout,
) -> Result<(usize, Option<ReadStatus>)> {
    let (code, why, data) = decode("device_read", proto::decode_read_resp(res, want))?;
    let room = buf.len() - count;
    let data = &data[..data.len().min(room)];
    buf[count..count + data.len()].copy_from_slice(data);
    count += data.len();
    if code != err::NONE {
        return Err(device_error("read", code, timeout, count));
    }
    let end = if why & reason::END != 0 {
        Some(ReadEnd::Eoi)
    } else if why & reason::CHR != 0 {
        Some(ReadEnd::Eos)
    } else if data.is_empty() && why & reason::REQCNT == 0 {
        return Err(Error::Protocol(
            "VXI-11 device_read returned nothing and no reason".into(),
        ));
    } else {
        None
    };
    Ok((count, end.map(|end| ReadStatus { count, end })))
}

impl Vxi11Board {
    /// Connects to the gateway at `host` (`name`, `name:port` for a fixed core
    /// port, or a name with the port in `opts`).
    pub fn connect(host: &str, mut opts: Vxi11Options) -> Result<Self> {
        let given = crate::backend::resolve(host, 0)?;
        if given.port() != 0 && opts.port.is_none() {
            opts.port = Some(given.port());
        }
        let ip = given.ip();
        let port = match opts.port {
            Some(p) => p,
            None => channel::getport(
                SocketAddr::new(ip, opts.portmapper_port),
                proto::DEVICE_CORE,
                proto::VERSION,
                opts.open_timeout,
            )?,
        };
        let peer = SocketAddr::new(ip, port);
        let core = Channel::connect(
            peer,
            proto::DEVICE_CORE,
            proto::VERSION,
            Limits {
                max_record: MAX_REPLY + 4096,
                max_fragments: 100_000,
            },
            opts.open_timeout,
            "VXI-11 core channel",
        )?;
        let b = Self {
            core,
            max_recv_size: 1024,
            links: HashMap::new(),
            link_names: HashMap::new(),
            interface: None,
            board: 0,
            timeout: Timeout::After(Duration::from_secs(10)),
            lock_timeout: opts.lock_timeout,
            start: Instant::now(),
            intr: None,
            want_interrupts: opts.interrupts,
            abort_port: 0,
            peer,
        };
        Ok(b)
    }

    /// The gateway's core channel address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// The abort channel port the gateway gave with the last link.
    pub fn abort_port(&self) -> u16 {
        self.abort_port
    }

    fn open_interrupts(&mut self) -> Result<()> {
        let local = self
            .core
            .local_addr()
            .map_err(|e| channel::io_err("local address", e))?;
        let IpAddr::V4(v4) = local.ip() else {
            return Err(Error::unsupported(
                "the interrupt channel over IPv6",
                "vxi11",
            ));
        };
        let server = intr::IntrServer::start(local.ip())
            .map_err(|e| channel::io_err("interrupt server", e))?;
        let f = proto::RemoteFunc {
            host_addr: u32::from(v4),
            host_port: server.addr.port(),
            prog: proto::DEVICE_INTR,
            vers: proto::VERSION,
            family: 0,
        };
        let res = self
            .core
            .call(procs::CREATE_INTR_CHAN, &f.encode(), self.short_wait())?;
        let code = decode("create_intr_chan", proto::decode_error(res))?;
        if code != err::NONE {
            return Err(device_error("create_intr_chan", code, self.timeout, 0));
        }
        self.intr = Some(server);
        Ok(())
    }

    fn create_link(&mut self, name: &str) -> Result<u32> {
        if std::mem::take(&mut self.want_interrupts) {
            match self.open_interrupts() {
                Ok(()) => {}
                // The gateway does not answer: nor would it the link asked next.
                Err(e) if e.kind() == ErrorKind::Timeout => {
                    self.want_interrupts = true;
                    return Err(e);
                }
                Err(e) => log::debug!("VXI-11: no interrupt channel ({e}); SRQ is polled"),
            }
        }
        let p = proto::CreateLink {
            client_id: std::process::id() as i32,
            lock_device: false,
            lock_timeout: 0,
            device: name.as_bytes().to_vec(),
        };
        let wait = self.short_wait();
        let res = self.core.call(procs::CREATE_LINK, &p.encode(), wait)?;
        let r = decode("create_link", proto::CreateLinkResp::decode(res))?;
        if r.error != err::NONE {
            return Err(Error::Backend {
                kind: ErrorKind::InvalidAddress,
                message: format!(
                    "VXI-11 create_link {name:?}: error {} ({})",
                    r.error,
                    err::describe(r.error)
                ),
                transferred: None,
                source: Box::new(std::io::Error::other(err::describe(r.error))),
            });
        }
        self.max_recv_size = (r.max_recv_size as usize).clamp(1, MAX_READ);
        self.abort_port = r.abort_port;
        Ok(r.lid)
    }

    fn link(&mut self, device: Address) -> Result<u32> {
        if let Some(&l) = self.links.get(&device) {
            return Ok(l);
        }
        let name = match self.link_names.get(&device) {
            Some(n) => n.clone(),
            None => proto::device_name_on(self.board, device),
        };
        let lid = self.create_link(&name)?;
        self.links.insert(device, lid);
        if self.intr.is_some() {
            let args = proto::encode_enable_srq(lid, true, intr::HANDLE);
            let wait = self.short_wait();
            let res = self.core.call(procs::DEVICE_ENABLE_SRQ, &args, wait)?;
            let code = decode("device_enable_srq", proto::decode_error(res))?;
            if code != err::NONE {
                log::debug!("VXI-11: device_enable_srq: {}", err::describe(code));
            }
        }
        Ok(lid)
    }

    fn interface_link(&mut self) -> Result<u32> {
        match self.interface {
            Some(Some(l)) => Ok(l),
            Some(None) => Err(Error::unsupported(
                "interface operations (no interface link)",
                "vxi11",
            )),
            None => {
                let l = self.create_link(&format!("gpib{}", self.board)).ok();
                self.interface = Some(l);
                self.interface_link()
            }
        }
    }

    /// How long to wait for the reply to an operation with the I/O timeout and a lock
    /// wait of at most [`Vxi11Board::lock_wait`] on the gateway's side: both, and a
    /// margin for the network of a quarter of the timeout (at most [`MARGIN`]). With
    /// no timeout, for ever.
    fn wait(&self) -> Option<Duration> {
        self.limit().map(|t| t + self.lock_wait() + margin(t))
    }

    /// The I/O timeout, `None` for none.
    fn limit(&self) -> Option<Duration> {
        self.timeout.duration()
    }

    /// How long to wait for the reply to a call the gateway answers at once (link
    /// and channel set-up): the timeout and its margin, at most [`MARGIN`].
    fn short_wait(&self) -> Option<Duration> {
        Some(self.limit().map_or(MARGIN, |t| (t + margin(t)).min(MARGIN)))
    }

    /// How long closing waits for the gateway's replies, in all: the network margin
    /// of the timeout, at most [`CLOSE_WAIT`].
    fn close_wait(&self) -> Duration {
        self.limit()
            .map_or(CLOSE_WAIT, |t| margin(t).min(CLOSE_WAIT))
    }

    /// How long an I/O operation lets the gateway wait for another link's lock: the
    /// lock timeout, but no longer than the I/O timeout (the user's timeout bounds
    /// the whole operation).
    fn lock_wait(&self) -> Duration {
        self.limit()
            .map_or(self.lock_timeout, |t| self.lock_timeout.min(t))
    }

    fn io_timeout_ms(&self) -> u32 {
        self.limit().map_or(u32::MAX, ms)
    }

    /// A `device_read`'s arguments for `want` bytes, with what is left of the
    /// timeout since `start`.
    fn read_args(&self, lid: u32, want: usize, eos: Option<Eos>, start: Instant) -> proto::Read {
        let left = self
            .limit()
            .map_or(u32::MAX, |t| ms(t.saturating_sub(start.elapsed())).max(1));
        proto::Read {
            lid,
            request_size: want as u32,
            io_timeout: left,
            lock_timeout: ms(self.lock_wait()),
            flags: flags::WAITLOCK | if eos.is_some() { flags::TERMCHRSET } else { 0 },
            term_char: eos.map_or(0, |e| e.byte),
        }
    }

    /// Reads into `buf` from `count` on until END, the EOS byte or a full buffer, the
    /// read having started at `start`.
    fn read_on(
        &mut self,
        lid: u32,
        buf: &mut [u8],
        eos: Option<Eos>,
        mut count: usize,
        start: Instant,
    ) -> Result<ReadStatus> {
        loop {
            if count == buf.len() {
                return Ok(ReadStatus {
                    count,
                    end: ReadEnd::BufferFull,
                });
            }
            let want = (buf.len() - count).min(MAX_READ);
            let p = self.read_args(lid, want, eos, start);
            let wait = self.wait();
            let timeout = self.timeout;
            let res = self
                .core
                .call(procs::DEVICE_READ, &p.encode(), wait)
                .map_err(|e| e.offset_transferred(count))?;
            match read_reply(res, want, buf, count, timeout)? {
                (_, Some(status)) => return Ok(status),
                (n, None) => count = n,
            }
        }
    }

    fn generic(&mut self, op: &'static str, proc_: u32, lid: u32) -> Result<&[u8]> {
        let p = proto::Generic {
            lid,
            flags: flags::WAITLOCK,
            lock_timeout: ms(self.lock_wait()),
            io_timeout: self.io_timeout_ms(),
        };
        let wait = self.wait();
        let _ = op;
        self.core.call(proc_, &p.encode(), wait)
    }

    fn generic_error(&mut self, op: &'static str, proc_: u32, device: Address) -> Result<()> {
        let lid = self.link(device)?;
        let timeout = self.timeout;
        let res = self.generic(op, proc_, lid)?;
        let code = decode(op, proto::decode_error(res))?;
        if code != err::NONE {
            return Err(device_error(op, code, timeout, 0));
        }
        Ok(())
    }

    /// Talks to the devices of the gateway's interface `gpib<board>` (a gateway with
    /// several GPIB interfaces, such as `gpib-diag serve` of several boards): links are
    /// then `gpib<board>,N` and the interface link `gpib<board>`. Takes effect for links
    /// created after it (call it before the first operation).
    pub fn use_interface(&mut self, board: u16) {
        self.board = board;
    }

    /// Makes the device at `address` the gateway's device `name` (`inst0`, a LAN
    /// instrument that has no GPIB address, or any name the gateway serves) instead of
    /// `gpib0,N`: [`crate::Device`] at that address then talks to it. Takes effect when
    /// the link is first created.
    pub fn name_link(&mut self, address: Address, name: &str) {
        self.link_names.insert(address, name.to_string());
    }

    /// Locks `device` for this connection (`device_lock`), waiting up to the lock
    /// timeout for another link's lock.
    pub fn lock(&mut self, device: Address) -> Result<()> {
        let lid = self.link(device)?;
        let p = proto::Lock {
            lid,
            flags: flags::WAITLOCK,
            lock_timeout: ms(self.lock_timeout),
        };
        let wait = Some(self.lock_timeout + MARGIN);
        let res = self.core.call(procs::DEVICE_LOCK, &p.encode(), wait)?;
        let code = decode("device_lock", proto::decode_error(res))?;
        if code != err::NONE {
            return Err(device_error(
                "device_lock",
                code,
                Timeout::After(self.lock_timeout),
                0,
            ));
        }
        Ok(())
    }

    /// Releases this connection's lock on `device` (`device_unlock`).
    pub fn unlock(&mut self, device: Address) -> Result<()> {
        let lid = self.link(device)?;
        let mut w = crate::rpc::XdrWriter::new();
        w.u32(lid);
        let wait = self.short_wait();
        let res = self.core.call(procs::DEVICE_UNLOCK, w.as_bytes(), wait)?;
        let code = decode("device_unlock", proto::decode_error(res))?;
        if code != err::NONE {
            return Err(device_error("device_unlock", code, self.timeout, 0));
        }
        Ok(())
    }

    /// Sets how long operations wait for a lock held by another link.
    pub fn set_lock_timeout(&mut self, timeout: Duration) {
        self.lock_timeout = timeout;
    }

    /// Aborts the operation in progress on `device`'s link, on the abort channel
    /// (`device_abort`, a connection of its own).
    pub fn abort(&mut self, device: Address) -> Result<()> {
        let lid = self.link(device)?;
        let mut ch = Channel::connect(
            SocketAddr::new(self.peer.ip(), self.abort_port),
            proto::DEVICE_ASYNC,
            proto::VERSION,
            Limits {
                max_record: 1024,
                max_fragments: 16,
            },
            MARGIN,
            "VXI-11 abort channel",
        )?;
        let mut w = crate::rpc::XdrWriter::new();
        w.u32(lid);
        let res = ch.call(procs::DEVICE_ABORT, w.as_bytes(), Some(MARGIN))?;
        let code = decode("device_abort", proto::decode_error(res))?;
        if code != err::NONE {
            return Err(device_error("device_abort", code, self.timeout, 0));
        }
        Ok(())
    }

    fn docmd(&mut self, cmd: i32, data: &[u8]) -> Result<Vec<u8>> {
        let lid = self.interface_link()?;
        let p = proto::Docmd {
            lid,
            flags: flags::WAITLOCK,
            io_timeout: self.io_timeout_ms(),
            lock_timeout: ms(self.lock_wait()),
            cmd,
            network_order: true,
            datasize: 2,
            data_in: data,
        };
        let wait = self.wait();
        let res = self.core.call(procs::DEVICE_DOCMD, &p.encode(), wait)?;
        let (code, out) = decode("device_docmd", proto::decode_docmd_resp(res, 4096))?;
        if code != err::NONE {
            return Err(device_error("device_docmd", code, self.timeout, 0));
        }
        Ok(out)
    }
}

impl Drop for Vxi11Board {
    /// Destroys the links and the interrupt channel: the calls go out together and
    /// their replies are waited for a quarter of the timeout in all, at most 1 s (not
    /// at all when the gateway did not answer the last call: it closes the links of a
    /// connection that ends anyway).
    fn drop(&mut self) {
        let mut calls: Vec<(u32, Vec<u8>)> = self
            .links
            .values()
            .copied()
            .chain(self.interface.flatten())
            .map(|lid| {
                let mut w = crate::rpc::XdrWriter::new();
                w.u32(lid);
                (procs::DESTROY_LINK, w.as_bytes().to_vec())
            })
            .collect();
        if self.intr.is_some() {
            calls.push((procs::DESTROY_INTR_CHAN, Vec::new()));
        }
        let wait = self.close_wait();
        self.core.call_all_within(&calls, wait);
    }
}
