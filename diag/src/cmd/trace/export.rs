//! `gpib-diag trace export`: the 16 bus lines as a VCD and as a sigrok session.

use std::io::BufWriter;

use gpib::trace::vcd::VcdWriter;
use gpib::trace::wave::Synth;

use super::input::{self, output};
use super::sr::{self, SrError};
use super::ExportArgs;
use crate::error::{DiagError, Result};

/// Runs the command.
pub fn run(a: &ExportArgs) -> Result<()> {
    if a.vcd.is_none() && a.sr.is_none() {
        return Err(DiagError::Usage(
            "give --vcd OUT.vcd and/or --sr OUT.sr".into(),
        ));
    }
    // The whole trace drawn once before anything is written: a damaged record, or
    // an .sr longer than it may be, is refused before any output (and in the time it
    // takes to read the file, not to write billions of samples).
    let samples = sr::samples(&mut input::open(&a.file)?, a.resolution_ns)
        .map_err(|e| input::input(&a.file, e.to_string()))?;
    if a.sr.is_some() {
        sr::check_length(samples, a.resolution_ns)
            .map_err(|e| DiagError::Usage(format!("{}: {e}", a.file.display())))?;
    }
    if let Some(path) = &a.vcd {
        let mut reader = input::open(&a.file)?;
        let f = std::fs::File::create(path).map_err(|e| output(path, e))?;
        let out = BufWriter::with_capacity(1 << 20, f);
        let mut v = VcdWriter::new(out, a.resolution_ns, &reader.header().label)
            .map_err(|e| output(path, e))?;
        let mut synth = Synth::new(a.resolution_ns);
        while reader
            .draw_next(&mut synth, &mut |t, s| v.change(t, s))
            .map_err(|e| input::input(&a.file, e.to_string()))?
        {
            if let Some(e) = v.take_error() {
                return Err(output(path, e));
            }
        }
        let st = v.finish().map_err(|e| output(path, e))?;
        eprintln!(
            "gpib-diag: {} time stamps at {} ns into {}",
            st.stamps,
            a.resolution_ns,
            path.display()
        );
    }
    if let Some(path) = &a.sr {
        let mut reader = input::open(&a.file)?;
        let label = reader.header().label.clone();
        let f = std::fs::File::create(path).map_err(|e| output(path, e))?;
        let out = BufWriter::with_capacity(1 << 20, f);
        let st = sr::write_sr(&mut reader, a.resolution_ns, &label, out).map_err(|e| match e {
            SrError::Io(e) => output(path, e),
            SrError::Trace(e) => input::input(&a.file, e.to_string()),
            other => DiagError::Usage(format!("{}: {other}", path.display())),
        })?;
        eprintln!(
            "gpib-diag: {} samples at {} ns in {} chunks into {}",
            st.samples,
            a.resolution_ns,
            st.chunks,
            path.display()
        );
    }
    Ok(())
}
