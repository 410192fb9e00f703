//! `gpib-diag trace`: record a workload's bus trace, print it like a bus analyzer,
//! summarise it, export it as a waveform (VCD, sigrok session), check its handshake.
//! The format, writer, reader and waveform are the library's (`gpib::trace`); this
//! module only drives them.

mod check;
mod counted;
mod export;
mod input;
mod print;
mod record;
mod sr;
mod summary;

pub use crate::cli::trace::*;
use crate::error::Result;

/// Runs `trace ...`.
pub fn run(args: &TraceArgs) -> Result<()> {
    match &args.command {
        TraceCommand::Record(a) => record::run(a),
        TraceCommand::Print(a) => print::run(a),
        TraceCommand::Summary(a) => summary::run(a),
        TraceCommand::Export(a) => export::run(a),
        TraceCommand::Check(a) => check::run(a),
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::trace::parse_time;

    #[test]
    fn times() {
        assert_eq!(parse_time("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_time("20us"), Ok(20_000));
        assert_eq!(parse_time("0.3"), Ok(300_000_000));
        assert_eq!(parse_time("500ns"), Ok(500));
        assert!(parse_time("3 parsecs").is_err());
        assert!(parse_time("-1s").is_err());
    }
}
