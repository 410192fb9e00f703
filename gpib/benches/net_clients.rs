//! Our own network clients against a running `gpib-diag serve`: `*IDN?` round trips
//! and 1 MiB block reads through the Prologix backend and the VXI-11 backend, each
//! with its own connection to the same server. `bench/targets/6-network.sh` starts the
//! server and runs this interleaved with pyvisa-py's sessions, so that both sides are
//! measured in the same run against the same server.
//!
//! ```text
//! cargo bench -p gpib --bench net_clients -- --prologix 127.0.0.1:PORT --vxi11 127.0.0.1:PORT \
//!     [--device 22] [--seconds 0.5] [--block 1048576]
//! ```
//!
//! Prints one JSON object: queries per second and block bytes per second for each
//! protocol given. Loopback only: other hosts are refused.

use std::hint::black_box;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use gpib::backend::prologix::PrologixBoard;
use gpib::backend::vxi11::{Vxi11Board, Vxi11Options};
use gpib::{Bus, Device};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn loopback(what: &str, s: &str) -> SocketAddr {
    let a: SocketAddr = s
        .parse()
        .unwrap_or_else(|e| panic!("{what} {s:?}: not IP:PORT ({e})"));
    assert!(a.ip().is_loopback(), "{what} {s}: loopback addresses only");
    a
}

/// Operations per second of `op` over about `budget` (at least 3 operations).
fn rate(budget: Duration, mut op: impl FnMut()) -> f64 {
    let t0 = Instant::now();
    let mut n = 0u32;
    while n < 3 || t0.elapsed() < budget {
        op();
        n += 1;
    }
    f64::from(n) / t0.elapsed().as_secs_f64()
}

/// (`*IDN?` queries per second, block bytes per second) on `dev`.
fn measure(dev: &Device, budget: Duration, block: usize) -> (f64, f64) {
    let mut idn = [0u8; 256];
    let st = dev.query_into(b"*IDN?", &mut idn).expect("*IDN?");
    assert!(
        idn[..st.count].starts_with(b"SIMULATED"),
        "unexpected *IDN? answer"
    );
    let cmd = format!("BLOCK? {block}");
    let mut buf = vec![0u8; block + 64];
    let info = dev.query_block_into(&cmd, &mut buf).expect("BLOCK?");
    assert_eq!(info.len, block);
    assert!(
        buf[..block].iter().enumerate().all(|(i, &b)| b == i as u8),
        "block bytes"
    );
    let q = rate(budget, || {
        black_box(dev.query_into(b"*IDN?", &mut idn).expect("*IDN?"));
    });
    let b = rate(budget, || {
        black_box(dev.query_block_into(&cmd, &mut buf).expect("BLOCK?"));
    });
    (q, b * block as f64)
}

fn main() {
    let device: u8 = arg("--device").map_or(22, |d| d.parse().expect("--device N"));
    let budget =
        Duration::from_secs_f64(arg("--seconds").map_or(0.5, |s| s.parse().expect("--seconds S")));
    let block: usize = arg("--block").map_or(1 << 20, |s| s.parse().expect("--block N"));
    let mut fields = Vec::new();
    if let Some(p) = arg("--prologix") {
        let a = loopback("--prologix", &p);
        let bus = Bus::new(PrologixBoard::connect_tcp(&a.to_string()).expect("Prologix connect"));
        bus.set_timeout(Duration::from_secs(10)).expect("timeout");
        let dev = bus.device(device).expect("address");
        let (q, b) = measure(&dev, budget, block);
        fields.push(format!(
            "\"prologix_queries_per_second\": {q}, \"prologix_block_bytes_per_second\": {b}"
        ));
    }
    if let Some(v) = arg("--vxi11") {
        let a = loopback("--vxi11", &v);
        let opts = Vxi11Options {
            port: Some(a.port()),
            interrupts: false,
            ..Vxi11Options::default()
        };
        let bus = Bus::new(Vxi11Board::connect(&a.ip().to_string(), opts).expect("VXI-11 connect"));
        bus.set_timeout(Duration::from_secs(10)).expect("timeout");
        let dev = bus.device(device).expect("address");
        let (q, b) = measure(&dev, budget, block);
        fields.push(format!(
            "\"vxi11_queries_per_second\": {q}, \"vxi11_block_bytes_per_second\": {b}"
        ));
    }
    println!("{{\"block\": {block}, {}}}", fields.join(", "));
}
