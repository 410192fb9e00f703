//! Built-in simulated instruments.

mod disc;
pub mod hp3565;
#[cfg(feature = "pyvisa-sim")]
pub mod pyvisa_sim;
mod replay;
pub mod scpi;
mod status488;
mod terminal;

pub use disc::Disc;
pub use hp3565::Hp3565;
#[cfg(feature = "pyvisa-sim")]
pub use pyvisa_sim::PyvisaSimInstrument;
pub use replay::Replay;
pub use scpi::ScpiInstrument;
pub use terminal::Terminal;
