//! Repeating a read/write pair: warm-up, repeats, and netperf-style confidence
//! iteration, with a progress bar on stderr for runs longer than a second.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::Result;
use crate::measure::{Direction, Sample, Session};
use crate::record::{Context, Record};
use crate::stats;
use crate::target::Target;

/// A progress bar on stderr that appears only after a second of wall time, only when
/// stderr is a terminal and the results are not piped (stdout is a terminal, or they go
/// to a file), and never with `--quiet`.
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    shown: bool,
    allowed: bool,
}

impl Progress {
    /// A bar for `total` steps (none when `quiet`, or when standard error is not a
    /// terminal, or `output` is standard output and that is not one).
    pub fn new(total: u64, quiet: bool, output: &str, what: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed})")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(what.to_string());
        Self {
            bar,
            start: Instant::now(),
            shown: false,
            allowed: !quiet
                && std::io::stderr().is_terminal()
                && (output != "-" || std::io::stdout().is_terminal()),
        }
    }

    /// One step done.
    pub fn inc(&mut self) {
        if self.allowed && !self.shown && self.start.elapsed() > Duration::from_secs(1) {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
        self.bar.inc(1);
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// How many runs a measurement takes (`--repeat`, `--warmup`, `--confidence`,
/// `--max-repeat`).
#[derive(Debug, Clone, Copy)]
pub struct RunPlan {
    /// Measured runs.
    pub repeat: u32,
    /// Unmeasured runs first.
    pub warmup: u32,
    /// Repeat until the 95 % confidence interval of the mean is narrower than this
    /// fraction of it.
    pub confidence: Option<f64>,
    /// Most runs `confidence` may take.
    pub max_repeat: u32,
}

/// The read and write records of one size.
pub struct PairResult {
    /// The read.
    pub read: Record,
    /// The write.
    pub write: Record,
}

/// Runs read+write pairs of `size` on an open session per `run`'s repeat settings.
pub fn measure_pair(
    session: &mut Session,
    ctx: &Context,
    size: u64,
    run: &RunPlan,
    progress: &mut Progress,
) -> Result<PairResult> {
    for _ in 0..run.warmup {
        session.read(size)?;
        session.write(size)?;
    }
    let mut reads: Vec<Sample> = Vec::new();
    let mut writes: Vec<Sample> = Vec::new();
    let min_runs = run.repeat.max(if run.confidence.is_some() { 2 } else { 1 }) as usize;
    let max_runs = match run.confidence {
        Some(_) => run.max_repeat.max(run.repeat) as usize,
        None => run.repeat as usize,
    };
    loop {
        reads.push(session.read(size)?);
        writes.push(session.write(size)?);
        progress.inc();
        let n = reads.len();
        if n >= max_runs {
            break;
        }
        if n >= min_runs {
            match run.confidence {
                None => break,
                Some(width) => {
                    let tight = |v: &[Sample]| {
                        let secs: Vec<f64> = v.iter().map(|s| s.seconds).collect();
                        stats::summarize(&secs).is_some_and(|s| stats::ci_is_tight(&s, width))
                    };
                    if tight(&reads) && tight(&writes) {
                        break;
                    }
                }
            }
        }
    }
    let read = Record::from_samples(ctx, Direction::Read, size, &reads);
    let write = Record::from_samples(ctx, Direction::Write, size, &writes);
    match (read, write) {
        (Some(read), Some(write)) => Ok(PairResult { read, write }),
        _ => Err(crate::error::DiagError::Usage("no run was measured".into())),
    }
}

/// The context a target and session give their records.
pub fn context(target: &Target, session: &Session) -> Context {
    Context {
        config: target.label.clone(),
        backend: target.backend,
        clock: target.bus.clock_kind(),
        device: session.address().to_string(),
        protocol: session.protocol(),
    }
}

/// Planned pairs per size, for the progress bar.
pub fn planned(run: &RunPlan) -> u64 {
    u64::from(match run.confidence {
        Some(_) => run.max_repeat.max(run.repeat),
        None => run.repeat,
    })
}
