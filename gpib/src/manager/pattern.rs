//! VISA's resource expressions for `list_resources` (VPP-4.3, `viFindRsrc`): `?` any
//! one character, `*` any number of the atom before it, `+` one or more of it,
//! `[abc]` / `[^abc]` / `[a-z]` a character set, `(a|b)` alternatives; matching ignores
//! case, as VISA's does. `?*::INSTR` is every instrument, `GPIB?*` everything on GPIB.

/// One piece of a pattern, with how often it may repeat.
#[derive(Debug, Clone, PartialEq)]
enum Atom {
    Any,
    Char(char),
    Set {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Group(Vec<Vec<Piece>>),
}

#[derive(Debug, Clone, PartialEq)]
struct Piece {
    atom: Atom,
    /// `(min, unbounded)`: `*` is (0, true), `+` (1, true), none (1, false).
    min: usize,
    many: bool,
}

/// A parsed resource expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    alternatives: Vec<Vec<Piece>>,
}

/// Longest expression taken (a user's text; matching is bounded by it and the name).
const MAX_PATTERN: usize = 256;

impl Pattern {
    /// Parses `text`; the error says what is wrong and where.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.len() > MAX_PATTERN {
            return Err(format!(
                "a resource expression of {} bytes is over the {MAX_PATTERN} taken",
                text.len()
            ));
        }
        let chars: Vec<char> = text.chars().collect();
        let mut at = 0;
        let alternatives = parse_alternatives(&chars, &mut at, false)?;
        Ok(Self { alternatives })
    }

    /// Whether `name` matches the whole expression (case ignored).
    pub fn matches(&self, name: &str) -> bool {
        let name: Vec<char> = name.chars().flat_map(char::to_lowercase).collect();
        self.alternatives
            .iter()
            .any(|seq| ends(seq, &name, 0).contains(&name.len()))
    }
}

fn parse_alternatives(c: &[char], at: &mut usize, nested: bool) -> Result<Vec<Vec<Piece>>, String> {
    let mut alts = vec![Vec::new()];
    while *at < c.len() {
        let ch = c[*at];
        match ch {
            '|' => {
                *at += 1;
                alts.push(Vec::new());
                continue;
            }
            ')' if nested => return Ok(alts),
            ')' => return Err(format!("unbalanced ')' at character {}", *at + 1)),
            '*' | '+' => {
                let Some(last) = alts.last_mut().and_then(|s| s.last_mut()) else {
                    return Err(format!("'{ch}' at character {} repeats nothing", *at + 1));
                };
                if last.many {
                    return Err(format!("'{ch}' at character {} repeats a repeat", *at + 1));
                }
                last.many = true;
                last.min = usize::from(ch == '+');
                *at += 1;
                continue;
            }
            _ => {}
        }
        let atom = match ch {
            '?' => {
                *at += 1;
                Atom::Any
            }
            '[' => parse_set(c, at)?,
            '(' => {
                let open = *at;
                *at += 1;
                let inner = parse_alternatives(c, at, true)?;
                if c.get(*at) != Some(&')') {
                    return Err(format!("'(' at character {} is not closed", open + 1));
                }
                *at += 1;
                Atom::Group(inner)
            }
            '\\' if *at + 1 < c.len() => {
                *at += 2;
                Atom::Char(lower(c[*at - 1]))
            }
            ch => {
                *at += 1;
                Atom::Char(lower(ch))
            }
        };
        alts.last_mut()
            .expect("one alternative at least")
            .push(Piece {
                atom,
                min: 1,
                many: false,
            });
    }
    if nested {
        return Err("'(' is not closed".into());
    }
    Ok(alts)
}

fn lower(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

fn parse_set(c: &[char], at: &mut usize) -> Result<Atom, String> {
    let open = *at;
    *at += 1;
    let negated = c.get(*at) == Some(&'^');
    if negated {
        *at += 1;
    }
    let mut ranges = Vec::new();
    while let Some(&ch) = c.get(*at) {
        if ch == ']' && *at > open + 1 + usize::from(negated) {
            *at += 1;
            return Ok(Atom::Set { negated, ranges });
        }
        if c.get(*at + 1) == Some(&'-') && c.get(*at + 2).is_some_and(|e| *e != ']') {
            ranges.push((lower(ch), lower(c[*at + 2])));
            *at += 3;
        } else {
            ranges.push((lower(ch), lower(ch)));
            *at += 1;
        }
    }
    Err(format!("'[' at character {} is not closed", open + 1))
}

fn one(atom: &Atom, name: &[char], at: usize) -> Vec<usize> {
    match atom {
        Atom::Any => (at < name.len()).then_some(at + 1).into_iter().collect(),
        Atom::Char(c) => (name.get(at) == Some(c))
            .then_some(at + 1)
            .into_iter()
            .collect(),
        Atom::Set { negated, ranges } => match name.get(at) {
            Some(ch) => {
                let inside = ranges.iter().any(|(a, b)| (a..=b).contains(&ch));
                (inside != *negated).then_some(at + 1).into_iter().collect()
            }
            None => Vec::new(),
        },
        Atom::Group(alts) => {
            let mut out: Vec<usize> = alts.iter().flat_map(|s| ends(s, name, at)).collect();
            out.sort_unstable();
            out.dedup();
            out
        }
    }
}

/// Every position where matching `seq` from `at` can end: a set of positions, so the
/// work is bounded by pattern length x name length, never exponential.
fn ends(seq: &[Piece], name: &[char], at: usize) -> Vec<usize> {
    let mut here = vec![at];
    for p in seq {
        let mut next = Vec::new();
        let mut frontier = here.clone();
        let mut reached: Vec<usize> = Vec::new();
        // Mandatory repetitions first.
        for _ in 0..p.min {
            frontier = frontier
                .iter()
                .flat_map(|&i| one(&p.atom, name, i))
                .collect();
            frontier.sort_unstable();
            frontier.dedup();
        }
        if p.min == 0 {
            reached.extend(&here);
        }
        reached.extend(&frontier);
        if p.many {
            while !frontier.is_empty() {
                let mut more: Vec<usize> = frontier
                    .iter()
                    .flat_map(|&i| one(&p.atom, name, i))
                    .filter(|i| !reached.contains(i))
                    .collect();
                more.sort_unstable();
                more.dedup();
                reached.extend(&more);
                frontier = more;
            }
        }
        next.extend(reached);
        next.sort_unstable();
        next.dedup();
        here = next;
        if here.is_empty() {
            break;
        }
    }
    here
}

#[cfg(test)]
mod tests {
    use super::Pattern;

    fn m(p: &str, name: &str) -> bool {
        Pattern::parse(p).unwrap().matches(name)
    }

    #[test]
    fn visa_expressions() {
        assert!(m("?*::INSTR", "GPIB0::22::INSTR"));
        assert!(m("?*::INSTR", "TCPIP0::10.0.0.5::gpib0,22::INSTR"));
        assert!(!m("?*::INSTR", "GPIB0::INTFC"));
        assert!(m("GPIB?*", "GPIB1::5::INSTR"));
        assert!(m("gpib?*instr", "GPIB1::5::INSTR"));
        assert!(m("GPIB[0-1]::?*", "GPIB1::5::INSTR"));
        assert!(!m("GPIB[^0-1]::?*", "GPIB1::5::INSTR"));
        assert!(m("GPIB0::(5|22)::INSTR", "GPIB0::22::INSTR"));
        assert!(!m("GPIB0::(5|22)::INSTR", "GPIB0::2::INSTR"));
        assert!(m("GPIB0::2+::INSTR", "GPIB0::222::INSTR"));
        assert!(!m("GPIB0::2+::INSTR", "GPIB0::::INSTR"));
        assert!(m("?*", ""));
    }

    #[test]
    fn bad_expressions_say_what_is_wrong() {
        assert!(Pattern::parse("*x")
            .unwrap_err()
            .contains("repeats nothing"));
        assert!(Pattern::parse("GPIB[0").unwrap_err().contains("not closed"));
        assert!(Pattern::parse("(a|b").unwrap_err().contains("not closed"));
        assert!(Pattern::parse("a)").unwrap_err().contains("unbalanced"));
        assert!(Pattern::parse(&"?".repeat(300))
            .unwrap_err()
            .contains("over"));
    }

    // A pathological expression against a long name takes at most pattern x name steps.
    #[test]
    fn matching_is_not_exponential() {
        let p = Pattern::parse(&"?*".repeat(100)).unwrap();
        let name = "x".repeat(200);
        let t = std::time::Instant::now();
        assert!(p.matches(&name));
        assert!(!Pattern::parse(&format!("{}y", "?*".repeat(100)))
            .unwrap()
            .matches(&name));
        assert!(t.elapsed() < std::time::Duration::from_secs(10));
    }
}
