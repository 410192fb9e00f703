//! What-if edits of a simulated configuration, given in a configuration spec
//! (`bus.toml:transfer=dma,t1=350,like=11*4`): the questions a calibrated model answers
//! before anything on the bench is changed ("DMA instead of programmed I/O", "another
//! T1", "four more instruments like device 11"). What the commands print for an edited
//! configuration is the model's prediction.

use gpib::sim::timing::TransferMode;
use gpib::sim::Config;

use crate::error::{DiagError, Result};

/// The most devices `like=` may add at once (a bus has 30 addresses).
const MAX_LIKE: u8 = 30;

/// One edit, applied to the spec's board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhatIf {
    /// The board moves bytes this way.
    Transfer(TransferMode),
    /// The board's T1 settling time, ns.
    T1(u64),
    /// This many more devices like the device at this address, at free addresses.
    Like {
        /// The device copied.
        address: u8,
        /// How many copies.
        count: u8,
    },
}

impl WhatIf {
    /// Parses `key=value` when the key is an edit's (`None` for other keys).
    pub fn parse(key: &str, value: &str) -> Option<Result<Self>> {
        let bad = |why: &str| Some(Err(DiagError::Usage(format!("{key}={value}: {why}"))));
        match key {
            "transfer" => match value {
                "pio" => Some(Ok(WhatIf::Transfer(TransferMode::Pio))),
                "dma" => Some(Ok(WhatIf::Transfer(TransferMode::Dma))),
                _ => bad("expected pio or dma"),
            },
            "t1" => match value.parse::<u64>() {
                Ok(ns) if (gpib::ieee488::MIN_T1_NS..=1_000_000_000).contains(&ns) => {
                    Some(Ok(WhatIf::T1(ns)))
                }
                _ => bad("expected nanoseconds from 350 (IEEE 488.1's least) to 1e9"),
            },
            "like" => {
                let parsed = value.split_once('*').and_then(|(a, n)| {
                    let a = a.parse::<u8>().ok().filter(|a| *a <= 30)?;
                    let n = n
                        .parse::<u8>()
                        .ok()
                        .filter(|n| (1..=MAX_LIKE).contains(n))?;
                    Some(WhatIf::Like {
                        address: a,
                        count: n,
                    })
                });
                match parsed {
                    Some(w) => Some(Ok(w)),
                    None => bad("expected ADDR*COUNT, e.g. like=11*4 (four more like device 11)"),
                }
            }
            _ => None,
        }
    }

    /// How the edit is written in a spec.
    pub fn label(&self) -> String {
        match self {
            WhatIf::Transfer(TransferMode::Pio) => "transfer=pio".into(),
            WhatIf::Transfer(TransferMode::Dma) => "transfer=dma".into(),
            WhatIf::T1(ns) => format!("t1={ns}"),
            WhatIf::Like { address, count } => format!("like={address}*{count}"),
        }
    }

    /// Applies the edit to board `board` of `config`.
    pub fn apply(&self, config: &mut Config, board: usize) -> Result<()> {
        let name = config.name.clone();
        let b = config.boards.get_mut(board).ok_or_else(|| {
            DiagError::Usage(format!("{}: {name} has no board {board}", self.label()))
        })?;
        match *self {
            WhatIf::Transfer(m) => b.transfer = Some(m),
            WhatIf::T1(ns) => b.t1_ns = Some(ns),
            WhatIf::Like { address, count } => {
                let model = b
                    .devices
                    .iter()
                    .find(|d| d.address == address && d.mount.is_none())
                    .cloned()
                    .ok_or_else(|| {
                        DiagError::Usage(format!(
                            "like={address}*{count}: no instrument at {address} on {}",
                            b.name
                        ))
                    })?;
                for _ in 0..count {
                    let free = (1..=30u8)
                        .find(|a| *a != b.address && b.devices.iter().all(|d| d.address != *a))
                        .ok_or_else(|| {
                            DiagError::Usage(format!(
                                "like={address}*{count}: board {} has no free address left",
                                b.name
                            ))
                        })?;
                    let mut copy = model.clone();
                    copy.address = free;
                    copy.secondary = None;
                    // Names are unique on a host: a copy has none.
                    copy.name = None;
                    b.devices.push(copy);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_parse_and_say_what_was_wrong() {
        assert_eq!(
            WhatIf::parse("transfer", "dma").unwrap().unwrap(),
            WhatIf::Transfer(TransferMode::Dma)
        );
        assert_eq!(
            WhatIf::parse("t1", "350").unwrap().unwrap(),
            WhatIf::T1(350)
        );
        assert_eq!(
            WhatIf::parse("like", "11*4").unwrap().unwrap(),
            WhatIf::Like {
                address: 11,
                count: 4
            }
        );
        assert!(WhatIf::parse("mount", "/disc").is_none());
        for (k, v, why) in [
            ("transfer", "usb", "expected pio or dma"),
            ("t1", "100", "from 350"),
            ("t1", "99999999999999999999", "from 350"),
            ("like", "11", "expected ADDR*COUNT"),
            ("like", "31*1", "expected ADDR*COUNT"),
            ("like", "11*0", "expected ADDR*COUNT"),
            ("like", "11*300", "expected ADDR*COUNT"),
        ] {
            let e = WhatIf::parse(k, v).unwrap().unwrap_err().to_string();
            assert!(e.contains(why), "{k}={v}: {e}");
        }
    }

    #[test]
    fn edits_change_the_board() {
        let mut c = Config::from_name_or_path("bench").unwrap();
        WhatIf::Transfer(TransferMode::Pio)
            .apply(&mut c, 0)
            .unwrap();
        WhatIf::T1(2000).apply(&mut c, 0).unwrap();
        WhatIf::Like {
            address: 11,
            count: 3,
        }
        .apply(&mut c, 0)
        .unwrap();
        let b = &c.boards[0];
        assert_eq!(b.transfer, Some(TransferMode::Pio));
        assert_eq!(b.t1_ns, Some(2000));
        let at: Vec<u8> = b.devices.iter().map(|d| d.address).collect();
        assert_eq!(at, [11, 22, 1, 2, 3]);
        assert!(b.devices[2..].iter().all(|d| d.model == "hp3565"));
        c.build().expect("the edited configuration builds");
        let e = WhatIf::Like {
            address: 5,
            count: 1,
        }
        .apply(&mut c, 0)
        .unwrap_err();
        assert!(e.to_string().contains("no instrument at 5"), "{e}");
        let e = WhatIf::T1(500).apply(&mut c, 7).unwrap_err();
        assert!(e.to_string().contains("has no board 7"), "{e}");
    }
}
