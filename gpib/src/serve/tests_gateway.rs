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

/// A Prologix client of the server's first board.
fn prologix(srv: &Server) -> Bus {
    let a = srv.prologix_addr().unwrap();
    Bus::new(crate::backend::prologix::PrologixBoard::connect_tcp(&a.to_string()).unwrap())
}

/// A VXI-11 client of the server.
fn vxi11(srv: &Server) -> Bus {
    let a = srv.vxi11_addr().unwrap();
    let opts = crate::backend::vxi11::Vxi11Options::default();
    Bus::new(crate::backend::vxi11::Vxi11Board::connect(&a.to_string(), opts).unwrap())
}

fn dmm(bus: &Bus) -> crate::Device {
    let mut d = bus.device(22).unwrap();
    d.set_timeout(Some(T.into()));
    d
}

// Issue 28 item 2: a HiSLIP session that sent Data without DataEnd and went away left
// its half message in the device; the next client's message, over any protocol, was
// appended to it and failed.
#[test]
fn gateway_hislip_a_session_gone_mid_message_leaves_the_device_clean() {
    let srv = served(ServeOptions::ephemeral());
    type Next = fn(&Server) -> Vec<u8>;
    let next: [(&str, Next); 3] = [
        ("hislip", |srv| session(srv).query(b"*IDN?\n").unwrap()),
        ("vxi11", |srv| {
            let mut a = dmm(&vxi11(srv)).query("*IDN?").unwrap().into_bytes();
            a.push(b'\n');
            a
        }),
        ("prologix", |srv| {
            let mut a = dmm(&prologix(srv)).query("*IDN?").unwrap().into_bytes();
            a.push(b'\n');
            a
        }),
    ];
    for (name, query) in next {
        let mut gone = session(&srv);
        gone.write_partial(b"*RST;DATA #15").unwrap();
        drop(gone);
        assert_eq!(query(&srv), IDN, "{name} after a half message");
    }
}

/// A query whose answer names it: the device stores `token` and answers it back, in
/// one message (`DATA <block>;DATA?`), so an answer to another client's query shows.
fn token_query(token: &str) -> String {
    format!("DATA #1{}{token};DATA?", token.len())
}

/// The answer [`token_query`] expects, without its NL.
fn token_answer(token: &str) -> String {
    format!("#1{}{token}", token.len())
}

/// What the stress test's clients got.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    answered: u32,
    crossed: u32,
    failed: u32,
}

/// `per` clients of each protocol (`H` HiSLIP, `V` VXI-11, `P` Prologix) on one
/// device at once, `queries` token queries each; what they got.
fn stress(protocols: &[char], per: usize, queries: usize) -> Counts {
    // In real time: each bus call takes its modelled time, as on a real bus, and
    // another client's call has time to come between two of them.
    let host = crate::sim::bench();
    host.set_realtime(true);
    let opts = ServeOptions {
        default_address: Some(Address::new(22, None).unwrap()),
        ..ServeOptions::ephemeral()
    };
    let srv = Server::start(Bus::new(host.board(0).unwrap()), opts).unwrap();
    type Ask = Box<dyn FnMut(&str) -> crate::Result<String> + Send>;
    let mut clients: Vec<(String, Ask)> = Vec::new();
    for i in 0..per {
        for &p in protocols {
            let ask: Ask = match p {
                'H' => {
                    let mut h = session(&srv);
                    Box::new(move |q: &str| {
                        let a = h.query(format!("{q}\n").as_bytes())?;
                        Ok(String::from_utf8_lossy(&a).trim_end().to_string())
                    })
                }
                'V' => {
                    let v = vxi11(&srv);
                    Box::new(move |q: &str| dmm(&v).query(q))
                }
                _ => {
                    let b = prologix(&srv);
                    Box::new(move |q: &str| dmm(&b).query(q))
                }
            };
            clients.push((format!("{p}{i}"), ask));
        }
    }
    let start = std::sync::Arc::new(std::sync::Barrier::new(clients.len()));
    let threads: Vec<_> = clients
        .into_iter()
        .map(|(name, mut ask)| {
            let start = start.clone();
            std::thread::spawn(move || {
                let mut c = Counts::default();
                start.wait();
                for q in 0..queries {
                    let token = format!("{name}Q{q:03}");
                    match ask(&token_query(&token)) {
                        Ok(a) if a == token_answer(&token) => c.answered += 1,
                        Ok(a) => {
                            eprintln!("{token}: crossed, got {a:?}");
                            c.crossed += 1;
                        }
                        Err(e) => {
                            eprintln!("{token}: {e}");
                            c.failed += 1;
                        }
                    }
                }
                c
            })
        })
        .collect();
    let mut all = Counts::default();
    for t in threads {
        let c = t.join().unwrap();
        all.answered += c.answered;
        all.crossed += c.crossed;
        all.failed += c.failed;
    }
    all
}

/// Every one of `n` queries answered, none crossed.
fn all_answered(n: usize) -> Counts {
    Counts {
        answered: n as u32,
        crossed: 0,
        failed: 0,
    }
}

// Issue 28 item 3: two HiSLIP sessions on one device without a lock got each other's
// answers (5 of 40 queries crossed), the query's write and its read being two bus
// operations with another session's between them; the loser waited out its timeout.
#[test]
fn gateway_two_hislip_sessions_never_get_each_others_answers() {
    let got = stress(&['H'], 2, 100);
    eprintln!("two HiSLIP sessions: {got:?} of 200 queries");
    assert_eq!(got, all_answered(200));
}

// Issue 28 item 3: several HiSLIP, VXI-11 and Prologix clients on one device, each
// query's answer naming the query: none crossed, every one answered.
#[test]
fn gateway_clients_of_every_protocol_never_get_each_others_answers() {
    let got = stress(&['H', 'V', 'P'], 3, 30);
    eprintln!("3 HiSLIP, 3 VXI-11, 3 Prologix clients: {got:?} of 270 queries");
    assert_eq!(got, all_answered(270));
}
