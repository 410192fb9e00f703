//! `gpib-diag compare --bus A --bus B SIZE`: one measurement per configuration, with
//! the ratio of each figure to the first's; `gpib-diag compare BEFORE.json AFTER.json`:
//! two saved runs compared ([`runs`]).

mod runs;

use crate::cli::{CompareArgs, Format};
use crate::error::{DiagError, Result};
use crate::export::{self, text, Ratio};
use crate::measure::Session;
use crate::record::Backend;
use crate::run::{self, Progress};
use crate::size::parse_size;
use crate::target::{BusSpec, Target};

/// The configuration `compare` measures when given none: the 1988 HP 9000/350.
const DEFAULT_CONFIG: &str = "hp9000-350";

/// `spec`, then `spec` with each kind of contention source it has switched off in turn
/// (`hp9000-350`, `hp9000-350:without=mounted-disc`, `hp9000-350:without=pio`).
fn each_source_off(spec: &str) -> Result<Vec<String>> {
    let parsed = BusSpec::parse(spec)?;
    let config = gpib::sim::config::Config::from_name_or_path(&parsed.config)?;
    let mut kinds: Vec<&'static str> = config.sources().iter().map(|s| s.kind.name()).collect();
    kinds.dedup();
    if kinds.is_empty() {
        return Err(DiagError::Usage(format!(
            "{spec} has no contention source to switch off: give a second --bus to compare with"
        )));
    }
    let sep = if spec.contains(':') { ',' } else { ':' };
    let mut out = vec![spec.to_string()];
    out.extend(kinds.iter().map(|k| format!("{spec}{sep}without={k}")));
    Ok(out)
}

/// Runs the command: two saved runs, or configurations measured at a size.
pub fn run(args: &CompareArgs) -> Result<()> {
    match args.what.as_slice() {
        [before, after] => {
            if !args.buses.is_empty() {
                return Err(DiagError::Usage(
                    "--bus is for measuring configurations at a SIZE; two saved runs are \
                     compared as they were measured"
                        .into(),
                ));
            }
            runs::run(before, after, &args.out)
        }
        [text] => {
            let size = parse_size(text).map_err(|e| {
                let hint = if std::path::Path::new(text).is_file() {
                    " (a saved run is compared with another: BEFORE.json AFTER.json)"
                } else {
                    ""
                };
                DiagError::Usage(format!("invalid SIZE: {e}{hint}"))
            })?;
            measure(args, size)
        }
        _ => Err(DiagError::Usage(
            "compare takes a SIZE, or two saved runs: BEFORE.json AFTER.json".into(),
        )),
    }
}

/// Measures each configuration at `size` and prints them with their ratios.
fn measure(args: &CompareArgs, size: u64) -> Result<()> {
    let buses = match args.buses.as_slice() {
        [] => each_source_off(DEFAULT_CONFIG)?,
        [one] if args.backend == Backend::Sim => each_source_off(one)?,
        [_] => {
            return Err(DiagError::Usage(
                "compare needs at least two --bus configurations".into(),
            ))
        }
        many => many.to_vec(),
    };
    let specs = buses
        .iter()
        .map(|s| BusSpec::parse(s))
        .collect::<Result<Vec<_>>>()?;
    let backend: Backend = args.backend;
    let mut records = Vec::new();
    let mut progress = Progress::new(
        run::planned(&args.run.plan()) * specs.len() as u64,
        args.out.quiet,
        &args.out.output,
        "compare",
    );
    let mut failed = None;
    for spec in &specs {
        let measured = Target::open(backend, spec).and_then(|target| {
            let mut session = Session::open(&target, &args.run.session_options(&target)?, size)?;
            let ctx = run::context(&target, &session);
            run::measure_pair(&mut session, &ctx, size, &args.run.plan(), &mut progress)
        });
        match measured {
            Ok(pair) => {
                records.push(pair.read);
                records.push(pair.write);
            }
            Err(e) => {
                failed = Some(e.in_config(&spec.label()));
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
    let ratios = ratios(&records);
    let out = match args.out.format {
        Format::Text => text::table(&records, &ratios),
        f => export::render(f, "compare", &records, &ratios)?,
    };
    export::emit(&args.out.output, &out)?;
    failed.map_or(Ok(()), Err)
}

/// Ratios of every later configuration's read and write to the first's.
pub fn ratios(records: &[crate::record::Record]) -> Vec<Ratio> {
    let Some((reference, rest)) = records.split_first_chunk::<2>() else {
        return Vec::new();
    };
    rest.iter()
        .map(|r| {
            let base = if r.direction == reference[0].direction {
                &reference[0]
            } else {
                &reference[1]
            };
            Ratio {
                config: r.config.clone(),
                direction: r.direction.as_str().to_string(),
                seconds_ratio: r.seconds / base.seconds,
                cpu_ratio: (base.cpu_seconds > 0.0).then(|| r.cpu_seconds / base.cpu_seconds),
            }
        })
        .collect()
}
