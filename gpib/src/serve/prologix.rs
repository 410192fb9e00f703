//! One Prologix GPIB-ETHERNET connection: its own controller state (`++addr`,
//! `++auto`, `++eoi`, `++eos`, `++eot_*`, `++read_tmo_ms`), data lines unescaped and
//! sent to the addressed device, `++read` answers streamed back.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::locks::{DeviceLocks, Owner};
use super::Slot;
use crate::address::{Address, PrimaryAddress, SecondaryAddress};
use crate::backend::prologix::{ESC, MAX_ADAPTER_TIMEOUT_MS};
use crate::backend::{Eos, ReadEnd};
use crate::bus::Bus;
use crate::deadline::{Deadline, TimedReader};
use crate::hislip::QueryScan;

/// What `++ver` answers.
pub(crate) const VERSION: &str =
    "Prologix GPIB-ETHERNET Controller version 01.06.06.00 (gpib-rs simulator)";
/// Data bytes sent to the device per bus call.
const CHUNK: usize = 64 * 1024;
/// Longest `++` command line.
const MAX_COMMAND: usize = 256;
/// Bytes read from the device per bus call while answering `++read`.
const READ_PIECE: usize = 16 * 1024;

/// How long a call waits for another client's exchange with the device to end.
const HOLD_WAIT: Duration = Duration::from_secs(10);

/// Numbers the connections, as the holds name them.
static NEXT_CONN: AtomicU64 = AtomicU64::new(1);

/// The served devices' holds (shared with VXI-11 and HiSLIP), and who this
/// connection is in them.
pub(crate) struct Holds {
    locks: Arc<DeviceLocks>,
    board: u16,
    owner: Owner,
}

impl Holds {
    /// A new connection's, on board `board`.
    pub(crate) fn new(locks: Arc<DeviceLocks>, board: u16) -> Self {
        Self {
            locks,
            board,
            owner: Owner::Prologix(NEXT_CONN.fetch_add(1, Ordering::Relaxed)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    Start,
    OnePlus,
    Command,
    Data,
}

/// One connection's state; `W` is where its answers go (the client's socket).
struct Conn<W: Write> {
    bus: Bus,
    /// The client, when requests are traced.
    peer: Option<String>,
    out: W,
    addr: Address,
    auto: bool,
    eoi: bool,
    eos: u8,
    eot_enable: bool,
    eot_char: u8,
    read_tmo: Duration,
    line: Line,
    escaped: bool,
    data: Vec<u8>,
    cmd: Vec<u8>,
    cmd_too_long: bool,
    /// The devices' holds: a query and its `++read` are one exchange with the device.
    holds: Option<Holds>,
    /// The message sent so far (whether it asks a query).
    scan: QueryScan,
    /// `++read`'s buffer, [`READ_PIECE`] and one byte, made at the first and kept.
    piece: Vec<u8>,
    /// Writes to the client so far.
    writes: u64,
}

pub(crate) fn serve(
    bus: Bus,
    s: TcpStream,
    slot: Slot,
    default: Option<Address>,
    trace: bool,
    holds: Holds,
) {
    let Ok(out) = s.try_clone() else { return };
    let peer = trace.then(|| s.peer_addr().map_or("?".to_string(), |p| p.to_string()));
    let mut c = Conn::new(bus, out, peer, default);
    let owner = holds.owner;
    let locks = holds.locks.clone();
    c.holds = Some(holds);
    serve_conn(&mut c, s, &slot);
    locks.release_all(owner);
}

/// [`serve`]'s loop, until the connection ends.
fn serve_conn(c: &mut Conn<TcpStream>, s: TcpStream, slot: &Slot) {
    // Reads of `buf`'s size bypass the reader's small buffer.
    let mut input = TimedReader::new(s, 4096);
    let mut buf = vec![0u8; 64 * 1024];
    // Set at a line's first byte: the whole line must arrive by it.
    let mut line_deadline: Option<Deadline> = None;
    loop {
        let idle = Deadline::after(slot.idle);
        input.set_deadline(line_deadline.unwrap_or(idle));
        let n = match input.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let writes = c.writes;
        for &b in &buf[..n] {
            if c.byte(b).is_err() {
                return;
            }
        }
        // pyvisa-py writes the command and `++read` as two segments: ACK the first at
        // once, or its Nagle holds the second for a delayed ACK (about 40 ms). What
        // was answered has carried its ACK already: a separate one costs a packet
        // each way (about 10 % of a query over loopback).
        if c.writes == writes {
            super::quick_ack(input.get_ref());
        }
        line_deadline = c
            .in_line()
            .then(|| line_deadline.unwrap_or_else(|| Deadline::after(Some(slot.message))));
    }
}

/// Feeds `input` to a connection's parser as if a client had sent it, over `bus`,
/// its answers into `out`; stops at the first answer `out` refuses.
pub(crate) fn session(bus: Bus, input: &[u8], out: &mut Vec<u8>, default: Option<Address>) {
    let mut c = Conn::new(bus, out, None, default);
    for &b in input {
        if c.byte(b).is_err() {
            return;
        }
    }
}

impl<W: Write> Conn<W> {
    fn new(bus: Bus, out: W, peer: Option<String>, default: Option<Address>) -> Self {
        Conn {
            bus,
            peer,
            out,
            addr: default.unwrap_or_else(|| Address::try_from(1u8).expect("valid")),
            auto: false,
            eoi: true,
            eos: 0,
            eot_enable: false,
            eot_char: b'\n',
            read_tmo: Duration::from_millis(500),
            line: Line::Start,
            escaped: false,
            data: Vec::new(),
            cmd: Vec::new(),
            cmd_too_long: false,
            holds: None,
            scan: QueryScan::default(),
            piece: Vec::new(),
            writes: 0,
        }
    }

    /// Holds the addressed device for this connection's call: another client's
    /// exchange with it ends first (up to [`HOLD_WAIT`]; past it the call goes on).
    fn begin(&self) {
        if let Some(h) = &self.holds {
            let until = Instant::now() + HOLD_WAIT;
            if !h
                .locks
                .holds
                .begin((h.board, self.addr), h.owner, until, &|| false)
            {
                log::info!("prologix: {} stayed busy with another client", self.addr);
            }
        }
    }

    /// Ends the call on the addressed device; with `more` (a query's answer to read,
    /// part of a message sent) the connection keeps it for its next call.
    fn end(&self, more: bool) {
        if let Some(h) = &self.holds {
            h.locks.holds.end((h.board, self.addr), h.owner, more);
        }
    }

    /// Whether a line has started and not ended.
    fn in_line(&self) -> bool {
        self.line != Line::Start || self.escaped
    }

    /// One byte from the client; an error ends the connection (the socket failed).
    fn byte(&mut self, b: u8) -> std::io::Result<()> {
        if self.escaped {
            self.escaped = false;
            return self.literal(b);
        }
        match b {
            ESC => {
                self.escaped = true;
                Ok(())
            }
            b'\r' | b'\n' => self.end_of_line(),
            b'+' if self.line == Line::Start => {
                self.line = Line::OnePlus;
                Ok(())
            }
            b'+' if self.line == Line::OnePlus => {
                self.line = Line::Command;
                Ok(())
            }
            _ => self.literal(b),
        }
    }

    fn literal(&mut self, b: u8) -> std::io::Result<()> {
        match self.line {
            Line::Command => {
                if self.cmd.len() < MAX_COMMAND {
                    self.cmd.push(b);
                } else {
                    self.cmd_too_long = true;
                }
                Ok(())
            }
            Line::OnePlus => {
                self.line = Line::Data;
                self.push_data(b'+');
                self.push_data(b);
                Ok(())
            }
            _ => {
                self.line = Line::Data;
                self.push_data(b);
                Ok(())
            }
        }
    }

    fn push_data(&mut self, b: u8) {
        self.data.push(b);
        if self.data.len() >= 2 * CHUNK {
            // Long data goes to the device as it comes (bounded memory); the last
            // bytes stay for the write that carries END.
            let dev = self.bus.device(self.addr);
            if let Ok(d) = dev {
                self.begin();
                if let Err(e) = d.write_partial(&self.data[..CHUNK]) {
                    log::info!("prologix: write to {}: {e}", self.addr);
                }
                self.scan.feed(&self.data[..CHUNK]);
                self.end(true);
            }
            self.data.drain(..CHUNK);
        }
    }

    /// One line: a `++` command or data for the addressed device, traced when asked.
    fn end_of_line(&mut self) -> std::io::Result<()> {
        let Some(peer) = self.peer.clone() else {
            return self.line_done();
        };
        let what = match self.line {
            Line::Command => format!("++{}", String::from_utf8_lossy(&self.cmd).trim()),
            _ => format!("{} to {}", super::vxi11_trace::bytes(&self.data), self.addr),
        };
        let t0 = self.bus.now();
        let r = self.line_done();
        eprintln!(
            "gpib-diag serve: {peer} prologix {what}: {:.3} ms on the bus",
            (self.bus.now().saturating_sub(t0)).as_secs_f64() * 1e3
        );
        r
    }

    fn line_done(&mut self) -> std::io::Result<()> {
        let line = std::mem::replace(&mut self.line, Line::Start);
        match line {
            Line::Start => Ok(()),
            Line::Command => {
                let cmd = String::from_utf8_lossy(&self.cmd).into_owned();
                self.cmd.clear();
                if std::mem::take(&mut self.cmd_too_long) {
                    return Ok(());
                }
                self.command(cmd.trim())
            }
            Line::OnePlus | Line::Data => {
                if line == Line::OnePlus {
                    self.data.push(b'+');
                }
                match self.eos {
                    0 => self.data.extend_from_slice(b"\r\n"),
                    1 => self.data.push(b'\r'),
                    2 => self.data.push(b'\n'),
                    _ => {}
                }
                let data = std::mem::take(&mut self.data);
                if let Ok(mut d) = self.bus.device(self.addr) {
                    d.set_write_terminator(None);
                    self.begin();
                    let r = if self.eoi {
                        d.write(&data)
                    } else {
                        d.write_partial(&data).map(drop)
                    };
                    if let Err(e) = r {
                        log::info!("prologix: write to {}: {e}", self.addr);
                    }
                    // A query's answer, or the rest of the message, is this
                    // connection's next call.
                    self.scan.feed(&data);
                    let more = !self.eoi || self.scan.is_query();
                    if self.eoi {
                        self.scan.reset();
                    }
                    self.end(more);
                }
                self.data = data;
                self.data.clear();
                if self.auto {
                    self.read(None)?;
                }
                Ok(())
            }
        }
    }

    fn reply(&mut self, text: &str) -> std::io::Result<()> {
        self.emit(format!("{text}\r\n").as_bytes())
    }

    /// Sends `bytes` to the client.
    fn emit(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writes += 1;
        self.out.write_all(bytes)
    }

    fn device(&self) -> Option<crate::Device> {
        let mut d = self.bus.device(self.addr).ok()?;
        d.set_timeout(Some(crate::Timeout::After(self.read_tmo)));
        Some(d)
    }

    fn command(&mut self, cmd: &str) -> std::io::Result<()> {
        let mut words = cmd.split_ascii_whitespace();
        let name = words.next().unwrap_or("").to_ascii_lowercase();
        let args: Vec<&str> = words.collect();
        let num = |i: usize| args.get(i).and_then(|a| a.parse::<u32>().ok());
        match name.as_str() {
            "addr" => {
                if args.is_empty() {
                    let a = match self.addr.secondary {
                        Some(s) => format!("{} {}", self.addr.primary, u16::from(s.get()) + 96),
                        None => self.addr.primary.to_string(),
                    };
                    return self.reply(&a);
                }
                let pad = num(0).and_then(|p| PrimaryAddress::try_from(p).ok());
                let sad = match num(1) {
                    None if args.len() < 2 => Some(None),
                    Some(s) if (96..=126).contains(&s) => SecondaryAddress::try_from(s - 96).ok().map(Some),
                    _ => None,
                };
                if let (Some(primary), Some(secondary)) = (pad, sad) {
                    // Another device: the one held is let go.
                    self.end(false);
                    self.scan.reset();
                    self.addr = Address { primary, secondary };
                }
                Ok(())
            }
            "auto" => self.flag(&args, |c| &mut c.auto),
            "eoi" => self.flag(&args, |c| &mut c.eoi),
            "eot_enable" => self.flag(&args, |c| &mut c.eot_enable),
            "eos" => match num(0) {
                None if args.is_empty() => self.reply(&self.eos.to_string()),
                Some(v) if v <= 3 => {
                    self.eos = v as u8;
                    Ok(())
                }
                _ => Ok(()),
            },
            "eot_char" => match num(0) {
                None if args.is_empty() => self.reply(&self.eot_char.to_string()),
                Some(v) if v <= 255 => {
                    self.eot_char = v as u8;
                    Ok(())
                }
                _ => Ok(()),
            },
            "read_tmo_ms" => match num(0) {
                None if args.is_empty() => self.reply(&self.read_tmo.as_millis().to_string()),
                Some(v) if (1..=MAX_ADAPTER_TIMEOUT_MS).contains(&v) => {
                    self.read_tmo = Duration::from_millis(u64::from(v));
                    Ok(())
                }
                _ => Ok(()),
            },
            "mode" => match num(0) {
                None if args.is_empty() => self.reply("1"),
                _ => Ok(()),
            },
            "read" => {
                let until = match args.first() {
                    None => None,
                    Some(a) if a.eq_ignore_ascii_case("eoi") => None,
                    Some(_) => match num(0) {
                        Some(v) if v <= 255 => Some(v as u8),
                        _ => return Ok(()),
                    },
                };
                self.read(until)
            }
            "spoll" => {
                let at = match (num(0), num(1)) {
                    (None, _) => Some(self.addr),
                    (Some(p), s) => PrimaryAddress::try_from(p).ok().map(|primary| Address {
                        primary,
                        secondary: s.and_then(|s| s.checked_sub(96)).and_then(|s| SecondaryAddress::try_from(s).ok()),
                    }),
                };
                let stb = at
                    .and_then(|a| self.bus.device(a).ok())
                    .and_then(|mut d| {
                        d.set_timeout(Some(crate::Timeout::After(self.read_tmo)));
                        d.serial_poll().ok()
                    });
                match stb {
                    Some(s) => self.reply(&s.0.to_string()),
                    None => Ok(()),
                }
            }
            "srq" => {
                let s = self.bus.srq().unwrap_or(false);
                self.reply(if s { "1" } else { "0" })
            }
            "clr" => {
                if let Some(d) = self.device() {
                    self.begin();
                    let _ = d.clear();
                    self.scan.reset();
                    self.end(false);
                }
                Ok(())
            }
            "trg" => {
                if args.is_empty() {
                    if let Some(d) = self.device() {
                        let _ = d.trigger();
                    }
                } else {
                    for a in args.iter().filter_map(|a| a.parse::<u8>().ok()) {
                        if let Ok(d) = self.bus.device(a) {
                            let _ = d.trigger();
                        }
                    }
                }
                Ok(())
            }
            "loc" => {
                if let Some(d) = self.device() {
                    let _ = d.go_to_local();
                }
                Ok(())
            }
            "llo" => {
                let _ = self.bus.local_lockout();
                Ok(())
            }
            "ifc" => {
                let _ = self.bus.interface_clear();
                Ok(())
            }
            "ver" => self.reply(VERSION),
            "rst" => {
                self.auto = false;
                self.eoi = true;
                self.eos = 0;
                self.eot_enable = false;
                self.eot_char = b'\n';
                self.read_tmo = Duration::from_millis(500);
                Ok(())
            }
            "savecfg" => Ok(()),
            "help" => self.reply(
                "++addr ++auto ++clr ++eoi ++eos ++eot_enable ++eot_char ++ifc ++llo ++loc ++mode ++read ++read_tmo_ms ++rst ++savecfg ++spoll ++srq ++trg ++ver ++help",
            ),
            _ => self.reply("Unrecognized command"),
        }
    }

    fn flag(&mut self, args: &[&str], field: fn(&mut Self) -> &mut bool) -> std::io::Result<()> {
        match args.first().map(|a| a.trim()) {
            None => {
                let v = *field(self);
                self.reply(if v { "1" } else { "0" })
            }
            Some("0") => {
                *field(self) = false;
                Ok(())
            }
            Some("1") => {
                *field(self) = true;
                Ok(())
            }
            Some(_) => Ok(()),
        }
    }

    /// `++read`: streams the device's answer until END (then the EOT byte when
    /// enabled), the `until` byte, or the read timeout (then nothing more). A data
    /// byte equal to the EOT byte never ends a socket write unless it is the last
    /// of the message, so a client never sees a lone EOT byte that is not END.
    fn read(&mut self, until: Option<u8>) -> std::io::Result<()> {
        let Some(mut d) = self.device() else {
            return Ok(());
        };
        d.set_eos(until.map(|byte| Eos {
            byte,
            eight_bit: true,
        }));
        self.begin();
        let mut buf = std::mem::take(&mut self.piece);
        buf.resize(READ_PIECE + 1, 0);
        let r = self.stream(&d, &mut buf);
        self.piece = buf;
        if r.is_err() {
            // The client went away in the middle of the answer: nobody is left to
            // read the rest (a `BLOCK?` ramp, say), so its memory goes.
            let _ = d.clear();
        }
        self.end(false);
        r
    }

    /// Streams the answer of `d` to the client (see [`Conn::read`]).
    fn stream(&mut self, d: &crate::Device, buf: &mut [u8]) -> std::io::Result<()> {
        let mut held = 0usize;
        loop {
            let r = d.read(&mut buf[held..READ_PIECE]);
            let (count, end) = match r {
                Ok(st) => (st.count, Some(st.end)),
                Err(e) => (e.transferred().unwrap_or(0).min(buf.len() - held), None),
            };
            let n = held + count;
            match end {
                Some(ReadEnd::BufferFull) => {
                    // More follows: hold back a trailing EOT-valued byte.
                    let keep = usize::from(self.eot_enable && n > 0 && buf[n - 1] == self.eot_char);
                    self.emit(&buf[..n - keep])?;
                    if keep == 1 {
                        buf[0] = self.eot_char;
                    }
                    held = keep;
                }
                Some(ReadEnd::Eoi) => {
                    if self.eot_enable {
                        buf[n] = self.eot_char;
                        return self.emit(&buf[..=n]);
                    }
                    return self.emit(&buf[..n]);
                }
                Some(ReadEnd::Eos) | None => return self.emit(&buf[..n]),
            }
        }
    }
}
