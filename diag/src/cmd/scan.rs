//! `gpib-diag scan`: listeners on a board, each asked `*IDN?`.

use std::time::Duration;

use serde::Serialize;

use crate::cli::{Format, ScanArgs};
use crate::error::{DiagError, Result};
use crate::export;
use crate::export::table::{Align, Grid};
use crate::target::Target;

/// One listener found.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Found {
    /// Address: `22`, or `22.5` for a device found at a secondary address.
    pub address: String,
    /// VISA resource string.
    pub resource: String,
    /// The `*IDN?` answer, if it answered.
    pub idn: Option<String>,
}

/// Runs the command.
pub fn run(args: &ScanArgs) -> Result<()> {
    let target = Target::open(args.bus.backend, &args.bus.spec()?)?;
    let mut found = Vec::new();
    for a in target.bus.find_listeners_with_secondaries()? {
        let mut dev = target.bus.device(a)?;
        // The option's parser keeps it within 0..=1e6 s.
        dev.set_timeout(Some(Duration::from_secs_f64(args.idn_timeout).into()));
        let idn = match dev.query("*IDN?") {
            Ok(s) => Some(s),
            Err(e) => {
                log::debug!("{a}: no *IDN? answer: {e}");
                let _ = dev.clear();
                None
            }
        };
        found.push(Found {
            address: a.to_string(),
            resource: gpib::Resource::Instrument {
                board: target.board as u16,
                address: a,
            }
            .to_string(),
            idn,
        });
    }
    let out = match args.out.format {
        Format::Text | Format::Markdown => {
            let mut grid = Grid::new(&[
                ("address", Align::Right),
                ("resource", Align::Left),
                ("*IDN?", Align::Left),
            ]);
            for f in &found {
                grid.row(vec![
                    f.address.clone(),
                    f.resource.clone(),
                    f.idn.clone().unwrap_or_else(|| "(no answer)".into()),
                ]);
            }
            if args.out.format == Format::Markdown {
                grid.markdown()
            } else {
                grid.text()
            }
        }
        Format::Json => {
            let doc = serde_json::json!({"tool": "gpib-diag", "command": "scan", "config": target.label, "listeners": found});
            let mut s =
                serde_json::to_string_pretty(&doc).map_err(|e| DiagError::Usage(e.to_string()))?;
            s.push('\n');
            s
        }
        Format::Csv => export::csv::rows(&[], &found)?,
    };
    export::emit(&args.out.output, &out)
}
