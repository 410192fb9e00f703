//! A device as pyvisa-sim runs it: dialogues, properties with getters and setters,
//! status registers, error queues and channels, matched in pyvisa-sim's order, and
//! the answers it gives, byte for byte.
//!
//! A program message (what arrived up to the query termination) is split at the
//! delimiter (`;`), and each query is matched in turn against: the dialogues, the
//! getters, the status-register queries, the error-queue queries, the setters (in
//! file order), then each channel group. A query nothing matches is a
//! `command_error`: it sets the status-register bits and queues the error-queue
//! entry named `command_error`, and is answered with the error response when the
//! file gives one. Every answer is followed by the response termination.

use std::collections::{HashMap, VecDeque};

use super::format::ValueTemplate;
use super::pattern::SetterPattern;
use super::random::{is_random, RandomSpec, Rng};
use super::value::{PyType, PyValue};

/// Most entries an error queue holds; later errors are dropped. (pyvisa-sim's
/// queues have no limit.)
pub const MAX_ERROR_QUEUE: usize = 1000;
/// Most channel ids a channel group keeps values for (a setter may name any id).
pub const MAX_CHANNEL_VALUES: usize = 256;

/// What a dialogue answers.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// Nothing (a dialogue without `r`).
    Silent,
    /// These bytes.
    Bytes(Vec<u8>),
    /// A `RANDOM` answer.
    Random(RandomSpec),
    /// pyvisa-sim raises when answering this (the reason).
    Raises(String),
}

impl Reply {
    /// A dialogue's response text (after pyvisa-sim's `\r`/`\n` replacement).
    pub(crate) fn dialogue(text: Option<String>) -> Self {
        match text {
            None => Self::Silent,
            Some(t) if is_random(&t) => match RandomSpec::parse(&t) {
                Ok(r) => Self::Random(r),
                Err(why) => Self::Raises(why),
            },
            Some(t) => Self::Bytes(t.into_bytes()),
        }
    }
}

/// What a getter answers.
#[derive(Debug, Clone)]
pub(crate) enum GetterReply {
    /// The property's value through this template.
    Value(ValueTemplate),
    /// A `RANDOM` answer.
    Random(RandomSpec),
    /// pyvisa-sim raises when answering this.
    Raises(String),
}

/// The `specs` of a property.
#[derive(Debug, Clone)]
pub(crate) struct Specs {
    pub ty: PyType,
    pub min: Option<PyValue>,
    pub max: Option<PyValue>,
    pub valid: Vec<PyValue>,
}

impl Specs {
    /// pyvisa-sim's `validate_value`: the value converted to the type, within
    /// min/max and among the valid ones; `None` for its `ValueError`.
    pub(crate) fn validate(&self, v: &PyValue) -> Option<PyValue> {
        let v = self.ty.convert(v)?;
        use std::cmp::Ordering::{Greater, Less};
        if let Some(min) = &self.min {
            if v.py_cmp(min) == Some(Less) {
                return None;
            }
        }
        if let Some(max) = &self.max {
            if v.py_cmp(max) == Some(Greater) {
                return None;
            }
        }
        if !self.valid.is_empty() && !self.valid.contains(&v) {
            return None;
        }
        Some(v)
    }
}

/// `validate_value` with optional specs: without them any value is kept as it is.
pub(crate) fn validate(specs: Option<&Specs>, v: &PyValue) -> Option<PyValue> {
    match specs {
        None => Some(v.clone()),
        Some(s) => s.validate(v),
    }
}

/// A setter: its pattern, the property it sets, its response and error response.
#[derive(Debug, Clone)]
pub(crate) struct Setter {
    pub property: usize,
    pub pattern: SetterPattern,
    pub response: Option<Vec<u8>>,
    pub error: Option<Vec<u8>>,
}

/// A device property.
#[derive(Debug, Clone)]
pub(crate) struct Property {
    pub name: String,
    pub value: PyValue,
    pub specs: Option<Specs>,
}

/// A status register (`error: status_register`): the bits each error sets.
#[derive(Debug, Clone)]
pub(crate) struct Register {
    pub bits: Vec<(String, i128)>,
    pub value: i128,
}

/// An error queue (`error: error_queue`).
#[derive(Debug, Clone)]
pub(crate) struct ErrorQueue {
    pub messages: Vec<(String, Vec<u8>)>,
    pub default: Vec<u8>,
    pub queue: VecDeque<Vec<u8>>,
}

/// A property of a channel group: a value per channel id.
#[derive(Debug, Clone)]
pub(crate) struct ChannelProperty {
    pub default: PyValue,
    pub values: HashMap<Option<String>, PyValue>,
    pub specs: Option<Specs>,
}

/// Keys to dialogue (or getter) indices.
pub(crate) type Keys = HashMap<Vec<u8>, usize>;

/// What answers a query the file does not: `None` when nothing does, `Some(None)`
/// for no answer, `Some(Some(bytes))` for an answer.
pub type Extra<'a> = dyn FnMut(&[u8]) -> Option<Option<Vec<u8>>> + 'a;

/// A channel group (`channels: name: {ids, can_select, ...}`).
#[derive(Debug, Clone)]
pub(crate) struct Channels {
    pub ids: Vec<String>,
    pub can_select: bool,
    /// The channel being matched or last selected (pyvisa-sim's `_selected`).
    pub selected: Option<String>,
    pub dialogues: Vec<Reply>,
    pub dialogue_keys: HashMap<Vec<u8>, usize>,
    pub getters: Vec<(usize, GetterReply)>,
    pub getter_keys: HashMap<Vec<u8>, usize>,
    /// Per id: the dialogue and getter keys with `{ch_id}` filled in.
    pub by_id: Vec<(Keys, Keys)>,
    pub properties: Vec<ChannelProperty>,
    pub setters: Vec<Setter>,
}

/// A query's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Nothing matched.
    Unmatched,
    /// Matched, nothing to answer.
    Silent,
    /// These bytes (without the termination).
    Bytes(Vec<u8>),
    /// pyvisa-sim raises here: the rest of the message is dropped.
    Raises(String),
}

/// A device built from a file.
#[derive(Debug, Clone)]
pub struct Device {
    pub(crate) name: String,
    pub(crate) delimiter: Vec<u8>,
    pub(crate) query_eom: Vec<u8>,
    pub(crate) response_eom: Vec<u8>,
    pub(crate) dialogues: Vec<Reply>,
    pub(crate) dialogue_keys: HashMap<Vec<u8>, usize>,
    pub(crate) getters: Vec<(usize, GetterReply)>,
    pub(crate) getter_keys: HashMap<Vec<u8>, usize>,
    pub(crate) properties: Vec<Property>,
    pub(crate) setters: Vec<Setter>,
    pub(crate) registers: Vec<Register>,
    pub(crate) register_keys: HashMap<Vec<u8>, usize>,
    pub(crate) error_registers: HashMap<String, usize>,
    pub(crate) queues: Vec<ErrorQueue>,
    pub(crate) queue_keys: HashMap<Vec<u8>, usize>,
    pub(crate) command_error: Option<Vec<u8>>,
    pub(crate) channels: Vec<Channels>,
    pub(crate) rng: Rng,
}

fn answer_random(r: &RandomSpec, rng: &mut Rng) -> Answer {
    match r.answer(rng) {
        Ok(s) => Answer::Bytes(s.into_bytes()),
        Err(why) => Answer::Raises(why),
    }
}

fn answer_dialogue(reply: &Reply, rng: &mut Rng) -> Answer {
    match reply {
        Reply::Silent => Answer::Silent,
        Reply::Bytes(b) => Answer::Bytes(b.clone()),
        Reply::Random(r) => answer_random(r, rng),
        Reply::Raises(why) => Answer::Raises(why.clone()),
    }
}

fn answer_getter(reply: &GetterReply, value: &PyValue, rng: &mut Rng) -> Answer {
    match reply {
        GetterReply::Value(t) => match t.render(value) {
            Ok(s) => Answer::Bytes(s.into_bytes()),
            Err(e) => Answer::Raises(format!("{e} (the value is a {})", value.type_name())),
        },
        GetterReply::Random(r) => answer_random(r, rng),
        GetterReply::Raises(why) => Answer::Raises(why.clone()),
    }
}

fn set_answer(response: &Option<Vec<u8>>) -> Answer {
    match response {
        Some(b) => Answer::Bytes(b.clone()),
        None => Answer::Silent,
    }
}

impl Device {
    /// The device's name in its file.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The query termination: a message is complete when the input ends with it.
    pub fn query_termination(&self) -> &[u8] {
        &self.query_eom
    }

    /// The response termination appended to every answer.
    pub fn response_termination(&self) -> &[u8] {
        &self.response_eom
    }

    /// True when some error queue holds an error.
    pub fn error_pending(&self) -> bool {
        self.queues.iter().any(|q| !q.queue.is_empty())
    }

    /// The value of the property `name` (as `str()` gives it), for tests.
    pub fn property(&self, name: &str) -> Option<String> {
        self.properties
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.value.to_py_str())
    }

    /// Runs one program message (without its termination). `extra` answers what
    /// the file does not (our additions, such as `*SRE`): it is asked before a
    /// query counts as a command error. Returns the answers, each with the response
    /// termination, and the reason the message stopped early, if it did.
    pub fn message(&mut self, msg: &[u8], extra: &mut Extra<'_>) -> (Vec<Vec<u8>>, Option<String>) {
        let queries: Vec<Vec<u8>> = if self.delimiter.is_empty() {
            vec![msg.to_vec()]
        } else {
            split(msg, &self.delimiter)
        };
        let mut out = Vec::new();
        for q in queries {
            let reply = match self.query(&q) {
                Answer::Unmatched => match extra(&q) {
                    Some(r) => r,
                    None => self.error_response("command_error"),
                },
                Answer::Silent => None,
                Answer::Bytes(b) => Some(b),
                Answer::Raises(why) => return (out, Some(why)),
            };
            if let Some(mut b) = reply {
                b.extend_from_slice(&self.response_eom);
                out.push(b);
            }
        }
        (out, None)
    }

    /// Matches one query the way pyvisa-sim's `Device._match` does.
    pub(crate) fn query(&mut self, q: &[u8]) -> Answer {
        if let Some(&i) = self.dialogue_keys.get(q) {
            return answer_dialogue(&self.dialogues[i], &mut self.rng);
        }
        if let Some(&i) = self.getter_keys.get(q) {
            let (p, reply) = &self.getters[i];
            return answer_getter(reply, &self.properties[*p].value, &mut self.rng);
        }
        if let Some(&i) = self.register_keys.get(q) {
            let r = &mut self.registers[i];
            let v = std::mem::take(&mut r.value);
            return Answer::Bytes(v.to_string().into_bytes());
        }
        if let Some(&i) = self.queue_keys.get(q) {
            let queue = &mut self.queues[i];
            let v = queue
                .queue
                .pop_front()
                .unwrap_or_else(|| queue.default.clone());
            return Answer::Bytes(v);
        }
        let Ok(text) = std::str::from_utf8(q) else {
            return Answer::Raises("the query is not UTF-8 text".into());
        };
        for s in &self.setters {
            let Some(parsed) = s.pattern.parse(text) else {
                continue;
            };
            let prop = &mut self.properties[s.property];
            match parsed.value.and_then(|v| validate(prop.specs.as_ref(), &v)) {
                Some(v) => {
                    prop.value = v;
                    return set_answer(&s.response);
                }
                // Without an error response, pyvisa-sim tries the next setter.
                None => {
                    if let Some(e) = &s.error {
                        return Answer::Bytes(e.clone());
                    }
                }
            }
        }
        for c in 0..self.channels.len() {
            match self.channel_query(c, q, text) {
                // pyvisa-sim moves on when a channel answers nothing or b"".
                Answer::Unmatched => {}
                Answer::Bytes(b) if b.is_empty() => {}
                other => return other,
            }
        }
        Answer::Unmatched
    }

    fn selected_channel(&self) -> Option<PyValue> {
        self.properties
            .iter()
            .find(|p| p.name == "selected_channel")
            .map(|p| p.value.clone())
    }

    fn channel_query(&mut self, c: usize, q: &[u8], text: &str) -> Answer {
        if !self.channels[c].can_select {
            let selected = self.selected_channel();
            let ch = &mut self.channels[c];
            match selected {
                Some(PyValue::Str(id)) if ch.ids.contains(&id) => ch.selected = Some(id),
                _ => return Answer::Unmatched,
            }
            if let Some(&i) = ch.dialogue_keys.get(q) {
                return answer_dialogue(&ch.dialogues[i], &mut self.rng);
            }
            if let Some(&i) = ch.getter_keys.get(q) {
                let (p, reply) = &ch.getters[i];
                let v = channel_value(&mut ch.properties[*p], &ch.selected);
                return answer_getter(reply, &v, &mut self.rng);
            }
        } else {
            let ch = &mut self.channels[c];
            for (k, id) in ch.ids.iter().enumerate() {
                ch.selected = Some(id.clone());
                let (dk, gk) = &ch.by_id[k];
                if let Some(&i) = dk.get(q) {
                    return answer_dialogue(&ch.dialogues[i], &mut self.rng);
                }
                if let Some(&i) = gk.get(q) {
                    let (p, reply) = &ch.getters[i];
                    let v = channel_value(&mut ch.properties[*p], &ch.selected);
                    return answer_getter(reply, &v, &mut self.rng);
                }
            }
        }
        self.channel_setters(c, text)
    }

    fn channel_setters(&mut self, c: usize, text: &str) -> Answer {
        let ch = &mut self.channels[c];
        for s in &ch.setters {
            let Some(parsed) = s.pattern.parse(text) else {
                continue;
            };
            if let Some(id) = parsed.ch_id {
                ch.selected = Some(id);
            }
            let prop = &mut ch.properties[s.property];
            // A channel setter stores str(value) before validating it.
            let v = parsed
                .value
                .map(|v| PyValue::Str(v.to_py_str()))
                .and_then(|v| validate(prop.specs.as_ref(), &v));
            let room =
                prop.values.len() < MAX_CHANNEL_VALUES || prop.values.contains_key(&ch.selected);
            match v {
                Some(v) if room => {
                    prop.values.insert(ch.selected.clone(), v);
                    return set_answer(&s.response);
                }
                _ => {
                    if let Some(e) = &s.error {
                        return Answer::Bytes(e.clone());
                    }
                    return match self.error_response("command_error") {
                        Some(b) => Answer::Bytes(b),
                        None => Answer::Silent,
                    };
                }
            }
        }
        Answer::Unmatched
    }

    /// `error_response(key)`: sets the register bits and queues the error-queue
    /// entry that `key` names, and gives the error response, if any.
    pub(crate) fn error_response(&mut self, key: &str) -> Option<Vec<u8>> {
        if let Some(&r) = self.error_registers.get(key) {
            let reg = &mut self.registers[r];
            if let Some((_, bit)) = reg.bits.iter().find(|(k, _)| k == key) {
                reg.value |= *bit;
            }
        }
        for q in &mut self.queues {
            if let Some((_, m)) = q.messages.iter().find(|(k, _)| k == key) {
                if q.queue.len() < MAX_ERROR_QUEUE {
                    q.queue.push_back(m.clone());
                }
            }
        }
        match key {
            "command_error" => self.command_error.clone(),
            _ => None,
        }
    }
}

/// A channel property's value for `selected`, the default if it was never set.
fn channel_value(p: &mut ChannelProperty, selected: &Option<String>) -> PyValue {
    p.values
        .get(selected)
        .cloned()
        .unwrap_or_else(|| p.default.clone())
}

/// `msg.split(delimiter)` as Python splits bytes.
fn split(msg: &[u8], delim: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + delim.len() <= msg.len() {
        if &msg[i..i + delim.len()] == delim {
            out.push(msg[start..i].to_vec());
            i += delim.len();
            start = i;
        } else {
            i += 1;
        }
    }
    out.push(msg[start..].to_vec());
    out
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_like_python_bytes() {
        assert_eq!(
            split(b"a;b;", b";"),
            vec![b"a".to_vec(), b"b".to_vec(), vec![]]
        );
        assert_eq!(split(b"", b";"), vec![Vec::<u8>::new()]);
        assert_eq!(split(b"a::b", b"::"), vec![b"a".to_vec(), b"b".to_vec()]);
    }
}
