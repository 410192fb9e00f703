//! `gpib-diag serve`: a simulated configuration on the network, as a Prologix
//! GPIB-ETHERNET adapter and a VXI-11 LAN/GPIB gateway, until Ctrl-C.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use gpib::serve::{ServeOptions, Server};
use gpib::{Address, Bus};

use crate::cli::ServeArgs;
use crate::error::{DiagError, Result};

/// Runs the server until Ctrl-C (or SIGTERM).
pub fn run(a: &ServeArgs) -> Result<()> {
    let host = gpib::sim::load(&a.bus)?;
    host.set_realtime(a.realtime);
    let board = match &a.board {
        None => host.board(0)?,
        Some(b) => match b.parse::<usize>() {
            Ok(i) => host.board(i)?,
            Err(_) => host.board_named(b)?,
        },
    };
    let index = board.index();
    let default = match a.default_device {
        Some(d) => Some(Address::try_from(d)?),
        // The first instrument on the board that is not a disc.
        None => host
            .devices(index)
            .into_iter()
            .find(|(_, _, mount)| mount.is_none())
            .map(|(addr, _, _)| addr),
    };
    let opts = ServeOptions {
        bind: a.bind,
        prologix_port: (!a.no_prologix).then_some(a.port),
        vxi11_port: (!a.no_vxi11).then_some(a.vxi11_port),
        abort_port: a.abort_port,
        portmap_port: (!a.no_portmap && !a.no_vxi11).then_some(a.portmap_port),
        max_connections: a.max_connections as usize,
        idle_timeout: a
            .idle_timeout
            .filter(|&s| s > 0.0)
            .map(Duration::from_secs_f64),
        message_timeout: gpib::serve::DEFAULT_MESSAGE_TIMEOUT,
        max_recv_size: 1 << 20,
        default_address: default,
        trace: a.trace,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    ctrlc::set_handler(move || s.store(true, Ordering::SeqCst))
        .map_err(|e| DiagError::Usage(format!("cannot catch Ctrl-C: {e}")))?;
    let server = Server::start(Bus::new(board), opts)
        .map_err(|e| DiagError::Usage(format!("cannot listen on {}: {e}", a.bind)))?;
    if let Some(why) = server.portmap_error() {
        eprintln!(
            "gpib-diag serve: no portmapper ({why}); VXI-11 clients must be given the core port, e.g. TCPIP::{}::gpib0,N::INSTR",
            server
                .vxi11_addr()
                .map_or("HOST,PORT".to_string(), |v| format!("{},{}", v.ip(), v.port()))
        );
    }
    let mut out = std::io::stdout();
    writeln!(out, "{}", server.ports_line())
        .and_then(|()| out.flush())
        .map_err(|source| DiagError::Output {
            path: "-".into(),
            source,
        })?;
    eprintln!(
        "gpib-diag serve: {} board {} in {} time{}; Ctrl-C stops",
        a.bus,
        index,
        if a.realtime { "real" } else { "virtual" },
        default.map_or(String::new(), |d| format!(
            ", inst0 and ++addr at start = {d}"
        ))
    );
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let st = server.stats();
    server.stop();
    eprintln!(
        "gpib-diag serve: stopped ({} connection(s) served, {} refused)",
        st.accepted, st.refused
    );
    Ok(())
}
