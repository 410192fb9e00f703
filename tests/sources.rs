//! Contention sources of the simulator, each a mechanism of the model: what it costs,
//! in exact virtual time, and how a configuration lists, adds and removes them.

use std::time::Duration;

use gpib::sim::config::SourceKind;
use gpib::sim::{Config, EventKind, SimHost};
use gpib::{Address, Bus};

fn host(toml: &str) -> SimHost {
    Config::parse(toml).unwrap().build().unwrap()
}

/// One DMA board (20 µs a call, 2 µs a command byte, board T1 500 ns) with a SCPI
/// instrument at 22, and `extra` TOML lines after it.
fn bench(board_extra: &str, extra: &str) -> SimHost {
    host(&format!(
        "name = \"t\"\n[[board]]\nname = \"gpib0\"\ntransfer = \"dma\"\n{board_extra}\n\
         [[board.device]]\naddress = 22\nmodel = \"scpi\"\n{extra}"
    ))
}

fn addr(n: u8) -> Address {
    Address::try_from(n).unwrap()
}

/// Virtual time of writing `n` bytes to 22 (the device already addressed).
fn write_time(bus: &Bus, n: usize) -> Duration {
    let dev = bus.device(22).unwrap();
    dev.write(b"*CLS").unwrap(); // addressed now
    let data = vec![b'x'; n];
    let t0 = bus.now();
    dev.write(&data).unwrap();
    bus.now() - t0
}

/// Nanoseconds a byte costs, from two write sizes.
fn per_byte_ns(bus: &Bus) -> f64 {
    let (a, b) = (write_time(bus, 1000), write_time(bus, 3000));
    (b - a).as_nanos() as f64 / 2000.0
}

#[test]
fn a_listen_only_device_slows_every_handshake_to_its_acceptance() {
    let quiet = bench("", "");
    assert_eq!(per_byte_ns(&Bus::new(quiet.board(0).unwrap())), 1000.0);
    let logged = bench(
        "",
        "[[board.device]]\naddress = 5\nmodel = \"scpi\"\nlisten_only = true\naccept_ns = 20000\n",
    );
    let bus = Bus::new(logged.board(0).unwrap());
    // The board talks (T1 500 ns) and the plotter accepts in 20 µs.
    assert_eq!(per_byte_ns(&bus), 20_500.0);
    // Reads too: the plotter listens to the instrument's bytes as well.
    let dev = bus.device(22).unwrap();
    let t0 = bus.now();
    let answer = dev.query("*IDN?").unwrap();
    let slow = bus.now() - t0;
    let fast_bus = Bus::new(quiet.board(0).unwrap());
    let t0 = fast_bus.now();
    fast_bus.device(22).unwrap().query("*IDN?").unwrap();
    let fast = fast_bus.now() - t0;
    // Every byte read costs the instrument's T1 (500 ns) + 20 µs instead of 1 µs.
    assert!(
        slow - fast >= Duration::from_nanos(19_500) * answer.len() as u32,
        "{slow:?}"
    );
}

#[test]
fn an_nrfd_holder_delays_the_next_command_bytes_until_it_releases() {
    let lines = "[[board.device]]\naddress = 5\nmodel = \"scpi\"\nlisten_only = true\n";
    // (write start, end of the next addressing, NRFD seen held in between)
    let run = |h: &SimHost| {
        let bus = Bus::new(h.board(0).unwrap());
        let dev = bus.device(22).unwrap();
        dev.write(b"*CLS").unwrap(); // addressed
        bus.delay(Duration::from_millis(3)); // any hold is over
        let start = bus.now();
        dev.write(b"*CLS").unwrap();
        let held = bus.lines().unwrap().nrfd;
        bus.transaction(|tx| tx.address_from_device(addr(22)))
            .unwrap();
        (start, bus.now(), held)
    };
    let (s0, e0, held0) = run(&bench("", lines));
    let (s1, e1, held1) = run(&bench("", &format!("{lines}nrfd_hold_us = 2000\n")));
    assert!(!held0 && held1, "NRFD shows on the lines while held");
    assert_eq!(s0, s1);
    assert!(e0 < s0 + Duration::from_micros(100));
    // The write delivers its 4 bytes at start + 20 µs + 4 µs; NRFD is released 2 ms
    // later, and the 3 addressing bytes (UNL MLA TAD) follow at 2 µs each.
    let released = s1 + Duration::from_micros(24) + Duration::from_millis(2);
    assert_eq!(e1, released + Duration::from_micros(6));
}

#[test]
fn an_srq_storm_is_serial_polled_by_the_driver_each_time() {
    let storm = "[[board.device]]\naddress = 5\nmodel = \"scpi\"\nsrq_every_us = 100\n";
    let polled = bench("autopoll = true", storm);
    polled.record(16);
    let bus = Bus::new(polled.board(0).unwrap());
    bus.delay(Duration::from_millis(10));
    let polls: Vec<Duration> = polled
        .take_events()
        .into_iter()
        .filter(|e| matches!(e.kind, EventKind::SerialPoll { device: 5, .. }))
        .map(|e| e.at)
        .collect();
    // One poll: 20 µs call + 6 command bytes (UNL MLA SPE TAD SPD UNT) at 2 µs + one
    // 1 µs byte = 33 µs; the device asks again 100 µs after each poll.
    assert_eq!(polls[0], Duration::from_micros(100));
    assert_eq!(polls[1] - polls[0], Duration::from_micros(133));
    assert_eq!(polls.len(), 1 + (10_000 - 100) / 133);
    assert_eq!(
        polled.bus_busy(0),
        Duration::from_micros(33) * polls.len() as u32
    );
    // Without autopoll nobody polls: SRQ stays asserted.
    let unpolled = bench("", storm);
    let bus = Bus::new(unpolled.board(0).unwrap());
    bus.delay(Duration::from_millis(10));
    assert!(bus.srq().unwrap());
    assert_eq!(unpolled.bus_busy(0), Duration::ZERO);
}

#[test]
fn every_call_addressing_sends_addressing_before_each_write() {
    let commands = |board_extra: &str| {
        let h = bench(board_extra, "");
        let bus = Bus::new(h.board(0).unwrap());
        h.record(16);
        let dev = bus.device(22).unwrap();
        for _ in 0..3 {
            dev.write(b"*CLS").unwrap();
        }
        let n = h
            .take_events()
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Command(_)))
            .count();
        (bus.readdresses(), n)
    };
    assert_eq!(commands(""), (false, 1));
    assert_eq!(commands("addressing = \"every-call\""), (true, 3));
}

#[test]
fn a_busy_disc_stretches_cpu_work_elsewhere_by_its_interrupt_share() {
    let pio = "transfer = \"pio\"\npio_write_byte_ns = 1000";
    let board = format!(
        "name = \"t\"\n[[board]]\nname = \"gpib0\"\n{pio}\n[[board.device]]\naddress = 22\n\
         model = \"scpi\"\n"
    );
    let quiet = host(&board);
    let busy = host(&format!(
        "{board}[[board]]\nname = \"disc\"\ntransfer = \"dma\"\n\
         dma_block_bytes = 512\ninterrupt_us = 95\ndma_setup_us = 5\n[[board.device]]\n\
         address = 1\nmodel = \"disc\"\nactivity_bytes_per_s = 1024000\n"
    ));
    let a = per_byte_ns(&Bus::new(quiet.board(0).unwrap()));
    let b = per_byte_ns(&Bus::new(busy.board(0).unwrap()));
    // 2,000 interrupts a second at 100 µs each: 20 % of the CPU.
    let share = 1_024_000.0 / 512.0 * 100e-6;
    assert!((b / a - 1.0 / (1.0 - share)).abs() < 1e-3, "{a} {b}");
}

#[test]
fn a_long_cable_adds_propagation_and_the_safe_settling_time() {
    // Board T1 500 ns, device acceptance 300 ns: the 1 µs ceiling on a short bus.
    assert_eq!(
        per_byte_ns(&Bus::new(bench("", "").board(0).unwrap())),
        1000.0
    );
    // 12 m for 2 devices is past 2 m a device: T1 2 µs, plus 4 trips of 12 m at 5 ns.
    let long = bench("cable_m = 12", "");
    assert_eq!(
        per_byte_ns(&Bus::new(long.board(0).unwrap())),
        2300.0 + 240.0
    );
    let in_limits = bench("cable_m = 4", "");
    assert_eq!(
        per_byte_ns(&Bus::new(in_limits.board(0).unwrap())),
        1000.0 + 80.0
    );
}

#[test]
fn configurations_list_add_and_remove_their_sources() {
    let mut c = Config::from_name_or_path("hp9000-350").unwrap();
    let kinds: Vec<SourceKind> = c.sources().iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            SourceKind::MountedDisc,
            SourceKind::ProgrammedIo,
            SourceKind::ProgrammedIo
        ]
    );
    assert_eq!(c.without_source(SourceKind::MountedDisc), 1);
    assert!(c
        .sources()
        .iter()
        .all(|s| s.kind != SourceKind::MountedDisc));
    for kind in SourceKind::ALL {
        let mut b = Config::from_name_or_path("bench").unwrap();
        b.without_source(kind);
        assert!(b.sources().iter().all(|s| s.kind != kind), "{kind}");
        let said = b.with_source(kind, Some("gpib0")).unwrap();
        assert!(!said.is_empty());
        if kind != SourceKind::MountedDisc {
            // (A polled disc slows only programmed I/O elsewhere: bench is DMA.)
            assert!(b.sources().iter().any(|s| s.kind == kind), "{kind}: {said}");
        }
        b.build().unwrap();
        assert_eq!(b.without_source(kind) > 0, kind != SourceKind::MountedDisc);
        assert!(b.sources().is_empty(), "{kind}: {:?}", b.sources());
    }
    let e = "gremlins".parse::<SourceKind>().unwrap_err().to_string();
    assert!(
        e.contains("slow-listener") && e.contains("\"gremlins\""),
        "{e}"
    );
}

#[test]
fn contention_fields_out_of_range_are_refused_with_their_field() {
    for (extra, field) in [
        ("srq_every_us = 0.5", "srq_every_us"),
        ("nrfd_hold_us = 2e6", "nrfd_hold_us"),
        ("activity_bytes_per_s = 1000000000", "activity_bytes_per_s"),
    ] {
        let text = format!(
            "name = \"t\"\n[[board]]\nname = \"g\"\n[[board.device]]\naddress = 3\nmodel = \"scpi\"\n{extra}\n"
        );
        let e = Config::parse(&text)
            .unwrap()
            .build()
            .unwrap_err()
            .to_string();
        assert!(e.contains(field) && e.contains("out of range"), "{e}");
    }
    let e = Config::parse("name = \"t\"\n[[board]]\nname = \"g\"\ncable_m = -1\n")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("cable_m = -1.0 is out of range"), "{e}");
}
