//! The client's interrupt channel: an RPC server for program 0x0607B1 v1 on which the
//! gateway calls `device_intr_srq` (procedure 30, no reply) when a device requests
//! service.

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::proto::{procs, DEVICE_INTR, MAX_SRQ_HANDLE, VERSION};
use crate::deadline::{Deadline, TimedReader};
use crate::rpc::record::{self, Limits};
use crate::rpc::{msg, XdrReader};

/// The SRQ handle this client registers.
pub(crate) const HANDLE: &[u8] = b"gpib-rs";

/// What the interrupt channel has seen.
#[derive(Default)]
pub(crate) struct Signals {
    /// An SRQ arrived since the flag was last taken.
    srq: Mutex<bool>,
    arrived: Condvar,
    stop: AtomicBool,
}

impl Signals {
    /// Waits up to `wait` for an SRQ; takes the flag.
    pub(crate) fn wait(&self, wait: Duration) -> bool {
        let g = self.srq.lock().unwrap_or_else(|p| p.into_inner());
        let (mut g, _) = self
            .arrived
            .wait_timeout_while(g, wait, |s| !*s)
            .unwrap_or_else(|p| p.into_inner());
        std::mem::replace(&mut *g, false)
    }

    fn raise(&self) {
        *self.srq.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.arrived.notify_all();
    }
}

/// A running interrupt server; stops when dropped.
pub(crate) struct IntrServer {
    pub(crate) signals: Arc<Signals>,
    pub(crate) addr: SocketAddr,
}

impl IntrServer {
    /// Listens on `ip` (the address the gateway sees this client at), port chosen by
    /// the system, and serves one connection at a time on a thread.
    pub(crate) fn start(ip: IpAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind(SocketAddr::new(ip, 0))?;
        let addr = listener.local_addr()?;
        let signals = Arc::new(Signals::default());
        let s = signals.clone();
        std::thread::Builder::new()
            .name("vxi11-intr".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if s.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Ok(c) = conn {
                        serve(c, &s);
                    }
                }
            })?;
        Ok(Self { signals, addr })
    }
}

impl Drop for IntrServer {
    fn drop(&mut self) {
        self.signals.stop.store(true, Ordering::Relaxed);
        // Wake the accept so the thread sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

/// How long a call on the interrupt channel may take to arrive from its first byte.
const CALL_DEADLINE: Duration = Duration::from_secs(2);

fn serve(c: TcpStream, s: &Signals) {
    let limits = Limits {
        max_record: 4096,
        max_fragments: 64,
    };
    let mut c = TimedReader::new(c, 4096);
    let mut rec = Vec::new();
    while !s.stop.load(Ordering::Relaxed) {
        // The next call's first byte, looking at the stop flag twice a second; then
        // all of it within CALL_DEADLINE (a trickle loses the connection).
        c.set_deadline(Deadline::after(Some(Duration::from_millis(500))));
        match c.wait_for_data() {
            Ok(true) => {}
            Err(e) if crate::deadline::is_timeout(&e) => continue,
            _ => return,
        }
        c.set_deadline(Deadline::after(Some(CALL_DEADLINE)));
        if record::read_record(&mut c, limits, &mut rec).is_err() {
            return;
        }
        let Ok((h, args)) = msg::decode_call(&rec) else {
            return;
        };
        if h.prog == DEVICE_INTR && h.vers == VERSION && h.proc_ == procs::DEVICE_INTR_SRQ {
            match XdrReader::new(args).opaque(MAX_SRQ_HANDLE) {
                Ok(handle) if handle == HANDLE => s.raise(),
                // Other handles are not ours (another session's).
                _ => {}
            }
        }
    }
}
