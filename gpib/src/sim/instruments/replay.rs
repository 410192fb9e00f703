//! [`Replay`]: a recorded session played back as an instrument. What the device was
//! sent, it expects again, byte for byte; what it answered, it answers again, after
//! the same response latency. A program captured once against a real instrument
//! (`gpib-diag trace record`, or [`crate::trace::TracedBackend`] on any backend) is
//! tested against the recording ever after.
//!
//! The recording's bus records are used when it has them (simulator traces: the
//! latency is the time from the end of the command to the moment the device was
//! ready to talk); otherwise its call records (hardware and network traces: device
//! reads and writes, or raw writes and reads addressed with command bytes; no latency).
//! Answers that follow each other with nothing sent in between are played as one
//! message, END on its last byte.
//!
//! When the program sends something the recording does not have next, the device
//! stops answering and says what it expected: the next read fails with a
//! [`crate::ErrorKind::Protocol`] error that gives the byte, what came and what was
//! expected (and [`Replay::mismatch`] keeps it).

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::message::{CommandDecoder, InterfaceMessage};
use crate::sim::instrument::{DeviceIo, Instrument};
use crate::status::StatusByte;
use crate::trace::{CallOp, Record};

/// One step of a recorded exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// Bytes the device was sent (one message: up to END, or up to its answer).
    Expect(Vec<u8>),
    /// Bytes it answered, `latency` after the message before.
    Answer { bytes: Vec<u8>, latency: Duration },
}

/// A recorded device played back (see the module docs).
#[derive(Debug, Clone)]
pub struct Replay {
    label: String,
    steps: Vec<Step>,
    polls: Vec<u8>,
    next: usize,
    next_poll: usize,
    input: Vec<u8>,
    mismatch: Option<String>,
}

/// Builds the steps, appending to the last step of the same kind.
#[derive(Default)]
struct Steps {
    steps: Vec<Step>,
    /// The last expected message ended with END: the next bytes start a new one.
    closed: bool,
    polls: Vec<u8>,
}

impl Steps {
    fn expect(&mut self, bytes: &[u8], end: bool) {
        match self.steps.last_mut() {
            Some(Step::Expect(b)) if !self.closed => b.extend_from_slice(bytes),
            _ => self.steps.push(Step::Expect(bytes.to_vec())),
        }
        self.closed = end;
    }

    fn answer(&mut self, bytes: &[u8], latency: Duration) {
        match self.steps.last_mut() {
            Some(Step::Answer { bytes: b, .. }) => b.extend_from_slice(bytes),
            _ => self.steps.push(Step::Answer {
                bytes: bytes.to_vec(),
                latency,
            }),
        }
        self.closed = true;
    }
}

/// Printable bytes: `"*IDN?\n"` with escapes, cut after 40.
fn show(b: &[u8]) -> String {
    let cut = &b[..b.len().min(40)];
    let mut s = String::from("\"");
    for &c in cut {
        match c {
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'"' => s.push_str("\\\""),
            0x20..=0x7E => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02X}")),
        }
    }
    s.push('"');
    if b.len() > cut.len() {
        s.push_str(&format!("... ({} bytes)", b.len()));
    }
    s
}

/// Builds a replay's steps one record at a time (nothing of the recording is kept but
/// the device's bytes): from the bus records if there are any, else from the calls.
struct Builder {
    address: u8,
    has_bus: bool,
    bus: Steps,
    /// When the last message to the device was delivered (bus records).
    delivered: u64,
    calls: Steps,
    talker: Option<u8>,
    listening: bool,
    decoder: CommandDecoder,
}

impl Builder {
    fn new(address: u8) -> Self {
        Self {
            address,
            has_bus: false,
            bus: Steps::default(),
            delivered: 0,
            calls: Steps::default(),
            talker: None,
            listening: false,
            decoder: CommandDecoder::new(),
        }
    }

    fn record(&mut self, r: &Record<'_>) {
        match r {
            Record::Transfer(t) => {
                self.has_bus = true;
                self.calls = Steps::default(); // the bus records are used
                let (address, s) = (self.address, &mut self.bus);
                if t.is_command() || t.bytes.is_empty() {
                    return;
                }
                if t.is_serial_poll() {
                    if t.talker == address {
                        s.polls.push(t.bytes[0]);
                    }
                } else if t.board_talks() && t.listeners & (1 << address) != 0 {
                    s.expect(&t.bytes, t.end());
                    self.delivered = t
                        .first_ns
                        .saturating_add(t.byte_ns.saturating_mul(t.bytes.len() as u64));
                } else if !t.board_talks() && t.talker == address {
                    let latency = Duration::from_nanos(t.ready_ns.saturating_sub(self.delivered));
                    s.answer(&t.bytes, latency);
                }
            }
            Record::Call(_) if !self.has_bus => self.call(r),
            _ => {}
        }
    }

    /// Steps from call records: device-level calls, or raw writes and reads addressed
    /// by the command bytes before them.
    fn call(&mut self, r: &Record<'_>) {
        let Record::Call(c) = r else { return };
        let (address, s) = (self.address, &mut self.calls);
        if c.error.is_some() && c.data.is_empty() {
            return;
        }
        match c.op {
            CallOp::Command => {
                for &b in c.data.iter() {
                    match self.decoder.next_message(b) {
                        InterfaceMessage::Talk(a) => self.talker = Some(a.get()),
                        InterfaceMessage::Untalk => self.talker = None,
                        InterfaceMessage::Listen(a) if a.get() == address => self.listening = true,
                        InterfaceMessage::Unlisten => self.listening = false,
                        _ => {}
                    }
                }
            }
            CallOp::Write if self.listening => s.expect(&c.data, c.eoi),
            CallOp::Read if self.talker == Some(address) => s.answer(&c.data, Duration::ZERO),
            CallOp::DeviceWrite if c.device == Some(address) => s.expect(&c.data, c.eoi),
            CallOp::DeviceRead if c.device == Some(address) => s.answer(&c.data, Duration::ZERO),
            CallOp::SerialPoll if c.device == Some(address) => s.polls.extend_from_slice(&c.data),
            _ => {}
        }
    }

    fn finish(self, label: &str) -> Result<Replay> {
        let s = if self.has_bus { self.bus } else { self.calls };
        if s.steps.is_empty() && s.polls.is_empty() {
            return Err(Error::Config(format!(
                "replay of {label}: the recording has nothing sent to or answered by device {}",
                self.address
            )));
        }
        Ok(Replay {
            label: label.to_string(),
            steps: s.steps,
            polls: s.polls,
            next: 0,
            next_poll: 0,
            input: Vec::new(),
            mismatch: None,
        })
    }
}

impl Replay {
    /// The device at primary address `address` in `records`.
    ///
    /// Fails (a [`crate::ErrorKind::Config`] error) when the recording has nothing sent
    /// to or answered by that device.
    pub fn from_records(records: &[Record<'_>], address: u8, label: &str) -> Result<Self> {
        let mut b = Builder::new(address);
        for r in records {
            b.record(r);
        }
        b.finish(label)
    }

    /// The device at `address` in the trace file at `path`, read record by record
    /// (memory: the device's bytes, whatever else the file holds).
    ///
    /// Fails (a [`crate::ErrorKind::Config`] error) for a file that is not a regular
    /// file (a FIFO is refused, not waited on), not a trace, or damaged.
    pub fn open(path: &Path, address: u8) -> Result<Self> {
        let shown = path.display().to_string();
        let refused =
            |e: crate::trace::TraceError| Error::Config(format!("replay file {shown}: {e}"));
        let mut reader = crate::trace::open_file(path).map_err(refused)?;
        let mut b = Builder::new(address);
        while let Some(r) = reader.next_record().map_err(refused)? {
            b.record(&r);
        }
        b.finish(&shown)
    }

    /// The device at `address` in the trace read from `input` (any reader: bytes in
    /// memory, a socket), record by record.
    pub fn read_from(input: impl std::io::Read, address: u8, label: &str) -> Result<Self> {
        let refused =
            |e: crate::trace::TraceError| Error::Config(format!("replay of {label}: {e}"));
        let mut reader = crate::trace::TraceReader::new(input).map_err(refused)?;
        let mut b = Builder::new(address);
        while let Some(r) = reader.next_record().map_err(refused)? {
            b.record(&r);
        }
        b.finish(label)
    }

    /// Why the replay stopped, if the program sent what the recording does not have.
    pub fn mismatch(&self) -> Option<&str> {
        self.mismatch.as_deref()
    }

    /// True when every recorded step was played.
    pub fn finished(&self) -> bool {
        self.next == self.steps.len()
    }

    /// Messages expected and answers given so far, of all.
    pub fn progress(&self) -> (usize, usize) {
        (self.next, self.steps.len())
    }

    fn fail(&mut self, what: String) {
        log::warn!("{what}");
        self.mismatch = Some(what);
    }

    /// Queues the answers due now (after an expected message).
    fn answer(&mut self, io: &mut DeviceIo<'_>) {
        if let Some(Step::Answer { latency, .. }) = self.steps.get(self.next) {
            io.wake_after(*latency, self.next as u64);
        }
    }
}

impl Instrument for Replay {
    fn status_changes_with_time(&self) -> bool {
        false // its status follows its calls and its output queue
    }

    fn model(&self) -> &str {
        "REPLAY"
    }

    fn listen(&mut self, data: &[u8], end: bool, io: &mut DeviceIo<'_>) {
        if self.mismatch.is_some() {
            return;
        }
        self.input.extend_from_slice(data);
        let (at, expected) = match self.steps.get(self.next) {
            Some(Step::Expect(b)) => (self.next, b.clone()),
            Some(Step::Answer { bytes, .. }) => {
                let what = format!(
                    "replay of {}: received {} while the recording answers {} next (read it first)",
                    self.label,
                    show(&self.input),
                    show(bytes)
                );
                return self.fail(what);
            }
            None => {
                let what = format!(
                    "replay of {}: received {} after the end of the recording ({} steps played)",
                    self.label,
                    show(&self.input),
                    self.steps.len()
                );
                return self.fail(what);
            }
        };
        let n = self.input.len().min(expected.len());
        if let Some(i) = (0..n).find(|&i| self.input[i] != expected[i]) {
            let what = format!(
                "replay of {}: byte {i} of message {} is {}, the recording has {} (expected {})",
                self.label,
                at + 1,
                show(&self.input[i..=i]),
                show(&expected[i..=i]),
                show(&expected)
            );
            return self.fail(what);
        }
        if self.input.len() > expected.len() {
            let what = format!(
                "replay of {}: message {} goes on past the recording's {} with {}",
                self.label,
                at + 1,
                show(&expected),
                show(&self.input[expected.len()..])
            );
            return self.fail(what);
        }
        if self.input.len() == expected.len() {
            self.input.clear();
            self.next += 1;
            self.answer(io);
        } else if end {
            let what = format!(
                "replay of {}: message {} ended (END) after {}, the recording has {}",
                self.label,
                at + 1,
                show(&self.input),
                show(&expected)
            );
            self.fail(what);
        }
    }

    fn timer(&mut self, token: u64, io: &mut DeviceIo<'_>) {
        if self.mismatch.is_some() || token as usize != self.next {
            return;
        }
        if let Some(Step::Answer { bytes, .. }) = self.steps.get(self.next) {
            io.output.push(bytes);
            io.output.finish_message();
            self.next += 1;
        }
    }

    fn clear(&mut self, io: &mut DeviceIo<'_>) {
        io.output.clear();
        self.input.clear();
    }

    fn status(&mut self, _io: &DeviceIo<'_>) -> StatusByte {
        // Only a poll's answer carries RQS: the line follows the recording's polls.
        StatusByte(self.polls.get(self.next_poll).copied().unwrap_or(0) & !0x40)
    }

    fn serial_poll(&mut self, _io: &DeviceIo<'_>) -> StatusByte {
        let s = self.polls.get(self.next_poll).copied().unwrap_or(0);
        self.next_poll = (self.next_poll + 1).min(self.polls.len());
        StatusByte(s)
    }

    fn diagnosis(&self) -> Option<String> {
        self.mismatch.clone()
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }
}
