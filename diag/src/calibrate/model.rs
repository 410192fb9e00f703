//! From measured costs to the simulator's timing model: the parameters of a board and
//! its devices that make the model's transfers cost what was measured.
//!
//! The model (the simulator's `timing` module) charges a call its board's call
//! overhead (a read's and a write's apart) plus a per-byte time. By programmed I/O a byte takes the handshake (the
//! talker's T1 plus the listener's acceptance, never under the IEEE 488.1 ceiling) plus
//! the CPU's own work, and the CPU is busy throughout; by DMA a byte takes the
//! handshake, and the CPU only sets the transfer up. So a measured line `t = a + b·n`
//! each way gives: the board's mode from the share of each byte the CPU wanted, and the
//! per-byte work (PIO) or the device's settling and acceptance times (DMA) from `b`.
//! The call overheads start at the intercepts `a`; a timed transfer may be several
//! calls on the model, so calibrate then solves them on the model itself.

use gpib::ieee488::{HS488_MIN_BYTE_NS, IEEE488_MIN_BYTE_NS, MIN_T1_NS};
use serde::Serialize;

/// What was measured of one device.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DeviceCosts {
    /// Primary address.
    pub address: u8,
    /// Seconds a read call costs before its first byte.
    pub read_call_s: f64,
    /// Seconds a byte read costs.
    pub read_byte_s: f64,
    /// Seconds a write call costs before its first byte.
    pub write_call_s: f64,
    /// Seconds a byte written costs.
    pub write_byte_s: f64,
    /// Share of each byte's time the CPU was busy or wanted to be, both ways together.
    pub cpu_share: f64,
    /// Seconds from a short query's command to its answer, beyond the two calls.
    pub response_latency_s: f64,
}

/// The board's settings, where the backend told them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BoardSettings {
    /// T1 settling time when the board talks, ns.
    pub t1_ns: Option<u64>,
    /// HS488 on.
    pub hs488: Option<bool>,
}

/// How a board moves bytes, as observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The CPU moves every byte (busy through each).
    Pio,
    /// The board moves them (the CPU idle meanwhile).
    Dma,
}

impl Mode {
    /// As the configuration says it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Pio => "pio",
            Mode::Dma => "dma",
        }
    }
}

/// A CPU busy (or waiting to be) this share of each byte moves it by programmed I/O.
pub const PIO_SHARE: f64 = 0.5;

/// The board's acceptance time when it listens, ns (the model's default).
pub const BOARD_ACCEPT_NS: u64 = 200;

/// T1 when the board does not tell: the common 500 ns setting.
pub const DEFAULT_T1_NS: u64 = 500;

/// A device's acceptance under programmed I/O (the handshake stays at the ceiling).
pub const DEVICE_ACCEPT_NS: u64 = 300;

/// The model's parameters for one device.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DeviceModel {
    /// Primary address.
    pub address: u8,
    /// T1 when it talks, ns.
    pub t1_ns: u64,
    /// Acceptance when it listens, ns.
    pub accept_ns: u64,
    /// Response latency, µs.
    pub response_latency_us: f64,
}

/// The model's parameters for the board and its devices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoardModel {
    /// Transfer mode.
    pub mode: Mode,
    /// Call overhead of commands and polls (the board talking, as it does to write), µs.
    pub call_overhead_us: f64,
    /// Call overhead of a read, µs.
    pub read_call_overhead_us: f64,
    /// Call overhead of a write, µs.
    pub write_call_overhead_us: f64,
    /// T1 when the board talks, ns.
    pub t1_ns: u64,
    /// Acceptance when the board listens, ns.
    pub accept_ns: u64,
    /// HS488.
    pub hs488: bool,
    /// CPU nanoseconds a byte read takes beyond the handshake (PIO).
    pub pio_read_byte_ns: u64,
    /// CPU nanoseconds a byte written takes beyond the handshake (PIO).
    pub pio_write_byte_ns: u64,
    /// The devices.
    pub devices: Vec<DeviceModel>,
}

fn handshake_ns(talker_t1: u64, accept: u64, hs488: bool) -> u64 {
    let floor = if hs488 {
        HS488_MIN_BYTE_NS
    } else {
        IEEE488_MIN_BYTE_NS
    };
    talker_t1.saturating_add(accept).max(floor)
}

/// Seconds to whole nanoseconds, never negative (the model's per-byte unit).
fn ns(seconds: f64) -> u64 {
    let n = (seconds * 1e9).round();
    if n.is_finite() && n > 0.0 {
        // Bounded by the model's largest per-byte time well before u64's range.
        n.min(1e18) as u64
    } else {
        0
    }
}

/// Seconds to microseconds rounded to the nanosecond, within what a configuration
/// takes for a call overhead (0 to 1 s; not a number: 0).
pub fn us(seconds: f64) -> f64 {
    let us = (seconds * 1e6 * 1000.0).round() / 1000.0;
    if us.is_nan() {
        0.0
    } else {
        us.clamp(0.0, gpib::sim::config::MAX_CALL_US)
    }
}

/// The board and device parameters that reproduce `devices`' costs (the first device
/// decides the board's mode and call overheads: the model has one of each a board).
/// The overheads are the measured intercepts, each the cost of one call; where a timed
/// transfer is several calls on the model, calibrate solves them on the model instead.
pub fn derive(board: BoardSettings, devices: &[DeviceCosts]) -> Option<BoardModel> {
    let first = devices.first()?;
    let hs488 = board.hs488.unwrap_or(false);
    let t1 = board.t1_ns.unwrap_or(DEFAULT_T1_NS).max(MIN_T1_NS);
    let mode = if first.cpu_share >= PIO_SHARE {
        Mode::Pio
    } else {
        Mode::Dma
    };
    let mut model = BoardModel {
        mode,
        call_overhead_us: us(first.write_call_s),
        read_call_overhead_us: us(first.read_call_s),
        write_call_overhead_us: us(first.write_call_s),
        t1_ns: t1,
        accept_ns: BOARD_ACCEPT_NS,
        hs488,
        pio_read_byte_ns: 0,
        pio_write_byte_ns: 0,
        devices: Vec::new(),
    };
    for d in devices {
        let (dev_t1, dev_accept) = match mode {
            // The handshake at its ceiling; the rest of each byte is the CPU's.
            Mode::Pio => (MIN_T1_NS, DEVICE_ACCEPT_NS),
            // The device's own times make up each byte.
            Mode::Dma => (
                ns(d.read_byte_s)
                    .saturating_sub(BOARD_ACCEPT_NS)
                    .max(MIN_T1_NS),
                ns(d.write_byte_s).saturating_sub(t1),
            ),
        };
        if mode == Mode::Pio && d.address == first.address {
            model.pio_read_byte_ns =
                ns(d.read_byte_s).saturating_sub(handshake_ns(dev_t1, BOARD_ACCEPT_NS, hs488));
            model.pio_write_byte_ns =
                ns(d.write_byte_s).saturating_sub(handshake_ns(t1, dev_accept, hs488));
        }
        model.devices.push(DeviceModel {
            address: d.address,
            t1_ns: dev_t1,
            accept_ns: dev_accept,
            response_latency_us: (d.response_latency_s.max(0.0) * 1e6 * 10.0).round() / 10.0,
        });
    }
    Some(model)
}

#[cfg(test)]
impl BoardModel {
    /// The per-byte time the model gives a read from `device` (ns).
    pub fn read_byte_ns(&self, device: &DeviceModel) -> u64 {
        let hs = handshake_ns(device.t1_ns, self.accept_ns, self.hs488);
        match self.mode {
            Mode::Pio => hs.saturating_add(self.pio_read_byte_ns),
            Mode::Dma => hs,
        }
    }

    /// The per-byte time the model gives a write to `device` (ns).
    pub fn write_byte_ns(&self, device: &DeviceModel) -> u64 {
        let hs = handshake_ns(self.t1_ns, device.accept_ns, self.hs488);
        match self.mode {
            Mode::Pio => hs.saturating_add(self.pio_write_byte_ns),
            Mode::Dma => hs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn costs(read_b: f64, write_b: f64, share: f64) -> DeviceCosts {
        DeviceCosts {
            address: 11,
            read_call_s: 300e-6,
            read_byte_s: read_b,
            write_call_s: 320e-6,
            write_byte_s: write_b,
            cpu_share: share,
            response_latency_s: 0.0221,
        }
    }

    #[test]
    fn a_busy_cpu_makes_a_programmed_io_board_whose_bytes_cost_what_was_measured() {
        let settings = BoardSettings {
            t1_ns: Some(500),
            hs488: Some(false),
        };
        let m = derive(settings, &[costs(133.608e-6, 118.519e-6, 0.97)]).unwrap();
        assert_eq!(m.mode, Mode::Pio);
        // Each way its own; commands as writes (the board talks).
        assert_eq!(m.read_call_overhead_us, 300.0);
        assert_eq!(m.write_call_overhead_us, 320.0);
        assert_eq!(m.call_overhead_us, 320.0);
        // 1 us of handshake, the rest the CPU's.
        assert_eq!(m.pio_read_byte_ns, 132_608);
        assert_eq!(m.pio_write_byte_ns, 117_519);
        let d = &m.devices[0];
        assert_eq!(m.read_byte_ns(d), 133_608);
        assert_eq!(m.write_byte_ns(d), 118_519);
        assert_eq!(d.response_latency_us, 22_100.0);
    }

    #[test]
    fn an_idle_cpu_makes_a_dma_board_whose_devices_set_the_pace() {
        let settings = BoardSettings {
            t1_ns: None,
            hs488: None,
        };
        // A slow listener: 20.5 us a byte each way.
        let m = derive(settings, &[costs(20.5e-6, 20.5e-6, 0.02)]).unwrap();
        assert_eq!(m.mode, Mode::Dma);
        assert_eq!(m.t1_ns, DEFAULT_T1_NS);
        let d = &m.devices[0];
        assert_eq!((d.t1_ns, d.accept_ns), (20_300, 20_000));
        assert_eq!(m.read_byte_ns(d), 20_500);
        assert_eq!(m.write_byte_ns(d), 20_500);
        // At the ceiling: T1 and acceptance fill the 1 us a byte.
        let m = derive(settings, &[costs(1.0e-6, 1.0e-6, 0.0)]).unwrap();
        let d = &m.devices[0];
        assert_eq!((d.t1_ns, d.accept_ns), (800, 500));
        // Faster than the ceiling cannot be modelled: T1 stays at the standard's least.
        let m = derive(settings, &[costs(0.2e-6, 0.2e-6, 0.0)]).unwrap();
        assert_eq!(m.devices[0].t1_ns, MIN_T1_NS);
        assert_eq!(m.read_byte_ns(&m.devices[0]), 1000);
        let d = &derive(settings, &[costs(1.0e-6, 1.0e-6, 0.0)])
            .unwrap()
            .devices[0];
        assert_eq!(m.read_byte_ns(d), 1000);
        assert_eq!(m.write_byte_ns(d), 1000);
    }

    #[test]
    fn figures_that_cannot_be_modelled_are_clamped_not_wrapped() {
        let settings = BoardSettings {
            t1_ns: Some(2000),
            hs488: Some(false),
        };
        let m = derive(settings, &[costs(-1.0, f64::NAN, 0.9)]).unwrap();
        assert_eq!((m.pio_read_byte_ns, m.pio_write_byte_ns), (0, 0));
        let mut c = costs(1e-6, 1e-6, 0.9);
        c.read_call_s = -5.0;
        c.write_call_s = -5.0;
        let m = derive(settings, &[c]).unwrap();
        assert_eq!(m.call_overhead_us, 0.0);
        assert_eq!(
            (m.read_call_overhead_us, m.write_call_overhead_us),
            (0.0, 0.0)
        );
        c.read_call_s = f64::NAN;
        c.write_call_s = f64::INFINITY;
        let m = derive(settings, &[c]).unwrap();
        assert_eq!(
            (m.read_call_overhead_us, m.write_call_overhead_us),
            (0.0, 1e6)
        );
        assert!(derive(settings, &[]).is_none());
    }
}
