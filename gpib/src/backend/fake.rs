//! A fake board with scripted instruments, for testing instrument code without hardware
//! (in the spirit of probe-rs's fake probe).
//!
//! An application's instrument code takes a [`Device`](crate::Device) (or a
//! [`Bus`](crate::Bus)); in its unit tests the device is on a [`FakeBoard`], where each
//! [`FakeInstrument`] answers what the test scripted: a query's answer by its exact
//! text or from a closure, a binary block, a status byte to serial-poll. The test then checks what the code sent. No simulator, no
//! feature, no thread, no I/O: this module is part of the core (pure `std`), public and
//! tested like the rest of it, so a crate that depends on `gpib` alone can use it.
//!
//! ```
//! use gpib::backend::fake::{FakeBoard, FakeInstrument};
//! use gpib::{Bus, Device};
//!
//! // The code under test: what an application would write.
//! fn set_and_check(psu: &Device, volts: f64) -> gpib::Result<bool> {
//!     psu.write_str(&format!("VOLT {volts:.3}"))?;
//!     Ok(psu.query("VOLT?")?.parse::<f64>().ok() == Some(volts))
//! }
//!
//! let psu = FakeInstrument::new()
//!     .answer("*IDN?", "ACME,PSU-30,0001,1.0")
//!     .answer("VOLT?", "12.500");
//! let bus = Bus::new(FakeBoard::new().with(5, psu.clone())?);
//! assert!(set_and_check(&bus.device(5)?, 12.5)?);
//! assert_eq!(psu.received(), ["VOLT 12.500", "VOLT?"]);
//! # Ok::<(), gpib::Error>(())
//! ```
//!
//! How it behaves, as a bus would:
//!
//! * Bytes reach an instrument through [`Backend::command`] (its listen address, UNL,
//!   secondaries, SDC, DCL, GET, GTL, SPE, SPD) and [`Backend::write`]. A message ends
//!   with END (EOI on its last byte, as [`Device::write`](crate::Device::write) and the
//!   queries send it); its trailing line feed (and carriage return) is not part of it.
//! * A message that matches an [`FakeInstrument::answer`] or [`FakeInstrument::block`]
//!   exactly, or that a [`FakeInstrument::respond`] closure answers, queues that answer;
//!   answers queue up in order. A read from the addressed talker returns the first
//!   queued answer, with END on its last byte (or up to the EOS byte, or as much as
//!   fits). A read with nothing queued fails at once with a timeout error (kind
//!   `Timeout`), as a read from an instrument with nothing to say would after the
//!   timeout: no test waits.
//! * A serial poll reads the status byte: the bits of [`FakeInstrument::set_status`],
//!   plus MAV (0x10) while an answer is queued; it clears RQS (0x40), so
//!   [`Bus::find_requester`](crate::Bus::find_requester) finds who requests service
//!   once.
//! * SDC and DCL clear an instrument's unfinished message and queued answers; GET
//!   counts a trigger; REN with the listen address puts it in remote, GTL back in local.
//! * Writing with no instrument addressed to listen is a [`Error::NoListener`]; command
//!   bytes on a board with no instrument at all are too.
//!
//! The board implements the [`Backend`] trait's required methods, `command` (the
//! addressing above), the SRQ line (asserted while an instrument's status byte has RQS,
//! so [`Bus::wait_srq`](crate::Bus::wait_srq) and
//! [`Bus::wait_for_service`](crate::Bus::wait_for_service) work) and, of
//! [`BoardControl`], the listener check ([`Bus::find_listeners`](crate::Bus::find_listeners)
//! finds the scripted instruments). Everything else is the trait's default: a serial poll
//! made of command bytes and a one-byte read, and an `Unsupported` error for parallel
//! poll, the lines, the board's status and its driver settings. Its clock is wall time
//! since it was made.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::address::{Address, PrimaryAddress};
use crate::backend::{Backend, BoardControl, Eos, ReadEnd, ReadStatus};
use crate::block::{self, BlockFormat};
use crate::error::{Error, Result};
use crate::message::InterfaceMessage;
use crate::status::{BoardStatus, BusLines, StatusByte};
use crate::timeout::Timeout;

/// A closure that may answer a message (see [`FakeInstrument::respond`]).
type Responder = Box<dyn FnMut(&str) -> Option<String> + Send>;

/// What one instrument was told to do, and what happened to it.
#[derive(Default)]
struct Script {
    /// Messages answered by their exact bytes, with the answer's bytes.
    answers: Vec<(Vec<u8>, Vec<u8>)>,
    /// Closures tried in order for the messages `answers` does not have.
    responders: Vec<Responder>,
    /// The message being received (no END yet).
    input: Vec<u8>,
    /// Answers queued, each ended by END.
    output: VecDeque<Vec<u8>>,
    /// Bytes of the first queued answer already read.
    read_at: usize,
    /// The status byte's own bits (MAV is added while `output` is not empty).
    status: u8,
    /// Every complete message received, in order.
    received: Vec<Vec<u8>>,
    clears: usize,
    triggers: usize,
    remote: bool,
}

impl Script {
    fn status_byte(&self) -> u8 {
        let mav = if self.output.is_empty() {
            0
        } else {
            StatusByte::MAV
        };
        self.status | mav
    }

    fn clear(&mut self) {
        self.input.clear();
        self.output.clear();
        self.read_at = 0;
        self.clears += 1;
    }

    /// Data bytes from the controller; `end` is END on the last one.
    fn listen(&mut self, data: &[u8], end: bool) {
        self.input.extend_from_slice(data);
        if !end {
            return;
        }
        let mut message = std::mem::take(&mut self.input);
        if message.last() == Some(&b'\n') {
            message.pop();
            if message.last() == Some(&b'\r') {
                message.pop();
            }
        }
        let answer = match self.answers.iter().find(|(q, _)| *q == message) {
            Some((_, a)) => Some(a.clone()),
            None => {
                let text = String::from_utf8_lossy(&message);
                self.responders.iter_mut().find_map(|r| r(&text)).map(line)
            }
        };
        if let Some(a) = answer {
            self.output.push_back(a);
        }
        self.received.push(message);
    }

    /// Reads the first queued answer into `buf`; `None` when nothing is queued.
    fn talk(&mut self, buf: &mut [u8], eos: Option<Eos>) -> Option<ReadStatus> {
        let front = self.output.front()?;
        let rest = &front[self.read_at..];
        let mut count = rest.len().min(buf.len());
        let mut end = if count == rest.len() {
            ReadEnd::Eoi
        } else {
            ReadEnd::BufferFull
        };
        if let Some(i) = eos.and_then(|e| e.find(&rest[..count])) {
            if i + 1 < rest.len() {
                end = ReadEnd::Eos;
            }
            count = i + 1;
        }
        buf[..count].copy_from_slice(&rest[..count]);
        self.read_at += count;
        if self.read_at == front.len() {
            self.output.pop_front();
            self.read_at = 0;
        }
        Some(ReadStatus { count, end })
    }
}

/// `text` with the line feed an instrument ends its answers with.
fn line(text: impl Into<String>) -> Vec<u8> {
    let mut v = text.into().into_bytes();
    v.push(b'\n');
    v
}

/// An instrument on a [`FakeBoard`], answering what it is scripted to.
///
/// Clones share one instrument: keep a clone to change its status byte and to check
/// what it received after the board went into a [`Bus`](crate::Bus).
#[derive(Clone, Default)]
pub struct FakeInstrument {
    script: Arc<Mutex<Script>>,
}

impl fmt::Debug for FakeInstrument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.lock();
        f.debug_struct("FakeInstrument")
            .field("answers", &s.answers.len())
            .field("responders", &s.responders.len())
            .field("queued", &s.output.len())
            .field("status", &StatusByte(s.status_byte()))
            .finish()
    }
}

impl FakeInstrument {
    /// An instrument that answers nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Script> {
        // A test that panicked while holding it leaves the script usable.
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answers the message `query` (its exact text, without the terminator) with
    /// `answer` and a line feed.
    pub fn answer(self, query: &str, answer: &str) -> Self {
        self.lock()
            .answers
            .push((query.as_bytes().to_vec(), line(answer)));
        self
    }

    /// Answers the message `query` with `data` as an IEEE 488.2 definite-length block
    /// (`#<n><len><data>`) and a line feed.
    ///
    /// # Panics
    ///
    /// When `data` is longer than a definite-length block can say (999,999,999 bytes).
    pub fn block(self, query: &str, data: &[u8]) -> Self {
        let mut answer = Vec::with_capacity(data.len() + 12);
        block::encode(BlockFormat::Definite, data, &mut answer)
            .expect("a definite-length block of this size");
        answer.push(b'\n');
        self.lock()
            .answers
            .push((query.as_bytes().to_vec(), answer));
        self
    }

    /// Calls `f` with every message no [`FakeInstrument::answer`] or
    /// [`FakeInstrument::block`] matches (as text; bytes that are not UTF-8 become
    /// U+FFFD), in the order the closures were added, until one returns an answer
    /// (queued with a line feed). A closure can keep state: a setting a command sets
    /// and a query reads back.
    ///
    /// ```
    /// use gpib::backend::fake::{FakeBoard, FakeInstrument};
    /// let mut volts = 0.0;
    /// let psu = FakeInstrument::new().respond(move |m| {
    ///     if let Some(v) = m.strip_prefix("VOLT ") {
    ///         volts = v.parse().ok()?;
    ///     }
    ///     (m == "VOLT?").then(|| format!("{volts:.3}"))
    /// });
    /// let psu = gpib::Bus::new(FakeBoard::new().with(5, psu)?).device(5)?;
    /// psu.write_str("VOLT 3.3")?;
    /// assert_eq!(psu.query("VOLT?")?, "3.300");
    /// # Ok::<(), gpib::Error>(())
    /// ```
    pub fn respond(self, f: impl FnMut(&str) -> Option<String> + Send + 'static) -> Self {
        self.lock().responders.push(Box::new(f));
        self
    }

    /// Queues `answer` and a line feed as if a query had asked for it (output the
    /// instrument has on its own, such as a reading it took when triggered).
    pub fn queue(&self, answer: &str) {
        self.lock().output.push_back(line(answer));
    }

    /// Sets the status byte a serial poll reads (MAV is added while an answer is
    /// queued). With RQS (0x40) set, the instrument requests service until a serial
    /// poll reads it.
    pub fn set_status(&self, status: StatusByte) {
        self.lock().status = status.bits();
    }

    /// The status byte a serial poll would read now.
    pub fn status(&self) -> StatusByte {
        StatusByte(self.lock().status_byte())
    }

    /// The messages received so far, as text, without their terminators.
    pub fn received(&self) -> Vec<String> {
        self.lock()
            .received
            .iter()
            .map(|m| String::from_utf8_lossy(m).into_owned())
            .collect()
    }

    /// The messages received so far, as bytes (for binary data).
    pub fn received_bytes(&self) -> Vec<Vec<u8>> {
        self.lock().received.clone()
    }

    /// How many device clears (SDC or DCL) it got.
    pub fn clears(&self) -> usize {
        self.lock().clears
    }

    /// How many triggers (GET) it got.
    pub fn triggers(&self) -> usize {
        self.lock().triggers
    }

    /// Whether it is in remote (REN asserted and addressed to listen, no GTL since).
    pub fn is_remote(&self) -> bool {
        self.lock().remote
    }
}

/// The last talk or listen address, which a secondary address that follows extends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    Other,
    Talk(PrimaryAddress),
    Listen(PrimaryAddress),
}

/// A board, as system controller, with [`FakeInstrument`]s at addresses: a
/// [`Backend`] for unit tests (see the [module](self)).
pub struct FakeBoard {
    address: PrimaryAddress,
    instruments: Vec<(Address, FakeInstrument)>,
    talker: Option<Address>,
    listeners: Vec<Address>,
    last: Last,
    serial_poll: bool,
    remote_enable: bool,
    timeout: Timeout,
    opened: Instant,
}

impl fmt::Debug for FakeBoard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at: Vec<String> = self
            .instruments
            .iter()
            .map(|(a, _)| a.to_string())
            .collect();
        f.debug_struct("FakeBoard")
            .field("address", &self.address.get())
            .field("instruments", &at)
            .finish()
    }
}

impl Default for FakeBoard {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeBoard {
    /// A board at address 0 with no instrument, and a 1 s timeout.
    pub fn new() -> Self {
        Self {
            address: PrimaryAddress::new_const(0),
            instruments: Vec::new(),
            talker: None,
            listeners: Vec::new(),
            last: Last::Other,
            serial_poll: false,
            remote_enable: false,
            timeout: Timeout::After(Duration::from_secs(1)),
            opened: Instant::now(),
        }
    }

    /// The board with `instrument` at `address` (a number, a
    /// [`PrimaryAddress`] or an [`Address`] with a secondary part), in place of any
    /// there before.
    ///
    /// Errors: an invalid address, or the board's own.
    pub fn with<A>(mut self, address: A, instrument: FakeInstrument) -> Result<Self>
    where
        A: TryInto<Address>,
        Error: From<A::Error>,
    {
        let address = address.try_into()?;
        if address.primary == self.address {
            return Err(Error::InvalidArgument(format!(
                "address {address} is the fake board's own"
            )));
        }
        self.instruments.retain(|(a, _)| *a != address);
        self.instruments.push((address, instrument));
        Ok(self)
    }

    fn at(&self, address: Address) -> Option<&FakeInstrument> {
        self.instruments
            .iter()
            .find_map(|(a, i)| (*a == address).then_some(i))
    }

    fn each_listener(&self, mut f: impl FnMut(&mut Script)) -> usize {
        let mut n = 0;
        for &a in &self.listeners {
            if let Some(i) = self.at(a) {
                f(&mut i.lock());
                n += 1;
            }
        }
        n
    }

    fn decode(&mut self, byte: u8) {
        use InterfaceMessage as M;
        let m = M::decode(byte);
        match m {
            M::Talk(p) => {
                // A new talk address unaddresses the talker before; the board's own
                // makes the board the talker.
                self.talker = (p != self.address).then_some(Address::primary(p));
            }
            M::Untalk => self.talker = None,
            // The board's own listen address: the board listens, nobody else.
            M::Listen(p) if p != self.address => {
                self.listeners.push(Address::primary(p));
                if self.remote_enable {
                    if let Some(i) = self.at(Address::primary(p)) {
                        i.lock().remote = true;
                    }
                }
            }
            M::Unlisten => self.listeners.clear(),
            M::Secondary(s) => match self.last {
                Last::Talk(p) if p != self.address => {
                    self.talker = Some(Address {
                        primary: p,
                        secondary: Some(s),
                    });
                }
                Last::Listen(p) if p != self.address => {
                    if let Some(l) = self.listeners.iter_mut().rev().find(|a| a.primary == p) {
                        l.secondary = Some(s);
                    }
                    if self.remote_enable {
                        if let Some(i) = self.at(Address {
                            primary: p,
                            secondary: Some(s),
                        }) {
                            i.lock().remote = true;
                        }
                    }
                }
                _ => {}
            },
            M::SerialPollEnable => self.serial_poll = true,
            M::SerialPollDisable => self.serial_poll = false,
            M::SelectedDeviceClear => {
                self.each_listener(Script::clear);
            }
            M::DeviceClear => {
                for (_, i) in &self.instruments {
                    i.lock().clear();
                }
            }
            M::GroupExecuteTrigger => {
                self.each_listener(|s| s.triggers += 1);
            }
            M::GoToLocal => {
                self.each_listener(|s| s.remote = false);
            }
            _ => {}
        }
        self.last = match m {
            M::Talk(p) => Last::Talk(p),
            M::Listen(p) => Last::Listen(p),
            _ => Last::Other,
        };
    }
}

impl Backend for FakeBoard {
    fn name(&self) -> &str {
        "fake"
    }

    fn board_address(&self) -> PrimaryAddress {
        self.address
    }

    fn command(&mut self, bytes: &[u8]) -> Result<()> {
        if self.instruments.is_empty() {
            return Err(Error::NoListener { transferred: 0 });
        }
        for &b in bytes {
            self.decode(b);
        }
        Ok(())
    }

    fn write(&mut self, data: &[u8], eoi: bool) -> Result<usize> {
        if self.each_listener(|s| s.listen(data, eoi)) == 0 {
            return Err(Error::NoListener { transferred: 0 });
        }
        Ok(data.len())
    }

    fn read(&mut self, buf: &mut [u8], eos: Option<Eos>) -> Result<ReadStatus> {
        let nothing = Error::Timeout {
            operation: "read",
            timeout: self.timeout,
            transferred: 0,
        };
        let Some(talker) = self.talker.and_then(|a| self.at(a)) else {
            return Err(nothing);
        };
        let mut s = talker.lock();
        if self.serial_poll {
            let Some(first) = buf.first_mut() else {
                return Ok(ReadStatus {
                    count: 0,
                    end: ReadEnd::BufferFull,
                });
            };
            *first = s.status_byte();
            s.status &= !StatusByte::RQS;
            return Ok(ReadStatus {
                count: 1,
                end: ReadEnd::Eoi,
            });
        }
        s.talk(buf, eos).ok_or(nothing)
    }

    fn interface_clear(&mut self) -> Result<()> {
        self.talker = None;
        self.listeners.clear();
        self.last = Last::Other;
        self.serial_poll = false;
        Ok(())
    }

    fn remote_enable(&mut self, on: bool) -> Result<()> {
        self.remote_enable = on;
        if !on {
            for (_, i) in &self.instruments {
                i.lock().remote = false;
            }
        }
        Ok(())
    }

    fn set_timeout(&mut self, timeout: Timeout) -> Result<Timeout> {
        self.timeout = timeout;
        Ok(timeout)
    }

    fn timeout(&self) -> Timeout {
        self.timeout
    }

    fn now(&self) -> Duration {
        self.opened.elapsed()
    }

    /// Asserted while any instrument's status byte has RQS set
    /// ([`FakeInstrument::set_status`]).
    fn srq(&mut self) -> Result<bool> {
        Ok(self.instruments.iter().any(|(_, i)| i.status().rqs()))
    }

    fn board_control(&mut self) -> Option<&mut dyn BoardControl> {
        Some(self)
    }
}

/// The listener check (an instrument is scripted at the address); the fake has no bus
/// lines, ATN or parallel poll to show.
impl BoardControl for FakeBoard {
    fn parallel_poll(&mut self) -> Result<u8> {
        Err(Error::unsupported("parallel poll", "fake"))
    }

    fn lines(&mut self) -> Result<BusLines> {
        Err(Error::unsupported("reading the bus lines", "fake"))
    }

    fn board_status(&mut self) -> Result<BoardStatus> {
        Err(Error::unsupported("reading the board's status", "fake"))
    }

    fn go_to_standby(&mut self) -> Result<()> {
        Err(Error::unsupported("going to standby", "fake"))
    }

    fn take_control(&mut self) -> Result<()> {
        Err(Error::unsupported("taking control", "fake"))
    }

    fn listener_present(&mut self, address: Address) -> Result<bool> {
        Ok(self.at(address).is_some())
    }
}

#[cfg(test)]
mod tests;
