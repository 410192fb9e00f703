//! Each served board's SRQ line as a gateway last saw it, to tell a service request
//! that has just come (a rising edge) from one already told. The VXI-11 and HiSLIP
//! gateways both check the line after each call on a board.

use std::collections::HashMap;
use std::sync::Mutex;

/// The SRQ line of each board, as last seen.
#[derive(Debug, Default)]
pub(crate) struct SrqEdges(Mutex<HashMap<u16, bool>>);

impl SrqEdges {
    /// Records `now` for `board`; true when the line has just been asserted.
    pub(crate) fn rising(&self, board: u16, now: bool) -> bool {
        let mut seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let was = seen.insert(board, now).unwrap_or(false);
        now && !was
    }

    /// Records `now` for `board` without telling anything (after the gateway's own
    /// serial polls, which release the line).
    pub(crate) fn set(&self, board: u16, now: bool) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(board, now);
    }
}

#[cfg(test)]
mod tests {
    use super::SrqEdges;

    #[test]
    fn only_a_rising_edge_is_told() {
        let e = SrqEdges::default();
        assert!(!e.rising(0, false));
        assert!(e.rising(0, true));
        assert!(!e.rising(0, true), "still asserted: told once");
        assert!(e.rising(1, true), "boards apart");
        e.set(0, false);
        assert!(e.rising(0, true));
    }
}
