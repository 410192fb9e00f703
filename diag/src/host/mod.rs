//! What else the host did while the doctor measured (Linux): CPU taken by other
//! processes and by this process's other threads, the interrupt lines that fired, and
//! other processes that hold a GPIB board open. Evidence for "something takes the CPU
//! between bytes" on a real machine, where no simulator can be asked.

pub mod holders;
pub mod interrupts;

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::cpu::{self, MachineCpu, ProcessCpu};

/// An interrupt line that fired during the measurement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fired {
    /// The line: an IRQ number or a kind (`LOC`).
    pub irq: String,
    /// What the kernel says of it (its drivers).
    pub description: String,
    /// Times it fired.
    pub count: u64,
    /// Times it fired for each KiB transferred.
    pub per_kib: f64,
    /// It is a GPIB board's line.
    pub gpib: bool,
}

/// The host over a measurement.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HostEvidence {
    /// Wall seconds of the window.
    pub wall_seconds: f64,
    /// The machine's CPUs.
    pub cpus: usize,
    /// CPU seconds of the measuring thread.
    pub thread_cpu_seconds: Option<f64>,
    /// Seconds the measuring thread waited for a CPU.
    pub thread_waiting_seconds: Option<f64>,
    /// CPU seconds of this process's other threads.
    pub other_threads_cpu_seconds: Option<f64>,
    /// CPUs other processes kept busy on average (from `/proc/stat`, when the window
    /// spans enough ticks to tell).
    pub other_processes_cpus: Option<f64>,
    /// Interrupt lines that fired, most first (at most [`MAX_LINES`]).
    pub interrupts: Vec<Fired>,
    /// Other processes that hold a GPIB board open.
    pub board_holders: Vec<holders::Holder>,
}

/// The most interrupt lines reported.
pub const MAX_LINES: usize = 6;

/// The counters at the start of a window.
pub struct Window {
    wall: Instant,
    machine: Option<MachineCpu>,
    process: Option<ProcessCpu>,
    thread: Option<Duration>,
    waiting: Option<Duration>,
    irqs: Vec<interrupts::Line>,
}

impl Window {
    /// Opens a window now.
    pub fn start() -> Self {
        let irqs = interrupts::read();
        let machine = MachineCpu::read();
        Self {
            waiting: cpu::thread_run_queue_wait(),
            thread: cpu::thread_cpu(),
            process: ProcessCpu::read(),
            machine,
            irqs,
            wall: Instant::now(),
        }
    }

    /// Closes the window: what happened in it, `bytes` having been transferred.
    pub fn finish(self, bytes: u64) -> HostEvidence {
        let wall = self.wall.elapsed();
        let thread = cpu::thread_cpu();
        let waiting = cpu::thread_run_queue_wait();
        let process = ProcessCpu::read();
        let machine = MachineCpu::read();
        let irqs = interrupts::read();
        let cpus = cpu::machine_cpus();
        let secs =
            |a: Option<Duration>, b: Option<Duration>| Some(b?.saturating_sub(a?).as_secs_f64());
        let thread_cpu = secs(self.thread, thread);
        let process_cpu = match (self.process, process) {
            (Some(a), Some(b)) => Some(
                (b.user + b.system)
                    .saturating_sub(a.user + a.system)
                    .as_secs_f64(),
            ),
            _ => None,
        };
        let wall_s = wall.as_secs_f64();
        let other_processes_cpus = match (self.machine, machine, process_cpu) {
            (Some(a), Some(b), Some(mine)) if wall_s > 0.0 => {
                let d = b.delta_since(&a);
                let total = d.total();
                (total >= cpu::MIN_MACHINE_TICKS).then(|| {
                    let busy = total.saturating_sub(d.idle).saturating_sub(d.iowait);
                    let busy_cpus = busy as f64 / total as f64 * cpus as f64;
                    (busy_cpus - mine / wall_s).max(0.0)
                })
            }
            _ => None,
        };
        let kib = bytes as f64 / 1024.0;
        HostEvidence {
            wall_seconds: wall_s,
            cpus,
            thread_cpu_seconds: thread_cpu,
            thread_waiting_seconds: secs(self.waiting, waiting),
            other_threads_cpu_seconds: match (process_cpu, thread_cpu) {
                (Some(p), Some(t)) => Some((p - t).max(0.0)),
                _ => None,
            },
            other_processes_cpus,
            interrupts: interrupts::fired(&self.irqs, &irqs)
                .into_iter()
                .take(MAX_LINES)
                .map(|l| Fired {
                    gpib: interrupts::is_gpib(&l),
                    per_kib: if kib > 0.0 { l.count as f64 / kib } else { 0.0 },
                    irq: l.irq,
                    description: l.description,
                    count: l.count,
                })
                .collect(),
            board_holders: holders::others(),
        }
    }
}

impl HostEvidence {
    /// The evidence in lines for a report.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        let share = |s: f64| 100.0 * s / self.wall_seconds.max(f64::MIN_POSITIVE);
        if let (Some(c), Some(w)) = (self.thread_cpu_seconds, self.thread_waiting_seconds) {
            out.push(format!(
                "the measuring thread ran {:.0} % of the {:.1} s and waited for a CPU {:.0} %",
                share(c),
                self.wall_seconds,
                share(w)
            ));
        }
        if let Some(o) = self.other_processes_cpus {
            out.push(format!(
                "other processes kept {o:.2} of the machine's {} CPUs busy",
                self.cpus
            ));
        }
        if let Some(t) = self.other_threads_cpu_seconds.filter(|t| *t >= 0.01) {
            out.push(format!(
                "this process's other threads took {t:.2} s of CPU ({:.0} % of one core)",
                share(t)
            ));
        }
        for l in &self.interrupts {
            out.push(format!(
                "interrupt {} ({}) fired {} times, {:.2} a KiB{}",
                l.irq,
                if l.description.is_empty() {
                    "no description"
                } else {
                    &l.description
                },
                l.count,
                l.per_kib,
                if l.gpib { ": the GPIB board" } else { "" }
            ));
        }
        for h in &self.board_holders {
            out.push(format!(
                "process {} ({}) holds {} open",
                h.pid, h.command, h.device
            ));
        }
        out
    }
}
