//! Many threads on one board never cross a response.

use gpib_suite::{Fixture, HP3565, SCPI};

#[test]
fn threads_never_see_each_others_answers() {
    let fx = Fixture::sim_bench();
    let bus = fx.bus.clone();
    std::thread::scope(|s| {
        for t in 0..8 {
            let bus = bus.clone();
            s.spawn(move || {
                let dmm = bus.device(SCPI).unwrap();
                let hp = bus.device(HP3565).unwrap();
                for i in 0..300 {
                    if t % 2 == 0 {
                        // Each thread asks for a block whose size names the thread and round.
                        let n = 1 + t * 1000 + i;
                        let body = dmm.query_block(&format!("BLOCK? {n}")).unwrap();
                        assert_eq!(body.len(), n, "thread {t} round {i}");
                    } else {
                        assert_eq!(dmm.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
                        let id: usize = hp.query("NEW 4;NEW?").unwrap().parse().unwrap();
                        assert!(id > 0);
                    }
                }
            });
        }
    });
}
