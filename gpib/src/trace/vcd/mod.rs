//! Value change dump (IEEE 1364 VCD) of the 16 GPIB lines: written from a trace's
//! bus records (for GTKWave, PulseView and sigrok's `ieee488` decoder), and read back
//! from any ordinary VCD (a logic analyzer's capture exported by sigrok or PulseView)
//! for [`crate::trace::check`].
//!
//! Lines are one-bit wires in electrical polarity: asserted = 0, released = 1.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};

use crate::trace::format::Record;
use crate::trace::wave::{Synth, LINE_NAMES};

/// Identifier codes of the 16 wires: `!` for DIO1 to `0` for REN.
fn ident(bit: usize) -> u8 {
    b'!' + bit as u8
}

/// Writes `v` in decimal to `out` without allocating.
fn put_u64(out: &mut impl Write, mut v: u64) -> io::Result<()> {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.write_all(&buf[i..])
}

/// What an export wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VcdStats {
    /// Time stamps written.
    pub stamps: u64,
    /// Last tick.
    pub last_tick: u64,
}

/// Writes line states as VCD, coalescing changes at the same tick.
struct VcdOut<W: Write> {
    out: W,
    written: u16,
    pending: Option<(u64, u16)>,
    stats: VcdStats,
    error: Option<io::Error>,
}

impl<W: Write> VcdOut<W> {
    fn change(&mut self, t: u64, state: u16) {
        match self.pending {
            Some((pt, _)) if pt == t => self.pending = Some((t, state)),
            Some(p) => {
                self.flush_pending(p);
                self.pending = Some((t, state));
            }
            None => self.pending = Some((t, state)),
        }
    }

    fn flush_pending(&mut self, (t, state): (u64, u16)) {
        if self.error.is_some() || state == self.written {
            return;
        }
        if let Err(e) = self.stamp(t, state) {
            self.error = Some(e);
        }
    }

    fn stamp(&mut self, t: u64, state: u16) -> io::Result<()> {
        self.out.write_all(b"#")?;
        put_u64(&mut self.out, t)?;
        self.out.write_all(b"\n")?;
        let diff = state ^ self.written;
        for bit in 0..16 {
            if diff & (1 << bit) != 0 {
                // Asserted (bit set) is electrically low.
                let level = if state & (1 << bit) != 0 { b'0' } else { b'1' };
                self.out.write_all(&[level, ident(bit), b'\n'])?;
            }
        }
        self.written = state;
        self.stats.stamps += 1;
        self.stats.last_tick = t;
        Ok(())
    }
}

/// Writes the VCD of `records` at `tick_ns` nanoseconds a tick (the timescale) to
/// `out` (buffer it). `label` goes into a `$comment`.
pub fn write_vcd<'a, W: Write>(
    records: impl IntoIterator<Item = &'a Record<'a>>,
    tick_ns: u64,
    label: &str,
    mut out: W,
) -> io::Result<VcdStats> {
    let tick_ns = tick_ns.max(1);
    writeln!(out, "$version gpib-rs {} $end", env!("CARGO_PKG_VERSION"))?;
    let label: String = label.chars().filter(|c| !c.is_control()).collect();
    writeln!(out, "$comment {} $end", label.replace("$end", "end"))?;
    writeln!(out, "$timescale {tick_ns} ns $end")?;
    writeln!(out, "$scope module gpib $end")?;
    for (bit, name) in LINE_NAMES.iter().enumerate() {
        writeln!(out, "$var wire 1 {} {name} $end", ident(bit) as char)?;
    }
    writeln!(out, "$upscope $end\n$enddefinitions $end\n#0\n$dumpvars")?;
    for bit in 0..16 {
        out.write_all(&[b'1', ident(bit), b'\n'])?;
    }
    out.write_all(b"$end\n")?;
    let mut v = VcdOut {
        out,
        written: 0,
        pending: None,
        stats: VcdStats::default(),
        error: None,
    };
    let mut synth = Synth::new(tick_ns);
    for r in records {
        synth.feed(r, &mut |t, s| v.change(t, s));
        if let Some(e) = v.error.take() {
            return Err(e);
        }
    }
    if let Some(p) = v.pending.take() {
        v.flush_pending(p);
    }
    if let Some(e) = v.error.take() {
        return Err(e);
    }
    // A last stamp so that viewers show the final state for a moment.
    let end = v.stats.last_tick + 10;
    v.out.write_all(b"#")?;
    put_u64(&mut v.out, end)?;
    v.out.write_all(b"\n")?;
    v.out.flush()?;
    Ok(v.stats)
}

/// A waveform read from a VCD: line changes in picoseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capture {
    /// `(time in ps, asserted lines)`, times never decreasing.
    pub changes: Vec<(u64, u16)>,
    /// The GPIB lines found (bits as in [`crate::trace::wave::lines`]).
    pub present: u16,
    /// The resolution: picoseconds a time unit.
    pub tick_ps: u64,
}

/// Why a VCD was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VcdError {
    /// Something in the file is not what VCD allows, or what this reader takes.
    #[error("line {line}: {what}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        what: String,
    },
    /// Reading failed.
    #[error("reading the VCD: {0}")]
    Io(#[from] io::Error),
}

fn syntax(line: usize, what: impl Into<String>) -> VcdError {
    VcdError::Syntax {
        line,
        what: what.into(),
    }
}

/// Most changes a capture may hold (about 1.6 GB of memory at 16 bytes each).
pub const MAX_CHANGES: usize = 100_000_000;

/// Reads an ordinary VCD: `$timescale`, `$scope`s, one-bit `$var`s whose reference
/// names a GPIB line (`DIO1`..`DIO8`, `EOI`, `DAV`, `NRFD`, `NDAC`, `IFC`, `SRQ`,
/// `ATN`, `REN`, any case; other variables are ignored), `#time` stamps and scalar
/// changes (`0`, `1`; `x` and `z` read as released). Vector changes of a GPIB line
/// (`b...`) are refused with an error that says so.
pub fn read_vcd(input: impl BufRead) -> Result<Capture, VcdError> {
    let mut ids: HashMap<String, u16> = HashMap::new();
    let mut tick_ps: Option<u64> = None;
    let mut present = 0u16;
    let mut in_header = true;
    let mut pending: Vec<(String, usize)> = Vec::new(); // header tokens with their line
    let mut state = 0u16;
    let mut time = 0u64;
    let mut changes: Vec<(u64, u16)> = Vec::new();
    for (n, line) in input.lines().enumerate() {
        let line = line?;
        let lineno = n + 1;
        if in_header {
            for tok in line.split_whitespace() {
                pending.push((tok.to_string(), lineno));
                if tok == "$end" {
                    header_command(&pending, &mut ids, &mut tick_ps, &mut present)?;
                    if pending.first().is_some_and(|(t, _)| t == "$enddefinitions") {
                        in_header = false;
                    }
                    pending.clear();
                }
            }
            continue;
        }
        for tok in line.split_whitespace() {
            let mut chars = tok.chars();
            let first = chars.next().map_or("", |c| &tok[..c.len_utf8()]);
            let rest = chars.as_str();
            match first {
                "#" => {
                    let t: u64 = rest
                        .parse()
                        .map_err(|_| syntax(lineno, format!("bad time stamp {tok:?}")))?;
                    if t < time {
                        return Err(syntax(lineno, format!("time goes back from {time} to {t}")));
                    }
                    time = t;
                }
                "0" | "1" | "x" | "X" | "z" | "Z" => {
                    if let Some(&bit) = ids.get(rest) {
                        let asserted = first == "0";
                        let new = if asserted { state | bit } else { state & !bit };
                        if new != state {
                            state = new;
                            let ps =
                                time.checked_mul(tick_ps.unwrap_or(1000)).ok_or_else(|| {
                                    syntax(lineno, format!("time {time} overflows in picoseconds"))
                                })?;
                            match changes.last_mut() {
                                Some(last) if last.0 == ps => last.1 = state,
                                _ => {
                                    if changes.len() >= MAX_CHANGES {
                                        return Err(syntax(
                                            lineno,
                                            format!("more than {MAX_CHANGES} changes"),
                                        ));
                                    }
                                    changes.push((ps, state))
                                }
                            }
                        }
                    }
                }
                "b" | "B" | "r" | "R" => {
                    // The value and identifier may be two tokens: `b0101 !`.
                    let id = line.split_whitespace().nth(1).unwrap_or("");
                    if ids.contains_key(id) {
                        return Err(syntax(
                            lineno,
                            format!("vector change {tok:?} of a GPIB line: give each line as a one-bit wire"),
                        ));
                    }
                    break; // the rest of the line is the vector's identifier
                }
                // $dumpvars, $end, $comment ... in the body, a comment's words: no values.
                _ => {}
            }
        }
    }
    if in_header {
        return Err(syntax(0, "no $enddefinitions: not a complete VCD header"));
    }
    if present == 0 {
        return Err(syntax(
            0,
            "no GPIB line among the VCD's variables (expected one-bit wires named DIO1..DIO8, EOI, DAV, NRFD, NDAC, IFC, SRQ, ATN, REN)",
        ));
    }
    Ok(Capture {
        changes,
        present,
        tick_ps: tick_ps.unwrap_or(1000),
    })
}

fn header_command(
    toks: &[(String, usize)],
    ids: &mut HashMap<String, u16>,
    tick_ps: &mut Option<u64>,
    present: &mut u16,
) -> Result<(), VcdError> {
    let Some((cmd, line)) = toks.first() else {
        return Ok(());
    };
    let line = *line;
    match cmd.as_str() {
        "$timescale" => {
            let text: String = toks[1..toks.len() - 1]
                .iter()
                .map(|(t, _)| t.as_str())
                .collect();
            let digits = text.chars().take_while(|c| c.is_ascii_digit()).count();
            let (num, unit) = text.split_at(digits);
            let num: u64 = num
                .parse()
                .map_err(|_| syntax(line, format!("timescale {text:?} has no number")))?;
            let per: u64 = match unit {
                "s" => 1_000_000_000_000,
                "ms" => 1_000_000_000,
                "us" => 1_000_000,
                "ns" => 1_000,
                "ps" => 1,
                "fs" => {
                    return Err(syntax(
                        line,
                        "femtosecond timescales are finer than this reader's picoseconds",
                    ))
                }
                _ => {
                    return Err(syntax(
                        line,
                        format!("timescale unit {unit:?} is not s, ms, us, ns or ps"),
                    ))
                }
            };
            *tick_ps = Some(
                num.checked_mul(per)
                    .filter(|&v| v > 0)
                    .ok_or_else(|| syntax(line, format!("timescale {text:?} is out of range")))?,
            );
        }
        "$var" => {
            // $var <type> <size> <identifier> <reference> [<bit select>] $end
            let get = |i: usize| toks.get(i).map(|(t, _)| t.as_str()).unwrap_or("");
            let (size, id, name) = (get(2), get(3), get(4));
            let Some(bit) = LINE_NAMES.iter().position(|n| n.eq_ignore_ascii_case(name)) else {
                return Ok(()); // not a GPIB line
            };
            if size != "1" {
                return Err(syntax(
                    line,
                    format!("{name} is {size} bits wide: give each GPIB line as a one-bit wire"),
                ));
            }
            ids.insert(id.to_string(), 1 << bit);
            *present |= 1 << bit;
        }
        _ => {}
    }
    Ok(())
}
