//! What a simulated host's lock protects: its boards and their devices, the callers'
//! clocks, the resources, the timers and the transcript, with the helpers every bus
//! operation uses (the operations themselves are in `ops.rs`).

use std::time::Duration;

use crate::address::{Address, PrimaryAddress};
use crate::sim::named::NamedDevice;
use crate::sim::schedule::{Callers, Cpus, Timeline, Timers};
use crate::sim::slot::Slot;
use crate::sim::state488::Addressing;
use crate::sim::timing::{BoardTiming, TransferMode};
use crate::sim::transcript::Recorder;
use crate::trace::{Line, LineChange, Record};

/// One board: its devices, its bus state and its resources.
pub(crate) struct Board {
    pub(crate) name: String,
    pub(crate) address: PrimaryAddress,
    pub(crate) timing: BoardTiming,
    pub(crate) timeout: Duration,
    pub(crate) devices: Vec<Slot>,
    pub(crate) addressing: Addressing,
    pub(crate) ren: bool,
    /// SRQ as last recorded in the transcript.
    pub(crate) srq_seen: bool,
    /// The bus: one transfer at a time.
    pub(crate) bus: Timeline,
    /// The DMA engine (DMA boards).
    pub(crate) dma: Timeline,
}

impl Board {
    /// A board with no devices.
    pub(crate) fn new(
        name: String,
        address: PrimaryAddress,
        timing: BoardTiming,
        timeout: Duration,
    ) -> Self {
        Self {
            name,
            address,
            timing,
            timeout,
            devices: Vec::new(),
            addressing: Addressing::new(address),
            ren: false,
            srq_seen: false,
            bus: Timeline::default(),
            dma: Timeline::default(),
        }
    }

    /// The present device at exactly `a`.
    pub(crate) fn slot_at(&self, a: Address) -> Option<usize> {
        self.devices
            .iter()
            .position(|d| d.present() && d.address == a)
    }

    /// Whether device `i` is present and addressed to listen.
    pub(crate) fn listens(&self, i: usize) -> bool {
        let d = &self.devices[i];
        d.present() && self.addressing.listens(d.address)
    }

    /// The present devices addressed to listen.
    pub(crate) fn listeners(&self) -> Vec<usize> {
        (0..self.devices.len())
            .filter(|&i| self.listens(i))
            .collect()
    }

    pub(crate) fn any_present(&self) -> bool {
        self.devices.iter().any(Slot::present)
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
}

impl World {
    /// An empty host with `cpus` CPUs.
    pub(crate) fn new(name: String, cpus: usize) -> Self {
        Self {
            name,
            realtime: false,
            boards: Vec::new(),
            named: Vec::new(),
            rec: Recorder {
                on: false,
                capture: 256,
                events: Vec::new(),
                sink: None,
            },
            callers: Callers::default(),
            cpus: Cpus::new(cpus),
            timers: Timers::default(),
        }
    }

    /// The calling thread's virtual time, after the timers due by then have fired:
    /// where its next operation starts.
    pub(crate) fn begin(&mut self) -> Duration {
        let t = self.callers.now();
        self.fire_timers(t);
        t
    }

    /// Moves the calling thread to `t` (the end of its operation).
    pub(crate) fn end_at(&mut self, t: Duration) {
        self.callers.set_now(t);
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
            self.note_srq(t.board, t.at);
        }
    }

    /// Sets the timers device `device` of board `board` asked for.
    pub(crate) fn schedule(&mut self, board: usize, device: usize, wakes: Vec<(Duration, u64)>) {
        for (at, token) in wakes {
            self.timers.set(at, board, device, token);
        }
    }

    /// Where an operation on `board`'s bus can start: no earlier than `t`, and after
    /// the bus's (and for DMA, the DMA engine's) last operation.
    pub(crate) fn bus_start(&self, board: usize, t: Duration) -> Duration {
        let b = &self.boards[board];
        let mut start = t.max(b.bus.free_at);
        if b.timing.mode == TransferMode::Dma {
            start = start.max(b.dma.free_at);
        }
        start
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
        let cpu_end = self.cpus.run(start, cpu);
        let end = start.saturating_add(elapsed).max(cpu_end);
        let b = &mut self.boards[board];
        b.bus.take(start, end);
        if dma {
            b.dma.take(start, end);
        }
        end
    }

    /// Whether SRQ is asserted on `board`.
    pub(crate) fn srq_line(&mut self, board: usize, now: Duration) -> bool {
        self.boards[board]
            .devices
            .iter_mut()
            .any(|d| d.requests_service(now))
    }

    /// Records an SRQ edge, when recording.
    pub(crate) fn note_srq(&mut self, board: usize, now: Duration) {
        if !self.rec.active() {
            return; // SRQ changes are only worth polling for when someone records them
        }
        let on = self.srq_line(board, now);
        let b = &mut self.boards[board];
        if on != b.srq_seen {
            b.srq_seen = on;
            self.rec.emit(&Record::Line(LineChange {
                board: board as u16,
                line: Line::Srq,
                asserted: on,
                at_ns: ns(now),
                end_ns: ns(now),
            }));
        }
    }

    /// Bit `a` set for the primary address `a` of each device in `devices`.
    pub(crate) fn address_mask(&self, board: usize, devices: &[usize]) -> u32 {
        let b = &self.boards[board];
        devices
            .iter()
            .fold(0, |m, &i| m | 1 << b.devices[i].address.primary.get())
    }
}

/// A time as whole nanoseconds (saturating: u64 nanoseconds last 584 years).
pub(crate) fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
