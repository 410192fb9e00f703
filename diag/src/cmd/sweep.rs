//! `gpib-diag sweep`: throughput, time per call and CPU cost against transfer size.

use crate::cli::{Format, SweepArgs};
use crate::driver::ProtocolKind;
use crate::error::{DiagError, Result};
use crate::export::{self, text};
use crate::measure::{Direction, Session};
use crate::plot::{sweep::sweep_svg, Series};
use crate::record::Record;
use crate::run::{self, Progress};
use crate::target::Target;

/// The sizes from `from` to `to`, multiplying by `factor`; `to` is always included.
pub fn sizes(from: u64, to: u64, factor: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut s = from.max(1);
    while s < to {
        v.push(s);
        s = s.saturating_mul(factor.max(2));
    }
    v.push(to);
    v
}

/// Runs the command.
pub fn run(args: &SweepArgs) -> Result<()> {
    if args.from > args.to {
        return Err(DiagError::Usage(format!(
            "--from {} is larger than --to {}",
            args.from, args.to
        )));
    }
    let target = Target::open(args.bus.backend, &args.bus.spec()?)?;
    // Sized for the largest step after rounding to whole 16-bit words (HP3565).
    let mut session = Session::open(
        &target,
        &args.run.session_options(&target)?,
        args.to.saturating_add(args.to % 2),
    )?;
    let ctx = run::context(&target, &session);
    let mut list = sizes(args.from, args.to, args.factor);
    if session.protocol() == ProtocolKind::Hp3565 {
        // The HP3565 moves 16-bit words: sizes are whole words.
        for s in &mut list {
            *s = (*s).div_ceil(2) * 2;
        }
        list.dedup();
    }
    let mut progress = Progress::new(
        run::planned(&args.run.plan()) * list.len() as u64,
        args.out.quiet,
        &args.out.output,
        "sweep",
    );
    let mut records = Vec::new();
    let mut failed = None;
    for &size in &list {
        match run::measure_pair(&mut session, &ctx, size, &args.run.plan(), &mut progress) {
            Ok(pair) => {
                records.push(pair.read);
                records.push(pair.write);
            }
            Err(e) => {
                failed = Some(e.at_size(size));
                break;
            }
        }
    }
    progress.finish();
    // What was measured is printed, then the error (and a failing exit status).
    if records.is_empty() {
        if let Some(e) = failed {
            return Err(e);
        }
    }
    if let Some(path) = &args.plot {
        let svg = svg(&records, &ctx.config)?;
        std::fs::write(path, svg).map_err(|source| DiagError::Output {
            path: path.display().to_string(),
            source,
        })?;
    }
    let out = match args.out.format {
        Format::Text => {
            let mut s = text::table(&records, &[]);
            if args.out.verbose {
                s.push_str(&text::details(&records));
            }
            s
        }
        f => export::render(f, "sweep", &records, &[])?,
    };
    export::emit(&args.out.output, &out)?;
    failed.map_or(Ok(()), Err)
}

fn svg(records: &[Record], config: &str) -> Result<String> {
    let series = |dir: Direction, f: &dyn Fn(&Record) -> Option<f64>| Series {
        label: dir.as_str().to_string(),
        points: records
            .iter()
            .filter(|r| r.direction == dir)
            .filter_map(|r| f(r).map(|y| (r.size as f64, y)))
            .collect(),
    };
    let thr = [
        series(Direction::Read, &|r| Some(r.bytes_per_second)),
        series(Direction::Write, &|r| Some(r.bytes_per_second)),
    ];
    let sd = [
        series(Direction::Read, &|r| r.service_demand_us_per_kib),
        series(Direction::Write, &|r| r.service_demand_us_per_kib),
    ];
    sweep_svg(&format!("gpib-diag sweep: {config}"), &thr, &sd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_lists() {
        assert_eq!(sizes(1, 16, 4), [1, 4, 16]);
        assert_eq!(sizes(1, 20, 4), [1, 4, 16, 20]);
        assert_eq!(sizes(5, 5, 2), [5]);
        assert_eq!(sizes(1, 16 << 20, 4).len(), 13);
    }
}
