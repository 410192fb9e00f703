//! linux-gpib's resource strings: `GPIB<n>::INTFC`, board `n` (`/dev/gpib<n>`, the
//! `minor` of a gpib.conf interface); its devices `GPIB<n>::22::INSTR` are opened on it
//! by the manager.

use crate::backend::Backend;
use crate::connector::Connector;
use crate::error::Result;
use crate::resource::Resource;

use super::LinuxGpibBoard;

/// linux-gpib's board numbers: 0 to 15 (`GPIB_MAX_NUM_BOARDS`).
const BOARDS: u16 = 16;

/// Opens linux-gpib's boards.
pub(crate) struct LinuxGpibConnector;

impl Connector for LinuxGpibConnector {
    fn name(&self) -> &str {
        "linux-gpib"
    }

    fn open_interface(&self, resource: &str) -> Option<Result<(Box<dyn Backend>, u16)>> {
        let Ok(Resource::Interface { board }) = resource.parse::<Resource>() else {
            return None;
        };
        Some(
            LinuxGpibBoard::open_index(i32::from(board))
                .map(|b| (Box::new(b) as Box<dyn Backend>, board)),
        )
    }

    /// Every board number: those that open are listed.
    fn list(&self) -> Vec<String> {
        (0..BOARDS).map(|n| format!("GPIB{n}::INTFC")).collect()
    }
}
