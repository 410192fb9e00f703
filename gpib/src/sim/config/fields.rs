//! Numbers from a configuration file, each checked against its limit.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::timeout::Timeout;

/// Longest time per call or per command byte (`call_overhead_us`,
/// `read_call_overhead_us`, `write_call_overhead_us`, `command_byte_us`, `dma_setup_us`,
/// `interrupt_us`, `poll_us`): 1 s, in µs.
pub const MAX_CALL_US: f64 = 1e6;
/// Longest time per byte or settling time (every `..._ns` field): 1 s, in ns.
pub const MAX_BYTE_NS: u64 = 1_000_000_000;
/// Longest response latency of a device (`response_latency_us`): 1000 s, in µs.
pub const MAX_RESPONSE_LATENCY_US: f64 = 1e9;
/// Largest DMA block (`dma_block_bytes`): 16 MiB.
pub const MAX_DMA_BLOCK_BYTES: u64 = 1 << 24;

/// A time in microseconds from the file: finite, 0..=`max_us`.
pub(super) fn us_field(
    v: Option<f64>,
    default: Duration,
    field: &str,
    max_us: f64,
    on: &str,
) -> Result<Duration> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && (0.0..=max_us).contains(&x) => {
            Ok(Duration::from_secs_f64(x / 1e6))
        }
        Some(x) => Err(Error::Config(format!(
            "{on}: {field} = {x:?} is out of range: 0 to {max_us} us ({})",
            secs_text(max_us / 1e6)
        ))),
    }
}

/// A data call's own overhead (`read_call_overhead_us` when `dir` is "read",
/// `write_call_overhead_us` for "write"), checked as `call_overhead_us` is; None when
/// the file gives none.
pub(super) fn own_overhead(v: Option<f64>, dir: &str, on: &str) -> Result<Option<Duration>> {
    let field = format!("{dir}_call_overhead_us");
    v.map(|x| us_field(Some(x), Duration::ZERO, &field, MAX_CALL_US, on))
        .transpose()
}

/// A time in seconds from the file: finite, 0..=`max_s`.
pub(super) fn secs_field(
    v: Option<f64>,
    default: Duration,
    field: &str,
    max_s: f64,
    on: &str,
) -> Result<Duration> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && (0.0..=max_s).contains(&x) => Ok(Duration::from_secs_f64(x)),
        Some(x) => Err(Error::Config(format!(
            "{on}: {field} = {x:?} is out of range: 0 to {} (0 = none)",
            secs_text(max_s)
        ))),
    }
}

/// A timeout in seconds from the file (`None`: `default`): 0 to `max_s`, where the
/// file's 0 (as gpib.conf's `TNONE`) is [`Timeout::Never`].
pub(super) fn timeout_field(
    v: Option<f64>,
    default: Timeout,
    field: &str,
    max_s: f64,
    on: &str,
) -> Result<Timeout> {
    match v {
        None => Ok(default),
        Some(0.0) => Ok(Timeout::Never),
        v => secs_field(v, Duration::ZERO, field, max_s, on).map(Timeout::After),
    }
}

/// A whole number from the file: 0..=`max` (`unit` after the limit in the message).
pub(super) fn int_field(
    v: Option<u64>,
    default: u64,
    field: &str,
    max: u64,
    unit: &str,
    on: &str,
) -> Result<u64> {
    match v {
        None => Ok(default),
        Some(x) if x <= max => Ok(x),
        Some(x) => Err(Error::Config(format!(
            "{on}: {field} = {x:?} is out of range: 0 to {max} {unit}"
        ))),
    }
}

/// A per-byte or settling time in ns: 0..=[`MAX_BYTE_NS`].
pub(super) fn ns_field(v: Option<u64>, default: u64, field: &str, on: &str) -> Result<u64> {
    int_field(v, default, field, MAX_BYTE_NS, "ns (1 s)", on)
}

pub(super) fn secs_text(s: f64) -> String {
    format!("{s} s")
}
