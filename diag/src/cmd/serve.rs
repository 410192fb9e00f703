//! `gpib-diag serve`: boards on the network, as a VXI-11 and HiSLIP LAN/GPIB gateway
//! and a Prologix GPIB-ETHERNET adapter, until Ctrl-C: a simulated configuration, the
//! machine's linux-gpib boards, or a relay of another adapter or gateway.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use gpib::serve::{ServeOptions, Server};

use super::serve_boards;
use crate::cli::ServeArgs;
use crate::error::{DiagError, Result};

/// Runs the server until Ctrl-C (or SIGTERM).
pub fn run(a: &ServeArgs) -> Result<()> {
    let boards = serve_boards::open(a)?;
    let default = boards.default;
    let opts = ServeOptions {
        bind: a.bind,
        prologix_port: (!a.no_prologix).then_some(a.port),
        vxi11_port: (!a.no_vxi11).then_some(a.vxi11_port),
        abort_port: a.abort_port,
        hislip_port: (!a.no_hislip).then_some(a.hislip_port.unwrap_or(gpib::hislip::PORT)),
        portmap_port: (!a.no_portmap && !a.no_vxi11).then_some(
            a.portmap_port
                .unwrap_or(gpib::backend::vxi11::proto::portmap::PORT),
        ),
        max_connections: a.max_connections as usize,
        idle_timeout: a
            .idle_timeout
            .filter(|&s| s > 0.0)
            .map(Duration::from_secs_f64),
        message_timeout: gpib::serve::DEFAULT_MESSAGE_TIMEOUT,
        max_recv_size: 1 << 20,
        default_address: default,
        trace: a.trace,
        allow: a.allow.clone(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    ctrlc::set_handler(move || s.store(true, Ordering::SeqCst))
        .map_err(|e| DiagError::Usage(format!("cannot catch Ctrl-C: {e}")))?;
    let server = Server::start_boards(boards.buses.clone(), opts)
        .map_err(|e| DiagError::Usage(format!("cannot listen on {}: {e}", a.bind)))?;
    // A port asked for that cannot be bound is an error; a default one is skipped.
    let refused = [
        ("--portmap-port", a.portmap_port, server.portmap_error()),
        ("--hislip-port", a.hislip_port, server.hislip_error()),
    ];
    if let Some((flag, Some(_), Some(why))) =
        refused.iter().find(|r| r.1.is_some() && r.2.is_some())
    {
        let msg = format!("{flag}: cannot listen on {}, {why}", a.bind);
        server.stop();
        return Err(DiagError::Usage(msg));
    }
    if let Some(why) = server.portmap_error() {
        eprintln!(
            "gpib-diag serve: no portmapper ({why}); VXI-11 clients must be given the core port, e.g. TCPIP::{}::gpib0,N::INSTR",
            server
                .vxi11_addr()
                .map_or("HOST,PORT".to_string(), |v| format!("{},{}", v.ip(), v.port()))
        );
    }
    if let Some(why) = server.hislip_error() {
        eprintln!("gpib-diag serve: no HiSLIP ({why}); give another with --hislip-port");
    }
    let mut out = std::io::stdout();
    writeln!(out, "{}", server.ports_line())
        .and_then(|()| out.flush())
        .map_err(|source| DiagError::Output {
            path: "-".into(),
            source,
        })?;
    let served: Vec<String> = boards
        .labels
        .iter()
        .enumerate()
        .map(|(i, l)| format!("gpib{i} = {l}"))
        .collect();
    eprintln!(
        "gpib-diag serve: {}{}{}{}; Ctrl-C stops",
        served.join(", "),
        match (boards.host.is_some(), a.realtime) {
            (false, _) => "",
            (true, false) => " in virtual time",
            (true, true) => " in real time",
        },
        default.map_or(String::new(), |d| format!(
            ", inst0, hislip0 and ++addr at start = {d}"
        )),
        if a.allow.is_empty() {
            String::new()
        } else {
            let nets: Vec<String> = a.allow.iter().map(ToString::to_string).collect();
            format!(", clients from {} only", nets.join(", "))
        }
    );
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let st = server.stats();
    server.stop();
    eprintln!(
        "gpib-diag serve: stopped ({} connection(s) served, {} refused, {} not allowed, {} discovery call(s) answered)",
        st.accepted, st.refused, st.denied, st.udp_replies
    );
    Ok(())
}
