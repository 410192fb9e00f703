//! The bus read path (`Device::read_block_into`, `read_block`, `query_block`,
//! `query_block_into`, `read`, `read_to_end`) against a scripted talker.
//!
//! Input: steps separated by `@@@@`; each is 8 control bytes (see `HEAD`: operation,
//! fresh, cut, END flags, split points, buffer size) then the bytes the talker sends.
//! The talker answers each message it receives (each write ending with END) with the next
//! response of the script: pieces of fuzz-chosen bytes, each optionally followed by
//! `finish_message` (END goes with the last byte queued when the last piece asks for it).
//! A step can start fresh (SDC first, so the talker sends exactly that response) and can
//! cut the talker off after a few bytes (`Fault::StopsAfter`) or drop its EOI.
//!
//! Asserts, besides no panic:
//! * every error's `transferred()` is at most the bytes the talker queued;
//! * on a fresh step without faults, an `Ok` block has the body `block::decode` finds in
//!   the same bytes (definite-length blocks: the bytes up to the body and its NL); a block
//!   that `block::decode` accepts and that came with END (or a definite-length block
//!   followed by NL) is read `Ok`, with that body, when the buffer is large enough;
//! * `read` copies a prefix of what was sent; `read_to_end` of a message with END gives
//!   exactly the message.
#![no_main]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gpib::block::{self, BlockFormat, HeaderParse};
use gpib::sim::timing::{BoardTiming, DeviceTiming, TransferMode};
use gpib::sim::{DeviceIo, Fault, Instrument, SimHost};
use gpib::{Address, Bus, Eos, PrimaryAddress, ReadEnd};
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Clone)]
struct Piece {
    bytes: Vec<u8>,
    end: bool,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    ReadBlockInto { size: u16 },
    ReadBlock,
    QueryBlock,
    QueryBlockInto { size: u16 },
    Read { size: u16, eos: Option<u8> },
    ReadToEnd,
}

#[derive(Debug, Clone, Copy)]
enum Cut {
    None,
    StopsAfter(u8),
    DropsEoi,
}

#[derive(Debug)]
struct Step {
    fresh: bool,
    cut: Cut,
    response: Vec<Piece>,
    op: Op,
}

/// The control bytes at the start of each step, so that inputs are easy to write by
/// hand (`fuzz/corpus/block_read/`):
///
/// | byte | meaning |
/// |---|---|
/// | 0 | `'0'` + op: 0 read_block_into, 1 read_block, 2 query_block, 3 query_block_into, 4 read, 5 read_to_end (modulo 6) |
/// | 1 | flags: bit 0 fresh (SDC first; full checks), bits 1-2 cut (1 StopsAfter, 2 DropsEoi), bit 3 EOS on for `read` |
/// | 2 | END flags: bit i = `finish_message` after piece i (of 3) |
/// | 3, 4 | split points of the response into 3 pieces (modulo its length + 1) |
/// | 5, 6 | buffer size, decimal digits `'0'..='9'` (x 64 + y), or StopsAfter's count (byte 5) |
/// | 7 | the EOS byte |
///
/// then the response bytes; steps are separated by `@@@@` (at most 4 steps). `P` as
/// the very first byte of the input selects a PIO board instead of DMA (the control
/// bytes follow it).
const HEAD: usize = 8;
const STEP_SEPARATOR: &[u8] = b"@@@@";

fn steps(data: &[u8]) -> Vec<Step> {
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() && out.len() < 4 {
        let (this, next) = match rest.windows(4).position(|w| w == STEP_SEPARATOR) {
            Some(i) => (&rest[..i], &rest[i + 4..]),
            None => (rest, &[][..]),
        };
        rest = next;
        if this.len() < HEAD {
            continue;
        }
        let (c, body) = this.split_at(HEAD);
        let size = u16::from(c[5].wrapping_sub(b'0')) * 64 + u16::from(c[6].wrapping_sub(b'0'));
        let op = match c[0].wrapping_sub(b'0') % 6 {
            0 => Op::ReadBlockInto { size },
            1 => Op::ReadBlock,
            2 => Op::QueryBlock,
            3 => Op::QueryBlockInto { size },
            4 => Op::Read { size, eos: (c[1] & 8 != 0).then_some(c[7]) },
            _ => Op::ReadToEnd,
        };
        let cut = match (c[1] >> 1) & 3 {
            1 => Cut::StopsAfter(c[5]),
            2 => Cut::DropsEoi,
            _ => Cut::None,
        };
        let mut cuts = [c[3], c[4]].map(|s| usize::from(s) % (body.len() + 1));
        cuts.sort_unstable();
        let bounds = [0, cuts[0], cuts[1], body.len()];
        let response = (0..3)
            .map(|i| Piece { bytes: body[bounds[i]..bounds[i + 1]].to_vec(), end: c[2] & (1 << i) != 0 })
            .collect();
        out.push(Step { fresh: c[1] & 1 != 0, cut, response, op });
    }
    out
}

#[derive(Default)]
struct Script {
    responses: VecDeque<Vec<Piece>>,
}

/// Answers every message with the next scripted response.
struct Talker {
    script: Arc<Mutex<Script>>,
    queued: Arc<AtomicUsize>,
}

impl Instrument for Talker {
    fn model(&self) -> &str {
        "SCRIPTED"
    }
    fn listen(&mut self, _data: &[u8], end: bool, io: &mut DeviceIo<'_>) {
        if !end {
            return;
        }
        let next = self.script.lock().unwrap().responses.pop_front();
        for p in next.unwrap_or_default() {
            // An empty push would clear a pending END (Output::push sets end = false
            // even for no bytes; reported): skip it.
            if !p.bytes.is_empty() {
                io.output.push(&p.bytes);
            }
            self.queued.fetch_add(p.bytes.len(), Ordering::Relaxed);
            if p.end {
                io.output.finish_message();
            }
        }
    }
}

const QUERY: &str = "Q?";

/// KNOWN DEFECT (reported; crashes/block_read-short-definite-nl-without-end): a
/// definite-length block + NL sent without END and shorter than 11 bytes in all (e.g.
/// `#15hello\n`) times out, because the header read asks for 11 bytes and only END
/// ends it early; the same block with a longer body is read fine. Tolerated unless
/// GPIB_FUZZ_STRICT is set (fuzz/run.sh sets it for the regression inputs).
fn known_short_no_end(bytes: &[u8], ended: bool) -> bool {
    !ended && bytes.len() < 11 && std::env::var_os("GPIB_FUZZ_STRICT").is_none()
}

fn fits(format: BlockFormat, body_len: usize, size: usize) -> bool {
    match format {
        BlockFormat::Indefinite => body_len < size,
        _ => body_len <= size,
    }
}

/// What a correct block reader must make of `bytes` sent with (or without) END:
/// `Some(body)` when it must succeed.
fn expected_block(bytes: &[u8], ended: bool) -> Option<&[u8]> {
    let h = match block::parse_header(bytes) {
        Ok(HeaderParse::Complete(h)) => h,
        _ => return None,
    };
    let body = block::decode(bytes, true).ok()?;
    if ended {
        return Some(body);
    }
    // Without END only a definite-length block followed by its NL is complete.
    (h.body_len.is_some() && bytes.len() == h.header_len + body.len() + 1).then_some(body)
}

/// Checks an `Ok` block read of fresh `bytes`: the body is what decode finds.
fn check_ok_block(bytes: &[u8], ended: bool, body: &[u8], format: BlockFormat) {
    let h = match block::parse_header(bytes) {
        Ok(HeaderParse::Complete(h)) => h,
        other => panic!("read a {format:?} block of {} bytes from {bytes:?}, whose header parses as {other:?}", body.len()),
    };
    assert_eq!(h.format, format, "{bytes:?}");
    match h.body_len {
        Some(len) => {
            assert_eq!(body.len() as u64, len, "{bytes:?}");
            let end = (h.header_len + body.len() + 1).min(bytes.len());
            let decoded = block::decode(&bytes[..end], true)
                .unwrap_or_else(|e| panic!("read Ok({body:?}) but decode of {:?} says {e}", &bytes[..end]));
            assert_eq!(decoded, body, "{bytes:?}");
        }
        None => {
            assert!(ended, "an END-terminated block read Ok from {bytes:?} sent without END");
            let decoded = block::decode(bytes, true)
                .unwrap_or_else(|e| panic!("read Ok({body:?}) but decode of {bytes:?} says {e}"));
            assert_eq!(decoded, body, "{bytes:?}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let pio = data.first() == Some(&b'P');
    let data = if pio { &data[1..] } else { data };
    let host = SimHost::new("fuzz");
    let timing = BoardTiming {
        mode: if pio { TransferMode::Pio } else { TransferMode::Dma },
        ..BoardTiming::default()
    };
    let board = host.add_board("gpib0", PrimaryAddress::try_from(0u8).unwrap(), timing, Duration::from_millis(100).into());
    let address = Address::try_from(5u8).unwrap();
    let script = Arc::new(Mutex::new(Script::default()));
    let queued = Arc::new(AtomicUsize::new(0));
    let talker = Talker { script: script.clone(), queued: queued.clone() };
    let device_timing = DeviceTiming { response_latency: Duration::ZERO, ..DeviceTiming::default() };
    host.attach(board, address, Box::new(talker), device_timing).unwrap();
    let bus = Bus::new(host.board(board).unwrap());
    let mut dev = bus.device(address).unwrap();
    dev.set_timeout(Some(Duration::from_millis(50).into()));

    for step in steps(data).iter() {
        let bytes: Vec<u8> = step.response.iter().flat_map(|p| p.bytes.iter().copied()).collect();
        // END goes with the last byte when the last non-empty piece or a later one asks for it.
        let last_nonempty = step.response.iter().rposition(|p| !p.bytes.is_empty());
        let ended = last_nonempty.is_some_and(|i| step.response[i..].iter().any(|p| p.end))
            && !matches!(step.cut, Cut::DropsEoi);
        if step.fresh {
            dev.clear().unwrap();
            script.lock().unwrap().responses.clear();
        }
        let before = queued.load(Ordering::Relaxed);
        script.lock().unwrap().responses.push_back(step.response.clone());
        let is_query = matches!(step.op, Op::QueryBlock | Op::QueryBlockInto { .. });
        if !is_query {
            dev.write(b"Q").unwrap();
        }
        match step.cut {
            Cut::None => {}
            Cut::StopsAfter(k) => host.inject(board, address, Fault::StopsAfter(usize::from(k))).unwrap(),
            Cut::DropsEoi => host.inject(board, address, Fault::DropsEoi).unwrap(),
        }
        // Bytes the talker may send during this step: this response, plus what was
        // left over unless the step is fresh.
        let bound = if step.fresh { bytes.len() } else { before + bytes.len() };
        let bound = bound.max(QUERY.len() + 1);
        let exact = step.fresh && matches!(step.cut, Cut::None | Cut::DropsEoi);

        let check_err = |e: &gpib::Error| {
            if let Some(t) = e.transferred() {
                assert!(t <= bound, "{e} reports {t} bytes; at most {bound} were sent ({:?})", step);
            }
        };

        match step.op {
            Op::ReadBlockInto { size } | Op::QueryBlockInto { size } => {
                let size = usize::from(size % 2048);
                let mut buf = vec![0u8; size];
                let r = if is_query { dev.query_block_into(QUERY, &mut buf) } else { dev.read_block_into(&mut buf) };
                match &r {
                    Ok(info) => {
                        assert!(info.len <= size);
                        if exact {
                            check_ok_block(&bytes, ended, &buf[..info.len], info.format);
                        }
                    }
                    Err(e) => {
                        check_err(e);
                        if exact {
                            if let (Some(body), Ok(HeaderParse::Complete(h)), false) =
                                (expected_block(&bytes, ended), block::parse_header(&bytes), known_short_no_end(&bytes, ended))
                            {
                                assert!(
                                    !fits(h.format, body.len(), size),
                                    "{bytes:?} (END: {ended}) is a valid block of {} bytes that fits {size} bytes, but the read failed: {e}",
                                    body.len()
                                );
                            }
                        }
                    }
                }
            }
            Op::ReadBlock | Op::QueryBlock => {
                let r = if is_query { dev.query_block(QUERY) } else { dev.read_block() };
                match &r {
                    Ok(body) => {
                        if exact {
                            let format = match block::parse_header(&bytes) {
                                Ok(HeaderParse::Complete(h)) => h.format,
                                other => panic!("read_block Ok({body:?}) from {bytes:?}: header {other:?}"),
                            };
                            check_ok_block(&bytes, ended, body, format);
                        }
                    }
                    Err(e) => {
                        check_err(e);
                        if exact {
                            if let Some(body) = expected_block(&bytes, ended).filter(|_| !known_short_no_end(&bytes, ended)) {
                                panic!("{bytes:?} (END: {ended}) is a valid block with a {}-byte body, but read_block failed: {e}", body.len());
                            }
                        }
                    }
                }
            }
            Op::Read { size, eos } => {
                let size = usize::from(size % 2048);
                let mut buf = vec![0u8; size];
                dev.set_eos(eos.map(|b| Eos { byte: b, eight_bit: true }));
                let r = dev.read(&mut buf);
                dev.set_eos(None);
                match &r {
                    Ok(st) => {
                        assert!(st.count <= size);
                        if exact {
                            assert!(st.count <= bytes.len());
                            assert_eq!(&buf[..st.count], &bytes[..st.count]);
                            if st.end == ReadEnd::Eoi {
                                assert!(ended && st.count == bytes.len(), "{st:?} from {bytes:?}");
                            }
                        }
                    }
                    Err(e) => check_err(e),
                }
            }
            Op::ReadToEnd => match &dev.read_to_end() {
                Ok(v) => {
                    if exact {
                        assert!(ended, "read_to_end Ok({v:?}) with no END from {bytes:?}");
                        assert_eq!(v, &bytes);
                    }
                }
                Err(e) => {
                    check_err(e);
                    if exact && ended {
                        panic!("read_to_end of {bytes:?} with END failed: {e}");
                    }
                }
            },
        }
        host.clear_faults(board, address).unwrap();
    }
});
