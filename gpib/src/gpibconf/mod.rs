//! linux-gpib's configuration file, `/etc/gpib.conf`: its `interface` (board) and
//! `device` (named device) sections, parsed by a parser of this crate's own into typed,
//! checked [`Interface`] and [`Device`] entries.
//!
//! ```
//! use gpib::gpibconf::{self, Entry};
//! let conf = gpibconf::parse(r#"
//!     interface { minor = 0 board_type = "ni_pci" name = "violet" pad = 0 master = yes }
//!     device {
//!         minor = 0  name = "voltmeter"  pad = 7  sad = 0x6e   /* secondary 14 */
//!         timeout = T10s  eos = 0x0a  set-reos = yes
//!     }
//! "#)?;
//! let dmm = conf.device("voltmeter").unwrap();
//! assert_eq!(dmm.settings.address().to_string(), "7.14");
//! assert_eq!(dmm.settings.timeout(), gpib::Timeout::After(std::time::Duration::from_secs(10)));
//! assert_eq!(dmm.settings.eos_mode(), 0x0a | gpib::abi::REOS);
//! assert!(matches!(conf.find("violet"), Some(Entry::Interface(i)) if i.minor == 0));
//! # Ok::<(), gpib::gpibconf::ParseError>(())
//! ```
//!
//! The syntax is linux-gpib's (`lib/ibConfLex.l`, `lib/ibConfYacc.y`): `/* */`
//! comments, `"strings"` (or bare words), numbers in decimal, `0x` hex or `0` octal,
//! `yes`/`no`, timeouts as `T3s`-style names, as `3s`-style names or as a step number
//! 0..=17. An `interface` section starts with `minor = N`; a device's `minor` says which
//! interface it is on. `sad` is written 0x60 plus the secondary address, or 0 for none.
//! `set-reos`, `set-bin` and `set-xeos` become the EOS mode bits REOS, BIN and XEOS
//! ([`crate::abi`]). Errors ([`ParseError`]) name the line, the column, the key and
//! what was wrong; see [`parse`](fn@parse) for where this parser is stricter than
//! linux-gpib's.
//!
//! [`crate::ResourceManager`] opens a device section by its name with its address,
//! timeout and EOS settings ([`crate::ResourceManager::set_gpib_conf`]); the simulator builds hosts from a gpib.conf
//! (`gpib::sim::Config`'s `gpib_conf`), and the compatibility library honours
//! `IB_CONFIG`.

pub(crate) mod error;
mod lex;
mod model;
mod parse;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use error::{ParseError, Problem};
pub use model::{
    Device, Entry, GpibConf, InitFlags, Interface, Settings, UnusableDevice, DEFAULT_TIMEOUT_STEP,
};
pub use parse::{MAX_BOARDS, MAX_INIT_STRING_BYTES, MAX_NAME_BYTES, MAX_PATH_BYTES, MAX_SECTIONS};

use crate::error::{Error, Result};

/// The largest gpib.conf read (1 MiB); a bigger one is refused unread.
pub const MAX_GPIB_CONF_BYTES: u64 = 1 << 20;

/// linux-gpib's default configuration file (its `DEFAULT_CONFIG_FILE`,
/// `$(sysconfdir)/gpib.conf`, on most installations this one).
pub const DEFAULT_PATH: &str = "/etc/gpib.conf";

/// The environment variable linux-gpib reads the configuration file's path from.
pub const ENV_VAR: &str = "IB_CONFIG";

/// Parses gpib.conf text.
///
/// Stricter than linux-gpib's parser where that one accepts a file and then misbehaves
/// or silently drops a setting: a key given twice, a device section without `name`,
/// `minor` or `pad`, two sections
/// with one name or two interfaces with one minor, a `sad` that is neither 0 nor
/// 0x60..=0x7e (linux-gpib takes 1..=0x5f as "none"), numbers out of their field's
/// range (linux-gpib truncates), `08` or `09` (octal without its digits), timeout steps
/// above 17 (linux-gpib takes them as `TNONE`), strings longer than linux-gpib's fields
/// (it cuts them), and more than [`MAX_SECTIONS`] sections. More lenient in two ways:
/// carriage returns count as white space, and `10s` is 10 s (linux-gpib's lexer makes
/// it 1 s).
///
/// As linux-gpib: a device whose `minor` has no interface section leaves the rest of
/// the file usable; that device alone cannot be opened ([`GpibConf::unusable`],
/// [`crate::ResourceManager::open`] says why). Names may be empty (`name = ""`) and strings
/// may span lines; a comment still open at the end of the file runs to the end (one
/// that leaves a section unclosed is an error that names the comment).
pub fn parse(text: &str) -> Result<GpibConf, ParseError> {
    parse::parse(text)
}

/// The path linux-gpib reads: `$IB_CONFIG` when set (and not empty), else
/// [`DEFAULT_PATH`].
pub fn default_path() -> PathBuf {
    match std::env::var_os(ENV_VAR) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from(DEFAULT_PATH),
    }
}

impl GpibConf {
    /// Parses gpib.conf text (see [`parse`](fn@parse)).
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        parse::parse(text)
    }

    /// Reads and parses the gpib.conf at `path`: a regular file of at most
    /// [`MAX_GPIB_CONF_BYTES`]. Errors name the file.
    pub fn read(path: impl AsRef<Path>) -> Result<Self, ParseError> {
        let path = path.as_ref();
        let unreadable = |why: String| {
            ParseError {
                file: None,
                line: 0,
                column: 0,
                key: None,
                problem: Problem::Unreadable(why),
            }
            .in_file(path)
        };
        if !path.exists() {
            return Err(unreadable("no such file".into()));
        }
        let text = crate::regular_file::read_text(path, MAX_GPIB_CONF_BYTES)
            .map_err(|e| unreadable(e.to_string()))?;
        Self::parse(&text).map_err(|e| e.in_file(path))
    }

    /// Reads the file linux-gpib reads ([`default_path`]: `$IB_CONFIG` or
    /// `/etc/gpib.conf`).
    pub fn read_default() -> Result<Self, ParseError> {
        Self::read(default_path())
    }
}

impl From<ParseError> for Error {
    fn from(e: ParseError) -> Self {
        Error::GpibConf(Box::new(e))
    }
}
