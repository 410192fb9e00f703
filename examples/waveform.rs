//! Read a waveform as an IEEE 488.2 definite-length binary block into `Vec<f32>`.
//!
//! The block is read straight into the result buffer with EOS off, so the 0x0A bytes
//! that big-endian floats contain never cut it short.
//!
//! `cargo run --example waveform -- RESOURCE` (any resource string, as for the `idn`
//! example: `GPIB0::22::INSTR`, `TCPIP0::10.0.0.5::gpib0,22::INSTR`,
//! `PRLGX-TCPIP::10.0.0.6::1234::22::INSTR`); with none, the SCPI instrument of the
//! simulated bench. The transfer is timed on the backend's clock: virtual time on the
//! simulator, wall-clock time on hardware and over the network.

use gpib::block::Endian;
use gpib::{ClockKind, ResourceManager};

fn run() -> Result<(), gpib::Error> {
    let (mut rm, resource) = match std::env::args().nth(1) {
        Some(r) => (ResourceManager::from_env()?, r),
        None => (
            ResourceManager::simulated("bench")?,
            "GPIB0::22::INSTR".to_string(),
        ),
    };
    let scope = rm.open(&resource)?;
    let bus = scope.bus();

    scope.write_str("WAV:POIN 2000")?;
    let t0 = bus.now();
    let wave: Vec<f32> = scope.query_values("WAV:DATA?", Endian::Big)?;
    let dt = bus.now() - t0;

    let (min, max) = wave
        .iter()
        .fold((f32::MAX, f32::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    println!("{} points, min {min:.4}, max {max:.4}", wave.len());
    let clock = match bus.clock_kind() {
        ClockKind::Virtual => "virtual (simulated bus) time",
        ClockKind::Wall => "wall-clock time",
    };
    println!(
        "{} bytes in {:.3} ms of {clock} ({:.0} kB/s)",
        wave.len() * 4,
        dt.as_secs_f64() * 1e3,
        (wave.len() * 4) as f64 / dt.as_secs_f64() / 1e3
    );
    Ok(())
}

fn main() -> std::process::ExitCode {
    env_logger::init();
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("waveform: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
