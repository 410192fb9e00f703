//! Random call sequences into `libgpib.so.0`'s entry points (compat/src/ffi.rs), called
//! directly through the rlib: ibdev, ibfind, ibonl, ibwrt, ibrd, ibrda, ibwrta, ibcmd,
//! ibclr, ibtrg, ibloc, ibrsp, ibtmo, ibeos, ibeot, ibpad, ibsad, ibask, ibconfig, ibln,
//! iblines, ibsic, ibsre, ibwait (a satisfiable mask or TIMO with a 10 us timeout),
//! ibstop, Send, Receive, DevClear.
//!
//! Descriptors come from a small set (boards 0..=2, the ones this input opened, 15, 16,
//! -1, 4096, an arbitrary one); every pointer is a valid Rust buffer of the stated size
//! (or null with count 0). Every descriptor opened is closed with `ibonl(ud, 0)` at the
//! end of the input.
//!
//! Asserts: no panic (libfuzzer-sys aborts on any panic, including the ones the library
//! catches with `catch_unwind` and turns into EDVR: a panic inside is a defect even
//! when the caller sees an error); each call's return value is the thread's `ibsta`;
//! `ibcnt` after ibrd/ibwrt/ibcmd/Send/Receive never exceeds the count asked for
//! when the call succeeded (after an error it can be errno, or the previous call's count).
#![no_main]

use std::ffi::{c_char, c_int, c_long, c_short, c_void, CString};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

// Links the library's objects (its extern "C" functions are what we call).
extern crate compat;

#[allow(non_snake_case)]
extern "C" {
    fn ThreadIbsta() -> c_int;
    fn ThreadIbcntl() -> c_long;
    fn ThreadIberr() -> c_int;
    fn ibdev(board: c_int, pad: c_int, sad: c_int, timo: c_int, send_eoi: c_int, eos: c_int) -> c_int;
    fn ibfind(name: *const c_char) -> c_int;
    fn ibonl(ud: c_int, onl: c_int) -> c_int;
    fn ibrd(ud: c_int, buf: *mut c_void, count: c_long) -> c_int;
    fn ibrda(ud: c_int, buf: *mut c_void, count: c_long) -> c_int;
    fn ibwrt(ud: c_int, buf: *const c_void, count: c_long) -> c_int;
    fn ibwrta(ud: c_int, buf: *const c_void, count: c_long) -> c_int;
    fn ibcmd(ud: c_int, buf: *const c_void, count: c_long) -> c_int;
    fn ibclr(ud: c_int) -> c_int;
    fn ibtrg(ud: c_int) -> c_int;
    fn ibloc(ud: c_int) -> c_int;
    fn ibrsp(ud: c_int, spr: *mut c_char) -> c_int;
    fn ibtmo(ud: c_int, v: c_int) -> c_int;
    fn ibeos(ud: c_int, v: c_int) -> c_int;
    fn ibeot(ud: c_int, v: c_int) -> c_int;
    fn ibpad(ud: c_int, v: c_int) -> c_int;
    fn ibsad(ud: c_int, v: c_int) -> c_int;
    fn ibask(ud: c_int, option: c_int, value: *mut c_int) -> c_int;
    fn ibconfig(ud: c_int, option: c_int, value: c_int) -> c_int;
    fn ibln(ud: c_int, pad: c_int, sad: c_int, found: *mut c_short) -> c_int;
    fn iblines(ud: c_int, lines: *mut c_short) -> c_int;
    fn ibsic(ud: c_int) -> c_int;
    fn ibsre(ud: c_int, v: c_int) -> c_int;
    fn ibwait(ud: c_int, mask: c_int) -> c_int;
    fn ibstop(ud: c_int) -> c_int;
    fn Send(board: c_int, address: u16, buf: *const c_void, count: c_long, eot: c_int);
    fn Receive(board: c_int, address: u16, buf: *mut c_void, count: c_long, termination: c_int);
    fn DevClear(board: c_int, address: u16);
}

const ERR: c_int = 0x8000;
const TIMO: c_int = 0x4000;
const CMPL: c_int = 0x0100;
const T10US: c_int = 1;

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Ud {
    Board(u8),
    Opened(u8),
    Fifteen,
    Sixteen,
    Minus1,
    Big,
    Any(i32),
}

#[derive(Arbitrary, Debug)]
enum Call {
    Dev { board: i8, pad: i8, sad: i16, timo: i8, send_eoi: i8, eos: i16 },
    DevKnown { pad_is_scpi: bool },
    Find(Vec<u8>),
    FindBoard(u8),
    Onl(Ud, i8),
    Wrt(Ud, Vec<u8>),
    WrtKnown(Ud, u8),
    Wrta(Ud, Vec<u8>),
    Rd(Ud, u16),
    Rda(Ud, u16),
    Cmd(Ud, Vec<u8>),
    Clr(Ud),
    Trg(Ud),
    Loc(Ud),
    Rsp(Ud),
    Tmo(Ud, i8),
    Eos(Ud, i32),
    Eot(Ud, i8),
    Pad(Ud, i8),
    Sad(Ud, i16),
    Ask(Ud, u8),
    Config(Ud, u8, i32),
    Ln(Ud, i8, i16),
    Lines(Ud),
    Sic(Ud),
    Sre(Ud, bool),
    Wait(Ud, u16),
    Stop(Ud),
    Send4882(Ud, u16, Vec<u8>, i8),
    Receive4882(Ud, u16, u16, i16),
    DevClear4882(Ud, u16),
}

const KNOWN: &[&[u8]] = &[
    b"*IDN?\n", b"BLOCK? 10\n", b"DATA #15hello\n", b"DATA?\n", b"WAV:POIN 10\n",
    b"WAV:DATA?\n", b"*SRE 16\n", b"*OPC\n", b"NEW 10;NEW?", b"RBLD 1,9", b"WBLD 1,4,#Iabcdefgh",
    b"ERR?", b"ABRT;DISA;",
];

fn resolve(ud: Ud, opened: &[c_int]) -> c_int {
    match ud {
        Ud::Board(b) => c_int::from(b % 3),
        Ud::Opened(i) => opened.get(usize::from(i) % opened.len().max(1)).copied().unwrap_or(16),
        Ud::Fifteen => 15,
        Ud::Sixteen => 16,
        Ud::Minus1 => -1,
        Ud::Big => 4096,
        Ud::Any(v) => v,
    }
}

fn check(ret: c_int, what: &str) {
    // SAFETY: plain status getters.
    let sta = unsafe { ThreadIbsta() };
    assert_eq!(ret, sta, "{what}: returned 0x{ret:04X} but ibsta is 0x{sta:04X}");
}

/// After an error ibcnt need not be a byte count: linux-gpib puts errno there after
/// EDVR/EFSO, and errors that move no data leave the previous call's value.
fn count_is_errno() -> bool {
    // SAFETY: plain status getters.
    unsafe { ThreadIbsta() & ERR != 0 && (ThreadIberr() >= 0) }
}

fn check_count(ret: c_int, asked: usize, what: &str) {
    check(ret, what);
    if count_is_errno() {
        return;
    }
    // SAFETY: plain status getter.
    let cnt = unsafe { ThreadIbcntl() };
    assert!(cnt >= 0 && cnt as usize <= asked, "{what}: ibcnt {cnt} for {asked} byte(s) asked");
}

fn track(ud: c_int, opened: &mut Vec<c_int>) {
    if ud >= 16 && !opened.contains(&ud) {
        opened.push(ud);
    }
}

fuzz_target!(|calls: Vec<Call>| {
    let mut opened: Vec<c_int> = Vec::new();
    let mut waits = 0;
    for call in calls.iter().take(32) {
        // SAFETY (all calls below): every pointer is a live Rust buffer of at least the
        // count passed, or null with count 0; strings are NUL-terminated CStrings.
        unsafe {
            match call {
                Call::Dev { board, pad, sad, timo, send_eoi, eos } => {
                    if opened.len() < 8 {
                        let ud = ibdev(c_int::from(*board), c_int::from(*pad), c_int::from(*sad), c_int::from(*timo), c_int::from(*send_eoi), c_int::from(*eos));
                        track(ud, &mut opened);
                    }
                }
                Call::DevKnown { pad_is_scpi } => {
                    if opened.len() < 8 {
                        let pad = if *pad_is_scpi { 22 } else { 11 };
                        let ud = ibdev(0, pad, 0, 11, 1, 0);
                        assert!(ud >= 16, "ibdev(0, {pad}, 0, T1s, 1, 0) failed: {ud}");
                        track(ud, &mut opened);
                    }
                }
                Call::Find(name) => {
                    if opened.len() < 8 {
                        let name: Vec<u8> = name.iter().copied().filter(|&b| b != 0).take(64).collect();
                        let c = CString::new(name).unwrap();
                        let ud = ibfind(c.as_ptr());
                        track(ud, &mut opened);
                    }
                }
                Call::FindBoard(i) => {
                    let c = CString::new(format!("gpib{}", i % 3)).unwrap();
                    let ud = ibfind(c.as_ptr());
                    track(ud, &mut opened);
                }
                Call::Onl(ud, v) => {
                    let u = resolve(*ud, &opened);
                    check(ibonl(u, c_int::from(*v)), "ibonl");
                    if *v == 0 {
                        opened.retain(|&o| o != u);
                    }
                }
                Call::Wrt(ud, data) => {
                    let r = ibwrt(resolve(*ud, &opened), data.as_ptr().cast(), data.len() as c_long);
                    check_count(r, data.len(), "ibwrt");
                }
                Call::WrtKnown(ud, i) => {
                    let data = KNOWN[usize::from(*i) % KNOWN.len()];
                    let r = ibwrt(resolve(*ud, &opened), data.as_ptr().cast(), data.len() as c_long);
                    check_count(r, data.len(), "ibwrt");
                }
                Call::Wrta(ud, data) => {
                    let r = ibwrta(resolve(*ud, &opened), data.as_ptr().cast(), data.len() as c_long);
                    check(r, "ibwrta");
                }
                Call::Rd(ud, n) => {
                    let mut buf = vec![0u8; usize::from(n % 4096)];
                    let r = ibrd(resolve(*ud, &opened), buf.as_mut_ptr().cast(), buf.len() as c_long);
                    check_count(r, buf.len(), "ibrd");
                }
                Call::Rda(ud, n) => {
                    // The simulated ibrda completes before it returns (see ffi.rs), so a
                    // buffer that lives through the call is enough.
                    let mut buf = vec![0u8; usize::from(n % 4096)];
                    let r = ibrda(resolve(*ud, &opened), buf.as_mut_ptr().cast(), buf.len() as c_long);
                    check(r, "ibrda");
                }
                Call::Cmd(ud, data) => {
                    let data = &data[..data.len().min(16)];
                    let r = ibcmd(resolve(*ud, &opened), data.as_ptr().cast(), data.len() as c_long);
                    check_count(r, data.len(), "ibcmd");
                }
                Call::Clr(ud) => check(ibclr(resolve(*ud, &opened)), "ibclr"),
                Call::Trg(ud) => check(ibtrg(resolve(*ud, &opened)), "ibtrg"),
                Call::Loc(ud) => check(ibloc(resolve(*ud, &opened)), "ibloc"),
                Call::Rsp(ud) => {
                    let mut b: c_char = 0;
                    check(ibrsp(resolve(*ud, &opened), &mut b), "ibrsp");
                }
                Call::Tmo(ud, v) => check(ibtmo(resolve(*ud, &opened), c_int::from(*v)), "ibtmo"),
                Call::Eos(ud, v) => check(ibeos(resolve(*ud, &opened), *v), "ibeos"),
                Call::Eot(ud, v) => check(ibeot(resolve(*ud, &opened), c_int::from(*v)), "ibeot"),
                Call::Pad(ud, v) => check(ibpad(resolve(*ud, &opened), c_int::from(*v)), "ibpad"),
                Call::Sad(ud, v) => check(ibsad(resolve(*ud, &opened), c_int::from(*v)), "ibsad"),
                Call::Ask(ud, opt) => {
                    let mut v: c_int = 0;
                    check(ibask(resolve(*ud, &opened), c_int::from(*opt), &mut v), "ibask");
                }
                Call::Config(ud, opt, v) => {
                    // 0x3 (IbcTMO) and friends are fine; any option, any value.
                    check(ibconfig(resolve(*ud, &opened), c_int::from(*opt), *v), "ibconfig");
                }
                Call::Ln(ud, pad, sad) => {
                    let mut found: c_short = 0;
                    check(ibln(resolve(*ud, &opened), c_int::from(*pad), c_int::from(*sad), &mut found), "ibln");
                }
                Call::Lines(ud) => {
                    let mut l: c_short = 0;
                    check(iblines(resolve(*ud, &opened), &mut l), "iblines");
                }
                Call::Sic(ud) => check(ibsic(resolve(*ud, &opened)), "ibsic"),
                Call::Sre(ud, v) => check(ibsre(resolve(*ud, &opened), c_int::from(*v)), "ibsre"),
                Call::Wait(ud, mask) => {
                    // ibwait waits in wall time: at most two per input, always with TIMO
                    // and a 10 us timeout, or a mask of CMPL alone.
                    if waits < 2 {
                        waits += 1;
                        let u = resolve(*ud, &opened);
                        let mask = if mask & 1 == 0 { CMPL } else { (c_int::from(*mask) & 0xffff) | TIMO };
                        ibtmo(u, T10US);
                        let r = ibwait(u, mask);
                        check(r, "ibwait");
                    }
                }
                Call::Stop(ud) => check(ibstop(resolve(*ud, &opened)), "ibstop"),
                Call::Send4882(ud, addr, data, eot) => {
                    Send(resolve(*ud, &opened), *addr, data.as_ptr().cast(), data.len() as c_long, c_int::from(*eot));
                    let cnt = ThreadIbcntl();
                    assert!(cnt >= 0 && cnt as usize <= data.len() || count_is_errno(), "Send: ibcnt {cnt} of {}", data.len());
                }
                Call::Receive4882(ud, addr, n, term) => {
                    let mut buf = vec![0u8; usize::from(n % 4096)];
                    Receive(resolve(*ud, &opened), *addr, buf.as_mut_ptr().cast(), buf.len() as c_long, c_int::from(*term));
                    let cnt = ThreadIbcntl();
                    assert!(cnt >= 0 && cnt as usize <= buf.len() || count_is_errno(), "Receive: ibcnt {cnt} of {}", buf.len());
                }
                Call::DevClear4882(ud, addr) => DevClear(resolve(*ud, &opened), *addr),
            }
        }
    }
    // Leave the library as we found it: close what we opened, reset the boards' settings,
    // clear the bus and the two bench instruments' queues.
    // SAFETY: plain calls with integer arguments.
    unsafe {
        for ud in opened {
            ibstop(ud);
            ibonl(ud, 0);
        }
        for b in 0..3 {
            ibonl(b, 1);
        }
        ibsic(0);
        DevClear(0, 11);
        DevClear(0, 22);
    }
});
