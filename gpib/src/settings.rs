//! What a device handle is opened with: its timeout, termination and read limit, in
//! one type for every way a device is opened ([`crate::open`], gpib.conf sections).

use std::time::Duration;

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

/// The settings of a device handle: what [`crate::Device`]'s setters set, in one value.
///
/// `None` fields leave the handle's default: the bus's timeout, END only, NL after text,
/// [`crate::DEFAULT_MAX_READ`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeviceSettings {
    /// The I/O timeout (`None`: the bus's).
    pub timeout: Option<Timeout>,
    /// The byte that ends reads besides END (`None`: END only).
    pub eos: Option<Eos>,
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
            write_terminator: self.write_terminator.or(other.write_terminator),
            max_read: self.max_read.or(other.max_read),
        }
    }
}
