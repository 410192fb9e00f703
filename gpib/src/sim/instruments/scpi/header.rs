//! Command headers the way SCPI-99 (volume 1, chapter 6) matches them, from patterns
//! written in its own notation:
//!
//! - a mnemonic is accepted in its long form or its short form, the leading
//!   uppercase letters (`MEASure`: `MEASURE` or `MEAS`, nothing between), in any case;
//! - `[...]` is an optional node (`[SENSe:]VOLTage`, `SYSTem:ERRor[:NEXT]`);
//! - `<n>` after a mnemonic takes a numeric suffix (`OUTPut<n>`: `OUTP`, `OUTP2`,
//!   `OUTPUT3`), 1 when absent;
//! - a trailing `?` makes the pattern a query, matched by query headers only;
//! - a header may start with `:` (the root), and common commands (`*IDN?`) are one node.
//!
//! The patterns are this crate's own (the instrument's table), so a malformed one is a
//! programming error, found by the tests that parse every entry.

/// Most nodes in a header this matcher looks at (longer headers match nothing).
const MAX_NODES: usize = 8;

/// One mnemonic of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Node {
    /// The long form, uppercase.
    long: Vec<u8>,
    /// Length of the short form (the leading uppercase letters of the pattern).
    short: usize,
    /// `[...]`: may be left out.
    optional: bool,
    /// `<n>`: takes a numeric suffix.
    suffix: bool,
}

/// A header pattern: `[SENSe:]VOLTage:APERture?`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pattern {
    nodes: Vec<Node>,
    query: bool,
}

/// The numeric suffixes of a matched header, one per `<n>` node of the pattern, in
/// order (1 where the header gave none; also 1 for a left-out optional node).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Suffixes {
    values: [u32; MAX_NODES],
    len: usize,
}

impl Suffixes {
    /// The suffixes, in pattern order.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(super) fn as_slice(&self) -> &[u32] {
        &self.values[..self.len]
    }
}

impl Pattern {
    /// Parses a pattern in SCPI notation; `Err` says what is wrong with it.
    pub(super) fn parse(spec: &str) -> Result<Self, String> {
        let (body, query) = match spec.strip_suffix('?') {
            Some(b) => (b, true),
            None => (spec, false),
        };
        let body = body.strip_prefix(':').unwrap_or(body);
        let mut nodes = Vec::new();
        let mut rest = body;
        while !rest.is_empty() {
            let (text, optional, after) = if let Some(r) = rest.strip_prefix('[') {
                let end = r
                    .find(']')
                    .ok_or_else(|| format!("{spec}: `[` without `]`"))?;
                (r[..end].trim_matches(':'), true, &r[end + 1..])
            } else {
                let end = rest.find([':', '[']).unwrap_or(rest.len());
                (&rest[..end], false, &rest[end..])
            };
            let (name, suffix) = match text.strip_suffix("<n>") {
                Some(n) => (n, true),
                None => (text, false),
            };
            let short = name
                .bytes()
                .take_while(|b| b.is_ascii_uppercase() || *b == b'*')
                .count();
            if short == 0 || !name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'*') {
                return Err(format!("{spec}: bad mnemonic {text:?}"));
            }
            nodes.push(Node {
                long: name.to_ascii_uppercase().into_bytes(),
                short,
                optional,
                suffix,
            });
            rest = after.strip_prefix(':').unwrap_or(after);
        }
        if nodes.is_empty() || nodes.len() > MAX_NODES {
            return Err(format!("{spec}: 1 to {MAX_NODES} nodes"));
        }
        Ok(Self { nodes, query })
    }

    /// Whether `header` (the program header of a unit, without its parameters)
    /// is this command, and with which numeric suffixes.
    #[cfg(test)]
    pub(super) fn matches(&self, header: &[u8]) -> Option<Suffixes> {
        let h = Header::split(header)?;
        self.matches_split(&h)
    }

    fn matches_split(&self, h: &Header<'_>) -> Option<Suffixes> {
        if h.query != self.query {
            return None;
        }
        let mut out = Suffixes::default();
        match_nodes(&self.nodes, &h.parts[..h.len], &mut out).then_some(out)
    }
}

/// A header split into its mnemonics.
struct Header<'a> {
    parts: [&'a [u8]; MAX_NODES],
    len: usize,
    query: bool,
}

impl<'a> Header<'a> {
    fn split(header: &'a [u8]) -> Option<Self> {
        let (body, query) = match header.strip_suffix(b"?") {
            Some(b) => (b, true),
            None => (header, false),
        };
        let body = body.strip_prefix(b":").unwrap_or(body);
        let mut parts: [&[u8]; MAX_NODES] = [&[]; MAX_NODES];
        let mut len = 0;
        for part in body.split(|b| *b == b':') {
            if part.is_empty() || len == MAX_NODES {
                return None;
            }
            parts[len] = part;
            len += 1;
        }
        Some(Self { parts, len, query })
    }
}

/// Matches `parts` against `nodes`, trying each optional node both left out and
/// present; the suffixes of the successful way are in `out`.
fn match_nodes(nodes: &[Node], parts: &[&[u8]], out: &mut Suffixes) -> bool {
    let Some((node, rest)) = nodes.split_first() else {
        return parts.is_empty();
    };
    let mark = out.len;
    if let Some((part, later)) = parts.split_first() {
        if let Some(n) = mnemonic(node, part) {
            if node.suffix {
                out.values[out.len] = n;
                out.len += 1;
            }
            if match_nodes(rest, later, out) {
                return true;
            }
            out.len = mark;
        }
    }
    if node.optional {
        if node.suffix {
            out.values[out.len] = 1;
            out.len += 1;
        }
        if match_nodes(rest, parts, out) {
            return true;
        }
        out.len = mark;
    }
    false
}

/// Whether `part` is `node` in its long or short form (any case), and its numeric
/// suffix (1 when none; only nodes marked `<n>` take one).
fn mnemonic(node: &Node, part: &[u8]) -> Option<u32> {
    let (name, digits) = if node.suffix {
        let d = part.iter().rev().take_while(|b| b.is_ascii_digit()).count();
        part.split_at(part.len() - d)
    } else {
        (part, &b""[..])
    };
    let form = name.eq_ignore_ascii_case(&node.long)
        || name.eq_ignore_ascii_case(&node.long[..node.short]);
    if !form {
        return None;
    }
    if digits.is_empty() {
        return Some(1);
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// A table of patterns and what each means.
pub(super) struct Table<T: Copy> {
    entries: Vec<(Pattern, T)>,
}

impl<T: Copy> Table<T> {
    /// The table of `(pattern, value)`; panics on a malformed pattern (the table is
    /// the instrument's code; every entry is parsed by its tests).
    pub(super) fn new(entries: &[(&str, T)]) -> Self {
        Self {
            entries: entries
                .iter()
                .map(|(spec, v)| (Pattern::parse(spec).expect("SCPI pattern"), *v))
                .collect(),
        }
    }

    /// The first entry `header` matches, with its numeric suffixes.
    pub(super) fn lookup(&self, header: &[u8]) -> Option<(T, Suffixes)> {
        let h = Header::split(header)?;
        self.entries
            .iter()
            .find_map(|(p, v)| p.matches_split(&h).map(|s| (*v, s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(spec: &str) -> Pattern {
        Pattern::parse(spec).unwrap()
    }

    fn yes(spec: &str, header: &str) -> Vec<u32> {
        p(spec)
            .matches(header.as_bytes())
            .unwrap_or_else(|| panic!("{header} should match {spec}"))
            .as_slice()
            .to_vec()
    }

    fn no(spec: &str, header: &str) {
        assert_eq!(
            p(spec).matches(header.as_bytes()),
            None,
            "{header} vs {spec}"
        );
    }

    #[test]
    fn long_and_short_forms_in_any_case() {
        for h in [
            "MEASURE:VOLTAGE?",
            "MEAS:VOLT?",
            "meas:volt?",
            "Measure:Volt?",
        ] {
            yes("MEASure:VOLTage?", h);
        }
        // Nothing between the short and the long form, nothing past the long one.
        for h in ["MEASU:VOLT?", "MEA:VOLT?", "MEASURES:VOLT?", "MEAS:VOLTS?"] {
            no("MEASure:VOLTage?", h);
        }
    }

    #[test]
    fn optional_nodes() {
        for h in [
            "VOLT:APER",
            "SENS:VOLT:APER",
            "SENSE:VOLTAGE:APERTURE",
            ":sens:volt:aper",
        ] {
            yes("[SENSe:]VOLTage:APERture", h);
        }
        no("[SENSe:]VOLTage:APERture", "SENS:APER");
        no("[SENSe:]VOLTage:APERture", "SENS:SENS:VOLT:APER");
        for h in ["SYST:ERR?", "SYST:ERR:NEXT?", "SYSTEM:ERROR:NEXT?"] {
            yes("SYSTem:ERRor[:NEXT]?", h);
        }
        for h in ["INIT", "INIT:IMM", "INITIATE:IMMEDIATE"] {
            yes("INITiate[:IMMediate]", h);
        }
        no("INITiate[:IMMediate]", "INIT:IMM:IMM");
    }

    #[test]
    fn numeric_suffixes() {
        assert_eq!(yes("OUTPut<n>[:STATe]?", "OUTP?"), [1]);
        assert_eq!(yes("OUTPut<n>[:STATe]?", "OUTP2?"), [2]);
        assert_eq!(yes("OUTPut<n>[:STATe]?", "output3:stat?"), [3]);
        assert_eq!(
            yes("CHANnel<n>:MEASure<n>:VOLTage?", "CHAN4:MEAS2:VOLT?"),
            [4, 2]
        );
        assert_eq!(yes("[SOURce<n>:]FREQuency", "FREQ"), [1]);
        assert_eq!(yes("[SOURce<n>:]FREQuency", "SOUR2:FREQ"), [2]);
        // Only `<n>` nodes take digits; a suffix too large for u32 is no match.
        no("MEASure:VOLTage?", "MEAS2:VOLT?");
        no("OUTPut<n>?", "OUT2?");
        no("OUTPut<n>?", "OUTP99999999999?");
    }

    #[test]
    fn queries_and_commands_are_distinct() {
        yes("*IDN?", "*IDN?");
        yes("*IDN?", "*idn?");
        no("*IDN?", "*IDN");
        no("*ESE", "*ESE?");
        yes("*ESE", "*ese");
        yes("DATA:LENgth?", "DATA:LEN?");
        no("DATA?", "DATA:LEN?");
        no("DATA", "DATA?");
    }

    #[test]
    fn malformed_headers_match_nothing() {
        for h in [
            "",
            ":",
            "MEAS::VOLT?",
            "MEAS:VOLT:?",
            "?",
            "A:B:C:D:E:F:G:H:I",
        ] {
            no("MEASure:VOLTage?", h);
        }
        no("READ?", "READ??");
    }

    #[test]
    fn malformed_patterns_are_refused() {
        assert!(Pattern::parse("[SENSe:VOLTage").is_err());
        assert!(Pattern::parse("volt").is_err());
        assert!(Pattern::parse("VOLT2").is_err());
        assert!(Pattern::parse("").is_err());
    }

    #[test]
    fn tables_find_the_first_match() {
        #[derive(Debug, Clone, Copy, PartialEq)]
        enum C {
            Set,
            Ask,
        }
        let t = Table::new(&[
            ("[SENSe:]VOLTage:APERture", C::Set),
            ("[SENSe:]VOLTage:APERture?", C::Ask),
        ]);
        assert_eq!(t.lookup(b"volt:aper").map(|x| x.0), Some(C::Set));
        assert_eq!(t.lookup(b"SENS:VOLT:APER?").map(|x| x.0), Some(C::Ask));
        assert_eq!(t.lookup(b"VOLT:RANG?").map(|x| x.0), None);
    }
}
