//! Built-in simulated instruments.

mod disc;
mod hp3565;
mod scpi;

pub use disc::Disc;
pub use hp3565::Hp3565;
pub use scpi::ScpiInstrument;
