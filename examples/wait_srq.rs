//! Let the instrument ask for service: enable SRQ on "message available", trigger a
//! reading, wait for SRQ, find who asked with a serial poll, read the answer.

use std::time::Duration;

use gpib::{sim, Address, Bus};

fn main() -> Result<(), gpib::Error> {
    env_logger::init();
    let bus = Bus::new(sim::bench().board(0)?);
    let dmm = bus.device(22)?;
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
