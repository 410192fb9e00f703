//! Opening a trace file: regular files only, opened without blocking, so that a FIFO
//! with no writer (or a device) named as a trace is refused at once instead of
//! waited on.

use std::fs::File;
use std::io::{self, BufReader};
use std::path::Path;

use crate::trace::reader::{TraceError, TraceReader};

/// Opens `path` for reading if it is a regular file: the open does not block (a FIFO
/// with no writer answers at once) and the opened handle is checked, so that nothing
/// can be swapped in between.
pub fn open_regular(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else {
            "a FIFO, device or socket"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not a regular file ({what}): traces are read from regular files",
                path.display()
            ),
        ));
    }
    Ok(file)
}

/// Opens the trace file at `path` (a regular file, see [`open_regular`]) and reads its
/// header.
pub fn open_file(path: &Path) -> Result<TraceReader<BufReader<File>>, TraceError> {
    TraceReader::new(BufReader::new(open_regular(path)?))
}
