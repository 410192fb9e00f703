//! Timing one transfer the way the 1988 HP 9000/350 io_test program does, on any backend.
//!
//! Time comes from the backend's clock (virtual on the simulator, wall on hardware);
//! CPU from the backend's model when it has one, else from the operating system.

use std::time::{Duration, Instant};

use gpib::{Address, Bus, ClockKind, Device};

use crate::cpu::{self, CpuSnapshot};
use crate::driver::{Driver, ProtocolKind};
use crate::error::{DiagError, Result};
pub use crate::sample::{Direction, Sample, Wire};
pub use crate::session_options::{ProtocolChoice, SessionOptions};
use crate::target::Target;

/// Like the 1988 io_test program's idle loop: wait this long after the command before timing, so the
/// instrument's own response latency is not counted.
pub const SETTLE: Duration = Duration::from_millis(22);

fn wire_between(a: Option<gpib::WireStats>, b: Option<gpib::WireStats>) -> Option<Wire> {
    let (a, b) = (a?, b?);
    Some(Wire {
        requests: b.requests.saturating_sub(a.requests),
        round_trips: b.round_trips.saturating_sub(a.round_trips),
        bytes: (b.bytes_sent + b.bytes_received).saturating_sub(a.bytes_sent + a.bytes_received),
        waiting_s: b.waiting.saturating_sub(a.waiting).as_secs_f64(),
    })
}

/// An instrument set up for timed transfers.
pub struct Session {
    bus: Bus,
    /// Writes return before the bytes are on the bus (a Prologix adapter queues them; a
    /// HiSLIP message has no reply): a timed write ends with a serial poll, which the
    /// adapter (the HiSLIP server: a status query) answers after them.
    queued_writes: bool,
    device: Device,
    driver: Box<dyn Driver>,
    buf: Vec<u8>,
    pattern: Vec<u8>,
}

fn pattern(n: usize) -> Vec<u8> {
    // Every byte value, 0x0A included, in an order that catches shifted data.
    (0..n)
        .map(|i| (i.wrapping_mul(131) ^ (i >> 8)) as u8)
        .collect()
}

impl Session {
    /// Sets the instrument up as the 1988 io_test program does (`ABRT;DISA;`, `NEW <words>;NEW?`) for
    /// transfers of up to `max_size` bytes; SCPI needs no set-up.
    pub fn open(target: &Target, opts: &SessionOptions, max_size: u64) -> Result<Self> {
        let (address, protocol, timeout) = (opts.device, opts.protocol, opts.timeout);
        let instruments = target.instruments();
        let address = match address {
            Some(a) => Address::try_from(a)?,
            None if target.device.is_some() => target.device.unwrap_or(Address::primary(
                gpib::PrimaryAddress::try_from(0u8).expect("valid"),
            )),
            None if target.host.is_some() => {
                instruments.first().map(|(a, _)| *a).ok_or_else(|| {
                    DiagError::Usage(
                        "no instrument found on the board: give --device <ADDR>".into(),
                    )
                })?
            }
            // Hardware: the first listener on the bus.
            None => match target.bus.find_listeners() {
                Ok(found) => found.first().copied().ok_or_else(|| {
                    DiagError::Usage("no listener found on the board: give --device <ADDR>".into())
                })?,
                Err(e) if e.kind() == gpib::ErrorKind::Unsupported => {
                    return Err(DiagError::Usage(format!(
                        "the {} backend cannot look for listeners: give --device <ADDR>",
                        target.backend
                    )))
                }
                Err(e) => return Err(e.into()),
            },
        };
        let protocol = match protocol {
            ProtocolChoice::Auto => match instruments.iter().find(|(a, _)| *a == address) {
                Some((_, model)) if model.eq_ignore_ascii_case("HP3565") => ProtocolKind::Hp3565,
                Some(_) => ProtocolKind::Scpi,
                None if target.host.is_some() => {
                    return Err(DiagError::Usage(format!(
                        "no instrument at address {address} on this board (instruments: {})",
                        instruments
                            .iter()
                            .map(|(a, m)| format!("{m} at {a}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )))
                }
                None => probe_protocol(&target.bus, address)?,
            },
            ProtocolChoice::Given(p) => p,
        };
        let model = instruments
            .iter()
            .find(|(a, _)| *a == address)
            .map(|(_, m)| m.as_str());
        if let Some(model) = model.filter(|_| protocol != ProtocolKind::Mock) {
            let hp = model.eq_ignore_ascii_case("HP3565");
            if hp != (protocol == ProtocolKind::Hp3565) {
                let name = if hp { "scpi" } else { "hp3565" };
                return Err(DiagError::Usage(format!(
                    "--protocol {name} does not fit the {model} at {address}: it does not \
                     understand those commands (use --protocol {} or auto)",
                    if hp { "hp3565" } else { "scpi" }
                )));
            }
        }
        check_size(max_size, protocol, model)?;
        let mut device = target.bus.device(address)?;
        match timeout {
            // The option's 0 is "none".
            Some(0.0) => device.set_timeout(Some(gpib::Timeout::Never)),
            Some(t) => device.set_timeout(Some(
                Duration::try_from_secs_f64(t)
                    .map_err(|_| {
                        DiagError::Usage(format!("--timeout {t} is not a number of seconds"))
                    })?
                    .into(),
            )),
            None => {
                // A board with a timeout gets one long enough for the largest transfer
                // at 10 kB/s; a board with none keeps none (HP-UX's raw HP-IB).
                if let gpib::Timeout::After(board) = target.bus.timeout() {
                    let needed =
                        Duration::from_secs(10) + Duration::from_secs_f64(max_size as f64 / 10e3);
                    device.set_timeout(Some(board.max(needed).into()));
                }
            }
        }
        let size = usize::try_from(max_size).map_err(|_| {
            DiagError::Usage(format!("{max_size} bytes do not fit this machine's memory"))
        })?;
        let mut driver = protocol.driver();
        driver.prepare(&device, size)?;
        Ok(Self {
            bus: target.bus.clone(),
            queued_writes: matches!(
                target.backend,
                crate::record::Backend::Prologix | crate::record::Backend::Hislip
            ),
            device,
            driver,
            buf: vec![0u8; size],
            pattern: pattern(size),
        })
    }

    /// The protocol in use.
    pub fn protocol(&self) -> ProtocolKind {
        self.driver.kind()
    }

    /// The device's address.
    pub fn address(&self) -> Address {
        self.device.address()
    }

    /// `size` as an index, when it fits the buffer [`Session::open`] sized.
    fn fits(&self, size: u64) -> Result<usize> {
        usize::try_from(size)
            .ok()
            .filter(|&n| n <= self.buf.len())
            .ok_or_else(|| {
                DiagError::Usage(format!(
                    "{size} bytes is more than this session was opened for ({} bytes)",
                    self.buf.len()
                ))
            })
    }

    /// Addresses the device to talk before the timed read (as the 1988 io_test program does), on
    /// backends that address with command bytes; a device-level backend addresses
    /// inside its read call.
    fn address_for_reading(&self, dev: &Device) -> Result<()> {
        if !self.bus.device_level() {
            self.bus
                .transaction(|tx| tx.address_from_device(dev.address()))?;
        }
        Ok(())
    }

    /// Times a read of `size` bytes (at most the size given to [`Session::open`]).
    pub fn read(&mut self, size: u64) -> Result<Sample> {
        let n = self.fits(size)?;
        let dev = self.device.clone();
        self.driver.request_read(&dev, n)?;
        self.address_for_reading(&dev)?;
        self.bus.delay(SETTLE);
        let (driver, buf) = (&mut self.driver, &mut self.buf[..n]);
        let s = timed(&self.bus, || Ok(driver.read(&dev, buf)? as u64))?;
        self.driver.after_read(&dev, n)?;
        check_count(s.bytes, size)?;
        Ok(s)
    }

    /// Ends the device's reads on `eos` as well as on END (None: on END only).
    pub fn end_reads_on(&mut self, eos: Option<gpib::Eos>) {
        self.device.set_eos(eos);
    }

    /// Times a read of `size` bytes (as [`Session::read`]) in calls that each ask for at
    /// most `call` bytes.
    pub fn read_in_calls(&mut self, size: u64, call: u64) -> Result<Sample> {
        let n = self.fits(size)?;
        let call = usize::try_from(call).unwrap_or(usize::MAX);
        let dev = self.device.clone();
        self.driver.request_read(&dev, n)?;
        self.address_for_reading(&dev)?;
        self.bus.delay(SETTLE);
        let (driver, buf) = (&mut self.driver, &mut self.buf[..n]);
        let s = timed(&self.bus, || {
            Ok(driver.read_in_calls(&dev, buf, call)? as u64)
        })?;
        self.driver.after_read(&dev, n)?;
        check_count(s.bytes, size)?;
        Ok(s)
    }

    /// Times a write of `size` bytes, then reads them back untimed to check them.
    pub fn write(&mut self, size: u64) -> Result<Sample> {
        let n = self.fits(size)?;
        let dev = self.device.clone();
        if self.driver.request_write(&dev, n)? {
            self.bus.delay(SETTLE);
        }
        let (driver, data) = (&mut self.driver, &self.pattern[..n]);
        let queued = self.queued_writes;
        let s = timed(&self.bus, || {
            driver.write(&dev, data)?;
            if queued {
                dev.serial_poll()?;
            }
            Ok(n as u64)
        })?;
        self.verify(n)?;
        Ok(s)
    }

    /// Times `count` short transactions back to back ([`Driver::transaction`]): one
    /// sample for all of them.
    pub fn transactions(&mut self, count: u32) -> Result<Sample> {
        let dev = self.device.clone();
        let driver = &mut self.driver;
        timed(&self.bus, || {
            for _ in 0..count {
                driver.transaction(&dev)?;
            }
            Ok(u64::from(count))
        })
    }

    /// Reads back what [`Session::write`] sent and compares it.
    fn verify(&mut self, n: usize) -> Result<()> {
        let dev = self.device.clone();
        let back = &mut self.buf[..n];
        let got = self.driver.read_back(&dev, back)?;
        check_count(got as u64, n as u64)?;
        if let Some(i) = back
            .iter()
            .zip(&self.pattern[..n])
            .position(|(a, b)| a != b)
        {
            return Err(DiagError::DataMismatch(format!(
                "byte {i} of {n} read back as 0x{:02X}, written as 0x{:02X}",
                back[i], self.pattern[i]
            )));
        }
        Ok(())
    }
}

/// The largest transfer the instrument takes with `protocol`, and what sets it.
fn instrument_limit(protocol: ProtocolKind, model: Option<&str>) -> (u64, String) {
    use gpib::sim::instruments::{hp3565, scpi};
    match (protocol, model) {
        (ProtocolKind::Mock, _) => (
            scpi::MAX_BLOCK as u64,
            "the mock driver's limit (64 MiB)".into(),
        ),
        (ProtocolKind::Hp3565, _) => (
            (hp3565::MAX_BLOCK_WORDS * 2) as u64,
            format!(
                "the HP3565's largest block ({} words: 32 MiB)",
                hp3565::MAX_BLOCK_WORDS
            ),
        ),
        (_, Some(model)) => (
            scpi::MAX_BLOCK as u64,
            format!("the simulated {model} instrument's block memory (64 MiB)"),
        ),
        _ => (
            999_999_999,
            "a definite-length block's 9 length digits (999,999,999 bytes)".into(),
        ),
    }
}

/// Refuses sizes over the instrument's limit or over what this machine can hold (a
/// buffer and a test pattern of the size), before anything is allocated.
fn check_size(size: u64, protocol: ProtocolKind, model: Option<&str>) -> Result<()> {
    let (limit, why) = instrument_limit(protocol, model);
    if size > limit {
        return Err(DiagError::Usage(format!(
            "{size} bytes is more than the instrument takes in one transfer: the limit is \
             {limit} bytes, {why}"
        )));
    }
    if let Some(available) = cpu::memory_available() {
        let needed = size.saturating_mul(2);
        if needed > available {
            return Err(DiagError::Usage(format!(
                "a {size}-byte transfer needs {needed} bytes of memory (a buffer and a test \
                 pattern), more than this machine has available ({available} bytes)"
            )));
        }
    }
    Ok(())
}

/// The longest `*IDN?` answer the protocol probe reads.
const PROBE_MAX_ANSWER: usize = 4096;

/// An instrument that answers `*IDN?` within a second speaks IEEE 488.2 (SCPI);
/// one that does not is taken for the 1988 measurement's HP3565 (cleared after the probe).
fn probe_protocol(bus: &Bus, address: Address) -> Result<ProtocolKind> {
    let mut dev = bus.device(address)?;
    dev.set_timeout(Some(Duration::from_secs(1).into()));
    // An identification is a line: a talker that goes on past this is not answering.
    dev.set_max_read(PROBE_MAX_ANSWER);
    match dev.query("*IDN?") {
        Ok(idn) => {
            log::info!("device {address} answers *IDN? with {idn:?}: SCPI");
            Ok(ProtocolKind::Scpi)
        }
        // It answered, and its answer never ended (no EOI): SCPI still.
        Err(e) if crate::error::stalled_read(&e).is_some() => {
            log::info!("device {address} answers *IDN? with bytes that never end ({e}): SCPI");
            dev.clear()?;
            Ok(ProtocolKind::Scpi)
        }
        Err(e) => {
            log::info!("device {address} does not answer *IDN? ({e}): HP3565 protocol");
            dev.clear()?;
            Ok(ProtocolKind::Hp3565)
        }
    }
}

/// Times `f` on `bus`'s clock, with CPU from the bus's model or the operating system.
fn timed(bus: &Bus, f: impl FnOnce() -> Result<u64>) -> Result<Sample> {
    let virtual_clock = bus.clock_kind() == ClockKind::Virtual;
    let m0 = bus.modelled_host_cpu();
    let n0 = bus.wire_stats();
    // The process's CPU counters right around the transfer (`take_before` reads
    // /proc/stat first), so the CPU is charged over the same window as the time.
    // The thread's CPU clock is read right around the transfer: the other readings (a
    // file each) are CPU work of their own.
    let c0 = CpuSnapshot::take_before();
    let q0 = cpu::thread_run_queue_wait();
    let th0 = cpu::thread_cpu();
    let (t0, w0) = (bus.now(), Instant::now());
    let bytes = f()?;
    let (t1, wall) = (bus.now(), w0.elapsed());
    let th1 = cpu::thread_cpu();
    let q1 = cpu::thread_run_queue_wait();
    let c1 = CpuSnapshot::take();
    let n1 = bus.wire_stats();
    let m1 = bus.modelled_host_cpu();
    let usage = cpu::usage_between(&c0, &c1, wall);

    let seconds = (t1 - t0).as_secs_f64();
    let (cpu_seconds, cpu_modelled) = match (m0, m1) {
        (Some(a), Some(b)) => ((b - a).as_secs_f64(), true),
        // Measured: the calling thread's CPU over the transfer (a share of one core),
        // else the process's.
        // The thread's clock is read just outside the timed window: what it adds (the
        // clock readings themselves, a few microseconds) is not the transfer's, and one
        // thread cannot be busy for longer than the window.
        _ => match (th0, th1) {
            (Some(a), Some(b)) => (
                b.saturating_sub(a)
                    .as_secs_f64()
                    .min(wall.as_secs_f64().max(seconds)),
                false,
            ),
            _ => (usage.process_user_s + usage.process_system_s, false),
        },
    };
    Ok(Sample {
        seconds,
        bytes,
        cpu_seconds,
        cpu_modelled,
        process_user_s: usage.process_user_s,
        process_system_s: usage.process_system_s,
        wall_seconds: wall.as_secs_f64(),
        waiting_seconds: match (q0, q1) {
            (Some(a), Some(b)) if !virtual_clock => Some(b.saturating_sub(a).as_secs_f64()),
            _ => None,
        },
        machine: if virtual_clock { None } else { usage.machine },
        wire: wire_between(n0, n1),
    })
}

fn check_count(got: u64, want: u64) -> Result<()> {
    if got != want {
        return Err(DiagError::DataMismatch(format!(
            "moved {got} bytes, expected {want}"
        )));
    }
    Ok(())
}
