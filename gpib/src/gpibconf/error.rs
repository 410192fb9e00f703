//! What can be wrong with a gpib.conf, and where.

use std::fmt;
use std::path::PathBuf;

/// A gpib.conf that does not parse or does not make sense: where (line, column, the
/// key whose value is wrong) and what.
///
/// Its message reads `gpib.conf line 12, column 9: pad: 31 is out of range: ...`,
/// with the file's path instead of `gpib.conf` when it was read from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The file, when the text was read from one.
    pub file: Option<PathBuf>,
    /// 1-based line of the offending token (0 for problems with the whole file).
    pub line: u32,
    /// 1-based column (in characters) of the offending token (0 for the whole file).
    pub column: u32,
    /// The key whose value or section is at fault, as written in the file.
    pub key: Option<String>,
    /// What is wrong.
    pub problem: Problem,
}

impl ParseError {
    pub(super) fn new(line: u32, column: u32, key: Option<&str>, problem: Problem) -> Self {
        Self {
            file: None,
            line,
            column,
            key: key.map(String::from),
            problem,
        }
    }

    /// The same error, naming the file it is in.
    pub fn in_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.file = Some(path.into());
        self
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(p) => write!(f, "{}", p.display())?,
            None => f.write_str("gpib.conf")?,
        }
        if self.line > 0 {
            write!(f, " line {}, column {}", self.line, self.column)?;
        }
        f.write_str(": ")?;
        if let Some(k) = &self.key {
            write!(f, "{k}: ")?;
        }
        write!(f, "{}", self.problem)
    }
}

impl std::error::Error for ParseError {}

/// What is wrong with a gpib.conf (see [`ParseError`] for where).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Problem {
    /// The text is larger than [`MAX_GPIB_CONF_BYTES`](super::MAX_GPIB_CONF_BYTES).
    #[error("the file is larger than {limit} bytes, the most a gpib.conf may hold")]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// The file could not be read.
    #[error("{0}")]
    Unreadable(String),
    /// A `/*` without its `*/` that hides the end of a section (a comment that runs to
    /// the end of the file after the last section is accepted, as linux-gpib does).
    #[error("comment opened here is never closed (`*/` missing): it runs to the end of the file, and the section before it is not closed")]
    UnterminatedComment,
    /// A `"` without its closing `"`.
    #[error("string opened here is never closed (`\"` missing)")]
    UnterminatedString,
    /// A character no gpib.conf token starts with.
    #[error("unexpected character {0:?} (gpib.conf has `/* */` comments, \"strings\", words, and `{{ }} = ,`)")]
    UnexpectedCharacter(char),
    /// Something other than what the syntax needs here.
    #[error("expected {expected}, found {found}")]
    Expected {
        /// What would have been right.
        expected: &'static str,
        /// What the file has.
        found: String,
    },
    /// A word that is no key of linux-gpib's.
    #[error("unknown key `{0}` (interface keys: minor, name, board_type, pad, sad, timeout, eos, set-reos, set-bin, set-xeos, set-eot, master, base, irq, dma, pci_bus, pci_slot, sysfs_device_path, serial_number; device keys: minor, name, pad, sad, timeout, eos, set-reos, set-bin, set-xeos, set-eot, init-string, init-flags, autopoll)")]
    UnknownKey(String),
    /// A key of the other kind of section.
    #[error("`{key}` belongs in {belongs} section, not in {found} section")]
    WrongSection {
        /// The key.
        key: String,
        /// Where it belongs ("an interface", "a device").
        belongs: &'static str,
        /// Where it is.
        found: &'static str,
    },
    /// An interface section that does not start with `minor = N` (linux-gpib's grammar
    /// requires it first).
    #[error("an interface section must start with `minor = N` (linux-gpib requires it first), found {0}")]
    MinorNotFirst(String),
    /// A value that is not right for its key.
    #[error("{value} {reason}")]
    BadValue {
        /// The value as written.
        value: String,
        /// Why it is wrong, and what is allowed.
        reason: String,
    },
    /// A key given twice in one section.
    #[error("given twice in this section (first on line {first_line})")]
    DuplicateKey {
        /// Where it was first given.
        first_line: u32,
    },
    /// A section without a key it must have.
    #[error("{section} section has no `{key}` ({why})")]
    MissingKey {
        /// The section ("device \"scope\"", "device").
        section: String,
        /// The missing key.
        key: &'static str,
        /// What it is for.
        why: &'static str,
    },
    /// Two sections with one name.
    #[error("the name {name:?} is already used on line {first_line}: names must be unique (ibfind finds the first)")]
    DuplicateName {
        /// The name.
        name: String,
        /// Where it was first used.
        first_line: u32,
    },
    /// Two interface sections with one minor.
    #[error("minor {minor} already has an interface section (line {first_line})")]
    DuplicateMinor {
        /// The board index.
        minor: u8,
        /// Where it was first configured.
        first_line: u32,
    },
    /// A device on a board that has no interface section.
    #[error("no interface section has minor = {minor}: the device's board is not configured")]
    NoInterface {
        /// The board index.
        minor: u8,
    },
    /// More sections than linux-gpib's table holds.
    #[error("more than {limit} interface and device sections (linux-gpib's table holds {limit})")]
    TooManySections {
        /// The limit.
        limit: usize,
    },
}
