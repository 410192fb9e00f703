//! Simulated instruments described in pyvisa-sim's YAML device files.
//!
//! [pyvisa-sim](https://pyvisa-sim.readthedocs.io) (the `@sim` backend of PyVISA)
//! describes instruments in YAML: `devices` with their query and response
//! terminations per interface (`eom`), fixed `dialogues`, `properties` read by a
//! getter and written by a setter with `specs` (type, min, max, valid values),
//! `error` responses, status registers and error queues, `channels`, and
//! `resources` naming where each device is reached (`GPIB0::8::INSTR`). This module
//! loads such a file ([`DeviceFile`]) and puts its devices on the simulated bus
//! ([`PyvisaSimInstrument`]), answering what pyvisa-sim 0.7.1 answers, byte for
//! byte, termination included. Getter templates are Python format strings
//! (`"{:.2f}"`, `"{:+.8E}"`, `"{:d}"`, `"{}"`), formatted as CPython does; setter
//! templates are parsed as pyvisa-sim parses them (with the `stringparser`
//! package's rules: `{:.2f}` takes `[0-9]+\.?[0-9]+`, `{:d}` digits, `{}` any text).
//!
//! On top of pyvisa-sim, as a GPIB instrument: an IEEE 488.2 status byte (MAV
//! while an answer is queued, EAV while an error queue holds an error, RQS and SRQ
//! when `*SRE` enables them: `*SRE n`, `*SRE?` and `*STB?` are answered when the
//! file does not define them), a response time (answers are queued that long after
//! their query arrives), device clear (drops input, answers and pending answers)
//! and trigger (runs the file's `*TRG` when it has one).
//!
//! Numbers in the file (defaults, specs) and values a setter takes from the bus are
//! converted as Python's `int()` and `float()` convert them, Unicode decimal digits
//! included (`"٣"` is 3, `"３.５"` is 3.5); a setter's `{:d}` or `{:f}` field takes
//! ASCII digits only, as stringparser's `[0-9]` does, and a `{}` field any text.
//!
//! Where it differs from pyvisa-sim, and why:
//! - What pyvisa-sim raises on while answering (a getter `"{:d}"` of a `str` value,
//!   a malformed `RANDOM`, a query that is not UTF-8) is not answered, and the rest
//!   of that message is dropped, as pyvisa-sim drops it; a controller's read then
//!   times out where PyVISA's `write` raised.
//! - `RANDOM` answers have the asked number of values in the asked range and
//!   format, from a fixed generator: not Python's numbers.
//! - Several answers to one message form one message, END with its last byte
//!   (pyvisa-sim ends each with END); the bytes are the same.
//! - An empty query termination ends a message at END (pyvisa-sim's would give every
//!   message as empty).
//! - Refused when the file is loaded (pyvisa-sim fails later, or stores Python
//!   objects no instrument could answer): setters with more than one value field or
//!   named fields other than a channel's `{ch_id}`, `{ch_id}` with a format spec,
//!   getter templates with fields other than `{}`/`{0}` or with `!r`/`!a`,
//!   `can_select: False` without a `selected_channel` property, `bases`,
//!   `bundled` resources, widths and precisions over 4096.
//! - Bounded where pyvisa-sim is not: integers fit 128 bits (a larger one fails a
//!   setter's validation), error queues hold 1000 entries, a channel group keeps
//!   values for 256 ids, a `RANDOM` answer 10,000 values, input 1 MiB per message,
//!   a setter template 8 fields ([`MAX_SETTER_FIELDS`], refused at load time so that
//!   no write takes long to match), and aliases expand a file to at most
//!   [`expanded_budget`] bytes (16 times its size plus 1 MiB).
//! - Unicode decimal digits are those of Unicode 15.0 (Python 3.12's and 3.13's):
//!   a Python built on a later Unicode reads a few more scripts' digits.

mod device;
mod digits;
mod format;
mod instrument;
mod load;
mod pattern;
mod random;
mod value;
mod yaml;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use device::{Device, Extra, MAX_CHANNEL_VALUES, MAX_ERROR_QUEUE};
pub use format::MAX_WIDTH;
pub use instrument::{PyvisaSimInstrument, MAX_INPUT};
pub use load::SPEC_VERSION;
pub use pattern::MAX_SETTER_FIELDS;
pub use random::MAX_RANDOM_VALUES;
pub use yaml::{expanded_budget, MAX_DEPTH, MAX_NODES};

use crate::address::Address;
use load::{build_device, check_spec, id_list, join, At};
use yaml::Node;

/// The largest device file read (1 MiB).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The interface whose `eom` a GPIB device uses.
pub const GPIB_INSTR: &str = "GPIB INSTR";

/// What is wrong with a device file: where (line and column, from 1; the key path
/// for what the file says) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceFileError {
    /// The file could not be read (missing, too large, not UTF-8, not a file).
    #[error("{0}")]
    Read(String),
    /// The YAML itself is malformed, or over a bound.
    #[error("line {line}, column {column}: {reason}")]
    Syntax {
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
        /// What is wrong.
        reason: String,
    },
    /// A key holds what pyvisa-sim cannot use.
    #[error("line {line}, column {column}: {key}: {reason}")]
    Invalid {
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
        /// The key path (`devices."device 1".properties.frequency.specs.min`).
        key: String,
        /// What is wrong.
        reason: String,
    },
}

/// One `resources` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// The resource name as written (`GPIB0::8::INSTR`).
    pub name: String,
    /// The device it is (`device 1`).
    pub device: String,
    /// The GPIB address, for a `GPIB<n>::<pad>[::<sad>][::INSTR]` name: (board, address).
    pub gpib: Option<(u8, Address)>,
    /// The interface and class whose `eom` applies (`GPIB INSTR`, `ASRL INSTR`...).
    pub interface: String,
}

/// A loaded device file.
#[derive(Debug, Clone)]
pub struct DeviceFile {
    root: Node,
    dir: Option<PathBuf>,
}

/// `GPIB[board]::primary[::secondary][::INSTR]` as (board, address).
pub fn parse_gpib_resource(name: &str) -> Option<(u8, Address)> {
    let parts: Vec<&str> = name.split("::").collect();
    let head = parts.first()?;
    // `get`: a name is text from a file; byte 4 need not be a character boundary.
    if !head.get(..4)?.eq_ignore_ascii_case("GPIB") {
        return None;
    }
    let board = match head.get(4..)? {
        "" => 0,
        b => b.parse().ok()?,
    };
    let mut rest = &parts[1..];
    if let Some(last) = rest.last() {
        if last.eq_ignore_ascii_case("INSTR") {
            rest = &rest[..rest.len() - 1];
        }
    }
    let num = |s: &str| -> Option<u8> { s.parse().ok() };
    match rest {
        [p] => Address::new(num(p)?, None).ok().map(|a| (board, a)),
        [p, s] => Address::new(num(p)?, Some(num(s)?))
            .ok()
            .map(|a| (board, a)),
        _ => None,
    }
}

/// The `eom` key of a resource name: `ASRL1::INSTR` is `ASRL INSTR`,
/// `TCPIP::localhost::10001::SOCKET` is `TCPIP SOCKET`.
pub fn resource_interface(name: &str) -> String {
    let parts: Vec<&str> = name.split("::").collect();
    let head = parts.first().copied().unwrap_or("");
    let kind: String = head
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_uppercase();
    let class = match parts.last() {
        Some(c) if parts.len() > 1 && c.chars().all(|c| c.is_ascii_alphabetic()) => {
            c.to_ascii_uppercase()
        }
        _ => "INSTR".to_string(),
    };
    format!("{kind} {class}")
}

impl DeviceFile {
    /// Parses YAML text (at most [`MAX_FILE_BYTES`]) and checks its `spec` version.
    /// Devices are checked when they are built ([`DeviceFile::device`]).
    pub fn parse(text: &str) -> Result<Self, DeviceFileError> {
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(DeviceFileError::Read(format!(
                "the file is larger than {} MiB, the most a device file may hold",
                MAX_FILE_BYTES >> 20
            )));
        }
        let root = yaml::parse(text)
            .map_err(|e| DeviceFileError::Syntax {
                line: e.mark.line,
                column: e.mark.column,
                reason: e.reason,
            })?
            .ok_or_else(|| DeviceFileError::Syntax {
                line: 1,
                column: 1,
                reason: "the file is empty: it does not specify a spec version".into(),
            })?;
        check_spec(At {
            node: &root,
            path: "",
        })?;
        Ok(Self { root, dir: None })
    }

    /// Reads and parses the file at `path` (a regular file of at most
    /// [`MAX_FILE_BYTES`]). Files a resource names (`filename:`) are found beside it.
    pub fn read(path: &Path) -> Result<Self, DeviceFileError> {
        let text = crate::regular_file::read_text(path, MAX_FILE_BYTES)
            .map_err(|e| DeviceFileError::Read(format!("{}: {e}", path.display())))?;
        let mut f = Self::parse(&text)?;
        f.dir = path.parent().map(Path::to_path_buf);
        Ok(f)
    }

    /// Bytes of scalars and keys the file holds once its aliases are expanded: at
    /// most [`expanded_budget`] of the text's length.
    pub fn expanded_size(&self) -> usize {
        yaml::count(&self.root).1
    }

    fn devices(&self) -> Result<&[(String, Node)], DeviceFileError> {
        match self.root.get("devices") {
            None => Ok(&[]),
            Some(n) => At {
                node: n,
                path: "devices",
            }
            .entries(),
        }
    }

    /// The names of the devices the file describes, in file order.
    pub fn device_names(&self) -> Result<Vec<String>, DeviceFileError> {
        Ok(self.devices()?.iter().map(|(k, _)| k.clone()).collect())
    }

    /// The `resources` entries, in file order.
    pub fn resources(&self) -> Result<Vec<Resource>, DeviceFileError> {
        let Some(n) = self.root.get("resources") else {
            return Ok(Vec::new());
        };
        let at = At {
            node: n,
            path: "resources",
        };
        let mut out = Vec::new();
        for (name, node) in at.entries()? {
            let path = join("resources", name);
            let r = At { node, path: &path };
            let device = match node.get("device") {
                Some(d) => At {
                    node: d,
                    path: &format!("{path}.device"),
                }
                .text()?
                .to_string(),
                None => return Err(r.err("has no `device` key")),
            };
            out.push(Resource {
                name: name.clone(),
                device,
                gpib: parse_gpib_resource(name),
                interface: resource_interface(name),
            });
        }
        Ok(out)
    }

    /// Builds the device `name` with the `eom` of `interface` (`"GPIB INSTR"`).
    pub fn device(&self, name: &str, interface: &str) -> Result<Device, DeviceFileError> {
        let devices = self.devices()?;
        let Some((_, node)) = devices.iter().find(|(k, _)| k == name) else {
            let names: Vec<&str> = devices.iter().map(|(k, _)| k.as_str()).collect();
            return Err(load::invalid(
                self.root.get("devices").map_or(self.root.mark, |d| d.mark),
                "devices",
                format!("no device {name:?} (the file has: {})", names.join(", ")),
            ));
        };
        let path = join("devices", name);
        build_device(name, At { node, path: &path }, interface, &HashMap::new())
    }

    /// Builds the device of the resource `name` as pyvisa-sim does: from this file
    /// or the one its `filename` names, with its `channel_ids`.
    pub fn resource_device(&self, name: &str) -> Result<Device, DeviceFileError> {
        let res = self.root.get("resources");
        let Some(node) = res.and_then(|r| r.get(name)) else {
            return Err(load::invalid(
                res.map_or(self.root.mark, |r| r.mark),
                "resources",
                format!("no resource {name:?}"),
            ));
        };
        let path = join("resources", name);
        let at = At { node, path: &path };
        at.entries()?;
        let device = match node.get("device") {
            Some(d) => d
                .as_str()
                .ok_or_else(|| at.err("`device` must be a string"))?,
            None => return Err(at.err("has no `device` key")),
        };
        if node
            .get("bundled")
            .and_then(Node::as_str)
            .is_some_and(|b| !b.is_empty())
        {
            return Err(at.err("`bundled` resources (files inside the pyvisa-sim package) are not supported: name the file"));
        }
        let mut ids = HashMap::new();
        if let Some(c) = node.get("channel_ids") {
            let cp = format!("{path}.channel_ids");
            let ca = At { node: c, path: &cp };
            for (k, v) in ca.entries()? {
                let vp = join(&cp, k);
                ids.insert(k.clone(), id_list(Some(At { node: v, path: &vp }))?);
            }
        }
        let interface = resource_interface(name);
        let filename = node.get("filename").and_then(Node::as_str);
        let other;
        let file = match filename {
            Some(f) => {
                let p = match &self.dir {
                    Some(d) => d.join(f),
                    None => PathBuf::from(f),
                };
                other = Self::read(&p).map_err(|e| at.err(format!("filename {f:?}: {e}")))?;
                &other
            }
            None => self,
        };
        let devices = file.devices()?;
        let Some((_, dn)) = devices.iter().find(|(k, _)| k == device) else {
            return Err(at.err(match filename {
                Some(f) => format!("{f:?} has no device {device:?}"),
                None => format!("no device {device:?} in `devices`"),
            }));
        };
        let dp = join("devices", device);
        let built = build_device(
            device,
            At {
                node: dn,
                path: &dp,
            },
            &interface,
            &ids,
        );
        match filename {
            Some(f) => built.map_err(|e| at.err(format!("in {f:?}: {e}"))),
            None => built,
        }
    }
}

#[cfg(test)]
mod bounds_tests;
#[cfg(test)]
mod tests;
