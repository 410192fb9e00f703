//! How many times real libgpib would cross into the kernel driver (ioctls on
//! `/dev/gpibN`) for each call this library serves, so that a program's cost on
//! hardware can be told from a run on the simulator: on a real board each crossing
//! costs microseconds, far more than anything done in user space.
//!
//! The counts are read from linux-gpib's user library (`linux-gpib-user/lib/`, 4.3.x),
//! call by call, for a board that is online (no open or close in the call):
//!
//! * entering a call that takes the board lock (`enter_library`): `IBMUTEX` to lock and
//!   again to unlock, 2; `ibeos`, `ibeot`, `ibtmo`, `iblines`, `TestSRQ`, `ibloc` take no
//!   lock (`general_enter_library(ud, 1, ...)`);
//! * leaving every call: the status update (`ibstatus` -> `my_wait`), one `IBWAIT`, and
//!   on a device descriptor one more for its `is_cic` check: 1 on a board, 2 on a device;
//! * `my_ibcmd` (addressing, SDC, GET...): `is_cic` (`IBWAIT`), `IBTMO`, `IBCMD`: 3;
//! * `ibwrt`: `IBTMO`, then on a device the addressing (`send_setup`, one `my_ibcmd`),
//!   then `IBTMO` + `IBWRT` per chunk (one chunk; one per EOS byte found, plus one, with
//!   XEOS), and with `IbcUnAddr` set an unaddressing `my_ibcmd`;
//! * `ibrd`: `IBEOS` (`iblcleos`), on a device the board's PAD and SAD (`IBBOARD_INFO`
//!   twice) and the addressing `my_ibcmd`, then `IBTMO` + `IBRD`, and with `IbcUnAddr`
//!   the unaddressing `my_ibcmd`;
//! * `ibcmd`: one `my_ibcmd`; `ibsic`: `IBBOARD_INFO` (system controller?) + `IBSIC`;
//!   `ibsre`: `IBSRE`; `ibclr`/`ibtrg`/`ibloc` on a device: one `my_ibcmd`; `ibrsp` and
//!   `ReadStatusByte`: `IBTMO` + `IBRSP` (`ReadStatusByte` also `is_cic`); `iblines` and
//!   `TestSRQ`: `IBLINES`; `ibeos`/`ibeot`/`ibtmo`: nothing but the status update;
//! * `Send` (one address): `is_cic`, the addressing (`is_cic` + `my_ibcmd`), `IBTMO` +
//!   `IBWRT` (and again for the NL of NLend); `Receive`: the addressing (`IBBOARD_INFO`
//!   twice + `my_ibcmd`), `is_cic`, `IBEOS`, `IBTMO` + `IBRD`.
//!
//! So a device-level `ibwrt` is 10 crossings and a device-level `ibrd` 12; the same on a
//! board descriptor 6 each. Calls not in this table (opening and closing descriptors,
//! waits, the rest of the IEEE 488.2 calls) are counted apart and add no crossings.
//!
//! Read the counters from C (or `dlsym`) with `gpib_sim_library_calls()`,
//! `gpib_sim_driver_crossings()` and `gpib_sim_unmodelled_calls()`; they only grow.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::Desc;

/// Every call served (each exported function that reaches a descriptor).
static CALLS: AtomicU64 = AtomicU64::new(0);
/// Driver crossings real libgpib would have made for the modelled calls.
static CROSSINGS: AtomicU64 = AtomicU64::new(0);
/// Calls served that the table models.
static MODELLED: AtomicU64 = AtomicU64::new(0);

/// The calls the table knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `ibwrt`, sent in this many `IBWRT`s (see [`write_chunks`]).
    Wrt {
        /// `IBWRT` ioctls.
        chunks: u64,
    },
    /// `ibrd`.
    Rd,
    /// `ibcmd`.
    Cmd,
    /// `ibeos`, `ibeot`, `ibtmo`: settings only.
    Setting,
    /// `ibsic`.
    Sic,
    /// `ibsre`.
    Sre,
    /// `ibclr`, `ibtrg`: an addressed command, under the lock.
    AddressedCommand,
    /// `ibloc` on a device (no lock); on a board it is `IBLOC`.
    Loc,
    /// `ibrsp`.
    Rsp,
    /// `ReadStatusByte`.
    ReadStatusByte,
    /// `iblines`, `TestSRQ`.
    Lines,
    /// `Send` (one address); with NLend, an NL with EOI goes in a second `IBWRT`.
    Send {
        /// The eot mode is NLend.
        nl: bool,
    },
    /// `Receive`.
    Receive,
}

const LOCK: u64 = 2;
const MY_IBCMD: u64 = 3;

/// The driver crossings libgpib makes for `op` on descriptor `d` (see the module docs).
pub fn crossings(op: Op, d: &Desc) -> u64 {
    let device = !d.is_board;
    let status = if device { 2 } else { 1 };
    let unaddr = if device && d.s.unaddr { MY_IBCMD } else { 0 };
    let setup = if device { MY_IBCMD } else { 0 };
    match op {
        Op::Wrt { chunks } => LOCK + status + 1 + setup + 2 * chunks + unaddr,
        Op::Rd => LOCK + status + 1 + if device { 2 + MY_IBCMD } else { 0 } + 2 + unaddr,
        Op::Cmd => LOCK + status + MY_IBCMD,
        Op::Lines => status + 1,
        Op::Setting => status,
        Op::Sic => LOCK + status + 2,
        Op::Sre => LOCK + status + 1,
        Op::AddressedCommand => LOCK + status + MY_IBCMD,
        Op::Loc => status + if device { MY_IBCMD } else { 1 },
        Op::Rsp => LOCK + status + 2,
        Op::ReadStatusByte => LOCK + status + 1 + 2,
        // is_cic, SendSetup (is_cic, my_ibcmd), IBTMO + IBWRT (twice with NLend).
        Op::Send { nl } => LOCK + status + 1 + 1 + MY_IBCMD + if nl { 4 } else { 2 },
        // ReceiveSetup (IBBOARD_INFO x2, my_ibcmd), is_cic, IBEOS, IBTMO + IBRD.
        Op::Receive => LOCK + status + 2 + MY_IBCMD + 1 + 1 + 2,
    }
}

/// How many `IBWRT`s libgpib's `my_ibwrt` makes for `data` on `d`: none for no data,
/// else one, and with XEOS one more after each EOS byte that is not the last byte
/// (`send_data_smart_eoi` ends a chunk after each).
pub fn write_chunks(d: &Desc, data: &[u8]) -> u64 {
    if data.is_empty() {
        return 0;
    }
    let mode = d.s.eos_mode();
    if !mode.xeos {
        return 1;
    }
    let byte = mode.byte;
    let mask = if mode.bin { 0xff } else { 0x7f };
    let hits = data[..data.len() - 1]
        .iter()
        .filter(|&&b| b & mask == byte & mask)
        .count();
    1 + hits as u64
}

thread_local! {
    /// This thread's (calls, crossings, modelled calls).
    static THREAD: Cell<(u64, u64, u64)> = const { Cell::new((0, 0, 0)) };
}

/// Counts one call that the table models.
pub fn charge(op: Op, d: &Desc) {
    let n = crossings(op, d);
    MODELLED.fetch_add(1, Ordering::Relaxed);
    CROSSINGS.fetch_add(n, Ordering::Relaxed);
    THREAD.with(|t| {
        let (c, x, m) = t.get();
        t.set((c, x + n, m + 1));
    });
}

/// Counts one call served (modelled or not).
pub fn served() {
    CALLS.fetch_add(1, Ordering::Relaxed);
    THREAD.with(|t| {
        let (c, x, m) = t.get();
        t.set((c + 1, x, m));
    });
}

/// [`counts`] for the calls made by this thread only.
#[cfg(test)]
pub fn thread_counts() -> (u64, u64, u64) {
    let (c, x, m) = THREAD.with(Cell::get);
    (c, x, c.saturating_sub(m))
}

/// The counters: calls served, driver crossings, calls the table does not model.
pub fn counts() -> (u64, u64, u64) {
    let calls = CALLS.load(Ordering::Relaxed);
    let modelled = MODELLED.load(Ordering::Relaxed);
    (
        calls,
        CROSSINGS.load(Ordering::Relaxed),
        calls.saturating_sub(modelled),
    )
}
