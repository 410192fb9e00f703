//! Faults a simulated device can be given, each producing the error a real board gives.

/// A fault injected into one simulated device (see [`crate::sim::SimHost::inject`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fault {
    /// The device does not respond to its address: writes to it find no listener
    /// ([`crate::ErrorKind::NoListener`]), reads from it time out.
    Absent,
    /// The device listens but never talks: reads time out with 0 bytes.
    NeverTalks,
    /// The device stops talking after this many bytes of a message: the read times out
    /// and reports the bytes it got.
    StopsAfter(usize),
    /// The device asserts SRQ but its status byte never has RQS: finding the requester
    /// fails with [`crate::ErrorKind::SrqStuck`].
    SrqStuck,
    /// The device holds NRFD: no byte is accepted, so command bytes time out
    /// ([`crate::ErrorKind::CommandTimeout`]) and writes time out.
    HoldsNrfd,
    /// The device also drives the bus when another device is addressed to talk: reads
    /// from that other device fail with [`crate::ErrorKind::BusConflict`].
    SecondTalker,
    /// The device never asserts EOI: reads end only by EOS, a full buffer, or a timeout.
    DropsEoi,
}
