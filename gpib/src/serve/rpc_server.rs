//! The RPC server loop of one connection: records in, calls decoded and checked,
//! replies out. A broken record ends the connection (its framing is lost); a bad
//! call gets the RPC error reply that says what was wrong.

use std::io::{BufWriter, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::deadline::{Deadline, TimedReader};
use crate::rpc::msg::{self, AcceptStat, RpcError};
use crate::rpc::record::{self, Limits, RecordError};

/// What a procedure did.
pub(crate) enum Outcome {
    /// Success, with these results.
    Reply(Vec<u8>),
    /// The arguments did not decode.
    Garbage,
    /// No such procedure.
    ProcUnavail,
}

/// The reply to one call message `call` (a TCP record, a UDP datagram) for `prog`/`vers`
/// served by `handle`: its results, or the RPC error reply that says what was wrong
/// (another program, another version, garbage arguments, no such procedure, an RPC
/// version other than 2). `None` when `call` is no call at all (undecodable, or a
/// reply): there is no xid to answer, the message is dropped (a TCP connection closed).
pub(crate) fn answer(
    call: &[u8],
    (prog, vers): (u32, u32),
    what: &str,
    peer: &str,
    handle: &mut impl FnMut(u32, &[u8]) -> Outcome,
) -> Option<Vec<u8>> {
    Some(match msg::decode_call(call) {
        Ok((h, args)) => {
            if h.prog != prog {
                msg::encode_reply(h.xid, AcceptStat::ProgUnavail, &[])
            } else if h.vers != vers {
                msg::encode_reply(h.xid, AcceptStat::ProgMismatch(vers, vers), &[])
            } else {
                let stat = match handle(h.proc_, args) {
                    Outcome::Reply(r) => {
                        return Some(msg::encode_reply(h.xid, AcceptStat::Success, &r))
                    }
                    Outcome::Garbage => AcceptStat::GarbageArgs,
                    Outcome::ProcUnavail => AcceptStat::ProcUnavail,
                };
                msg::encode_reply(h.xid, stat, &[])
            }
        }
        Err(RpcError::Version(v)) => {
            log::info!("{what} {peer}: RPC version {v}");
            msg::encode_rpc_mismatch(msg::peek_xid(call).unwrap_or(0))
        }
        Err(e) => {
            // Debug: a flood of datagrams must not flood the log (TCP says it closes).
            log::debug!("{what} {peer}: {e}");
            return None;
        }
    })
}

/// A record buffer larger than this after a call is given back (a long call's
/// capacity is not kept for the life of the connection).
const KEEP_RECORD: usize = 64 * 1024;

/// Serves calls to `prog`/`vers` on `s` until the peer closes, times out or breaks
/// the framing. A call may take `idle` to start (`None`: any time) and `message`
/// from its first byte to arrive whole.
pub(crate) fn serve_records(
    s: TcpStream,
    (idle, message): (Option<Duration>, Duration),
    limits: Limits,
    prog: u32,
    vers: u32,
    what: &str,
    mut handle: impl FnMut(u32, &[u8]) -> Outcome,
) {
    let peer = s.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let Ok(w) = s.try_clone() else { return };
    let mut reader = TimedReader::new(s, 64 * 1024);
    let mut writer = BufWriter::with_capacity(64 * 1024, w);
    let mut rec = Vec::new();
    loop {
        rec.shrink_to(KEEP_RECORD);
        // The next call's first byte within `idle`, then all of it within `message`.
        reader.set_deadline(Deadline::after(idle));
        match reader.wait_for_data() {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                log::debug!("{what} {peer}: {e}; closing the connection");
                return;
            }
        }
        reader.set_deadline(Deadline::after(Some(message)));
        match record::read_record(&mut reader, limits, &mut rec) {
            Ok(()) => {}
            Err(RecordError::Closed) => return,
            Err(e) => {
                log::info!("{what} {peer}: {e}; closing the connection");
                return;
            }
        }
        let Some(reply) = answer(&rec, (prog, vers), what, &peer, &mut handle) else {
            log::info!("{what} {peer}: no RPC call; closing the connection");
            return;
        };
        if record::put_record(&mut writer, &reply, 1 << 20).is_err() {
            return;
        }
        // Calls sent back to back (a query's write and read) get their replies back to
        // back, in one segment: the replies go out when no call waits in the buffer.
        // A client waits only after sending whole calls, so nothing here waits for a
        // reply held back.
        if reader.buffer().is_empty() && writer.flush().is_err() {
            return;
        }
    }
}
