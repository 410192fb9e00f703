//! The library's state (the simulated host, its boards, the descriptor table) and every
//! operation, in safe Rust over slices; `ffi.rs` turns C arguments into these calls.

use std::collections::{HashMap, VecDeque};
use std::io::{Read as _, Write as _};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use gpib_sim::backend::tuning::{BoardTuning, T1Delay};
use gpib_sim::backend::BackendExt;
use gpib_sim::sim::timing::{BoardTiming, TransferMode};
use gpib_sim::sim::{NamedDevice, SimBoard, SimHost};
use gpib_sim::{
    addressing, codes, Address, Backend, DeviceSettings, Eos, EosMode, PrimaryAddress, ReadEnd,
    ReadStatus, Timeout,
};

use crate::consts::*;
use crate::status::{self, Values};

/// Why a call failed: its `iberr`, the count to report, and whether it timed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fail {
    /// The error code.
    pub iberr: i32,
    /// The count for ibcnt/ibcntl (bytes moved, errno, or an index), if any.
    pub count: Option<i64>,
    /// Whether TIMO is set.
    pub timo: bool,
}

impl Fail {
    /// A failure with `iberr` and nothing else.
    pub const fn code(iberr: i32) -> Self {
        Self {
            iberr,
            count: None,
            timo: false,
        }
    }

    fn counted(mut self, n: usize) -> Self {
        self.count = Some(n as i64);
        self
    }
}

/// The result of an operation: the count to report (`None`: leave ibcnt alone).
pub type Res<T = Option<i64>> = Result<T, Fail>;

pub use gpib_sim::abi::Call;

mod open;
pub use open::*;
mod data;
pub use data::*;
mod settings;
pub use settings::*;
mod ieee4882;
pub use ieee4882::*;

/// The `iberr` a real libgpib reports for a simulator error (`gpib::abi`'s mapping),
/// with the errno in the count for a system-level failure.
///
/// A data transfer on a board not addressed for it is a timeout (EABO with TIMO), not
/// EADR: linux-gpib never reports EADR; its kernel driver waits for a handshake that
/// does not come until the timeout (sys/ibread.c, sys/ibwrite.c: -ETIMEDOUT, which
/// lib/ibRd.c:89-91 and lib/ibWrt.c report as EABO), as the virtual board does.
pub fn fail_from(e: &gpib_sim::Error, call: Call) -> Fail {
    let (iberr, timo) = match e.kind() {
        gpib_sim::ErrorKind::NotAddressed => (EABO, true),
        kind => gpib_sim::abi::iberr_for(kind, call),
    };
    let count = if iberr == EDVR {
        Some(match e {
            gpib_sim::Error::Io(io) => io.raw_os_error().map_or(EIO, i64::from),
            _ => EIO,
        })
    } else {
        e.transferred().map(|n| n as i64)
    };
    Fail { iberr, count, timo }
}

fn data_fail(e: &gpib_sim::Error, before: usize) -> Fail {
    let f = fail_from(e, Call::Read);
    Fail {
        count: Some((before + e.transferred().unwrap_or(0)) as i64),
        ..f
    }
}

/// Per-descriptor settings (what `ibask` reports and `ibconfig` changes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Primary address (the device's, or the board's own).
    pub pad: u8,
    /// Secondary address, 0..=30.
    pub sad: Option<u8>,
    /// The I/O timeout (one of linux-gpib's steps), the EOS mode and EOT: each set.
    pub device: DeviceSettings,
    /// Serial poll timeout code.
    pub spoll_tmo: i32,
    /// Parallel poll timeout code.
    pub ppoll_tmo: i32,
    /// `IbcREADDR`, kept for `ibask`: linux-gpib addresses the bus for every device
    /// call whatever it says ("useless, included for compatibility only").
    pub readdr: bool,
    /// UNL and UNT after each device read and write (`IbcUnAddr`).
    pub unaddr: bool,
    /// Board: event queue enabled.
    pub event_queue: bool,
    /// Board: parallel poll configuration (as a device), local configure mode.
    pub ppc: i32,
    /// Board: local parallel poll configure mode.
    pub pp2: bool,
    /// Board: individual status bit.
    pub ist: bool,
    /// Board: status byte it answers serial polls with.
    pub rsv: i32,
    /// Board: DMA enabled.
    pub dma: bool,
}

impl Settings {
    /// `ibdev`'s: timeout code `tmo` (checked), EOS mode `eos` (checked).
    fn device(pad: u8, sad: Option<u8>, tmo: i32, eot: bool, eos: i32) -> Self {
        Self::with(
            pad,
            sad,
            DeviceSettings {
                timeout: Timeout::from_linux_gpib_code(tmo),
                eos: Some(EosMode::from_linux_gpib(eos)),
                eot: Some(eot),
                ..DeviceSettings::default()
            },
        )
    }

    /// A descriptor with `device`'s timeout (to linux-gpib's step), EOS mode and EOT.
    fn with(pad: u8, sad: Option<u8>, device: DeviceSettings) -> Self {
        let device = DeviceSettings {
            timeout: Some(device.timeout.unwrap_or(Timeout::Never).linux_gpib_step()),
            eos: Some(device.eos_mode()),
            eot: Some(device.eot()),
            ..device
        };
        Self {
            pad,
            sad,
            device,
            spoll_tmo: T1S,
            ppoll_tmo: 0,
            readdr: false,
            unaddr: false,
            event_queue: false,
            ppc: 0,
            pp2: false,
            ist: false,
            rsv: 0,
            dma: false,
        }
    }

    fn board(b: &Board) -> Self {
        let mut s = Self::with(b.pad, None, b.defaults);
        s.dma = b.dma;
        s
    }

    /// The I/O timeout.
    pub fn timeout(&self) -> Timeout {
        self.device.timeout.unwrap_or(Timeout::Never)
    }

    /// The I/O timeout's code (`ibask(IbaTMO)`).
    pub fn tmo(&self) -> i32 {
        self.timeout().linux_gpib_code()
    }

    /// The EOS mode.
    pub fn eos_mode(&self) -> EosMode {
        self.device.eos_mode()
    }

    /// The EOS mode, to change one of its parts.
    pub fn eos_mut(&mut self) -> &mut EosMode {
        self.device.eos.get_or_insert_default()
    }

    /// Sets the EOS mode as `ibeos` takes it (checked).
    pub fn set_eos(&mut self, mode: i32) {
        self.device.eos = Some(EosMode::from_linux_gpib(mode));
    }

    /// EOI with the last byte of writes.
    pub fn eot(&self) -> bool {
        self.device.eot()
    }

    /// The EOS setting for reads, if REOS is on.
    pub fn read_eos(&self) -> Option<Eos> {
        self.device.read_eos()
    }
}

/// One descriptor: a board, or a device on a board.
#[derive(Debug)]
pub struct Desc {
    /// Board index.
    pub board: usize,
    /// A board (interface) descriptor.
    pub is_board: bool,
    /// Current settings.
    pub s: Settings,
    /// Settings at open (restored by `ibonl(ud, 1)`).
    pub defaults: Settings,
    /// The last I/O ended with END.
    pub end: bool,
    /// A board descriptor taken offline by `ibonl(ud, 0)`: linux-gpib keeps its
    /// configuration but has closed its kernel handle, so every call on it but
    /// `ibonl(ud, 1)` fails with EDVR and errno EINVAL.
    pub handle_closed: bool,
    /// The last call timed out.
    pub timed_out: bool,
    /// A completed asynchronous I/O not yet resynchronized by ibwait/ibstop.
    pub pending: Option<Values>,
}

impl Desc {
    fn new(board: usize, is_board: bool, s: Settings) -> Self {
        Self {
            board,
            is_board,
            defaults: s.clone(),
            s,
            end: false,
            handle_closed: false,
            timed_out: false,
            pending: None,
        }
    }

    /// The device address of this descriptor (the board's own for a board).
    pub fn address(&self) -> Address {
        Address::new(self.s.pad, self.s.sad)
            .unwrap_or(Address::primary(PrimaryAddress::new_const(0)))
    }
}

/// What one board's lock protects: the board, driven through the `gpib` crate's
/// controller layer (its addressing, its errors), and the status bytes automatic
/// serial polling took. The board's own state (ATN, TACS, LACS, REN, SRQ) is the
/// simulator's, asked of it; nothing here decodes command bytes.
pub struct BoardBus {
    bus: gpib_sim::Bus,
    /// Status bytes with RQS taken by automatic serial polling, per device.
    pub spoll: HashMap<Address, VecDeque<u8>>,
    /// System controller (`IbcSC`, `ibrsc`): the board may pulse IFC and drive REN,
    /// goes to standby before a data transfer and polls automatically only as one
    /// (linux-gpib's kernel `board->master`: sys/ibsic.c, sys/ibsre.c, sys/ibwrite.c,
    /// sys/ibread.c, sys/ibinit.c).
    pub system_controller: bool,
    /// The kernel's descriptor slot 0 of this board's file, the board descriptor's
    /// handle, is free: `ibonl(board, 0)` closed it, and no descriptor opened since has
    /// taken it (the kernel gives a new one the first free slot). linux-gpib asks
    /// whether the board is controller-in-charge on handle 0 before a device's status
    /// (lib/ibutil.c is_cic): while it is free, that fails with EINVAL.
    pub handle0_free: bool,
    /// The current call is on a board descriptor whose handle is closed: what it sends
    /// with the handle (commands, reads, writes) fails with EINVAL; what goes by the
    /// board's file alone (IFC, REN, serial polls, the lines) still happens.
    pub handle_closed_call: bool,
    /// The EOS the board's reads stop on as its kernel has it: what the last IBEOS set.
    /// linux-gpib's library sends one before every read (lib/ibEos.c
    /// config_read_eos), gpib_config the first.
    pub read_eos: Option<Eos>,
}

impl BoardBus {
    fn new(sim: SimBoard) -> Self {
        let bus = gpib_sim::Bus::new(sim);
        // linux-gpib addresses the bus for every device-level call.
        bus.set_readdress(true);
        Self {
            bus,
            spoll: HashMap::new(),
            system_controller: true,
            handle0_free: false,
            handle_closed_call: false,
            read_eos: None,
        }
    }

    fn use_timeout(&mut self, d: Timeout) -> Res<()> {
        if self.bus.timeout() != d {
            self.bus
                .set_timeout(d)
                .map_err(|e| fail_from(&e, Call::Other))?;
        }
        Ok(())
    }

    fn command(&mut self, bytes: &[u8]) -> Res<()> {
        if self.handle_closed_call {
            return Err(Fail {
                iberr: EDVR,
                count: Some(EINVAL),
                timo: false,
            });
        }
        if bytes.is_empty() {
            return Ok(());
        }
        self.bus.transaction(|tx| tx.command(bytes)).map_err(|e| {
            let f = fail_from(&e, Call::Command);
            Fail {
                count: Some(e.transferred().unwrap_or(0) as i64),
                ..f
            }
        })
    }

    /// The board talks to `to`: MTA board, UNL, MLA \[MSA\] of each, the bytes
    /// linux-gpib's library sends.
    fn send_setup(&mut self, to: &[Address]) -> Res<()> {
        let board = self.bus.transaction(|tx| Ok(tx.board_address()));
        let board = board.map_err(|e| fail_from(&e, Call::Command))?;
        self.command(addressing::linux_gpib_send_setup(board, to).as_bytes())
    }

    /// `from` talks to the board: UNL, MLA board, MTA \[MSA\], as linux-gpib sends it.
    fn receive_setup(&mut self, from: Address) -> Res<()> {
        let board = self.bus.transaction(|tx| Ok(tx.board_address()));
        let board = board.map_err(|e| fail_from(&e, Call::Command))?;
        self.command(addressing::linux_gpib_receive_setup(board, from).as_bytes())
    }

    /// ESAC unless the board is system controller: what linux-gpib's library checks
    /// before IFC and REN (lib/ibSic.c:45, lib/ibSre.c:25, lib/ibBoard.c:139).
    fn system_control(&self) -> Res<()> {
        if self.system_controller {
            Ok(())
        } else {
            Err(Fail::code(ESAC))
        }
    }

    fn interface_clear(&mut self) -> Res<()> {
        self.system_control()?;
        self.bus
            .interface_clear()
            .map_err(|e| fail_from(&e, Call::Other))
    }

    fn remote_enable(&mut self, on: bool) -> Res<()> {
        self.system_control()?;
        self.bus
            .remote_enable(on)
            .map_err(|e| fail_from(&e, Call::Other))
    }

    /// Standby before a data transfer, as the kernel's ibwrt and ibrd put a system
    /// controller (sys/ibwrite.c:43-47, sys/ibread.c:49-53).
    fn standby_for_data(&mut self) -> Res<()> {
        if self.system_controller {
            self.go_to_standby()?;
        }
        Ok(())
    }

    /// The board's own state, as the simulator knows it.
    pub fn board_status(&mut self) -> gpib_sim::BoardStatus {
        self.bus
            .with_backend(|b| b.board_status())
            .unwrap_or_default()
    }

    /// SRQ line state.
    pub fn srq(&mut self) -> bool {
        self.bus.srq().unwrap_or(false)
    }

    fn read(&mut self, buf: &mut [u8], eos: Option<Eos>) -> gpib_sim::Result<ReadStatus> {
        self.no_closed_handle()?;
        self.bus.transaction(|tx| tx.read(buf, eos))
    }

    fn write(&mut self, data: &[u8], eoi: bool) -> gpib_sim::Result<usize> {
        self.no_closed_handle()?;
        self.bus.transaction(|tx| tx.write(data, eoi))
    }

    /// The EOS a descriptor's read stops on (lib/ibEos.c iblcleos): its own, sent to
    /// the kernel first; but linux-gpib keeps the EOS byte in a `char` (lib/ibConf.h),
    /// so one above 0x7f is "more than 8 bits" to config_read_eos, which sends nothing
    /// (and my_ibrd goes on): the read stops on the board's EOS as it was.
    pub(crate) fn descriptor_eos(&self, s: &Settings) -> Option<Eos> {
        match s.read_eos() {
            Some(e) if e.byte > 0x7f => self.read_eos,
            e => e,
        }
    }

    /// EINVAL for a transfer on a closed handle (see `handle_closed_call`).
    fn no_closed_handle(&self) -> gpib_sim::Result<()> {
        if self.handle_closed_call {
            return Err(gpib_sim::Error::Io(std::io::Error::from_raw_os_error(
                libc::EINVAL,
            )));
        }
        Ok(())
    }

    fn serial_poll(&mut self, a: Address) -> Res<u8> {
        self.bus
            .serial_poll(a)
            .map(|s| s.0)
            .map_err(|e| fail_from(&e, Call::Other))
    }

    fn parallel_poll(&mut self) -> Res<u8> {
        self.bus
            .parallel_poll()
            .map_err(|e| fail_from(&e, Call::Other))
    }

    pub(crate) fn lines(&mut self) -> Res<gpib_sim::BusLines> {
        self.bus.lines().map_err(|e| fail_from(&e, Call::Other))
    }

    fn take_control(&mut self) -> Res<()> {
        self.bus
            .with_backend(|b| b.take_control())
            .map_err(|e| fail_from(&e, Call::Other))
    }

    fn go_to_standby(&mut self) -> Res<()> {
        self.bus
            .with_backend(|b| b.go_to_standby())
            .map_err(|e| fail_from(&e, Call::Other))
    }

    /// Waits up to `timeout` for SRQ on the simulator's clock.
    fn wait_srq(&mut self, timeout: Duration) -> bool {
        self.bus.wait_srq(Timeout::After(timeout)).unwrap_or(false)
    }

    fn delay(&mut self, d: Duration) {
        self.bus.delay(d);
    }

    /// Runs `f` on the board's driver settings (T1, autopoll): the simulated board's
    /// own, so that they change what the model does.
    fn tuning<T>(&mut self, f: impl FnOnce(&mut dyn BoardTuning) -> gpib_sim::Result<T>) -> Res<T> {
        self.bus.tuning(f).map_err(|e| fail_from(&e, Call::Other))
    }

    /// Whether the board's driver polls devices that request service (`IbcAUTOPOLL`).
    fn autopolls(&mut self) -> bool {
        self.system_controller && self.tuning(|t| t.autopoll()).unwrap_or(false)
    }

    /// Whether waits take wall time (real-time mode).
    fn waits_in_wall_time(&mut self) -> bool {
        self.bus.with_backend(|b| b.waits_in_wall_time())
    }
}

/// One board of the simulated host.
pub struct Board {
    /// Board index.
    pub index: usize,
    /// Its name in the configuration (what `ibfind` finds).
    pub name: String,
    /// Its primary address.
    pub pad: u8,
    /// It moves data by DMA.
    pub dma: bool,
    /// The board descriptor's timeout, EOS mode and EOT at open.
    pub defaults: DeviceSettings,
    bus: Mutex<BoardBus>,
}

impl Board {
    /// Locks the bus of this board.
    pub fn lock(&self) -> MutexGuard<'_, BoardBus> {
        self.bus.lock().unwrap_or_else(|p| p.into_inner())
    }
}

type Slot = Option<Arc<Mutex<Desc>>>;

/// The whole library: the simulated host and the descriptor table.
pub struct Library {
    /// The host, when the configuration loaded.
    pub host: Option<SimHost>,
    /// Why the configuration did not load.
    pub load_error: Option<String>,
    /// The boards, by index.
    pub boards: Vec<Board>,
    /// The configuration's named devices (what `ibfind` finds besides board names).
    pub named: Vec<NamedDevice>,
    /// The gpib.conf's devices that cannot be opened, as (name, why): `ibfind` of one
    /// fails with EDVR and says why on stderr.
    pub unusable: Vec<(String, String)>,
    table: Mutex<Vec<Slot>>,
    trace: bool,
}

static LIBRARY: OnceLock<Library> = OnceLock::new();

/// The library, built on first use from `GPIB_SIM_CONFIG`.
pub fn library() -> &'static Library {
    LIBRARY.get_or_init(|| {
        // The unit tests expect the default bench, whatever the environment says,
        // except in the child processes some of them start to run a program's way.
        let from_env = if cfg!(test) && std::env::var_os("GPIB_COMPAT_TEST_CHILD").is_none() {
            None
        } else {
            std::env::var("GPIB_SIM_CONFIG").ok()
        };
        let ib_config = if cfg!(test) && std::env::var_os("GPIB_COMPAT_TEST_CHILD").is_none() {
            None
        } else {
            std::env::var_os("IB_CONFIG")
        };
        let ib_config = ib_config
            .filter(|s| !s.is_empty())
            .map(std::path::PathBuf::from);
        let name = from_env.filter(|s| !s.trim().is_empty());
        let source = Source {
            sim_config: name.as_deref(),
            ib_config: ib_config.as_deref(),
        };
        // Loading reports its own errors; a panic (a bug) is reported the same way,
        // once, and leaves a library without boards rather than a retry on every call.
        std::panic::catch_unwind(|| Library::load_from(source)).unwrap_or_else(|_| {
            Library::failed(format!(
                "{}: internal error while loading the configuration",
                source.describe()
            ))
        })
    })
}

/// Where the simulated host comes from: `GPIB_SIM_CONFIG` and linux-gpib's `IB_CONFIG`.
pub use gpib_sim::sim::config::HostSource as Source;

impl Library {
    /// Builds the library for configuration `name` (a built-in name or a TOML path).
    /// A configuration that does not load leaves a library without boards (every
    /// call then fails with ENEB or EDVR) and says why on stderr.
    #[cfg(test)]
    pub fn load(name: &str) -> Self {
        Self::load_from(Source {
            sim_config: Some(name),
            ib_config: None,
        })
    }

    /// Builds the library for the configuration `source` names (see [`Source`]).
    pub fn load_from(source: Source<'_>) -> Self {
        let name = source.describe();
        let name = name.as_str();
        let built = source.read().and_then(|cfg| {
            let host = cfg.build().map_err(|e| format!("{name}: {e}"))?;
            Ok((cfg, host))
        });
        let (cfg, host) = match built {
            Ok(v) => v,
            Err(msg) => return Self::failed(msg),
        };
        let mut lib = Self::empty();
        if cfg.boards.len() > MAX_BOARDS {
            eprintln!(
                "libgpib (simulated bus): {name}: only the first {MAX_BOARDS} of {} boards are reachable",
                cfg.boards.len()
            );
        }
        if std::env::var_os("GPIB_SIM_REALTIME").is_some_and(|v| !v.is_empty() && v != "0") {
            host.set_realtime(true);
        }
        let defaults = BoardTiming::default();
        for (i, b) in cfg.boards.iter().enumerate().take(MAX_BOARDS) {
            let Ok(sim) = host.board(i) else { break };
            let board = Board {
                index: i,
                name: b.name.clone(),
                pad: b.address,
                dma: b.transfer.unwrap_or(defaults.mode) == TransferMode::Dma,
                defaults: DeviceSettings {
                    timeout: Some(sim.timeout()),
                    ..b.descriptor()
                },
                bus: Mutex::new(BoardBus::new(sim)),
            };
            // As linux-gpib's gpib_config leaves a system controller's board before any
            // program runs (its defaults: interface clear, then REN asserted).
            {
                let mut bus = board.lock();
                let _ = bus.interface_clear();
                let _ = bus.remote_enable(true);
                bus.read_eos = board.defaults.read_eos();
            }
            lib.boards.push(board);
        }
        // The trace shows what the program does, from its first call (gpib_config's IFC
        // and REN above are another program's).
        if lib.trace {
            host.record(64);
        }
        {
            let mut t = lib.table.lock().unwrap_or_else(|p| p.into_inner());
            for b in &lib.boards {
                t[b.index] = Some(Arc::new(Mutex::new(Desc::new(
                    b.index,
                    true,
                    Settings::board(b),
                ))));
            }
        }
        lib.named = host
            .named_devices()
            .into_iter()
            .filter(|n| n.board < lib.boards.len())
            .collect();
        lib.unusable = cfg.unusable_devices.clone();
        lib.host = Some(host);
        lib
    }

    fn empty() -> Self {
        Library {
            host: None,
            load_error: None,
            boards: Vec::new(),
            named: Vec::new(),
            unusable: Vec::new(),
            table: Mutex::new(vec![None; MAX_DESCRIPTORS]),
            trace: SimHost::trace_requested(),
        }
    }

    /// A library without boards, for a configuration that did not load: says why on
    /// stderr (once: the library is built once per process).
    fn failed(msg: String) -> Self {
        eprintln!(
            "libgpib (simulated bus): {msg}; every call fails (ENEB for board indices, EDVR otherwise)"
        );
        let mut lib = Self::empty();
        lib.load_error = Some(msg);
        lib
    }

    fn table(&self) -> MutexGuard<'_, Vec<Slot>> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The descriptor `ud`, if open.
    pub fn get(&self, ud: i32) -> Option<Arc<Mutex<Desc>>> {
        let i = usize::try_from(ud).ok()?;
        self.table().get(i).cloned().flatten()
    }

    fn insert(&self, d: Desc) -> Res<i32> {
        // The kernel opens the new descriptor in its first free slot: slot 0 too.
        if let Some(b) = self.boards.get(d.board) {
            b.lock().handle0_free = false;
        }
        let mut t = self.table();
        let Some(i) = (MAX_BOARDS..MAX_DESCRIPTORS).find(|&i| t[i].is_none()) else {
            return Err(Fail::code(ETAB));
        };
        t[i] = Some(Arc::new(Mutex::new(d)));
        Ok(i as i32)
    }

    fn remove(&self, ud: i32) {
        if let Ok(i) = usize::try_from(ud) {
            if (MAX_BOARDS..MAX_DESCRIPTORS).contains(&i) {
                self.table()[i] = None;
            }
        }
    }

    /// Board `i`.
    pub fn board(&self, i: usize) -> &Board {
        &self.boards[i]
    }

    fn board_named(&self, name: &str) -> Option<&Board> {
        self.boards.iter().find(|b| b.name == name)
    }

    /// The status word of descriptor `d` now.
    pub fn status(&self, d: &Desc) -> i32 {
        let mut s = 0;
        if d.pending.is_none() {
            s |= CMPL;
        }
        if d.end {
            s |= END;
        }
        if d.timed_out {
            s |= TIMO;
        }
        let Some(board) = self.boards.get(d.board) else {
            return s;
        };
        let mut bus = board.lock();
        if d.is_board {
            let b = bus.board_status();
            for (on, bit) in [
                (b.controller_in_charge, CIC),
                (b.atn, ATN),
                (b.talker, TACS),
                (b.listener, LACS),
                (b.srq, SRQI),
            ] {
                if on {
                    s |= bit;
                }
            }
        } else if bus.spoll.get(&d.address()).is_some_and(|q| !q.is_empty()) {
            s |= RQS;
        }
        s
    }

    /// Prints the simulator's transcript so far (with `GPIB_SIM_TRACE` set).
    pub fn trace_flush(&self) {
        if self.trace {
            if let Some(h) = &self.host {
                h.print_events();
            }
        }
    }
}

/// Checks and converts a primary address argument.
pub fn check_pad(pad: i32) -> Res<u8> {
    u8::try_from(pad)
        .ok()
        .filter(|&p| p <= 30)
        .ok_or(Fail::code(EARG))
}

/// Checks and converts a secondary address argument in the NI form (0 = none,
/// 0x60..=0x7E = 0..=30).
pub fn check_sad(sad: i32) -> Res<Option<u8>> {
    match sad {
        0 => Ok(None),
        0x60..=0x7E => Ok(Some((sad - 0x60) as u8)),
        _ => Err(Fail::code(EARG)),
    }
}

/// Decodes an `Addr4882_t` (pad in the low byte, 0 or 0x60+sad in the high byte).
pub fn decode_addr(a: u16) -> Option<Address> {
    if a == NOADDR {
        return None;
    }
    let pad = (a & 0xff) as u8;
    let sad = match (a >> 8) as u8 {
        0 => None,
        s @ 0x60..=0x7E => Some(s - 0x60),
        _ => return None,
    };
    Address::new(pad, sad).ok()
}

/// Encodes an address as an `Addr4882_t`.
#[cfg(test)]
pub fn encode_addr(a: Address) -> u16 {
    u16::from(a.primary.get()) | a.secondary.map_or(0, |s| u16::from(s.to_ni()) << 8)
}

/// Decodes an address list (already cut at NOADDR); on an invalid entry, EARG with
/// its index in ibcnt.
pub fn decode_list(list: &[u16]) -> Res<Vec<Address>> {
    list.iter()
        .enumerate()
        .map(|(i, &a)| decode_addr(a).ok_or(Fail::code(EARG).counted(i)))
        .collect()
}

/// The timeout of code `code`, checked by [`check_timeout_code`] when it was set.
fn code_timeout(code: i32) -> Timeout {
    Timeout::from_linux_gpib_code(code).unwrap_or(Timeout::Never)
}

/// `v` when it is one of linux-gpib's timeout codes (0 `TNONE` to 17 `T1000s`).
fn check_timeout_code(v: i32) -> Res<i32> {
    Timeout::from_linux_gpib_code(v)
        .map(|_| v)
        .ok_or(Fail::code(EARG))
}

fn check_eos(v: i32) -> Res<i32> {
    if v & !(EOS_MASK | 0xff) != 0 {
        Err(Fail::code(EARG))
    } else {
        Ok(v)
    }
}

#[cfg(test)]
mod tests;
