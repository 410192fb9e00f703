//! The timing model: how long a bus operation takes, and how much host CPU it costs.
//!
//! Everything is computed, never looped: a block of n bytes costs
//! `call overhead + n × (time per byte)`, with the time per byte built from parts that
//! each have a physical meaning:
//!
//! * **Handshake.** The three-wire handshake moves one byte per cycle; a cycle lasts the
//!   talker's settling time T1 plus the slowest addressed listener's acceptance time,
//!   and never less than the IEEE 488.1 ceiling (1 µs a byte, 1 MB/s; 125 ns with HS488).
//! * **Programmed I/O.** With PIO the host CPU moves each byte itself (it writes or reads
//!   the interface chip's data register and spins on its status), so a byte also costs
//!   the board's CPU time per byte, and the CPU is busy for the whole transfer.
//! * **DMA.** With DMA the interface moves bytes while the CPU does other work; the byte
//!   time is the slower of the handshake and the DMA engine, and the CPU pays a setup cost
//!   and one interrupt per DMA block.
//! * **Interface polling.** While a disc is *mounted* on an interface that the host driver
//!   polls (HP-UX 6.01's driver polls discs on an HP-IB card without DMA), the driver's
//!   poller gets a turn between every two bytes of a programmed-I/O transfer on any other
//!   interface: one poll costs that interface's `poll_cost`, and while it runs the
//!   handshake of the byte in flight is held off, so the instrument on the transfer pays
//!   its own *holdoff recovery* time (its firmware notices the stalled handshake late).
//!   This is the mechanism behind the 58x slowdown of the 1988 HP 9000/350 io_test
//!   measurement.

use std::time::Duration;

use crate::sim::schedule::nanos;

pub use crate::ieee488::{HS488_MIN_BYTE_NS, IEEE488_MIN_BYTE_NS, MIN_T1_NS};

/// How an interface board moves data bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TransferMode {
    /// Programmed I/O: the CPU moves every byte.
    Pio,
    /// Direct memory access: the interface moves bytes, the CPU takes interrupts.
    Dma,
}

/// Direction of a data transfer, seen from the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Device talks, board listens.
    Read,
    /// Board talks, device listens.
    Write,
}

/// Timing parameters of one interface board and its host driver.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardTiming {
    /// PIO or DMA.
    pub mode: TransferMode,
    /// Driver entry and set-up for each call (commands, polls, and the reads and writes
    /// that have no overhead of their own below).
    pub call_overhead: Duration,
    /// A read call's entry and set-up, where it differs from a write's (None:
    /// `call_overhead`).
    pub read_call_overhead: Option<Duration>,
    /// A write call's entry and set-up, where it differs from a read's (None:
    /// `call_overhead`).
    pub write_call_overhead: Option<Duration>,
    /// Time to send one command byte with ATN.
    pub command_byte: Duration,
    /// CPU time to move one byte by programmed I/O, reading.
    pub pio_read_byte_ns: u64,
    /// CPU time to move one byte by programmed I/O, writing.
    pub pio_write_byte_ns: u64,
    /// Time per byte of the DMA engine.
    pub dma_byte_ns: u64,
    /// CPU time to set up one DMA transfer.
    pub dma_setup: Duration,
    /// Bytes per DMA interrupt.
    pub dma_block: u64,
    /// CPU time per interrupt.
    pub interrupt_cpu: Duration,
    /// T1 settling time when the board talks.
    pub t1_ns: u64,
    /// Acceptance time when the board listens.
    pub accept_ns: u64,
    /// HS488 (IEEE 488.1-2003) is enabled: the handshake ceiling is 8 MB/s.
    pub hs488: bool,
    /// The host driver polls mounted discs on this interface.
    pub polled: bool,
    /// Time one poll of this interface takes.
    pub poll_cost: Duration,
}

impl Default for BoardTiming {
    /// A modern DMA board (NI PCI-GPIB-like): 500 ns T1, 20 µs per call.
    fn default() -> Self {
        Self {
            mode: TransferMode::Dma,
            call_overhead: Duration::from_micros(20),
            read_call_overhead: None,
            write_call_overhead: None,
            command_byte: Duration::from_micros(2),
            pio_read_byte_ns: 200,
            pio_write_byte_ns: 200,
            dma_byte_ns: 100,
            dma_setup: Duration::from_micros(5),
            dma_block: 4096,
            interrupt_cpu: Duration::from_micros(3),
            t1_ns: 500,
            accept_ns: 200,
            hs488: false,
            polled: false,
            poll_cost: Duration::ZERO,
        }
    }
}

/// Timing parameters of one device.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceTiming {
    /// T1 settling time when the device talks.
    pub t1_ns: u64,
    /// Acceptance time when the device listens.
    pub accept_ns: u64,
    /// Time after executing a command before the device talks or listens again.
    pub response_latency: Duration,
    /// Time the device's firmware needs to resume talking after the handshake was held off.
    pub holdoff_recovery_talk_ns: u64,
    /// Time the device's firmware needs to resume listening after the handshake was held off.
    pub holdoff_recovery_listen_ns: u64,
}

impl Default for DeviceTiming {
    /// A quick modern instrument: 500 ns T1, 300 ns acceptance, 50 µs to answer.
    fn default() -> Self {
        Self {
            t1_ns: 500,
            accept_ns: 300,
            response_latency: Duration::from_micros(50),
            holdoff_recovery_talk_ns: 2_000,
            holdoff_recovery_listen_ns: 2_000,
        }
    }
}

/// The [`BoardTiming`] durations a bus operation uses, as u64 nanoseconds (saturating
/// at 584 years), converted once per change of timing instead of on every operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct BoardNanos {
    pub(crate) call_overhead: u64,
    pub(crate) read_call: u64,
    pub(crate) write_call: u64,
    pub(crate) command_byte: u64,
    pub(crate) dma_setup: u64,
    pub(crate) interrupt_cpu: u64,
}

impl BoardNanos {
    /// `timing`'s durations in nanoseconds.
    pub(crate) fn of(timing: &BoardTiming) -> Self {
        let general = timing.call_overhead;
        Self {
            call_overhead: nanos(general),
            read_call: nanos(timing.read_call_overhead.unwrap_or(general)),
            write_call: nanos(timing.write_call_overhead.unwrap_or(general)),
            command_byte: nanos(timing.command_byte),
            dma_setup: nanos(timing.dma_setup),
            interrupt_cpu: nanos(timing.interrupt_cpu),
        }
    }

    /// The overhead of a data call in direction `dir`.
    #[inline]
    pub(crate) fn call(&self, dir: Direction) -> u64 {
        match dir {
            Direction::Read => self.read_call,
            Direction::Write => self.write_call,
        }
    }
}

impl BoardTiming {
    /// The overhead of a data call in direction `dir`: its own where the board has one,
    /// else [`BoardTiming::call_overhead`].
    pub fn data_call_overhead(&self, dir: Direction) -> Duration {
        match dir {
            Direction::Read => self.read_call_overhead,
            Direction::Write => self.write_call_overhead,
        }
        .unwrap_or(self.call_overhead)
    }
}

/// Time per byte of the three-wire handshake: talker T1 plus the slowest listener's
/// acceptance, never faster than the standard's ceiling.
pub fn handshake_ns(talker_t1_ns: u64, slowest_accept_ns: u64, hs488: bool) -> u64 {
    let floor = if hs488 {
        HS488_MIN_BYTE_NS
    } else {
        IEEE488_MIN_BYTE_NS
    };
    talker_t1_ns.saturating_add(slowest_accept_ns).max(floor)
}

/// `d` times `n`, saturating at `Duration::MAX` instead of overflowing.
pub fn times(d: Duration, n: u64) -> Duration {
    // In u64 nanoseconds when they do not overflow (584 years): no 128-bit division.
    if let Some(p) = u64::try_from(d.as_nanos())
        .ok()
        .and_then(|d| d.checked_mul(n))
    {
        return Duration::from_nanos(p);
    }
    let nanos = d.as_nanos().saturating_mul(u128::from(n));
    match u64::try_from(nanos / 1_000_000_000) {
        Ok(secs) => Duration::new(secs, (nanos % 1_000_000_000) as u32),
        Err(_) => Duration::MAX,
    }
}

/// The cost of moving `bytes` data bytes in one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TransferCost {
    /// Elapsed time of the call.
    pub elapsed: Duration,
    /// Host CPU time it used.
    pub cpu: Duration,
    /// Time per byte that was applied (for reports and partial transfers).
    pub byte_ns: u64,
}

/// Per-byte time and CPU for a transfer, before the call overhead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteCost {
    /// Elapsed nanoseconds per byte.
    pub elapsed_ns: u64,
    /// Host CPU nanoseconds per byte (0 for DMA, whose CPU goes to interrupts).
    pub cpu_ns: u64,
}

/// Per-byte cost on `board` for a transfer whose handshake takes `handshake` ns, with
/// `polls_per_byte` polls of other interfaces (each `poll_ns` long, plus the device's
/// holdoff `recovery_ns`).
pub fn byte_cost(
    board: &BoardTiming,
    dir: Direction,
    handshake: u64,
    poll_ns: u64,
    recovery_ns: u64,
) -> ByteCost {
    match board.mode {
        TransferMode::Pio => {
            let cpu = match dir {
                Direction::Read => board.pio_read_byte_ns,
                Direction::Write => board.pio_write_byte_ns,
            };
            let polling = if poll_ns > 0 {
                poll_ns.saturating_add(recovery_ns)
            } else {
                0
            };
            let t = handshake.saturating_add(cpu).saturating_add(polling);
            // The CPU spins through the handshake and the polls: busy for all of it.
            ByteCost {
                elapsed_ns: t,
                cpu_ns: t,
            }
        }
        TransferMode::Dma => ByteCost {
            elapsed_ns: handshake.max(board.dma_byte_ns),
            cpu_ns: 0,
        },
    }
}

/// Total cost of a call moving `bytes` bytes at `per_byte` in direction `dir`.
pub fn call_cost(
    board: &BoardTiming,
    dir: Direction,
    per_byte: ByteCost,
    bytes: u64,
) -> TransferCost {
    let (elapsed, cpu) = call_cost_ns(board, &BoardNanos::of(board), dir, per_byte, bytes);
    TransferCost {
        elapsed: ns(elapsed),
        cpu: ns(cpu),
        byte_ns: per_byte.elapsed_ns,
    }
}

/// [`call_cost`] as (elapsed, CPU) in u64 nanoseconds (saturating at 584 years).
#[inline]
pub(crate) fn call_cost_ns(
    board: &BoardTiming,
    ns: &BoardNanos,
    dir: Direction,
    per_byte: ByteCost,
    bytes: u64,
) -> (u64, u64) {
    let body_ns = per_byte.elapsed_ns.saturating_mul(bytes);
    let overhead = ns.call(dir);
    let cpu = match board.mode {
        TransferMode::Pio => overhead.saturating_add(per_byte.cpu_ns.saturating_mul(bytes)),
        TransferMode::Dma => {
            let interrupts = bytes.div_ceil(board.dma_block.max(1)).max(1);
            overhead
                .saturating_add(ns.dma_setup)
                .saturating_add(ns.interrupt_cpu.saturating_mul(interrupts))
        }
    };
    (overhead.saturating_add(body_ns), cpu)
}

/// How many of `bytes` fit before `timeout` runs out, when the
/// transfer waits `wait` for the device first and then pays the call overhead and
/// `per` a byte; and whether the timeout cuts the transfer short. Reads and writes
/// both use it (`dir` says which call overhead applies).
pub fn bytes_within(
    board: &BoardTiming,
    dir: Direction,
    per: ByteCost,
    bytes: usize,
    wait: Duration,
    timeout: crate::Timeout,
) -> (usize, bool) {
    bytes_within_ns(
        &BoardNanos::of(board),
        dir,
        per,
        bytes,
        nanos(wait),
        timeout,
    )
}

/// [`bytes_within`] with the wait in nanoseconds. Exact: the timeout cuts a transfer
/// short only when it is below the full transfer's time, which u64 nanoseconds hold.
#[inline]
pub(crate) fn bytes_within_ns(
    board: &BoardNanos,
    dir: Direction,
    per: ByteCost,
    bytes: usize,
    wait: u64,
    timeout: crate::Timeout,
) -> (usize, bool) {
    let crate::Timeout::After(timeout) = timeout else {
        return (bytes, false);
    };
    // The whole transfer's elapsed time: wait, overhead, bytes (as `call_cost` has it).
    let overhead = board.call(dir);
    let full = wait
        .saturating_add(overhead)
        .saturating_add(per.elapsed_ns.saturating_mul(bytes as u64));
    let timeout = nanos(timeout);
    if full <= timeout {
        return (bytes, false);
    }
    let budget = timeout.saturating_sub(wait).saturating_sub(overhead);
    let fit = budget / per.elapsed_ns.max(1);
    (bytes.min(usize::try_from(fit).unwrap_or(usize::MAX)), true)
}

/// Nanoseconds as a `Duration`.
pub fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_saturate() {
        assert_eq!(times(Duration::from_micros(2), 3), Duration::from_micros(6));
        assert_eq!(times(Duration::from_secs(u64::MAX / 2), 3), Duration::MAX);
        assert_eq!(
            times(Duration::from_nanos(1), u64::MAX),
            Duration::from_nanos(u64::MAX)
        );
    }

    #[test]
    fn handshake_never_beats_the_standard() {
        assert_eq!(handshake_ns(100, 100, false), 1000);
        assert_eq!(handshake_ns(2000, 500, false), 2500);
        assert_eq!(handshake_ns(50, 50, true), 125);
    }

    #[test]
    fn pio_cost_is_linear_and_cpu_bound() {
        let b = BoardTiming {
            mode: TransferMode::Pio,
            call_overhead: Duration::from_micros(300),
            pio_read_byte_ns: 1286,
            ..Default::default()
        };
        let per = byte_cost(&b, Direction::Read, 1000, 0, 0);
        assert_eq!(per.elapsed_ns, 2286);
        let c = call_cost(&b, Direction::Read, per, 400_000);
        assert_eq!(
            c.elapsed,
            Duration::from_micros(300) + Duration::from_nanos(914_400_000)
        );
        assert_eq!(c.cpu, c.elapsed);
        let polled = byte_cost(&b, Direction::Read, 1000, 100_000, 31_322);
        assert_eq!(polled.elapsed_ns, 2286 + 131_322);
    }

    #[test]
    fn dma_cpu_is_per_interrupt() {
        let b = BoardTiming::default();
        let per = byte_cost(
            &b,
            Direction::Write,
            handshake_ns(300, 500, false),
            100_000,
            5_000,
        );
        assert_eq!(
            per.elapsed_ns, 1000,
            "DMA ignores polling, keeps the ceiling"
        );
        let c = call_cost(&b, Direction::Write, per, 8192);
        assert_eq!(c.cpu, b.call_overhead + b.dma_setup + b.interrupt_cpu * 2);
    }

    #[test]
    fn reads_and_writes_pay_their_own_overheads_where_the_board_has_them() {
        let mut b = BoardTiming::default();
        let per = byte_cost(&b, Direction::Read, 1000, 0, 0);
        // One overhead: both ways pay it.
        for dir in [Direction::Read, Direction::Write] {
            assert_eq!(
                call_cost(&b, dir, per, 10).elapsed,
                Duration::from_micros(30)
            );
        }
        b.read_call_overhead = Some(Duration::from_micros(340));
        b.write_call_overhead = Some(Duration::from_micros(442));
        let read = call_cost(&b, Direction::Read, per, 10);
        let write = call_cost(&b, Direction::Write, per, 10);
        assert_eq!(read.elapsed, Duration::from_micros(350));
        assert_eq!(write.elapsed, Duration::from_micros(452));
        assert_eq!(
            b.data_call_overhead(Direction::Read),
            Duration::from_micros(340)
        );
        // A timeout cuts each at its own overhead: 400 us leaves 60 bytes read, none written.
        let t = crate::Timeout::After(Duration::from_micros(400));
        assert_eq!(
            bytes_within(&b, Direction::Read, per, 100, Duration::ZERO, t),
            (60, true)
        );
        assert_eq!(
            bytes_within(&b, Direction::Write, per, 100, Duration::ZERO, t),
            (0, true)
        );
    }
}
