//! Reading an ordinary VCD (a logic analyzer's capture) change by change, in bounded
//! memory: tokens of at most [`MAX_TOKEN`] bytes, only the words of `$timescale` and
//! `$var` kept (at most [`MAX_COMMAND_WORDS`]), at most [`MAX_VARS`] GPIB wires, one
//! pending change. A header that never ends costs nothing but the time to read it.

use std::collections::HashMap;
use std::io::{self, BufRead};

use crate::trace::wave::LINE_NAMES;

/// A waveform read from a VCD: line changes in picoseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capture {
    /// `(time in ps, asserted lines)`, times never decreasing.
    pub changes: Vec<(u64, u16)>,
    /// The GPIB lines found (bits as in [`crate::trace::wave::lines`]).
    pub present: u16,
    /// The resolution: picoseconds a time unit.
    pub tick_ps: u64,
}

/// Why a VCD was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VcdError {
    /// Something in the file is not what VCD allows, or what this reader takes.
    #[error("line {line}: {what}")]
    Syntax {
        /// 1-based line number (0: the file as a whole).
        line: usize,
        /// What was wrong.
        what: String,
    },
    /// Reading failed.
    #[error("reading the VCD: {0}")]
    Io(#[from] io::Error),
}

fn syntax(line: usize, what: impl Into<String>) -> VcdError {
    VcdError::Syntax {
        line,
        what: what.into(),
    }
}

/// Most changes [`read_vcd`] keeps (about 1.6 GB of memory at 16 bytes each); a
/// [`VcdReader`] has no limit (it keeps none).
pub const MAX_CHANGES: usize = 100_000_000;
/// Longest word (identifier, keyword, time stamp, comment word) read, in bytes.
pub const MAX_TOKEN: usize = 64 << 10;
/// Most one-bit wires naming GPIB lines (aliases included).
pub const MAX_VARS: usize = 1024;
/// Most words of a `$timescale` or `$var` command.
pub const MAX_COMMAND_WORDS: usize = 16;

/// Words of a VCD, each with its line, at most [`MAX_TOKEN`] bytes long.
struct Tokens<R> {
    input: R,
    line: usize,
    word: Vec<u8>,
}

impl<R: BufRead> Tokens<R> {
    /// The next word and its line, `None` at the end of the input.
    fn next(&mut self) -> Result<Option<(&[u8], usize)>, VcdError> {
        self.word.clear();
        let mut start = self.line;
        loop {
            let buf = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if buf.is_empty() {
                break;
            }
            let mut used = 0;
            let mut done = false;
            for &b in buf {
                used += 1;
                if b.is_ascii_whitespace() {
                    if b == b'\n' {
                        self.line += 1;
                    }
                    if !self.word.is_empty() {
                        done = true;
                        break;
                    }
                    start = self.line;
                } else {
                    if self.word.len() == MAX_TOKEN {
                        return Err(syntax(
                            start,
                            format!(
                                "a word longer than {MAX_TOKEN} bytes: not a VCD this reader takes"
                            ),
                        ));
                    }
                    self.word.push(b);
                }
            }
            self.input.consume(used);
            if done {
                break;
            }
        }
        Ok((!self.word.is_empty()).then_some((&self.word[..], start)))
    }
}

fn text(word: &[u8], line: usize) -> Result<&str, VcdError> {
    std::str::from_utf8(word).map_err(|_| syntax(line, "a word that is not UTF-8 text"))
}

/// Reads a VCD one change at a time (see [`read_vcd`] for what it takes).
#[derive(Debug)]
pub struct VcdReader<R> {
    tokens: TokensBox<R>,
    ids: HashMap<Vec<u8>, u16>,
    present: u16,
    tick_ps: u64,
    state: u16,
    time: u64,
    pending: Option<(u64, u16)>,
    in_comment: bool,
    done: bool,
}

/// [`Tokens`] with a `Debug` that does not show the input.
struct TokensBox<R>(Tokens<R>);

impl<R> std::fmt::Debug for TokensBox<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tokens(line {})", self.0.line)
    }
}

impl<R: BufRead> VcdReader<R> {
    /// Reads the header, up to `$enddefinitions $end`.
    pub fn new(input: R) -> Result<Self, VcdError> {
        let mut r = Self {
            tokens: TokensBox(Tokens {
                input,
                line: 1,
                word: Vec::new(),
            }),
            ids: HashMap::new(),
            present: 0,
            tick_ps: 1000,
            state: 0,
            time: 0,
            pending: None,
            in_comment: false,
            done: false,
        };
        r.header()?;
        if r.present == 0 {
            return Err(syntax(
                0,
                "no GPIB line among the VCD's variables (expected one-bit wires named DIO1..DIO8, EOI, DAV, NRFD, NDAC, IFC, SRQ, ATN, REN)",
            ));
        }
        Ok(r)
    }

    /// The GPIB lines found (bits as in [`crate::trace::wave::lines`]).
    pub fn present(&self) -> u16 {
        self.present
    }

    /// Picoseconds a time unit.
    pub fn tick_ps(&self) -> u64 {
        self.tick_ps
    }

    fn header(&mut self) -> Result<(), VcdError> {
        // The command being read, and the words kept of it ($timescale, $var).
        let mut cmd: Option<(Vec<u8>, usize)> = None;
        let mut words: Vec<(String, usize)> = Vec::new();
        loop {
            let Some((w, line)) = self.tokens.0.next()? else {
                return Err(syntax(0, "no $enddefinitions: not a complete VCD header"));
            };
            if w == b"$end" {
                let Some((c, at)) = cmd.take() else {
                    return Err(syntax(line, "$end without a command before it"));
                };
                match &c[..] {
                    b"$enddefinitions" => return Ok(()),
                    b"$timescale" => self.tick_ps = timescale(&words, at)?,
                    b"$var" => self.var(&words, at)?,
                    _ => {}
                }
                words.clear();
                continue;
            }
            match &cmd {
                None => {
                    if w.first() != Some(&b'$') {
                        return Err(syntax(
                            line,
                            format!(
                                "{:?} outside a command: a VCD header is made of $commands ending in $end",
                                String::from_utf8_lossy(&w[..w.len().min(40)])
                            ),
                        ));
                    }
                    cmd = Some((w.to_vec(), line));
                }
                Some((c, at)) if c == b"$timescale" || c == b"$var" => {
                    if words.len() == MAX_COMMAND_WORDS {
                        return Err(syntax(
                            *at,
                            format!(
                                "{} of more than {MAX_COMMAND_WORDS} words (no $end?)",
                                String::from_utf8_lossy(c)
                            ),
                        ));
                    }
                    words.push((text(w, line)?.to_string(), line));
                }
                // Words of other commands ($date, $comment, $scope...) are not kept.
                Some(_) => {}
            }
        }
    }

    fn var(&mut self, words: &[(String, usize)], line: usize) -> Result<(), VcdError> {
        // $var <type> <size> <identifier> <reference> [<bit select>] $end
        let get = |i: usize| words.get(i).map(|(t, _)| t.as_str()).unwrap_or("");
        let (size, id, name) = (get(1), get(2), get(3));
        let Some(bit) = LINE_NAMES.iter().position(|n| n.eq_ignore_ascii_case(name)) else {
            return Ok(()); // not a GPIB line
        };
        if size != "1" {
            return Err(syntax(
                line,
                format!("{name} is {size} bits wide: give each GPIB line as a one-bit wire"),
            ));
        }
        if self.ids.len() == MAX_VARS && !self.ids.contains_key(id.as_bytes()) {
            return Err(syntax(
                line,
                format!("more than {MAX_VARS} variables name GPIB lines"),
            ));
        }
        self.ids.insert(id.as_bytes().to_vec(), 1 << bit);
        self.present |= 1 << bit;
        Ok(())
    }

    /// The next change: `(time in ps, asserted lines)`, changes at one time put
    /// together; `None` at the end.
    pub fn next_change(&mut self) -> Result<Option<(u64, u16)>, VcdError> {
        while !self.done {
            let Some((w, line)) = self.tokens.0.next()? else {
                self.done = true;
                break;
            };
            if self.in_comment {
                self.in_comment = w != b"$end";
                continue;
            }
            match w[0] {
                b'#' => {
                    let t: u64 = text(&w[1..], line)?.parse().map_err(|_| {
                        syntax(
                            line,
                            format!(
                                "bad time stamp {:?}",
                                String::from_utf8_lossy(&w[..w.len().min(40)])
                            ),
                        )
                    })?;
                    if t < self.time {
                        return Err(syntax(
                            line,
                            format!("time goes back from {} to {t}", self.time),
                        ));
                    }
                    self.time = t;
                }
                b'0' | b'1' | b'x' | b'X' | b'z' | b'Z' => {
                    let Some(&bit) = self.ids.get(&w[1..]) else {
                        continue;
                    };
                    let new = if w[0] == b'0' {
                        self.state | bit
                    } else {
                        self.state & !bit
                    };
                    if new == self.state {
                        continue;
                    }
                    self.state = new;
                    let ps = self.time.checked_mul(self.tick_ps).ok_or_else(|| {
                        syntax(line, format!("time {} overflows in picoseconds", self.time))
                    })?;
                    match self.pending {
                        Some((pt, _)) if pt == ps => self.pending = Some((ps, new)),
                        before => {
                            self.pending = Some((ps, new));
                            if before.is_some() {
                                return Ok(before);
                            }
                        }
                    }
                }
                b'b' | b'B' | b'r' | b'R' => {
                    // The value, then the identifier as its own word.
                    let value = String::from_utf8_lossy(&w[..w.len().min(40)]).into_owned();
                    if let Some((id, _)) = self.tokens.0.next()? {
                        if self.ids.contains_key(id) {
                            return Err(syntax(
                                line,
                                format!("vector change {value:?} of a GPIB line: give each line as a one-bit wire"),
                            ));
                        }
                    }
                }
                _ if w == b"$comment" => self.in_comment = true,
                // $dumpvars, $end ... in the body: no values.
                _ => {}
            }
        }
        Ok(self.pending.take())
    }
}

fn timescale(words: &[(String, usize)], line: usize) -> Result<u64, VcdError> {
    let text: String = words.iter().map(|(t, _)| t.as_str()).collect();
    let digits = text.chars().take_while(|c| c.is_ascii_digit()).count();
    let (num, unit) = text.split_at(digits);
    let num: u64 = num
        .parse()
        .map_err(|_| syntax(line, format!("timescale {text:?} has no number")))?;
    let per: u64 = match unit {
        "s" => 1_000_000_000_000,
        "ms" => 1_000_000_000,
        "us" => 1_000_000,
        "ns" => 1_000,
        "ps" => 1,
        "fs" => {
            return Err(syntax(
                line,
                "femtosecond timescales are finer than this reader's picoseconds",
            ))
        }
        _ => {
            return Err(syntax(
                line,
                format!("timescale unit {unit:?} is not s, ms, us, ns or ps"),
            ))
        }
    };
    num.checked_mul(per)
        .filter(|&v| v > 0)
        .ok_or_else(|| syntax(line, format!("timescale {text:?} is out of range")))
}

/// Reads an ordinary VCD: `$timescale`, `$scope`s, one-bit `$var`s whose reference
/// names a GPIB line (`DIO1`..`DIO8`, `EOI`, `DAV`, `NRFD`, `NDAC`, `IFC`, `SRQ`,
/// `ATN`, `REN`, any case; other variables are ignored), `#time` stamps and scalar
/// changes (`0`, `1`; `x` and `z` read as released). Vector changes of a GPIB line
/// (`b...`) are refused with an error that says so.
///
/// Every change is kept (at most [`MAX_CHANGES`]); [`VcdReader`] reads one at a time.
pub fn read_vcd(input: impl BufRead) -> Result<Capture, VcdError> {
    let mut r = VcdReader::new(input)?;
    let mut changes = Vec::new();
    while let Some(c) = r.next_change()? {
        if changes.len() >= MAX_CHANGES {
            return Err(syntax(
                r.tokens.0.line,
                format!("more than {MAX_CHANGES} changes"),
            ));
        }
        changes.push(c);
    }
    Ok(Capture {
        changes,
        present: r.present,
        tick_ps: r.tick_ps,
    })
}
