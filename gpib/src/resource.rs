//! VISA-style resource strings: `GPIB0::22::INSTR`, `GPIB0::22::5::INSTR`, `GPIB1::INTFC`.

use std::fmt;
use std::str::FromStr;

use crate::address::{Address, PrimaryAddress, SecondaryAddress};
use crate::error::Error;

mod network;
pub(crate) use network::host_port;
pub use network::{NetworkResource, PrologixLink};

/// A parsed GPIB resource string.
///
/// ```
/// use gpib::Resource;
/// let r: Resource = "GPIB0::22::5::INSTR".parse().unwrap();
/// assert_eq!(r.board(), 0);
/// assert_eq!(r.to_string(), "GPIB0::22::5::INSTR");
/// assert!("GPIB0::31::INSTR".parse::<Resource>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resource {
    /// A device: `GPIB<board>::<pad>[::<sad>]::INSTR`.
    Instrument {
        /// The board (interface) index.
        board: u16,
        /// The device's address.
        address: Address,
    },
    /// The interface itself: `GPIB<board>::INTFC`.
    Interface {
        /// The board (interface) index.
        board: u16,
    },
}

impl Resource {
    /// The board index.
    pub fn board(&self) -> u16 {
        match self {
            Resource::Instrument { board, .. } | Resource::Interface { board } => *board,
        }
    }

    /// The device address, for an instrument resource.
    pub fn address(&self) -> Option<Address> {
        match self {
            Resource::Instrument { address, .. } => Some(*address),
            Resource::Interface { .. } => None,
        }
    }
}

fn bad(text: &str, reason: impl Into<String>) -> Error {
    Error::InvalidResource {
        text: text.to_string(),
        reason: reason.into(),
    }
}

fn number(text: &str, part: &str, what: &str) -> Result<u32, Error> {
    if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) || part.len() > 5 {
        return Err(bad(
            text,
            format!("{what} must be a decimal number, found {part:?}"),
        ));
    }
    part.parse()
        .map_err(|_| bad(text, format!("{what} {part:?} is out of range")))
}

impl FromStr for Resource {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        let trimmed = text.trim();
        let parts: Vec<&str> = trimmed.split("::").collect();
        let first = parts[0];
        // `get` and `strip_prefix`-style slicing: never inside a multi-byte character.
        let board_text = match (first.get(..4), first.get(4..)) {
            (Some(gpib), Some(rest)) if gpib.eq_ignore_ascii_case("GPIB") => rest,
            _ => return Err(bad(text, "must start with GPIB (e.g. GPIB0::22::INSTR)")),
        };
        let board = if board_text.is_empty() {
            0
        } else {
            u16::try_from(number(text, board_text, "board number")?)
                .map_err(|_| bad(text, "board number is out of range"))?
        };
        let last = parts[parts.len() - 1];
        let (fields, class) = if last.eq_ignore_ascii_case("INSTR") {
            (&parts[1..parts.len() - 1], "INSTR")
        } else if last.eq_ignore_ascii_case("INTFC") {
            (&parts[1..parts.len() - 1], "INTFC")
        } else if parts.len() > 1 && last.bytes().all(|b| b.is_ascii_digit()) {
            // `GPIB0::22` is shorthand for `GPIB0::22::INSTR`, as in VISA.
            (&parts[1..], "INSTR")
        } else if parts.len() == 1 {
            return Err(bad(text, "missing '::<address>::INSTR' or '::INTFC'"));
        } else {
            return Err(bad(
                text,
                format!("unknown resource class {last:?} (expected INSTR or INTFC)"),
            ));
        };
        match (class, fields) {
            ("INTFC", []) => Ok(Resource::Interface { board }),
            ("INTFC", _) => Err(bad(text, "an INTFC resource takes no address")),
            (_, []) => Err(bad(text, "an INSTR resource needs a primary address")),
            (_, [pad]) => instrument(text, board, number(text, pad, "primary address")?, None),
            (_, [pad, sad]) => instrument(
                text,
                board,
                number(text, pad, "primary address")?,
                Some(number(text, sad, "secondary address")?),
            ),
            _ => Err(bad(text, "too many '::' parts")),
        }
    }
}

fn instrument(text: &str, board: u16, pad: u32, sad: Option<u32>) -> Result<Resource, Error> {
    let primary = PrimaryAddress::try_from(pad).map_err(|e| bad(text, e.to_string()))?;
    let secondary = match sad {
        Some(s) => Some(SecondaryAddress::try_from(s).map_err(|e| bad(text, e.to_string()))?),
        None => None,
    };
    Ok(Resource::Instrument {
        board,
        address: Address { primary, secondary },
    })
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resource::Instrument { board, address } => match address.secondary {
                Some(s) => write!(f, "GPIB{board}::{}::{s}::INSTR", address.primary),
                None => write!(f, "GPIB{board}::{}::INSTR", address.primary),
            },
            Resource::Interface { board } => write!(f, "GPIB{board}::INTFC"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn ok(s: &str) -> Resource {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn parses_and_prints() {
        for s in [
            "GPIB0::22::INSTR",
            "GPIB0::22::5::INSTR",
            "GPIB1::INTFC",
            "GPIB12::0::INSTR",
        ] {
            assert_eq!(ok(s).to_string(), s);
        }
        assert_eq!(ok("gpib::7::instr").to_string(), "GPIB0::7::INSTR");
        assert_eq!(ok("GPIB0::22").to_string(), "GPIB0::22::INSTR");
        assert_eq!(ok("GPIB0::22::96").to_string(), "GPIB0::22::0::INSTR");
        assert_eq!(ok(" GPIB2::3::INSTR ").board(), 2);
        assert_eq!(
            ok("GPIB0::22::5::INSTR")
                .address()
                .unwrap()
                .secondary
                .unwrap()
                .get(),
            5
        );
        assert_eq!(ok("GPIB0::INTFC").address(), None);
    }

    #[test]
    fn rejects_bad_ones_with_reasons() {
        let cases = [
            ("", "must start with GPIB"),
            ("TCPIP0::1.2.3.4::INSTR", "must start with GPIB"),
            ("GPIB0", "missing"),
            ("GPIBx::22::INSTR", "board number"),
            ("GPIB0::31::INSTR", "31"),
            ("GPIB0::22::31::INSTR", "31"),
            ("GPIB0::-1::INSTR", "primary address"),
            ("GPIB0::INSTR", "needs a primary address"),
            ("GPIB0::5::INTFC", "takes no address"),
            ("GPIB0::5::6::7::INSTR", "too many"),
            ("GPIB0::5::SOCKET", "unknown resource class"),
            ("GPIB0::99999999::INSTR", "primary address"),
            // Non-ASCII text (byte slicing inside a character panicked).
            ("GPI€::22::INSTR", "must start with GPIB"),
            ("ＧＰＩＢ0::22::INSTR", "must start with GPIB"),
            ("GPIB€::22::INSTR", "board number"),
            ("GPIB0::２２::INSTR", "primary address"),
        ];
        for (s, why) in cases {
            let e = s.parse::<Resource>().unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidResource, "{s}");
            assert!(e.to_string().contains(why), "{s}: {e}");
        }
    }
}
