//! Typed GPIB / HP-IB (IEEE 488) instrument control, with a simulated bus in virtual time.
//!
//! ```
//! use gpib::{Bus, sim};
//!
//! // A simulated bench; use a hardware backend the same way.
//! let bus = Bus::new(sim::bench().board(0)?);
//! let dmm = bus.device(22)?;                       // GPIB0::22::INSTR
//! assert_eq!(dmm.query("*IDN?")?, "SIMULATED,SCPI-DMM,0,1.0");
//! let volts: f64 = dmm.query("MEAS:VOLT?")?.parse().unwrap();
//! assert!(volts > 0.0);
//! # Ok::<(), gpib::Error>(())
//! ```
//!
//! The pieces, from the wire up:
//!
//! * [`PrimaryAddress`], [`SecondaryAddress`], [`Address`]: validated at the edge.
//! * [`InterfaceMessage`]: every IEEE 488.1 command byte, both directions.
//! * [`Backend`]: one board as system controller; [`sim::SimBoard`] and (feature
//!   `linux-gpib`) the linux-gpib backend implement it.
//! * [`Bus`] and [`Device`]: addressing, message and block I/O, serial poll, SRQ,
//!   clear, trigger, remote/local; safe to share between threads.
//! * [`block`]: IEEE 488.2 arbitrary blocks (`#<n><len>`, `#0`, `#A`, `#I`, `#(len)`).
//! * [`Resource`]: VISA-style resource strings.
//! * [`Error`] with [`ErrorKind`].
//! * [`trace`]: bus traces (calls and bus bytes on one time axis), written as they happen.
#![warn(missing_docs)]
#![cfg_attr(not(feature = "linux-gpib"), forbid(unsafe_code))]
// docs.rs (nightly rustdoc): label feature-gated items with the feature they need.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod abi;
mod address;
pub mod backend;
pub mod block;
mod bus;
mod deadline;
mod device;
mod error;
pub mod gpibconf;
pub mod ieee488;
mod message;
mod regular_file;
mod resource;
pub mod rpc;
#[cfg(feature = "serve")]
pub mod serve;
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
pub use device::{BlockInfo, Device, DEFAULT_MAX_READ};
pub use error::{Error, ErrorKind, Result};
pub use message::{addressing, codes, CommandBuf, CommandDecoder, InterfaceMessage};
pub use resource::{NetworkResource, PrologixLink, Resource};
pub use status::{BoardStatus, BusLines, StatusByte};

// The README's Rust blocks are doc tests: compiled, and run unless marked `no_run`.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
