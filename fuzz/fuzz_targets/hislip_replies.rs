//! The HiSLIP client's side: a server that answers with arbitrary bytes. A loopback
//! server sends the input's bytes on the session's two channels at once, then ends
//! them (its side shut down, the client's messages left unread), so that no wait of
//! the client runs long. Bytes 0-1 (big-endian) are how many of the rest go on the
//! synchronous channel, the remainder goes on the asynchronous one. The client
//! connects (Initialize, AsyncInitialize, the maximum message size), then runs a
//! query, a message without a query and a read, a status query, a lock, its
//! release and lock info, remote/local, a trigger, a device clear, overlapped mode
//! with two queries, SRQ polling and a wait for SRQ, each whatever the ones before did.
//!
//! Asserts, besides no panic and no hang: every answer is at most the bytes the
//! synchronous channel got, and every error's `transferred()` at most the bytes
//! of the input or of what the client sent.
#![no_main]

use std::io::Write;
use std::net::{Shutdown, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use gpib::backend::hislip::HislipSession;
use gpib::hislip::remote_local;
use libfuzzer_sys::fuzz_target;

/// The client's timeout: a wait that runs it out is a defect here (the server's
/// bytes are all there and its side ends), but costs no more than this.
const TIMEOUT: Duration = Duration::from_millis(200);

/// Serves one session on `l`: the first connection gets `sync`, the second `async_`,
/// each then shut down for writing; connections are held open (their input unread)
/// until `done`.
fn serve(l: TcpListener, sync: Vec<u8>, async_: Vec<u8>, done: Arc<AtomicBool>) {
    l.set_nonblocking(true).unwrap();
    let mut parts = [sync, async_].into_iter();
    let mut held = Vec::new();
    while !done.load(Ordering::Acquire) {
        match l.accept() {
            Ok((mut s, _)) => {
                let _ = s.set_nonblocking(false);
                let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
                if let Some(p) = parts.next() {
                    let _ = s.write_all(&p);
                }
                let _ = s.shutdown(Shutdown::Write);
                held.push(s);
            }
            Err(_) => std::thread::sleep(Duration::from_micros(50)),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let rest = &data[2..];
    let split = usize::from(u16::from_be_bytes([data[0], data[1]])).min(rest.len());
    let (sync, async_) = rest.split_at(split);
    let got = sync.len();
    let Ok(l) = TcpListener::bind("127.0.0.1:0") else {
        return;
    };
    let port = l.local_addr().unwrap().port();
    let done = Arc::new(AtomicBool::new(false));
    let server = {
        let (s, a, d) = (sync.to_vec(), async_.to_vec(), done.clone());
        std::thread::spawn(move || serve(l, s, a, d))
    };
    let bound = data.len().max(64);
    let check = |what: &str, e: &gpib::Error| {
        assert!(e.transferred().unwrap_or(0) <= bound, "{what}: {e}");
    };
    if let Ok(mut s) = HislipSession::connect("127.0.0.1", port, "hislip0", TIMEOUT) {
        let answer = |what: &str, r: gpib::Result<Vec<u8>>| match r {
            Ok(a) => assert!(a.len() <= got, "{what}: {} > {got}", a.len()),
            Err(e) => check(what, &e),
        };
        answer("query", s.query(b"*IDN?\n"));
        if let Err(e) = s.write(b"*TRG\n") {
            check("write", &e);
        }
        answer("read", s.read());
        if let Err(e) = s.status_byte() {
            check("status byte", &e);
        }
        if let Err(e) = s.lock("", Duration::from_millis(1)) {
            check("lock", &e);
        }
        if let Err(e) = s.unlock() {
            check("unlock", &e);
        }
        if let Err(e) = s.lock_info() {
            check("lock info", &e);
        }
        if let Err(e) = s.remote_local(remote_local::JUST_GTL) {
            check("remote/local", &e);
        }
        if let Err(e) = s.trigger() {
            check("trigger", &e);
        }
        if let Err(e) = s.clear() {
            check("clear", &e);
        }
        if s.set_overlapped(true).is_ok() {
            for c in [&b"A?\n"[..], b"B?\n"] {
                if let Err(e) = s.write(c) {
                    check("write", &e);
                }
            }
            answer("overlapped read", s.read());
            answer("overlapped read", s.read());
        }
        if let Err(e) = s.poll_srq() {
            check("poll srq", &e);
        }
        match s.take_srqs() {
            Ok(v) => assert!(v.len() <= 64),
            Err(e) => check("take srqs", &e),
        }
        if let Err(e) = s.wait_srq(Duration::from_millis(1)) {
            check("wait srq", &e);
        }
    }
    done.store(true, Ordering::Release);
    server.join().unwrap();
});
