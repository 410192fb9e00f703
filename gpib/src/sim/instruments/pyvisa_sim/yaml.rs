//! YAML read the way pyvisa-sim reads it (PyYAML's `BaseLoader`): every scalar is a
//! string (`1.0`, `False` and `~` included), tags are ignored, aliases are copies of
//! their anchor, a repeated key keeps its first place and its last value. Each node
//! keeps where it stands (line and column), for errors that say where.
//!
//! Bounded: at most [`MAX_NODES`] nodes after aliases are expanded, nested at most
//! [`MAX_DEPTH`] deep, and at most [`expanded_budget`] bytes of scalars and keys
//! (copies made by aliases and kept for anchors included), so that what a file costs
//! in memory is proportional to what it holds.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser};

/// Most nodes a file may expand to (aliases counted as their copies).
pub const MAX_NODES: usize = 200_000;
/// Deepest nesting of sequences and mappings.
pub const MAX_DEPTH: usize = 64;

/// Bytes of scalars and keys a file of `input_len` bytes may expand to through
/// aliases: 16 times its size plus 1 MiB.
pub fn expanded_budget(input_len: usize) -> usize {
    input_len.saturating_mul(16).saturating_add(1 << 20)
}

/// A place in the file: line (1-based) and column (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mark {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub column: usize,
}

/// A YAML node.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub kind: Kind,
    pub mark: Mark,
}

/// What a node is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Scalar(String),
    Seq(Vec<Node>),
    /// Entries in file order, repeated keys merged (first place, last value).
    Map(Vec<(String, Node)>),
}

impl Node {
    /// The scalar's text.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The mapping's entries.
    pub(crate) fn as_map(&self) -> Option<&[(String, Node)]> {
        match &self.kind {
            Kind::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The value under `key` of a mapping.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// What kind of node this is, for messages.
    pub(crate) fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::Scalar(_) => "a string",
            Kind::Seq(_) => "a list",
            Kind::Map(_) => "a mapping",
        }
    }
}

/// A syntax error or an exceeded bound: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub mark: Mark,
    pub reason: String,
}

enum Open {
    Seq(Vec<Node>, Mark, usize),
    /// Entries, a key waiting for its value, where, anchor, and where each key is
    /// among the entries (a repeated key is found at once, not by a scan).
    Map(
        Vec<(String, Node)>,
        Option<(String, Mark)>,
        Mark,
        usize,
        HashMap<String, usize>,
    ),
}

/// Parses one YAML document. An empty file is `None` (pyvisa-sim then says the file
/// does not specify a spec version).
pub(crate) fn parse(text: &str) -> Result<Option<Node>, SyntaxError> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Open> = Vec::new();
    // (anchor id, node, its nodes, its bytes)
    let mut anchors: Vec<(usize, Node, usize, usize)> = Vec::new();
    let mut root: Option<Node> = None;
    let mut documents = 0usize;
    let mut nodes = 0usize;
    let budget = expanded_budget(text.len());
    let mut bytes = 0usize;
    while let Some(ev) = parser.next_event() {
        let (ev, span) = ev.map_err(|e| SyntaxError {
            mark: Mark {
                line: e.marker().line(),
                column: e.marker().col() + 1,
            },
            reason: e.info().to_string(),
        })?;
        let mark = Mark {
            line: span.start.line(),
            column: span.start.col() + 1,
        };
        let too_many = |what: &str| SyntaxError {
            mark,
            reason: format!("the file is too large: {what}"),
        };
        // (node, anchor, nodes it adds, bytes it adds)
        let done: Option<(Node, usize, usize, usize)> = match ev {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(SyntaxError {
                        mark,
                        reason: "expected a single document in the stream".into(),
                    });
                }
                None
            }
            Event::Scalar(value, _, anchor, _) => {
                let len = value.len();
                Some((
                    Node {
                        kind: Kind::Scalar(value.into_owned()),
                        mark,
                    },
                    anchor,
                    1,
                    len,
                ))
            }
            Event::SequenceStart(anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(too_many(&format!("nested deeper than {MAX_DEPTH}")));
                }
                stack.push(Open::Seq(Vec::new(), mark, anchor));
                None
            }
            Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(too_many(&format!("nested deeper than {MAX_DEPTH}")));
                }
                stack.push(Open::Map(Vec::new(), None, mark, anchor, HashMap::new()));
                None
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Open::Seq(items, m, anchor)) => Some((
                    Node {
                        kind: Kind::Seq(items),
                        mark: m,
                    },
                    anchor,
                    1,
                    0,
                )),
                _ => None,
            },
            Event::MappingEnd => match stack.pop() {
                Some(Open::Map(entries, _, m, anchor, _)) => Some((
                    Node {
                        kind: Kind::Map(entries),
                        mark: m,
                    },
                    anchor,
                    1,
                    0,
                )),
                _ => None,
            },
            Event::Alias(id) => {
                let (_, node, size, len) = anchors
                    .iter()
                    .rev()
                    .find(|(a, _, _, _)| *a == id)
                    .ok_or_else(|| SyntaxError {
                        mark,
                        reason: "alias to an unknown anchor".into(),
                    })?;
                // Checked before the copy is made.
                if bytes.saturating_add(*len) > budget {
                    return Err(too_many(&format!(
                        "its aliases expand to more than {budget} bytes"
                    )));
                }
                Some((node.clone(), 0, *size, *len))
            }
            _ => None,
        };
        let Some((node, anchor, size, len)) = done else {
            continue;
        };
        nodes = nodes.saturating_add(size);
        if nodes > MAX_NODES {
            return Err(too_many(&format!("more than {MAX_NODES} nodes")));
        }
        bytes = bytes.saturating_add(len);
        if anchor > 0 {
            // A copy of this node adds all of its nodes and bytes; the copy kept
            // for the anchor counts too.
            let (subtree, subtree_bytes) = count(&node);
            bytes = bytes.saturating_add(subtree_bytes);
            anchors.push((anchor, node.clone(), subtree, subtree_bytes));
        }
        if bytes > budget {
            return Err(too_many(&format!(
                "its aliases expand to more than {budget} bytes"
            )));
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Open::Seq(items, _, _)) => items.push(node),
            Some(Open::Map(entries, key, _, _, index)) => match key.take() {
                None => match node.kind {
                    Kind::Scalar(k) => *key = Some((k, node.mark)),
                    _ => {
                        return Err(SyntaxError {
                            mark: node.mark,
                            reason: format!(
                                "a mapping key must be a string, not {}",
                                node.kind_name()
                            ),
                        })
                    }
                },
                // The key's bytes were counted when it arrived as a scalar.
                Some((k, _)) => match index.get(&k) {
                    Some(&i) => entries[i].1 = node,
                    None => {
                        index.insert(k.clone(), entries.len());
                        entries.push((k, node));
                    }
                },
            },
        }
    }
    Ok(root)
}

/// A node's nodes and bytes (scalars and keys).
pub(crate) fn count(n: &Node) -> (usize, usize) {
    let add =
        |(a, b): (usize, usize), (c, d): (usize, usize)| (a.saturating_add(c), b.saturating_add(d));
    match &n.kind {
        Kind::Scalar(s) => (1, s.len()),
        Kind::Seq(items) => items.iter().map(count).fold((1, 0), add),
        Kind::Map(m) => m
            .iter()
            .map(|(k, v)| add(count(v), (1, k.len())))
            .fold((1, 0), add),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_are_strings_and_keys_keep_their_first_place() {
        let n = parse("spec: 1.0\nb: [1, False, ~]\na: x\nb: y\n")
            .unwrap()
            .unwrap();
        let m = n.as_map().unwrap();
        assert_eq!(m[0], ("spec".into(), m[0].1.clone()));
        assert_eq!(n.get("spec").unwrap().as_str(), Some("1.0"));
        assert_eq!(m[1].0, "b");
        assert_eq!(n.get("b").unwrap().as_str(), Some("y"));
        assert_eq!(n.get("a").unwrap().mark, Mark { line: 3, column: 4 });
    }

    #[test]
    fn aliases_copy_and_are_bounded() {
        let n = parse("a: &x {q: '1'}\nb: *x\n").unwrap().unwrap();
        assert_eq!(n.get("b").unwrap().get("q").unwrap().as_str(), Some("1"));
        // A "billion laughs" file: each level doubles the size.
        let mut t = String::from("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..20 {
            t.push_str(&format!(
                "l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}]\n",
                p = i - 1
            ));
        }
        let e = parse(&t).unwrap_err();
        assert!(e.reason.contains("too large"), "{e:?}");
    }

    #[test]
    fn syntax_errors_say_where() {
        let e = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(e.mark.line >= 1 && !e.reason.is_empty());
        let e = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!(e.mark.line, 2);
        assert!(parse("").unwrap().is_none());
    }
}
