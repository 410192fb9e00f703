//! Ask an instrument who it is: the first thing every instrument app does.
//!
//! `cargo run --example idn` (on the simulated bench; pass a configuration name or
//! TOML file and an address to use another: `cargo run --example idn -- bench 22`).

use gpib::{sim, Bus, Resource};

fn main() -> Result<(), gpib::Error> {
    env_logger::init();
    let mut args = std::env::args().skip(1);
    let config = args.next().unwrap_or_else(|| "bench".into());
    let resource: Resource = format!(
        "GPIB0::{}::INSTR",
        args.next().unwrap_or_else(|| "22".into())
    )
    .parse()?;

    let host = sim::load(&config)?;
    let bus = Bus::new(host.board(usize::from(resource.board()))?);
    let address = resource
        .address()
        .expect("an INSTR resource has an address");
    let dmm = bus.device(address)?;

    dmm.clear()?; // SDC: start from a known state
    println!("{resource}: {}", dmm.query("*IDN?")?);
    println!("reading: {} V", dmm.query("MEAS:VOLT?")?);
    println!("errors:  {}", dmm.query("SYST:ERR?")?);
    println!("bus time used: {:?} (virtual)", bus.now());
    Ok(())
}
