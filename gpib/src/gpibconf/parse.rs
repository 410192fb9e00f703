//! The recursive-descent parser: tokens into checked [`Interface`] and [`Device`]
//! sections, following linux-gpib's grammar (`lib/ibConfYacc.y`).
//!
//! ```text
//! file      = { interface | device }
//! interface = "interface" "{" "minor" "=" NUMBER { statement } "}"
//! device    = "device" "{" { statement } "}"
//! statement = KEY "=" value | ("set-reos" | "set-bin" | "master") BOOL | "autopoll"
//!           | "init-flags" "=" { "LLO" | "DCL" | "EXCL" | "set-clear" | "," }
//! ```
//!
//! Where this parser is stricter than linux-gpib's (which accepts these and then
//! misbehaves or ignores them), it says so in an error: a key given twice, a device
//! without a name, `minor` or `pad`, a duplicate name or minor, a `sad` that is neither 0 nor 0x60..=0x7e, out-of-range
//! numbers (linux-gpib truncates them), octal numbers with 8 or 9 in them, a timeout
//! step above 17 (linux-gpib takes it as `TNONE`), and strings longer than linux-gpib's
//! fields (it cuts them short). A device on a board with no interface section is
//! kept apart ([`GpibConf::unusable`]): opening it fails, the rest of the file is
//! usable.

use super::error::{ParseError, Problem};
use super::lex::{Lexer, Tok, Token};
use super::model::{Device, GpibConf, InitFlags, Interface, Settings, UnusableDevice};
use crate::abi::TIMEOUTS;
use crate::address::{PrimaryAddress, SecondaryAddress};
use crate::settings::Timeout;

/// Most sections linux-gpib's table holds (`FIND_CONFIGS_LENGTH` 64, less one).
pub const MAX_SECTIONS: usize = 63;
/// Board indices are `0..MAX_BOARDS` (`GPIB_MAX_NUM_BOARDS`).
pub const MAX_BOARDS: u8 = 16;
/// Longest `name` and `board_type` (linux-gpib keeps 99 bytes and a NUL).
pub const MAX_NAME_BYTES: usize = 99;
/// Longest `init-string` (linux-gpib copies 60 bytes).
pub const MAX_INIT_STRING_BYTES: usize = 60;
/// Longest `sysfs_device_path` and `serial_number` (0x1000 bytes with the NUL).
pub const MAX_PATH_BYTES: usize = 0xfff;

/// The timeout names linux-gpib knows besides `TNONE`..`T1000s`, with their step.
/// (linux-gpib's lexer maps `10s` to 1 s, a slip; here it is step T10s, as named.)
const TIMEOUT_WORDS: [&str; 18] = [
    "none", "10us", "30us", "100us", "300us", "1ms", "3ms", "10ms", "30ms", "100ms", "300ms", "1s",
    "3s", "10s", "30s", "100s", "300s", "1000s",
];
const TIMEOUT_NAMES: [&str; 18] = [
    "TNONE", "T10us", "T30us", "T100us", "T300us", "T1ms", "T3ms", "T10ms", "T30ms", "T100ms",
    "T300ms", "T1s", "T3s", "T10s", "T30s", "T100s", "T300s", "T1000s",
];

/// Words linux-gpib's lexer makes into something other than a bare string.
const RESERVED: &[&str] = &[
    "interface",
    "device",
    "base",
    "irq",
    "dma",
    "pci_bus",
    "pci_slot",
    "name",
    "board_type",
    "minor",
    "sysfs_device_path",
    "serial_number",
    "pad",
    "sad",
    "eos",
    "timeout",
    "timo",
    "set-reos",
    "set-bin",
    "set-xeos",
    "set-eot",
    "init-string",
    "init-flags",
    "set-clear",
    "LLO",
    "DCL",
    "EXCL",
    "controller",
    "master",
    "autopoll",
    "yes",
    "no",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Interface,
    Device,
}

impl Kind {
    fn article(self) -> &'static str {
        match self {
            Kind::Interface => "an interface",
            Kind::Device => "a device",
        }
    }
}

/// Where each key may appear.
fn key_home(key: &str) -> Option<(&'static str, Option<Kind>)> {
    let both = None;
    let i = Some(Kind::Interface);
    let d = Some(Kind::Device);
    Some(match key {
        "minor" => ("minor", both),
        "name" => ("name", both),
        "pad" => ("pad", both),
        "sad" => ("sad", both),
        "eos" => ("eos", both),
        "timeout" | "timo" => ("timeout", both),
        "set-reos" => ("set-reos", both),
        "set-bin" => ("set-bin", both),
        "set-xeos" => ("set-xeos", both),
        "set-eot" => ("set-eot", both),
        "board_type" => ("board_type", i),
        "master" | "controller" => ("master", i),
        "base" => ("base", i),
        "irq" => ("irq", i),
        "dma" => ("dma", i),
        "pci_bus" => ("pci_bus", i),
        "pci_slot" => ("pci_slot", i),
        "sysfs_device_path" => ("sysfs_device_path", i),
        "serial_number" => ("serial_number", i),
        "init-string" => ("init-string", d),
        "init-flags" => ("init-flags", d),
        "autopoll" => ("autopoll", d),
        _ => return None,
    })
}

/// A number as linux-gpib writes them: decimal, `0x` hex, or octal with a leading 0.
fn number_value(word: &str) -> Option<Result<u64, &'static str>> {
    let (digits, radix) = if let Some(h) = word.strip_prefix("0x").or(word.strip_prefix("0X")) {
        if h.is_empty() || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        (h, 16)
    } else if word.bytes().all(|b| b.is_ascii_digit()) && !word.is_empty() {
        if word.len() > 1 && word.starts_with('0') {
            if !word.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return Some(Err(
                    "is not a number: a leading 0 makes it octal, and octal has no 8 or 9",
                ));
            }
            (&word[1..], 8)
        } else {
            (word, 10)
        }
    } else {
        return None;
    };
    Some(u64::from_str_radix(digits, radix).map_err(|_| "is too large a number"))
}

fn section_label(kind: Kind, name: Option<&str>) -> String {
    let k = match kind {
        Kind::Interface => "interface",
        Kind::Device => "device",
    };
    match name {
        Some(n) => format!("{k} {n:?}"),
        None => k.to_string(),
    }
}

struct Parser<'a> {
    lex: Lexer<'a>,
    peeked: Option<Token<'a>>,
}

/// One section as it is read: the values and where each key was.
struct Section {
    kind: Kind,
    line: u32,
    column: u32,
    /// (canonical key, line, column) of every key given.
    seen: Vec<(&'static str, u32, u32)>,
    minor: Option<u8>,
    name: Option<String>,
    pad: Option<PrimaryAddress>,
    settings: Settings,
    board_type: Option<String>,
    master: bool,
    base: u64,
    irq: u32,
    dma: u32,
    pci_bus: Option<u32>,
    pci_slot: Option<u32>,
    sysfs_device_path: Option<String>,
    serial_number: Option<String>,
    init_string: Option<String>,
    autopoll: bool,
    init_flags: InitFlags,
}

impl Section {
    fn at(&self, key: &str) -> Option<(u32, u32)> {
        self.seen
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|&(_, l, c)| (l, c))
    }
}

impl<'a> Parser<'a> {
    fn next(&mut self) -> Result<Token<'a>, ParseError> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.lex.next_token(),
        }
    }

    fn peek(&mut self) -> Result<Token<'a>, ParseError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lex.next_token()?);
        }
        // Set just above.
        Ok(self.peeked.expect("peeked token"))
    }

    fn expect(
        &mut self,
        want: Tok<'static>,
        expected: &'static str,
        key: Option<&str>,
    ) -> Result<(), ParseError> {
        let t = self.next()?;
        if t.tok == want {
            Ok(())
        } else {
            Err(expected_error(t, expected, key))
        }
    }

    fn file(&mut self) -> Result<GpibConf, ParseError> {
        let mut sections: Vec<Section> = Vec::new();
        loop {
            let t = self.next()?;
            let kind = match t.tok {
                Tok::End => break,
                Tok::Word("interface") => Kind::Interface,
                Tok::Word("device") => Kind::Device,
                _ => return Err(expected_error(t, "`interface` or `device`", None)),
            };
            if sections.len() == MAX_SECTIONS {
                return Err(ParseError::new(
                    t.line,
                    t.column,
                    None,
                    Problem::TooManySections {
                        limit: MAX_SECTIONS,
                    },
                ));
            }
            sections.push(self.section(kind, t)?);
        }
        check(sections)
    }

    fn section(&mut self, kind: Kind, start: Token<'a>) -> Result<Section, ParseError> {
        self.expect(Tok::Open, "`{` after the section's keyword", None)?;
        let mut s = Section {
            kind,
            line: start.line,
            column: start.column,
            seen: Vec::new(),
            minor: None,
            name: None,
            pad: None,
            settings: Settings::default(),
            board_type: None,
            master: false,
            base: 0,
            irq: 0,
            dma: 0,
            pci_bus: None,
            pci_slot: None,
            sysfs_device_path: None,
            serial_number: None,
            init_string: None,
            autopoll: false,
            init_flags: InitFlags::default(),
        };
        if kind == Kind::Interface {
            let t = self.peek()?;
            if t.tok != Tok::Word("minor") {
                return Err(ParseError::new(
                    t.line,
                    t.column,
                    None,
                    Problem::MinorNotFirst(t.tok.describe()),
                ));
            }
        }
        loop {
            let t = self.next()?;
            let word = match t.tok {
                Tok::Close => return Ok(s),
                Tok::Word(w) => w,
                Tok::End => {
                    return Err(expected_error(
                        t,
                        "`}` to close the section (or another key)",
                        None,
                    ))
                }
                _ => return Err(expected_error(t, "a key or `}`", None)),
            };
            self.statement(&mut s, word, t)?;
        }
    }

    fn statement(
        &mut self,
        s: &mut Section,
        word: &'a str,
        at: Token<'a>,
    ) -> Result<(), ParseError> {
        let err = |problem| ParseError::new(at.line, at.column, Some(word), problem);
        let Some((key, home)) = key_home(word) else {
            return Err(err(match word {
                "LLO" | "DCL" | "EXCL" | "set-clear" => Problem::BadValue {
                    value: format!("`{word}`"),
                    reason: "is a value of `init-flags`, not a key (write `init-flags = DCL`)"
                        .into(),
                },
                _ => Problem::UnknownKey(word.to_string()),
            }));
        };
        if let Some(home) = home.filter(|&h| h != s.kind) {
            return Err(err(Problem::WrongSection {
                key: word.to_string(),
                belongs: home.article(),
                found: s.kind.article(),
            }));
        }
        if let Some((first_line, _)) = s.at(key) {
            return Err(err(Problem::DuplicateKey { first_line }));
        }
        s.seen.push((key, at.line, at.column));
        match key {
            "autopoll" => {
                s.autopoll = true;
                return Ok(());
            }
            // linux-gpib still takes these three without `=` (with a warning).
            "set-reos" | "set-bin" | "master" => {
                if self.peek()?.tok == Tok::Equals {
                    self.next()?;
                } else {
                    log::warn!(
                        "gpib.conf line {}: `{word}` without `=` before its value is deprecated",
                        at.line
                    );
                }
            }
            _ => self.expect(Tok::Equals, "`=` after the key", Some(word))?,
        }
        let st = &mut s.settings;
        match key {
            "minor" => {
                let why = "is out of range: board indices (minor) are 0..=15";
                s.minor = Some(self.number(word, u64::from(MAX_BOARDS - 1), why)?.0 as u8);
            }
            "pad" => {
                let (v, t) =
                    self.number(word, 255, "is out of range: primary addresses are 0..=30")?;
                let pad = PrimaryAddress::try_from(v as u8).map_err(|e| {
                    bad_value(
                        t,
                        word,
                        &v.to_string(),
                        format!("is out of range: {}", reason_of(&e)),
                    )
                })?;
                s.pad = Some(pad);
                st.pad = pad;
            }
            "sad" => {
                const WHY: &str = "is not a secondary address: gpib.conf writes 0x60 plus the address (0x60..=0x7e), or 0 for none";
                let (v, t) = self.number(word, 255, WHY)?;
                st.sad = match v {
                    0 => None,
                    0x60..=0x7e => Some(
                        SecondaryAddress::try_from(v as u8)
                            .map_err(|_| bad_value(t, word, &format!("{v:#x}"), WHY.into()))?,
                    ),
                    _ => return Err(bad_value(t, word, &format!("{v:#x}"), WHY.into())),
                };
            }
            "eos" => {
                st.eos_mut().byte = self
                    .number(word, 255, "is out of range: the EOS byte is 0..=255 (0xff)")?
                    .0 as u8;
            }
            "timeout" => {
                st.device.timeout = Timeout::from_linux_gpib_code(i32::from(self.timeout(word)?))
            }
            "set-reos" => st.eos_mut().reos = self.boolean(word)?,
            "set-bin" => st.eos_mut().bin = self.boolean(word)?,
            "set-xeos" => st.eos_mut().xeos = self.boolean(word)?,
            "set-eot" => st.device.eot = Some(self.boolean(word)?),
            "master" => s.master = self.boolean(word)?,
            "base" => s.base = self.number(word, u64::MAX, "")?.0,
            "irq" => {
                s.irq = self
                    .number(
                        word,
                        u64::from(u32::MAX),
                        "is out of range: at most 4294967295",
                    )?
                    .0 as u32
            }
            "dma" => {
                s.dma = self
                    .number(
                        word,
                        u64::from(u32::MAX),
                        "is out of range: at most 4294967295",
                    )?
                    .0 as u32
            }
            "pci_bus" => {
                s.pci_bus = Some(
                    self.number(word, i32::MAX as u64, "is out of range: at most 2147483647")?
                        .0 as u32,
                )
            }
            "pci_slot" => {
                s.pci_slot = Some(
                    self.number(word, i32::MAX as u64, "is out of range: at most 2147483647")?
                        .0 as u32,
                )
            }
            // Any string, as in linux-gpib: empty, or with line breaks.
            "name" => s.name = Some(self.string(word, MAX_NAME_BYTES)?.0.to_string()),
            "board_type" => s.board_type = Some(self.string(word, MAX_NAME_BYTES)?.0.to_string()),
            "sysfs_device_path" => {
                s.sysfs_device_path = Some(self.string(word, MAX_PATH_BYTES)?.0.to_string())
            }
            "serial_number" => {
                s.serial_number = Some(self.string(word, MAX_PATH_BYTES)?.0.to_string())
            }
            "init-string" => {
                log::warn!(
                    "gpib.conf line {}: `init-string` is deprecated in linux-gpib",
                    at.line
                );
                s.init_string = Some(self.string(word, MAX_INIT_STRING_BYTES)?.0.to_string());
            }
            "init-flags" => {
                log::warn!(
                    "gpib.conf line {}: `init-flags` is deprecated in linux-gpib",
                    at.line
                );
                loop {
                    match self.peek()?.tok {
                        Tok::Comma => {}
                        Tok::Word("LLO") => s.init_flags.local_lockout = true,
                        Tok::Word("DCL" | "set-clear") => s.init_flags.clear = true,
                        Tok::Word("EXCL") => s.init_flags.exclusive = true,
                        _ => break,
                    }
                    self.next()?;
                }
            }
            _ => unreachable!("every key of key_home is handled: {key}"),
        }
        Ok(())
    }

    /// A number at most `max`; `why` says what the range is when it is exceeded.
    fn number(&mut self, key: &str, max: u64, why: &str) -> Result<(u64, Token<'a>), ParseError> {
        let t = self.next()?;
        let Tok::Word(w) = t.tok else {
            return Err(expected_error(t, "a number", Some(key)));
        };
        match number_value(w) {
            None => Err(expected_error(
                t,
                "a number (decimal, 0x hex, or 0 octal)",
                Some(key),
            )),
            Some(Err(why)) => Err(bad_value(t, key, w, why.into())),
            Some(Ok(v)) if v > max => Err(bad_value(t, key, w, why.into())),
            Some(Ok(v)) => Ok((v, t)),
        }
    }

    fn boolean(&mut self, key: &str) -> Result<bool, ParseError> {
        let t = self.next()?;
        match t.tok {
            Tok::Word("yes") => Ok(true),
            Tok::Word("no") => Ok(false),
            _ => Err(expected_error(t, "`yes` or `no`", Some(key))),
        }
    }

    fn timeout(&mut self, key: &str) -> Result<u8, ParseError> {
        let t = self.next()?;
        let Tok::Word(w) = t.tok else {
            return Err(expected_error(
                t,
                "a timeout (T3s, 3s, or a step 0..=17)",
                Some(key),
            ));
        };
        if let Some(i) = TIMEOUT_NAMES.iter().position(|n| *n == w) {
            return Ok(i as u8);
        }
        if let Some(i) = TIMEOUT_WORDS.iter().position(|n| *n == w) {
            return Ok(i as u8);
        }
        match number_value(w) {
            Some(Ok(v)) if v < TIMEOUTS.len() as u64 => Ok(v as u8),
            Some(Ok(_)) => Err(bad_value(t, key, w, "is out of range: timeout steps are 0 (TNONE) to 17 (T1000s)".into())),
            Some(Err(why)) => Err(bad_value(t, key, w, why.into())),
            None => Err(bad_value(
                t,
                key,
                &format!("`{w}`"),
                "is not a timeout: write TNONE, T10us, T30us, ... T1000s, the same without the T (none, 10us, ... 1000s), or a step 0..=17".into(),
            )),
        }
    }

    /// A quoted string, or a bare word that linux-gpib takes as one.
    fn string(&mut self, key: &str, max: usize) -> Result<(&'a str, Token<'a>), ParseError> {
        let t = self.next()?;
        let v = match t.tok {
            Tok::Str(s) => s,
            Tok::Word(w)
                if number_value(w).is_some()
                    || RESERVED.contains(&w)
                    || TIMEOUT_NAMES.contains(&w)
                    || TIMEOUT_WORDS.contains(&w) =>
            {
                return Err(bad_value(
                    t,
                    key,
                    &format!("`{w}`"),
                    "is a number or a reserved word of gpib.conf: write it in double quotes".into(),
                ))
            }
            Tok::Word(w) => w,
            _ => return Err(expected_error(t, "a string", Some(key))),
        };
        if v.len() > max {
            return Err(bad_value(
                t,
                key,
                &format!("the string of {} bytes", v.len()),
                format!("is too long: at most {max} bytes"),
            ));
        }
        Ok((v, t))
    }
}

fn reason_of(e: &crate::error::Error) -> String {
    match e {
        crate::error::Error::InvalidAddress { reason, .. } => (*reason).to_string(),
        other => other.to_string(),
    }
}

fn expected_error(t: Token<'_>, expected: &'static str, key: Option<&str>) -> ParseError {
    ParseError::new(
        t.line,
        t.column,
        key,
        Problem::Expected {
            expected,
            found: t.tok.describe(),
        },
    )
}

fn bad_value(t: Token<'_>, key: &str, value: &str, reason: String) -> ParseError {
    ParseError::new(
        t.line,
        t.column,
        Some(key),
        Problem::BadValue {
            value: value.to_string(),
            reason,
        },
    )
}

/// Checks the sections against each other and types them.
fn check(sections: Vec<Section>) -> Result<GpibConf, ParseError> {
    let mut conf = GpibConf::default();
    // Where each device's `minor` is, to check once every interface is known.
    let mut device_minors: Vec<(u8, u32, u32)> = Vec::new();
    let mut names: Vec<(String, u32)> = Vec::new();
    for s in &sections {
        // Empty names (`name = ""`) name nothing a program would look up: not checked.
        if let Some(name) = s.name.as_ref().filter(|n| !n.is_empty()) {
            let (line, column) = s.at("name").unwrap_or((s.line, s.column));
            if let Some((_, first_line)) = names.iter().find(|(n, _)| n == name) {
                return Err(ParseError::new(
                    line,
                    column,
                    Some("name"),
                    Problem::DuplicateName {
                        name: name.clone(),
                        first_line: *first_line,
                    },
                ));
            }
            names.push((name.clone(), line));
        }
    }
    for s in sections {
        let label = section_label(s.kind, s.name.as_deref());
        let missing = |key: &'static str, why: &'static str| {
            ParseError::new(
                s.line,
                s.column,
                Some(key),
                Problem::MissingKey {
                    section: label.clone(),
                    key,
                    why,
                },
            )
        };
        // Interfaces always have one (the parser asks for it first).
        let minor = s
            .minor
            .ok_or_else(|| missing("minor", "the board it is on"))?;
        match s.kind {
            Kind::Interface => {
                if let Some(first) = conf.interfaces.iter().find(|i| i.minor == minor) {
                    let (line, column) = s.at("minor").unwrap_or((s.line, s.column));
                    return Err(ParseError::new(
                        line,
                        column,
                        Some("minor"),
                        Problem::DuplicateMinor {
                            minor,
                            first_line: first.line,
                        },
                    ));
                }
                conf.interfaces.push(Interface {
                    line: s.line,
                    minor,
                    name: s.name,
                    board_type: s.board_type,
                    settings: s.settings,
                    master: s.master,
                    base: s.base,
                    irq: s.irq,
                    dma: s.dma,
                    pci_bus: s.pci_bus,
                    pci_slot: s.pci_slot,
                    sysfs_device_path: s.sysfs_device_path,
                    serial_number: s.serial_number,
                });
            }
            Kind::Device => {
                let Some(name) = s.name.clone() else {
                    return Err(missing("name", "what ibfind opens it by"));
                };
                if s.pad.is_none() {
                    return Err(missing("pad", "its primary address"));
                }
                let (line, column) = s.at("minor").unwrap_or((s.line, s.column));
                device_minors.push((minor, line, column));
                conf.devices.push(Device {
                    line: s.line,
                    minor,
                    name,
                    settings: s.settings,
                    init_string: s.init_string,
                    autopoll: s.autopoll,
                    init_flags: s.init_flags,
                });
            }
        }
    }
    // A device whose board has no interface section cannot be opened (linux-gpib
    // fails that device alone): kept apart, with why.
    let devices = std::mem::take(&mut conf.devices);
    for (device, (minor, line, column)) in devices.into_iter().zip(device_minors) {
        if conf.interface(minor).is_none() {
            let error =
                ParseError::new(line, column, Some("minor"), Problem::NoInterface { minor });
            conf.unusable.push(UnusableDevice { device, error });
        } else {
            conf.devices.push(device);
        }
    }
    Ok(conf)
}

/// Parses gpib.conf text (at most [`super::MAX_GPIB_CONF_BYTES`]).
pub(super) fn parse(text: &str) -> Result<GpibConf, ParseError> {
    if text.len() as u64 > super::MAX_GPIB_CONF_BYTES {
        return Err(ParseError::new(
            0,
            0,
            None,
            Problem::TooLarge {
                limit: super::MAX_GPIB_CONF_BYTES,
            },
        ));
    }
    let mut p = Parser {
        lex: Lexer::new(text),
        peeked: None,
    };
    p.file().map_err(|e| {
        // The file ended early because a comment ran to its end: say so.
        let at_end =
            matches!(&e.problem, Problem::Expected { found, .. } if *found == Tok::End.describe());
        match p.lex.open_comment() {
            Some((line, column)) if at_end => {
                ParseError::new(line, column, None, Problem::UnterminatedComment)
            }
            _ => e,
        }
    })
}
