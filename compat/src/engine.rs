//! The library's state (the simulated host, its boards, the descriptor table) and every
//! operation, in safe Rust over slices; `ffi.rs` turns C arguments into these calls.

use std::collections::{HashMap, VecDeque};
use std::io::{Read as _, Write as _};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use gpib_sim::backend::tuning::{BoardTuning, T1Delay};
use gpib_sim::backend::BackendExt;
use gpib_sim::sim::config::{self, Config};
use gpib_sim::sim::timing::{BoardTiming, TransferMode};
use gpib_sim::sim::{NamedDevice, SimBoard, SimHost};
use gpib_sim::{
    codes, Address, Backend, DeviceSettings, Eos, EosMode, PrimaryAddress, ReadEnd, ReadStatus,
    Timeout,
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

/// The `iberr` a real libgpib reports for a simulator error (`gpib::abi`'s mapping),
/// with the errno in the count for a system-level failure.
pub fn fail_from(e: &gpib_sim::Error, call: Call) -> Fail {
    let (iberr, timo) = gpib_sim::abi::iberr_for(e.kind(), call);
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
}

impl BoardBus {
    fn new(sim: SimBoard) -> Self {
        let bus = gpib_sim::Bus::new(sim);
        // linux-gpib addresses the bus for every device-level call.
        bus.set_readdress(true);
        Self {
            bus,
            spoll: HashMap::new(),
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

    /// The board talks to `to` (UNL, MTA board, MLA \[MSA\] of each).
    fn send_setup(&mut self, to: &[Address]) -> Res<()> {
        self.bus
            .transaction(|tx| tx.address_to_devices(to))
            .map_err(|e| fail_from(&e, Call::Command))
    }

    /// `from` talks to the board (UNL, MTA \[MSA\], MLA board).
    fn receive_setup(&mut self, from: Address) -> Res<()> {
        self.bus
            .transaction(|tx| tx.address_from_device(from))
            .map_err(|e| fail_from(&e, Call::Command))
    }

    fn interface_clear(&mut self) -> Res<()> {
        self.bus
            .interface_clear()
            .map_err(|e| fail_from(&e, Call::Other))
    }

    fn remote_enable(&mut self, on: bool) -> Res<()> {
        self.bus
            .remote_enable(on)
            .map_err(|e| fail_from(&e, Call::Other))
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
        self.bus.transaction(|tx| tx.read(buf, eos))
    }

    fn write(&mut self, data: &[u8], eoi: bool) -> gpib_sim::Result<usize> {
        self.bus.transaction(|tx| tx.write(data, eoi))
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

    fn listener_present(&mut self, a: Address) -> Res<bool> {
        self.bus
            .with_backend(|b| b.listener_present(a))
            .map_err(|e| fail_from(&e, Call::Other))
    }

    fn lines(&mut self) -> Res<gpib_sim::BusLines> {
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
        self.tuning(|t| t.autopoll()).unwrap_or(false)
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
#[derive(Debug, Clone, Copy, Default)]
pub struct Source<'a> {
    /// `GPIB_SIM_CONFIG`: a built-in name or a TOML path.
    pub sim_config: Option<&'a str>,
    /// `IB_CONFIG`: the path of a gpib.conf.
    pub ib_config: Option<&'a std::path::Path>,
}

impl Source<'_> {
    fn describe(&self) -> String {
        match (self.sim_config, self.ib_config) {
            (Some(n), _) => format!("GPIB_SIM_CONFIG={n}"),
            (None, Some(p)) => format!("IB_CONFIG={}", p.display()),
            (None, None) => "GPIB_SIM_CONFIG=bench".into(),
        }
    }
}

/// Reads a configuration (files are regular files of at most 1 MiB, read by the
/// simulator's capped reader: a device or FIFO is refused at once):
///
/// * `GPIB_SIM_CONFIG` set: that built-in or TOML file; a TOML file with neither
///   `gpib_conf` nor `[[board]]` (only `[[instrument]]`s) takes `IB_CONFIG`'s gpib.conf;
/// * else `IB_CONFIG` set: the gpib.conf alone, a plain SCPI instrument on each device;
/// * else the built-in `bench`.
///
/// linux-gpib's default file, /etc/gpib.conf, is never read: on a machine with a real
/// linux-gpib it describes real boards.
fn read_config(source: Source<'_>) -> Result<Config, String> {
    // The errors name the file (or say it is neither a file nor a built-in).
    match (source.sim_config, source.ib_config) {
        (Some(name), ib) if !config::builtin_names().contains(&name) => {
            Config::read_file_with(std::path::Path::new(name), ib)
                .map_err(|e| format!("GPIB_SIM_CONFIG: {e}"))
        }
        (Some(name), _) => {
            Config::from_name_or_path(name).map_err(|e| format!("GPIB_SIM_CONFIG: {e}"))
        }
        (None, Some(ib)) => Config::from_gpib_conf_file(ib).map_err(|e| format!("IB_CONFIG: {e}")),
        (None, None) => Config::from_name_or_path("bench").map_err(|e| format!("bench: {e}")),
    }
}

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
        let built = read_config(source).and_then(|cfg| {
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
        if lib.trace {
            host.record(64);
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
            lib.boards.push(board);
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
            trace: std::env::var_os("GPIB_SIM_TRACE").is_some_and(|v| !v.is_empty() && v != "0"),
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
                for e in h.take_events() {
                    eprintln!("gpib-sim: {e}");
                }
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

// ---------------------------------------------------------------------------------
// Opening descriptors.
// ---------------------------------------------------------------------------------

/// `ibdev`: a new device descriptor.
pub fn dev(
    lib: &Library,
    board: i32,
    pad: i32,
    sad: i32,
    tmo: i32,
    eot: i32,
    eos: i32,
) -> Res<i32> {
    let b = usize::try_from(board)
        .ok()
        .filter(|&b| b < lib.boards.len())
        .ok_or(Fail::code(ENEB))?;
    let pad = check_pad(pad)?;
    let sad = check_sad(sad)?;
    let tmo = check_timeout_code(tmo)?;
    let eos = check_eos(eos)?;
    let s = Settings::device(pad, sad, tmo, eot != 0, eos);
    lib.insert(Desc::new(b, false, s))
}

/// `ibfind`: a new device descriptor for the device called `name` (with its configured
/// address, timeout, EOS and EOT settings, as a gpib.conf `device` section gives), or
/// a new board descriptor for the board called `name`.
pub fn find(lib: &Library, name: &str) -> Res<i32> {
    if let Some(n) = lib.named.iter().find(|n| n.name == name) {
        let b = lib.board(n.board);
        let s = Settings::with(
            n.address.primary.get(),
            n.address.secondary.map(|s| s.get()),
            n.settings.or(b.defaults),
        );
        return lib.insert(Desc::new(n.board, false, s));
    }
    let Some(b) = lib.board_named(name) else {
        if let Some((_, why)) = lib.unusable.iter().find(|(n, _)| n == name) {
            eprintln!("libgpib (simulated bus): ibfind({name:?}): {why}");
        }
        return Err(not_configured());
    };
    lib.insert(Desc::new(b.index, true, Settings::board(b)))
}

/// What libgpib's `ibfind` reports for a name not in its configuration (one that is
/// not UTF-8 text included: no name of a configuration is).
pub fn not_configured() -> Fail {
    Fail {
        iberr: EDVR,
        count: Some(2), // ENOENT
        timo: false,
    }
}

/// `ibonl`: 0 closes a device descriptor (a board descriptor stays usable); anything
/// else restores the settings it was opened with.
pub fn onl(lib: &Library, ud: i32, d: &mut Desc, v: i32) -> Res {
    d.pending = None;
    d.s = d.defaults.clone();
    d.end = false;
    if v == 0 && ud >= MAX_BOARDS as i32 {
        lib.remove(ud);
    }
    Ok(None)
}

// ---------------------------------------------------------------------------------
// Data and commands.
// ---------------------------------------------------------------------------------

fn io_timeout(bus: &mut BoardBus, d: &Desc) -> Res<()> {
    bus.use_timeout(d.s.timeout())
}

fn unaddress(bus: &mut BoardBus, d: &Desc) -> Res<()> {
    if !d.is_board && d.s.unaddr {
        bus.command(gpib_sim::addressing::unaddress().as_bytes())?;
    }
    Ok(())
}

/// Writes `data` on the bus with `d`'s EOT/EOS settings (board already addressed).
fn write_data(bus: &mut BoardBus, d: &mut Desc, data: &[u8], eoi_last: bool) -> Res<usize> {
    let mut sent = 0usize;
    let mut rest = data;
    let mode = d.s.eos_mode();
    if mode.xeos {
        // XEOS: EOI goes with every EOS byte sent.
        let eos = Eos {
            byte: mode.byte,
            eight_bit: mode.bin,
        };
        while let Some(i) = eos.find(rest) {
            let n = bus
                .write(&rest[..=i], true)
                .map_err(|e| data_fail(&e, sent))?;
            sent += n;
            rest = &rest[i + 1..];
            d.end = true;
        }
        if rest.is_empty() && !data.is_empty() {
            return Ok(sent);
        }
    }
    let n = bus.write(rest, eoi_last).map_err(|e| data_fail(&e, sent))?;
    d.end = eoi_last;
    Ok(sent + n)
}

/// `ibwrt` (and `ibwrta`): device descriptors address first.
pub fn wrt(lib: &Library, d: &mut Desc, data: &[u8]) -> Res {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    io_timeout(&mut bus, d)?;
    d.end = false;
    if !d.is_board {
        bus.send_setup(&[d.address()])?;
    }
    let eot = d.s.eot();
    let n = write_data(&mut bus, d, data, eot)?;
    unaddress(&mut bus, d)?;
    Ok(Some(n as i64))
}

fn read_data(bus: &mut BoardBus, d: &mut Desc, buf: &mut [u8], eos: Option<Eos>) -> Res<usize> {
    d.end = false;
    match bus.read(buf, eos) {
        Ok(st) => {
            d.end = match st.end {
                ReadEnd::Eoi => true,
                // linux-gpib sets END on EOS too (IbcEndBitIsNormal cannot be 0).
                ReadEnd::Eos => true,
                _ => false,
            };
            Ok(st.count)
        }
        Err(e) => Err(data_fail(&e, 0)),
    }
}

/// `ibrd` (and `ibrda`): one read into `buf`, ending on END, EOS (with REOS) or a
/// full buffer.
pub fn rd(lib: &Library, d: &mut Desc, buf: &mut [u8]) -> Res {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    io_timeout(&mut bus, d)?;
    d.end = false;
    if !d.is_board {
        bus.receive_setup(d.address())?;
    }
    let eos = d.s.read_eos();
    let n = read_data(&mut bus, d, buf, eos)?;
    unaddress(&mut bus, d)?;
    Ok(Some(n as i64))
}

/// `ibcmd` (and `ibcmda`, `SendCmds`).
pub fn cmd(lib: &Library, d: &mut Desc, bytes: &[u8]) -> Res {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    io_timeout(&mut bus, d)?;
    bus.command(bytes)?;
    Ok(Some(bytes.len() as i64))
}

/// `ibrdf`: reads until END into the file at `path`.
pub fn rdf(lib: &Library, d: &mut Desc, path: &str) -> Res {
    let efso = |e: std::io::Error| Fail {
        iberr: EFSO,
        count: Some(e.raw_os_error().map_or(EIO, i64::from)),
        timo: false,
    };
    let mut file = std::fs::File::create(path).map_err(efso)?;
    let mut total = 0usize;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match rd(lib, d, &mut buf) {
            Ok(n) => n.unwrap_or(0) as usize,
            Err(f) => {
                let got = f.count.unwrap_or(0).max(0) as usize;
                file.write_all(&buf[..got.min(buf.len())]).map_err(efso)?;
                return Err(Fail {
                    count: Some((total + got) as i64),
                    ..f
                });
            }
        };
        file.write_all(&buf[..n]).map_err(efso)?;
        total += n;
        if d.end || n < buf.len() {
            return Ok(Some(total as i64));
        }
    }
}

/// The largest file `ibwrtf` sends (64 MiB): it is read whole before the write.
pub const MAX_WRTF_BYTES: u64 = 64 << 20;

/// `ibwrtf`: writes the regular file at `path` (at most [`MAX_WRTF_BYTES`]). It is
/// opened without blocking and checked on its handle: a device, FIFO or folder fails
/// with EFSO (errno EINVAL) unread, a bigger file with EFSO (EFBIG).
pub fn wrtf(lib: &Library, d: &mut Desc, path: &str) -> Res {
    use std::os::unix::fs::OpenOptionsExt as _;
    let efso = |errno: i64| Fail {
        iberr: EFSO,
        count: Some(errno),
        timo: false,
    };
    let io = |e: std::io::Error| efso(e.raw_os_error().map_or(EIO, i64::from));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(efso(EINVAL));
    }
    let too_big = efso(i64::from(libc::EFBIG));
    if meta.len() > MAX_WRTF_BYTES {
        return Err(too_big);
    }
    let mut data = Vec::new();
    file.take(MAX_WRTF_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(io)?;
    if data.len() as u64 > MAX_WRTF_BYTES {
        return Err(too_big);
    }
    wrt(lib, d, &data)
}

/// Sends one addressed command (SDC, GET, GTL) to the device of `d`.
fn addressed(lib: &Library, d: &mut Desc, m: u8) -> Res {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    io_timeout(&mut bus, d)?;
    bus.send_setup(&[d.address()])?;
    bus.command(&[m])?;
    // No UNL UNT after it, whatever IbcUnAddr says: linux-gpib sends them after
    // reads and writes only.
    Ok(None)
}

/// `ibclr`: SDC to the device.
pub fn clr(lib: &Library, d: &mut Desc) -> Res {
    let r = addressed(lib, d, codes::SDC);
    if r.is_ok() {
        lib.board(d.board).lock().spoll.remove(&d.address());
    }
    r
}

/// `ibtrg`: GET to the device.
pub fn trg(lib: &Library, d: &mut Desc) -> Res {
    addressed(lib, d, codes::GET)
}

/// `ibloc`: GTL to a device; a board (never in remote as a device here) has nothing to do.
pub fn loc(lib: &Library, d: &mut Desc) -> Res {
    if d.is_board {
        return Ok(None);
    }
    addressed(lib, d, codes::GTL)
}

/// `ibppc`: configures a device's parallel poll response (PPE byte 0x60..=0x6F, or
/// PPD 0x70..=0x7F; 0 means PPD), or a board's local configuration.
pub fn ppc(lib: &Library, d: &mut Desc, v: i32) -> Res {
    let byte = match v {
        0 => codes::PPD,
        0x60..=0x7F => v as u8,
        _ => return Err(Fail::code(EARG)),
    };
    if d.is_board {
        d.s.ppc = v;
        return Ok(None);
    }
    let board = lib.board(d.board);
    let mut bus = board.lock();
    io_timeout(&mut bus, d)?;
    bus.send_setup(&[d.address()])?;
    bus.command(&[codes::PPC, byte])?;
    Ok(None)
}

/// `ibrpp` / `PPoll`: a parallel poll.
pub fn rpp(lib: &Library, d: &mut Desc) -> Res<u8> {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    bus.use_timeout(code_timeout(d.s.ppoll_tmo))?;
    bus.parallel_poll()
}

/// `ibrsp`: the device's status byte (a byte taken by automatic polling first).
pub fn rsp(lib: &Library, d: &mut Desc) -> Res<u8> {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    let a = d.address();
    if let Some(b) = bus.spoll.get_mut(&a).and_then(VecDeque::pop_front) {
        return Ok(b);
    }
    bus.use_timeout(code_timeout(d.s.spoll_tmo))?;
    bus.serial_poll(a)
}

/// `ibspb`: status bytes queued for the device.
pub fn spb(lib: &Library, d: &Desc) -> i16 {
    let bus = lib.board(d.board).lock();
    bus.spoll.get(&d.address()).map_or(0, |q| q.len() as i16)
}

/// `ibsic` / `SendIFC`.
pub fn sic(lib: &Library, d: &mut Desc) -> Res {
    lib.board(d.board).lock().interface_clear()?;
    Ok(None)
}

/// `ibcac`: the board becomes active controller, asserting ATN.
pub fn cac(lib: &Library, d: &mut Desc) -> Res {
    lib.board(d.board).lock().take_control()?;
    Ok(None)
}

/// `ibgts`: the board goes to standby, releasing ATN.
pub fn gts(lib: &Library, d: &mut Desc) -> Res {
    lib.board(d.board).lock().go_to_standby()?;
    Ok(None)
}

/// `ibsre`: REN on or off.
pub fn sre(lib: &Library, d: &mut Desc, on: bool) -> Res {
    lib.board(d.board).lock().remote_enable(on)?;
    Ok(None)
}

/// `ibln`: whether a listener answers at `pad`/`sad` (NO_SAD: the primary only,
/// ALL_SAD: the primary or any secondary).
pub fn ln(lib: &Library, d: &mut Desc, pad: i32, sad: i32) -> Res<bool> {
    let pad = check_pad(pad)?;
    let board = lib.board(d.board);
    let mut bus = board.lock();
    let mut present = |s: Option<u8>| -> Res<bool> {
        let a = Address::new(pad, s).map_err(|_| Fail::code(EARG))?;
        bus.listener_present(a)
    };
    match sad {
        ALL_SAD => {
            if present(None)? {
                return Ok(true);
            }
            for s in 0..=30 {
                if present(Some(s))? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        s => present(check_sad(s)?),
    }
}

/// `iblines`: the line status word (every line valid).
pub fn lines(lib: &Library, d: &Desc) -> Res<i16> {
    let mut bus = lib.board(d.board).lock();
    let l = bus.lines()?;
    drop(bus);
    let mut v = VALID_ALL;
    for (on, bit) in [
        (l.dav, BUS_DAV),
        (l.ndac, BUS_NDAC),
        (l.nrfd, BUS_NRFD),
        (l.ifc, BUS_IFC),
        (l.ren, BUS_REN),
        (l.srq, BUS_SRQ),
        (l.atn, BUS_ATN),
        (l.eoi, BUS_EOI),
    ] {
        if on {
            v |= bit;
        }
    }
    Ok(v as u16 as i16)
}

/// Serial-polls the device of `d` when SRQ is asserted and keeps its status byte if it
/// requests service (the library's automatic serial polling).
fn autopoll(lib: &Library, d: &Desc) {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    let a = d.address();
    // "RQS will only be set if you have automatic serial polling enabled" (linux-gpib).
    if !bus.autopolls() || !bus.srq() || bus.spoll.get(&a).is_some_and(|q| !q.is_empty()) {
        return;
    }
    if bus.use_timeout(code_timeout(d.s.spoll_tmo)).is_err() {
        return;
    }
    if let Ok(stb) = bus.serial_poll(a) {
        if stb & 0x40 != 0 {
            bus.spoll.entry(a).or_default().push_back(stb);
        }
    }
}

/// Locks a descriptor (a panic elsewhere leaves it usable).
pub fn lock_desc(slot: &Mutex<Desc>) -> MutexGuard<'_, Desc> {
    slot.lock().unwrap_or_else(|p| p.into_inner())
}

/// `ibwait`: waits until a bit of `mask` is set in the descriptor's status, or (with
/// TIMO in the mask) for the descriptor's timeout, in wall time. A completed
/// asynchronous I/O is resynchronized into the calling thread's `Async*` values.
///
/// The descriptor is locked only to look at it, not while waiting: another thread can
/// use it (the board descriptor, for instance) to make the condition come true.
pub fn wait(lib: &Library, slot: &Mutex<Desc>, mask: i32) -> Res {
    let (limit, is_board) = {
        let mut d = lock_desc(slot);
        if mask == 0 {
            return Ok(None);
        }
        let allowed = if d.is_board {
            BOARD_STATUS_MASK
        } else {
            DEVICE_STATUS_MASK
        };
        if mask & !allowed != 0 {
            return Err(Fail::code(EARG));
        }
        if let Some(v) = d.pending.take() {
            status::set_async(v);
            d.end = v.sta & END != 0;
            if v.sta & ERR != 0 {
                return Err(Fail {
                    iberr: v.err,
                    count: Some(v.cntl),
                    timo: v.sta & TIMO != 0,
                });
            }
            return Ok(Some(v.cntl));
        }
        (d.s.timeout(), d.is_board)
    };
    let board = lock_desc(slot).board;
    let wall = lib.board(board).lock().waits_in_wall_time();
    let srq_bit = if is_board { SRQI } else { RQS };
    let done = |d: &Desc| {
        if !is_board && mask & RQS != 0 {
            autopoll(lib, d);
        }
        lib.status(d) & mask & !TIMO != 0
    };
    // With TIMO in the mask, the wait ends after the timeout, if there is one.
    let limit = limit.duration().filter(|_| mask & TIMO != 0);
    if let Some(limit) = limit.filter(|_| !wall && mask & srq_bit != 0) {
        if done(&lock_desc(slot)) {
            return Ok(None);
        }
        // An instrument event is due before the timeout (a measurement that ends, an
        // operation that completes): wait for it on the simulator's clock, which jumps
        // to it at once (the 200 ms of a measurement take no wall time).
        let due = lib.host.as_ref().and_then(SimHost::next_event);
        let now = lib.host.as_ref().map_or(Duration::ZERO, SimHost::now);
        if due.is_some_and(|t| t <= now.saturating_add(limit)) {
            lib.board(board).lock().wait_srq(limit);
            let mut d = lock_desc(slot);
            if !done(&d) {
                d.timed_out = true;
            }
            return Ok(None);
        }
    }
    // Nothing scheduled can bring the condition: only another thread's call can. Wait
    // in wall time (the descriptor unlocked), and let the simulator's clock wait too.
    let start = Instant::now();
    loop {
        {
            let mut d = lock_desc(slot);
            if done(&d) {
                return Ok(None);
            }
            if let Some(limit) = limit.filter(|l| start.elapsed() >= *l) {
                d.timed_out = true;
                drop(d);
                if !wall {
                    lib.board(board).lock().delay(limit);
                }
                return Ok(None);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `ibstop`: resynchronizes (and so ends) a pending asynchronous I/O.
pub fn stop(d: &mut Desc) -> Res {
    if let Some(v) = d.pending.take() {
        status::set_async(v);
    }
    Ok(None)
}

// ---------------------------------------------------------------------------------
// Settings.
// ---------------------------------------------------------------------------------

/// `ibtmo`.
pub fn tmo(d: &mut Desc, v: i32) -> Res {
    d.s.device.timeout = Timeout::from_linux_gpib_code(check_timeout_code(v)?);
    Ok(None)
}

/// `ibeos`.
pub fn eos(d: &mut Desc, v: i32) -> Res {
    d.s.set_eos(check_eos(v)?);
    Ok(None)
}

/// `ibpad`: a device's new primary address; a board's cannot change here.
pub fn pad(d: &mut Desc, v: i32) -> Res {
    let p = check_pad(v)?;
    if d.is_board && p != d.s.pad {
        return Err(Fail::code(ECAP));
    }
    d.s.pad = p;
    Ok(None)
}

/// `ibsad`: a device's new secondary address; a board has none here.
pub fn sad(d: &mut Desc, v: i32) -> Res {
    let s = check_sad(v)?;
    if d.is_board && s.is_some() {
        return Err(Fail::code(ECAP));
    }
    d.s.sad = s;
    Ok(None)
}

/// `ibbna`: moves a device descriptor to the board called `name`.
pub fn bna(lib: &Library, d: &mut Desc, name: &str) -> Res {
    let b = lib.board_named(name).ok_or(Fail::code(ENEB))?;
    d.board = b.index;
    Ok(None)
}

fn bool_opt(v: i32) -> bool {
    v != 0
}

/// `ibask`.
pub fn ask(lib: &Library, d: &Desc, option: i32) -> Res<i32> {
    let s = &d.s;
    let common = match option {
        OPT_PAD => Some(i32::from(s.pad)),
        OPT_SAD => Some(s.sad.map_or(0, |x| i32::from(x) + 0x60)),
        OPT_TMO => Some(s.tmo()),
        OPT_EOT => Some(i32::from(s.eot())),
        OPT_EOS_RD => Some(s.eos_mode().linux_gpib() & REOS),
        OPT_EOS_WRT => Some(s.eos_mode().linux_gpib() & XEOS),
        OPT_EOS_CMP => Some(s.eos_mode().linux_gpib() & BIN),
        OPT_EOS_CHAR => Some(i32::from(s.eos_mode().byte)),
        OPT_READ_ADJUST | OPT_WRITE_ADJUST => Some(0),
        OPT_END_BIT_IS_NORMAL => Some(1),
        OPT_BNA => Some(d.board as i32),
        _ => None,
    };
    if let Some(v) = common {
        return Ok(v);
    }
    let v = if d.is_board {
        match option {
            OPT_PPC => s.ppc,
            OPT_AUTOPOLL => i32::from(lib.board(d.board).lock().autopolls()),
            OPT_CICPROT | OPT_IRQ | OPT_HS_CABLE_LENGTH => 0,
            OPT_SC | OPT_SRE | OPT_7BIT_EOS => 1,
            OPT_PP2 => i32::from(s.pp2),
            OPT_TIMING => lib.board(d.board).lock().tuning(|t| t.t1())?.code(),
            OPT_DMA => i32::from(s.dma),
            OPT_EVENT_QUEUE => i32::from(s.event_queue),
            // linux-gpib: SPOLL detection is always on; LLO on open never.
            OPT_SPOLL_BIT => 1,
            OPT_SEND_LLO => 0,
            OPT_PPOLL_TIME => s.ppoll_tmo,
            OPT_IST => i32::from(s.ist),
            OPT_RSV => s.rsv,
            _ => return Err(Fail::code(EARG)),
        }
    } else {
        match option {
            OPT_READDR => i32::from(s.readdr),
            OPT_SPOLL_TIME => s.spoll_tmo,
            OPT_UN_ADDR => i32::from(s.unaddr),
            _ => return Err(Fail::code(EARG)),
        }
    };
    Ok(v)
}

/// `ibconfig`.
pub fn config(lib: &Library, d: &mut Desc, option: i32, v: i32) -> Res {
    match option {
        OPT_PAD => return pad(d, v),
        OPT_SAD => return sad(d, v),
        OPT_TMO => return tmo(d, v),
        OPT_EOT => d.s.device.eot = Some(bool_opt(v)),
        OPT_EOS_RD => d.s.eos_mut().reos = v != 0,
        OPT_EOS_WRT => d.s.eos_mut().xeos = v != 0,
        OPT_EOS_CMP => d.s.eos_mut().bin = v != 0,
        OPT_EOS_CHAR => {
            let c = u8::try_from(v).map_err(|_| Fail::code(EARG))?;
            d.s.eos_mut().byte = c;
        }
        // Byte swapping is not supported (as in libgpib).
        OPT_READ_ADJUST | OPT_WRITE_ADJUST if v != 0 => return Err(Fail::code(ECAP)),
        OPT_READ_ADJUST | OPT_WRITE_ADJUST => {}
        // linux-gpib: "no support for END on EOI only yet".
        OPT_END_BIT_IS_NORMAL if v == 0 => return Err(Fail::code(ECAP)),
        OPT_END_BIT_IS_NORMAL => {}
        OPT_BNA if !d.is_board => {
            let b = usize::try_from(v)
                .ok()
                .filter(|&b| b < lib.boards.len())
                .ok_or(Fail::code(ENEB))?;
            d.board = b;
        }
        _ if d.is_board => match option {
            OPT_PPC => return ppc(lib, d, v),
            OPT_AUTOPOLL => {
                lib.board(d.board)
                    .lock()
                    .tuning(|t| t.set_autopoll(v != 0))?;
            }
            // linux-gpib: no pass control protocol, no operation without interrupts.
            OPT_CICPROT if v != 0 => return Err(Fail::code(ECAP)),
            OPT_IRQ if v == 0 => return Err(Fail::code(ECAP)),
            OPT_CICPROT | OPT_IRQ => {}
            // Giving up system control or HS488 cannot be simulated.
            OPT_SC if v == 0 => return Err(Fail::code(ECAP)),
            OPT_SC => {}
            OPT_HS_CABLE_LENGTH if v != 0 => return Err(Fail::code(ECAP)),
            OPT_HS_CABLE_LENGTH => {}
            OPT_SRE => return sre(lib, d, v != 0),
            OPT_PP2 => d.s.pp2 = bool_opt(v),
            OPT_TIMING => {
                let t1 = T1Delay::from_code(v).ok_or(Fail::code(EARG))?;
                lib.board(d.board).lock().tuning(|t| t.set_t1(t1))?;
            }
            // linux-gpib: "disabling DMA not supported".
            OPT_DMA if v == 0 => return Err(Fail::code(ECAP)),
            OPT_DMA => d.s.dma = true,
            OPT_EVENT_QUEUE => d.s.event_queue = bool_opt(v),
            OPT_SPOLL_BIT => {}
            // linux-gpib: "sending local lockout on device open not implemented".
            OPT_SEND_LLO if v != 0 => return Err(Fail::code(ECAP)),
            OPT_SEND_LLO => {}
            OPT_PPOLL_TIME => d.s.ppoll_tmo = check_timeout_code(v)?,
            OPT_IST => d.s.ist = bool_opt(v),
            OPT_RSV => d.s.rsv = u8::try_from(v).map_err(|_| Fail::code(EARG))?.into(),
            _ => return Err(Fail::code(EARG)),
        },
        _ => match option {
            OPT_READDR => d.s.readdr = bool_opt(v),
            OPT_SPOLL_TIME => d.s.spoll_tmo = check_timeout_code(v)?,
            OPT_UN_ADDR => d.s.unaddr = bool_opt(v),
            _ => return Err(Fail::code(EARG)),
        },
    }
    Ok(None)
}

// ---------------------------------------------------------------------------------
// IEEE 488.2 calls (on a board descriptor).
// ---------------------------------------------------------------------------------

/// `FindLstn`: for each primary address, the address itself when a device listens
/// there, else every secondary address where one does (EARG, with the index in ibcnt,
/// for an entry that is not a primary address).
pub fn find_lstn(lib: &Library, d: &mut Desc, pads: &[u16]) -> Res<Vec<u16>> {
    let mut found = Vec::new();
    for (i, &a) in pads.iter().enumerate() {
        let pad = (a & 0xff) as i32;
        if a >> 8 != 0 || pad > 30 {
            return Err(Fail::code(EARG).counted(i));
        }
        if ln(lib, d, pad, NO_SAD)? {
            found.push(a & 0xff);
        } else {
            for s in 0..=30u16 {
                if ln(lib, d, pad, i32::from(0x60 + s))? {
                    found.push((a & 0xff) | ((0x60 + s) << 8));
                }
            }
        }
    }
    Ok(found)
}

/// Runs `f` with the board of `d` locked and `d`'s I/O timeout applied, so that the
/// bus operations of one call are never interleaved with another thread's.
fn on_bus<T>(
    lib: &Library,
    d: &mut Desc,
    f: impl FnOnce(&mut BoardBus, &mut Desc) -> Res<T>,
) -> Res<T> {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    io_timeout(&mut bus, d)?;
    f(&mut bus, d)
}

/// `SendSetup`.
pub fn send_setup(lib: &Library, d: &mut Desc, to: &[Address]) -> Res {
    if to.is_empty() {
        return Err(Fail::code(EARG));
    }
    on_bus(lib, d, |bus, _| bus.send_setup(to))?;
    Ok(None)
}

fn data_bytes_on(bus: &mut BoardBus, d: &mut Desc, data: &[u8], eotmode: i32) -> Res {
    d.end = false;
    let n = match eotmode {
        NULLEND => write_data(bus, d, data, false)?,
        DABEND => write_data(bus, d, data, true)?,
        NLEND => {
            let n = write_data(bus, d, data, false)?;
            let nl = bus.write(b"\n", true).map_err(|e| data_fail(&e, n))?;
            d.end = true;
            n + nl
        }
        _ => return Err(Fail::code(EARG)),
    };
    Ok(Some(n as i64))
}

/// `SendDataBytes`: writes with `eotmode` NULLend, DABend or NLend.
pub fn send_data_bytes(lib: &Library, d: &mut Desc, data: &[u8], eotmode: i32) -> Res {
    on_bus(lib, d, |bus, d| data_bytes_on(bus, d, data, eotmode))
}

/// `SendList` / `Send`.
pub fn send_list(lib: &Library, d: &mut Desc, to: &[Address], data: &[u8], eotmode: i32) -> Res {
    if to.is_empty() || !matches!(eotmode, NULLEND | DABEND | NLEND) {
        return Err(Fail::code(EARG));
    }
    on_bus(lib, d, |bus, d| {
        bus.send_setup(to)?;
        data_bytes_on(bus, d, data, eotmode)
    })
}

/// `ReceiveSetup`.
pub fn receive_setup(lib: &Library, d: &mut Desc, from: Address) -> Res {
    on_bus(lib, d, |bus, _| bus.receive_setup(from))?;
    Ok(None)
}

fn termination_eos(termination: i32) -> Res<Option<Eos>> {
    match termination {
        STOPEND => Ok(None),
        0..=0xff => Ok(Some(Eos {
            byte: termination as u8,
            eight_bit: true,
        })),
        _ => Err(Fail::code(EARG)),
    }
}

/// `RcvRespMsg`: reads until END, or the byte `termination` (0..=255; STOPend: END only).
pub fn rcv_resp_msg(lib: &Library, d: &mut Desc, buf: &mut [u8], termination: i32) -> Res {
    let eos = termination_eos(termination)?;
    on_bus(lib, d, |bus, d| {
        let n = read_data(bus, d, buf, eos)?;
        Ok(Some(n as i64))
    })
}

/// `Receive`.
pub fn receive(lib: &Library, d: &mut Desc, from: Address, buf: &mut [u8], term: i32) -> Res {
    let eos = termination_eos(term)?;
    on_bus(lib, d, |bus, d| {
        bus.receive_setup(from)?;
        let n = read_data(bus, d, buf, eos)?;
        Ok(Some(n as i64))
    })
}

/// Universal or addressed commands on a board: `list` empty sends `universal` alone;
/// otherwise MTA, UNL, the listeners, then `addressed`.
fn list_command_on(
    bus: &mut BoardBus,
    list: &[Address],
    universal: &[u8],
    addressed: &[u8],
) -> Res<()> {
    if list.is_empty() {
        bus.command(universal)
    } else {
        bus.send_setup(list)?;
        bus.command(addressed)
    }
}

fn list_command(
    lib: &Library,
    d: &mut Desc,
    list: &[Address],
    universal: &[u8],
    addressed: &[u8],
) -> Res {
    on_bus(lib, d, |bus, _| {
        list_command_on(bus, list, universal, addressed)
    })?;
    Ok(None)
}

fn clear_on(bus: &mut BoardBus, list: &[Address]) -> Res<()> {
    list_command_on(bus, list, &[codes::DCL], &[codes::SDC])?;
    if list.is_empty() {
        bus.spoll.clear();
    } else {
        for a in list {
            bus.spoll.remove(a);
        }
    }
    Ok(())
}

/// `DevClearList` (`DevClear`): SDC to the listed devices, DCL to all for an empty list.
pub fn dev_clear_list(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    on_bus(lib, d, |bus, _| clear_on(bus, list))?;
    Ok(None)
}

/// `TriggerList` (`Trigger`): GET to the listed devices, or to whoever listens.
pub fn trigger_list(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    list_command(lib, d, list, &[codes::GET], &[codes::GET])
}

/// `EnableLocal`: GTL to the listed devices; REN off for an empty list.
pub fn enable_local(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    if list.is_empty() {
        return sre(lib, d, false);
    }
    list_command(lib, d, list, &[], &[codes::GTL])
}

fn remote_on(bus: &mut BoardBus, list: &[Address]) -> Res<()> {
    bus.remote_enable(true)?;
    if !list.is_empty() {
        bus.send_setup(list)?;
    }
    Ok(())
}

/// `EnableRemote`: REN on, then the listed devices addressed to listen (remote).
pub fn enable_remote(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    on_bus(lib, d, |bus, _| remote_on(bus, list))?;
    Ok(None)
}

/// `SetRWLS`: the listed devices in remote with lockout.
pub fn set_rwls(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    on_bus(lib, d, |bus, _| {
        remote_on(bus, list)?;
        bus.command(&[codes::LLO])
    })?;
    Ok(None)
}

/// `SendLLO`.
pub fn send_llo(lib: &Library, d: &mut Desc) -> Res {
    on_bus(lib, d, |bus, _| bus.command(&[codes::LLO]))?;
    Ok(None)
}

/// `PPollConfig`: the device answers parallel polls on DIO `line` (1..=8) with `sense`.
pub fn ppoll_config(lib: &Library, d: &mut Desc, a: Address, line: i32, sense: i32) -> Res {
    if !(1..=8).contains(&line) {
        return Err(Fail::code(EARG));
    }
    let ppe = codes::PPE_BASE | if sense != 0 { 0x08 } else { 0 } | (line - 1) as u8;
    list_command(lib, d, &[a], &[], &[codes::PPC, ppe])
}

/// `PPollUnconfig`: PPD to the listed devices, PPU to all for an empty list.
pub fn ppoll_unconfig(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    list_command(lib, d, list, &[codes::PPU], &[codes::PPC, codes::PPD])
}

/// `ReadStatusByte`.
pub fn read_status_byte(lib: &Library, d: &mut Desc, a: Address) -> Res<u8> {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    if let Some(b) = bus.spoll.get_mut(&a).and_then(VecDeque::pop_front) {
        return Ok(b);
    }
    bus.use_timeout(code_timeout(d.s.spoll_tmo))?;
    bus.serial_poll(a)
}

/// `AllSPoll`: the status bytes of the listed devices; on error ibcnt is the index.
pub fn all_spoll(lib: &Library, d: &mut Desc, list: &[Address]) -> Res<Vec<u8>> {
    let mut out = Vec::with_capacity(list.len());
    for (i, &a) in list.iter().enumerate() {
        out.push(read_status_byte(lib, d, a).map_err(|f| Fail {
            count: Some(i as i64),
            ..f
        })?);
    }
    Ok(out)
}

/// `FindRQS`: polls the listed devices in order until one requests service; returns its
/// index and status byte. None does: ETAB.
pub fn find_rqs(lib: &Library, d: &mut Desc, list: &[Address]) -> Res<(usize, u8)> {
    for (i, &a) in list.iter().enumerate() {
        let stb = read_status_byte(lib, d, a).map_err(|f| Fail {
            count: Some(i as i64),
            ..f
        })?;
        if stb & 0x40 != 0 {
            return Ok((i, stb));
        }
    }
    Err(Fail::code(ETAB).counted(list.len()))
}

/// `TestSRQ`.
pub fn test_srq(lib: &Library, d: &Desc) -> bool {
    lib.board(d.board).lock().srq()
}

/// `WaitSRQ`: waits for SRQ for the board's timeout (wall time); true when it came.
pub fn wait_srq(lib: &Library, slot: &Mutex<Desc>) -> Res<bool> {
    wait(lib, slot, SRQI | TIMO)?;
    Ok(test_srq(lib, &lock_desc(slot)))
}

/// `ResetSys`: REN, IFC, DCL, then `*RST` to the listed devices.
pub fn reset_sys(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    on_bus(lib, d, |bus, d| {
        bus.remote_enable(true)?;
        bus.interface_clear()?;
        clear_on(bus, &[])?;
        if !list.is_empty() {
            bus.send_setup(list)?;
            data_bytes_on(bus, d, b"*RST", NLEND)?;
        }
        Ok(None)
    })
}

/// `TestSys`: `*TST?` to each listed device; the answers, and how many are not 0.
pub fn test_sys(lib: &Library, d: &mut Desc, list: &[Address]) -> Res<(Vec<i16>, usize)> {
    let mut results = Vec::with_capacity(list.len());
    for (i, &a) in list.iter().enumerate() {
        let v = on_bus(lib, d, |bus, d| {
            bus.send_setup(&[a])?;
            data_bytes_on(bus, d, b"*TST?", NLEND)?;
            bus.receive_setup(a)?;
            let mut buf = [0u8; 64];
            let n = read_data(bus, d, &mut buf, None)?;
            let text = String::from_utf8_lossy(&buf[..n]);
            Ok(text.trim().parse::<i16>().unwrap_or(-1))
        })
        .map_err(|f| Fail {
            count: Some(i as i64),
            ..f
        })?;
        results.push(v);
    }
    let failing = results.iter().filter(|&&v| v != 0).count();
    Ok((results, failing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulator_errors_become_libgpib_codes() {
        use gpib_sim::Error as E;
        let t = E::Timeout {
            operation: "read",
            timeout: Timeout::After(Duration::from_secs(1)),
            transferred: 4,
        };
        assert_eq!(
            fail_from(&t, Call::Read),
            Fail {
                iberr: EABO,
                count: Some(4),
                timo: true
            }
        );
        let c = E::CommandTimeout {
            transferred: 1,
            total: 3,
        };
        assert_eq!(fail_from(&c, Call::Command).iberr, EBUS);
        assert!(fail_from(&c, Call::Command).timo);
        assert_eq!(
            fail_from(&E::NoListener { transferred: 0 }, Call::Read).iberr,
            ENOL
        );
        assert_eq!(
            fail_from(&E::NotControllerInCharge, Call::Other).iberr,
            ECIC
        );
        assert_eq!(
            fail_from(&E::SrqStuck { polled: vec![] }, Call::Other).iberr,
            ESRQ
        );
        let bus = E::BusConflict {
            detail: "x".into(),
            transferred: 0,
        };
        assert_eq!(fail_from(&bus, Call::Read).iberr, EBUS);
        // EADR comes from the simulator's own NotAddressed, not from a guess.
        let not_addressed = E::NotAddressed("not addressed to listen".into());
        assert_eq!(fail_from(&not_addressed, Call::Read).iberr, EADR);
        let arg = E::InvalidArgument("bad".into());
        assert_eq!(fail_from(&arg, Call::Read).iberr, EARG);
        assert_eq!(fail_from(&arg, Call::Other).iberr, EARG);
        assert_eq!(
            fail_from(&E::unsupported("x", "sim"), Call::Other).iberr,
            ECAP
        );
        let io = E::Io(std::io::Error::from_raw_os_error(13));
        assert_eq!(
            fail_from(&io, Call::Other),
            Fail {
                iberr: EDVR,
                count: Some(13),
                timo: false
            }
        );
        assert_eq!(fail_from(&E::Protocol("?".into()), Call::Read).iberr, EDVR);
    }

    #[test]
    fn addresses_in_4882_form() {
        assert_eq!(decode_addr(22), Some(Address::new(22, None).unwrap()));
        assert_eq!(
            decode_addr(5 | (0x60 << 8)),
            Some(Address::new(5, Some(0)).unwrap())
        );
        assert_eq!(
            decode_addr(5 | (0x7E << 8)),
            Some(Address::new(5, Some(30)).unwrap())
        );
        assert_eq!(decode_addr(31), None);
        assert_eq!(decode_addr(5 | (0x20 << 8)), None);
        assert_eq!(decode_addr(NOADDR), None);
        for a in [3u16, 30, 7 | (0x61 << 8)] {
            assert_eq!(encode_addr(decode_addr(a).unwrap()), a);
        }
        assert_eq!(
            decode_list(&[1, 2, 40]),
            Err(Fail {
                iberr: EARG,
                count: Some(2),
                timo: false
            })
        );
        assert_eq!(check_sad(0), Ok(None));
        assert_eq!(check_sad(0x60), Ok(Some(0)));
        assert_eq!(check_sad(5), Err(Fail::code(EARG)));
        assert_eq!(check_pad(31), Err(Fail::code(EARG)));
    }

    #[test]
    fn settings_eos_for_reads() {
        let mut s = Settings::device(1, None, 11, true, 0);
        assert_eq!(s.read_eos(), None);
        s.set_eos(REOS | 0x0a);
        assert_eq!(
            s.read_eos(),
            Some(Eos {
                byte: b'\n',
                eight_bit: false
            })
        );
        s.set_eos(REOS | BIN | b',' as i32);
        assert_eq!(
            s.read_eos(),
            Some(Eos {
                byte: b',',
                eight_bit: true
            })
        );
        // XEOS alone does not end reads.
        s.set_eos(XEOS | 0x0a);
        assert_eq!(s.read_eos(), None);
    }

    #[test]
    fn a_bad_configuration_leaves_no_boards() {
        let lib = Library::load("/no/such/config.toml");
        assert!(lib.boards.is_empty());
        assert!(lib.load_error.as_deref().unwrap().contains("bench"));
        assert_eq!(dev(&lib, 0, 22, 0, 11, 1, 0), Err(Fail::code(ENEB)));
        assert_eq!(find(&lib, "gpib0").unwrap_err().iberr, EDVR);
    }

    #[test]
    fn descriptors_start_at_16_and_are_reused() {
        let lib = Library::load("bench");
        assert_eq!(lib.boards.len(), 1);
        assert!(lib.get(0).is_some() && lib.get(1).is_none());
        let a = dev(&lib, 0, 22, 0, 11, 1, 0).unwrap();
        let b = dev(&lib, 0, 11, 0x60, 11, 1, 0).unwrap();
        assert_eq!((a, b), (16, 17));
        let da = lib.get(a).unwrap();
        onl(&lib, a, &mut da.lock().unwrap(), 0).unwrap();
        assert!(lib.get(a).is_none());
        assert_eq!(dev(&lib, 0, 5, 0, 11, 1, 0).unwrap(), 16);
        // Board descriptors survive ibonl(ud, 0).
        let d0 = lib.get(0).unwrap();
        onl(&lib, 0, &mut d0.lock().unwrap(), 0).unwrap();
        assert!(lib.get(0).is_some());
        // Bad arguments.
        assert_eq!(dev(&lib, 0, 31, 0, 11, 1, 0), Err(Fail::code(EARG)));
        assert_eq!(dev(&lib, 0, 1, 5, 11, 1, 0), Err(Fail::code(EARG)));
        assert_eq!(dev(&lib, 0, 1, 0, 18, 1, 0), Err(Fail::code(EARG)));
        assert_eq!(dev(&lib, 0, 1, 0, 11, 1, 0x2000), Err(Fail::code(EARG)));
        assert_eq!(dev(&lib, 3, 1, 0, 11, 1, 0), Err(Fail::code(ENEB)));
        let f = find(&lib, "gpib0").unwrap();
        assert!(f >= 16 && lib.get(f).unwrap().lock().unwrap().is_board);
    }

    #[test]
    fn status_words_of_boards_and_devices() {
        let lib = Library::load("bench");
        let b = lib.get(0).unwrap();
        let mut b = b.lock().unwrap();
        assert_eq!(lib.status(&b), CMPL | CIC);
        let ud = dev(&lib, 0, 22, 0, 13, 1, 0).unwrap();
        let slot = lib.get(ud).unwrap();
        let mut d = slot.lock().unwrap();
        assert_eq!(lib.status(&d), CMPL);
        wrt(&lib, &mut d, b"*SRE 16;*IDN?\n").unwrap();
        assert_eq!(lib.status(&d), CMPL | END);
        // MAV with *SRE 16: SRQ, seen on the board; the device's status gets RQS
        // once automatic polling (switched on: linux-gpib's boards open without it)
        // took its status byte.
        assert_eq!(lib.status(&b) & SRQI, SRQI);
        config(&lib, &mut b, OPT_AUTOPOLL, 1).unwrap();
        drop(d);
        wait(&lib, &slot, RQS | TIMO).unwrap();
        let mut d = slot.lock().unwrap();
        assert_eq!(lib.status(&d) & RQS, RQS);
        assert_eq!(rsp(&lib, &mut d).unwrap() & 0x50, 0x50);
        assert_eq!(lib.status(&d) & RQS, 0);
        let mut buf = [0u8; 64];
        let n = rd(&lib, &mut d, &mut buf).unwrap().unwrap() as usize;
        assert_eq!(&buf[..n], b"SIMULATED,SCPI-DMM,0,1.0\n");
        assert_eq!(lib.status(&d), CMPL | END);
        assert_eq!(lib.status(&b) & SRQI, 0);
        // The board was last addressed to listen.
        assert_eq!(lib.status(&b) & (LACS | TACS), LACS);
        // A timeout: TIMO, and the count of what arrived.
        let f = rd(&lib, &mut d, &mut buf).unwrap_err();
        assert_eq!((f.iberr, f.count, f.timo), (EABO, Some(0), true));
        sic(&lib, &mut b).unwrap();
        assert_eq!(lib.status(&b) & (LACS | TACS), 0);
    }

    #[test]
    fn ibwrtf_sends_regular_files_only() {
        let lib = Library::load("bench");
        let ud = dev(&lib, 0, 22, 0, 11, 1, 0).unwrap();
        let slot = lib.get(ud).unwrap();
        let mut d = slot.lock().unwrap();
        // A character device (endless for /dev/zero) or a folder: EFSO, not read.
        for path in ["/dev/null", "/dev/zero", "/"] {
            let f = wrtf(&lib, &mut d, path).unwrap_err();
            assert_eq!(f.iberr, EFSO, "{path}");
        }
        // A regular file is sent.
        let p = std::env::temp_dir().join(format!("gpib-wrtf-{}.txt", std::process::id()));
        std::fs::write(&p, b"*IDN?\n").unwrap();
        assert_eq!(wrtf(&lib, &mut d, p.to_str().unwrap()), Ok(Some(6)));
        let _ = std::fs::remove_file(&p);
    }
}
