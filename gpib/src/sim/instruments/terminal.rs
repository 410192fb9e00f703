//! A terminal, or any output-only device: it takes what it is sent, at the speed of its
//! line (its acceptance time), and says nothing.

use crate::sim::instrument::{DeviceIo, Instrument};

/// An output-only device.
#[derive(Debug, Clone, Default)]
pub struct Terminal {
    received: u64,
}

impl Terminal {
    /// A terminal that has received nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes received so far.
    pub fn received(&self) -> u64 {
        self.received
    }
}

impl Instrument for Terminal {
    fn status_changes_with_time(&self) -> bool {
        false // its status follows its calls and its output queue
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn model(&self) -> &str {
        "TERMINAL"
    }

    fn listen(&mut self, data: &[u8], _end: bool, _io: &mut DeviceIo<'_>) {
        self.received = self.received.saturating_add(data.len() as u64);
    }
}
