//! `gpib-diag completions SHELL`: a completion script, generated from the clap definition.

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};
use crate::error::Result;
use crate::export;

/// Runs the command.
pub fn run(args: &CompletionsArgs) -> Result<()> {
    let mut cmd = Cli::command();
    let name = cmd.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, name, &mut script);
    export::to_stdout(&script)
}
