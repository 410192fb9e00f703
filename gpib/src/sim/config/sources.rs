//! Contention sources as a configuration has them: which are present, and switching
//! each off (for A/B runs) or on (a typical instance added to a configuration).
//!
//! Each source is one mechanism of the model ([`crate::sim::behaviour`] and
//! [`crate::sim::timing`]); [`SourceKind`] names them as the command line does.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::sim::behaviour::{AddressingMode, BoardBehaviour};
use crate::sim::config::{BoardConfig, Config, DeviceConfig};
use crate::sim::timing::TransferMode;

/// A kind of contention source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// A disc mounted on an interface the driver polls, slowing programmed I/O on the
    /// other interfaces (the 1988 HP 9000/350 case).
    MountedDisc,
    /// A slow listen-only device: every handshake runs at its acceptance time.
    SlowListener,
    /// A device that holds NRFD for a while after each message it receives.
    NrfdHolder,
    /// A device that keeps requesting service on a board whose driver polls it.
    SrqStorm,
    /// The driver addresses the device before every read and write.
    EveryCallAddressing,
    /// A disc busy with background traffic, taking CPU for its interrupts.
    BusyDisc,
    /// A cable longer than IEEE 488.1 allows.
    LongCable,
    /// The board moves bytes by programmed I/O (the CPU moves every byte).
    ProgrammedIo,
}

impl SourceKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [SourceKind; 8] = [
        SourceKind::MountedDisc,
        SourceKind::SlowListener,
        SourceKind::NrfdHolder,
        SourceKind::SrqStorm,
        SourceKind::EveryCallAddressing,
        SourceKind::BusyDisc,
        SourceKind::LongCable,
        SourceKind::ProgrammedIo,
    ];

    /// The name the command line uses: `mounted-disc`, `slow-listener`, ...
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::MountedDisc => "mounted-disc",
            SourceKind::SlowListener => "slow-listener",
            SourceKind::NrfdHolder => "nrfd-holder",
            SourceKind::SrqStorm => "srq-storm",
            SourceKind::EveryCallAddressing => "every-call-addressing",
            SourceKind::BusyDisc => "busy-disc",
            SourceKind::LongCable => "long-cable",
            SourceKind::ProgrammedIo => "pio",
        }
    }

    /// One line saying what the source is.
    pub fn describe(self) -> &'static str {
        match self {
            SourceKind::MountedDisc => {
                "a disc mounted on a polled interface: its driver polls it between the bytes of programmed-I/O transfers elsewhere"
            }
            SourceKind::SlowListener => {
                "a slow listen-only device: every handshake waits for it"
            }
            SourceKind::NrfdHolder => {
                "a device that holds NRFD after each message: command bytes wait for it"
            }
            SourceKind::SrqStorm => {
                "a device that keeps requesting service, serial-polled by the driver each time"
            }
            SourceKind::EveryCallAddressing => {
                "addressing bytes (UNL, MTA/MLA) before every read and write"
            }
            SourceKind::BusyDisc => "a busy disc whose interrupts take host CPU",
            SourceKind::LongCable => "a cable longer than IEEE 488.1 allows",
            SourceKind::ProgrammedIo => "programmed I/O: the CPU moves every byte",
        }
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SourceKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        SourceKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                Error::Config(format!(
                    "unknown contention source {s:?} (known: {})",
                    SourceKind::ALL.map(SourceKind::name).join(", ")
                ))
            })
    }
}

/// One contention source present in a configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Source {
    /// What kind.
    pub kind: SourceKind,
    /// The board it is on.
    pub board: String,
    /// The device, when it belongs to one.
    pub address: Option<u8>,
    /// What it is, in words: "/disc mounted on hpib8, which the driver polls".
    pub what: String,
}

/// A listen-only device is slow when it accepts a byte in more than this (ns).
const SLOW_ACCEPT_NS: u64 = 2_000;

fn is_disc(d: &DeviceConfig) -> bool {
    d.model.eq_ignore_ascii_case("disc")
}

fn mounted(d: &DeviceConfig) -> bool {
    d.mount.is_some() && d.mounted.unwrap_or(true)
}

fn devices_on(b: &BoardConfig) -> usize {
    b.devices.len() + 1
}

/// Whether board `b` itself (not one of its devices) is a source of `kind`.
fn board_has(kind: SourceKind, b: &BoardConfig) -> bool {
    match kind {
        SourceKind::EveryCallAddressing => b.addressing == Some(AddressingMode::EveryCall),
        SourceKind::LongCable => BoardBehaviour {
            cable_m: b.cable_m,
            ..Default::default()
        }
        .cable_out_of_limits(devices_on(b)),
        SourceKind::ProgrammedIo => b.transfer == Some(TransferMode::Pio),
        _ => false,
    }
}

/// Whether device `d` on board `b` is a source of `kind`; `pio_elsewhere`: another
/// board moves bytes by programmed I/O.
fn device_has(kind: SourceKind, b: &BoardConfig, d: &DeviceConfig, pio_elsewhere: bool) -> bool {
    match kind {
        SourceKind::MountedDisc => is_disc(d) && mounted(d) && b.polled && pio_elsewhere,
        SourceKind::SlowListener => d.listen_only && d.accept_ns.unwrap_or(0) > SLOW_ACCEPT_NS,
        SourceKind::NrfdHolder => d.nrfd_hold_us.is_some_and(|h| h > 0.0),
        SourceKind::SrqStorm => d.srq_every_us.is_some() && b.autopoll,
        SourceKind::BusyDisc => d.activity_bytes_per_s.is_some_and(|r| r > 0),
        _ => false,
    }
}

/// What a board source of `kind` on `b` is, in words.
fn board_what(kind: SourceKind, b: &BoardConfig) -> String {
    match kind {
        SourceKind::EveryCallAddressing => format!(
            "{}'s driver addresses the device before every read and write",
            b.name
        ),
        SourceKind::LongCable => format!(
            "{}'s cable is {} m for {} devices (IEEE 488.1: at most 20 m, 2 m a device)",
            b.name,
            b.cable_m.unwrap_or(0.0),
            devices_on(b)
        ),
        // ProgrammedIo, the other board source.
        _ => format!("{} moves bytes by programmed I/O", b.name),
    }
}

/// What a device source of `kind`, `d` on `b`, is, in words.
fn device_what(kind: SourceKind, b: &BoardConfig, d: &DeviceConfig) -> String {
    let does = match kind {
        SourceKind::MountedDisc => {
            return format!(
                "{} is mounted on {}, whose driver polls it between every byte of programmed-I/O transfers on the other interfaces",
                d.mount.as_deref().unwrap_or("a disc"),
                b.name
            )
        }
        SourceKind::SlowListener => format!(
            "listens to every byte and accepts one in {} ns",
            d.accept_ns.unwrap_or(0)
        ),
        SourceKind::NrfdHolder => format!(
            "holds NRFD for {} us after each message",
            d.nrfd_hold_us.unwrap_or(0.0)
        ),
        SourceKind::SrqStorm => format!(
            "requests service every {} us and the driver polls it",
            d.srq_every_us.unwrap_or(0.0)
        ),
        // BusyDisc, the other device source.
        _ => format!(
            "moves {} bytes a second in the background",
            d.activity_bytes_per_s.unwrap_or(0)
        ),
    };
    format!("device {} on {} {does}", d.address, b.name)
}

impl Config {
    /// The contention sources this configuration has, in [`SourceKind::ALL`]'s order.
    pub fn sources(&self) -> Vec<Source> {
        let mut out = Vec::new();
        for kind in SourceKind::ALL {
            for b in &self.boards {
                if board_has(kind, b) {
                    out.push(Source {
                        kind,
                        board: b.name.clone(),
                        address: None,
                        what: board_what(kind, b),
                    });
                }
                let pio_elsewhere = self.pio_elsewhere(&b.name);
                for d in &b.devices {
                    if device_has(kind, b, d, pio_elsewhere) {
                        out.push(Source {
                            kind,
                            board: b.name.clone(),
                            address: Some(d.address),
                            what: device_what(kind, b, d),
                        });
                    }
                }
            }
        }
        out
    }

    /// Whether a board other than the one named `board` moves bytes by programmed I/O.
    fn pio_elsewhere(&self, board: &str) -> bool {
        self.boards
            .iter()
            .any(|b| b.name != board && b.transfer == Some(TransferMode::Pio))
    }

    /// Switches every source of `kind` off; returns how many there were.
    pub fn without_source(&mut self, kind: SourceKind) -> usize {
        let before = self.sources().iter().filter(|s| s.kind == kind).count();
        let pio_elsewhere: Vec<bool> = self
            .boards
            .iter()
            .map(|b| self.pio_elsewhere(&b.name))
            .collect();
        for (b, pio_elsewhere) in self.boards.iter_mut().zip(pio_elsewhere) {
            match kind {
                // Every board: none addresses before every call afterwards.
                SourceKind::EveryCallAddressing => b.addressing = Some(AddressingMode::Cached),
                SourceKind::LongCable if board_has(kind, b) => b.cable_m = None,
                SourceKind::ProgrammedIo if board_has(kind, b) => {
                    b.transfer = Some(TransferMode::Dma);
                }
                _ => {}
            }
            let sources: Vec<bool> = b
                .devices
                .iter()
                .map(|d| device_has(kind, b, d, pio_elsewhere))
                .collect();
            for (d, source) in b.devices.iter_mut().zip(sources) {
                match kind {
                    SourceKind::MountedDisc if source => d.mounted = Some(false),
                    SourceKind::SlowListener if source => d.accept_ns = None,
                    // These on every device, a source or not.
                    SourceKind::NrfdHolder => d.nrfd_hold_us = None,
                    SourceKind::SrqStorm => d.srq_every_us = None,
                    SourceKind::BusyDisc => d.activity_bytes_per_s = None,
                    _ => {}
                }
            }
        }
        before
    }

    /// Adds a typical instance of `kind` on `board` (a name; default the first board),
    /// and says what was added.
    pub fn with_source(&mut self, kind: SourceKind, board: Option<&str>) -> Result<String> {
        let i = match board {
            None => 0,
            Some(name) => self
                .boards
                .iter()
                .position(|b| b.name == name)
                .or_else(|| {
                    name.parse::<usize>()
                        .ok()
                        .filter(|&i| i < self.boards.len())
                })
                .ok_or_else(|| Error::Config(format!("--with {kind}: no board {name:?}")))?,
        };
        if self.boards.is_empty() {
            return Err(Error::Config(format!(
                "--with {kind}: the host has no board"
            )));
        }
        let name = self.boards[i].name.clone();
        let said = match kind {
            SourceKind::EveryCallAddressing => {
                self.boards[i].addressing = Some(AddressingMode::EveryCall);
                format!("{name} addresses the device before every call")
            }
            SourceKind::LongCable => {
                self.boards[i].cable_m = Some(60.0);
                format!("{name} has a 60 m cable")
            }
            SourceKind::ProgrammedIo => {
                self.boards[i].transfer = Some(TransferMode::Pio);
                format!("{name} moves bytes by programmed I/O")
            }
            SourceKind::SlowListener => {
                let a = self.add_device(i, kind, "SIMULATED,LISTEN-ONLY PLOTTER,0,1", |d| {
                    d.listen_only = true;
                    d.accept_ns = Some(20_000);
                })?;
                format!("a listen-only plotter accepting a byte in 20 us at {a} on {name}")
            }
            SourceKind::NrfdHolder => {
                let a = self.add_device(i, kind, "SIMULATED,LISTEN-ONLY PRINTER,0,1", |d| {
                    d.listen_only = true;
                    d.nrfd_hold_us = Some(2_000.0);
                })?;
                format!(
                    "a listen-only printer holding NRFD 2 ms after each message at {a} on {name}"
                )
            }
            SourceKind::SrqStorm => {
                let a = self.add_device(i, kind, "SIMULATED,SRQ STORM,0,1", |d| {
                    d.srq_every_us = Some(100.0);
                })?;
                self.boards[i].autopoll = true;
                format!(
                    "a device requesting service every 100 us at {a} on {name}, which autopolls"
                )
            }
            SourceKind::MountedDisc => {
                if let Some(d) = self
                    .boards
                    .iter_mut()
                    .filter(|b| b.polled)
                    .flat_map(|b| b.devices.iter_mut())
                    .find(|d| is_disc(d) && d.mount.is_some())
                {
                    d.mounted = Some(true);
                    format!("{} mounted", d.mount.as_deref().unwrap_or("the disc"))
                } else {
                    let mut disc = blank_disc("7958")?;
                    disc.mount = Some(self.free_mount_point("/disc"));
                    let mp = disc.mount.clone().unwrap_or_default();
                    let b = blank_board(self.free_board_name("polled-disc"), disc)?;
                    let b = BoardConfig {
                        polled: true,
                        poll_us: Some(100.0),
                        call_overhead_us: Some(300.0),
                        ..b
                    };
                    let bn = b.name.clone();
                    self.boards.push(b);
                    format!("a disc mounted at {mp} on a new polled board {bn}")
                }
            }
            SourceKind::BusyDisc => {
                if let Some(d) = self
                    .boards
                    .iter_mut()
                    .filter(|b| b.transfer != Some(TransferMode::Pio))
                    .flat_map(|b| b.devices.iter_mut())
                    .find(|d| is_disc(d))
                {
                    d.activity_bytes_per_s = Some(500_000);
                    format!("disc at {} busy at 500 kB/s", d.address)
                } else {
                    let mut disc = blank_disc("7914")?;
                    disc.activity_bytes_per_s = Some(1_000_000);
                    let b = blank_board(self.free_board_name("disc-dma"), disc)?;
                    let b = BoardConfig {
                        transfer: Some(TransferMode::Dma),
                        dma_block_bytes: Some(512),
                        interrupt_us: Some(100.0),
                        ..b
                    };
                    let bn = b.name.clone();
                    self.boards.push(b);
                    format!("a disc busy at 1 MB/s on a new DMA board {bn}, interrupting every 512 bytes")
                }
            }
        };
        Ok(said)
    }

    /// Mounts or unmounts the disc at `mount_point` (as [`crate::sim::SimHost::mount`]
    /// does on a built host).
    pub fn set_mounted(&mut self, mount_point: &str, on: bool) -> Result<()> {
        let mut known = Vec::new();
        for d in self.boards.iter_mut().flat_map(|b| b.devices.iter_mut()) {
            match d.mount.as_deref() {
                Some(m) if m == mount_point => {
                    d.mounted = Some(on);
                    return Ok(());
                }
                Some(m) => known.push(m.to_string()),
                None => {}
            }
        }
        Err(Error::Config(format!(
            "unknown mount point {mount_point:?} on host {:?} (known: {})",
            self.name,
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )))
    }

    /// Adds a device answering `*IDN?` with `idn` at a free address of board `board`,
    /// as `set` makes it (for `--with kind`); returns its address.
    fn add_device(
        &mut self,
        board: usize,
        kind: SourceKind,
        idn: &str,
        set: impl FnOnce(&mut DeviceConfig),
    ) -> Result<u8> {
        let a = self.free_address(board, kind)?;
        let mut d = blank_device(a, idn)?;
        set(&mut d);
        self.boards[board].devices.push(d);
        Ok(a)
    }

    fn free_address(&self, board: usize, kind: SourceKind) -> Result<u8> {
        let b = &self.boards[board];
        (1..=30u8)
            .rev()
            .find(|a| *a != b.address && b.devices.iter().all(|d| d.address != *a))
            .ok_or_else(|| {
                Error::Config(format!(
                    "--with {kind}: board {} has no free address",
                    b.name
                ))
            })
    }

    fn free_board_name(&self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 1;
        while self.boards.iter().any(|b| b.name == name) {
            n += 1;
            name = format!("{base}{n}");
        }
        name
    }

    fn free_mount_point(&self, base: &str) -> String {
        let used = |m: &str| {
            self.boards
                .iter()
                .flat_map(|b| &b.devices)
                .any(|d| d.mount.as_deref() == Some(m))
        };
        let mut m = base.to_string();
        let mut n = 1;
        while used(&m) {
            n += 1;
            m = format!("{base}{n}");
        }
        m
    }
}

fn blank_device(address: u8, idn: &str) -> Result<DeviceConfig> {
    let text = format!("address = {address}\nmodel = \"scpi\"\nidn = {idn:?}\n");
    toml::from_str(&text).map_err(|e| Error::Config(format!("a device to add: {e}")))
}

/// A disc of model `disc` ("7958") at address 0.
fn blank_disc(disc: &str) -> Result<DeviceConfig> {
    let mut d = blank_device(0, "")?;
    d.model = "disc".into();
    d.idn = None;
    d.disc = Some(disc.into());
    Ok(d)
}

fn blank_board(name: String, device: DeviceConfig) -> Result<BoardConfig> {
    let text = format!("name = {name:?}\naddress = 30\n");
    let mut b: BoardConfig =
        toml::from_str(&text).map_err(|e| Error::Config(format!("a board to add: {e}")))?;
    b.devices.push(device);
    Ok(b)
}
