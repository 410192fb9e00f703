//! The client's side of a reply: records read until the one that answers a call.
//!
//! Calls are answered in order, so a record whose xid is older than the call's is
//! the late reply to an earlier call (one that timed out, one whose answer was not
//! wanted) and is skipped. Skipping goes on only while the caller's deadline allows:
//! a peer that keeps answering with stale xids cannot hold the client.

use std::io::Read;

use super::msg::{self, RpcError};
use super::record::{self, Limits, RecordError};

/// Why no reply to the call came.
#[derive(Debug, thiserror::Error)]
pub enum ReplyError {
    /// No record came (a timeout is [`RecordError::is_timeout`]); the stream is still
    /// at a record boundary.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// A record stopped part way (a timeout, the end of the stream, a length over the
    /// limit): the stream is no longer at a record boundary, its framing is lost.
    #[error("{0} (part way through a record: the stream's framing is lost)")]
    Cut(RecordError),
    /// The reply's RPC header refused the call or did not decode.
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// The deadline passed while stale replies (to earlier calls) were skipped.
    #[error("gave up after skipping {skipped} stale repl(ies) to earlier calls")]
    Expired {
        /// Stale replies skipped.
        skipped: usize,
    },
}

/// The reply [`await_reply`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    /// Where its result bytes start in the record buffer (they run to its end).
    pub results: usize,
    /// Records read, the stale ones included.
    pub records: usize,
    /// Bytes of those records with their first fragment headers.
    pub bytes: u64,
}

/// True when `got` is the xid of a call sent before `want` (xids count up, wrapping).
pub fn is_stale(got: u32, want: u32) -> bool {
    got != want && got.wrapping_sub(want) > u32::MAX / 2
}

/// Reads records from `r` into `rec` until the reply to call `xid`, skipping stale
/// replies while `expired()` says false (it is asked before each record), and
/// decodes it. A record that is no reply, or a reply to a later call, is an error.
pub fn await_reply(
    r: &mut impl Read,
    limits: Limits,
    xid: u32,
    rec: &mut Vec<u8>,
    mut expired: impl FnMut() -> bool,
) -> Result<Reply, ReplyError> {
    let mut records = 0usize;
    let mut bytes = 0u64;
    loop {
        if records > 0 && expired() {
            return Err(ReplyError::Expired { skipped: records });
        }
        let mut counted = Counting { r: &mut *r, n: 0 };
        match record::read_record(&mut counted, limits, rec) {
            Ok(()) => {}
            Err(e) if counted.n == 0 => return Err(ReplyError::Record(e)),
            Err(e) => return Err(ReplyError::Cut(e)),
        }
        records += 1;
        bytes = bytes.saturating_add(rec.len() as u64 + 4);
        match msg::peek_xid(rec) {
            Some(x) if is_stale(x, xid) => continue,
            _ => break,
        }
    }
    let results = msg::decode_reply(rec, xid)?.len();
    Ok(Reply {
        results: rec.len() - results,
        records,
        bytes,
    })
}

/// A reader that counts the bytes it gives.
struct Counting<'a, R: Read> {
    r: &'a mut R,
    n: u64,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.r.read(buf)?;
        self.n += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpc::msg::{encode_reply, AcceptStat};

    fn wire(xids: &[u32]) -> Vec<u8> {
        let mut w = Vec::new();
        for &x in xids {
            record::write_record(
                &mut w,
                &encode_reply(x, AcceptStat::Success, b"okok"),
                1 << 20,
            )
            .unwrap();
        }
        w
    }

    #[test]
    fn stale_replies_are_skipped_until_the_deadline() {
        let w = wire(&[5, 6, 7]);
        let mut rec = Vec::new();
        let r = await_reply(&mut &w[..], Limits::DEFAULT, 7, &mut rec, || false).unwrap();
        assert_eq!(r.records, 3);
        assert_eq!(&rec[r.results..], b"okok");
        let mut asked = 0;
        let e = await_reply(&mut &w[..], Limits::DEFAULT, 7, &mut rec, || {
            asked += 1;
            asked > 1
        })
        .unwrap_err();
        assert!(matches!(e, ReplyError::Expired { skipped: 2 }), "{e}");
        // A reply to a later call is an error, not skipped.
        let w = wire(&[9]);
        let e = await_reply(&mut &w[..], Limits::DEFAULT, 7, &mut rec, || false).unwrap_err();
        assert!(
            matches!(e, ReplyError::Rpc(RpcError::Xid { got: 9, want: 7 })),
            "{e}"
        );
        assert!(is_stale(u32::MAX, 0) && !is_stale(1, 0) && !is_stale(3, 3));
        // Nothing at all: clean; a record cut off part way: framing lost.
        let e = await_reply(&mut &[][..], Limits::DEFAULT, 7, &mut rec, || false).unwrap_err();
        assert!(matches!(e, ReplyError::Record(RecordError::Closed)), "{e}");
        let w = wire(&[7]);
        let e = await_reply(&mut &w[..9], Limits::DEFAULT, 7, &mut rec, || false).unwrap_err();
        assert!(
            matches!(e, ReplyError::Cut(RecordError::Truncated { .. })),
            "{e}"
        );
    }
}
