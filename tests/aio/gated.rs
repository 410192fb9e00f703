//! A test board with one instrument that echoes each message back, whose next read or
//! write can be held at a gate until the test releases it: a call that is really in
//! progress on the bus when the test drops its future.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use gpib::{Backend, Eos, Error, PrimaryAddress, ReadEnd, ReadStatus};

/// The echo instrument's primary address.
pub const ECHO: u8 = 5;

/// How long a call waits at the gate before it gives up with an error of its own, so
/// that a test whose runtime thread is blocked fails instead of hanging.
pub const GATE_GIVES_UP: Duration = Duration::from_secs(20);

/// Which call the gate holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Write,
    Read,
    /// Closing the board (its last handle dropped), as a network link's close is a
    /// round trip.
    Close,
}

/// How the held call goes on when the test releases it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// As if it had never been held.
    Complete,
    /// A read returns this many bytes of the answer, then times out (the instrument
    /// stopped talking): the rest of the answer stays in the instrument.
    TimeOutAfter(usize),
}

#[derive(Default)]
struct State {
    /// The message being written to the instrument.
    input: Vec<u8>,
    /// Its answers, oldest first; the front one may be partly read.
    output: VecDeque<VecDeque<u8>>,
    /// The instrument is addressed to listen.
    listening: bool,
    /// The next call of this kind is held.
    hold: Option<Op>,
    /// A call is at the gate.
    held: bool,
    /// The test's word to the held call.
    release: Option<Release>,
    /// Device clears (SDC to the instrument, or DCL).
    clears: usize,
    /// The board was closed.
    closed: bool,
}

/// The test's handle on the board: hold, wait, release, look.
#[derive(Clone, Default)]
pub struct Gate {
    shared: Arc<(Mutex<State>, Condvar)>,
    /// Told when a call stops at the gate.
    pub arrived: Arc<tokio::sync::Notify>,
}

impl Gate {
    fn state(&self) -> MutexGuard<'_, State> {
        self.shared.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Holds the next call of kind `op` at the gate.
    pub fn hold(&self, op: Op) {
        let mut s = self.state();
        s.hold = Some(op);
        s.release = None;
    }

    /// Lets the held call go on as `how`.
    pub fn release(&self, how: Release) {
        self.state().release = Some(how);
        self.shared.1.notify_all();
    }

    /// Whether a call is at the gate now.
    pub fn is_held(&self) -> bool {
        self.state().held
    }

    /// Device clears the instrument has had.
    pub fn clears(&self) -> usize {
        self.state().clears
    }

    /// Whether the board was closed.
    pub fn is_closed(&self) -> bool {
        self.state().closed
    }

    /// Answer bytes not read yet.
    pub fn unread(&self) -> usize {
        self.state().output.iter().map(VecDeque::len).sum()
    }

    /// Stops a call of kind `op` here when one is to be held, until the test releases
    /// it (or [`GATE_GIVES_UP`] passes: an error).
    fn pass(&self, op: Op) -> Result<Release, Error> {
        let mut s = self.state();
        if s.hold != Some(op) {
            return Ok(Release::Complete);
        }
        s.hold = None;
        s.held = true;
        self.arrived.notify_one();
        let until = Instant::now() + GATE_GIVES_UP;
        while s.release.is_none() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                s.held = false;
                return Err(Error::Protocol("never released from the gate".into()));
            }
            s = self
                .shared
                .1
                .wait_timeout(s, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        s.held = false;
        Ok(s.release.take().unwrap_or(Release::Complete))
    }
}

/// The board (address 0) with the echo instrument at [`ECHO`].
pub struct GatedEcho {
    gate: Gate,
    timeout: gpib::Timeout,
    opened: Instant,
}

impl GatedEcho {
    /// A board and the gate that holds its calls.
    pub fn new() -> (Self, Gate) {
        let gate = Gate::default();
        let board = Self {
            gate: gate.clone(),
            timeout: gpib::Timeout::After(Duration::from_secs(3)),
            opened: Instant::now(),
        };
        (board, gate)
    }
}

impl Backend for GatedEcho {
    fn name(&self) -> &str {
        "gated-echo"
    }

    fn board_address(&self) -> PrimaryAddress {
        PrimaryAddress::try_from(0u8).expect("0 is an address")
    }

    fn command(&mut self, bytes: &[u8]) -> gpib::Result<()> {
        let mut s = self.gate.state();
        for &b in bytes {
            match b {
                // UNL
                0x3F => s.listening = false,
                // MLA of the instrument
                b if b == 0x20 + ECHO => s.listening = true,
                // SDC to a listening instrument, DCL to every one
                0x04 if s.listening => clear(&mut s),
                0x14 => clear(&mut s),
                _ => {}
            }
        }
        Ok(())
    }

    fn write(&mut self, data: &[u8], eoi: bool) -> gpib::Result<usize> {
        self.gate.pass(Op::Write)?;
        let mut s = self.gate.state();
        s.input.extend_from_slice(data);
        if eoi {
            let message = std::mem::take(&mut s.input);
            s.output.push_back(message.into());
        }
        Ok(data.len())
    }

    fn read(&mut self, buf: &mut [u8], _eos: Option<Eos>) -> gpib::Result<ReadStatus> {
        let how = self.gate.pass(Op::Read)?;
        let mut s = self.gate.state();
        let limit = match how {
            Release::Complete => buf.len(),
            Release::TimeOutAfter(n) => n.min(buf.len()),
        };
        let Some(answer) = s.output.front_mut() else {
            return Err(self.timed_out(0));
        };
        let n = limit.min(answer.len());
        for (slot, b) in buf.iter_mut().zip(answer.drain(..n)) {
            *slot = b;
        }
        if answer.is_empty() {
            s.output.pop_front();
            return Ok(ReadStatus {
                count: n,
                end: ReadEnd::Eoi,
            });
        }
        if matches!(how, Release::TimeOutAfter(_)) {
            return Err(self.timed_out(n));
        }
        Ok(ReadStatus {
            count: n,
            end: ReadEnd::BufferFull,
        })
    }

    fn interface_clear(&mut self) -> gpib::Result<()> {
        self.gate.state().listening = false;
        Ok(())
    }

    fn remote_enable(&mut self, _on: bool) -> gpib::Result<()> {
        Ok(())
    }

    fn set_timeout(&mut self, timeout: gpib::Timeout) -> gpib::Result<gpib::Timeout> {
        self.timeout = timeout;
        Ok(timeout)
    }

    fn timeout(&self) -> gpib::Timeout {
        self.timeout
    }

    fn now(&self) -> Duration {
        self.opened.elapsed()
    }
}

impl Drop for GatedEcho {
    fn drop(&mut self) {
        let _ = self.gate.pass(Op::Close);
        self.gate.state().closed = true;
    }
}

impl GatedEcho {
    fn timed_out(&self, transferred: usize) -> Error {
        Error::Timeout {
            operation: "read",
            timeout: self.timeout,
            transferred,
        }
    }
}

/// The instrument's device clear: input and answers dropped.
fn clear(s: &mut State) {
    s.input.clear();
    s.output.clear();
    s.clears += 1;
}
