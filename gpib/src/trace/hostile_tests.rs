//! Damaged and crafted inputs to the waveform, the check and the VCD reader: typed
//! errors that name what was wrong, never a panic, memory bounded by what arrives.

use std::borrow::Cow;

use proptest::prelude::*;

use super::format::flags;
use super::wave::{Synth, WaveError};
use super::*;

fn transfer(first_ns: u64, byte_ns: u64, n: usize, f: u8, t1: u32, acc: u32) -> Record<'static> {
    Record::Transfer(Transfer {
        board: 0,
        flags: f,
        talker: 0,
        listeners: 1 << 22,
        start_ns: first_ns,
        ready_ns: first_ns,
        first_ns,
        byte_ns,
        end_ns: first_ns,
        t1_ns: t1,
        accept_ns: acc,
        bytes: Cow::Owned(vec![0x41; n]),
    })
}

#[test]
fn each_field_that_runs_past_u64_is_named() {
    let m = u64::MAX;
    let cases = [
        (
            transfer(m - 100, 1000, 2, flags::BOARD_TALKS, 500, 300),
            "first_ns",
        ),
        (
            transfer(m - 3000, 1000, 1, flags::ATN | flags::BOARD_TALKS, 500, 300),
            "first_ns",
        ),
        (
            transfer(1000, m / 2, 3, flags::BOARD_TALKS, 500, 300),
            "byte_ns",
        ),
        (
            transfer(1000, m, 1, flags::BOARD_TALKS, u32::MAX, u32::MAX),
            "byte_ns",
        ),
    ];
    for (r, field) in cases {
        let e = Synth::new(1).feed(&r, &mut |_, _| {}).unwrap_err();
        assert_eq!(e.field, field, "{e}");
        assert_eq!(e.record, "transfer");
        assert!(e.to_string().contains(field), "{e}");
    }
    let ifc = Record::Line(LineChange {
        board: 0,
        line: Line::Ifc,
        asserted: true,
        at_ns: m,
        end_ns: m,
    });
    let e = Synth::new(1).feed(&ifc, &mut |_, _| {}).unwrap_err();
    assert_eq!((e.record, e.field), ("line", "end_ns"));
    // After a record at the end of time, the next one cannot be drawn either.
    let mut s = Synth::new(1);
    let srq = Record::Line(LineChange {
        line: Line::Srq,
        ..match ifc {
            Record::Line(l) => l,
            _ => unreachable!(),
        }
    });
    s.feed(&srq, &mut |_, _| {}).unwrap();
    let e = s
        .feed(
            &transfer(5, 1000, 1, flags::BOARD_TALKS, 500, 300),
            &mut |_, _| {},
        )
        .unwrap_err();
    assert!(e.field.starts_with("first_ns"), "{e}");
}

#[test]
fn a_record_that_cannot_be_drawn_is_refused_with_its_offset() {
    let header = Header {
        clock: Clock::Virtual,
        label: "x".into(),
    };
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    w.write(&transfer(10, 1000, 1, flags::BOARD_TALKS, 500, 300))
        .unwrap();
    let second = w.finish().unwrap().len() as u64;
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    w.write(&transfer(10, 1000, 1, flags::BOARD_TALKS, 500, 300))
        .unwrap();
    w.write(&transfer(u64::MAX, 1, 1, flags::BOARD_TALKS, 500, 300))
        .unwrap();
    let bytes = w.finish().unwrap();
    let mut r = TraceReader::new(&bytes[..]).unwrap();
    let mut s = Synth::new(1);
    assert!(r.draw_next(&mut s, &mut |_, _| {}).unwrap());
    match r.draw_next(&mut s, &mut |_, _| {}) {
        Err(TraceError::Wave { offset, source }) => {
            assert_eq!(offset, second);
            assert_eq!(source.field, "first_ns");
        }
        other => panic!("{other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    /// Any transfer and line times at any tick: drawn with ticks never going back, or
    /// refused with a named field; never an overflow.
    #[test]
    fn any_times_draw_or_are_refused(
        recs in proptest::collection::vec(
            (any::<u64>(), prop_oneof![any::<u64>(), 0u64..5000], 0usize..4, any::<bool>(),
             any::<u32>(), any::<u32>(), any::<bool>(), any::<u64>()),
            1..6),
        tick in prop_oneof![Just(1u64), Just(10), Just(1000), any::<u64>()],
    ) {
        let mut s = Synth::new(tick);
        let mut last = 0u64;
        for (first, per, n, atn, t1, acc, is_line, end) in recs {
            let r = if is_line {
                Record::Line(LineChange { board: 0, line: Line::Ifc, asserted: true, at_ns: first, end_ns: end })
            } else {
                let f = flags::BOARD_TALKS | if atn { flags::ATN } else { 0 };
                transfer(first, per, n, f, t1, acc)
            };
            let res: Result<(), WaveError> = s.feed(&r, &mut |t, _| {
                assert!(t >= last);
                last = t;
            });
            if let Err(e) = res {
                prop_assert!(!e.field.is_empty());
                break;
            }
        }
    }
}

#[test]
fn the_check_saturates_limits_and_times() {
    let limits = check::Limits {
        t1_ns: u64::MAX,
        first_t1_ns: u64::MAX,
        t7_ns: u64::MAX,
    };
    let ch = [
        (0, wave::lines::ATN),
        (u64::MAX - 1, wave::lines::ATN | wave::lines::DAV),
        (u64::MAX, 0),
    ];
    let (_, n) = check::check(&ch, &limits, 10);
    assert!(n > 0);
}

#[test]
fn a_vcd_header_that_never_ends_keeps_nothing() {
    // Words of an unknown command are skipped, not kept; the file ends in the header.
    let mut text = b"$var wire 1 ! DAV $end\n$foo ".to_vec();
    for _ in 0..100_000 {
        text.extend_from_slice(b"a b c d ");
    }
    let e = vcd::VcdReader::new(&text[..]).unwrap_err();
    assert!(e.to_string().contains("no $enddefinitions"), "{e}");
    // A $var or $timescale without its $end is refused after a few words.
    let e =
        vcd::read_vcd(&b"$timescale 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18"[..]).unwrap_err();
    assert!(e.to_string().contains("more than 16 words"), "{e}");
    // A word longer than the limit is refused, with its line.
    let mut long = b"$comment\n".to_vec();
    long.resize(vcd::MAX_TOKEN + 20, b'x');
    let e = vcd::read_vcd(&long[..]).unwrap_err();
    assert!(e.to_string().starts_with("line 2:"), "{e}");
    // Too many GPIB wires.
    let mut vars = String::new();
    for i in 0..=vcd::MAX_VARS {
        vars.push_str(&format!("$var wire 1 v{i} DAV $end\n"));
    }
    let e = vcd::read_vcd(vars.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("variables name GPIB lines"), "{e}");
    // Binary: a word that is not UTF-8 where one is read.
    let e = vcd::read_vcd(&b"$var wire \xff\xfe ! DAV $end"[..]).unwrap_err();
    assert!(e.to_string().contains("not UTF-8"), "{e}");
}

#[test]
fn a_trace_on_a_fifo_is_refused_at_once() {
    let dir = std::env::temp_dir().join(format!("gpib-trace-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("t.trace");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let e = open_file(&fifo).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    let e = crate::sim::instruments::Replay::open(&fifo, 22).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
