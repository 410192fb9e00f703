//! What a libgpib call reports: a failed call's figures ([`LibgpibError`], the
//! source of the backend's errors), a status word shown by its bits ([`StatusWord`]),
//! and a successful read's status and count ([`Done`]).

use crate::abi;

/// A libgpib call that set `ERR` in its status: the call, its `ibsta`, `iberr` and
/// count. The source of the backend's errors, so a program can see linux-gpib's own
/// figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibgpibError {
    /// The call, e.g. `"ibrd"`.
    pub call: &'static str,
    /// Its status word (`ThreadIbsta`).
    pub ibsta: i32,
    /// Its error code (`ThreadIberr`).
    pub iberr: i32,
    /// Bytes it transferred (`ThreadIbcntl`), or the `errno` with `EDVR`/`EFSO`.
    pub count: i64,
}

impl LibgpibError {
    /// Whether `TIMO` is set in the status.
    pub fn timed_out(&self) -> bool {
        self.ibsta & abi::TIMO != 0
    }
}

impl std::fmt::Display for LibgpibError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (name, meaning) = abi::IBERR_NAMES
            .iter()
            .find(|(c, ..)| *c == self.iberr)
            .map_or(("iberr", "unknown error"), |(_, n, m)| (*n, *m));
        write!(
            f,
            "{}: {name} ({meaning}), iberr {}, ibsta {}, ibcntl {}",
            self.call,
            self.iberr,
            StatusWord(self.ibsta),
            self.count
        )
    }
}

impl std::error::Error for LibgpibError {}

/// An `ibsta` word, shown as its hexadecimal value and the names of its set bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusWord(pub i32);

impl std::fmt::Display for StatusWord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const NAMES: [(i32, &str); 16] = [
            (abi::ERR, "ERR"),
            (abi::TIMO, "TIMO"),
            (abi::END, "END"),
            (abi::SRQI, "SRQI"),
            (abi::RQS, "RQS"),
            (abi::SPOLL, "SPOLL"),
            (abi::EVENT, "EVENT"),
            (abi::CMPL, "CMPL"),
            (abi::LOK, "LOK"),
            (abi::REM, "REM"),
            (abi::CIC, "CIC"),
            (abi::ATN, "ATN"),
            (abi::TACS, "TACS"),
            (abi::LACS, "LACS"),
            (abi::DTAS, "DTAS"),
            (abi::DCAS, "DCAS"),
        ];
        write!(f, "0x{:04x}", self.0 & 0xffff)?;
        let mut first = true;
        for (bit, name) in NAMES {
            if self.0 & bit != 0 {
                f.write_str(if first { " [" } else { " " })?;
                f.write_str(name)?;
                first = false;
            }
        }
        if !first {
            f.write_str("]")?;
        }
        Ok(())
    }
}

/// What a read that succeeded reports: whether `END` is in its status, and its count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    /// `END` in `ibsta`: the read ended on EOI (or on EOS, where that is set).
    pub end: bool,
    /// `ibcntl`: bytes transferred.
    pub count: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_words_name_their_bits() {
        assert_eq!(StatusWord(0).to_string(), "0x0000");
        assert_eq!(
            StatusWord(abi::ERR | abi::TIMO | abi::CMPL).to_string(),
            "0xc100 [ERR TIMO CMPL]"
        );
    }

    #[test]
    fn errors_name_the_call_and_code() {
        let e = LibgpibError {
            call: "ibrd",
            ibsta: abi::ERR | abi::TIMO,
            iberr: abi::EABO,
            count: 7,
        };
        assert!(e.timed_out());
        assert_eq!(
            e.to_string(),
            "ibrd: EABO (I/O aborted), iberr 6, ibsta 0xc000 [ERR TIMO], ibcntl 7"
        );
    }
}
