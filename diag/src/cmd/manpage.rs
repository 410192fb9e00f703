//! `gpib-diag manpage`: the manual page in roff, generated from the clap definition.

use clap::CommandFactory;

use crate::cli::Cli;
use crate::error::{DiagError, Result};
use crate::export;

/// Runs the command.
pub fn run() -> Result<()> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(|source| DiagError::Output {
            path: "the manual page".into(),
            source,
        })?;
    export::to_stdout(&page)
}
