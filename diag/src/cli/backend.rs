//! `--backend`: the command line's names for the backends a measurement runs on (the
//! one backend enum, [`Backend`], is plain: clap knows it only here).

use clap::builder::PossibleValue;
use clap::ValueEnum;

use crate::record::Backend;

impl ValueEnum for Backend {
    /// The backends `--backend` chooses from; HiSLIP is reached through `--resource`
    /// (`TCPIP::HOST::hislip0::INSTR`).
    fn value_variants<'a>() -> &'a [Self] {
        &[
            Backend::Sim,
            Backend::LinuxGpib,
            Backend::Prologix,
            Backend::Vxi11,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            Backend::Sim => "The simulated bus (virtual time)",
            Backend::LinuxGpib => {
                "Real hardware through linux-gpib (build with `--features linux-gpib`)"
            }
            Backend::Prologix => {
                "A Prologix GPIB-ETHERNET adapter (or `gpib-diag serve`) at `--host`"
            }
            Backend::Vxi11 => "A VXI-11 LAN/GPIB gateway (or `gpib-diag serve`) at `--host`",
            Backend::Hislip => return None,
        };
        Some(PossibleValue::new(self.as_str()).help(help))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_the_records_names() {
        for b in Backend::value_variants() {
            assert_eq!(Backend::from_str(b.as_str(), false), Ok(*b));
        }
        assert!(Backend::from_str("hislip", false).is_err());
    }
}
