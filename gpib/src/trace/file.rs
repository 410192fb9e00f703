//! Opening a trace file: regular files only, opened without blocking, so that a FIFO
//! with no writer (or a device) named as a trace is refused at once instead of
//! waited on.

use std::fs::File;
use std::io::{self, BufReader};
use std::path::Path;

use crate::trace::format::Header;
use crate::trace::reader::{TraceError, TraceReader};
use crate::trace::trace_file::TraceFile;
use crate::trace::writer::TraceWriter;

/// Opens `path` for reading if it is a regular file: the open does not block (a FIFO
/// with no writer answers at once) and the opened handle is checked, so that nothing
/// can be swapped in between.
pub fn open_regular(path: &Path) -> io::Result<File> {
    crate::regular_file::open_regular(path).map_err(|e| {
        if e.kind() == io::ErrorKind::InvalidInput {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is {e}: traces are read from regular files",
                    path.display()
                ),
            )
        } else {
            e
        }
    })
}

/// Opens the trace file at `path` (a regular file, see [`open_regular`]) and reads its
/// header.
pub fn open_file(path: &Path) -> Result<TraceReader<BufReader<File>>, TraceError> {
    TraceReader::new(BufReader::new(open_regular(path)?))
}

/// Reads a whole trace file into memory (header and records): a regular file (see
/// [`open_file`]). To go through a long one, read it record by record.
pub fn read_file(
    path: &std::path::Path,
) -> Result<(crate::trace::Header, Vec<crate::trace::Record<'static>>), TraceError> {
    let mut r = open_file(path)?;
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        out.push(rec);
    }
    Ok((r.header().clone(), out))
}

/// Creates (or truncates) the trace file at `path` and writes `header` to it. Records
/// are written behind the program, on a thread of their own ([`TraceWriter::behind`]):
/// a traced program pays for copying them into memory, not for the file system's work.
///
/// The file's space is reserved ahead of the writes ([`TraceFile`]), and what was not
/// used is given back when the file is closed: after the writer is dropped (on its
/// writing thread) or when the `TraceFile` that [`TraceWriter::finish`] returns is.
pub fn create_file(path: &Path, header: &Header) -> io::Result<TraceWriter<TraceFile>> {
    TraceWriter::behind(TraceFile::new(File::create(path)?), header)
}
