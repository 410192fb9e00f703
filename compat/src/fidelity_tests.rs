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
fn an_unknown_descriptor_is_earg_with_no_count_as_in_linux_gpib() {
    let _g = serial_only();
    // linux-gpib's ibCheckDescriptor (lib/ibutil.c:212-219): a descriptor with no
    // configuration, a board index without an interface section included, is EARG, and
    // ibcnt stays 0 (found by vboard/fidelity: `ibwrt 40 ...`, `TestSRQ 1`).
    for ud in [40, 4095, 1, 15, -1] {
        // SAFETY: a valid buffer of 1 byte.
        let sta = unsafe { ibwrt(ud, b"x".as_ptr().cast(), 1) };
        assert_eq!(sta & ERR, ERR, "ud {ud}");
        assert_eq!((ThreadIberr(), ThreadIbcntl()), (EARG, 0), "ud {ud}");
    }
    let mut srq: i16 = 7;
    // SAFETY: `srq` is writable.
    unsafe { TestSRQ(1, &mut srq) };
    assert_eq!((ThreadIbsta() & ERR, ThreadIberr()), (ERR, EARG));
}

#[test]
fn ibask_eos_char_above_0x7f_is_negative_and_dma_is_the_channel_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibask.c:231-233 answers the EOS byte from a `char`; lib/ibask.c:315-317 the
    // board's DMA channel (0 when gpib.conf sets none), even after IbcDMA 1 (found by
    // the gpib.conf comparison: `eos = 0x8a` read back -118, DMA 0).
    let ud = ibdev(0, 22, 0, 11, 1, REOS | 0x8a);
    assert!(ud >= 0);
    let mut v = 0;
    // SAFETY: `v` is writable.
    assert_eq!(unsafe { ibask(ud, OPT_EOS_CHAR, &mut v) } & ERR, 0);
    assert_eq!(v, -118);
    assert_eq!(ibconfig(0, OPT_DMA, 1) & ERR, 0);
    // SAFETY: `v` is writable.
    assert_eq!(unsafe { ibask(0, OPT_DMA, &mut v) } & ERR, 0);
    assert_eq!(v, 0);
    ibonl(ud, 0);
}

#[test]
fn ibcmd_and_sendcmds_leave_ibcnt_0_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibCmd.c: ibcmd never calls setIbcnt, and SendCmds is ibcmd (found by
    // vboard/fidelity: `ibcmd 0 UNL UNT MTA0 MLA1` with cnt=4 here, 0 there).
    let cmd = [0x3fu8, 0x5f, 0x40, 0x21];
    // SAFETY: a buffer of 4 bytes.
    assert_eq!(unsafe { ibcmd(0, cmd.as_ptr().cast(), 4) } & ERR, 0);
    assert_eq!(ThreadIbcntl(), 0);
    // SAFETY: a buffer of 4 bytes.
    unsafe { SendCmds(0, cmd.as_ptr().cast(), 4) };
    assert_eq!((ThreadIbsta() & ERR, ThreadIbcntl()), (0, 0));
}

#[test]
fn a_read_of_0_bytes_succeeds_at_once_as_in_linux_gpib() {
    let _g = serial_only();
    // sys/osfuncs.c read_ioctl moves bytes while some remain: none asked, none waited
    // for (found by vboard/fidelity: `ibrd s0 0` timed out here, CMPL there).
    let ud = ibdev(0, 22, 0, 11, 1, 0);
    assert!(ud >= 0);
    let mut b = [0u8; 1];
    // SAFETY: a writable buffer; 0 bytes asked for.
    let sta = unsafe { ibrd(ud, b.as_mut_ptr().cast(), 0) };
    assert_eq!((sta & (ERR | TIMO | END), ThreadIbcntl()), (0, 0));
    // SAFETY: as above, on the board, not addressed to listen.
    let sta = unsafe { ibrd(0, b.as_mut_ptr().cast(), 0) };
    assert_eq!((sta & (ERR | TIMO), ThreadIbcntl()), (0, 0));
    ibonl(ud, 0);
}

#[test]
fn ibln_on_a_device_descriptor_is_earg_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibFindLstn.c ibln reads the lines through internal_iblines, which takes
    // board descriptors only (lib/ibLines.c:25-28) (found by vboard/fidelity:
    // `ibln s0 22 0` answered found=1 here, EARG there).
    let ud = ibdev(0, 22, 0, 11, 1, 0);
    assert!(ud >= 0);
    let mut found: i16 = 7;
    // SAFETY: `found` is writable.
    let sta = unsafe { ibln(ud, 22, 0, &mut found) };
    assert_eq!((sta & ERR, ThreadIberr(), found), (ERR, EARG, 7));
    // It addressed the bus first and went to standby: the board is talker, ATN off
    // (found by vboard/fidelity: `ibwait 0 CMPL` after it showed TACS there).
    assert_eq!(ibwait(0, CMPL) & (ERR | ATN | TACS), TACS);
    // SAFETY: as above, on the board.
    let sta = unsafe { ibln(0, 22, 0, &mut found) };
    assert_eq!((sta & ERR, found), (0, 1));
    ibonl(ud, 0);
}

#[test]
fn a_board_transfer_that_fails_still_releases_atn_as_in_linux_gpib() {
    let _g = serial_only();
    // sys/ibwrite.c:43-47 and sys/ibread.c:49-53: a controller goes to standby before
    // the transfer, so ATN is off after it, even when it fails (found by
    // vboard/fidelity: `Send 0 5 ...` ENOL with ATN here, without there).
    // UNL UNT MTA0 MLA5 (nobody at 5).
    let cmd = [0x3fu8, 0x5f, 0x40, 0x25];
    // SAFETY: a buffer of 4 bytes.
    let sta = unsafe { ibcmd(0, cmd.as_ptr().cast(), 4) };
    assert_eq!(sta & (ERR | ATN), ATN);
    // SAFETY: a buffer of 1 byte.
    let sta = unsafe { ibwrt(0, b"x".as_ptr().cast(), 1) };
    assert_eq!((sta & (ERR | ATN), ThreadIberr()), (ERR, ENOL));
    // UNL UNT MTA0: the board talks, nobody listens.
    let cmd = [0x3fu8, 0x5f, 0x40];
    // SAFETY: a buffer of 3 bytes.
    let sta = unsafe { ibcmd(0, cmd.as_ptr().cast(), 3) };
    assert_eq!(sta & (ERR | ATN), ATN);
    let mut b = [0u8; 4];
    // SAFETY: a writable buffer of 4 bytes; the board is not a listener.
    let sta = unsafe { ibrd(0, b.as_mut_ptr().cast(), 4) };
    assert_eq!(sta & (ERR | TIMO | ATN), ERR | TIMO);
}

#[test]
fn reset_sys_counts_its_bytes_and_refuses_an_empty_list_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibBoard.c:160 sends "*RST" + NL with InternalSendList: ibcnt 5; an empty list
    // is EARG there (found by vboard/fidelity: `ResetSys 0 [22]` cnt=5 there, 0 here).
    let list = [22u16, NOADDR];
    // SAFETY: a NOADDR-terminated list.
    unsafe { ResetSys(0, list.as_ptr()) };
    assert_eq!((ThreadIbsta() & ERR, ThreadIbcntl()), (0, 5));
    let empty = [NOADDR];
    // SAFETY: a NOADDR-terminated list.
    unsafe { ResetSys(0, empty.as_ptr()) };
    assert_eq!((ThreadIbsta() & ERR, ThreadIberr()), (ERR, EARG));
}

#[test]
fn wait_srq_that_times_out_leaves_no_timo_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibWait.c:220: WaitSRQ's status is the board's, read afresh, with no TIMO
    // (found by vboard/fidelity: `WaitSRQ 0` sta=4120 here, 0120 there).
    assert_eq!(ibtmo(0, 5) & ERR, 0); // T1ms
    let mut srq: i16 = 7;
    // SAFETY: `srq` is writable.
    unsafe { WaitSRQ(0, &mut srq) };
    assert_eq!((ThreadIbsta() & (ERR | TIMO), srq), (0, 0));
    assert_eq!(ibtmo(0, 13) & ERR, 0);
}

#[test]
fn ibwait_on_err_is_earg_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibWait.c:21-23: ERR is not a bit a wait may name (found by vboard/fidelity:
    // `ibwait s0 TIMO|ERR` waited here, EARG there).
    let ud = ibdev(0, 22, 0, 7, 1, 0);
    assert!(ud >= 0);
    let sta = ibwait(ud, TIMO | ERR);
    assert_eq!((sta & ERR, ThreadIberr()), (ERR, EARG));
    let sta = ibwait(0, TIMO | ERR);
    assert_eq!((sta & ERR, ThreadIberr()), (ERR, EARG));
    ibonl(ud, 0);
}

#[test]
fn read_status_byte_of_noaddr_is_edvr_eperm_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibutil.c:527 lets NOADDR through; the kernel refuses the poll of pad 255 with
    // -1 (found by vboard/fidelity: `ReadStatusByte 0 NOADDR` EDVR cnt=1 there, EARG
    // here).
    let mut v: i16 = 0;
    // SAFETY: `v` is writable.
    unsafe { ReadStatusByte(0, NOADDR, &mut v) };
    assert_eq!(
        (ThreadIbsta() & ERR, ThreadIberr(), ThreadIbcntl()),
        (ERR, EDVR, 1)
    );
}

#[test]
fn ibsad_below_0x60_is_no_secondary_address_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibSad.c:24-33: sad = v - 0x60, EARG only above 30 (found by vboard/fidelity:
    // `ibsad s0 5` EARG here, accepted there).
    let ud = ibdev(0, 22, 0x61, 11, 1, 0);
    assert!(ud >= 0);
    assert_eq!(ibsad(ud, 5) & ERR, 0);
    let mut v = -1;
    // SAFETY: `v` is writable.
    assert_eq!(unsafe { ibask(ud, OPT_SAD, &mut v) } & ERR, 0);
    assert_eq!(v, 0);
    assert_eq!(ibsad(ud, -3) & ERR, 0);
    assert_eq!(ibsad(ud, 0x7f) & ERR, ERR);
    assert_eq!(ThreadIberr(), EARG);
    ibonl(ud, 0);
}

#[test]
fn send_with_a_bad_eot_mode_addresses_first_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibWrt.c:402-405: InternalSendSetup, then InternalSendDataBytes refuses the
    // mode (:319-327), so the board is left talker with ATN (found by vboard/fidelity:
    // `Send 0 22 ... 0x10a` sta 8120 here, 8138 there).
    let b = b"*IDN?\n";
    // SAFETY: a buffer of 6 bytes.
    unsafe { Send(0, 22, b.as_ptr().cast(), 6, 0x10a) };
    assert_eq!(ThreadIberr(), EARG);
    assert_eq!(ThreadIbsta() & (ERR | ATN | TACS), ERR | ATN | TACS);
    // END of the last transfer stays (the mode is refused before send_data).
    // SAFETY: a buffer of 6 bytes.
    unsafe { Send(0, 22, b.as_ptr().cast(), 6, DABEND) };
    assert_eq!(ThreadIbsta() & (ERR | END), END);
    // SAFETY: a buffer of 6 bytes.
    unsafe { Send(0, 22, b.as_ptr().cast(), 6, 0x10a) };
    assert_eq!(ThreadIbsta() & (ERR | END), ERR | END);
}

#[test]
fn ibcmd_of_no_bytes_takes_control_as_in_linux_gpib() {
    let _g = serial_only();
    // sys/osfuncs.c:652 calls the kernel's ibcmd at least once, which takes control
    // (sys/ibcmd.c:95): ATN (found by vboard/fidelity: `SendCmds 0 ""` sta 0120 here,
    // 0130 there).
    assert_eq!(ibgts(0, 0) & (ERR | ATN), 0);
    // SAFETY: no bytes are read.
    let sta = unsafe { ibcmd(0, b"".as_ptr().cast(), 0) };
    assert_eq!(sta & (ERR | ATN), ATN);
}

#[test]
fn ibln_and_findlstn_end_with_unl_unt_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibFindLstn.c: ibln and FindLstn end with unlisten_untalk: ATN, the board
    // neither talker nor listener (found by vboard/fidelity: `ibln 0 0 0x61` left LACS
    // here; `FindLstn 0 []` left ATN off here).
    let mut found: i16 = 7;
    // SAFETY: `found` is writable.
    let sta = unsafe { ibln(0, 0, 0x61, &mut found) };
    assert_eq!(sta & (ERR | ATN | TACS | LACS), ATN);
    assert_eq!(ibgts(0, 0) & (ERR | ATN), 0);
    let pads = [NOADDR];
    let mut out = [0u16; 4];
    // SAFETY: a NOADDR-terminated list and room for 4 results.
    unsafe { FindLstn(0, pads.as_ptr(), out.as_mut_ptr(), 4) };
    assert_eq!(ThreadIbsta() & (ERR | ATN | TACS | LACS), ATN);
}

#[test]
fn ibrsv_on_the_controller_in_charge_is_edvr_einval_as_in_linux_gpib() {
    let _g = serial_only();
    // sys/ibrsv.c:15-19: no service request while CIC (found by vboard/fidelity:
    // `ibconfig 0 IbcRsv 10` succeeded here, EDVR cnt=22 there).
    assert_eq!(ibrsv(0, 0x41) & ERR, ERR);
    assert_eq!((ThreadIberr(), ThreadIbcntl()), (EDVR, 22));
    assert_eq!(ibconfig(0, OPT_RSV, 10) & ERR, ERR);
    assert_eq!((ThreadIberr(), ThreadIbcntl()), (EDVR, 22));
    assert_eq!(ibrsv(0, 0x100) & ERR, ERR);
    assert_eq!(ThreadIberr(), EARG);
}

#[test]
fn ibonl_0_reports_end_of_the_last_transfer_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibOnl.c computes the status (conf->end included) before it closes (found by
    // vboard/fidelity: `ibonl s0 0` after a write with EOI: END there, not here).
    let ud = ibdev(0, 22, 0, 11, 1, 0);
    assert!(ud >= 0);
    // SAFETY: a buffer of 6 bytes.
    let sta = unsafe { ibwrt(ud, b"*IDN?\n".as_ptr().cast(), 6) };
    assert_eq!(sta & (ERR | END), END);
    assert_eq!(ibonl(ud, 1) & (ERR | END), END);
    assert_eq!(ibonl(ud, 0) & (ERR | END), END);
}

#[test]
fn trigger_of_no_address_leaves_the_board_talker_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibTrg.c:40-41: MTA(board) UNL then GET, also for an empty list (found by
    // vboard/fidelity: `Trigger 0 NOADDR` sta 0130 here, 0138 there).
    Trigger(0, NOADDR);
    assert_eq!(ThreadIbsta() & (ERR | ATN | TACS | LACS), ATN | TACS);
}

#[test]
fn ibln_of_a_bad_address_leaves_the_board_talker_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibFindLstn.c ibln: MTA(board) first, then EARG for pad 31 (found by
    // vboard/fidelity: `ibln 0 31 0` sta 8120 here, 8138 there).
    assert_eq!(ibgts(0, 0) & ERR, 0);
    let mut found: i16 = 7;
    // SAFETY: `found` is writable.
    let sta = unsafe { ibln(0, 31, 0, &mut found) };
    assert_eq!(
        (sta & (ERR | ATN | TACS), ThreadIberr()),
        (ERR | ATN | TACS, EARG)
    );
}

#[test]
fn hs_cable_length_out_of_range_is_earg_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibconfig.c:105-109: 0 to 15 metres, else EARG (found by vboard/fidelity:
    // `ibconfig 0 IbcHSCableLength 96` ECAP here, EARG there).
    assert_eq!(ibconfig(0, OPT_HS_CABLE_LENGTH, 96) & ERR, ERR);
    assert_eq!(ThreadIberr(), EARG);
    assert_eq!(ibconfig(0, OPT_HS_CABLE_LENGTH, -1) & ERR, ERR);
    assert_eq!(ThreadIberr(), EARG);
}

#[test]
fn findlstn_stopping_on_etab_leaves_the_board_talker_in_standby_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibFindLstn.c returns on ETAB right after listenerFound, with no UNL UNT
    // (found by vboard/fidelity: `FindLstn 0 [11, 22] max 1` sta 8130 here, 8128
    // there).
    let pads = [11u16, 22, NOADDR];
    let mut out = [0u16; 1];
    // SAFETY: a NOADDR-terminated list and room for 1 result.
    unsafe { FindLstn(0, pads.as_ptr(), out.as_mut_ptr(), 1) };
    assert_eq!(ThreadIberr(), ETAB);
    assert_eq!(ThreadIbsta() & (ERR | ATN | TACS), ERR | TACS);
}

#[test]
fn devclear_reports_no_err_even_when_it_fails_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibClr.c:124-128: DevClearList reports the failure, then success over it; ibsta
    // has no ERR and iberr keeps the code (found by vboard/fidelity: `DevClear 0 31`
    // ERR EARG here, no ERR there).
    DevClear(0, 31);
    assert_eq!((ThreadIbsta() & ERR, ThreadIberr()), (0, EARG));
    let l = [31u16, NOADDR];
    // SAFETY: a NOADDR-terminated list.
    unsafe { DevClearList(0, l.as_ptr()) };
    assert_eq!((ThreadIbsta() & ERR, ThreadIberr()), (0, EARG));
    // A descriptor that is not open still fails (enter_library returns first).
    DevClear(40, 22);
    assert_eq!((ThreadIbsta() & ERR, ThreadIberr()), (ERR, EARG));
}

#[test]
fn send_llo_asserts_ren_first_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/local_lockout.c: InternalEnableRemote, then LLO (found by vboard/fidelity:
    // iblines after SendLLO showed REN there, not here).
    assert_eq!(ibsre(0, 0) & ERR, 0);
    SendLLO(0);
    assert_eq!(ThreadIbsta() & ERR, 0);
    let mut lines: i16 = 0;
    // SAFETY: `lines` is writable.
    assert_eq!(unsafe { iblines(0, &mut lines) } & ERR, 0);
    assert_eq!(lines as u16 & 0x1000, 0x1000, "REN");
    assert_eq!(ibsre(0, 0) & ERR, 0);
}

#[test]
fn a_wait_for_end_after_a_write_times_out_as_in_linux_gpib() {
    let _g = serial_only();
    // linux-gpib's kernel has END in its status after a read that ended so, not after a
    // write with EOI (which only the library reports): `ibwait(TIMO|END)` after such a
    // write waits for the timeout (found by vboard/fidelity: 2100 here, 6100 there).
    let ud = ibdev(0, 22, 0, 5, 1, 0); // T1ms
    assert!(ud >= 0);
    // SAFETY: a buffer of 6 bytes.
    let sta = unsafe { ibwrt(ud, b"*IDN?\n".as_ptr().cast(), 6) };
    assert_eq!(sta & (ERR | END), END);
    assert_eq!(ibwait(ud, TIMO | END) & (ERR | TIMO | END), TIMO | END);
    let mut b = [0u8; 64];
    // SAFETY: a writable buffer of 64 bytes.
    let sta = unsafe { ibrd(ud, b.as_mut_ptr().cast(), 64) };
    assert_eq!(sta & (ERR | END), END);
    // Nor after a read that ended with END, on a device descriptor (found by
    // vboard/fidelity: `ibrd` END, then `ibwait(TIMO|END)` 6100 there).
    assert_eq!(ibwait(ud, TIMO | END) & (ERR | TIMO | END), TIMO | END);
    ibonl(ud, 0);
}

#[test]
fn ibdev_on_a_missing_board_loses_its_descriptor_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibdev.c:87-100: the descriptor is taken, enter_library fails, and it is never
    // given back (found by vboard/fidelity: the next ibdev got 17 there, 16 here).
    let first = ibdev(0, 22, 0, 11, 1, 0);
    assert!(first >= 16);
    assert_eq!(ibonl(first, 0) & ERR, 0);
    assert_eq!(ibdev(3, 22, 0, 11, 1, 0), -1);
    assert_eq!((ThreadIberr(), ThreadIbcntl()), (EDVR, 9));
    let next = ibdev(0, 22, 0, 11, 1, 0);
    assert_eq!(next, first + 1);
    // The lost one answers as its board's file does, and its status cannot be read:
    // ibsta is ERR alone (found by vboard/fidelity: `ibclr s0` 8000 there, 8100 here).
    assert_eq!(ibtmo(first, 11), ERR);
    assert_eq!((ThreadIberr(), ThreadIbcntl()), (EDVR, 9));
    assert_eq!(ibclr(first), ERR);
    ibonl(next, 0);
}

#[test]
fn with_unaddr_a_failed_transfer_reports_unaddressing_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibRd.c:126-131: with IbcUnAddr, unlisten_untalk's result replaces the read's:
    // a timeout is TIMO without ERR (found by vboard/fidelity: `ibrd s0 1` after
    // IbcUnAddr: 4100 there, c100 here).
    let ud = ibdev(0, 22, 0, 5, 1, 0); // T1ms
    assert!(ud >= 0);
    assert_eq!(ibclr(ud) & ERR, 0); // no answer left from another test
    assert_eq!(ibconfig(ud, OPT_UN_ADDR, 1) & ERR, 0);
    let mut b = [0u8; 4];
    // SAFETY: a writable buffer of 4 bytes; nothing to read: a timeout.
    let sta = unsafe { ibrd(ud, b.as_mut_ptr().cast(), 4) };
    assert_eq!((sta & (ERR | TIMO), ThreadIbcntl()), (TIMO, 0));
    ibonl(ud, 0);
}

#[test]
fn ibfind_of_a_name_that_is_not_utf8_is_edvr() {
    let _g = serial_only();
    // linux-gpib looks the name up in its configuration: not there, EDVR.
    let name: &[u8] = b"gpib\xff\xfe0\0";
    crate::status::finish(CMPL, None, Some(9));
    // SAFETY: a NUL-terminated string.
    assert_eq!(unsafe { ibfind(name.as_ptr().cast::<c_char>()) }, -1);
    assert_eq!(ThreadIberr(), EDVR);
    assert_eq!(
        ThreadIbcnt(),
        9,
        "ibcnt left as it was, as for any name not configured"
    );
}

#[test]
fn ibfind_of_a_name_not_configured_leaves_ibcnt_as_it_was() {
    let _g = serial_only();
    // linux-gpib's ibfind (lib/ibFind.c:38-42) fails before general_enter_library:
    // iberr EDVR, ibsta ERR, and ibcnt still the previous call's (found by
    // vboard/fidelity: `ibrd ... cnt=25` then `ibfind("nosuch")` with cnt=25).
    let ud = ibdev(0, 22, 0, 11, 1, 0);
    assert!(ud >= 0);
    // SAFETY: a buffer of 6 bytes.
    assert_eq!(unsafe { ibwrt(ud, b"*IDN?\n".as_ptr().cast(), 6) } & ERR, 0);
    assert_eq!(ThreadIbcnt(), 6);
    // SAFETY: a NUL-terminated string.
    assert_eq!(unsafe { ibfind(c"nosuch".as_ptr()) }, -1);
    assert_eq!((ThreadIberr(), ThreadIbcnt()), (EDVR, 6));
    ibonl(ud, 0);
}

#[test]
fn ib_config_with_minors_10_to_12_and_a_device_without_its_board() {
    let conf = std::env::temp_dir().join(format!("gpib-compat-minors-{}.conf", std::process::id()));
    std::fs::write(
        &conf,
        "interface { minor = 10 name = \"ten\" }\ninterface { minor = 11 }\ninterface { minor = 12 }\n\
         device { minor = 11 name = \"dmm\" pad = 3 }\ndevice { minor = 4 name = \"lost\" pad = 5 }\n",
    )
    .unwrap();
    let out = crate::tests::run_child_with(
        "fidelity_tests::child_ibfind_on_minors_10_to_12",
        &[("IB_CONFIG", conf.to_str().unwrap())],
    );
    let _ = std::fs::remove_file(&conf);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert!(
        stderr.contains("ibfind(\"lost\")")
            && stderr.contains("no interface section has minor = 4"),
        "the unusable device is explained: {stderr}"
    );
    assert!(!stderr.contains("every call fails"), "{stderr}");
}

#[test]
#[ignore = "run in a child process by ib_config_with_minors_10_to_12_and_a_device_without_its_board"]
fn child_ibfind_on_minors_10_to_12() {
    if !crate::tests::in_child() {
        return;
    }
    // SAFETY: NUL-terminated strings.
    let b = unsafe { ibfind(c"ten".as_ptr()) };
    assert!(b >= 16, "ibfind(ten): iberr {}", ThreadIberr());
    // SAFETY: as above.
    let ud = unsafe { ibfind(c"dmm".as_ptr()) };
    assert!(ud >= 16, "ibfind(dmm): iberr {}", ThreadIberr());
    let mut v = 0;
    // SAFETY: `v` is a writable int.
    assert_eq!(unsafe { ibask(ud, OPT_BNA, &mut v) } & ERR, 0);
    assert_eq!(v, 11);
    // SAFETY: six readable bytes.
    let sta = unsafe { ibwrt(ud, b"*IDN?\n".as_ptr().cast(), 6) };
    assert_eq!(sta & ERR, 0, "iberr {}", ThreadIberr());
    // SAFETY: as above.
    let lost = unsafe { ibfind(c"lost".as_ptr()) };
    assert_eq!((lost, ThreadIberr()), (-1, EDVR));
}

#[test]
fn a_board_wait_for_end_after_a_read_times_out_as_in_linux_gpib() {
    let _g = serial_only();
    // linux-gpib's kernel never has END in the status its IBWAIT sees (sys/ibutil.c
    // general_ibstatus; the board's update_status keeps a received END to itself), so
    // `ibwait(board, TIMO|END)` after a board read that ended with END waits for the
    // timeout, and the library adds END (lib/ibWait.c my_wait). Found by
    // vboard/fidelity: `Receive` with END, then 6124 there, 2124 here.
    let ud = ibdev(0, 22, 0, 7, 1, 0); // T10ms
    assert!(ud >= 0);
    // SAFETY: a buffer of 6 bytes.
    assert_eq!(unsafe { ibwrt(ud, b"*IDN?\n".as_ptr().cast(), 6) } & ERR, 0);
    assert_eq!(ibtmo(0, 7) & ERR, 0);
    // UNL UNT MTA22 MLA0
    let talk = [0x3f_u8, 0x5f, 0x56, 0x20];
    // SAFETY: a buffer of 4 bytes.
    assert_eq!(unsafe { ibcmd(0, talk.as_ptr().cast(), 4) } & ERR, 0);
    let mut b = [0u8; 256];
    // SAFETY: a writable buffer of 256 bytes.
    let sta = unsafe { ibrd(0, b.as_mut_ptr().cast(), 256) };
    assert_eq!(sta & (ERR | END), END, "iberr {}", ThreadIberr());
    assert_eq!(ibwait(0, TIMO | END) & (ERR | TIMO | END), TIMO | END);
    ibtmo(0, 12);
    ibonl(ud, 0);
}

#[test]
fn a_boards_own_parallel_poll_response_needs_local_configure_mode_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibppc.c board_ppc: ECAP unless the board is in local parallel poll configure
    // mode (IbcPP2), which its kernel starts with off (sys/ibinit.c). The byte is
    // checked first (EARG). Found by vboard/fidelity: `ibconfig 0 5 96`.
    assert_eq!(ibconfig(0, OPT_PP2, 0) & ERR, 0);
    assert_eq!(ibconfig(0, OPT_PPC, 0x60) & ERR, ERR);
    assert_eq!(ThreadIberr(), ECAP);
    assert_eq!(ibppc(0, 0x61) & ERR, ERR);
    assert_eq!(ThreadIberr(), ECAP);
    assert_eq!(ibppc(0, 0x21) & ERR, ERR);
    assert_eq!(ThreadIberr(), EARG);
    assert_eq!(ibconfig(0, OPT_PP2, 1) & ERR, 0);
    assert_eq!(
        ibconfig(0, OPT_PPC, 0x60) & ERR,
        0,
        "iberr {}",
        ThreadIberr()
    );
    assert_eq!(ibconfig(0, OPT_PPC, 0) & ERR, 0);
    assert_eq!(ibconfig(0, OPT_PP2, 0) & ERR, 0);
}

#[test]
fn a_read_in_serial_poll_mode_gets_the_status_byte_on_every_handshake() {
    let _g = serial_only();
    // A talker in serial poll mode sources its status byte for as long as the
    // controller reads (IEEE 488.1 SPAS, no END); RQS is in the first only. linux-gpib's
    // kernel reads until the count (sys/ibread.c), so a 26-byte read gets 26. Found by
    // vboard/fidelity: SendCmds SPE MTA22, then `ibrd 0 26`: 26 there, 1 here.
    let ud = ibdev(0, 22, 0, 12, 1, 0);
    assert!(ud >= 0);
    // MAV, with a service request for it.
    let q = b"*CLS;*SRE 16;*IDN?\n";
    // SAFETY: a buffer of q.len() bytes.
    let sta = unsafe { ibwrt(ud, q.as_ptr().cast(), q.len() as _) };
    assert_eq!(sta & ERR, 0);
    // UNL UNT SPE MTA22 MLA0
    let spe = [0x3f_u8, 0x5f, 0x18, 0x56, 0x20];
    // SAFETY: a buffer of 5 bytes.
    assert_eq!(unsafe { ibcmd(0, spe.as_ptr().cast(), 5) } & ERR, 0);
    let mut b = [0u8; 26];
    // SAFETY: a writable buffer of 26 bytes.
    let sta = unsafe { ibrd(0, b.as_mut_ptr().cast(), 26) };
    assert_eq!(sta & (ERR | END), 0, "iberr {}", ThreadIberr());
    assert_eq!(ThreadIbcntl(), 26);
    assert_eq!(b[0], 0x50, "RQS and MAV first");
    assert!(
        b[1..].iter().all(|&s| s == 0x10),
        "then MAV alone: {b:02x?}"
    );
    // SPD UNT
    let spd = [0x19_u8, 0x5f];
    // SAFETY: a buffer of 2 bytes.
    assert_eq!(unsafe { ibcmd(0, spd.as_ptr().cast(), 2) } & ERR, 0);
    let q = b"*CLS;*SRE 0\n";
    // SAFETY: a buffer of q.len() bytes.
    unsafe { ibwrt(ud, q.as_ptr().cast(), q.len() as _) };
    ibonl(ud, 0);
}

#[test]
fn a_board_taken_offline_fails_every_call_for_good_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibOnl.c:118-139: ibonl(board, 0) closes the board descriptor's kernel handle
    // and keeps its configuration (only descriptors from GPIB_MAX_NUM_BOARDS up are
    // freed); every later call's status query on that handle is EINVAL (EDVR, ibcnt 22,
    // ibsta ERR alone), ibonl(board, 1) too (reinit_descriptor's IBPAD is on the
    // handle). What goes by the board's file alone still reaches the bus (REN, IFC);
    // what needs the handle (commands, data) does not. Found by vboard/fidelity:
    // `ibonl 0 0`, then `ibwrt 0 20`: EDVR/22 there, EABO here; `ibonl 0 1` after it;
    // `EnableRemote` and `ResetSys` asserting REN and pulsing IFC there.
    assert_eq!(ibonl(0, 0) & ERR, 0);
    // SAFETY: a buffer of 2 bytes.
    let sta = unsafe { ibwrt(0, b"x\n".as_ptr().cast(), 2) };
    assert_eq!(sta, ERR);
    assert_eq!(
        (ThreadIberr(), ThreadIbcntl()),
        (EDVR, i64::from(libc::EINVAL) as _)
    );
    assert_eq!(ibeos(0, 0x40a), ERR);
    assert_eq!(ibwait(0, 0), ERR);
    assert_eq!(ibonl(0, 1), ERR);
    assert_eq!(ThreadIberr(), EDVR);
    // REN goes by the board's file: it changes, and the call still fails.
    let lib = crate::engine::library();
    let ren = || lib.board(0).lock().lines().map(|l| l.ren);
    assert_eq!(ibsre(0, 0), ERR);
    assert_eq!(ren(), Ok(false));
    assert_eq!(ibsre(0, 1), ERR);
    assert_eq!(ren(), Ok(true));
    // Commands need the handle: EnableLocal of a device sends nothing (found by
    // vboard/fidelity comparing the bus: MTA0 UNL MLA22 GTL here, nothing there).
    let host = lib.host.as_ref().unwrap();
    host.record(64);
    let list: [Addr4882_t; 2] = [22, NOADDR as Addr4882_t];
    // SAFETY: a list ending with NOADDR.
    unsafe { EnableLocal(0, list.as_ptr()) };
    assert_eq!((ThreadIbsta(), ThreadIberr()), (ERR, EDVR));
    let sent: Vec<_> = host.stop_recording();
    assert!(sent.is_empty(), "{sent:?}");
    // A serial poll goes by the board's file: it happens, and times out on nobody; the
    // status is ERR and the library's own TIMO (found by vboard/fidelity: c000 there,
    // 8000 here). DevClear's failure is not masked then (its final status fails too).
    let mut stb: i16 = 0;
    // SAFETY: `stb` is writable.
    unsafe { ReadStatusByte(0, 5, &mut stb) };
    assert_eq!((ThreadIbsta(), ThreadIberr()), (ERR | TIMO, EDVR));
    DevClear(0, 22);
    assert_eq!((ThreadIbsta(), ThreadIberr()), (ERR, EDVR));
    bring_board_0_back();
}

/// Test only: board 0's descriptor usable again after a test took it offline (nothing
/// in linux-gpib does this; each test process has one library).
fn bring_board_0_back() {
    let lib = crate::engine::library();
    crate::engine::lock_desc(&lib.get(0).unwrap()).handle_closed = false;
    lib.board(0).lock().handle0_free = false;
}

#[test]
fn device_calls_with_their_board_offline_leave_edvr_and_einval_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibWait.c my_wait asks is_cic (lib/ibutil.c) on the board's handle 0 before a
    // device's status; with that handle closed by ibonl(board, 0) it fails (EINVAL),
    // leaves EDVR and ibcnt 22, and the call goes on. Found by vboard/fidelity:
    // `ibwrt s0 7` after `ibonl 0 0`: cnt=22 there, 5 here.
    let ud = ibdev(0, 22, 0, 11, 1, 0);
    assert!(ud >= 0);
    assert_eq!(ibonl(0, 0) & ERR, 0);
    // SAFETY: a buffer of 6 bytes.
    let sta = unsafe { ibwrt(ud, b"*IDN?\n".as_ptr().cast(), 6) };
    assert_eq!(sta & (ERR | END), END);
    assert_eq!((ThreadIberr(), ThreadIbcntl()), (EDVR, 22));
    // A descriptor opened now takes the free slot 0 (the kernel's first free one), and
    // the board question works again (found by vboard/fidelity: `ibask s0 24` after
    // `ibdev s3 ...` had ibcnt 0 there, 22 here).
    let other = ibdev(0, 11, 0, 11, 1, 0);
    assert!(other >= 0);
    let mut v = 0;
    // SAFETY: `v` is writable.
    assert_eq!(unsafe { ibask(ud, OPT_SPOLL_TIME, &mut v) } & ERR, 0);
    assert_eq!(ThreadIbcntl(), 0);
    ibonl(other, 0);
    bring_board_0_back();
    let mut b = [0u8; 64];
    // SAFETY: a writable buffer of 64 bytes.
    let sta = unsafe { ibrd(ud, b.as_mut_ptr().cast(), 64) };
    assert_eq!(sta & (ERR | END), END);
    assert!(
        ThreadIbcntl() > 10,
        "the answer's length, {}",
        ThreadIbcntl()
    );
    ibonl(ud, 0);
}

#[test]
fn ibonl_1_sets_the_poll_timeouts_to_the_io_timeout_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibOnl.c reinit_descriptor: spoll_usec_timeout (and a board's
    // ppoll_usec_timeout) become the descriptor's I/O timeout; IbcUnAddr stays as set. Found by vboard/fidelity:
    // `ibask s0 24` after `ibonl s0 1`: 8 there, 11 here.
    let ud = ibdev(0, 22, 0, 8, 1, 0); // T100ms
    assert!(ud >= 0);
    let ask = |opt| {
        let mut v = -1;
        // SAFETY: `v` is writable.
        assert_eq!(unsafe { ibask(ud, opt, &mut v) } & ERR, 0);
        v
    };
    assert_eq!(ask(OPT_SPOLL_TIME), 11);
    assert_eq!(ibconfig(ud, OPT_UN_ADDR, 1) & ERR, 0);
    assert_eq!(ibtmo(ud, 13) & ERR, 0);
    assert_eq!(ibonl(ud, 1) & ERR, 0);
    assert_eq!((ask(OPT_TMO), ask(OPT_SPOLL_TIME)), (8, 8));
    assert_eq!(ask(OPT_UN_ADDR), 1);
    ibonl(ud, 0);
}

#[test]
fn hs488_cable_length_sends_cfe_and_linux_gpibs_cfgn_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibconfig.c set_cable_length: EARG outside 0..=15 m, else CFE and, for a length,
    // CFGn as commands, which leaves ATN asserted. Found by vboard/fidelity:
    // `ibconfig 0 31 10`: 0130 there, ECAP here.
    assert_eq!(ibconfig(0, OPT_HS_CABLE_LENGTH, 16) & ERR, ERR);
    assert_eq!(ThreadIberr(), EARG);
    let sta = ibconfig(0, OPT_HS_CABLE_LENGTH, 10);
    assert_eq!(
        sta & (ERR | ATN | CIC),
        ATN | CIC,
        "iberr {}",
        ThreadIberr()
    );
    assert_eq!(ibconfig(0, OPT_HS_CABLE_LENGTH, 0) & ERR, 0);
    ibgts(0, 0);
}

#[test]
fn a_board_that_gave_up_system_control_refuses_ifc_and_ren_as_in_linux_gpib() {
    let _g = serial_only();
    // lib/ibSic.c request_system_control sends IBRSC (the kernel's board->master);
    // then ibsic, ibsre and ResetSys are ESAC (lib/ibSic.c:45, lib/ibSre.c:25,
    // lib/ibBoard.c:139) and ibask(IbaSC) is 0. Found by vboard/fidelity:
    // `ibconfig 0 10 0` accepted there, ECAP here.
    assert_eq!(ibconfig(0, OPT_SC, 0) & ERR, 0, "iberr {}", ThreadIberr());
    let mut v = -1;
    // SAFETY: `v` is writable.
    assert_eq!(unsafe { ibask(0, OPT_SC, &mut v) } & ERR, 0);
    assert_eq!(v, 0);
    assert_eq!(ibsic(0) & ERR, ERR);
    assert_eq!(ThreadIberr(), ESAC);
    assert_eq!(ibsre(0, 1) & ERR, ERR);
    assert_eq!(ThreadIberr(), ESAC);
    SendIFC(0);
    assert_eq!((ThreadIbsta() & ERR, ThreadIberr()), (ERR, ESAC));
    assert_eq!(ibrsc(0, 1) & ERR, 0);
    // SAFETY: `v` is writable.
    assert_eq!(unsafe { ibask(0, OPT_SC, &mut v) } & ERR, 0);
    assert_eq!(v, 1);
    assert_eq!(ibsic(0) & ERR, 0);
}
