//! What the typed layer costs on top of raw libgpib calls: the same transfers written
//! twice, once with linux-gpib-rs's low-level `traditional` calls on a device
//! descriptor, once with this crate (`Bus` over [`LinuxGpibBoard`] + `Device`), and the
//! ratio of their times. The project's target is "on hardware, within 1.2x of raw
//! `ibrd` calls".
//!
//! There is no hardware here: the bench links whatever `libgpib.so.0` is on the library
//! path, which in CI is the compatibility library over the simulator (`compat/`,
//! `GPIB_SIM_CONFIG` default `bench`, SCPI instrument at address 22). Its own cost
//! (descriptor table, simulated bus, copies) is in both columns, so the difference
//! between them is our wrapper's: `Bus` lock and addressing state, `Device` settings,
//! block-header parsing, the extra libgpib calls it makes (addressing, `ibeot`, `ibeos`,
//! reads split at the block header) and linux-gpib-rs's status handling. Leave `GPIB_SIM_REALTIME` unset (virtual
//! time: calls return at memory speed), or the modelled bus time swamps both columns.
//!
//! | case | raw | ours |
//! |---|---|---|
//! | 1 MiB block | `ibwrt(ud, "BLOCK? 1048576\n")`, `ibrd` into a preallocated buffer until END | `Device::query_block_into("BLOCK? 1048576", &mut buf)` |
//! | 1 KiB block | the same with `BLOCK? 1024` | the same with `BLOCK? 1024` |
//! | `*IDN?` | `ibwrt(ud, "*IDN?\n")`, one `ibrd` | `Device::query_into(b"*IDN?", &mut buf)` |
//!
//! libgpib calls per operation (the `calls` column): raw makes 2 in every case (the
//! answer comes in one `ibrd`). Ours is device-level too (`ibwrt`/`ibrd` on an `ibdev`
//! descriptor opened once per device; `ibeot`/`ibeos` only when the setting changes):
//! 2 per query, and 3 per block, whose header (11 bytes) and body plus NL+END are two
//! `ibrd`s (both buffers have the same spare room past the body).
//! To tell the cost of the extra calls from the Rust-side cost, the bench also times
//! one trivial libgpib call (`ibeos` on the board descriptor) and prints it under the
//! table.
//!
//! The raw descriptor comes from `ibdev(0, 22, no SAD, T10s, EOI on, EOS off)`; ours is
//! `Bus::new(LinuxGpibBoard::open_index(0))` with a 10 s timeout. Both address the
//! device inside libgpib's `ibwrt`/`ibrd`; ours reads a block's header, then its body
//! and NL+END, as two `ibrd`s, and sets EOI and EOS explicitly when they change. That is what
//! a user writes in each case, so it
//! is the honest comparison. Both columns run in the same process, interleaved run by
//! run, each into a buffer allocated before timing; the answers are checked once
//! (same bytes both ways) before anything is timed.
//!
//! Build the compatibility library first (`compat/ci.sh` does, into
//! `target-compat/libgpib`), then, from the workspace root:
//!
//! ```text
//! NO_LOCAL_LIB=1 CARGO_TARGET_DIR=target-linux-gpib/peer \
//! RUSTFLAGS="-L native=$PWD/target-compat/libgpib -l dylib=gpib" \
//! LD_LIBRARY_PATH=$PWD/target-compat/libgpib \
//!   cargo bench --manifest-path bench/peers/linux-gpib-rs/Cargo.toml \
//!   --bench linux_gpib_overhead [-- --json FILE]
//! ```
//!
//! It prints a table (ops/s and µs per op for each column, ratio = ours / raw time per
//! op, median of `RUNS` runs of about `BUDGET` each); `--json FILE` also writes the
//! figures. Nothing is asserted about the ratios.

use std::hint::black_box;
use std::os::raw::c_int;
use std::time::{Duration, Instant};

use gpib::block::BlockFormat;
use gpib::{Bus, Device, LinuxGpibBoard};
use linux_gpib_rs::instrument::Instrument;
use linux_gpib_rs::lowlevel::traditional;
use linux_gpib_rs::types::{
    IbEosMode, IbOnline, IbSendEOI, IbTimeout, PrimaryAddress, SecondaryAddress,
};

const RUNS: usize = 7;
/// Runs of the 10 MB comparison, each at least two reads and about `SLOW_BUDGET`.
const SLOW_RUNS: usize = 5;
const SLOW_BUDGET: Duration = Duration::from_millis(400);
const BUDGET: Duration = Duration::from_millis(300);
const WARMUP: Duration = Duration::from_millis(50);
const BOARD: c_int = 0;
const ADDRESS: u8 = 22;
const MIB: usize = 1 << 20;
const KIB: usize = 1 << 10;
/// The linux-gpib-rs comparison's read.
const TEN_MB: usize = 10_000_000;
/// Room for a definite-length block's header (`#7` + 7 digits) and a trailing NL.
const SLACK: usize = 64;
/// No EOS: reads end on END only.
const EOS_OFF: IbEosMode = IbEosMode {
    reos: false,
    xeos: false,
    bin: false,
    eos_char: 0,
};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs `op` for about `budget` and returns operations per wall second.
fn rate(budget: Duration, mut op: impl FnMut()) -> f64 {
    let t0 = Instant::now();
    let mut n = 0u64;
    while t0.elapsed() < budget {
        for _ in 0..16 {
            op();
        }
        n += 16;
    }
    n as f64 / t0.elapsed().as_secs_f64()
}

/// The raw way: one device-level `ibwrt`, then `ibrd` until END; returns the count.
fn raw_query(ud: c_int, command: &[u8], buf: &mut [u8]) -> usize {
    let sent = traditional::ibwrt(ud, command).expect("ibwrt");
    debug_assert_eq!(sent, command.len());
    let mut n = 0;
    loop {
        let (status, got) = traditional::ibrd(ud, &mut buf[n..]).expect("ibrd");
        n += got;
        if status.end {
            return n;
        }
        assert!(n < buf.len(), "buffer full before END");
    }
}

/// The compatibility library's counters (`gpib_sim_library_calls`,
/// `gpib_sim_driver_crossings`), looked up at run time: a real libgpib has none.
struct Counters {
    calls: unsafe extern "C" fn() -> u64,
    crossings: unsafe extern "C" fn() -> u64,
}

impl Counters {
    fn find() -> Option<Self> {
        let sym = |name: &std::ffi::CStr| {
            // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks up.
            let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
            (!p.is_null()).then_some(p)
        };
        let calls = sym(c"gpib_sim_library_calls")?;
        let crossings = sym(c"gpib_sim_driver_crossings")?;
        // SAFETY: both are `extern "C" fn() -> u64` in the compatibility library
        // (compat/src/ffi.rs); the pointers came from dlsym for those names.
        unsafe {
            Some(Self {
                calls: std::mem::transmute::<*mut libc::c_void, unsafe extern "C" fn() -> u64>(
                    calls,
                ),
                crossings: std::mem::transmute::<*mut libc::c_void, unsafe extern "C" fn() -> u64>(
                    crossings,
                ),
            })
        }
    }

    /// (libgpib calls, driver crossings) made while `op` runs once.
    fn count(&self, op: &mut impl FnMut()) -> (u64, u64) {
        // SAFETY: the functions take nothing and only read counters.
        let (c0, x0) = unsafe { ((self.calls)(), (self.crossings)()) };
        op();
        // SAFETY: as above.
        let (c1, x1) = unsafe { ((self.calls)(), (self.crossings)()) };
        (c1 - c0, x1 - x0)
    }
}

/// One case's figures.
struct Case {
    name: &'static str,
    /// (libgpib calls, driver crossings real libgpib would make) per operation, raw
    /// and ours; `None` without the compatibility library's counters.
    calls: Option<((u64, u64), (u64, u64))>,
    /// Ops per second, one entry per run.
    raw: Vec<f64>,
    ours: Vec<f64>,
}

impl Case {
    fn raw_ops(&self) -> f64 {
        median(self.raw.clone())
    }
    fn ours_ops(&self) -> f64 {
        median(self.ours.clone())
    }
    /// Time per op, ours / raw.
    fn ratio(&self) -> f64 {
        self.raw_ops() / self.ours_ops()
    }
}

/// Times `raw` and `ours` in alternation, `RUNS` times each, after a short warm-up
/// (which also counts the calls each makes, when the counters are there).
fn measure(
    name: &'static str,
    counters: Option<&Counters>,
    mut raw: impl FnMut(),
    mut ours: impl FnMut(),
) -> Case {
    rate(WARMUP, &mut raw);
    rate(WARMUP, &mut ours);
    let calls = counters.map(|c| (c.count(&mut raw), c.count(&mut ours)));
    let mut case = Case {
        name,
        calls,
        raw: Vec::with_capacity(RUNS),
        ours: Vec::with_capacity(RUNS),
    };
    for run in 0..RUNS {
        // Alternate which goes first, so that neither always follows the other.
        if run % 2 == 0 {
            case.raw.push(rate(BUDGET, &mut raw));
            case.ours.push(rate(BUDGET, &mut ours));
        } else {
            case.ours.push(rate(BUDGET, &mut ours));
            case.raw.push(rate(BUDGET, &mut raw));
        }
    }
    case
}

/// [`measure`] for operations of milliseconds: one at a time, `SLOW_RUNS` runs.
fn measure_slow(
    name: &'static str,
    counters: Option<&Counters>,
    mut theirs: impl FnMut(),
    mut ours: impl FnMut(),
) -> Case {
    theirs();
    ours();
    let calls = counters.map(|c| (c.count(&mut theirs), c.count(&mut ours)));
    let once = |op: &mut dyn FnMut()| {
        let t0 = Instant::now();
        let mut n = 0u32;
        while n < 2 || t0.elapsed() < SLOW_BUDGET {
            op();
            n += 1;
        }
        f64::from(n) / t0.elapsed().as_secs_f64()
    };
    let mut case = Case {
        name,
        calls,
        raw: Vec::new(),
        ours: Vec::new(),
    };
    for run in 0..SLOW_RUNS {
        if run % 2 == 0 {
            case.raw.push(once(&mut theirs));
            case.ours.push(once(&mut ours));
        } else {
            case.ours.push(once(&mut ours));
            case.raw.push(once(&mut theirs));
        }
    }
    case
}

/// Checks once, untimed, that both ways get the same block for `BLOCK? n`.
fn check_block(ud: c_int, dev: &Device, n: usize) {
    let mut raw = vec![0u8; n + SLACK];
    let got = raw_query(ud, format!("BLOCK? {n}\n").as_bytes(), &mut raw);
    let head = format!("#{}{n}", n.to_string().len());
    assert!(raw.starts_with(head.as_bytes()), "raw block header");
    // IEEE 488.2: the body, then NL with END.
    let body = raw[head.len()..got]
        .strip_suffix(b"\n")
        .expect("NL after the block body");
    let mut ours = vec![0u8; n];
    let info = dev
        .query_block_into(&format!("BLOCK? {n}"), &mut ours)
        .expect("query_block_into");
    assert_eq!(info.len, n);
    assert!(body == &ours[..], "BLOCK? {n}: raw and ours differ");
}

fn main() {
    let json_path = std::env::args().skip_while(|a| a != "--json").nth(1);
    let counters = Counters::find();

    // Ours: the board descriptor, wrapped.
    let bus = Bus::new(LinuxGpibBoard::open_index(BOARD).expect("open board 0"));
    bus.interface_clear().expect("IFC");
    bus.set_timeout(Duration::from_secs(10).into()).expect("timeout");
    let dev = bus.device(ADDRESS).expect("address");

    // Raw: a device descriptor, EOI on the last byte written, EOS off.
    let ud = traditional::ibdev(
        BOARD,
        PrimaryAddress::new(c_int::from(ADDRESS)).expect("pad"),
        SecondaryAddress::default(),
        IbTimeout::T10s,
        IbSendEOI::Enabled(1),
        EOS_OFF,
    )
    .expect("ibdev");

    check_block(ud, &dev, MIB);
    check_block(ud, &dev, KIB);
    let mut raw_idn = [0u8; 256];
    let n = raw_query(ud, b"*IDN?\n", &mut raw_idn);
    let mut our_idn = [0u8; 256];
    let st = dev.query_into(b"*IDN?", &mut our_idn).expect("*IDN?");
    assert_eq!(&raw_idn[..n], &our_idn[..st.count], "*IDN? answers differ");

    // `--profile ours|raw CASE N`: N operations of one side of a case (`idn` or `kib`) and
    // nothing else, for `valgrind --tool=callgrind` (instructions per operation are
    // steady where wall time is not).
    if let Some(side) = std::env::args().skip_while(|a| a != "--profile").nth(1) {
        let mut rest = std::env::args().skip_while(|a| a != "--profile").skip(2);
        let case = rest.next().expect("--profile SIDE CASE N");
        let n: u64 = rest.next().and_then(|n| n.parse().ok()).expect("--profile SIDE CASE N");
        let mut buf = vec![0u8; KIB + SLACK];
        for _ in 0..n {
            match (side.as_str(), case.as_str()) {
                ("raw", "idn") => black_box(raw_query(ud, b"*IDN?\n", &mut buf)),
                ("ours", "idn") => black_box(dev.query_into(b"*IDN?", &mut buf).expect("*IDN?").count),
                ("raw", "kib") => black_box(raw_query(ud, b"BLOCK? 1024\n", &mut buf)),
                ("ours", "kib") => black_box(dev.query_block_into("BLOCK? 1024", &mut buf).expect("block").len),
                _ => panic!("--profile takes ours|raw and idn|kib"),
            };
        }
        return;
    }
    let mut raw_buf = vec![0u8; MIB + SLACK];
    let mut our_buf = vec![0u8; MIB + SLACK];
    let mut cases = Vec::new();
    for (name, n) in [("1 MiB block read", MIB), ("1 KiB block read", KIB)] {
        let raw_cmd = format!("BLOCK? {n}\n");
        let our_cmd = format!("BLOCK? {n}");
        let (rb, ob) = (&mut raw_buf[..n + SLACK], &mut our_buf[..n + SLACK]);
        cases.push(measure(
            name,
            counters.as_ref(),
            || {
                black_box(raw_query(ud, raw_cmd.as_bytes(), rb));
            },
            || {
                black_box(dev.query_block_into(&our_cmd, ob).expect("block"));
            },
        ));
    }
    cases.push(measure(
        "*IDN? query",
        counters.as_ref(),
        || {
            black_box(raw_query(ud, b"*IDN?\n", &mut raw_idn));
        },
        || {
            black_box(dev.query_into(b"*IDN?", &mut our_idn).expect("*IDN?"));
        },
    ));
    // linux-gpib-rs's own high-level read, `Instrument::receive` (1024-byte `Receive`
    // calls into a String), against ours on the same 10 MB answer: `DATA?` answers the
    // text block stored with `DATA`.
    // 10 MB take about 10 s of simulated bus time (virtual: no wall time): a longer
    // timeout for them, on the board descriptor (which Receive uses) and so on ours.
    bus.set_timeout(Duration::from_secs(1000).into()).expect("timeout");
    let text: Vec<u8> = (0..TEN_MB).map(|i| b'A' + (i % 26) as u8).collect();
    dev.write_block(b"DATA ", BlockFormat::Definite, &text)
        .expect("store 10 MB with DATA");
    let inst = Instrument::from_visa_string(&format!("GPIB{BOARD}::{ADDRESS}::INSTR"))
        .expect("instrument");
    let theirs_read = || {
        inst.send(b"DATA?\n", IbSendEOI::Enabled(1)).expect("Send");
        inst.receive().expect("Instrument::receive")
    };
    let answer = theirs_read();
    let head = format!("#{}{TEN_MB}", TEN_MB.to_string().len());
    assert!(answer.starts_with(&head), "linux-gpib-rs: block header");
    assert!(
        answer.as_bytes()[head.len()..].strip_suffix(b"\n") == Some(&text[..]),
        "linux-gpib-rs: the 10 MB answer differs"
    );
    assert!(
        dev.query_block("DATA?").expect("DATA?") == text,
        "ours: the 10 MB answer differs"
    );
    let big = measure_slow(
        "10 MB read",
        counters.as_ref(),
        || {
            black_box(theirs_read());
        },
        || {
            black_box(dev.query_block("DATA?").expect("DATA?"));
        },
    );
    let mut big_buf = vec![0u8; TEN_MB + SLACK];
    let big_into = measure_slow(
        "10 MB read (into)",
        counters.as_ref(),
        || {
            black_box(theirs_read());
        },
        || {
            black_box(dev.query_block_into("DATA?", &mut big_buf).expect("DATA?"));
        },
    );
    dev.write_str("DATA #10").expect("free the 10 MB");

    // The floor: one call that does next to nothing in the library.
    let floor: Vec<f64> = (0..RUNS)
        .map(|_| {
            rate(BUDGET / 3, || {
                traditional::ibeos(BOARD, EOS_OFF).expect("ibeos");
            })
        })
        .collect();
    let call_us = 1e6 / median(floor);
    traditional::ibonl(ud, IbOnline::Close).expect("close the device descriptor");

    println!(
        "linux-gpib wrapper overhead (libgpib: whatever is linked; median of {RUNS} runs of {BUDGET:?}):"
    );
    println!(
        "  {:<18} {:>13} {:>11} {:>13} {:>11} {:>10} {:>9}",
        "case", "raw ops/s", "raw us/op", "ours ops/s", "ours us/op", "ours/raw", "calls"
    );
    let calls_text = |c: &Case| match c.calls {
        Some(((rc, rx), (oc, ox))) => format!("{rc} / {oc}   {rx} / {ox}"),
        None => "n/a".to_string(),
    };
    for c in &cases {
        let (r, o) = (c.raw_ops(), c.ours_ops());
        println!(
            "  {:<18} {:>13.0} {:>11.3} {:>13.0} {:>11.3} {:>9.3}x   {}",
            c.name,
            r,
            1e6 / r,
            o,
            1e6 / o,
            c.ratio(),
            calls_text(c)
        );
    }
    println!("  raw: ibwrt + ibrd on an ibdev descriptor; ours: Device over LinuxGpibBoard (ibwrt/ibrd on its ibdev descriptors)");
    println!("  calls: libgpib calls per op, raw / ours, then the driver crossings (ioctls) real libgpib makes for them (compat/src/crossings.rs)");
    println!("  one trivial call (ibeos) costs {call_us:.3} us here");
    println!(
        "linux-gpib-rs Instrument::receive (after Instrument::send \"DATA?\"), 10 MB answer, vs ours, median of {SLOW_RUNS} runs:"
    );
    for (c, how) in [
        (&big, "Device::query_block, a new Vec"),
        (
            &big_into,
            "Device::query_block_into, a buffer allocated once",
        ),
    ] {
        println!(
            "  theirs {:.2} ms, ours {:.2} ms ({how}): ours {:.1}x faster (target: 5x); calls and crossings per read, theirs / ours: {}",
            1e3 / c.raw_ops(),
            1e3 / c.ours_ops(),
            1.0 / c.ratio(),
            calls_text(c)
        );
    }
    println!(
        "  target on hardware: ours/raw within 1.2x (informational here: nothing is asserted)"
    );

    if let Some(path) = json_path {
        let list = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let num = |v: Option<u64>| v.map_or("null".to_string(), |n| n.to_string());
        let items: Vec<String> = cases
            .iter()
            .chain([&big, &big_into])
            .map(|c| {
                let (r, o) = (c.raw_ops(), c.ours_ops());
                format!(
                    "{{\"case\": \"{}\", \"raw_ops_per_second\": {r}, \"raw_us_per_op\": {}, \"ours_ops_per_second\": {o}, \"ours_us_per_op\": {}, \"ratio_ours_to_raw\": {}, \"raw_calls_per_op\": {}, \"ours_calls_per_op\": {}, \"raw_crossings_per_op\": {}, \"ours_crossings_per_op\": {}, \"raw_runs_ops_per_second\": [{}], \"ours_runs_ops_per_second\": [{}]}}",
                    c.name,
                    1e6 / r,
                    1e6 / o,
                    c.ratio(),
                    num(c.calls.map(|x| x.0 .0)),
                    num(c.calls.map(|x| x.1 .0)),
                    num(c.calls.map(|x| x.0 .1)),
                    num(c.calls.map(|x| x.1 .1)),
                    list(&c.raw),
                    list(&c.ours)
                )
            })
            .collect();
        let doc = format!(
            "{{\"runs\": {RUNS}, \"budget_ms\": {}, \"target_ratio\": 1.2, \"trivial_call_us\": {call_us}, \"cases\": [{}]}}\n",
            BUDGET.as_millis(),
            items.join(", ")
        );
        std::fs::write(&path, doc).expect("write JSON");
        println!("wrote {path}");
    }
}
