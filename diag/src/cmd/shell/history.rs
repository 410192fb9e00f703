//! The shell's history file (`~/.gpib_diag_history`): one line of bytes per entry,
//! the newest last. A file rustyline wrote (its `#V2` first line) reads as well.

use std::io::Read;

use super::editor::MAX_HISTORY;

/// The most bytes of the file read.
const MAX_FILE: u64 = 4 << 20;

/// The file's entries, oldest first (none when it cannot be read).
pub fn load(path: &std::path::Path) -> Vec<Vec<u8>> {
    let mut bytes = Vec::new();
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    if file.take(MAX_FILE).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    let mut lines: Vec<Vec<u8>> = bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty() && *l != b"#V2")
        .map(<[u8]>::to_vec)
        .collect();
    let drop = lines.len().saturating_sub(MAX_HISTORY);
    lines.drain(..drop);
    lines
}

/// Writes `entries` to the file, one a line.
pub fn save(path: &std::path::Path, entries: &[Vec<u8>]) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    for e in entries {
        bytes.extend_from_slice(e);
        bytes.push(b'\n');
    }
    std::fs::write(path, bytes)
}
