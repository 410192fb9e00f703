//! The library's one error type, and the small `Copy` kind that keeps its bus meaning.

use crate::timeout::Timeout;

/// What went wrong, as a small `Copy` value to match on.
///
/// Every [`Error`] maps to exactly one kind; new kinds may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An operation did not complete within the timeout (linux-gpib `EABO` with `TIMO`).
    Timeout,
    /// Data was sent but no device was listening (linux-gpib `ENOL`).
    NoListener,
    /// The board is not controller-in-charge (linux-gpib `ECIC`).
    NotControllerInCharge,
    /// Bus command bytes (sent with ATN) were not accepted in time.
    CommandTimeout,
    /// SRQ is asserted but no device answers a serial poll with RQS set (linux-gpib `ESRQ`).
    SrqStuck,
    /// The board is not addressed the way the transfer needs: to talk for a write, to
    /// listen for a read (linux-gpib `EADR`).
    NotAddressed,
    /// An IEEE 488.2 arbitrary block was malformed.
    MalformedBlock,
    /// An address outside 0..=30 (or 0x60..=0x7E for secondaries).
    InvalidAddress,
    /// A VISA-style resource string that does not parse.
    InvalidResource,
    /// An argument out of range or inconsistent (linux-gpib `EARG`).
    InvalidArgument,
    /// The backend cannot do this operation (linux-gpib `ECAP`).
    Unsupported,
    /// The backend is not available in this build or on this machine (linux-gpib `EDVR`/`ENEB`).
    BackendUnavailable,
    /// Two devices drove the bus at once, or the bus reported an error (linux-gpib `EBUS`).
    BusConflict,
    /// A device answered with something the caller could not understand.
    Protocol,
    /// A configuration was invalid: a simulator configuration, or a gpib.conf.
    Config,
    /// An operating-system I/O error (linux-gpib `EDMA`, `EFSO`...).
    Io,
}

/// The error type of every fallible operation in this crate.
///
/// Operations that move data report how many bytes got through before the error
/// (see [`Error::transferred`]): a read that times out has still put those bytes
/// into the caller's buffer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operation timed out.
    ///
    /// A `timeout` of [`Timeout::Never`] means none was set: the operation would have
    /// waited forever on a real bus (the simulator reports it instead of hanging).
    #[error("{operation} {} with {transferred} byte(s) transferred", timed_out(.timeout))]
    Timeout {
        /// Which operation ("read", "write", "command", "wait for SRQ"...).
        operation: &'static str,
        /// The timeout that was in force.
        timeout: Timeout,
        /// Bytes moved before the timeout (already in the caller's buffer for reads).
        transferred: usize,
    },
    /// No device was listening when data was sent.
    #[error("no listener on the bus ({transferred} byte(s) transferred)")]
    NoListener {
        /// Bytes sent before the condition was detected.
        transferred: usize,
    },
    /// The board is not controller-in-charge.
    #[error("the board is not controller-in-charge")]
    NotControllerInCharge,
    /// Command bytes were not accepted within the timeout.
    #[error(
        "bus command timed out after {transferred} of {total} byte(s) (no device accepted them)"
    )]
    CommandTimeout {
        /// Command bytes accepted before the timeout.
        transferred: usize,
        /// Command bytes asked for.
        total: usize,
    },
    /// SRQ stays asserted but no device requests service.
    #[error("SRQ is asserted but no polled device has RQS set (polled: {polled:?})")]
    SrqStuck {
        /// Primary addresses that were polled.
        polled: Vec<u8>,
    },
    /// The board is not addressed for the transfer.
    #[error("the board is not addressed for this transfer: {0}")]
    NotAddressed(String),
    /// A malformed IEEE 488.2 arbitrary block.
    #[error("malformed arbitrary block: {reason} (after {read} byte(s) read)")]
    MalformedBlock {
        /// What was wrong with it.
        reason: String,
        /// Bytes read from the device when the problem was found.
        read: usize,
    },
    /// An address out of range.
    #[error("invalid GPIB address {value}: {reason}")]
    InvalidAddress {
        /// The value given.
        value: u32,
        /// Why it is invalid.
        reason: &'static str,
    },
    /// A resource string that does not parse.
    #[error("invalid resource string {text:?}: {reason}")]
    InvalidResource {
        /// The text given.
        text: String,
        /// What was wrong with it.
        reason: String,
    },
    /// An argument out of range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The backend does not support this operation.
    #[error("{operation} is not supported by the {backend} backend")]
    Unsupported {
        /// The operation asked for.
        operation: &'static str,
        /// The backend's name.
        backend: String,
    },
    /// The backend cannot be used.
    #[error("the {backend} backend is unavailable: {hint}")]
    BackendUnavailable {
        /// The backend's name.
        backend: String,
        /// What to do about it.
        hint: String,
    },
    /// More than one device drove the bus, or the board reported a bus error.
    #[error("bus conflict: {detail} ({transferred} byte(s) transferred)")]
    BusConflict {
        /// What was seen.
        detail: String,
        /// Bytes moved before the conflict was detected.
        transferred: usize,
    },
    /// A device's answer could not be understood.
    #[error("unexpected answer from the device: {0}")]
    Protocol(String),
    /// A response went on past the device handle's maximum read length without END
    /// or EOS (see [`crate::Device::set_max_read`]). Its kind is [`ErrorKind::Protocol`].
    ///
    /// No byte is lost: the bytes read are in `data`, or, for the calls that read into
    /// the caller's `Vec` ([`crate::Device::read_to_end_into`]), in that `Vec` (and
    /// `data` is empty). The rest of the response is still unread: clear the device
    /// before its next use.
    #[error("response longer than the {limit}-byte maximum read length: {transferred} byte(s) read without END (raise it with Device::set_max_read, or clear the device)")]
    ResponseTooLong {
        /// The maximum read length in force.
        limit: usize,
        /// Bytes read.
        transferred: usize,
        /// Those bytes, when the call had no buffer of the caller's to keep them in.
        data: Vec<u8>,
    },
    /// A simulator configuration that is invalid.
    #[error("simulator configuration: {0}")]
    Config(String),
    /// A linux-gpib configuration file (gpib.conf) that does not parse or does not
    /// make sense; the error names the line, column and key.
    #[error("{0}")]
    GpibConf(Box<crate::gpibconf::error::ParseError>),
    /// An operating-system I/O error.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A backend-specific error, keeping the original as its source.
    ///
    /// Hardware backends use it for every error their driver reports, so that the
    /// driver's own error (its code, its status word) stays reachable through
    /// [`std::error::Error::source`]. Match on [`Error::kind`], not on the variant:
    /// a timeout reported by a driver is `Backend { kind: ErrorKind::Timeout, .. }`.
    #[error("{message}")]
    Backend {
        /// The library's kind for it.
        kind: ErrorKind,
        /// A description with the backend's own code.
        message: String,
        /// Bytes moved before the error, for errors raised while moving data
        /// (see [`Error::transferred`]); `None` otherwise.
        transferred: Option<usize>,
        /// The backend's original error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// "timed out after 3s", or for no timeout, why there is no end.
fn timed_out(timeout: &Timeout) -> String {
    match timeout {
        Timeout::Never => {
            "would wait forever (no timeout is set, and nothing will come)".to_string()
        }
        Timeout::After(timeout) => format!("timed out after {timeout:?}"),
    }
}

impl Error {
    /// The kind of error, keeping its bus meaning.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Timeout { .. } => ErrorKind::Timeout,
            Error::NoListener { .. } => ErrorKind::NoListener,
            Error::NotControllerInCharge => ErrorKind::NotControllerInCharge,
            Error::CommandTimeout { .. } => ErrorKind::CommandTimeout,
            Error::SrqStuck { .. } => ErrorKind::SrqStuck,
            Error::NotAddressed(_) => ErrorKind::NotAddressed,
            Error::MalformedBlock { .. } => ErrorKind::MalformedBlock,
            Error::InvalidAddress { .. } => ErrorKind::InvalidAddress,
            Error::InvalidResource { .. } => ErrorKind::InvalidResource,
            Error::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Error::Unsupported { .. } => ErrorKind::Unsupported,
            Error::BackendUnavailable { .. } => ErrorKind::BackendUnavailable,
            Error::BusConflict { .. } => ErrorKind::BusConflict,
            Error::Protocol(_) | Error::ResponseTooLong { .. } => ErrorKind::Protocol,
            Error::Config(_) | Error::GpibConf(_) => ErrorKind::Config,
            Error::Io(_) => ErrorKind::Io,
            Error::Backend { kind, .. } => *kind,
        }
    }

    /// Bytes that got through before the error, for errors raised while moving data.
    pub fn transferred(&self) -> Option<usize> {
        match self {
            Error::Timeout { transferred, .. }
            | Error::NoListener { transferred }
            | Error::CommandTimeout { transferred, .. }
            | Error::BusConflict { transferred, .. }
            | Error::ResponseTooLong { transferred, .. }
            | Error::MalformedBlock {
                read: transferred, ..
            } => Some(*transferred),
            Error::Backend { transferred, .. } => *transferred,
            _ => None,
        }
    }

    /// The same error with its transferred count raised by `offset` (for multi-part transfers).
    pub(crate) fn offset_transferred(mut self, offset: usize) -> Self {
        match &mut self {
            Error::Timeout { transferred, .. }
            | Error::NoListener { transferred }
            | Error::BusConflict { transferred, .. }
            | Error::ResponseTooLong { transferred, .. }
            | Error::MalformedBlock {
                read: transferred, ..
            } => *transferred = transferred.saturating_add(offset),
            Error::Backend {
                transferred: Some(transferred),
                ..
            } => *transferred = transferred.saturating_add(offset),
            _ => {}
        }
        self
    }

    /// Shorthand for an [`Error::Unsupported`].
    pub fn unsupported(operation: &'static str, backend: &str) -> Self {
        Error::Unsupported {
            operation,
            backend: backend.to_string(),
        }
    }
}

impl From<std::convert::Infallible> for Error {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_counts() {
        let e = Error::Timeout {
            operation: "read",
            timeout: Timeout::After(std::time::Duration::from_secs(3)),
            transferred: 17,
        };
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert_eq!(e.transferred(), Some(17));
        assert!(e.to_string().contains("17 byte(s)"));
        let e = e.offset_transferred(3);
        assert_eq!(e.transferred(), Some(20));
        assert_eq!(Error::NotControllerInCharge.transferred(), None);
        let io = Error::from(std::io::Error::other("x"));
        assert_eq!(io.kind(), ErrorKind::Io);
    }

    #[test]
    fn backend_errors_keep_kind_count_and_source() {
        use std::error::Error as _;
        let e = Error::Backend {
            kind: ErrorKind::Timeout,
            message: "read timed out (driver code 6)".into(),
            transferred: Some(5),
            source: Box::new(std::io::Error::other("driver said EABO")),
        };
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert_eq!(e.transferred(), Some(5));
        assert_eq!(e.source().unwrap().to_string(), "driver said EABO");
        let e = e.offset_transferred(10);
        assert_eq!(e.transferred(), Some(15));
        let e = Error::Backend {
            kind: ErrorKind::Unsupported,
            message: "no".into(),
            transferred: None,
            source: Box::new(std::io::Error::other("ECAP")),
        };
        assert_eq!(e.transferred(), None);
        assert_eq!(e.offset_transferred(3).transferred(), None);
    }
}
