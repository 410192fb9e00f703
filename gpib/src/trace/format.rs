//! The trace file format: the header, the record types and their byte layout, shared by
//! the writer and the reader (the layout is documented in `docs/trace-format.md`).
//!
//! All integers are little-endian; all times are nanoseconds on the trace's clock
//! ([`Header::clock`]): virtual time on the simulator, time since the backend was
//! opened on hardware and network backends.

use std::borrow::Cow;

use crate::error::ErrorKind;

/// The file's first eight bytes.
pub const MAGIC: [u8; 8] = *b"GPIBTRC\x1a";
/// The format version this build writes and reads.
pub const VERSION: u16 = 1;
/// Longest header label (bytes of UTF-8).
pub const MAX_LABEL: usize = 4096;
/// Size of the fixed header before the label: magic, version, clock, reserved, label length.
pub const HEADER_FIXED: usize = 8 + 2 + 1 + 1 + 4;
/// Size of a record's frame: tag (u8) and body length (u64).
pub const FRAME: usize = 1 + 8;

/// Record tags.
pub mod tag {
    /// A [`super::Transfer`].
    pub const TRANSFER: u8 = 1;
    /// A [`super::LineChange`].
    pub const LINE: u8 = 2;
    /// A [`super::BusError`].
    pub const ERROR: u8 = 3;
    /// A [`super::Call`].
    pub const CALL: u8 = 4;
}

/// Fixed part of a transfer's body, before its data bytes.
pub const TRANSFER_FIXED: usize = 2 + 1 + 1 + 4 + 5 * 8 + 4 + 4;
/// A line change's body.
pub const LINE_BODY: usize = 2 + 1 + 1 + 8 + 8;
/// Fixed part of a bus error's body, before its text.
pub const ERROR_FIXED: usize = 2 + 1 + 8;
/// Fixed part of a call's body, before its data length, data and message.
pub const CALL_FIXED: usize = 2 + 1 + 1 + 1 + 2 + 1 + 1 + 4 * 8;

/// Which clock the trace's times are on: wall time since the backend was opened
/// (hardware, network), or the simulator's virtual time.
pub use crate::clock::ClockKind as Clock;

/// The clock's code in a trace file's header.
pub(crate) fn clock_code(clock: Clock) -> u8 {
    match clock {
        Clock::Wall => 0,
        Clock::Virtual => 1,
    }
}

/// The clock of a header's code.
pub(crate) fn clock_from_code(c: u8) -> Option<Clock> {
    match c {
        0 => Some(Clock::Wall),
        1 => Some(Clock::Virtual),
        _ => None,
    }
}

/// The file header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The clock of every time in the file.
    pub clock: Clock,
    /// What was traced (a configuration's name, a backend and board), at most
    /// [`MAX_LABEL`] bytes.
    pub label: String,
}

/// [`Transfer::flags`] bits.
pub mod flags {
    /// Sent with ATN: command bytes (interface messages).
    pub const ATN: u8 = 1 << 0;
    /// EOI came with the last byte (END).
    pub const END: u8 = 1 << 1;
    /// The byte is a status byte answering a serial poll.
    pub const SERIAL_POLL: u8 = 1 << 2;
    /// The transfer stopped before it was complete (timeout, no listener).
    pub const INCOMPLETE: u8 = 1 << 3;
    /// The board talked (a write or command bytes); otherwise a device talked to the board.
    pub const BOARD_TALKS: u8 = 1 << 4;
    /// Every bit defined in version 1.
    pub const ALL: u8 = ATN | END | SERIAL_POLL | INCOMPLETE | BOARD_TALKS;
}

/// Bytes moved by the three-wire handshake, with what is needed to draw each byte's
/// handshake: byte `i` starts its cycle at `first_ns + i * byte_ns`; the talker sets
/// DIO then, asserts DAV `t1_ns` later, and the slowest listener accepts it
/// `accept_ns` after DAV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer<'a> {
    /// Index of the board.
    pub board: u16,
    /// [`flags`] bits.
    pub flags: u8,
    /// The talker's primary address (the board's own for commands and writes).
    pub talker: u8,
    /// The listeners' primary addresses, bit `a` for address `a` (bits 0..=30).
    pub listeners: u32,
    /// When the operation began (the call).
    pub start_ns: u64,
    /// When the other side was ready (the handshake waited for it until then).
    pub ready_ns: u64,
    /// When the first byte's handshake cycle began.
    pub first_ns: u64,
    /// Handshake period: time from one byte's cycle to the next.
    pub byte_ns: u64,
    /// When the operation ended.
    pub end_ns: u64,
    /// The talker's settling time T1 (DIO valid to DAV asserted).
    pub t1_ns: u32,
    /// The slowest listener's acceptance time (DAV asserted to NDAC released).
    pub accept_ns: u32,
    /// Every byte moved, in order.
    pub bytes: Cow<'a, [u8]>,
}

impl Transfer<'_> {
    /// True for command bytes (ATN).
    pub fn is_command(&self) -> bool {
        self.flags & flags::ATN != 0
    }
    /// True when EOI came with the last byte.
    pub fn end(&self) -> bool {
        self.flags & flags::END != 0
    }
    /// True for a serial poll's status byte.
    pub fn is_serial_poll(&self) -> bool {
        self.flags & flags::SERIAL_POLL != 0
    }
    /// True when the board talked.
    pub fn board_talks(&self) -> bool {
        self.flags & flags::BOARD_TALKS != 0
    }
    /// True when the transfer stopped early.
    pub fn incomplete(&self) -> bool {
        self.flags & flags::INCOMPLETE != 0
    }
    /// The listeners' addresses, lowest first.
    pub fn listener_addresses(&self) -> impl Iterator<Item = u8> + '_ {
        (0..31u8).filter(|a| self.listeners & (1 << a) != 0)
    }
}

/// A control line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Line {
    /// Service request.
    Srq,
    /// Remote enable.
    Ren,
    /// Interface clear (a pulse from `at_ns` to `end_ns`).
    Ifc,
}

impl Line {
    pub(crate) fn code(self) -> u8 {
        match self {
            Line::Srq => 0,
            Line::Ren => 1,
            Line::Ifc => 2,
        }
    }
    pub(crate) fn from_code(c: u8) -> Option<Self> {
        match c {
            0 => Some(Line::Srq),
            1 => Some(Line::Ren),
            2 => Some(Line::Ifc),
            _ => None,
        }
    }
    /// "SRQ", "REN", "IFC".
    pub fn name(self) -> &'static str {
        match self {
            Line::Srq => "SRQ",
            Line::Ren => "REN",
            Line::Ifc => "IFC",
        }
    }
}

/// A control line changed (IFC: a pulse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineChange {
    /// Index of the board.
    pub board: u16,
    /// Which line.
    pub line: Line,
    /// Asserted (`true`) or released; IFC records are always asserted.
    pub asserted: bool,
    /// When it changed.
    pub at_ns: u64,
    /// When the pulse ended (IFC); `at_ns` for level changes.
    pub end_ns: u64,
}

/// An operation on the bus ended with an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusError<'a> {
    /// Index of the board.
    pub board: u16,
    /// What kind of error.
    pub kind: ErrorKind,
    /// When the operation began.
    pub at_ns: u64,
    /// The error's text.
    pub text: Cow<'a, str>,
}

/// Which backend call a [`Call`] record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallOp {
    /// `command` (bytes with ATN).
    Command,
    /// `write`.
    Write,
    /// `read`.
    Read,
    /// `interface_clear`.
    InterfaceClear,
    /// `remote_enable` (`requested` 1: assert, 0: release).
    RemoteEnable,
    /// `set_timeout` (`requested`: the timeout in ns, `u64::MAX` for none; `count`: the
    /// one applied).
    SetTimeout,
    /// `serial_poll` (the status byte is the data).
    SerialPoll,
    /// `device_write`.
    DeviceWrite,
    /// `device_read`.
    DeviceRead,
    /// `device_clear` (SDC).
    DeviceClear,
    /// `device_trigger` (GET).
    DeviceTrigger,
    /// `device_remote`.
    DeviceRemote,
    /// `device_local` (GTL).
    DeviceLocal,
    /// `wait_srq` / a step of it (`count` 1: SRQ was asserted).
    WaitSrq,
    /// `parallel_poll` (the DIO byte is the data).
    ParallelPoll,
    /// `listener_present` (`count` 1: a listener answered).
    ListenerPresent,
    /// `go_to_standby`.
    GoToStandby,
    /// `take_control`.
    TakeControl,
    /// `srq` (reading the line; `count` 1: asserted).
    Srq,
}

/// Every call kind, in code order (the code is the index).
pub const CALL_OPS: [CallOp; 19] = [
    CallOp::Command,
    CallOp::Write,
    CallOp::Read,
    CallOp::InterfaceClear,
    CallOp::RemoteEnable,
    CallOp::SetTimeout,
    CallOp::SerialPoll,
    CallOp::DeviceWrite,
    CallOp::DeviceRead,
    CallOp::DeviceClear,
    CallOp::DeviceTrigger,
    CallOp::DeviceRemote,
    CallOp::DeviceLocal,
    CallOp::WaitSrq,
    CallOp::ParallelPoll,
    CallOp::ListenerPresent,
    CallOp::GoToStandby,
    CallOp::TakeControl,
    CallOp::Srq,
];

impl CallOp {
    pub(crate) fn code(self) -> u8 {
        CALL_OPS.iter().position(|o| *o == self).unwrap_or(0) as u8
    }
    pub(crate) fn from_code(c: u8) -> Option<Self> {
        CALL_OPS.get(usize::from(c)).copied()
    }
    /// The backend method's name ("device_write").
    pub fn name(self) -> &'static str {
        match self {
            CallOp::Command => "command",
            CallOp::Write => "write",
            CallOp::Read => "read",
            CallOp::InterfaceClear => "interface_clear",
            CallOp::RemoteEnable => "remote_enable",
            CallOp::SetTimeout => "set_timeout",
            CallOp::SerialPoll => "serial_poll",
            CallOp::DeviceWrite => "device_write",
            CallOp::DeviceRead => "device_read",
            CallOp::DeviceClear => "device_clear",
            CallOp::DeviceTrigger => "device_trigger",
            CallOp::DeviceRemote => "device_remote",
            CallOp::DeviceLocal => "device_local",
            CallOp::WaitSrq => "wait_srq",
            CallOp::ParallelPoll => "parallel_poll",
            CallOp::ListenerPresent => "listener_present",
            CallOp::GoToStandby => "go_to_standby",
            CallOp::TakeControl => "take_control",
            CallOp::Srq => "srq",
        }
    }
}

/// [`Call::status`] bits, as linux-gpib's and NI-488.2's `ibsta`.
pub mod status {
    /// The call failed.
    pub const ERR: u16 = 0x8000;
    /// It timed out.
    pub const TIMO: u16 = 0x4000;
    /// A read ended with END (EOI) or the EOS byte.
    pub const END: u16 = 0x2000;
    /// SRQ is asserted (a wait for SRQ that saw it).
    pub const SRQI: u16 = 0x1000;
    /// The I/O completed.
    pub const CMPL: u16 = 0x0100;
}

/// One backend call, as NI I/O Trace shows it: the call, its result, its count, when
/// it started and how long it took; with the bytes it sent or received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call<'a> {
    /// Which board handle (the board's index for the simulator).
    pub board: u16,
    /// Which call.
    pub op: CallOp,
    /// The device's primary address, for device-level calls.
    pub device: Option<u8>,
    /// The device's secondary address (0..=30), for device-level calls that have one.
    pub secondary: Option<u8>,
    /// `ibsta`-like [`status`] bits.
    pub status: u16,
    /// The error's kind when the call failed.
    pub error: Option<ErrorKind>,
    /// EOI was asked for (writes).
    pub eoi: bool,
    /// When the call began.
    pub start_ns: u64,
    /// How long it took.
    pub duration_ns: u64,
    /// Bytes moved (`ibcntl`), or the result for calls that return a number.
    pub count: u64,
    /// What was asked for: the buffer size of a read, the byte count of a write.
    pub requested: u64,
    /// The bytes sent (writes, commands) or received (reads, polls).
    pub data: Cow<'a, [u8]>,
    /// The error's text, empty when the call succeeded.
    pub message: Cow<'a, str>,
}

/// One record of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<'a> {
    /// Bytes moved on the bus (command or data).
    Transfer(Transfer<'a>),
    /// A control line changed.
    Line(LineChange),
    /// An operation on the bus failed.
    Error(BusError<'a>),
    /// A backend call.
    Call(Call<'a>),
    /// A record of a kind this version does not know (skipped; its body is not kept).
    Unknown {
        /// Its tag.
        tag: u8,
        /// Its body's length.
        len: u64,
    },
}

impl Record<'_> {
    /// When the record's event began.
    pub fn start_ns(&self) -> Option<u64> {
        match self {
            Record::Transfer(t) => Some(t.start_ns),
            Record::Line(l) => Some(l.at_ns),
            Record::Error(e) => Some(e.at_ns),
            Record::Call(c) => Some(c.start_ns),
            Record::Unknown { .. } => None,
        }
    }

    /// The record with its borrowed bytes copied, so that it outlives them.
    pub fn into_owned(self) -> Record<'static> {
        match self {
            Record::Transfer(t) => Record::Transfer(Transfer {
                bytes: Cow::Owned(t.bytes.into_owned()),
                ..t
            }),
            Record::Line(l) => Record::Line(l),
            Record::Error(e) => Record::Error(BusError {
                text: Cow::Owned(e.text.into_owned()),
                ..e
            }),
            Record::Call(c) => Record::Call(Call {
                data: Cow::Owned(c.data.into_owned()),
                message: Cow::Owned(c.message.into_owned()),
                ..c
            }),
            Record::Unknown { tag, len } => Record::Unknown { tag, len },
        }
    }
}

/// Every error kind, in code order (code = index + 1; 0 means none).
const ERROR_KINDS: [ErrorKind; 16] = [
    ErrorKind::Timeout,
    ErrorKind::NoListener,
    ErrorKind::NotControllerInCharge,
    ErrorKind::CommandTimeout,
    ErrorKind::SrqStuck,
    ErrorKind::NotAddressed,
    ErrorKind::MalformedBlock,
    ErrorKind::InvalidAddress,
    ErrorKind::InvalidResource,
    ErrorKind::InvalidArgument,
    ErrorKind::Unsupported,
    ErrorKind::BackendUnavailable,
    ErrorKind::BusConflict,
    ErrorKind::Protocol,
    ErrorKind::Config,
    ErrorKind::Io,
];

pub(crate) fn error_code(k: Option<ErrorKind>) -> u8 {
    match k {
        None => 0,
        Some(k) => ERROR_KINDS
            .iter()
            .position(|x| *x == k)
            .map_or(0, |i| i as u8 + 1),
    }
}

/// `Ok(None)` for 0, `Err(())` for a code no kind has.
pub(crate) fn error_from_code(c: u8) -> Result<Option<ErrorKind>, ()> {
    match c {
        0 => Ok(None),
        c => ERROR_KINDS
            .get(usize::from(c) - 1)
            .copied()
            .map(Some)
            .ok_or(()),
    }
}

/// A short name for an error kind ("timeout").
pub fn error_kind_name(k: ErrorKind) -> &'static str {
    match k {
        ErrorKind::Timeout => "timeout",
        ErrorKind::NoListener => "no listener",
        ErrorKind::NotControllerInCharge => "not controller-in-charge",
        ErrorKind::CommandTimeout => "command timeout",
        ErrorKind::SrqStuck => "SRQ stuck",
        ErrorKind::NotAddressed => "not addressed",
        ErrorKind::MalformedBlock => "malformed block",
        ErrorKind::InvalidAddress => "invalid address",
        ErrorKind::InvalidResource => "invalid resource",
        ErrorKind::InvalidArgument => "invalid argument",
        ErrorKind::Unsupported => "unsupported",
        ErrorKind::BackendUnavailable => "backend unavailable",
        ErrorKind::BusConflict => "bus conflict",
        ErrorKind::Protocol => "protocol",
        ErrorKind::Config => "configuration",
        ErrorKind::Io => "I/O",
    }
}
