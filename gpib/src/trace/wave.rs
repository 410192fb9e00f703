//! The 16 GPIB lines as a waveform, synthesised from a trace's bus records: a full
//! three-wire handshake per byte from the model's timing, in ticks of a chosen length.
//!
//! Per byte, from its cycle start `c` (each step at least one tick after the one it
//! depends on): the talker sets DIO (and EOI with the last byte of an END message);
//! at `c + T1` it asserts DAV; the listeners assert NRFD one tick later (busy), and
//! release NDAC at `DAV + acceptance` (accepted); the talker then releases DAV, and
//! the listeners assert NDAC again and release NRFD (ready for the next byte). The
//! first byte after ATN changes is settled for at least [`ATN_SETTLE_NS`] (2 µs, IEEE
//! 488.1's T1 for that byte): ATN changes and DIO is set that long before DAV.
//! Devices answer ATN within one tick (T7, 200 ns, when a tick is at most that).

use crate::trace::format::{Line, LineChange, Record, Transfer};

/// Line bits of a waveform state: bit set = line asserted (electrically low).
pub mod lines {
    /// DIO1 (bit 0 of a byte); DIO*n* is `DIO1 << (n - 1)`.
    pub const DIO1: u16 = 1 << 0;
    /// The eight data lines.
    pub const DIO: u16 = 0x00FF;
    /// End or identify.
    pub const EOI: u16 = 1 << 8;
    /// Data valid.
    pub const DAV: u16 = 1 << 9;
    /// Not ready for data.
    pub const NRFD: u16 = 1 << 10;
    /// Not data accepted.
    pub const NDAC: u16 = 1 << 11;
    /// Interface clear.
    pub const IFC: u16 = 1 << 12;
    /// Service request.
    pub const SRQ: u16 = 1 << 13;
    /// Attention.
    pub const ATN: u16 = 1 << 14;
    /// Remote enable.
    pub const REN: u16 = 1 << 15;
}

/// The lines' names, bit 0 first (the names sigrok's `ieee488` decoder's channels take).
pub const LINE_NAMES: [&str; 16] = [
    "DIO1", "DIO2", "DIO3", "DIO4", "DIO5", "DIO6", "DIO7", "DIO8", "EOI", "DAV", "NRFD", "NDAC",
    "IFC", "SRQ", "ATN", "REN",
];

/// Settling before the first byte after ATN changes (IEEE 488.1: T1 ≥ 2 µs then).
pub const ATN_SETTLE_NS: u64 = 2000;

/// Turns bus records into line changes, in ticks of `tick_ns`, never going back in
/// time (a record that starts before the last change is drawn after it).
#[derive(Debug, Clone)]
pub struct Synth {
    tick_ns: u64,
    /// Line state (asserted bits).
    state: u16,
    /// Tick of the last change.
    cursor: u64,
}

impl Synth {
    /// A synthesiser at `tick_ns` nanoseconds a tick (at least 1); every line released.
    pub fn new(tick_ns: u64) -> Self {
        Self {
            tick_ns: tick_ns.max(1),
            state: 0,
            cursor: 0,
        }
    }

    /// The tick length.
    pub fn tick_ns(&self) -> u64 {
        self.tick_ns
    }

    /// The line state now.
    pub fn state(&self) -> u16 {
        self.state
    }

    /// The tick of the last change.
    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    fn ticks(&self, ns: u64) -> u64 {
        ns / self.tick_ns
    }

    /// A duration in ticks, at least one.
    fn span(&self, ns: u64) -> u64 {
        (ns.saturating_add(self.tick_ns / 2) / self.tick_ns).max(1)
    }

    /// Sets the state at tick `t` (no earlier than the last change); returns the tick
    /// used.
    fn set(&mut self, t: u64, state: u16, out: &mut impl FnMut(u64, u16)) -> u64 {
        let t = t.max(self.cursor);
        if state != self.state {
            self.state = state;
            self.cursor = t;
            out(t, state);
        }
        t
    }

    /// Draws one record's line changes, calling `out(tick, state)` for each.
    ///
    /// A record whose times put a change past the last tick a `u64` holds is refused
    /// with a [`WaveError`] naming the field, before anything of it is drawn.
    pub fn feed(
        &mut self,
        record: &Record<'_>,
        out: &mut impl FnMut(u64, u16),
    ) -> Result<(), WaveError> {
        match record {
            Record::Transfer(t) => self.transfer(t, out),
            Record::Line(l) => self.line(l, out),
            Record::Error(_) | Record::Call(_) | Record::Unknown { .. } => Ok(()),
        }
    }

    fn line(&mut self, l: &LineChange, out: &mut impl FnMut(u64, u16)) -> Result<(), WaveError> {
        let bit = match l.line {
            Line::Srq => lines::SRQ,
            Line::Ren => lines::REN,
            Line::Ifc => lines::IFC,
        };
        let at = self.ticks(l.at_ns);
        if l.line == Line::Ifc {
            // The pulse's end is drawn at least one tick after its start.
            let end = self.ticks(l.end_ns).max(
                at.max(self.cursor)
                    .checked_add(1)
                    .ok_or(WaveError::new("line", "end_ns", l.end_ns))?,
            );
            let on = self.set(at, self.state | bit, out);
            // IFC unaddresses everyone: no listener holds NDAC afterwards.
            self.set(
                end.max(on + 1),
                self.state & !(bit | lines::NDAC | lines::NRFD),
                out,
            );
        } else if l.asserted {
            self.set(at, self.state | bit, out);
        } else {
            self.set(at, self.state & !bit, out);
        }
        Ok(())
    }

    /// The last tick a transfer of `t` can reach from here, or which field puts it past
    /// a `u64`: every step of every byte is bounded by it.
    fn transfer_bound(&self, t: &Transfer<'_>) -> Result<u64, WaveError> {
        let err = |field, value| WaveError::new("transfer", field, value);
        let per = self.span(t.byte_ns);
        let t1 = self.span(u64::from(t.t1_ns));
        let accept = self.span(u64::from(t.accept_ns)).max(2);
        let settle = self.span(ATN_SETTLE_NS);
        let n = t.bytes.len() as u64;
        // One byte: its period, or DIO + T1 + busy + acceptance + release + ready.
        let fixed = t1 + settle + 8; // both under 2^33: no overflow
        let step = per
            .checked_add(accept)
            .and_then(|s| s.checked_add(fixed))
            .ok_or_else(|| err("byte_ns", t.byte_ns))?;
        let body = step
            .checked_mul(n)
            .ok_or_else(|| err("byte_ns", t.byte_ns))?;
        let from = self.ticks(t.first_ns).max(self.cursor);
        from.checked_add(body)
            .and_then(|e| e.checked_add(fixed))
            .ok_or_else(|| {
                if self.ticks(t.first_ns) >= self.cursor {
                    err("first_ns", t.first_ns)
                } else {
                    err("first_ns (after the records before it)", t.first_ns)
                }
            })
    }

    fn transfer(
        &mut self,
        t: &Transfer<'_>,
        out: &mut impl FnMut(u64, u16),
    ) -> Result<(), WaveError> {
        if t.bytes.is_empty() || t.byte_ns == 0 {
            return Ok(()); // nothing went over the handshake
        }
        // Every tick below is at most this bound, so no addition below overflows.
        self.transfer_bound(t)?;
        let per = self.span(t.byte_ns);
        let t1 = self.span(u64::from(t.t1_ns));
        let accept = self.span(u64::from(t.accept_ns)).max(2);
        let settle = self.span(ATN_SETTLE_NS);
        let want_atn = t.is_command();
        let mut c = self.ticks(t.first_ns).max(self.cursor + 1);
        // DAV of the first byte no earlier than this (the first byte's settling).
        let mut first_dav = 0;
        if (self.state & lines::ATN != 0) != want_atn {
            let a = c.saturating_sub(settle).max(self.cursor + 1);
            let s = (self.state ^ lines::ATN) & !(lines::DIO | lines::EOI);
            let a = self.set(a, s, out);
            // Devices answer ATN within T7: every one asserts NDAC (a listener that
            // has not accepted), NRFD released (ready).
            self.set(a + 1, (self.state | lines::NDAC) & !lines::NRFD, out);
            first_dav = self.cursor + settle;
            c = c.max(a + 2);
        } else if self.state & lines::NDAC == 0 {
            // Listeners that were not holding NDAC take the handshake up.
            self.set(c, (self.state | lines::NDAC) & !lines::NRFD, out);
            c += 1;
        }
        let n = t.bytes.len();
        let end = t.end() && !want_atn;
        for (i, &b) in t.bytes.iter().enumerate() {
            let mut s = (self.state & !(lines::DIO | lines::EOI)) | u16::from(b);
            if end && i + 1 == n {
                s |= lines::EOI;
            }
            // The first byte after an ATN change goes out with ATN (already set) and
            // its data at once, settled from the ATN edge.
            let set_at = if first_dav != 0 && i == 0 {
                self.cursor
            } else {
                c
            };
            let c0 = self.set(set_at, s, out);
            let dav = (c0 + t1).max(c).max(if i == 0 { first_dav } else { 0 });
            let dav = self.set(dav, self.state | lines::DAV, out);
            let busy = self.set(dav + 1, self.state | lines::NRFD, out);
            let accepted = self.set(
                dav + accept.max(busy - dav + 1),
                self.state & !lines::NDAC,
                out,
            );
            let released = self.set(accepted + 1, self.state & !lines::DAV, out);
            let ready = self.set(
                released + 1,
                (self.state | lines::NDAC) & !(lines::NRFD | lines::DIO | lines::EOI),
                out,
            );
            c = (c + per).max(ready);
            if i == 0 {
                c = c.max(dav.saturating_sub(t1) + per);
            }
        }
        Ok(())
    }
}

/// A record whose times cannot be drawn: a change would fall past the last tick a
/// `u64` holds (a damaged or crafted file: real traces end within centuries).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{record} record: {field} = {value} puts its handshake past the largest time a trace can \
     hold ({} ns)",
    u64::MAX
)]
pub struct WaveError {
    /// The record's kind: "transfer", "line".
    pub record: &'static str,
    /// The field that carries it past the end of time: "first_ns", "byte_ns", "end_ns".
    pub field: &'static str,
    /// The field's value.
    pub value: u64,
}

impl WaveError {
    fn new(record: &'static str, field: &'static str, value: u64) -> Self {
        Self {
            record,
            field,
            value,
        }
    }
}

/// Every line change of `records`, in ticks of `tick_ns`: `(tick, state)` pairs, times
/// never decreasing; the first record that cannot be drawn stops it.
///
/// This keeps every change in memory: to draw a file, feed a [`Synth`] record by record.
pub fn changes<'a>(
    records: impl IntoIterator<Item = &'a Record<'a>>,
    tick_ns: u64,
) -> Result<Vec<(u64, u16)>, WaveError> {
    let mut s = Synth::new(tick_ns);
    let mut v = Vec::new();
    for r in records {
        s.feed(r, &mut |t, st| v.push((t, st)))?;
    }
    Ok(v)
}
