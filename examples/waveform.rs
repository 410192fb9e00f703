//! Read a waveform as an IEEE 488.2 definite-length binary block into `Vec<f32>`.
//!
//! The block is read straight into the result buffer with EOS off, so the 0x0A bytes
//! that big-endian floats contain never cut it short.

use gpib::block::Endian;
use gpib::{sim, Bus};

fn main() -> Result<(), gpib::Error> {
    env_logger::init();
    let bus = Bus::new(sim::bench().board(0)?);
    let scope = bus.device(22)?;

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
