//! Typed GPIB / HP-IB (IEEE 488) instrument control, with a simulated bus in virtual time.
//!
//! An instrument program opens a [`Device`] by its resource string and talks to it.
//! Here the board is the core's fake one ([`backend::fake`]: scripted answers, no
//! hardware), attached as `GPIB0`:
//!
//! ```
//! use gpib::backend::fake::{FakeBoard, FakeInstrument};
//! use gpib::{Bus, Device, ResourceManager};
//!
//! // The program's own code: it takes a Device, whatever the backend under it.
//! fn volts(dmm: &Device) -> gpib::Result<f64> {
//!     dmm.write_str("CONF:VOLT:DC 10")?;
//!     let text = dmm.query("READ?")?;
//!     text.parse().map_err(|_| gpib::Error::Protocol(format!("not a reading: {text:?}")))
//! }
//!
//! let dmm = FakeInstrument::new()
//!     .answer("*IDN?", "ACME,DMM-1,0,1.0")
//!     .answer("READ?", "+1.2345E+00");
//! let mut rm = ResourceManager::new();
//! rm.attach(0, Bus::new(FakeBoard::new().with(22, dmm.clone())?));
//!
//! let dev = rm.open("GPIB0::22::INSTR")?;
//! assert_eq!(dev.query("*IDN?")?, "ACME,DMM-1,0,1.0");
//! assert_eq!(volts(&dev)?, 1.2345);
//! assert_eq!(dmm.received(), ["*IDN?", "CONF:VOLT:DC 10", "READ?"]);
//! # Ok::<(), gpib::Error>(())
//! ```
//!
//! The same code on an instrument is one resource string away ([`open`], with the
//! strings of [`manager`]):
//!
//! ```no_run
//! // A linux-gpib board (feature `linux-gpib`), or the simulator (feature `sim`) when
//! // GPIB_SIM_CONFIG names a configuration such as `bench`:
//! let dmm = gpib::open("GPIB0::22::INSTR")?;
//! // Device 22 behind a VXI-11 LAN/GPIB gateway:
//! let dmm = gpib::open("TCPIP0::10.0.0.5::gpib0,22::INSTR")?;
//! // Device 22 on a Prologix GPIB-ETHERNET adapter:
//! let dmm = gpib::open("PRLGX-TCPIP::10.0.0.6::1234::22::INSTR")?;
//! println!("{}", dmm.query("*IDN?")?);
//! # Ok::<(), gpib::Error>(())
//! ```
//!
//! The pieces, from the wire up:
//!
//! * [`PrimaryAddress`], [`SecondaryAddress`], [`Address`]: validated at the edge.
//! * [`InterfaceMessage`]: every IEEE 488.1 command byte, both directions.
//! * [`Backend`]: one board as system controller; `sim::SimBoard` (feature `sim`), the network
//!   backends, (feature `linux-gpib`) the linux-gpib backend and the fake board for
//!   tests ([`backend::fake`]) implement it.
//! * [`open`] and [`ResourceManager`]: one resource string in, a [`Device`] out, on every
//!   backend compiled in.
//! * [`Bus`] and [`Device`]: addressing, message and block I/O, serial poll, SRQ,
//!   clear, trigger, remote/local; safe to share between threads.
//! * [`block`]: IEEE 488.2 arbitrary blocks (`#<n><len>`, `#0`, `#A`, `#I`, `#(len)`).
//! * [`Resource`]: VISA-style resource strings.
//! * [`Error`] with [`ErrorKind`].
//! * `trace` (feature `trace`): bus traces (calls and bus bytes on one time axis),
//!   written as they happen; `sim` (feature `sim`): the simulated bus; `serve`
//!   (feature `serve`): the network server; `aio` (feature `tokio`): `AsyncDevice`,
//!   the same calls as async functions for tokio, safe to cancel.
#![warn(missing_docs)]
// Unsafe code only where libgpib is called through linux-gpib-sys rather than
// linux-gpib-rs (backend/linux_gpib/sys.rs, feature `linux-gpib`), with its SAFETY comment.
#![deny(unsafe_code)]
// docs.rs (nightly rustdoc): label feature-gated items with the feature they need.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod abi;
mod address;
#[cfg(feature = "tokio")]
pub mod aio;
pub mod backend;
pub mod block;
mod bus;
mod clock;
pub mod connector;
mod deadline;
mod device;
mod error;
pub mod gpibconf;
pub mod hislip;
pub mod ieee488;
pub mod manager;
mod message;
mod regular_file;
mod resource;
pub mod rpc;
#[cfg(feature = "serve")]
pub mod serve;
mod settings;
#[cfg(feature = "sim")]
pub mod sim;
mod status;
mod timeout;
#[cfg(feature = "trace")]
pub mod trace;

pub use address::{Address, PrimaryAddress, SecondaryAddress, MAX_ADDRESS};
#[cfg(feature = "linux-gpib")]
pub use backend::linux_gpib::LinuxGpibBoard;
pub use backend::{Backend, ClockKind, Eos, ReadEnd, ReadStatus, Turns, WireStats, WriteReadError};
pub use bus::{Bus, Transaction};
pub use connector::{Connector, OnInterface};
pub use device::{BlockInfo, Device, DEFAULT_MAX_READ};
pub use error::{Error, ErrorKind, Result};
pub use manager::{open, GlobalManager, ResourceManager};
pub use message::{addressing, codes, CommandBuf, CommandDecoder, InterfaceMessage};
pub use resource::{NetworkResource, PrologixLink, Resource};
pub use settings::{DeviceSettings, EosMode, Timeout};
pub use status::{BoardStatus, BusLines, StatusByte};

// The README's Rust blocks are doc tests: compiled, and run unless marked `no_run`.
#[cfg(all(doctest, feature = "pyvisa-sim"))]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

// So are those of the library's pages in docs/.
#[cfg(all(doctest, feature = "pyvisa-sim"))]
#[doc = include_str!("../../docs/library.md")]
struct LibraryDocDoctests;

#[cfg(all(doctest, feature = "pyvisa-sim"))]
#[doc = include_str!("../../docs/network.md")]
struct NetworkDocDoctests;
