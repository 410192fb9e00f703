//! The host driver's poller: what mounted discs on polled interfaces cost the others.
//!
//! HP-UX 6.01 polls the discs on an HP-IB card that has no DMA. While a disc is
//! mounted on such an interface, the driver gives its poller a turn between every two
//! bytes of a programmed-I/O transfer on any other interface: the poll is CPU work
//! (the CPU that moves the bytes runs it), and the handshake of the byte in flight
//! waits meanwhile, so the instrument pays its holdoff recovery too (`timing`'s
//! per-byte cost adds both). A DMA transfer is not interleaved with polls.

use crate::sim::world::Board;

/// Poll time per byte (ns) of a PIO transfer on board `on`: one poll of each polled
/// interface for each disc mounted there, other than `on` itself.
pub(crate) fn poll_ns(boards: &mut [Board], on: usize) -> u64 {
    let mut total = 0u64;
    for (i, b) in boards.iter_mut().enumerate() {
        if i == on || !b.timing.polled {
            continue;
        }
        let cost = u64::try_from(b.timing.poll_cost.as_nanos()).unwrap_or(u64::MAX);
        for d in &mut b.devices {
            if d.disc().is_some_and(|x| x.is_mounted()) {
                total = total.saturating_add(cost);
            }
        }
    }
    total
}
