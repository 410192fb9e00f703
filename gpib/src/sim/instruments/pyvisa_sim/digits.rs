//! Unicode decimal digits as Python's `int()` and `float()` read them: every
//! character of category Nd stands for its digit (`"٣"` is 3, `"３.５"` is 3.5),
//! as CPython's `_PyUnicode_TransformDecimalAndSpaceToASCII` maps them before
//! parsing.

use std::borrow::Cow;

/// The zero of each run of ten Nd digits (`zero..=zero + 9` are 0 to 9), in
/// Unicode 15.0 (Python 3.12 and 3.13): every Nd character is in one of these runs.
const ZEROS: [u32; 68] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x11F50, 0x16A60, 0x16AC0,
    0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950,
    0x1FBF0,
];

/// The digit a Unicode decimal digit (category Nd) stands for.
pub(crate) fn decimal_value(c: char) -> Option<u32> {
    let c = u32::from(c);
    // The runs are sorted: the last zero at or below `c`.
    let i = ZEROS.partition_point(|&z| z <= c).checked_sub(1)?;
    let d = c - ZEROS[i];
    (d < 10).then_some(d)
}

/// `s` with every non-ASCII decimal digit replaced by its ASCII digit.
pub(crate) fn to_ascii_digits(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| match decimal_value(c) {
                Some(d) if !c.is_ascii() => char::from(b'0' + d as u8),
                _ => c,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_of_every_script_map_to_ascii() {
        assert_eq!(to_ascii_digits("٣"), "3");
        assert_eq!(to_ascii_digits("３.５"), "3.5");
        assert_eq!(to_ascii_digits("१२x"), "12x");
        assert_eq!(to_ascii_digits("𝟗"), "9");
        // Not Nd: superscripts, circled digits, letters.
        assert_eq!(to_ascii_digits("²①ａ"), "²①ａ");
        assert_eq!(decimal_value('/'), None);
        assert_eq!(decimal_value(':'), None);
        assert_eq!(decimal_value('\u{65F}'), None);
        assert_eq!(decimal_value('\u{669}'), Some(9));
        assert_eq!(decimal_value('\u{66A}'), None);
        // The runs do not overlap and are sorted.
        assert!(ZEROS.windows(2).all(|w| w[0] + 10 <= w[1]));
    }
}
