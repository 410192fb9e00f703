//! sigrok's own session format (`.sr`, version 2): a zip of `version`, an INI
//! `metadata` and raw sample chunks `logic-1-1`, `logic-1-2`, ... of 16-bit samples
//! (bit *n* = probe *n*+1, electrical level: asserted = 0), deflated. A long transfer's
//! handshake repeats, so the file is a small fraction of the VCD's size.

use std::io::{Read, Seek, Write};

use gpib::trace::wave::{Synth, LINE_NAMES};
use gpib::trace::TraceReader;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// Samples per chunk file (4 MiB of data), as sigrok writes them.
const CHUNK_SAMPLES: usize = 2 << 20;

/// Most samples one export writes (4 GiB of raw data before compression): a longer
/// capture needs a coarser resolution.
pub const MAX_SAMPLES: u64 = 2 << 30;

/// What [`write_sr`] wrote.
#[derive(Debug, Clone, Copy, Default)]
pub struct SrStats {
    /// Samples written.
    pub samples: u64,
    /// Chunk files.
    pub chunks: u32,
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum SrError {
    /// Writing failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The zip container could not be written.
    #[error("zip: {0}")]
    Zip(#[from] zip::result::ZipError),
    /// The trace could not be read or drawn.
    #[error("{0}")]
    Trace(#[from] gpib::trace::TraceError),
    /// The capture has more samples than [`MAX_SAMPLES`] at this resolution.
    #[error(
        "the trace lasts {ticks} ticks of {tick_ns} ns, more than the {MAX_SAMPLES} samples \
         an .sr export takes: give a coarser --resolution-ns"
    )]
    TooLong {
        /// Ticks the trace lasts.
        ticks: u64,
        /// Tick length.
        tick_ns: u64,
    },
}

/// The sample rate as sigrok writes it: `10 MHz`, `1 GHz`, `500 kHz`.
fn rate_text(hz: u64) -> String {
    for (unit, div) in [("GHz", 1_000_000_000), ("MHz", 1_000_000), ("kHz", 1_000)] {
        if hz >= div && hz % div == 0 {
            return format!("{} {unit}", hz / div);
        }
    }
    format!("{hz} Hz")
}

struct Chunks<W: Write + Seek> {
    zip: ZipWriter<W>,
    buf: Vec<u8>,
    stats: SrStats,
    /// Electrical level of the current state (asserted lines low).
    level: u16,
    /// Ticks written so far.
    at: u64,
    tick_ns: u64,
    error: Option<SrError>,
}

impl<W: Write + Seek> Chunks<W> {
    fn options() -> SimpleFileOptions {
        SimpleFileOptions::default().compression_method(CompressionMethod::Deflated)
    }

    fn flush_chunk(&mut self) -> Result<(), SrError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.stats.chunks += 1;
        self.zip
            .start_file(format!("logic-1-{}", self.stats.chunks), Self::options())?;
        self.zip.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Repeats the current level up to tick `t` (exclusive).
    fn fill_to(&mut self, t: u64) -> Result<(), SrError> {
        if t > MAX_SAMPLES {
            return Err(SrError::TooLong {
                ticks: t,
                tick_ns: self.tick_ns,
            });
        }
        let pair = self.level.to_le_bytes();
        while self.at < t {
            let room = CHUNK_SAMPLES - self.buf.len() / 2;
            let n = room.min(usize::try_from(t - self.at).unwrap_or(usize::MAX));
            for _ in 0..n {
                self.buf.extend_from_slice(&pair);
            }
            self.at += n as u64;
            self.stats.samples += n as u64;
            if self.buf.len() / 2 == CHUNK_SAMPLES {
                self.flush_chunk()?;
            }
        }
        Ok(())
    }

    fn change(&mut self, t: u64, asserted: u16) {
        if self.error.is_some() {
            return;
        }
        match self.fill_to(t) {
            Ok(()) => self.level = !asserted,
            Err(e) => self.error = Some(e),
        }
    }
}

/// Samples an export of the trace `reader` reads at `tick_ns` a sample would write
/// (the waveform drawn, nothing kept), or why it cannot be drawn: what [`write_sr`]
/// checks before it writes anything.
pub fn samples<R: Read>(reader: &mut TraceReader<R>, tick_ns: u64) -> Result<u64, SrError> {
    let mut synth = Synth::new(tick_ns.max(1));
    while reader.draw_next(&mut synth, &mut |_, _| {})? {}
    // The last change's tick, then the few samples of the final state.
    Ok(synth.cursor().saturating_add(1 + TAIL))
}

/// Samples of the final state after the last change.
const TAIL: u64 = 10;

/// Refuses an export of `samples` samples over [`MAX_SAMPLES`].
pub fn check_length(samples: u64, tick_ns: u64) -> Result<(), SrError> {
    if samples > MAX_SAMPLES {
        return Err(SrError::TooLong {
            ticks: samples,
            tick_ns,
        });
    }
    Ok(())
}

/// Writes the trace `reader` reads (record by record) as a sigrok session at
/// `tick_ns` a sample to `out`; `label` goes into the metadata as a comment. Give it a
/// trace [`samples`] has measured: a longer one is refused only when it gets there.
pub fn write_sr<R: Read, W: Write + Seek>(
    reader: &mut TraceReader<R>,
    tick_ns: u64,
    label: &str,
    out: W,
) -> Result<SrStats, SrError> {
    let tick_ns = tick_ns.max(1);
    let mut zip = ZipWriter::new(out);
    zip.start_file("version", Chunks::<W>::options())?;
    zip.write_all(b"2")?;
    let mut c = Chunks {
        zip,
        buf: Vec::with_capacity(CHUNK_SAMPLES * 2),
        stats: SrStats::default(),
        level: u16::MAX, // every line released: high
        at: 0,
        tick_ns,
        error: None,
    };
    let mut synth = Synth::new(tick_ns);
    while reader.draw_next(&mut synth, &mut |t, s| c.change(t, s))? {
        if let Some(e) = c.error.take() {
            return Err(e);
        }
    }
    if let Some(e) = c.error.take() {
        return Err(e);
    }
    // A few samples of the final state, as the VCD export shows it.
    let end = c.at + TAIL;
    c.fill_to(end)?;
    c.flush_chunk()?;
    let mut meta = String::new();
    let label: String = label.chars().filter(|ch| !ch.is_control()).collect();
    meta.push_str("[global]\nsigrok version=0.5.2\n");
    meta.push_str(&format!("# written by gpib-rs: {label}\n\n"));
    meta.push_str("[device 1]\ncapturefile=logic-1\ntotal probes=16\n");
    meta.push_str(&format!(
        "samplerate={}\ntotal analog=0\n",
        rate_text(1_000_000_000 / tick_ns)
    ));
    for (i, name) in LINE_NAMES.iter().enumerate() {
        meta.push_str(&format!("probe{}={name}\n", i + 1));
    }
    meta.push_str("unitsize=2\n");
    c.zip.start_file("metadata", Chunks::<W>::options())?;
    c.zip.write_all(meta.as_bytes())?;
    c.zip.finish()?;
    Ok(c.stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_rates_as_sigrok_writes_them() {
        assert_eq!(rate_text(10_000_000), "10 MHz");
        assert_eq!(rate_text(1_000_000_000), "1 GHz");
        assert_eq!(rate_text(20_000_000), "20 MHz");
        assert_eq!(rate_text(1_000), "1 kHz");
        assert_eq!(rate_text(333), "333 Hz");
    }
}
