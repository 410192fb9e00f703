//! Which clock a bus's times are on: one enum for the backends, the trace files and
//! the tools' records.

/// Whether a backend's clock is wall time or modelled (virtual) time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockKind {
    /// Real elapsed time.
    Wall,
    /// The simulator's virtual time.
    Virtual,
}

impl ClockKind {
    /// Its name in files and reports: `wall`, `virtual`.
    pub fn name(self) -> &'static str {
        match self {
            ClockKind::Wall => "wall",
            ClockKind::Virtual => "virtual",
        }
    }
}

impl std::fmt::Display for ClockKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
