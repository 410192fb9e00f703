//! Python format strings as pyvisa-sim uses them: `str.format` for getter answers
//! (`"{:.2f}"`, `"{:+.8E}"`, `"{:d}"`, `"{}"`) and channel queries (`"CH {ch_id}:VOLT?"`).
//!
//! [`parse_template`] splits a template the way Python's `string.Formatter.parse`
//! does; [`Spec`] is the format-spec mini-language (`[[fill]align][sign][z][#][0]
//! [width][grouping][.precision][type]`) and [`Spec::format`] formats a value with it,
//! byte for byte as CPython 3.11 does. What Python would raise at run time
//! (`"{:d}"` on a `str`) is a [`FormatError`].

use super::value::{exp_suffix, float_repr, PyValue};

/// The widest field and the longest precision a template may ask for. (Python has
/// no such limit; it keeps an answer's size bounded.)
pub const MAX_WIDTH: usize = 4096;

/// Why a template or a value could not be formatted (Python's `ValueError`,
/// `IndexError` or `KeyError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FormatError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError(msg.into()))
}

/// One replacement field: `{name!conv:spec}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    /// The field name as written (`""` for `{}`).
    pub name: String,
    /// The conversion (`s`, `r`, `a`), if any.
    pub conversion: Option<char>,
    /// The format spec text after `:` (empty when there is none).
    pub spec: String,
}

/// A piece of a template: text, or a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    Field(Field),
}

/// Splits a template as `string.Formatter().parse` does: `{{` and `}}` are braces,
/// `{...}` a field. Nested fields (`{:{}}`) are refused.
pub(crate) fn parse_template(s: &str) -> Result<Vec<Piece>, FormatError> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '{' if it.peek() == Some(&'{') => {
                it.next();
                text.push('{');
            }
            '}' if it.peek() == Some(&'}') => {
                it.next();
                text.push('}');
            }
            '}' => return err("Single '}' encountered in format string"),
            '{' => {
                let mut inner = String::new();
                loop {
                    match it.next() {
                        None => return err("expected '}' before end of string"),
                        Some('}') => break,
                        Some('{') => return err("nested replacement fields are not supported"),
                        Some(c) => inner.push(c),
                    }
                }
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(Piece::Field(parse_field(&inner)?));
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

fn parse_field(inner: &str) -> Result<Field, FormatError> {
    let end = inner.find([':', '!']).unwrap_or(inner.len());
    let name = inner[..end].to_string();
    let mut rest = &inner[end..];
    let mut conversion = None;
    if let Some(r) = rest.strip_prefix('!') {
        let mut cs = r.chars();
        let c = cs.next().ok_or_else(|| {
            FormatError("end of string while looking for conversion specifier".into())
        })?;
        let after = cs.as_str();
        if !(after.is_empty() || after.starts_with(':')) {
            return err("expected ':' after conversion specifier");
        }
        conversion = Some(c);
        rest = after;
    }
    let spec = rest.strip_prefix(':').unwrap_or(rest).to_string();
    Ok(Field {
        name,
        conversion,
        spec,
    })
}

/// A parsed format spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    fill: char,
    fill_given: bool,
    align: Option<char>,
    sign: Option<char>,
    z: bool,
    alternate: bool,
    zero: bool,
    width: usize,
    grouping: Option<char>,
    precision: Option<usize>,
    ty: Option<char>,
}

impl Spec {
    /// Parses the text after `:` in a field, as CPython does; widths and precisions
    /// over [`MAX_WIDTH`] are refused.
    pub fn parse(s: &str) -> Result<Self, FormatError> {
        let c: Vec<char> = s.chars().collect();
        let mut p = 0;
        let mut spec = Spec {
            fill: ' ',
            fill_given: false,
            align: None,
            sign: None,
            z: false,
            alternate: false,
            zero: false,
            width: 0,
            grouping: None,
            precision: None,
            ty: None,
        };
        let is_align = |ch: char| matches!(ch, '<' | '>' | '=' | '^');
        if c.len() >= 2 && is_align(c[1]) {
            spec.fill = c[0];
            spec.fill_given = true;
            spec.align = Some(c[1]);
            p = 2;
        } else if !c.is_empty() && is_align(c[0]) {
            spec.align = Some(c[0]);
            p = 1;
        }
        if p < c.len() && matches!(c[p], '+' | '-' | ' ') {
            spec.sign = Some(c[p]);
            p += 1;
        }
        if p < c.len() && c[p] == 'z' {
            spec.z = true;
            p += 1;
        }
        if p < c.len() && c[p] == '#' {
            spec.alternate = true;
            p += 1;
        }
        if p < c.len() && c[p] == '0' {
            spec.zero = true;
            p += 1;
        }
        let digits = |p: &mut usize| -> Result<Option<usize>, FormatError> {
            let start = *p;
            while *p < c.len() && c[*p].is_ascii_digit() {
                *p += 1;
            }
            if *p == start {
                return Ok(None);
            }
            let t: String = c[start..*p].iter().collect();
            match t.parse::<usize>() {
                Ok(n) if n <= MAX_WIDTH => Ok(Some(n)),
                _ => err(format!("width or precision {t} is over {MAX_WIDTH}")),
            }
        };
        spec.width = digits(&mut p)?.unwrap_or(0);
        if p < c.len() && matches!(c[p], ',' | '_') {
            spec.grouping = Some(c[p]);
            p += 1;
            if p < c.len() && matches!(c[p], ',' | '_') {
                return err("Cannot specify both ',' and '_'.");
            }
        }
        if p < c.len() && c[p] == '.' {
            p += 1;
            spec.precision = digits(&mut p)?;
            if spec.precision.is_none() {
                return err("Format specifier missing precision");
            }
        }
        match c.len() - p {
            0 => {}
            1 => spec.ty = Some(c[p]),
            _ => return err("Invalid format specifier"),
        }
        Ok(spec)
    }

    /// `format(v, spec)` as CPython 3.11 does it.
    pub(crate) fn format(&self, v: &PyValue) -> Result<String, FormatError> {
        match v {
            PyValue::Str(s) => self.format_str(s),
            PyValue::Int(i) => match self.ty {
                Some('e' | 'E' | 'f' | 'F' | 'g' | 'G' | '%') => self.format_float(*i as f64),
                _ => self.format_int(*i),
            },
            PyValue::Float(f) => self.format_float(*f),
        }
    }

    fn format_str(&self, s: &str) -> Result<String, FormatError> {
        if !matches!(self.ty, None | Some('s')) {
            return err(format!(
                "Unknown format code '{}' for object of type 'str'",
                self.ty.unwrap_or('s')
            ));
        }
        if self.sign.is_some() {
            return err("Sign not allowed in string format specifier");
        }
        if self.alternate {
            return err("Alternate form (#) not allowed in string format specifier");
        }
        if self.z {
            return err("Negative zero coercion (z) not allowed in format specifier");
        }
        if self.align == Some('=') {
            return err("'=' alignment not allowed in string format specifier");
        }
        if let Some(g) = self.grouping {
            return err(format!("Cannot specify '{g}' with 's'."));
        }
        let body: String = match self.precision {
            Some(p) => s.chars().take(p).collect(),
            None => s.to_string(),
        };
        let fill = if self.zero && !self.fill_given {
            '0'
        } else {
            self.fill
        };
        Ok(pad(&body, self.width, fill, self.align.unwrap_or('<')))
    }

    fn sign_text(&self, negative: bool) -> &'static str {
        match (negative, self.sign) {
            (true, _) => "-",
            (false, Some('+')) => "+",
            (false, Some(' ')) => " ",
            _ => "",
        }
    }

    fn format_int(&self, i: i128) -> Result<String, FormatError> {
        let ty = self.ty.unwrap_or('d');
        if self.precision.is_some() {
            return err("Precision not allowed in integer format specifier");
        }
        if self.z {
            return err("Negative zero coercion (z) not allowed in integer format specifier");
        }
        let mag = i.unsigned_abs();
        let (digits, prefix, group_every) = match ty {
            'd' | 'n' => (mag.to_string(), "", 3),
            'b' => (format!("{mag:b}"), "0b", 4),
            'o' => (format!("{mag:o}"), "0o", 4),
            'x' => (format!("{mag:x}"), "0x", 4),
            'X' => (format!("{mag:X}"), "0X", 4),
            'c' => {
                if self.sign.is_some() {
                    return err("Sign not allowed with integer format specifier 'c'");
                }
                if self.alternate {
                    return err("Alternate form (#) not allowed with integer format specifier 'c'");
                }
                if self.grouping.is_some() {
                    return err("Cannot specify ',' with 'c'.");
                }
                let ch = u32::try_from(i)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| FormatError("%c arg not in range(0x110000)".into()))?;
                return Ok(self.align_number("", "", &ch.to_string(), "", None));
            }
            t => {
                return err(format!(
                    "Unknown format code '{t}' for object of type 'int'"
                ))
            }
        };
        if let Some(g) = self.grouping {
            if ty == 'n' {
                return err(format!("Cannot specify '{g}' with 'n'."));
            }
            if g == ',' && group_every == 4 {
                return err(format!("Cannot specify ',' with '{ty}'."));
            }
        }
        let prefix = if self.alternate { prefix } else { "" };
        let group = self.grouping.map(|g| (g, group_every));
        Ok(self.align_number(self.sign_text(i < 0), prefix, &digits, "", group))
    }

    fn format_float(&self, v: f64) -> Result<String, FormatError> {
        let ty = self.ty;
        if let Some(t) = ty {
            if !matches!(t, 'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'n' | '%') {
                return err(format!(
                    "Unknown format code '{t}' for object of type 'float'"
                ));
            }
        }
        if let (Some(g), Some('n')) = (self.grouping, ty) {
            return err(format!("Cannot specify '{g}' with 'n'."));
        }
        let upper = matches!(ty, Some('E' | 'F' | 'G'));
        let mut negative = v.is_sign_negative() && !v.is_nan();
        let a = v.abs();
        let body = if !a.is_finite() {
            let t = if a.is_nan() { "nan" } else { "inf" };
            let t = if upper {
                t.to_ascii_uppercase()
            } else {
                t.to_string()
            };
            if ty == Some('%') {
                format!("{t}%")
            } else {
                t
            }
        } else {
            match ty {
                Some('f' | 'F') => self.fixed(a, self.precision.unwrap_or(6)),
                Some('%') => format!("{}%", self.fixed(a * 100.0, self.precision.unwrap_or(6))),
                Some('e' | 'E') => self.sci(a, self.precision.unwrap_or(6), upper),
                Some('g' | 'G' | 'n') => self.general(a, self.precision.unwrap_or(6), upper, false),
                None => match self.precision {
                    Some(p) => self.general(a, p, false, true),
                    None => float_repr(a),
                },
                Some(_) => unreachable!("checked above"),
            }
        };
        if self.z && negative && body.chars().all(|c| !c.is_ascii_digit() || c == '0') {
            negative = false;
        }
        let split = body
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(body.len());
        let (int_part, rest) = body.split_at(split);
        let group = if a.is_finite() {
            self.grouping.map(|g| (g, 3))
        } else {
            None
        };
        Ok(self.align_number(self.sign_text(negative), "", int_part, rest, group))
    }

    fn fixed(&self, a: f64, p: usize) -> String {
        let mut s = format!("{a:.p$}");
        if p == 0 && self.alternate {
            s.push('.');
        }
        s
    }

    fn sci(&self, a: f64, p: usize, upper: bool) -> String {
        let s = format!("{a:.p$e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let exp: i32 = e.parse().unwrap_or(0);
        let dot = if p == 0 && self.alternate { "." } else { "" };
        format!("{m}{dot}{}", exp_suffix(exp, upper))
    }

    /// `g` (and the no-type form with a precision, `dot0`): fixed or exponent
    /// notation by the exponent after rounding to `p` significant digits.
    fn general(&self, a: f64, p: usize, upper: bool, dot0: bool) -> String {
        let p = p.max(1);
        let probe = format!("{a:.prec$e}", prec = p - 1);
        let exp: i32 = probe
            .split_once('e')
            .and_then(|(_, e)| e.parse().ok())
            .unwrap_or(0);
        let decpt = exp + 1;
        let limit = if dot0 { p as i32 - 1 } else { p as i32 };
        let use_exp = a != 0.0 && (decpt <= -4 || decpt > limit);
        let strip = |s: String| -> String {
            if self.alternate || !s.contains('.') {
                return s;
            }
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        if use_exp {
            let (m, _) = probe.split_once('e').unwrap_or((&probe, ""));
            let mut m = strip(m.to_string());
            if self.alternate && !m.contains('.') {
                m.push('.');
            }
            format!("{m}{}", exp_suffix(exp, upper))
        } else {
            let decimals = usize::try_from(p as i32 - 1 - exp).unwrap_or(0);
            let mut s = strip(format!("{a:.decimals$}"));
            if self.alternate && !s.contains('.') {
                s.push('.');
            }
            if dot0 && !s.contains('.') {
                s.push_str(".0");
            }
            s
        }
    }

    /// Sign, prefix, grouped integer digits and the rest, padded to the width.
    fn align_number(
        &self,
        sign: &str,
        prefix: &str,
        int_digits: &str,
        rest: &str,
        group: Option<(char, usize)>,
    ) -> String {
        let fill = if self.zero && !self.fill_given {
            '0'
        } else {
            self.fill
        };
        let align = self.align.unwrap_or(if self.zero { '=' } else { '>' });
        let lead = sign.chars().count() + prefix.chars().count() + rest.chars().count();
        let grouped = match group {
            Some((sep, every)) if fill == '0' && align == '=' => {
                // Zero padding is grouped too, and never starts with a separator.
                let mut digits = int_digits.to_string();
                loop {
                    let g = group_digits(&digits, sep, every);
                    if lead + g.chars().count() >= self.width {
                        break g;
                    }
                    digits.insert(0, '0');
                }
            }
            Some((sep, every)) => group_digits(int_digits, sep, every),
            None => int_digits.to_string(),
        };
        if align == '=' {
            let len = lead + grouped.chars().count();
            let n = self.width.saturating_sub(len);
            let pad: String = std::iter::repeat_n(fill, n).collect();
            return format!("{sign}{prefix}{pad}{grouped}{rest}");
        }
        pad(
            &format!("{sign}{prefix}{grouped}{rest}"),
            self.width,
            fill,
            align,
        )
    }
}

fn group_digits(d: &str, sep: char, every: usize) -> String {
    let n = d.chars().count();
    let mut out = String::with_capacity(n + n / every);
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (n - i) % every == 0 {
            out.push(sep);
        }
        out.push(c);
    }
    out
}

fn pad(s: &str, width: usize, fill: char, align: char) -> String {
    let n = width.saturating_sub(s.chars().count());
    let f = |k: usize| -> String { std::iter::repeat_n(fill, k).collect() };
    match align {
        '<' => format!("{s}{}", f(n)),
        '^' => format!("{}{s}{}", f(n / 2), f(n - n / 2)),
        _ => format!("{}{s}", f(n)),
    }
}

/// A template formatted with one value (`response.format(value)`): every field is
/// `{}` or `{0}`, once or many times.
#[derive(Debug, Clone)]
pub(crate) struct ValueTemplate {
    pieces: Vec<(Option<Field>, Option<Spec>, String)>,
}

impl ValueTemplate {
    /// Parses `s`; refuses what Python would refuse whatever the value (two `{}`
    /// fields, named fields, a bad spec) and what is not supported (`!r`, `!a`).
    pub(crate) fn parse(s: &str) -> Result<Self, FormatError> {
        let mut pieces = Vec::new();
        let (mut auto, mut manual) = (0usize, false);
        for p in parse_template(s)? {
            match p {
                Piece::Text(t) => pieces.push((None, None, t)),
                Piece::Field(f) => {
                    match f.name.as_str() {
                        "" => auto += 1,
                        "0" => manual = true,
                        other => {
                            return err(format!(
                                "field {{{other}}}: a getter's answer takes one value, \
                                 written {{}} or {{0}}"
                            ))
                        }
                    }
                    if auto > 0 && manual {
                        return err("cannot switch from automatic field numbering to manual field specification");
                    }
                    if auto > 1 {
                        return err("Replacement index 1 out of range for positional args tuple");
                    }
                    match f.conversion {
                        None | Some('s') => {}
                        Some(c) => {
                            return err(format!("conversion !{c} is not supported (only !s)"))
                        }
                    }
                    let spec = Spec::parse(&f.spec)?;
                    pieces.push((Some(f), Some(spec), String::new()));
                }
            }
        }
        Ok(Self { pieces })
    }

    /// `template.format(value)`.
    pub(crate) fn render(&self, v: &PyValue) -> Result<String, FormatError> {
        let mut out = String::new();
        for (field, spec, text) in &self.pieces {
            match (field, spec) {
                (Some(f), Some(spec)) => {
                    let v = match f.conversion {
                        Some('s') => PyValue::Str(v.to_py_str()),
                        _ => v.clone(),
                    };
                    out.push_str(&spec.format(&v)?);
                }
                _ => out.push_str(text),
            }
        }
        Ok(out)
    }
}

/// `template.format(ch_id=id)`: a channel's query with its id filled in; every field
/// must be `{ch_id}` (with a spec, if any).
pub(crate) fn render_ch_id(template: &str, id: &str) -> Result<String, FormatError> {
    let mut out = String::new();
    for p in parse_template(template)? {
        match p {
            Piece::Text(t) => out.push_str(&t),
            Piece::Field(f) if f.name == "ch_id" && f.conversion.is_none() => {
                out.push_str(&Spec::parse(&f.spec)?.format(&PyValue::Str(id.to_string()))?)
            }
            Piece::Field(f) => {
                return err(format!(
                    "field {{{}}}: a channel's query may only hold {{ch_id}}",
                    f.name
                ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(spec: &str, v: PyValue) -> String {
        Spec::parse(spec).unwrap().format(&v).unwrap()
    }
    fn fl(spec: &str, v: f64) -> String {
        f(spec, PyValue::Float(v))
    }
    fn int(spec: &str, v: i128) -> String {
        f(spec, PyValue::Int(v))
    }

    // Every expected string below is what CPython 3.11 prints for
    // format(value, spec).
    #[test]
    fn floats_format_like_python() {
        for (spec, v, want) in [
            (".2f", 100.0, "100.00"),
            (".2f", 0.125, "0.12"),
            (".0f", 2.5, "2"),
            ("#.0f", 2.0, "2."),
            ("+.8E", 1.0, "+1.00000000E+00"),
            ("+.8E", -0.00125, "-1.25000000E-03"),
            ("e", 1.5, "1.500000e+00"),
            (".3e", 1234.5, "1.234e+03"),
            ("g", 1e100, "1e+100"),
            ("g", 0.0001, "0.0001"),
            ("g", 0.00001, "1e-05"),
            ("g", 123456.0, "123456"),
            ("g", 1234567.0, "1.23457e+06"),
            ("#g", 1.0, "1.00000"),
            (".3", 100.0, "1e+02"),
            (".3", 10.0, "10.0"),
            (".3", 1234.5, "1.23e+03"),
            (".2", 123.0, "1.2e+02"),
            ("", 1e16, "1e+16"),
            ("", 2.0, "2.0"),
            ("10.3f", 2.34567, "     2.346"),
            ("<10.1f", 2.34567, "2.3       "),
            ("^9.1f", 2.34567, "   2.3   "),
            ("*>8.1f", -2.75, "****-2.8"),
            ("=+12,.2f", -1234.5, "-   1,234.50"),
            ("012.2f", -3.5, "-00000003.50"),
            ("010,.1f", 1234.5, "0,001,234.5"),
            (",", 1234567.25, "1,234,567.25"),
            ("_.1f", 1234567.25, "1_234_567.2"),
            (".1%", 0.256, "25.6%"),
            ("+.2f", f64::NAN, "+nan"),
            ("F", f64::INFINITY, "INF"),
            ("08", f64::NEG_INFINITY, "-0000inf"),
            ("z.2f", -0.0001, "0.00"),
            (".2f", -0.0001, "-0.00"),
        ] {
            assert_eq!(fl(spec, v), want, "format({v}, {spec:?})");
        }
    }

    #[test]
    fn ints_format_like_python() {
        for (spec, v, want) in [
            ("d", 5, "5"),
            ("", -5, "-5"),
            ("5d", 42, "   42"),
            ("<5d", 42, "42   "),
            ("05d", -42, "-0042"),
            ("+d", 7, "+7"),
            (" d", 7, " 7"),
            ("#x", 255, "0xff"),
            ("#010x", -255, "-0x00000ff"),
            ("X", 255, "FF"),
            ("#b", 5, "0b101"),
            ("o", 8, "10"),
            ("_", 1234567, "1_234_567"),
            ("_x", 0x12345, "1_2345"),
            ("08,", 1234, "0,001,234"),
            (",", -1234, "-1,234"),
            ("c", 65, "A"),
            (".2f", 5, "5.00"),
            ("e", 5, "5.000000e+00"),
        ] {
            assert_eq!(int(spec, v), want, "format({v}, {spec:?})");
        }
    }

    #[test]
    fn strings_format_like_python() {
        let s = |spec: &str, v: &str| f(spec, PyValue::Str(v.into()));
        assert_eq!(s("", "P6V"), "P6V");
        assert_eq!(s("s", "P6V"), "P6V");
        assert_eq!(s("6", "ab"), "ab    ");
        assert_eq!(s(">6", "ab"), "    ab");
        assert_eq!(s("^6s", "ab"), "  ab  ");
        assert_eq!(s("05", "ab"), "ab000");
        assert_eq!(s(".2", "abcdef"), "ab");
        assert_eq!(s("-^7.3", "abcdef"), "--abc--");
    }

    #[test]
    fn type_mismatches_fail_like_python() {
        let fails = |spec: &str, v: PyValue| Spec::parse(spec).unwrap().format(&v).is_err();
        assert!(fails("d", PyValue::Str("0".into())));
        assert!(fails(".2f", PyValue::Str("1.0".into())));
        assert!(fails("d", PyValue::Float(1.0)));
        assert!(fails("s", PyValue::Int(1)));
        assert!(fails(".2d", PyValue::Int(1)));
        assert!(fails(",x", PyValue::Int(1)));
        assert!(fails("+s", PyValue::Str("a".into())));
        assert!(fails("=5", PyValue::Str("a".into())));
        assert!(Spec::parse("5.").is_err());
        assert!(Spec::parse("dd").is_err());
        assert!(Spec::parse(",_d").is_err());
        assert!(Spec::parse("99999").is_err());
    }

    #[test]
    fn templates_with_text_and_literal_braces() {
        let t = ValueTemplate::parse("{{V}} = {:.2f} V").unwrap();
        assert_eq!(t.render(&PyValue::Float(1.5)).unwrap(), "{V} = 1.50 V");
        let t = ValueTemplate::parse("{0}/{0:>4}").unwrap();
        assert_eq!(t.render(&PyValue::Int(7)).unwrap(), "7/   7");
        let t = ValueTemplate::parse("{!s:>4}").unwrap();
        assert_eq!(t.render(&PyValue::Int(7)).unwrap(), "   7");
        for bad in [
            "{} {}", "{name}", "{0} {}", "{", "}", "a}b", "{:{}}", "{!r}", "{!x}",
        ] {
            assert!(ValueTemplate::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(render_ch_id("CH {ch_id}:VOLT?", "2").unwrap(), "CH 2:VOLT?");
        assert_eq!(render_ch_id("C{ch_id:>02}", "2").unwrap(), "C02");
        assert!(render_ch_id("CH {}:VOLT?", "2").is_err());
    }
}
