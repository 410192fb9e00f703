//! A record of every bus event with its virtual timestamp, binary-safe.
//!
//! Off by default (recording costs memory and time); turn it on with
//! [`crate::sim::SimHost::record`].

use std::fmt;
use std::time::Duration;

use crate::message::CommandDecoder;
use crate::status::StatusByte;
use crate::trace::{Line, Record, TraceSink};

/// What happened on the bus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// Command bytes sent with ATN (decode with [`Event::messages`]).
    Command(Vec<u8>),
    /// Data bytes sent by the board (`eoi`: END with the last byte). `bytes` holds at most
    /// the recorder's capture limit; `len` is the full count.
    Write {
        /// The bytes (up to the capture limit).
        bytes: Vec<u8>,
        /// How many were sent.
        len: usize,
        /// END with the last byte.
        eoi: bool,
    },
    /// Data bytes received by the board from `talker`.
    Read {
        /// The talker's primary address.
        talker: u8,
        /// The bytes (up to the capture limit).
        bytes: Vec<u8>,
        /// How many were received.
        len: usize,
        /// END with the last byte.
        eoi: bool,
    },
    /// A status byte returned in a serial poll.
    SerialPoll {
        /// The polled device.
        device: u8,
        /// Its status byte.
        status: StatusByte,
    },
    /// SRQ changed.
    Srq(bool),
    /// IFC pulsed.
    Ifc,
    /// REN changed.
    Ren(bool),
    /// An operation ended with an error (its text).
    Error(String),
}

/// One recorded event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Virtual time when the operation started.
    pub at: Duration,
    /// Index of the board.
    pub board: usize,
    /// What happened.
    pub kind: EventKind,
}

impl Event {
    /// For command events, the decoded interface messages; empty otherwise.
    pub fn messages(&self) -> Vec<crate::InterfaceMessage> {
        match &self.kind {
            EventKind::Command(b) => {
                let mut d = CommandDecoder::new();
                b.iter().map(|&x| d.next_message(x)).collect()
            }
            _ => Vec::new(),
        }
    }
}

fn escaped(f: &mut fmt::Formatter<'_>, bytes: &[u8], len: usize) -> fmt::Result {
    f.write_str("\"")?;
    for &b in bytes {
        match b {
            b'\n' => f.write_str("\\n")?,
            b'\r' => f.write_str("\\r")?,
            b'"' => f.write_str("\\\"")?,
            b'\\' => f.write_str("\\\\")?,
            0x20..=0x7E => write!(f, "{}", b as char)?,
            _ => write!(f, "\\x{b:02X}")?,
        }
    }
    f.write_str("\"")?;
    if len > bytes.len() {
        write!(f, "... ({len} bytes)")?;
    }
    Ok(())
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:>14.6} ms  board {}  ",
            self.at.as_secs_f64() * 1e3,
            self.board
        )?;
        match &self.kind {
            EventKind::Command(_) => {
                f.write_str("ATN")?;
                for m in self.messages() {
                    write!(f, " {m}")?;
                }
                Ok(())
            }
            EventKind::Write { bytes, len, eoi } => {
                f.write_str("write ")?;
                escaped(f, bytes, *len)?;
                if *eoi {
                    f.write_str(" END")?;
                }
                Ok(())
            }
            EventKind::Read {
                talker,
                bytes,
                len,
                eoi,
            } => {
                write!(f, "read from {talker} ")?;
                escaped(f, bytes, *len)?;
                if *eoi {
                    f.write_str(" END")?;
                }
                Ok(())
            }
            EventKind::SerialPoll { device, status } => {
                write!(f, "serial poll {device}: {status}")
            }
            EventKind::Srq(on) => write!(f, "SRQ {}", if *on { "asserted" } else { "released" }),
            EventKind::Ifc => f.write_str("IFC"),
            EventKind::Ren(on) => write!(f, "REN {}", if *on { "asserted" } else { "released" }),
            EventKind::Error(e) => write!(f, "error: {e}"),
        }
    }
}

impl Event {
    /// The transcript event for a trace record (`capture`: most data bytes kept);
    /// `None` for records the transcript has no event for (calls).
    pub(crate) fn from_record(r: &Record<'_>, capture: usize) -> Option<Self> {
        let clip = |b: &[u8]| b[..b.len().min(capture)].to_vec();
        let (at, board, kind) = match r {
            Record::Transfer(t) => {
                let kind = if t.is_command() {
                    EventKind::Command(t.bytes.to_vec())
                } else if t.is_serial_poll() {
                    EventKind::SerialPoll {
                        device: t.talker,
                        status: StatusByte(t.bytes.first().copied().unwrap_or(0)),
                    }
                } else if t.board_talks() {
                    EventKind::Write {
                        bytes: clip(&t.bytes),
                        len: t.bytes.len(),
                        eoi: t.end(),
                    }
                } else {
                    EventKind::Read {
                        talker: t.talker,
                        bytes: clip(&t.bytes),
                        len: t.bytes.len(),
                        eoi: t.end(),
                    }
                };
                (t.start_ns, t.board, kind)
            }
            Record::Line(l) => {
                let kind = match l.line {
                    Line::Srq => EventKind::Srq(l.asserted),
                    Line::Ren => EventKind::Ren(l.asserted),
                    Line::Ifc => EventKind::Ifc,
                };
                (l.at_ns, l.board, kind)
            }
            Record::Error(e) => (e.at_ns, e.board, EventKind::Error(e.text.to_string())),
            Record::Call(_) | Record::Unknown { .. } => return None,
        };
        Some(Event {
            at: Duration::from_nanos(at),
            board: usize::from(board),
            kind,
        })
    }
}

/// The recorder: the transcript (events kept in memory, each with at most `capture`
/// data bytes) and a trace sink (every record streamed, no limit). Either, both or
/// neither may be on.
#[derive(Default)]
pub(crate) struct Recorder {
    on: bool,
    capture: usize,
    events: Vec<Event>,
    sink: Option<Box<dyn TraceSink>>,
    /// `on` or a sink: kept as one flag, asked before every operation's records.
    active: bool,
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder")
            .field("on", &self.on)
            .field("events", &self.events.len())
            .field("sink", &self.sink.is_some())
            .finish()
    }
}

impl Recorder {
    /// Records nothing yet; a transcript started keeps `capture` data bytes an event.
    pub(crate) fn new(capture: usize) -> Self {
        Self {
            capture,
            ..Self::default()
        }
    }

    /// Whether anything is recorded: worth building records for.
    #[inline]
    pub(crate) fn active(&self) -> bool {
        self.active
    }

    /// Starts keeping transcript events, with at most `capture` data bytes each.
    pub(crate) fn start_transcript(&mut self, capture: usize) {
        self.on = true;
        self.capture = capture;
        self.active = true;
    }

    /// Stops keeping transcript events; returns those kept.
    pub(crate) fn stop_transcript(&mut self) -> Vec<Event> {
        self.on = false;
        self.active = self.sink.is_some();
        self.take_events()
    }

    /// The transcript events kept so far.
    pub(crate) fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// Streams every record to `sink` from now on (replacing one set before).
    pub(crate) fn set_sink(&mut self, sink: Box<dyn TraceSink>) {
        self.sink = Some(sink);
        self.active = true;
    }

    /// Stops streaming; returns the sink.
    pub(crate) fn take_sink(&mut self) -> Option<Box<dyn TraceSink>> {
        self.active = self.on;
        self.sink.take()
    }

    /// Streams `r` to the sink and keeps its transcript event.
    pub(crate) fn emit(&mut self, r: &Record<'_>) {
        if let Some(s) = self.sink.as_mut() {
            s.record(r);
        }
        if self.on {
            if let Some(e) = Event::from_record(r, self.capture) {
                self.events.push(e);
            }
        }
    }
}
