//! Setter queries parsed the way pyvisa-sim parses them, with the `stringparser`
//! package: the template (`"!FREQ {:.2f}"`) becomes a regular expression anchored at
//! both ends, each field a group whose pattern and conversion its type decides
//! (`{:d}` digits and `int`, `{:f}` `[0-9]+\.?[0-9]+` and `float`, `{}` or `{:s}` any
//! text), and width, fill and precision play no part.
//!
//! A template holds at most [`MAX_SETTER_FIELDS`] fields (pyvisa-sim's own files use
//! one or two: the value and a channel's `{ch_id}`), refused when the file is loaded:
//! each field is a repetition the matcher carries along every byte of a write (the
//! `regex` crate's matching never backtracks: its time is the write's length times
//! the pattern's states), so with the bound a write of
//! [`MAX_INPUT`](super::MAX_INPUT) bytes is matched in a few milliseconds per setter
//! while the simulator is locked, whatever the file says.

use regex::bytes::Regex;

/// Python's `.*?` (any characters but a newline, as few as can be): one byte class,
/// so that each field costs the matcher one state, not the dozen of a UTF-8 `.`.
/// The text matched is UTF-8 (a query is), and every other part of a template
/// starts on a character boundary, so fields do too.
const ANY: &str = r"(?-u:[^\n])*?";

use super::format::{parse_template, FormatError, Piece};
use super::value::{parse_float, parse_int, PyValue};

/// How a field's text becomes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Convert {
    Str,
    Int(u32),
    Float,
    Percent,
}

/// What one setter query holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Parsed {
    /// The value field, converted (`None` where Python's conversion would fail or
    /// the number does not fit 128 bits).
    pub value: Option<PyValue>,
    /// The `{ch_id}` field's text, when the template has one.
    pub ch_id: Option<String>,
}

/// Most fields (value, `{ch_id}` and ignored `{_}` fields) one setter template may hold.
pub const MAX_SETTER_FIELDS: usize = 8;

/// A compiled setter template.
#[derive(Debug, Clone)]
pub(crate) struct SetterPattern {
    regex: Regex,
    /// The value field's conversion, and where the `{ch_id}` group is (1 or 2).
    value: Convert,
    value_group: usize,
    ch_id_group: Option<usize>,
}

/// The part of stringparser's format-spec regex that decides a field's type: the
/// optional `[[fill]align][sign][#][0][width][,][.precision]`, then a run of type
/// letters. Returns (sign, alternate, type letters).
fn spec_type(fmt: &str) -> (Option<char>, bool, String) {
    let c: Vec<char> = fmt.chars().collect();
    let mut p = 0;
    let is_align = |ch: char| matches!(ch, '<' | '>' | '=' | '^');
    if c.len() >= 2 && !matches!(c[0], '{' | '}') && is_align(c[1]) {
        p = 2;
    } else if !c.is_empty() && is_align(c[0]) {
        p = 1;
    }
    let mut sign = None;
    if p < c.len() && matches!(c[p], '+' | '-' | ' ') {
        sign = Some(c[p]);
        p += 1;
    }
    let mut alternate = false;
    if p < c.len() && c[p] == '#' {
        alternate = true;
        p += 1;
    }
    if p < c.len() && c[p] == '0' {
        p += 1;
    }
    while p < c.len() && c[p].is_ascii_digit() {
        p += 1;
    }
    if p < c.len() && c[p] == ',' {
        p += 1;
    }
    if p + 1 < c.len() && c[p] == '.' && c[p + 1].is_ascii_digit() {
        p += 1;
        while p < c.len() && c[p].is_ascii_digit() {
            p += 1;
        }
    }
    let ty: String = c[p..]
        .iter()
        .take_while(|ch| "bcdeEfFgGnosxX%".contains(**ch))
        .collect();
    (sign, alternate, ty)
}

/// A field's regular expression and conversion, as stringparser builds them.
fn field_regex(fmt: &str) -> Result<(String, Convert), FormatError> {
    if fmt.is_empty() {
        return Ok((ANY.into(), Convert::Str));
    }
    let (sign, alternate, ty) = spec_type(fmt);
    let (reg, conv) = match ty.as_str() {
        "" | "s" => (ANY, Convert::Str),
        "d" => ("[0-9]+?", Convert::Int(10)),
        "b" => ("[0-1]+?", Convert::Int(2)),
        "o" => ("[0-7]+?", Convert::Int(8)),
        "x" => ("[0-9a-f]+?", Convert::Int(16)),
        "X" => ("[0-9A-F]+?", Convert::Int(16)),
        "e" => (r"[0-9]+\.?[0-9]+(?:e[-+]?[0-9]+)?", Convert::Float),
        "E" => (r"[0-9]+\.?[0-9]+(?:E[-+]?[0-9]+)?", Convert::Float),
        "f" | "F" => (r"[0-9]+\.?[0-9]+", Convert::Float),
        "g" | "G" => (r"[0-9]+\.?[0-9]+(?:[eE][-+]?[0-9]+)?", Convert::Float),
        "%" => (r"[0-9]+\.?[0-9]+%", Convert::Percent),
        other => {
            return Err(FormatError(format!(
                "{other} is not a valid type for a setter field"
            )))
        }
    };
    let mut reg = reg.to_string();
    if alternate {
        if matches!(ty.as_str(), "o" | "x" | "X" | "b") {
            reg = format!("0{ty}{reg}");
        } else {
            return Err(FormatError(format!(
                "Alternate form (#) not allowed in {} type",
                if ty.is_empty() { "None" } else { &ty }
            )));
        }
    }
    let reg = match sign {
        Some('+') => format!("[-+]{reg}"),
        Some(' ') => format!("[- ]{reg}"),
        _ => format!("[-]?{reg}"),
    };
    Ok((reg, conv))
}

impl SetterPattern {
    /// Compiles a setter template. It must hold exactly one value field (`{}`, `{0}`
    /// or `{:spec}`); with `channel`, also at most one `{ch_id}` field (without a
    /// spec). Fields named `_` match and are dropped, as in stringparser.
    pub(crate) fn compile(template: &str, channel: bool) -> Result<Self, FormatError> {
        let mut pattern = String::from("^");
        let mut value: Option<(Convert, usize)> = None;
        let mut ch_id_group = None;
        let mut groups = 0;
        let pieces = parse_template(template)?;
        let fields = pieces
            .iter()
            .filter(|p| matches!(p, Piece::Field(_)))
            .count();
        if fields > MAX_SETTER_FIELDS {
            return Err(FormatError(format!(
                "the template holds {fields} fields, more than the {MAX_SETTER_FIELDS} fields a setter may hold"
            )));
        }
        for piece in pieces {
            match piece {
                Piece::Text(t) => pattern.push_str(&regex::escape(&t)),
                Piece::Field(f) => {
                    let (reg, conv) = field_regex(&f.spec)?;
                    match f.name.as_str() {
                        "_" => {
                            pattern.push_str(&format!("(?:{reg})"));
                            continue;
                        }
                        "" | "0" if value.is_none() => {
                            groups += 1;
                            value = Some((conv, groups));
                        }
                        "ch_id" if channel && ch_id_group.is_none() && f.spec.is_empty() => {
                            groups += 1;
                            ch_id_group = Some(groups);
                        }
                        "ch_id" if channel => {
                            return Err(FormatError(
                                "a channel setter takes one {ch_id} field, without a format spec"
                                    .into(),
                            ))
                        }
                        other => {
                            return Err(FormatError(format!(
                                "field {{{other}}}: a setter takes one value field ({{}} or {{:spec}}){}",
                                if channel { " and may hold {ch_id}" } else { "" }
                            )))
                        }
                    }
                    pattern.push_str(&format!("({reg})"));
                }
            }
        }
        let Some((conv, value_group)) = value else {
            return Err(FormatError(
                "a setter needs a value field ({} or {:spec})".into(),
            ));
        };
        // Python's `$` also matches before a final newline.
        pattern.push_str(r"\n?\z");
        let regex = Regex::new(&pattern).map_err(|e| FormatError(e.to_string()))?;
        Ok(Self {
            regex,
            value: conv,
            value_group,
            ch_id_group,
        })
    }

    /// Parses `text`; `None` when it does not match (stringparser's `ValueError`).
    pub(crate) fn parse(&self, text: &str) -> Option<Parsed> {
        let caps = self.regex.captures(text.as_bytes())?;
        // On a character boundary (see ANY); were one not, the query would not match.
        let text_of =
            |i: usize| std::str::from_utf8(caps.get(i).map_or(&b""[..], |m| m.as_bytes()));
        let (Ok(raw), Ok(ch_id)) = (
            text_of(self.value_group),
            self.ch_id_group.map(text_of).transpose(),
        ) else {
            return None;
        };
        let value = match self.value {
            Convert::Str => Some(PyValue::Str(raw.to_string())),
            Convert::Int(radix) => parse_int(raw, radix).map(PyValue::Int),
            Convert::Float => parse_float(raw).map(PyValue::Float),
            Convert::Percent => raw
                .strip_suffix('%')
                .and_then(parse_float)
                .map(|v| PyValue::Float(v / 100.0)),
        };
        Some(Parsed {
            value,
            ch_id: ch_id.map(str::to_string),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(t: &str, text: &str) -> Option<Option<PyValue>> {
        SetterPattern::compile(t, false)
            .unwrap()
            .parse(text)
            .map(|p| p.value)
    }

    #[test]
    fn fields_match_as_stringparser_does() {
        use PyValue::*;
        assert_eq!(value("!FREQ {:.2f}", "!FREQ 10.3"), Some(Some(Float(10.3))));
        // `[0-9]+\.?[0-9]+` wants two digits: a lone digit is not a float here.
        assert_eq!(value("!FREQ {:.2f}", "!FREQ 5"), None);
        assert_eq!(value("!FREQ {:.2f}", "!FREQ 50"), Some(Some(Float(50.0))));
        assert_eq!(value("!FREQ {:.2f}", "!FREQ -1.5"), Some(Some(Float(-1.5))));
        assert_eq!(value("!FREQ {:.2f}", "!FREQ +1.5"), None);
        assert_eq!(value("V {:+.2f}", "V +1.5"), Some(Some(Float(1.5))));
        assert_eq!(value("V {:e}", "V 1.5e3"), Some(Some(Float(1500.0))));
        assert_eq!(value("!OUT {:d}", "!OUT 1"), Some(Some(Int(1))));
        assert_eq!(value("!OUT {:d}", "!OUT 1.0"), None);
        assert_eq!(value("!OUT {:5d}", "!OUT -12"), Some(Some(Int(-12))));
        assert_eq!(value("R {:x}", "R ff"), Some(Some(Int(255))));
        assert_eq!(value("R {:#x}", "R 0x1f"), Some(Some(Int(31))));
        assert_eq!(value("P {:%}", "P 12.5%"), Some(Some(Float(0.125))));
        assert_eq!(
            value("INST {:s}", "INST P6V"),
            Some(Some(Str("P6V".into())))
        );
        assert_eq!(value("I {}", "I "), Some(Some(Str(String::new()))));
        assert_eq!(value("I {}", "I a\n"), Some(Some(Str("a".into()))));
        assert_eq!(value("I {}", "I a\nb"), None);
        // Literal text is matched as written, braces included.
        assert_eq!(value("{{x}} {:d}", "{x} 3"), Some(Some(Int(3))));
        assert_eq!(value("A.B {:d}", "AxB 3"), None);
        // `{:_d}` is no type stringparser knows before `_`: it reads as text.
        assert_eq!(value("N {:_d}", "N abc"), Some(Some(Str("abc".into()))));
        // Ignored fields match but give nothing.
        assert_eq!(value("{_} {:d}", "anything 3"), Some(Some(Int(3))));
        // Numbers past 128 bits match but do not convert.
        assert_eq!(
            value("N {:d}", &format!("N {}", "9".repeat(50))),
            Some(None)
        );
    }

    #[test]
    fn channel_fields() {
        let p = SetterPattern::compile("CH {ch_id}:VOLT {:.3f}", true).unwrap();
        let got = p.parse("CH 2:VOLT 1.50").unwrap();
        assert_eq!(got.ch_id.as_deref(), Some("2"));
        assert_eq!(got.value, Some(PyValue::Float(1.5)));
        assert!(p.parse("CH 2:VOLT?").is_none());
    }

    #[test]
    fn templates_pyvisa_sim_cannot_use_are_refused() {
        for bad in [
            "X {} {}",
            "X",
            "X {name}",
            "X {ch_id} {}",
            "X {:c}",
            "X {:#d}",
            "X {:ff}",
        ] {
            assert!(SetterPattern::compile(bad, false).is_err(), "{bad:?}");
        }
        assert!(SetterPattern::compile("X {ch_id:d} {}", true).is_err());
    }
}
