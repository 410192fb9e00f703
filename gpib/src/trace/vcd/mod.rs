//! Value change dump (IEEE 1364 VCD) of the 16 GPIB lines: written from a trace's
//! bus records (for GTKWave, PulseView and sigrok's `ieee488` decoder), and read back
//! from any ordinary VCD (a logic analyzer's capture exported by sigrok or PulseView)
//! for [`crate::trace::check`].
//!
//! Lines are one-bit wires in electrical polarity: asserted = 0, released = 1.

use std::io::{self, Write};

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

/// Writes a VCD change by change, in constant memory: the header at once, then each
/// [`VcdWriter::change`] (changes at one tick are one stamp), then a last stamp.
pub struct VcdWriter<W: Write>(VcdOut<W>);

impl<W: Write> std::fmt::Debug for VcdWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VcdWriter")
            .field("stats", &self.0.stats)
            .finish_non_exhaustive()
    }
}

impl<W: Write> VcdWriter<W> {
    /// Writes the header (timescale `tick_ns` ns, `label` in a `$comment`) to `out`
    /// (buffer it).
    pub fn new(mut out: W, tick_ns: u64, label: &str) -> io::Result<Self> {
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
        Ok(Self(VcdOut {
            out,
            written: 0,
            pending: None,
            stats: VcdStats::default(),
            error: None,
        }))
    }

    /// The lines are `state` (asserted bits) from tick `t` on (never before the last).
    pub fn change(&mut self, t: u64, state: u16) {
        self.0.change(t, state);
    }

    /// The first write error so far, if any (the writer writes nothing after it).
    pub fn take_error(&mut self) -> Option<io::Error> {
        self.0.error.take()
    }

    /// Writes what is pending and a last stamp, flushes, and says what was written.
    pub fn finish(self) -> io::Result<VcdStats> {
        let mut v = self.0;
        if let Some(e) = v.error.take() {
            return Err(e);
        }
        if let Some(p) = v.pending.take() {
            v.flush_pending(p);
        }
        if let Some(e) = v.error.take() {
            return Err(e);
        }
        // A last stamp so that viewers show the final state for a moment.
        let end = v.stats.last_tick.saturating_add(10);
        v.out.write_all(b"#")?;
        put_u64(&mut v.out, end)?;
        v.out.write_all(b"\n")?;
        v.out.flush()?;
        Ok(v.stats)
    }
}

/// Writes the VCD of `records` at `tick_ns` nanoseconds a tick (the timescale) to
/// `out` (buffer it). `label` goes into a `$comment`. A record that cannot be drawn
/// ([`crate::trace::wave::WaveError`]) fails it with [`io::ErrorKind::InvalidData`].
pub fn write_vcd<'a, W: Write>(
    records: impl IntoIterator<Item = &'a Record<'a>>,
    tick_ns: u64,
    label: &str,
    out: W,
) -> io::Result<VcdStats> {
    let mut v = VcdWriter::new(out, tick_ns, label)?;
    let mut synth = Synth::new(tick_ns);
    for r in records {
        synth
            .feed(r, &mut |t, s| v.change(t, s))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        if let Some(e) = v.take_error() {
            return Err(e);
        }
    }
    v.finish()
}

mod read;
pub use read::{read_vcd, Capture, VcdError, VcdReader, MAX_CHANGES, MAX_TOKEN, MAX_VARS};
