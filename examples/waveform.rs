//! Read a waveform as an IEEE 488.2 definite-length binary block into `Vec<f32>`.
//!
//! The block is read straight into the result buffer with EOS off, so the 0x0A bytes
//! that big-endian floats contain never cut it short.
//!
//! `cargo run --example waveform -- RESOURCE` on any backend; with no argument, the
//! simulated bench's GPIB0::22::INSTR.

use gpib::block::Endian;
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
    let scope = instrument()?;
    let bus = scope.bus();

    scope.write_str("WAV:POIN 2000")?;
    let t0 = bus.now();
    let wave: Vec<f32> = scope.query_values("WAV:DATA?", Endian::Big)?;
    let dt = bus.now() - t0;

    let (min, max) = wave
        .iter()
        .fold((f32::MAX, f32::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    println!("{} points, min {min:.4}, max {max:.4}", wave.len());
    println!(
        "{} bytes in {:.3} ms of bus time ({:.0} kB/s)",
        wave.len() * 4,
        dt.as_secs_f64() * 1e3,
        (wave.len() * 4) as f64 / dt.as_secs_f64() / 1e3
    );
    Ok(())
}
