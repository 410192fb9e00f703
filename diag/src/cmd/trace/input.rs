//! Reading a trace file for the `trace` subcommands, with errors that name it.

use std::path::Path;

use gpib::trace::TraceReader;

use crate::error::{DiagError, Result};

/// Opens `path` as a trace (header read and checked).
pub fn open(path: &Path) -> Result<TraceReader<std::io::BufReader<std::fs::File>>> {
    let f = std::fs::File::open(path).map_err(|e| input(path, e.to_string()))?;
    TraceReader::new(std::io::BufReader::new(f)).map_err(|e| input(path, e.to_string()))
}

/// The error for a refused input file.
pub fn input(path: &Path, what: String) -> DiagError {
    DiagError::Input {
        path: path.display().to_string(),
        what,
    }
}

/// The error for an output file that could not be written.
pub fn output(path: &Path, source: std::io::Error) -> DiagError {
    DiagError::Output {
        path: path.display().to_string(),
        source,
    }
}

/// Writes `text` to standard output (a closed pipe is not an error).
pub fn emit(text: &str) -> Result<()> {
    use std::io::Write;
    let mut so = std::io::stdout().lock();
    match so.write_all(text.as_bytes()).and_then(|()| so.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(output(Path::new("standard output"), e)),
        Ok(()) => Ok(()),
    }
}
