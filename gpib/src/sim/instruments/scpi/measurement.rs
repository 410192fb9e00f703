//! Measurements that take time: started by `READ?`, `*TRG`/GET or `INIT`, ended by
//! the instrument's timer, with what waited for them (`*OPC`, `*OPC?`).

use crate::sim::instrument::DeviceIo;

use super::message::sci;
use super::{ScpiInstrument, ESR_OPC};

/// What a measurement in progress does with its reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Measurement {
    /// `READ?`, `MEAS:VOLT?`: answer it.
    Answer,
    /// `*TRG`, GET: queue it as a message of its own.
    Trigger,
    /// `INIT`: keep it for `FETCH?`.
    Keep,
}

impl ScpiInstrument {
    /// Starts a measurement; its reading goes where `what` says when it ends (at once
    /// for a measurement time of zero).
    pub(super) fn measure(&mut self, what: Measurement, io: &mut DeviceIo<'_>) {
        if self.measuring.is_some() {
            self.push_error(-213, "Init ignored");
            return;
        }
        if self.measurement_time.is_zero() {
            self.finish_measurement(what, io, false);
            return;
        }
        self.measurement_no += 1;
        self.measuring = Some(what);
        io.wake_after(self.measurement_time, self.measurement_no);
    }

    /// A measurement ended: its reading, and what waited for it. `alone`: outside a
    /// program message (from a timer), so the answers form a message of their own.
    pub(super) fn finish_measurement(
        &mut self,
        what: Measurement,
        io: &mut DeviceIo<'_>,
        alone: bool,
    ) {
        let v = self.reading();
        self.last_reading = Some(v);
        let mut parts: Vec<String> = Vec::new();
        match what {
            Measurement::Answer if alone => parts.push(sci(v)),
            Measurement::Answer => self.respond(io, &sci(v)),
            Measurement::Trigger => {
                self.triggers += 1;
                io.output.push_str(&sci(v));
                io.output.push(b"\n");
                io.output.finish_message();
            }
            Measurement::Keep => {}
        }
        if std::mem::take(&mut self.opc_pending) {
            self.registers.set_event(ESR_OPC);
        }
        if std::mem::take(&mut self.opc_query_pending) {
            parts.push("1".into());
        }
        if !parts.is_empty() {
            io.output.push_str(&parts.join(";"));
            io.output.push(b"\n");
            io.output.finish_message();
        }
    }

    /// Drops the measurement in progress and what waited for it.
    pub(super) fn abort_measurement(&mut self) {
        self.measuring = None;
        self.opc_pending = false;
        self.opc_query_pending = false;
    }
}
