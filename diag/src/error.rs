//! The tool's errors: the library's, usage mistakes, and output failures.

/// What can stop a `gpib-diag` run.
#[derive(Debug, thiserror::Error)]
pub enum DiagError {
    /// An error from the bus.
    #[error(transparent)]
    Gpib(#[from] gpib::Error),
    /// The arguments do not make sense together.
    #[error("{0}")]
    Usage(String),
    /// The linux-gpib backend was asked for but not compiled in.
    #[cfg_attr(feature = "linux-gpib", allow(dead_code))]
    #[error(
        "the linux-gpib backend is not in this build: rebuild with \
         `cargo build --release -p gpib-diag --features linux-gpib` \
         (it needs libgpib; see the README)"
    )]
    NoLinuxGpib,
    /// Writing the output failed.
    #[error("cannot write {path}: {source}")]
    Output {
        /// Where.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A figure could not be drawn.
    #[error("cannot draw the plot: {0}")]
    Plot(String),
    /// The data read back differs from the data written.
    #[error("data check failed: {0}")]
    DataMismatch(String),
    /// An input file (a trace, a VCD) was refused.
    #[error("{path}: {what}")]
    Input {
        /// Which file.
        path: String,
        /// What was wrong with it.
        what: String,
    },
    /// Two saved runs that cannot be compared (`compare BEFORE.json AFTER.json`).
    #[error("cannot compare {before} with {after}: {why}")]
    Incomparable {
        /// The first file.
        before: String,
        /// The second file.
        after: String,
        /// Why not.
        why: String,
    },
    /// A step of a longer run failed, after the steps before it were measured.
    #[error("{what}: {source}")]
    Step {
        /// Which step ("at 4194304 bytes", "with hp9000-350").
        what: String,
        /// What went wrong.
        #[source]
        source: Box<DiagError>,
    },
}

impl DiagError {
    /// The same error, said to have happened at transfer size `size`.
    pub fn at_size(self, size: u64) -> Self {
        DiagError::Step {
            what: format!("at {size} bytes"),
            source: Box::new(self),
        }
    }

    /// The same error, said to have happened with configuration `label`.
    pub fn in_config(self, label: &str) -> Self {
        DiagError::Step {
            what: format!("with {label}"),
            source: Box::new(self),
        }
    }

    /// The bytes a read got before it waited out its timeout, when this is such a read
    /// and it got some: the device stopped talking without ending its message.
    pub fn stalled_after(&self) -> Option<u64> {
        match self {
            DiagError::Step { source, .. } => source.stalled_after(),
            DiagError::Gpib(e) => stalled_read(e),
            _ => None,
        }
    }

    /// The process exit code: 2 for usage mistakes, 1 for everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            DiagError::Step { source, .. } => source.exit_code(),
            DiagError::Usage(_) | DiagError::NoLinuxGpib | DiagError::Incomparable { .. } => 2,
            DiagError::Gpib(e)
                if matches!(
                    e.kind(),
                    gpib::ErrorKind::Config | gpib::ErrorKind::InvalidAddress
                ) =>
            {
                2
            }
            _ => 1,
        }
    }
}

/// The bytes a read got before it waited out its timeout, when `e` is such a read and
/// it got some. A driver's timeout (linux-gpib's EABO) does not say which operation
/// timed out: one that moved bytes is taken for the read it nearly always is.
pub fn stalled_read(e: &gpib::Error) -> Option<u64> {
    match e {
        gpib::Error::Timeout {
            operation,
            transferred,
            ..
        } => (*operation == "read" && *transferred > 0).then_some(*transferred as u64),
        _ if e.kind() == gpib::ErrorKind::Timeout => {
            e.transferred().filter(|&n| n > 0).map(|n| n as u64)
        }
        _ => None,
    }
}

/// The tool's result type.
pub type Result<T, E = DiagError> = std::result::Result<T, E>;
