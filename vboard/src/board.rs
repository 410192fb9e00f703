//! One board as linux-gpib's kernel layer keeps it (`gpib_board_t`): its lasting
//! configuration, its timeout, the devices opened on it with their queues of status
//! bytes taken by automatic serial polling, its event queue, the lock `IBMUTEX` takes,
//! and the simulated board under it once it is online.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};

use gpib_sim::sim::SimBoard;
use gpib_sim::Eos;

use crate::abi::{self, MAX_QUEUED, REOS};
use crate::driver;
use crate::persist::Persisted;
use crate::user::Errno;

/// The status bytes automatic serial polling took from one device, and how many
/// descriptors have it open (`gpib_status_queue_t`).
#[derive(Debug)]
pub struct StatusQueue {
    /// Primary address.
    pub pad: u32,
    /// Secondary address, negative for none.
    pub sad: i32,
    /// Descriptors open on it.
    pub references: u32,
    /// Status bytes with RQS, oldest first.
    pub bytes: VecDeque<u8>,
    /// The queue was full and lost its oldest byte: the next pop says so (EPIPE).
    pub dropped: bool,
}

/// Two addresses are one device when the primaries match and the secondaries match or
/// are both absent (`gpib_address_equal`).
pub fn same_address(pad1: u32, sad1: i32, pad2: u32, sad2: i32) -> bool {
    pad1 == pad2 && (sad1 == sad2 || (sad1 < 0 && sad2 < 0))
}

/// What the board lock (`big_gpib_mutex`) protects.
pub struct State {
    /// The configuration that outlives a process.
    pub p: Persisted,
    /// The settings were read from their file (the first open in this process does).
    pub loaded: bool,
    /// The board's I/O timeout in µs (`IBTMO`), 0 for none.
    pub usec_timeout: u32,
    /// Open files that asked for automatic serial polling.
    pub autospollers: u32,
    /// Automatic serial polling found nobody requesting service: it stops until a
    /// device is opened.
    pub stuck_srq: bool,
    /// Devices opened on the board, the most recent first (the kernel adds to the
    /// head of its list and polls in list order).
    pub devices: Vec<StatusQueue>,
    /// Events (`IBEVENT`), oldest first, and whether one was lost.
    pub events: VecDeque<i16>,
    /// An event was dropped from a full queue.
    pub event_dropped: bool,
    /// The simulated board, while the board is online.
    pub sim: Option<SimBoard>,
}

impl State {
    fn new() -> Self {
        Self {
            p: Persisted::default(),
            loaded: false,
            usec_timeout: 3_000_000,
            autospollers: 0,
            stuck_srq: false,
            devices: Vec::new(),
            events: VecDeque::new(),
            event_dropped: false,
            sim: None,
        }
    }

    /// The device queue of `pad`/`sad`, if a descriptor has it open.
    pub fn queue(&mut self, pad: u32, sad: i32) -> Option<&mut StatusQueue> {
        self.devices
            .iter_mut()
            .find(|d| same_address(d.pad, d.sad, pad, sad))
    }

    /// One more descriptor on `pad`/`sad` (`increment_open_device_count`).
    pub fn open_device(&mut self, pad: u32, sad: i32) {
        match self.queue(pad, sad) {
            Some(q) => q.references += 1,
            None => self.devices.insert(
                0,
                StatusQueue {
                    pad,
                    sad,
                    references: 1,
                    bytes: VecDeque::new(),
                    dropped: false,
                },
            ),
        }
    }

    /// One descriptor fewer on `pad`/`sad`; the queue goes with the last
    /// (`decrement_open_device_count`). EINVAL for an address never opened.
    pub fn close_device(&mut self, pad: u32, sad: i32) -> Result<(), Errno> {
        let i = self
            .devices
            .iter()
            .position(|d| same_address(d.pad, d.sad, pad, sad))
            .ok_or(libc::EINVAL)?;
        self.devices[i].references -= 1;
        if self.devices[i].references == 0 {
            self.devices.remove(i);
        }
        Ok(())
    }

    /// The EOS the board's reads stop on (`IBEOS` with REOS), 7 or 8 bits.
    pub fn read_eos(&self) -> Option<Eos> {
        (self.p.eos_flags & REOS != 0).then_some(Eos {
            byte: self.p.eos as u8,
            eight_bit: self.p.eos_flags & abi::BIN != 0,
        })
    }

    /// The simulated board, or EINVAL when the board is not online.
    pub fn sim(&self) -> Result<SimBoard, Errno> {
        self.sim.clone().ok_or(libc::EINVAL)
    }

    /// The status `general_ibstatus` computes: the board's own bits, SRQI from the
    /// SRQ line, RQS when `queue`'s device has status bytes waiting, CMPL from the
    /// descriptor's I/O (after `set`/`clear` of CMPL change it), EVENT when events
    /// wait.
    pub fn status(
        &mut self,
        queue: Option<(u32, i32)>,
        cmpl: Option<(&crate::file::Descriptor, i32, i32)>,
    ) -> i32 {
        use gpib_sim::abi::{CMPL, EVENT, RQS, SRQI};
        let mut status = 0;
        if let Some(sim) = self.sim.as_mut() {
            status = driver::board_bits(sim);
            if driver::srq(sim) {
                status |= SRQI;
            }
        }
        if let Some((pad, sad)) = queue {
            if self.queue(pad, sad).is_some_and(|q| !q.bytes.is_empty()) {
                status |= RQS;
            }
        }
        if let Some((desc, clear, set)) = cmpl {
            if set & CMPL != 0 {
                desc.set_io(false);
            } else if clear & CMPL != 0 {
                desc.set_io(true);
            }
            if !desc.io() {
                status |= CMPL;
            }
        }
        if !self.events.is_empty() {
            status |= EVENT;
        }
        status
    }

    /// Writes the lasting configuration for the next process.
    pub fn save(&self, minor: usize) {
        self.p.save(minor);
    }
}

/// Pushes `byte` on `q`, dropping the oldest when it holds [`MAX_QUEUED`]
/// (`push_status_byte`).
pub fn push_status_byte(q: &mut StatusQueue, byte: u8) {
    if q.bytes.len() >= MAX_QUEUED {
        q.dropped = true;
        q.bytes.pop_front();
    }
    q.bytes.push_back(byte);
}

/// The lock `IBMUTEX` takes and gives back: held by one thread (its id) at a time.
#[derive(Default)]
pub struct UserMutex {
    holder: Mutex<Option<i32>>,
    freed: Condvar,
}

impl UserMutex {
    fn holder(&self) -> MutexGuard<'_, Option<i32>> {
        self.holder.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the lock for thread `tid`, waiting while another holds it.
    pub fn lock(&self, tid: i32) {
        let mut h = self.holder();
        while h.is_some() {
            h = self.freed.wait(h).unwrap_or_else(|p| p.into_inner());
        }
        *h = Some(tid);
    }

    /// Takes the lock for `tid` if nobody holds it.
    pub fn try_lock(&self, tid: i32) -> bool {
        let mut h = self.holder();
        if h.is_some() {
            return false;
        }
        *h = Some(tid);
        true
    }

    /// Gives the lock back; EPERM if `tid` does not hold it.
    pub fn unlock(&self, tid: i32) -> Result<(), Errno> {
        let mut h = self.holder();
        if *h != Some(tid) {
            return Err(libc::EPERM);
        }
        *h = None;
        self.freed.notify_all();
        Ok(())
    }

    /// Gives the lock back whoever holds it (the file that took it is closed).
    pub fn release(&self) {
        *self.holder() = None;
        self.freed.notify_all();
    }

    /// Whether thread `tid` holds the lock (`locking_pid == current->pid`).
    pub fn held_by(&self, tid: i32) -> bool {
        *self.holder() == Some(tid)
    }
}

/// One board: its state under the board lock, and the user lock.
pub struct Board {
    /// Minor number: `/dev/gpib<minor>`.
    pub minor: usize,
    state: Mutex<State>,
    /// `IBMUTEX`.
    pub user: UserMutex,
}

impl Board {
    /// Board `minor`, offline and unconfigured.
    pub fn new(minor: usize) -> Self {
        Self {
            minor,
            state: Mutex::new(State::new()),
            user: UserMutex::default(),
        }
    }

    /// Takes the board lock.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The calling thread's id (the kernel's `current->pid`).
pub fn tid() -> i32 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() }
}
