//! One deadline for a whole exchange with a peer, and a socket reader held to it.
//!
//! A socket's read timeout restarts with every byte: a peer that sends one byte a
//! second keeps a read with a one-second timeout alive for ever. [`TimedReader`]
//! instead sets the socket's timeout to what is left of one [`Deadline`] before each
//! read from the socket, so a trickle cannot extend the wait. The network clients
//! (VXI-11's RPC channel, the Prologix adapter) and the server's connections use it.

use std::io::{self, BufReader, Read};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A point in time after which a wait gives up (or none: wait for ever).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deadline {
    at: Option<Instant>,
}

impl Deadline {
    /// No deadline: wait for ever.
    pub(crate) const NEVER: Deadline = Deadline { at: None };

    /// `wait` from now (`None`: never). A wait too long to represent is never.
    pub(crate) fn after(wait: Option<Duration>) -> Self {
        Self {
            at: wait.and_then(|w| Instant::now().checked_add(w)),
        }
    }

    /// What is left of it: `None` for no deadline, `Some(ZERO)` once it has passed.
    pub(crate) fn left(&self) -> Option<Duration> {
        self.at
            .map(|at| at.saturating_duration_since(Instant::now()))
    }

    /// Whether it has passed.
    pub(crate) fn passed(&self) -> bool {
        self.left().is_some_and(|l| l.is_zero())
    }

    /// The error of a wait that reached it (kind `TimedOut`).
    pub(crate) fn timed_out() -> io::Error {
        io::Error::new(io::ErrorKind::TimedOut, "the deadline passed")
    }
}

/// True for the errors of a socket read that waited its whole timeout.
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// The socket timeout to set for what is left of `deadline`, given the one `applied`
/// (`None`: not known; `Some(None)`: no timeout): `None` when what is set is within an
/// eighth of it already (each set is a system call); `TimedOut` once the deadline has
/// passed.
pub(crate) fn socket_timeout_to_set(
    applied: Option<Option<Duration>>,
    deadline: Deadline,
) -> io::Result<Option<Option<Duration>>> {
    let want = match deadline.left() {
        None => None,
        Some(l) if l.is_zero() => return Err(Deadline::timed_out()),
        Some(l) => Some(l),
    };
    let keep = match (applied, want) {
        (Some(None), None) => true,
        (Some(Some(t)), Some(w)) => t.abs_diff(w) <= w / 8,
        _ => false,
    };
    Ok((!keep).then_some(want))
}

/// A buffered socket reader whose reads all end by its [`Deadline`]: past it, a read
/// that would wait fails with `TimedOut` (bytes already buffered are still returned).
pub(crate) struct TimedReader {
    inner: BufReader<TcpStream>,
    deadline: Deadline,
    /// The read timeout set on the socket (`None`: not set by this reader yet).
    applied: Option<Option<Duration>>,
}

impl TimedReader {
    /// Reads `stream` through a buffer of `capacity` bytes, with no deadline yet.
    pub(crate) fn new(stream: TcpStream, capacity: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(capacity, stream),
            deadline: Deadline::NEVER,
            applied: None,
        }
    }

    /// Holds the reads that follow to `deadline`.
    pub(crate) fn set_deadline(&mut self, deadline: Deadline) {
        self.deadline = deadline;
    }

    #[cfg(feature = "serve")]
    /// The socket.
    pub(crate) fn get_ref(&self) -> &TcpStream {
        self.inner.get_ref()
    }

    #[cfg(feature = "serve")]
    /// Bytes received and not read yet.
    pub(crate) fn buffer(&self) -> &[u8] {
        self.inner.buffer()
    }

    /// Waits (until the deadline) for at least one byte: `Ok(false)` at the end of
    /// the stream.
    pub(crate) fn wait_for_data(&mut self) -> io::Result<bool> {
        use std::io::BufRead as _;
        loop {
            if !self.inner.buffer().is_empty() {
                return Ok(true);
            }
            self.arm()?;
            match self.inner.fill_buf() {
                Ok(b) => return Ok(!b.is_empty()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_timeout(&e) => self.applied = None,
                Err(e) => return Err(e),
            }
        }
    }

    /// Sets the socket's timeout to what is left of the deadline, unless what is set
    /// is within an eighth of it already (each set is a system call); `TimedOut`
    /// once the deadline has passed.
    fn arm(&mut self) -> io::Result<()> {
        if let Some(want) = socket_timeout_to_set(self.applied, self.deadline)? {
            self.inner.get_ref().set_read_timeout(want)?;
            self.applied = Some(want);
        }
        Ok(())
    }
}

impl Read for TimedReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.inner.buffer().is_empty() || buf.is_empty() {
            return self.inner.read(buf);
        }
        loop {
            self.arm()?;
            match self.inner.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The socket's timeout (an eighth off, or set for an earlier deadline)
                // ran out: set it again to what is left, or fail if nothing is.
                Err(e) if is_timeout(&e) => self.applied = None,
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    #[test]
    fn deadlines() {
        assert_eq!(Deadline::NEVER.left(), None);
        assert!(!Deadline::NEVER.passed());
        assert!(Deadline::after(Some(Duration::ZERO)).passed());
        assert!(!Deadline::after(Some(Duration::from_secs(60))).passed());
        assert_eq!(Deadline::after(Some(Duration::MAX)), Deadline::NEVER);
    }

    #[test]
    fn a_trickle_cannot_extend_the_deadline() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = l.local_addr().unwrap();
        let peer = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            // One byte every 50 ms for at most 2 s.
            for _ in 0..40 {
                if s.write_all(b"x").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let mut r = TimedReader::new(TcpStream::connect(at).unwrap(), 64);
        let t0 = Instant::now();
        r.set_deadline(Deadline::after(Some(Duration::from_millis(300))));
        let mut got = Vec::new();
        let e = r.read_to_end(&mut got).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        let took = t0.elapsed();
        assert!(took < Duration::from_millis(900), "{took:?}");
        assert!(!got.is_empty() && got.len() < 20, "{}", got.len());
        drop(r);
        peer.join().unwrap();
    }
}
