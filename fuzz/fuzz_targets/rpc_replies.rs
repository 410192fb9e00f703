//! The RPC client's side: arbitrary bytes as what a VXI-11 gateway or a portmapper
//! sends back. The first 4 bytes are the call's xid; the rest is the stream: records
//! read until the reply to that call (stale replies skipped, at most 16 records), then
//! its results decoded as every VXI-11 reply the client reads.
//!
//! Asserts, besides no panic: nothing decoded is longer than the input; the reply is a
//! record whose xid is the call's.
#![no_main]

use gpib::backend::vxi11::proto;
use gpib::rpc::{self, msg, record};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let xid = u32::from_be_bytes([data[0], data[1], data[2], data[3]]);
    let limits = record::Limits {
        max_record: 1 << 16,
        max_fragments: 64,
    };
    let mut stream = &data[4..];
    let mut rec = Vec::new();
    let mut asked = 0;
    let Ok(reply) = rpc::await_reply(&mut stream, limits, xid, &mut rec, || {
        asked += 1;
        asked > 16
    }) else {
        return;
    };
    assert!(rec.len() <= data.len());
    assert_eq!(msg::peek_xid(&rec), Some(xid));
    assert!(reply.records >= 1 && reply.results <= rec.len());
    assert!(reply.bytes <= data.len() as u64);
    let res = &rec[reply.results..];
    if let Ok((_, _, d)) = proto::decode_read_resp(res, 1 << 20) {
        assert!(d.len() <= res.len());
    }
    let _ = proto::CreateLinkResp::decode(res);
    let _ = proto::decode_error_value(res);
    let _ = proto::decode_error(res);
    if let Ok((_, d)) = proto::decode_docmd_resp(res, 4096) {
        assert!(d.len() <= res.len());
    }
    let _ = rpc::XdrReader::new(res).u32();
});
