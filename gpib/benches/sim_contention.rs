//! The simulator's wall-clock cost of a contention run, as `gpib-diag contention`
//! drives one: `B` boards shaped like the lines of the 1983 VAX-11/780 terminal
//! measurement (one CPU; 1.5 ms of work a call, an interrupt a character) with `D`
//! terminals each (960 characters a second), one lane per terminal (all on one
//! thread, as `gpib-diag contention` runs them; `--threads`: one participant thread
//! each) writing 35-character lines until its virtual clock passes the span.
//! `--query` has SCPI instruments on DMA boards answer `*IDN?` instead.
//!
//! `cargo bench -p gpib --bench sim_contention -- [--boards 8] [--devices 15]
//! [--seconds 3600] [--grid] [--json]` prints wall time, transactions and wall ns per
//! simulated transaction; `--grid` runs 1..30 devices on one board and 1..8 boards of
//! 15 devices (the cost per transaction should not move). `--json`: one JSON object
//! per case.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use gpib::{sim, Bus};

/// The value after `flag` on the command line.
fn arg(flag: &str) -> Option<String> {
    std::env::args().skip_while(|a| a != flag).nth(1)
}

/// A host with `boards` boards of `devices` devices each.
fn host(boards: usize, devices: usize, query: bool) -> sim::SimHost {
    let mut toml = String::from("name = \"contention-bench\"\ncpus = 1\n");
    for b in 0..boards {
        toml.push_str(&format!(
            "[[board]]\nname = \"line{b}\"\naddress = 0\ntimeout_s = 100\ntransfer = \"dma\"\n"
        ));
        if !query {
            // vax-780-terminals' lines.
            toml.push_str("call_overhead_us = 1500\ndma_setup_us = 0\ndma_block_bytes = 1\ninterrupt_us = 131\nt1_ns = 500\n");
        }
        for d in 1..=devices {
            if query {
                toml.push_str(&format!(
                    "  [[board.device]]\n  address = {d}\n  model = \"scpi\"\n  idn = \"BENCH,DEV{d},0,1.0\"\n"
                ));
            } else {
                toml.push_str(&format!(
                    "  [[board.device]]\n  address = {d}\n  model = \"terminal\"\n  accept_ns = 1041167\n"
                ));
            }
        }
    }
    sim::Config::parse(&toml)
        .and_then(|c| c.build())
        .expect("generated configuration")
}

/// One device's loop: its handle, its start, its transactions so far.
struct Lane {
    bus: Bus,
    dev: gpib::Device,
    start: Duration,
    n: u64,
}

impl Lane {
    /// One transaction, or `Break` once the lane's clock passed `span`.
    fn step(&mut self, span: Duration, query: bool) -> ControlFlow<()> {
        if self.bus.now().saturating_sub(self.start) >= span {
            return ControlFlow::Break(());
        }
        if query {
            let mut answer = [0u8; 64];
            self.dev.query_into(b"*IDN?", &mut answer).expect("query");
        } else {
            self.dev.write(&[b'x'; 35]).expect("write");
        }
        self.n += 1;
        ControlFlow::Continue(())
    }
}

/// One run: wall time and transactions of all devices together. Lanes on one thread
/// (as `gpib-diag contention` runs), or with `threads` one participant thread per
/// device.
fn run(
    boards: usize,
    devices: usize,
    span: Duration,
    query: bool,
    threads: bool,
) -> (Duration, u64) {
    let host = host(boards, devices, query);
    let start = host.now();
    let lanes: Vec<Lane> = (0..boards * devices)
        .map(|i| {
            let bus = Bus::new(host.board(i / devices).expect("board"));
            let dev = bus.device((i % devices + 1) as u8).expect("address");
            Lane {
                bus,
                dev,
                start,
                n: 0,
            }
        })
        .collect();
    if !threads {
        let mut lanes = lanes;
        let t0 = Instant::now();
        host.run_lanes(&mut lanes, |l| l.step(span, query));
        return (t0.elapsed(), lanes.iter().map(|l| l.n).sum());
    }
    let workers: Vec<_> = lanes.iter().map(|_| host.participant()).collect();
    let t0 = Instant::now();
    let handles: Vec<_> = workers
        .into_iter()
        .zip(lanes)
        .map(|(p, mut lane)| {
            std::thread::spawn(move || {
                p.enter();
                while lane.step(span, query).is_continue() {}
                lane.n
            })
        })
        .collect();
    let n = handles.into_iter().map(|t| t.join().expect("worker")).sum();
    (t0.elapsed(), n)
}

fn report(json: bool, query: bool, threads: bool, boards: usize, devices: usize, span: Duration) {
    let (wall, n) = run(boards, devices, span, query, threads);
    let per = wall.as_nanos() as f64 / n.max(1) as f64;
    if json {
        println!(
            "{{\"mode\": \"{}\", \"boards\": {boards}, \"devices\": {devices}, \"virtual_seconds\": {}, \"wall_seconds\": {}, \"transactions\": {n}, \"wall_ns_per_transaction\": {per}}}",
            if threads { "threads" } else { "lanes" },
            span.as_secs_f64(),
            wall.as_secs_f64()
        );
    } else {
        println!(
            "{boards} board(s) x {devices:>2} devices, {:>6.0} s virtual: {:>8.3} s wall, {n:>9} transactions, {per:>8.0} ns wall each",
            span.as_secs_f64(),
            wall.as_secs_f64()
        );
    }
}

fn main() {
    let json = std::env::args().any(|a| a == "--json");
    let query = std::env::args().any(|a| a == "--query");
    let threads = std::env::args().any(|a| a == "--threads");
    let num = |flag: &str, default: f64| arg(flag).map_or(default, |v| v.parse().expect(flag));
    let span = Duration::from_secs_f64(num("--seconds", 3600.0));
    if std::env::args().any(|a| a == "--grid") {
        for d in [1, 2, 4, 8, 15, 30] {
            report(json, query, threads, 1, d, span);
        }
        for b in [1, 2, 4, 8] {
            report(json, query, threads, b, 15, span);
        }
    } else {
        report(
            json,
            query,
            threads,
            num("--boards", 8.0) as usize,
            num("--devices", 15.0) as usize,
            span,
        );
    }
}
