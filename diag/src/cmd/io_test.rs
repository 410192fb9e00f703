//! `gpib-diag io-test SIZE`: the 1988 HP 9000/350 measurement's io_test program as a command.

use crate::cli::{Format, IoTestArgs};
use crate::error::Result;
use crate::export::{self, text};
use crate::measure::Session;
use crate::run::{self, Progress};
use crate::target::Target;

/// Runs the command.
pub fn run(args: &IoTestArgs) -> Result<()> {
    let target = Target::open(args.bus.backend, &args.bus.spec()?)?;
    let mut session = Session::open(&target, &args.run.session_options(&target)?, args.size)?;
    let ctx = run::context(&target, &session);
    let mut progress = Progress::new(
        run::planned(&args.run.plan()),
        args.out.quiet,
        &args.out.output,
        "io-test",
    );
    let pair = run::measure_pair(
        &mut session,
        &ctx,
        args.size,
        &args.run.plan(),
        &mut progress,
    )?;
    progress.finish();
    let records = [pair.read, pair.write];
    let out = match args.out.format {
        Format::Text => {
            let mut s = text::io_test_lines(&records[0], &records[1]);
            if args.out.verbose {
                s.push_str(&text::details(&records));
            }
            s
        }
        f => export::render(f, "io-test", &records, &[])?,
    };
    export::emit(&args.out.output, &out)
}
