//! A disc drive on an HP-IB (CS/80), as far as the bus sees it when idle.

use crate::sim::instrument::{DeviceIo, Instrument};
use crate::status::StatusByte;

/// A disc drive (HP 7914, 7958...). Whether it is mounted is host state (see
/// [`crate::sim::SimHost::mount`]); what the disc costs other interfaces while
/// mounted is the timing model's interface polling.
#[derive(Debug, Clone)]
pub struct Disc {
    model: String,
    received: u64,
}

impl Disc {
    /// A disc of the given model ("7958").
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            received: 0,
        }
    }

    /// Bytes the disc has been sent (it accepts and discards them).
    pub fn received(&self) -> u64 {
        self.received
    }
}

impl Instrument for Disc {
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn listen(&mut self, data: &[u8], _end: bool, _io: &mut DeviceIo<'_>) {
        self.received += data.len() as u64;
    }

    fn status(&mut self, _io: &DeviceIo<'_>) -> StatusByte {
        StatusByte(0)
    }
}
