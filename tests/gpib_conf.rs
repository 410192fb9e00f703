//! linux-gpib's example gpib.conf (`gpib/configs/gpib.conf.example`) as the simulator's
//! topology: its board and named devices opened by name through `gpib::Bus`.

use std::path::PathBuf;
use std::time::Duration;

use gpib::gpibconf::{Entry, GpibConf};
use gpib::{Bus, Eos, ReadEnd};

fn configs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("gpib/configs")
}

#[test]
fn the_example_opens_the_simulators_board_and_devices_by_name() {
    let conf = GpibConf::read(configs().join("gpib.conf.example")).unwrap();
    let host = gpib::sim::load(configs().join("gpib-conf-sim.toml").to_str().unwrap()).unwrap();
    let Some(Entry::Interface(board)) = conf.find("violet") else {
        panic!("violet is the example's board");
    };
    let bus = Bus::new(host.board(usize::from(board.minor)).unwrap());
    assert_eq!(
        bus.transaction(|tx| Ok(tx.board_address().get())).unwrap(),
        0
    );
    assert_eq!(bus.timeout(), Duration::from_secs(3), "the interface's T3s");
    let voltmeter = conf.open_device(&bus, "voltmeter").unwrap();
    assert_eq!(voltmeter.address().to_string(), "7");
    assert_eq!(voltmeter.query("*IDN?").unwrap(), "ACME,DMM-7,1001,1.0");
    let scope = conf.open_device(&bus, "scope").unwrap();
    assert_eq!(scope.query("*IDN?").unwrap(), "ACME,SCOPE-8,1002,1.0");
    // The instrument attached by board and address, not by name.
    assert_eq!(bus.device(11).unwrap().query("NEW 10;NEW?").unwrap(), "1");
}

#[test]
fn a_devices_eos_setting_ends_its_reads() {
    let text = std::fs::read_to_string(configs().join("gpib.conf.example")).unwrap();
    // The voltmeter with reads ending on ',' (0x2c) instead of EOI only.
    let text = text.replacen("eos = 0xa", "eos = 0x2c", 1).replacen(
        "set-reos = no\t\t/* reads end on EOI only */",
        "set-reos = yes",
        1,
    );
    let conf = GpibConf::parse(&text).unwrap();
    let v = conf.device("voltmeter").unwrap();
    assert_eq!(
        v.settings.read_eos(),
        Some(Eos {
            byte: b',',
            eight_bit: false
        })
    );
    let host = gpib::sim::load(configs().join("gpib-conf-sim.toml").to_str().unwrap()).unwrap();
    let bus = Bus::new(host.board_named("violet").unwrap());
    let dmm = conf.open_device(&bus, "voltmeter").unwrap();
    dmm.write_str("*IDN?").unwrap();
    let mut buf = [0u8; 64];
    let st = dmm.read(&mut buf).unwrap();
    assert_eq!((&buf[..st.count], st.end), (&b"ACME,"[..], ReadEnd::Eos));
}
