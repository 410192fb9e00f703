//! Where a library standing in for linux-gpib's driver takes its simulated host from:
//! `GPIB_SIM_CONFIG` (a built-in name or a TOML file) and linux-gpib's own `IB_CONFIG`
//! (a gpib.conf). The libgpib-compatible library (`compat/`) and the virtual board
//! under linux-gpib's own library (`vboard/`) read them the same way, here.

use std::path::Path;

use crate::sim::config::{builtin_names, Config};

/// `GPIB_SIM_CONFIG` and `IB_CONFIG`, as a process found them.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostSource<'a> {
    /// `GPIB_SIM_CONFIG`: a built-in name or a TOML path.
    pub sim_config: Option<&'a str>,
    /// `IB_CONFIG`: the path of a gpib.conf.
    pub ib_config: Option<&'a Path>,
}

impl HostSource<'_> {
    /// The variable the configuration comes from, for messages:
    /// `GPIB_SIM_CONFIG=bench`, `IB_CONFIG=/etc/gpib.conf`.
    pub fn describe(&self) -> String {
        match (self.sim_config, self.ib_config) {
            (Some(n), _) => format!("GPIB_SIM_CONFIG={n}"),
            (None, Some(p)) => format!("IB_CONFIG={}", p.display()),
            (None, None) => "GPIB_SIM_CONFIG=bench".into(),
        }
    }

    /// Reads the configuration (files are regular files of at most 1 MiB, read by the
    /// simulator's capped reader: a device or FIFO is refused at once):
    ///
    /// * `GPIB_SIM_CONFIG` set: that built-in or TOML file; a TOML file with neither
    ///   `gpib_conf` nor `[[board]]` (only `[[instrument]]`s) takes `IB_CONFIG`'s
    ///   gpib.conf;
    /// * else `IB_CONFIG` set: the gpib.conf alone, a plain SCPI instrument on each
    ///   device;
    /// * else the built-in `bench`.
    ///
    /// linux-gpib's default file, /etc/gpib.conf, is never read: on a machine with a
    /// real linux-gpib it describes real boards. The error names the variable and the
    /// file.
    pub fn read(&self) -> Result<Config, String> {
        match (self.sim_config, self.ib_config) {
            (Some(name), ib) if !builtin_names().contains(&name) => {
                Config::read_file_with(Path::new(name), ib)
                    .map_err(|e| format!("GPIB_SIM_CONFIG: {e}"))
            }
            (Some(name), _) => {
                Config::from_name_or_path(name).map_err(|e| format!("GPIB_SIM_CONFIG: {e}"))
            }
            (None, Some(ib)) => {
                Config::from_gpib_conf_file(ib).map_err(|e| format!("IB_CONFIG: {e}"))
            }
            (None, None) => Config::from_name_or_path("bench").map_err(|e| format!("bench: {e}")),
        }
    }
}
