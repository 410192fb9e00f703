//! Values as pyvisa-sim holds them: Python `str`, `int` and `float`, with Python's
//! conversions (`int()`, `float()`, `str()`), which decide what a setter stores and
//! what a getter answers.

use std::cmp::Ordering;

use super::digits::to_ascii_digits;

/// A property's value: what Python would hold.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PyValue {
    /// A `str`.
    Str(String),
    /// An `int` (Python's are unbounded; these are checked 128-bit numbers).
    Int(i128),
    /// A `float`.
    Float(f64),
}

/// The `type` of a property's `specs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PyType {
    Int,
    Float,
    Str,
}

impl PyType {
    /// The type named in a file (`int`, `float`, `str`).
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        match name {
            "int" => Some(Self::Int),
            "float" => Some(Self::Float),
            "str" => Some(Self::Str),
            _ => None,
        }
    }

    /// `int(v)`, `float(v)` or `str(v)`; `None` where Python raises `ValueError` (or
    /// `OverflowError`, or the number does not fit 128 bits).
    pub(crate) fn convert(self, v: &PyValue) -> Option<PyValue> {
        match self {
            Self::Int => match v {
                PyValue::Int(i) => Some(PyValue::Int(*i)),
                PyValue::Float(f) => float_to_int(*f).map(PyValue::Int),
                PyValue::Str(s) => parse_int(s, 10).map(PyValue::Int),
            },
            Self::Float => match v {
                PyValue::Int(i) => Some(PyValue::Float(*i as f64)),
                PyValue::Float(f) => Some(PyValue::Float(*f)),
                PyValue::Str(s) => parse_float(s).map(PyValue::Float),
            },
            Self::Str => Some(PyValue::Str(v.to_py_str())),
        }
    }
}

impl PyValue {
    /// `str(v)`.
    pub(crate) fn to_py_str(&self) -> String {
        match self {
            Self::Str(s) => s.clone(),
            Self::Int(i) => i.to_string(),
            Self::Float(f) => float_repr(*f),
        }
    }

    /// Python's `<` and `>` between values of one type (`None` across types, and for
    /// NaN).
    pub(crate) fn py_cmp(&self, other: &Self) -> Option<Ordering> {
        match (self, other) {
            (Self::Int(a), Self::Int(b)) => Some(a.cmp(b)),
            (Self::Float(a), Self::Float(b)) => a.partial_cmp(b),
            (Self::Int(a), Self::Float(b)) => (*a as f64).partial_cmp(b),
            (Self::Float(a), Self::Int(b)) => a.partial_cmp(&(*b as f64)),
            (Self::Str(a), Self::Str(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }

    /// The Python type name, for messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Self::Str(_) => "str",
            Self::Int(_) => "int",
            Self::Float(_) => "float",
        }
    }
}

/// `int(f)`: truncation toward zero; NaN, infinities and numbers past 128 bits fail.
fn float_to_int(f: f64) -> Option<i128> {
    if !f.is_finite() {
        return None;
    }
    let t = f.trunc();
    // ±2^127 are exactly representable; i128 holds [-2^127, 2^127).
    const LIMIT: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if !(-LIMIT..LIMIT).contains(&t) {
        return None;
    }
    Some(t as i128)
}

/// Python's `str.strip()` white space.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Removes the underscores Python allows between digits (PEP 515); `None` when one
/// stands elsewhere.
fn without_underscores(s: &str, is_digit: impl Fn(char) -> bool) -> Option<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            let before = i > 0 && is_digit(chars[i - 1]);
            let after = chars.get(i + 1).is_some_and(|&n| is_digit(n));
            if !(before && after) {
                return None;
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// `int(s, radix)` for radix 2, 8, 10 or 16: any Unicode decimal digit read as its
/// ASCII digit, white space around, a sign, the base's
/// prefix (`0x`, `0o`, `0b`; not for 10), digits with single underscores between.
pub(crate) fn parse_int(s: &str, radix: u32) -> Option<i128> {
    let s = to_ascii_digits(s);
    let t = s.trim_matches(is_py_space);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let prefix = match radix {
        16 => Some(["0x", "0X"]),
        8 => Some(["0o", "0O"]),
        2 => Some(["0b", "0B"]),
        _ => None,
    };
    let mut t = t;
    if let Some(p) = prefix {
        if let Some(rest) = p.iter().find_map(|p| t.strip_prefix(p)) {
            // `int("0x_1f", 16)` is allowed: an underscore may follow the prefix.
            t = rest.strip_prefix('_').unwrap_or(rest);
        }
    }
    if t.is_empty() || !t.chars().all(|c| c == '_' || c.is_digit(radix)) {
        return None;
    }
    let digits = without_underscores(t, |c| c.is_digit(radix))?;
    let mag = u128::from_str_radix(&digits, radix).ok()?;
    if neg {
        0i128.checked_sub_unsigned(mag)
    } else {
        i128::try_from(mag).ok()
    }
}

/// `float(s)`: any Unicode decimal digit read as its ASCII digit, white space around, a sign, decimal digits with an optional point and
/// exponent, or `inf`, `infinity`, `nan` in any case; single underscores between
/// digits.
pub(crate) fn parse_float(s: &str) -> Option<f64> {
    let s = to_ascii_digits(s);
    let t = s.trim_matches(is_py_space);
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let word = body.to_ascii_lowercase();
    if matches!(word.as_str(), "inf" | "infinity" | "nan") {
        let v = if word == "nan" {
            f64::NAN
        } else {
            f64::INFINITY
        };
        return Some(if t.starts_with('-') { -v } else { v });
    }
    if !body
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-' | '_'))
        || !body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
    {
        return None;
    }
    let clean = without_underscores(t, |c| c.is_ascii_digit())?;
    clean.parse::<f64>().ok()
}

/// The shortest digits that give `v` back, and the exponent of the first one:
/// `v = d.ddd × 10^exp`.
pub(crate) fn shortest_digits(v: f64) -> (String, i32) {
    let s = format!("{:e}", v.abs());
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    (m.replace('.', ""), e.parse().unwrap_or(0))
}

/// Python's exponent suffix: `e+05`, `e-12`, `e+100`.
pub(crate) fn exp_suffix(exp: i32, upper: bool) -> String {
    format!(
        "{}{}{:02}",
        if upper { 'E' } else { 'e' },
        if exp < 0 { '-' } else { '+' },
        exp.unsigned_abs()
    )
}

/// `repr(v)` (= `str(v)`): the shortest digits that read back as `v`, in fixed
/// notation for 1e-4 <= |v| < 1e16 (with at least one digit after the point), else
/// in exponent notation.
pub(crate) fn float_repr(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.into();
    }
    let sign = if v.is_sign_negative() { "-" } else { "" };
    let (digits, exp) = shortest_digits(v);
    let decpt = exp + 1;
    let body = if v == 0.0 {
        "0.0".to_string()
    } else if (-3..=16).contains(&decpt) {
        let n = digits.len() as i32;
        if decpt <= 0 {
            format!("0.{}{}", "0".repeat((-decpt) as usize), digits)
        } else if decpt >= n {
            format!("{}{}.0", digits, "0".repeat((decpt - n) as usize))
        } else {
            let (a, b) = digits.split_at(decpt as usize);
            format!("{a}.{b}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        format!("{first}{dot}{}", exp_suffix(exp, false))
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_matches_python() {
        // Each right-hand side is what CPython 3.11 prints for repr() of the left.
        for (v, want) in [
            (1.0, "1.0"),
            (100.0, "100.0"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (-0.0, "-0.0"),
            (1.5e300, "1.5e+300"),
        ] {
            assert_eq!(float_repr(v), want, "{v:e}");
        }
        assert_eq!(float_repr(f64::NAN), "nan");
        assert_eq!(float_repr(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn int_and_float_parse_like_python() {
        assert_eq!(parse_int(" 12 ", 10), Some(12));
        assert_eq!(parse_int("-0012", 10), Some(-12));
        assert_eq!(parse_int("1_000", 10), Some(1000));
        assert_eq!(parse_int("1__0", 10), None);
        assert_eq!(parse_int("1.0", 10), None);
        assert_eq!(parse_int("-0x1f", 16), Some(-31));
        assert_eq!(parse_int("ff", 16), Some(255));
        assert_eq!(parse_int("0x", 16), None);
        assert_eq!(
            parse_int("99999999999999999999999999999999999999999", 10),
            None
        );
        assert_eq!(parse_float(" 2.50 "), Some(2.5));
        assert_eq!(parse_float("1e3"), Some(1000.0));
        assert_eq!(parse_float(".5"), Some(0.5));
        assert_eq!(parse_float("1_0.5"), Some(10.5));
        assert_eq!(parse_float("-Infinity"), Some(f64::NEG_INFINITY));
        assert!(parse_float("nan").is_some_and(f64::is_nan));
        assert_eq!(parse_float("1,5"), None);
        assert_eq!(parse_float("abc"), None);
        assert_eq!(parse_float(""), None);
    }

    #[test]
    fn conversions_follow_python() {
        let f = PyValue::Float(2.9);
        assert_eq!(PyType::Int.convert(&f), Some(PyValue::Int(2)));
        assert_eq!(
            PyType::Int.convert(&PyValue::Float(-2.9)),
            Some(PyValue::Int(-2))
        );
        assert_eq!(PyType::Int.convert(&PyValue::Float(f64::NAN)), None);
        assert_eq!(PyType::Int.convert(&PyValue::Str("2.9".into())), None);
        assert_eq!(
            PyType::Float.convert(&PyValue::Int(3)),
            Some(PyValue::Float(3.0))
        );
        assert_eq!(PyType::Str.convert(&f), Some(PyValue::Str("2.9".into())));
    }
}
