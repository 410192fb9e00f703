//! The backend trait: one interface board acting as system controller.
//!
//! A backend has a small required core (command bytes with ATN, data writes with or
//! without EOI, reads into the caller's buffer, IFC, REN, timeout, clock) and provided
//! methods with honest defaults: a serial poll built from the core, and a typed
//! [`ErrorKind::Unsupported`](crate::ErrorKind::Unsupported) error for what the core
//! cannot express (SRQ line, parallel poll, line snapshot, listener check).
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
use crate::status::{BoardStatus, BusLines, StatusByte};

pub mod hislip;
#[cfg(feature = "linux-gpib")]
pub mod linux_gpib;
mod net;
pub mod prologix;
pub mod tuning;
pub mod vxi11;

use tuning::BoardTuning;

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

/// Which board a backend drives, for backends of which several handles can drive the
/// same board (a simulated board handed out twice by `gpib::sim::SimHost::board`).
///
/// A board has one addressing state and carries one transaction at a time, whoever
/// holds a handle to it: every [`crate::Bus`] made on backends with equal ids shares
/// one lock and one record of who is addressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BoardId {
    backend: &'static str,
    instance: usize,
    board: usize,
}

impl BoardId {
    /// The board `board` of backend `backend`'s `instance` (e.g. a simulated host's
    /// identity), unique while any handle to it is alive.
    pub fn new(backend: &'static str, instance: usize, board: usize) -> Self {
        Self {
            backend,
            instance,
            board,
        }
    }
}

/// Which half of a write-then-read call ([`Backend::device_write_read`]) failed.
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

/// Turn-taking among the threads that share a backend's clock (the simulator's
/// participants, `gpib::sim::Participant`): [`crate::Bus`] takes the turn before
/// it locks the board and gives it back after, so that a whole transaction runs in
/// one turn and never waits for a turn while it holds the board.
pub trait Turns: Send + Sync {
    /// Waits until the calling thread may run (at once for a thread that takes no
    /// turns, or that holds the turn already), then holds the turn.
    fn acquire(&self);
    /// Gives back one [`Turns::acquire`].
    fn release(&self);
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

    /// Pulses IFC: every device stops talking and listening; the board becomes CIC.
    fn interface_clear(&mut self) -> Result<()>;

    /// Asserts (`true`) or releases REN.
    fn remote_enable(&mut self, on: bool) -> Result<()>;

    /// Sets the I/O timeout; returns the timeout actually applied (a backend may round
    /// up to the next step it supports, never down). `Duration::ZERO` means none.
    fn set_timeout(&mut self, timeout: Duration) -> Result<Duration>;

    /// The I/O timeout in force.
    fn timeout(&self) -> Duration;

    /// Time since the backend was opened, on its clock (see [`Backend::clock_kind`]).
    /// Measurements read time from here, never from the system clock.
    fn now(&self) -> Duration;

    /// Whether [`Backend::now`] is wall time or virtual time.
    fn clock_kind(&self) -> ClockKind {
        ClockKind::Wall
    }

    /// Waits `duration` on the backend's clock (sleeps on hardware; advances virtual time
    /// on the simulator).
    fn delay(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }

    /// Host CPU time modelled so far, for backends that model it (the simulator).
    /// `None` when CPU time must be measured from the operating system instead.
    fn modelled_host_cpu(&self) -> Option<Duration> {
        None
    }

    /// The board this backend drives, when another handle may drive it too (see
    /// [`BoardId`]). `None` by default: this backend is the board's only handle.
    fn board_id(&self) -> Option<BoardId> {
        None
    }

    /// Whether waiting (for SRQ, or a delay) takes wall time: true on hardware and on
    /// the simulator in real-time mode. [`crate::Bus::wait_srq`] then waits with the
    /// bus unlocked, so other threads' transactions go on during the wait. The default
    /// is `clock_kind() == ClockKind::Wall`.
    fn waits_in_wall_time(&self) -> bool {
        self.clock_kind() == ClockKind::Wall
    }

    /// Whether the board's driver sends addressing bytes (UNL, MTA/MLA, secondaries)
    /// before every read and write, as linux-gpib's device-level calls do. A
    /// [`crate::Bus`] over such a backend does the same; otherwise it sends them only
    /// when the addressed device changes. Default: false.
    fn addresses_every_call(&self) -> bool {
        false
    }

    /// Whether the board's driver ends every device read and write with UNL and UNT
    /// (linux-gpib's `IbcUnAddr`). A [`crate::Bus`] over such a backend sends them after
    /// each transfer it addresses itself, and addresses the next one again. Default:
    /// false.
    fn unaddresses_after_call(&self) -> bool {
        false
    }

    /// The board's driver settings ([`BoardTuning`]: T1, autopoll, readdressing,
    /// unaddressing), when the backend can read and change them. `None` by default.
    fn tuning(&mut self) -> Option<&mut dyn BoardTuning> {
        None
    }

    /// Serial-polls one device: UNL, MLA(board), SPE, MTA(device) \[MSA\], read one
    /// byte, SPD, UNT.
    fn serial_poll(&mut self, device: Address) -> Result<StatusByte> {
        generic_serial_poll(self, device)
    }

    /// Whether this backend addresses devices itself (a Prologix adapter, a VXI-11
    /// gateway): then [`crate::Device`] uses the device-level operations below
    /// ([`Backend::device_write`], [`Backend::device_read`], ...) instead of sending
    /// addressing with [`Backend::command`]. `false` by default.
    fn device_level(&self) -> bool {
        false
    }

    /// Sends `data` to `device` (addressed to listen, the board to talk), with EOI on
    /// the last byte when `eoi`; returns the count sent. The default addresses with
    /// the raw core (UNL, MTA board, MLA device \[MSA\]) and then [`Backend::write`].
    ///
    /// Errors as [`Backend::write`]; a timeout keeps its count.
    fn device_write(&mut self, device: Address, data: &[u8], eoi: bool) -> Result<usize> {
        self.command(addressing::to_devices(self.board_address(), &[device]).as_bytes())?;
        self.write(data, eoi)
    }

    /// Sends `data` to `device` with END on its last byte, then reads its answer into
    /// `buf` (a query), in one call where the backend can overlap the two: a VXI-11
    /// client sends both RPCs before it waits for either. The default makes the two
    /// calls ([`Backend::device_write`], [`Backend::device_read`]).
    ///
    /// The error says which half failed: [`WriteReadError::Write`] (nothing was read)
    /// or [`WriteReadError::Read`] (its `transferred` bytes are at the start of `buf`).
    fn device_write_read(
        &mut self,
        device: Address,
        data: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        self.device_write(device, data, true)
            .map_err(WriteReadError::Write)?;
        self.device_read(device, buf, eos)
            .map_err(WriteReadError::Read)
    }

    /// Reads from `device` (addressed to talk, the board to listen) into `buf` until
    /// EOI, the EOS byte (when `eos` is given), or `buf` is full. The default
    /// addresses with the raw core (UNL, MTA device \[MSA\], MLA board) and then
    /// [`Backend::read`].
    ///
    /// Errors as [`Backend::read`]: a timeout reports the bytes already in `buf`.
    fn device_read(
        &mut self,
        device: Address,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        self.command(addressing::from_device(self.board_address(), device).as_bytes())?;
        self.read(buf, eos)
    }

    /// SDC to one device: its input and output buffers are cleared. The default sends
    /// UNL, MTA board, MLA device \[MSA\], SDC.
    fn device_clear(&mut self, device: Address) -> Result<()> {
        addressed(self, device, InterfaceMessage::SelectedDeviceClear)
    }

    /// GET to one device. The default sends UNL, MTA board, MLA device \[MSA\], GET.
    fn device_trigger(&mut self, device: Address) -> Result<()> {
        addressed(self, device, InterfaceMessage::GroupExecuteTrigger)
    }

    /// Puts one device in remote: REN asserted and the device addressed to listen.
    fn device_remote(&mut self, device: Address) -> Result<()> {
        self.remote_enable(true)?;
        self.command(addressing::to_devices(self.board_address(), &[device]).as_bytes())
    }

    /// GTL to one device: it returns to local (front-panel) control.
    fn device_local(&mut self, device: Address) -> Result<()> {
        addressed(self, device, InterfaceMessage::GoToLocal)
    }

    /// Network cost of the calls so far, for backends that talk over a network:
    /// calls, round trips and bytes on the wire both ways. `None` by default.
    fn wire_stats(&self) -> Option<WireStats> {
        None
    }

    /// True while SRQ is asserted.
    fn srq(&mut self) -> Result<bool> {
        Err(Error::unsupported("reading the SRQ line", self.name()))
    }

    /// Waits up to `timeout` for SRQ; returns whether it was asserted. The default polls
    /// [`Backend::srq`] once per millisecond of the backend's clock.
    fn wait_srq(&mut self, timeout: Duration) -> Result<bool> {
        let start = self.now();
        loop {
            if self.srq()? {
                return Ok(true);
            }
            if self.now().saturating_sub(start) >= timeout {
                return Ok(false);
            }
            self.delay(Duration::from_millis(1));
        }
    }

    /// One step of a wait for SRQ until `deadline` on the backend's clock:
    /// `Some(true)` when SRQ is asserted, `Some(false)` when the deadline passed, `None`
    /// when the wait is not over but other callers' operations come first (call again,
    /// after unlocking). The default waits the whole time in one step.
    fn wait_srq_step(&mut self, deadline: Duration) -> Result<Option<bool>> {
        let left = deadline.saturating_sub(self.now());
        self.wait_srq(left).map(Some)
    }

    /// The turn-taking this backend's callers share, if any (see [`Turns`]).
    fn turns(&self) -> Option<std::sync::Arc<dyn Turns>> {
        None
    }

    /// Conducts a parallel poll and returns the DIO byte.
    fn parallel_poll(&mut self) -> Result<u8> {
        Err(Error::unsupported("parallel poll", self.name()))
    }

    /// A snapshot of the bus lines.
    fn lines(&mut self) -> Result<BusLines> {
        Err(Error::unsupported("reading the bus lines", self.name()))
    }

    /// The board's own state (CIC, ATN, TACS, LACS, REN, SRQ), so that no layer above
    /// has to decode its own command bytes to know it.
    fn board_status(&mut self) -> Result<BoardStatus> {
        Err(Error::unsupported(
            "reading the board's status",
            self.name(),
        ))
    }

    /// Releases ATN without moving data (linux-gpib's `ibgts`): the board goes to
    /// standby, the addressed talker and listeners may transfer.
    fn go_to_standby(&mut self) -> Result<()> {
        Err(Error::unsupported("going to standby", self.name()))
    }

    /// Asserts ATN without sending command bytes (linux-gpib's `ibcac`).
    fn take_control(&mut self) -> Result<()> {
        Err(Error::unsupported("taking control", self.name()))
    }

    /// True when a device listens at `address` (addresses it to listen and senses NDAC).
    fn listener_present(&mut self, address: Address) -> Result<bool> {
        let _ = address;
        Err(Error::unsupported("the listener check", self.name()))
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

/// One addressed command to `device`, with its addressing, in one command call.
fn addressed<B: Backend + ?Sized>(b: &mut B, device: Address, m: InterfaceMessage) -> Result<()> {
    let mut cmd = addressing::to_devices(b.board_address(), &[device]);
    cmd.push(m);
    b.command(cmd.as_bytes())
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
    fn interface_clear(&mut self) -> Result<()> {
        (**self).interface_clear()
    }
    fn remote_enable(&mut self, on: bool) -> Result<()> {
        (**self).remote_enable(on)
    }
    fn set_timeout(&mut self, timeout: Duration) -> Result<Duration> {
        (**self).set_timeout(timeout)
    }
    fn timeout(&self) -> Duration {
        (**self).timeout()
    }
    fn now(&self) -> Duration {
        (**self).now()
    }
    fn clock_kind(&self) -> ClockKind {
        (**self).clock_kind()
    }
    fn delay(&mut self, duration: Duration) {
        (**self).delay(duration)
    }
    fn modelled_host_cpu(&self) -> Option<Duration> {
        (**self).modelled_host_cpu()
    }
    fn board_id(&self) -> Option<BoardId> {
        (**self).board_id()
    }
    fn waits_in_wall_time(&self) -> bool {
        (**self).waits_in_wall_time()
    }
    fn addresses_every_call(&self) -> bool {
        (**self).addresses_every_call()
    }
    fn unaddresses_after_call(&self) -> bool {
        (**self).unaddresses_after_call()
    }
    fn tuning(&mut self) -> Option<&mut dyn BoardTuning> {
        (**self).tuning()
    }
    fn serial_poll(&mut self, device: Address) -> Result<StatusByte> {
        (**self).serial_poll(device)
    }
    fn srq(&mut self) -> Result<bool> {
        (**self).srq()
    }
    fn wait_srq(&mut self, timeout: Duration) -> Result<bool> {
        (**self).wait_srq(timeout)
    }
    fn wait_srq_step(&mut self, deadline: Duration) -> Result<Option<bool>> {
        (**self).wait_srq_step(deadline)
    }
    fn turns(&self) -> Option<std::sync::Arc<dyn Turns>> {
        (**self).turns()
    }
    fn parallel_poll(&mut self) -> Result<u8> {
        (**self).parallel_poll()
    }
    fn lines(&mut self) -> Result<BusLines> {
        (**self).lines()
    }
    fn board_status(&mut self) -> Result<BoardStatus> {
        (**self).board_status()
    }
    fn go_to_standby(&mut self) -> Result<()> {
        (**self).go_to_standby()
    }
    fn take_control(&mut self) -> Result<()> {
        (**self).take_control()
    }
    fn listener_present(&mut self, address: Address) -> Result<bool> {
        (**self).listener_present(address)
    }
    fn device_level(&self) -> bool {
        (**self).device_level()
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
    fn device_write(&mut self, device: Address, data: &[u8], eoi: bool) -> Result<usize> {
        (**self).device_write(device, data, eoi)
    }
    fn device_write_read(
        &mut self,
        device: Address,
        data: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        (**self).device_write_read(device, data, buf, eos)
    }
    fn device_read(
        &mut self,
        device: Address,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        (**self).device_read(device, buf, eos)
    }
    fn device_clear(&mut self, device: Address) -> Result<()> {
        (**self).device_clear(device)
    }
    fn device_trigger(&mut self, device: Address) -> Result<()> {
        (**self).device_trigger(device)
    }
    fn device_remote(&mut self, device: Address) -> Result<()> {
        (**self).device_remote(device)
    }
    fn device_local(&mut self, device: Address) -> Result<()> {
        (**self).device_local(device)
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
