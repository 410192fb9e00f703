//! Concurrency stress in every sharing mode, every answer checked: each request stores
//! a token in the instrument and reads it back in the same message
//! (`DATA #<n><token>;DATA?`), so an answer that went to the wrong thread, or a request
//! lost on the way, is seen.
//!
//! `GPIB_STRESS_THREADS` (default 8) and `GPIB_STRESS_ITERS` (default 2,000 requests a
//! thread) size the run; the README gives the larger run (8 x 10,000).

use std::time::Duration;

use gpib::sim::instruments::ScpiInstrument;
use gpib::sim::timing::{BoardTiming, DeviceTiming};
use gpib::sim::SimHost;
use gpib::{Address, Bus, PrimaryAddress};
use gpib_suite::{on_every_backend, SCPI};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn threads() -> usize {
    env("GPIB_STRESS_THREADS", 8)
}

fn iterations() -> usize {
    env("GPIB_STRESS_ITERS", 2_000)
}

/// Counts of answers that belonged to another request, and of requests that failed.
#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
struct Tally {
    crossed: usize,
    lost: usize,
}

/// `iterations` token round trips on `dev`, by thread `t`.
fn round_trips(dev: &gpib::Device, t: usize, iterations: usize) -> Tally {
    let mut tally = Tally::default();
    for i in 0..iterations {
        let token = format!("{t:03}-{i:08}");
        let request = format!("DATA #2{}{token};DATA?", token.len());
        match dev.query_block(&request) {
            Ok(back) if back == token.as_bytes() => {}
            Ok(_) => tally.crossed += 1,
            Err(_) => tally.lost += 1,
        }
    }
    tally
}

fn sum(tallies: impl IntoIterator<Item = Tally>) -> Tally {
    tallies.into_iter().fold(Tally::default(), |a, b| Tally {
        crossed: a.crossed + b.crossed,
        lost: a.lost + b.lost,
    })
}

on_every_backend! {
    // One Bus shared by every thread, every thread on the same device.
    fn threads_share_one_device(fx: Fixture) {
        let (n, iters) = (threads(), iterations());
        let tally = std::thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .map(|t| {
                    let dev = fx.bus.device(SCPI).unwrap();
                    s.spawn(move || round_trips(&dev, t, iters))
                })
                .collect();
            sum(handles.into_iter().map(|h| h.join().unwrap()))
        });
        assert_eq!(tally, Tally::default(), "{n} threads x {iters} on one device");
    }
}

/// A host whose one board has a SCPI instrument at each of 1..=n.
fn many_instruments(n: usize) -> SimHost {
    let host = SimHost::new("stress");
    let b = host.add_board(
        "gpib0",
        PrimaryAddress::try_from(0u8).unwrap(),
        BoardTiming::default(),
        Duration::from_secs(10).into(),
    );
    for pad in 1..=n {
        let at = Address::try_from(pad as u8).unwrap();
        host.attach(
            b,
            at,
            Box::new(ScpiInstrument::default()),
            DeviceTiming::default(),
        )
        .unwrap();
    }
    host
}

// One Bus shared by every thread, each thread on a device of its own.
#[test]
fn threads_on_different_devices() {
    let (n, iters) = (threads().min(30), iterations());
    let bus = Bus::new(many_instruments(n).board(0).unwrap());
    let tally = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|t| {
                let dev = bus.device((t + 1) as u8).unwrap();
                s.spawn(move || round_trips(&dev, t, iters))
            })
            .collect();
        sum(handles.into_iter().map(|h| h.join().unwrap()))
    });
    assert_eq!(
        tally,
        Tally::default(),
        "{n} threads x {iters}, a device each"
    );
}

// A Bus handle per thread, all on one board, each from the manager that opened it: the
// board's one lock and addressing state are shared whoever holds a handle (before,
// about 10 % crossed, 25 % lost).
#[test]
fn a_bus_handle_per_thread_on_one_board() {
    let (n, iters) = (threads().min(30), iterations());
    let mut rm = gpib::ResourceManager::with_host(many_instruments(n)).unwrap();
    let tally = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|t| {
                let bus = rm.open_interface("GPIB0::INTFC").unwrap();
                s.spawn(move || round_trips(&bus.device((t + 1) as u8).unwrap(), t, iters))
            })
            .collect();
        sum(handles.into_iter().map(|h| h.join().unwrap()))
    });
    assert_eq!(tally, Tally::default(), "{n} threads x {iters}, a Bus each");
}
