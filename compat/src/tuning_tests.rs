//! The board and device settings a linux-gpib program changes with `ibconfig` act on
//! the model, at the cost the driver would have, and `ibask` reads them back with
//! linux-gpib's board/device split (its `lib/ibconfig.c`, `lib/ibask.c`, `lib/ibRd.c`,
//! `lib/ibWrt.c`). Each library here is its own (a fresh `bench`), so the modelled
//! times are exact figures of the model.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use gpib_sim::backend::tuning::T1Delay;
use gpib_sim::backend::BackendExt as _;
use gpib_sim::sim::timing::{
    byte_cost, call_cost, handshake_ns, BoardTiming, DeviceTiming, Direction,
};
use gpib_sim::sim::{EventKind, SimHost};

use crate::consts::*;
use crate::engine::{self, Desc, Library};

fn host(lib: &Library) -> &SimHost {
    lib.host.as_ref().unwrap()
}

/// Waits `d` on the calling thread's modelled clock (the device is idle after).
fn idle(lib: &Library, d: Duration) {
    host(lib).board(0).unwrap().delay(d);
}

fn open(lib: &Library, pad: i32) -> Arc<Mutex<Desc>> {
    let ud = engine::dev(lib, 0, pad, 0, 11, 1, 0).unwrap();
    lib.get(ud).unwrap()
}

fn ask(lib: &Library, d: &Arc<Mutex<Desc>>, opt: i32) -> i32 {
    engine::ask(lib, &engine::lock_desc(d), opt).unwrap()
}

fn config(lib: &Library, d: &Arc<Mutex<Desc>>, opt: i32, v: i32) -> engine::Res {
    engine::config(lib, &mut engine::lock_desc(d), opt, v)
}

/// The model's time for one read or write call moving `n` bytes at the 1 µs handshake
/// ceiling on board timing `t`: the transfer, or the call's CPU work (DMA set-up and
/// interrupt) when that is longer.
fn call_time(t: &BoardTiming, dir: Direction, n: u64) -> Duration {
    let c = call_cost(t, dir, byte_cost(t, dir, 1000, 0, 0), n);
    c.elapsed.max(c.cpu)
}

/// Modelled time of `f`.
fn timed(lib: &Library, f: impl FnOnce()) -> Duration {
    let t0 = host(lib).now();
    f();
    host(lib).now() - t0
}

#[test]
fn ibconfig_timing_is_the_boards_t1_and_changes_each_byte_the_board_sends() {
    let lib = Library::load("bench");
    let board = lib.get(0).unwrap();
    let other = lib.get(engine::find(&lib, "gpib0").unwrap()).unwrap();
    // The bench board settles 500 ns.
    assert_eq!(ask(&lib, &board, OPT_TIMING), T1_DELAY_500NS);
    let dmm = open(&lib, 22);
    let data = [b'x'; 1000];
    let write = |code: i32| {
        // Set through another board descriptor: T1 is the board's, as in linux-gpib
        // (its ibask asks the driver), so every descriptor of the board sees it.
        config(&lib, &other, OPT_TIMING, code).unwrap();
        assert_eq!(ask(&lib, &board, OPT_TIMING), code);
        idle(&lib, Duration::from_millis(1));
        timed(&lib, || {
            engine::wrt(&lib, &mut engine::lock_desc(&dmm), &data).unwrap();
        })
    };
    let slow = write(T1_DELAY_2000NS);
    let mid = write(T1_DELAY_500NS);
    let fast = write(T1_DELAY_350NS);
    // The board talks, the instrument accepts in 300 ns: a byte takes the board's T1
    // plus 300 ns, never less than the 1 µs handshake ceiling.
    let per = |t1: T1Delay| handshake_ns(t1.nanos(), DeviceTiming::default().accept_ns, false);
    assert_eq!(
        (
            per(T1Delay::Ns2000),
            per(T1Delay::Ns500),
            per(T1Delay::Ns350)
        ),
        (2300, 1000, 1000)
    );
    assert_eq!(slow - fast, Duration::from_nanos(1000 * 1300));
    // 500 ns and 350 ns both hit the ceiling here: the shorter T1 buys nothing.
    assert_eq!(mid, fast);
    // Bad codes are EARG, as in linux-gpib's set_t1_delay.
    for bad in [0, 4] {
        assert_eq!(
            config(&lib, &board, OPT_TIMING, bad).unwrap_err().iberr,
            EARG
        );
    }
    assert_eq!(ask(&lib, &board, OPT_TIMING), T1_DELAY_350NS);
    // A device descriptor has no T1: EARG both ways.
    assert_eq!(config(&lib, &dmm, OPT_TIMING, 1).unwrap_err().iberr, EARG);
    let d = engine::lock_desc(&dmm);
    assert_eq!(engine::ask(&lib, &d, OPT_TIMING).unwrap_err().iberr, EARG);
}

#[test]
fn autopoll_is_off_when_a_board_opens_and_rqs_comes_only_with_it() {
    let lib = Library::load("bench");
    let board = lib.get(0).unwrap();
    let other = lib.get(engine::find(&lib, "gpib0").unwrap()).unwrap();
    // linux-gpib's boards open without automatic serial polling (compat said 1).
    assert_eq!(ask(&lib, &board, OPT_AUTOPOLL), 0);
    let dmm = open(&lib, 22);
    engine::tmo(&mut engine::lock_desc(&dmm), 7).unwrap(); // T10ms
    engine::wrt(&lib, &mut engine::lock_desc(&dmm), b"*SRE 16;*IDN?\n").unwrap();
    // SRQ is asserted (MAV), but without autopoll nobody polls: no RQS, a timeout.
    assert_eq!(lib.status(&engine::lock_desc(&board)) & SRQI, SRQI);
    engine::wait(&lib, &dmm, RQS | TIMO).unwrap();
    let st = lib.status(&engine::lock_desc(&dmm));
    assert_eq!(st & (RQS | TIMO), TIMO);
    // On, through any board descriptor: the board's setting.
    config(&lib, &other, OPT_AUTOPOLL, 1).unwrap();
    assert_eq!(ask(&lib, &board, OPT_AUTOPOLL), 1);
    engine::wait(&lib, &dmm, RQS | TIMO).unwrap();
    assert_eq!(lib.status(&engine::lock_desc(&dmm)) & RQS, RQS);
    // A device descriptor has no autopoll setting.
    assert_eq!(config(&lib, &dmm, OPT_AUTOPOLL, 1).unwrap_err().iberr, EARG);
}

#[test]
fn autopoll_serial_polls_an_srq_storm_on_the_bus_and_the_cpu() {
    let path = std::env::temp_dir().join(format!("gpib-compat-storm-{}.toml", std::process::id()));
    std::fs::write(
        &path,
        "name = \"storm\"\n[[board]]\nname = \"gpib0\"\ntransfer = \"dma\"\n\
         [[board.device]]\naddress = 22\nmodel = \"scpi\"\nsrq_every_us = 100\n",
    )
    .unwrap();
    let lib = Library::load(path.to_str().unwrap());
    std::fs::remove_file(&path).unwrap();
    let board = lib.get(0).unwrap();
    let h = host(&lib);
    let run = |on: i32| {
        config(&lib, &board, OPT_AUTOPOLL, on).unwrap();
        assert_eq!(ask(&lib, &board, OPT_AUTOPOLL), on);
        let (bus0, cpu0) = (h.bus_busy(0), h.cpu());
        idle(&lib, Duration::from_millis(10));
        (h.bus_busy(0) - bus0, h.cpu() - cpu0)
    };
    // Off: the storm costs nothing (SRQ just stays asserted).
    assert_eq!(run(0), (Duration::ZERO, Duration::ZERO));
    // On: the pending request is polled at once, then one every 133 µs: a poll is a
    // 20 µs call, 6 command bytes (UNL MLA SPE TAD SPD UNT) at 2 µs and the status
    // byte at the 1 µs ceiling, 33 µs of bus and CPU; the instrument asks again 100 µs
    // after each.
    let t = h.board_timing(0).unwrap();
    let one = t.call_overhead + t.command_byte * 6 + Duration::from_nanos(1000);
    assert_eq!(one, Duration::from_micros(33));
    let (bus, cpu) = run(1);
    let polls = 1 + 10_000 / 133;
    assert_eq!((bus, cpu), (one * polls, one * polls));
}

/// The command bytes three 5-byte writes to 22 send (1 ms apart: the instrument is idle
/// before each), and their modelled time.
fn three_writes(lib: &Library, dmm: &Arc<Mutex<Desc>>) -> (Vec<Vec<u8>>, Duration) {
    let h = host(lib);
    h.record(64);
    let mut time = Duration::ZERO;
    for _ in 0..3 {
        idle(lib, Duration::from_millis(1));
        time += timed(lib, || {
            engine::wrt(lib, &mut engine::lock_desc(dmm), b"*CLS\n").unwrap();
        });
    }
    let cmds = h
        .stop_recording()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Command(b) => Some(b),
            _ => None,
        })
        .collect();
    (cmds, time)
}

#[test]
fn readdr_changes_nothing_and_unaddr_adds_unl_unt_after_each_write_not_after_clr() {
    let lib = Library::load("bench");
    let dmm = open(&lib, 22);
    let setup = vec![0x40, 0x3F, 0x20 + 22]; // MTA 0, UNL, MLA 22: linux-gpib's order
    let (cmds, plain) = three_writes(&lib, &dmm);
    assert_eq!(cmds, vec![setup.clone(); 3]);
    // linux-gpib addresses the bus for every device call whatever IbcREADDR says
    // ("useless, included for compatibility only"): the same bytes, the same time.
    for v in [1, 0] {
        config(&lib, &dmm, OPT_READDR, v).unwrap();
        assert_eq!(ask(&lib, &dmm, OPT_READDR), v);
        assert_eq!(three_writes(&lib, &dmm), (vec![setup.clone(); 3], plain));
    }
    // IbcUnAddr: UNL UNT after each write, one more command call each.
    config(&lib, &dmm, OPT_UN_ADDR, 1).unwrap();
    assert_eq!(ask(&lib, &dmm, OPT_UN_ADDR), 1);
    let (cmds, unaddr) = three_writes(&lib, &dmm);
    let unl_unt = vec![0x3F, 0x5F];
    assert_eq!(
        cmds,
        [setup.clone(), unl_unt.clone()]
            .iter()
            .cycle()
            .take(6)
            .cloned()
            .collect::<Vec<_>>(),
        "UNL UNT after each write"
    );
    let t = host(&lib).board_timing(0).unwrap();
    assert_eq!(unaddr - plain, (t.call_overhead + t.command_byte * 2) * 3);
    // Not after ibclr (linux-gpib sends them after reads and writes only; compat
    // sent them after SDC, GET and GTL too).
    host(&lib).record(64);
    engine::clr(&lib, &mut engine::lock_desc(&dmm)).unwrap();
    engine::trg(&lib, &mut engine::lock_desc(&dmm)).unwrap();
    let cmds: Vec<Vec<u8>> = host(&lib)
        .stop_recording()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Command(b) => Some(b),
            _ => None,
        })
        .collect();
    assert!(cmds.iter().all(|c| !c.ends_with(&unl_unt)), "{cmds:x?}");
    // Board descriptors have neither (EARG), as in linux-gpib.
    let board = lib.get(0).unwrap();
    assert_eq!(
        config(&lib, &board, OPT_UN_ADDR, 1).unwrap_err().iberr,
        EARG
    );
    assert_eq!(config(&lib, &board, OPT_READDR, 1).unwrap_err().iberr, EARG);
}

/// Reads the instrument's `*IDN?` answer (25 bytes) in reads of `size` bytes; the
/// pieces and the modelled time of the reads.
fn idn_in_pieces(lib: &Library, dmm: &Arc<Mutex<Desc>>, size: usize) -> (Vec<Vec<u8>>, Duration) {
    engine::wrt(lib, &mut engine::lock_desc(dmm), b"*IDN?\n").unwrap();
    idle(lib, Duration::from_millis(1));
    let mut pieces = Vec::new();
    let time = timed(lib, || loop {
        let mut buf = vec![0u8; size];
        let mut d = engine::lock_desc(dmm);
        let n = engine::rd(lib, &mut d, &mut buf).unwrap().unwrap() as usize;
        pieces.push(buf[..n].to_vec());
        if d.end && buf[..n].ends_with(b"\n") {
            break;
        }
    });
    (pieces, time)
}

#[test]
fn eos_modes_decide_where_reads_stop_and_each_read_pays_its_call() {
    let lib = Library::load("bench");
    let dmm = open(&lib, 22);
    let (whole, one_read) = idn_in_pieces(&lib, &dmm, 64);
    assert_eq!(whole, vec![b"SIMULATED,SCPI-DMM,0,1.0\n".to_vec()]);
    // REOS on ',': the reads stop after each comma (END set, as linux-gpib reports it).
    engine::eos(&mut engine::lock_desc(&dmm), REOS | i32::from(b',')).unwrap();
    let (pieces, four_reads) = idn_in_pieces(&lib, &dmm, 64);
    let want: Vec<&[u8]> = vec![b"SIMULATED,", b"SCPI-DMM,", b"0,", b"1.0\n"];
    assert_eq!(pieces, want);
    // Each further read pays its addressing (UNL, MLA 0, MTA 22: one command call) and
    // its own read call.
    let t = host(&lib).board_timing(0).unwrap();
    let setup = t.call_overhead + t.command_byte * 3;
    let read = |n| call_time(&t, Direction::Read, n);
    assert_eq!(
        four_reads - one_read,
        setup * 3 + read(10) + read(9) + read(2) + read(4) - read(25)
    );
    // An EOS byte above 0x7f never reaches linux-gpib's kernel: its library keeps the
    // byte in a `char`, which config_read_eos finds "more than 8 bits" and does not
    // send (lib/ibConf.h, lib/ibEos.c). With or without BIN the reads stop where the
    // board's EOS was set before: at the commas (found by vboard/fidelity: `ibeos s0
    // 5258`, then a read stopped at the ',' an earlier Receive set there, and ran to
    // the end here).
    engine::eos(&mut engine::lock_desc(&dmm), REOS | 0xAC).unwrap();
    assert_eq!(idn_in_pieces(&lib, &dmm, 64).0.len(), 4);
    engine::eos(&mut engine::lock_desc(&dmm), REOS | BIN | 0xAC).unwrap();
    assert_eq!(idn_in_pieces(&lib, &dmm, 64).0.len(), 4);
    // REOS off (BIN alone): one read to the end.
    engine::eos(&mut engine::lock_desc(&dmm), BIN | i32::from(b',')).unwrap();
    assert_eq!(idn_in_pieces(&lib, &dmm, 64), (whole.clone(), one_read));
    // Many small reads: one call per byte, each with its addressing.
    engine::eos(&mut engine::lock_desc(&dmm), 0).unwrap();
    let (bytes, small) = idn_in_pieces(&lib, &dmm, 1);
    assert_eq!(bytes.concat(), whole[0]);
    assert_eq!(small - one_read, setup * 24 + read(1) * 25 - read(25));
}

#[test]
fn xeos_ends_each_eos_byte_with_eoi_in_a_write_call_of_its_own() {
    let lib = Library::load("bench");
    let dmm = open(&lib, 22);
    let writes = |lib: &Library| {
        idle(lib, Duration::from_millis(1));
        host(lib).record(64);
        let time = timed(lib, || {
            engine::wrt(lib, &mut engine::lock_desc(&dmm), b"*CLS\n*CLS\n").unwrap();
        });
        let w: Vec<(usize, bool)> = host(lib)
            .stop_recording()
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::Write { len, eoi, .. } => Some((len, eoi)),
                _ => None,
            })
            .collect();
        (w, time)
    };
    let (plain, t_plain) = writes(&lib);
    assert_eq!(plain, vec![(10, true)]);
    engine::eos(&mut engine::lock_desc(&dmm), XEOS | 0x0a).unwrap();
    let (split, t_split) = writes(&lib);
    assert_eq!(split, vec![(5, true), (5, true)]);
    // Two write calls of 5 bytes instead of one of 10.
    let t = host(&lib).board_timing(0).unwrap();
    let write = |n| call_time(&t, Direction::Write, n);
    assert_eq!(t_split - t_plain, write(5) * 2 - write(10));
    assert!(t_split > t_plain);
}

#[test]
fn what_linux_gpib_refuses_is_refused_the_same_way() {
    let lib = Library::load("bench");
    let board = lib.get(0).unwrap();
    let dmm = open(&lib, 22);
    // lib/ibconfig.c: each of these prints "... not supported" / "not implemented"
    // and fails with ECAP (compat accepted them).
    for (d, opt, v) in [
        (&dmm, OPT_END_BIT_IS_NORMAL, 0),
        (&board, OPT_END_BIT_IS_NORMAL, 0),
        (&board, OPT_CICPROT, 1),
        (&board, OPT_IRQ, 0),
        (&board, OPT_SEND_LLO, 1),
        (&board, OPT_DMA, 0),
    ] {
        assert_eq!(
            config(&lib, d, opt, v).unwrap_err().iberr,
            ECAP,
            "ibconfig({opt:#x}, {v})"
        );
    }
    // What it accepts, and what ibask then says (lib/ibask.c's constants).
    for (d, opt, v, asked) in [
        (&dmm, OPT_END_BIT_IS_NORMAL, 1, 1),
        (&board, OPT_CICPROT, 0, 0),
        (&board, OPT_IRQ, 1, 0),
        (&board, OPT_SEND_LLO, 0, 0),
        (&board, OPT_SPOLL_BIT, 0, 1),
        (&board, OPT_SPOLL_BIT, 1, 1),
    ] {
        assert_eq!(config(&lib, d, opt, v), Ok(None), "ibconfig({opt:#x}, {v})");
        assert_eq!(ask(&lib, d, opt), asked, "ibask({opt:#x})");
    }
}

/// The command bytes `f` puts on the bus, in order (consecutive commands joined: what
/// the instruments see under ATN).
fn commands(lib: &Library, f: impl FnOnce()) -> Vec<u8> {
    let h = host(lib);
    h.record(64);
    f();
    h.stop_recording()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Command(b) => Some(b),
            _ => None,
        })
        .flatten()
        .collect()
}

#[test]
fn ibln_and_findlstn_put_linux_gpibs_bytes_on_the_bus() {
    // lib/ibFindLstn.c: MTA board, then listenerFound's UNL and listen addresses in one
    // command, then UNL UNT; FindLstn sends MTA board even for an empty list. Found by
    // vboard/fidelity comparing the bus: `ibln 0 0 97` sent MTA0 UNL UNT here, MTA0 UNL
    // MLA0 MSA1 UNL UNT there; `FindLstn` of no address sent no MTA0 here.
    let lib = Library::load("bench");
    let board = lib.get(0).unwrap();
    let found = std::cell::Cell::new(None);
    let sent = commands(&lib, || {
        found.set(Some(engine::ln(
            &lib,
            &mut engine::lock_desc(&board),
            0,
            0x61,
        )));
    });
    assert_eq!(found.take(), Some(Ok(false)));
    assert_eq!(sent, [0x40, 0x3F, 0x20, 0x61, 0x3F, 0x5F]);
    let sent = commands(&lib, || {
        let mut d = engine::lock_desc(&board);
        let mut got = Vec::new();
        engine::find_lstn(&lib, &mut d, &[], 4, &mut got).unwrap();
        assert!(got.is_empty());
    });
    assert_eq!(sent, [0x40, 0x3F, 0x5F]);
    // The SCPI instrument at 22 answers its primary address: no secondary probe.
    let sent = commands(&lib, || {
        let mut d = engine::lock_desc(&board);
        let mut got = Vec::new();
        engine::find_lstn(&lib, &mut d, &[22], 4, &mut got).unwrap();
        assert_eq!(got, [22]);
    });
    assert_eq!(sent, [0x40, 0x3F, 0x20 + 22, 0x3F, 0x5F]);
}

#[test]
fn findrqs_polls_within_the_io_timeout_not_the_serial_poll_timeout() {
    // lib/ibRsp.c:184-185: FindRQS's serial polls take conf->settings.usec_timeout (the
    // other polls the serial poll timeout). Found by vboard/fidelity comparing the bus:
    // a poll of nobody timed out after 30 ms there, 1 s here.
    let lib = Library::load("bench");
    let board = lib.get(0).unwrap();
    config(&lib, &board, OPT_TMO, 8).unwrap(); // T30ms; its serial poll timeout is 1 s
    let nobody = gpib_sim::Address::new(5, None).unwrap();
    let t = timed(&lib, || {
        let r = engine::find_rqs(&lib, &mut engine::lock_desc(&board), &[nobody]);
        assert_eq!(r.map_err(|f| f.iberr), Err(EABO));
    });
    assert!(
        t >= Duration::from_millis(30) && t < Duration::from_millis(40),
        "{t:?}"
    );
}
