//! A record of every bus event with its virtual timestamp, binary-safe.
//!
//! Off by default (recording costs memory and time); turn it on with
//! [`crate::sim::SimHost::record`].

use std::fmt;
use std::time::Duration;

use crate::message::CommandDecoder;
use crate::status::StatusByte;

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

/// The recorder: events plus the capture limit per data event.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    pub(crate) on: bool,
    pub(crate) capture: usize,
    pub(crate) events: Vec<Event>,
}

impl Recorder {
    pub(crate) fn push(&mut self, at: Duration, board: usize, kind: EventKind) {
        if self.on {
            self.events.push(Event { at, board, kind });
        }
    }

    pub(crate) fn clip(&self, bytes: &[u8]) -> Vec<u8> {
        bytes[..bytes.len().min(self.capture)].to_vec()
    }
}
