//! Remote and local on the simulated bus, as the devices see them: REN with a listen
//! address puts a device in remote (keeping its lockout), GTL returns it to local, LLO
//! locks every present device out; a device not addressed is left alone.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::sim::timing::{BoardTiming, DeviceTiming};
use crate::sim::{DeviceIo, Instrument, SimHost};
use crate::{Address, Bus, PrimaryAddress, SecondaryAddress};

/// Each device's (remote, lockout) changes, by name, in order.
type Changes = Arc<Mutex<Vec<(&'static str, bool, bool)>>>;

struct Watched {
    name: &'static str,
    changes: Changes,
}

impl Instrument for Watched {
    fn model(&self) -> &str {
        "WATCHED"
    }
    fn listen(&mut self, _data: &[u8], _end: bool, _io: &mut DeviceIo<'_>) {}
    fn remote_changed(&mut self, remote: bool, lockout: bool) {
        self.changes
            .lock()
            .unwrap()
            .push((self.name, remote, lockout));
    }
}

fn primary(p: u8) -> Address {
    Address::try_from(p).unwrap()
}

/// A board with devices at 5, 6, 9 and 9 with secondary address 2.
fn watched_bus() -> (Bus, Changes) {
    let host = SimHost::new("remote");
    let b = host.add_board(
        "gpib0",
        PrimaryAddress::try_from(0u8).unwrap(),
        BoardTiming::default(),
        Duration::from_secs(1).into(),
    );
    let changes = Changes::default();
    let extended = Address {
        primary: PrimaryAddress::try_from(9u8).unwrap(),
        secondary: Some(SecondaryAddress::try_from(2u8).unwrap()),
    };
    for (name, at) in [
        ("5", primary(5)),
        ("6", primary(6)),
        ("9", primary(9)),
        ("9.2", extended),
    ] {
        let changes = changes.clone();
        let device = Watched { name, changes };
        host.attach(b, at, Box::new(device), DeviceTiming::default())
            .unwrap();
    }
    (Bus::new(host.board(b).unwrap()), changes)
}

fn taken(changes: &Changes) -> Vec<(&'static str, bool, bool)> {
    std::mem::take(&mut *changes.lock().unwrap())
}

#[test]
fn listening_with_ren_puts_only_the_addressed_device_in_remote() {
    let (bus, changes) = watched_bus();
    let (five, six) = (
        bus.device(primary(5)).unwrap(),
        bus.device(primary(6)).unwrap(),
    );
    // Without REN, being addressed changes nothing.
    six.write(b"X").unwrap();
    assert_eq!(taken(&changes), []);

    bus.remote_enable(true).unwrap();
    five.write(b"X").unwrap();
    assert_eq!(taken(&changes), [("5", true, false)]);
    // Already remote: addressed again (after another device), nothing changes; the
    // other device, addressed with REN, goes remote.
    six.write(b"X").unwrap();
    five.write(b"X").unwrap();
    assert_eq!(taken(&changes), [("6", true, false)]);

    // The extended listener (MLA 9, MSA 2): the primary alone listens for the MLA
    // byte, as IEEE 488.1 devices see it, and so goes remote too.
    let extended = Address {
        primary: PrimaryAddress::try_from(9u8).unwrap(),
        secondary: Some(SecondaryAddress::try_from(2u8).unwrap()),
    };
    bus.device(extended).unwrap().write(b"X").unwrap();
    assert_eq!(taken(&changes), [("9", true, false), ("9.2", true, false)]);
}

#[test]
fn gtl_returns_a_listener_to_local_and_llo_locks_every_device_out() {
    let (bus, changes) = watched_bus();
    bus.remote_enable(true).unwrap();
    let five = bus.device(primary(5)).unwrap();
    five.write(b"X").unwrap();
    taken(&changes);

    // Local, and it stays local: the GTL came after its listen address, and the
    // bytes after a listen address do not put the listener back in remote.
    five.go_to_local().unwrap();
    assert_eq!(taken(&changes), [("5", false, false)]);

    bus.local_lockout().unwrap();
    let mut locked = taken(&changes);
    locked.sort();
    assert_eq!(
        locked,
        [
            ("5", false, true),
            ("6", false, true),
            ("9", false, true),
            ("9.2", false, true)
        ]
    );
    // Addressed with REN after LLO: remote, still locked out (RWLS).
    bus.device(primary(6)).unwrap().write(b"X").unwrap();
    assert_eq!(taken(&changes), [("6", true, true)]);
}
