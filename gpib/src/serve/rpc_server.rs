//! The RPC server loop of one connection: records in, calls decoded and checked,
//! replies out. A broken record ends the connection (its framing is lost); a bad
//! call gets the RPC error reply that says what was wrong.

use std::io::{BufReader, BufWriter, Write};
use std::net::TcpStream;

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

/// Serves calls to `prog`/`vers` on `s` until the peer closes, times out or breaks
/// the framing.
pub(crate) fn serve_records(
    s: TcpStream,
    limits: Limits,
    prog: u32,
    vers: u32,
    what: &str,
    mut handle: impl FnMut(u32, &[u8]) -> Outcome,
) {
    let peer = s.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let Ok(w) = s.try_clone() else { return };
    let mut reader = BufReader::with_capacity(64 * 1024, s);
    let mut writer = BufWriter::with_capacity(64 * 1024, w);
    let mut rec = Vec::new();
    loop {
        match record::read_record(&mut reader, limits, &mut rec) {
            Ok(()) => {}
            Err(RecordError::Closed) => return,
            Err(e) => {
                log::info!("{what} {peer}: {e}; closing the connection");
                return;
            }
        }
        let reply = match msg::decode_call(&rec) {
            Ok((h, args)) => {
                if h.prog != prog {
                    msg::encode_reply(h.xid, AcceptStat::ProgUnavail, &[])
                } else if h.vers != vers {
                    msg::encode_reply(h.xid, AcceptStat::ProgMismatch(vers, vers), &[])
                } else {
                    match handle(h.proc_, args) {
                        Outcome::Reply(r) => msg::encode_reply(h.xid, AcceptStat::Success, &r),
                        Outcome::Garbage => msg::encode_reply(h.xid, AcceptStat::GarbageArgs, &[]),
                        Outcome::ProcUnavail => {
                            msg::encode_reply(h.xid, AcceptStat::ProcUnavail, &[])
                        }
                    }
                }
            }
            Err(RpcError::Version(v)) => {
                log::info!("{what} {peer}: RPC version {v}");
                msg::encode_rpc_mismatch(msg::peek_xid(&rec).unwrap_or(0))
            }
            Err(e) => {
                log::info!("{what} {peer}: {e}; closing the connection");
                return;
            }
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
