//! Lists and maps of a saved run read so that an error names the place it is at
//! (`records[3]: number out of range ...`): a number past what an `f64` holds (`1e400`)
//! or a `NaN` fails the JSON parse itself, and the parser's line and column alone do
//! not say which record to look at.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What elements of a list are named by in errors.
pub trait Listed {
    /// The list's field: `records`.
    const LIST: &'static str;
}

/// The elements of a JSON list; one that does not parse is named by its index
/// (`records[3]`).
pub struct Each<T>(pub Vec<T>);

/// The entries of doctor's `transfers` object; one that does not parse is named by its
/// key (`transfers.read_small`).
pub struct Keyed(pub Map<String, Value>);

/// A parser's message without its position (the outer parser adds its own), after the
/// place: `[3]: number out of range`.
fn at(place: &str, e: &dyn fmt::Display) -> String {
    let text = e.to_string();
    let bare = match text.rfind(" at line ") {
        Some(i) => &text[..i],
        None => &text,
    };
    format!("{place}: {bare}")
}

impl<'de, T: Deserialize<'de> + Listed> Deserialize<'de> for Each<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Elements<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Listed> Visitor<'de> for Elements<T> {
            type Value = Vec<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
                // Grown as elements arrive (no size hint trusted).
                let mut out = Vec::new();
                loop {
                    match seq.next_element::<T>() {
                        Ok(Some(t)) => out.push(t),
                        Ok(None) => return Ok(out),
                        Err(e) => {
                            return Err(A::Error::custom(at(
                                &format!("{}[{}]", T::LIST, out.len()),
                                &e,
                            )))
                        }
                    }
                }
            }
        }
        d.deserialize_seq(Elements(PhantomData)).map(Each)
    }
}

impl<'de> Deserialize<'de> for Keyed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Map<String, Value>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    match map.next_value::<Value>() {
                        Ok(v) => {
                            out.insert(key, v);
                        }
                        Err(e) => {
                            return Err(A::Error::custom(at(&format!("transfers.{key}"), &e)))
                        }
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(Entries).map(Keyed)
    }
}
