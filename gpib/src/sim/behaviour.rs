//! The contention mechanisms of the model: what a board's driver and a device do that
//! slows other transfers down, each switchable on its own.
//!
//! | mechanism | where | what it costs |
//! |---|---|---|
//! | listen-only device ([`DeviceBehaviour::listen_only`]) | device | it accepts every data byte, so the handshake runs at its acceptance time (a slow printer or plotter logging the bus) |
//! | NRFD held after each message ([`DeviceBehaviour::nrfd_hold`]) | device | every device takes part in the ATN handshake, so the next command bytes (anyone's addressing) wait until it releases NRFD |
//! | SRQ storm ([`DeviceBehaviour::srq_every`]) with [`BoardBehaviour::autopoll`] | device, board | the driver serial-polls on every request: UNL, MLA, SPE, TAD, one status byte, SPD, UNT each time, on the bus and the CPU |
//! | background disc traffic ([`DeviceBehaviour::activity_bytes_per_s`]) | device | interrupts (DMA) or byte moves (PIO) take a share of the host CPU, so CPU work elsewhere stretches |
//! | addressing on every call ([`AddressingMode::EveryCall`]) | board | UNL, MTA/MLA and secondaries before each read and write, however small |
//! | unaddressing after every call ([`BoardBehaviour::unaddress`]) | board | UNL and UNT after each device read and write (linux-gpib's `IbcUnAddr`), and so the addressing again before the next |
//! | cable length ([`BoardBehaviour::cable_m`]) | board | 5 ns a metre, four trips a handshake cycle; past IEEE 488.1's limits (20 m, 2 m a device) settling needs the standard's 2 µs T1 |
//!
//! The other sources are timing parameters ([`crate::sim::timing`]): programmed I/O
//! against DMA, slow listeners' acceptance times, and the driver polling mounted discs.

use std::time::Duration;

use crate::sim::timing::{BoardTiming, TransferMode};

/// How a board's driver addresses devices for reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AddressingMode {
    /// Addressing bytes are sent only when the addressed device changes (what
    /// [`crate::Bus`] does by default).
    #[default]
    Cached,
    /// Every read and write sends UNL, MTA/MLA and any secondary first (linux-gpib's
    /// device-level `ibwrt`/`ibrd`).
    EveryCall,
}

/// A board's driver behaviour: the contention sources that belong to the board.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BoardBehaviour {
    /// The driver serial-polls every device that requests service as soon as the bus is
    /// free (linux-gpib's autopoll).
    pub autopoll: bool,
    /// When the driver sends addressing bytes.
    pub addressing: AddressingMode,
    /// The driver sends UNL and UNT after every device read and write (linux-gpib's
    /// `IbcUnAddr`).
    pub unaddress: bool,
    /// Total cable length in metres (`None`: a short bus, propagation ignored).
    pub cable_m: Option<f64>,
}

/// Speed of a signal on a GPIB cable: about 5 ns a metre.
pub const CABLE_NS_PER_M: f64 = 5.0;
/// IEEE 488.1's longest bus: 20 m.
pub const MAX_CABLE_M: f64 = 20.0;
/// IEEE 488.1's cable allowance per device: 2 m.
pub const CABLE_M_PER_DEVICE: f64 = 2.0;
/// The settling time IEEE 488.1 requires when the high-speed conditions do not hold.
pub const SAFE_T1_NS: u64 = 2000;

impl BoardBehaviour {
    /// Propagation per handshake cycle, ns: DAV out, NRFD and NDAC back, twice.
    pub fn propagation_ns(&self) -> u64 {
        match self.cable_m {
            Some(m) if m > 0.0 => (4.0 * CABLE_NS_PER_M * m).round() as u64,
            _ => 0,
        }
    }

    /// Whether the cable is longer than IEEE 488.1 allows for `devices` devices
    /// (counting the board): more than 20 m, or more than 2 m a device.
    pub fn cable_out_of_limits(&self, devices: usize) -> bool {
        self.cable_m
            .is_some_and(|m| m > MAX_CABLE_M || m > CABLE_M_PER_DEVICE * devices.max(1) as f64)
    }

    /// The settling time a talker needs on this bus: its own, raised to the standard's
    /// 2 µs when the cable is out of limits.
    pub fn settling_ns(&self, t1_ns: u64, devices: usize) -> u64 {
        if self.cable_out_of_limits(devices) {
            t1_ns.max(SAFE_T1_NS)
        } else {
            t1_ns
        }
    }
}

/// A device's behaviour: the contention sources that belong to one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeviceBehaviour {
    /// The device listens to every data byte on the bus without being addressed
    /// (IEEE 488's listen-only mode).
    pub listen_only: bool,
    /// After each message it receives, the device holds NRFD this long.
    pub nrfd_hold: Duration,
    /// The device requests service again this long after each serial poll (an SRQ
    /// storm when the driver polls it automatically).
    pub srq_every: Option<Duration>,
    /// Background traffic of the device (a busy disc), bytes a second.
    pub activity_bytes_per_s: u64,
}

impl DeviceBehaviour {
    /// Whether any contention source is switched on.
    pub fn is_quiet(&self) -> bool {
        *self == Self::default()
    }
}

/// The share of one CPU that `bytes_per_s` of background traffic on a board with
/// `timing` takes: interrupts for DMA, every byte (and its handshake) for PIO.
pub fn activity_cpu_share(timing: &BoardTiming, bytes_per_s: u64) -> f64 {
    if bytes_per_s == 0 {
        return 0.0;
    }
    let rate = bytes_per_s as f64;
    match timing.mode {
        TransferMode::Dma => {
            let blocks = rate / timing.dma_block.max(1) as f64;
            blocks * (timing.interrupt_cpu.as_secs_f64() + timing.dma_setup.as_secs_f64())
        }
        TransferMode::Pio => {
            let per = timing.pio_read_byte_ns.max(timing.pio_write_byte_ns) as f64 * 1e-9;
            rate * per
        }
    }
}

/// Most of the CPU that background work may take (the rest is left to the program).
pub const MAX_BACKGROUND_SHARE: f64 = 0.9;

/// CPU work of `work` when a `share` of the CPU goes to interrupts meanwhile.
pub fn stretched(work: Duration, share: f64) -> Duration {
    if share <= 0.0 || work.is_zero() {
        return work;
    }
    let s = share.min(MAX_BACKGROUND_SHARE);
    Duration::try_from_secs_f64(work.as_secs_f64() / (1.0 - s)).unwrap_or(Duration::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cables_add_propagation_and_past_the_limits_the_safe_settling_time() {
        let short = BoardBehaviour::default();
        assert_eq!(short.propagation_ns(), 0);
        assert!(!short.cable_out_of_limits(3));
        let long = BoardBehaviour {
            cable_m: Some(40.0),
            ..Default::default()
        };
        assert_eq!(long.propagation_ns(), 800);
        assert!(long.cable_out_of_limits(30));
        assert_eq!(long.settling_ns(500, 30), SAFE_T1_NS);
        let per_device = BoardBehaviour {
            cable_m: Some(8.0),
            ..Default::default()
        };
        assert!(per_device.cable_out_of_limits(3), "8 m for 3 devices");
        assert!(!per_device.cable_out_of_limits(4));
        assert_eq!(per_device.settling_ns(500, 4), 500);
    }

    #[test]
    fn background_traffic_takes_cpu_by_transfer_mode() {
        let dma = BoardTiming::default(); // 4096-byte blocks, 3 us + 5 us each
        let share = activity_cpu_share(&dma, 4096 * 1000);
        assert!((share - 0.008).abs() < 1e-9, "{share}");
        let pio = BoardTiming {
            mode: TransferMode::Pio,
            pio_read_byte_ns: 1000,
            pio_write_byte_ns: 500,
            ..Default::default()
        };
        assert!((activity_cpu_share(&pio, 100_000) - 0.1).abs() < 1e-9);
        assert_eq!(activity_cpu_share(&pio, 0), 0.0);
        assert_eq!(
            stretched(Duration::from_millis(90), 0.1),
            Duration::from_millis(100)
        );
        assert_eq!(
            stretched(Duration::from_millis(10), 5.0),
            Duration::from_millis(100),
            "capped at 90 %"
        );
    }
}
