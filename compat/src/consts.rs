//! The library's own numbers; linux-gpib's ABI numbers are `gpib::abi`'s.

pub use gpib_sim::abi::*;

/// Descriptors: 0..MAX_BOARDS are board indices, device descriptors start there.
pub const MAX_BOARDS: usize = 16;
pub const MAX_DESCRIPTORS: usize = 0x1000;

/// The version `ibvers` reports (the API level of `ib.h`).
pub const VERSION: &std::ffi::CStr = c"4.3.7";
