//! The backend trait: one interface board acting as system controller.
//!
//! A backend has a small required core (data writes with or without EOI, reads into
//! the caller's buffer, IFC, REN, timeout, clock), a few bus-level calls with honest
//! defaults (command bytes with ATN, a serial poll built from the core, the SRQ line,
//! each a typed [`ErrorKind::Unsupported`](crate::ErrorKind::Unsupported) error where
//! the core cannot express it), and optional capabilities, each reached through one
//! method that returns it:
//!
//! | capability | method | who has it |
//! |---|---|---|
//! | [`DeviceLevel`]: transfers to one device, addressed by the backend | [`Backend::device_level`] | Prologix, VXI-11, HiSLIP, linux-gpib |
//! | [`BoardControl`]: bus lines, ATN, parallel poll, the listener check | [`Backend::board_control`] | the simulator, linux-gpib |
//! | [`VirtualTime`]: a modelled clock and CPU, boards shared by handles | [`Backend::virtual_time`] | the simulator |
//! | [`BoardTuning`]: T1, autopoll, readdressing, unaddressing | [`Backend::tuning`] | the simulator, linux-gpib |
//! | [`WireStats`]: the network cost of the calls | [`Backend::wire_stats`] | Prologix, VXI-11 |
//!
//! A hardware backend implements the nine required methods and the capabilities its
//! driver has; a wrapper ([`crate::trace::TracedBackend`](../trace/struct.TracedBackend.html))
//! forwards the capability methods and wraps only the calls it changes. Callers use
//! [`BackendExt`], which answers each capability's questions for every backend (wall
//! clock, unsupported) where the capability is missing.
//!
//! The trait is object safe: `Box<dyn Backend>` picks a backend at run time.
//!
//! Errors are described by their [`ErrorKind`](crate::ErrorKind): the simulator returns
//! the matching [`Error`] variants, a hardware backend may return
//! [`Error::Backend`] with that kind and the driver's own error as its source. Either
//! way [`Error::transferred`] gives the bytes moved before the error.

use std::time::Duration;

pub(crate) use net::resolve;

use crate::address::{Address, PrimaryAddress};
pub use crate::clock::ClockKind;
use crate::error::{Error, Result};
use crate::message::{addressing, InterfaceMessage};
use crate::status::StatusByte;
use crate::timeout::Timeout;

mod board_control;
pub(crate) mod device_level;
mod ext;
pub mod fake;
pub mod hislip;
#[cfg(feature = "linux-gpib")]
pub mod linux_gpib;
mod net;
pub mod prologix;
pub mod tuning;
mod virtual_time;
pub mod vxi11;

pub use board_control::BoardControl;
pub use device_level::DeviceLevel;
pub use ext::BackendExt;
use tuning::BoardTuning;
pub use virtual_time::{Turns, VirtualTime};

/// The end-of-string byte that stops a read, and how it is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Eos {
    /// The byte.
    pub byte: u8,
    /// Compare all 8 bits (`true`) or only the low 7 (`false`, linux-gpib's default without `BIN`).
    pub eight_bit: bool,
}

impl Eos {
    /// Line feed (0x0A) compared on 8 bits, the usual choice for SCPI instruments.
    pub const NEWLINE: Eos = Eos {
        byte: b'\n',
        eight_bit: true,
    };

    /// True when `b` matches this EOS.
    #[inline]
    pub fn matches(self, b: u8) -> bool {
        if self.eight_bit {
            b == self.byte
        } else {
            (b & 0x7F) == (self.byte & 0x7F)
        }
    }

    /// Index of the first byte of `data` matching this EOS.
    #[inline]
    pub fn find(self, data: &[u8]) -> Option<usize> {
        if self.eight_bit {
            data.iter().position(|&b| b == self.byte)
        } else {
            data.iter().position(|&b| self.matches(b))
        }
    }
}

/// Why a read stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReadEnd {
    /// The talker asserted EOI with the last byte (END).
    Eoi,
    /// The last byte matched the EOS byte.
    Eos,
    /// The caller's buffer is full; more data may follow.
    BufferFull,
}

/// How a successful read ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReadStatus {
    /// Bytes placed at the start of the caller's buffer.
    pub count: usize,
    /// Why the read stopped.
    pub end: ReadEnd,
}

impl ReadStatus {
    /// True when the message is complete (EOI or EOS), false when the buffer filled first.
    pub fn is_end(&self) -> bool {
        self.end != ReadEnd::BufferFull
    }
}

/// Which half of a write-then-read call ([`DeviceLevel::device_write_read`]) failed.
#[derive(Debug)]
pub enum WriteReadError {
    /// The write (or what came before the read): nothing was read.
    Write(Error),
    /// The read, after the write went out whole: the error's `transferred` count of
    /// bytes is at the start of the buffer.
    Read(Error),
}

impl WriteReadError {
    /// The error, whichever half it came from.
    pub fn into_error(self) -> Error {
        match self {
            Self::Write(e) | Self::Read(e) => e,
        }
    }
}

/// One interface board acting as system controller-in-charge.
///
/// Each method's contract is stated at the bus level: what goes on the wire, and which
/// error a failure becomes. A backend is used from one thread at a time (`&mut self`);
/// [`crate::Bus`] shares one between threads.
pub trait Backend: Send {
    /// A short name for messages ("sim", "linux-gpib").
    fn name(&self) -> &str;

    /// The board's own primary address (used for MTA/MLA when addressing devices).
    fn board_address(&self) -> PrimaryAddress;

    /// Sends `bytes` with ATN asserted (interface messages).
    ///
    /// Errors: kind `CommandTimeout` when a device does not accept them (one holds NRFD),
    /// `NoListener` when there is no device on the bus, `NotControllerInCharge`;
    /// `Unsupported` (the default) on a device-level backend that cannot send raw
    /// command bytes (a Prologix adapter, a VXI-11 gateway).
    fn command(&mut self, bytes: &[u8]) -> Result<()> {
        let _ = bytes;
        Err(Error::unsupported("raw command bytes", self.name()))
    }

    /// Sends data bytes to the addressed listeners, with EOI on the last byte when `eoi`.
    ///
    /// Returns the count sent. Errors: kind `NoListener` when nothing is addressed
    /// to listen, `Timeout` (with the count sent) when a listener stalls the
    /// handshake past the timeout.
    fn write(&mut self, data: &[u8], eoi: bool) -> Result<usize>;

    /// Reads from the addressed talker into `buf` until EOI, the EOS byte (when
    /// `eos` is given), or `buf` is full.
    ///
    /// Errors: kind `Timeout` when the talker stops sending before an end; its
    /// `transferred` count of bytes is already at the start of `buf`.
    fn read(&mut self, buf: &mut [u8], eos: Option<Eos>) -> Result<ReadStatus>;

    /// Sends `commands` with ATN ([`Backend::command`]), then `data`
    /// ([`Backend::write`]): the addressing of a write and the write. The default makes
    /// the two calls; a backend that can make both at once (the simulator, under one
    /// lock) does. Errors as the call that failed: the write does not start when the
    /// commands fail.
    fn command_then_write(&mut self, commands: &[u8], data: &[u8], eoi: bool) -> Result<usize> {
        self.command(commands)?;
        self.write(data, eoi)
    }

    /// Sends `commands` with ATN, then reads ([`Backend::read`]): the addressing of a
    /// read and the read, at once where the backend can (see
    /// [`Backend::command_then_write`]).
    fn command_then_read(
        &mut self,
        commands: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        self.command(commands)?;
        self.read(buf, eos)
    }

    /// A query's four steps on the bus: `listen` with ATN and `data` with END on its
    /// last byte ([`Backend::command_then_write`]), `talk` with ATN
    /// ([`Backend::command`]), and the answer read into `buf` ([`Backend::read`]). The
    /// default makes those three calls; a backend that can make all four steps at once
    /// (the simulator, under one lock) does. The error says which part failed:
    /// [`WriteReadError::Write`] when a command or the write did (nothing was read),
    /// [`WriteReadError::Read`] when the read did (its `transferred` bytes are at the
    /// start of `buf`).
    fn command_write_command_read(
        &mut self,
        listen: &[u8],
        data: &[u8],
        talk: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        self.command_then_write(listen, data, true)
            .map_err(WriteReadError::Write)?;
        self.command(talk).map_err(WriteReadError::Write)?;
        self.read(buf, eos).map_err(WriteReadError::Read)
    }

    /// Pulses IFC: every device stops talking and listening; the board becomes CIC.
    fn interface_clear(&mut self) -> Result<()>;

    /// Asserts (`true`) or releases REN.
    fn remote_enable(&mut self, on: bool) -> Result<()>;

    /// Sets the I/O timeout; returns the timeout actually applied (a backend may round
    /// up to the next step it supports, never down; only [`Timeout::Never`] is not
    /// shorter than [`Timeout::Never`]).
    fn set_timeout(&mut self, timeout: Timeout) -> Result<Timeout>;

    /// The I/O timeout in force.
    fn timeout(&self) -> Timeout;

    /// Time since the backend was opened, on its clock (see [`BackendExt::clock_kind`]).
    /// Measurements read time from here, never from the system clock.
    fn now(&self) -> Duration;

    /// Serial-polls one device: UNL, MLA(board), SPE, MTA(device) \[MSA\], read one
    /// byte, SPD, UNT.
    fn serial_poll(&mut self, device: Address) -> Result<StatusByte> {
        generic_serial_poll(self, device)
    }

    /// True while SRQ is asserted.
    fn srq(&mut self) -> Result<bool> {
        Err(Error::unsupported("reading the SRQ line", self.name()))
    }

    /// Waits up to `timeout` for SRQ; returns whether it was asserted. A zero timeout
    /// checks once; [`Timeout::Never`] waits as long as it takes. The default polls
    /// [`Backend::srq`] once per millisecond of the backend's clock.
    fn wait_srq(&mut self, timeout: Timeout) -> Result<bool> {
        let start = self.now();
        loop {
            if self.srq()? {
                return Ok(true);
            }
            if timeout.is_over(self.now().saturating_sub(start)) {
                return Ok(false);
            }
            self.delay(Duration::from_millis(1));
        }
    }

    /// The device-level operations, for a backend that addresses devices itself (a
    /// Prologix adapter, a VXI-11 gateway, linux-gpib's device descriptors): then
    /// [`crate::Device`] uses them instead of sending addressing with
    /// [`Backend::command`]. `None` by default.
    fn device_level(&mut self) -> Option<&mut dyn DeviceLevel> {
        None
    }

    /// The bus lines, ATN, parallel poll and the listener check ([`BoardControl`]),
    /// where the board's driver has them. `None` by default.
    fn board_control(&mut self) -> Option<&mut dyn BoardControl> {
        None
    }

    /// The modelled clock ([`VirtualTime`]), for a backend in virtual time. `None` by
    /// default: the backend runs on the wall clock.
    fn virtual_time(&mut self) -> Option<&mut dyn VirtualTime> {
        None
    }

    /// The board's driver settings ([`BoardTuning`]: T1, autopoll, readdressing,
    /// unaddressing), when the backend can read and change them. `None` by default.
    fn tuning(&mut self) -> Option<&mut dyn BoardTuning> {
        None
    }

    /// Network cost of the calls so far, for backends that talk over a network:
    /// calls, round trips and bytes on the wire both ways. `None` by default.
    fn wire_stats(&self) -> Option<WireStats> {
        None
    }
}

/// What a network backend has put on and taken off the wire (see
/// [`Backend::wire_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct WireStats {
    /// Requests sent (a Prologix line or `++` command; a VXI-11 RPC call).
    pub requests: u64,
    /// Requests that waited for an answer (one network round trip each).
    pub round_trips: u64,
    /// Bytes written to the network (escapes, record marks and RPC headers included).
    pub bytes_sent: u64,
    /// Bytes read from the network.
    pub bytes_received: u64,
    /// Wall time spent waiting for answers.
    pub waiting: Duration,
}

/// The serial poll built from the required core: UNL, MLA(board), SPE, MTA(device)
/// \[MSA\], one byte, then SPD, UNT (sent even when the read failed).
pub fn generic_serial_poll<B: Backend + ?Sized>(b: &mut B, device: Address) -> Result<StatusByte> {
    b.command(addressing::serial_poll(b.board_address(), device).as_bytes())?;
    let mut byte = [0u8; 1];
    let got = b.read(&mut byte, None);
    let end = [
        InterfaceMessage::SerialPollDisable.byte(),
        InterfaceMessage::Untalk.byte(),
    ];
    let done = b.command(&end);
    let st = got?;
    done?;
    if st.count != 1 {
        return Err(Error::Protocol(format!(
            "serial poll of {device} returned {} bytes",
            st.count
        )));
    }
    Ok(StatusByte(byte[0]))
}

impl<B: Backend + ?Sized> Backend for Box<B> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn board_address(&self) -> PrimaryAddress {
        (**self).board_address()
    }
    fn command(&mut self, bytes: &[u8]) -> Result<()> {
        (**self).command(bytes)
    }
    fn write(&mut self, data: &[u8], eoi: bool) -> Result<usize> {
        (**self).write(data, eoi)
    }
    fn read(&mut self, buf: &mut [u8], eos: Option<Eos>) -> Result<ReadStatus> {
        (**self).read(buf, eos)
    }
    fn command_then_write(&mut self, commands: &[u8], data: &[u8], eoi: bool) -> Result<usize> {
        (**self).command_then_write(commands, data, eoi)
    }
    fn command_then_read(
        &mut self,
        commands: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        (**self).command_then_read(commands, buf, eos)
    }
    fn command_write_command_read(
        &mut self,
        listen: &[u8],
        data: &[u8],
        talk: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        (**self).command_write_command_read(listen, data, talk, buf, eos)
    }
    fn interface_clear(&mut self) -> Result<()> {
        (**self).interface_clear()
    }
    fn remote_enable(&mut self, on: bool) -> Result<()> {
        (**self).remote_enable(on)
    }
    fn set_timeout(&mut self, timeout: Timeout) -> Result<Timeout> {
        (**self).set_timeout(timeout)
    }
    fn timeout(&self) -> Timeout {
        (**self).timeout()
    }
    fn now(&self) -> Duration {
        (**self).now()
    }
    fn serial_poll(&mut self, device: Address) -> Result<StatusByte> {
        (**self).serial_poll(device)
    }
    fn srq(&mut self) -> Result<bool> {
        (**self).srq()
    }
    fn wait_srq(&mut self, timeout: Timeout) -> Result<bool> {
        (**self).wait_srq(timeout)
    }
    fn device_level(&mut self) -> Option<&mut dyn DeviceLevel> {
        (**self).device_level()
    }
    fn board_control(&mut self) -> Option<&mut dyn BoardControl> {
        (**self).board_control()
    }
    fn virtual_time(&mut self) -> Option<&mut dyn VirtualTime> {
        (**self).virtual_time()
    }
    fn tuning(&mut self) -> Option<&mut dyn BoardTuning> {
        (**self).tuning()
    }
    fn wire_stats(&self) -> Option<WireStats> {
        (**self).wire_stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eos_compare() {
        assert!(Eos::NEWLINE.matches(b'\n'));
        assert!(!Eos::NEWLINE.matches(b'\n' | 0x80));
        let seven = Eos {
            byte: b'\n',
            eight_bit: false,
        };
        assert!(seven.matches(b'\n' | 0x80));
        assert_eq!(seven.find(b"ab\x8Acd"), Some(2));
        assert_eq!(Eos::NEWLINE.find(b"ab\x8Acd\n"), Some(5));
    }
}
