//! From a YAML tree to [`Device`]s, as pyvisa-sim's `parser.py` builds them, with
//! every error naming the line and the key.

use std::collections::HashMap;

use super::device::{
    validate, ChannelProperty, Channels, Device, ErrorQueue, GetterReply, Property, Register,
    Reply, Setter, Specs,
};
use super::format::{render_ch_id, ValueTemplate};
use super::pattern::SetterPattern;
use super::random::{is_random, RandomSpec, Rng};
use super::value::{parse_int, PyType, PyValue};
use super::yaml::{Kind, Mark, Node};
use super::DeviceFileError;

/// The newest spec version pyvisa-sim 0.7.1 reads.
pub const SPEC_VERSION: (i128, i128) = (1, 1);

/// The interface types pyvisa knows (`constants.InterfaceType`), for `eom` keys.
const INTERFACES: &[&str] = &[
    "unknown",
    "gpib",
    "vxi",
    "gpib_vxi",
    "asrl",
    "pxi",
    "tcpip",
    "usb",
    "rio",
    "firewire",
    "rsnrp",
    "vicp",
    "prlgx_asrl",
    "prlgx_tcpip",
];

/// A node and the key path that leads to it, for errors.
#[derive(Clone, Copy)]
pub(crate) struct At<'a> {
    pub node: &'a Node,
    pub path: &'a str,
}

pub(crate) fn join(path: &str, key: &str) -> String {
    let k = if key.is_empty() || key.contains([' ', '.', '"']) {
        format!("{key:?}")
    } else {
        key.to_string()
    };
    if path.is_empty() {
        k
    } else {
        format!("{path}.{k}")
    }
}

pub(crate) fn invalid(mark: Mark, key: &str, reason: impl Into<String>) -> DeviceFileError {
    DeviceFileError::Invalid {
        line: mark.line,
        column: mark.column,
        key: key.to_string(),
        reason: reason.into(),
    }
}

impl<'a> At<'a> {
    pub(crate) fn err(&self, reason: impl Into<String>) -> DeviceFileError {
        invalid(self.node.mark, self.path, reason)
    }

    /// The scalar's text, or an error saying what it is instead.
    pub(crate) fn text(&self) -> Result<&'a str, DeviceFileError> {
        self.node
            .as_str()
            .ok_or_else(|| self.err(format!("must be a string, not {}", self.node.kind_name())))
    }

    pub(crate) fn entries(&self) -> Result<&'a [(String, Node)], DeviceFileError> {
        self.node
            .as_map()
            .ok_or_else(|| self.err(format!("must be a mapping, not {}", self.node.kind_name())))
    }

    fn items(&self) -> Result<&'a [Node], DeviceFileError> {
        match &self.node.kind {
            Kind::Seq(items) => Ok(items),
            _ => Err(self.err(format!("must be a list, not {}", self.node.kind_name()))),
        }
    }

    /// Python truthiness of an optional value: absent, `""`, `[]` and `{}` are false.
    fn truthy(node: Option<&Node>) -> bool {
        match node.map(|n| &n.kind) {
            None => false,
            Some(Kind::Scalar(s)) => !s.is_empty(),
            Some(Kind::Seq(v)) => !v.is_empty(),
            Some(Kind::Map(m)) => !m.is_empty(),
        }
    }
}

/// Calls `f` with the child at `key`, its path built on demand.
fn child<'a, T>(
    at: At<'a>,
    key: &str,
    f: impl FnOnce(Option<At<'_>>) -> Result<T, DeviceFileError>,
) -> Result<T, DeviceFileError> {
    match at.node.get(key) {
        None => f(None),
        Some(n) => {
            let path = join(at.path, key);
            f(Some(At {
                node: n,
                path: &path,
            }))
        }
    }
}

/// pyvisa-sim's `to_bytes`: the two-character sequences `\r` and `\n` become CR and LF.
pub(crate) fn to_bytes(s: &str) -> Vec<u8> {
    s.replace("\\r", "\r").replace("\\n", "\n").into_bytes()
}

/// Checks the `spec` version as pyvisa-sim does: `X.Y` integers, not newer than
/// [`SPEC_VERSION`], major version 1.
pub(crate) fn check_spec(root: At<'_>) -> Result<(), DeviceFileError> {
    let Some(map) = root.node.as_map() else {
        return Err(root.err("the file does not specify a spec version (it is not a mapping)"));
    };
    let Some((_, v)) = map.iter().find(|(k, _)| k == "spec") else {
        return Err(root.err("the file does not specify a spec version (no `spec` key)"));
    };
    let at = At {
        node: v,
        path: "spec",
    };
    let text = at.text()?;
    let parts: Option<Vec<i128>> = text.split('.').map(|p| parse_int(p, 10)).collect();
    let Some(parts) = parts else {
        return Err(at.err(format!(
            "invalid spec version format: expected 'X.Y' (X and Y integers), found {text:?}"
        )));
    };
    let (major, minor) = (parts[0], parts.get(1).copied());
    let newer = match minor {
        _ if major != SPEC_VERSION.0 => major > SPEC_VERSION.0,
        None => false,
        Some(m) => m > SPEC_VERSION.1 || (m == SPEC_VERSION.1 && parts.len() > 2),
    };
    if newer {
        return Err(at.err(format!(
            "the spec version of the file is {text} but pyvisa-sim 0.7.1 reads up to {}.{}",
            SPEC_VERSION.0, SPEC_VERSION.1
        )));
    }
    if major != SPEC_VERSION.0 {
        return Err(at.err(format!(
            "invalid spec version {text}: expected major version {}",
            SPEC_VERSION.0
        )));
    }
    Ok(())
}

/// `_get_pair`/`_get_triplet`: `q` (required) and the optional `r`, `e`, each
/// stripped of spaces.
fn pair(at: At<'_>, keys: &[&str]) -> Result<Vec<Option<String>>, DeviceFileError> {
    at.entries()?;
    let mut out = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let v = child(at, key, |c| match c {
            None if i == 0 => Err(at.err(format!("has no `{key}` key"))),
            None => Ok(None),
            Some(c) => Ok(Some(c.text()?.trim_matches(' ').to_string())),
        })?;
        out.push(v);
    }
    Ok(out)
}

fn specs(at: Option<At<'_>>) -> Result<Option<Specs>, DeviceFileError> {
    let Some(at) = at else { return Ok(None) };
    if !At::truthy(Some(at.node)) {
        return Ok(None);
    }
    at.entries()?;
    let ty = child(at, "type", |c| {
        let c = c.ok_or_else(|| at.err("no property type was specified (`type`)"))?;
        let name = c.text()?;
        PyType::from_name(name).ok_or_else(|| {
            c.err(format!(
                "invalid property type {name:?}, valid types are: 'int', 'float', 'str'"
            ))
        })
    })?;
    let convert = |c: At<'_>| -> Result<PyValue, DeviceFileError> {
        let t = c.text()?;
        ty.convert(&PyValue::Str(t.to_string()))
            .ok_or_else(|| c.err(format!("{t:?} is not a valid {ty:?}").to_lowercase()))
    };
    let min = child(at, "min", |c| c.map(convert).transpose())?;
    let max = child(at, "max", |c| c.map(convert).transpose())?;
    let valid = child(at, "valid", |c| {
        let Some(c) = c else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        for (i, item) in c.items()?.iter().enumerate() {
            let path = format!("{}[{i}]", c.path);
            out.push(convert(At {
                node: item,
                path: &path,
            })?);
        }
        Ok(out)
    })?;
    Ok(Some(Specs {
        ty,
        min,
        max,
        valid,
    }))
}

fn getter_reply(r: Option<&str>, at: At<'_>) -> Result<GetterReply, DeviceFileError> {
    Ok(match r {
        // pyvisa-sim registers the getter and raises when it is asked.
        None => GetterReply::Raises("the getter has no response (`r`)".into()),
        Some(t) if is_random(t) => match RandomSpec::parse(t) {
            Ok(r) => GetterReply::Random(r),
            Err(why) => GetterReply::Raises(why),
        },
        Some(t) => GetterReply::Value(
            ValueTemplate::parse(t).map_err(|e| at.err(format!("response {t:?}: {e}")))?,
        ),
    })
}

type SetterDef = (SetterPattern, Option<Vec<u8>>, Option<Vec<u8>>);

/// A property as `add_property` reads it: (default, getter (query, reply), setter,
/// specs).
struct PropertyDef {
    name: String,
    default: PyValue,
    specs: Option<Specs>,
    getter: Option<(Vec<u8>, String, GetterReply)>,
    /// The pattern, the response, the error response.
    setter: Option<SetterDef>,
}

fn property(name: &str, at: At<'_>, channel: bool) -> Result<PropertyDef, DeviceFileError> {
    at.entries()?;
    let specs = child(at, "specs", specs)?;
    let default = child(at, "default", |c| match c {
        None => Ok(String::new()),
        Some(c) => c.text().map(str::to_string),
    })?;
    let default = child(at, "default", |c| {
        validate(specs.as_ref(), &PyValue::Str(default.clone())).ok_or_else(|| {
            let m = c.map_or(at, |c| c);
            m.err(format!(
                "default {default:?} does not pass the property's specs"
            ))
        })
    })?;
    let getter = child(at, "getter", |c| {
        let Some(c) = c else { return Ok(None) };
        let v = pair(c, &["q", "r"])?;
        let q = v[0].clone().unwrap_or_default();
        let reply = child(c, "r", |r| getter_reply(v[1].as_deref(), r.unwrap_or(c)))?;
        Ok(Some((to_bytes(&q), q, reply)))
    })?;
    let setter = child(at, "setter", |c| {
        let Some(c) = c else { return Ok(None) };
        let v = pair(c, &["q", "r", "e"])?;
        let q = v[0].clone().unwrap_or_default();
        let pattern = child(c, "q", |qa| {
            SetterPattern::compile(&q, channel)
                .map_err(|e| qa.unwrap_or(c).err(format!("setter {q:?}: {e}")))
        })?;
        Ok(Some((
            pattern,
            v[1].as_deref().map(to_bytes),
            v[2].as_deref().map(to_bytes),
        )))
    })?;
    Ok(PropertyDef {
        name: name.to_string(),
        default,
        specs,
        getter,
        setter,
    })
}

/// Dialogues: (key, key text, reply), in file order.
fn dialogues(at: Option<At<'_>>) -> Result<Vec<(Vec<u8>, String, Reply)>, DeviceFileError> {
    let Some(at) = at else { return Ok(Vec::new()) };
    if !At::truthy(Some(at.node)) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for (i, d) in at.items()?.iter().enumerate() {
        let path = format!("{}[{i}]", at.path);
        let v = pair(
            At {
                node: d,
                path: &path,
            },
            &["q", "r"],
        )?;
        let q = v[0].clone().unwrap_or_default();
        let r = v[1]
            .as_deref()
            .map(|r| String::from_utf8_lossy(&to_bytes(r)).into_owned());
        out.push((to_bytes(&q), q, Reply::dialogue(r)));
    }
    Ok(out)
}

fn properties(at: Option<At<'_>>, channel: bool) -> Result<Vec<PropertyDef>, DeviceFileError> {
    let Some(at) = at else { return Ok(Vec::new()) };
    if !At::truthy(Some(at.node)) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for (name, node) in at.entries()? {
        let path = join(at.path, name);
        out.push(property(name, At { node, path: &path }, channel)?);
    }
    Ok(out)
}

/// The pieces `update_component` gives a device or a channel group.
struct Component {
    dialogues: Vec<Reply>,
    dialogue_keys: HashMap<Vec<u8>, usize>,
    dialogue_text: Vec<(String, usize)>,
    getters: Vec<(usize, GetterReply)>,
    getter_keys: HashMap<Vec<u8>, usize>,
    getter_text: Vec<(String, usize)>,
    props: Vec<(String, PyValue, Option<Specs>)>,
    setters: Vec<Setter>,
}

fn component(at: At<'_>, channel: bool) -> Result<Component, DeviceFileError> {
    let mut c = Component {
        dialogues: Vec::new(),
        dialogue_keys: HashMap::new(),
        dialogue_text: Vec::new(),
        getters: Vec::new(),
        getter_keys: HashMap::new(),
        getter_text: Vec::new(),
        props: Vec::new(),
        setters: Vec::new(),
    };
    for (key, text, reply) in child(at, "dialogues", dialogues)? {
        let i = c.dialogues.len();
        c.dialogues.push(reply);
        c.dialogue_keys.insert(key, i);
        c.dialogue_text.push((text, i));
    }
    for (p, def) in child(at, "properties", |n| properties(n, channel))?
        .into_iter()
        .enumerate()
    {
        if let Some((key, text, reply)) = def.getter {
            let i = c.getters.len();
            c.getters.push((p, reply));
            c.getter_keys.insert(key, i);
            c.getter_text.push((text, i));
        }
        if let Some((pattern, response, error)) = def.setter {
            c.setters.push(Setter {
                property: p,
                pattern,
                response,
                error,
            });
        }
        c.props.push((def.name, def.default, def.specs));
    }
    Ok(c)
}

/// Adds the error handling `error:` describes (`add_error_handler`).
fn error_handler(at: Option<At<'_>>, d: &mut Device) -> Result<(), DeviceFileError> {
    let Some(at) = at else { return Ok(()) };
    if let Some(s) = at.node.as_str() {
        d.command_error = Some(to_bytes(s));
        return Ok(());
    }
    at.entries()?;
    child(at, "response", |r| {
        let Some(r) = r else { return Ok(()) };
        r.entries()?;
        d.command_error = child(r, "command_error", |c| {
            c.map(|c| c.text().map(to_bytes)).transpose()
        })?;
        Ok(())
    })?;
    child(at, "status_register", |regs| {
        let Some(regs) = regs else { return Ok(()) };
        for (i, reg) in regs.items()?.iter().enumerate() {
            let path = format!("{}[{i}]", regs.path);
            let ra = At {
                node: reg,
                path: &path,
            };
            let mut bits = Vec::new();
            let mut query = None;
            for (k, v) in ra.entries()? {
                let vp = join(ra.path, k);
                let va = At { node: v, path: &vp };
                if k == "q" {
                    query = Some(to_bytes(va.text()?));
                    continue;
                }
                let t = va.text()?;
                let bit =
                    parse_int(t, 10).ok_or_else(|| va.err(format!("{t:?} is not an integer")))?;
                bits.push((k.clone(), bit));
            }
            let query = query.ok_or_else(|| ra.err("has no `q` key"))?;
            let idx = d.registers.len();
            for (k, _) in &bits {
                d.error_registers.insert(k.clone(), idx);
            }
            d.registers.push(Register { bits, value: 0 });
            d.register_keys.insert(query, idx);
        }
        Ok(())
    })?;
    child(at, "error_queue", |queues| {
        let Some(queues) = queues else { return Ok(()) };
        for (i, q) in queues.items()?.iter().enumerate() {
            let path = format!("{}[{i}]", queues.path);
            let qa = At {
                node: q,
                path: &path,
            };
            let mut messages = Vec::new();
            let (mut query, mut default) = (None, None);
            for (k, v) in qa.entries()? {
                let vp = join(qa.path, k);
                let text = At { node: v, path: &vp }.text()?;
                match k.as_str() {
                    "q" => query = Some(to_bytes(text)),
                    "default" => default = Some(to_bytes(text)),
                    "strict" => {}
                    _ => messages.push((k.clone(), to_bytes(text))),
                }
            }
            let query = query.ok_or_else(|| qa.err("has no `q` key"))?;
            let default = default.ok_or_else(|| {
                qa.err("has no `default` key (the answer when the queue is empty)")
            })?;
            let queue = ErrorQueue {
                messages,
                default,
                queue: Default::default(),
            };
            match d.queue_keys.get(&query) {
                Some(&i) => d.queues[i] = queue,
                None => {
                    d.queue_keys.insert(query, d.queues.len());
                    d.queues.push(queue);
                }
            }
        }
        Ok(())
    })
}

/// The `eom` entry for `interface` (`"GPIB INSTR"`): (query, response)
/// terminations; LF and LF when there is none, as in pyvisa-sim.
fn eom(at: Option<At<'_>>, interface: &str) -> Result<(Vec<u8>, Vec<u8>), DeviceFileError> {
    let mut found = None;
    let want = interface.split_once(' ');
    if let Some(at) = at {
        for (k, v) in at.entries()? {
            let path = join(at.path, k);
            let va = At {
                node: v,
                path: &path,
            };
            let Some((it, class)) = k.split_once(' ').filter(|(_, c)| !c.contains(' ')) else {
                return Err(va.err(
                    "an eom key is an interface type and a resource class, e.g. \"GPIB INSTR\"",
                ));
            };
            if !INTERFACES.contains(&it.to_lowercase().as_str()) {
                return Err(va.err(format!("unknown interface type {it:?}")));
            }
            let p = pair(va, &["q", "r"])?;
            let r = p[1]
                .as_deref()
                .ok_or_else(|| va.err("has no `r` key (the response termination)"))?;
            let q = p[0].as_deref().unwrap_or_default();
            if want.is_some_and(|(wi, wc)| wi.eq_ignore_ascii_case(it) && wc == class) {
                found = Some((to_bytes(q), to_bytes(r)));
            }
        }
    }
    if found.is_none() {
        log::warn!("no eom given for {interface}: using LF");
    }
    Ok(found.unwrap_or_else(|| (b"\n".to_vec(), b"\n".to_vec())))
}

fn channel_group(
    name: &str,
    at: At<'_>,
    override_ids: Option<Vec<String>>,
    device_props: &[Property],
) -> Result<Channels, DeviceFileError> {
    at.entries()?;
    let ids = match override_ids {
        Some(ids) if !ids.is_empty() => ids,
        _ => child(at, "ids", id_list)?,
    };
    let can_select = child(at, "can_select", |c| {
        Ok(c.and_then(|c| c.node.as_str()) != Some("False"))
    })?;
    if !can_select && !device_props.iter().any(|p| p.name == "selected_channel") {
        return Err(at.err(format!(
            "channel group {name:?} has can_select: False, so the device needs a \
             `selected_channel` property (pyvisa-sim raises on every unknown query otherwise)"
        )));
    }
    let c = component(at, true)?;
    let mut by_id = Vec::new();
    for id in &ids {
        let mut dk = HashMap::new();
        for (text, i) in &c.dialogue_text {
            let k =
                render_ch_id(text, id).map_err(|e| at.err(format!("dialogue {text:?}: {e}")))?;
            dk.insert(to_bytes(&k), *i);
        }
        let mut gk = HashMap::new();
        for (text, i) in &c.getter_text {
            let k = render_ch_id(text, id).map_err(|e| at.err(format!("getter {text:?}: {e}")))?;
            gk.insert(to_bytes(&k), *i);
        }
        by_id.push((dk, gk));
    }
    Ok(Channels {
        ids,
        can_select,
        selected: None,
        dialogues: c.dialogues,
        dialogue_keys: c.dialogue_keys,
        getters: c.getters,
        getter_keys: c.getter_keys,
        by_id,
        properties: c
            .props
            .into_iter()
            .map(|(_, default, specs)| ChannelProperty {
                default,
                values: HashMap::new(),
                specs,
            })
            .collect(),
        setters: c.setters,
    })
}

pub(crate) fn id_list(c: Option<At<'_>>) -> Result<Vec<String>, DeviceFileError> {
    let Some(c) = c else { return Ok(Vec::new()) };
    if !At::truthy(Some(c.node)) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for (i, item) in c.items()?.iter().enumerate() {
        let path = format!("{}[{i}]", c.path);
        out.push(
            At {
                node: item,
                path: &path,
            }
            .text()?
            .to_string(),
        );
    }
    Ok(out)
}

/// Builds the device `name` (at `at`, a `devices` entry) as `get_device` does, with
/// the eom of `interface` and, per channel group, ids from the resource.
pub(crate) fn build_device(
    name: &str,
    at: At<'_>,
    interface: &str,
    channel_ids: &HashMap<String, Vec<String>>,
) -> Result<Device, DeviceFileError> {
    at.entries()?;
    let delimiter = child(at, "delimiter", |c| match c {
        None => Ok(b";".to_vec()),
        Some(c) => Ok(c.text()?.as_bytes().to_vec()),
    })?;
    if At::truthy(at.node.get("bases")) {
        return Err(invalid(
            at.node.get("bases").map_or(at.node.mark, |b| b.mark),
            &join(at.path, "bases"),
            "`bases` is not implemented by pyvisa-sim",
        ));
    }
    let (query_eom, response_eom) = child(at, "eom", |c| eom(c, interface))?;
    let mut d = Device {
        name: name.to_string(),
        delimiter,
        query_eom,
        response_eom,
        dialogues: Vec::new(),
        dialogue_keys: HashMap::new(),
        getters: Vec::new(),
        getter_keys: HashMap::new(),
        properties: Vec::new(),
        setters: Vec::new(),
        registers: Vec::new(),
        register_keys: HashMap::new(),
        error_registers: HashMap::new(),
        queues: Vec::new(),
        queue_keys: HashMap::new(),
        command_error: None,
        channels: Vec::new(),
        rng: Rng::default(),
    };
    child(at, "error", |c| error_handler(c, &mut d))?;
    let c = component(at, false)?;
    d.dialogues = c.dialogues;
    d.dialogue_keys = c.dialogue_keys;
    d.getters = c.getters;
    d.getter_keys = c.getter_keys;
    d.setters = c.setters;
    d.properties = c
        .props
        .into_iter()
        .map(|(name, value, specs)| Property { name, value, specs })
        .collect();
    child(at, "channels", |chs| {
        let Some(chs) = chs else { return Ok(()) };
        if !At::truthy(Some(chs.node)) {
            return Ok(());
        }
        for (ch_name, node) in chs.entries()? {
            let path = join(chs.path, ch_name);
            let group = channel_group(
                ch_name,
                At { node, path: &path },
                channel_ids.get(ch_name).cloned(),
                &d.properties,
            )?;
            d.channels.push(group);
        }
        Ok(())
    })?;
    Ok(d)
}
