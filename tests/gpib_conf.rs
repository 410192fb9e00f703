//! linux-gpib's example gpib.conf (`gpib/configs/gpib.conf.example`) as the simulator's
//! topology: its board and named devices opened by name through `gpib::Bus`.

use std::path::PathBuf;
use std::time::Duration;

use gpib::gpibconf::{Entry, GpibConf};
use gpib::{Bus, Eos, ReadEnd, Timeout};

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
    assert_eq!(
        bus.timeout(),
        Timeout::After(Duration::from_secs(3)),
        "the interface's T3s"
    );
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

/// The linux-gpib backend opens gpib.conf names (libgpib serving the built-in bench, as
/// in CI: board 0 with the SCPI instrument at 22).
#[cfg(feature = "linux-gpib")]
#[test]
fn linux_gpib_opens_devices_by_their_gpib_conf_name() {
    use gpib::LinuxGpibBoard;
    if std::env::var_os("IB_CONFIG").is_some() {
        return; // the next test's run: libgpib serves the example, not the bench
    }
    let conf = GpibConf::parse(
        "interface { minor = 0 name = \"bench0\" timeout = T1s }\n\
         device { minor = 0 name = \"dmm\" pad = 22 timeout = T300ms eos = 0x2c set-reos = yes }",
    )
    .unwrap();
    gpib_suite::Fixture::with_linux_gpib_board(|| {
        let dmm = LinuxGpibBoard::open_named_device(&conf, "dmm").unwrap();
        assert_eq!(dmm.address().to_string(), "22");
        dmm.write_str("*IDN?").unwrap();
        let mut buf = [0u8; 64];
        let st = dmm.read(&mut buf).unwrap();
        assert_eq!(
            (&buf[..st.count], st.end),
            (&b"SIMULATED,"[..], ReadEnd::Eos)
        );
        assert_eq!(
            dmm.read_string().unwrap(),
            "SCPI-DMM,",
            "the next field, up to the EOS byte"
        );
        drop(dmm);
        let board = LinuxGpibBoard::open_named_interface(&conf, "bench0").unwrap();
        assert_eq!(
            gpib::Backend::timeout(&board),
            Timeout::After(Duration::from_secs(1))
        );
        drop(board);
        let e = LinuxGpibBoard::open_named_device(&conf, "bench0").unwrap_err();
        assert!(e.to_string().contains("no device section"), "{e}");
    });
}

/// linux-gpib's example gpib.conf through libgpib: runs when `IB_CONFIG` names it
/// and libgpib serves its simulated host (compat/ci.sh:
/// `IB_CONFIG=gpib/configs/gpib.conf.example GPIB_SIM_CONFIG=gpib/configs/gpib-conf-sim.toml`).
#[cfg(feature = "linux-gpib")]
#[test]
fn linux_gpib_opens_the_example_by_name() {
    use gpib::LinuxGpibBoard;
    if std::env::var_os("IB_CONFIG").is_none() {
        eprintln!("skipped: IB_CONFIG is not set (compat/ci.sh sets it)");
        return;
    }
    let conf = GpibConf::read_default().unwrap();
    gpib_suite::Fixture::with_linux_gpib_board(|| {
        let v = LinuxGpibBoard::open_named_device(&conf, "voltmeter").unwrap();
        assert_eq!(v.query("*IDN?").unwrap(), "ACME,DMM-7,1001,1.0");
        drop(v);
        let s = LinuxGpibBoard::open_named_device(&conf, "scope").unwrap();
        assert_eq!(s.query("*IDN?").unwrap(), "ACME,SCOPE-8,1002,1.0");
        drop(s);
        // By name through libgpib's own ibfind too, and by the parsed section.
        let by_ibfind = LinuxGpibBoard::open_name("violet").unwrap();
        assert!(by_ibfind.descriptor() >= 16, "an ibfind descriptor");
        drop(by_ibfind);
        let board = LinuxGpibBoard::open_named_interface(&conf, "violet").unwrap();
        assert_eq!(
            gpib::Backend::timeout(&board),
            Timeout::After(Duration::from_secs(3))
        );
    });
}
