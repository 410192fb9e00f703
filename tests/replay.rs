//! Record → read back → replay: a session recorded against the bench's SCPI instrument
//! plays back from its trace file byte for byte (binary data, a 10 MB block), with the
//! recorded response latency, and a program that strays gets an error that says what
//! the recording expected.

use std::time::Duration;

use gpib::sim::instruments::Replay;
use gpib::trace::{self, Clock, Header, Record, SharedSink, TraceSink, TraceWriter};
use gpib::{sim, Bus, Device, ErrorKind};

const BLOCK: usize = 10_000_000;

/// What the program does and what it got: the answers, in order.
fn session(dev: &Device) -> Vec<Vec<u8>> {
    let mut out = vec![dev.query("*IDN?").unwrap().into_bytes()];
    let all: Vec<u8> = (0..=255u8).collect();
    dev.write_block(b"DATA ", gpib::block::BlockFormat::Definite, &all)
        .unwrap();
    out.push(dev.query_block("DATA?").unwrap());
    out.push(dev.query_block(&format!("BLOCK? {BLOCK}")).unwrap());
    out
}

fn record(path: &std::path::Path) -> Vec<Vec<u8>> {
    let host = sim::bench();
    let header = Header {
        clock: Clock::Virtual,
        label: "bench".into(),
    };
    let mut sink =
        SharedSink::new(TraceWriter::new(std::fs::File::create(path).unwrap(), &header).unwrap());
    host.trace_to(sink.clone());
    let answers = session(&Bus::new(host.board(0).unwrap()).device(22).unwrap());
    host.stop_trace();
    sink.flush().unwrap();
    answers
}

fn replay_host(path: &std::path::Path) -> sim::SimHost {
    let text = format!(
        "name = 'replayed'\n[[board]]\nname = 'gpib0'\ntimeout_s = 10\n\
         [[board.device]]\naddress = 22\nmodel = 'replay'\nfile = {:?}\n",
        path.display().to_string()
    );
    sim::Config::parse(&text).unwrap().build().unwrap()
}

/// The time from the end of the `*IDN?` command to the answer's first readiness.
fn idn_latency(records: &[Record<'_>]) -> Duration {
    let mut delivered = 0;
    for r in records {
        if let Record::Transfer(t) = r {
            if !t.is_command() && t.board_talks() && &t.bytes[..] == b"*IDN?\n" {
                delivered = t.first_ns + t.byte_ns * t.bytes.len() as u64;
            } else if !t.is_command() && !t.board_talks() && delivered > 0 {
                return Duration::from_nanos(t.ready_ns - delivered);
            }
        }
    }
    panic!("no *IDN? exchange in the trace");
}

#[test]
fn a_recorded_session_replays_byte_for_byte_with_its_latency() {
    let path = std::env::temp_dir().join(format!("gpib-replay-{}.trace", std::process::id()));
    let recorded = record(&path);
    assert_eq!(recorded[1], (0..=255u8).collect::<Vec<_>>());
    assert_eq!(recorded[2].len(), BLOCK);

    let host = replay_host(&path);
    let mem = trace::MemorySink::new();
    host.trace_to(mem.clone());
    let replayed = session(&Bus::new(host.board(0).unwrap()).device(22).unwrap());
    assert_eq!(replayed, recorded, "every answer, byte for byte");
    let done = host
        .with_instrument_as::<Replay, _>(0, gpib::Address::try_from(22u8).unwrap(), |r| {
            (r.finished(), r.mismatch().map(String::from))
        })
        .unwrap()
        .unwrap();
    assert_eq!(done, (true, None));

    let (_, original) = trace::read_file(&path).unwrap();
    let latency = idn_latency(&original);
    assert!(
        latency >= Duration::from_micros(50),
        "the SCPI instrument's latency: {latency:?}"
    );
    assert_eq!(idn_latency(&mem.take()), latency);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_program_that_strays_is_told_what_the_recording_expected() {
    let path = std::env::temp_dir().join(format!("gpib-replay-stray-{}.trace", std::process::id()));
    record(&path);
    let host = replay_host(&path);
    let dev = Bus::new(host.board(0).unwrap()).device(22).unwrap();
    let e = dev.query("*IDN").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol);
    let text = e.to_string();
    assert!(
        text.contains("\"\\n\"") && text.contains("\"?\"") && text.contains("*IDN?\\n"),
        "{text}"
    );
    let _ = std::fs::remove_file(&path);

    // A device the recording never talked to is refused when the host is built.
    let e = sim::Config::parse(&format!(
        "name = 'x'\n[[board]]\nname = 'g'\n[[board.device]]\naddress = 5\nmodel = 'replay'\nfile = {:?}\n",
        "/nonexistent.trace"
    ))
    .unwrap()
    .build()
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    assert!(e.to_string().contains("/nonexistent.trace"), "{e}");
}
