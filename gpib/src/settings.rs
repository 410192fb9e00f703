//! What a device handle is opened with: its timeout, termination and read limit, in
//! one type for every way a device is opened and described ([`crate::open`], gpib.conf
//! sections, a simulated host's named devices, the compatibility library's
//! descriptors), and the one place where a zero or a linux-gpib code becomes
//! "no timeout".

use std::time::Duration;

use crate::abi;
use crate::abi::timeout_steps::{timeout_code, TIMEOUT_STEPS};
use crate::backend::Eos;

/// An I/O timeout: a duration, or no timeout at all. "Never" is said here once (linux-gpib's
/// `TNONE`, VISA's `VI_TMO_INFINITE`), not as a zero or a `None` that may mean "default".
///
/// ```
/// use gpib::Timeout;
/// use std::time::Duration;
/// assert_eq!(Timeout::from(Duration::from_secs(3)).duration(), Some(Duration::from_secs(3)));
/// assert_eq!(Timeout::Never.duration(), None);
/// assert_eq!("never".parse::<Timeout>(), Ok(Timeout::Never));
/// assert_eq!("2.5".parse::<Timeout>(), Ok(Timeout::After(Duration::from_millis(2500))));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Timeout {
    /// Wait as long as it takes.
    Never,
    /// Give up after this long.
    After(Duration),
}

impl Timeout {
    /// The duration, `None` for [`Timeout::Never`].
    pub fn duration(self) -> Option<Duration> {
        match self {
            Timeout::Never => None,
            Timeout::After(d) => Some(d),
        }
    }

    /// `d`, where [`Duration::ZERO`] means no timeout: the word for "never" of the
    /// [`crate::Backend`] trait, of linux-gpib's `TNONE` and of the configuration
    /// files (`timeout_s = 0`).
    ///
    /// ```
    /// use gpib::Timeout;
    /// use std::time::Duration;
    /// assert_eq!(Timeout::from_zero_never(Duration::ZERO), Timeout::Never);
    /// assert_eq!(Timeout::from_zero_never(Duration::from_secs(3)).as_zero_never(), Duration::from_secs(3));
    /// assert_eq!(Timeout::Never.as_zero_never(), Duration::ZERO);
    /// ```
    pub fn from_zero_never(d: Duration) -> Self {
        if d.is_zero() {
            Timeout::Never
        } else {
            Timeout::After(d)
        }
    }

    /// The duration, [`Duration::ZERO`] for [`Timeout::Never`] (the backends' word;
    /// see [`Timeout::from_zero_never`]).
    pub fn as_zero_never(self) -> Duration {
        self.duration().unwrap_or(Duration::ZERO)
    }

    /// The timeout of linux-gpib's (and NI-488.2's) code `code`: `TNONE` (0) is
    /// [`Timeout::Never`], `T10us` (1) to `T1000s` (17) their step; `None` for
    /// another number.
    ///
    /// ```
    /// use gpib::Timeout;
    /// use std::time::Duration;
    /// assert_eq!(Timeout::from_linux_gpib_code(0), Some(Timeout::Never));
    /// assert_eq!(Timeout::from_linux_gpib_code(12), Some(Timeout::After(Duration::from_secs(3))));
    /// assert_eq!(Timeout::from_linux_gpib_code(18), None);
    /// ```
    pub fn from_linux_gpib_code(code: i32) -> Option<Self> {
        let step = TIMEOUT_STEPS.get(usize::try_from(code).ok()?)?;
        Some(Self::from_zero_never(*step))
    }

    /// linux-gpib's code for this timeout: the shortest step not shorter (`T3s`, 12,
    /// for 1.5 s); `TNONE` (0) for [`Timeout::Never`], for zero and for more than
    /// 1000 s (the only setting not shorter than that).
    pub fn linux_gpib_code(self) -> i32 {
        timeout_code(self.as_zero_never()).0
    }

    /// The timeout linux-gpib applies for this one: its step
    /// ([`Timeout::linux_gpib_code`]), 3 s for 1.5 s.
    pub fn linux_gpib_step(self) -> Timeout {
        Self::from_linux_gpib_code(self.linux_gpib_code()).unwrap_or(Timeout::Never)
    }
}

impl From<Duration> for Timeout {
    fn from(d: Duration) -> Self {
        Timeout::After(d)
    }
}

impl std::str::FromStr for Timeout {
    type Err = String;

    /// `never` (or `none`, `infinite`), or seconds (`2.5`); at most 100,000 s.
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if ["never", "none", "infinite"].contains(&t.to_ascii_lowercase().as_str()) {
            return Ok(Timeout::Never);
        }
        let secs: f64 = t
            .parse()
            .map_err(|_| format!("{s:?} is not a timeout (seconds, or never)"))?;
        if !(0.0..=100_000.0).contains(&secs) {
            return Err(format!("{s:?}: a timeout is 0 to 100000 seconds, or never"));
        }
        Ok(Timeout::After(Duration::from_secs_f64(secs)))
    }
}

impl std::fmt::Display for Timeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Timeout::Never => f.write_str("never"),
            Timeout::After(d) => write!(f, "{} s", d.as_secs_f64()),
        }
    }
}

/// The end-of-string byte and what it does: linux-gpib's EOS mode (`ibeos`, a gpib.conf
/// section's `eos`, `set-reos`, `set-xeos`, `set-bin`).
///
/// ```
/// use gpib::{abi, EosMode};
/// let m = EosMode { byte: b'\n', reos: true, ..EosMode::default() };
/// assert_eq!(m.linux_gpib(), 0x0a | abi::REOS);
/// assert_eq!(EosMode::from_linux_gpib(m.linux_gpib()), m);
/// assert_eq!(m.read_eos(), Some(gpib::Eos { byte: b'\n', eight_bit: false }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EosMode {
    /// The byte (default 0).
    pub byte: u8,
    /// Reads end on the byte (REOS).
    pub reos: bool,
    /// EOI is sent with the byte on writes (XEOS).
    pub xeos: bool,
    /// The byte is compared on all 8 bits (BIN), else on the low 7.
    pub bin: bool,
}

impl EosMode {
    /// The mode as `ibeos` and `ibdev` take it: the byte, with [`abi::REOS`],
    /// [`abi::XEOS`] and [`abi::BIN`].
    pub fn linux_gpib(self) -> i32 {
        let flag = |on: bool, bit: i32| if on { bit } else { 0 };
        i32::from(self.byte)
            | flag(self.reos, abi::REOS)
            | flag(self.xeos, abi::XEOS)
            | flag(self.bin, abi::BIN)
    }

    /// The mode `ibeos` value `mode` stands for (bits outside the byte and the three
    /// flags are not looked at).
    pub fn from_linux_gpib(mode: i32) -> Self {
        Self {
            byte: (mode & 0xff) as u8,
            reos: mode & abi::REOS != 0,
            xeos: mode & abi::XEOS != 0,
            bin: mode & abi::BIN != 0,
        }
    }

    /// The EOS that ends reads: `Some` when [`EosMode::reos`] is on.
    pub fn read_eos(self) -> Option<Eos> {
        self.reos.then_some(Eos {
            byte: self.byte,
            eight_bit: self.bin,
        })
    }
}

impl From<Eos> for EosMode {
    /// Reads end on `eos`.
    fn from(eos: Eos) -> Self {
        Self {
            byte: eos.byte,
            reos: true,
            xeos: false,
            bin: eos.eight_bit,
        }
    }
}

/// The settings of a device handle or descriptor, in one value: what
/// [`crate::Device`]'s setters set, and what a gpib.conf section, a simulated named
/// device and a libgpib descriptor give their device (each keeps beside it what is
/// its own alone: an address, a name, a board).
///
/// `None` fields leave the default: the bus's timeout, END only, EOI with the last
/// byte, NL after text, [`crate::DEFAULT_MAX_READ`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeviceSettings {
    /// The I/O timeout (`None`: the bus's).
    pub timeout: Option<Timeout>,
    /// The end-of-string byte and what it does (`None`: reads end on END only).
    pub eos: Option<EosMode>,
    /// EOI with the last byte of writes (linux-gpib's EOT; `None`: yes). A
    /// [`crate::Device`] always sends it; the compatibility library's descriptors
    /// follow this.
    pub eot: Option<bool>,
    /// The byte appended to text writes and queries (`None`: the default NL).
    pub write_terminator: Option<Option<u8>>,
    /// The longest whole-message read (`None`: the default).
    pub max_read: Option<usize>,
}

impl DeviceSettings {
    /// These settings where they are set, `other`'s elsewhere.
    pub fn or(self, other: DeviceSettings) -> DeviceSettings {
        DeviceSettings {
            timeout: self.timeout.or(other.timeout),
            eos: self.eos.or(other.eos),
            eot: self.eot.or(other.eot),
            write_terminator: self.write_terminator.or(other.write_terminator),
            max_read: self.max_read.or(other.max_read),
        }
    }

    /// The EOS mode, the default (byte 0, no flag) when none is set.
    pub fn eos_mode(&self) -> EosMode {
        self.eos.unwrap_or_default()
    }

    /// The EOS that ends reads: `Some` when the EOS mode has REOS.
    pub fn read_eos(&self) -> Option<Eos> {
        self.eos.and_then(EosMode::read_eos)
    }

    /// Whether writes end with EOI (EOT), yes unless set otherwise.
    pub fn eot(&self) -> bool {
        self.eot.unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_gpib_codes_are_timeouts_and_back() {
        assert_eq!(Timeout::from_linux_gpib_code(0), Some(Timeout::Never));
        assert_eq!(
            Timeout::from_linux_gpib_code(1),
            Some(Timeout::After(Duration::from_micros(10)))
        );
        assert_eq!(
            Timeout::from_linux_gpib_code(17),
            Some(Timeout::After(Duration::from_secs(1000)))
        );
        for bad in [-1, 18, i32::MIN, i32::MAX] {
            assert_eq!(Timeout::from_linux_gpib_code(bad), None, "{bad}");
        }
        for code in 0..=17 {
            let t = Timeout::from_linux_gpib_code(code).unwrap();
            assert_eq!(t.linux_gpib_code(), code, "{t}");
        }
        // Between steps: the next longer one; beyond the longest: never.
        assert_eq!(
            Timeout::After(Duration::from_millis(1500)).linux_gpib_code(),
            12
        );
        assert_eq!(
            Timeout::After(Duration::from_secs(1001)).linux_gpib_code(),
            0
        );
        assert_eq!(Timeout::Never.linux_gpib_code(), 0);
        assert_eq!(
            Timeout::After(Duration::from_millis(1500)).linux_gpib_step(),
            Timeout::After(Duration::from_secs(3))
        );
        assert_eq!(
            Timeout::After(Duration::from_secs(1001)).linux_gpib_step(),
            Timeout::Never
        );
    }

    #[test]
    fn zero_means_never_in_one_place() {
        assert_eq!(Timeout::from_zero_never(Duration::ZERO), Timeout::Never);
        let d = Duration::from_nanos(1);
        assert_eq!(Timeout::from_zero_never(d), Timeout::After(d));
        assert_eq!(Timeout::Never.as_zero_never(), Duration::ZERO);
        assert_eq!(Timeout::After(d).as_zero_never(), d);
        assert_eq!(Timeout::Never.duration(), None);
    }

    #[test]
    fn eos_modes_are_linux_gpib_s_bits() {
        for mode in [
            0,
            0x0a,
            0x0d | abi::REOS,
            0xff | abi::REOS | abi::XEOS | abi::BIN,
        ] {
            assert_eq!(
                EosMode::from_linux_gpib(mode).linux_gpib(),
                mode,
                "{mode:#x}"
            );
        }
        let m = EosMode::from_linux_gpib(0x0d | abi::XEOS);
        assert_eq!((m.byte, m.reos, m.xeos, m.bin), (0x0d, false, true, false));
        assert_eq!(m.read_eos(), None, "XEOS alone does not end reads");
        assert_eq!(
            EosMode::from(Eos::NEWLINE).linux_gpib(),
            0x0a | abi::REOS | abi::BIN
        );
    }

    #[test]
    fn unset_settings_take_the_other_s_then_the_defaults() {
        let own = DeviceSettings {
            timeout: Some(Timeout::Never),
            ..DeviceSettings::default()
        };
        let base = DeviceSettings {
            timeout: Some(Timeout::After(Duration::from_secs(1))),
            eot: Some(false),
            ..DeviceSettings::default()
        };
        let s = own.or(base);
        assert_eq!((s.timeout, s.eot()), (Some(Timeout::Never), false));
        assert!(DeviceSettings::default().eot());
        assert_eq!(DeviceSettings::default().eos_mode(), EosMode::default());
        assert_eq!(DeviceSettings::default().read_eos(), None);
    }
}
