//! The parsed command line handed down as plain values: the layers below `cli` (the
//! bus, the session) take their own structs, and clap's types stay here.

use super::{BusArgs, ProbeArgs, Protocol, RunArgs};
use crate::driver::ProtocolKind;
use crate::error::Result;
use crate::run::RunPlan;
use crate::session_options::{ProtocolChoice, SessionOptions};
use crate::target::{BusOptions, BusSpec, Target};

impl From<Protocol> for ProtocolChoice {
    fn from(p: Protocol) -> Self {
        match p {
            Protocol::Auto => ProtocolChoice::Auto,
            Protocol::Hp3565 => ProtocolChoice::Given(ProtocolKind::Hp3565),
            Protocol::Scpi => ProtocolChoice::Given(ProtocolKind::Scpi),
            Protocol::Mock => ProtocolChoice::Given(ProtocolKind::Mock),
        }
    }
}

impl BusArgs {
    /// The bus these options describe (checked: see [`BusSpec::from_options`]).
    pub fn spec(&self) -> Result<BusSpec> {
        BusSpec::from_options(&BusOptions {
            bus: self.bus.clone(),
            board: self.board.clone(),
            mount: self.mount.clone(),
            unmount: self.unmount.clone(),
            with: self.with.clone(),
            without: self.without.clone(),
            fault: self.fault.clone(),
            host: self.host.clone(),
            resource: self.resource.clone(),
        })
    }
}

impl RunArgs {
    /// How many runs (`--repeat`, `--warmup`, `--confidence`, `--max-repeat`).
    pub fn plan(&self) -> RunPlan {
        RunPlan {
            repeat: self.repeat,
            warmup: self.warmup,
            confidence: self.confidence,
            max_repeat: self.max_repeat,
        }
    }

    /// What a measurement session on `target` is opened with (`--device` resolved on
    /// its board, `--protocol`, `--timeout`).
    pub fn session_options(&self, target: &Target) -> Result<SessionOptions> {
        target.session_options(self.device.as_ref(), self.protocol.into(), self.timeout)
    }
}

impl ProbeArgs {
    /// The probed instrument's primary address: `--device` resolved on `target`'s board
    /// (`None`: the command finds one).
    pub fn device(&self, target: &Target) -> Result<Option<u8>> {
        self.device
            .as_ref()
            .map(|d| target.resolve_device(d))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory as _, Parser as _};

    use super::super::{Cli, Command};

    /// `doctor` and `calibrate` take the same probe options, under one help heading.
    #[test]
    fn doctor_and_calibrate_share_the_probe_options() {
        let flags = [
            "--bus",
            "bench",
            "--device",
            "5",
            "--protocol",
            "scpi",
            "--small",
            "32",
            "--large",
            "4K",
            "--budget",
            "7",
        ];
        for cmd in ["doctor", "calibrate"] {
            let cli = Cli::try_parse_from(["gpib-diag", cmd].into_iter().chain(flags)).unwrap();
            let probe = match cli.command {
                Command::Doctor(a) => a.probe,
                Command::Calibrate(a) => a.probe,
                _ => unreachable!("{cmd} parsed as another command"),
            };
            assert_eq!(probe.bus.bus, "bench");
            assert_eq!(probe.small, 32);
            assert_eq!(probe.large, Some(4096));
            assert_eq!(probe.budget, 7.0);
            let mut c = Cli::command();
            let sub = c.find_subcommand_mut(cmd).unwrap();
            for id in ["device", "protocol", "small", "large", "budget"] {
                let arg = sub.get_arguments().find(|a| a.get_id() == id).unwrap();
                assert_eq!(arg.get_help_heading(), Some("Probe"), "{cmd} --{id}");
            }
        }
    }
}
