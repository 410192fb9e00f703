//! The Prologix escape: in data sent to the adapter, CR, LF, ESC and `+` are each
//! preceded by ESC; an unescaped CR or LF ends the line, and a line starting with an
//! unescaped `++` is a command for the adapter itself.

/// The escape byte.
pub const ESC: u8 = 0x1B;

/// True for bytes that need an ESC before them.
#[inline]
pub fn needs_escape(b: u8) -> bool {
    matches!(b, b'\r' | b'\n' | ESC | b'+')
}

/// Appends `data`, escaped, to `out`.
pub fn escape_into(data: &[u8], out: &mut Vec<u8>) {
    out.reserve(data.len() + data.len() / 8);
    for &b in data {
        if needs_escape(b) {
            out.push(ESC);
        }
        out.push(b);
    }
}

/// What [`Unescaper::push`] found in a byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unescaped {
    /// A data byte.
    Data(u8),
    /// An unescaped CR or LF: the line ends.
    EndOfLine,
    /// An ESC: the next byte is data.
    Pending,
}

/// Undoes the escape byte by byte (the state is one flag, so a line may arrive in any
/// number of pieces).
#[derive(Debug, Clone, Copy, Default)]
pub struct Unescaper {
    escaped: bool,
}

impl Unescaper {
    /// Takes the next byte from the wire.
    #[inline]
    pub fn push(&mut self, b: u8) -> Unescaped {
        if self.escaped {
            self.escaped = false;
            return Unescaped::Data(b);
        }
        match b {
            ESC => {
                self.escaped = true;
                Unescaped::Pending
            }
            b'\r' | b'\n' => Unescaped::EndOfLine,
            _ => Unescaped::Data(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_value_survives() {
        let data: Vec<u8> = (0..=255u8).chain(0..=255u8).collect();
        let mut wire = Vec::new();
        escape_into(&data, &mut wire);
        assert_eq!(wire.len(), data.len() + 8);
        assert!(!wire.contains(&b'\n') || wire.windows(2).all(|w| w[1] != b'\n' || w[0] == ESC));
        let mut u = Unescaper::default();
        let mut back = Vec::new();
        for &b in &wire {
            match u.push(b) {
                Unescaped::Data(d) => back.push(d),
                Unescaped::EndOfLine => panic!("line ended inside the data"),
                Unescaped::Pending => {}
            }
        }
        assert_eq!(back, data);
        assert_eq!(u.push(b'\n'), Unescaped::EndOfLine);
    }
}
