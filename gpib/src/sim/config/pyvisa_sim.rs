//! pyvisa-sim device files in a configuration: one device (`model = "pyvisa-sim"`),
//! or a whole board from the file's `resources`.
//!
//! ```toml
//! [[board]]
//! name = "gpib0"
//! pyvisa_sim = { file = "instruments.yaml" }   # every GPIB0::N[::S]::INSTR resource
//!   [[board.device]]
//!   address = 12
//!   model = "pyvisa-sim"
//!   file = "instruments.yaml"   # relative to this configuration file
//!   device = "device 1"         # or resource = "GPIB0::8::INSTR"
//!   response_time_us = 500      # answers come 500 us after their query
//! ```

use std::path::Path;
#[cfg(feature = "pyvisa-sim")]
use std::path::PathBuf;
#[cfg(feature = "pyvisa-sim")]
use std::time::Duration;

use serde::Deserialize;

#[cfg(feature = "pyvisa-sim")]
use super::fields::{us_field, MAX_RESPONSE_LATENCY_US};
use super::DeviceConfig;
#[cfg(feature = "pyvisa-sim")]
use crate::address::Address;
use crate::error::{Error, Result};
#[cfg(feature = "pyvisa-sim")]
use crate::sim::instrument::Instrument;
#[cfg(feature = "pyvisa-sim")]
use crate::sim::instruments::pyvisa_sim::{DeviceFile, GPIB_INSTR};
#[cfg(feature = "pyvisa-sim")]
use crate::sim::instruments::PyvisaSimInstrument;

/// A board populated from a pyvisa-sim file: each resource `GPIB<interface>::<pad>
/// [::<sad>][::INSTR]` becomes a device at that address.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PyvisaSimBoard {
    /// The YAML file, relative to the configuration file.
    pub file: String,
    /// Which GPIB interface's resources to take (`GPIB1::...` for 1); default: the
    /// board's index.
    pub interface: Option<u8>,
    /// Time from a query's arrival until its answer is queued, µs (at most 1000 s;
    /// default 0).
    pub response_time_us: Option<f64>,
}

#[cfg(feature = "pyvisa-sim")]
/// `file` relative to the configuration's folder (absolute paths stay as they are).
fn resolve(file: &str, base: Option<&Path>) -> PathBuf {
    match base {
        Some(b) => b.join(file),
        None => PathBuf::from(file),
    }
}

#[cfg(feature = "pyvisa-sim")]
fn read(file: &str, base: Option<&Path>, on: &str) -> Result<DeviceFile> {
    let path = resolve(file, base);
    DeviceFile::read(&path).map_err(|e| Error::Config(format!("{on}: {}: {e}", path.display())))
}

#[cfg(feature = "pyvisa-sim")]
fn response_time(v: Option<f64>, on: &str) -> Result<Duration> {
    us_field(
        v,
        Duration::ZERO,
        "response_time_us",
        MAX_RESPONSE_LATENCY_US,
        on,
    )
}

/// Refuses the pyvisa-sim fields on a device of another model.
pub(super) fn check_fields(dev: &DeviceConfig, on: &str) -> Result<()> {
    let replay = dev.model.eq_ignore_ascii_case("replay");
    let used = [
        ("file", dev.file.is_some() && !replay),
        ("device", dev.device.is_some()),
        ("resource", dev.resource.is_some()),
        ("interface", dev.interface.is_some()),
        ("response_time_us", dev.response_time_us.is_some()),
    ];
    if let Some((field, _)) = used.iter().find(|(_, u)| *u) {
        if !dev.model.eq_ignore_ascii_case("pyvisa-sim") {
            return Err(Error::Config(format!(
                "{on}: {field} applies only to model = \"pyvisa-sim\"{}",
                if *field == "file" {
                    " (or \"replay\")"
                } else {
                    ""
                }
            )));
        }
    }
    Ok(())
}

#[cfg(feature = "pyvisa-sim")]
/// The instrument of a `model = "pyvisa-sim"` device entry.
pub(super) fn device_instrument(
    dev: &DeviceConfig,
    base: Option<&Path>,
    on: &str,
) -> Result<Box<dyn Instrument>> {
    let file = dev.file.as_deref().ok_or_else(|| {
        Error::Config(format!(
            "{on}: a pyvisa-sim device needs file = \"...\" (its YAML file)"
        ))
    })?;
    let f = read(file, base, on)?;
    let interface = dev.interface.as_deref().unwrap_or(GPIB_INSTR);
    let shown = |e| Error::Config(format!("{on}: {file}: {e}"));
    let device = match (&dev.device, &dev.resource) {
        (Some(_), Some(_)) => {
            return Err(Error::Config(format!(
                "{on}: give device or resource, not both"
            )))
        }
        (Some(name), None) => f.device(name, interface).map_err(shown)?,
        (None, Some(r)) => f.resource_device(r).map_err(shown)?,
        (None, None) => {
            let names = f.device_names().map_err(shown)?;
            match names.as_slice() {
                [only] => f.device(only, interface).map_err(shown)?,
                _ => {
                    return Err(Error::Config(format!(
                        "{on}: {file} has {} devices: say which with device = \"...\" ({})",
                        names.len(),
                        names.join(", ")
                    )))
                }
            }
        }
    };
    let t = response_time(dev.response_time_us, on)?;
    Ok(Box::new(
        PyvisaSimInstrument::new(device).with_response_time(t),
    ))
}

#[cfg(feature = "pyvisa-sim")]
/// The devices of a board populated from a file's GPIB resources.
pub(super) fn board_devices(
    cfg: &PyvisaSimBoard,
    board_index: usize,
    base: Option<&Path>,
    on: &str,
) -> Result<Vec<(Address, Box<dyn Instrument>)>> {
    let f = read(&cfg.file, base, on)?;
    let want = match cfg.interface {
        Some(i) => i,
        None => u8::try_from(board_index).map_err(|_| {
            Error::Config(format!("{on}: board index {board_index} is past GPIB255"))
        })?,
    };
    let t = response_time(cfg.response_time_us, on)?;
    let shown = |e| Error::Config(format!("{on}: {}: {e}", cfg.file));
    let mut out: Vec<(Address, Box<dyn Instrument>)> = Vec::new();
    for r in f.resources().map_err(shown)? {
        let Some((board, addr)) = r.gpib else {
            continue;
        };
        if board != want {
            continue;
        }
        let device = f.resource_device(&r.name).map_err(shown)?;
        let inst = Box::new(PyvisaSimInstrument::new(device).with_response_time(t));
        // A later resource at the same address replaces the earlier one, as
        // pyvisa-sim's resource table does.
        match out.iter_mut().find(|(a, _)| *a == addr) {
            Some(slot) => slot.1 = inst,
            None => out.push((addr, inst)),
        }
    }
    if out.is_empty() {
        return Err(Error::Config(format!(
            "{on}: {} has no GPIB{want}::N::INSTR resource",
            cfg.file
        )));
    }
    Ok(out)
}

/// What a configuration asks of pyvisa-sim files in a build without them.
#[cfg(not(feature = "pyvisa-sim"))]
fn not_in_this_build(on: &str) -> Error {
    Error::Config(format!(
        "{on}: pyvisa-sim device files are not in this build: enable the gpib crate's \
         `pyvisa-sim` feature"
    ))
}

/// The instrument of a `model = "pyvisa-sim"` device entry: refused in this build.
#[cfg(not(feature = "pyvisa-sim"))]
pub(super) fn device_instrument(
    _dev: &DeviceConfig,
    _base: Option<&Path>,
    on: &str,
) -> Result<Box<dyn crate::sim::instrument::Instrument>> {
    Err(not_in_this_build(on))
}

/// The devices of a board populated from a pyvisa-sim file: refused in this build.
#[cfg(not(feature = "pyvisa-sim"))]
pub(super) fn board_devices(
    _cfg: &PyvisaSimBoard,
    _board_index: usize,
    _base: Option<&Path>,
    on: &str,
) -> Result<
    Vec<(
        crate::address::Address,
        Box<dyn crate::sim::instrument::Instrument>,
    )>,
> {
    Err(not_in_this_build(on))
}

#[cfg(all(test, not(feature = "pyvisa-sim")))]
mod without_the_feature_tests {
    #[test]
    fn a_pyvisa_sim_device_says_which_feature_it_needs() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/pyvisa-sim-bench.toml");
        let e = crate::sim::load(path).unwrap_err().to_string();
        assert!(
            e.contains("pyvisa-sim-bench.toml")
                && e.contains("enable the gpib crate's `pyvisa-sim` feature"),
            "{e}"
        );
    }
}

#[cfg(all(test, feature = "pyvisa-sim"))]
mod tests {
    use crate::sim::config::Config;

    fn build(toml: &str, dir: &std::path::Path) -> String {
        let mut c = Config::parse(toml).unwrap();
        c.base_dir = Some(dir.to_path_buf());
        match c.build() {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn board_from_resources_and_files_relative_to_the_config() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/pyvisa-sim-bench.toml");
        let host = crate::sim::load(path).unwrap();
        let mut devs: Vec<(u8, String)> = host
            .devices(0)
            .into_iter()
            .map(|(a, model, _)| (a.primary.get(), model))
            .collect();
        devs.sort();
        let want = [(5, "psu"), (8, "siggen"), (12, "siggen")];
        assert_eq!(devs, want.map(|(a, m)| (a, m.to_string())));
    }

    #[test]
    fn configuration_errors_say_what_and_where() {
        let dir = tempdir();
        std::fs::write(
            dir.join("two.yaml"),
            "spec: '1.1'\ndevices:\n  a: {}\n  b:\n    properties:\n      p:\n        specs: {type: long}\n",
        )
        .unwrap();
        let head = "name = \"t\"\n[[board]]\nname = \"gpib0\"\n[[board.device]]\naddress = 3\n";
        let e = build(
            &format!("{head}model = \"scpi\"\nfile = \"two.yaml\"\n"),
            &dir,
        );
        assert!(
            e.contains("file applies only to model = \"pyvisa-sim\""),
            "{e}"
        );
        let e = build(&format!("{head}model = \"pyvisa-sim\"\n"), &dir);
        assert!(e.contains("needs file"), "{e}");
        let e = build(
            &format!("{head}model = \"pyvisa-sim\"\nfile = \"two.yaml\"\n"),
            &dir,
        );
        assert!(e.contains("has 2 devices") && e.contains("a, b"), "{e}");
        let e = build(
            &format!("{head}model = \"pyvisa-sim\"\nfile = \"two.yaml\"\ndevice = \"b\"\n"),
            &dir,
        );
        assert!(
            e.contains("two.yaml") && e.contains("line 7") && e.contains("specs.type"),
            "{e}"
        );
        let e = build(
            &format!("{head}model = \"pyvisa-sim\"\nfile = \"none.yaml\"\n"),
            &dir,
        );
        assert!(e.contains("none.yaml"), "{e}");
        let e = build(
            "name = \"t\"\n[[board]]\nname = \"gpib0\"\npyvisa_sim = { file = \"two.yaml\" }\n",
            &dir,
        );
        assert!(e.contains("no GPIB0::N::INSTR resource"), "{e}");
        let e = build(
            &format!("{head}model = \"pyvisa-sim\"\nfile = \"two.yaml\"\ndevice = \"a\"\nresponse_time_us = -1\n"),
            &dir,
        );
        assert!(e.contains("response_time_us"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempdir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("gpib-pyvisa-sim-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
