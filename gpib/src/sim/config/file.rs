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
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let shown = path.display();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::Config(format!(
                    "unknown configuration {shown:?}: not a built-in ({}) and no such file",
                    builtin_names().join(", ")
                ))
            } else {
                Error::Config(format!("{shown}: cannot open: {e}"))
            }
        })?;
    let meta = file
        .metadata()
        .map_err(|e| Error::Config(format!("{shown}: cannot stat: {e}")))?;
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(Error::Config(format!(
            "{shown} is a directory, not a configuration file"
        )));
    }
    if !kind.is_file() {
        return Err(Error::Config(format!(
            "{shown} is not a regular file (a device, FIFO or socket); \
             configurations are read from regular files only"
        )));
    }
    let too_big = || {
        Error::Config(format!(
            "{shown} is larger than {}, the most a configuration file may hold",
            size_text(limit)
        ))
    };
    if meta.len() > limit {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::Config(format!("{shown}: cannot read: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| {
        Error::Config(format!(
            "{shown} is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

pub(super) fn size_text(bytes: u64) -> String {
    if bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}
