//! The linux-gpib hardware backend (feature `linux-gpib`): one interface board of a
//! [linux-gpib](https://linux-gpib.sourceforge.io) installation, driven through the
//! low-level ("traditional" and IEEE 488.2) calls of its C library, `libgpib`, through
//! the linux-gpib-rs crate (its `lowlevel` module; see `calls.rs` for what is recovered
//! where its wrappers drop a figure).
//!
//! ```no_run
//! use gpib::{Bus, LinuxGpibBoard};
//! // Board index 0 (/dev/gpib0), or a board name from /etc/gpib.conf.
//! let bus = Bus::new(LinuxGpibBoard::open_index(0)?);
//! let dmm = bus.device(22)?;
//! println!("{}", dmm.query("*IDN?")?);
//! # Ok::<(), gpib::Error>(())
//! ```
//!
//! What it does on the wire, call by call:
//!
//! | [`Backend`] method | linux-gpib call(s) |
//! |---|---|
//! | `command` | `ibcmd` on the board descriptor |
//! | `write(data, eoi)` | `ibeot(eoi)`, then one `ibwrt` |
//! | `read(buf, eos)` | `ibeos` (REOS with the byte, or off, as `eos` says), then one `ibrd` of the whole buffer |
//! | `interface_clear` / `remote_enable` | `ibsic` / `ibsre` |
//! | `set_timeout` | `ibtmo` with the shortest of linux-gpib's 17 steps not shorter than asked |
//! | `serial_poll` | `ReadStatusByte` |
//! | `srq` | `TestSRQ` (`wait_srq` polls it once per millisecond) |
//! | `parallel_poll` / `lines` / `listener_present` | `ibrpp` / `iblines` / `ibln` |
//! | `tuning` ([`crate::backend::tuning::BoardTuning`]) | `ibconfig`/`ibask` of `IbcTIMING`, `IbcAUTOPOLL` on the board descriptor, `IbcUnAddr` on the device descriptors |
//!
//! No setting is inherited from the descriptor or gpib.conf (EOS, EOI on writes, the
//! timeout): every setting a call depends on is set explicitly. Errors keep
//! linux-gpib's own figures (the call, `iberr`, `ibsta`, `ibcntl`) as their
//! [`std::error::Error::source`], a [`LibgpibError`]; see [`kind_for_iberr`] for the
//! mapping.
//!
//! Building: with linux-gpib installed (`gpib/ib.h` under `/usr/include` or
//! `/usr/local/include`, `libgpib.so` under `/usr/lib` or `/usr/local/lib`),
//! linux-gpib-sys generates its bindings with bindgen (libclang) and links libgpib
//! itself. Without it (CI, docs), set `NO_LOCAL_LIB=1`: linux-gpib-sys then uses its
//! shipped bindings and links nothing, so the program adds
//! `RUSTFLAGS="-L native=DIR -l dylib=gpib"` (see the README).
//!
//! One user per descriptor: a board is opened once per process (a second
//! [`LinuxGpibBoard::open_index`] of the same board fails until the first is dropped), every
//! call takes `&mut self`, and [`crate::Bus`] shares the board between threads behind
//! its lock. [`crate::open`] opens each board once for every device named on it (the
//! process's [`crate::ResourceManager::global`]), and releases it with its last device. libgpib aborts the process when one descriptor is used from two threads
//! at once; this type cannot do that.

use std::os::raw::c_int;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::abi;
use crate::address::{Address, PrimaryAddress};
use crate::backend::{
    Backend, BoardControl, DeviceLevel, Eos, ReadEnd, ReadStatus, WriteReadError,
};
use crate::error::{Error, ErrorKind, Result};
use crate::gpibconf::{Entry, GpibConf};
use crate::message::addressing;
use crate::status::{BusLines, StatusByte};

mod calls;
pub(crate) mod connector;
mod status;
mod sys;
mod tuning;

pub use status::{LibgpibError, StatusWord};

/// The backend's name in messages.
const NAME: &str = "linux-gpib";

use crate::Timeout;

pub use crate::abi::{kind_for_iberr, Call, IBERR_NAMES};

/// Board indices (or, when the index is unknown, descriptors) in use in this process.
static IN_USE: Mutex<Vec<c_int>> = Mutex::new(Vec::new());

fn claim(key: c_int) -> bool {
    let mut v = IN_USE.lock().unwrap_or_else(|p| p.into_inner());
    if v.contains(&key) {
        false
    } else {
        v.push(key);
        true
    }
}

fn release(key: c_int) {
    let mut v = IN_USE.lock().unwrap_or_else(|p| p.into_inner());
    v.retain(|&k| k != key);
}

/// One linux-gpib interface board as system controller, usable wherever a
/// [`Backend`] is (see the [module docs](self)).
pub struct LinuxGpibBoard {
    /// The board descriptor.
    ud: c_int,
    /// The key held in the in-use registry (the board index when known).
    key: c_int,
    /// Opened by `ibfind` (closed with `ibonl(ud, 0)` on drop) rather than by index.
    owned: bool,
    label: String,
    address: PrimaryAddress,
    /// The timeout applied to the descriptor (a linux-gpib step).
    timeout: Timeout,
    opened: Instant,
    /// What was last applied to the board descriptor.
    applied: Applied,
    /// Device descriptors (`ibdev`), one per device address used: each transfer is one
    /// `ibwrt`/`ibrd` on it, libgpib addressing the bus in the same call. A few
    /// entries, found by a scan (cheaper than hashing the address on every transfer).
    devices: Vec<DeviceDescriptor>,
    /// `IbcUnAddr` on the device descriptors ([`crate::backend::tuning::BoardTuning`]).
    unaddress: bool,
}

/// The `ibdev` descriptor of one device address and what was applied to it.
struct DeviceDescriptor {
    address: Address,
    ud: c_int,
    applied: Applied,
}

/// Settings last applied to one descriptor (`None`: not known yet). Transfers pass
/// theirs every time; libgpib is called only when one changes.
#[derive(Debug, Clone, Copy, Default)]
struct Applied {
    /// The EOS mode (`ibeos`).
    eos: Option<Option<Eos>>,
    /// EOI with the last byte of writes (`ibeot`).
    eot: Option<bool>,
    /// The timeout (`ibtmo`).
    timeout: Option<Timeout>,
}

impl std::fmt::Debug for LinuxGpibBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinuxGpibBoard")
            .field("board", &self.label)
            .field("descriptor", &self.ud)
            .field("address", &self.address.get())
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl LinuxGpibBoard {
    /// Opens board `index` (`/dev/gpib<index>`, the `minor` of an `interface` in
    /// `/etc/gpib.conf`); the board index is its descriptor.
    ///
    /// Errors: [`ErrorKind::BackendUnavailable`] when the board does not answer (no
    /// such board, driver not loaded, `gpib_config` not run) or is already open in
    /// this process.
    pub fn open_index(index: i32) -> Result<Self> {
        let ud: c_int = index;
        if !(0..16).contains(&ud) {
            return Err(Error::InvalidArgument(format!(
                "board index {index} is out of range (linux-gpib has boards 0..=15)"
            )));
        }
        if !claim(ud) {
            return Err(in_use(&format!("board {index}")));
        }
        Self::init(ud, ud, false, format!("board {index}")).inspect_err(|_| release(ud))
    }

    /// Opens the interface board called `name` in `/etc/gpib.conf` (its `name = ...`
    /// entry), through `ibfind`. A name that is a number opens that board index.
    ///
    /// Errors: [`ErrorKind::BackendUnavailable`] when no board has that name,
    /// [`ErrorKind::InvalidArgument`] when the name is a device, not an interface.
    pub fn open_name(name: &str) -> Result<Self> {
        if let Ok(index) = name.trim().parse::<i32>() {
            return Self::open_index(index);
        }
        let ud = calls::find(name).map_err(|e| {
            let mut err = driver_error("ibfind", Call::Other, e, None, Timeout::Never);
            if let Error::Backend { message, .. } = &mut err {
                message.push_str(&format!(
                    " (is {name:?} the name of an interface in /etc/gpib.conf?)"
                ));
            }
            err
        })?;
        // A board descriptor answers the board-only options; a device descriptor gets EARG.
        if calls::ask(ud, abi::OPT_SC).is_err() {
            let _ = calls::close(ud);
            return Err(Error::InvalidArgument(format!(
                "{name:?} names a device in /etc/gpib.conf, not an interface board"
            )));
        }
        // Key the registry by board index when linux-gpib tells it, so that the same
        // board opened by index and by name counts as one user.
        let key = calls::ask(ud, abi::OPT_BNA)
            .ok()
            .filter(|i| (0..16).contains(i))
            .unwrap_or(ud + 0x1_0000);
        if !claim(key) {
            let _ = calls::close(ud);
            return Err(in_use(&format!("board {name:?}")));
        }
        Self::init(ud, key, true, format!("board {name:?}")).inspect_err(|_| {
            let _ = calls::close(ud);
            release(key);
        })
    }

    fn init(ud: c_int, key: c_int, owned: bool, label: String) -> Result<Self> {
        let unavailable = |what: &'static str, e: LibgpibError| -> Error {
            let err = driver_error(what, Call::Other, e, None, Timeout::Never);
            Error::BackendUnavailable {
                backend: NAME.into(),
                hint: format!(
                    "{label} does not answer ({err}); check that the linux-gpib kernel module \
                     is loaded, gpib_config has configured the board, and /dev/gpib* is \
                     readable and writable by this user"
                ),
            }
        };
        let pad = calls::ask(ud, abi::OPT_PAD).map_err(|e| unavailable("ibask", e))?;
        let address = PrimaryAddress::try_from(pad).map_err(|_| Error::BackendUnavailable {
            backend: NAME.into(),
            hint: format!("{label} reports primary address {pad}"),
        })?;
        let tmo = calls::ask(ud, abi::OPT_TMO).map_err(|e| unavailable("ibask", e))?;
        let timeout = Timeout::from_linux_gpib_code(tmo).unwrap_or(Timeout::Never);
        // Never inherit EOS settings (XEOS would add EOI to writes): none until a read asks.
        calls::eos(ud, eos_mode(None)).map_err(|e| unavailable("ibeos", e))?;
        let board = Self {
            ud,
            key,
            owned,
            label,
            address,
            timeout,
            opened: Instant::now(),
            applied: Applied {
                timeout: Some(timeout),
                ..Applied::default()
            },
            devices: Vec::new(),
            unaddress: false,
        };
        log::debug!("opened {board:?}");
        Ok(board)
    }

    /// The `ibdev` descriptor of `device` on this board (opened on first use), with
    /// the board's timeout applied.
    fn device_descriptor(&mut self, device: Address) -> Result<(c_int, &mut Applied)> {
        let t = self.timeout;
        let i = if let Some(i) = self.devices.iter().position(|d| d.address == device) {
            i
        } else {
            let (pad, sad) = lg_address(device);
            let ud = calls::dev(
                self.key,
                pad,
                sad,
                t.linux_gpib_code(),
                true,
                eos_mode(None),
            )
            .map_err(|e| driver_error("ibdev", Call::Other, e, None, t))?;
            if self.unaddress {
                if let Err(e) = calls::config(ud, abi::OPT_UN_ADDR, 1) {
                    let _ = calls::close(ud);
                    return Err(driver_error("ibconfig", Call::Other, e, None, t));
                }
            }
            let applied = Applied {
                eos: Some(None),
                eot: Some(true),
                timeout: Some(t),
            };
            self.devices.push(DeviceDescriptor {
                address: device,
                ud,
                applied,
            });
            self.devices.len() - 1
        };
        let d = &mut self.devices[i];
        apply_timeout(d.ud, &mut d.applied, t)?;
        Ok((d.ud, &mut d.applied))
    }

    /// Opens the board of the gpib.conf interface section called `name` (by its
    /// `minor`, like [`LinuxGpibBoard::open_index`]) with the section's timeout.
    ///
    /// `conf` is the file libgpib reads too ([`GpibConf::read_default`]:
    /// `$IB_CONFIG` or `/etc/gpib.conf`), parsed by this crate.
    /// Errors: [`ErrorKind::InvalidArgument`] when no interface section has that name,
    /// else as [`LinuxGpibBoard::open_index`].
    pub fn open_named_interface(conf: &GpibConf, name: &str) -> Result<Self> {
        let Some(Entry::Interface(i)) = conf.find(name) else {
            return Err(Error::InvalidArgument(format!(
                "no interface section of the gpib.conf is named {name:?} (names: {})",
                conf.names().join(", ")
            )));
        };
        let mut board = Self::open_index(i32::from(i.minor))?;
        board.set_timeout(i.settings.timeout())?;
        Ok(board)
    }

    /// The board descriptor (the board index, or what `ibfind` returned).
    pub fn descriptor(&self) -> i32 {
        self.ud
    }

    fn error(
        &self,
        what: &'static str,
        call: Call,
        e: LibgpibError,
        count: Option<usize>,
    ) -> Error {
        driver_error(what, call, e, count, self.timeout)
    }
}

/// Sets the EOS mode for the next read on `ud`: REOS (and BIN for 8-bit compares)
/// with the byte, or nothing at all; never XEOS.
fn apply_eos(ud: c_int, applied: &mut Applied, eos: Option<Eos>, t: Timeout) -> Result<()> {
    if applied.eos == Some(eos) {
        return Ok(());
    }
    applied.eos = None;
    calls::eos(ud, eos_mode(eos)).map_err(|e| driver_error("ibeos", Call::Other, e, None, t))?;
    applied.eos = Some(eos);
    Ok(())
}

/// Sets whether the next write on `ud` asserts EOI with its last byte.
fn apply_eot(ud: c_int, applied: &mut Applied, eoi: bool, t: Timeout) -> Result<()> {
    if applied.eot == Some(eoi) {
        return Ok(());
    }
    applied.eot = None;
    calls::eot(ud, eoi).map_err(|e| driver_error("ibeot", Call::Other, e, None, t))?;
    applied.eot = Some(eoi);
    Ok(())
}

/// Sets `ud`'s timeout to the board's `t`.
fn apply_timeout(ud: c_int, applied: &mut Applied, t: Timeout) -> Result<()> {
    if applied.timeout == Some(t) {
        return Ok(());
    }
    applied.timeout = None;
    calls::tmo(ud, t.linux_gpib_code())
        .map_err(|e| driver_error("ibtmo", Call::Other, e, None, t))?;
    applied.timeout = Some(t);
    Ok(())
}

/// One `ibwrt` on `ud`, EOI with the last byte when `eoi`.
fn write_on(ud: c_int, applied: &mut Applied, data: &[u8], eoi: bool, t: Timeout) -> Result<usize> {
    apply_eot(ud, applied, eoi, t)?;
    match calls::wrt(ud, data) {
        Ok(sent) => Ok(clamp_count(sent, data.len())),
        Err(e) => {
            let sent = clamp_count(e.count, data.len());
            Err(driver_error("write", Call::Write, e, Some(sent), t))
        }
    }
}

/// One `ibrd` on `ud` into `buf`, ending on EOS too when `eos` is given.
fn read_on(
    ud: c_int,
    applied: &mut Applied,
    buf: &mut [u8],
    eos: Option<Eos>,
    t: Timeout,
) -> Result<ReadStatus> {
    if buf.is_empty() {
        return Ok(ReadStatus {
            count: 0,
            end: ReadEnd::BufferFull,
        });
    }
    apply_eos(ud, applied, eos, t)?;
    match calls::rd(ud, buf) {
        Ok(done) => {
            let n = clamp_count(done.count, buf.len());
            let on_eos = n > 0 && eos.is_some_and(|e| e.matches(buf[n - 1]));
            let end = if on_eos {
                ReadEnd::Eos
            } else if done.ibsta & abi::END != 0 {
                ReadEnd::Eoi
            } else if n == buf.len() {
                ReadEnd::BufferFull
            } else {
                // linux-gpib ends a short read only on END; treat anything else
                // as the end of the message rather than read again blindly.
                log::warn!("ibrd returned {n} of {} byte(s) without END", buf.len());
                ReadEnd::Eoi
            };
            Ok(ReadStatus { count: n, end })
        }
        Err(e) => {
            let got = clamp_count(e.count, buf.len());
            Err(driver_error("read", Call::Read, e, Some(got), t))
        }
    }
}

/// The `ibeos` mode word for `eos`: REOS (with BIN for 8-bit compares) and the byte,
/// or 0 (no EOS); never XEOS.
fn eos_mode(eos: Option<Eos>) -> i32 {
    match eos {
        None => 0,
        Some(e) => abi::REOS | if e.eight_bit { abi::BIN } else { 0 } | i32::from(e.byte),
    }
}

impl Drop for LinuxGpibBoard {
    fn drop(&mut self) {
        for d in self.devices.drain(..) {
            if let Err(e) = calls::close(d.ud) {
                log::warn!("closing the descriptor of {}: {e}", d.address);
            }
        }
        if self.owned {
            if let Err(e) = calls::close(self.ud) {
                log::warn!("closing {}: {e}", self.label);
            }
        }
        release(self.key);
    }
}

fn in_use(what: &str) -> Error {
    Error::BackendUnavailable {
        backend: NAME.into(),
        hint: format!(
            "{what} is already open in this process; share it through one gpib::Bus \
             (libgpib aborts when one descriptor is used from two threads at once)"
        ),
    }
}

/// A count linux-gpib reported (`ibcntl`), within `0..=max`.
fn clamp_count(count: i64, max: usize) -> usize {
    usize::try_from(count).unwrap_or(0).min(max)
}

/// Builds the library's error for a failed call, keeping linux-gpib's as its source.
fn driver_error(
    what: &'static str,
    call: Call,
    e: LibgpibError,
    count: Option<usize>,
    timeout: Timeout,
) -> Error {
    let code = e.iberr;
    let kind = kind_for_iberr(code, call, e.timed_out());
    let (name, meaning) = IBERR_NAMES
        .iter()
        .find(|(c, ..)| *c == code)
        .map_or(("iberr", "unknown error"), |(_, n, m)| (*n, *m));
    let mut message = match kind {
        ErrorKind::Timeout | ErrorKind::CommandTimeout => format!(
            "{what} timed out after {} with {} byte(s) transferred",
            timeout
                .duration()
                .map_or("no timeout".into(), |d| format!("{d:?}")),
            count.unwrap_or(0)
        ),
        _ => format!("{what} failed: {meaning}"),
    };
    message.push_str(&format!(
        " (linux-gpib {name} = {code}, ibsta {})",
        StatusWord(e.ibsta)
    ));
    let transferred = match kind {
        ErrorKind::Timeout
        | ErrorKind::CommandTimeout
        | ErrorKind::NoListener
        | ErrorKind::BusConflict => Some(count.unwrap_or(0)),
        _ => count,
    };
    Error::Backend {
        kind,
        message,
        transferred,
        source: Box::new(e),
    }
}

/// `a` as libgpib's `(pad, sad)` arguments: the secondary address in its 0x60-offset
/// form (0x60 is secondary address 0), or 0 for none.
fn lg_address(a: Address) -> (i32, i32) {
    let sad = a.secondary.map_or(0, |s| i32::from(s.to_ni()));
    (i32::from(a.primary.get()), sad)
}

/// `a` as an IEEE 488.2 `Addr4882_t` (`MakeAddr(pad, sad)`).
fn addr4882(a: Address) -> u16 {
    let (pad, sad) = lg_address(a);
    // pad is 0..=30 and sad 0 or 0x60..=0x7e: both fit their byte.
    (pad as u16 & 0xff) | ((sad as u16 & 0xff) << 8)
}

impl Backend for LinuxGpibBoard {
    fn name(&self) -> &str {
        NAME
    }

    fn board_address(&self) -> PrimaryAddress {
        self.address
    }

    fn command(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        calls::cmd(self.ud, bytes).map_err(|e| {
            let sent = clamp_count(e.count, bytes.len());
            match self.error("command", Call::Command, e, Some(sent)) {
                Error::Backend {
                    kind: ErrorKind::CommandTimeout,
                    message,
                    source,
                    ..
                } => Error::Backend {
                    kind: ErrorKind::CommandTimeout,
                    message: format!("{message}; {sent} of {} command byte(s) sent", bytes.len()),
                    transferred: Some(sent),
                    source,
                },
                other => other,
            }
        })
    }

    fn write(&mut self, data: &[u8], eoi: bool) -> Result<usize> {
        write_on(self.ud, &mut self.applied, data, eoi, self.timeout)
    }

    fn read(&mut self, buf: &mut [u8], eos: Option<Eos>) -> Result<ReadStatus> {
        read_on(self.ud, &mut self.applied, buf, eos, self.timeout)
    }

    fn tuning(&mut self) -> Option<&mut dyn crate::backend::tuning::BoardTuning> {
        Some(self)
    }

    fn interface_clear(&mut self) -> Result<()> {
        calls::sic(self.ud).map_err(|e| self.error("interface clear", Call::Other, e, None))
    }

    fn remote_enable(&mut self, on: bool) -> Result<()> {
        calls::sre(self.ud, on).map_err(|e| self.error("remote enable", Call::Other, e, None))
    }

    fn set_timeout(&mut self, timeout: Timeout) -> Result<Timeout> {
        let (code, applied) = (timeout.linux_gpib_code(), timeout.linux_gpib_step());
        calls::tmo(self.ud, code).map_err(|e| self.error("ibtmo", Call::Other, e, None))?;
        self.timeout = applied;
        self.applied.timeout = Some(applied);
        Ok(applied)
    }

    fn timeout(&self) -> Timeout {
        self.timeout
    }

    fn now(&self) -> Duration {
        self.opened.elapsed()
    }

    fn serial_poll(&mut self, device: Address) -> Result<StatusByte> {
        let stb = calls::read_status_byte(self.ud, addr4882(device))
            .map_err(|e| self.error("serial poll", Call::Read, e, None))?;
        Ok(StatusByte(stb))
    }

    fn srq(&mut self) -> Result<bool> {
        calls::test_srq(self.ud).map_err(|e| self.error("TestSRQ", Call::Other, e, None))
    }

    fn device_level(&mut self) -> Option<&mut dyn DeviceLevel> {
        Some(self)
    }

    fn board_control(&mut self) -> Option<&mut dyn BoardControl> {
        Some(self)
    }
}

impl DeviceLevel for LinuxGpibBoard {
    fn device_write(&mut self, device: Address, data: &[u8], eoi: bool) -> Result<usize> {
        let t = self.timeout;
        let (ud, applied) = self.device_descriptor(device)?;
        write_on(ud, applied, data, eoi, t)
    }

    fn device_read(
        &mut self,
        device: Address,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        let t = self.timeout;
        let (ud, applied) = self.device_descriptor(device)?;
        read_on(ud, applied, buf, eos, t)
    }

    /// A query: `ibwrt` then `ibrd` on the device's descriptor, found once.
    fn device_write_read(
        &mut self,
        device: Address,
        data: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        let t = self.timeout;
        let (ud, applied) = self
            .device_descriptor(device)
            .map_err(WriteReadError::Write)?;
        write_on(ud, applied, data, true, t).map_err(WriteReadError::Write)?;
        read_on(ud, applied, buf, eos, t).map_err(WriteReadError::Read)
    }

    fn device_clear(&mut self, device: Address) -> Result<()> {
        let t = self.timeout;
        let (ud, _) = self.device_descriptor(device)?;
        calls::clr(ud).map_err(|e| driver_error("ibclr", Call::Other, e, None, t))
    }

    fn device_trigger(&mut self, device: Address) -> Result<()> {
        let t = self.timeout;
        let (ud, _) = self.device_descriptor(device)?;
        calls::trg(ud).map_err(|e| driver_error("ibtrg", Call::Other, e, None, t))
    }

    /// REN, then the device addressed to listen with `ibcmd` (UNL, MTA board, MLA
    /// device \[MSA\]), as `EnableRemote` does for one device.
    fn device_remote(&mut self, device: Address) -> Result<()> {
        self.remote_enable(true)?;
        self.command(addressing::to_devices(self.address, &[device]).as_bytes())
    }

    fn device_local(&mut self, device: Address) -> Result<()> {
        let t = self.timeout;
        let (ud, _) = self.device_descriptor(device)?;
        calls::loc(ud).map_err(|e| driver_error("ibloc", Call::Other, e, None, t))
    }
}

impl BoardControl for LinuxGpibBoard {
    fn board_status(&mut self) -> Result<crate::status::BoardStatus> {
        Err(Error::unsupported("reading the board's status", NAME))
    }

    fn go_to_standby(&mut self) -> Result<()> {
        Err(Error::unsupported("going to standby", NAME))
    }

    fn take_control(&mut self) -> Result<()> {
        Err(Error::unsupported("taking control", NAME))
    }

    fn parallel_poll(&mut self) -> Result<u8> {
        calls::rpp(self.ud).map_err(|e| self.error("parallel poll", Call::Other, e, None))
    }

    fn lines(&mut self) -> Result<BusLines> {
        let l = calls::lines(self.ud).map_err(|e| self.error("iblines", Call::Other, e, None))?;
        Ok(bus_lines(l))
    }

    fn listener_present(&mut self, address: Address) -> Result<bool> {
        let (pad, sad) = lg_address(address);
        calls::ln(self.ud, pad, sad).map_err(|e| self.error("ibln", Call::Other, e, None))
    }
}

/// The lines of an `iblines` word: each `BusXXX` bit (high byte) counts only when its
/// `ValidXXX` bit (the same bit in the low byte) says the board can sense that line; a
/// line it cannot sense is reported as not asserted.
fn bus_lines(l: i32) -> BusLines {
    let on = |bus: i32| l & bus != 0 && l & (bus >> 8) != 0;
    BusLines {
        dav: on(abi::BUS_DAV),
        nrfd: on(abi::BUS_NRFD),
        ndac: on(abi::BUS_NDAC),
        atn: on(abi::BUS_ATN),
        eoi: on(abi::BUS_EOI),
        srq: on(abi::BUS_SRQ),
        ifc: on(abi::BUS_IFC),
        ren: on(abi::BUS_REN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iberr_codes_map_to_kinds() {
        use ErrorKind as K;
        let cases = [
            (0, Call::Other, false, K::BackendUnavailable),
            (1, Call::Command, false, K::NotControllerInCharge),
            (2, Call::Write, false, K::NoListener),
            (2, Call::Command, false, K::NoListener),
            (3, Call::Read, false, K::NotAddressed),
            (4, Call::Other, false, K::InvalidArgument),
            (5, Call::Other, false, K::NotControllerInCharge),
            (6, Call::Read, true, K::Timeout),
            (6, Call::Write, true, K::Timeout),
            (6, Call::Command, true, K::CommandTimeout),
            (6, Call::Other, false, K::Io),
            (7, Call::Other, false, K::BackendUnavailable),
            (8, Call::Read, false, K::Io),
            (10, Call::Read, false, K::Io),
            (11, Call::Other, false, K::Unsupported),
            (12, Call::Other, false, K::Io),
            (14, Call::Command, true, K::CommandTimeout),
            (14, Call::Read, false, K::BusConflict),
            (15, Call::Other, false, K::Io),
            (16, Call::Other, false, K::SrqStuck),
            (17, Call::Other, false, K::BackendUnavailable),
            (20, Call::Other, false, K::InvalidArgument),
        ];
        for (code, call, timo, kind) in cases {
            assert_eq!(
                kind_for_iberr(code, call, timo),
                kind,
                "iberr {code} {call:?}"
            );
        }
    }

    fn failed(call: &'static str, ibsta: i32, iberr: i32, count: i64) -> LibgpibError {
        LibgpibError {
            call,
            ibsta: ibsta | abi::ERR,
            iberr,
            count,
        }
    }

    #[test]
    fn driver_errors_keep_the_original() {
        use std::error::Error as _;
        let e = driver_error(
            "read",
            Call::Read,
            failed("ibrd", abi::TIMO | abi::CMPL, abi::EABO, 7),
            Some(7),
            Timeout::After(Duration::from_secs(3)),
        );
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert_eq!(e.transferred(), Some(7));
        assert!(e.to_string().contains("EABO = 6"), "{e}");
        assert!(e.to_string().contains("timed out after 3s"), "{e}");
        assert!(e.to_string().contains("[ERR TIMO CMPL]"), "{e}");
        let src = e.source().expect("the linux-gpib error is the source");
        assert!(src.to_string().contains("EABO"), "{src}");
        let lg = src.downcast_ref::<LibgpibError>().expect("a LibgpibError");
        assert_eq!((lg.iberr, lg.count), (abi::EABO, 7));

        let e = driver_error(
            "write",
            Call::Write,
            failed("ibwrt", 0, abi::ENOL, 0),
            Some(0),
            Timeout::After(Duration::from_secs(3)),
        );
        assert_eq!(e.kind(), ErrorKind::NoListener);
        assert_eq!(e.transferred(), Some(0));

        let e = driver_error(
            "ibrpp",
            Call::Other,
            failed("ibrpp", 0, abi::ECAP, 0),
            None,
            Timeout::Never,
        );
        assert_eq!(e.kind(), ErrorKind::Unsupported);
        assert_eq!(e.transferred(), None);

        // A code linux-gpib-rs did not know (ECNF) keeps its name.
        let e = driver_error(
            "ibfind",
            Call::Other,
            failed("ibfind", 0, abi::ECNF, 0),
            None,
            Timeout::Never,
        );
        assert_eq!(e.kind(), ErrorKind::BackendUnavailable);
        assert!(e.to_string().contains("ECNF = 17"), "{e}");
    }

    #[test]
    fn eos_modes_are_explicit_and_never_xeos() {
        assert_eq!(eos_mode(None), 0);
        assert_eq!(eos_mode(Some(Eos::NEWLINE)), 0x0400 | 0x1000 | 0x0a);
        let seven = Eos {
            byte: b',',
            eight_bit: false,
        };
        assert_eq!(eos_mode(Some(seven)), 0x0400 | i32::from(b','));
    }

    #[test]
    fn secondary_addresses_keep_zero() {
        let a = Address::new(5, Some(0)).unwrap();
        assert_eq!(lg_address(a), (5, 0x60));
        assert_eq!(addr4882(a), 5 | (0x60 << 8));
        let a = Address::new(30, Some(30)).unwrap();
        assert_eq!(addr4882(a), 30 | (0x7e << 8));
        let a = Address::new(7, None).unwrap();
        assert_eq!(lg_address(a), (7, 0));
        assert_eq!(addr4882(a), 7);
    }

    #[test]
    fn lines_count_only_where_the_board_can_sense_them() {
        // SRQ and ATN asserted and sensed; EOI asserted but not sensed; NDAC sensed, off.
        let l = abi::BUS_SRQ | 0x20 | abi::BUS_ATN | 0x40 | abi::BUS_EOI | 0x02;
        let lines = bus_lines(l);
        assert!(lines.srq && lines.atn);
        assert!(!lines.eoi && !lines.ndac && !lines.dav && !lines.ren);
    }
}

/// Tests on a real board (or any libgpib): they always compile with the feature, and
/// run only when `GPIB_HW_BOARD` (a board index or an `/etc/gpib.conf` interface name)
/// and `GPIB_HW_ADDRESS` (`pad` or `pad.sad` of an IEEE 488.2 instrument that answers
/// `*IDN?`) are set. Otherwise each test prints that it was skipped and passes.
///
/// ```text
/// GPIB_HW_BOARD=0 GPIB_HW_ADDRESS=22 cargo test -p gpib --features linux-gpib hardware -- --test-threads=1
/// ```
#[cfg(test)]
mod hardware {
    use super::*;
    use crate::Bus;

    /// The board and instrument named by the environment, or `None` (test skipped).
    fn target(test: &str) -> Option<(String, Address)> {
        let board = std::env::var("GPIB_HW_BOARD").ok()?;
        let Ok(addr) = std::env::var("GPIB_HW_ADDRESS") else {
            eprintln!("{test}: GPIB_HW_BOARD is set but GPIB_HW_ADDRESS is not: skipped");
            return None;
        };
        let (p, s) = match addr.split_once('.') {
            Some((p, s)) => (p, Some(s)),
            None => (addr.as_str(), None),
        };
        let address = Address::new(
            p.trim().parse().expect("GPIB_HW_ADDRESS: pad or pad.sad"),
            s.map(|s| s.trim().parse().expect("GPIB_HW_ADDRESS: pad or pad.sad")),
        )
        .expect("GPIB_HW_ADDRESS is a valid address");
        Some((board, address))
    }

    /// One test at a time holds the board (a board opens once per process).
    static SERIAL: Mutex<()> = Mutex::new(());

    fn with_bus(test: &str, f: impl FnOnce(&Bus, Address)) {
        let Some((board, address)) = target(test) else {
            eprintln!("{test}: set GPIB_HW_BOARD and GPIB_HW_ADDRESS to run it: skipped");
            return;
        };
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let bus = Bus::new(LinuxGpibBoard::open_name(&board).expect("open the board"));
        bus.interface_clear().expect("IFC");
        bus.set_timeout(Duration::from_secs(3).into())
            .expect("timeout");
        bus.device(address).unwrap().clear().expect("device clear");
        f(&bus, address);
    }

    #[test]
    fn hw_tuning_reaches_the_driver() {
        use crate::backend::tuning::{BoardTuning, T1Delay};
        let test = "hw_tuning_reaches_the_driver";
        let Some((name, address)) = target(test) else {
            eprintln!("{test}: set GPIB_HW_BOARD and GPIB_HW_ADDRESS to run it: skipped");
            return;
        };
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let mut board = LinuxGpibBoard::open_name(&name).expect("open the board");
        let ud = board.descriptor();
        // Unaddressing: set on the device descriptor libgpib uses for the transfers,
        // whether it was open before or opens after.
        board
            .device_write(address, b"*CLS", true)
            .expect("a write to the device");
        assert!(board.set_unaddress(true).unwrap());
        let dev_ud = board
            .devices
            .iter()
            .find(|d| d.address == address)
            .expect("the device's descriptor")
            .ud;
        assert_eq!(calls::ask(dev_ud, abi::OPT_UN_ADDR).unwrap(), 1);
        board.device_write(address, b"*CLS", true).unwrap();
        assert!(!board.set_unaddress(false).unwrap());
        assert_eq!(calls::ask(dev_ud, abi::OPT_UN_ADDR).unwrap(), 0);
        assert!(
            board.set_readdress(false).unwrap(),
            "libgpib always readdresses"
        );
        // T1 and autopoll through the Bus: what the driver answers to ibask.
        let bus = Bus::new(board);
        let before = bus.tuning(|t| t.t1()).unwrap();
        let asked = || T1Delay::from_code(calls::ask(ud, abi::OPT_TIMING).unwrap());
        // Every driver has 2 µs.
        assert_eq!(
            bus.tuning(|t| t.set_t1(T1Delay::Ns2000)).unwrap(),
            T1Delay::Ns2000
        );
        assert_eq!(asked(), Some(T1Delay::Ns2000));
        let applied = bus.tuning(|t| t.set_t1(T1Delay::Ns350)).unwrap();
        assert_eq!(asked(), Some(applied));
        eprintln!("{test}: T1 350 ns asked, {applied} applied");
        bus.tuning(|t| t.set_t1(before)).unwrap();
        let autopoll = bus.tuning(|t| t.autopoll()).unwrap();
        assert!(bus.tuning(|t| t.set_autopoll(true)).unwrap());
        assert_eq!(calls::ask(ud, abi::OPT_AUTOPOLL).unwrap(), 1);
        bus.tuning(|t| t.set_autopoll(autopoll)).unwrap();
    }

    #[test]
    fn hw_identify() {
        with_bus("hw_identify", |bus, address| {
            let dev = bus.device(address).unwrap();
            let idn = dev.query("*IDN?").expect("*IDN? answered");
            assert!(!idn.trim().is_empty());
            eprintln!("hw_identify: {address} is {idn}");
            // The instrument's status byte: MAV clear after the answer was read.
            let stb = dev.serial_poll().expect("serial poll");
            assert!(!stb.mav(), "{stb}");
        });
    }

    #[test]
    fn hw_listeners_and_lines() {
        with_bus("hw_listeners_and_lines", |bus, address| {
            assert!(bus.device(address).unwrap().is_present().unwrap());
            bus.remote_enable(true).unwrap();
            let lines = bus.lines().unwrap();
            eprintln!("hw_listeners_and_lines: lines {lines}");
            let _ = bus.srq().unwrap();
            let found = bus.find_listeners().unwrap();
            assert!(
                found.iter().any(|a| a.primary == address.primary),
                "{found:?}"
            );
        });
    }

    #[test]
    fn hw_timeouts_are_typed_and_rounded() {
        with_bus("hw_timeouts_are_typed_and_rounded", |bus, address| {
            assert_eq!(
                bus.set_timeout(Duration::from_millis(150).into()).unwrap(),
                Timeout::After(Duration::from_millis(300))
            );
            // Nothing was asked: the read times out with nothing received.
            let e = bus.device(address).unwrap().read_to_end().unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
            assert_eq!(e.transferred(), Some(0));
            assert!(std::error::Error::source(&e).is_some());
        });
    }

    #[test]
    fn hw_absent_device_is_no_listener() {
        with_bus("hw_absent_device_is_no_listener", |bus, _| {
            let me = bus.with_backend(|b| b.board_address());
            let found = bus.find_listeners().unwrap();
            let Some(free) = PrimaryAddress::all()
                .filter(|&p| p != me)
                .find(|p| !found.iter().any(|a| a.primary == *p))
            else {
                eprintln!("hw_absent_device_is_no_listener: every address answers: skipped");
                return;
            };
            let e = bus.device(free).unwrap().write_str("*CLS").unwrap_err();
            assert_eq!(e.kind(), ErrorKind::NoListener, "{e}");
        });
    }

    #[test]
    fn hw_one_user_per_board() {
        with_bus("hw_one_user_per_board", |_bus, _| {
            let board = std::env::var("GPIB_HW_BOARD").unwrap();
            let e = LinuxGpibBoard::open_name(&board).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::BackendUnavailable, "{e}");
            assert!(e.to_string().contains("already open"), "{e}");
        });
    }
}
