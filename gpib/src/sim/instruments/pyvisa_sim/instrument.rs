//! A pyvisa-sim device on the simulated bus: messages end at the file's query
//! termination, answers are queued after the response time, and the IEEE 488.2
//! status byte, SRQ, device clear and trigger that pyvisa-sim lacks.

use std::collections::VecDeque;
use std::time::Duration;

use super::super::status488::{Pending, Status488};
use super::device::Device;
use crate::sim::instrument::{DeviceIo, Instrument};
use crate::status::StatusByte;

/// Largest program message held while it arrives (1 MiB). Past it the input is
/// dropped and counted as a command error.
pub const MAX_INPUT: usize = 1 << 20;

/// A device of a pyvisa-sim file as a simulated GPIB instrument.
#[derive(Debug)]
pub struct PyvisaSimInstrument {
    device: Device,
    input: Vec<u8>,
    /// Answers waiting for their response time: (timer token, bytes).
    pending: VecDeque<(u64, Vec<u8>)>,
    next_token: u64,
    response_time: Duration,
    /// `*SRE`, `*SRE?` and `*STB?` are ours (the file does not define them).
    own_sre: bool,
    own_stb: bool,
    /// SRE and the latched RQS (the file has no event status register).
    registers: Status488,
    triggers: u64,
    /// Messages that stopped where pyvisa-sim raises.
    failures: u64,
}

/// True when the file answers `query` in some way (a dialogue, a getter or a
/// setter pattern that starts with it).
fn file_defines(device: &Device, query: &str) -> bool {
    let starts = |k: &[u8]| {
        k.len() >= query.len() && k[..query.len()].eq_ignore_ascii_case(query.as_bytes())
    };
    device.dialogue_keys.keys().any(|k| starts(k))
        || device.getter_keys.keys().any(|k| starts(k))
        || device.register_keys.keys().any(|k| starts(k))
        || device.queue_keys.keys().any(|k| starts(k))
        || device
            .setters
            .iter()
            .any(|s| s.pattern.parse(&format!("{query} 1")).is_some())
}

impl PyvisaSimInstrument {
    /// The device as an instrument, answering at once.
    pub fn new(device: Device) -> Self {
        let own_sre = !file_defines(&device, "*SRE");
        let own_stb = !file_defines(&device, "*STB");
        Self {
            device,
            input: Vec::new(),
            pending: VecDeque::new(),
            next_token: 0,
            response_time: Duration::ZERO,
            own_sre,
            own_stb,
            registers: Status488::default(),
            triggers: 0,
            failures: 0,
        }
    }

    /// The same instrument, queueing each answer `time` after its query arrived.
    pub fn with_response_time(mut self, time: Duration) -> Self {
        self.response_time = time;
        self
    }

    /// The device it runs.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Times it was triggered (GET).
    pub fn triggers(&self) -> u64 {
        self.triggers
    }

    /// Messages that stopped early where pyvisa-sim raises an exception.
    pub fn failures(&self) -> u64 {
        self.failures
    }

    /// What is pending besides the status registers: `output` (MAV), an error (EAV).
    fn pending(&self, output: bool) -> Pending {
        Pending {
            output,
            error: self.device.error_pending(),
        }
    }

    /// Runs one message and queues its answers (now, or after the response time).
    fn run(&mut self, msg: &[u8], io: &mut DeviceIo<'_>) {
        let output_pending = !io.output.is_empty() || !self.pending.is_empty();
        let (own_sre, own_stb) = (self.own_sre, self.own_stb);
        let mut sre = self.registers.sre();
        let stb = self.registers.status(self.pending(output_pending)).bits();
        let mut extra = |q: &[u8]| -> Option<Option<Vec<u8>>> {
            let t = std::str::from_utf8(q).ok()?.trim();
            let (head, arg) = t.split_once(' ').unwrap_or((t, ""));
            if own_sre && head.eq_ignore_ascii_case("*SRE?") && arg.is_empty() {
                return Some(Some(sre.to_string().into_bytes()));
            }
            if own_sre && head.eq_ignore_ascii_case("*SRE") {
                // A value that is not 0..=255 is a command error.
                return arg.trim().parse::<u8>().ok().map(|v| {
                    sre = v & !StatusByte::RQS;
                    None
                });
            }
            if own_stb && head.eq_ignore_ascii_case("*STB?") && arg.is_empty() {
                return Some(Some(stb.to_string().into_bytes()));
            }
            None
        };
        let (answers, failed) = self.device.message(msg, &mut extra);
        self.registers.set_sre(sre);
        if let Some(why) = failed {
            self.failures += 1;
            log::warn!(
                "pyvisa-sim device {:?}: message {:?} stopped: {why}",
                self.device.name(),
                String::from_utf8_lossy(msg)
            );
        }
        if answers.is_empty() {
            return;
        }
        let bytes = answers.concat();
        if self.response_time.is_zero() && self.pending.is_empty() {
            io.output.push(&bytes);
            io.output.finish_message();
        } else {
            self.next_token += 1;
            self.pending.push_back((self.next_token, bytes));
            io.wake_after(self.response_time, self.next_token);
        }
    }
}

impl Instrument for PyvisaSimInstrument {
    fn status_changes_with_time(&self) -> bool {
        false // its status follows its calls and its output queue
    }

    fn model(&self) -> &str {
        self.device.name()
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn listen(&mut self, data: &[u8], end: bool, io: &mut DeviceIo<'_>) {
        let before = self
            .registers
            .service_wanted(self.pending(!io.output.is_empty()));
        if self.input.len().saturating_add(data.len()) > MAX_INPUT {
            self.input.clear();
            let _ = self.device.error_response("command_error");
            log::warn!(
                "pyvisa-sim device {:?}: a message over {MAX_INPUT} bytes was dropped",
                self.device.name()
            );
        } else {
            self.input.extend_from_slice(data);
            let eom = self.device.query_termination();
            // As pyvisa-sim: a message is complete when what arrived ends with the
            // query termination (with none, at END).
            let complete = if eom.is_empty() {
                end
            } else {
                self.input.ends_with(eom)
            };
            if complete {
                let n = self.input.len() - eom.len();
                let input = std::mem::take(&mut self.input);
                self.run(&input[..n], io);
                io.executed();
            }
        }
        self.registers
            .after(before, self.pending(!io.output.is_empty()));
    }

    fn clear(&mut self, io: &mut DeviceIo<'_>) {
        io.output.clear();
        self.input.clear();
        self.pending.clear();
    }

    fn trigger(&mut self, io: &mut DeviceIo<'_>) {
        let before = self
            .registers
            .service_wanted(self.pending(!io.output.is_empty()));
        self.triggers += 1;
        if file_defines(&self.device, "*TRG") {
            self.run(b"*TRG", io);
        }
        self.registers
            .after(before, self.pending(!io.output.is_empty()));
    }

    fn timer(&mut self, token: u64, io: &mut DeviceIo<'_>) {
        let before = self
            .registers
            .service_wanted(self.pending(!io.output.is_empty()));
        let mut pushed = false;
        while self.pending.front().is_some_and(|(t, _)| *t <= token) {
            if let Some((_, bytes)) = self.pending.pop_front() {
                io.output.push(&bytes);
                pushed = true;
            }
        }
        if pushed {
            io.output.finish_message();
        }
        self.registers
            .after(before, self.pending(!io.output.is_empty()));
    }

    fn status(&mut self, io: &DeviceIo<'_>) -> StatusByte {
        self.registers.status(self.pending(!io.output.is_empty()))
    }

    fn serial_poll(&mut self, io: &DeviceIo<'_>) -> StatusByte {
        self.registers
            .serial_poll(self.pending(!io.output.is_empty()))
    }
}
