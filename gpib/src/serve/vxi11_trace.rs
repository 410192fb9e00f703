//! `--trace` for the VXI-11 gateway: one line per call saying what the client sent
//! (the procedure, its link's device, the bytes written) and what it got back.

use super::rpc_server::Outcome;
use crate::backend::vxi11::proto::{self, err, flags, procs, reason};
use crate::rpc::XdrReader;

/// Bytes of data shown in a line; longer data is cut and its length given.
const SHOWN: usize = 40;

/// The procedure's name in VXI-11's own words.
pub(crate) fn proc_name(proc_: u32) -> String {
    match proc_ {
        procs::CREATE_LINK => "create_link",
        procs::DEVICE_WRITE => "device_write",
        procs::DEVICE_READ => "device_read",
        procs::DEVICE_READSTB => "device_readstb",
        procs::DEVICE_TRIGGER => "device_trigger",
        procs::DEVICE_CLEAR => "device_clear",
        procs::DEVICE_REMOTE => "device_remote",
        procs::DEVICE_LOCAL => "device_local",
        procs::DEVICE_LOCK => "device_lock",
        procs::DEVICE_UNLOCK => "device_unlock",
        procs::DEVICE_ENABLE_SRQ => "device_enable_srq",
        procs::DEVICE_DOCMD => "device_docmd",
        procs::DESTROY_LINK => "destroy_link",
        procs::CREATE_INTR_CHAN => "create_intr_chan",
        procs::DESTROY_INTR_CHAN => "destroy_intr_chan",
        other => return format!("procedure {other}"),
    }
    .to_string()
}

/// `"*IDN?\n"`, or the first [`SHOWN`] bytes and the length (the Prologix service's
/// trace shows data lines so too).
pub(crate) fn bytes(data: &[u8]) -> String {
    let head = &data[..data.len().min(SHOWN)];
    if head.len() == data.len() {
        format!("\"{}\"", head.escape_ascii())
    } else {
        format!("\"{}\"... ({} bytes)", head.escape_ascii(), data.len())
    }
}

/// What the client asked: the procedure, the device its link names (`link`), and the
/// arguments that matter (the data written, the size asked for).
pub(crate) fn request(proc_: u32, args: &[u8], link: Option<&str>) -> String {
    let mut s = proc_name(proc_);
    if let Some(l) = link {
        s.push(' ');
        s.push_str(l);
    }
    match proc_ {
        procs::CREATE_LINK => {
            if let Ok(p) = proto::CreateLink::decode(args) {
                s.push(' ');
                s.push_str(&bytes(&p.device));
                if p.lock_device {
                    s.push_str(" locked");
                }
            }
        }
        procs::DEVICE_WRITE => {
            if let Ok(p) = proto::Write::decode(args, usize::MAX) {
                s.push(' ');
                s.push_str(&bytes(p.data));
                if p.flags & flags::END != 0 {
                    s.push_str(" END");
                }
            }
        }
        procs::DEVICE_READ => {
            if let Ok(p) = proto::Read::decode(args) {
                s.push_str(&format!(" up to {} bytes", p.request_size));
                if p.flags & flags::TERMCHRSET != 0 {
                    s.push_str(&format!(" or {:?}", char::from(p.term_char)));
                }
            }
        }
        procs::DEVICE_DOCMD => {
            if let Ok(p) = proto::Docmd::decode(args, 4096) {
                s.push_str(&format!(" cmd 0x{:x} {}", p.cmd, bytes(p.data_in)));
            }
        }
        _ => {}
    }
    s
}

/// What the client got: `ok` or the error, and for a read the bytes and why it ended.
pub(crate) fn reply(proc_: u32, out: &Outcome) -> String {
    let r = match out {
        Outcome::Reply(r) => r,
        Outcome::Garbage => return "arguments that do not decode".into(),
        Outcome::ProcUnavail => return "no such procedure".into(),
    };
    let mut x = XdrReader::new(r);
    let Ok(code) = x.u32() else {
        return "?".into();
    };
    let mut s = if code == err::NONE {
        "ok".to_string()
    } else {
        format!("error {code} ({})", err::describe(code))
    };
    match proc_ {
        procs::CREATE_LINK if code == err::NONE => {
            if let Ok(lid) = x.u32() {
                s.push_str(&format!(", link {lid}"));
            }
        }
        procs::DEVICE_WRITE => {
            if let Ok(n) = x.u32() {
                s.push_str(&format!(", {n} bytes"));
            }
        }
        procs::DEVICE_READ => {
            if let Ok((_, why, data)) = proto::decode_read_resp(r, usize::MAX) {
                s.push_str(&format!(", {}", bytes(data)));
                for (bit, name) in [
                    (reason::END, "END"),
                    (reason::CHR, "CHR"),
                    (reason::REQCNT, "REQCNT"),
                ] {
                    if why & bit != 0 {
                        s.push(' ');
                        s.push_str(name);
                    }
                }
            }
        }
        procs::DEVICE_READSTB if code == err::NONE => {
            if let Ok(stb) = x.u32() {
                s.push_str(&format!(", status byte {stb}"));
            }
        }
        _ => {}
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_what_was_sent_and_answered() {
        let w = proto::Write {
            lid: 3,
            io_timeout: 1000,
            lock_timeout: 0,
            flags: flags::END,
            data: b"*IDN?\n",
        }
        .encode();
        assert_eq!(
            request(procs::DEVICE_WRITE, &w, Some("gpib0,22")),
            r#"device_write gpib0,22 "*IDN?\n" END"#
        );
        let long = vec![b'x'; 100];
        assert_eq!(
            bytes(&long),
            format!("\"{}\"... (100 bytes)", "x".repeat(40))
        );
        let resp = Outcome::Reply(proto::encode_read_resp(err::NONE, reason::END, b"1\n"));
        assert_eq!(reply(procs::DEVICE_READ, &resp), r#"ok, "1\n" END"#);
        let locked = Outcome::Reply(proto::encode_error(err::LOCKED));
        assert_eq!(
            reply(procs::DEVICE_LOCK, &locked),
            "error 11 (device locked by another link)"
        );
        assert_eq!(proc_name(99), "procedure 99");
    }
}
