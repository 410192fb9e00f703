//! A generic IEEE 488.2 / SCPI instrument: common commands, status reporting with SRQ,
//! an error queue, a measurement, and binary blocks (a waveform, raw data).
//!
//! | command | answer or effect |
//! |---|---|
//! | `*IDN?` | identity (configurable) |
//! | `*RST`, `*CLS`, `*WAI` | reset settings; clear status and error queue; no-op |
//! | `*ESE n`, `*ESE?`, `*ESR?` | standard event status enable / register (read clears) |
//! | `*SRE n`, `*SRE?`, `*STB?` | service request enable; status byte with MSS |
//! | `*OPC`, `*OPC?` | set OPC in the ESR, answer `1`: when the measurement in progress ends |
//! | `*TRG` (or GET) | take a reading and queue it (MAV; SRQ when `*SRE 16`) |
//! | `INIT`, `FETCH?` | start a measurement; answer the last reading |
//! | `VOLT:APER s`, `VOLT:APER?` | the measurement time (seconds; 0: readings at once) |
//! | `SYST:ERR?` | oldest error `<code>,"<text>"`, or `0,"No error"` |
//! | `MEAS:VOLT?`, `READ?` | a reading, ASCII (`+1.23456789E+00`), after the measurement time |
//! | `WAV:POIN n`, `WAV:POIN?` | waveform length in points (default 1000) |
//! | `WAV:DATA?`, `CURV?` | waveform as a definite-length block of big-endian `f32` |
//! | `BLOCK? n` | a definite-length block of n bytes (0, 1, 2, ... 255, 0, ...: 0x0A inside) |
//! | `DATA <block>`, `DATA?`, `DATA:LEN?` | store a block; answer it back; its length |
//!
//! Headers match as SCPI-99 defines it (the `header` module): long or short form
//! in any case (`MEASure:VOLTage[:DC]?` takes `MEAS:VOLT?`, `measure:voltage:dc?`),
//! optional nodes (`[SENSe:]VOLTage:APERture`, `SYSTem:ERRor[:NEXT]?`,
//! `INITiate[:IMMediate]`), a leading `:`, queries apart from commands.
//! Unknown commands push -113 "Undefined header" and set the ESR's command-error bit.
//!
//! A measurement (`READ?`, `MEAS:VOLT?`, `*TRG`, GET, `INIT`) takes the configured
//! measurement time of virtual time ([`ScpiInstrument::with_measurement_time`]): its
//! reading, a pending `*OPC?` answer and the OPC bit of a pending `*OPC` (with
//! `*ESE 1;*SRE 32`, SRQ) come when it ends. A controller that reads meanwhile waits,
//! as the handshake waits for a talker that is not ready.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

mod header;
mod measurement;
mod message;

use measurement::Measurement;

use super::status488::{Pending, Status488};
use crate::sim::instrument::{DeviceIo, Instrument};
use crate::status::StatusByte;
use header::Table;
use message::{message_end, sci, trim};

/// Longest measurement time `VOLT:APER` takes, in seconds.
pub const MAX_MEASUREMENT_S: f64 = 1000.0;
/// Largest block `BLOCK?` or `WAV:POIN` produce, and `DATA` stores (bytes).
pub const MAX_BLOCK: usize = 64 << 20;
/// Largest program message held while it arrives: a block of [`MAX_BLOCK`] and 4 KiB
/// of commands. Past it the instrument reports -223 "Too much data" and drops the rest
/// of the message, up to its END.
pub const MAX_INPUT: usize = MAX_BLOCK + 4096;
const ERROR_QUEUE: usize = 10;
/// Input capacity kept once a message has run (a longer message's is given back).
const KEEP_INPUT: usize = 4096;
/// Largest waveform kept between queries; a larger one lives only as long as
/// an answer holds it (a reader that goes away takes its memory with it).
const KEEP_SHARED: usize = 1 << 20;
/// The `BLOCK?` ramp's period as queued: a multiple of 256 (the ramp's own period),
/// long enough that reading it costs what a memcpy does.
const RAMP_PERIOD: usize = 4096;

const ESR_OPC: u8 = 0x01;
const ESR_QYE: u8 = 0x04;
const ESR_EXE: u8 = 0x10;
const ESR_CME: u8 = 0x20;

/// What a program header asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Idn,
    OpcQuery,
    Opc,
    Rst,
    Cls,
    Wai,
    EsrQuery,
    EseQuery,
    SreQuery,
    StbQuery,
    Ese,
    Sre,
    Trg,
    Init,
    FetchQuery,
    Aperture,
    ApertureQuery,
    ErrorQuery,
    MeasureQuery,
    Points,
    PointsQuery,
    WaveformQuery,
    BlockQuery,
    Data,
    DataQuery,
    DataLengthQuery,
}

/// The instrument's commands, in SCPI-99 notation (see [`header`]).
const COMMANDS: &[(&str, Command)] = &[
    ("*IDN?", Command::Idn),
    ("*OPC?", Command::OpcQuery),
    ("*OPC", Command::Opc),
    ("*RST", Command::Rst),
    ("*CLS", Command::Cls),
    ("*WAI", Command::Wai),
    ("*ESR?", Command::EsrQuery),
    ("*ESE?", Command::EseQuery),
    ("*SRE?", Command::SreQuery),
    ("*STB?", Command::StbQuery),
    ("*ESE", Command::Ese),
    ("*SRE", Command::Sre),
    ("*TRG", Command::Trg),
    ("INITiate[:IMMediate]", Command::Init),
    ("FETCh?", Command::FetchQuery),
    ("[SENSe:]VOLTage:APERture", Command::Aperture),
    ("[SENSe:]VOLTage:APERture?", Command::ApertureQuery),
    ("SYSTem:ERRor[:NEXT]?", Command::ErrorQuery),
    ("MEASure:VOLTage[:DC]?", Command::MeasureQuery),
    ("READ?", Command::MeasureQuery),
    ("WAVeform:POINts", Command::Points),
    ("WAVeform:POINts?", Command::PointsQuery),
    ("WAVeform:DATA?", Command::WaveformQuery),
    ("CURVe?", Command::WaveformQuery),
    ("BLOCK?", Command::BlockQuery),
    ("DATA", Command::Data),
    ("DATA?", Command::DataQuery),
    ("DATA:LENgth?", Command::DataLengthQuery),
];

/// [`COMMANDS`], parsed once.
fn commands() -> &'static Table<Command> {
    static TABLE: std::sync::OnceLock<Table<Command>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| Table::new(COMMANDS))
}

/// The SCPI instrument model.
#[derive(Debug)]
pub struct ScpiInstrument {
    idn: String,
    input: Vec<u8>,
    /// How far `input` was scanned for a message end (no block starts before it).
    scanned: usize,
    /// Dropping the rest of a message that exceeded [`MAX_INPUT`], up to its END.
    discarding: bool,
    /// ESR, ESE, SRE and the latched RQS.
    registers: Status488,
    errors: VecDeque<(i32, &'static str)>,
    points: usize,
    wave: Shared,
    /// One period of the `BLOCK?` ramp (byte `i` is `i as u8`), made on first use.
    ramp: Option<Arc<[u8]>>,
    data: Vec<u8>,
    readings: u64,
    triggers: u64,
    responses: usize,
    /// How long a measurement takes.
    measurement_time: Duration,
    /// What `*RST` sets it back to (the configured time).
    configured_measurement_time: Duration,
    /// The measurement in progress, if any.
    measuring: Option<Measurement>,
    /// Number of the last measurement started (its timer's token).
    measurement_no: u64,
    /// The last reading taken (`FETCH?`).
    last_reading: Option<f64>,
    /// `*OPC` waits for the measurement: set OPC when it ends.
    opc_pending: bool,
    /// `*OPC?` waits for the measurement: answer `1` when it ends.
    opc_query_pending: bool,
    /// The header last looked up and what it meant: a program that sends the same
    /// query again and again (`*IDN?`, `READ?`) skips the table.
    recent: RecentHeader,
}

impl Default for ScpiInstrument {
    fn default() -> Self {
        Self::new("SIMULATED,SCPI-DMM,0,1.0")
    }
}

impl ScpiInstrument {
    /// An instrument answering `*IDN?` with `idn`.
    pub fn new(idn: impl Into<String>) -> Self {
        Self {
            idn: idn.into(),
            input: Vec::with_capacity(256),
            scanned: 0,
            discarding: false,
            registers: Status488::default(),
            errors: VecDeque::new(),
            points: 1000,
            wave: Shared::default(),
            ramp: None,
            data: Vec::new(),
            readings: 0,
            triggers: 0,
            responses: 0,
            measurement_time: Duration::ZERO,
            configured_measurement_time: Duration::ZERO,
            measuring: None,
            measurement_no: 0,
            last_reading: None,
            opc_pending: false,
            opc_query_pending: false,
            recent: RecentHeader::default(),
        }
    }

    /// The same instrument, taking `time` of virtual time per measurement.
    pub fn with_measurement_time(mut self, time: Duration) -> Self {
        self.measurement_time = time;
        self.configured_measurement_time = time;
        self
    }

    /// The time a measurement takes.
    pub fn measurement_time(&self) -> Duration {
        self.measurement_time
    }

    /// Times it was triggered (GET or `*TRG`).
    pub fn triggers(&self) -> u64 {
        self.triggers
    }

    /// The block last stored with `DATA`.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    fn push_error(&mut self, code: i32, text: &'static str) {
        if self.errors.len() >= ERROR_QUEUE {
            if let Some(last) = self.errors.back_mut() {
                *last = (-350, "Queue overflow");
            }
        } else {
            self.errors.push_back((code, text));
        }
        self.registers.set_event(match code {
            -199..=-100 => ESR_CME,
            -299..=-200 => ESR_EXE,
            -499..=-400 => ESR_QYE,
            _ => 0,
        });
    }

    /// What is pending besides the status registers: an answer (MAV), an error (EAV).
    fn pending(&self, io: &DeviceIo<'_>) -> Pending {
        Pending {
            output: !io.output.is_empty(),
            error: !self.errors.is_empty(),
        }
    }

    fn reading(&mut self) -> f64 {
        self.readings += 1;
        1.0 + 0.001 * ((self.readings * 7919) % 1000) as f64
    }

    fn respond(&mut self, io: &mut DeviceIo<'_>, text: &str) {
        if self.responses > 0 {
            io.output.push(b";");
        }
        io.output.push_str(text);
        self.responses += 1;
    }

    fn respond_block(&mut self, io: &mut DeviceIo<'_>, body: Arc<[u8]>) {
        let n = body.len();
        self.respond_block_of(io, body, n);
    }

    /// Answers the first `n` bytes of `body` as a definite-length block, sharing
    /// `body` (no copy).
    fn respond_block_of(&mut self, io: &mut DeviceIo<'_>, body: Arc<[u8]>, n: usize) {
        let n = n.min(body.len());
        self.respond_block_with(io, n, |out| out.push_shared(body, 0..n));
    }

    /// A definite-length block of `n` bytes whose body `push_body` queues.
    fn respond_block_with(
        &mut self,
        io: &mut DeviceIo<'_>,
        n: usize,
        push_body: impl FnOnce(&mut crate::sim::instrument::Output),
    ) {
        if self.responses > 0 {
            io.output.push(b";");
        }
        let mut head = Vec::with_capacity(12);
        if crate::block::encode_header(crate::block::BlockFormat::Definite, n, &mut head).is_err() {
            // Longer than a definite-length block can say (the model's blocks are not).
            self.push_error(-223, "Too much data");
            return;
        }
        io.output.push(&head);
        push_body(io.output);
        self.responses += 1;
    }

    fn waveform(&mut self) -> Arc<[u8]> {
        let n = self.points;
        self.wave.get(
            |len| len == n * 4,
            || {
                (0..n)
                    .flat_map(|i| {
                        let x = i as f32 / n.max(1) as f32 * std::f32::consts::TAU;
                        x.sin().to_be_bytes()
                    })
                    .collect()
            },
        )
    }

    /// One period of the ramp `BLOCK?` answers, [`RAMP_PERIOD`] bytes.
    fn ramp(&mut self) -> Arc<[u8]> {
        self.ramp
            .get_or_insert_with(|| (0..RAMP_PERIOD).map(|i| i as u8).collect())
            .clone()
    }

    /// Bytes this instrument holds on to between messages: its input's capacity and
    /// the waveform and ramp it keeps or still shares with a queued answer (not
    /// `DATA`'s block, which `DATA?` must give back).
    pub fn held_bytes(&self) -> usize {
        self.input.capacity() + self.wave.held() + self.ramp.as_ref().map_or(0, |r| r.len())
    }

    /// Gives back the input's capacity past [`KEEP_INPUT`] when what it holds fits.
    fn release_input(&mut self) {
        if self.input.capacity() > KEEP_INPUT && self.input.len() <= KEEP_INPUT {
            self.input.shrink_to(KEEP_INPUT);
        }
    }

    /// Executes one program message unit (`header [args]`); `block` is a block parameter.
    fn unit(&mut self, unit: &[u8], block: Option<&[u8]>, io: &mut DeviceIo<'_>) {
        let text = trim(unit);
        if text.is_empty() {
            return;
        }
        let (head, arg) = match text.iter().position(|b| b.is_ascii_whitespace()) {
            Some(i) => (&text[..i], trim(&text[i..])),
            None => (text, &b""[..]),
        };
        self.run_unit(head, arg, block, io);
    }

    /// Executes the unit whose header is `head` (no white space) and whose
    /// parameters are `arg` (trimmed); `block` is a block parameter.
    fn run_unit(&mut self, head: &[u8], arg: &[u8], block: Option<&[u8]>, io: &mut DeviceIo<'_>) {
        let num = || -> Option<usize> { std::str::from_utf8(arg).ok()?.trim().parse().ok() };
        let command = match self.recent.get(head) {
            Some(c) => c,
            None => {
                let Some((command, _)) = commands().lookup(head) else {
                    self.push_error(-113, "Undefined header");
                    return;
                };
                self.recent.set(head, command);
                command
            }
        };
        match command {
            Command::Idn => {
                let idn = std::mem::take(&mut self.idn);
                self.respond(io, &idn);
                self.idn = idn;
            }
            Command::OpcQuery => {
                if self.measuring.is_some() {
                    self.opc_query_pending = true;
                } else {
                    self.respond(io, "1");
                }
            }
            Command::Opc => {
                if self.measuring.is_some() {
                    self.opc_pending = true;
                } else {
                    self.registers.set_event(ESR_OPC);
                }
            }
            Command::Rst => {
                self.points = 1000;
                self.data.clear();
                self.measurement_time = self.configured_measurement_time;
                self.abort_measurement();
            }
            Command::Cls => {
                self.registers.clear();
                self.errors.clear();
            }
            Command::Wai => {}
            Command::EsrQuery => {
                let v = self.registers.take_esr();
                self.respond(io, &v.to_string());
            }
            Command::EseQuery => {
                let v = self.registers.ese();
                self.respond(io, &v.to_string());
            }
            Command::SreQuery => {
                let v = self.registers.sre();
                self.respond(io, &v.to_string());
            }
            Command::StbQuery => {
                let v = self.registers.stb_query(self.pending(io));
                self.respond(io, &v.to_string());
            }
            Command::Ese | Command::Sre => match num().and_then(|n| u8::try_from(n).ok()) {
                Some(v) if command == Command::Ese => self.registers.set_ese(v),
                Some(v) => self.registers.set_sre(v),
                None => self.push_error(-224, "Illegal parameter value"),
            },
            Command::Trg => self.measure(Measurement::Trigger, io),
            Command::Init => self.measure(Measurement::Keep, io),
            Command::FetchQuery => match self.last_reading {
                Some(v) => self.respond(io, &sci(v)),
                None => self.push_error(-230, "Data corrupt or stale"),
            },
            Command::Aperture => {
                let secs = std::str::from_utf8(arg)
                    .ok()
                    .and_then(|t| t.trim().parse::<f64>().ok())
                    .filter(|s| (0.0..=MAX_MEASUREMENT_S).contains(s));
                match secs {
                    Some(s) => self.measurement_time = Duration::from_secs_f64(s),
                    None => self.push_error(-222, "Data out of range"),
                }
            }
            Command::ApertureQuery => {
                let s = self.measurement_time.as_secs_f64();
                self.respond(io, &sci(s));
            }
            Command::ErrorQuery => {
                let (c, t) = self.errors.pop_front().unwrap_or((0, "No error"));
                self.respond(io, &format!("{c},\"{t}\""));
            }
            Command::MeasureQuery => self.measure(Measurement::Answer, io),
            Command::Points => match num() {
                Some(n) if n.checked_mul(4).is_some_and(|b| b <= MAX_BLOCK) => self.points = n,
                _ => self.push_error(-222, "Data out of range"),
            },
            Command::PointsQuery => {
                let v = self.points;
                self.respond(io, &v.to_string());
            }
            Command::WaveformQuery => {
                let w = self.waveform();
                self.respond_block(io, w);
            }
            Command::BlockQuery => match num() {
                Some(n) if n <= MAX_BLOCK => {
                    // The ramp's period repeated as it is read: no buffer of the
                    // block's size, whatever the size.
                    let r = self.ramp();
                    self.respond_block_with(io, n, |out| out.push_repeating(r, n));
                }
                _ => self.push_error(-222, "Data out of range"),
            },
            Command::Data => match block {
                Some(b) => {
                    self.data.clear();
                    self.data.extend_from_slice(b);
                }
                None => self.push_error(-109, "Missing parameter"),
            },
            Command::DataQuery => {
                let d: Arc<[u8]> = Arc::from(&self.data[..]);
                self.respond_block(io, d);
            }
            Command::DataLengthQuery => {
                let n = self.data.len();
                self.respond(io, &n.to_string());
            }
        }
    }

    /// Parses and runs one whole program message (units separated by `;`, blocks
    /// inside). A new message discards an unread answer (IEEE 488.2 "query
    /// interrupted").
    /// Runs every message of `input` a NL (outside blocks) completes, and with `end`
    /// the rest as one more; returns how much of `input` ran (the rest waits for more
    /// bytes, scanned up to `self.scanned`).
    fn run_messages(&mut self, input: &[u8], end: bool, io: &mut DeviceIo<'_>) -> usize {
        let mut start = 0;
        loop {
            match message_end(&input[start..], self.scanned) {
                Ok(n) => {
                    self.run_message(&input[start..start + n], io);
                    start += n;
                    self.scanned = 0;
                }
                Err(resume) => {
                    self.scanned = resume;
                    break;
                }
            }
        }
        if end && start < input.len() {
            self.run_message(&input[start..], io);
            start = input.len();
            self.scanned = 0;
        }
        start
    }

    fn run_message(&mut self, msg: &[u8], io: &mut DeviceIo<'_>) {
        self.begin_message(io);
        let mut i = 0;
        let mut start = 0;
        while i < msg.len() {
            match msg[i] {
                b';' | b'\n' => {
                    self.unit(&msg[start..i], None, io);
                    i += 1;
                    start = i;
                }
                b'#' => {
                    let (body, next) = message::block_parameter(msg, i);
                    match body {
                        Ok(body) => self.unit(&msg[start..i], Some(body), io),
                        Err((code, text)) => self.push_error(code, text),
                    }
                    i = next;
                    start = next;
                }
                _ => i += 1,
            }
        }
        if start < msg.len() {
            self.unit(&msg[start..], None, io);
        }
        self.end_message(io);
    }

    /// A new message discards an unread answer; no answer yet.
    fn begin_message(&mut self, io: &mut DeviceIo<'_>) {
        if !io.output.is_empty() {
            io.output.clear();
            self.push_error(-410, "Query INTERRUPTED");
        }
        self.responses = 0;
    }

    /// The message's answers end with NL and END.
    fn end_message(&mut self, io: &mut DeviceIo<'_>) {
        if self.responses > 0 {
            io.output.push(b"\n");
            io.output.finish_message();
            io.executed();
        }
    }

    /// Runs `data` when it is exactly one message of one unit (no `;`, no block, a
    /// NL at its end only: `*IDN?\n`, `READ?\n`) and nothing is held over, as
    /// [`ScpiInstrument::run_messages`] would, in one pass; false (nothing done)
    /// otherwise.
    fn run_single_unit(&mut self, data: &[u8], io: &mut DeviceIo<'_>) -> bool {
        let Some((b'\n', unit)) = data.split_last() else {
            return false;
        };
        if self.scanned != 0 {
            return false;
        }
        let mut spaced = false;
        for &b in unit {
            match b {
                b'\n' | b';' | b'#' => return false,
                _ => spaced |= b.is_ascii_whitespace(),
            }
        }
        self.begin_message(io);
        if spaced || unit.is_empty() {
            self.unit(unit, None, io);
        } else {
            // A header alone (`*IDN?`): nothing to trim or split.
            self.run_unit(unit, b"", None, io);
        }
        self.end_message(io);
        true
    }
}

impl Instrument for ScpiInstrument {
    fn status_changes_with_time(&self) -> bool {
        false // its status follows its calls and its output queue
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn model(&self) -> &str {
        "SCPI"
    }

    fn listen(&mut self, data: &[u8], end: bool, io: &mut DeviceIo<'_>) {
        let before = self.registers.service_wanted(self.pending(io));
        if self.discarding {
            // The rest of a message that did not fit: dropped up to its END.
            self.discarding = !end;
        } else if self.input.len().saturating_add(data.len()) > MAX_INPUT {
            self.input.clear();
            self.scanned = 0;
            self.discarding = !end;
            self.push_error(-223, "Too much data");
        } else if self.input.is_empty() && self.run_single_unit(data, io) {
            // One whole message of one unit (the common case): run, nothing kept.
        } else if self.input.is_empty() {
            // Nothing held over: the messages run straight from `data`, and only an
            // unfinished tail is kept.
            let start = self.run_messages(data, end, io);
            self.input.extend_from_slice(&data[start..]);
        } else {
            self.input.extend_from_slice(data);
            // Every message a NL (outside blocks) completes runs as it arrives.
            let input = std::mem::take(&mut self.input);
            let start = self.run_messages(&input, end, io);
            self.input = input;
            self.input.drain(..start);
        }
        self.release_input();
        self.registers.after(before, self.pending(io));
    }

    fn clear(&mut self, io: &mut DeviceIo<'_>) {
        io.output.clear();
        self.input.clear();
        self.release_input();
        self.abort_measurement();
        self.scanned = 0;
        self.discarding = false;
    }

    fn trigger(&mut self, io: &mut DeviceIo<'_>) {
        let before = self.registers.service_wanted(self.pending(io));
        self.measure(Measurement::Trigger, io);
        self.registers.after(before, self.pending(io));
    }

    fn timer(&mut self, token: u64, io: &mut DeviceIo<'_>) {
        if token != self.measurement_no {
            return; // a measurement that was aborted
        }
        if let Some(what) = self.measuring.take() {
            let before = self.registers.service_wanted(self.pending(io));
            self.finish_measurement(what, io, true);
            self.registers.after(before, self.pending(io));
        }
    }

    fn status(&mut self, io: &DeviceIo<'_>) -> StatusByte {
        self.registers.status(self.pending(io))
    }

    fn serial_poll(&mut self, io: &DeviceIo<'_>) -> StatusByte {
        self.registers.serial_poll(self.pending(io))
    }
}

/// The last header the table matched, byte for byte, and its command.
#[derive(Debug, Default)]
struct RecentHeader {
    bytes: [u8; RecentHeader::MAX],
    /// Length of the header in `bytes`; 0: none.
    len: usize,
    command: Option<Command>,
}

impl RecentHeader {
    /// Longest header remembered.
    const MAX: usize = 24;

    /// The command of `head` when it is the header remembered.
    fn get(&self, head: &[u8]) -> Option<Command> {
        if head.len() == self.len && head == &self.bytes[..self.len] {
            self.command
        } else {
            None
        }
    }

    /// Remembers that `head` is `command` (when it is short enough).
    fn set(&mut self, head: &[u8], command: Command) {
        if let Some(b) = self.bytes.get_mut(..head.len()) {
            b.copy_from_slice(head);
            self.len = head.len();
            self.command = Some(command);
        }
    }
}

/// A waveform shared with the answers that carry it: kept between queries up
/// to [`KEEP_SHARED`] bytes; a larger one only while an answer still holds it.
#[derive(Debug, Default)]
struct Shared {
    kept: Option<Arc<[u8]>>,
    large: Option<std::sync::Weak<[u8]>>,
}

impl Shared {
    /// The buffer held when its length passes `fits`, else a new one from `make`.
    fn get(&mut self, fits: impl Fn(usize) -> bool, make: impl FnOnce() -> Arc<[u8]>) -> Arc<[u8]> {
        let held = self
            .kept
            .clone()
            .or_else(|| self.large.as_ref().and_then(std::sync::Weak::upgrade));
        if let Some(b) = held.filter(|b| fits(b.len())) {
            return b;
        }
        let b = make();
        if b.len() <= KEEP_SHARED {
            self.kept = Some(b.clone());
            self.large = None;
        } else {
            self.kept = None;
            self.large = Some(Arc::downgrade(&b));
        }
        b
    }

    /// Bytes held: the kept buffer, or a large one while answers still hold it.
    fn held(&self) -> usize {
        let large = self.large.as_ref().and_then(std::sync::Weak::upgrade);
        self.kept.as_ref().or(large.as_ref()).map_or(0, |b| b.len())
    }
}

#[cfg(test)]
mod tests {
    use super::message::sci;
    use super::{commands, Command, COMMANDS};

    #[test]
    fn every_command_of_the_table_parses_and_the_old_spellings_still_match() {
        assert_eq!(commands().lookup(b"*IDN?").map(|c| c.0), Some(Command::Idn));
        for (spec, _) in COMMANDS {
            assert!(super::header::Pattern::parse(spec).is_ok(), "{spec}");
        }
        for (h, c) in [
            ("INIT:IMM", Command::Init),
            ("INITIATE", Command::Init),
            ("FETCH?", Command::FetchQuery),
            ("FETC?", Command::FetchQuery),
            ("SENS:VOLT:APER?", Command::ApertureQuery),
            ("SYSTEM:ERROR?", Command::ErrorQuery),
            ("SYST:ERR:NEXT?", Command::ErrorQuery),
            ("MEASURE:VOLTAGE?", Command::MeasureQuery),
            ("MEAS:VOLT:DC?", Command::MeasureQuery),
            ("WAVEFORM:POINTS", Command::Points),
            ("CURV?", Command::WaveformQuery),
            ("DATA:LEN?", Command::DataLengthQuery),
            ("block?", Command::BlockQuery),
        ] {
            assert_eq!(commands().lookup(h.as_bytes()).map(|x| x.0), Some(c), "{h}");
        }
        assert_eq!(commands().lookup(b"MEAS:CURR?"), None);
    }

    #[test]
    fn nr3() {
        assert_eq!(sci(1.919), "+1.91900000E+00");
        assert_eq!(sci(-0.00125), "-1.25000000E-03");
    }
}
