//! The HiSLIP gateway's state: sessions (a synchronous and an asynchronous channel
//! each) on devices of the served boards, and their locks. A connection's first
//! message is read in `hislip_conn`, the channels' loops are in `hislip_channels`.
//!
//! Sub-addresses: `hislip0` names the default device (`--default-device`, as VXI-11's
//! `inst0`); `hislip_gpib<B>_<PAD>` names device PAD on board B (`hislip_gpib0_22`).
//! VISA reserves the comma for a port (`hislip0,4880`), and clients (pyvisa-py) take a
//! name that does not start with `hislip` for VXI-11.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::locks::{deadline_after, DeviceLocks, Owner, Wait};
use super::srq_edge::SrqEdges;
use super::ServeOptions;
use crate::address::Address;
use crate::bus::Bus;
use crate::hislip::{self, kind};

/// The vendor id this server gives in AsyncInitializeResponse ("GD", gpib-diag).
pub(crate) const VENDOR_ID: u32 = 0x4744;
/// How long a device's answer, or a session waiting for another's lock, may take.
pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// A device on a served board.
pub(crate) type Target = (u16, Address);

/// A channel's writer, shared by the threads that send on it (whole messages).
pub(crate) type Writer = Arc<Mutex<TcpStream>>;

/// One client's session.
pub(crate) struct Session {
    pub(crate) target: Target,
    pub(crate) sync: Writer,
    pub(crate) async_: Option<Writer>,
    /// The client's maximum message size (what one message to it may hold).
    pub(crate) client_max: u64,
    /// The message id of the last Data, DataEnd or Trigger read.
    pub(crate) last_id: u32,
    /// A response was sent that the client has not said it took (MAV).
    pub(crate) pending: bool,
    /// Between AsyncDeviceClear and DeviceClearComplete: synchronous messages go.
    pub(crate) clearing: bool,
    /// A message is being served on the synchronous channel (or an answer fetched).
    pub(crate) busy: bool,
    /// The device's answer is being sent (a status query need not wait for it).
    pub(crate) answering: bool,
    /// Overlapped mode, as the client asked at its last device clear (the gateway
    /// works the same either way: it answers each query in order).
    pub(crate) overlapped: bool,
    /// The gateway's own serial poll (for AsyncServiceRequest) took the device's RQS:
    /// the session's next status query has it.
    pub(crate) rqs: bool,
    /// When a message last came from the client, on either channel (idle is both
    /// channels quiet).
    pub(crate) heard: Instant,
    /// The device holds part of a message from this session (Data without DataEnd
    /// yet) or part of an answer it did not take: cleared when the session goes.
    pub(crate) mid: bool,
    /// The asynchronous channel has gone: the synchronous one ends the session.
    pub(crate) closing: bool,
}

#[derive(Default)]
pub(crate) struct State {
    next_session: u16,
    pub(crate) sessions: HashMap<u16, Session>,
}

pub(crate) struct Gateway {
    pub(crate) boards: BTreeMap<u16, Bus>,
    pub(crate) default: Option<Address>,
    /// The largest message this server takes, and says it takes.
    pub(crate) max_message: u64,
    pub(crate) trace: bool,
    /// The device locks, shared with the VXI-11 gateway.
    locks: Arc<DeviceLocks>,
    state: Mutex<State>,
    pub(crate) changed: Condvar,
    /// Each board's SRQ line as last seen.
    srq_was: SrqEdges,
}

/// The device a sub-address names: `hislip0` (the default device) or
/// `hislip_gpib<B>_<PAD>`.
pub(crate) fn parse_sub_address(name: &str, default: Option<Address>) -> Result<Target, String> {
    match hislip::sub_address_target(name)? {
        Some(t) => Ok(t),
        None if name.eq_ignore_ascii_case("hislip0") => default
            .map(|a| (0, a))
            .ok_or_else(|| "hislip0 names the default device, and none is set".to_string()),
        None => Err(format!(
            "{name:?}: this gateway serves hislip0 and hislip_gpib<board>_<address>"
        )),
    }
}

impl Gateway {
    pub(crate) fn new(
        boards: BTreeMap<u16, Bus>,
        opts: &ServeOptions,
        locks: Arc<DeviceLocks>,
    ) -> Self {
        Self {
            boards,
            locks,
            default: opts.default_address,
            max_message: u64::from(opts.max_recv_size).clamp(1024, 16 << 20),
            trace: opts.trace,
            state: Mutex::new(State {
                next_session: 1,
                ..State::default()
            }),
            changed: Condvar::new(),
            srq_was: SrqEdges::default(),
        }
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The device of `t`, with the gateway's I/O timeout and no terminator added.
    pub(crate) fn device(&self, t: Target) -> crate::Result<crate::Device> {
        let bus = self
            .boards
            .get(&t.0)
            .ok_or_else(|| crate::Error::InvalidArgument(format!("no board gpib{}", t.0)))?;
        let mut d = bus.device(t.1)?;
        d.set_timeout(Some(crate::Timeout::After(IO_TIMEOUT)));
        d.set_write_terminator(None);
        Ok(d)
    }

    /// The bus of board `b`.
    pub(crate) fn bus(&self, b: u16) -> Option<&Bus> {
        self.boards.get(&b)
    }

    /// A session's target and writers, when it is there.
    pub(crate) fn session<T>(&self, id: u16, f: impl FnOnce(&mut Session) -> T) -> Option<T> {
        self.state().sessions.get_mut(&id).map(f)
    }

    fn target(&self, id: u16) -> Option<Target> {
        self.state().sessions.get(&id).map(|s| s.target)
    }

    /// Whether session `id` is gone or going: its waits end.
    pub(crate) fn gone(&self, id: u16) -> bool {
        self.state().sessions.get(&id).is_none_or(|s| s.closing)
    }

    /// Holds session `id`'s device for one exchange (a message, or a query and its
    /// answer): waits, up to [`IO_TIMEOUT`], for another client's exchange to end.
    /// False when it did not end in time.
    pub(crate) fn begin(&self, id: u16, t: Target) -> bool {
        self.locks
            .holds
            .begin(t, Owner::Session(id), deadline_after(IO_TIMEOUT), &|| {
                self.gone(id)
            })
    }

    /// Ends session `id`'s call on its device; with `more` (part of a message sent)
    /// it keeps the device for the rest.
    pub(crate) fn end(&self, id: u16, t: Target, more: bool) {
        self.locks.holds.end(t, Owner::Session(id), more);
    }

    /// Waits until session `id` may use its device (no other client's lock, VXI-11's
    /// included), up to `wait`. False when it may not.
    pub(crate) fn wait_access(&self, id: u16, wait: Duration) -> bool {
        let Some(t) = self.target(id) else {
            return false;
        };
        let gone = || self.gone(id);
        self.locks
            .wait_access(t, Owner::Session(id), deadline_after(wait), &gone)
            == Wait::Done
    }

    /// AsyncLock request: an exclusive lock (`key` empty) or a shared one, waiting up
    /// to `wait`. Returns the response's control code.
    pub(crate) fn lock(&self, id: u16, key: &[u8], wait: Duration) -> u8 {
        let Some(t) = self.target(id) else {
            return hislip::lock::ERROR;
        };
        let gone = || self.gone(id);
        match self
            .locks
            .lock(t, Owner::Session(id), key, deadline_after(wait), &gone)
        {
            Wait::Done => hislip::lock::SUCCESS,
            Wait::Locked => hislip::lock::FAILURE,
            Wait::Stopped => hislip::lock::ERROR,
        }
    }

    /// AsyncLock release: the exclusive lock if held, else the shared one.
    pub(crate) fn unlock(&self, id: u16) -> u8 {
        let Some(t) = self.target(id) else {
            return hislip::lock::ERROR;
        };
        match self.locks.release(t, Owner::Session(id)) {
            Some(true) => hislip::lock::SUCCESS,
            Some(false) => hislip::lock::SUCCESS_SHARED,
            None => hislip::lock::ERROR,
        }
    }

    /// AsyncLockInfo: (an exclusive lock is held, clients holding locks).
    pub(crate) fn lock_info(&self, id: u16) -> (bool, u32) {
        self.target(id).map_or((false, 0), |t| self.locks.info(t))
    }

    /// A new session on `target`; its id.
    pub(crate) fn open(&self, target: Target, sync: Writer) -> Option<u16> {
        let mut st = self.state();
        if st.sessions.len() >= usize::from(u16::MAX) - 1 {
            return None;
        }
        let mut id = st.next_session;
        while id == 0 || st.sessions.contains_key(&id) {
            id = id.wrapping_add(1);
        }
        st.next_session = id.wrapping_add(1);
        st.sessions.insert(
            id,
            Session {
                target,
                sync,
                async_: None,
                client_max: hislip::DEFAULT_MAX_MESSAGE,
                // As if the message before the first had been served.
                last_id: hislip::FIRST_MESSAGE_ID.wrapping_sub(2),
                pending: false,
                clearing: false,
                busy: false,
                answering: false,
                overlapped: false,
                rqs: false,
                heard: Instant::now(),
                mid: false,
                closing: false,
            },
        );
        Some(id)
    }

    /// Ends session `id`: a device it left in the middle of a message or of an answer
    /// is cleared, then its locks go (a client waiting for them gets the device
    /// clean), and its other channel is shut down. Called by the synchronous channel:
    /// the one that uses the device.
    pub(crate) fn close(&self, id: u16) {
        let Some(s) = self.state().sessions.remove(&id) else {
            return;
        };
        if s.mid {
            let cleared = self.device(s.target).and_then(|d| d.clear());
            if let Err(e) = cleared {
                log::info!("HiSLIP session {id}: clearing the device it left: {e}");
            }
        }
        self.locks.release_all(Owner::Session(id));
        self.changed.notify_all();
        for w in std::iter::once(&s.sync).chain(s.async_.as_ref()) {
            let _ = lock_writer(w).shutdown(Shutdown::Both);
        }
    }

    /// The asynchronous channel of session `id` has gone: the synchronous one is shut
    /// down, and ends the session (see [`Gateway::close`]) once its call is over.
    pub(crate) fn close_async(&self, id: u16) {
        let sync = self.session(id, |s| {
            s.closing = true;
            s.sync.clone()
        });
        self.changed.notify_all();
        self.locks.notify();
        if let Some(w) = sync {
            let _ = lock_writer(&w).shutdown(Shutdown::Both);
        }
    }

    /// After an operation on board `board`: when its SRQ has just been asserted,
    /// polls the device of each session on that board with an asynchronous channel
    /// and sends AsyncServiceRequest (the status byte) to those requesting service.
    pub(crate) fn check_srq(&self, board: u16) {
        let Some(bus) = self.bus(board) else { return };
        let targets: Vec<(u16, Address, Writer)> = self
            .state()
            .sessions
            .iter()
            .filter(|(_, s)| s.target.0 == board)
            .filter_map(|(&id, s)| Some((id, s.target.1, s.async_.clone()?)))
            .collect();
        if targets.is_empty() {
            return;
        }
        if !self.srq_was.rising(board, bus.srq().unwrap_or(false)) {
            return;
        }
        let mut polled: HashMap<Address, u8> = HashMap::new();
        for (id, a, w) in targets {
            let stb = match polled.get(&a) {
                Some(&s) => s,
                None => {
                    let s = bus.serial_poll(a).map_or(0, |s| s.0);
                    polled.insert(a, s);
                    s
                }
            };
            if stb & 0x40 != 0 {
                self.session(id, |s| s.rqs = true);
                send(&w, kind::ASYNC_SERVICE_REQUEST, stb, 0, &[]);
            }
        }
        // The polls cleared the requests: the next one is a new rising edge.
        self.srq_was.set(board, bus.srq().unwrap_or(false));
    }
}

/// Locks a writer, poisoned or not.
pub(crate) fn lock_writer(w: &Writer) -> MutexGuard<'_, TcpStream> {
    w.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sends one message on `w`; false when the channel is broken.
pub(crate) fn send(w: &Writer, k: u8, control: u8, param: u32, payload: &[u8]) -> bool {
    let mut s = lock_writer(w);
    hislip::write_message(&mut *s, k, control, param, payload)
        .and_then(|()| s.flush())
        .is_ok()
}

/// Sends FatalError with `why` and closes the connection.
pub(crate) fn fatal(s: &TcpStream, code: u8, why: &str) {
    log::info!("HiSLIP: fatal error {code}: {why}");
    let mut w = s;
    let _ = hislip::write_message(&mut w, kind::FATAL_ERROR, code, 0, why.as_bytes());
    let _ = s.shutdown(Shutdown::Both);
}
