//! A portmapper (program 100000 v2) that knows one program: the VXI-11 core channel.
//! Over TCP here; over UDP, where discovery's broadcasts arrive, in [`super::portmap_udp`].
//! Both answer through [`procedure`].

use std::net::TcpStream;

use super::rpc_server::{serve_records, Outcome};
use super::Slot;
use crate::backend::vxi11::proto::{self, portmap};
use crate::rpc::{Limits, XdrReader, XdrWriter};

/// The portmapper's procedures for a core channel at `core_port`: NULL, and GETPORT
/// (the core channel's port for DEVICE_CORE version 1 over TCP, 0 for anything else).
pub(crate) fn procedure(core_port: u16, proc_: u32, args: &[u8]) -> Outcome {
    match proc_ {
        portmap::NULL => Outcome::Reply(Vec::new()),
        portmap::GETPORT => {
            let mut r = XdrReader::new(args);
            let (Ok(prog), Ok(vers), Ok(prot), Ok(_port)) = (r.u32(), r.u32(), r.u32(), r.u32())
            else {
                return Outcome::Garbage;
            };
            let port =
                if prog == proto::DEVICE_CORE && vers == proto::VERSION && prot == portmap::TCP {
                    u32::from(core_port)
                } else {
                    0
                };
            let mut w = XdrWriter::new();
            w.u32(port);
            Outcome::Reply(w.into_vec())
        }
        _ => Outcome::ProcUnavail,
    }
}

pub(crate) fn serve(s: TcpStream, slot: Slot, core_port: u16) {
    let limits = Limits {
        max_record: 4096,
        max_fragments: 64,
    };
    serve_records(
        s,
        (slot.idle, slot.message),
        limits,
        portmap::PROG,
        portmap::VERS,
        "portmapper",
        |proc_, args| procedure(core_port, proc_, args),
    );
}
