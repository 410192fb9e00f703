//! `libgpib.so.0` over the simulated bus: the C API of linux-gpib's user library
//! (4.3.x, declared in `compat/include/gpib/ib.h`), with the same symbol names,
//! signatures and semantics, serving a simulated host of the `gpib` crate instead of
//! a kernel driver.
//!
//! Programs written for linux-gpib (C, Python through its bindings, Rust through
//! `linux-gpib-rs`) run unchanged against it: build this crate, put the directory
//! holding `libgpib.so.0` on `LD_LIBRARY_PATH`, and pick the simulated host with
//! `GPIB_SIM_CONFIG` (see `compat/README.md`).
//!
//! * Boards: board index *i* is board *i* of the configuration; its name there is what
//!   `ibfind` finds. Board descriptors are the board indices (0..16); device
//!   descriptors (`ibdev`) and `ibfind` descriptors count from 16.
//! * Status: every call leaves `ibsta`/`iberr`/`ibcnt`/`ibcntl` in the calling thread
//!   (`ThreadIbsta()`...) and in the exported globals.
//! * Time: bus operations take virtual time on the simulator and return at once; a
//!   wait for SRQ jumps to an instrument event due before its timeout; other waits
//!   for a status condition (`ibwait`, `WaitSRQ`) run in wall time, so that another
//!   thread can act on the bus meanwhile.
//! * What the simulated bus cannot do (passing control, giving up system control,
//!   byte swapping, HS488) fails with ECAP, as libgpib does for a missing capability.
//!
//! Environment: `GPIB_SIM_CONFIG` (a built-in configuration name such as `bench` or
//! `hp9000-350`, or a TOML file; default `bench`), `GPIB_SIM_REALTIME=1` (every
//! operation also sleeps for its modelled duration), `GPIB_SIM_TRACE=1` (print every
//! bus event on stderr).

mod consts;
mod crossings;
mod engine;
mod ffi;
mod status;

#[cfg(test)]
mod crossings_tests;
#[cfg(test)]
mod fidelity_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tuning_tests;
