//! A measurement that takes time: a meter with a 200 ms measurement time is started,
//! the program waits for its service request, then reads the result.
//!
//! `cargo run --example timed_measurement -- RESOURCE` (any resource string, as for the
//! `idn` example); with none, the SCPI instrument of the simulated bench. The wait is
//! timed on the backend's clock. On the simulator that is virtual time:
//! `wait_for_service` returns when the meter's measurement ends (200 ms of virtual
//! time), not at the timeout, and the program runs in milliseconds of wall time. On
//! hardware and over the network it is wall-clock time, and the program takes the
//! 200 ms.

use std::time::{Duration, Instant};

use gpib::{ClockKind, ResourceManager};

fn run() -> Result<(), gpib::Error> {
    let wall = Instant::now();
    let (mut rm, resource) = match std::env::args().nth(1) {
        Some(r) => (ResourceManager::from_env()?, r),
        None => (
            ResourceManager::simulated("bench")?,
            "GPIB0::22::INSTR".to_string(),
        ),
    };
    let meter = rm.open(&resource)?;
    let bus = meter.bus();

    // 200 ms per measurement; SRQ when an operation completes (ESR bit 0 -> ESB -> SRQ).
    meter.write_str("*RST;*CLS;VOLT:APER 0.2;*ESE 1;*SRE 32")?;
    meter.write_str("INIT;*OPC")?;
    let started = bus.now();

    let (who, status) = bus
        .wait_for_service(&[meter.address()], Duration::from_secs(10).into())
        .inspect_err(|e| {
            if e.kind() == gpib::ErrorKind::Timeout && bus.clock_kind() == ClockKind::Wall {
                // A simulator behind a network or libgpib in virtual time moves its
                // clock only as it is called: nothing ends the measurement meanwhile.
                eprintln!(
                    "timed_measurement: no service request. A simulator reached over the \
                     network or through libgpib measures in real time only when asked: \
                     `gpib-diag serve --realtime`, GPIB_SIM_REALTIME=1 for the \
                     compatibility library"
                );
            }
        })?;
    let waited = bus.now() - started;
    let reading: f64 = meter
        .query("FETCH?")?
        .parse()
        .map_err(|_| gpib::Error::Protocol("FETCH? did not answer a number".into()))?;
    meter.query("*ESR?")?; // clears the event that requested service

    let clock = match bus.clock_kind() {
        ClockKind::Virtual => "virtual time (the simulator's clock)",
        ClockKind::Wall => "wall-clock time",
    };
    println!("device {who} requested service (status {status}) after {waited:?} of {clock}");
    println!("reading: {reading:+.6} V");
    println!("wall time: {:?}", wall.elapsed());
    Ok(())
}

fn main() -> std::process::ExitCode {
    env_logger::init();
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("timed_measurement: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
