//! The HiSLIP gateway's two channels of a session: the synchronous one (data to the
//! device and its answers, trigger, the end of a device clear) and the asynchronous
//! one (maximum message size, locks, status query, device clear, remote/local).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::hislip::{fatal, send, Gateway, Writer, IO_TIMEOUT};
use super::Slot;
use crate::backend::ReadEnd;
use crate::deadline::{Deadline, TimedReader};
use crate::hislip::{self, error, kind, lock, remote_local, Header, QueryScan, ReadError};

/// The most a single answer may hold; a device that talks on without END is cut off.
const MAX_ANSWER: usize = 1 << 30;
/// Bytes read from the device per Data message (at most the client's maximum).
const PIECE: usize = 64 * 1024;
/// The longest payload taken on the asynchronous channel (a lock string).
const MAX_ASYNC_PAYLOAD: u64 = 4096;
/// RMT-delivered: bit 0 of the control code of Data, DataEnd, Trigger, status query.
const RMT_DELIVERED: u8 = 1;
/// MAV in a status byte.
const MAV: u8 = 0x10;
/// Bit 0 of a device clear's feature bits: overlapped mode.
const FEATURE_OVERLAP: u8 = 1;
/// RQS in a status byte.
const RQS: u8 = 0x40;
/// The longest wait for the first byte of an answer between two looks at the
/// session: an AsyncDeviceClear (or the session's end) stops a read of a device that
/// does not answer within this. Once the device talks, the rest is read in one call.
const READ_SLICE: Duration = Duration::from_millis(250);

/// The next message's header, within the idle and message timeouts. `None`: the
/// connection ends (closed, timed out, or a fatal error sent).
///
/// Idle means both of session `id`'s channels idle: a quiet channel waits on while the
/// other has heard from the client within the idle timeout (a session's asynchronous
/// channel is silent while its queries go on the synchronous one).
fn next_header(
    r: &mut TimedReader,
    w: &std::net::TcpStream,
    slot: &Slot,
    gw: &Gateway,
    id: u16,
) -> Option<Header> {
    loop {
        // A session serving a message (a long read, a lock wait) is not idle.
        let left = slot.idle.map(|idle| {
            gw.session(id, |s| match s.busy {
                true => idle,
                false => idle.saturating_sub(s.heard.elapsed()),
            })
            .unwrap_or(Duration::ZERO)
        });
        r.set_deadline(Deadline::after(left));
        match r.wait_for_data() {
            Ok(true) => break,
            Err(e) if crate::deadline::is_timeout(&e) => {
                // Timed out: unless the other channel was heard from since.
                let quiet = slot.idle.is_some_and(|idle| {
                    gw.session(id, |s| !s.busy && s.heard.elapsed() >= idle)
                        .unwrap_or(true)
                });
                if quiet {
                    return None;
                }
            }
            _ => return None,
        }
    }
    gw.session(id, |s| s.heard = Instant::now());
    r.set_deadline(Deadline::after(Some(slot.message)));
    match hislip::read_header(r) {
        Ok(h) => Some(h),
        Err(ReadError::BadPrologue(p)) => {
            fatal(
                w,
                hislip::fatal::BAD_HEADER,
                &format!(
                    "header starts with {}, expected \"HS\"",
                    hislip::prologue_text(p)
                ),
            );
            None
        }
        Err(e) => {
            log::debug!("HiSLIP: {e}");
            None
        }
    }
}

/// Reads `h`'s payload when at most `limit`; otherwise sends Error (message too
/// large) and discards it. `None`: the connection ends.
fn payload(r: &mut TimedReader, ch: &Writer, h: &Header, limit: u64) -> Option<Option<Vec<u8>>> {
    let mut p = Vec::new();
    match hislip::read_payload(r, h, limit, &mut p) {
        Ok(()) => Some(Some(p)),
        Err(ReadError::TooLarge { len, limit, .. }) => {
            let why = format!("{len}-byte payload; the limit is {limit}");
            send(ch, kind::ERROR, error::TOO_LARGE, 0, why.as_bytes());
            hislip::discard(r, len).ok().map(|()| None)
        }
        Err(e) => {
            log::debug!("HiSLIP: {e}");
            None
        }
    }
}

/// Answers a message of a type this channel does not take: Error, payload dropped.
fn unrecognized(r: &mut TimedReader, ch: &Writer, h: &Header) -> bool {
    let code = if h.kind >= 128 {
        error::UNRECOGNIZED_VENDOR
    } else {
        error::UNRECOGNIZED_TYPE
    };
    let why = format!("{} is not taken on this channel", hislip::kind_name(h.kind));
    send(ch, kind::ERROR, code, 0, why.as_bytes());
    hislip::discard(r, h.len).is_ok()
}

fn trace(gw: &Gateway, peer: SocketAddr, id: u16, what: &str, reply: &str) {
    if gw.trace {
        eprintln!("gpib-diag serve: {peer} hislip session {id} {what}: {reply}");
    }
}

/// Serves session `id`'s synchronous channel until it closes.
pub(crate) fn serve_sync(
    gw: &Arc<Gateway>,
    mut r: TimedReader,
    peer: SocketAddr,
    id: u16,
    slot: &Slot,
) {
    let Some((sync, target)) = gw.session(id, |s| (s.sync.clone(), s.target)) else {
        return;
    };
    let Ok(raw) = r.get_ref().try_clone() else {
        return;
    };
    let mut scan = QueryScan::default();
    while let Some(h) = next_header(&mut r, &raw, slot, gw, id) {
        match h.kind {
            kind::DATA | kind::DATA_END | kind::TRIGGER => {
                let Some(p) = payload(&mut r, &sync, &h, gw.max_message) else {
                    return;
                };
                let Some(data) = p else { continue };
                let Some((clearing, has_async)) = gw.session(id, |s| {
                    if h.control & RMT_DELIVERED != 0 {
                        s.pending = false;
                    }
                    s.last_id = h.param;
                    s.busy = !s.clearing;
                    (s.clearing, s.async_.is_some())
                }) else {
                    return;
                };
                if !has_async {
                    return fatal(&raw, hislip::fatal::NO_CHANNELS, "no asynchronous channel");
                }
                if clearing {
                    // Between AsyncDeviceClear and DeviceClearComplete: dropped.
                    scan.reset();
                    gw.changed.notify_all();
                    continue;
                }
                let reply = message(gw, id, &sync, &h, &data, &mut scan);
                gw.session(id, |s| s.busy = false);
                gw.changed.notify_all();
                trace(gw, peer, id, &describe(&h, &data), &reply);
                gw.check_srq(target.0);
            }
            kind::DEVICE_CLEAR_COMPLETE => {
                if hislip::discard(&mut r, h.len).is_err() {
                    return;
                }
                let r = if gw.begin(id, target) {
                    let r = gw.device(target).and_then(|d| d.clear());
                    gw.end(id, target, false);
                    r
                } else {
                    Err(crate::Error::Timeout {
                        operation: "device clear (another client's exchange)",
                        timeout: crate::Timeout::After(IO_TIMEOUT),
                        transferred: 0,
                    })
                };
                gw.session(id, |s| s.mid = false);
                scan.reset();
                // The client's feature request (bit 0: overlapped mode) is granted:
                // answers go back in the order of the queries, each with its query's
                // message id, in either mode.
                let overlap = h.control & FEATURE_OVERLAP != 0;
                gw.session(id, |s| {
                    s.clearing = false;
                    s.pending = false;
                    s.last_id = hislip::FIRST_MESSAGE_ID.wrapping_sub(2);
                    s.overlapped = overlap;
                });
                gw.changed.notify_all();
                let setting = if overlap { FEATURE_OVERLAP } else { 0 };
                if !send(&sync, kind::DEVICE_CLEAR_ACKNOWLEDGE, setting, 0, &[]) {
                    return;
                }
                let mode = if overlap {
                    "overlapped"
                } else {
                    "synchronized"
                };
                let reply = r.map_or_else(|e| e.to_string(), |()| format!("cleared, {mode} mode"));
                trace(gw, peer, id, "DeviceClearComplete", &reply);
            }
            kind::FATAL_ERROR => return,
            kind::ERROR => {
                let Some(p) = payload(&mut r, &sync, &h, MAX_ASYNC_PAYLOAD) else {
                    return;
                };
                log::info!(
                    "HiSLIP {peer}: client error {}: {}",
                    h.control,
                    String::from_utf8_lossy(&p.unwrap_or_default())
                );
            }
            _ => {
                if !unrecognized(&mut r, &sync, &h) {
                    return;
                }
            }
        }
    }
}

/// A synchronous message for the trace: its type, id and first bytes.
fn describe(h: &Header, data: &[u8]) -> String {
    let shown: String = String::from_utf8_lossy(&data[..data.len().min(40)])
        .escape_debug()
        .collect();
    let more = if data.len() > 40 { "..." } else { "" };
    format!(
        "{} {:#010x} \"{shown}{more}\" ({} bytes)",
        hislip::kind_name(h.kind),
        h.param,
        data.len()
    )
}

/// Serves Data, DataEnd or Trigger; what it did, for the trace.
fn message(
    gw: &Gateway,
    id: u16,
    sync: &Writer,
    h: &Header,
    data: &[u8],
    scan: &mut QueryScan,
) -> String {
    let Some(target) = gw.session(id, |s| s.target) else {
        return "session gone".into();
    };
    if !gw.wait_access(id, IO_TIMEOUT) {
        scan.reset();
        send(
            sync,
            kind::ERROR,
            error::UNIDENTIFIED,
            0,
            b"the device is locked by another session",
        );
        return "locked by another session".into();
    }
    // The whole exchange (this message, and its answer when it asks one) is one
    // transaction on the device: no other client's call comes in between.
    if !gw.begin(id, target) {
        scan.reset();
        send(
            sync,
            kind::ERROR,
            error::UNIDENTIFIED,
            0,
            b"the device stayed busy with another client's exchange",
        );
        return "busy with another client's exchange".into();
    }
    let reply = held_message(gw, id, sync, target, h, data, scan);
    // Part of a message sent: the rest follows, nobody else's in between.
    let more = gw.session(id, |s| s.mid).unwrap_or(false) && h.kind == kind::DATA;
    gw.end(id, target, more);
    reply
}

/// [`message`]'s calls on the device, which the session holds.
fn held_message(
    gw: &Gateway,
    id: u16,
    sync: &Writer,
    target: super::hislip::Target,
    h: &Header,
    data: &[u8],
    scan: &mut QueryScan,
) -> String {
    let d = match gw.device(target) {
        Ok(d) => d,
        Err(e) => return e.to_string(),
    };
    let r = match h.kind {
        kind::TRIGGER => d.trigger(),
        kind::DATA => {
            scan.feed(data);
            // Bytes without END: the device holds part of a message until DataEnd.
            gw.session(id, |s| s.mid = true);
            d.write_partial(data).map(|_| ())
        }
        _ => {
            scan.feed(data);
            gw.session(id, |s| s.mid = true);
            d.write(data)
        }
    };
    if let Err(e) = r {
        scan.reset();
        return e.to_string();
    }
    if h.kind != kind::DATA_END {
        return "done".into();
    }
    gw.session(id, |s| s.mid = false);
    let query = scan.is_query();
    scan.reset();
    if !query {
        return "written".into();
    }
    answer(gw, id, sync, &d, h.param)
}

/// Reads the device's answer and sends it as Data messages, the last a DataEnd, with
/// the message id `msg_id`; marks it pending (MAV until the client says it took it).
pub(crate) fn answer(
    gw: &Gateway,
    id: u16,
    sync: &Writer,
    d: &crate::Device,
    msg_id: u32,
) -> String {
    let client_max = gw
        .session(id, |s| s.client_max)
        .unwrap_or(hislip::DEFAULT_MAX_MESSAGE);
    let piece = usize::try_from(client_max.saturating_sub(hislip::HEADER_LEN as u64))
        .unwrap_or(PIECE)
        .clamp(1, PIECE);
    // An answer on its way is an answer not taken (MAV), and a status query need not
    // wait for the rest of it: the client may be reading it only after the query.
    gw.session(id, |s| {
        s.pending = !s.clearing;
        s.answering = true;
    });
    gw.changed.notify_all();
    let out = send_answer(gw, id, sync, d, msg_id, piece);
    gw.session(id, |s| s.answering = false);
    out
}

/// [`answer`]'s reads and sends, `piece` bytes a message at most.
fn send_answer(
    gw: &Gateway,
    id: u16,
    sync: &Writer,
    d: &crate::Device,
    msg_id: u32,
    piece: usize,
) -> String {
    let mut buf = vec![0u8; piece];
    let mut total = 0usize;
    let until = Instant::now() + IO_TIMEOUT;
    let mut d = d.clone();
    loop {
        let (n, end, err) = match read_slices(gw, id, &mut d, &mut buf, until, total > 0) {
            Sliced::Read(st) => (st.count, st.end != ReadEnd::BufferFull, None),
            Sliced::Part(n) => (n.min(piece), false, None),
            Sliced::Failed(e) => (e.transferred().unwrap_or(0).min(piece), true, Some(e)),
            Sliced::Stopped => {
                // AsyncDeviceClear came (or the session ended): the answer is dropped,
                // and DeviceClearComplete clears the device.
                gw.session(id, |s| {
                    s.pending = false;
                    s.mid = s.mid || total > 0;
                });
                return format!("{total} bytes, then stopped by a device clear");
            }
        };
        total = total.saturating_add(n);
        let last = end || total >= MAX_ANSWER;
        if err.is_some() && total == 0 {
            gw.session(id, |s| s.pending = false);
            return err.map_or_else(String::new, |e| e.to_string());
        }
        let k = if last { kind::DATA_END } else { kind::DATA };
        if !send(sync, k, 0, msg_id, &buf[..n]) {
            // The rest of the answer is left in the device: cleared when the session
            // ends.
            gw.session(id, |s| s.mid = s.mid || !end);
            return "the client is gone".into();
        }
        if last {
            // Pending since the start (not set here: the client may have taken it
            // and said so already).
            return match err {
                Some(e) => format!("{total} bytes, then {e}"),
                None => format!("{total} bytes answered"),
            };
        }
    }
}

/// What [`read_slices`] got.
enum Sliced {
    /// A read ended (END, EOS or a full buffer).
    Read(crate::ReadStatus),
    /// This many bytes arrived, then the device paused: more may follow.
    Part(usize),
    /// The read failed, or `until` passed without a byte.
    Failed(crate::Error),
    /// The session is clearing or gone: the read was given up.
    Stopped,
}

/// Reads into `buf` from `d` until `until`; until the device `talking` (a byte of
/// the answer came), in slices of at most [`READ_SLICE`], looking between slices
/// whether session `id` is clearing or gone. HiSLIP has no abort of a read on the
/// synchronous channel: AsyncDeviceClear is how a client stops one (after its own
/// read timed out), and the DeviceClearComplete after it waits for this channel.
fn read_slices(
    gw: &Gateway,
    id: u16,
    d: &mut crate::Device,
    buf: &mut [u8],
    until: Instant,
    talking: bool,
) -> Sliced {
    loop {
        if gw.gone(id) || gw.session(id, |s| s.clearing).unwrap_or(true) {
            return Sliced::Stopped;
        }
        let left = until.saturating_duration_since(Instant::now());
        let last = talking || left <= READ_SLICE;
        let slice = if last { left } else { READ_SLICE };
        d.set_timeout(Some(slice.max(Duration::from_millis(1)).into()));
        match d.read(buf) {
            Ok(st) => return Sliced::Read(st),
            Err(e) if e.kind() == crate::ErrorKind::Timeout && !last => {
                match e.transferred().unwrap_or(0) {
                    0 => continue,
                    n => return Sliced::Part(n),
                }
            }
            Err(e) => return Sliced::Failed(e),
        }
    }
}

/// Serves session `id`'s asynchronous channel until it closes.
pub(crate) fn serve_async(
    gw: &Arc<Gateway>,
    mut r: TimedReader,
    peer: SocketAddr,
    id: u16,
    slot: &Slot,
) {
    let Some((ch, sync, target)) = gw.session(id, |s| (s.async_.clone(), s.sync.clone(), s.target))
    else {
        return;
    };
    let Some(ch) = ch else { return };
    let Ok(raw) = r.get_ref().try_clone() else {
        return;
    };
    while let Some(h) = next_header(&mut r, &raw, slot, gw, id) {
        let Some(p) = payload(&mut r, &ch, &h, MAX_ASYNC_PAYLOAD) else {
            return;
        };
        let Some(p) = p else { continue };
        let name = hislip::kind_name(h.kind);
        // What to trace, and the response: traced first, so that the lines of what the
        // client sends once it has the response come after.
        let (reply, response) = match h.kind {
            kind::ASYNC_MAXIMUM_MESSAGE_SIZE => {
                let Ok(b) = <[u8; 8]>::try_from(p.as_slice()) else {
                    send(
                        &ch,
                        kind::ERROR,
                        error::UNIDENTIFIED,
                        0,
                        b"the size is 8 bytes",
                    );
                    continue;
                };
                let size = u64::from_be_bytes(b).max(hislip::HEADER_LEN as u64 + 1);
                gw.session(id, |s| s.client_max = size);
                let ours = gw.max_message.to_be_bytes().to_vec();
                let r = (kind::ASYNC_MAXIMUM_MESSAGE_SIZE_RESPONSE, 0, 0, ours);
                (format!("client {size}, server {}", gw.max_message), Some(r))
            }
            kind::ASYNC_LOCK => {
                let code = match h.control {
                    lock::REQUEST => gw.lock(id, &p, Duration::from_millis(u64::from(h.param))),
                    lock::RELEASE => gw.unlock(id),
                    _ => lock::ERROR,
                };
                let what = ["failure", "success", "success shared", "error"];
                let said = what.get(usize::from(code)).copied().unwrap_or("?");
                (
                    said.to_string(),
                    Some((kind::ASYNC_LOCK_RESPONSE, code, 0, Vec::new())),
                )
            }
            kind::ASYNC_LOCK_INFO => {
                let (exclusive, holders) = gw.lock_info(id);
                let r = (
                    kind::ASYNC_LOCK_INFO_RESPONSE,
                    u8::from(exclusive),
                    holders,
                    Vec::new(),
                );
                (
                    format!("exclusive {exclusive}, {holders} holder(s)"),
                    Some(r),
                )
            }
            kind::ASYNC_REMOTE_LOCAL_CONTROL => {
                let Some(r) = remote_local_control(gw, target, h.control) else {
                    send(
                        &ch,
                        kind::ERROR,
                        error::UNRECOGNIZED_CONTROL,
                        0,
                        b"remote/local code 0 to 6",
                    );
                    continue;
                };
                let said = r.map_or_else(|e| e.to_string(), |()| "done".into());
                (
                    said,
                    Some((kind::ASYNC_REMOTE_LOCAL_RESPONSE, 0, 0, Vec::new())),
                )
            }
            kind::ASYNC_STATUS_QUERY => (status_query(gw, id, &ch, &sync, &h), None),
            kind::ASYNC_DEVICE_CLEAR => {
                gw.session(id, |s| {
                    s.clearing = true;
                    s.pending = false;
                });
                // The server's preference: synchronized mode.
                let r = (kind::ASYNC_DEVICE_CLEAR_ACKNOWLEDGE, 0, 0, Vec::new());
                ("acknowledged".into(), Some(r))
            }
            kind::FATAL_ERROR => return,
            kind::ERROR => {
                log::info!(
                    "HiSLIP {peer}: client error {}: {}",
                    h.control,
                    String::from_utf8_lossy(&p)
                );
                continue;
            }
            k => {
                let code = if k >= 128 {
                    error::UNRECOGNIZED_VENDOR
                } else {
                    error::UNRECOGNIZED_TYPE
                };
                let why = format!("{name} is not taken on the asynchronous channel");
                send(&ch, kind::ERROR, code, 0, why.as_bytes());
                continue;
            }
        };
        trace(gw, peer, id, name, &reply);
        if let Some((k, control, param, payload)) = response {
            if !send(&ch, k, control, param, &payload) {
                return;
            }
        }
    }
}

/// Waits (up to [`IO_TIMEOUT`]) until the synchronous channel has served the
/// messages sent before a status query whose parameter is `next`: the client's next
/// message id (pyvisa-py, this crate's client) or its last (IVI-6.1's wording); either
/// way the message `next - 2` is served first. The two channels are two connections:
/// a query sent after a write may arrive before it.
fn wait_for_sync(gw: &Gateway, id: u16, next: u32) {
    let want = next.wrapping_sub(2);
    let deadline = std::time::Instant::now() + IO_TIMEOUT;
    let mut st = gw.state();
    loop {
        let Some(s) = st.sessions.get(&id) else {
            return;
        };
        // How far the wanted id is ahead of the last one read (ids go up by 2; a
        // parameter far ahead is not waited for).
        let ahead = want.wrapping_sub(s.last_id);
        if !((s.busy && !s.answering) || (ahead > 0 && ahead < 1 << 20)) {
            return;
        }
        let now = std::time::Instant::now();
        if now >= deadline {
            return;
        }
        st = gw
            .changed
            .wait_timeout(st, deadline - now)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}

/// AsyncRemoteLocalControl's code on the device; `None` for an unknown code.
fn remote_local_control(
    gw: &Gateway,
    target: super::hislip::Target,
    code: u8,
) -> Option<crate::Result<()>> {
    let bus = gw.bus(target.0)?;
    let d = || gw.device(target);
    Some(match code {
        remote_local::DISABLE_REMOTE | remote_local::DISABLE_AND_GTL => bus.remote_enable(false),
        remote_local::ENABLE_REMOTE => bus.remote_enable(true),
        remote_local::ENABLE_AND_GOTO_REMOTE => {
            bus.remote_enable(true).and_then(|()| d()?.remote())
        }
        remote_local::ENABLE_AND_LOCKOUT_LOCAL => {
            bus.remote_enable(true).and_then(|()| bus.local_lockout())
        }
        remote_local::ENABLE_AND_GTR_LLO => bus
            .remote_enable(true)
            .and_then(|()| d()?.remote())
            .and_then(|()| bus.local_lockout()),
        remote_local::JUST_GTL => d().and_then(|d| d.go_to_local()),
        _ => return None,
    })
}

/// AsyncStatusQuery: the device's status byte by serial poll, with MAV while an
/// answer sent is not yet taken, and RQS when the gateway's own poll for an
/// AsyncServiceRequest took it since. When the device has an answer nobody fetched (after
/// a trigger, or a message not seen as a query), it is fetched now and sent on the
/// synchronous channel, as an instrument would have it ready.
fn status_query(gw: &Gateway, id: u16, ch: &Writer, sync: &Writer, h: &Header) -> String {
    let control = h.control;
    wait_for_sync(gw, id, h.param);
    let Some((target, pending, rqs)) = gw.session(id, |s| {
        if control & RMT_DELIVERED != 0 {
            s.pending = false;
        }
        (s.target, s.pending, std::mem::take(&mut s.rqs))
    }) else {
        return "session gone".into();
    };
    let polled = gw.device(target).and_then(|d| d.serial_poll());
    let stb = polled.as_ref().map_or(0, |s| s.0)
        | if pending { MAV } else { 0 }
        | if rqs { RQS } else { 0 };
    send(ch, kind::ASYNC_STATUS_RESPONSE, stb, 0, &[]);
    gw.check_srq(target.0);
    let mut reply = match &polled {
        Ok(_) => format!("stb {stb:#04x}"),
        Err(e) => format!("stb {stb:#04x} ({e})"),
    };
    if stb & MAV != 0 && !pending {
        let fetch = gw.session(id, |s| {
            let go = !s.busy && !s.clearing && !s.pending;
            if go {
                s.busy = true;
            }
            go.then_some(s.last_id)
        });
        if let Some(Some(msg_id)) = fetch {
            let got = if gw.begin(id, target) {
                let got = match gw.device(target) {
                    Ok(d) => answer(gw, id, sync, &d, msg_id),
                    Err(e) => e.to_string(),
                };
                gw.end(id, target, false);
                got
            } else {
                "busy with another client's exchange".to_string()
            };
            gw.session(id, |s| s.busy = false);
            gw.changed.notify_all();
            reply.push_str(&format!("; answer fetched: {got}"));
        }
    }
    reply
}
