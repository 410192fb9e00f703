//! CPU accounting for a measured interval: the process's own user and system
//! time (from `getrusage`) and the machine's time in each CPU mode (from
//! `/proc/stat` on Linux), turned into utilisation figures and netperf-style
//! service demand.

use std::time::Duration;

use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::time::TimeVal;

/// CPU time consumed so far by this process, all threads together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProcessCpu {
    /// Time spent executing in user mode.
    pub user: Duration,
    /// Time spent executing in the kernel on behalf of the process.
    pub system: Duration,
}

impl ProcessCpu {
    /// Reads the CPU time of the calling process with
    /// `getrusage(RUSAGE_SELF)`; `None` if the call fails.
    pub fn read() -> Option<Self> {
        let usage = getrusage(UsageWho::RUSAGE_SELF).ok()?;
        Some(Self {
            user: timeval_to_duration(usage.user_time()),
            system: timeval_to_duration(usage.system_time()),
        })
    }
}

/// CPU time consumed so far by the calling thread: a transfer's own cost, which cannot
/// exceed its wall time, where the process's total also counts its other threads (a
/// VXI-11 client's interrupt channel, a server in the same process).
///
/// From the thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`), which the kernel brings up
/// to date when it is read; `getrusage(RUSAGE_THREAD)` (the fallback) gives the count as
/// of the last timer tick, so a 5 ms transfer that kept the thread busy throughout read
/// 35 % busy from it. `None` where neither works.
pub fn thread_cpu() -> Option<Duration> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        if let Ok(t) = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID) {
            return Some(Duration::new(
                u64::try_from(t.tv_sec()).ok()?,
                u32::try_from(t.tv_nsec()).ok()?,
            ));
        }
        let usage = getrusage(UsageWho::RUSAGE_THREAD).ok()?;
        Some(timeval_to_duration(usage.user_time()) + timeval_to_duration(usage.system_time()))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    None
}

/// Time the calling thread has spent runnable but waiting for a CPU, since it started
/// (the second field of Linux's `/proc/thread-self/schedstat`): what other work on
/// the machine took from it. `None` where the file is missing (other systems, kernels
/// without schedstats).
pub fn thread_run_queue_wait() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    parse_schedstat(&text).map(|(_, waiting)| waiting)
}

/// `/proc/<pid>/schedstat`: (time on a CPU, time waiting on a run queue), both from
/// nanoseconds.
fn parse_schedstat(text: &str) -> Option<(Duration, Duration)> {
    let mut f = text.split_whitespace();
    let on_cpu: u64 = f.next()?.parse().ok()?;
    let waiting: u64 = f.next()?.parse().ok()?;
    Some((Duration::from_nanos(on_cpu), Duration::from_nanos(waiting)))
}

/// The machine's CPUs as `/proc/stat` counts them (its `cpuN` lines): every CPU its
/// totals cover, where `available_parallelism` gives only those this process may run
/// on (one under `taskset -c 0`). Elsewhere, `available_parallelism`.
pub fn machine_cpus() -> usize {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .map(|t| count_cpu_lines(&t))
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
}

fn count_cpu_lines(stat: &str) -> usize {
    stat.lines()
        .filter(|l| {
            l.strip_prefix("cpu")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count()
}

/// Converts a `timeval` to a `Duration`, treating negative parts as zero.
fn timeval_to_duration(tv: TimeVal) -> Duration {
    let secs = u64::try_from(tv.tv_sec()).unwrap_or(0);
    let micros = u64::try_from(tv.tv_usec()).unwrap_or(0);
    Duration::from_secs(secs).saturating_add(Duration::from_micros(micros))
}

/// Cumulative time all CPUs of the machine have spent in each mode since
/// boot, in jiffies (clock ticks, usually 1/100 s), as given by the first
/// (`cpu `) line of `/proc/stat`.
///
/// Fields missing on older kernels read as 0. The `guest` and `guest_nice`
/// columns are not kept: the kernel already counts them in `user` and
/// `nice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct MachineCpu {
    /// Time in user mode.
    pub user: u64,
    /// Time in user mode at lowered priority (nice).
    pub nice: u64,
    /// Time in kernel mode.
    pub system: u64,
    /// Time idle.
    pub idle: u64,
    /// Time idle while waiting for I/O to complete.
    pub iowait: u64,
    /// Time servicing hardware interrupts.
    pub irq: u64,
    /// Time servicing softirqs.
    pub softirq: u64,
    /// Time stolen by the hypervisor for other virtual machines.
    pub steal: u64,
}

impl MachineCpu {
    /// Parses the aggregate `cpu ` line of the text of `/proc/stat`.
    ///
    /// Needs at least the four fields present on every kernel (user, nice,
    /// system, idle); later fields that are absent read as 0. Returns `None`
    /// when there is no `cpu ` line or its fields are not numbers.
    pub fn parse_proc_stat(text: &str) -> Option<Self> {
        let line = text.lines().find(|l| {
            let mut words = l.split_whitespace();
            words.next() == Some("cpu")
        })?;
        let mut values = [0u64; 8];
        let mut count = 0;
        for (slot, word) in values.iter_mut().zip(line.split_whitespace().skip(1)) {
            *slot = word.parse().ok()?;
            count += 1;
        }
        if count < 4 {
            return None;
        }
        let [user, nice, system, idle, iowait, irq, softirq, steal] = values;
        Some(Self {
            user,
            nice,
            system,
            idle,
            iowait,
            irq,
            softirq,
            steal,
        })
    }

    /// Reads and parses `/proc/stat`; `None` where it cannot be read or
    /// parsed (for example on a system other than Linux).
    pub fn read() -> Option<Self> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        Self::parse_proc_stat(&text)
    }

    /// Sum of all the modes, the total time of the interval.
    pub fn total(&self) -> u64 {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
        ]
        .iter()
        .fold(0u64, |acc, v| acc.saturating_add(*v))
    }

    /// Field-by-field difference `self - earlier`, clamped at 0 (some
    /// counters, notably iowait, may step backwards).
    pub fn delta_since(&self, earlier: &Self) -> Self {
        Self {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }
}

/// CPU counters of the process and of the machine at one instant; take one
/// before and one after the measured interval and compare them with
/// [`usage_between`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuSnapshot {
    /// The process's own CPU time (zero if `getrusage` failed).
    pub process: ProcessCpu,
    /// The machine's time per mode, where `/proc/stat` could be read.
    pub machine: Option<MachineCpu>,
}

impl CpuSnapshot {
    /// Takes a snapshot of the process and machine counters now: the one that ends an
    /// interval (the process's counters first, so reading `/proc/stat` is not charged
    /// to the interval).
    pub fn take() -> Self {
        let process = ProcessCpu::read().unwrap_or_default();
        Self {
            process,
            machine: MachineCpu::read(),
        }
    }

    /// Takes the snapshot that starts an interval: `/proc/stat` first, the process's
    /// counters last, so the cost of reading `/proc/stat` (tens of microseconds of
    /// system time) is not charged to the interval.
    pub fn take_before() -> Self {
        let machine = MachineCpu::read();
        Self {
            process: ProcessCpu::read().unwrap_or_default(),
            machine,
        }
    }
}

/// The fewest `/proc/stat` ticks (all CPUs together) an interval needs before its
/// machine modes are reported: at 100 ticks a second per CPU, 50 ticks resolve a share
/// to 2 %. A shorter interval's modes are noise ("system 100 %" from one tick), so they
/// are left out.
pub const MIN_MACHINE_TICKS: u64 = 50;

/// Fractions of the machine's total CPU time spent in each mode over an
/// interval, like the VAX/VMS `MONITOR MODES` display.
///
/// The total includes steal time, which has no field of its own, so the
/// fields add up to `1 - steal fraction` (to 1 where there is no steal).
/// All fields are 0 when no time elapsed.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct MachineModes {
    /// User mode, niced time included.
    pub user: f64,
    /// Kernel mode.
    pub system: f64,
    /// Hardware interrupts.
    pub irq: f64,
    /// Softirqs.
    pub softirq: f64,
    /// Idle waiting for I/O.
    pub iowait: f64,
    /// Idle.
    pub idle: f64,
}

/// CPU use over a measured interval.
#[derive(Debug, Clone, Copy, serde::Serialize, PartialEq)]
pub struct CpuUsage {
    /// User-mode CPU seconds used by this process.
    pub process_user_s: f64,
    /// Kernel-mode CPU seconds used on behalf of this process.
    pub process_system_s: f64,
    /// `(user + system) / wall`: 1.0 is one CPU kept fully busy, so the value
    /// ranges from 0 up to the number of CPUs; 0 for a zero wall time.
    pub process_utilisation: f64,
    /// The machine's modes over the interval, where both snapshots had them and the
    /// interval spans at least [`MIN_MACHINE_TICKS`] ticks.
    pub machine: Option<MachineModes>,
}

/// CPU use between snapshot `a` (earlier) and `b` (later), where `wall` is
/// the elapsed real time between them.
///
/// Counters that went backwards count as 0; zero intervals give zeros, never
/// NaN.
pub fn usage_between(a: &CpuSnapshot, b: &CpuSnapshot, wall: Duration) -> CpuUsage {
    let user = b.process.user.saturating_sub(a.process.user).as_secs_f64();
    let system = b
        .process
        .system
        .saturating_sub(a.process.system)
        .as_secs_f64();
    let wall_s = wall.as_secs_f64();
    let process_utilisation = if wall_s > 0.0 {
        (user + system) / wall_s
    } else {
        0.0
    };
    let machine = match (&a.machine, &b.machine) {
        (Some(m0), Some(m1)) => {
            let delta = m1.delta_since(m0);
            (delta.total() >= MIN_MACHINE_TICKS).then(|| modes(&delta))
        }
        _ => None,
    };
    CpuUsage {
        process_user_s: user,
        process_system_s: system,
        process_utilisation,
        machine,
    }
}

/// Converts an interval's jiffies per mode to fractions of its total.
fn modes(delta: &MachineCpu) -> MachineModes {
    let total = delta.total();
    if total == 0 {
        return MachineModes::default();
    }
    let total = total as f64;
    let frac = |v: u64| v as f64 / total;
    MachineModes {
        user: frac(delta.user.saturating_add(delta.nice)),
        system: frac(delta.system),
        irq: frac(delta.irq),
        softirq: frac(delta.softirq),
        iowait: frac(delta.iowait),
        idle: frac(delta.idle),
    }
}

/// Memory this machine can still give a process, in bytes (`MemAvailable` of
/// `/proc/meminfo`); `None` where it cannot be read.
pub fn memory_available() -> Option<u64> {
    parse_mem_available(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

fn parse_mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line.split_whitespace().skip(1);
    let kib: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => kib.checked_mul(1024),
        Some(_) => None,
    }
}

/// Service demand as netperf reports it: CPU microseconds spent per KiB
/// (1024 bytes) moved.
///
/// `None` when `bytes` is 0 or `cpu_seconds` is negative or not finite.
pub fn service_demand_us_per_kib(cpu_seconds: f64, bytes: u64) -> Option<f64> {
    if bytes == 0 || !cpu_seconds.is_finite() || cpu_seconds < 0.0 {
        return None;
    }
    Some(cpu_seconds * 1e6 / (bytes as f64 / 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread spinning for 5 ms reads 5 ms of CPU from its clock, window by window
    /// (less only where it waited for a CPU). `getrusage(RUSAGE_THREAD)`, read before,
    /// gave the count as of the last timer tick: a 5 ms busy transfer read 35 % busy.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_busy_thread_reads_its_whole_cpu_time_window_by_window() {
        let mut off = 0;
        for _ in 0..20 {
            let (c0, q0) = (thread_cpu().unwrap(), thread_run_queue_wait());
            let t0 = std::time::Instant::now();
            while t0.elapsed() < Duration::from_millis(5) {
                std::hint::spin_loop();
            }
            let (c1, wall) = (thread_cpu().unwrap(), t0.elapsed());
            let q1 = thread_run_queue_wait();
            let cpu = (c1 - c0).as_secs_f64();
            let waited = match (q0, q1) {
                (Some(a), Some(b)) => b.saturating_sub(a).as_secs_f64(),
                _ => 0.0,
            };
            let wall = wall.as_secs_f64();
            // Never more than the wall time; with the time it waited, about all of it.
            if cpu > wall * 1.02 + 50e-6 || cpu + waited < 0.5 * wall {
                off += 1;
            }
        }
        assert!(off <= 2, "{off} of 20 windows read wrong");
    }

    const SAMPLE: &str = "\
cpu  10132153 290696 3084719 46828483 16683 0 25195 0 175628 0
cpu0 1393280 32966 572056 13343292 6130 0 17875 0 23933 0
cpu1 1335345 33318 460498 13516596 4079 0 3356 0 24325 0
intr 1462898 0 0 0
ctxt 115315133
btime 769041601
processes 86257
procs_running 1
procs_blocked 0
softirq 102866 0 29524 0 2337 0 0 34 0 0 71041
";

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn parses_aggregate_line_not_per_cpu() {
        let m = MachineCpu::parse_proc_stat(SAMPLE).unwrap();
        assert_eq!(
            m,
            MachineCpu {
                user: 10132153,
                nice: 290696,
                system: 3084719,
                idle: 46828483,
                iowait: 16683,
                irq: 0,
                softirq: 25195,
                steal: 0,
            }
        );
    }

    #[test]
    fn parses_line_with_fewer_fields() {
        // Linux 2.4 had only four fields, 2.6.0 seven.
        let m = MachineCpu::parse_proc_stat("cpu 1 2 3 4\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(
            m,
            MachineCpu {
                user: 1,
                nice: 2,
                system: 3,
                idle: 4,
                ..MachineCpu::default()
            }
        );
        let m = MachineCpu::parse_proc_stat("cpu  5 6 7 8 9 10 11\n").unwrap();
        assert_eq!((m.iowait, m.irq, m.softirq, m.steal), (9, 10, 11, 0));
    }

    #[test]
    fn rejects_garbage() {
        assert_eq!(MachineCpu::parse_proc_stat(""), None);
        assert_eq!(MachineCpu::parse_proc_stat("hello world\n"), None);
        assert_eq!(MachineCpu::parse_proc_stat("cpu0 1 2 3 4\n"), None);
        assert_eq!(MachineCpu::parse_proc_stat("cpu 1 2 3\n"), None);
        assert_eq!(MachineCpu::parse_proc_stat("cpu 1 2 x 4 5\n"), None);
        assert_eq!(MachineCpu::parse_proc_stat("cpu -1 2 3 4\n"), None);
        assert_eq!(MachineCpu::parse_proc_stat("cpuX 1 2 3 4\n"), None);
    }

    #[test]
    fn machine_modes_as_fractions() {
        let before = CpuSnapshot {
            process: ProcessCpu::default(),
            machine: MachineCpu::parse_proc_stat("cpu 100 0 50 1000 10 0 0 0\n"),
        };
        // Deltas: user 30, nice 10, system 20, idle 120, iowait 5, irq 5,
        // softirq 5, steal 5: total 200.
        let after = CpuSnapshot {
            process: ProcessCpu {
                user: Duration::from_millis(1500),
                system: Duration::from_millis(500),
            },
            machine: MachineCpu::parse_proc_stat("cpu 130 10 70 1120 15 5 5 5\n"),
        };
        let u = usage_between(&before, &after, Duration::from_secs(4));
        assert!(close(u.process_user_s, 1.5));
        assert!(close(u.process_system_s, 0.5));
        assert!(close(u.process_utilisation, 0.5));
        let m = u.machine.unwrap();
        assert!(close(m.user, 0.2));
        assert!(close(m.system, 0.1));
        assert!(close(m.idle, 0.6));
        assert!(close(m.iowait, 0.025));
        assert!(close(m.irq, 0.025));
        assert!(close(m.softirq, 0.025));
        let named = m.user + m.system + m.irq + m.softirq + m.iowait + m.idle;
        assert!(close(named, 0.975)); // the rest is steal
    }

    #[test]
    fn zero_intervals_give_zeros_not_nan() {
        let s = CpuSnapshot {
            process: ProcessCpu {
                user: Duration::from_secs(1),
                system: Duration::from_secs(1),
            },
            machine: MachineCpu::parse_proc_stat("cpu 1 2 3 4 5 6 7 8\n"),
        };
        let u = usage_between(&s, &s, Duration::ZERO);
        assert_eq!(
            u,
            CpuUsage {
                process_user_s: 0.0,
                process_system_s: 0.0,
                process_utilisation: 0.0,
                machine: None,
            }
        );
    }

    // One tick of /proc/stat over a short network transfer once read "system 100 %",
    // and none "all zeros": an interval below the resolution gives no machine modes.
    #[test]
    fn intervals_too_short_for_proc_stat_give_no_modes() {
        let at = |text: &str| CpuSnapshot {
            process: ProcessCpu::default(),
            machine: MachineCpu::parse_proc_stat(text),
        };
        let before = at("cpu 100 0 50 1000 10 0 0 0\n");
        let one_tick = at("cpu 100 0 51 1000 10 0 0 0\n");
        let wall = Duration::from_micros(180);
        assert_eq!(usage_between(&before, &one_tick, wall).machine, None);
        let just_enough = at("cpu 110 0 60 1030 10 0 0 0\n");
        let m = usage_between(&before, &just_enough, wall).machine.unwrap();
        assert!(close(m.user, 0.2) && close(m.system, 0.2) && close(m.idle, 0.6));
    }

    #[test]
    fn backwards_counters_and_missing_machine() {
        let later = CpuSnapshot {
            process: ProcessCpu {
                user: Duration::from_secs(2),
                system: Duration::from_secs(2),
            },
            machine: MachineCpu::parse_proc_stat("cpu 100 0 100 100 9 0 0 0\n"),
        };
        let earlier = CpuSnapshot {
            process: ProcessCpu::default(),
            machine: MachineCpu::parse_proc_stat("cpu 0 0 0 0 10 0 0 0\n"),
        };
        // Swapped order: process times clamp to 0.
        let u = usage_between(&later, &earlier, Duration::from_secs(1));
        assert_eq!(u.process_user_s, 0.0);
        // iowait stepped back from 10 to 9: counts as 0, not a huge number.
        let u = usage_between(&earlier, &later, Duration::from_secs(1));
        let m = u.machine.unwrap();
        assert_eq!(m.iowait, 0.0);
        assert!(close(m.user + m.system + m.idle, 1.0));
        let no_machine = CpuSnapshot {
            machine: None,
            ..earlier
        };
        assert_eq!(
            usage_between(&no_machine, &later, Duration::from_secs(1)).machine,
            None
        );
    }

    #[test]
    fn memory_available_from_meminfo() {
        let text = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(parse_mem_available(text), Some(2 << 20));
        assert_eq!(parse_mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(parse_mem_available("MemAvailable: x kB\n"), None);
        assert_eq!(
            parse_mem_available("MemAvailable: 99999999999999999 kB\n"),
            None
        );
    }

    #[test]
    fn service_demand() {
        // 1 ms of CPU for 1 MiB = 1000 us / 1024 KiB.
        let d = service_demand_us_per_kib(0.001, 1 << 20).unwrap();
        assert!(close(d, 1000.0 / 1024.0));
        assert!(close(service_demand_us_per_kib(2.0, 2048).unwrap(), 1e6));
        assert_eq!(service_demand_us_per_kib(0.0, 1024), Some(0.0));
        assert_eq!(service_demand_us_per_kib(1.0, 0), None);
        assert_eq!(service_demand_us_per_kib(f64::NAN, 1024), None);
        assert_eq!(service_demand_us_per_kib(-1.0, 1024), None);
    }

    #[test]
    fn live_snapshots_are_consistent() {
        assert!(ProcessCpu::read().is_some());
        let a = CpuSnapshot::take();
        let mut x = 0u64;
        for i in 0..200_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let b = CpuSnapshot::take();
        assert!(b.process.user + b.process.system >= a.process.user + a.process.system);
        let u = usage_between(&a, &b, Duration::from_millis(10));
        assert!(u.process_utilisation.is_finite() && u.process_utilisation >= 0.0);
        if cfg!(target_os = "linux") {
            assert!(a.machine.is_some() && b.machine.is_some());
        }
    }

    #[test]
    fn schedstat_gives_time_on_a_cpu_and_time_waiting_for_one() {
        assert_eq!(
            parse_schedstat("1500000 250000 17\n"),
            Some((Duration::from_micros(1500), Duration::from_micros(250)))
        );
        assert_eq!(parse_schedstat("12"), None);
        assert_eq!(parse_schedstat("x y z"), None);
        assert_eq!(parse_schedstat(""), None);
    }

    #[test]
    fn the_machines_cpus_are_the_cpu_lines_of_proc_stat() {
        let stat = "cpu  1 2 3 4\ncpu0 1 1 1 1\ncpu1 0 1 2 2\nintr 5\ncpufreq x\n";
        assert_eq!(count_cpu_lines(stat), 2);
        assert!(machine_cpus() >= 1);
    }
}
