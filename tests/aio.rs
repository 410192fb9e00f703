//! `gpib::aio`: many instruments from one runtime, dropped futures, and a runtime that
//! never waits for the bus.

mod gated;

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use gated::{Gate, GatedEcho, Op, Release, ECHO};
use gpib::aio::AsyncDevice;
use gpib::sim::instruments::ScpiInstrument;
use gpib::sim::timing::{BoardTiming, DeviceTiming};
use gpib::sim::SimHost;
use gpib::{Address, Bus, ErrorKind, PrimaryAddress};
use tokio::runtime::{Builder, Runtime};

/// Simulated boards, and SCPI instruments on each.
const BOARDS: usize = 2;
const PER_BOARD: u8 = 20;
/// Tasks per instrument, and token queries per task.
const TASKS: usize = 3;
const ROUNDS: usize = 60;

fn current_thread() -> Runtime {
    Builder::new_current_thread().enable_time().build().unwrap()
}

fn multi_thread() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .unwrap()
}

/// `BOARDS` simulated boards with `PER_BOARD` SCPI instruments each (addresses 1..),
/// as async devices.
fn instruments(host: &SimHost) -> Vec<AsyncDevice> {
    let mut devices = Vec::new();
    for b in 0..BOARDS {
        let zero = PrimaryAddress::try_from(0u8).unwrap();
        let board = host.add_board(
            format!("gpib{b}"),
            zero,
            BoardTiming::default(),
            Duration::from_secs(3).into(),
        );
        for a in 1..=PER_BOARD {
            let address = Address::try_from(a).unwrap();
            let idn = format!("SIMULATED,SCPI-DMM,{b}-{a},1.0");
            host.attach(
                board,
                address,
                Box::new(ScpiInstrument::new(idn)),
                DeviceTiming::default(),
            )
            .unwrap();
        }
        let bus = Bus::new(host.board(board).unwrap());
        for a in 1..=PER_BOARD {
            devices.push(AsyncDevice::new(bus.device(a).unwrap()));
        }
    }
    devices
}

/// Every task of every instrument makes token queries at once: a unique number set and
/// read back in one query, and (every third round) set and read back in two calls of
/// one `with_device`, which no other task's call may come between.
async fn token_queries(devices: Vec<AsyncDevice>) -> usize {
    let mut tasks = tokio::task::JoinSet::new();
    for (i, dev) in devices.into_iter().enumerate() {
        for t in 0..TASKS {
            let dev = dev.clone();
            tasks.spawn(async move {
                for round in 0..ROUNDS {
                    let token = ((i * TASKS + t) * ROUNDS + round + 1).to_string();
                    let answer = if round % 3 == 0 {
                        let set = format!("WAV:POIN {token}");
                        dev.with_device(move |d| {
                            d.write_str(&set)?;
                            d.query("WAV:POIN?")
                        })
                        .await
                    } else {
                        dev.query(format!("WAV:POIN {token};WAV:POIN?")).await
                    };
                    assert_eq!(answer.unwrap(), token, "device {i} task {t} round {round}");
                }
                ROUNDS
            });
        }
        // Each instrument is itself, too.
        let idn = dev.query("*IDN?").await.unwrap();
        let id = idn.split(',').nth(2).unwrap().to_string();
        let expected = format!("{}-{}", i / PER_BOARD as usize, i % PER_BOARD as usize + 1);
        assert_eq!(id, expected, "device {i}");
    }
    let mut answered = 0;
    while let Some(done) = tasks.join_next().await {
        answered += done.unwrap();
    }
    answered
}

#[test]
fn many_instruments_on_a_current_thread_runtime_each_get_their_own_answers() {
    let host = SimHost::new("rack");
    let devices = instruments(&host);
    assert_eq!(devices.len(), BOARDS * PER_BOARD as usize);
    let answered = current_thread().block_on(token_queries(devices));
    assert_eq!(answered, BOARDS * PER_BOARD as usize * TASKS * ROUNDS);
}

#[test]
fn many_instruments_on_a_multi_thread_runtime_each_get_their_own_answers() {
    let host = SimHost::new("rack");
    let devices = instruments(&host);
    let answered = multi_thread().block_on(token_queries(devices));
    assert_eq!(answered, BOARDS * PER_BOARD as usize * TASKS * ROUNDS);
}

/// The gated echo instrument as an async device.
fn gated_echo() -> (AsyncDevice, Gate) {
    let (board, gate) = GatedEcho::new();
    let dev = Bus::new(board).device(ECHO).unwrap();
    (AsyncDevice::new(dev), gate)
}

/// Polls `f` once.
fn poll_once<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

/// A query dropped while its write is held on the bus (no answer exists yet): the
/// query still ends, answer and all, so the next query gets its own answer.
#[test]
fn a_query_dropped_in_its_write_still_ends_and_the_next_gets_its_own_answer() {
    for rt in [current_thread(), multi_thread()] {
        rt.block_on(async {
            let (dev, gate) = gated_echo();
            gate.hold(Op::Write);
            {
                let mut first = pin!(dev.query("first"));
                assert!(poll_once(first.as_mut()).is_pending());
                gate.arrived.notified().await;
                assert!(gate.is_held());
            } // dropped mid-write
            let next = tokio::spawn({
                let dev = dev.clone();
                async move { dev.query("second").await }
            });
            // The next call waits for the dropped one's turn to end.
            for _ in 0..50 {
                tokio::task::yield_now().await;
            }
            assert!(!next.is_finished());
            gate.release(Release::Complete);
            assert_eq!(next.await.unwrap().unwrap(), "second");
            assert_eq!(gate.unread(), 0, "the dropped query's answer was read");
            assert_eq!(
                gate.clears(),
                0,
                "a dropped call that succeeded clears nothing"
            );
        });
    }
}

/// A query whose task is aborted while its read is held: the read ends, and the
/// answer it took is not the next caller's.
#[test]
fn an_aborted_query_mid_read_leaves_no_stale_answer() {
    for rt in [current_thread(), multi_thread()] {
        rt.block_on(async {
            let (dev, gate) = gated_echo();
            gate.hold(Op::Read);
            let first = tokio::spawn({
                let dev = dev.clone();
                async move { dev.query("first").await }
            });
            gate.arrived.notified().await;
            first.abort();
            assert!(first.await.unwrap_err().is_cancelled());
            let next = tokio::spawn({
                let dev = dev.clone();
                async move { dev.query("second").await }
            });
            for _ in 0..50 {
                tokio::task::yield_now().await;
            }
            assert!(!next.is_finished());
            gate.release(Release::Complete);
            assert_eq!(next.await.unwrap().unwrap(), "second");
            assert_eq!(gate.clears(), 0);
            // And the device goes on as usual.
            assert_eq!(dev.query("third").await.unwrap(), "third");
        });
    }
}

/// `tokio::time::timeout` gives up on a query whose read is held; the query ends when
/// released, and the next query gets its own answer.
#[test]
fn a_query_given_up_by_tokio_timeout_leaves_no_stale_answer() {
    for rt in [current_thread(), multi_thread()] {
        rt.block_on(async {
            let (dev, gate) = gated_echo();
            gate.hold(Op::Read);
            let gave_up = tokio::time::timeout(Duration::from_millis(20), dev.query("first"));
            assert!(gave_up.await.is_err(), "held until released");
            assert!(gate.is_held(), "the read goes on after the caller gave up");
            let next = tokio::spawn({
                let dev = dev.clone();
                async move { dev.query("second").await }
            });
            gate.release(Release::Complete);
            assert_eq!(next.await.unwrap().unwrap(), "second");
            assert_eq!(gate.clears(), 0);
        });
    }
}

/// A dropped query whose read then fails with part of the answer unread: nobody sees
/// the error, so the device is cleared before the next call, which gets its own answer
/// instead of the rest of the old one.
#[test]
fn a_dropped_query_that_fails_is_followed_by_a_device_clear() {
    for rt in [current_thread(), multi_thread()] {
        rt.block_on(async {
            let (dev, gate) = gated_echo();
            gate.hold(Op::Read);
            let gave_up =
                tokio::time::timeout(Duration::from_millis(20), dev.query("stale answer"));
            assert!(gave_up.await.is_err());
            let next = tokio::spawn({
                let dev = dev.clone();
                async move { dev.query("fresh").await }
            });
            gate.release(Release::TimeOutAfter(3));
            assert_eq!(next.await.unwrap().unwrap(), "fresh");
            assert_eq!(gate.clears(), 1);
            assert_eq!(gate.unread(), 0);
        });
    }
    // The same failure with its caller still there: the caller gets the error and
    // decides (no clear behind its back), as with a blocking Device.
    current_thread().block_on(async {
        let (dev, gate) = gated_echo();
        gate.hold(Op::Read);
        let first = tokio::spawn({
            let dev = dev.clone();
            async move { dev.query("stale answer").await }
        });
        gate.arrived.notified().await;
        gate.release(Release::TimeOutAfter(3));
        let e = first.await.unwrap().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert_eq!(e.transferred(), Some(3));
        assert_eq!(gate.clears(), 0);
        assert_eq!(gate.unread(), "stale answer\n".len() - 3);
    });
}

/// A dropped read that stops with its buffer full leaves the rest of the message in
/// the device: it is cleared before the next call, which gets its own answer.
#[test]
fn a_dropped_read_that_fills_its_buffer_is_followed_by_a_device_clear() {
    current_thread().block_on(async {
        let (dev, gate) = gated_echo();
        dev.write_str("stale answer").await.unwrap();
        gate.hold(Op::Read);
        let gave_up = tokio::time::timeout(Duration::from_millis(20), dev.read(vec![0; 5]));
        assert!(gave_up.await.is_err());
        gate.release(Release::Complete);
        assert_eq!(dev.query("fresh").await.unwrap(), "fresh");
        assert_eq!(gate.clears(), 1);
        // A read that is not dropped reads on, as with a blocking Device.
        dev.write_str("in two").await.unwrap();
        let (st, buf) = dev.read(vec![0; 3]).await;
        assert!(!st.unwrap().is_end());
        assert_eq!(buf, b"in ");
        assert_eq!(dev.read_string().await.unwrap(), "two");
        assert_eq!(gate.clears(), 1);
    });
}

/// On a current-thread runtime, while one device's call is held on the bus, the
/// runtime's one thread goes on: a counting task and another instrument's queries
/// all finish before the held call is released (by one of those tasks).
#[test]
fn a_held_call_does_not_block_the_runtime_thread() {
    let host = sim_bench();
    current_thread().block_on(async {
        let (held, gate) = gated_echo();
        gate.hold(Op::Read);
        let blocked = tokio::spawn({
            let held = held.clone();
            async move { held.query("held").await }
        });
        gate.arrived.notified().await;

        let count = Arc::new(AtomicUsize::new(0));
        let counter = tokio::spawn({
            let count = Arc::clone(&count);
            async move {
                for _ in 0..1000 {
                    count.fetch_add(1, Ordering::Relaxed);
                    tokio::task::yield_now().await;
                }
            }
        });
        let dmm = AsyncDevice::new(Bus::new(host.board(0).unwrap()).device(22).unwrap());
        let other = tokio::spawn(async move {
            for n in 1..=50 {
                let answer = dmm.query(format!("WAV:POIN {n};WAV:POIN?")).await.unwrap();
                assert_eq!(answer, n.to_string());
            }
            50
        });
        counter.await.unwrap();
        assert_eq!(other.await.unwrap(), 50);
        assert_eq!(count.load(Ordering::Relaxed), 1000);
        // All that while, the held call was held.
        assert!(gate.is_held());
        assert!(!blocked.is_finished());
        gate.release(Release::Complete);
        assert_eq!(blocked.await.unwrap().unwrap(), "held");
    });
}

/// Dropping the last handle closes the board on the blocking pool: the runtime
/// thread goes on while the close is held.
#[test]
fn dropping_the_last_handle_does_not_block_the_runtime_thread() {
    current_thread().block_on(async {
        let (dev, gate) = gated_echo();
        assert_eq!(dev.query("open").await.unwrap(), "open");
        gate.hold(Op::Close);
        drop(dev);
        gate.arrived.notified().await;
        assert!(gate.is_held());
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(!gate.is_closed());
        gate.release(Release::Complete);
    });
}

fn sim_bench() -> SimHost {
    gpib::sim::bench()
}

/// The device's own timeout bounds a call, as it bounds the blocking one; settings are
/// the handle's.
#[test]
fn calls_time_out_by_the_device_timeout() {
    current_thread().block_on(async {
        let (mut dev, _gate) = gated_echo();
        dev.set_timeout(Some(Duration::from_millis(250).into()));
        let e = dev.read_string().await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout);
        match e {
            gpib::Error::Timeout { timeout, .. } => {
                assert_eq!(timeout, gpib::Timeout::After(Duration::from_millis(250)))
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
    });
}

/// The calls that read into the caller's buffer give it back, whatever the result.
#[test]
fn owned_buffers_come_back() {
    current_thread().block_on(async {
        let mut rm = gpib::ResourceManager::simulated("bench").unwrap();
        let dmm = AsyncDevice::new(rm.open("GPIB0::22::INSTR").unwrap());
        let (st, buf) = dmm.query_into("*IDN?", vec![0; 64]).await;
        let st = st.unwrap();
        assert_eq!(&buf[..st.count], b"SIMULATED,SCPI-DMM,0,1.0\n");
        assert_eq!(buf.len(), 64);

        let (info, buf) = dmm.query_block_into("BLOCK? 100", vec![0; 10]).await;
        assert_eq!(info.unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(buf.len(), 10);
        dmm.clear().await.unwrap();

        let (info, buf) = dmm.query_block_into("BLOCK? 100", buf.repeat(20)).await;
        assert_eq!(info.unwrap().len, 100);
        assert_eq!(buf.len(), 200);

        let wave: Vec<f32> = dmm
            .query_values("WAV:POIN 16;WAV:DATA?", gpib::block::Endian::Big)
            .await
            .unwrap();
        assert_eq!(wave.len(), 16);
    });
}

/// SRQ, waited for on the blocking pool: an answer waiting (MAV) requests service.
#[test]
fn wait_srq_sees_a_service_request() {
    current_thread().block_on(async {
        let mut rm = gpib::ResourceManager::simulated("bench").unwrap();
        let dmm = AsyncDevice::new(rm.open("GPIB0::22::INSTR").unwrap());
        dmm.write_str("*CLS;*SRE 16").await.unwrap();
        assert!(!dmm.wait_srq(Duration::from_secs(1).into()).await.unwrap());
        dmm.write_str("*IDN?").await.unwrap();
        assert!(dmm.wait_srq(Duration::from_secs(5).into()).await.unwrap());
        assert!(dmm.serial_poll().await.unwrap().rqs());
        assert_eq!(dmm.read_string().await.unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
    });
}

/// `gpib::aio::open` opens any resource string on the blocking pool.
#[test]
fn open_takes_a_resource_string() {
    current_thread().block_on(async {
        let e = gpib::aio::open("not a resource::at all").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    });
}
