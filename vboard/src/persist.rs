//! What a board keeps between processes. In linux-gpib the kernel holds a board's
//! configuration from `gpib_config` (board type, online, addresses, system control)
//! until the next `gpib_config` or reboot; a preload library lives in one process, so
//! the virtual board writes it to a small file per board instead and reads it back in
//! the next process that opens the board.
//!
//! The folder is `$GPIB_VBOARD_STATE`, else `/tmp/gpib-vboard-<uid>`; the file
//! `gpib<minor>` holds one `key value` line per setting.

use std::fmt::Write as _;
use std::path::PathBuf;

/// A board's lasting configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Persisted {
    /// The board type (`CFCBOARDTYPE`), if one was set.
    pub interface: Option<String>,
    /// `IBONL` brought it online.
    pub online: bool,
    /// The simulated bus it was brought online on (its hardware: a process on another
    /// bus finds the driver's settings of that bus, not these).
    pub bus: String,
    /// Its primary address (`IBPAD` on the board descriptor).
    pub pad: u32,
    /// Its secondary address, or negative for none.
    pub sad: i32,
    /// System controller (`IBRSC`).
    pub master: bool,
    /// T1 delay in ns (`IB_T1_DELAY`), 0 until set.
    pub t1_ns: u32,
    /// Individual status bit (`IBPPC`).
    pub ist: bool,
    /// Parallel poll configuration (`IBPPC`).
    pub ppc: u8,
    /// Local parallel poll configure mode (`IBPP2_SET`).
    pub local_ppoll: bool,
    /// REN asserted (`IBSRE`): the line stays as the last process left it.
    pub ren: bool,
    /// EOS byte and flags (`IBEOS`).
    pub eos: i32,
    /// EOS flags.
    pub eos_flags: i32,
    /// `CFCBASE`, `CFCIRQ`, `CFCDMA`, `IBSELECT_PCI`: kept, not used.
    pub base: u64,
    /// Interrupt line.
    pub irq: u32,
    /// DMA channel.
    pub dma: u32,
    /// PCI bus and slot.
    pub pci: (i32, i32),
}

impl Default for Persisted {
    fn default() -> Self {
        Self {
            interface: None,
            online: false,
            bus: String::new(),
            pad: 0,
            sad: -1,
            master: false,
            t1_ns: 0,
            ist: false,
            ppc: 0,
            local_ppoll: false,
            ren: false,
            eos: 0,
            eos_flags: 0,
            base: 0,
            irq: 0,
            dma: 0,
            pci: (-1, -1),
        }
    }
}

/// The folder of the boards' files.
pub fn folder() -> PathBuf {
    match std::env::var_os("GPIB_VBOARD_STATE").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        // SAFETY: getuid has no preconditions and cannot fail.
        None => PathBuf::from(format!("/tmp/gpib-vboard-{}", unsafe { libc::getuid() })),
    }
}

fn file(minor: usize) -> PathBuf {
    folder().join(format!("gpib{minor}"))
}

impl Persisted {
    /// Board `minor`'s settings as the last process left them (defaults when there is
    /// no file; a line that does not parse is skipped with a word on stderr).
    pub fn load(minor: usize) -> Self {
        let mut p = Self::default();
        let path = file(minor);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return p;
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            if p.set(key, value).is_none() {
                eprintln!("gpib-vboard: {}: ignored the line {line:?}", path.display());
            }
        }
        p
    }

    fn set(&mut self, key: &str, v: &str) -> Option<()> {
        let flag = |v: &str| match v {
            "1" => Some(true),
            "0" => Some(false),
            _ => None,
        };
        match key {
            "interface" => self.interface = Some(v.to_owned()).filter(|s| !s.is_empty()),
            "online" => self.online = flag(v)?,
            "bus" => self.bus = v.to_owned(),
            "pad" => self.pad = v.parse().ok().filter(|p| *p <= 30)?,
            "sad" => self.sad = v.parse().ok().filter(|s| *s <= 30)?,
            "master" => self.master = flag(v)?,
            "t1_ns" => self.t1_ns = v.parse().ok()?,
            "ist" => self.ist = flag(v)?,
            "ppc" => self.ppc = v.parse().ok()?,
            "local_ppoll" => self.local_ppoll = flag(v)?,
            "ren" => self.ren = flag(v)?,
            "eos" => self.eos = v.parse().ok()?,
            "eos_flags" => self.eos_flags = v.parse().ok()?,
            "base" => self.base = v.parse().ok()?,
            "irq" => self.irq = v.parse().ok()?,
            "dma" => self.dma = v.parse().ok()?,
            "pci" => {
                let (b, s) = v.split_once(' ')?;
                self.pci = (b.parse().ok()?, s.parse().ok()?);
            }
            _ => return None,
        }
        Some(())
    }

    fn text(&self) -> String {
        let mut s = String::new();
        let b = |v: bool| u8::from(v);
        // Writing to a String cannot fail.
        let _ = writeln!(s, "interface {}", self.interface.as_deref().unwrap_or(""));
        let _ = writeln!(s, "online {}", b(self.online));
        let _ = writeln!(s, "bus {}", self.bus);
        let _ = writeln!(s, "pad {}", self.pad);
        let _ = writeln!(s, "sad {}", self.sad);
        let _ = writeln!(s, "master {}", b(self.master));
        let _ = writeln!(s, "t1_ns {}", self.t1_ns);
        let _ = writeln!(s, "ist {}", b(self.ist));
        let _ = writeln!(s, "ppc {}", self.ppc);
        let _ = writeln!(s, "local_ppoll {}", b(self.local_ppoll));
        let _ = writeln!(s, "ren {}", b(self.ren));
        let _ = writeln!(s, "eos {}", self.eos);
        let _ = writeln!(s, "eos_flags {}", self.eos_flags);
        let _ = writeln!(s, "base {}", self.base);
        let _ = writeln!(s, "irq {}", self.irq);
        let _ = writeln!(s, "dma {}", self.dma);
        let _ = writeln!(s, "pci {} {}", self.pci.0, self.pci.1);
        s
    }

    /// Writes board `minor`'s settings (a new file renamed over the old one, so that a
    /// process reading it sees the old settings or the new, whole). A failure is said
    /// on stderr: the board works on in this process.
    pub fn save(&self, minor: usize) {
        let dir = folder();
        let path = file(minor);
        let tmp = dir.join(format!(".gpib{minor}.{}", std::process::id()));
        let done = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&tmp, self.text()))
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = done {
            eprintln!(
                "gpib-vboard: cannot keep board {minor}'s settings in {}: {e}",
                path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_back_as_written() {
        let p = Persisted {
            interface: Some("ni_pci".into()),
            online: true,
            bus: "GPIB_SIM_CONFIG=bench".into(),
            pad: 7,
            sad: 3,
            master: true,
            t1_ns: 350,
            ist: true,
            ppc: 0x15,
            local_ppoll: true,
            ren: true,
            eos: 10,
            eos_flags: 0x1400,
            base: 0x2c0,
            irq: 7,
            dma: 1,
            pci: (2, 3),
        };
        let mut q = Persisted::default();
        for line in p.text().lines() {
            let (k, v) = line.split_once(' ').unwrap();
            assert!(q.set(k, v).is_some(), "{line}");
        }
        assert_eq!(p, q);
        assert!(Persisted::default().set("pad", "31").is_none());
        assert!(Persisted::default().set("online", "yes").is_none());
        assert!(Persisted::default().set("colour", "1").is_none());
    }
}
