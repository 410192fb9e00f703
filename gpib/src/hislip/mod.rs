//! HiSLIP (IVI-6.1, the High-Speed LAN Instrument Protocol): the message codec the
//! gateway of `gpib-diag serve` and the client (`gpib::backend::hislip`) share.
//!
//! A client opens two TCP connections to port [`PORT`]: the synchronous channel
//! (data, trigger, the end of a device clear) and the asynchronous channel (locks,
//! status queries, device clear, remote/local, service requests). Every message is a
//! 16-byte [`Header`] (`HS`, message type, control code, a 32-bit parameter, a 64-bit
//! payload length, all big-endian) and its payload.
//!
//! ```
//! use gpib::hislip::{kind, Header};
//! let h = Header::new(kind::DATA_END, 0, 0xffff_ff00, 5);
//! let bytes = h.encode();
//! assert_eq!(&bytes[..4], b"HS\x07\x00");
//! assert_eq!(Header::decode(&bytes).unwrap(), h);
//! ```

mod names;
mod query;
mod wire;

pub use names::{gateway_sub_address, sub_address_target};
pub(crate) use query::QueryScan;

pub use wire::{discard, read_header, read_message, read_payload, write_message, ReadError};

/// The IANA port of HiSLIP.
pub const PORT: u16 = 4880;
/// Bytes in a message header.
pub const HEADER_LEN: usize = 16;
/// The two bytes every header starts with.
pub const PROLOGUE: [u8; 2] = *b"HS";
/// The protocol version spoken here: 1.0 (major in the high byte).
pub const VERSION: u16 = 0x0100;
/// The message id of a client's first message after Initialize or a device clear
/// (ids then go up by 2).
pub const FIRST_MESSAGE_ID: u32 = 0xffff_ff00;
/// The message id a server may use for a response not tied to a request.
pub const ANY_MESSAGE_ID: u32 = 0xffff_ffff;
/// The maximum message size a peer may assume before negotiating it (VISA's default).
pub const DEFAULT_MAX_MESSAGE: u64 = 1 << 20;

/// Message types (IVI-6.1 table 4).
pub mod kind {
    /// Client → server, synchronous: version, vendor id, sub-address.
    pub const INITIALIZE: u8 = 0;
    /// Server → client: overlap mode, version, session id.
    pub const INITIALIZE_RESPONSE: u8 = 1;
    /// Either way: a fatal error; the connection closes.
    pub const FATAL_ERROR: u8 = 2;
    /// Either way: a non-fatal error.
    pub const ERROR: u8 = 3;
    /// Client → server, asynchronous: request (control 1) or release (0) a lock.
    pub const ASYNC_LOCK: u8 = 4;
    /// Server → client: the lock's outcome in the control code.
    pub const ASYNC_LOCK_RESPONSE: u8 = 5;
    /// Synchronous data, more to follow.
    pub const DATA: u8 = 6;
    /// Synchronous data, the end of a message (END).
    pub const DATA_END: u8 = 7;
    /// Client → server, synchronous: the last step of a device clear.
    pub const DEVICE_CLEAR_COMPLETE: u8 = 8;
    /// Server → client: the device clear is done.
    pub const DEVICE_CLEAR_ACKNOWLEDGE: u8 = 9;
    /// Client → server, asynchronous: REN, GTL, LLO.
    pub const ASYNC_REMOTE_LOCAL_CONTROL: u8 = 10;
    /// Server → client: done.
    pub const ASYNC_REMOTE_LOCAL_RESPONSE: u8 = 11;
    /// Client → server, synchronous: group execute trigger.
    pub const TRIGGER: u8 = 12;
    /// Server → client, synchronous: a response was discarded.
    pub const INTERRUPTED: u8 = 13;
    /// Server → client, asynchronous: a response was discarded.
    pub const ASYNC_INTERRUPTED: u8 = 14;
    /// Client → server, asynchronous: the client's maximum message size (payload u64).
    pub const ASYNC_MAXIMUM_MESSAGE_SIZE: u8 = 15;
    /// Server → client: the server's maximum message size (payload u64).
    pub const ASYNC_MAXIMUM_MESSAGE_SIZE_RESPONSE: u8 = 16;
    /// Client → server, asynchronous channel's first message: the session id.
    pub const ASYNC_INITIALIZE: u8 = 17;
    /// Server → client: the server's vendor id.
    pub const ASYNC_INITIALIZE_RESPONSE: u8 = 18;
    /// Client → server, asynchronous: the first step of a device clear.
    pub const ASYNC_DEVICE_CLEAR: u8 = 19;
    /// Server → client, asynchronous: the device requests service (status byte in the
    /// control code).
    pub const ASYNC_SERVICE_REQUEST: u8 = 20;
    /// Client → server, asynchronous: read the status byte.
    pub const ASYNC_STATUS_QUERY: u8 = 21;
    /// Server → client: the status byte in the control code.
    pub const ASYNC_STATUS_RESPONSE: u8 = 22;
    /// Server → client: the device clear may proceed (feature preference in control).
    pub const ASYNC_DEVICE_CLEAR_ACKNOWLEDGE: u8 = 23;
    /// Client → server, asynchronous: who holds locks.
    pub const ASYNC_LOCK_INFO: u8 = 24;
    /// Server → client: exclusive lock held (control), clients holding locks (param).
    pub const ASYNC_LOCK_INFO_RESPONSE: u8 = 25;
}

/// Fatal error codes (control code of [`kind::FATAL_ERROR`]).
pub mod fatal {
    /// Unidentified error.
    pub const UNIDENTIFIED: u8 = 0;
    /// Poorly formed message header.
    pub const BAD_HEADER: u8 = 1;
    /// Attempt to use the connection without both channels established.
    pub const NO_CHANNELS: u8 = 2;
    /// Invalid initialization sequence.
    pub const BAD_INITIALIZATION: u8 = 3;
    /// The server has as many clients as it takes.
    pub const TOO_MANY_CLIENTS: u8 = 4;
}

/// Non-fatal error codes (control code of [`kind::ERROR`]).
pub mod error {
    /// Unidentified error.
    pub const UNIDENTIFIED: u8 = 0;
    /// Unrecognized message type.
    pub const UNRECOGNIZED_TYPE: u8 = 1;
    /// Unrecognized control code.
    pub const UNRECOGNIZED_CONTROL: u8 = 2;
    /// Unrecognized vendor-defined message.
    pub const UNRECOGNIZED_VENDOR: u8 = 3;
    /// Message too large.
    pub const TOO_LARGE: u8 = 4;
}

/// Outcomes of a lock request or release (control code of
/// [`kind::ASYNC_LOCK_RESPONSE`]).
pub mod lock {
    /// Request: not granted within the timeout.
    pub const FAILURE: u8 = 0;
    /// Request granted, or an exclusive lock released.
    pub const SUCCESS: u8 = 1;
    /// A shared lock released.
    pub const SUCCESS_SHARED: u8 = 2;
    /// Release of a lock not held, or a request that cannot be.
    pub const ERROR: u8 = 3;
    /// Control code of [`super::kind::ASYNC_LOCK`]: release.
    pub const RELEASE: u8 = 0;
    /// Control code of [`super::kind::ASYNC_LOCK`]: request.
    pub const REQUEST: u8 = 1;
}

/// Control codes of [`kind::ASYNC_REMOTE_LOCAL_CONTROL`].
pub mod remote_local {
    /// Unassert REN.
    pub const DISABLE_REMOTE: u8 = 0;
    /// Assert REN.
    pub const ENABLE_REMOTE: u8 = 1;
    /// Unassert REN (devices go to local).
    pub const DISABLE_AND_GTL: u8 = 2;
    /// Assert REN and address the device (remote).
    pub const ENABLE_AND_GOTO_REMOTE: u8 = 3;
    /// Assert REN and send local lockout.
    pub const ENABLE_AND_LOCKOUT_LOCAL: u8 = 4;
    /// Assert REN, address the device, local lockout.
    pub const ENABLE_AND_GTR_LLO: u8 = 5;
    /// Go to local, REN left as it is.
    pub const JUST_GTL: u8 = 6;
}

/// The name of a message type, for traces and errors.
pub fn kind_name(k: u8) -> &'static str {
    const NAMES: [&str; 26] = [
        "Initialize",
        "InitializeResponse",
        "FatalError",
        "Error",
        "AsyncLock",
        "AsyncLockResponse",
        "Data",
        "DataEnd",
        "DeviceClearComplete",
        "DeviceClearAcknowledge",
        "AsyncRemoteLocalControl",
        "AsyncRemoteLocalResponse",
        "Trigger",
        "Interrupted",
        "AsyncInterrupted",
        "AsyncMaximumMessageSize",
        "AsyncMaximumMessageSizeResponse",
        "AsyncInitialize",
        "AsyncInitializeResponse",
        "AsyncDeviceClear",
        "AsyncServiceRequest",
        "AsyncStatusQuery",
        "AsyncStatusResponse",
        "AsyncDeviceClearAcknowledge",
        "AsyncLockInfo",
        "AsyncLockInfoResponse",
    ];
    match k {
        128..=255 => "VendorSpecific",
        _ => NAMES.get(usize::from(k)).copied().unwrap_or("Reserved"),
    }
}

/// Two bytes found where a header's prologue should be, for messages: as text with
/// escapes and in hex, `"::" (0x3a 0x3a)`.
///
/// ```
/// assert_eq!(gpib::hislip::prologue_text(*b"::"), r#""::" (0x3a 0x3a)"#);
/// assert_eq!(gpib::hislip::prologue_text([0, 0xff]), r#""\x00\xff" (0x00 0xff)"#);
/// ```
pub fn prologue_text(p: [u8; 2]) -> String {
    format!("\"{}\" ({:#04x} {:#04x})", p.escape_ascii(), p[0], p[1])
}

/// A message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Message type ([`kind`]).
    pub kind: u8,
    /// Control code.
    pub control: u8,
    /// Message parameter.
    pub param: u32,
    /// Payload length in bytes, as claimed (never trusted for an allocation).
    pub len: u64,
}

impl Header {
    /// A header.
    pub fn new(kind: u8, control: u8, param: u32, len: u64) -> Self {
        Self {
            kind,
            control,
            param,
            len,
        }
    }

    /// The 16 bytes on the wire.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[..2].copy_from_slice(&PROLOGUE);
        b[2] = self.kind;
        b[3] = self.control;
        b[4..8].copy_from_slice(&self.param.to_be_bytes());
        b[8..].copy_from_slice(&self.len.to_be_bytes());
        b
    }

    /// A header from its 16 bytes; the prologue is checked (the error holds the two
    /// bytes found).
    pub fn decode(b: &[u8; HEADER_LEN]) -> Result<Self, [u8; 2]> {
        if b[..2] != PROLOGUE {
            return Err([b[0], b[1]]);
        }
        let mut p = [0u8; 4];
        p.copy_from_slice(&b[4..8]);
        let mut l = [0u8; 8];
        l.copy_from_slice(&b[8..]);
        Ok(Self {
            kind: b[2],
            control: b[3],
            param: u32::from_be_bytes(p),
            len: u64::from_be_bytes(l),
        })
    }
}

/// A whole message: header and payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The header (its `len` is the payload's length).
    pub header: Header,
    /// The payload.
    pub payload: Vec<u8>,
}

/// A message's bytes: header and payload.
pub fn encode(kind: u8, control: u8, param: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(HEADER_LEN + payload.len());
    v.extend_from_slice(&Header::new(kind, control, param, payload.len() as u64).encode());
    v.extend_from_slice(payload);
    v
}

/// The Initialize message's parameter: version in the high 16 bits, vendor id low.
pub fn initialize_param(version: u16, vendor: [u8; 2]) -> u32 {
    (u32::from(version) << 16) | u32::from(u16::from_be_bytes(vendor))
}

#[cfg(test)]
mod tests;
