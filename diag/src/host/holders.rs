//! Which other processes hold a GPIB board's device file open (`/dev/gpibN`): a
//! second program driving the same board takes turns with this one on the bus.

use std::path::Path;

use serde::Serialize;

/// A process that holds a GPIB device file open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// Its command name (`/proc/PID/comm`).
    pub command: String,
    /// The device file.
    pub device: String,
}

/// Whether `target` (an open file's link target) is a GPIB board's device file.
pub fn is_gpib_device(target: &str) -> bool {
    target
        .strip_prefix("/dev/gpib")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The most processes looked at (a bound on the work, not on the machine).
const MAX_PROCESSES: usize = 65_536;

/// The most open files looked at in one process.
const MAX_FDS: usize = 65_536;

/// Processes other than this one with a `/dev/gpibN` open, as far as this user may
/// look (others' `/proc/PID/fd` are unreadable without privileges: they are skipped).
pub fn others() -> Vec<Holder> {
    let me = std::process::id();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in procs.flatten().take(MAX_PROCESSES) {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        out.extend(held_by(pid, &entry.path()));
    }
    out.sort_by(|a, b| a.pid.cmp(&b.pid).then(a.device.cmp(&b.device)));
    out.dedup();
    out
}

fn held_by(pid: u32, dir: &Path) -> Vec<Holder> {
    let Ok(fds) = std::fs::read_dir(dir.join("fd")) else {
        return Vec::new();
    };
    let command = std::fs::read_to_string(dir.join("comm"))
        .map(|c| c.trim().to_string())
        .unwrap_or_default();
    fds.flatten()
        .take(MAX_FDS)
        .filter_map(|fd| {
            let target = std::fs::read_link(fd.path()).ok()?;
            let target = target.to_str()?;
            is_gpib_device(target).then(|| Holder {
                pid,
                command: command.clone(),
                device: target.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_board_device_files_count() {
        assert!(is_gpib_device("/dev/gpib0"));
        assert!(is_gpib_device("/dev/gpib15"));
        assert!(!is_gpib_device("/dev/gpib"));
        assert!(!is_gpib_device("/dev/gpib0x"));
        assert!(!is_gpib_device("/dev/ttyUSB0"));
        assert!(!is_gpib_device("socket:[1234]"));
    }

    #[test]
    fn a_process_directory_with_a_board_open_names_it() {
        // A stand-in for /proc/PID: its fd links and command name.
        let dir = std::env::temp_dir().join(format!("gpib-holders-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("fd")).unwrap();
        std::fs::write(dir.join("comm"), "ibterm\n").unwrap();
        std::os::unix::fs::symlink("/dev/gpib1", dir.join("fd/3")).unwrap();
        std::os::unix::fs::symlink("/dev/null", dir.join("fd/0")).unwrap();
        let held = held_by(4321, &dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            held,
            [Holder {
                pid: 4321,
                command: "ibterm".into(),
                device: "/dev/gpib1".into()
            }]
        );
    }

    #[test]
    fn the_scan_leaves_this_process_out() {
        assert!(others().iter().all(|h| h.pid != std::process::id()));
    }
}
