//! One flat record per measurement (configuration × size × direction), the unit every
//! exporter writes.

use serde::Serialize;

use crate::cpu::{service_demand_us_per_kib, MachineModes};
use crate::driver::ProtocolKind;
use crate::sample::{Direction, Sample};
use crate::stats::{self, Summary};

/// Declares a record field's enum: its serde name and its text are one string.
macro_rules! named_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $v:ident => $s:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $s)] $v,)*
        }

        impl $name {
            /// Its name in records.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$v => $s,)*
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

named_enum! {
    /// Which backend a measurement ran on.
    Backend {
        /// The simulated bus.
        Sim => "sim",
        /// A board through linux-gpib.
        #[cfg_attr(not(feature = "linux-gpib"), allow(dead_code))]
        LinuxGpib => "linux-gpib",
        /// A Prologix adapter.
        Prologix => "prologix",
        /// A VXI-11 gateway.
        Vxi11 => "vxi11",
        /// A HiSLIP server (`TCPIP::host::hislip0::INSTR`).
        Hislip => "hislip",
    }
}

/// The clock the seconds are on (named `wall`, `virtual` in records).
pub use gpib::ClockKind as Clock;

/// Writes `clock` as its name (serde's `serialize_with`).
pub fn clock_name<S: serde::Serializer>(
    clock: &Clock,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(clock.name())
}

named_enum! {
    /// Where the CPU figures come from.
    CpuSource {
        /// The simulator's model of the host CPU.
        Modelled => "modelled",
        /// getrusage of this process.
        Measured => "measured",
    }
}

/// A measurement, summarised over its runs. Field units are in the names.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Record {
    /// The configuration's label (`hp9000-350:unmount=/disc`).
    pub config: String,
    /// The backend.
    pub backend: Backend,
    /// The clock the seconds are on.
    #[serde(serialize_with = "clock_name")]
    pub clock: Clock,
    /// The instrument's address.
    pub device: String,
    /// How the instrument was driven.
    pub protocol: ProtocolKind,
    /// "read" or "write".
    pub direction: Direction,
    /// Bytes per transfer.
    pub size: u64,
    /// Measured runs.
    pub runs: usize,
    /// Median seconds per transfer (the headline).
    pub seconds: f64,
    /// `size / seconds`.
    pub bytes_per_second: f64,
    /// Statistics of the seconds over the runs.
    pub stats: Summary,
    /// Each run's seconds, in the order measured: what `stats` summarises, kept so
    /// `gpib-diag compare BEFORE.json AFTER.json` can test a difference between two
    /// saved runs on them.
    pub run_seconds: Vec<f64>,
    /// Median host CPU seconds per transfer.
    pub cpu_seconds: f64,
    /// Modelled (simulator) or measured (getrusage of this process).
    pub cpu_source: CpuSource,
    /// CPU seconds / seconds.
    pub cpu_utilisation: f64,
    /// CPU microseconds per KiB moved (netperf's service demand).
    pub service_demand_us_per_kib: Option<f64>,
    /// This process's measured user CPU seconds (median per transfer).
    pub process_user_s: f64,
    /// This process's measured system CPU seconds (median per transfer).
    pub process_system_s: f64,
    /// Median wall seconds per transfer on this machine.
    pub wall_seconds: f64,
    /// The machine's CPU modes over the last run (wall-clock backends only).
    pub machine: Option<MachineModes>,
    /// The network's own cost per transfer (network backends only).
    pub network: Option<Network>,
}

/// What one transfer cost on the network: medians over the runs.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Network {
    /// Requests sent per transfer (Prologix lines and `++` commands; VXI-11 calls).
    pub requests: f64,
    /// Requests that waited for an answer, per transfer.
    pub round_trips: f64,
    /// Bytes on the wire per transfer, both ways.
    pub bytes: f64,
    /// Wire bytes beyond the payload per transfer (framing, escapes, RPC headers,
    /// `++` commands).
    pub overhead_bytes: f64,
    /// Wall microseconds waiting per round trip (the round-trip time seen by calls).
    pub rtt_us: f64,
}

fn network(size: u64, samples: &[Sample]) -> Option<Network> {
    let w: Vec<_> = samples.iter().map(|s| s.wire).collect::<Option<Vec<_>>>()?;
    if w.is_empty() {
        return None;
    }
    let m = |f: &dyn Fn(&crate::sample::Wire) -> f64| median(&w.iter().map(f).collect::<Vec<_>>());
    let bytes = m(&|x| x.bytes as f64);
    let trips = m(&|x| x.round_trips as f64);
    Some(Network {
        requests: m(&|x| x.requests as f64),
        round_trips: trips,
        bytes,
        overhead_bytes: (bytes - size as f64).max(0.0),
        rtt_us: m(&|x| {
            if x.round_trips > 0 {
                x.waiting_s * 1e6 / x.round_trips as f64
            } else {
                0.0
            }
        }),
    })
}

/// What a record is about, besides its samples.
#[derive(Debug, Clone)]
pub struct Context {
    /// Configuration label.
    pub config: String,
    /// The backend.
    pub backend: Backend,
    /// The clock.
    pub clock: Clock,
    /// Device address.
    pub device: String,
    /// The protocol.
    pub protocol: ProtocolKind,
}

fn median(v: &[f64]) -> f64 {
    stats::summarize(v).map_or(0.0, |s| s.median)
}

impl Record {
    /// Summarises `samples` (at least one) of `size`-byte transfers in `direction`.
    pub fn from_samples(
        ctx: &Context,
        direction: Direction,
        size: u64,
        samples: &[Sample],
    ) -> Option<Self> {
        let secs: Vec<f64> = samples.iter().map(|s| s.seconds).collect();
        let summary = stats::summarize(&secs)?;
        let seconds = summary.median;
        let cpu = median(&samples.iter().map(|s| s.cpu_seconds).collect::<Vec<_>>());
        let last = samples.last()?;
        Some(Self {
            config: ctx.config.clone(),
            backend: ctx.backend,
            clock: ctx.clock,
            device: ctx.device.clone(),
            protocol: ctx.protocol,
            direction,
            size,
            runs: samples.len(),
            seconds,
            bytes_per_second: if seconds > 0.0 {
                size as f64 / seconds
            } else {
                0.0
            },
            stats: summary,
            run_seconds: secs,
            cpu_seconds: cpu,
            cpu_source: if last.cpu_modelled {
                CpuSource::Modelled
            } else {
                CpuSource::Measured
            },
            cpu_utilisation: if seconds > 0.0 { cpu / seconds } else { 0.0 },
            service_demand_us_per_kib: service_demand_us_per_kib(cpu, size),
            process_user_s: median(&samples.iter().map(|s| s.process_user_s).collect::<Vec<_>>()),
            process_system_s: median(
                &samples
                    .iter()
                    .map(|s| s.process_system_s)
                    .collect::<Vec<_>>(),
            ),
            wall_seconds: median(&samples.iter().map(|s| s.wall_seconds).collect::<Vec<_>>()),
            machine: last.machine,
            network: network(size, samples),
        })
    }
}
