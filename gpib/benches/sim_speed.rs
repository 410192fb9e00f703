//! The simulator's wall-clock cost: short queries per second, and simulated bytes moved
//! per wall second for 1 MiB blocks, beside memcpy of 1 MiB measured in the same run.
//!
//! `cargo bench -p gpib --bench sim_speed` prints a table; `-- --json FILE` also writes
//! the figures as JSON (each run's figure too, for minima). Each case runs `--runs N`
//! times (7) for `--budget-ms MS` (300) each; the median is the headline.
//! `-- --profile-queries N` makes exactly N queries and nothing else, for callgrind;
//! `-- --queries-only` runs the short queries alone. A block query's fixed cost is
//! `BLOCK? 16` end to end; the cost per byte is given whole and beyond that fixed cost.

use std::hint::black_box;
use std::time::{Duration, Instant};

use gpib::{sim, Bus};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn cpu_seconds() -> f64 {
    // /proc/self/stat fields 14 and 15: utime and stime in clock ticks (100 Hz here).
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = &s[s.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            Some((f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?) / 100.0)
        })
        .unwrap_or(0.0)
}

/// Runs `op` for about `budget` and returns (ops per second, CPU us per op).
fn rate(budget: Duration, mut op: impl FnMut()) -> (f64, f64) {
    let (c0, t0) = (cpu_seconds(), Instant::now());
    let mut n = 0u64;
    while t0.elapsed() < budget {
        for _ in 0..64 {
            op();
        }
        n += 64;
    }
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), cpu_seconds() - c0);
    (n as f64 / wall, cpu * 1e6 / n as f64)
}

/// The value after `flag` on the command line.
fn arg(flag: &str) -> Option<String> {
    std::env::args().skip_while(|a| a != flag).nth(1)
}

fn main() {
    let json_path = arg("--json");
    let budget =
        Duration::from_millis(arg("--budget-ms").map_or(300, |v| v.parse().expect("--budget-ms")));
    let runs: usize = arg("--runs").map_or(7, |v| v.parse().expect("--runs"));
    let runs = runs.max(1);

    // Short queries: *IDN? on the bench's SCPI instrument, into a reused buffer.
    let bus = Bus::new(sim::bench().board(0).expect("bench board"));
    // 64 MiB at the 1 MB/s handshake ceiling is 67 s of virtual time.
    bus.set_timeout(Duration::from_secs(300).into())
        .expect("timeout");
    let dmm = bus.device(22).expect("address");
    let mut answer = [0u8; 64];
    // `--profile-queries N`: exactly N queries and nothing else, for
    // `valgrind --tool=callgrind` (instruction counts per query repeat on a noisy machine).
    if let Some(n) = arg("--profile-queries") {
        let n: u64 = n.parse().expect("--profile-queries takes a count");
        for _ in 0..n {
            black_box(dmm.query_into(b"*IDN?", &mut answer).expect("query"));
        }
        return;
    }
    let mut q = Vec::new();
    let mut q_cpu = Vec::new();
    for _ in 0..runs {
        let (r, c) = rate(budget, || {
            let st = dmm.query_into(b"*IDN?", &mut answer).expect("query");
            black_box(st);
        });
        q.push(r);
        q_cpu.push(c);
    }
    let list = |v: &[f64]| v.iter().map(f64::to_string).collect::<Vec<_>>().join(", ");
    // `--queries-only`: the short queries and nothing else (bench/compare.sh runs them
    // in turn with pyvisa-sim's, one run each, for per-run ratios).
    if std::env::args().any(|a| a == "--queries-only") {
        println!(
            "*IDN? queries: {:.0} /s (median of {runs} runs)",
            median(q.clone())
        );
        if let Some(path) = json_path {
            let doc = format!("{{\"query_runs\": [{}]}}\n", list(&q));
            std::fs::write(&path, doc).expect("write JSON");
        }
        return;
    }

    // A block query's fixed cost: `BLOCK? 16` end to end (the instrument's header,
    // the four bus operations, the parse of the header), ns per query.
    let mut small = [0u8; 16];
    let mut fixed = Vec::new();
    for _ in 0..runs {
        let (r, _) = rate(budget, || {
            black_box(
                dmm.query_block_into("BLOCK? 16", &mut small)
                    .expect("block"),
            );
        });
        fixed.push(1e9 / r);
    }
    let fixed_ns = median(fixed.clone());

    // 1 MiB definite-length blocks read straight into the caller's buffer.
    const MIB: usize = 1 << 20;
    let mut buf = vec![0u8; MIB];
    let mut blocks = Vec::new();
    for _ in 0..runs {
        let (r, _) = rate(budget, || {
            let info = dmm
                .query_block_into("BLOCK? 1048576", &mut buf)
                .expect("block");
            black_box(info);
        });
        blocks.push(r * MIB as f64);
    }

    // Cost per byte against size: 1 KiB to 64 MiB blocks (the instrument's largest).
    let mut per_byte = Vec::new();
    let mut big = vec![0u8; 64 * MIB];
    for n in [1024, 64 * 1024, MIB, 16 * MIB, 64 * MIB] {
        let cmd = format!("BLOCK? {n}");
        let (r, _) = rate(budget, || {
            black_box(dmm.query_block_into(&cmd, &mut big[..n]).expect("block"));
        });
        // memcpy of the same size, the floor for that size (cache or main memory).
        let src = vec![7u8; n];
        let (m, _) = rate(budget, || {
            big[..n].copy_from_slice(black_box(&src));
            black_box(&big);
        });
        // Beyond the fixed cost: what each further byte costs.
        let beyond = (1e9 / r - fixed_ns).max(0.0) / n as f64;
        per_byte.push((n, 1e9 / (r * n as f64), beyond, 1e9 / (m * n as f64)));
    }

    // memcpy of 1 MiB in the same process, the in-memory ceiling.
    let src = vec![7u8; MIB];
    let mut dst = vec![0u8; MIB];
    let mut mem = Vec::new();
    for _ in 0..runs {
        let (r, _) = rate(budget, || {
            dst.copy_from_slice(black_box(&src));
            black_box(&dst);
        });
        mem.push(r * MIB as f64);
    }

    let ratios: Vec<f64> = blocks.iter().zip(&mem).map(|(b, m)| b / m).collect();
    let runs_json = format!(
        "\"query_runs\": [{}], \"block16_ns_runs\": [{}], \"block_runs\": [{}], \"memcpy_runs\": [{}], \"block_to_memcpy_runs\": [{}]",
        list(&q),
        list(&fixed),
        list(&blocks),
        list(&mem),
        list(&ratios)
    );
    let (q, q_cpu, blocks, mem) = (median(q), median(q_cpu), median(blocks), median(mem));
    println!("simulator speed (median of {runs} runs of {budget:?}):");
    println!(
        "  *IDN? queries            {:>12.0} /s   {:.2} us CPU each",
        q, q_cpu
    );
    println!(
        "  1 MiB block reads        {:>12.1} MB/s (simulated bytes per wall second)",
        blocks / 1e6
    );
    println!("  memcpy 1 MiB             {:>12.1} MB/s", mem / 1e6);
    println!("  block / memcpy           {:>12.3}", blocks / mem);
    println!("  BLOCK? 16 end to end     {fixed_ns:>12.0} ns (a block query's fixed cost)");
    for (n, ns, beyond, mem_ns) in &per_byte {
        println!(
            "  wall ns per byte, {n:>8} B block: {ns:.4}, beyond the fixed cost {beyond:.4}  (memcpy of {n} B: {mem_ns:.4})"
        );
    }
    if let Some(path) = json_path {
        let per: Vec<String> = per_byte
            .iter()
            .map(|(n, ns, beyond, m)| {
                format!(
                    "{{\"size\": {n}, \"wall_ns_per_byte\": {ns}, \"beyond_fixed_ns_per_byte\": {beyond}, \"memcpy_ns_per_byte\": {m}}}"
                )
            })
            .collect();
        let doc = format!(
            "{{\"runs\": {runs}, \"queries_per_second\": {q}, \"us_cpu_per_query\": {q_cpu}, \"block16_ns\": {fixed_ns}, \"block_1mib_bytes_per_second\": {blocks}, \"memcpy_1mib_bytes_per_second\": {mem}, \"block_to_memcpy\": {}, \"per_byte\": [{}], {runs_json}}}\n",
            blocks / mem,
            per.join(", ")
        );
        std::fs::write(&path, doc).expect("write JSON");
        println!("wrote {path}");
    }
}
