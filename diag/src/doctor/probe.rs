//! The doctor's probes on one opened board: line states, listeners, the service
//! request line, transfers each way, addressing overhead and CPU cost per call.

use std::time::Duration;

use gpib::{Address, ErrorKind};
use serde::Serialize;

use crate::error::Result;
use crate::measure::{Session, SessionOptions};
use crate::sample::Direction;
use crate::target::Target;

use super::sweep::{self, Sweep};

/// What the bus looked like before any transfer.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BusState {
    /// Primary addresses that answered as listeners (empty when the backend cannot look).
    pub listeners: Vec<u8>,
    /// NRFD was asserted with no transfer in progress.
    pub nrfd_held: bool,
    /// SRQ was asserted.
    pub srq: bool,
    /// SRQ was asserted but no listener's status byte had RQS.
    pub srq_stuck: bool,
    /// Line states could be read.
    pub lines_known: bool,
}

/// One timed transfer's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timing {
    /// Bytes moved.
    pub bytes: u64,
    /// Seconds on the bus's clock (the median run's, when it ran several times).
    pub seconds: f64,
    /// Host CPU seconds.
    pub cpu_seconds: f64,
    /// The seconds of each run, when it ran more than once (a wall clock): what
    /// `gpib-diag compare` takes the confidence interval of.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub run_seconds: Vec<f64>,
}

impl Timing {
    /// The least of the runs' seconds (`seconds` when it ran once): on a wall clock
    /// other work only ever adds time, so this is the undisturbed transfer.
    pub fn least_seconds(&self) -> f64 {
        self.run_seconds
            .iter()
            .copied()
            .fold(self.seconds, f64::min)
    }

    /// Bytes a second.
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 / self.seconds
        } else {
            f64::INFINITY
        }
    }
}

/// The four transfers, and the cost of addressing.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Transfers {
    /// Small read.
    pub read_small: Option<Timing>,
    /// Large read.
    pub read_large: Option<Timing>,
    /// Small write.
    pub write_small: Option<Timing>,
    /// Large write.
    pub write_large: Option<Timing>,
    /// Short queries back to back (`bytes` counts the queries).
    pub queries: Option<Timing>,
    /// Seconds one addressing sequence (UNL, MTA/MLA \[MSA\]) takes: the least of as
    /// many as the transfers ran (one in virtual time, the sweep's repeats on a wall
    /// clock), the undisturbed sequence.
    pub addressing_seconds: Option<f64>,
    /// Whether the board sends addressing before every call (a device-level backend's
    /// driver addresses inside each call: linux-gpib's `ibrd`/`ibwrt` on a device).
    pub addresses_every_call: bool,
    /// What failed, if a transfer did: the error's text.
    pub failure: Option<String>,
    /// When that was a read that got bytes and then waited out its timeout: the bytes
    /// it got.
    pub stalled_after: Option<u64>,
}

impl Transfers {
    /// The four timings with their names, those that ran.
    pub fn each(&self) -> Vec<(&'static str, Timing)> {
        [
            ("small read", self.read_small.clone()),
            ("large read", self.read_large.clone()),
            ("small write", self.write_small.clone()),
            ("large write", self.write_large.clone()),
            (QUERIES, self.queries.clone()),
        ]
        .into_iter()
        .filter_map(|(n, t)| t.map(|t| (n, t)))
        .collect()
    }

    /// How much faster `other` ran than `self`, at best over the transfers both ran,
    /// with the transfer's name.
    pub fn speedup_in(&self, other: &Transfers) -> Option<(&'static str, f64)> {
        let theirs = other.each();
        self.each()
            .into_iter()
            .filter_map(|(n, a)| {
                let (_, b) = theirs.iter().find(|(m, _)| *m == n)?;
                (b.seconds > 0.0).then(|| (n, a.seconds / b.seconds))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// The name of the short-queries probe (its timing counts queries, not bytes).
pub const QUERIES: &str = "short queries";

/// How many short queries the probe sends back to back.
pub const QUERY_COUNT: u32 = 20;

/// A timing's rate as people say it: B/s, or queries/s for the queries probe.
pub fn rate_of(name: &str, t: &Timing) -> String {
    if name == QUERIES {
        format!("{:.0} queries/s", t.rate())
    } else {
        crate::doctor::advice_rate(t.rate())
    }
}

/// Looks at the lines, the listeners and SRQ.
pub fn bus_state(target: &Target) -> BusState {
    let bus = &target.bus;
    let mut s = BusState::default();
    if let Ok(lines) = bus.lines() {
        s.lines_known = true;
        s.nrfd_held = lines.nrfd && !lines.dav;
        s.srq = lines.srq;
    } else if let Ok(srq) = bus.srq() {
        s.srq = srq;
    }
    if let Ok(found) = bus.find_listeners() {
        s.listeners = found.iter().map(|a| a.primary.get()).collect();
    }
    if s.srq {
        let candidates: Vec<Address> = s
            .listeners
            .iter()
            .filter_map(|&a| Address::try_from(a).ok())
            .collect();
        s.srq_stuck =
            matches!(bus.find_requester(&candidates), Err(e) if e.kind() == ErrorKind::SrqStuck);
    }
    s
}

/// Times the transfers on device `opts.device`.
pub fn transfers(
    target: &Target,
    opts: &SessionOptions,
    small: u64,
    large: u64,
) -> Result<Transfers> {
    let mut t = Transfers {
        addresses_every_call: target.bus.readdresses() || target.bus.device_level(),
        ..Default::default()
    };
    let mut session = Session::open(target, opts, large.max(small))?;
    let runs: [(u64, bool); 4] = [(small, true), (large, true), (small, false), (large, false)];
    for (size, read) in runs {
        let got = if read {
            session.read(size)
        } else {
            session.write(size)
        };
        let timing = match got {
            Ok(s) => Timing {
                bytes: s.bytes,
                seconds: s.seconds,
                cpu_seconds: s.cpu_seconds,
                run_seconds: Vec::new(),
            },
            Err(e) => {
                t.failure = Some(e.to_string());
                t.stalled_after = e.stalled_after();
                break;
            }
        };
        match (size == small, read) {
            (true, true) => t.read_small = Some(timing),
            (false, true) => t.read_large = Some(timing),
            (true, false) => t.write_small = Some(timing),
            (false, false) => t.write_large = Some(timing),
        }
    }
    queries_and_addressing(target, &mut session, &mut t, 1);
    Ok(t)
}

/// The short-queries probe `repeats` times (when nothing failed yet: the median run)
/// and the addressing cost.
fn queries_and_addressing(target: &Target, session: &mut Session, t: &mut Transfers, repeats: u32) {
    if t.failure.is_none() {
        let mut runs = Vec::new();
        for _ in 0..repeats.max(1) {
            match session.transactions(QUERY_COUNT) {
                Ok(s) => runs.push(s),
                Err(e) => {
                    t.failure = Some(e.to_string());
                    t.stalled_after = e.stalled_after();
                    return;
                }
            }
        }
        runs.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
        let median = &runs[(runs.len() - 1) / 2];
        t.queries = Some(Timing {
            bytes: median.bytes,
            seconds: median.seconds,
            cpu_seconds: median.cpu_seconds,
            run_seconds: if runs.len() > 1 {
                runs.iter().map(|s| s.seconds).collect()
            } else {
                Vec::new()
            },
        });
    }
    // As many sequences as the transfers' repeats, the least kept: one sequence is
    // tens of microseconds, which one late wake-up of this thread can double.
    t.addressing_seconds = (0..repeats.max(1))
        .map(|_| addressing_time(target, session.address()))
        .collect::<Option<Vec<f64>>>()
        .map(|v| v.into_iter().fold(f64::INFINITY, f64::min));
}

/// The size sweep within `budget` ([`sweep`]), its smallest and largest sizes as the
/// four transfers, then the short queries and the addressing cost.
pub fn swept(
    target: &Target,
    opts: &SessionOptions,
    small: u64,
    large: Option<u64>,
    budget: Duration,
) -> Result<(Transfers, Sweep)> {
    let largest = large.unwrap_or(sweep::DEFAULT_LARGEST).max(small);
    let mut session = Session::open(target, opts, largest)?;
    let sizes = sweep::ladder(small, largest);
    let s = sweep::run(target, &mut session, &sizes, large.is_some(), budget);
    let mut t = Transfers {
        addresses_every_call: target.bus.readdresses() || target.bus.device_level(),
        failure: s.failure.clone(),
        stalled_after: s.stalled_after,
        ..Default::default()
    };
    let timing = |d: Direction, size: u64| {
        let runs: Vec<f64> = s
            .points
            .iter()
            .filter(|p| p.direction == d && p.bytes == size)
            .map(|p| p.seconds)
            .collect();
        s.median(d, size).map(|p| Timing {
            bytes: p.bytes,
            seconds: p.seconds,
            cpu_seconds: p.cpu_seconds,
            run_seconds: if runs.len() > 1 { runs } else { Vec::new() },
        })
    };
    let (first, last) = (s.sizes.first().copied(), s.sizes.last().copied());
    if let Some(size) = first {
        t.read_small = timing(Direction::Read, size);
        t.write_small = timing(Direction::Write, size);
    }
    if let Some(size) = last.filter(|_| s.sizes.len() > 1) {
        t.read_large = timing(Direction::Read, size);
        t.write_large = timing(Direction::Write, size);
    }
    queries_and_addressing(target, &mut session, &mut t, s.repeats);
    Ok((t, s))
}

/// The time of one addressing sequence to `address`, sent even if it is addressed
/// already. A device-level backend (linux-gpib's `ibdev` descriptors) addresses inside
/// each call; where it can send command bytes (`ibcmd` on the board) the sequence is
/// sent as its driver sends it (UNL, the board's talk address, the device's listen
/// address and secondary), then UNL UNT untimed; where it cannot, none.
pub fn addressing_time(target: &Target, address: Address) -> Option<f64> {
    use gpib::InterfaceMessage as M;
    let bus = &target.bus;
    if bus.device_level() {
        let t0 = bus.now();
        let ok = bus
            .transaction(|tx| {
                let mut sequence = vec![
                    M::Unlisten,
                    M::Talk(tx.board_address()),
                    M::Listen(address.primary),
                ];
                sequence.extend(address.secondary.map(M::Secondary));
                tx.command_messages(&sequence)
            })
            .is_ok();
        let spent: Duration = bus.now().saturating_sub(t0);
        return (ok && bus.command(&[M::Unlisten, M::Untalk]).is_ok())
            .then_some(spent.as_secs_f64());
    }
    let before = bus.readdresses();
    bus.set_readdress(true);
    let t0 = bus.now();
    let ok = bus.transaction(|tx| tx.address_to_device(address)).is_ok();
    let spent: Duration = bus.now().saturating_sub(t0);
    bus.set_readdress(before);
    ok.then_some(spent.as_secs_f64())
}
