//! The simulator's wall-clock cost of a contention run, as `gpib-diag contention`
//! drives one: `B` boards shaped like the lines of the 1983 VAX-11/780 terminal
//! measurement (one CPU; 1.5 ms of work a call, an interrupt a character) with `D`
//! terminals each (960 characters a second), one participant thread per terminal
//! writing 35-character lines until its virtual clock passes the span. `--query` has
//! SCPI instruments on DMA boards answer `*IDN?` instead.
//!
//! `cargo bench -p gpib --bench sim_contention -- [--boards 8] [--devices 15]
//! [--seconds 3600] [--grid] [--json]` prints wall time, transactions and wall ns per
//! simulated transaction; `--grid` runs 1..30 devices on one board and 1..8 boards of
//! 15 devices (the cost per transaction should not move). `--json`: one JSON object
//! per case.

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

/// One run: wall time and transactions of all devices together.
fn run(boards: usize, devices: usize, span: Duration, query: bool) -> (Duration, u64) {
    let host = host(boards, devices, query);
    let workers: Vec<_> = (0..boards * devices).map(|_| host.participant()).collect();
    let t0 = Instant::now();
    let threads: Vec<_> = workers
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let bus = Bus::new(host.board(i / devices).expect("board"));
            std::thread::spawn(move || {
                p.enter();
                let dev = bus.device((i % devices + 1) as u8).expect("address");
                let mut answer = [0u8; 64];
                let line = [b'x'; 35];
                let start = bus.now();
                let mut n = 0u64;
                while bus.now().saturating_sub(start) < span {
                    if query {
                        dev.query_into(b"*IDN?", &mut answer).expect("query");
                    } else {
                        dev.write(&line).expect("write");
                    }
                    n += 1;
                }
                n
            })
        })
        .collect();
    let n = threads.into_iter().map(|t| t.join().expect("worker")).sum();
    (t0.elapsed(), n)
}

fn report(json: bool, query: bool, boards: usize, devices: usize, span: Duration) {
    let (wall, n) = run(boards, devices, span, query);
    let per = wall.as_nanos() as f64 / n.max(1) as f64;
    if json {
        println!(
            "{{\"boards\": {boards}, \"devices\": {devices}, \"virtual_seconds\": {}, \"wall_seconds\": {}, \"transactions\": {n}, \"wall_ns_per_transaction\": {per}}}",
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
    let num = |flag: &str, default: f64| arg(flag).map_or(default, |v| v.parse().expect(flag));
    let span = Duration::from_secs_f64(num("--seconds", 3600.0));
    if std::env::args().any(|a| a == "--grid") {
        for d in [1, 2, 4, 8, 15, 30] {
            report(json, query, 1, d, span);
        }
        for b in [1, 2, 4, 8] {
            report(json, query, b, 15, span);
        }
    } else {
        report(
            json,
            query,
            num("--boards", 8.0) as usize,
            num("--devices", 15.0) as usize,
            span,
        );
    }
}
