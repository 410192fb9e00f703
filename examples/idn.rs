//! Ask an instrument who it is: the first thing every instrument app does.
//!
//! `cargo run --example idn -- RESOURCE`, the same program on every backend:
//!
//! | RESOURCE | the instrument |
//! |---|---|
//! | none | the SCPI instrument of the simulated bench (`GPIB0::22::INSTR` of `bench`) |
//! | `GPIB0::22::INSTR` | device 22 of linux-gpib's board 0 (`--features linux-gpib`), or of the simulator with `GPIB_SIM_CONFIG=bench` |
//! | `TCPIP0::10.0.0.5::gpib0,22::INSTR` | device 22 behind a VXI-11 LAN/GPIB gateway (`TCPIP0::host,PORT::...` without a portmapper) |
//! | `PRLGX-TCPIP::10.0.0.6::1234::22::INSTR` | device 22 on a Prologix GPIB-ETHERNET adapter |
//! | `TCPIP0::10.0.0.7::inst0::INSTR`, `voltmeter` | a LAN instrument; a gpib.conf device name |
//!
//! `gpib-diag serve --bus bench` serves the simulated bench as a VXI-11 gateway and a
//! Prologix adapter, to try the network strings on one machine.

use gpib::ResourceManager;

fn run() -> Result<(), gpib::Error> {
    // The resource: the first argument, or the simulated bench's SCPI instrument.
    let (mut rm, resource) = match std::env::args().nth(1) {
        Some(r) => (ResourceManager::from_env()?, r),
        None => (
            ResourceManager::simulated("bench")?,
            "GPIB0::22::INSTR".to_string(),
        ),
    };
    let dmm = rm.open(&resource)?;

    dmm.clear()?; // SDC: start from a known state
    println!("{resource}: {}", dmm.query("*IDN?")?);
    println!("reading: {} V", dmm.query("MEAS:VOLT?")?);
    println!("errors:  {}", dmm.query("SYST:ERR?")?);
    Ok(())
}

fn main() -> std::process::ExitCode {
    env_logger::init();
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("idn: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
