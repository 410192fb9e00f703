//! A HiSLIP connection's first message: Initialize makes it a new session's
//! synchronous channel, AsyncInitialize the asynchronous channel of a session opened
//! before; anything else is a fatal error.

use std::net::TcpStream;
use std::sync::{Arc, Mutex};

use super::hislip::{fatal, parse_sub_address, Gateway, VENDOR_ID};
use super::hislip_channels;
use super::Slot;
use crate::deadline::{Deadline, TimedReader};
use crate::hislip::{self, kind, ReadError};

/// The longest sub-address taken.
const MAX_SUB_ADDRESS: u64 = 256;

/// Serves one connection: its first message makes it a session's synchronous channel
/// (Initialize) or asynchronous channel (AsyncInitialize).
pub(crate) fn serve(gw: &Arc<Gateway>, s: TcpStream, slot: Slot) {
    let Ok(peer) = s.peer_addr() else { return };
    let Ok(w) = s.try_clone() else { return };
    let mut r = TimedReader::new(s, 64 * 1024);
    r.set_deadline(Deadline::after(slot.idle));
    match r.wait_for_data() {
        Ok(true) => {}
        _ => return,
    }
    r.set_deadline(Deadline::after(Some(slot.message)));
    let h = match hislip::read_header(&mut r) {
        Ok(h) => h,
        Err(ReadError::BadPrologue(_)) => {
            return fatal(&w, hislip::fatal::BAD_HEADER, "not a HiSLIP header");
        }
        Err(e) => {
            log::debug!("HiSLIP {peer}: {e}");
            return;
        }
    };
    match h.kind {
        kind::INITIALIZE => {
            let mut name = Vec::new();
            if let Err(e) = hislip::read_payload(&mut r, &h, MAX_SUB_ADDRESS, &mut name) {
                return fatal(&w, hislip::fatal::BAD_INITIALIZATION, &e.to_string());
            }
            let name = String::from_utf8_lossy(&name).into_owned();
            let target = match parse_sub_address(&name, gw.default) {
                Ok(t) if gw.boards.contains_key(&t.0) => t,
                Ok(t) => {
                    return fatal(
                        &w,
                        hislip::fatal::UNIDENTIFIED,
                        &format!("no board gpib{}", t.0),
                    )
                }
                Err(why) => return fatal(&w, hislip::fatal::UNIDENTIFIED, &why),
            };
            let Ok(sync) = w.try_clone() else { return };
            let Some(id) = gw.open(target, Arc::new(Mutex::new(sync))) else {
                return fatal(&w, hislip::fatal::TOO_MANY_CLIENTS, "no session id left");
            };
            let version = ((h.param >> 16) as u16).min(hislip::VERSION);
            let param = (u32::from(version) << 16) | u32::from(id);
            // Traced before the response: the asynchronous channel's lines follow it.
            if gw.trace {
                eprintln!(
                    "gpib-diag serve: {peer} hislip Initialize {name:?}: session {id} on {}",
                    crate::backend::vxi11::proto::device_name_on(target.0, target.1)
                );
            }
            let ok = {
                let mut ws = &w;
                hislip::write_message(&mut ws, kind::INITIALIZE_RESPONSE, 0, param, &[]).is_ok()
            };
            if ok {
                hislip_channels::serve_sync(gw, r, peer, id, &slot);
            }
            gw.close(id);
        }
        kind::ASYNC_INITIALIZE => {
            if h.len != 0 {
                return fatal(
                    &w,
                    hislip::fatal::BAD_HEADER,
                    "AsyncInitialize carries no payload",
                );
            }
            let id = (h.param & 0xffff) as u16;
            let attached = w.try_clone().ok().and_then(|a| {
                gw.session(id, |s| {
                    if s.async_.is_some() {
                        return false;
                    }
                    s.async_ = Some(Arc::new(Mutex::new(a)));
                    true
                })
            });
            if attached != Some(true) {
                return fatal(
                    &w,
                    hislip::fatal::BAD_INITIALIZATION,
                    &format!("no session {id} waiting for its asynchronous channel"),
                );
            }
            let ok = {
                let mut ws = &w;
                hislip::write_message(&mut ws, kind::ASYNC_INITIALIZE_RESPONSE, 0, VENDOR_ID, &[])
                    .is_ok()
            };
            if ok {
                hislip_channels::serve_async(gw, r, peer, id, &slot);
            }
            gw.close_async(id);
        }
        k => fatal(
            &w,
            hislip::fatal::BAD_INITIALIZATION,
            &format!("{} before Initialize", hislip::kind_name(k)),
        ),
    }
}
