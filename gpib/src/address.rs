//! GPIB addresses: primary (0..=30) and secondary (0..=30), validated once at the edge.

use std::fmt;

use crate::error::Error;

/// Highest valid primary or secondary address (31 is reserved: it encodes UNL/UNT).
pub const MAX_ADDRESS: u8 = 30;

/// A primary address, 0..=30.
///
/// ```
/// use gpib::PrimaryAddress;
/// let pad = PrimaryAddress::try_from(22u8).unwrap();
/// assert_eq!(pad.get(), 22);
/// assert!(PrimaryAddress::try_from(31u8).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PrimaryAddress(u8);

/// A secondary address, 0..=30 inside the library.
///
/// [`TryFrom<u8>`] also accepts the linux-gpib / NI-488.2 form `0x60..=0x7E`
/// (secondary address plus 0x60) and converts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SecondaryAddress(u8);

impl PrimaryAddress {
    /// Builds a primary address, panicking in const context on an invalid value.
    ///
    /// Meant for constants; use [`TryFrom`] for input from users.
    pub const fn new_const(value: u8) -> Self {
        assert!(value <= MAX_ADDRESS, "primary address must be 0..=30");
        Self(value)
    }

    /// The address as a number, 0..=30.
    pub const fn get(self) -> u8 {
        self.0
    }

    /// Iterates over every valid primary address, 0 to 30.
    pub fn all() -> impl Iterator<Item = PrimaryAddress> {
        (0..=MAX_ADDRESS).map(PrimaryAddress)
    }
}

impl SecondaryAddress {
    /// Iterates over every valid secondary address, 0 to 30.
    pub fn all() -> impl Iterator<Item = SecondaryAddress> {
        (0..=MAX_ADDRESS).map(SecondaryAddress)
    }

    /// Builds a secondary address (0..=30), panicking in const context on an invalid value.
    ///
    /// Meant for constants; use [`TryFrom`] for input from users.
    pub const fn new_const(value: u8) -> Self {
        assert!(value <= MAX_ADDRESS, "secondary address must be 0..=30");
        Self(value)
    }

    /// The address as a number, 0..=30 (not the 0x60-offset form).
    pub const fn get(self) -> u8 {
        self.0
    }

    /// The address in the linux-gpib / NI form, 0x60..=0x7E.
    pub const fn to_ni(self) -> u8 {
        self.0 + 0x60
    }
}

impl TryFrom<u8> for PrimaryAddress {
    type Error = Error;
    fn try_from(value: u8) -> Result<Self, Error> {
        if value <= MAX_ADDRESS {
            Ok(Self(value))
        } else {
            Err(Error::InvalidAddress {
                value: u32::from(value),
                reason: "primary addresses are 0..=30 (31 is reserved for UNL/UNT)",
            })
        }
    }
}

impl TryFrom<u8> for SecondaryAddress {
    type Error = Error;
    fn try_from(value: u8) -> Result<Self, Error> {
        match value {
            0..=MAX_ADDRESS => Ok(Self(value)),
            0x60..=0x7E => Ok(Self(value - 0x60)),
            _ => Err(Error::InvalidAddress {
                value: u32::from(value),
                reason: "secondary addresses are 0..=30, or 0x60..=0x7E in the NI/linux-gpib form",
            }),
        }
    }
}

macro_rules! try_from_wide {
    ($t:ty, $($from:ty),*) => {$(
        impl TryFrom<$from> for $t {
            type Error = Error;
            fn try_from(value: $from) -> Result<Self, Error> {
                let narrow = u8::try_from(value).map_err(|_| Error::InvalidAddress {
                    value: u32::try_from(value).unwrap_or(u32::MAX),
                    reason: "address out of range",
                })?;
                <$t>::try_from(narrow)
            }
        }
    )*};
}
try_from_wide!(PrimaryAddress, u16, u32, i32, usize);
try_from_wide!(SecondaryAddress, u16, u32, i32, usize);

impl fmt::Display for PrimaryAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Display for SecondaryAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A device address: primary plus optional secondary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Address {
    /// The primary address.
    pub primary: PrimaryAddress,
    /// The secondary address, if the device uses extended addressing.
    pub secondary: Option<SecondaryAddress>,
}

impl Address {
    /// An address with no secondary part.
    pub const fn primary(primary: PrimaryAddress) -> Self {
        Self {
            primary,
            secondary: None,
        }
    }

    /// Validates a primary and optional secondary address given as numbers.
    pub fn new(primary: u8, secondary: Option<u8>) -> Result<Self, Error> {
        Ok(Self {
            primary: PrimaryAddress::try_from(primary)?,
            secondary: secondary.map(SecondaryAddress::try_from).transpose()?,
        })
    }
}

impl From<PrimaryAddress> for Address {
    fn from(primary: PrimaryAddress) -> Self {
        Self::primary(primary)
    }
}

impl TryFrom<u8> for Address {
    type Error = Error;
    fn try_from(value: u8) -> Result<Self, Error> {
        Ok(Self::primary(PrimaryAddress::try_from(value)?))
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.secondary {
            Some(sad) => write!(f, "{}.{}", self.primary, sad),
            None => write!(f, "{}", self.primary),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn primary_edges() {
        assert_eq!(PrimaryAddress::try_from(0u8).unwrap().get(), 0);
        assert_eq!(PrimaryAddress::try_from(30u8).unwrap().get(), 30);
        for bad in [31u8, 32, 127, 255] {
            let e = PrimaryAddress::try_from(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidAddress);
            assert!(e.to_string().contains(&bad.to_string()), "{e}");
        }
        assert!(PrimaryAddress::try_from(300u16).is_err());
        assert!(PrimaryAddress::try_from(-1i32).is_err());
        assert_eq!(PrimaryAddress::try_from(22usize).unwrap().get(), 22);
        assert_eq!(PrimaryAddress::all().count(), 31);
    }

    #[test]
    fn secondary_both_conventions() {
        assert_eq!(SecondaryAddress::try_from(0u8).unwrap().get(), 0);
        assert_eq!(SecondaryAddress::try_from(30u8).unwrap().get(), 30);
        assert_eq!(SecondaryAddress::try_from(0x60u8).unwrap().get(), 0);
        assert_eq!(SecondaryAddress::try_from(0x7Eu8).unwrap().get(), 30);
        assert_eq!(SecondaryAddress::try_from(0x65u8).unwrap().to_ni(), 0x65);
        for bad in [31u8, 0x5F, 0x7F, 0x80, 255] {
            assert_eq!(
                SecondaryAddress::try_from(bad).unwrap_err().kind(),
                ErrorKind::InvalidAddress
            );
        }
    }

    #[test]
    fn address_display() {
        assert_eq!(Address::new(22, None).unwrap().to_string(), "22");
        assert_eq!(Address::new(22, Some(0x65)).unwrap().to_string(), "22.5");
        assert!(Address::new(22, Some(31)).is_err());
    }
}
