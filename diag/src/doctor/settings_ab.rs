//! A/B runs of what the user can change without touching a cable: the board driver's
//! settings ([`gpib::backend::tuning::BoardTuning`]: T1, autopoll, addressing and
//! unaddressing on every call) and the program's read size (bytes a read call asks
//! for: ibrd's count, VISA's chunk_size, a VXI-11 device_read's requestSize), each
//! tried the other way on the probe it affects, alternately with the setting as found,
//! repeated and tested with Welch's t-test.
//!
//! Every setting is put back as it was afterwards: when a trial ends, when a transfer
//! fails, and on Ctrl-C (the run stops at the next transfer, restores, and exits).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use gpib::backend::tuning::{BoardTuning, T1Delay};
use gpib::{Bus, ClockKind};
use serde::Serialize;

use crate::error::{DiagError, Result};
use crate::measure::{Session, SessionOptions};
use crate::stats::welch::welch;
use crate::stats::Welch;
use crate::target::Target;

use super::{Cause, Finding, Severity};

/// Times each way a trial runs on a wall clock (virtual time repeats exactly: once).
pub const WALL_REPEATS: usize = 9;

/// Short queries in one sample of the queries probe.
const QUERIES: u32 = 20;

/// A board setting and a value of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// T1 settling time.
    T1(T1Delay),
    /// Automatic serial polling.
    Autopoll(bool),
    /// Addressing before every call.
    Readdress(bool),
    /// UNL UNT after every call.
    Unaddress(bool),
    /// Bytes each read call asks for (the program's, not the driver's).
    ReadSize(u64),
}

impl Setting {
    /// The setting's name in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Setting::T1(_) => "t1",
            Setting::Autopoll(_) => "autopoll",
            Setting::Readdress(_) => "readdress",
            Setting::Unaddress(_) => "unaddress",
            Setting::ReadSize(_) => "read-size",
        }
    }

    /// Its value in words.
    pub fn value(self) -> String {
        let on = |b: bool| if b { "on" } else { "off" }.to_string();
        match self {
            Setting::T1(t) => t.to_string(),
            Setting::Autopoll(b) | Setting::Readdress(b) | Setting::Unaddress(b) => on(b),
            Setting::ReadSize(n) => format!("{n} B a call"),
        }
    }

    /// How a linux-gpib program makes it so.
    pub fn how(self) -> String {
        match self {
            Setting::T1(t) => format!("ibconfig(board, IbcTIMING, {}) (T1 {t})", t.code()),
            Setting::Autopoll(b) => format!("ibconfig(board, IbcAUTOPOLL, {})", i32::from(b)),
            Setting::Readdress(b) => format!("ibconfig(device, IbcREADDR, {})", i32::from(b)),
            Setting::Unaddress(b) => format!("ibconfig(device, IbcUnAddr, {})", i32::from(b)),
            Setting::ReadSize(n) => format!(
                "read with a buffer of {n} B or more: ibrd(ud, buf, {n}), VISA's chunk_size = {n}, \
                 or a VXI-11 device_read's requestSize"
            ),
        }
    }

    /// Puts it in force on `bus`; the value in force after. A read size is the
    /// program's: nothing on the bus changes.
    fn put(self, bus: &Bus) -> gpib::Result<Setting> {
        match self {
            Setting::ReadSize(_) => Ok(self),
            _ => bus.tuning(|t| self.apply(t)),
        }
    }

    /// Applies it; the value the driver took.
    fn apply(self, t: &mut dyn BoardTuning) -> gpib::Result<Setting> {
        Ok(match self {
            Setting::T1(v) => Setting::T1(t.set_t1(v)?),
            Setting::Autopoll(v) => Setting::Autopoll(t.set_autopoll(v)?),
            Setting::Readdress(v) => Setting::Readdress(t.set_readdress(v)?),
            Setting::Unaddress(v) => Setting::Unaddress(t.set_unaddress(v)?),
            Setting::ReadSize(_) => self,
        })
    }
}

/// Which probe a trial times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Probe {
    /// A write of the trial's size (the board talks: its T1 counts).
    Write,
    /// Short queries back to back (per-call costs: command bytes).
    Queries,
    /// Small reads back to back (per-call costs: the polls a storm of service requests
    /// costs at each call).
    SmallReads,
    /// One message read in calls of the read size (per-call costs: a call's addressing,
    /// its round trip on a network).
    ReadInCalls,
}

impl Probe {
    /// What it times, in words: "writes of 4096 B", "short queries".
    pub fn describe(self, bytes: u64) -> String {
        match self {
            Probe::Write => format!("writes of {bytes} B"),
            Probe::Queries => "short queries".into(),
            Probe::SmallReads => format!("reads of {bytes} B"),
            Probe::ReadInCalls => format!("reading {bytes} B"),
        }
    }
}

/// One setting tried both ways.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    /// The setting's name.
    pub setting: &'static str,
    /// Its value as found.
    pub found: String,
    /// The value tried.
    pub tried: String,
    /// What a program calls to make it so.
    pub how: String,
    /// The probe timed.
    pub probe: Probe,
    /// Bytes of each transfer (the write and small-reads probes).
    pub bytes: u64,
    /// Seconds of each run as found.
    pub as_found: Vec<f64>,
    /// Seconds of each run as tried.
    pub as_tried: Vec<f64>,
    /// Runs left out of the comparison as disturbed: far above their way's median (a
    /// modified Z-score over 3.5, and 5 % or more; on a wall clock other work only ever
    /// adds time).
    pub disturbed: usize,
    /// Mean as found over mean as tried, of the runs not disturbed (above 1: the
    /// tried value is faster).
    pub speedup: f64,
    /// Welch's t-test (wall clocks).
    pub test: Option<Welch>,
    /// The difference is real: significant at 5 % over all the trials (Bonferroni: each
    /// at 5 % over their number) and within what the setting can make (wall clocks), or
    /// exact (virtual time).
    pub significant: bool,
    /// The runs differed by more than the setting can make (a T1 changes each byte the
    /// board sends by the difference of the two at most): other work disturbed them.
    pub beyond_the_setting: bool,
}

/// The settings worth trying from what the board has now: a T1 above 350 ns, autopoll
/// on, addressing or unaddressing on every call, a read size below the probe's `bytes`
/// (tried as one call for them all).
fn candidates(found: &[Setting], bytes: u64) -> Vec<(Setting, Setting, Probe)> {
    found
        .iter()
        .filter_map(|&s| match s {
            Setting::T1(t) if t != T1Delay::Ns350 => {
                Some((s, Setting::T1(T1Delay::Ns350), Probe::Write))
            }
            // The driver polls when a call starts with SRQ asserted: small calls show it.
            Setting::Autopoll(true) => Some((s, Setting::Autopoll(false), Probe::SmallReads)),
            Setting::Readdress(true) => Some((s, Setting::Readdress(false), Probe::Queries)),
            Setting::Unaddress(true) => Some((s, Setting::Unaddress(false), Probe::Queries)),
            Setting::ReadSize(n) if n < bytes => {
                Some((s, Setting::ReadSize(bytes), Probe::ReadInCalls))
            }
            _ => None,
        })
        .collect()
}

/// The board's settings as found (those the backend tells).
fn found(bus: &Bus) -> Vec<Setting> {
    let mut out = Vec::new();
    if let Ok(t) = bus.tuning(|t| t.t1()) {
        out.push(Setting::T1(t));
    }
    if let Ok(a) = bus.tuning(|t| t.autopoll()) {
        out.push(Setting::Autopoll(a));
    }
    if let Ok(r) = bus.tuning(|t| t.readdress()) {
        out.push(Setting::Readdress(r));
    }
    if let Ok(u) = bus.tuning(|t| t.unaddress()) {
        out.push(Setting::Unaddress(u));
    }
    out
}

/// Puts a setting back when dropped.
struct Restore<'a> {
    bus: &'a Bus,
    to: Setting,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.to.put(self.bus) {
            log::warn!(
                "could not put {} back to {}: {e}",
                self.to.name(),
                self.to.value()
            );
        }
    }
}

/// Set by Ctrl-C while trials run.
fn interrupted() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        if let Err(e) = ctrlc::set_handler(move || f.store(true, Ordering::SeqCst)) {
            log::warn!("Ctrl-C cannot be caught ({e}): settings are restored only on errors");
        }
        flag
    })
}

/// Command bytes a write's addressing sends around it (UNL, MTA, MLA, secondary, UNT).
const COMMAND_BYTES: u64 = 8;

/// The least speedup an exact (virtual-time) trial counts as a difference.
const EXACT_DIFFERENCE: f64 = 0.005;

/// Most read calls a read-size trial makes for one message (a smaller message is read
/// when the program's read size would need more).
pub const MOST_CALLS: u64 = 256;
/// The fewest calls a read-size trial splits its message into.
pub const FEWEST_CALLS: u64 = 4;

/// What the trials run with.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Bytes of the small reads.
    pub small: u64,
    /// Bytes of the write probe.
    pub bytes: u64,
    /// Bytes of the message a read-size trial reads (at most [`MOST_CALLS`] calls'
    /// worth are read).
    pub read_bytes: u64,
    /// The board's exact T1 where known: a board settling at a time that is none of
    /// the three settings (a simulated 600 ns) could not be put back, so its T1 is
    /// left alone.
    pub t1_ns: Option<u64>,
    /// The program's read size, tried against one call for the whole message.
    pub read_size: Option<u64>,
}

/// Runs the trials of `plan` on the device of `opts`.
pub fn run(target: &Target, opts: &SessionOptions, plan: Plan) -> Result<Vec<Trial>> {
    run_until(target, opts, plan, interrupted())
}

/// [`run`], stopping (with every setting put back) when `stop` is set.
fn run_until(
    target: &Target,
    opts: &SessionOptions,
    plan: Plan,
    stop: &AtomicBool,
) -> Result<Vec<Trial>> {
    let Plan {
        small,
        bytes,
        read_bytes,
        t1_ns,
        read_size,
    } = plan;
    let bus = &target.bus;
    let mut settings = found(bus);
    settings.retain(|s| match s {
        Setting::T1(t) => t1_ns.is_none_or(|ns| ns == t.nanos()),
        _ => true,
    });
    // A message of `bytes`, or of MOST_CALLS reads when the read size is small.
    let message = read_size.map_or(read_bytes, |n| {
        read_bytes.min(n.max(1).saturating_mul(MOST_CALLS))
    });
    settings.extend(read_size.map(|n| Setting::ReadSize(n.max(1))));
    let todo = candidates(&settings, message);
    if todo.is_empty() {
        return Ok(Vec::new());
    }
    let mut session = Session::open(target, opts, bytes.max(small).max(message))?;
    let repeats = if bus.clock_kind() == ClockKind::Virtual {
        1
    } else {
        WALL_REPEATS
    };
    let mut trials = Vec::new();
    for &(as_found, to_try, probe) in &todo {
        let _restore = Restore { bus, to: as_found };
        // The driver may not take the value (linux-gpib readdresses whatever it is told).
        let took = to_try.put(bus)?;
        as_found.put(bus)?;
        if took != to_try {
            log::info!(
                "{} cannot be changed to {} here (the driver keeps {})",
                to_try.name(),
                to_try.value(),
                took.value()
            );
            continue;
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..repeats {
            for (value, into) in [(as_found, &mut a), (to_try, &mut b)] {
                if stop.load(Ordering::SeqCst) {
                    return Err(DiagError::Usage(
                        "interrupted: every setting was put back as it was".into(),
                    ));
                }
                value.put(bus)?;
                let seconds = match probe {
                    Probe::Write => session.write(bytes)?.seconds,
                    Probe::ReadInCalls => {
                        let call = match value {
                            Setting::ReadSize(n) => n,
                            _ => message,
                        };
                        session.read_in_calls(message, call)?.seconds
                    }
                    Probe::Queries => session.transactions(QUERIES)?.seconds,
                    Probe::SmallReads => {
                        let mut t = 0.0;
                        for _ in 0..QUERIES {
                            t += session.read(small)?.seconds;
                        }
                        t
                    }
                };
                into.push(seconds);
            }
        }
        let (ka, kb) = (undisturbed(&a), undisturbed(&b));
        let disturbed = a.len() + b.len() - ka.len() - kb.len();
        let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len().max(1) as f64;
        let speedup = mean(&ka) / mean(&kb).max(f64::MIN_POSITIVE);
        let test = welch(&ka, &kb);
        let beyond_the_setting = beyond(as_found, to_try, probe, bytes, mean(&ka) - mean(&kb));
        let alpha = 0.05 / todo.len() as f64;
        let significant = !beyond_the_setting
            && match &test {
                Some(w) => w.p < alpha,
                // Virtual time: one exact run each way.
                None => repeats == 1 && (speedup - 1.0).abs() >= EXACT_DIFFERENCE,
            };
        trials.push(Trial {
            setting: as_found.name(),
            found: as_found.value(),
            tried: to_try.value(),
            how: to_try.how(),
            probe,
            bytes: match probe {
                Probe::Write => bytes,
                Probe::SmallReads => small,
                Probe::ReadInCalls => message,
                Probe::Queries => 0,
            },
            as_found: a,
            as_tried: b,
            disturbed,
            speedup,
            test,
            significant,
            beyond_the_setting,
        });
    }
    Ok(trials)
}

/// A run this many times its way's median, and an outlier, was disturbed.
const DISTURBED: f64 = 1.05;

/// The runs of `x` no disturbance lengthened: all but those [`crate::stats::summarize`]
/// marks as outliers, 5 % or more above the median.
fn undisturbed(x: &[f64]) -> Vec<f64> {
    match crate::stats::summarize(x) {
        Some(s) => x
            .iter()
            .enumerate()
            .filter(|&(i, &v)| !(v > s.median * DISTURBED && s.outliers.contains(&i)))
            .map(|(_, &v)| v)
            .collect(),
        None => x.to_vec(),
    }
}

/// Whether runs that differ by `difference` seconds differ by more than changing
/// `from` to `to` can make on `probe`: a T1 changes each byte the board sends (the data
/// and a few command bytes) by the difference of the two at most. Twice that, and 100 us
/// of the clock's own jitter, is allowed.
fn beyond(from: Setting, to: Setting, probe: Probe, bytes: u64, difference: f64) -> bool {
    match (from, to, probe) {
        (Setting::T1(x), Setting::T1(y), Probe::Write) => {
            let per_byte = x.nanos().abs_diff(y.nanos()) as f64 * 1e-9;
            let most = per_byte * (bytes + COMMAND_BYTES) as f64 * 2.0 + 100e-6;
            difference.abs() > most
        }
        _ => false,
    }
}

/// A p-value as reports print it: `p = 0.012`, `p < 0.001`.
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

/// A finding for each trial whose tried value ran significantly faster, by `threshold`
/// at least.
pub fn findings(trials: &[Trial], threshold: f64) -> Vec<Finding> {
    trials
        .iter()
        .filter(|t| t.significant && t.speedup >= threshold)
        .map(|t| {
            let what = t.probe.describe(t.bytes);
            let stats = match &t.test {
                Some(w) => format!(
                    "{}, Welch's t-test over {} runs each way",
                    p_text(w.p),
                    t.as_found.len()
                ),
                None => "virtual time: exact".into(),
            };
            Finding {
                cause: Cause::Setting(t.setting),
                severity: Severity::Problem,
                summary: if t.probe == Probe::ReadInCalls {
                    format!(
                        "reads in calls of {} are slow: {what} in one call runs {:.2}x faster ({stats})",
                        t.found.trim_end_matches(" a call"),
                        t.speedup
                    )
                } else {
                    format!(
                        "{} {} slows {what}: with {} they run {:.2}x faster ({stats})",
                        t.setting, t.found, t.tried, t.speedup
                    )
                },
                evidence: vec![format!(
                    "{what}: {:.6} s with {} {}, {:.6} s with {}",
                    t.as_found.iter().sum::<f64>() / t.as_found.len().max(1) as f64,
                    t.setting,
                    t.found,
                    t.as_tried.iter().sum::<f64>() / t.as_tried.len().max(1) as f64,
                    t.tried
                )],
                advice: format!(
                    "{}{}",
                    t.how,
                    match t.setting {
                        "t1" => "; the shorter T1 needs a cable of 15 m at most with every device powered",
                        "autopoll" => "; then poll for service requests yourself (ibwait on SRQ, then ibrsp) when you need them",
                        "read-size" => "; each call costs its addressing on the bus (and a round trip on a network)",
                        _ => "",
                    }
                ),
                speedup: Some(t.speedup),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::BusSpec;
    use gpib::sim::Config;

    /// A DMA board at T1 2 us with autopoll on, the HP3565 at 11.
    const SLOW: &str = r#"
name = "slow"
[[board]]
name = "gpib0"
address = 0
transfer = "dma"
t1_ns = 2000
autopoll = true
  [[board.device]]
  address = 11
  model = "hp3565"
"#;

    fn open(spec: &str) -> Target {
        let spec = BusSpec::parse(spec).unwrap();
        let mut config = Config::parse(SLOW).unwrap();
        for e in &spec.edits {
            e.apply(&mut config, 0).unwrap();
        }
        Target::open_config(&spec, &config).unwrap()
    }

    fn opts() -> SessionOptions {
        SessionOptions {
            device: Some(11),
            protocol: crate::session_options::ProtocolChoice::Auto,
            timeout: None,
        }
    }

    fn plan(t1_ns: Option<u64>, read_size: Option<u64>) -> Plan {
        Plan {
            small: 16,
            bytes: 4096,
            read_bytes: 4096,
            t1_ns,
            read_size,
        }
    }

    fn settings(t: &Target) -> (T1Delay, bool) {
        (
            t.bus.tuning(|x| x.t1()).unwrap(),
            t.bus.tuning(|x| x.autopoll()).unwrap(),
        )
    }

    #[test]
    fn each_setting_is_tried_and_put_back() {
        let t = open("slow");
        let trials =
            run_until(&t, &opts(), plan(Some(2000), None), &AtomicBool::new(false)).unwrap();
        let tried: Vec<(&str, &str, &str)> = trials
            .iter()
            .map(|x| (x.setting, x.found.as_str(), x.tried.as_str()))
            .collect();
        assert_eq!(tried, [("t1", "2 µs", "350 ns"), ("autopoll", "on", "off")]);
        // The same write on the configuration edited to T1 350 ns (a what-if) and as it
        // is: the trial's speedup is their ratio, exactly (virtual time).
        let write = |spec: &str| {
            let t = open(spec);
            let mut s = Session::open(&t, &opts(), 4096).unwrap();
            s.write(4096).unwrap().seconds
        };
        let expected = write("slow") / write("slow:t1=350");
        assert!(expected > 2.0, "{expected}");
        assert!(
            (trials[0].speedup / expected - 1.0).abs() < 1e-9,
            "{} against {expected}",
            trials[0].speedup
        );
        assert!(trials[0].significant);
        assert_eq!(settings(&t), (T1Delay::Ns2000, true), "put back");
    }

    #[test]
    fn a_small_read_size_is_tried_against_one_call_on_every_backend() {
        // The simulated board at T1 350 ns with autopoll off: only the read size is left
        // to try. Reading 4096 B in calls of 64 B costs a call's addressing 64 times.
        let t = open("slow:t1=350");
        t.bus.tuning(|x| x.set_autopoll(false)).unwrap();
        let trials = run_until(
            &t,
            &opts(),
            // The write probe smaller than the message (the session holds both).
            Plan {
                bytes: 256,
                ..plan(Some(350), Some(64))
            },
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(trials.len(), 1, "{trials:?}");
        let x = &trials[0];
        assert_eq!(
            (x.setting, x.found.as_str(), x.tried.as_str(), x.bytes),
            ("read-size", "64 B a call", "4096 B a call", 4096)
        );
        // The trial's speedup is the ratio of the two reads timed alone (virtual time).
        let read = |call: u64| {
            let t = open("slow:t1=350");
            let mut s = Session::open(&t, &opts(), 4096).unwrap();
            s.read_in_calls(4096, call).unwrap().seconds
        };
        let expected = read(64) / read(4096);
        assert!(expected > 1.05, "{expected}");
        assert!(
            (x.speedup / expected - 1.0).abs() < 1e-9,
            "{} {expected}",
            x.speedup
        );
        assert!(x.significant);
        let f = findings(&trials, 1.01);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].cause.name(), "small-reads");
        assert!(
            f[0].advice.contains("ibrd(ud, buf, 4096)"),
            "{}",
            f[0].advice
        );
        // A read size as large as the message has nothing to try; a tiny one reads a
        // message of at most MOST_CALLS calls.
        let none = run_until(
            &t,
            &opts(),
            plan(Some(350), Some(4096)),
            &AtomicBool::new(false),
        );
        assert!(none.unwrap().is_empty());
        let tiny = run_until(
            &t,
            &opts(),
            plan(Some(350), Some(1)),
            &AtomicBool::new(false),
        );
        assert_eq!(tiny.unwrap()[0].bytes, MOST_CALLS);
    }

    #[test]
    fn a_transfer_failing_mid_trial_puts_the_settings_back() {
        // The HP3565 stops answering after a few transfers: a trial fails part way.
        let t = open("slow:fault=11=stops-after:6");
        let r = run_until(&t, &opts(), plan(Some(2000), None), &AtomicBool::new(false));
        assert!(r.is_err(), "{r:?}");
        assert_eq!(settings(&t), (T1Delay::Ns2000, true), "put back");
    }

    #[test]
    fn ctrl_c_stops_the_trials_and_puts_the_settings_back() {
        let t = open("slow");
        let e = run_until(&t, &opts(), plan(Some(2000), None), &AtomicBool::new(true)).unwrap_err();
        assert!(
            e.to_string()
                .contains("interrupted: every setting was put back"),
            "{e}"
        );
        assert_eq!(settings(&t), (T1Delay::Ns2000, true), "put back");
    }

    #[test]
    fn a_t1_that_cannot_be_put_back_exactly_is_left_alone() {
        let t = open("slow");
        let trials =
            run_until(&t, &opts(), plan(Some(600), None), &AtomicBool::new(false)).unwrap();
        assert!(trials.iter().all(|x| x.setting != "t1"));
    }

    #[test]
    fn a_difference_no_t1_can_make_is_noise() {
        let (slow, fast) = (Setting::T1(T1Delay::Ns500), Setting::T1(T1Delay::Ns350));
        // 64 bytes 150 ns apart: at most about 22 us (with jitter room, 122 us). A run
        // sharing its CPU with a busy loop differed by 2.7 ms.
        assert!(beyond(slow, fast, Probe::Write, 64, 2.7e-3));
        assert!(!beyond(slow, fast, Probe::Write, 64, 50e-6));
        // 2 us against 350 ns over 4096 bytes: 5.3 ms is what it makes.
        let two = Setting::T1(T1Delay::Ns2000);
        assert!(!beyond(two, fast, Probe::Write, 4096, 5.3e-3));
        // Other settings have no such bound.
        assert!(!beyond(
            Setting::Autopoll(true),
            Setting::Autopoll(false),
            Probe::SmallReads,
            16,
            1.0
        ));
    }

    #[test]
    fn runs_a_disturbance_lengthened_are_left_out_and_fast_ones_kept() {
        // The VXI-11 read-size trial on a loaded machine: two runs of nine took 4.5 ms
        // against 0.6 ms; with them its speedup read 0.59x and p = 0.33.
        let tried = [
            0.000585, 0.004633, 0.004371, 0.000597, 0.000664, 0.000591, 0.000657, 0.000558,
            0.000617,
        ];
        let kept = undisturbed(&tried);
        assert_eq!(kept.len(), 7);
        assert!(kept.iter().all(|&v| v < 0.001));
        // A run far below the others is not a disturbance: it stays.
        let fast = [0.0010, 0.0011, 0.0010, 0.0001, 0.0010];
        assert_eq!(undisturbed(&fast).len(), 5);
        // Identical runs (virtual time) are all kept.
        assert_eq!(undisturbed(&[1.0, 1.0, 1.0]).len(), 3);
    }

    #[test]
    fn p_values_read_as_people_write_them() {
        assert_eq!(p_text(0.0004), "p < 0.001");
        assert_eq!(p_text(0.0123), "p = 0.012");
    }
}
