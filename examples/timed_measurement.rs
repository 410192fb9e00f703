//! A measurement that takes time, in virtual time: a meter with a 200 ms measurement
//! time is started, the program waits for its service request, then reads the result.
//!
//! On the simulator the wait is virtual: `wait_for_service` returns when the meter's
//! measurement ends (200 ms of virtual time), not at the timeout, and the program runs
//! in milliseconds of wall time.
//!
//! `cargo run --example timed_measurement -- RESOURCE` on any backend; with no
//! argument, the simulated bench's GPIB0::22::INSTR.

use std::time::{Duration, Instant};

use gpib::ResourceManager;

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
    let wall = Instant::now();
    let meter = instrument()?;
    let bus = meter.bus();

    // 200 ms per measurement; SRQ when an operation completes (ESR bit 0 -> ESB -> SRQ).
    meter.write_str("*RST;*CLS;VOLT:APER 0.2;*ESE 1;*SRE 32")?;
    meter.write_str("INIT;*OPC")?;
    let started = bus.now();

    let (who, status) = bus.wait_for_service(&[meter.address()], Duration::from_secs(10))?;
    let waited = bus.now() - started;
    let reading: f64 = meter
        .query("FETCH?")?
        .parse()
        .map_err(|_| gpib::Error::Protocol("FETCH? did not answer a number".into()))?;
    meter.query("*ESR?")?; // clears the event that requested service

    println!("device {who} requested service (status {status}) after {waited:?} of virtual time");
    println!("reading: {reading:+.6} V");
    println!("wall time: {:?}", wall.elapsed());
    Ok(())
}
