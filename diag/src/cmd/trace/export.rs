//! `gpib-diag trace export`: the 16 bus lines as a VCD and as a sigrok session.

use std::io::BufWriter;

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
    let (header, records) = input::load(&a.file)?;
    if let Some(path) = &a.vcd {
        let f = std::fs::File::create(path).map_err(|e| output(path, e))?;
        let out = BufWriter::with_capacity(1 << 20, f);
        let st = gpib::trace::vcd::write_vcd(&records, a.resolution_ns, &header.label, out)
            .map_err(|e| output(path, e))?;
        eprintln!(
            "gpib-diag: {} time stamps at {} ns into {}",
            st.stamps,
            a.resolution_ns,
            path.display()
        );
    }
    if let Some(path) = &a.sr {
        let f = std::fs::File::create(path).map_err(|e| output(path, e))?;
        let out = BufWriter::with_capacity(1 << 20, f);
        let st =
            sr::write_sr(&records, a.resolution_ns, &header.label, out).map_err(|e| match e {
                SrError::Io(e) => output(path, e),
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
