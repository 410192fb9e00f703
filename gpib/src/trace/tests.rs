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
