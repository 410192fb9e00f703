//! Resources with their own timelines, callers with their own clocks, instruments
//! that act on their own time: overlap where the resources allow it, contention where
//! they are shared, and the same virtual times run after run.

use std::time::{Duration, Instant};

use gpib::sim::instruments::ScpiInstrument;
use gpib::sim::timing::{BoardTiming, DeviceTiming, TransferMode};
use gpib::sim::{DeviceIo, Instrument, SimHost};
use gpib::{Address, Bus, PrimaryAddress};
use gpib_suite::{Fixture, SCPI};

fn addr(n: u8) -> Address {
    Address::try_from(n).unwrap()
}

/// A host with `boards` boards of `timing`, a SCPI instrument at 22 on each.
fn host_with(cpus: usize, boards: usize, timing: BoardTiming) -> SimHost {
    let host = SimHost::with_cpus("timeline", cpus);
    for i in 0..boards {
        let b = host.add_board(
            format!("gpib{i}"),
            PrimaryAddress::try_from(0u8).unwrap(),
            timing.clone(),
            Duration::from_secs(100).into(),
        );
        host.attach(
            b,
            addr(22),
            Box::new(ScpiInstrument::default()),
            DeviceTiming::default(),
        )
        .unwrap();
    }
    host
}

/// Each thread reads a block of `sizes[i]` bytes from board `i`, as participants
/// started together; returns each thread's virtual time at the end.
fn blocks_in_parallel(host: &SimHost, sizes: &[usize]) -> Vec<Duration> {
    let workers: Vec<_> = sizes.iter().map(|_| host.participant()).collect();
    let threads: Vec<_> = workers
        .into_iter()
        .zip(sizes)
        .enumerate()
        .map(|(i, (p, &n))| {
            let bus = Bus::new(host.board(i).unwrap());
            std::thread::spawn(move || {
                p.enter();
                let body = bus
                    .device(SCPI)
                    .unwrap()
                    .query_block(&format!("BLOCK? {n}"))
                    .unwrap();
                assert_eq!(body.len(), n);
                bus.now()
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

fn alone(timing: BoardTiming, n: usize) -> Duration {
    blocks_in_parallel(&host_with(1, 1, timing), &[n])[0]
}

fn pio() -> BoardTiming {
    BoardTiming {
        mode: TransferMode::Pio,
        pio_read_byte_ns: 1_000,
        ..BoardTiming::default()
    }
}

fn close(a: Duration, b: Duration, within: f64) -> bool {
    (a.as_secs_f64() - b.as_secs_f64()).abs() <= within * b.as_secs_f64()
}

#[test]
fn two_dma_transfers_on_two_boards_overlap() {
    let (big, small) = (1_000_000, 600_000);
    let longer = alone(BoardTiming::default(), big);
    let both = blocks_in_parallel(&host_with(1, 2, BoardTiming::default()), &[big, small]);
    let end = *both.iter().max().unwrap();
    assert!(
        close(end, longer, 0.01),
        "both end at {end:?}; the longer alone {longer:?}"
    );
    assert!(
        end.as_secs_f64() < 0.9 * (longer + alone(BoardTiming::default(), small)).as_secs_f64()
    );
}

#[test]
fn two_pio_transfers_on_a_one_cpu_host_take_the_sum() {
    let (a, b) = (400_000, 300_000);
    let sum = alone(pio(), a) + alone(pio(), b);
    let both = blocks_in_parallel(&host_with(1, 2, pio()), &[a, b]);
    let end = *both.iter().max().unwrap();
    assert!(
        close(end, sum, 0.02),
        "both end at {end:?}; the sum alone {sum:?}"
    );
    // With a CPU each, they overlap again.
    let two_cpus = blocks_in_parallel(&host_with(2, 2, pio()), &[a, b]);
    let longer = alone(pio(), a);
    assert!(
        close(*two_cpus.iter().max().unwrap(), longer, 0.01),
        "{two_cpus:?}"
    );
}

#[test]
fn the_same_workload_gives_the_same_virtual_times() {
    let run = || blocks_in_parallel(&host_with(1, 3, pio()), &[5_000, 70_000, 20_000]);
    let first = run();
    for _ in 0..5 {
        assert_eq!(run(), first);
    }
}

/// A terminal on a line of its own: it takes what it is sent.
struct Terminal;

impl Instrument for Terminal {
    fn model(&self) -> &str {
        "TERMINAL"
    }
    fn listen(&mut self, _data: &[u8], _end: bool, _io: &mut DeviceIo<'_>) {}
}

/// Shaped like the 1983 VAX-11/780 terminal measurement (Fermilab): each line is a
/// board of its own taking 960 characters a second; each character costs the CPU an
/// interrupt (131 µs) and each 35-character line 1.5 ms of application work, so an
/// active line costs a fixed share of the one CPU (16 %).
fn terminals(lines: usize) -> SimHost {
    let host = SimHost::with_cpus("vax-780-terminals", 1);
    let timing = BoardTiming {
        mode: TransferMode::Dma,
        call_overhead: Duration::from_micros(1_500),
        dma_setup: Duration::ZERO,
        dma_block: 1,
        interrupt_cpu: Duration::from_micros(131),
        t1_ns: 500,
        ..BoardTiming::default()
    };
    let device = DeviceTiming {
        accept_ns: 1_041_167,
        ..DeviceTiming::default()
    };
    for i in 0..lines {
        let b = host.add_board(
            format!("tty{i}"),
            PrimaryAddress::try_from(0u8).unwrap(),
            timing.clone(),
            Duration::from_secs(100).into(),
        );
        host.attach(b, addr(1), Box::new(Terminal), device.clone())
            .unwrap();
    }
    host
}

/// `n` lines busy for 20 s of virtual time: (CPU share, characters/s of each line).
fn terminal_run(n: usize) -> (f64, Vec<f64>) {
    let host = terminals(n);
    let span = Duration::from_secs(20);
    let workers: Vec<_> = (0..n).map(|_| host.participant()).collect();
    let threads: Vec<_> = workers
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let bus = Bus::new(host.board(i).unwrap());
            std::thread::spawn(move || {
                p.enter();
                let tty = bus.device(1).unwrap();
                let line = [b'x'; 35];
                let mut chars = 0u64;
                while bus.now() < span {
                    tty.write(&line).unwrap();
                    chars += 35;
                }
                chars as f64 / bus.now().as_secs_f64()
            })
        })
        .collect();
    let rates: Vec<f64> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    (host.cpu().as_secs_f64() / span.as_secs_f64(), rates)
}

#[test]
fn a_cpu_serving_many_lines_saturates_at_about_seven() {
    let runs: Vec<(f64, Vec<f64>)> = (1..=9).map(terminal_run).collect();
    let share = |n: usize| runs[n - 1].0;
    let per_line = |n: usize| runs[n - 1].1.iter().sum::<f64>() / n as f64;
    let total = |n: usize| runs[n - 1].1.iter().sum::<f64>();
    // Linear in the number of active lines up to four.
    for n in 2..=4 {
        let expected = share(1) * n as f64;
        assert!(
            (share(n) - expected).abs() < 0.03 * expected,
            "{n} lines: {}",
            share(n)
        );
        assert!(
            per_line(n) > 0.99 * per_line(1),
            "{n} lines run at full speed"
        );
    }
    assert!(
        (0.12..0.2).contains(&share(1)),
        "one line costs {}",
        share(1)
    );
    // Saturated at about seven: no idle CPU left, the rate per line falls.
    assert!(
        share(6) < 0.99 && share(7) > 0.97,
        "{} {}",
        share(6),
        share(7)
    );
    assert!(
        per_line(7) < 0.9 * per_line(1),
        "{} vs {}",
        per_line(7),
        per_line(1)
    );
    assert!(per_line(9) < per_line(8) && per_line(8) < per_line(7));
    // About 5,600 characters a second in all at seven lines, not 7 x 960 = 6,720.
    assert!((5_300.0..6_000.0).contains(&total(7)), "{}", total(7));
    assert!(
        total(9) < 1.02 * total(7),
        "the CPU, not the lines, sets the total"
    );
    // Run after run, the same figures.
    assert_eq!(terminal_run(7), runs[6]);
}

#[test]
fn a_measurement_ends_on_the_instrument_s_own_time() {
    let fx = Fixture::sim_bench();
    let dmm = fx.bus.device(SCPI).unwrap();
    dmm.write_str("*RST;*CLS;VOLT:APER 0.2;*ESE 1;*SRE 32")
        .unwrap();
    let wall = Instant::now();
    dmm.write_str("INIT;*OPC").unwrap();
    let t0 = fx.bus.now();
    assert!(!fx.bus.srq().unwrap(), "not before the measurement ends");
    let (who, stb) = fx
        .bus
        .wait_for_service(&[Fixture::addr(SCPI)], Duration::from_secs(10).into())
        .unwrap();
    let waited = fx.bus.now() - t0;
    assert_eq!(who, Fixture::addr(SCPI));
    assert!(stb.esb(), "{stb}");
    assert!(
        waited >= Duration::from_millis(190) && waited < Duration::from_millis(210),
        "SRQ came after {waited:?}, not at the 10 s timeout"
    );
    let reading: f64 = dmm.query("FETCH?").unwrap().parse().unwrap();
    assert!(reading > 0.9 && reading < 2.1);
    assert!(
        wall.elapsed() < Duration::from_secs(5),
        "virtual time costs no wall time"
    );
}

#[test]
fn queries_wait_for_the_measurement() {
    let fx = Fixture::sim_bench();
    let dmm = fx.bus.device(SCPI).unwrap();
    dmm.write_str("VOLT:APER 0.05").unwrap();
    let t0 = fx.bus.now();
    let v: f64 = dmm.query("READ?").unwrap().parse().unwrap();
    let took = fx.bus.now() - t0;
    assert!(v > 0.9, "{v}");
    assert!(took >= Duration::from_millis(50), "READ? took {took:?}");
    // *OPC? answers when the measurement ends, after MAV stayed clear meanwhile.
    dmm.write_str("INIT").unwrap();
    assert!(!dmm.serial_poll().unwrap().mav());
    let t1 = fx.bus.now();
    assert_eq!(dmm.query("*OPC?").unwrap(), "1");
    assert!(fx.bus.now() - t1 >= Duration::from_millis(40));
    // A device clear aborts a measurement: nothing arrives later.
    dmm.write_str("INIT;*OPC?").unwrap();
    dmm.clear().unwrap();
    fx.bus.delay(Duration::from_millis(100));
    assert!(!dmm.serial_poll().unwrap().mav());
    // A time of zero is the old behaviour: readings at once.
    dmm.write_str("VOLT:APER 0").unwrap();
    let t2 = fx.bus.now();
    dmm.query("READ?").unwrap();
    assert!(fx.bus.now() - t2 < Duration::from_millis(5));
}

#[test]
fn each_thread_has_its_own_clock() {
    let fx = Fixture::sim_bench();
    fx.bus.delay(Duration::from_secs(5));
    let main_now = fx.bus.now();
    let bus = fx.bus.clone();
    let other = std::thread::spawn(move || {
        let start = bus.now();
        bus.delay(Duration::from_secs(1));
        (start, bus.now())
    })
    .join()
    .unwrap();
    // A new thread starts where the host got to, and its delay is its own.
    assert_eq!(other.0, main_now);
    assert_eq!(other.1, main_now + Duration::from_secs(1));
    assert_eq!(fx.bus.now(), main_now);
}

/// A free-running counter: once started, it counts on its own every 10 ms of virtual
/// time, with no bus traffic, and answers `COUNT?`.
#[derive(Default)]
struct FreeRun {
    count: u64,
    line: Vec<u8>,
}

impl Instrument for FreeRun {
    fn model(&self) -> &str {
        "FREERUN"
    }
    fn listen(&mut self, data: &[u8], end: bool, io: &mut DeviceIo<'_>) {
        self.line.extend_from_slice(data);
        if !end {
            return;
        }
        let cmd = String::from_utf8_lossy(&self.line).trim().to_string();
        self.line.clear();
        match cmd.as_str() {
            "RUN" => io.wake_after(Duration::from_millis(10), 1),
            "COUNT?" => {
                io.output.push_str(&format!("{}\n", self.count));
                io.output.finish_message();
            }
            _ => {}
        }
    }
    fn timer(&mut self, _token: u64, io: &mut DeviceIo<'_>) {
        self.count += 1;
        io.wake_after(Duration::from_millis(10), 1);
    }
}

#[test]
fn an_instrument_acts_on_its_own_time() {
    let host = SimHost::new("free-run");
    let b = host.add_board(
        "gpib0",
        PrimaryAddress::try_from(0u8).unwrap(),
        BoardTiming::default(),
        Duration::from_secs(1).into(),
    );
    host.attach(
        b,
        addr(3),
        Box::<FreeRun>::default(),
        DeviceTiming::default(),
    )
    .unwrap();
    let bus = Bus::new(host.board(b).unwrap());
    let counter = bus.device(3).unwrap();
    counter.write_str("RUN").unwrap();
    let t0 = bus.now();
    bus.delay(Duration::from_millis(105));
    let n: u64 = counter.query("COUNT?").unwrap().parse().unwrap();
    // 10 ticks in 105 ms of virtual time after RUN, however fast the machine is.
    assert_eq!(n, 10, "after {:?}", bus.now() - t0);
    assert!(host.next_event().is_some(), "it keeps counting");
}
