//! What a measuring session is opened with: the instrument and how to drive it.

use crate::driver::ProtocolKind;

/// Which protocol to drive the instrument with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolChoice {
    /// The HP3565's when the device is one, else SCPI (probed on hardware).
    Auto,
    /// This one.
    Given(ProtocolKind),
}

/// What a session is opened with.
#[derive(Debug, Clone, Copy)]
pub struct SessionOptions {
    /// The instrument's primary address (default: the first instrument or listener).
    pub device: Option<u8>,
    /// How to drive it.
    pub protocol: ProtocolChoice,
    /// Timeout per I/O call in seconds (0: none; default: sized to the transfer).
    pub timeout: Option<f64>,
}
