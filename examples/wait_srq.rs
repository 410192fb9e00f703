//! Let the instrument ask for service: enable SRQ on "message available", trigger a
//! reading, wait for SRQ, find who asked with a serial poll, read the answer.
//!
//! `cargo run --example wait_srq -- RESOURCE` (any resource string, as for the `idn`
//! example); with none, the SCPI instrument of the simulated bench. Where the backend
//! cannot look for listeners (a VXI-11 gateway, a Prologix adapter), only the
//! instrument itself is polled.

use std::time::Duration;

use gpib::{ErrorKind, ResourceManager};

fn run() -> Result<(), gpib::Error> {
    let (mut rm, resource) = match std::env::args().nth(1) {
        Some(r) => (ResourceManager::from_env()?, r),
        None => (
            ResourceManager::simulated("bench")?,
            "GPIB0::22::INSTR".to_string(),
        ),
    };
    let dmm = rm.open(&resource)?;
    let bus = dmm.bus();
    // Who could have asked: every listener on the bus, where the board can find them.
    let everyone = match bus.find_listeners() {
        Ok(found) => {
            let names: Vec<String> = found.iter().map(|a| a.to_string()).collect();
            println!("listeners: {}", names.join(", "));
            found
        }
        Err(e) if e.kind() == ErrorKind::Unsupported => {
            println!(
                "listeners: not available on the {} backend; polling {} only",
                bus.backend_name(),
                dmm.address()
            );
            vec![dmm.address()]
        }
        Err(e) => return Err(e),
    };

    dmm.write_str("*CLS;*SRE 16")?; // SRQ when MAV (a message is available)
    for round in 1..=3 {
        dmm.trigger()?; // GET: take a reading
        let (who, status) = bus.wait_for_service(&everyone, Duration::from_secs(5).into())?;
        let value = bus.device(who)?.read_string()?;
        println!("round {round}: device {who} asked for service (status {status}): {value}");
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    env_logger::init();
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wait_srq: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
