//! `gpib-diag trace export`: the 16 bus lines as a VCD.

use std::io::BufWriter;

use super::input::{self, output};
use super::ExportArgs;
use crate::error::{DiagError, Result};

/// Runs the command.
pub fn run(a: &ExportArgs) -> Result<()> {
    let Some(path) = &a.vcd else {
        return Err(DiagError::Usage("give --vcd OUT.vcd".into()));
    };
    let (header, records) = input::load(&a.file)?;
    {
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
    Ok(())
}
