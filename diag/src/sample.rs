//! What one timed transfer measured: its direction, time, CPU and network cost.

use crate::cpu::MachineModes;

/// Read (device talks) or write (device listens).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Device to controller.
    Read,
    /// Controller to device.
    Write,
}

impl Direction {
    /// "read" or "write".
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
        }
    }
}

/// One timed transfer.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Seconds on the backend's clock.
    pub seconds: f64,
    /// Bytes moved.
    pub bytes: u64,
    /// Host CPU seconds: modelled (simulator) or measured (user + system).
    pub cpu_seconds: f64,
    /// Whether `cpu_seconds` is modelled.
    pub cpu_modelled: bool,
    /// This process's measured user CPU seconds.
    pub process_user_s: f64,
    /// This process's measured system CPU seconds.
    pub process_system_s: f64,
    /// Wall seconds the call took on this machine.
    pub wall_seconds: f64,
    /// Seconds the calling thread was ready to run but waited for a CPU (Linux, wall
    /// clocks): what other work on the machine took from the transfer.
    pub waiting_seconds: Option<f64>,
    /// The machine's CPU modes over the call (wall-clock backends).
    pub machine: Option<MachineModes>,
    /// What the call cost on the network (network backends).
    pub wire: Option<Wire>,
}

/// A call's cost on the network.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// Requests sent (Prologix lines and `++` commands; VXI-11 RPC calls).
    pub requests: u64,
    /// Requests that waited for an answer.
    pub round_trips: u64,
    /// Bytes sent and received.
    pub bytes: u64,
    /// Wall seconds spent waiting for answers.
    pub waiting_s: f64,
}
