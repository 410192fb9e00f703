//! A simulated host's boards as resources: board `n` is `GPIB<n>::INTFC`, its devices
//! `GPIB<n>::22::INSTR` (opened on it by the manager).

use crate::backend::Backend;
use crate::connector::Connector;
use crate::error::{Error, Result};
use crate::resource::Resource;

use super::SimHost;

/// Opens the boards of one simulated host.
pub(crate) struct SimConnector {
    host: SimHost,
}

impl SimConnector {
    /// The boards of `host`.
    pub(crate) fn new(host: SimHost) -> Self {
        Self { host }
    }

    fn boards(&self) -> u16 {
        u16::try_from(self.host.board_names().len()).unwrap_or(u16::MAX)
    }
}

impl Connector for SimConnector {
    fn name(&self) -> &str {
        "sim"
    }

    /// Every `GPIB<n>::INTFC` is the simulated host's: one it does not have is an
    /// error, not a board to look for elsewhere.
    fn open_interface(&self, resource: &str) -> Option<Result<(Box<dyn Backend>, u16)>> {
        let Ok(Resource::Interface { board }) = resource.parse::<Resource>() else {
            return None;
        };
        if board >= self.boards() {
            return Some(Err(Error::InvalidArgument(format!(
                "no board GPIB{board} on the simulated host: its boards are {:?}",
                (0..self.boards()).collect::<Vec<_>>()
            ))));
        }
        Some(
            self.host
                .board(usize::from(board))
                .map(|b| (Box::new(b) as Box<dyn Backend>, board)),
        )
    }

    fn list(&self) -> Vec<String> {
        (0..self.boards())
            .map(|n| format!("GPIB{n}::INTFC"))
            .collect()
    }
}
