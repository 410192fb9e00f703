//! The HiSLIP client backend: a HiSLIP LAN/GPIB gateway's devices as a board. Each
//! device is a session of its own on the gateway, opened at first use, on the
//! sub-address `hislip_gpib<B>_<PAD>` (what `gpib-diag serve` names device PAD of its
//! board B; [`crate::hislip::gateway_sub_address`]). One session alone is
//! [`HislipSession`].
//!
//! HiSLIP has no SRQ line: [`Backend::srq`] asks each open session's status byte
//! (AsyncStatusQuery), and a status byte with RQS is kept for the next serial poll of
//! that device, as the poll a controller makes after SRQ would find it.

mod channel;
pub(crate) mod connector;
mod session;

pub use session::HislipSession;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::address::{Address, PrimaryAddress};
use crate::backend::{Backend, DeviceLevel, Eos, ReadEnd, ReadStatus};
use crate::deadline::Deadline;
use crate::error::{Error, Result};
use crate::hislip::remote_local;
use crate::status::StatusByte;
use crate::timeout::Timeout;

/// RQS in a status byte.
const RQS: u8 = 0x40;
/// The timeout of a board not told otherwise.
const DEFAULT_TIMEOUT: Timeout = Timeout::After(Duration::from_secs(10));

/// The wait a session's socket calls take for `timeout`: HiSLIP has no "wait for
/// ever", so [`Timeout::Never`] is the longest wait a socket takes.
fn socket_wait(timeout: Timeout) -> Duration {
    timeout
        .duration()
        .unwrap_or(Duration::from_secs(u64::from(u32::MAX)))
}

/// One device's session, and the part of its last answer not read yet.
struct Dev {
    s: HislipSession,
    buf: Vec<u8>,
    at: usize,
}

/// The devices of board `board` on a HiSLIP gateway, as a device-level backend.
pub struct HislipBoard {
    host: String,
    port: u16,
    board: u16,
    timeout: Timeout,
    start: Instant,
    devices: HashMap<Address, Dev>,
    /// Status bytes with RQS that [`Backend::srq`] saw, for the next serial poll.
    requested: HashMap<Address, u8>,
    /// Sub-addresses given for addresses ([`HislipBoard::name_session`]).
    names: HashMap<Address, String>,
}

impl std::fmt::Debug for HislipBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "HislipBoard({}:{} gpib{})",
            self.host, self.port, self.board
        )
    }
}

impl HislipBoard {
    /// The gateway at `host` (`host:port`; the HiSLIP port 4880 when none is given),
    /// its board `board`. The gateway must accept a connection; sessions open at each
    /// device's first use.
    pub fn connect(host: &str, board: u16) -> Result<Self> {
        let addr = crate::backend::net::resolve(host, crate::hislip::PORT)?;
        drop(std::net::TcpStream::connect_timeout(
            &addr,
            socket_wait(DEFAULT_TIMEOUT),
        )?);
        Ok(Self {
            host: addr.ip().to_string(),
            port: addr.port(),
            board,
            timeout: DEFAULT_TIMEOUT,
            start: Instant::now(),
            devices: HashMap::new(),
            requested: HashMap::new(),
            names: HashMap::new(),
        })
    }

    /// Opens `name` (`hislip0`: an instrument, not a gateway's device) for address
    /// `a`, as VXI-11's `inst0` stands where a GPIB address would.
    pub fn name_session(&mut self, a: Address, name: &str) {
        self.names.insert(a, name.to_string());
    }

    fn dev(&mut self, a: Address) -> Result<&mut Dev> {
        if !self.devices.contains_key(&a) {
            let name = match self.names.get(&a) {
                Some(n) => n.clone(),
                None if a.secondary.is_some() => {
                    return Err(Error::InvalidAddress {
                        value: u32::from(a.primary.get()),
                        reason: "a HiSLIP sub-address names a primary address only",
                    })
                }
                None => crate::hislip::gateway_sub_address(self.board, a.primary.get()),
            };
            let s =
                HislipSession::connect(&self.host, self.port, &name, socket_wait(self.timeout))?;
            self.devices.insert(
                a,
                Dev {
                    s,
                    buf: Vec::new(),
                    at: 0,
                },
            );
        }
        Ok(self.devices.get_mut(&a).expect("inserted above"))
    }

    fn unsupported(&self, what: &'static str) -> Error {
        Error::unsupported(what, self.name())
    }
}

impl Backend for HislipBoard {
    fn name(&self) -> &str {
        "hislip"
    }

    fn board_address(&self) -> PrimaryAddress {
        PrimaryAddress::new_const(0)
    }

    fn write(&mut self, _data: &[u8], _eoi: bool) -> Result<usize> {
        Err(self.unsupported("board-level writes"))
    }

    fn read(&mut self, _buf: &mut [u8], _eos: Option<Eos>) -> Result<ReadStatus> {
        Err(self.unsupported("board-level reads"))
    }

    fn interface_clear(&mut self) -> Result<()> {
        Err(self.unsupported("IFC"))
    }

    fn remote_enable(&mut self, on: bool) -> Result<()> {
        let code = if on {
            remote_local::ENABLE_REMOTE
        } else {
            remote_local::DISABLE_REMOTE
        };
        match self.devices.values_mut().next() {
            Some(d) => d.s.remote_local(code),
            None => Err(self.unsupported("REN before a device is opened")),
        }
    }

    fn set_timeout(&mut self, timeout: Timeout) -> Result<Timeout> {
        self.timeout = timeout;
        for d in self.devices.values_mut() {
            d.s.set_timeout(socket_wait(timeout));
        }
        Ok(timeout)
    }

    fn timeout(&self) -> Timeout {
        self.timeout
    }

    fn now(&self) -> Duration {
        self.start.elapsed()
    }

    fn serial_poll(&mut self, device: Address) -> Result<StatusByte> {
        if let Some(stb) = self.requested.remove(&device) {
            return Ok(StatusByte(stb));
        }
        Ok(StatusByte(self.dev(device)?.s.status_byte()?))
    }

    fn srq(&mut self) -> Result<bool> {
        if !self.requested.is_empty() {
            return Ok(true);
        }
        let mut found = false;
        for (&a, d) in &mut self.devices {
            // AsyncServiceRequest messages only say that a status query will show RQS.
            d.s.take_srqs()?;
            let stb = d.s.status_byte()?;
            if stb & RQS != 0 {
                self.requested.insert(a, stb);
                found = true;
            }
        }
        Ok(found)
    }

    fn device_level(&mut self) -> Option<&mut dyn DeviceLevel> {
        Some(self)
    }
}

impl DeviceLevel for HislipBoard {
    fn device_write(&mut self, device: Address, data: &[u8], eoi: bool) -> Result<usize> {
        let d = self.dev(device)?;
        // An answer not read is gone once the next message goes (IEEE 488.2).
        d.buf.clear();
        d.at = 0;
        if eoi {
            d.s.write(data)?;
        } else {
            d.s.write_partial(data)?;
        }
        Ok(data.len())
    }

    fn device_read(
        &mut self,
        device: Address,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        let d = self.dev(device)?;
        if d.at >= d.buf.len() {
            // One deadline for the status query and the answer.
            let dl = Deadline::after(self.timeout.duration());
            let d = self.dev(device)?;
            if !d.s.answer_due() {
                // An answer nobody asked for by a query (a triggered reading): the
                // gateway fetches it when a status query finds MAV.
                let stb = d.s.status_byte_by(dl)?;
                if stb & RQS != 0 {
                    self.requested.insert(device, stb);
                }
            }
            let d = self.dev(device)?;
            d.buf.clear();
            d.at = 0;
            if let Err(e) = d.s.read_by(&mut d.buf, dl) {
                // A timeout: the bytes that came are the caller's, as far as they fit.
                let n = d.buf.len().min(buf.len());
                buf[..n].copy_from_slice(&d.buf[..n]);
                d.buf.clear();
                return Err(match e {
                    Error::Timeout {
                        operation, timeout, ..
                    } => Error::Timeout {
                        operation,
                        timeout,
                        transferred: n,
                    },
                    e => e,
                });
            }
        }
        let d = self.dev(device)?;
        let rest = &d.buf[d.at..];
        let mut n = rest.len().min(buf.len());
        let mut end = if n == rest.len() {
            ReadEnd::Eoi
        } else {
            ReadEnd::BufferFull
        };
        if let Some(i) = eos.and_then(|e| e.find(&rest[..n])) {
            n = i + 1;
            end = ReadEnd::Eos;
        }
        buf[..n].copy_from_slice(&rest[..n]);
        d.at += n;
        Ok(ReadStatus { count: n, end })
    }

    fn device_clear(&mut self, device: Address) -> Result<()> {
        self.requested.remove(&device);
        let d = self.dev(device)?;
        d.buf.clear();
        d.at = 0;
        d.s.clear()
    }

    fn device_trigger(&mut self, device: Address) -> Result<()> {
        let d = self.dev(device)?;
        d.buf.clear();
        d.at = 0;
        d.s.trigger()
    }

    fn device_remote(&mut self, device: Address) -> Result<()> {
        self.dev(device)?
            .s
            .remote_local(remote_local::ENABLE_AND_GOTO_REMOTE)
    }

    fn device_local(&mut self, device: Address) -> Result<()> {
        self.dev(device)?.s.remote_local(remote_local::JUST_GTL)
    }
}
