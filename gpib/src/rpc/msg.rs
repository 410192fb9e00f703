//! RPC call and reply messages (RFC 5531 section 9): version 2, AUTH_NONE (credentials
//! of other flavours are accepted and ignored, up to their 400-byte bound).

use super::xdr::{XdrError, XdrReader, XdrWriter};

/// RPC protocol version.
pub const RPC_VERSION: u32 = 2;
const CALL: u32 = 0;
const REPLY: u32 = 1;
const MSG_ACCEPTED: u32 = 0;
const MSG_DENIED: u32 = 1;
/// Credentials and verifiers are at most 400 bytes (RFC 5531).
pub const MAX_AUTH: usize = 400;

/// The header of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallHeader {
    /// Transaction id, echoed in the reply.
    pub xid: u32,
    /// Program number.
    pub prog: u32,
    /// Program version.
    pub vers: u32,
    /// Procedure number.
    pub proc_: u32,
}

/// The accept status of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AcceptStat {
    /// Success: the results follow.
    Success,
    /// The program is not served here.
    ProgUnavail,
    /// The version is not served; the versions that are: (low, high).
    ProgMismatch(u32, u32),
    /// No such procedure.
    ProcUnavail,
    /// The arguments could not be decoded.
    GarbageArgs,
    /// The server failed.
    SystemErr,
}

impl AcceptStat {
    fn code(self) -> u32 {
        match self {
            AcceptStat::Success => 0,
            AcceptStat::ProgUnavail => 1,
            AcceptStat::ProgMismatch(..) => 2,
            AcceptStat::ProcUnavail => 3,
            AcceptStat::GarbageArgs => 4,
            AcceptStat::SystemErr => 5,
        }
    }
}

/// Why an RPC message was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RpcError {
    /// The XDR encoding was bad.
    #[error("bad RPC message: {0}")]
    Xdr(#[from] XdrError),
    /// A call where a reply was expected or the other way round.
    #[error("RPC message type {0} where a {1} was expected")]
    MessageType(u32, &'static str),
    /// Not RPC version 2 (the server answers RPC_MISMATCH).
    #[error("RPC version {0} (only 2 is spoken)")]
    Version(u32),
    /// A reply to another call.
    #[error("RPC reply xid {got:#x} does not match the call's {want:#x}")]
    Xid {
        /// The reply's.
        got: u32,
        /// The call's.
        want: u32,
    },
    /// The server did not accept the call.
    #[error("RPC call not accepted: {0}")]
    NotAccepted(String),
    /// The server denied the call (version mismatch or authentication).
    #[error("RPC call denied: {0}")]
    Denied(String),
}

/// Encodes a call with AUTH_NONE credentials.
pub fn encode_call(h: CallHeader, args: &[u8]) -> Vec<u8> {
    let mut w = XdrWriter::from_vec(Vec::with_capacity(40 + args.len()));
    w.u32(h.xid)
        .u32(CALL)
        .u32(RPC_VERSION)
        .u32(h.prog)
        .u32(h.vers)
        .u32(h.proc_)
        .u32(0)
        .u32(0)
        .u32(0)
        .u32(0);
    let mut v = w.into_vec();
    v.extend_from_slice(args);
    v
}

/// Decodes a call: its header and the argument bytes. A version other than 2 is
/// [`RpcError::Version`] with the xid available through [`peek_xid`].
pub fn decode_call(rec: &[u8]) -> Result<(CallHeader, &[u8]), RpcError> {
    let mut r = XdrReader::new(rec);
    let xid = r.u32()?;
    let t = r.u32()?;
    if t != CALL {
        return Err(RpcError::MessageType(t, "call"));
    }
    let v = r.u32()?;
    if v != RPC_VERSION {
        return Err(RpcError::Version(v));
    }
    let prog = r.u32()?;
    let vers = r.u32()?;
    let proc_ = r.u32()?;
    for _ in 0..2 {
        let _flavor = r.u32()?;
        let _body = r.opaque(MAX_AUTH)?;
    }
    Ok((
        CallHeader {
            xid,
            prog,
            vers,
            proc_,
        },
        r.remaining(),
    ))
}

/// The first word of a message (its xid), when there is one.
pub fn peek_xid(rec: &[u8]) -> Option<u32> {
    XdrReader::new(rec).u32().ok()
}

/// Encodes an accepted reply with `results` (used only with `Success`).
pub fn encode_reply(xid: u32, stat: AcceptStat, results: &[u8]) -> Vec<u8> {
    let mut w = XdrWriter::from_vec(Vec::with_capacity(32 + results.len()));
    w.u32(xid)
        .u32(REPLY)
        .u32(MSG_ACCEPTED)
        .u32(0)
        .u32(0)
        .u32(stat.code());
    if let AcceptStat::ProgMismatch(lo, hi) = stat {
        w.u32(lo).u32(hi);
    }
    let mut v = w.into_vec();
    if stat == AcceptStat::Success {
        v.extend_from_slice(results);
    }
    v
}

/// Encodes a denied reply: RPC_MISMATCH, versions 2 to 2.
pub fn encode_rpc_mismatch(xid: u32) -> Vec<u8> {
    let mut w = XdrWriter::new();
    w.u32(xid)
        .u32(REPLY)
        .u32(MSG_DENIED)
        .u32(0)
        .u32(RPC_VERSION)
        .u32(RPC_VERSION);
    w.into_vec()
}

/// Decodes a reply to call `xid`: the result bytes of a successful call.
pub fn decode_reply(rec: &[u8], xid: u32) -> Result<&[u8], RpcError> {
    let mut r = XdrReader::new(rec);
    let got = r.u32()?;
    if got != xid {
        return Err(RpcError::Xid { got, want: xid });
    }
    let t = r.u32()?;
    if t != REPLY {
        return Err(RpcError::MessageType(t, "reply"));
    }
    match r.u32()? {
        MSG_ACCEPTED => {
            let _flavor = r.u32()?;
            let _verf = r.opaque(MAX_AUTH)?;
            match r.u32()? {
                0 => Ok(r.remaining()),
                1 => Err(RpcError::NotAccepted("program unavailable".into())),
                2 => {
                    let (lo, hi) = (r.u32()?, r.u32()?);
                    Err(RpcError::NotAccepted(format!(
                        "program version mismatch (server has {lo}..={hi})"
                    )))
                }
                3 => Err(RpcError::NotAccepted("procedure unavailable".into())),
                4 => Err(RpcError::NotAccepted("garbage arguments".into())),
                s => Err(RpcError::NotAccepted(format!("system error (status {s})"))),
            }
        }
        MSG_DENIED => match r.u32()? {
            0 => Err(RpcError::Denied("RPC version mismatch".into())),
            s => Err(RpcError::Denied(format!(
                "authentication error {}",
                r.u32().unwrap_or(s)
            ))),
        },
        s => Err(RpcError::MessageType(s, "reply status")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_and_reply_round_trip() {
        let h = CallHeader {
            xid: 9,
            prog: 0x0607AF,
            vers: 1,
            proc_: 10,
        };
        let c = encode_call(h, b"argsargs");
        let (back, args) = decode_call(&c).unwrap();
        assert_eq!(back, h);
        assert_eq!(args, b"argsargs");
        let r = encode_reply(9, AcceptStat::Success, b"res!");
        assert_eq!(decode_reply(&r, 9).unwrap(), b"res!");
        assert!(matches!(decode_reply(&r, 8), Err(RpcError::Xid { .. })));
        let r = encode_reply(9, AcceptStat::ProgMismatch(1, 1), b"");
        assert!(decode_reply(&r, 9)
            .unwrap_err()
            .to_string()
            .contains("1..=1"));
        let r = encode_rpc_mismatch(4);
        assert!(matches!(decode_reply(&r, 4), Err(RpcError::Denied(_))));
    }

    #[test]
    fn hostile_calls() {
        assert!(decode_call(&[]).is_err());
        assert!(decode_call(&[0, 0, 0, 1, 0, 0, 0, 1]).is_err());
        let mut w = XdrWriter::new();
        w.u32(1).u32(0).u32(3);
        assert_eq!(decode_call(w.as_bytes()).unwrap_err(), RpcError::Version(3));
        // Credentials claiming 4 GiB.
        let mut w = XdrWriter::new();
        w.u32(1)
            .u32(0)
            .u32(2)
            .u32(1)
            .u32(1)
            .u32(1)
            .u32(0)
            .u32(u32::MAX);
        assert!(matches!(
            decode_call(w.as_bytes()),
            Err(RpcError::Xdr(XdrError::TooLong { .. }))
        ));
    }
}
