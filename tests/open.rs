//! `gpib::open` / `ResourceManager`: one resource string per backend, the same device
//! behind each (the simulated bench, served in-process for the network backends).

use gpib::sim;
use gpib::{ResourceManager, Timeout};

const IDN: &str = "SIMULATED,SCPI-DMM,0,1.0";

fn served() -> (sim::SimHost, gpib::serve::Server) {
    let host = sim::bench();
    let opts = gpib::serve::ServeOptions {
        default_address: Some(gpib::Address::try_from(22u8).unwrap()),
        ..gpib::serve::ServeOptions::ephemeral()
    };
    let server = gpib::serve::Server::start(gpib::Bus::new(host.board(0).unwrap()), opts).unwrap();
    (host, server)
}

#[test]
fn a_simulated_resource_opens_by_its_visa_name() {
    let mut rm = ResourceManager::simulated("bench").unwrap();
    assert_eq!(
        rm.open("GPIB0::22::INSTR").unwrap().query("*IDN?").unwrap(),
        IDN
    );
    assert_eq!(rm.boards(), [0]);
    let e = rm.open("GPIB3::22::INSTR").unwrap_err();
    assert!(e.to_string().contains("no board GPIB3"), "{e}");
}

#[test]
fn vxi11_resources_open_on_the_gateway_gpib0_and_inst0() {
    let (_host, server) = served();
    let port = server.vxi11_addr().unwrap().port();
    let d = gpib::open(&format!("TCPIP0::127.0.0.1,{port}::gpib0,22::INSTR")).unwrap();
    assert_eq!(d.query("*IDN?").unwrap(), IDN);
    // inst0: the gateway's own instrument (the server's default device, 22).
    let d = gpib::open(&format!("TCPIP::127.0.0.1,{port}::inst0::INSTR")).unwrap();
    assert_eq!(d.query("*IDN?").unwrap(), IDN);
}

#[test]
fn hislip_resources_open_on_the_gateway_hislip0_and_its_devices() {
    let (_host, server) = served();
    let port = server.hislip_addr().unwrap().port();
    // hislip0: the server's default device (22), on the port given after the name.
    let d = gpib::open(&format!("TCPIP0::127.0.0.1::hislip0,{port}::INSTR")).unwrap();
    assert_eq!(d.query("*IDN?").unwrap(), IDN);
    let d = gpib::open(&format!("TCPIP::127.0.0.1::hislip_gpib0_22,{port}::INSTR")).unwrap();
    assert_eq!(d.query("*IDN?").unwrap(), IDN);
    assert!(!d.serial_poll().unwrap().mav());
    let e = gpib::open(&format!("TCPIP::127.0.0.1::hislip_gpib5_22,{port}::INSTR"))
        .and_then(|d| d.query("*IDN?"))
        .unwrap_err();
    assert!(e.to_string().contains("no board gpib5"), "{e}");
}

#[test]
fn a_prologix_adapter_opens_as_an_interface_then_its_devices() {
    let (_host, server) = served();
    let port = server.prologix_addr().unwrap().port();
    let mut rm = ResourceManager::new();
    rm.set_timeout(Timeout::from(std::time::Duration::from_secs(2)));
    let e = rm
        .open(&format!("PRLGX-TCPIP::127.0.0.1::{port}::INTFC"))
        .unwrap_err();
    assert!(e.to_string().contains("open_interface"), "{e}");
    rm.open_interface(&format!("PRLGX-TCPIP1::127.0.0.1::{port}::INTFC"))
        .unwrap();
    assert_eq!(
        rm.open("GPIB1::22::INSTR").unwrap().query("*IDN?").unwrap(),
        IDN
    );
}

#[test]
fn a_prologix_device_opens_in_one_string_and_shares_its_adapter() {
    let (host, server) = served();
    let port = server.prologix_addr().unwrap().port();
    let d = gpib::open(&format!("PRLGX-TCPIP::127.0.0.1::{port}::22::INSTR")).unwrap();
    assert_eq!(d.query("*IDN?").unwrap(), IDN);

    let mut rm = ResourceManager::new();
    let dmm = rm
        .open(&format!("PRLGX-TCPIP1::127.0.0.1::{port}::22::INSTR"))
        .unwrap();
    assert_eq!(rm.boards(), [1]);
    // A second device of the same adapter: the same connection (one adapter, one bus).
    let hp = rm
        .open(&format!("prlgx-tcpip1::127.0.0.1::{port}::11::instr"))
        .unwrap();
    assert_eq!(dmm.query("*IDN?").unwrap(), IDN);
    hp.write_str("ABRT;DISA").unwrap();
    assert_eq!(
        server.stats().accepted,
        2,
        "one connection for gpib::open, one for rm"
    );
    // The adapter is board GPIB1 of the manager now.
    assert_eq!(
        rm.open("GPIB1::22::INSTR").unwrap().query("*IDN?").unwrap(),
        IDN
    );
    drop(host);
}

#[test]
fn gpib_conf_names_open_with_their_sections_settings() {
    let conf = gpib::gpibconf::GpibConf::parse(
        "interface { minor = 0 board_type = \"ni_pci\" }\n\
         device { minor = 0 name = \"voltmeter\" pad = 22 timeout = T3s eos = 0x0a set-reos = yes }\n",
    )
    .unwrap();
    let mut rm = ResourceManager::simulated("bench").unwrap();
    rm.set_gpib_conf(conf);
    let dmm = rm.open("voltmeter").unwrap();
    assert_eq!(dmm.address().primary.get(), 22);
    assert_eq!(dmm.query("*IDN?").unwrap(), IDN);
    let e = rm.open("ammeter").unwrap_err();
    assert!(e.to_string().contains("names: voltmeter"), "{e}");
}

#[test]
fn list_resources_takes_visa_expressions() {
    let mut rm = ResourceManager::simulated("bench").unwrap();
    assert_eq!(
        rm.list_resources("?*").unwrap(),
        ["GPIB0::INTFC", "GPIB0::11::INSTR", "GPIB0::22::INSTR"]
    );
    assert_eq!(
        rm.list_resources("GPIB0::2?::INSTR").unwrap(),
        ["GPIB0::22::INSTR"]
    );
    assert!(rm
        .list_resources("GPIB[0")
        .unwrap_err()
        .to_string()
        .contains("not closed"));
}

#[test]
fn strings_that_name_nothing_say_what_was_expected() {
    for bad in [
        "",
        "GPIB0::99::INSTR",
        "ASRL1::INSTR::x",
        "TCPIP::::gpib0,22::INSTR",
    ] {
        let e = ResourceManager::new().open(bad).unwrap_err();
        assert_eq!(e.kind(), gpib::ErrorKind::InvalidArgument, "{bad}: {e}");
    }
}

/// A backend of a third party's: `BENCH::<address>::INSTR` names a device of a
/// simulated bench; `GPIB7::INTFC` its board.
struct ThirdParty {
    host: sim::SimHost,
}

impl gpib::Connector for ThirdParty {
    fn name(&self) -> &str {
        "third-party"
    }

    fn open_device(
        &self,
        resource: &str,
    ) -> Option<gpib::Result<(Box<dyn gpib::Backend>, gpib::Address)>> {
        let address = resource.strip_prefix("BENCH::")?.strip_suffix("::INSTR")?;
        Some((|| {
            let a = address
                .parse::<u8>()
                .map_err(|e| gpib::Error::InvalidArgument(format!("{address}: {e}")))?;
            let board: Box<dyn gpib::Backend> = Box::new(self.host.board(0)?);
            Ok((board, gpib::Address::try_from(a)?))
        })())
    }

    fn open_interface(
        &self,
        resource: &str,
    ) -> Option<gpib::Result<(Box<dyn gpib::Backend>, u16)>> {
        (resource == "GPIB7::INTFC").then(|| {
            let board: Box<dyn gpib::Backend> = Box::new(self.host.board(0)?);
            Ok((board, 7))
        })
    }

    fn list(&self) -> Vec<String> {
        vec!["GPIB7::INTFC".into(), "BENCH::22::INSTR".into()]
    }
}

#[test]
fn a_registered_backend_opens_its_resources_and_lists_them() {
    let mut rm = ResourceManager::new();
    rm.register(Box::new(ThirdParty { host: sim::bench() }));
    let dmm = rm.open("BENCH::22::INSTR").unwrap();
    assert_eq!(dmm.query("*IDN?").unwrap(), IDN);
    assert_eq!(dmm.address().primary.get(), 22);
    // Its interface stands as GPIB7: devices on it open by their VISA names.
    let on7 = rm.open("GPIB7::22::INSTR").unwrap();
    assert_eq!(on7.query("*IDN?").unwrap(), IDN);
    assert_eq!(rm.boards(), [7]);
    // Opened for a resource, the board is the manager's while a device on it is open
    // (`dmm` too: the same simulated board, so the same bus).
    drop((on7, dmm));
    assert_eq!(rm.boards(), [] as [u16; 0]);
    // The built-in backends list what they find too (with the `linux-gpib`
    // feature, the boards of libgpib's configuration): the registered backend
    // adds its own to those, in order.
    let built_in = ResourceManager::new().list_resources("?*").unwrap();
    let listed = rm.list_resources("?*").unwrap();
    let (theirs, added): (Vec<_>, Vec<_>) = listed.into_iter().partition(|r| built_in.contains(r));
    assert_eq!(theirs, built_in);
    assert_eq!(
        added,
        [
            "GPIB7::INTFC",
            "GPIB7::11::INSTR",
            "GPIB7::22::INSTR",
            "BENCH::22::INSTR"
        ]
    );
    // Its own bad strings are its errors; strings no backend takes are the manager's.
    let e = rm.open("BENCH::x::INSTR").unwrap_err();
    assert!(e.to_string().contains("x: invalid digit"), "{e}");
    let e = rm.open("OTHER::1::INSTR").unwrap_err();
    assert!(e.to_string().contains("is not a resource"), "{e}");
    let c = rm.connect("BENCH::22::INSTR").unwrap();
    assert_eq!(
        (c.connector.as_str(), c.address.map(|a| a.primary.get())),
        ("third-party", Some(22))
    );
}

#[test]
fn a_registered_backend_is_asked_before_the_built_in_ones() {
    let mut rm = ResourceManager::simulated("bench").unwrap();
    // GPIB7 is no board of the simulated host, until a backend has it.
    assert!(rm.open("GPIB7::22::INSTR").is_err());
    rm.register(Box::new(ThirdParty { host: sim::bench() }));
    let on7 = rm.open("GPIB7::22::INSTR").unwrap();
    assert_eq!(on7.query("*IDN?").unwrap(), IDN);
    assert_eq!(rm.boards(), [0, 7]);
}

#[test]
fn connect_hands_out_the_backend_unshared_with_the_device_address() {
    let rm = ResourceManager::simulated("bench").unwrap();
    let c = rm.connect("GPIB0::22::INSTR").unwrap();
    assert_eq!(c.connector, "sim");
    assert_eq!(c.address.map(|a| a.primary.get()), Some(22));
    let bus = gpib::Bus::from_box(c.backend);
    assert_eq!(bus.device(22).unwrap().query("*IDN?").unwrap(), IDN);
    let c = rm.connect("GPIB0::INTFC").unwrap();
    assert_eq!(c.address, None);
    let e = rm.connect("GPIB2::INTFC").unwrap_err();
    assert!(e.to_string().contains("no board GPIB2"), "{e}");
}

/// Two devices of linux-gpib's board 0 through `gpib::open` (libgpib serving the
/// built-in bench, as in compat/ci.sh): one board, one set of descriptors, where a
/// second open used to be refused as "already open in this process".
#[cfg(feature = "linux-gpib")]
#[test]
fn two_devices_share_a_linux_gpib_board_through_gpib_open() {
    if std::env::var_os("IB_CONFIG").is_some() {
        return; // libgpib serves the example gpib.conf, not the bench
    }
    gpib_suite::Fixture::with_linux_gpib_board(|| {
        let dmm = gpib::open("GPIB0::22::INSTR").unwrap();
        let hp = gpib::open("GPIB0::11::INSTR").unwrap();
        assert_eq!(dmm.query("*IDN?").unwrap(), IDN);
        hp.write_str("ABRT;DISA").unwrap();
        assert_eq!(dmm.query("*OPC?").unwrap(), "1");
        // Released with its devices: the board opens again (here, and for the fixture).
        drop((dmm, hp));
        let board = gpib::LinuxGpibBoard::open_index(0).unwrap();
        drop(board);
    });
}
