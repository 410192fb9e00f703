//! Let the instrument ask for service: enable SRQ on "message available", trigger a
//! reading, wait for SRQ, find who asked with a serial poll, read the answer.
//!
//! `cargo run --example wait_srq -- RESOURCE` on a board (`GPIB0::22::INSTR`); with no
//! argument, the simulated bench's GPIB0::22::INSTR.

use std::time::Duration;

use gpib::{Address, ResourceManager};

/// The instrument the command line names (`RESOURCE`, any backend), else the SCPI
/// instrument of the simulated bench.
fn instrument() -> Result<gpib::Device, gpib::Error> {
    match std::env::args().nth(1) {
        Some(r) => ResourceManager::from_env()?.open(&r),
        None => ResourceManager::simulated("bench")?.open("GPIB0::22::INSTR"),
    }
}

fn main() -> Result<(), gpib::Error> {
    env_logger::init();
    let dmm = instrument()?;
    let bus = dmm.bus();
    let everyone: Vec<Address> = bus.find_listeners()?;
    let names: Vec<String> = everyone.iter().map(|a| a.to_string()).collect();
    println!("listeners: {}", names.join(", "));

    dmm.write_str("*CLS;*SRE 16")?; // SRQ when MAV (a message is available)
    for round in 1..=3 {
        dmm.trigger()?; // GET: take a reading
        let (who, status) = bus.wait_for_service(&everyone, Duration::from_secs(5))?;
        let value = bus.device(who)?.read_string()?;
        println!("round {round}: device {who} asked for service (status {status}): {value}");
    }
    Ok(())
}
