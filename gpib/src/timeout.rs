//! An I/O timeout that says "never" in words, and the one conversion to and from
//! linux-gpib's (and NI-488.2's) 18 timeout steps.

use std::time::Duration;

/// An I/O timeout: a duration, or no timeout at all. "Never" is said here once (linux-gpib's
/// `TNONE`, VISA's `VI_TMO_INFINITE`), not as a zero or a `None` that may mean "default":
/// `Timeout::After(Duration::ZERO)` means "now" (check once, do not wait).
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
    /// Give up after this long (zero: do not wait at all).
    After(Duration),
}

/// linux-gpib's timeout steps, indexed by their code (`TNONE` = 0 = [`Timeout::Never`],
/// then `T10us` = 1 ... `T1000s` = 17).
pub const TIMEOUT_STEPS: [Timeout; 18] = [
    Timeout::Never,
    Timeout::After(Duration::from_micros(10)),
    Timeout::After(Duration::from_micros(30)),
    Timeout::After(Duration::from_micros(100)),
    Timeout::After(Duration::from_micros(300)),
    Timeout::After(Duration::from_millis(1)),
    Timeout::After(Duration::from_millis(3)),
    Timeout::After(Duration::from_millis(10)),
    Timeout::After(Duration::from_millis(30)),
    Timeout::After(Duration::from_millis(100)),
    Timeout::After(Duration::from_millis(300)),
    Timeout::After(Duration::from_secs(1)),
    Timeout::After(Duration::from_secs(3)),
    Timeout::After(Duration::from_secs(10)),
    Timeout::After(Duration::from_secs(30)),
    Timeout::After(Duration::from_secs(100)),
    Timeout::After(Duration::from_secs(300)),
    Timeout::After(Duration::from_secs(1000)),
];

impl Timeout {
    /// The duration, `None` for [`Timeout::Never`].
    pub fn duration(self) -> Option<Duration> {
        match self {
            Timeout::Never => None,
            Timeout::After(d) => Some(d),
        }
    }

    /// Whether a wait of `elapsed` has reached this timeout (never for
    /// [`Timeout::Never`]; at once for zero).
    ///
    /// ```
    /// use gpib::Timeout;
    /// use std::time::Duration;
    /// assert!(Timeout::After(Duration::ZERO).is_over(Duration::ZERO));
    /// assert!(!Timeout::Never.is_over(Duration::MAX));
    /// ```
    pub fn is_over(self, elapsed: Duration) -> bool {
        self.duration().is_some_and(|d| elapsed >= d)
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
        TIMEOUT_STEPS.get(usize::try_from(code).ok()?).copied()
    }

    /// linux-gpib's code for this timeout: the shortest step not shorter (`T3s`, 12,
    /// for 1.5 s; `T10us`, 1, for zero); `TNONE` (0) for [`Timeout::Never`] and for
    /// more than 1000 s (the only setting not shorter than that).
    pub fn linux_gpib_code(self) -> i32 {
        let Timeout::After(d) = self else { return 0 };
        (1..TIMEOUT_STEPS.len())
            .find(|&i| TIMEOUT_STEPS[i].duration().is_some_and(|step| step >= d))
            .map_or(0, |i| i as i32)
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
            assert_eq!(t.linux_gpib_step(), t, "{t}");
        }
        // Between steps: the next longer one; beyond the longest: never.
        let after = |d| Timeout::After(d).linux_gpib_code();
        assert_eq!(after(Duration::from_millis(1500)), 12);
        assert_eq!(after(Duration::from_secs(60)), 15);
        assert_eq!(after(Duration::from_secs(1001)), 0);
        assert_eq!(Timeout::Never.linux_gpib_code(), 0);
        assert_eq!(
            Timeout::After(Duration::from_millis(1500)).linux_gpib_step(),
            Timeout::After(Duration::from_secs(3))
        );
        assert_eq!(
            Timeout::After(Duration::from_secs(1001)).linux_gpib_step(),
            Timeout::Never
        );
        for (code, step) in (0i32..).zip(TIMEOUT_STEPS).skip(1) {
            let d = step.duration().unwrap();
            let just_over = after(d + Duration::from_nanos(1));
            assert!(just_over == 0 || just_over == code + 1, "{d:?}");
        }
    }

    #[test]
    fn zero_is_now_not_never() {
        // Zero is the shortest wait there is, not "no timeout": T10us, not TNONE.
        assert_eq!(Timeout::After(Duration::ZERO).linux_gpib_code(), 1);
        assert_eq!(Timeout::After(Duration::from_nanos(1)).linux_gpib_code(), 1);
        assert_ne!(Timeout::After(Duration::ZERO), Timeout::Never);
        assert_eq!(
            Timeout::After(Duration::ZERO).duration(),
            Some(Duration::ZERO)
        );
    }
}
