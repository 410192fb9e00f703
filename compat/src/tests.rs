//! The exported functions called as a C program would, on the default `bench`
//! configuration (HP3565 at 11, SCPI instrument at 22, board 0 at address 0).

use std::ffi::{c_char, c_int, c_long, c_short, c_void, CStr};
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use crate::consts::*;
use crate::ffi::*;
use crate::status::{self, ibcnt, ibcntl, iberr, ibsta};

/// The library is one per process: one test at a time uses it (and the globals).
pub(crate) static SERIAL: Mutex<()> = Mutex::new(());

/// Takes the library for one test (also used by tests that only touch the globals).
pub(crate) fn serial_only() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn serial() -> std::sync::MutexGuard<'static, ()> {
    let g = serial_only();
    // A known bus: IFC, REN off, DCL, the SCPI instrument's status cleared.
    SendIFC(0);
    assert_eq!(ThreadIbsta() & ERR, 0, "SendIFC: {}", ThreadIberr());
    ibsre(0, 0);
    DevClear(0, NOADDR);
    let ud = dev(22);
    write(ud, b"*CLS;*ESE 0;*SRE 0\n");
    ibonl(ud, 0);
    g
}

fn dev(pad: c_int) -> c_int {
    let ud = ibdev(0, pad, 0, 12, 1, 0);
    assert!(ud >= 16, "ibdev: iberr {}", ThreadIberr());
    ud
}

fn write(ud: c_int, data: &[u8]) -> c_int {
    // SAFETY: `data` is valid for its length.
    unsafe { ibwrt(ud, data.as_ptr().cast(), data.len() as c_long) }
}

fn read(ud: c_int, buf: &mut [u8]) -> (c_int, Vec<u8>) {
    // SAFETY: `buf` is valid and writable for its length.
    let sta = unsafe { ibrd(ud, buf.as_mut_ptr().cast(), buf.len() as c_long) };
    let n = ThreadIbcntl() as usize;
    assert!(n <= buf.len());
    (sta, buf[..n].to_vec())
}

#[test]
fn find_listeners_identify_and_poll() {
    let _g = serial();
    let pads: Vec<u16> = (1..=30).chain([NOADDR]).collect();
    let mut found = [NOADDR; 31];
    // SAFETY: the list ends with NOADDR; the result array holds 30 entries.
    unsafe { FindLstn(0, pads.as_ptr(), found.as_mut_ptr(), 30) };
    assert_eq!(ThreadIbsta() & ERR, 0);
    assert_eq!(ThreadIbcnt(), 2);
    assert_eq!(&found[..3], &[11, 22, NOADDR]);
    // The globals say the same (this thread made the last call).
    assert_eq!(ibcnt.load(Ordering::SeqCst), 2);

    let ud = dev(22);
    assert_eq!(write(ud, b"*IDN?\n") & ERR, 0);
    assert_eq!(ThreadIbcntl(), 6);
    let (sta, answer) = read(ud, &mut [0u8; 256]);
    assert_eq!(sta & (ERR | END | CMPL), END | CMPL);
    assert_eq!(answer, b"SIMULATED,SCPI-DMM,0,1.0\n");
    let mut stb: c_char = 1;
    // SAFETY: `stb` is writable.
    unsafe { ibrsp(ud, &mut stb) };
    assert_eq!((ThreadIbsta() & ERR, stb), (0, 0));
    assert_eq!(ibonl(ud, 0) & ERR, 0);
    // Closed: now an unknown descriptor.
    assert_eq!(ibonl(ud, 0) & ERR, ERR);
    assert_eq!(ThreadIberr(), EARG);
    // Too small a result array: the first ones, and ETAB.
    let mut one = [NOADDR; 1];
    // SAFETY: as above, with room for one result.
    unsafe { FindLstn(0, pads.as_ptr(), one.as_mut_ptr(), 1) };
    assert_eq!(
        (ThreadIbsta() & ERR, ThreadIberr(), one[0]),
        (ERR, ETAB, 11)
    );
    // A bad entry: EARG, its index in ibcnt.
    let bad = [5u16, 31, NOADDR];
    // SAFETY: as above.
    unsafe { FindLstn(0, bad.as_ptr(), found.as_mut_ptr(), 30) };
    assert_eq!((ThreadIberr(), ThreadIbcnt()), (EARG, 1));
}

#[test]
fn bad_descriptors_and_arguments_never_crash() {
    let _g = serial();
    assert_eq!(write(999, b"x"), ERR);
    assert_eq!(ThreadIberr(), EARG);
    assert_eq!(write(-1, b"x"), ERR);
    assert_eq!(ThreadIberr(), EARG);
    // A board index without a board: no configuration, EARG as in linux-gpib.
    assert_eq!(write(5, b"x"), ERR);
    assert_eq!(ThreadIberr(), EARG);
    let ud = dev(22);
    // SAFETY: null pointers and bad counts are what is being tested.
    unsafe {
        assert_eq!(ibrd(ud, std::ptr::null_mut(), 10) & ERR, ERR);
        assert_eq!(ThreadIberr(), EARG);
        assert_eq!(ibwrt(ud, b"x".as_ptr().cast(), -1) & ERR, ERR);
        assert_eq!(ThreadIberr(), EARG);
        assert_eq!(ibask(ud, OPT_PAD, std::ptr::null_mut()) & ERR, ERR);
        assert_eq!(ibfind(std::ptr::null()), -1);
        assert_eq!(ThreadIberr(), EARG);
        assert_eq!(
            ibcmd(ud, b"?".as_ptr().cast(), 1) & ERR,
            ERR,
            "ibcmd on a device"
        );
        assert_eq!(ThreadIberr(), EARG);
        let mut c: c_char = 0;
        assert_eq!(ibrsp(0, &mut c) & ERR, ERR, "ibrsp on a board");
        assert_eq!(ibrsp(ud, std::ptr::null_mut()) & ERR, ERR);
        ReadStatusByte(0, 22, std::ptr::null_mut());
        assert_eq!(ThreadIberr(), EARG);
        FindLstn(0, std::ptr::null(), std::ptr::null_mut(), 5);
        assert_eq!(ThreadIberr(), EARG);
        // A zero-length write with a null pointer is fine.
        assert_eq!(ibwrt(ud, std::ptr::null(), 0) & ERR, 0);
    }
    assert_eq!(ibdev(0, 31, 0, 11, 1, 0), -1);
    assert_eq!((ThreadIbsta() & ERR, ThreadIberr()), (ERR, EARG));
    // A board index without a board: EDVR, errno EBADF, as linux-gpib's ibdev answers
    // (its ioctl goes to a board file never opened).
    assert_eq!(ibdev(7, 1, 0, 11, 1, 0), -1);
    assert_eq!((ThreadIberr(), ThreadIbcntl()), (EDVR, 9));
    assert_eq!(ibdev(16, 1, 0, 11, 1, 0), -1);
    assert_eq!(ThreadIberr(), ENEB);
    assert_eq!(ibtmo(ud, 18) & ERR, ERR);
    assert_eq!(ibconfig(ud, 0x7777, 1) & ERR, ERR);
    assert_eq!(ThreadIberr(), EARG);
    ibonl(ud, 0);
}

#[test]
fn unsupported_operations_are_ecap() {
    let _g = serial();
    let ud = dev(22);
    assert_eq!(ibpct(ud), ERR | CMPL);
    assert_eq!(ThreadIberr(), ECAP);
    PassControl(0, 22);
    assert_eq!(ThreadIberr(), ECAP);
    assert_eq!(ibconfig(0, OPT_READ_ADJUST, 1) & ERR, ERR);
    assert_eq!(ThreadIberr(), ECAP);
    assert_eq!(ibpad(0, 5) & ERR, ERR);
    assert_eq!(ThreadIberr(), ECAP);
    // Setting what already holds is fine.
    assert_eq!(ibrsc(0, 1) & ERR, 0);
    ibonl(ud, 0);
}

#[test]
fn settings_round_trip_through_ibask() {
    let _g = serial();
    let ud = ibdev(0, 22, 0x60 + 3, 13, 1, REOS | 0x0a);
    let ask = |ud, opt| {
        let mut v: c_int = -1;
        // SAFETY: `v` is writable.
        let sta = unsafe { ibask(ud, opt, &mut v) };
        assert_eq!(sta & ERR, 0, "ibask {opt:#x}: iberr {}", ThreadIberr());
        v
    };
    assert_eq!(ask(ud, OPT_PAD), 22);
    assert_eq!(ask(ud, OPT_SAD), 0x63);
    assert_eq!(ask(ud, OPT_TMO), 13);
    assert_eq!(ask(ud, OPT_EOT), 1);
    assert_eq!(ask(ud, OPT_EOS_RD), REOS);
    assert_eq!(ask(ud, OPT_EOS_CHAR), 0x0a);
    assert_eq!(ask(ud, OPT_BNA), 0);
    assert_eq!(ask(ud, OPT_SPOLL_TIME), T1S);
    ibtmo(ud, 5);
    ibeot(ud, 0);
    ibeos(ud, BIN | XEOS | 0x0d);
    ibsad(ud, 0);
    assert_eq!(ask(ud, OPT_TMO), 5);
    assert_eq!(ask(ud, OPT_EOT), 0);
    assert_eq!(ask(ud, OPT_EOS_RD), 0);
    assert_eq!(ask(ud, OPT_EOS_WRT), XEOS);
    assert_eq!(ask(ud, OPT_EOS_CMP), BIN);
    assert_eq!(ask(ud, OPT_SAD), 0);
    // Board-only options on a device, and the other way round: EARG.
    let mut v = 0;
    // SAFETY: `v` is writable.
    assert_eq!(unsafe { ibask(ud, OPT_SC, &mut v) } & ERR, ERR);
    // SAFETY: `v` is writable.
    assert_eq!(unsafe { ibask(0, OPT_SPOLL_TIME, &mut v) } & ERR, ERR);
    assert_eq!(ask(0, OPT_SC), 1);
    assert_eq!(ask(0, OPT_PAD), 0);
    // The bench board's 10 s timeout is T10s.
    assert_eq!(ask(0, OPT_TMO), 13);
    // ibonl(ud, 1) restores the settings of ibdev.
    ibonl(ud, 1);
    assert_eq!(ask(ud, OPT_TMO), 13);
    assert_eq!(ask(ud, OPT_EOS_CHAR), 0x0a);
    ibonl(ud, 0);
    // ibfind: a new board descriptor for the board's name.
    let name = c"gpib0";
    // SAFETY: a NUL-terminated string.
    let b = unsafe { ibfind(name.as_ptr()) };
    assert!(b >= 16);
    assert_eq!(ask(b, OPT_SC), 1);
    ibonl(b, 0);
    // SAFETY: a NUL-terminated string.
    assert_eq!(unsafe { ibfind(c"nosuch".as_ptr()) }, -1);
    assert_eq!(ThreadIberr(), EDVR);
}

#[test]
fn reads_end_on_eoi_eos_or_a_full_buffer_and_time_out() {
    let _g = serial();
    let ud = dev(22);
    write(ud, b"*IDN?\n");
    let (sta, part) = read(ud, &mut [0u8; 10]);
    assert_eq!(
        (sta & (END | ERR), part.as_slice()),
        (0, &b"SIMULATED,"[..])
    );
    let (sta, rest) = read(ud, &mut [0u8; 64]);
    assert_eq!(
        (sta & END, rest.as_slice()),
        (END, &b"SCPI-DMM,0,1.0\n"[..])
    );
    // EOS: a read stops after ',' with END.
    ibeos(ud, REOS | BIN | i32::from(b','));
    write(ud, b"*IDN?\n");
    let (sta, part) = read(ud, &mut [0u8; 64]);
    assert_eq!((sta & END, part.as_slice()), (END, &b"SIMULATED,"[..]));
    // Nothing to say: EABO with TIMO, no bytes; the 3 s passed in virtual time.
    ibeos(ud, 0);
    DevClear(0, 22);
    let t = std::time::Instant::now();
    let (sta, got) = read(ud, &mut [0u8; 16]);
    assert_eq!(
        (sta & (ERR | TIMO), ThreadIberr(), got.len()),
        (ERR | TIMO, EABO, 0)
    );
    assert!(t.elapsed() < std::time::Duration::from_secs(2));
    // The next call clears TIMO.
    assert_eq!(write(ud, b"*OPC?\n") & (TIMO | ERR), 0);
    let (_, ok) = read(ud, &mut [0u8; 16]);
    assert_eq!(ok, b"1\n");
    ibonl(ud, 0);
}

#[test]
fn no_listener_and_board_level_io() {
    let _g = serial();
    // Nobody at 5: ENOL on the write.
    let ud = dev(5);
    assert_eq!(write(ud, b"x") & ERR, ERR);
    assert_eq!(ThreadIberr(), ENOL);
    ibonl(ud, 0);
    // Board level: address by hand, then write and read on the board descriptor.
    let cmd = [0x3fu8, 0x40, 0x20 + 22]; // UNL, MTA0, MLA22
                                         // SAFETY: valid buffers for their lengths.
    unsafe {
        assert_eq!(ibcmd(0, cmd.as_ptr().cast(), 3) & (ERR | TACS), TACS);
        assert_eq!(
            ibwrt(0, b"*IDN?\n".as_ptr().cast(), 6) & ERR,
            0,
            "iberr {}",
            ThreadIberr()
        );
        let cmd = [0x3fu8, 0x40 + 22, 0x20]; // UNL, MTA22, MLA0
        assert_eq!(ibcmd(0, cmd.as_ptr().cast(), 3) & (ERR | LACS), LACS);
    }
    let (sta, got) = read(0, &mut [0u8; 64]);
    assert_eq!((sta & (ERR | END), got.len()), (END, 25));
    // Reading while the board is not a listener: a timeout (EABO, TIMO), as linux-gpib's
    // driver waits for bytes that never come (it has no EADR).
    SendIFC(0);
    let (sta, _) = read(0, &mut [0u8; 4]);
    assert_eq!((sta & (ERR | TIMO), ThreadIberr()), (ERR | TIMO, EABO));
}

#[test]
fn async_io_completes_at_ibwait() {
    let _g = serial();
    let ud = dev(22);
    write(ud, b"*IDN?\n");
    let mut buf = [0u8; 64];
    // SAFETY: `buf` outlives the asynchronous read (which completes at once anyway).
    let sta = unsafe { ibrda(ud, buf.as_mut_ptr().cast(), 64) };
    assert_eq!(sta & (ERR | CMPL), 0, "in progress");
    // Another I/O before resynchronizing: EOIP.
    assert_eq!(write(ud, b"*OPC?\n") & ERR, ERR);
    assert_eq!(ThreadIberr(), EOIP);
    let sta = ibwait(ud, TIMO | CMPL | END);
    assert_eq!(sta & (ERR | CMPL | END), CMPL | END);
    assert_eq!(AsyncIbcntl(), 25);
    assert_eq!(AsyncIbsta() & END, END);
    assert_eq!(&buf[..25], b"SIMULATED,SCPI-DMM,0,1.0\n");
    // An asynchronous write, then ibstop.
    // SAFETY: a static buffer.
    unsafe { ibwrta(ud, b"*OPC?\n".as_ptr().cast(), 6) };
    assert_eq!(ibstop(ud) & ERR, 0);
    assert_eq!(AsyncIbcntl(), 6);
    ibonl(ud, 0);
}

#[test]
fn srq_lines_and_listeners() {
    let _g = serial();
    let ud = dev(22);
    let mut r: c_short = 10;
    // SAFETY: `r` is writable.
    unsafe { TestSRQ(0, &mut r) };
    assert_eq!(r, 0);
    write(ud, b"*SRE 16\n");
    assert_eq!(ibtrg(ud) & ERR, 0);
    // SAFETY: `r` is writable.
    unsafe { TestSRQ(0, &mut r) };
    assert_eq!(r, 1);
    assert_eq!(ibwait(0, SRQI | TIMO) & (SRQI | TIMO), SRQI);
    // SAFETY: `r` is writable.
    unsafe { WaitSRQ(0, &mut r) };
    assert_eq!(r, 1);
    let mut lines: c_short = 0;
    // SAFETY: `lines` is writable.
    unsafe { iblines(0, &mut lines) };
    assert_eq!(
        i32::from(lines) & (VALID_ALL | BUS_SRQ),
        VALID_ALL | BUS_SRQ
    );
    // FindRQS: the HP3565 does not ask, the SCPI instrument does (index 1).
    let list = [11u16, 22, NOADDR];
    let mut stb: c_short = 0;
    // SAFETY: the list ends with NOADDR; `stb` is writable.
    unsafe { FindRQS(0, list.as_ptr(), &mut stb) };
    assert_eq!(
        (ThreadIbsta() & ERR, ThreadIbcnt(), stb & 0x40),
        (0, 1, 0x40)
    );
    // SAFETY: `r` is writable.
    unsafe { TestSRQ(0, &mut r) };
    assert_eq!(r, 0);
    // Nobody asks now: ETAB.
    // SAFETY: as above.
    unsafe { FindRQS(0, list.as_ptr(), &mut stb) };
    assert_eq!(ThreadIberr(), ETAB);
    // ibln: who listens.
    let mut found: c_short = 0;
    // SAFETY: `found` is writable.
    unsafe {
        ibln(0, 22, NO_SAD, &mut found);
        assert_eq!(found, 1);
        ibln(0, 23, ALL_SAD, &mut found);
        assert_eq!(found, 0);
        assert_eq!(ibln(0, 23, 7, &mut found) & ERR, ERR);
    }
    // A wait that times out: TIMO after the descriptor's timeout, in wall time.
    ibtmo(0, 9); // T100ms
    let t = std::time::Instant::now();
    assert_eq!(ibwait(0, SRQI | TIMO) & (SRQI | TIMO), TIMO);
    assert!(t.elapsed() >= std::time::Duration::from_millis(100));
    ibonl(0, 1);
    // SAFETY: `r` is writable.
    unsafe { TestSRQ(0, &mut r) };
    assert_eq!(r, 0);
    ibonl(ud, 0);
}

#[test]
fn multidevice_send_and_receive() {
    let _g = serial();
    let list = [22u16, NOADDR];
    // SAFETY: valid buffers and a NOADDR-terminated list.
    unsafe {
        SendList(0, list.as_ptr(), b"*IDN?".as_ptr().cast(), 5, NLEND);
        assert_eq!(ThreadIbsta() & ERR, 0);
        assert_eq!(ThreadIbcntl(), 6);
        let mut buf = [0u8; 64];
        Receive(0, 22, buf.as_mut_ptr().cast(), 64, STOPEND);
        assert_eq!(ThreadIbsta() & (ERR | END), END);
        assert_eq!(
            &buf[..ThreadIbcntl() as usize],
            b"SIMULATED,SCPI-DMM,0,1.0\n"
        );
        Send(0, 22, b"*IDN?\n".as_ptr().cast(), 6, DABEND);
        Receive(0, 22, buf.as_mut_ptr().cast(), 64, i32::from(b','));
        assert_eq!(&buf[..ThreadIbcntl() as usize], b"SIMULATED,");
        DevClearList(0, list.as_ptr());
        assert_eq!(ThreadIbsta() & ERR, 0);
        Send(0, 22, b"x".as_ptr().cast(), 1, 7);
        assert_eq!(ThreadIberr(), EARG);
        let mut res = [0i16; 2];
        AllSPoll(0, [11u16, 22, NOADDR].as_ptr(), res.as_mut_ptr());
        assert_eq!((ThreadIbsta() & ERR, res), (0, [0, 0]));
        EnableRemote(0, list.as_ptr());
        let mut lines: c_short = 0;
        iblines(0, &mut lines);
        assert_eq!(i32::from(lines) & BUS_REN, BUS_REN);
        EnableLocal(0, std::ptr::null());
        iblines(0, &mut lines);
        assert_eq!(i32::from(lines) & BUS_REN, 0);
    }
}

#[test]
fn version_and_error_strings() {
    let mut p: *mut c_char = std::ptr::null_mut();
    // SAFETY: `p` is writable; a null argument is tolerated.
    unsafe {
        ibvers(&mut p);
        ibvers(std::ptr::null_mut());
        assert_eq!(CStr::from_ptr(p).to_str().unwrap(), "4.3.7");
        let s = CStr::from_ptr(gpib_error_string(EABO)).to_str().unwrap();
        assert!(s.contains("aborted"), "{s}");
        assert!(!gpib_error_string(-5).is_null());
    }
}

#[test]
fn each_thread_sees_its_own_status() {
    let _g = serial();
    let ud = dev(22);
    let bad = std::thread::spawn(|| {
        write(999, b"x");
        (ThreadIbsta(), ThreadIberr())
    });
    let good = std::thread::spawn(move || {
        write(ud, b"*OPC?\n");
        (ThreadIbsta(), ThreadIbcntl())
    });
    let (bs, be) = bad.join().unwrap();
    let (gs, gc) = good.join().unwrap();
    assert_eq!((bs & ERR, be), (ERR, EARG));
    assert_eq!((gs & ERR, gc), (0, 6));
    let _ = status::thread();
    let _: *const c_void = std::ptr::null();
    ibonl(ud, 0);
}

#[test]
fn another_thread_can_bring_the_srq_a_waiter_waits_for() {
    let _g = serial();
    ibtmo(0, 12); // T3s
    let waiter = std::thread::spawn(|| {
        let t = std::time::Instant::now();
        let mut r: c_short = 7;
        // SAFETY: `r` is writable.
        unsafe { WaitSRQ(0, &mut r) };
        (r, ThreadIbsta(), t.elapsed())
    });
    std::thread::sleep(std::time::Duration::from_millis(50));
    // The same board descriptor, from this thread, while the other one waits on it.
    // SAFETY: valid buffers.
    unsafe { Send(0, 22, b"*SRE 16".as_ptr().cast(), 7, NLEND) };
    assert_eq!(ThreadIbsta() & ERR, 0);
    Trigger(0, 22);
    assert_eq!(ThreadIbsta() & ERR, 0);
    let (r, sta, waited) = waiter.join().unwrap();
    assert_eq!((r, sta & (SRQI | TIMO | ERR)), (1, SRQI));
    assert!(waited < std::time::Duration::from_secs(2), "{waited:?}");
    ibonl(0, 1);
}

fn ask(ud: c_int, opt: c_int) -> c_int {
    let mut v: c_int = -1;
    // SAFETY: `v` is writable.
    let sta = unsafe { ibask(ud, opt, &mut v) };
    assert_eq!(sta & ERR, 0, "ibask {opt:#x}: iberr {}", ThreadIberr());
    v
}

#[test]
fn ibfind_opens_a_named_device_with_its_settings() {
    let _g = serial();
    // bench.toml: name = "voltmeter" at 22, timeout_s = 3, eos = 0x0a, set_reos.
    // SAFETY: a NUL-terminated string.
    let ud = unsafe { ibfind(c"voltmeter".as_ptr()) };
    assert!(ud >= 16, "ibfind(voltmeter): iberr {}", ThreadIberr());
    assert_eq!(ThreadIbsta() & ERR, 0);
    assert_eq!(ask(ud, OPT_PAD), 22);
    assert_eq!(ask(ud, OPT_SAD), 0);
    assert_eq!(ask(ud, OPT_TMO), 12, "T3s");
    assert_eq!(ask(ud, OPT_EOS_RD), REOS);
    assert_eq!(ask(ud, OPT_EOS_CMP), 0);
    assert_eq!(ask(ud, OPT_EOS_WRT), 0);
    assert_eq!(ask(ud, OPT_EOS_CHAR), 0x0a);
    assert_eq!(ask(ud, OPT_EOT), 1);
    assert_eq!(ask(ud, OPT_BNA), 0);
    // A device descriptor: device I/O addresses the instrument; board calls are EARG.
    assert_eq!(write(ud, b"*IDN?\n") & ERR, 0);
    let (sta, answer) = read(ud, &mut [0u8; 64]);
    assert_eq!(
        (sta & (ERR | END), answer.as_slice()),
        (END, &b"SIMULATED,SCPI-DMM,0,1.0\n"[..])
    );
    assert_eq!(ibsic(ud) & ERR, ERR);
    assert_eq!(ThreadIberr(), EARG);
    // ibonl(ud, 1) restores the named settings; ibonl(ud, 0) closes it.
    ibtmo(ud, 5);
    ibonl(ud, 1);
    assert_eq!(ask(ud, OPT_TMO), 12);
    assert_eq!(ibonl(ud, 0) & ERR, 0);
    // Board names still give board descriptors.
    // SAFETY: a NUL-terminated string.
    let b = unsafe { ibfind(c"gpib0".as_ptr()) };
    assert!(b >= 16);
    assert_eq!(ask(b, OPT_SC), 1);
    ibonl(b, 0);
}

/// The thread's values and the globals, which must agree.
fn status_now() -> (c_int, c_int, c_int, c_long) {
    let t = (ThreadIbsta(), ThreadIberr(), ThreadIbcnt(), ThreadIbcntl());
    let g = (
        ibsta.load(Ordering::SeqCst),
        iberr.load(Ordering::SeqCst),
        ibcnt.load(Ordering::SeqCst),
        ibcntl.load(Ordering::SeqCst),
    );
    assert_eq!(t, g, "thread values and globals differ");
    t
}

#[test]
fn every_call_resets_iberr_and_ibcnt_on_entry() {
    let _g = serial();
    let ud = dev(22);
    // An error with a count (EFSO, errno ENOENT in ibcnt), then a successful serial
    // poll: ibrsp reports no count, so iberr and ibcnt are 0 (linux-gpib's
    // general_enter_library).
    // SAFETY: a NUL-terminated path.
    let sta = unsafe { ibrdf(ud, c"/nonexistent-gpib-dir/x".as_ptr()) };
    assert_eq!(sta & ERR, ERR);
    assert_eq!(status_now().1, EFSO);
    assert_eq!(status_now().2, 2);
    let mut stb: c_char = 0;
    // SAFETY: `stb` is writable.
    let sta = unsafe { ibrsp(ud, &mut stb) };
    assert_eq!(sta & ERR, 0);
    let (_, err, cnt, cntl) = status_now();
    assert_eq!((err, cnt, cntl), (0, 0, 0), "after ibrsp");
    // A count, then a setting: ibcnt back to 0.
    assert_eq!(write(ud, b"*IDN?\n") & ERR, 0);
    assert_eq!(status_now().2, 6);
    assert_eq!(ibtmo(ud, 12) & ERR, 0);
    let (_, err, cnt, cntl) = status_now();
    assert_eq!((err, cnt, cntl), (0, 0, 0), "after ibtmo");
    // EARG, then a read: iberr 0, ibcnt the bytes read.
    // SAFETY: a valid buffer.
    assert_eq!(unsafe { ibcmd(ud, b"?".as_ptr().cast(), 1) } & ERR, ERR);
    assert_eq!(status_now().1, EARG);
    let (sta, answer) = read(ud, &mut [0u8; 64]);
    assert_eq!(sta & ERR, 0);
    assert_eq!(status_now().1, 0);
    assert_eq!(status_now().3 as usize, answer.len());
    // ETAB with a count from FindLstn, then TestSRQ (no count).
    let pads = [11u16, 22, NOADDR];
    let mut one = [NOADDR; 1];
    // SAFETY: the list ends with NOADDR; room for one result.
    unsafe { FindLstn(0, pads.as_ptr(), one.as_mut_ptr(), 1) };
    assert_eq!((status_now().1, status_now().2), (ETAB, 1));
    let mut r: c_short = 5;
    // SAFETY: `r` is writable.
    unsafe { TestSRQ(0, &mut r) };
    assert_eq!((status_now().1, status_now().2), (0, 0));
    // An open after a failure.
    assert_eq!(ibdev(0, 31, 0, 11, 1, 0), -1);
    assert_eq!(status_now().1, EARG);
    let ud2 = dev(11);
    assert_eq!((status_now().1, status_now().2), (0, 0));
    // ibwait after a failure.
    ibtmo(ud, 99);
    assert_eq!(status_now().1, EARG);
    ibwait(ud, 0);
    assert_eq!((status_now().1, status_now().2), (0, 0));
    ibonl(ud2, 0);
    ibonl(ud, 0);
}

#[test]
fn board_only_calls_on_a_device_descriptor_are_earg() {
    let _g = serial();
    let ud = dev(22);
    let lines = std::cell::Cell::new(0 as c_short);
    let calls: [(&str, &dyn Fn() -> c_int); 7] = [
        // SAFETY: the cell's value is writable for the call.
        ("iblines", &|| unsafe { iblines(ud, lines.as_ptr()) }),
        // SAFETY: a valid buffer.
        ("ibcmd", &|| unsafe {
            ibcmd(ud, [0x3fu8].as_ptr().cast(), 1)
        }),
        ("ibsre", &|| ibsre(ud, 1)),
        ("ibsic", &|| ibsic(ud)),
        ("ibgts", &|| ibgts(ud, 0)),
        ("ibcac", &|| ibcac(ud, 1)),
        ("ibrsv", &|| ibrsv(ud, 0x41)),
    ];
    for (name, f) in calls {
        let sta = f();
        assert_eq!(
            (sta & ERR, ThreadIberr()),
            (ERR, EARG),
            "{name} on a device"
        );
    }
    // The same calls on the board succeed.
    // SAFETY: the cell's value is writable for the call.
    assert_eq!(unsafe { iblines(0, lines.as_ptr()) } & ERR, 0);
    assert_eq!(ibgts(0, 0) & ERR, 0);
    ibonl(ud, 0);
}

#[test]
fn board_status_shows_atn_while_the_board_asserts_it() {
    let _g = serial();
    let mut lines: c_short = 0;
    // ibcac: the board takes control, ATN asserted.
    assert_eq!(ibcac(0, 1) & (ERR | ATN | CIC), ATN | CIC);
    // SAFETY: `lines` is writable.
    unsafe { iblines(0, &mut lines) };
    assert_eq!(i32::from(lines) & BUS_ATN, BUS_ATN);
    // ibgts: standby, ATN released.
    assert_eq!(ibgts(0, 0) & (ERR | ATN | CIC), CIC);
    // SAFETY: `lines` is writable.
    unsafe { iblines(0, &mut lines) };
    assert_eq!(i32::from(lines) & BUS_ATN, 0);
    // ibcmd leaves ATN asserted; the data transfer that follows releases it.
    let cmd = [0x3fu8, 0x40, 0x20 + 22]; // UNL, MTA0, MLA22
                                         // SAFETY: valid buffers for their lengths.
    unsafe {
        assert_eq!(
            ibcmd(0, cmd.as_ptr().cast(), 3) & (ERR | ATN | TACS),
            ATN | TACS
        );
        assert_eq!(ibwrt(0, b"*OPC?\n".as_ptr().cast(), 6) & (ERR | ATN), 0);
    }
    assert_eq!(ibwait(0, 0) & ATN, 0);
    // Device I/O addresses with ATN and transfers without: ATN is off afterwards, and
    // a device's status never has ATN.
    let ud = dev(22);
    assert_eq!(write(ud, b"*OPC?\n") & ATN, 0);
    assert_eq!(ibwait(0, 0) & ATN, 0);
    let mut stb: c_char = 0;
    // A serial poll ends with SPD and UNT under ATN.
    // SAFETY: `stb` is writable.
    unsafe { ibrsp(ud, &mut stb) };
    assert_eq!(ThreadIbsta() & ATN, 0, "device status");
    assert_eq!(ibwait(0, 0) & ATN, ATN);
    ibgts(0, 0);
    ibonl(ud, 0);
}

// ---------------------------------------------------------------------------------
// Tests that need their own process (a configuration of their own): the parent test
// runs this test binary again on one ignored child test, with GPIB_COMPAT_TEST_CHILD
// and GPIB_SIM_CONFIG set.
// ---------------------------------------------------------------------------------

/// Set in a child process: the library reads GPIB_SIM_CONFIG as a program's would.
pub(crate) const CHILD_ENV: &str = "GPIB_COMPAT_TEST_CHILD";

pub(crate) fn in_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

/// Runs the ignored test `test` in a child process on `config`; a child still running
/// after two minutes (a hang) is killed and fails the test.
fn run_child(test: &str, config: &str) -> std::process::Output {
    run_child_with(test, &[("GPIB_SIM_CONFIG", config)])
}

/// [`run_child`] with exactly the configuration variables `env` (GPIB_SIM_CONFIG and
/// IB_CONFIG are removed first).
pub(crate) fn run_child_with(test: &str, env: &[(&str, &str)]) -> std::process::Output {
    use std::process::{Command, Stdio};
    let config = format!("{env:?}");
    let exe = std::env::current_exe().expect("test binary");
    let mut child = Command::new(exe)
        .args([
            test,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .env_remove("GPIB_SIM_CONFIG")
        .env_remove("IB_CONFIG")
        .envs(env.iter().copied())
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test binary runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{test} on {config}: still running after 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.wait_with_output().expect("the child's output")
}

#[test]
fn a_bad_configuration_is_reported_once_and_every_call_fails() {
    let path = std::env::temp_dir().join(format!("gpib-compat-bad-{}.toml", std::process::id()));
    // A value that used to panic inside the loader (Duration::from_secs_f64).
    std::fs::write(
        &path,
        "name = 'x'\n[[board]]\nname = 'gpib0'\ntimeout_s = 1e300\n",
    )
    .unwrap();
    let bad = path.to_str().unwrap();
    for (config, why) in [
        (bad, "timeout_s = 1e300 is out of range: 0 to 1000 s"),
        // Used to be read without end.
        ("/dev/zero", "/dev/zero is not a regular file"),
        ("/no/such/file.toml", "no such file"),
    ] {
        let out = run_child("tests::child_calls_on_a_bad_configuration", config);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "child failed on {config}:\n{stdout}\n{stderr}"
        );
        assert!(stdout.contains("1 passed"), "{stdout}");
        assert!(!stderr.contains("panicked"), "a panic message: {stderr}");
        assert_eq!(
            stderr.matches("libgpib (simulated bus)").count(),
            1,
            "reported once: {stderr}"
        );
        assert!(stderr.contains(why), "{config}: {stderr}");
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
#[ignore = "run in a child process by a_bad_configuration_is_reported_once_and_every_call_fails"]
fn child_calls_on_a_bad_configuration() {
    if !in_child() {
        return;
    }
    for _ in 0..100 {
        assert_eq!(ibdev(0, 22, 0, 11, 1, 0), -1);
        assert_eq!(ThreadIberr(), ENEB, "ibdev on board 0");
        assert_eq!(write(0, b"x"), ERR);
        assert_eq!(ThreadIberr(), ENEB, "ibwrt on board 0");
        assert_eq!(write(16, b"x"), ERR);
        assert_eq!(ThreadIberr(), EDVR, "ibwrt on descriptor 16");
        // SAFETY: a NUL-terminated string.
        assert_eq!(unsafe { ibfind(c"gpib0".as_ptr()) }, -1);
        assert_eq!(ThreadIberr(), EDVR, "ibfind");
        SendIFC(0);
        assert_eq!(ThreadIberr(), ENEB, "SendIFC");
    }
}

fn env_count(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a count")),
        Err(_) => default,
    }
}

/// Concurrency through the C API: GPIB_STRESS_THREADS threads (default 8), each with
/// its own descriptor to its own SCPI instrument (compat/tests/stress.toml), each
/// storing a token of its own with `DATA` and reading it back with `DATA?`,
/// GPIB_STRESS_ITERS times (default 2,000). Every answer is checked: none may carry
/// another thread's token (crossed) or be missing or wrong (lost).
///
/// A larger run: `GPIB_STRESS_ITERS=10000 cargo test -p gpib-compat --release stress -- --nocapture`.
#[test]
fn stress_threads_each_get_their_own_answers() {
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/stress.toml");
    let t = std::time::Instant::now();
    let out = run_child("tests::child_stress", config);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.find("stress:").map(|k| &l[k..]))
        .collect();
    eprintln!(
        "{} (wall {:.2?} with the child's start)",
        summary.join("\n"),
        t.elapsed()
    );
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert_eq!(summary.len(), 1, "{stdout}");
    assert!(summary[0].contains(" 0 crossed, 0 lost"), "{}", summary[0]);
}

#[test]
#[ignore = "run in a child process by stress_threads_each_get_their_own_answers"]
fn child_stress() {
    use std::sync::atomic::AtomicUsize;
    if !in_child() {
        return;
    }
    let threads = env_count("GPIB_STRESS_THREADS", 8);
    let iters = env_count("GPIB_STRESS_ITERS", 2_000);
    assert!(
        (1..=16).contains(&threads),
        "GPIB_STRESS_THREADS: 1 to 16 (one instrument each)"
    );
    let (checked, crossed, lost) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    let start = std::time::Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let (checked, crossed, lost) = (&checked, &crossed, &lost);
            s.spawn(move || {
                // The instrument at 1 + t, T3s, EOI on writes.
                let ud = ibdev(0, 1 + t as c_int, 0, 12, 1, 0);
                assert!(ud >= 16, "ibdev: iberr {}", ThreadIberr());
                let mut buf = [0u8; 64];
                for i in 0..iters {
                    let token = format!("t{t}i{i}");
                    let block = format!("#{}{}{token}", token.len().to_string().len(), token.len());
                    let ok = write(ud, format!("DATA {block}\n").as_bytes()) & ERR == 0
                        && write(ud, b"DATA?\n") & ERR == 0;
                    let (sta, answer) = if ok {
                        read(ud, &mut buf)
                    } else {
                        (ERR, Vec::new())
                    };
                    checked.fetch_add(1, Ordering::Relaxed);
                    let answer = String::from_utf8_lossy(&answer);
                    let answer = answer.trim_end();
                    if sta & ERR == 0 && answer == block {
                        continue;
                    }
                    // Someone else's token (t<other>i<n>) is a crossed answer.
                    let theirs = answer.find('t').map(|k| &answer[k..]).filter(|a| {
                        a.strip_prefix('t')
                            .and_then(|r| r.split_once('i'))
                            .is_some_and(|(x, y)| {
                                x.parse::<usize>().is_ok() && y.parse::<usize>().is_ok()
                            })
                    });
                    if theirs.is_some() && theirs != Some(token.as_str()) {
                        crossed.fetch_add(1, Ordering::Relaxed);
                    } else {
                        lost.fetch_add(1, Ordering::Relaxed);
                    }
                }
                ibonl(ud, 0);
            });
        }
    });
    let (c, x, l) = (
        checked.into_inner(),
        crossed.into_inner(),
        lost.into_inner(),
    );
    println!(
        "stress: {threads} threads x {iters} iterations: {c} answers checked, {x} crossed, {l} lost, {:.2?}",
        start.elapsed()
    );
    assert_eq!(c, threads * iters);
}

#[test]
fn ibwait_jumps_to_a_timed_measurement_on_the_simulated_clock() {
    let _g = serial();
    let ud = dev(22); // T3s
    write(ud, b"*RST;*CLS;VOLT:APER 0.5;*ESE 1;*SRE 32\n");
    write(ud, b"INIT;*OPC\n");
    // RQS comes from automatic serial polling, off when a board opens.
    assert_eq!(ibconfig(0, OPT_AUTOPOLL, 1) & ERR, 0);
    let host = crate::engine::library().host.clone().unwrap();
    let t0 = host.now();
    let sta = ibwait(ud, RQS | TIMO);
    ibconfig(0, OPT_AUTOPOLL, 0);
    let waited = host.now() - t0;
    assert_eq!(sta & (RQS | TIMO | ERR), RQS, "{sta:#x}");
    // It waited for the measurement on the simulated clock, not for the timeout.
    assert!(
        waited >= std::time::Duration::from_millis(500)
            && waited < std::time::Duration::from_secs(3),
        "{waited:?}"
    );
    let mut stb: c_char = 0;
    // SAFETY: `stb` is writable.
    unsafe { ibrsp(ud, &mut stb) };
    assert_eq!(stb as u8 & 0x60, 0x60, "RQS and ESB");
    write(ud, b"*RST;*CLS;*SRE 0;*ESE 0\n");
    ibonl(ud, 0);
}

// ---------------------------------------------------------------------------------
// IB_CONFIG: linux-gpib's example gpib.conf (gpib/configs/gpib.conf.example).
// ---------------------------------------------------------------------------------

fn example(file: &str) -> String {
    format!("{}/../gpib/configs/{file}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn ib_config_gives_the_boards_and_named_devices_of_a_gpib_conf() {
    let conf = example("gpib.conf.example");
    let sim = example("gpib-conf-sim.toml");
    // With the instruments of the TOML beside it; with IB_CONFIG alone (plain SCPI
    // instruments); and a TOML of instruments only, which takes IB_CONFIG's file.
    let only_instruments = std::env::temp_dir().join(format!(
        "gpib-compat-instruments-{}.toml",
        std::process::id()
    ));
    std::fs::write(
        &only_instruments,
        "name = 'x'\n[[instrument]]\nname = 'voltmeter'\nmodel = 'scpi'\nidn = 'ACME,DMM-7,1001,1.0'\n\
         [[instrument]]\nname = 'scope'\nmodel = 'scpi'\nidn = 'ACME,SCOPE-8,1002,1.0'\n",
    )
    .unwrap();
    let only = only_instruments.to_str().unwrap();
    for (env, idns) in [
        (
            vec![
                ("IB_CONFIG", conf.as_str()),
                ("GPIB_SIM_CONFIG", sim.as_str()),
            ],
            "ACME,DMM-7,1001,1.0|ACME,SCOPE-8,1002,1.0",
        ),
        (
            vec![("IB_CONFIG", conf.as_str())],
            "SIMULATED,SCPI-DMM,0,1.0|SIMULATED,SCPI-DMM,0,1.0",
        ),
        (
            vec![("IB_CONFIG", conf.as_str()), ("GPIB_SIM_CONFIG", only)],
            "ACME,DMM-7,1001,1.0|ACME,SCOPE-8,1002,1.0",
        ),
    ] {
        let out = run_child_with("tests::child_ibfind_on_the_example_gpib_conf", &env);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{env:?}:\n{stdout}\n{stderr}");
        assert!(stdout.contains("1 passed"), "{stdout}");
        assert!(
            stdout.contains(&format!("idns={idns}\n")),
            "{env:?}: {stdout}"
        );
    }
    let _ = std::fs::remove_file(&only_instruments);
    // A gpib.conf with a mistake: reported once, naming the line and key.
    let bad = std::env::temp_dir().join(format!("gpib-compat-bad-{}.conf", std::process::id()));
    std::fs::write(&bad, "interface {\n  minor = 0\n  pad = 31\n}\n").unwrap();
    let out = run_child_with(
        "tests::child_calls_on_a_bad_configuration",
        &[("IB_CONFIG", bad.to_str().unwrap())],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr.matches("libgpib (simulated bus)").count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("line 3, column 9: pad: 31 is out of range"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(&bad);
}

#[test]
#[ignore = "run in a child process by ib_config_gives_the_boards_and_named_devices_of_a_gpib_conf"]
fn child_ibfind_on_the_example_gpib_conf() {
    if !in_child() {
        return;
    }
    // The board: descriptor settings from its interface section.
    // SAFETY: a NUL-terminated string.
    let b = unsafe { ibfind(c"violet".as_ptr()) };
    assert!(b >= 16, "ibfind(violet): iberr {}", ThreadIberr());
    assert_eq!(ask(b, OPT_SC), 1, "a board descriptor");
    assert_eq!(ask(b, OPT_BNA), 0);
    assert_eq!(ask(b, OPT_PAD), 0);
    assert_eq!(ask(b, OPT_TMO), 12, "T3s");
    assert_eq!(ask(b, OPT_EOS_CHAR), 0x0a);
    assert_eq!(ask(b, OPT_EOS_RD), REOS);
    assert_eq!(ask(b, OPT_EOT), 1);
    ibonl(b, 0);
    // Board 0 itself has the same settings.
    assert_eq!(ask(0, OPT_EOS_RD), REOS);
    let mut idns = Vec::new();
    for (name, pad) in [(c"voltmeter", 7), (c"scope", 8)] {
        // SAFETY: a NUL-terminated string.
        let ud = unsafe { ibfind(name.as_ptr()) };
        assert!(ud >= 16, "ibfind({name:?}): iberr {}", ThreadIberr());
        assert_eq!(ask(ud, OPT_PAD), pad);
        assert_eq!(ask(ud, OPT_SAD), 0);
        assert_eq!(ask(ud, OPT_TMO), 12, "linux-gpib's default, T3s");
        assert_eq!(ask(ud, OPT_EOS_CHAR), if pad == 7 { 0x0a } else { 0 });
        assert_eq!(ask(ud, OPT_EOS_RD), 0, "set-reos = no");
        assert_eq!(ask(ud, OPT_EOT), 1);
        assert_eq!(write(ud, b"*IDN?\n") & ERR, 0);
        let (sta, answer) = read(ud, &mut [0u8; 64]);
        assert_eq!(sta & (ERR | END), END);
        idns.push(String::from_utf8_lossy(&answer).trim_end().to_string());
        ibonl(ud, 0);
    }
    println!("idns={}", idns.join("|"));
    // A name not in the file: EDVR, as linux-gpib's ibfind answers.
    // SAFETY: a NUL-terminated string.
    let ud = unsafe { ibfind(c"gpib0".as_ptr()) };
    assert_eq!((ud, ThreadIbsta() & ERR, ThreadIberr()), (-1, ERR, EDVR));
}
