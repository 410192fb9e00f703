//! `gpib-diag trace print`: a trace decoded like a bus analyzer's listing.

use std::fmt::Write as _;

use gpib::trace::format::status;
use gpib::trace::{Call, Line, Record, Transfer};
use gpib::{CommandDecoder, InterfaceMessage};
use serde_json::{json, Value};

use super::input::{self, emit};
use super::{Kind, PrintArgs, TraceFormat};
use crate::error::Result;

/// How an interface message reads in a listing: `UNL`, `TAD 11`, `LAD 21`, `SAD 3`.
pub fn message_text(m: InterfaceMessage) -> String {
    match m {
        InterfaceMessage::Talk(a) => format!("TAD {a}"),
        InterfaceMessage::Listen(a) => format!("LAD {a}"),
        InterfaceMessage::Secondary(s) => format!("SAD {s}"),
        m => m.to_string(),
    }
}

/// The record's kind for `--kind`.
fn kind(r: &Record<'_>) -> Option<Kind> {
    Some(match r {
        Record::Transfer(t) if t.is_command() => Kind::Command,
        Record::Transfer(t) if t.is_serial_poll() => Kind::Poll,
        Record::Transfer(_) => Kind::Data,
        Record::Line(l) if l.line == Line::Srq => Kind::Srq,
        Record::Line(_) => Kind::Line,
        Record::Error(_) => Kind::Error,
        Record::Call(_) => Kind::Call,
        Record::Unknown { .. } => return None,
    })
}

/// The command bytes' messages, decoded in order.
fn messages(bytes: &[u8]) -> Vec<InterfaceMessage> {
    let mut d = CommandDecoder::new();
    bytes.iter().map(|&b| d.next_message(b)).collect()
}

/// Whether `r` concerns device `a`.
fn concerns(r: &Record<'_>, a: u8) -> bool {
    match r {
        Record::Transfer(t) if t.is_command() => messages(&t.bytes).iter().any(|m| {
            matches!(m, InterfaceMessage::Talk(x) | InterfaceMessage::Listen(x) if x.get() == a)
        }),
        Record::Transfer(t) => t.talker == a || t.listeners & (1 << a) != 0,
        Record::Call(c) => c.device == Some(a),
        Record::Line(_) | Record::Error(_) | Record::Unknown { .. } => false,
    }
}

/// The `--from`/`--to` window, ns, both ends included.
#[derive(Debug, Clone, Copy)]
struct Range {
    from: u64,
    to: u64,
}

impl Range {
    fn holds(self, t: u64) -> bool {
        (self.from..=self.to).contains(&t)
    }
}

/// When command byte `i` of `t` went out (its cycle's start), as the listing shows it.
fn byte_time(t: &Transfer<'_>, i: usize) -> u64 {
    t.first_ns
        .saturating_add(t.byte_ns.saturating_mul(i as u64))
}

/// The times the listing shows for `r`, one per line of it: each command message at
/// its byte, a data or poll transfer at its first byte, a call at its start.
fn shown_times<'r>(r: &'r Record<'_>) -> Box<dyn Iterator<Item = u64> + 'r> {
    match r {
        Record::Transfer(t) if t.is_command() && !t.bytes.is_empty() => {
            Box::new((0..t.bytes.len()).map(move |i| byte_time(t, i)))
        }
        Record::Transfer(t) => Box::new(std::iter::once(t.first_ns)),
        other => Box::new(other.start_ns().into_iter()),
    }
}

/// Runs the command.
pub fn run(a: &PrintArgs) -> Result<()> {
    let mut reader = input::open(&a.file)?;
    let header = reader.header().clone();
    let mut text = String::new();
    // JSON is written as it goes too: the document's records one at a time.
    let mut json_count = 0u64;
    let clock = header.clock.name();
    if a.format == TraceFormat::Json {
        let _ = write!(
            text,
            "{{\n  \"clock\": {},\n  \"label\": {},\n  \"records\": [",
            json!(clock),
            json!(header.label)
        );
    }
    if a.format == TraceFormat::Text {
        let _ = writeln!(
            text,
            "# {} ({} clock)\n# {:>14} {:>12}  board  event",
            header.label, clock, "time (us)", "took (us)"
        );
    }
    while let Some(r) = reader
        .next_record()
        .map_err(|e| input::input(&a.file, e.to_string()))?
    {
        let Some(k) = kind(&r) else { continue };
        if !a.kind.is_empty() && !a.kind.contains(&k) {
            continue;
        }
        if a.device.is_some_and(|d| !concerns(&r, d)) {
            continue;
        }
        let range = Range {
            from: a.from.unwrap_or(0),
            to: a.to.unwrap_or(u64::MAX),
        };
        // Filtered by the times the listing shows (a command's messages each at its
        // own byte), not by when the call began.
        if !shown_times(&r).any(|t| range.holds(t)) {
            continue;
        }
        match a.format {
            TraceFormat::Text => text_record(&mut text, &r, a.max_bytes, range),
            TraceFormat::Json => {
                json_element(&mut text, &json_record(&r, a.max_bytes), json_count);
                json_count += 1;
            }
        }
        if text.len() > 1 << 20 {
            emit(&text)?;
            text.clear();
        }
    }
    if a.format == TraceFormat::Json {
        text.push_str(if json_count == 0 {
            "]\n}\n"
        } else {
            "\n  ]\n}\n"
        });
    }
    emit(&text)
}

/// Appends element `index` of the records array, pretty-printed at its depth (as
/// `serde_json::to_string_pretty` prints the whole document).
fn json_element(out: &mut String, v: &Value, index: u64) {
    out.push_str(if index == 0 { "\n" } else { ",\n" });
    let pretty = serde_json::to_string_pretty(v).unwrap_or_default();
    for (i, line) in pretty.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("    ");
        out.push_str(line);
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn head(out: &mut String, at: u64, took: Option<u64>, board: u16) {
    let took = took.map_or_else(String::new, |d| format!("{:.3}", us(d)));
    let _ = write!(out, "{:>16.3} {took:>12}  {board:>5}  ", us(at));
}

/// Hex and ASCII, 16 bytes a line.
fn dump(out: &mut String, bytes: &[u8], max: usize, end: bool) {
    let shown = if max == 0 {
        bytes.len()
    } else {
        bytes.len().min(max)
    };
    for (i, chunk) in bytes[..shown].chunks(16).enumerate() {
        let _ = write!(out, "{:>39}{:06x}  ", "", i * 16);
        for b in chunk {
            let _ = write!(out, "{b:02x} ");
        }
        for _ in chunk.len()..16 {
            out.push_str("   ");
        }
        out.push(' ');
        out.extend(chunk.iter().map(|&b| {
            if (0x20..0x7F).contains(&b) {
                b as char
            } else {
                '.'
            }
        }));
        let last = (i + 1) * 16 >= shown;
        if last && end && shown == bytes.len() {
            out.push_str("  END");
        }
        out.push('\n');
    }
    if shown < bytes.len() {
        let _ = writeln!(
            out,
            "{:>39}... {} more bytes{}",
            "",
            bytes.len() - shown,
            if end { ", END" } else { "" }
        );
    }
}

fn text_record(out: &mut String, r: &Record<'_>, max: usize, range: Range) {
    match r {
        Record::Transfer(t) if t.is_command() => {
            let mut first = true;
            for (i, m) in messages(&t.bytes).into_iter().enumerate() {
                let at = byte_time(t, i);
                if !range.holds(at) {
                    continue;
                }
                // The operation's duration on its first line shown.
                head(
                    out,
                    at,
                    std::mem::take(&mut first).then(|| t.end_ns.saturating_sub(t.start_ns)),
                    t.board,
                );
                let _ = writeln!(
                    out,
                    "ATN {}{}",
                    message_text(m),
                    if t.incomplete() {
                        "  (not accepted)"
                    } else {
                        ""
                    }
                );
            }
        }
        Record::Transfer(t) if t.is_serial_poll() => {
            head(
                out,
                t.first_ns,
                Some(t.end_ns.saturating_sub(t.start_ns)),
                t.board,
            );
            let stb = t.bytes.first().copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "POLL {}: status 0x{stb:02x}{}",
                t.talker,
                if stb & 0x40 != 0 { " RQS" } else { "" }
            );
        }
        Record::Transfer(t) => data_line(out, t, max),
        Record::Line(l) => {
            head(
                out,
                l.at_ns,
                (l.line == Line::Ifc).then(|| l.end_ns.saturating_sub(l.at_ns)),
                l.board,
            );
            let _ = writeln!(
                out,
                "{} {}",
                l.line.name(),
                if l.line == Line::Ifc {
                    "pulse"
                } else if l.asserted {
                    "asserted"
                } else {
                    "released"
                }
            );
        }
        Record::Error(e) => {
            head(out, e.at_ns, None, e.board);
            let _ = writeln!(
                out,
                "ERROR {}: {}",
                gpib::trace::format::error_kind_name(e.kind),
                e.text
            );
        }
        Record::Call(c) => call_line(out, c),
        Record::Unknown { .. } => {}
    }
}

fn listeners(t: &Transfer<'_>) -> String {
    t.listener_addresses()
        .map(|a| a.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn data_line(out: &mut String, t: &Transfer<'_>, max: usize) {
    head(
        out,
        t.first_ns,
        Some(t.end_ns.saturating_sub(t.start_ns)),
        t.board,
    );
    let _ = writeln!(
        out,
        "DATA {} -> {}  {} bytes at {} ns/byte{}{}",
        t.talker,
        listeners(t),
        t.bytes.len(),
        t.byte_ns,
        if t.end() { "  END" } else { "" },
        if t.incomplete() {
            "  (stopped early)"
        } else {
            ""
        }
    );
    dump(out, &t.bytes, max, t.end());
}

/// `CMPL END` from status bits.
pub fn status_text(st: u16) -> String {
    let mut v = Vec::new();
    for (bit, name) in [
        (status::ERR, "ERR"),
        (status::TIMO, "TIMO"),
        (status::END, "END"),
        (status::SRQI, "SRQI"),
        (status::CMPL, "CMPL"),
    ] {
        if st & bit != 0 {
            v.push(name);
        }
    }
    v.join(" ")
}

fn call_line(out: &mut String, c: &Call<'_>) {
    head(out, c.start_ns, Some(c.duration_ns), c.board);
    let dev = c.device.map_or_else(String::new, |d| match c.secondary {
        Some(s) => format!("{d},{s}"),
        None => d.to_string(),
    });
    let _ = write!(
        out,
        "CALL {}({dev}) -> {} count={}",
        c.op.name(),
        status_text(c.status),
        c.count
    );
    if let Some(k) = c.error {
        let _ = write!(
            out,
            " error={}: {}",
            gpib::trace::format::error_kind_name(k),
            c.message
        );
    }
    out.push('\n');
}

fn hex(bytes: &[u8], max: usize) -> String {
    let shown = if max == 0 {
        bytes.len()
    } else {
        bytes.len().min(max)
    };
    let mut s = String::with_capacity(shown * 2);
    for b in &bytes[..shown] {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn json_record(r: &Record<'_>, max: usize) -> Value {
    match r {
        Record::Transfer(t) => {
            let kind = if t.is_command() {
                "command"
            } else if t.is_serial_poll() {
                "poll"
            } else {
                "data"
            };
            let mut v = json!({
                "kind": kind,
                "board": t.board,
                "start_ns": t.start_ns,
                "ready_ns": t.ready_ns,
                "first_byte_ns": t.first_ns,
                "byte_ns": t.byte_ns,
                "end_ns": t.end_ns,
                "t1_ns": t.t1_ns,
                "accept_ns": t.accept_ns,
                "talker": t.talker,
                "listeners": t.listener_addresses().collect::<Vec<_>>(),
                "count": t.bytes.len(),
                "end": t.end(),
                "incomplete": t.incomplete(),
                "bytes_hex": hex(&t.bytes, max),
            });
            if t.is_command() {
                v["messages"] = json!(messages(&t.bytes)
                    .into_iter()
                    .map(message_text)
                    .collect::<Vec<_>>());
            }
            v
        }
        Record::Line(l) => json!({
            "kind": if l.line == Line::Srq { "srq" } else { "line" },
            "board": l.board,
            "line": l.line.name(),
            "asserted": l.asserted,
            "start_ns": l.at_ns,
            "end_ns": l.end_ns,
        }),
        Record::Error(e) => json!({
            "kind": "error",
            "board": e.board,
            "start_ns": e.at_ns,
            "error": gpib::trace::format::error_kind_name(e.kind),
            "text": e.text,
        }),
        Record::Call(c) => json!({
            "kind": "call",
            "board": c.board,
            "op": c.op.name(),
            "device": c.device,
            "secondary": c.secondary,
            "status": c.status,
            "status_text": status_text(c.status),
            "error": c.error.map(gpib::trace::format::error_kind_name),
            "message": c.message,
            "start_ns": c.start_ns,
            "duration_ns": c.duration_ns,
            "count": c.count,
            "requested": c.requested,
            "eoi": c.eoi,
            "bytes_hex": hex(&c.data, max),
        }),
        Record::Unknown { tag, len } => json!({ "kind": "unknown", "tag": tag, "len": len }),
    }
}
