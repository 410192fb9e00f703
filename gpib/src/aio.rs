//! Async device handles for tokio (feature `tokio`): many instruments driven from one
//! runtime, no runtime thread ever blocked by the bus.
//!
//! An [`AsyncDevice`] wraps a [`Device`]. Each call moves its arguments (owned:
//! `String`, `Vec<u8>`) to tokio's blocking pool, runs the [`Device`] call there and
//! resolves with its result, so a slow instrument or a read waiting for its timeout
//! occupies a blocking-pool thread, never a thread that runs tasks.
//!
//! # The contract
//!
//! * **One call at a time per device.** Calls on an `AsyncDevice` and its clones take
//!   the device's turn, one after another, in the order they start waiting for it
//!   (their first poll). A query's write and read are one call, so no other task's
//!   bytes come between them. (Two [`AsyncDevice::new`] on handles to the same
//!   instrument make two turns: their transactions still never interleave, as the bus
//!   locks each one, but a dropped call's clear could come between the other's
//!   calls; make one `AsyncDevice` per instrument and clone it.) Calls on different
//!   devices run at the same time, each on its own blocking-pool thread; devices on
//!   one board take turns on the bus as threads do.
//! * **A dropped future never leaves a half-done transaction.** Dropping a call's
//!   future (a `select!` branch that lost, `tokio::time::timeout`, an aborted task)
//!   does not stop the bus: the call already handed to the blocking pool runs to its
//!   end, holding the device's turn, so the next call on the device waits for it and
//!   starts on a bus and a device with nothing half-sent or half-read. What the
//!   dropped call read (a query's answer) is thrown away with it: the next caller
//!   gets its own answer, never a stale one. A dropped call that **failed** (it timed
//!   out with part of an answer unread, a block did not fit), or a dropped
//!   [`AsyncDevice::read`] or [`AsyncDevice::query_into`] that stopped with its buffer
//!   full (the rest of the message unread), is followed by a device clear (SDC,
//!   [`Device::clear`]) before the turn passes on, as nobody is left to see the error
//!   or read on. A future dropped while it waits for its turn has done nothing and
//!   leaves nothing behind.
//! * **Timeouts come from the device.** Each call is bounded by the device's own
//!   timeout ([`AsyncDevice::set_timeout`], the resource manager's settings, a
//!   gpib.conf section), exactly as the blocking call is, and resolves with
//!   [`Error::Timeout`] when it passes. `tokio::time::timeout` around a call bounds
//!   how long the caller waits (its time includes the wait for the device's turn);
//!   when it fires, the call goes on as a dropped future does, and the device stays
//!   busy until it ends, which the device's own timeout bounds. So keep a timeout on
//!   every device: with none ([`crate::Timeout::Never`]), a dropped call to a silent
//!   instrument holds its device for ever.
//! * **Buffers are owned.** Calls that read into a caller's buffer take a `Vec<u8>`
//!   and give it back with the result ([`BufResult`]), as tokio-uring does; the
//!   others return new `Vec`s and `String`s.
//!
//! Anything the methods do not cover (a write and a read made apart, a custom
//! exchange of several transactions) goes in one [`AsyncDevice::with_device`]
//! closure: it runs on the blocking pool in the device's turn, under the same
//! contract. [`AsyncDevice::wait_srq`] waits on the blocking pool without the turn, so
//! the device's other calls go on while a task waits for its service request.
//!
//! The runtime needs nothing but its blocking pool: a current-thread runtime serves
//! as well as a multi-thread one. When the runtime shuts down it waits for calls in
//! progress on its blocking pool ([`tokio::runtime::Runtime::shutdown_timeout`] does
//! not).
//!
//! ```
//! # #[cfg(feature = "sim")]
//! # fn main() -> Result<(), gpib::Error> {
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! use std::time::Duration;
//! use gpib::aio::AsyncDevice;
//!
//! let mut rm = gpib::ResourceManager::simulated("bench")?;
//! let dmm = AsyncDevice::new(rm.open("GPIB0::22::INSTR")?);
//! let hp = AsyncDevice::new(rm.open("GPIB0::11::INSTR")?);
//!
//! // Two instruments at once; each call runs on the blocking pool.
//! let (idn, block) = tokio::join!(dmm.query("*IDN?"), hp.query("NEW 16;NEW?"));
//! assert_eq!(idn?, "SIMULATED,SCPI-DMM,0,1.0");
//! assert!(block?.parse::<u32>().is_ok());
//!
//! // A caller that gives up early: the query still ends on the bus, and the
//! // next call gets its own answer.
//! let _ = tokio::time::timeout(Duration::ZERO, dmm.query("WAV:POIN 7;WAV:POIN?")).await;
//! assert_eq!(dmm.query("WAV:POIN 8;WAV:POIN?").await?, "8");
//!
//! // Clones share the device's turn: hand one to each task.
//! let task = tokio::spawn({
//!     let dmm = dmm.clone();
//!     async move { dmm.query("MEAS:VOLT?").await }
//! });
//! let volts: f64 = task.await.unwrap()?.parse().unwrap();
//! assert!(volts > 0.0);
//! # Ok::<(), gpib::Error>(())
//! # })
//! # }
//! # #[cfg(not(feature = "sim"))]
//! # fn main() {}
//! ```

use std::sync::Arc;

use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::address::Address;
use crate::backend::{Eos, ReadStatus};
use crate::block::{BlockFormat, BlockValue, Endian};
use crate::device::{BlockInfo, Device};
use crate::error::{Error, Result};
use crate::settings::DeviceSettings;
use crate::status::StatusByte;

/// The result of a call that reads into the caller's buffer, and the buffer.
///
/// The buffer comes back whatever the result; its length is what it was given
/// (the result says how many bytes were read into it). When the call could not run
/// at all (the runtime was shutting down) it comes back empty.
pub type BufResult<T> = (Result<T>, Vec<u8>);

/// Opens `resource` as [`crate::open`] does, on the blocking pool (opening a network
/// resource connects to it), and wraps the device.
///
/// A device on a board a [`crate::ResourceManager`] has attached (a simulated host's,
/// a Prologix adapter's) opens without waiting: `AsyncDevice::new(rm.open(name)?)`.
pub async fn open(resource: &str) -> Result<AsyncDevice> {
    let resource = resource.to_owned();
    let opened = tokio::task::spawn_blocking(move || crate::open(&resource)).await;
    match opened {
        Ok(device) => device.map(AsyncDevice::new),
        Err(e) => Err(not_run(e)),
    }
}

/// A [`Device`] for async code: its calls run on tokio's blocking pool, one at a time
/// per device, and a dropped call leaves the device ready for the next (see the
/// [module](crate::aio) for the contract).
///
/// Clones share the device's turn; each clone has its own settings (timeout, EOS,
/// write terminator, longest read), as clones of a [`Device`] do.
#[derive(Debug, Clone)]
pub struct AsyncDevice {
    device: Held,
    /// The device's turn: held from before a call is handed to the blocking pool
    /// until its result is delivered (or, for a dropped call, until it has ended).
    turn: Arc<Mutex<()>>,
}

impl From<Device> for AsyncDevice {
    fn from(device: Device) -> Self {
        Self::new(device)
    }
}

impl AsyncDevice {
    /// Wraps `device`, with its settings.
    pub fn new(device: Device) -> Self {
        Self {
            device: Held(Some(device)),
            turn: Arc::new(Mutex::new(())),
        }
    }

    /// The device's address.
    pub fn address(&self) -> Address {
        self.device.address()
    }

    /// The blocking handle this one wraps, with this handle's settings.
    ///
    /// Calls made on it (or on a clone of it) do not take this device's turn: use it
    /// from blocking code, or from [`AsyncDevice::with_device`].
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Sets this handle's I/O timeout, which bounds each of its calls (`None`: the bus
    /// default; [`crate::Timeout::Never`]: no timeout); see [`Device::set_timeout`].
    pub fn set_timeout(&mut self, timeout: Option<crate::Timeout>) {
        self.device.get_mut().set_timeout(timeout);
    }

    /// Sets the EOS byte that ends reads besides END; see [`Device::set_eos`].
    pub fn set_eos(&mut self, eos: Option<Eos>) {
        self.device.get_mut().set_eos(eos);
    }

    /// Sets the byte [`AsyncDevice::write_str`] and the queries append; see
    /// [`Device::set_write_terminator`].
    pub fn set_write_terminator(&mut self, terminator: Option<u8>) {
        self.device.get_mut().set_write_terminator(terminator);
    }

    /// Sets the longest response the whole-message reads take; see
    /// [`Device::set_max_read`].
    pub fn set_max_read(&mut self, max: usize) {
        self.device.get_mut().set_max_read(max);
    }

    /// The longest response the whole-message reads take.
    pub fn max_read(&self) -> usize {
        self.device.max_read()
    }

    /// Applies `settings`; see [`Device::apply`].
    pub fn apply(&mut self, settings: &DeviceSettings) {
        self.device.get_mut().apply(settings);
    }

    /// Runs `f` with the device on the blocking pool, in the device's turn: for
    /// several transactions no other task's call may come between (a write and a read
    /// made apart), or a [`Device`] call this type does not wrap.
    ///
    /// The [module](crate::aio)'s contract holds: when the future is dropped, `f` runs
    /// to its end, and the device is cleared after it when it returned an error. A
    /// panic in `f` is resumed in the caller.
    ///
    /// ```
    /// # #[cfg(feature = "sim")]
    /// # fn main() -> Result<(), gpib::Error> {
    /// # tokio::runtime::Runtime::new()?.block_on(async {
    /// let mut rm = gpib::ResourceManager::simulated("bench")?;
    /// let dmm = gpib::aio::AsyncDevice::new(rm.open("GPIB0::22::INSTR")?);
    /// let points = dmm
    ///     .with_device(|d| {
    ///         d.write_str("WAV:POIN 12")?;
    ///         d.write_str("WAV:POIN?")?;
    ///         d.read_string()
    ///     })
    ///     .await?;
    /// assert_eq!(points, "12");
    /// # Ok::<(), gpib::Error>(())
    /// # })
    /// # }
    /// # #[cfg(not(feature = "sim"))]
    /// # fn main() {}
    /// ```
    pub async fn with_device<T, F>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&Device) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        self.in_turn(f).await
    }

    /// The one way a call runs: in the device's turn, on the blocking pool.
    async fn in_turn<R, F>(&self, f: F) -> R
    where
        R: Completion,
        F: FnOnce(&Device) -> R + Send + 'static,
    {
        // Waiting for the turn is cancel-safe: a future dropped here has done nothing.
        let turn = Arc::clone(&self.turn).lock_owned().await;
        let device = Device::clone(&self.device);
        let task = tokio::task::spawn_blocking(move || {
            let result = f(&device);
            // From here the outcome holds the turn: it passes on when the caller takes
            // the result, or, when the caller is gone, after a failed call's clear.
            Outcome {
                result: Some(result),
                device,
                turn: Some(turn),
            }
        });
        match task.await {
            Ok(outcome) => outcome.deliver(),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => R::not_run(not_run(e)),
        }
    }

    /// Sends `data` exactly as given, with EOI on the last byte ([`Device::write`]).
    pub async fn write(&self, data: impl Into<Vec<u8>>) -> Result<()> {
        let data = data.into();
        self.in_turn(move |d| d.write(&data)).await
    }

    /// Sends `text` and the write terminator, with EOI ([`Device::write_str`]).
    pub async fn write_str(&self, text: impl Into<String>) -> Result<()> {
        let text = text.into();
        self.in_turn(move |d| d.write_str(&text)).await
    }

    /// Reads into `buf` until END, EOS (if set), or `buf` is full ([`Device::read`]).
    pub async fn read(&self, mut buf: Vec<u8>) -> BufResult<ReadStatus> {
        self.in_turn(move |d| (d.read(&mut buf), buf)).await
    }

    /// Reads a whole message ([`Device::read_to_end`]).
    pub async fn read_to_end(&self) -> Result<Vec<u8>> {
        self.in_turn(Device::read_to_end).await
    }

    /// Reads a whole message as text, without the trailing NL ([`Device::read_string`]).
    pub async fn read_string(&self) -> Result<String> {
        self.in_turn(Device::read_string).await
    }

    /// Sends `command` and reads the answer as text, in one transaction
    /// ([`Device::query`]).
    pub async fn query(&self, command: impl Into<String>) -> Result<String> {
        let command = command.into();
        self.in_turn(move |d| d.query(&command)).await
    }

    /// Sends `command` and reads the answer into `buf` ([`Device::query_into`]).
    pub async fn query_into(
        &self,
        command: impl Into<Vec<u8>>,
        mut buf: Vec<u8>,
    ) -> BufResult<ReadStatus> {
        let command = command.into();
        self.in_turn(move |d| (d.query_into(&command, &mut buf), buf))
            .await
    }

    /// Reads one arbitrary block into a new `Vec` ([`Device::read_block`]).
    pub async fn read_block(&self) -> Result<Vec<u8>> {
        self.in_turn(Device::read_block).await
    }

    /// Reads one arbitrary block into `buf` ([`Device::read_block_into`]).
    pub async fn read_block_into(&self, mut buf: Vec<u8>) -> BufResult<BlockInfo> {
        self.in_turn(move |d| (d.read_block_into(&mut buf), buf))
            .await
    }

    /// Sends `command` and reads the block it answers, in one transaction
    /// ([`Device::query_block`]).
    pub async fn query_block(&self, command: impl Into<String>) -> Result<Vec<u8>> {
        let command = command.into();
        self.in_turn(move |d| d.query_block(&command)).await
    }

    /// Sends `command` and reads the block it answers into `buf`
    /// ([`Device::query_block_into`]).
    pub async fn query_block_into(
        &self,
        command: impl Into<String>,
        mut buf: Vec<u8>,
    ) -> BufResult<BlockInfo> {
        let command = command.into();
        self.in_turn(move |d| (d.query_block_into(&command, &mut buf), buf))
            .await
    }

    /// Sends `command`, reads the block it answers and decodes it as values of `T`
    /// ([`Device::query_values`]).
    pub async fn query_values<T>(
        &self,
        command: impl Into<String>,
        endian: Endian,
    ) -> Result<Vec<T>>
    where
        T: BlockValue + Send + 'static,
    {
        let command = command.into();
        self.in_turn(move |d| d.query_values(&command, endian))
            .await
    }

    /// Sends `prefix` then `data` as a block of `format`, in one transaction
    /// ([`Device::write_block`]).
    pub async fn write_block(
        &self,
        prefix: impl Into<Vec<u8>>,
        format: BlockFormat,
        data: impl Into<Vec<u8>>,
    ) -> Result<()> {
        let (prefix, data) = (prefix.into(), data.into());
        self.in_turn(move |d| d.write_block(&prefix, format, &data))
            .await
    }

    /// SDC: clears the device ([`Device::clear`]).
    pub async fn clear(&self) -> Result<()> {
        self.in_turn(Device::clear).await
    }

    /// GET: triggers the device ([`Device::trigger`]).
    pub async fn trigger(&self) -> Result<()> {
        self.in_turn(Device::trigger).await
    }

    /// GTL: returns the device to local control ([`Device::go_to_local`]).
    pub async fn go_to_local(&self) -> Result<()> {
        self.in_turn(Device::go_to_local).await
    }

    /// Puts the device in remote ([`Device::remote`]).
    pub async fn remote(&self) -> Result<()> {
        self.in_turn(Device::remote).await
    }

    /// Serial-polls the device ([`Device::serial_poll`]).
    pub async fn serial_poll(&self) -> Result<StatusByte> {
        self.in_turn(Device::serial_poll).await
    }

    /// True when a device listens at this address ([`Device::is_present`]).
    pub async fn is_present(&self) -> Result<bool> {
        self.in_turn(Device::is_present).await
    }

    /// Waits up to `timeout` for SRQ on the device's bus; returns whether it came
    /// ([`crate::Bus::wait_srq`]: SRQ is the bus's, any device may have asserted it).
    ///
    /// The wait runs on the blocking pool without the device's turn, so this device's
    /// other calls (a serial poll, the measurement that will request service) go on
    /// meanwhile. A dropped wait goes on until SRQ or `timeout`, taking nothing but
    /// its blocking-pool thread (with [`crate::Timeout::Never`], until SRQ).
    pub async fn wait_srq(&self, timeout: crate::Timeout) -> Result<bool> {
        let bus = self.device.bus().clone();
        match tokio::task::spawn_blocking(move || bus.wait_srq(timeout)).await {
            Ok(r) => r,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => Err(not_run(e)),
        }
    }
}

/// A call's result on its way back from the blocking pool, holding the device's turn.
struct Outcome<R: Completion> {
    /// `None` once delivered.
    result: Option<R>,
    device: Device,
    turn: Option<OwnedMutexGuard<()>>,
}

impl<R: Completion> Outcome<R> {
    /// The result, for the caller; the turn passes on.
    fn deliver(mut self) -> R {
        self.turn = None;
        match self.result.take() {
            Some(r) => r,
            None => unreachable!("an outcome is delivered once"),
        }
    }
}

impl<R: Completion> Drop for Outcome<R> {
    /// Dropped undelivered: the caller's future was dropped (this runs on the
    /// blocking-pool thread that ran the call, or where the future was dropped after
    /// the call ended). A call that failed, or left a message part read, leaves the
    /// device in a state nobody will see: clear it before the turn passes on.
    fn drop(&mut self) {
        let (Some(result), Some(turn)) = (self.result.take(), self.turn.take()) else {
            return;
        };
        if !result.leaves_device_mid_message() {
            log::debug!(
                "{}: a dropped call ended; its result is discarded",
                self.device.address()
            );
            return;
        }
        let device = self.device.clone();
        let clear = move || {
            let address = device.address();
            match device.clear() {
                Ok(()) => log::debug!("{address}: cleared after a dropped call"),
                Err(e) => log::warn!("{address}: clearing after a dropped call: {e}"),
            }
            drop(turn);
        };
        match tokio::runtime::Handle::try_current() {
            // Never on a runtime thread: on the blocking pool, the turn moved with it.
            Ok(rt) => drop(rt.spawn_blocking(clear)),
            // Outside any runtime, so on no runtime thread either.
            Err(_) => clear(),
        }
    }
}

/// What a call's closure returns: whether the device may be left mid-message (a
/// dropped call that may is followed by a device clear), and its value when the call
/// could not run at all.
trait Completion: Send + 'static {
    /// The call failed, or stopped before the end of a message it read.
    fn leaves_device_mid_message(&self) -> bool;
    fn not_run(e: Error) -> Self;
}

impl<T: Send + 'static> Completion for Result<T> {
    fn leaves_device_mid_message(&self) -> bool {
        self.is_err()
    }
    fn not_run(e: Error) -> Self {
        Err(e)
    }
}

/// A read into the caller's buffer: the buffer may fill before the message ends.
impl Completion for BufResult<ReadStatus> {
    fn leaves_device_mid_message(&self) -> bool {
        self.0.as_ref().map_or(true, |st| !st.is_end())
    }
    fn not_run(e: Error) -> Self {
        (Err(e), Vec::new())
    }
}

impl Completion for BufResult<BlockInfo> {
    fn leaves_device_mid_message(&self) -> bool {
        self.0.is_err()
    }
    fn not_run(e: Error) -> Self {
        (Err(e), Vec::new())
    }
}

/// The error of a call the blocking pool did not run (the runtime shuts down).
fn not_run(e: tokio::task::JoinError) -> Error {
    Error::Io(std::io::Error::new(
        std::io::ErrorKind::Interrupted,
        format!("the call did not run: the tokio runtime is shutting down ({e})"),
    ))
}

/// The device handle, given to the blocking pool when the handle is dropped: closing
/// the last handle of a network device closes its link, which is a round trip.
#[derive(Debug, Clone)]
struct Held(Option<Device>);

impl Held {
    fn get_mut(&mut self) -> &mut Device {
        match &mut self.0 {
            Some(d) => d,
            None => unreachable!("the device is taken only when the handle is dropped"),
        }
    }
}

impl std::ops::Deref for Held {
    type Target = Device;
    fn deref(&self) -> &Device {
        match &self.0 {
            Some(d) => d,
            None => unreachable!("the device is taken only when the handle is dropped"),
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let (Some(device), Ok(rt)) = (self.0.take(), tokio::runtime::Handle::try_current()) {
            drop(rt.spawn_blocking(move || drop(device)));
        }
    }
}
