//! The VXI-11 gateway: links, locks, the core channel's procedures over a [`Bus`],
//! the abort channel, and SRQ sent on clients' interrupt channels.

use std::collections::{BTreeMap, HashMap};
use std::io::BufWriter;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::locks::{deadline_after, DeviceLocks, Owner, Wait};
use super::rpc_server::{serve_records, Outcome};
use super::srq_edge::SrqEdges;
use super::vxi11_trace;
use super::{ServeOptions, Slot};
use crate::address::Address;
use crate::backend::vxi11::proto::{self, err, flags, procs, reason, DeviceName};
use crate::backend::{BackendExt, Eos, ReadEnd};
use crate::bus::Bus;
use crate::error::{Error, ErrorKind};
use crate::hislip::QueryScan;
use crate::rpc::msg::{self, CallHeader};
use crate::rpc::record::{self, Limits};
use crate::rpc::{XdrReader, XdrWriter};

mod procedures;

/// Bytes moved per bus call while answering one `device_read`.
const PIECE: usize = 64 * 1024;
/// Most links one connection may hold.
const MAX_LINKS_PER_CONN: usize = 64;

struct LinkInfo {
    conn: u64,
    target: Target,
    srq: Option<Vec<u8>>,
    /// A call on this link is being served (an abort may end it).
    in_flight: bool,
    /// `device_abort` came while a call was in flight: that call ends with error 23.
    aborted: bool,
    /// The last `device_read` stopped before the end of the device's answer.
    mid_read: bool,
    /// The last `device_write` ended without END: the device holds part of a message.
    mid_write: bool,
    /// The message written so far: whether it asks a query (its answer is this
    /// link's to read, nobody else's call in between).
    scan: QueryScan,
}

#[derive(Default)]
struct State {
    next_lid: u32,
    links: HashMap<u32, LinkInfo>,
    /// Who holds each lock.
    locks: HashMap<Target, u32>,
    /// Interrupt channels, by connection.
    intr: HashMap<u64, IntrChannel>,
}

/// The device of a link that goes away in the middle of reading its answer or of
/// writing a message.
fn abandoned_device(l: &LinkInfo) -> Option<(u16, Address)> {
    match (l.mid_read || l.mid_write, l.target) {
        (true, Target::Device(b, a)) => Some((b, a)),
        _ => None,
    }
}

/// A connection to a client's interrupt server.
type IntrChannel = Arc<Mutex<BufWriter<TcpStream>>>;

/// What a link names: a served board's interface, or a device on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Target {
    Interface(u16),
    Device(u16, Address),
}

impl Target {
    fn board(self) -> u16 {
        match self {
            Target::Interface(b) | Target::Device(b, _) => b,
        }
    }

    /// The VXI-11 name: `gpib0`, `gpib1,5`.
    fn name(self) -> String {
        match self {
            Target::Interface(b) => format!("gpib{b}"),
            Target::Device(b, a) => proto::device_name_on(b, a),
        }
    }
}

pub(crate) struct Gateway {
    /// The served boards, by their `gpib<n>` number.
    boards: BTreeMap<u16, Bus>,
    state: Mutex<State>,
    changed: Condvar,
    max_recv: usize,
    default: Option<Address>,
    abort_port: AtomicU16,
    /// Each board's SRQ line as last seen.
    srq_was: SrqEdges,
    /// The controller's address a client set with `bus address` (`device_docmd`), by board.
    bus_address: Mutex<HashMap<u16, u8>>,
    /// Print each call with its time on the bus's clock.
    trace: bool,
    /// Device locks, shared with the HiSLIP gateway (an interface's lock is
    /// VXI-11's own, in `State::locks`).
    device_locks: Arc<DeviceLocks>,
}

fn error_code(e: &Error) -> u32 {
    match e.kind() {
        ErrorKind::Timeout => err::IO_TIMEOUT,
        ErrorKind::NoListener => err::NOT_ACCESSIBLE,
        ErrorKind::Unsupported => err::NOT_SUPPORTED,
        ErrorKind::InvalidAddress | ErrorKind::InvalidArgument => err::PARAMETER,
        _ => err::IO_ERROR,
    }
}

fn only_error(code: u32) -> Outcome {
    Outcome::Reply(proto::encode_error(code))
}

/// Whether the arguments of `proc_` start with a link id (a call an abort may end).
fn takes_link(proc_: u32) -> bool {
    matches!(
        proc_,
        procs::DEVICE_WRITE
            | procs::DEVICE_READ
            | procs::DEVICE_READSTB
            | procs::DEVICE_TRIGGER
            | procs::DEVICE_CLEAR
            | procs::DEVICE_REMOTE
            | procs::DEVICE_LOCAL
            | procs::DEVICE_LOCK
            | procs::DEVICE_DOCMD
    )
}

fn ms(v: u32) -> Duration {
    Duration::from_millis(u64::from(v))
}

impl Gateway {
    /// A gateway to `boards` (at least one), by their `gpib<n>` numbers.
    pub(crate) fn new(
        boards: BTreeMap<u16, Bus>,
        opts: &ServeOptions,
        device_locks: Arc<DeviceLocks>,
    ) -> Self {
        Self {
            boards,
            device_locks,
            state: Mutex::new(State {
                next_lid: 1,
                ..State::default()
            }),
            changed: Condvar::new(),
            max_recv: (opts.max_recv_size as usize).clamp(1024, 16 << 20),
            default: opts.default_address,
            abort_port: AtomicU16::new(0),
            srq_was: SrqEdges::default(),
            bus_address: Mutex::new(HashMap::new()),
            trace: opts.trace,
        }
    }

    pub(crate) fn set_abort_port(&self, p: u16) {
        self.abort_port.store(p, Ordering::Relaxed);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until `lid` may use its target: no other link holds the lock. Returns
    /// the target, or the error code.
    fn access(&self, conn: u64, lid: u32, fl: u32, lock_timeout: u32) -> Result<Target, u32> {
        self.wait_access(self.state(), conn, lid, fl, lock_timeout)
            .1
    }

    /// [`Gateway::access`] on the state `st`, which it gives back still held: what
    /// the caller does next (take the lock) happens in the same step as the wait.
    fn wait_access<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        conn: u64,
        lid: u32,
        fl: u32,
        lock_timeout: u32,
    ) -> (MutexGuard<'a, State>, Result<Target, u32>) {
        let deadline = Instant::now() + ms(lock_timeout);
        loop {
            let Some(l) = st.links.get_mut(&lid).filter(|l| l.conn == conn) else {
                return (st, Err(err::INVALID_LINK));
            };
            if l.aborted {
                l.aborted = false;
                return (st, Err(err::ABORT));
            }
            let t = l.target;
            if let Target::Device(b, a) = t {
                // The shared table, waited on without this gateway's state held; an
                // abort of the call (`aborted`) ends the wait.
                drop(st);
                let until = if fl & flags::WAITLOCK == 0 {
                    Instant::now()
                } else {
                    deadline
                };
                let w = self
                    .device_locks
                    .wait_access((b, a), Owner::Link(lid), until, &|| self.is_aborted(lid));
                let mut st = self.state();
                return match w {
                    Wait::Done => (st, Ok(t)),
                    Wait::Locked => (st, Err(err::LOCKED)),
                    Wait::Stopped => {
                        if let Some(l) = st.links.get_mut(&lid) {
                            l.aborted = false;
                        }
                        (st, Err(err::ABORT))
                    }
                };
            }
            match st.locks.get(&t) {
                Some(&holder) if holder != lid => {
                    let now = Instant::now();
                    if fl & flags::WAITLOCK == 0 || now >= deadline {
                        return (st, Err(err::LOCKED));
                    }
                    st = self
                        .changed
                        .wait_timeout(st, deadline - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
                _ => return (st, Ok(t)),
            }
        }
    }

    /// Holds device `t` for `lid`'s call: another client's exchange (a query and
    /// its answer) ends first, within the call's I/O timeout. An interface link
    /// (`gpib0`) holds nothing.
    fn begin(&self, lid: u32, t: Target, io_timeout: u32) -> Result<(), u32> {
        let Target::Device(b, a) = t else {
            return Ok(());
        };
        let until = Instant::now() + ms(io_timeout.max(1));
        if self
            .device_locks
            .holds
            .begin((b, a), Owner::Link(lid), until, &|| self.is_aborted(lid))
        {
            return Ok(());
        }
        let mut st = self.state();
        match st.links.get_mut(&lid) {
            Some(l) if l.aborted => {
                l.aborted = false;
                Err(err::ABORT)
            }
            _ => Err(err::IO_TIMEOUT),
        }
    }

    /// Ends `lid`'s call on `t`; with `more` (a query's answer to read, a message or
    /// an answer half through) the link keeps the device for its next call.
    fn end(&self, lid: u32, t: Target, more: bool) {
        if let Target::Device(b, a) = t {
            self.device_locks.holds.end((b, a), Owner::Link(lid), more);
        }
    }

    /// Whether a call in flight on `lid` has been aborted (`device_abort`).
    fn is_aborted(&self, lid: u32) -> bool {
        self.state().links.get(&lid).is_some_and(|l| l.aborted)
    }

    /// The bus of board `b` (one the gateway serves: links name no other).
    fn bus(&self, b: u16) -> Result<&Bus, u32> {
        self.boards.get(&b).ok_or(err::INVALID_ADDRESS)
    }

    fn device(&self, t: Target, io_timeout: u32) -> Result<crate::Device, u32> {
        let Target::Device(b, a) = t else {
            return Err(err::NOT_SUPPORTED);
        };
        let mut d = self.bus(b)?.device(a).map_err(|_| err::INVALID_ADDRESS)?;
        d.set_timeout(Some(crate::Timeout::After(ms(io_timeout.max(1)))));
        d.set_write_terminator(None);
        Ok(d)
    }

    /// Destroys every link of `conn`, releasing its locks, and its interrupt channel.
    /// A device whose answer the connection was reading is cleared: nobody is left to
    /// read the rest (a `BLOCK?` ramp, say), so its memory goes. So is one the
    /// connection was writing a message to (its last write without END): the next
    /// client's message would otherwise be taken as the rest of it.
    ///
    /// The devices are cleared before the links and their locks go: a client waiting
    /// for the lock gets the device clean (cleared after, its own message could go
    /// with the other's half).
    fn drop_conn(&self, conn: u64) {
        let abandoned: Vec<(u16, Address)> = self
            .state()
            .links
            .values()
            .filter(|l| l.conn == conn)
            .filter_map(abandoned_device)
            .collect();
        self.clear_abandoned(abandoned);
        let mut st = self.state();
        let State { links, locks, .. } = &mut *st;
        let gone: Vec<u32> = links
            .iter()
            .filter(|(_, l)| l.conn == conn)
            .map(|(&lid, _)| lid)
            .collect();
        links.retain(|_, l| l.conn != conn);
        locks.retain(|_, holder| links.contains_key(holder));
        st.intr.remove(&conn);
        drop(st);
        for lid in gone {
            self.device_locks.release_all(Owner::Link(lid));
        }
        self.changed.notify_all();
    }

    /// Clears the devices left half read or half written by links that are gone.
    fn clear_abandoned(&self, devices: impl IntoIterator<Item = (u16, Address)>) {
        for (b, a) in devices {
            if let Some(d) = self.boards.get(&b).and_then(|bus| bus.device(a).ok()) {
                let _ = d.clear();
            }
        }
    }

    /// After an operation on board `board`: when its SRQ has just been asserted,
    /// tells every link to that board that enabled it, on its connection's interrupt
    /// channel (no reply expected).
    fn check_srq(&self, board: u16) {
        let targets: Vec<(Vec<u8>, IntrChannel)> = {
            let st = self.state();
            if st.intr.is_empty() {
                return;
            }
            st.links
                .values()
                .filter(|l| l.target.board() == board)
                .filter_map(|l| Some((l.srq.clone()?, st.intr.get(&l.conn)?.clone())))
                .collect()
        };
        if targets.is_empty() {
            return;
        }
        let Ok(bus) = self.bus(board) else { return };
        if !self.srq_was.rising(board, bus.srq().unwrap_or(false)) {
            return;
        }
        for (handle, ch) in targets {
            let mut w = XdrWriter::new();
            w.opaque(&handle);
            let call = msg::encode_call(
                CallHeader {
                    xid: 0,
                    prog: proto::DEVICE_INTR,
                    vers: proto::VERSION,
                    proc_: procs::DEVICE_INTR_SRQ,
                },
                w.as_bytes(),
            );
            let mut ch = ch.lock().unwrap_or_else(|p| p.into_inner());
            if let Err(e) = record::write_record(&mut *ch, &call, 4096) {
                log::info!("interrupt channel: {e}");
            }
        }
    }

    fn call(&self, conn: u64, peer: SocketAddr, proc_: u32, args: &[u8]) -> Outcome {
        let lid = (takes_link(proc_) || proc_ == procs::DESTROY_LINK)
            .then(|| XdrReader::new(args).u32().ok())
            .flatten();
        // The link's target, when the call names one of this connection's links.
        let target = lid.and_then(|lid| self.set_in_flight(conn, lid, takes_link(proc_)));
        let traced = self.trace.then(|| {
            // Time on the bus, for the calls that use it.
            let t0 = target
                .filter(|_| takes_link(proc_))
                .and_then(|t| self.bus(t.board()).ok())
                .map(Bus::now);
            let name = target.map(Target::name);
            (t0, vxi11_trace::request(proc_, args, name.as_deref()))
        });
        let out = self.dispatch(conn, peer, proc_, args);
        if let Some(lid) = lid.filter(|_| takes_link(proc_)) {
            self.set_in_flight(conn, lid, false);
        }
        if let Some((t0, what)) = traced {
            let bus_time = match (t0, target.and_then(|t| self.bus(t.board()).ok())) {
                (Some(t0), Some(bus)) => format!(
                    ", {:.3} ms on the bus",
                    bus.now().saturating_sub(t0).as_secs_f64() * 1e3
                ),
                _ => String::new(),
            };
            eprintln!(
                "gpib-diag serve: {peer} vxi11 {what}: {}{bus_time}",
                vxi11_trace::reply(proc_, &out)
            );
        }
        if let Some(t) = target.filter(|_| {
            matches!(
                proc_,
                procs::DEVICE_WRITE
                    | procs::DEVICE_READ
                    | procs::DEVICE_TRIGGER
                    | procs::DEVICE_READSTB
                    | procs::DEVICE_CLEAR
            )
        }) {
            self.check_srq(t.board());
        }
        out
    }

    /// Marks a call on `lid` begun or ended (`on`); either way an abort that came
    /// before is forgotten (it was for a call that is over). Returns the link's target
    /// when `lid` is one of `conn`'s links.
    fn set_in_flight(&self, conn: u64, lid: u32, on: bool) -> Option<Target> {
        let mut st = self.state();
        let l = st.links.get_mut(&lid).filter(|l| l.conn == conn)?;
        l.in_flight = on;
        l.aborted = false;
        Some(l.target)
    }

    fn dispatch(&self, conn: u64, peer: SocketAddr, proc_: u32, args: &[u8]) -> Outcome {
        match proc_ {
            procs::CREATE_LINK => self.create_link(conn, args),
            procs::DEVICE_WRITE => self.write(conn, args),
            procs::DEVICE_READ => self.read(conn, args),
            procs::DEVICE_READSTB => {
                let Ok(p) = proto::Generic::decode(args) else {
                    return Outcome::Garbage;
                };
                let r = self
                    .access(conn, p.lid, p.flags, p.lock_timeout)
                    .and_then(|t| self.device(t, p.io_timeout))
                    .and_then(|d| d.serial_poll().map_err(|e| error_code(&e)));
                Outcome::Reply(match r {
                    Ok(stb) => proto::encode_error_value(err::NONE, u32::from(stb.0)),
                    Err(c) => proto::encode_error_value(c, 0),
                })
            }
            procs::DEVICE_TRIGGER
            | procs::DEVICE_CLEAR
            | procs::DEVICE_REMOTE
            | procs::DEVICE_LOCAL => {
                let Ok(p) = proto::Generic::decode(args) else {
                    return Outcome::Garbage;
                };
                let r = self
                    .access(conn, p.lid, p.flags, p.lock_timeout)
                    .and_then(|t| {
                        let d = self.device(t, p.io_timeout)?;
                        self.begin(p.lid, t, p.io_timeout)?;
                        let r = match proc_ {
                            procs::DEVICE_TRIGGER => d.trigger(),
                            procs::DEVICE_CLEAR => d.clear(),
                            procs::DEVICE_REMOTE => d.remote(),
                            _ => d.go_to_local(),
                        };
                        self.end(p.lid, t, false);
                        r.map_err(|e| error_code(&e))
                    });
                only_error(r.err().unwrap_or(err::NONE))
            }
            procs::DEVICE_LOCK => {
                let Ok(p) = proto::Lock::decode(args) else {
                    return Outcome::Garbage;
                };
                only_error(self.lock(conn, p))
            }
            procs::DEVICE_UNLOCK => {
                let Ok(lid) = XdrReader::new(args).u32() else {
                    return Outcome::Garbage;
                };
                only_error(self.unlock(conn, lid))
            }
            procs::DEVICE_ENABLE_SRQ => {
                let Ok((lid, on, handle)) = proto::decode_enable_srq(args) else {
                    return Outcome::Garbage;
                };
                let mut st = self.state();
                let code = match st.links.get_mut(&lid).filter(|l| l.conn == conn) {
                    Some(l) => {
                        l.srq = on.then_some(handle);
                        err::NONE
                    }
                    None => err::INVALID_LINK,
                };
                only_error(code)
            }
            procs::DEVICE_DOCMD => self.docmd(conn, args),
            procs::DESTROY_LINK => {
                let Ok(lid) = XdrReader::new(args).u32() else {
                    return Outcome::Garbage;
                };
                // As a dropped connection: the device cleared while the lock stands.
                let abandoned = self
                    .state()
                    .links
                    .get(&lid)
                    .filter(|l| l.conn == conn)
                    .and_then(abandoned_device);
                self.clear_abandoned(abandoned);
                let mut st = self.state();
                let code = if st.links.get(&lid).is_some_and(|l| l.conn == conn) {
                    st.links.remove(&lid);
                    st.locks.retain(|_, h| *h != lid);
                    err::NONE
                } else {
                    err::INVALID_LINK
                };
                drop(st);
                if code == err::NONE {
                    self.device_locks.release_all(Owner::Link(lid));
                }
                self.changed.notify_all();
                only_error(code)
            }
            procs::CREATE_INTR_CHAN => {
                let Ok(f) = proto::RemoteFunc::decode(args) else {
                    return Outcome::Garbage;
                };
                only_error(self.create_intr(conn, peer, f))
            }
            procs::DESTROY_INTR_CHAN => {
                let code = if self.state().intr.remove(&conn).is_some() {
                    err::NONE
                } else {
                    err::NO_CHANNEL
                };
                only_error(code)
            }
            _ => Outcome::ProcUnavail,
        }
    }

    /// A served board's own state (CIC, talker, listener), when its backend knows it.
    fn board_status(bus: &Bus) -> Option<crate::BoardStatus> {
        bus.transaction(|tx| tx.backend().board_status()).ok()
    }

    /// The controller's bus address on `board`: the one a client set (`bus address`),
    /// else the board's own.
    fn bus_address(&self, board: u16, bus: &Bus) -> u8 {
        let set = self
            .bus_address
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&board)
            .copied();
        set.unwrap_or_else(|| {
            bus.transaction(|tx| Ok(tx.board_address().get()))
                .unwrap_or(0)
        })
    }

    fn create_intr(&self, conn: u64, peer: SocketAddr, f: proto::RemoteFunc) -> u32 {
        if f.family != 0 || f.prog != proto::DEVICE_INTR || f.vers != proto::VERSION {
            return err::NOT_SUPPORTED;
        }
        if self.state().intr.contains_key(&conn) {
            return err::CHANNEL_ESTABLISHED;
        }
        // Only back to the client itself, whatever address it names.
        let to = SocketAddr::new(peer.ip(), f.host_port);
        match TcpStream::connect_timeout(&to, Duration::from_secs(2)) {
            Ok(s) => {
                let _ = s.set_write_timeout(Some(Duration::from_secs(2)));
                let _ = s.set_nodelay(true);
                self.state()
                    .intr
                    .insert(conn, Arc::new(Mutex::new(BufWriter::new(s))));
                err::NONE
            }
            Err(e) => {
                log::info!("interrupt channel to {to}: {e}");
                err::NO_CHANNEL
            }
        }
    }
}

/// Serves the core channel on one connection; its links and locks go with it.
pub(crate) fn serve_core(gw: &Arc<Gateway>, s: TcpStream, slot: Slot) {
    let Ok(peer) = s.peer_addr() else { return };
    let limits = Limits {
        max_record: gw.max_recv + 4096,
        max_fragments: 100_000,
    };
    let conn = slot.id;
    serve_records(
        s,
        (slot.idle, slot.message),
        limits,
        proto::DEVICE_CORE,
        proto::VERSION,
        "VXI-11 core",
        |proc_, args| gw.call(conn, peer, proc_, args),
    );
    gw.drop_conn(conn);
}

/// Serves the abort channel: `device_abort` ends a lock wait in flight on the link.
pub(crate) fn serve_abort(gw: &Arc<Gateway>, s: TcpStream, slot: Slot) {
    let limits = Limits {
        max_record: 1024,
        max_fragments: 16,
    };
    serve_records(
        s,
        (slot.idle, slot.message),
        limits,
        proto::DEVICE_ASYNC,
        proto::VERSION,
        "VXI-11 abort",
        |proc_, args| {
            if proc_ != procs::DEVICE_ABORT {
                return Outcome::ProcUnavail;
            }
            let Ok(lid) = XdrReader::new(args).u32() else {
                return Outcome::Garbage;
            };
            let mut st = gw.state();
            let code = match st.links.get_mut(&lid) {
                Some(l) => {
                    // Only what is in flight on that link: with nothing in flight
                    // there is nothing to abort, and the next call goes ahead.
                    l.aborted = l.in_flight;
                    err::NONE
                }
                None => err::INVALID_LINK,
            };
            drop(st);
            gw.changed.notify_all();
            gw.device_locks.notify();
            only_error(code)
        },
    );
}
