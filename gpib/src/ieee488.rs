//! IEEE 488.1 timing limits: the numbers of the standard that the simulator's timing
//! model, the trace checker and the diagnostics share.
//!
//! ```
//! use gpib::ieee488;
//! // The handshake ceiling: 1 MB/s, whatever the instruments.
//! assert_eq!(1_000_000_000 / ieee488::IEEE488_MIN_BYTE_NS, 1_000_000);
//! assert!(ieee488::MIN_T1_NS < ieee488::T1_STANDARD_NS);
//! ```

/// The IEEE 488.1 handshake ceiling: 1 MB/s, 1000 ns a byte.
pub const IEEE488_MIN_BYTE_NS: u64 = 1000;
/// The HS488 ceiling: 8 MB/s, 125 ns a byte.
pub const HS488_MIN_BYTE_NS: u64 = 125;
/// The shortest T1 settling time IEEE 488.1 allows (350 ns, cable ≤ 15 m, all devices on).
pub const MIN_T1_NS: u64 = 350;
/// T1 for open-collector drivers or long cables: 2 µs (linux-gpib's `T1_DELAY_2000ns`).
pub const T1_STANDARD_NS: u64 = 2000;
/// T1 with tri-state drivers: 500 ns (linux-gpib's `T1_DELAY_500ns`).
pub const T1_TRISTATE_NS: u64 = 500;
