//! A virtual GPIB board for linux-gpib's own user library. Loaded with `LD_PRELOAD`,
//! it serves `/dev/gpib0` ... `/dev/gpib15` (`open`, `close`, `ioctl`) from a board of
//! the simulated bus, answering each of the 38 requests of linux-gpib's kernel
//! interface as its board-independent kernel layer does. linux-gpib's `libgpib.so`,
//! `gpib_config` and every program built on them then run unchanged, with no kernel
//! module and no hardware:
//!
//! ```sh
//! export LD_PRELOAD=target/release/libgpib_vboard.so GPIB_SIM_CONFIG=bench
//! gpib_config --minor 0        # as on a real system: board type, online, addresses
//! ./my_program                 # linked against linux-gpib's libgpib.so.0
//! ```
//!
//! * The simulated bus: `GPIB_SIM_CONFIG` (a built-in name or a TOML file) or
//!   `IB_CONFIG`'s gpib.conf, read as the libgpib-compatible library reads them; board
//!   *N* of it is `/dev/gpibN`. Its operations take their modelled time in wall time
//!   unless `GPIB_SIM_REALTIME=0`.
//! * What the kernel keeps between processes (board type, online, addresses, system
//!   control, REN) is kept in a file per board under `$GPIB_VBOARD_STATE` (default
//!   `/tmp/gpib-vboard-<uid>`); the instruments' own state lives as long as the
//!   process.
//! * Automatic serial polling runs when a status is asked for and the board's lock is
//!   free, where the kernel's thread runs as soon as SRQ rises.

mod abi;
mod board;
mod driver;
mod file;
mod host;
mod interpose;
mod io;
mod ioctl;
mod persist;
mod user;

pub use interpose::{__open_2, close, ioctl, open, open64, openat};
