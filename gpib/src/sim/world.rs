//! What a simulated host's lock protects: its boards and their devices, the callers'
//! clocks, the resources, the timers and the transcript, with the helpers every bus
//! operation uses (the operations themselves are in `ops.rs`).

use std::time::Duration;

use crate::address::{Address, PrimaryAddress};
use crate::sim::behaviour::{self, BoardBehaviour};
use crate::sim::board_index::BoardIndex;
use crate::sim::named::NamedDevice;
use crate::sim::schedule::{nanos, Callers, Cpus, Timeline, Timers};
use crate::sim::slot::Slot;
use crate::sim::state488::Addressing;
use crate::sim::timing::{BoardNanos, BoardTiming, TransferMode};
use crate::sim::transcript::Recorder;
use crate::trace::{Line, LineChange, Record, Transfer};

/// Polls of one storm that autopoll models one by one (and records) before an
/// operation; a longer stretch is taken in one piece.
const EXACT_POLLS: u64 = 10_000;

/// One board: its devices, its bus state and its resources.
pub(crate) struct Board {
    pub(crate) name: String,
    pub(crate) address: PrimaryAddress,
    pub(crate) timing: BoardTiming,
    /// `timing`'s durations in nanoseconds (kept by [`Board::reindex`]).
    pub(crate) nanos: BoardNanos,
    pub(crate) timeout: crate::Timeout,
    pub(crate) devices: Vec<Slot>,
    pub(crate) addressing: Addressing,
    pub(crate) ren: bool,
    /// SRQ as last recorded in the transcript.
    pub(crate) srq_seen: bool,
    /// The bus: one transfer at a time.
    pub(crate) bus: Timeline,
    /// The DMA engine (DMA boards).
    pub(crate) dma: Timeline,
    /// Contention sources of the board's driver.
    pub(crate) behaviour: BoardBehaviour,
    /// What the operations ask of the devices, kept up to date by [`Board::reindex`]
    /// (called wherever devices, their faults or their behaviour change).
    pub(crate) index: BoardIndex,
}

impl Board {
    /// A board with no devices.
    pub(crate) fn new(
        name: String,
        address: PrimaryAddress,
        timing: BoardTiming,
        timeout: crate::Timeout,
    ) -> Self {
        Self {
            name,
            address,
            nanos: BoardNanos::of(&timing),
            timing,
            timeout,
            devices: Vec::new(),
            addressing: Addressing::new(address),
            ren: false,
            srq_seen: false,
            bus: Timeline::default(),
            dma: Timeline::default(),
            behaviour: BoardBehaviour::default(),
            index: BoardIndex::default(),
        }
    }

    /// Rebuilds the index after devices, their faults or their behaviour changed, and
    /// the nanosecond timing after the timing changed.
    pub(crate) fn reindex(&mut self) {
        self.index = BoardIndex::of(&self.devices);
        self.nanos = BoardNanos::of(&self.timing);
    }

    /// Devices that accept data bytes now, each with whether it is addressed: the
    /// addressed listeners and the listen-only devices, in slot order, into `out`.
    pub(crate) fn data_listeners(&self, out: &mut Vec<(usize, bool)>) {
        out.clear();
        for &a in self.addressing.listeners() {
            if let Some(i) = self.slot_at(a) {
                out.push((i, true));
            }
        }
        for &i in self.index.listen_only() {
            if !out.iter().any(|&(j, _)| j == i) {
                out.push((i, false));
            }
        }
        if out.len() > 1 {
            out.sort_unstable_by_key(|&(i, _)| i);
        }
    }

    /// The slowest acceptance time among the data listeners ([`Board::data_listeners`]),
    /// and `floor`.
    pub(crate) fn slowest_accept_ns(&self, floor: u64) -> u64 {
        let addressed = self
            .addressing
            .listeners()
            .iter()
            .filter_map(|&a| self.slot_at(a));
        addressed
            .chain(self.index.listen_only().iter().copied())
            .map(|i| self.devices[i].timing.accept_ns)
            .fold(floor, u64::max)
    }

    /// When every device has released NRFD (all take part in the ATN handshake), ns.
    pub(crate) fn nrfd_released_at(&self) -> u64 {
        self.index.nrfd_released_at()
    }

    /// Time per byte of the handshake with a talker settling `t1_ns` and the slowest
    /// listener accepting in `accept_ns`, on this board's cable.
    pub(crate) fn handshake_ns(&self, t1_ns: u64, accept_ns: u64) -> u64 {
        // Only a cable raises the settling time; without one, no devices to count.
        let t1 = if self.behaviour.cable_m.is_some() {
            let devices = self.index.present() + 1;
            self.behaviour.settling_ns(t1_ns, devices)
        } else {
            t1_ns
        };
        crate::sim::timing::handshake_ns(t1, accept_ns, self.timing.hs488)
            .saturating_add(self.behaviour.propagation_ns())
    }

    /// The present device at exactly `a`.
    #[inline]
    pub(crate) fn slot_at(&self, a: Address) -> Option<usize> {
        self.index.slot_at(&self.devices, a)
    }

    /// Whether device `i` is present and addressed to listen.
    pub(crate) fn listens(&self, i: usize) -> bool {
        let d = &self.devices[i];
        d.present() && self.addressing.listens(d.address)
    }

    /// The present device at `a`, if any, goes remote, keeping its lockout (its listen
    /// address arrived with REN asserted: IEEE 488.1 RL, LOCS to REMS or LWLS to RWLS).
    pub(crate) fn remote_at(&mut self, a: Address) {
        if let Some(i) = self.slot_at(a) {
            let d = &mut self.devices[i];
            let lockout = d.lockout;
            d.set_remote(true, lockout);
        }
    }

    /// The present devices addressed to listen.
    pub(crate) fn listeners(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.devices.len()).filter(|&i| self.listens(i))
    }

    pub(crate) fn any_present(&self) -> bool {
        self.index.any_present()
    }
}

/// Everything behind a host's lock.
pub(crate) struct World {
    pub(crate) name: String,
    pub(crate) realtime: bool,
    pub(crate) boards: Vec<Board>,
    pub(crate) named: Vec<NamedDevice>,
    pub(crate) rec: Recorder,
    pub(crate) callers: Callers,
    pub(crate) cpus: Cpus,
    pub(crate) timers: Timers,
    /// The share of the CPU background device traffic takes (interrupts of busy discs),
    /// spread over the CPUs; recomputed by [`World::refresh_background`].
    pub(crate) background_share: f64,
    /// A write's data listeners (index, addressed), kept between writes so that a
    /// write allocates nothing.
    pub(crate) listeners_buf: Vec<(usize, bool)>,
    /// Whether some board autopolls a device that requests service on its own (an SRQ
    /// storm): without one, an operation has no automatic polls to look for.
    pub(crate) autopolling: bool,
}

impl World {
    /// An empty host with `cpus` CPUs.
    pub(crate) fn new(name: String, cpus: usize) -> Self {
        Self {
            name,
            realtime: false,
            boards: Vec::new(),
            named: Vec::new(),
            rec: Recorder::new(256),
            callers: Callers::default(),
            cpus: Cpus::new(cpus),
            timers: Timers::default(),
            background_share: 0.0,
            listeners_buf: Vec::new(),
            autopolling: false,
        }
    }

    /// Recomputes what the contention sources configured cost every operation: the
    /// CPU share background device traffic takes, and whether any board autopolls.
    /// Called whenever a board's or a device's behaviour changes.
    pub(crate) fn refresh_background(&mut self) {
        for b in &mut self.boards {
            b.reindex();
        }
        self.autopolling = self.boards.iter().any(|b| {
            b.behaviour.autopoll && b.devices.iter().any(|d| d.behaviour.srq_every.is_some())
        });
        let total: f64 = self
            .boards
            .iter()
            .flat_map(|b| {
                b.devices.iter().filter(|d| d.present()).map(|d| {
                    behaviour::activity_cpu_share(&b.timing, d.behaviour.activity_bytes_per_s)
                })
            })
            .sum();
        self.background_share = total / self.cpus.count() as f64;
    }

    /// The calling thread's virtual time, after the timers due by then have fired:
    /// where its next operation starts.
    pub(crate) fn begin(&mut self) -> Duration {
        Duration::from_nanos(self.begin_ns())
    }

    /// [`World::begin`] in nanoseconds, as the bus operations count.
    #[inline(always)]
    pub(crate) fn begin_ns(&mut self) -> u64 {
        let t = self.callers.now_ns();
        self.begin_at_ns(t)
    }

    /// [`World::begin_ns`] for an operation that starts at `t` ns, where the one before
    /// it in the same call ended (the caller's clock is not read).
    #[inline(always)]
    pub(crate) fn begin_at_ns(&mut self, t: u64) -> u64 {
        // Most operations find no timer due and no autopolling: two comparisons.
        if self.timers.next_due().is_some_and(|at| ns(at) <= t) {
            self.fire_timers(Duration::from_nanos(t));
        }
        if self.autopolling {
            self.autopoll(Duration::from_nanos(t));
        }
        t
    }

    /// The drivers' automatic serial polls due by `t`: every pending request of an SRQ
    /// storm on a board that autopolls is polled as soon as the bus is free (UNL, MLA,
    /// SPE, TAD \[SAD\], one status byte, SPD, UNT), taking the bus and the CPU; the
    /// device requests again one period after each poll.
    pub(crate) fn autopoll(&mut self, t: Duration) {
        if !self.autopolling {
            return;
        }
        for board in 0..self.boards.len() {
            if !self.boards[board].behaviour.autopoll {
                continue;
            }
            for dev in 0..self.boards[board].devices.len() {
                self.autopoll_device(board, dev, t);
            }
        }
    }

    fn autopoll_device(&mut self, board: usize, dev: usize, t: Duration) {
        let slot = &self.boards[board].devices[dev];
        let Some(period) = slot.behaviour.srq_every else {
            return;
        };
        if !slot.present() {
            return;
        }
        let period = period.max(Duration::from_nanos(1));
        let b = &self.boards[board];
        let commands = 6 + u64::from(slot.address.secondary.is_some());
        let byte = Duration::from_nanos(b.handshake_ns(slot.timing.t1_ns, b.timing.accept_ns));
        let one = b
            .timing
            .call_overhead
            .saturating_add(crate::sim::timing::times(b.timing.command_byte, commands))
            .saturating_add(byte);
        let gap = period.saturating_add(one);
        let address = slot.address.primary.get();
        let slot_t1 = slot.timing.t1_ns;
        let mut exact = 0u64;
        while let Some(next) = self.boards[board].devices[dev].next_request {
            if next > t {
                break;
            }
            let start = self.bus_start(board, next);
            let end = if exact < EXACT_POLLS {
                // One poll, recorded.
                exact += 1;
                let status = self.boards[board].devices[dev].serial_poll(start);
                let end = self.occupy(board, start, one, one, false);
                if self.rec.active() {
                    // The status byte after the poll's addressing (UNL, MLA, SPE, MTA).
                    let b = &self.boards[board];
                    let first = start.saturating_add(b.timing.call_overhead).saturating_add(
                        crate::sim::timing::times(b.timing.command_byte, commands - 2),
                    );
                    let record = Transfer {
                        board: board as u16,
                        flags: crate::trace::format::flags::SERIAL_POLL,
                        talker: address,
                        listeners: 1 << b.address.get(),
                        start_ns: ns(start),
                        ready_ns: ns(start),
                        first_ns: ns(first),
                        byte_ns: ns(byte),
                        end_ns: ns(end),
                        t1_ns: u32::try_from(slot_t1).unwrap_or(u32::MAX),
                        accept_ns: u32::try_from(b.timing.accept_ns).unwrap_or(u32::MAX),
                        bytes: std::borrow::Cow::Borrowed(&[status.0]),
                    };
                    self.rec.emit(&Record::Transfer(record));
                }
                end
            } else {
                // A long stretch of polls: as many as fit before `t`, taken at once.
                let n = (t.saturating_sub(next).as_nanos() / gap.as_nanos().max(1)).max(1);
                let busy = crate::sim::timing::times(one, u64::try_from(n).unwrap_or(u64::MAX));
                self.occupy(board, start, busy, busy, false)
            };
            self.boards[board].devices[dev].next_request = Some(end.saturating_add(period));
        }
    }

    /// Moves the calling thread to `t` (the end of its operation).
    #[inline(always)]
    pub(crate) fn end_at(&mut self, t: Duration) {
        self.callers.set_now(t);
    }

    /// [`World::end_at`] in nanoseconds.
    #[inline(always)]
    pub(crate) fn end_at_ns(&mut self, t: u64) {
        self.callers.set_now_ns(t);
    }

    /// Fires, in order, every timer due at or before `upto`.
    pub(crate) fn fire_timers(&mut self, upto: Duration) {
        while let Some(t) = self.timers.pop_due(upto) {
            let Some(slot) = self
                .boards
                .get_mut(t.board)
                .and_then(|b| b.devices.get_mut(t.device))
            else {
                continue;
            };
            let wakes = slot.call(t.at, |inst, io| inst.timer(t.token, io));
            self.schedule(t.board, t.device, wakes);
            self.note_srq(t.board, ns(t.at));
        }
    }

    /// Sets the timers device `device` of board `board` asked for.
    #[inline(always)]
    pub(crate) fn schedule(&mut self, board: usize, device: usize, wakes: Vec<(Duration, u64)>) {
        if wakes.is_empty() {
            return; // most calls: nothing to wake
        }
        self.set_timers(board, device, wakes);
    }

    /// Sets each timer of `wakes`.
    fn set_timers(&mut self, board: usize, device: usize, wakes: Vec<(Duration, u64)>) {
        for (at, token) in wakes {
            self.timers.set(at, board, device, token);
        }
    }

    /// Where an operation on `board`'s bus can start: no earlier than `t`, and after
    /// the bus's (and for DMA, the DMA engine's) last operation.
    pub(crate) fn bus_start(&self, board: usize, t: Duration) -> Duration {
        let free = self.bus_free_at(board);
        if nanos(t) >= free {
            t
        } else {
            Duration::from_nanos(free)
        }
    }

    /// [`World::bus_start`] in nanoseconds.
    #[inline]
    pub(crate) fn bus_start_ns(&self, board: usize, t: u64) -> u64 {
        t.max(self.bus_free_at(board))
    }

    /// When `board`'s bus (and for DMA, its DMA engine) is free, ns.
    #[inline]
    fn bus_free_at(&self, board: usize) -> u64 {
        let b = &self.boards[board];
        let free = b.bus.free_at();
        if b.timing.mode == TransferMode::Dma {
            free.max(b.dma.free_at())
        } else {
            free
        }
    }

    /// Takes `board`'s bus from `start` for `elapsed`, with `cpu` of CPU work that
    /// runs alongside (on a CPU free first); returns when the operation ends: not
    /// before its CPU work is done (a PIO transfer, whose CPU moves every byte, ends
    /// late when the CPU is busy elsewhere).
    pub(crate) fn occupy(
        &mut self,
        board: usize,
        start: Duration,
        elapsed: Duration,
        cpu: Duration,
        dma: bool,
    ) -> Duration {
        let cpu = behaviour::stretched(cpu, self.background_share);
        let end = self.occupy_ns(board, nanos(start), nanos(elapsed), nanos(cpu), dma);
        Duration::from_nanos(end)
    }

    /// [`World::occupy`] in nanoseconds, for CPU work `cpu` already stretched by the
    /// background share ([`World::stretch_ns`]).
    #[inline(always)]
    pub(crate) fn occupy_ns(
        &mut self,
        board: usize,
        start: u64,
        elapsed: u64,
        cpu: u64,
        dma: bool,
    ) -> u64 {
        let cpu_end = self.cpus.run(start, cpu);
        let end = start.saturating_add(elapsed).max(cpu_end);
        let b = &mut self.boards[board];
        b.bus.take(start, end);
        if dma {
            b.dma.take(start, end);
        }
        end
    }

    /// CPU work of `cpu` ns as the background share stretches it
    /// ([`behaviour::stretched`]).
    #[inline]
    pub(crate) fn stretch_ns(&self, cpu: u64) -> u64 {
        if self.background_share > 0.0 {
            nanos(behaviour::stretched(
                Duration::from_nanos(cpu),
                self.background_share,
            ))
        } else {
            cpu
        }
    }

    /// Whether SRQ is asserted on `board`.
    pub(crate) fn srq_line(&mut self, board: usize, now: Duration) -> bool {
        self.srq_line_ns(board, ns(now))
    }

    /// [`World::srq_line`] at `now_ns`.
    fn srq_line_ns(&mut self, board: usize, now_ns: u64) -> bool {
        self.boards[board]
            .devices
            .iter_mut()
            .any(|d| d.requests_service(now_ns))
    }

    /// Records an SRQ edge, when recording.
    #[inline(always)]
    pub(crate) fn note_srq(&mut self, board: usize, now_ns: u64) {
        // SRQ changes are only worth polling for when someone records them.
        if self.rec.active() {
            self.record_srq(board, now_ns);
        }
    }

    fn record_srq(&mut self, board: usize, now_ns: u64) {
        let on = self.srq_line_ns(board, now_ns);
        let b = &mut self.boards[board];
        if on != b.srq_seen {
            b.srq_seen = on;
            self.rec.emit(&Record::Line(LineChange {
                board: board as u16,
                line: Line::Srq,
                asserted: on,
                at_ns: now_ns,
                end_ns: now_ns,
            }));
        }
    }

    /// Bit `a` set for the primary address `a` of each device in `devices`.
    pub(crate) fn address_mask(&self, board: usize, devices: impl Iterator<Item = usize>) -> u32 {
        let b = &self.boards[board];
        devices.fold(0, |m, i| m | 1 << b.devices[i].address.primary.get())
    }
}

/// A time as whole nanoseconds (saturating: u64 nanoseconds last 584 years).
pub(crate) use crate::sim::schedule::nanos as ns;
