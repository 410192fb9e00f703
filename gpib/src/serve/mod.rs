//! A bus served on the network: as a Prologix GPIB-ETHERNET adapter (each connection
//! with its own controller state), as a VXI-11 LAN/GPIB gateway (core, abort and
//! interrupt channels, and optionally a portmapper) and as a HiSLIP gateway
//! (IVI-6.1, synchronized and overlapped mode: `TCPIP::host::hislip0::INSTR`).
//!
//! Any bus can be served: a simulated one (`gpib::sim`, feature `sim`), a real board,
//! or, here, the core's fake board:
//!
//! ```
//! use gpib::backend::fake::{FakeBoard, FakeInstrument};
//! use gpib::serve::{Server, ServeOptions};
//! use gpib::Bus;
//! let fake = FakeBoard::new().with(22, FakeInstrument::new().answer("*IDN?", "ACME,DMM-1,0,1.0"))?;
//! let server = Server::start(Bus::new(fake), ServeOptions::ephemeral())?;
//! let port = server.prologix_addr().unwrap().port();
//! let dmm = gpib::open(&format!("PRLGX-TCPIP::127.0.0.1::{port}::22::INSTR"))?;
//! assert_eq!(dmm.query("*IDN?")?, "ACME,DMM-1,0,1.0");
//! let vxi11 = server.vxi11_addr().unwrap().port();
//! let dmm = gpib::open(&format!("TCPIP0::127.0.0.1,{vxi11}::gpib0,22::INSTR"))?;
//! assert_eq!(dmm.query("*IDN?")?, "ACME,DMM-1,0,1.0");
//! server.stop();
//! # Ok::<(), gpib::Error>(())
//! ```
//!
//! Several boards can be served at once ([`Server::start_boards`]): VXI-11 clients
//! name them `gpib0`, `gpib1`, ... (`gpib1,5` is device 5 on the second); the
//! Prologix service, an adapter with one bus, serves each on a port of its own (the
//! first on [`ServeOptions::prologix_port`], the next on the port after it, ...).
//!
//! With a portmapper, the same port answers over UDP too: that is where VXI-11
//! discovery (`lxi discover`, VISA's finders) broadcasts its GETPORT call; a server
//! bound to 0.0.0.0 answers broadcasts, one bound to an address unicast calls only.
//!
//! Clients from outside [`ServeOptions::allow`] (when it is not empty) have their
//! connection closed as soon as it is accepted. Every connection runs on a thread of
//! its own, up to [`ServeOptions::max_connections`] at once; beyond that a connection
//! is closed as soon as it is accepted. Connections stay open while silent (VISA clients keep
//! sessions for hours) unless [`ServeOptions::idle_timeout`] is set; TCP keepalive
//! reaps dead peers. A message (an RPC record, a Prologix line) must arrive whole
//! within [`ServeOptions::message_timeout`] of its first byte (or the idle timeout,
//! when shorter): a client that trickles a byte at a time cannot hold a connection. Every length read from the network is
//! bounded; a client that sends garbage loses its own connection and nothing else.
//! Transactions of different clients never interleave inside one bus transaction
//! (the [`Bus`] lock); VXI-11 locks are honoured, and a dropped connection releases
//! its locks and links.

mod allow;
mod hislip;
mod hislip_channels;
mod hislip_conn;
mod holds;
mod locks;
mod owner;
mod portmap;
mod portmap_udp;
mod prologix;
mod rpc_server;
mod srq_edge;
mod vxi11;
mod vxi11_trace;

pub use allow::Network;

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::address::Address;
use crate::bus::Bus;

/// How long a message may take from its first byte by default
/// ([`ServeOptions::message_timeout`]).
pub const DEFAULT_MESSAGE_TIMEOUT: Duration = Duration::from_secs(60);

/// TCP keepalive on accepted connections: first probe after this much silence.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(60);
/// Between probes.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);

/// Where and how to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeOptions {
    /// Address to bind (127.0.0.1 unless told otherwise).
    pub bind: IpAddr,
    /// Prologix port of the first board (`Some(0)`: any free port; `None`: no Prologix
    /// service); each further board is served on the port after the one before.
    pub prologix_port: Option<u16>,
    /// VXI-11 core channel port (`Some(0)`: any free port; `None`: no VXI-11).
    pub vxi11_port: Option<u16>,
    /// VXI-11 abort channel port (0: any free port).
    pub abort_port: u16,
    /// HiSLIP port (`Some(4880)` is the standard; `Some(0)`: any free port; `None`:
    /// no HiSLIP service). Both channels of a session connect to it. When it cannot
    /// be bound, the server runs without HiSLIP and says so
    /// ([`Server::hislip_error`]).
    pub hislip_port: Option<u16>,
    /// Portmapper port (`Some(111)` is the standard; `None`: no portmapper), for TCP
    /// and, on the same number, UDP (VXI-11 discovery). When it cannot be bound, the
    /// server runs without one and says so.
    pub portmap_port: Option<u16>,
    /// Most connections open at once, all services together.
    pub max_connections: usize,
    /// A connection silent for this long is closed (`None`, the default: never; TCP
    /// keepalive still reaps dead peers). A message also closes its connection when
    /// it takes longer than this from its first byte, if this is shorter than
    /// [`ServeOptions::message_timeout`].
    pub idle_timeout: Option<Duration>,
    /// A connection whose message (an RPC record, a Prologix line) does not arrive
    /// whole within this of its first byte is closed, idle timeout or not.
    pub message_timeout: Duration,
    /// The `maxRecvSize` the VXI-11 gateway advertises (and the most data one
    /// `device_write` may carry; one `device_read` answers at most this much too).
    pub max_recv_size: u32,
    /// The device `inst0` names on VXI-11 and the Prologix `++addr` at connection.
    pub default_address: Option<Address>,
    /// Print each request on stderr, one line per call: the client, what it sent,
    /// what it got back, and the time it took on the bus's clock (the modelled
    /// duration on the simulator, whose calls return at once).
    pub trace: bool,
    /// The client networks served (empty: every client that reaches the bound
    /// address). A connection from elsewhere is closed as soon as it is accepted.
    pub allow: Vec<Network>,
}

impl ServeOptions {
    /// 127.0.0.1, every service on a free port chosen by the system, no portmapper.
    pub fn ephemeral() -> Self {
        Self {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            prologix_port: Some(0),
            vxi11_port: Some(0),
            abort_port: 0,
            hislip_port: Some(0),
            portmap_port: None,
            max_connections: 256,
            idle_timeout: None,
            message_timeout: DEFAULT_MESSAGE_TIMEOUT,
            max_recv_size: 1 << 20,
            default_address: None,
            trace: false,
            allow: Vec::new(),
        }
    }
}

impl Default for ServeOptions {
    /// The standard ports: Prologix 1234, VXI-11 core on a free port, portmapper 111,
    /// HiSLIP 4880.
    fn default() -> Self {
        Self {
            prologix_port: Some(crate::backend::prologix::DEFAULT_PORT),
            hislip_port: Some(crate::hislip::PORT),
            portmap_port: Some(crate::backend::vxi11::proto::portmap::PORT),
            ..Self::ephemeral()
        }
    }
}

/// Open connections, so that stopping the server closes them.
#[derive(Default)]
pub(crate) struct Registry {
    next: AtomicU64,
    live: Mutex<HashMap<u64, TcpStream>>,
    count: AtomicUsize,
    refused: AtomicU64,
    denied: AtomicU64,
    accepted: AtomicU64,
    udp_replies: AtomicU64,
    udp_ignored: AtomicU64,
}

/// A connection's slot in the registry; frees it when dropped.
pub(crate) struct Slot {
    reg: Arc<Registry>,
    pub(crate) id: u64,
    /// How long the connection may wait for a message to start
    /// ([`ServeOptions::idle_timeout`]; `None`: for ever).
    pub(crate) idle: Option<Duration>,
    /// How long a message may take from its first byte to arrive whole.
    pub(crate) message: Duration,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.reg
            .live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
        self.reg.count.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Registry {
    /// Takes a slot for `s`, or refuses when `max` are open.
    fn admit(self: &Arc<Self>, s: &TcpStream, max: usize, t: Timeouts) -> Option<Slot> {
        if self.count.fetch_add(1, Ordering::SeqCst) >= max {
            self.count.fetch_sub(1, Ordering::SeqCst);
            self.refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(c) = s.try_clone() {
            self.live
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id, c);
        }
        self.accepted.fetch_add(1, Ordering::Relaxed);
        Some(Slot {
            reg: self.clone(),
            id,
            idle: t.idle,
            message: t.message,
        })
    }

    fn close_all(&self) {
        for s in self.live.lock().unwrap_or_else(|p| p.into_inner()).values() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// Counts of what the server has seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerStats {
    /// Connections open now.
    pub open: usize,
    /// Connections accepted so far.
    pub accepted: u64,
    /// Connections refused because the cap was reached.
    pub refused: u64,
    /// Connections closed because the client is outside [`ServeOptions::allow`].
    pub denied: u64,
    /// Datagrams the UDP portmapper answered (discovery's GETPORT calls among them).
    pub udp_replies: u64,
    /// Datagrams the UDP portmapper dropped: no RPC call, too long, from outside
    /// [`ServeOptions::allow`], or a reply that could not be sent.
    pub udp_ignored: u64,
}

/// A running server; [`Server::stop`] (or dropping it) stops it.
pub struct Server {
    /// Each board's Prologix service, by board number, the first board's first.
    prologix: Vec<(u16, SocketAddr)>,
    vxi11: Option<SocketAddr>,
    abort: Option<SocketAddr>,
    portmap: Option<SocketAddr>,
    portmap_error: Option<String>,
    portmap_udp: Option<portmap_udp::UdpService>,
    hislip: Option<SocketAddr>,
    hislip_error: Option<String>,
    stop: Arc<AtomicBool>,
    registry: Arc<Registry>,
    listeners: Vec<Listening>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.ports_line())
    }
}

/// A connection's idle and message timeouts.
#[derive(Debug, Clone, Copy)]
struct Timeouts {
    idle: Option<Duration>,
    message: Duration,
}

/// Turns TCP keepalive on for `s`, so that a peer gone without a word is found.
fn keepalive(s: &TcpStream) {
    let ka = socket2::TcpKeepalive::new()
        .with_time(KEEPALIVE_IDLE)
        .with_interval(KEEPALIVE_INTERVAL);
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
    let ka = ka.with_retries(6);
    if let Err(e) = socket2::SockRef::from(s).set_tcp_keepalive(&ka) {
        log::debug!("keepalive: {e}");
    }
}

/// What a connection handler gets.
pub(crate) type Handler = Arc<dyn Fn(TcpStream, Slot) + Send + Sync>;

/// Connections the kernel queues for a listener before it accepts them. A full queue
/// drops SYNs, and the client's retry comes about a second later.
const BACKLOG: i32 = 4096;

/// A listening socket on `addr` with a [`BACKLOG`]-deep queue.
fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // As std's `TcpListener::bind`: a restarted server binds its port at once.
    #[cfg(unix)]
    s.set_reuse_address(true)?;
    s.bind(&addr.into())?;
    s.listen(BACKLOG)?;
    Ok(s.into())
}

/// The Prologix port of the `i`-th board served: `first + i`, or 0 (any free port)
/// when `first` is 0. Past 65535: [`io::ErrorKind::InvalidInput`].
fn prologix_port(first: u16, i: usize) -> io::Result<u16> {
    if first == 0 {
        return Ok(0);
    }
    u16::try_from(i)
        .ok()
        .and_then(|i| first.checked_add(i))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("no Prologix port for board {i} after port {first}: past 65535"),
            )
        })
}

/// A listener's thread, and a handle to wake its blocking accept when stopping.
struct Listening {
    local: SocketAddr,
    thread: JoinHandle<()>,
    wake: TcpListener,
}

/// What every listener of a server shares.
#[derive(Clone)]
struct Shared {
    stop: Arc<AtomicBool>,
    registry: Arc<Registry>,
    max: usize,
    t: Timeouts,
    allow: Arc<[Network]>,
}

fn listen(addr: SocketAddr, handler: Handler, sh: Shared) -> io::Result<Listening> {
    let Shared {
        stop,
        registry,
        max,
        t,
        allow,
    } = sh;
    // The error names the port: a server listens on several.
    let l =
        bind(addr).map_err(|e| io::Error::new(e.kind(), format!("port {}: {e}", addr.port())))?;
    let local = l.local_addr()?;
    let wake = l.try_clone()?;
    let thread = std::thread::Builder::new()
        .name(format!("serve-{}", local.port()))
        .spawn(move || loop {
            // Blocking: a connection is taken the moment it arrives.
            let accepted = l.accept();
            if stop.load(Ordering::SeqCst) {
                return;
            }
            match accepted {
                Ok((s, peer)) => {
                    if !allow::allowed(&allow, peer.ip()) {
                        log::info!("refused {peer}: not in the allowed networks");
                        registry.denied.fetch_add(1, Ordering::Relaxed);
                        let _ = s.shutdown(Shutdown::Both);
                        continue;
                    }
                    let Some(slot) = registry.admit(&s, max, t) else {
                        log::debug!("refused {peer}: {max} connections open");
                        let _ = s.shutdown(Shutdown::Both);
                        continue;
                    };
                    // A peer that stops reading holds a reply no longer than a
                    // message may take.
                    let w = t.idle.map_or(t.message, |i| i.min(t.message));
                    let _ = s.set_write_timeout(Some(w.max(Duration::from_secs(1))));
                    let _ = s.set_nodelay(true);
                    keepalive(&s);
                    let h = handler.clone();
                    let spawned = std::thread::Builder::new()
                        .name(format!("conn-{peer}"))
                        .stack_size(256 * 1024)
                        .spawn(move || h(s, slot));
                    if let Err(e) = spawned {
                        log::warn!("no thread for {peer}: {e}");
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // Out of descriptors, say: give the others time to close.
                    log::warn!("accept: {e}");
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        })?;
    Ok(Listening {
        local,
        thread,
        wake,
    })
}

/// Ends the blocking accept of a listener whose stop flag is set: shuts the socket
/// down (Linux wakes `accept` with an error) and, for systems that do not, connects.
fn wake(l: &TcpListener) {
    let _ = socket2::SockRef::from(l).shutdown(Shutdown::Both);
    if let Ok(mut a) = l.local_addr() {
        if a.ip().is_unspecified() {
            a.set_ip(match a {
                SocketAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
                SocketAddr::V6(_) => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
            });
        }
        let _ = TcpStream::connect_timeout(&a, Duration::from_millis(200));
    }
}

impl Server {
    /// Starts the services `opts` asks for over `bus` (served as `gpib0`).
    pub fn start(bus: Bus, opts: ServeOptions) -> io::Result<Self> {
        Self::start_boards(BTreeMap::from([(0, bus)]), opts)
    }

    /// Starts the services `opts` asks for over `boards`, by their `gpib<n>` numbers:
    /// VXI-11 serves every one; Prologix, an adapter with one bus, serves each on a
    /// port of its own: the first (lowest number) on [`ServeOptions::prologix_port`],
    /// the next on the port after it, and so on (each on a free port when that is 0).
    /// Errors: no board ([`io::ErrorKind::InvalidInput`]), Prologix ports beyond 65535
    /// (the same), an address that cannot be bound.
    pub fn start_boards(boards: BTreeMap<u16, Bus>, opts: ServeOptions) -> io::Result<Self> {
        if boards.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no board to serve",
            ));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let registry = Arc::new(Registry::default());
        let mut listeners = Vec::new();
        let idle = opts.idle_timeout.map(|i| i.max(Duration::from_millis(1)));
        let sh = Shared {
            stop: stop.clone(),
            registry: registry.clone(),
            max: opts.max_connections.max(1),
            t: Timeouts {
                idle,
                message: idle
                    .map_or(opts.message_timeout, |i| i.min(opts.message_timeout))
                    .max(Duration::from_millis(1)),
            },
            allow: opts.allow.clone().into(),
        };
        // One lock table: a device locked over VXI-11 is locked over HiSLIP too.
        let device_locks = Arc::new(locks::DeviceLocks::default());
        let mut prologix = Vec::new();
        if let Some(first) = opts.prologix_port {
            for (i, (&n, bus)) in boards.iter().enumerate() {
                let port = prologix_port(first, i)?;
                let b = bus.clone();
                let default = opts.default_address;
                let trace = opts.trace;
                let locks = device_locks.clone();
                let h: Handler = Arc::new(move |s, slot| {
                    let holds = prologix::Holds::new(locks.clone(), n);
                    prologix::serve(b.clone(), s, slot, default, trace, holds)
                });
                let l = listen(SocketAddr::new(opts.bind, port), h, sh.clone())?;
                prologix.push((n, l.local));
                listeners.push(l);
            }
        }
        let (mut vxi, mut abort, mut portmap, mut portmap_error) = (None, None, None, None);
        let mut portmap_udp = None;
        if let Some(port) = opts.vxi11_port {
            let gw = Arc::new(vxi11::Gateway::new(
                boards.clone(),
                &opts,
                device_locks.clone(),
            ));
            let g = gw.clone();
            let h: Handler = Arc::new(move |s, slot| vxi11::serve_abort(&g, s, slot));
            let l = listen(SocketAddr::new(opts.bind, opts.abort_port), h, sh.clone())?;
            abort = Some(l.local);
            gw.set_abort_port(l.local.port());
            listeners.push(l);
            let g = gw.clone();
            let h: Handler = Arc::new(move |s, slot| vxi11::serve_core(&g, s, slot));
            let l = listen(SocketAddr::new(opts.bind, port), h, sh.clone())?;
            let a = l.local;
            vxi = Some(a);
            listeners.push(l);
            if let Some(pm) = opts.portmap_port {
                let core = a.port();
                let h: Handler = Arc::new(move |s, slot| portmap::serve(s, slot, core));
                match listen(SocketAddr::new(opts.bind, pm), h, sh.clone()) {
                    Ok(l) => {
                        // UDP on the TCP portmapper's port (its number when 0 was asked).
                        let at = SocketAddr::new(opts.bind, l.local.port());
                        match portmap_udp::start(at, core, &sh) {
                            Ok(u) => portmap_udp = Some(u),
                            Err(e) => log::warn!("no UDP portmapper (discovery) on {at}: {e}"),
                        }
                        portmap = Some(l.local);
                        listeners.push(l);
                    }
                    Err(e) => {
                        log::warn!("no portmapper: {e}");
                        portmap_error = Some(e.to_string());
                    }
                }
            }
        }
        let (mut hislip, mut hislip_error) = (None, None);
        if let Some(port) = opts.hislip_port {
            let gw = Arc::new(hislip::Gateway::new(boards, &opts, device_locks.clone()));
            let h: Handler = Arc::new(move |s, slot| hislip_conn::serve(&gw, s, slot));
            // As the portmapper: a standard port taken by another server (a second
            // gateway on the machine) leaves the others running, and says so.
            match listen(SocketAddr::new(opts.bind, port), h, sh.clone()) {
                Ok(l) => {
                    hislip = Some(l.local);
                    listeners.push(l);
                }
                Err(e) => {
                    log::warn!("no HiSLIP: {e}");
                    hislip_error = Some(e.to_string());
                }
            }
        }
        Ok(Self {
            prologix,
            hislip,
            hislip_error,
            vxi11: vxi,
            abort,
            portmap,
            portmap_error,
            portmap_udp,
            stop,
            registry,
            listeners,
        })
    }

    /// The Prologix service's address (the first board's).
    pub fn prologix_addr(&self) -> Option<SocketAddr> {
        self.prologix.first().map(|&(_, a)| a)
    }

    /// Every board's Prologix service: its `gpib<n>` number and address, in order.
    pub fn prologix_addrs(&self) -> &[(u16, SocketAddr)] {
        &self.prologix
    }

    /// The VXI-11 core channel's address.
    pub fn vxi11_addr(&self) -> Option<SocketAddr> {
        self.vxi11
    }

    /// The VXI-11 abort channel's address.
    pub fn abort_addr(&self) -> Option<SocketAddr> {
        self.abort
    }

    /// The HiSLIP service's address.
    pub fn hislip_addr(&self) -> Option<SocketAddr> {
        self.hislip
    }

    /// Why the HiSLIP service does not run, when it was asked for (its port could
    /// not be bound).
    pub fn hislip_error(&self) -> Option<&str> {
        self.hislip_error.as_deref()
    }

    /// The portmapper's address, when it runs.
    pub fn portmap_addr(&self) -> Option<SocketAddr> {
        self.portmap
    }

    /// The UDP portmapper's address (the TCP portmapper's port, where discovery's
    /// broadcasts look), when it runs.
    pub fn portmap_udp_addr(&self) -> Option<SocketAddr> {
        self.portmap_udp.as_ref().map(|u| u.local)
    }

    /// Why the portmapper does not run, when it was asked for.
    pub fn portmap_error(&self) -> Option<&str> {
        self.portmap_error.as_deref()
    }

    /// Connections open, accepted and refused.
    pub fn stats(&self) -> ServerStats {
        ServerStats {
            open: self.registry.count.load(Ordering::SeqCst),
            accepted: self.registry.accepted.load(Ordering::Relaxed),
            refused: self.registry.refused.load(Ordering::Relaxed),
            denied: self.registry.denied.load(Ordering::Relaxed),
            udp_replies: self.registry.udp_replies.load(Ordering::Relaxed),
            udp_ignored: self.registry.udp_ignored.load(Ordering::Relaxed),
        }
    }

    /// One line naming every service and its address, for scripts:
    /// `serving prologix=127.0.0.1:1234 vxi11=127.0.0.1:40001 abort=127.0.0.1:40002 portmap=none hislip=127.0.0.1:4880`.
    /// Boards after the first have their Prologix service named by their number at the
    /// end: `prologix1=127.0.0.1:1235`. The portmapper's port is TCP's and UDP's.
    pub fn ports_line(&self) -> String {
        let f = |a: Option<SocketAddr>| a.map_or("none".to_string(), |a| a.to_string());
        let mut line = format!(
            "serving prologix={} vxi11={} abort={} portmap={} hislip={}",
            f(self.prologix_addr()),
            f(self.vxi11),
            f(self.abort),
            f(self.portmap),
            f(self.hislip)
        );
        for (n, a) in self.prologix.iter().skip(1) {
            line.push_str(&format!(" prologix{n}={a}"));
        }
        line
    }

    /// Stops accepting, closes every connection and waits for the listeners.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for l in &self.listeners {
            wake(&l.wake);
        }
        if let Some(u) = self.portmap_udp.take() {
            portmap_udp::wake(u.local);
            let _ = u.thread.join();
        }
        self.registry.close_all();
        for l in self.listeners.drain(..) {
            let _ = l.thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Feeds `input` to one Prologix connection's line parser over `bus`, as if a client
/// had sent it, and appends what the connection answers to `out`: the server side of
/// a Prologix session without a socket (for fuzzing and tests). `default` is the
/// `++addr` at connection, as [`ServeOptions::default_address`].
pub fn prologix_session(bus: Bus, input: &[u8], out: &mut Vec<u8>, default: Option<Address>) {
    prologix::session(bus, input, out, default);
}

/// Asks the kernel to acknowledge what arrived on `s` at once rather than delay the
/// ACK (Linux `TCP_QUICKACK`, which the kernel clears again: call it after each read).
///
/// A client that writes a command and then, before any answer, a second small
/// segment (pyvisa-py's Prologix session sends the command, then `++read eoi`) has
/// that segment held back by its Nagle algorithm until the first is acknowledged;
/// with a delayed ACK that is about 40 ms per query. Elsewhere than Linux: nothing.
pub(crate) fn quick_ack(s: &TcpStream) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let _ = socket2::SockRef::from(s).set_quickack(true);
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = s;
}

#[cfg(all(test, feature = "sim"))]
mod tests;
#[cfg(all(test, feature = "sim"))]
mod tests_boards;
#[cfg(all(test, feature = "sim"))]
mod tests_clients;
#[cfg(all(test, feature = "sim"))]
mod tests_discovery;
#[cfg(all(test, feature = "sim"))]
mod tests_gateway;
#[cfg(all(test, feature = "sim"))]
mod tests_hislip;
