//! A whole query on a simulated board (`Backend::command_write_command_read`): in
//! virtual time it runs straight under the host's lock; in real time its modelled
//! time passes on the wall clock, as every other operation's does.

use std::time::{Duration, Instant};

use crate::{sim, Bus, Error};

#[test]
fn a_query_in_real_time_takes_its_modelled_time_on_the_wall_clock() {
    let host = sim::bench();
    let bus = Bus::new(host.board(0).unwrap());
    let dmm = bus.device(22).unwrap();
    let mut answer = [0u8; 64];

    // Virtual time: the answer, and the modelled time on the board's clock.
    let v0 = bus.now();
    let st = dmm.query_into(b"*IDN?", &mut answer).unwrap();
    let idn = answer[..st.count].to_vec();
    let modelled = bus.now() - v0;
    assert!(
        idn.starts_with(b"SIMULATED,SCPI-DMM,"),
        "{:?}",
        String::from_utf8_lossy(&idn)
    );
    assert!(modelled > Duration::from_micros(50), "{modelled:?}");

    // Real time: the same answer, and that long on the wall clock: ten queries, so
    // that the bound is well above a clock's resolution, against nine of their
    // modelled times, so that it holds whatever the first query's own costs were
    // (queries that skipped real time would take some 2 us each).
    host.set_realtime(true);
    let (v0, w0) = (bus.now(), Instant::now());
    for _ in 0..10 {
        let st = dmm.query_into(b"*IDN?", &mut answer).unwrap();
        assert_eq!(answer[..st.count], idn[..]);
    }
    let (wall, virt) = (w0.elapsed(), bus.now() - v0);
    assert!(
        virt >= modelled * 9,
        "{virt:?} against {modelled:?} a query"
    );
    assert!(
        wall >= modelled * 9,
        "{wall:?} of wall time for 10 x {modelled:?}"
    );
}

#[test]
fn a_query_to_an_absent_device_fails_in_its_write_half_in_either_mode() {
    for realtime in [false, true] {
        let host = sim::bench();
        host.set_realtime(realtime);
        let bus = Bus::new(host.board(0).unwrap());
        let nobody = bus.device(30).unwrap();
        let mut answer = [0u8; 16];
        let e = nobody.query_into(b"*IDN?", &mut answer).unwrap_err();
        assert!(
            matches!(e, Error::NoListener { transferred: 0 }),
            "realtime {realtime}: {e:?}"
        );
        // The bus is usable after it: the next query to a device that is there answers.
        let st = bus.device(22).unwrap().query_into(b"*IDN?", &mut answer);
        assert!(st.unwrap().count > 0, "realtime {realtime}");
    }
}
