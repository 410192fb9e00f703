//! The driver-crossing counts: what real libgpib would make for each call, on the
//! calls a device-level query and block read are made of.

use std::ffi::{c_int, c_long};

use crate::consts::*;
use crate::crossings::thread_counts;
use crate::ffi::*;
use crate::tests::serial_only;

/// (calls, crossings, unmodelled calls) made by this thread while `f` runs.
fn counted(f: impl FnOnce()) -> (u64, u64, u64) {
    let (c0, x0, u0) = thread_counts();
    f();
    let (c1, x1, u1) = thread_counts();
    (c1 - c0, x1 - x0, u1 - u0)
}

fn write(ud: c_int, data: &[u8]) {
    // SAFETY: `data` is valid for its length.
    let sta = unsafe { ibwrt(ud, data.as_ptr().cast(), data.len() as c_long) };
    assert_eq!(sta & ERR, 0, "ibwrt: iberr {}", ThreadIberr());
}

fn read(ud: c_int, buf: &mut [u8]) -> usize {
    // SAFETY: `buf` is valid and writable for its length.
    let sta = unsafe { ibrd(ud, buf.as_mut_ptr().cast(), buf.len() as c_long) };
    assert_eq!(sta & (ERR | END), END, "ibrd: iberr {}", ThreadIberr());
    ThreadIbcntl() as usize
}

#[test]
fn a_device_query_is_ten_crossings_for_ibwrt_and_twelve_for_ibrd() {
    let _g = serial_only();
    let ud = ibdev(0, 22, 0, 12, 1, 0);
    assert!(ud >= 16);
    // libgpib: lock 2, IBTMO, addressing (is_cic, IBTMO, IBCMD), IBTMO + IBWRT,
    // status (is_cic, IBWAIT).
    assert_eq!(counted(|| write(ud, b"*IDN?\n")), (1, 10, 0));
    // libgpib: lock 2, IBEOS, IBBOARD_INFO x2, addressing 3, IBTMO + IBRD, status 2.
    let mut buf = [0u8; 256];
    assert_eq!(counted(|| assert!(read(ud, &mut buf) > 0)), (1, 12, 0));
    // Settings cross only for the status update (two on a device descriptor).
    assert_eq!(counted(|| assert_eq!(ibeos(ud, 0) & ERR, 0)), (1, 2, 0));
    assert_eq!(counted(|| assert_eq!(ibtmo(0, 13) & ERR, 0)), (1, 1, 0));
    // Closing is not modelled: counted as served, with no crossings.
    assert_eq!(counted(|| assert_eq!(ibonl(ud, 0) & ERR, 0)), (1, 0, 1));
}

#[test]
fn the_same_transfer_on_the_board_descriptor_crosses_less_but_needs_ibcmd() {
    let _g = serial_only();
    SendIFC(0);
    // UNL, MLA 0 (the board listens), MTA... the way a board-level program addresses.
    let (calls, crossings, _) = counted(|| {
        let to_dev = [0x3fu8, 0x40, 0x20 + 22];
        // SAFETY: the command bytes are valid for their length.
        let sta = unsafe { ibcmd(0, to_dev.as_ptr().cast(), 3) };
        assert_eq!(sta & ERR, 0);
        write(0, b"*IDN?\n");
        let from_dev = [0x3fu8, 0x20, 0x40 + 22];
        // SAFETY: as above.
        let sta = unsafe { ibcmd(0, from_dev.as_ptr().cast(), 3) };
        assert_eq!(sta & ERR, 0);
        assert!(read(0, &mut [0u8; 256]) > 0);
    });
    // ibcmd 6 (lock 2, my_ibcmd 3, status 1) and ibwrt/ibrd 6 each, twice.
    assert_eq!((calls, crossings), (4, 24));
}

#[test]
fn xeos_splits_a_write_after_each_eos_byte() {
    let _g = serial_only();
    let ud = ibdev(0, 22, 0, 12, 1, 0);
    assert!(ud >= 16);
    // XEOS on NL: "*CLS\n*CLS\n" goes as two IBWRTs (the last NL ends the second).
    assert_eq!(ibeos(ud, XEOS | 0x0a) & ERR, 0);
    assert_eq!(counted(|| write(ud, b"*CLS\n*CLS\n")), (1, 12, 0));
    assert_eq!(ibonl(ud, 0) & ERR, 0);
}

#[test]
fn send_and_receive_cross_like_a_device_write_and_read() {
    let _g = serial_only();
    SendIFC(0);
    let (calls, crossings, unmodelled) = counted(|| {
        let q = b"*IDN?";
        // SAFETY: the buffers are valid for their lengths.
        unsafe { Send(0, 22, q.as_ptr().cast(), q.len() as c_long, NLEND) };
        assert_eq!(ThreadIbsta() & ERR, 0, "Send: iberr {}", ThreadIberr());
        let mut buf = [0u8; 256];
        // SAFETY: as above.
        unsafe { Receive(0, 22, buf.as_mut_ptr().cast(), 256, STOPEND) };
        assert_eq!(ThreadIbsta() & ERR, 0, "Receive: iberr {}", ThreadIberr());
    });
    // Send with NLend: 2 + 1 + 4 + 4 + status 1; Receive: 2 + 5 + 1 + 1 + 2 + 1.
    assert_eq!((calls, crossings, unmodelled), (2, 12 + 12, 0));
}
