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
use std::time::Instant;

use crate::abi;
use crate::address::{Address, PrimaryAddress};
use crate::backend::{Backend, Eos};
use crate::error::{Error, Result};
use crate::gpibconf::{Entry, GpibConf};

mod calls;
pub(crate) mod connector;
mod descriptor;
mod errors;
mod impls;
mod in_use;
mod status;
mod sys;
mod tuning;

use descriptor::{apply_timeout, eos_mode, lg_address};
use errors::driver_error;
use in_use::{claim, in_use, release};

pub use status::{LibgpibError, StatusWord};

/// The backend's name in messages.
const NAME: &str = "linux-gpib";

use crate::Timeout;

pub use crate::abi::{kind_for_iberr, Call, IBERR_NAMES};

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
    /// The index in `devices` of the last transfer's device, looked at first.
    last_device: usize,
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
    /// Errors: [`ErrorKind::BackendUnavailable`](crate::ErrorKind::BackendUnavailable) when the board does not answer (no
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
    /// Errors: [`ErrorKind::BackendUnavailable`](crate::ErrorKind::BackendUnavailable) when no board has that name,
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) when the name is a device, not an interface.
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
            last_device: 0,
            unaddress: false,
        };
        log::debug!("opened {board:?}");
        Ok(board)
    }

    /// The `ibdev` descriptor of `device` on this board (opened on first use), with
    /// the board's timeout applied.
    fn device_descriptor(&mut self, device: Address) -> Result<(c_int, &mut Applied)> {
        // The common case, one call per transfer: the device of the last transfer,
        // its timeout in place. Anything else (another device, a first use, a new
        // timeout) goes the long way.
        let t = self.timeout;
        let i = self.last_device;
        if self
            .devices
            .get(i)
            .is_some_and(|d| d.address == device && d.applied.timeout == Some(t))
        {
            let d = &mut self.devices[i];
            return Ok((d.ud, &mut d.applied));
        }
        self.find_descriptor(device)
    }

    /// [`Self::device_descriptor`] when the last transfer's will not do: the device's
    /// descriptor found (or opened with `ibdev`), its timeout set.
    #[cold]
    #[inline(never)]
    fn find_descriptor(&mut self, device: Address) -> Result<(c_int, &mut Applied)> {
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
        self.last_device = i;
        let d = &mut self.devices[i];
        apply_timeout(d.ud, &mut d.applied, t)?;
        Ok((d.ud, &mut d.applied))
    }

    /// Opens the board of the gpib.conf interface section called `name` (by its
    /// `minor`, like [`LinuxGpibBoard::open_index`]) with the section's timeout.
    ///
    /// `conf` is the file libgpib reads too ([`GpibConf::read_default`]:
    /// `$IB_CONFIG` or `/etc/gpib.conf`), parsed by this crate.
    /// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) when no interface section has that name,
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

#[cfg(test)]
mod tests;

/// Tests on a real board (or any libgpib): they always compile with the feature, and
/// run only when `GPIB_HW_BOARD` (a board index or an `/etc/gpib.conf` interface name)
/// and `GPIB_HW_ADDRESS` (`pad` or `pad.sad` of an IEEE 488.2 instrument that answers
/// `*IDN?`) are set. Otherwise each test prints that it was skipped and passes.
///
/// ```text
/// GPIB_HW_BOARD=0 GPIB_HW_ADDRESS=22 cargo test -p gpib --features linux-gpib hardware -- --test-threads=1
/// ```
#[cfg(test)]
mod hardware;
