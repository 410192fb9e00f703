//! Answers that must be linux-gpib's own (checked against its `lib/` sources).

use std::ffi::c_char;

use crate::consts::*;
use crate::ffi::*;
use crate::tests::serial_only;

#[test]
fn ibconfig_dma_off_is_ecap_as_in_linux_gpib() {
    let _g = serial_only();
    // linux-gpib's ibconfig: IbcDMA with a value turns DMA on; 0 ("disabling DMA not
    // supported") is ECAP.
    assert_eq!(ibconfig(0, OPT_DMA, 0) & ERR, ERR);
    assert_eq!(ThreadIberr(), ECAP);
    assert_eq!(ibconfig(0, OPT_DMA, 1) & ERR, 0, "iberr {}", ThreadIberr());
}

#[test]
fn ibfind_of_a_name_that_is_not_utf8_is_edvr() {
    let _g = serial_only();
    // linux-gpib looks the name up in its configuration: not there, EDVR.
    let name: &[u8] = b"gpib\xff\xfe0\0";
    // SAFETY: a NUL-terminated string.
    assert_eq!(unsafe { ibfind(name.as_ptr().cast::<c_char>()) }, -1);
    assert_eq!(ThreadIberr(), EDVR);
    assert_eq!(ThreadIbcnt(), 2, "ENOENT, as for any name not configured");
}
