//! Ask an instrument who it is: the first thing every instrument app does.
//!
//! `cargo run --example idn -- RESOURCE` on any backend: `GPIB0::22::INSTR` (linux-gpib,
//! or the simulator with `GPIB_SIM_CONFIG=bench`), `TCPIP0::10.0.0.5::gpib0,22::INSTR`
//! (a VXI-11 gateway), `TCPIP0::10.0.0.6::inst0::INSTR` (a LAN instrument), or a
//! gpib.conf device name. With no argument: the SCPI instrument of the simulated bench.

use gpib::ResourceManager;

fn main() -> Result<(), gpib::Error> {
    env_logger::init();
    let (mut rm, resource) = match std::env::args().nth(1) {
        Some(r) => (ResourceManager::from_env()?, r),
        None => (
            ResourceManager::simulated("bench")?,
            "GPIB0::22::INSTR".into(),
        ),
    };
    let dmm = rm.open(&resource)?;

    dmm.clear()?; // SDC: start from a known state
    println!("{resource}: {}", dmm.query("*IDN?")?);
    println!("reading: {} V", dmm.query("MEAS:VOLT?")?);
    println!("errors:  {}", dmm.query("SYST:ERR?")?);
    Ok(())
}
