//! The simulated bus: hosts with GPIB boards and instruments, in virtual time.
//!
//! Code written against [`crate::Bus`] runs unchanged here. Time is virtual: a transfer
//! that takes 53 s on the modelled hardware returns at memory speed, and the board's
//! clock ([`crate::Backend::now`]) reports the modelled time; so does the modelled host
//! CPU ([`crate::backend::VirtualTime::modelled_host_cpu`]). [`SimHost::set_realtime`] makes each
//! operation also sleep for its modelled duration.
//!
//! * [`timing`]: the model (handshake, PIO/DMA, call overhead, interface polling).
//! * [`Instrument`]: the trait for simulated devices; built-in ones in [`instruments`].
//! * [`Fault`]: injected faults, each giving the error a real board gives.
//! * [`Event`]: the transcript of bus events with virtual timestamps.
//! * [`config`]: hosts described in TOML; built-ins `hp9000-350` (the 1988 HP 9000/350 io_test
//!   measurement) and `bench`.
//!
//! ```
//! use gpib::{Bus, sim};
//! let host = sim::builtin("hp9000-350").unwrap();
//! host.unmount("/disc").unwrap();
//! let bus = Bus::new(host.board_named("hpib7").unwrap());
//! let t0 = bus.now();
//! bus.device(11).unwrap().write_str("ABRT;DISA;").unwrap();
//! assert!(bus.now() > t0);
//! ```

pub mod behaviour;
mod board;
mod board_index;
pub mod config;
mod connector;
mod fault;
mod host;
mod instrument;
pub mod instruments;
mod lanes;
mod named;
mod ops;
mod participant;
mod poller;
#[cfg(test)]
mod query_tests;
mod realtime;
#[cfg(test)]
mod remote_tests;
mod schedule;
mod slot;
#[cfg(test)]
mod srq_tests;
mod state488;
pub mod timing;
mod transcript;
mod tuning;
#[cfg(test)]
mod tuning_tests;
mod world;

pub use board::SimBoard;
pub use config::{builtin, load, Config};
pub(crate) use connector::SimConnector;
pub use fault::Fault;
pub use host::{DeviceRef, SimHost};
pub use instrument::{DeviceIo, Instrument, Output};
pub use named::NamedDevice;
pub use participant::Participant;
pub use transcript::{Event, EventKind};

/// The default bench: one DMA board (address 0) with an HP3565 at 11 and a SCPI
/// instrument at 22.
pub fn bench() -> SimHost {
    match builtin("bench") {
        Ok(h) => h,
        // The built-in file is part of the crate and tested; this cannot fail.
        Err(e) => unreachable!("built-in bench configuration is invalid: {e}"),
    }
}
