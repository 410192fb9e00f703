//! Round trips and refusals of the trace format, and the simulator's records.

use std::borrow::Cow;

use super::format::{error_code, error_from_code, flags, status};
use super::*;
use crate::error::ErrorKind;
use crate::{sim, Bus};

fn header() -> Header {
    Header {
        clock: Clock::Virtual,
        label: "test bench".into(),
    }
}

fn sample_records() -> Vec<Record<'static>> {
    let all: Vec<u8> = (0..=255u8).collect();
    vec![
        Record::Transfer(Transfer {
            board: 1,
            flags: flags::ATN | flags::BOARD_TALKS,
            talker: 0,
            listeners: 1 << 22 | 1 << 11,
            start_ns: 5,
            ready_ns: 6,
            first_ns: 7,
            byte_ns: 2000,
            end_ns: 10_000,
            t1_ns: 500,
            accept_ns: 300,
            bytes: Cow::Owned(vec![0x3F, 0x40, 0x36]),
        }),
        Record::Transfer(Transfer {
            board: 0,
            flags: flags::END,
            talker: 22,
            listeners: 1,
            start_ns: u64::MAX - 1,
            ready_ns: 0,
            first_ns: 0,
            byte_ns: 1000,
            end_ns: u64::MAX,
            t1_ns: u32::MAX,
            accept_ns: 0,
            bytes: Cow::Owned(all.clone()),
        }),
        Record::Line(LineChange {
            board: 0,
            line: Line::Srq,
            asserted: true,
            at_ns: 42,
            end_ns: 42,
        }),
        Record::Error(BusError {
            board: 3,
            kind: ErrorKind::Timeout,
            at_ns: 9,
            text: Cow::Owned("read timed out — ünïcode".into()),
        }),
        Record::Call(Call {
            board: 0,
            op: CallOp::DeviceRead,
            device: Some(22),
            secondary: Some(4),
            status: status::CMPL | status::END,
            error: None,
            eoi: false,
            start_ns: 100,
            duration_ns: 50,
            count: 256,
            requested: 4096,
            data: Cow::Owned(all),
            message: Cow::Borrowed(""),
        }),
        Record::Call(Call {
            board: 0,
            op: CallOp::Write,
            device: None,
            secondary: None,
            status: status::ERR | status::TIMO,
            error: Some(ErrorKind::Timeout),
            eoi: true,
            start_ns: 1,
            duration_ns: 2,
            count: 0,
            requested: 3,
            data: Cow::Borrowed(b""),
            message: Cow::Owned("write timed out".into()),
        }),
    ]
}

fn encode(records: &[Record<'_>]) -> Vec<u8> {
    let mut w = TraceWriter::new(Vec::new(), &header()).unwrap();
    for r in records {
        w.write(r).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn every_record_kind_round_trips() {
    let recs = sample_records();
    let file = encode(&recs);
    let mut r = TraceReader::new(&file[..]).unwrap();
    assert_eq!(r.header(), &header());
    let back: Vec<Record> = r.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(back, recs);
    assert_eq!(r.offset(), file.len() as u64);
}

#[test]
fn every_error_kind_has_a_code() {
    use ErrorKind::*;
    let kinds = [
        Timeout,
        NoListener,
        NotControllerInCharge,
        CommandTimeout,
        SrqStuck,
        NotAddressed,
        MalformedBlock,
        InvalidAddress,
        InvalidResource,
        InvalidArgument,
        Unsupported,
        BackendUnavailable,
        BusConflict,
        Protocol,
        Config,
        Io,
    ];
    for k in kinds {
        let c = error_code(Some(k));
        assert_ne!(c, 0, "{k:?}");
        assert_eq!(error_from_code(c), Ok(Some(k)));
    }
    assert_eq!(error_from_code(0), Ok(None));
    assert!(error_from_code(17).is_err());
}

#[test]
fn every_cut_of_a_file_is_refused_with_truncated() {
    let file = encode(&sample_records());
    let whole = TraceReader::new(&file[..]).unwrap().count();
    for cut in 0..file.len() {
        let part = &file[..cut];
        match TraceReader::new(part) {
            Err(TraceError::BadMagic { .. }) => assert!(cut < 8, "cut {cut}"),
            Err(TraceError::Truncated { offset, .. }) => assert!(offset <= cut as u64),
            Err(e) => panic!("cut {cut}: {e}"),
            Ok(r) => {
                let got: Vec<_> = r.collect();
                let ok = got.iter().filter(|x| x.is_ok()).count();
                assert!(ok < whole || got.len() == whole, "cut {cut}");
                match got.last() {
                    Some(Err(TraceError::Truncated { offset, .. })) => {
                        assert!(*offset < cut as u64, "cut {cut}")
                    }
                    Some(Err(e)) => panic!("cut {cut}: {e}"),
                    _ => assert!(ok < whole, "cut {cut} read everything"),
                }
            }
        }
    }
}

#[test]
fn bad_fields_are_refused_with_their_offset() {
    let file = encode(&sample_records()[..1]);
    let rec_at = 16 + header().label.len();
    let mut bad = file.clone();
    bad[0] = b'X';
    assert!(matches!(
        TraceReader::new(&bad[..]),
        Err(TraceError::BadMagic { .. })
    ));
    let mut bad = file.clone();
    bad[8] = 2;
    assert!(matches!(
        TraceReader::new(&bad[..]),
        Err(TraceError::Version(2))
    ));
    let mut bad = file.clone();
    bad[10] = 7;
    let e = TraceReader::new(&bad[..]).unwrap_err();
    assert!(e.to_string().contains("clock 7"), "{e}");
    // Undefined transfer flags.
    let mut bad = file.clone();
    bad[rec_at + 9 + 2] = 0x80;
    let e = TraceReader::new(&bad[..])
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(&e, TraceError::Invalid { offset, what } if *offset == rec_at as u64 && what.contains("flags")),
        "{e}"
    );
    // A talker over 30.
    let mut bad = file.clone();
    bad[rec_at + 9 + 3] = 31;
    let e = TraceReader::new(&bad[..])
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert!(e.to_string().contains("talker address 31"), "{e}");
}

#[test]
fn a_huge_length_allocates_only_what_the_file_holds() {
    let mut file = encode(&[]);
    file.push(tag_transfer());
    file.extend_from_slice(&(u64::MAX / 2).to_le_bytes());
    file.extend_from_slice(&[0u8; 56]);
    file.extend_from_slice(b"abc");
    let e = TraceReader::new(&file[..])
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    match e {
        TraceError::Truncated { needed, found, .. } => {
            assert_eq!(found, 3);
            assert_eq!(needed, u64::MAX / 2 - 56);
        }
        e => panic!("{e}"),
    }
    // A length that runs past u64 is refused as such.
    let mut file = encode(&[]);
    file.push(99);
    file.extend_from_slice(&u64::MAX.to_le_bytes());
    let e = TraceReader::new(&file[..])
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert!(e.to_string().contains("runs past"), "{e}");
}

fn tag_transfer() -> u8 {
    super::format::tag::TRANSFER
}

#[test]
fn unknown_records_are_skipped() {
    let mut file = encode(&[]);
    file.push(200);
    file.extend_from_slice(&3u64.to_le_bytes());
    file.extend_from_slice(b"xyz");
    let tail = encode(&sample_records()[2..3]);
    file.extend_from_slice(&tail[16 + header().label.len()..]);
    let got: Vec<Record> = TraceReader::new(&file[..])
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(got[0], Record::Unknown { tag: 200, len: 3 });
    assert_eq!(got[1], sample_records()[2]);
}

#[test]
fn the_simulator_streams_every_byte_with_its_timing() {
    let host = sim::bench();
    let mem = MemorySink::new();
    host.trace_to(mem.clone());
    host.record(4); // the transcript keeps 4 bytes an event; the trace keeps all
    let bus = Bus::new(host.board(0).unwrap());
    let dev = bus.device(22).unwrap();
    let block = dev.query_block("BLOCK? 5000").unwrap();
    assert_eq!(block.len(), 5000);
    let recs = mem.take();
    let events = host.stop_recording();
    let transfers: Vec<&Transfer> = recs
        .iter()
        .filter_map(|r| match r {
            Record::Transfer(t) => Some(t),
            _ => None,
        })
        .collect();
    // The transcript has one event per bus record.
    assert_eq!(events.len(), recs.len());
    let read: Vec<u8> = transfers
        .iter()
        .filter(|t| !t.is_command() && !t.board_talks())
        .flat_map(|t| t.bytes.iter().copied())
        .collect();
    assert!(read.len() > 5000, "header, body and NL: {}", read.len());
    assert_eq!(&read[read.len() - 5001..read.len() - 1], &block[..]);
    for t in &transfers {
        assert!(t.start_ns <= t.first_ns, "{t:?}");
        let last = t.first_ns + t.byte_ns * t.bytes.len() as u64;
        assert!(
            last <= t.end_ns,
            "bytes end at {last}, after the operation {t:?}"
        );
        if !t.is_command() && t.board_talks() {
            assert_eq!(t.listeners, 1 << 22);
            assert_eq!(t.byte_ns, 1000, "bench DMA board: the IEEE 488.1 ceiling");
        }
    }
    let w = transfers
        .iter()
        .find(|t| !t.is_command() && t.board_talks())
        .unwrap();
    assert_eq!(&w.bytes[..], b"BLOCK? 5000\n");
    assert!(w.end());
}

/// A traced query and block read on the bench.
fn bench_session() -> Vec<Record<'static>> {
    let host = sim::bench();
    let mem = MemorySink::new();
    host.trace_to(mem.clone());
    let bus = Bus::new(host.board(0).unwrap());
    let dev = bus.device(22).unwrap();
    assert_eq!(dev.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
    assert_eq!(dev.query_block("BLOCK? 300").unwrap().len(), 300);
    mem.take()
}

fn in_ps(changes: &[(u64, u16)], tick_ns: u64) -> Vec<(u64, u16)> {
    changes
        .iter()
        .map(|&(t, s)| (t * tick_ns * 1000, s))
        .collect()
}

#[test]
fn a_healthy_trace_has_no_violation() {
    let recs = bench_session();
    for tick in [1, 10, 50] {
        let ch = wave::changes(&recs, tick).unwrap();
        assert!(ch.windows(2).all(|w| w[0].0 <= w[1].0), "tick {tick}");
        let (v, n) = check::check(&in_ps(&ch, tick), &check::Limits::default(), 10);
        assert_eq!(n, 0, "tick {tick} ns: {v:?}");
    }
}

#[test]
fn the_waveform_carries_every_byte_once_per_dav() {
    let recs = bench_session();
    let sent: Vec<u8> = recs
        .iter()
        .filter_map(|r| match r {
            Record::Transfer(t) if t.byte_ns > 0 => Some(t.bytes.to_vec()),
            _ => None,
        })
        .flatten()
        .collect();
    let ch = wave::changes(&recs, 50).unwrap();
    let mut prev = 0u16;
    let mut seen = Vec::new();
    for &(_, s) in &ch {
        if s & wave::lines::DAV != 0 && prev & wave::lines::DAV == 0 {
            seen.push((s & wave::lines::DIO) as u8);
        }
        prev = s;
    }
    assert_eq!(seen, sent);
}

#[test]
fn a_t1_below_the_standard_is_reported() {
    use crate::sim::instruments::ScpiInstrument;
    use crate::sim::timing::{BoardTiming, DeviceTiming};
    use std::time::Duration;
    let host = sim::SimHost::new("short T1");
    let timing = BoardTiming {
        t1_ns: 100,
        ..BoardTiming::default()
    };
    let b = host.add_board(
        "gpib0",
        crate::PrimaryAddress::try_from(0u8).unwrap(),
        timing,
        Duration::from_secs(1).into(),
    );
    host.attach(
        b,
        crate::Address::try_from(5u8).unwrap(),
        Box::new(ScpiInstrument::default()),
        DeviceTiming::default(),
    )
    .unwrap();
    let mem = MemorySink::new();
    host.trace_to(mem.clone());
    Bus::new(host.board(0).unwrap())
        .device(5)
        .unwrap()
        .write(b"*RST;*CLS")
        .unwrap();
    let recs = mem.take();
    let ch = wave::changes(&recs, 10).unwrap();
    let (v, n) = check::check(&in_ps(&ch, 10), &check::Limits::default(), 100);
    // Every command and data byte but the first after each ATN change (settled 2 µs).
    let bytes: usize = recs
        .iter()
        .map(|r| match r {
            Record::Transfer(t) => t.bytes.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(n as usize, bytes - 2, "{v:#?}");
    assert!(
        v.iter()
            .all(|x| x.rule == check::Rule::T1 && x.detail.contains("100 ns")),
        "{v:#?}"
    );
}

#[test]
fn a_vcd_reads_back_as_written() {
    let recs = bench_session();
    let mut vcd = Vec::new();
    vcd::write_vcd(&recs, 50, "bench", &mut vcd).unwrap();
    let cap = vcd::read_vcd(&vcd[..]).unwrap();
    assert_eq!(cap.tick_ps, 50_000);
    assert_eq!(cap.present, 0xFFFF);
    let mut ch = wave::changes(&recs, 50).unwrap();
    // Changes at one tick are one stamp in the VCD.
    ch.dedup_by(|b, a| {
        if a.0 == b.0 {
            a.1 = b.1;
            true
        } else {
            false
        }
    });
    assert_eq!(cap.changes, in_ps(&ch, 50));
}

#[test]
fn a_hand_made_vcd_with_dav_while_nrfd_is_reported() {
    let text = "$timescale 1 ns $end\n$scope module la $end\n\
        $var wire 1 ! DAV $end\n$var wire 1 np NRFD $end\n$var wire 1 %% NDAC $end\n\
        $var wire 1 d1 DIO1 $end\n$var wire 8 bus other $end\n$upscope $end\n$enddefinitions $end\n\
        #0\n$dumpvars\n1!\n1np\n0%%\n1d1\nb00000000 bus\n$end\n\
        #100\n0d1\n#1000\n0!\n#1100\n1%%\n#1200\n1!\n0%%\n\
        #3000\n0np\n#3600\n0!\n#3700\n1%%\n#3800\n1!\n";
    let cap = vcd::read_vcd(text.as_bytes()).unwrap();
    let (v, n) = check::check(&cap.changes, &check::Limits::default(), 10);
    assert_eq!(n, 1, "{v:#?}");
    assert_eq!(v[0].rule, check::Rule::DavWhileNotReady);
    assert_eq!(v[0].at_ps, 3_600_000);
    assert!(check::line_names(v[0].lines).contains("NRFD"));
    // A vector of a GPIB line is refused, saying why.
    let bad = text.replace("$var wire 1 d1 DIO1", "$var wire 8 d1 DIO1");
    let e = vcd::read_vcd(bad.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("one-bit wire"), "{e}");
}
