//! Tests of the configuration format: built-ins, limits, files, names.

use super::*;
use crate::ErrorKind;

#[test]
fn builtins_build() {
    for name in builtin_names() {
        builtin(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let h = builtin("hp9000-350").unwrap();
    assert_eq!(h.board_names(), ["hpib7", "disc", "hpib8"]);
    assert_eq!(h.mounts().len(), 3);
}

#[test]
fn bad_configs_say_why() {
    let cases = [
        ("name='x'", "no [[board]]"),
        ("name='x'\n[[board]]\nname='b'\naddress=31", "31"),
        (
            "name='x'\n[[board]]\nname='b'\nt1_ns=100",
            "below IEEE 488.1",
        ),
        (
            "name='x'\n[[board]]\nname='b'\n[[board.device]]\naddress=3\nmodel='toaster'",
            "unknown model",
        ),
        (
            "name='x'\n[[board]]\nname='b'\n[[board.device]]\naddress=0\nmodel='scpi'",
            "board's own address",
        ),
        ("name='x'\n[[board]]\nname='b'\nbogus=1", "unknown field"),
    ];
    for (text, why) in cases {
        let e = Config::parse(text).and_then(|c| c.build()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config, "{text}");
        assert!(e.to_string().contains(why), "{text}: {e}");
    }
    let e = load("no-such-config").unwrap_err();
    assert!(e.to_string().contains("hp9000-350"), "{e}");
}

/// A scratch folder for one test (removed at the end of the test).
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(test: &str) -> Self {
        let p = std::env::temp_dir().join(format!("gpib-config-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Self(p)
    }
    fn file(&self, name: &str, text: &[u8]) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `load(path)` in a thread, given `secs` to answer (a hang fails the test).
fn load_within(path: &str, secs: u64) -> Result<SimHost> {
    let (tx, rx) = std::sync::mpsc::channel();
    let p = path.to_string();
    std::thread::spawn(move || {
        let _ = tx.send(load(&p));
    });
    rx.recv_timeout(std::time::Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("load({path:?}) did not answer within {secs} s"))
}

fn config_error(path: &str) -> String {
    let e = load_within(path, 10).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{path}: {e}");
    e.to_string()
}

#[test]
fn config_files_are_size_capped_and_regular() {
    let dir = Scratch::new("regular");
    // A regular file over the cap: refused, with the limit, before parsing.
    let mut big = b"name = 'x'\n".to_vec();
    big.resize(MAX_CONFIG_BYTES as usize + 1, b'#');
    let path = dir.file("big.toml", &big);
    let e = config_error(&path);
    assert!(e.contains(&path) && e.contains("larger than 1 MiB"), "{e}");
    // Exactly at the cap is fine (a comment line of padding).
    let mut ok = b"name = 'x'\n[[board]]\nname = 'b'\n#".to_vec();
    ok.resize(MAX_CONFIG_BYTES as usize, b'#');
    let path = dir.file("ok.toml", &ok);
    load_within(&path, 10).unwrap();
    // A folder: named, said once.
    let folder = dir.0.display().to_string();
    let e = config_error(&folder);
    assert!(e.contains(&folder) && e.contains("is a directory"), "{e}");
    assert_eq!(e.matches("directory").count(), 1, "{e}");
    // A character device: refused without reading it.
    let e = config_error("/dev/zero");
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
    // A FIFO nobody writes to: refused at once, not waited on.
    let fifo = dir.0.join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let fifo = fifo.display().to_string();
        let e = config_error(&fifo);
        assert!(e.contains(&fifo) && e.contains("not a regular file"), "{e}");
    }
    // Not UTF-8.
    let path = dir.file("latin1.toml", b"name = '\xe9'\n");
    let e = config_error(&path);
    assert!(e.contains(&path) && e.contains("UTF-8"), "{e}");
}

#[test]
fn file_errors_name_the_file_once() {
    let dir = Scratch::new("once");
    for (text, why) in [
        ("name='x'\n[[board]]\nname='b'\nbogus=1", "unknown field"),
        ("name='x'", "no [[board]]"),
        (
            "name='x'\n[[board]]\nname='b'\nt1_ns=100",
            "below IEEE 488.1",
        ),
    ] {
        let path = dir.file("bad.toml", text.as_bytes());
        let e = config_error(&path);
        assert!(e.contains(why), "{e}");
        assert_eq!(e.matches("simulator configuration").count(), 1, "{e}");
        assert_eq!(e.matches(path.as_str()).count(), 1, "{e}");
    }
}

fn build_error(text: &str) -> String {
    let r = std::panic::catch_unwind(|| Config::parse(text).and_then(|c| c.build()));
    let e = r
        .unwrap_or_else(|_| panic!("building panicked on {text:?}"))
        .err()
        .unwrap_or_else(|| panic!("accepted {text:?}"));
    assert_eq!(e.kind(), ErrorKind::Config, "{text}");
    e.to_string()
}

#[test]
fn numbers_out_of_range_are_refused_with_their_field_and_limit() {
    let board = "name='x'\n[[board]]\nname='b'\n";
    let device = "name='x'\n[[board]]\nname='b'\n[[board.device]]\naddress=3\nmodel='scpi'\n";
    let cases = [
        (board, "timeout_s = 1e300", "timeout_s", "1000 s"),
        (board, "timeout_s = 1001", "timeout_s", "1000 s"),
        (board, "timeout_s = nan", "timeout_s", "1000 s"),
        (board, "timeout_s = inf", "timeout_s", "1000 s"),
        (board, "timeout_s = -1", "timeout_s", "1000 s"),
        (
            board,
            "call_overhead_us = 1e300",
            "call_overhead_us",
            "1000000 us",
        ),
        (
            board,
            "read_call_overhead_us = -1",
            "read_call_overhead_us",
            "1000000 us",
        ),
        (
            board,
            "write_call_overhead_us = nan",
            "write_call_overhead_us",
            "1000000 us",
        ),
        (
            board,
            "command_byte_us = 1e25",
            "command_byte_us",
            "1000000 us",
        ),
        (board, "interrupt_us = 1e22", "interrupt_us", "1000000 us"),
        (board, "dma_setup_us = inf", "dma_setup_us", "1000000 us"),
        (board, "poll_us = 2e6", "poll_us", "1000000 us"),
        (
            board,
            "pio_read_byte_ns = 9223372036854775807",
            "pio_read_byte_ns",
            "1000000000 ns",
        ),
        (
            board,
            "pio_write_byte_ns = 9223372036854775000",
            "pio_write_byte_ns",
            "1000000000 ns",
        ),
        (
            board,
            "dma_byte_ns = 1000000001",
            "dma_byte_ns",
            "1000000000 ns",
        ),
        (
            board,
            "t1_ns = 9223372036854775807",
            "t1_ns",
            "1000000000 ns",
        ),
        (
            board,
            "accept_ns = 9223372036854775807",
            "accept_ns",
            "1000000000 ns",
        ),
        (
            board,
            "dma_block_bytes = 9223372036854775807",
            "dma_block_bytes",
            "16777216",
        ),
        (
            device,
            "t1_ns = 9223372036854775807",
            "t1_ns",
            "1000000000 ns",
        ),
        (
            device,
            "accept_ns = 9223372036854775807",
            "accept_ns",
            "1000000000 ns",
        ),
        (
            device,
            "holdoff_recovery_talk_ns = 9223372036854775807",
            "holdoff_recovery_talk_ns",
            "1000000000 ns",
        ),
        (
            device,
            "holdoff_recovery_listen_ns = 9223372036854775807",
            "holdoff_recovery_listen_ns",
            "1000000000 ns",
        ),
        (
            device,
            "response_latency_us = 1e300",
            "response_latency_us",
            "1000000000 us",
        ),
        (
            device,
            "response_latency_us = nan",
            "response_latency_us",
            "1000000000 us",
        ),
    ];
    for (head, line, field, limit) in cases {
        let text = format!("{head}{line}\n");
        let e = build_error(&text);
        assert!(e.contains(field) && e.contains(limit), "{line}: {e}");
    }
    // The limits themselves are accepted.
    let text = format!(
        "{board}timeout_s = 1000\ncall_overhead_us = 1e6\npio_read_byte_ns = 1000000000\n\
         [[board.device]]\naddress = 3\nmodel = 'scpi'\nresponse_latency_us = 1e9\n"
    );
    Config::parse(&text).unwrap().build().unwrap();
}

#[test]
fn duplicate_board_names_and_mounts_on_non_discs_are_refused() {
    let e = build_error("name='x'\n[[board]]\nname='gpib0'\n[[board]]\nname='gpib0'\naddress=1\n");
    assert!(e.contains("two boards named \"gpib0\""), "{e}");
    let e = build_error(
        "name='x'\n[[board]]\nname='b'\n[[board.device]]\naddress=3\nmodel='scpi'\nmount='/data'\n",
    );
    assert!(
        e.contains("device 3 on board b") && e.contains("not a disc"),
        "{e}"
    );
    assert!(e.contains("/data"), "{e}");
    // Through the API too.
    let host = builtin("bench").unwrap();
    let at = crate::sim::DeviceRef {
        board: 0,
        address: Address::new(22, None).unwrap(),
    };
    let e = host.set_mount_point(at, "/x", true).unwrap_err();
    assert!(e.to_string().contains("not a disc"), "{e}");
    assert!(host.mounts().is_empty());
    // Two discs at one mount point: the second would be hidden.
    let e = build_error(
        "name='x'\n[[board]]\nname='b'\n[[board.device]]\naddress=3\nmodel='disc'\nmount='/d'\n\
         [[board.device]]\naddress=4\nmodel='disc'\nmount='/d'\n",
    );
    assert!(
        e.contains("mount point \"/d\"") && e.contains("two discs"),
        "{e}"
    );
}

#[test]
fn named_devices_carry_their_settings() {
    let text = "name='x'\n[[board]]\nname='gpib0'\ntimeout_s=10\n\
        [[board.device]]\naddress=22\nmodel='scpi'\nname='voltmeter'\ntimeout_s=3\n\
        eos=10\nset_reos=true\nset_bin=true\neot=false\n\
        [[board.device]]\naddress=5\nsecondary=2\nmodel='scpi'\nname='scope'\n\
        [[board.device]]\naddress=6\nmodel='scpi'\n\
        [[board]]\nname='gpib1'\n[[board.device]]\naddress=9\nmodel='scpi'\nname='dmm'\n\
        'set-xeos'=true\neos=13\n";
    let host = Config::parse(text).unwrap().build().unwrap();
    let named = host.named_devices();
    assert_eq!(
        named,
        [
            NamedDevice {
                name: "voltmeter".into(),
                board: 0,
                address: Address::new(22, None).unwrap(),
                settings: DeviceSettings {
                    timeout: Some(Timeout::After(Duration::from_secs(3))),
                    eos: Some(EosMode {
                        byte: 10,
                        reos: true,
                        bin: true,
                        xeos: false,
                    }),
                    eot: Some(false),
                    ..DeviceSettings::default()
                },
            },
            NamedDevice {
                name: "scope".into(),
                board: 0,
                address: Address::new(5, Some(2)).unwrap(),
                settings: DeviceSettings {
                    timeout: None,
                    eos: Some(EosMode {
                        byte: 0,
                        reos: false,
                        bin: false,
                        xeos: false,
                    }),
                    eot: Some(true),
                    ..DeviceSettings::default()
                },
            },
            NamedDevice {
                name: "dmm".into(),
                board: 1,
                address: Address::new(9, None).unwrap(),
                settings: DeviceSettings {
                    timeout: None,
                    eos: Some(EosMode {
                        byte: 13,
                        reos: false,
                        bin: false,
                        xeos: true,
                    }),
                    eot: Some(true),
                    ..DeviceSettings::default()
                },
            },
        ]
    );
    assert_eq!(named[0].eos_mode(), 0x0400 | 0x1000 | 10);
    assert_eq!(named[2].eos_mode(), 0x0800 | 13);
    assert_eq!(host.named_device("scope"), Some(named[1].clone()));
    assert_eq!(host.named_device("nosuch"), None);
    // The bench names its SCPI instrument.
    let bench = builtin("bench").unwrap();
    let v = bench.named_device("voltmeter").unwrap();
    assert_eq!((v.board, v.address.primary.get()), (0, 22));

    let dev = "name='x'\n[[board]]\nname='gpib0'\n[[board.device]]\naddress=3\nmodel='scpi'\n";
    for (extra, why) in [
        (
            "name='a'\n[[board.device]]\naddress=4\nmodel='scpi'\nname='a'",
            "two devices named \"a\"",
        ),
        ("name='gpib0'", "\"gpib0\" is also a board's name"),
        ("name=''", "empty"),
        ("timeout_s=3", "only to a named device"),
        ("set_reos=true", "only to a named device"),
        ("name='a'\ntimeout_s=1e300", "timeout_s"),
        ("name='a'\neos=256", "eos"),
    ] {
        let e = build_error(&format!("{dev}{extra}\n"));
        assert!(e.contains(why), "{extra}: {e}");
    }
}

#[test]
fn the_number_of_cpus_is_configured_and_checked() {
    let text = "name = 'two'\ncpus = 2\n[[board]]\nname = 'gpib0'\n";
    assert_eq!(Config::parse(text).unwrap().build().unwrap().cpu_count(), 2);
    let none = "name = 'one'\n[[board]]\nname = 'gpib0'\n";
    assert_eq!(Config::parse(none).unwrap().build().unwrap().cpu_count(), 1);
    for bad in ["0", "257"] {
        let text = format!("name = 'x'\ncpus = {bad}\n[[board]]\nname = 'gpib0'\n");
        let e = Config::parse(&text)
            .unwrap()
            .build()
            .unwrap_err()
            .to_string();
        assert!(e.contains("cpus") && e.contains("1 to 256"), "{e}");
    }
}

#[test]
fn reads_and_writes_take_their_own_call_overheads_and_old_files_one() {
    let build = |text: &str| Config::parse(text).and_then(|c| c.build()).unwrap();
    let board = "name='x'\n[[board]]\nname='b'\ncall_overhead_us = 20\n";
    let t = build(board).board_timing(0).unwrap();
    assert_eq!((t.read_call_overhead, t.write_call_overhead), (None, None));
    for dir in [
        crate::sim::timing::Direction::Read,
        crate::sim::timing::Direction::Write,
    ] {
        assert_eq!(t.data_call_overhead(dir), Duration::from_micros(20));
    }
    let t = build(&format!(
        "{board}read_call_overhead_us = 339.6\nwrite_call_overhead_us = 442.1\n"
    ))
    .board_timing(0)
    .unwrap();
    assert_eq!(t.call_overhead, Duration::from_micros(20));
    assert_eq!(t.read_call_overhead, Some(Duration::from_nanos(339_600)));
    assert_eq!(t.write_call_overhead, Some(Duration::from_nanos(442_100)));
}

/// The tables whose keys are declared once in groups (`keys.rs`) still name every key,
/// in the order of the file's documentation, and where the unknown one is.
#[test]
fn unknown_keys_list_every_key_in_order_and_where() {
    let board = Config::parse("name = \"h\"\n[[board]]\nname = \"b\"\nbogus = 1\n").unwrap_err();
    let device = Config::parse(
        "name = \"h\"\n[[board]]\nname = \"b\"\n[[board.device]]\naddress = 1\nmodel = \"scpi\"\nbogus = 1\n",
    )
    .unwrap_err();
    let instrument = Config::parse(
        "name = \"h\"\ngpib_conf = \"x\"\n[[instrument]]\nmodel = \"scpi\"\nbogus = 1\n",
    )
    .unwrap_err();
    for (e, line, keys) in [
        (
            board,
            4,
            "`name`, `description`, `address`, `timeout_s`, `transfer`, `call_overhead_us`, \
             `read_call_overhead_us`, `write_call_overhead_us`, `command_byte_us`, \
             `pio_read_byte_ns`, `pio_write_byte_ns`, `dma_byte_ns`, `dma_setup_us`, \
             `dma_block_bytes`, `interrupt_us`, `t1_ns`, `accept_ns`, `hs488`, `polled`, \
             `poll_us`, `eos`, `set-reos`, `set_reos`, `set-bin`, `set_bin`, `set-xeos`, \
             `set_xeos`, `eot`, `set-eot`, `autopoll`, \
             `addressing`, `cable_m`, `device`, `pyvisa_sim`",
        ),
        (
            device,
            7,
            "`address`, `secondary`, `model`, `file`, `device`, `resource`, `interface`, \
             `response_time_us`, `idn`, `disc`, `mount`, `mounted`, `t1_ns`, `accept_ns`, \
             `response_latency_us`, `holdoff_recovery_talk_ns`, `holdoff_recovery_listen_ns`, \
             `listen_only`, `nrfd_hold_us`, `srq_every_us`, `activity_bytes_per_s`, \
             `measurement_time_s`, `name`, `timeout_s`, `eos`, `set-reos`, `set_reos`, \
             `set-bin`, `set_bin`, `set-xeos`, `set_xeos`, `eot`, `set-eot`, `faults`",
        ),
        (
            instrument,
            5,
            "`name`, `minor`, `address`, `secondary`, `model`, `idn`, `disc`, `mount`, \
             `mounted`, `t1_ns`, `accept_ns`, `response_latency_us`, \
             `holdoff_recovery_talk_ns`, `holdoff_recovery_listen_ns`, `measurement_time_s`",
        ),
    ] {
        let text = e.to_string();
        assert!(text.contains(&format!("expected one of {keys}")), "{text}");
        assert!(text.contains(&format!("line {line}")), "{text}");
    }
}
