//! Regression tests for defects found by hostile input (the reliability issue, items
//! numbered as filed). Each failed before its fix: a hang shows as a watchdog failure,
//! not as a stuck test run.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpib::block::BlockFormat;
use gpib::sim::instruments::Hp3565;
use gpib::sim::timing::{BoardTiming, DeviceTiming};
use gpib::sim::{DeviceIo, Instrument, SimHost};
use gpib::{Address, Bus, ErrorKind, PrimaryAddress, Timeout};
use gpib_suite::{on_every_backend, Fixture, HP3565, SCPI};

/// Runs `f` on a thread and fails (instead of hanging the run) if it takes longer than
/// `limit` of wall time. The limit is a hang detector, far above any normal run.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(_) => panic!("operation hung: no answer within {limit:?} of wall time"),
    }
}

/// Reads the answer 2 bytes at a time, as C programs read `#` and the digit count first.
fn read_in_pieces(dev: &gpib::Device, piece: usize) -> Vec<u8> {
    let mut all = Vec::new();
    loop {
        let mut buf = vec![0u8; piece];
        let st = dev.read(&mut buf).unwrap();
        all.extend_from_slice(&buf[..st.count]);
        if st.end == gpib::ReadEnd::Eoi {
            return all;
        }
        assert!(all.len() < 1 << 20, "no END after {} bytes", all.len());
    }
}

on_every_backend! {
    // Item 1: `DATA #(18446744073709551593)x` + NL without EOI looped forever in the
    // SCPI instrument's message scanner (the length wrapped to 0), holding the host.
    fn huge_block_length_without_eoi_does_not_hang(fx: Fixture) {
        let bus = fx.bus.clone();
        let errors = within(Duration::from_secs(60), move || {
            let dmm = bus.device(SCPI).unwrap();
            dmm.write_partial(b"DATA #(18446744073709551593)x\n").unwrap();
            // The instrument still answers, and says what was wrong.
            assert_eq!(dmm.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
            let mut errors = Vec::new();
            loop {
                let e = dmm.query("SYST:ERR?").unwrap();
                if e.starts_with("0,") {
                    return errors;
                }
                errors.push(e);
            }
        });
        assert!(
            errors.iter().any(|e| e.starts_with("-161") || e.starts_with("-223")),
            "{errors:?}"
        );
    }

    // Item 2: an empty block body read in 2-byte pieces lost the bytes queued before it.
    fn zero_length_blocks_read_in_pieces(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        dmm.write_str("BLOCK? 0").unwrap();
        assert_eq!(read_in_pieces(&dmm, 2), b"#10\n");
        dmm.write_str("*RST;DATA?").unwrap();
        assert_eq!(read_in_pieces(&dmm, 2), b"#10\n");
        dmm.write_str("WAV:POIN 0;WAV:DATA?").unwrap();
        assert_eq!(read_in_pieces(&dmm, 2), b"#10\n");
        dmm.write_str("BLOCK? 0").unwrap();
        assert_eq!(read_in_pieces(&dmm, 1), b"#10\n");
        // And the typed reader agrees.
        assert!(dmm.query_block("BLOCK? 0").unwrap().is_empty());
    }

    // Item 11: sizes that overflow are refused, and the instrument stays usable.
    fn overflowing_sizes_are_refused(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        dmm.write_str("*CLS;WAV:POIN 4611686018427387905").unwrap();
        assert!(dmm.query("SYST:ERR?").unwrap().starts_with("-222"));
        assert_eq!(dmm.query("WAV:POIN?").unwrap(), "1000");
        let w: Vec<f32> = dmm.query_values("WAV:DATA?", gpib::block::Endian::Big).unwrap();
        assert_eq!(w.len(), 1000);
        let hp = fx.bus.device(HP3565).unwrap();
        let id: usize = hp.query("NEW 4;NEW?").unwrap().parse().unwrap();
        hp.write_str(&format!("RBLD {id},18446744073709551615")).unwrap();
        hp.write_str(&format!("RBLD {id},9223372036854775807")).unwrap();
        assert_eq!(hp.query("ERR?").unwrap(), "2", "both RBLD refused");
    }

    // Item 14: a definite block shorter than announced, or followed by stray bytes, is
    // an error, and nothing is stored.
    fn short_or_overlong_blocks_are_refused(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        dmm.write_str("*CLS;DATA #13abc").unwrap();
        assert_eq!(dmm.query("DATA:LEN?").unwrap(), "3");
        // 2 of 5 announced bytes, then END.
        dmm.write(b"DATA #15ab").unwrap();
        assert!(dmm.query("SYST:ERR?").unwrap().starts_with("-161"));
        assert_eq!(dmm.query("DATA:LEN?").unwrap(), "3", "a short block is not stored");
        // Stray bytes after the body.
        dmm.write(b"DATA #12xyJUNK\n").unwrap();
        assert!(dmm.query("SYST:ERR?").unwrap().starts_with("-161"));
        assert_eq!(dmm.query("DATA:LEN?").unwrap(), "3");
        // Two messages in one write without EOI: each runs as its NL arrives; nothing
        // stays queued to be glued to the next message.
        dmm.write_partial(b"DATA #12xy\nDATA:LEN?\n").unwrap();
        assert_eq!(dmm.read_string().unwrap(), "2");
        assert_eq!(dmm.query("SYST:ERR?").unwrap(), "0,\"No error\"");
    }
}

/// An instrument that answers any message with scripted bytes (END on the last).
struct Scripted {
    answer: Arc<[u8]>,
    end: bool,
}

impl Instrument for Scripted {
    fn model(&self) -> &str {
        "SCRIPTED"
    }
    fn listen(&mut self, _data: &[u8], end: bool, io: &mut DeviceIo<'_>) {
        if end {
            let n = self.answer.len();
            io.output.push_shared(self.answer.clone(), 0..n);
            if self.end {
                io.output.finish_message();
            }
        }
    }
}

fn scripted_host(answer: Vec<u8>, end: bool) -> (SimHost, Bus) {
    let host = SimHost::new("scripted");
    let b = host.add_board(
        "gpib0",
        PrimaryAddress::try_from(0u8).unwrap(),
        BoardTiming::default(),
        Duration::from_secs(100).into(),
    );
    let at = Address::try_from(5u8).unwrap();
    host.attach(
        b,
        at,
        Box::new(Scripted {
            answer: answer.into(),
            end,
        }),
        DeviceTiming::default(),
    )
    .unwrap();
    let bus = Bus::new(host.board(b).unwrap());
    (host, bus)
}

// Item 3: `#0` blocks over 1 MiB had their final NL checked at byte 1 MiB-1.
#[test]
fn indefinite_blocks_over_one_mebibyte() {
    let body: Vec<u8> = (0..2usize << 20).map(|i| (i % 251) as u8).collect();
    let mut good = b"#0".to_vec();
    good.extend_from_slice(&body);
    good.push(b'\n');
    let (_h, bus) = scripted_host(good, true);
    let dev = bus.device(5).unwrap();
    let got = dev.query_block("SEND").unwrap();
    assert_eq!(got.len(), body.len());
    assert!(got == body);
    let v: Vec<u8> = dev.query_values("SEND", gpib::block::Endian::Big).unwrap();
    assert_eq!(v.len(), body.len());

    // NL at byte 1 MiB-1 of the body, not at its end: malformed, not accepted short.
    let mut bad = b"#0".to_vec();
    let mut b2 = body.clone();
    b2[(1 << 20) - 1] = b'\n';
    bad.extend_from_slice(&b2);
    bad.push(b'x');
    let (_h, bus) = scripted_host(bad, true);
    let e = bus.device(5).unwrap().query_block("SEND").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MalformedBlock, "{e}");
}

// Item 15: a `#0` header then silence (no END) is MalformedBlock, under 11 bytes too.
#[test]
fn short_indefinite_block_without_end_is_malformed() {
    for answer in [&b"#0ab"[..], b"#0", b"#0abcdefghijklmn", b"#Ixy"] {
        let (_h, bus) = scripted_host(answer.to_vec(), false);
        let mut dev = bus.device(5).unwrap();
        dev.set_timeout(Some(Duration::from_millis(50).into()));
        let e = dev.query_block("SEND").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MalformedBlock, "{answer:?}: {e}");
        assert_eq!(e.transferred(), Some(answer.len()), "{answer:?}: {e}");
    }
}

// Found by the block_read fuzz target: a short definite block and its NL without END
// (`#15hello` NL, under the 11-byte header read) timed out; longer ones were accepted.
#[test]
fn short_definite_block_with_nl_and_no_end() {
    for answer in [&b"#15hello\n"[..], b"#10\n", b"#11x\n", b"#14abcd\n"] {
        let (_h, bus) = scripted_host(answer.to_vec(), false);
        let mut dev = bus.device(5).unwrap();
        dev.set_timeout(Some(Duration::from_millis(50).into()));
        let body = dev
            .query_block("SEND")
            .unwrap_or_else(|e| panic!("{answer:?}: {e}"));
        assert_eq!(
            body,
            &answer[2 + usize::from(answer[1] - b'0')..answer.len() - 1]
        );
    }
}

// Item 4: two `Bus` handles on one simulated board share one addressing state and one
// lock: with one thread a write meant for one device landed in the other. The handles
// come from the one place the board is opened, the manager (issue 31 item 1).
#[test]
fn two_bus_handles_on_one_board_share_addressing() {
    let mut rm = gpib::ResourceManager::with_host(gpib::sim::bench()).unwrap();
    let a = rm.open_interface("GPIB0::INTFC").unwrap();
    let b = rm.open_interface("GPIB0::INTFC").unwrap();
    let dmm_a = a.device(SCPI).unwrap();
    let hp_b = b.device(HP3565).unwrap();
    dmm_a.write_str("DATA #13AAA").unwrap();
    // b addresses the HP3565; a's cached addressing of 22 is now stale.
    assert!(hp_b.query("NEW 2;NEW?").is_ok());
    dmm_a.write_str("DATA #13CCC").unwrap();
    assert_eq!(dmm_a.query_block("DATA?").unwrap(), b"CCC");
    assert_eq!(
        hp_b.query("ERR?").unwrap(),
        "0",
        "nothing meant for 22 reached 11"
    );
}

#[test]
fn two_bus_handles_from_two_threads_never_cross() {
    let mut rm = gpib::ResourceManager::with_host(gpib::sim::bench()).unwrap();
    let iterations: usize = std::env::var("GPIB_STRESS_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let mut threads = Vec::new();
    for t in 0..2u32 {
        let bus = rm.open_interface("GPIB0::INTFC").unwrap();
        threads.push(std::thread::spawn(move || {
            let dmm = bus.device(SCPI).unwrap();
            let hp = bus.device(HP3565).unwrap();
            let (mut crossed, mut lost) = (0, 0);
            for i in 0..iterations {
                if t == 0 {
                    let token = format!("{t}-{i}");
                    let ok = dmm
                        .write_block(b"DATA ", BlockFormat::Definite, token.as_bytes())
                        .and_then(|_| dmm.query_block("DATA?"));
                    match ok {
                        Ok(back) if back == token.as_bytes() => {}
                        Ok(_) => crossed += 1,
                        Err(_) => lost += 1,
                    }
                } else {
                    match hp.query("ERR?") {
                        Ok(a) if a == "0" => {}
                        Ok(_) => crossed += 1,
                        Err(_) => lost += 1,
                    }
                }
            }
            (crossed, lost)
        }));
    }
    for t in threads {
        assert_eq!(t.join().unwrap(), (0, 0), "(crossed, lost)");
    }
}

// Item 5: waiting for SRQ must not hold the bus: another thread's command that makes
// the device request service gets through while the first thread waits. (On a wall
// clock; the simulator in real-time mode waits in wall time too.)
#[test]
fn waiting_for_srq_does_not_hold_the_bus() {
    let host = gpib::sim::bench();
    host.set_realtime(true);
    let bus = Bus::new(host.board(0).unwrap());
    let other = bus.clone();
    let t0 = Instant::now();
    let helper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        let dmm = other.device(SCPI).unwrap();
        dmm.write_str("*SRE 16;*IDN?").unwrap();
        t0.elapsed()
    });
    let (who, stb) = bus
        .wait_for_service(&[Fixture::addr(SCPI)], Duration::from_secs(3).into())
        .expect("the SRQ raised 100 ms in is seen");
    let sent_after = helper.join().unwrap();
    assert_eq!(who, Fixture::addr(SCPI));
    assert!(stb.rqs() && stb.mav(), "{stb}");
    assert!(
        sent_after < Duration::from_secs(3),
        "the other thread was blocked for the whole wait ({sent_after:?})"
    );
}

// Item 8: non-ASCII resource strings panicked (byte slicing inside a character).
#[test]
fn non_ascii_resource_strings_are_errors() {
    for text in [
        "GPI€::22::INSTR",
        "ＧＰＩＢ0::22::INSTR",
        "€",
        "GPIB€::1",
        "GPIB0::€::INSTR",
        "é",
    ] {
        let e = text.parse::<gpib::Resource>().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidResource, "{text}");
    }
}

// Item 9: huge durations saturate virtual time instead of overflowing it.
#[test]
fn huge_durations_saturate_virtual_time() {
    let fx = Fixture::sim_bench();
    let mut dmm = fx.bus.device(SCPI).unwrap();
    dmm.set_timeout(Some(Duration::MAX.into()));
    dmm.write_str("*IDN?").unwrap();
    dmm.read_to_end().unwrap();
    // A silent device with a timeout of Duration::MAX: the read times out at the end
    // of virtual time, without overflow.
    let e = dmm.read_to_end().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    let fx = Fixture::sim_bench();
    let half = Duration::from_secs(u64::MAX / 2);
    fx.bus.delay(half);
    fx.bus.delay(half);
    fx.bus.delay(half);
    // Virtual time ends at 2^64 - 1 ns (about 584 years; docs/simulator.md), where the
    // bus, the CPUs and the callers' clocks all stop.
    assert_eq!(fx.bus.now(), Duration::from_nanos(u64::MAX));
    // The bus still works at the end of time.
    let dmm = fx.bus.device(SCPI).unwrap();
    assert_eq!(dmm.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
}

// Item 14: the HP3565's input buffer is bounded: unterminated text is counted as an
// error, not stored without limit.
#[test]
fn hp3565_input_is_bounded() {
    let fx = Fixture::sim_bench();
    let hp = fx.bus.device(HP3565).unwrap();
    let chunk = vec![b'A'; 1 << 20];
    for _ in 0..8 {
        hp.write_partial(&chunk).unwrap();
    }
    let pending = fx
        .host
        .as_ref()
        .unwrap()
        .with_instrument_as::<Hp3565, _>(0, Fixture::addr(HP3565), |h| h.pending_input())
        .unwrap()
        .unwrap();
    assert!(
        pending <= gpib::sim::instruments::hp3565::MAX_INPUT,
        "{pending} bytes of command text held"
    );
    hp.write(b";").unwrap();
    assert_eq!(
        hp.query("ERR?").unwrap(),
        "1",
        "the overlong command is one error"
    );
    assert_eq!(hp.query("NEW 2;NEW?").unwrap(), "1");
}

// Item 15: a timeout of 0 means "none": a failure never says "timed out after 0ns".
#[test]
fn no_timeout_failures_do_not_claim_a_zero_timeout() {
    let host = gpib::sim::builtin("hp9000-350").unwrap();
    let bus = Bus::new(host.board_named("hpib7").unwrap());
    assert_eq!(bus.timeout(), Timeout::Never);
    let hp = bus.device(11).unwrap();
    let e = hp.read_to_end().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    let text = e.to_string();
    assert!(!text.contains("after 0ns"), "{text}");
    assert!(text.contains("no timeout"), "{text}");
}

// Issue 31 item 3: a device's zero timeout is "do not wait", not "no timeout" (it was
// the same `Some(Duration::ZERO)`), on the bus and on linux-gpib's steps alike.
#[test]
fn a_zero_device_timeout_gives_up_at_once() {
    let fx = Fixture::sim_bench();
    let mut dmm = fx.bus.device(SCPI).unwrap();
    dmm.set_timeout(Some(Timeout::After(Duration::ZERO)));
    let t0 = fx.bus.now();
    let e = dmm.read_to_end().unwrap_err();
    assert!(
        matches!(e, gpib::Error::Timeout { timeout: Timeout::After(d), .. } if d.is_zero()),
        "{e:?}"
    );
    assert!(!e.to_string().contains("forever"), "{e}");
    assert!(
        fx.bus.now() - t0 < Duration::from_secs(1),
        "{:?}",
        fx.bus.now() - t0
    );
    assert_eq!(
        Timeout::After(Duration::ZERO).linux_gpib_code(),
        1,
        "T10us, not TNONE"
    );
    dmm.set_timeout(Some(Timeout::Never));
    let e = dmm.read_to_end().unwrap_err();
    assert!(e.to_string().contains("would wait forever"), "{e}");
}

// Item 18: in real-time mode a failed operation takes its modelled time too (it
// returned at once although the virtual clock moved by the timeout).
#[test]
fn realtime_failures_take_their_modelled_time() {
    let fx = Fixture::sim_bench();
    fx.host.as_ref().unwrap().set_realtime(true);
    let mut dmm = fx.bus.device(SCPI).unwrap();
    dmm.set_timeout(Some(Duration::from_millis(200).into()));
    let (v0, w0) = (fx.bus.now(), Instant::now());
    let e = dmm.read_to_end().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    let (virt, wall) = (fx.bus.now() - v0, w0.elapsed());
    assert!(virt >= Duration::from_millis(200), "{virt:?}");
    // A sleep never ends early: the wall time is at least the virtual time.
    assert!(
        wall >= Duration::from_millis(200),
        "returned after {wall:?}"
    );
}

/// A talker that answers each message with `pieces` copies of one shared megabyte
/// (END after the last only when `end`): an endless answer without its memory.
struct Streaming {
    head: Vec<u8>,
    mib: Arc<[u8]>,
    pieces: usize,
    end: bool,
}

impl Instrument for Streaming {
    fn model(&self) -> &str {
        "STREAMING"
    }
    fn listen(&mut self, _data: &[u8], end: bool, io: &mut DeviceIo<'_>) {
        if end {
            io.output.push(&self.head);
            for _ in 0..self.pieces {
                io.output.push_shared(self.mib.clone(), 0..self.mib.len());
            }
            if self.end {
                io.output.finish_message();
            }
        }
    }
}

fn streaming_host(pieces: usize, end: bool) -> (SimHost, Bus) {
    streaming_host_with(b"", pieces, end)
}

fn streaming_host_with(head: &[u8], pieces: usize, end: bool) -> (SimHost, Bus) {
    let host = SimHost::new("streaming");
    let b = host.add_board(
        "gpib0",
        PrimaryAddress::try_from(0u8).unwrap(),
        BoardTiming::default(),
        Duration::from_secs(1000).into(),
    );
    let mib: Arc<[u8]> = (0..1usize << 20).map(|i| (i % 251) as u8).collect();
    let device = Streaming {
        head: head.to_vec(),
        mib,
        pieces,
        end,
    };
    let at = Address::try_from(5u8).unwrap();
    host.attach(b, at, Box::new(device), DeviceTiming::default())
        .unwrap();
    let bus = Bus::new(host.board(b).unwrap());
    (host, bus)
}

// Reads and network item 1: a talker that never sends END made `query` and
// `read_to_end` grow their buffer until the process died. Past the default maximum
// read length (64 MiB) they stop, with a typed error that keeps the bytes.
#[test]
fn endless_answers_stop_at_the_maximum_read_length() {
    let (_h, bus) = streaming_host(80, false);
    let mut dev = bus.device(5).unwrap();
    dev.set_timeout(Some(Timeout::Never)); // no timeout: only the length bounds it
    let e = within(Duration::from_secs(120), move || {
        dev.query("SEND").unwrap_err()
    });
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.to_string().contains("maximum read length"), "{e}");
    assert_eq!(e.transferred(), Some(64 << 20), "{e}");
    match e {
        gpib::Error::ResponseTooLong { data, limit, .. } => {
            assert_eq!(limit, gpib::DEFAULT_MAX_READ);
            assert_eq!(data.len(), 64 << 20);
            assert_eq!(&data[..4], &[0, 1, 2, 3]);
        }
        other => panic!("{other}"),
    }
    // A handle's own limit; `read_to_end_into` keeps the bytes in the caller's Vec.
    let (_h, bus) = streaming_host(3, true);
    let mut dev = bus.device(5).unwrap();
    dev.set_max_read(1 << 20);
    dev.write_str("SEND").unwrap();
    let mut v = Vec::new();
    let e = dev.read_to_end_into(&mut v).unwrap_err();
    assert_eq!(e.transferred(), Some(1 << 20), "{e}");
    assert_eq!(v.len(), 1 << 20);
    dev.clear().unwrap();
    dev.set_max_read(4 << 20);
    assert_eq!(dev.query("SEND").unwrap_err().kind(), ErrorKind::Protocol);
    dev.clear().unwrap();
    dev.write_str("SEND").unwrap();
    assert_eq!(dev.read_to_end().unwrap().len(), 3 << 20);
}

// Reads and network item 1: every backend read got a fresh timeout, so a talker that
// keeps sending kept a whole-message read going past the device's timeout. The
// timeout bounds the whole read; the bytes read are kept and counted.
#[test]
fn the_timeout_bounds_a_whole_read() {
    let (_h, bus) = streaming_host(30, true);
    let mut dev = bus.device(5).unwrap();
    dev.set_timeout(Some(Duration::from_secs(1).into()));
    let t0 = bus.now();
    dev.write_str("SEND").unwrap();
    let mut v = Vec::new();
    let e = dev.read_to_end_into(&mut v).unwrap_err();
    let took = bus.now() - t0;
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert_eq!(e.transferred(), Some(v.len()), "{e}");
    assert!(!v.is_empty() && v.len() < 30 << 20, "{}", v.len());
    assert!(took < Duration::from_secs(3), "{took:?}");
}

// Reads and network item 2: `#45000`, 5000 bytes, NL, then more bytes with END on
// them was read as a good block (the body's NL came without END and was taken for
// the end). The bytes after the NL make it a malformed block.
#[test]
fn bytes_after_a_blocks_nl_are_malformed() {
    for (size, junk) in [
        (5000usize, &b"junk"[..]),
        (5000, b"j"),
        (300, b"junk"),
        (4096 + 4, b"j"),
    ] {
        let mut answer = format!("#{}{size}", size.to_string().len()).into_bytes();
        answer.extend((0..size).map(|i| (i % 251) as u8));
        answer.push(b'\n');
        let good = answer.clone();
        answer.extend_from_slice(junk);
        let (_h, bus) = scripted_host(answer, true);
        let dev = bus.device(5).unwrap();
        let e = match dev.query_block("SEND") {
            Ok(body) => panic!("{size} {junk:?}: accepted, {} bytes", body.len()),
            Err(e) => e,
        };
        assert_eq!(e.kind(), ErrorKind::MalformedBlock, "{size} {junk:?}: {e}");
        let mut buf = vec![0u8; size + 100];
        dev.clear().unwrap();
        let e = dev.query_block_into("SEND", &mut buf).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MalformedBlock, "{size} {junk:?}: {e}");
        // Without the junk it is a good block, with END or without.
        for end in [true, false] {
            let (_h, bus) = scripted_host(good.clone(), end);
            let mut dev = bus.device(5).unwrap();
            dev.set_timeout(Some(Duration::from_millis(50).into()));
            assert_eq!(dev.query_block("SEND").unwrap().len(), size, "{size} {end}");
        }
    }
}

// Reads and network item 1, for blocks: an `#0` block (or a definite one claiming a
// gigabyte) from a talker that goes on without END grew `read_block`'s Vec without
// limit. The body stops at the maximum read length, with its bytes kept.
#[test]
fn endless_blocks_stop_at_the_maximum_read_length() {
    for head in [&b"#0"[..], b"#9999999999"] {
        let (_h, bus) = streaming_host_with(head, 80, false);
        let mut dev = bus.device(5).unwrap();
        dev.set_timeout(Some(Timeout::Never)); // no timeout: only the length bounds it
        let e = within(Duration::from_secs(120), move || {
            dev.query_block("SEND").unwrap_err()
        });
        assert_eq!(e.kind(), ErrorKind::Protocol, "{head:?}: {e}");
        assert!(e.to_string().contains("maximum read length"), "{e}");
        if let gpib::Error::ResponseTooLong { data, .. } = &e {
            assert_eq!(data.len(), 64 << 20);
        }
    }
}

// Reads and network item 1, for blocks: each body read got a fresh timeout, so a
// block read in 1 MiB pieces (about 1 s each at the bench's 1 MB/s) went on for 30 s
// with a 3 s timeout.
#[test]
fn the_timeout_bounds_a_whole_block_read() {
    let (_h, bus) = streaming_host_with(b"#831457280", 30, true);
    let mut dev = bus.device(5).unwrap();
    dev.set_timeout(Some(Duration::from_secs(3).into()));
    let t0 = bus.now();
    let e = match dev.query_block("SEND") {
        Ok(body) => panic!("read all {} bytes", body.len()),
        Err(e) => e,
    };
    let took = bus.now() - t0;
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(took < Duration::from_secs(6), "{took:?}");
    assert!(e.transferred().is_some_and(|n| n > 0 && n < 8 << 20), "{e}");
}
