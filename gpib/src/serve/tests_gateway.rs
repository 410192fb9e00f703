//! The HiSLIP gateway keeps VXI-11's promises: idle is both of a session's channels
//! idle; a session that goes away mid-message leaves the device as it found it; a
//! query is one transaction on the device, so clients without a lock never get each
//! other's answers, whatever protocol each speaks.

use std::time::{Duration, Instant};

use super::{ServeOptions, Server};
use crate::backend::hislip::HislipSession;
use crate::{Address, Bus};

const IDN: &[u8] = b"SIMULATED,SCPI-DMM,0,1.0\n";
const T: Duration = Duration::from_secs(5);

fn served(opts: ServeOptions) -> Server {
    let bus = Bus::new(crate::sim::bench().board(0).unwrap());
    let opts = ServeOptions {
        default_address: Some(Address::new(22, None).unwrap()),
        ..opts
    };
    Server::start(bus, opts).unwrap()
}

fn session(srv: &Server) -> HislipSession {
    let a = srv.hislip_addr().unwrap();
    HislipSession::connect(&a.ip().to_string(), a.port(), "hislip0", T).unwrap()
}

// Issue 28 item 4: with `--idle-timeout`, a session querying on its synchronous
// channel was closed because its quiet asynchronous channel counted as idle.
#[test]
fn gateway_hislip_idle_means_both_channels_idle() {
    let idle = Duration::from_secs(1);
    let srv = served(ServeOptions {
        idle_timeout: Some(idle),
        ..ServeOptions::ephemeral()
    });
    let mut s = session(&srv);
    // A query every 100 ms for 3.5 idle timeouts: the asynchronous channel says
    // nothing all along.
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed() < idle * 7 / 2 {
        assert_eq!(s.query(b"*IDN?\n").unwrap(), IDN, "query {n}");
        n += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
    // Silent on both channels for 3 idle timeouts: closed.
    std::thread::sleep(idle * 3);
    assert!(s.query(b"*IDN?\n").is_err(), "an idle session kept");
}
