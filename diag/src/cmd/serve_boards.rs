//! The boards `gpib-diag serve` serves: a simulated host's, linux-gpib's, or a relayed
//! Prologix adapter's or VXI-11 gateway's, opened through the library's
//! [`gpib::ResourceManager`] (the one way resource strings are opened), numbered
//! `gpib0`, `gpib1`, ... in the order given.

use std::collections::BTreeMap;

use gpib::sim::SimHost;
use gpib::{Address, Bus, ResourceManager};

use crate::cli::ServeArgs;
use crate::error::{DiagError, Result};
use crate::host_arg;
use crate::record::Backend;

/// The boards to serve.
pub struct Boards {
    /// By their served number (`gpib<n>`).
    pub buses: BTreeMap<u16, Bus>,
    /// What each is, in order: `bench board 0`, `linux-gpib GPIB0::INTFC`.
    pub labels: Vec<String>,
    /// The device `inst0` names: `--default-device`, else on a simulated host its first
    /// board's first instrument that is not a disc.
    pub default: Option<Address>,
    /// Keeps a simulated host running.
    pub host: Option<SimHost>,
}

impl Boards {
    fn empty() -> Self {
        Self {
            buses: BTreeMap::new(),
            labels: Vec::new(),
            default: None,
            host: None,
        }
    }
}

/// Opens the boards `a` names.
pub fn open(a: &ServeArgs) -> Result<Boards> {
    if a.backend != Backend::Sim && a.realtime {
        return Err(DiagError::Usage(
            "--realtime is for the simulator (--backend sim): real boards take real time".into(),
        ));
    }
    if a.backend != Backend::Sim && a.bus != "bench" {
        return Err(DiagError::Usage(format!(
            "--bus {} names a simulated configuration: give it with --backend sim",
            a.bus
        )));
    }
    if matches!(a.backend, Backend::Sim | Backend::LinuxGpib) && a.host.is_some() {
        return Err(DiagError::Usage(
            "--host is for relaying a Prologix adapter or a VXI-11 gateway (--backend prologix|vxi11)".into(),
        ));
    }
    let default = a.default_device.map(Address::try_from).transpose()?;
    let mut out = if a.backend == Backend::Sim {
        simulated(a)?
    } else {
        let mut out = Boards::empty();
        let mut rm = ResourceManager::new();
        for r in resources(a)? {
            let label = match a.backend {
                Backend::LinuxGpib => format!("linux-gpib {r}"),
                _ => r.clone(),
            };
            // Before it is opened: a board opened twice may fail for another reason.
            once(&out, &label)?;
            let bus = rm.open_interface(&r).map_err(|e| match e.kind() {
                gpib::ErrorKind::InvalidArgument if a.backend == Backend::LinuxGpib => {
                    no_linux_gpib(e)
                }
                _ => DiagError::from(e),
            })?;
            push(&mut out, bus, label)?;
        }
        out
    };
    if default.is_some() {
        out.default = default;
    }
    Ok(out)
}

/// Without the `linux-gpib` feature the manager cannot open `GPIB<n>::INTFC`: say how
/// to get it; with it, the manager's own error.
fn no_linux_gpib(e: gpib::Error) -> DiagError {
    if cfg!(feature = "linux-gpib") {
        DiagError::from(e)
    } else {
        DiagError::NoLinuxGpib
    }
}

/// Refuses board `label` when it is served already.
fn once(out: &Boards, label: &str) -> Result<()> {
    match out.labels.iter().position(|l| l == label) {
        Some(i) => Err(DiagError::Usage(format!(
            "--board: {label} is given twice (gpib{i} and gpib{}): serve each board once",
            out.labels.len()
        ))),
        None => Ok(()),
    }
}

/// Adds board `label` as the next `gpib<n>`. A board given twice is refused: under two
/// names, a lock taken through one would not hold clients of the other off.
fn push(out: &mut Boards, bus: Bus, label: String) -> Result<()> {
    once(out, &label)?;
    let n =
        u16::try_from(out.buses.len()).map_err(|_| DiagError::Usage("too many boards".into()))?;
    out.buses.insert(n, bus);
    out.labels.push(label);
    Ok(())
}

/// The simulated host's boards `--board` names (default: its first).
fn simulated(a: &ServeArgs) -> Result<Boards> {
    let host = gpib::sim::load(&a.bus)?;
    host.set_realtime(a.realtime);
    let names = if a.board.is_empty() {
        vec!["0".to_string()]
    } else {
        a.board.clone()
    };
    let mut out = Boards::empty();
    let mut first = None;
    for b in &names {
        let board = match b.parse::<usize>() {
            Ok(i) => host.board(i)?,
            Err(_) => host.board_named(b)?,
        };
        let index = board.index();
        first.get_or_insert(index);
        push(
            &mut out,
            Bus::new(board),
            format!("{} board {index}", a.bus),
        )?;
    }
    // The first instrument on the first board that is not a disc.
    out.default = first.and_then(|i| {
        host.devices(i)
            .into_iter()
            .find(|(_, _, mount)| mount.is_none())
            .map(|(addr, _, _)| addr)
    });
    out.host = Some(host);
    Ok(out)
}

/// The interface resource strings of a real backend's boards, in order.
fn resources(a: &ServeArgs) -> Result<Vec<String>> {
    let numbers = || -> Result<Vec<u16>> {
        if a.board.is_empty() {
            return Ok(vec![0]);
        }
        a.board
            .iter()
            .map(|b| {
                b.trim().parse::<u16>().map_err(|_| {
                    DiagError::Usage(format!(
                        "--board {b}: give the board's number (0, 1, ...; linux-gpib's minor number)"
                    ))
                })
            })
            .collect()
    };
    let host = || {
        a.host.as_deref().ok_or_else(|| {
            DiagError::Usage(format!(
                "--backend {} relays an adapter: give --host HOST[:PORT]",
                match a.backend {
                    Backend::Prologix => "prologix",
                    _ => "vxi11",
                }
            ))
        })
    };
    match a.backend {
        Backend::Sim => Ok(Vec::new()),
        Backend::LinuxGpib => Ok(numbers()?
            .into_iter()
            .map(|n| format!("GPIB{n}::INTFC"))
            .collect()),
        Backend::Prologix => {
            if !a.board.is_empty() {
                return Err(DiagError::Usage(
                    "--board: a Prologix adapter has one bus (serve several adapters with one gpib-diag serve each)".into(),
                ));
            }
            Ok(vec![host_arg::prologix_resource(host()?)?])
        }
        Backend::Hislip => Err(crate::target::hislip_needs_resource()),
        Backend::Vxi11 => {
            let host = host()?;
            numbers()?
                .into_iter()
                .map(|n| host_arg::vxi11_resource(host, n))
                .collect()
        }
    }
}
