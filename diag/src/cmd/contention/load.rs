//! One point of the load: each device's loop of paced waits and transactions on its
//! board, run until the point's time is up, and what each device moved.

use super::*;

/// What one device did: bytes moved, its time, each transaction's latency.
struct Stream {
    bytes: u64,
    elapsed: Duration,
    latencies: Vec<f64>,
}

/// One device's workload, one bus call at a time: a paced wait or a transaction.
struct DeviceLoop {
    bus: Bus,
    dev: gpib::Device,
    workload: Workload,
    data: Vec<u8>,
    span: Duration,
    interval: Option<Duration>,
    t0: Duration,
    /// The lane's clock after its last step: its clock is readable only while it runs
    /// (after `run_lanes` the thread's own clock answers `now()`).
    end: Duration,
    /// The last step waited for a paced transaction: this one makes it.
    waited: bool,
    /// Network backends: end with a round trip (the service request line's state), so
    /// writes an adapter has taken but not yet made (a Prologix adapter answers nothing
    /// to them) are done before the device's time stops.
    sync_at_end: bool,
    stream: Stream,
    error: Option<gpib::Error>,
}

impl DeviceLoop {
    fn new(
        bus: Bus,
        address: Address,
        workload: Workload,
        size: usize,
        span: Duration,
        interval: Option<Duration>,
    ) -> gpib::Result<Self> {
        let dev = bus.device(address)?;
        let t0 = bus.now();
        // Network backends count their bytes on the wire; the others' calls return
        // once the bytes are moved.
        let sync_at_end = bus.wire_stats().is_some();
        Ok(Self {
            bus,
            dev,
            workload,
            data: vec![b'x'; size],
            span,
            interval,
            t0,
            end: t0,
            waited: false,
            sync_at_end,
            stream: Stream {
                bytes: 0,
                elapsed: Duration::ZERO,
                latencies: Vec::new(),
            },
            error: None,
        })
    }

    /// One bus call: the wait until the next paced transaction is due, or the next
    /// transaction; `Break` once the span is over, the transaction limit reached or a
    /// call failed.
    fn step(&mut self) -> ControlFlow<()> {
        let flow = self.step_once();
        self.end = self.bus.now();
        flow
    }

    fn step_once(&mut self) -> ControlFlow<()> {
        let now = self.bus.now();
        let done = self.stream.latencies.len();
        let waited = std::mem::take(&mut self.waited);
        if !waited && (now.saturating_sub(self.t0) >= self.span || done >= MAX_TRANSACTIONS) {
            if self.sync_at_end {
                match self.bus.srq() {
                    Err(e) if e.kind() != gpib::ErrorKind::Unsupported => self.error = Some(e),
                    _ => {}
                }
            }
            return ControlFlow::Break(());
        }
        if let (Some(every), false) = (self.interval, waited) {
            // Paced: transaction k starts at t0 + k x interval, or at once when the
            // device is behind.
            let k = u32::try_from(done).unwrap_or(u32::MAX);
            let due = self.t0.saturating_add(every.saturating_mul(k));
            if due > now {
                self.bus.delay(due - now);
                self.waited = true;
                return ControlFlow::Continue(());
            }
        }
        let moved = match self.workload {
            Workload::Write => self.dev.write(&self.data).map(|()| self.data.len()),
            Workload::Query => self.dev.query("*IDN?").map(|a| a.len() + 1),
        };
        match moved {
            Ok(n) => {
                self.stream.bytes += n as u64;
                let latency = self.bus.now().saturating_sub(now);
                self.stream.latencies.push(latency.as_secs_f64());
                ControlFlow::Continue(())
            }
            Err(e) => {
                self.error = Some(e);
                ControlFlow::Break(())
            }
        }
    }

    /// What the device did, or the error that stopped it.
    fn finish(mut self) -> gpib::Result<Stream> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.stream.elapsed = self.end.saturating_sub(self.t0);
        Ok(self.stream)
    }
}

/// Opens board `index` of `host` (simulator), linux-gpib board `index`, or a new
/// connection to the adapter or gateway (board 0).
fn open_board(place: &Where, host: Option<&SimHost>, index: usize) -> Result<Bus> {
    match (host, place) {
        (Some(h), _) => Ok(Bus::new(h.board(index)?)),
        (None, Where::Network { kind, spec, .. }) => Ok(Target::open(*kind, spec)?.bus),
        (None, _) => open_linux_gpib(index),
    }
}

#[cfg(feature = "linux-gpib")]
fn open_linux_gpib(index: usize) -> Result<Bus> {
    let i = i32::try_from(index).map_err(|_| DiagError::Usage(format!("no board {index}")))?;
    Ok(Bus::new(
        gpib::backend::linux_gpib::LinuxGpibBoard::open_index(i)?,
    ))
}

#[cfg(not(feature = "linux-gpib"))]
fn open_linux_gpib(_index: usize) -> Result<Bus> {
    Err(DiagError::NoLinuxGpib)
}

pub(super) fn point(
    place: &Where,
    name: &str,
    devices: &[(usize, Address)],
    workload: Workload,
    size: usize,
    span: Duration,
    interval: Option<Duration>,
) -> Result<Point> {
    let host = match place {
        Where::Sim(config) => Some(config.build_named(name)?),
        Where::LinuxGpib | Where::Network { .. } => None,
    };
    let start_cpu = host.as_ref().map(SimHost::cpu);
    let cpu0 = CpuSnapshot::take_before();
    let wall0 = Instant::now();
    // One Bus per board, shared by its devices (a linux-gpib board opens once).
    let mut buses: Vec<(usize, Bus)> = Vec::new();
    let mut loops = Vec::new();
    for &(board, address) in devices {
        let bus = match buses.iter().find(|(b, _)| *b == board) {
            Some((_, bus)) => bus.clone(),
            None => {
                let bus = open_board(place, host.as_ref(), board)?;
                buses.push((board, bus.clone()));
                bus
            }
        };
        loops.push(DeviceLoop::new(
            bus, address, workload, size, span, interval,
        )?);
    }
    let wire0: Vec<_> = buses.iter().map(|(_, b)| b.wire_stats()).collect();
    let streams = match &host {
        // The simulator: every device a lane of this thread, the earliest first: the
        // order participant threads would take turns in, without their hand-offs.
        Some(host) => {
            host.run_lanes(&mut loops, DeviceLoop::step);
            loops
                .into_iter()
                .map(DeviceLoop::finish)
                .collect::<gpib::Result<Vec<_>>>()?
        }
        // Hardware and network: a thread per device, in wall time.
        None => {
            let threads: Vec<_> = loops
                .into_iter()
                .map(|mut l| {
                    std::thread::spawn(move || {
                        while l.step().is_continue() {}
                        l.finish()
                    })
                })
                .collect();
            let mut streams = Vec::new();
            for t in threads {
                let s = t
                    .join()
                    .map_err(|_| DiagError::Usage("a device's thread panicked".into()))??;
                streams.push(s);
            }
            streams
        }
    };
    // Utilisation over the time the devices were active (each stops after its last
    // transaction past the span).
    let secs = streams
        .iter()
        .map(|s| s.elapsed.as_secs_f64())
        .fold(span.as_secs_f64(), f64::max);
    let rates: Vec<f64> = streams
        .iter()
        .map(|s| s.bytes as f64 / s.elapsed.as_secs_f64().max(1e-12))
        .collect();
    // Bytes on the wire, both ways, over every connection (network backends).
    let wire_bytes = buses
        .iter()
        .zip(&wire0)
        .map(|((_, b), w0)| {
            let (w0, w1) = ((*w0)?, b.wire_stats()?);
            let total = |w: gpib::WireStats| w.bytes_sent.saturating_add(w.bytes_received);
            Some(total(w1).saturating_sub(total(w0)))
        })
        .try_fold(0u64, |sum, w| w.map(|w| sum.saturating_add(w)));
    let mut lat: Vec<f64> = streams
        .iter()
        .flat_map(|s| s.latencies.iter().copied())
        .collect();
    lat.sort_by(f64::total_cmp);
    let pct = |p: f64| stats::percentile_sorted(&lat, p);
    let mut boards: Vec<usize> = devices.iter().map(|(b, _)| *b).collect();
    boards.dedup();
    let (cpu_utilisation, bus_utilisation) = match &host {
        Some(host) => {
            let names = host.board_names();
            let busy = host.cpu() - start_cpu.unwrap_or_default();
            (
                busy.as_secs_f64() / (secs * host.cpu_count() as f64),
                boards
                    .into_iter()
                    .map(|b| (names[b].clone(), host.bus_busy(b).as_secs_f64() / secs))
                    .collect(),
            )
        }
        None => {
            // Hardware: the machine's CPU from /proc/stat (all modes but idle and
            // iowait), else this process's user + system time; bus time is not known.
            let usage = cpu::usage_between(&cpu0, &CpuSnapshot::take(), wall0.elapsed());
            let cpus = std::thread::available_parallelism().map_or(1, usize::from) as f64;
            let share = match usage.machine {
                Some(m) => m.user + m.system + m.irq + m.softirq,
                None => {
                    (usage.process_user_s + usage.process_system_s)
                        / (wall0.elapsed().as_secs_f64().max(1e-9) * cpus)
                }
            };
            (share, Vec::new())
        }
    };
    Ok(Point {
        devices: devices.len(),
        aggregate_bytes_per_second: rates.iter().sum(),
        per_device_bytes_per_second: rates,
        per_device_bytes: streams.iter().map(|s| s.bytes).collect(),
        per_device_transactions: streams.iter().map(|s| s.latencies.len() as u64).collect(),
        per_device_seconds: streams.iter().map(|s| s.elapsed.as_secs_f64()).collect(),
        wire_bytes,
        latency_p50_s: pct(0.50),
        latency_p90_s: pct(0.90),
        latency_p99_s: pct(0.99),
        cpu_utilisation,
        bus_utilisation,
    })
}
