//! Reading configuration files: regular files only, capped, errors naming the file.

use crate::error::{Error, Result};

use super::builtin_names;

/// `e` as a configuration error about `path`: "simulator configuration: PATH: why".
pub(super) fn in_file(path: &std::path::Path, e: Error) -> Error {
    let why = match e {
        Error::Config(why) => why,
        other => other.to_string(),
    };
    Error::Config(format!("{}: {why}", path.display()))
}

/// Reads the regular file at `path`, at most `limit` bytes, as UTF-8 text.
///
/// The file is opened without blocking (a FIFO with no writer answers at once), its
/// opened handle is checked to be a regular file (not a folder, device, FIFO or
/// socket), and at most `limit + 1` bytes are read, so that a file growing meanwhile
/// is refused too. Errors are [`Error::Config`] naming the file.
pub fn read_text_file(path: &std::path::Path, limit: u64) -> Result<String> {
    use crate::regular_file::TextFileError as E;
    let shown = path.display();
    crate::regular_file::read_text(path, limit).map_err(|e| match e {
        E::Open(e) if e.kind() == std::io::ErrorKind::NotFound => Error::Config(format!(
            "unknown configuration {shown:?}: not a built-in ({}) and no such file",
            builtin_names().join(", ")
        )),
        E::Open(e) => Error::Config(format!("{shown}: cannot open: {e}")),
        E::NotRegular { directory: true } => {
            Error::Config(format!("{shown} is a directory, not a configuration file"))
        }
        E::NotRegular { directory: false } => Error::Config(format!(
            "{shown} is not a regular file (a device, FIFO or socket); \
             configurations are read from regular files only"
        )),
        E::TooLarge { .. } => Error::Config(format!(
            "{shown} is larger than {}, the most a configuration file may hold",
            size_text(limit)
        )),
        E::Read(e) => Error::Config(format!("{shown}: cannot read: {e}")),
        E::NotUtf8 { offset } => Error::Config(format!(
            "{shown} is not UTF-8 text (invalid byte at offset {offset})"
        )),
    })
}

pub(super) fn size_text(bytes: u64) -> String {
    if bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}
