//! One RPC client connection over TCP: calls with record marking, replies matched by
//! xid, every length bounded.

use std::io::{self, BufWriter, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::backend::WireStats;
use crate::deadline::{self, Deadline, TimedReader};
use crate::error::{Error, ErrorKind, Result};
use crate::rpc::msg::{self, CallHeader};
use crate::rpc::record::{self, Limits};
use crate::rpc::reply::{self, ReplyError};

/// Largest fragment this client sends (libtirpc's is 4000 bytes; larger is fine).
pub(crate) const MAX_FRAGMENT: usize = 1 << 20;

pub(crate) struct Channel {
    reader: TimedReader,
    writer: BufWriter<TcpStream>,
    prog: u32,
    vers: u32,
    xid: u32,
    limits: Limits,
    reply: Vec<u8>,
    /// Why the connection cannot be used any more (a reply cut off part way).
    broken: Option<String>,
    /// The last call's reply did not come within its wait (the peer is not
    /// answering, or is slow): closing does not wait for more replies.
    unanswered: bool,
    pub(crate) stats: WireStats,
    what: &'static str,
}

pub(crate) fn io_err(what: &str, e: io::Error) -> Error {
    let kind = if deadline::is_timeout(&e) {
        ErrorKind::Timeout
    } else {
        ErrorKind::Io
    };
    Error::Backend {
        kind,
        message: format!("VXI-11: {what}: {e}"),
        transferred: (kind == ErrorKind::Timeout).then_some(0),
        source: Box::new(e),
    }
}

fn rpc_err(what: &str, e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::Backend {
        kind: ErrorKind::Protocol,
        message: format!("VXI-11: {what}: {e}"),
        transferred: None,
        source: Box::new(e),
    }
}

impl Channel {
    pub(crate) fn connect(
        addr: SocketAddr,
        prog: u32,
        vers: u32,
        limits: Limits,
        open_timeout: Duration,
        what: &'static str,
    ) -> Result<Self> {
        let s = TcpStream::connect_timeout(&addr, open_timeout)
            .map_err(|e| io_err(&format!("connecting to the {what} at {addr}"), e))?;
        s.set_nodelay(true)
            .map_err(|e| io_err("socket options", e))?;
        s.set_write_timeout(Some(Duration::from_secs(60)))
            .map_err(|e| io_err("socket options", e))?;
        let r = s.try_clone().map_err(|e| io_err("socket", e))?;
        Ok(Self {
            reader: TimedReader::new(r, 64 * 1024),
            writer: BufWriter::with_capacity(64 * 1024, s),
            prog,
            vers,
            xid: std::process::id().wrapping_mul(2_654_435_761),
            limits,
            reply: Vec::new(),
            broken: None,
            unanswered: false,
            stats: WireStats::default(),
            what,
        })
    }

    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.writer.get_ref().local_addr()
    }

    /// Calls `proc_` with `args`; waits up to `wait` (`None`: for ever) for the reply
    /// and returns its result bytes.
    pub(crate) fn call(
        &mut self,
        proc_: u32,
        args: &[u8],
        wait: Option<Duration>,
    ) -> Result<&[u8]> {
        let xid = self.send_call(proc_, args, true)?;
        self.await_reply(xid, wait)
    }

    /// Sends a call of `proc_` with `args` (and with `flush`, every call not sent yet)
    /// without waiting for its reply; returns its transaction id for
    /// [`Channel::await_reply`]. Calls sent back to back are answered in order.
    pub(crate) fn send_call(&mut self, proc_: u32, args: &[u8], flush: bool) -> Result<u32> {
        if let Some(why) = &self.broken {
            return Err(io_err(
                &format!("the {} cannot be used", self.what),
                io::Error::new(io::ErrorKind::BrokenPipe, why.clone()),
            ));
        }
        self.xid = self.xid.wrapping_add(1);
        let xid = self.xid;
        let call = msg::encode_call(
            CallHeader {
                xid,
                prog: self.prog,
                vers: self.vers,
                proc_,
            },
            args,
        );
        let what = |e| io_err(&format!("sending to the {}", self.what), e);
        let sent = record::put_record(&mut self.writer, &call, MAX_FRAGMENT).map_err(what)?;
        if flush {
            self.writer
                .flush()
                .map_err(|e| io_err(&format!("sending to the {}", self.what), e))?;
            self.stats.round_trips += 1;
        }
        self.stats.requests += 1;
        self.stats.bytes_sent += sent as u64;
        Ok(xid)
    }

    /// Waits up to `wait` (`None`: for ever) for the reply to call `xid` and returns its
    /// result bytes; replies to earlier calls (one that timed out, one whose answer
    /// was not wanted) are skipped. `wait` bounds the whole reply and the skipping: a
    /// peer that sends a byte at a time, or stale replies without end, gets
    /// [`Error::Timeout`] when it is over.
    pub(crate) fn await_reply(&mut self, xid: u32, wait: Option<Duration>) -> Result<&[u8]> {
        let t0 = Instant::now();
        let deadline = Deadline::after(wait);
        self.reader.set_deadline(deadline);
        let got = reply::await_reply(&mut self.reader, self.limits, xid, &mut self.reply, || {
            deadline.passed()
        });
        self.stats.waiting += t0.elapsed();
        self.unanswered = match &got {
            Err(ReplyError::Expired { .. }) => true,
            Err(ReplyError::Cut(e) | ReplyError::Record(e)) => e.is_timeout(),
            _ => false,
        };
        let timed_out = || Error::Timeout {
            operation: self.what,
            timeout: wait.map_or(crate::Timeout::Never, crate::Timeout::After),
            transferred: 0,
        };
        match got {
            Ok(r) => {
                self.stats.bytes_received += r.bytes;
                Ok(&self.reply[r.results..])
            }
            Err(ReplyError::Cut(e)) => {
                self.broken = Some(format!(
                    "an earlier reply stopped part way ({e}): the connection's framing is lost; connect again"
                ));
                if e.is_timeout() {
                    Err(timed_out())
                } else {
                    Err(rpc_err(&format!("reply from the {}", self.what), e))
                }
            }
            Err(ReplyError::Expired { .. }) => Err(timed_out()),
            Err(ReplyError::Record(e)) if e.is_timeout() => Err(timed_out()),
            Err(ReplyError::Record(record::RecordError::Io(e))) => {
                Err(io_err(&format!("waiting for the {}", self.what), e))
            }
            Err(ReplyError::Record(e)) => Err(rpc_err(&format!("reply from the {}", self.what), e)),
            Err(ReplyError::Rpc(e)) => Err(rpc_err(&format!("reply from the {}", self.what), e)),
        }
    }

    /// Sends `calls` (procedure, arguments) back to back, then waits up to `wait` in
    /// all for the last one's reply (replies come in order: the earlier ones are
    /// skipped on the way), or not at all when the peer did not answer the last call
    /// in time. For closing: `wait` bounds the whole of it, sending included.
    pub(crate) fn call_all_within(&mut self, calls: &[(u32, Vec<u8>)], wait: Duration) {
        if calls.is_empty() || self.broken.is_some() {
            return;
        }
        // A peer that does not read cannot hold the sending for longer either.
        let _ = self
            .writer
            .get_ref()
            .set_write_timeout(Some(wait.max(Duration::from_millis(10))));
        let mut last = None;
        for (i, (proc_, args)) in calls.iter().enumerate() {
            match self.send_call(*proc_, args, i + 1 == calls.len()) {
                Ok(xid) => last = Some(xid),
                Err(_) => return,
            }
        }
        if let (Some(xid), false) = (last, self.unanswered) {
            let _ = self.await_reply(xid, Some(wait));
        }
    }

    /// A call that expects no reply (the interrupt channel's `device_intr_srq`).
    #[allow(dead_code)]
    pub(crate) fn send_only(&mut self, proc_: u32, args: &[u8]) -> Result<()> {
        self.xid = self.xid.wrapping_add(1);
        let call = msg::encode_call(
            CallHeader {
                xid: self.xid,
                prog: self.prog,
                vers: self.vers,
                proc_,
            },
            args,
        );
        record::write_record(&mut self.writer, &call, MAX_FRAGMENT)
            .map_err(|e| io_err("sending", e))?;
        Ok(())
    }
}

/// Asks the portmapper at `addr` for the TCP port of `prog`/`vers`.
pub(crate) fn getport(
    addr: SocketAddr,
    prog: u32,
    vers: u32,
    open_timeout: Duration,
) -> Result<u16> {
    use super::proto::portmap;
    let mut pm = Channel::connect(
        addr,
        portmap::PROG,
        portmap::VERS,
        Limits {
            max_record: 1024,
            max_fragments: 16,
        },
        open_timeout,
        "portmapper",
    )?;
    let mut w = crate::rpc::XdrWriter::new();
    w.u32(prog).u32(vers).u32(portmap::TCP).u32(0);
    let res = pm.call(portmap::GETPORT, w.as_bytes(), Some(open_timeout))?;
    let port = crate::rpc::XdrReader::new(res)
        .u32()
        .map_err(|e| rpc_err("portmapper reply", e))?;
    match u16::try_from(port) {
        Ok(0) => Err(Error::BackendUnavailable {
            backend: "vxi11".into(),
            hint: format!("the portmapper at {addr} has no VXI-11 core channel registered"),
        }),
        Ok(p) => Ok(p),
        Err(_) => Err(Error::Protocol(format!("portmapper answered port {port}"))),
    }
}
