//! Typed GPIB / HP-IB (IEEE 488) instrument control, with a simulated bus in virtual time.
//!
//! ```
//! # #[cfg(feature = "sim")] {
//! // A simulated bench (feature `sim`): every board of it is GPIB<n>. On hardware,
//! // `gpib::open("GPIB0::22::INSTR")` or `ResourceManager::new()`; over the network,
//! // `gpib::open("TCPIP0::10.0.0.5::gpib0,22::INSTR")`.
//! let mut rm = gpib::ResourceManager::simulated("bench")?;
//! let dmm = rm.open("GPIB0::22::INSTR")?;
//! assert_eq!(dmm.query("*IDN?")?, "SIMULATED,SCPI-DMM,0,1.0");
//! let volts: f64 = dmm.query("MEAS:VOLT?")?.parse().unwrap();
//! assert!(volts > 0.0);
//! # }
//! # Ok::<(), gpib::Error>(())
//! ```
//!
//! The pieces, from the wire up:
//!
//! * [`PrimaryAddress`], [`SecondaryAddress`], [`Address`]: validated at the edge.
//! * [`InterfaceMessage`]: every IEEE 488.1 command byte, both directions.
//! * [`Backend`]: one board as system controller; `sim::SimBoard` (feature `sim`), the network
//!   backends and (feature `linux-gpib`) the linux-gpib backend implement it.
//! * [`open`] and [`ResourceManager`]: one resource string in, a [`Device`] out, on every
//!   backend compiled in.
//! * [`Bus`] and [`Device`]: addressing, message and block I/O, serial poll, SRQ,
//!   clear, trigger, remote/local; safe to share between threads.
//! * [`block`]: IEEE 488.2 arbitrary blocks (`#<n><len>`, `#0`, `#A`, `#I`, `#(len)`).
//! * [`Resource`]: VISA-style resource strings.
//! * [`Error`] with [`ErrorKind`].
//! * `trace` (feature `trace`): bus traces (calls and bus bytes on one time axis),
//!   written as they happen; `sim` (feature `sim`): the simulated bus; `serve`
//!   (feature `serve`): the network server.
#![warn(missing_docs)]
#![cfg_attr(not(feature = "linux-gpib"), forbid(unsafe_code))]
// docs.rs (nightly rustdoc): label feature-gated items with the feature they need.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod abi;
mod address;
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
#[cfg(feature = "trace")]
pub mod trace;

pub use address::{Address, PrimaryAddress, SecondaryAddress, MAX_ADDRESS};
#[cfg(feature = "linux-gpib")]
pub use backend::linux_gpib::LinuxGpibBoard;
pub use backend::{
    Backend, BoardId, ClockKind, Eos, ReadEnd, ReadStatus, Turns, WireStats, WriteReadError,
};
pub use bus::{Bus, Transaction};
pub use connector::Connector;
pub use device::{BlockInfo, Device, DEFAULT_MAX_READ};
pub use error::{Error, ErrorKind, Result};
pub use manager::{open, ResourceManager};
pub use message::{addressing, codes, CommandBuf, CommandDecoder, InterfaceMessage};
pub use resource::{NetworkResource, PrologixLink, Resource};
pub use settings::{DeviceSettings, EosMode, Timeout};
pub use status::{BoardStatus, BusLines, StatusByte};

// The README's Rust blocks are doc tests: compiled, and run unless marked `no_run`.
#[cfg(all(doctest, feature = "pyvisa-sim"))]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
