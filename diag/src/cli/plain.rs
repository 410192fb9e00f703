//! The parsed command line handed down as plain values: the layers below `cli` (the
//! bus, the session) take their own structs, and clap's types stay here.

use super::{BusArgs, Protocol, RunArgs};
use crate::driver::ProtocolKind;
use crate::error::Result;
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
    /// What a measurement session on `target` is opened with (`--device` resolved on
    /// its board, `--protocol`, `--timeout`).
    pub fn session_options(&self, target: &Target) -> Result<SessionOptions> {
        target.session_options(self.device.as_ref(), self.protocol.into(), self.timeout)
    }
}
