//! One HiSLIP channel of a client session: a reader and a writer on one TCP
//! connection, both held to the deadline of the call they serve. A socket's own
//! timeouts restart with every byte; here a server that trickles its answers, takes
//! data slowly or sends messages nobody asked for cannot make a call wait past its
//! deadline.

use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::deadline::{self, Deadline, TimedReader};
use crate::error::{Error, Result};
use crate::hislip::{self, ReadError};

/// One channel: a reader held to a deadline, and the socket to write on.
pub(super) struct Channel {
    pub(super) r: TimedReader,
    w: TcpStream,
    /// The write timeout set on the socket (`None`: not set by this channel yet).
    applied: Option<Option<Duration>>,
}

/// A call's deadline passed: a typed timeout, `transferred` bytes moved.
pub(super) fn timeout(operation: &'static str, timeout: Duration, transferred: usize) -> Error {
    Error::Timeout {
        operation,
        timeout: crate::Timeout::After(timeout),
        transferred,
    }
}

/// Maps an I/O error of `operation`: a timeout is [`Error::Timeout`].
pub(super) fn io_error(
    e: io::Error,
    operation: &'static str,
    limit: Duration,
    transferred: usize,
) -> Error {
    if deadline::is_timeout(&e) {
        return timeout(operation, limit, transferred);
    }
    Error::Io(e)
}

/// Maps a read error of `operation`: a timeout reports the bytes that came.
pub(super) fn read_error(
    e: ReadError,
    operation: &'static str,
    limit: Duration,
    got: usize,
) -> Error {
    if e.is_timeout() {
        return timeout(operation, limit, got);
    }
    match e {
        ReadError::Io { source, .. } => Error::Io(source),
        e => Error::Protocol(format!("HiSLIP: {e}")),
    }
}

/// Whether a read error leaves the stream in the middle of a message (all do but a
/// timeout before a message's first byte).
pub(super) fn cuts_framing(e: &ReadError) -> bool {
    !matches!(e, ReadError::Io { got: 0, .. } | ReadError::Closed)
}

impl Channel {
    /// Connects to `addr` by `deadline`.
    pub(super) fn connect(addr: SocketAddr, deadline: Deadline, limit: Duration) -> Result<Self> {
        let wait = match deadline.left() {
            Some(l) if l.is_zero() => return Err(timeout("HiSLIP connect", limit, 0)),
            Some(l) => l,
            None => Duration::from_secs(u64::from(u32::MAX)),
        };
        let s = TcpStream::connect_timeout(&addr, wait)
            .map_err(|e| io_error(e, "HiSLIP connect", limit, 0))?;
        s.set_nodelay(true)?;
        let w = s.try_clone()?;
        Ok(Self {
            r: TimedReader::new(s, 64 * 1024),
            w,
            applied: None,
        })
    }

    /// Sends one message, all of it by `deadline`; the error holds the bytes of it
    /// that went.
    pub(super) fn send(
        &mut self,
        k: u8,
        control: u8,
        param: u32,
        payload: &[u8],
        deadline: Deadline,
    ) -> std::result::Result<(), (usize, io::Error)> {
        self.write_all(&hislip::encode(k, control, param, payload), deadline)
    }

    fn write_all(
        &mut self,
        mut buf: &[u8],
        deadline: Deadline,
    ) -> std::result::Result<(), (usize, io::Error)> {
        let mut sent = 0;
        while !buf.is_empty() {
            self.arm(deadline).map_err(|e| (sent, e))?;
            match self.w.write(buf) {
                Ok(0) => return Err((sent, io::ErrorKind::WriteZero.into())),
                Ok(n) => {
                    sent += n;
                    buf = &buf[n..];
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The socket's timeout (an eighth off, or set for an earlier deadline)
                // ran out: set it again to what is left, or fail if nothing is.
                Err(e) if deadline::is_timeout(&e) => self.applied = None,
                Err(e) => return Err((sent, e)),
            }
        }
        Ok(())
    }

    /// Sets the socket's write timeout to what is left of `deadline`, unless what is
    /// set is within an eighth of it already; `TimedOut` once it has passed.
    fn arm(&mut self, deadline: Deadline) -> io::Result<()> {
        if let Some(want) = deadline::socket_timeout_to_set(self.applied, deadline)? {
            self.w.set_write_timeout(want)?;
            self.applied = Some(want);
        }
        Ok(())
    }
}
