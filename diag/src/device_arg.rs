//! `--device ADDR|NAME`: what a user names a device by.

/// `--device`: a primary address (0 to 30) or a device's name (a named device of the
/// simulated configuration, or a gpib.conf `device` section on linux-gpib).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceArg {
    /// A primary address.
    Address(u8),
    /// A name, resolved against the board.
    Name(String),
}

impl std::str::FromStr for DeviceArg {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let s = s.trim();
        if let Ok(n) = s.parse::<u64>() {
            return match u8::try_from(n) {
                Ok(a) if a <= 30 => Ok(DeviceArg::Address(a)),
                _ => Err(format!("{n} is not a primary address (0 to 30)")),
            };
        }
        if s.is_empty() || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!(
                "{s:?} is neither a primary address (0 to 30) nor a device name"
            ));
        }
        Ok(DeviceArg::Name(s.to_string()))
    }
}

impl std::fmt::Display for DeviceArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceArg::Address(a) => write!(f, "{a}"),
            DeviceArg::Name(n) => f.write_str(n),
        }
    }
}
