//! The command line of the everyday instrument commands: `query`, `write`, `read`, `list`.

use std::path::PathBuf;

use clap::Args;

/// Where a resource string's `GPIB<n>` boards are.
#[derive(Debug, Clone, Args)]
pub struct ResourceArgs {
    /// The simulated configuration whose boards are GPIB0, GPIB1, ... (a built-in name or
    /// a TOML file; default `$GPIB_SIM_CONFIG`, else `bench`). Network resources
    /// (`TCPIP::...`) do not use it.
    #[arg(long, value_name = "NAME|FILE")]
    pub bus: Option<String>,
    /// `GPIB<n>` resources are linux-gpib's boards, not a simulated configuration's
    /// (needs a build with the `linux-gpib` feature).
    #[arg(long)]
    pub hardware: bool,
    /// I/O timeout in seconds, or `never`.
    #[arg(long, default_value = "10")]
    pub timeout: gpib::Timeout,
}

/// `query`.
#[derive(Debug, Clone, Args)]
pub struct QueryArgs {
    /// The instrument: `GPIB0::22::INSTR`, `TCPIP0::host::gpib0,22::INSTR`,
    /// `TCPIP0::host::inst0::INSTR`, or a gpib.conf device name.
    pub resource: String,
    /// What to send (a newline is appended).
    pub text: String,
    /// The answer is an IEEE 488.2 block: write its body to this file (`-`: standard
    /// output) instead of printing text.
    #[arg(long, value_name = "FILE")]
    pub block: Option<PathBuf>,
    #[command(flatten)]
    pub at: ResourceArgs,
}

/// `write`.
#[derive(Debug, Clone, Args)]
pub struct WriteArgs {
    /// The instrument (as for `query`).
    pub resource: String,
    /// What to send (a newline is appended).
    pub text: String,
    #[command(flatten)]
    pub at: ResourceArgs,
}

/// `read`.
#[derive(Debug, Clone, Args)]
pub struct ReadArgs {
    /// The instrument (as for `query`).
    pub resource: String,
    /// Read an IEEE 488.2 block and write its body to this file (`-`: standard output),
    /// instead of a text message.
    #[arg(long, value_name = "FILE")]
    pub block: Option<PathBuf>,
    #[command(flatten)]
    pub at: ResourceArgs,
}

/// `list`.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// A VISA resource expression: `?*::INSTR` every instrument, `GPIB0::?*` board 0.
    #[arg(default_value = "?*")]
    pub pattern: String,
    #[command(flatten)]
    pub at: ResourceArgs,
}

/// `shell`.
#[derive(Debug, Clone, Args)]
pub struct ShellArgs {
    /// The instrument to open first (as for `query`); `open RESOURCE` opens another.
    pub resource: Option<String>,
    #[command(flatten)]
    pub at: ResourceArgs,
}
