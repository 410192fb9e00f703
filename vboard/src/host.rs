//! The process's simulated host: built from `GPIB_VBOARD_CONFIG`, else
//! `GPIB_SIM_CONFIG` / `IB_CONFIG`, the first
//! time a board goes online (or is found online), in real time unless
//! `GPIB_SIM_REALTIME=0` asks for virtual time.

use std::sync::OnceLock;

use gpib_sim::sim::config::{Config, HostSource};
use gpib_sim::sim::{SimBoard, SimHost};
use gpib_sim::PrimaryAddress;

use crate::user::Errno;

struct Host {
    sim: Result<SimHost, String>,
}

static HOST: OnceLock<Host> = OnceLock::new();

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|s| !s.trim().is_empty())
}

/// The configuration's variables: `GPIB_VBOARD_CONFIG` is for the virtual board alone,
/// where a program's own process reads `GPIB_SIM_CONFIG` for something else (the test
/// suites do).
fn variables() -> (Option<String>, Option<std::path::PathBuf>) {
    let sim_config = env("GPIB_VBOARD_CONFIG").or_else(|| env("GPIB_SIM_CONFIG"));
    let ib_config = env("IB_CONFIG").map(std::path::PathBuf::from);
    (sim_config, ib_config)
}

/// Which simulated bus this process serves, in words (`GPIB_SIM_CONFIG=bench`): the
/// hardware a board's kept settings were made on.
pub fn describe() -> String {
    let (sim_config, ib_config) = variables();
    HostSource {
        sim_config: sim_config.as_deref(),
        ib_config: ib_config.as_deref(),
    }
    .describe()
}

fn build() -> Host {
    let (sim_config, ib_config) = variables();
    let source = HostSource {
        sim_config: sim_config.as_deref(),
        ib_config: ib_config.as_deref(),
    };
    let built = source.read().and_then(|cfg: Config| {
        cfg.build()
            .map_err(|e| format!("{}: {e}", source.describe()))
    });
    if let Ok(host) = &built {
        let realtime = std::env::var("GPIB_SIM_REALTIME").map_or(true, |v| v.trim() != "0");
        host.set_realtime(realtime);
        if SimHost::trace_requested() {
            host.record(64);
        }
    }
    if let Err(e) = &built {
        eprintln!("gpib-vboard: the simulated bus did not load: {e}");
    }
    Host { sim: built }
}

/// With `GPIB_SIM_TRACE` set, prints the bus's events since the last call (after each
/// request, as compat prints them after each call).
pub fn print_events() {
    static TRACE: OnceLock<bool> = OnceLock::new();
    if !*TRACE.get_or_init(SimHost::trace_requested) {
        return;
    }
    if let Some(Ok(host)) = HOST.get().map(|h| h.sim.as_ref()) {
        host.print_events();
    }
}

/// Drops the bus events recorded so far (the restoring of a board's kept state).
pub fn forget_events() {
    if let Some(Ok(host)) = HOST.get().map(|h| h.sim.as_ref()) {
        drop(host.take_events());
    }
}

/// Board `minor` of the simulated host at primary address `pad` (what attaching a
/// board does). EIO when the configuration did not load or has no such board.
pub fn attach(minor: usize, pad: u32) -> Result<SimBoard, Errno> {
    let host = HOST.get_or_init(build);
    let sim = host.sim.as_ref().map_err(|_| libc::EIO)?;
    let mut board = sim.board(minor).map_err(|e| {
        eprintln!("gpib-vboard: /dev/gpib{minor}: {e}");
        libc::EIO
    })?;
    let pad = u8::try_from(pad)
        .ok()
        .and_then(|p| PrimaryAddress::try_from(p).ok())
        .ok_or(libc::EINVAL)?;
    board.set_address(pad);
    Ok(board)
}
