//! Opening the files the library reads (gpib.conf, simulator configurations, traces):
//! regular files only, so that a FIFO with no writer, a device or a folder named as one
//! is refused at once instead of waited on or read without end.
//!
//! The path is checked before it is opened, the opened handle again (so nothing can be
//! swapped in between unnoticed); on Unix, with the `trace` or `sim` feature (which
//! bring `libc`), the open itself does not block either.

use std::fs::File;
use std::io::{self, Read as _};
use std::path::Path;

/// Why a text file could not be read.
#[derive(Debug)]
pub(crate) enum TextFileError {
    /// It could not be opened (`NotFound` among others).
    Open(io::Error),
    /// It is a folder (`true`) or a FIFO, device or socket (`false`).
    NotRegular { directory: bool },
    /// It holds more than `limit` bytes.
    TooLarge { limit: u64 },
    /// It could not be read.
    Read(io::Error),
    /// It is not UTF-8: the offset of the first invalid byte.
    NotUtf8 { offset: usize },
}

impl std::fmt::Display for TextFileError {
    /// What is wrong with the file, to follow its name ("PATH: ...").
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Open(e) => write!(f, "cannot open: {e}"),
            Self::NotRegular { directory: true } => write!(f, "is a directory, not a file"),
            Self::NotRegular { directory: false } => {
                write!(f, "is not a regular file (a device, FIFO or socket)")
            }
            Self::TooLarge { limit } => write!(f, "is larger than {limit} bytes"),
            Self::Read(e) => write!(f, "cannot read: {e}"),
            Self::NotUtf8 { offset } => {
                write!(f, "is not UTF-8 text (invalid byte at offset {offset})")
            }
        }
    }
}

fn not_regular(directory: bool) -> io::Error {
    let what = if directory {
        "a directory"
    } else {
        "a FIFO, device or socket"
    };
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("not a regular file ({what})"),
    )
}

/// Opens `path` for reading if it is a regular file; anything else is
/// `ErrorKind::InvalidInput` ("not a regular file (a FIFO, device or socket)").
pub(crate) fn open_regular(path: &Path) -> io::Result<File> {
    let kind = std::fs::metadata(path)?.file_type();
    if !kind.is_file() {
        return Err(not_regular(kind.is_dir()));
    }
    let file = open_nonblocking(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(not_regular(kind.is_dir()));
    }
    Ok(file)
}

#[cfg(all(unix, any(feature = "trace", feature = "sim")))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(all(unix, any(feature = "trace", feature = "sim"))))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// Reads the regular file at `path` as UTF-8 text of at most `limit` bytes (at most
/// `limit + 1` are read, so a file growing meanwhile is refused too).
pub(crate) fn read_text(path: &Path, limit: u64) -> Result<String, TextFileError> {
    let file = open_regular(path).map_err(|e| {
        if e.kind() == io::ErrorKind::InvalidInput {
            let directory = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
            TextFileError::NotRegular { directory }
        } else {
            TextFileError::Open(e)
        }
    })?;
    let len = file.metadata().map_err(TextFileError::Read)?.len();
    if len > limit {
        return Err(TextFileError::TooLarge { limit });
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(TextFileError::Read)?;
    if bytes.len() as u64 > limit {
        return Err(TextFileError::TooLarge { limit });
    }
    String::from_utf8(bytes).map_err(|e| TextFileError::NotUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_only_and_within_the_limit() {
        let dir = std::env::temp_dir().join(format!("gpib-regular-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.txt");
        std::fs::write(&f, "hello").unwrap();
        assert_eq!(read_text(&f, 5).unwrap(), "hello");
        assert!(matches!(
            read_text(&f, 4),
            Err(TextFileError::TooLarge { limit: 4 })
        ));
        assert!(matches!(
            read_text(&dir, 10),
            Err(TextFileError::NotRegular { directory: true })
        ));
        assert!(matches!(
            read_text(&dir.join("none"), 10),
            Err(TextFileError::Open(e)) if e.kind() == io::ErrorKind::NotFound
        ));
        std::fs::write(&f, [0x66, 0xff]).unwrap();
        assert!(matches!(
            read_text(&f, 10),
            Err(TextFileError::NotUtf8 { offset: 1 })
        ));
        #[cfg(unix)]
        assert!(matches!(
            read_text(Path::new("/dev/zero"), 10),
            Err(TextFileError::NotRegular { directory: false })
        ));
        std::fs::remove_dir_all(&dir).ok();
    }
}
