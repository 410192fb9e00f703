//! The RPC record and XDR decoders the VXI-11 server and client use, on arbitrary
//! bytes. Every decoder must return an error, never panic, and never allocate more than the
//! input's length plus a small constant.
#![no_main]

use gpib::backend::vxi11::proto;
use gpib::rpc::{msg, record};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = record::Limits {
        max_record: 1 << 16,
        max_fragments: 64,
    };
    let mut out = Vec::new();
    let _ = record::read_record(&mut &data[..], limits, &mut out);
    assert!(out.len() <= data.len());
    if let Ok((_h, args)) = msg::decode_call(data) {
        let _ = proto::CreateLink::decode(args);
        let _ = proto::Write::decode(args, 1 << 20);
        let _ = proto::Read::decode(args);
        let _ = proto::Generic::decode(args);
        let _ = proto::Lock::decode(args);
        let _ = proto::RemoteFunc::decode(args);
        let _ = proto::Docmd::decode(args, 4096);
        let _ = proto::decode_enable_srq(args);
    }
    let _ = msg::decode_reply(data, 0);
    let _ = proto::decode_read_resp(data, 1 << 20);
    let _ = proto::decode_docmd_resp(data, 4096);
    if let Ok(name) = std::str::from_utf8(data) {
        let _ = proto::parse_device_name(name, None);
        let _ = name.parse::<gpib::NetworkResource>();
    }
});
