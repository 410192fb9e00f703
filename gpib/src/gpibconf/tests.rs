use std::time::Duration;

use super::*;
use crate::abi::{BIN, REOS, XEOS};
use crate::backend::Eos;

const EXAMPLE: &str = include_str!("../../configs/gpib.conf.example");

fn err(text: &str) -> ParseError {
    match parse(text) {
        Ok(c) => panic!("parsed, expected an error: {c:?}"),
        Err(e) => e,
    }
}

/// One interface on minor 0, then `rest`.
fn with_board(rest: &str) -> String {
    format!("interface {{ minor = 0 }}\n{rest}")
}

fn device(body: &str) -> Result<Device, ParseError> {
    let pad = if body.contains("pad") { "" } else { "pad = 5" };
    let conf = parse(&with_board(&format!(
        "device {{ minor = 0 name = \"d\" {pad} {body} }}"
    )))?;
    Ok(conf.devices[0].clone())
}

#[test]
fn the_example_parses_with_its_settings() {
    let conf = parse(EXAMPLE).unwrap();
    assert_eq!(conf.interfaces.len(), 1, "the pcIIa board is commented out");
    let b = &conf.interfaces[0];
    assert_eq!(b.minor, 0);
    assert_eq!(b.name.as_deref(), Some("violet"));
    assert_eq!(b.board_type.as_deref(), Some("ni_pci"));
    assert_eq!(b.settings.pad.get(), 0);
    assert_eq!(b.settings.sad, None);
    assert_eq!(b.settings.timeout_step(), 12);
    assert_eq!(
        b.settings.timeout(),
        crate::Timeout::After(Duration::from_secs(3))
    );
    assert_eq!(b.settings.eos_mode(), 0x0a | REOS);
    assert!(b.settings.eot());
    assert!(b.master);
    assert_eq!(
        (b.base, b.irq, b.dma, b.pci_bus, b.pci_slot),
        (0, 0, 0, None, None)
    );
    assert_eq!(conf.devices.len(), 2);
    let v = conf.device("voltmeter").unwrap();
    assert_eq!(
        (v.minor, v.settings.address().to_string()),
        (0, "7".to_string())
    );
    assert_eq!(v.settings.eos_mode(), 0x0a, "set-reos = no: the byte only");
    assert_eq!(v.settings.read_eos(), None);
    assert_eq!(v.settings.timeout_step(), DEFAULT_TIMEOUT_STEP);
    let s = conf.device("scope").unwrap();
    assert_eq!(s.settings.pad.get(), 8);
    assert_eq!(s.settings.eos_mode(), 0);
    assert_eq!(s.line, 71);
    assert!(matches!(conf.find("violet"), Some(Entry::Interface(i)) if i.minor == 0));
    assert!(matches!(conf.find("scope"), Some(Entry::Device(d)) if d.name == "scope"));
    assert_eq!(conf.find("gpib0"), None);
    assert_eq!(conf.names(), ["violet", "voltmeter", "scope"]);
}

#[test]
fn empty_files_and_comments_only_are_empty_configurations() {
    assert_eq!(parse("").unwrap(), GpibConf::default());
    assert_eq!(
        parse(" /* a\n comment */ \n\t").unwrap(),
        GpibConf::default()
    );
    // Comments go anywhere between tokens; `/**/` and stars inside are fine.
    let c = parse("/**/interface/* x */{/***/minor/*\n*/=/* ** */1}").unwrap();
    assert_eq!(c.interfaces[0].minor, 1);
}

#[test]
fn numbers_are_decimal_hex_or_octal() {
    assert_eq!(device("eos = 10").unwrap().settings.eos_byte(), 10);
    assert_eq!(device("eos = 0x0A").unwrap().settings.eos_byte(), 10);
    assert_eq!(device("eos = 0X1f").unwrap().settings.eos_byte(), 31);
    assert_eq!(
        device("eos = 012").unwrap().settings.eos_byte(),
        10,
        "octal"
    );
    assert_eq!(device("eos = 0").unwrap().settings.eos_byte(), 0);
    let c = parse("interface { minor = 0 base = 0xffffffffffffffff irq = 4294967295 }").unwrap();
    assert_eq!(c.interfaces[0].base, u64::MAX);
    assert_eq!(c.interfaces[0].irq, u32::MAX);
}

#[test]
fn secondary_addresses_are_written_with_0x60_added() {
    assert_eq!(device("sad = 0").unwrap().settings.sad, None);
    let d = device("sad = 0x60").unwrap();
    assert_eq!(d.settings.sad.map(|s| s.get()), Some(0));
    let d = device("sad = 0x7e").unwrap();
    assert_eq!(d.settings.address().to_string(), "5.30");
    assert_eq!(
        device("sad = 110").unwrap().settings.sad.map(|s| s.get()),
        Some(14)
    );
    for bad in ["1", "0x5f", "14", "0x7f", "255"] {
        let e = device(&format!("sad = {bad}")).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("sad"), "{bad}");
        assert!(e.to_string().contains("0x60 plus the address"), "{e}");
    }
}

#[test]
fn timeouts_are_names_words_or_steps() {
    for (text, step) in [
        ("TNONE", 0),
        ("T10us", 1),
        ("T3s", 12),
        ("T1000s", 17),
        ("none", 0),
        ("300us", 4),
        ("1ms", 5),
        ("10s", 13),
        ("1000s", 17),
        ("11", 11),
        ("0", 0),
        ("17", 17),
        ("0x11", 17),
    ] {
        let d = device(&format!("timeout = {text}")).unwrap();
        assert_eq!(d.settings.timeout_step(), step, "{text}");
    }
    assert_eq!(
        device("timo = T1s").unwrap().settings.timeout(),
        crate::Timeout::After(Duration::from_secs(1))
    );
    assert_eq!(
        device("timeout = TNONE").unwrap().settings.timeout(),
        crate::Timeout::Never
    );
    assert_eq!(
        device("").unwrap().settings.timeout(),
        crate::Timeout::After(Duration::from_secs(3))
    );
}

#[test]
fn eos_flags_become_the_mode_bits() {
    let d = device("eos = 0x0d set-reos = yes set-bin = yes set-xeos = yes").unwrap();
    assert_eq!(d.settings.eos_mode(), 0x0d | REOS | BIN | XEOS);
    assert_eq!(
        d.settings.read_eos(),
        Some(Eos {
            byte: 0x0d,
            eight_bit: true
        })
    );
    let d = device("set-xeos = yes").unwrap();
    assert_eq!((d.settings.eos_mode(), d.settings.read_eos()), (XEOS, None));
    assert!(!device("set-eot = no").unwrap().settings.eot());
    assert!(device("").unwrap().settings.eot());
    // The deprecated forms without `=`.
    let d = device("set-reos yes set-bin yes").unwrap();
    assert_eq!(d.settings.eos_mode(), REOS | BIN);
    let c = parse("interface { minor = 0 master yes }").unwrap();
    assert!(c.interfaces[0].master);
    let c = parse("interface { minor = 0 controller = no }").unwrap();
    assert!(!c.interfaces[0].master);
}

#[test]
fn strings_are_quoted_or_bare() {
    let c = parse(
        "interface { minor = 2 name = gpib2 board_type = agilent_82357a \
         sysfs_device_path = \"/sys/bus/usb/devices/1-2\" serial_number = \"MY1234\" \
         pci_bus = 3 pci_slot = 0x1f }",
    )
    .unwrap();
    let i = c.interface(2).unwrap();
    assert_eq!(i.name.as_deref(), Some("gpib2"));
    assert_eq!(i.board_type.as_deref(), Some("agilent_82357a"));
    assert_eq!(
        i.sysfs_device_path.as_deref(),
        Some("/sys/bus/usb/devices/1-2")
    );
    assert_eq!(i.serial_number.as_deref(), Some("MY1234"));
    assert_eq!((i.pci_bus, i.pci_slot), (Some(3), Some(31)));
    // Quoted strings may hold anything but a quote, line breaks too (not in names).
    let d = device("init-string = \"*RST;\n*CLS\"").unwrap();
    assert_eq!(d.init_string.as_deref(), Some("*RST;\n*CLS"));
    let c = parse(&with_board(
        "device { name = \"my dmm {1}\" minor = 0 pad = 1 }",
    ))
    .unwrap();
    assert_eq!(c.devices[0].name, "my dmm {1}");
}

#[test]
fn device_only_keys() {
    let d = device("autopoll init-flags = LLO, DCL EXCL").unwrap();
    assert!(d.autopoll);
    assert_eq!(
        d.init_flags,
        InitFlags {
            local_lockout: true,
            clear: true,
            exclusive: true
        }
    );
    let d = device("init-flags = set-clear").unwrap();
    assert!(d.init_flags.clear && !d.init_flags.local_lockout);
    // An empty flag list, then more keys.
    let d = device("init-flags = eos = 3").unwrap();
    assert_eq!(
        (d.init_flags, d.settings.eos_byte()),
        (InitFlags::default(), 3)
    );
}

#[test]
fn a_device_may_come_before_its_interface() {
    let c = parse("device { minor = 1 name = x pad = 3 } interface { minor = 1 }").unwrap();
    assert_eq!(c.device("x").unwrap().minor, 1);
}

#[test]
fn errors_name_line_column_and_key() {
    let e = err("interface {\n  minor = 0\n  pad = 31\n}");
    assert_eq!((e.line, e.column, e.key.as_deref()), (3, 9, Some("pad")));
    assert_eq!(
        e.to_string(),
        "gpib.conf line 3, column 9: pad: 31 is out of range: primary addresses are 0..=30 (31 is reserved for UNL/UNT)"
    );
    let e = e.in_file("/etc/gpib.conf");
    assert!(
        e.to_string()
            .starts_with("/etc/gpib.conf line 3, column 9: pad: "),
        "{e}"
    );
}

#[test]
fn unknown_and_misplaced_keys() {
    let e = err("interface { minor = 0 padd = 1 }");
    assert_eq!((e.column, e.key.as_deref()), (23, Some("padd")));
    assert!(
        matches!(&e.problem, Problem::UnknownKey(k) if k == "padd"),
        "{e}"
    );
    let e = device("base = 0x300").unwrap_err();
    assert!(
        e.to_string()
            .contains("`base` belongs in an interface section, not in a device section"),
        "{e}"
    );
    let e = err("interface { minor = 0 init-string = \"x\" }");
    assert!(
        matches!(
            e.problem,
            Problem::WrongSection {
                belongs: "a device",
                ..
            }
        ),
        "{e}"
    );
    let e = device("DCL").unwrap_err();
    assert!(e.to_string().contains("a value of `init-flags`"), "{e}");
    let e = err("interface { pad = 1 minor = 0 }");
    assert!(matches!(e.problem, Problem::MinorNotFirst(_)), "{e}");
    assert_eq!(e.column, 13);
}

#[test]
fn bad_values_say_what_is_allowed() {
    for (body, key, says) in [
        ("pad = 99", "pad", "primary addresses are 0..=30"),
        ("pad = 300", "pad", "out of range"),
        ("eos = 256", "eos", "0..=255"),
        ("eos = 08", "eos", "octal has no 8 or 9"),
        ("eos = 99999999999999999999999", "eos", "too large"),
        ("timeout = 18", "timeout", "0 (TNONE) to 17"),
        ("timeout = 2s", "timeout", "is not a timeout"),
        ("timeout = \"T3s\"", "timeout", "expected a timeout"),
        (
            "set-reos = maybe",
            "set-reos",
            "expected `yes` or `no`, found `maybe`",
        ),
        ("set-eot = 1", "set-eot", "expected `yes` or `no`"),
        ("eos = \"10\"", "eos", "expected a number"),
        ("eos = 0x", "eos", "expected a number"),
        ("eos = 12ab", "eos", "expected a number"),
        ("pad = T3s", "pad", "expected a number"),
        (
            "init-string = pad",
            "init-string",
            "write it in double quotes",
        ),
        (
            "init-string = 42",
            "init-string",
            "write it in double quotes",
        ),
        (
            "init-string = yes",
            "init-string",
            "write it in double quotes",
        ),
        (
            "init-string = T1s",
            "init-string",
            "write it in double quotes",
        ),
        ("eos 10", "eos", "expected `=` after the key, found `10`"),
    ] {
        let e = device(body).unwrap_err();
        assert_eq!(e.key.as_deref(), Some(key), "{body}: {e}");
        assert!(e.to_string().contains(says), "{body}: {e}");
    }
    let e = err("interface { minor = 16 }");
    assert!(
        e.to_string()
            .contains("minor: 16 is out of range: board indices (minor) are 0..=15"),
        "{e}"
    );
    let e = device(&format!("init-string = \"{}\"", "x".repeat(61))).unwrap_err();
    assert!(e.to_string().contains("at most 60 bytes"), "{e}");
    let e = err(&format!(
        "interface {{ minor = 0 name = \"{}\" }}",
        "n".repeat(100)
    ));
    assert!(e.to_string().contains("at most 99 bytes"), "{e}");
    assert!(parse(&format!(
        "interface {{ minor = 0 name = \"{}\" }}",
        "n".repeat(99)
    ))
    .is_ok());
}

#[test]
fn what_linux_gpibs_lexer_accepts_is_accepted() {
    // An empty string is a string (flex's `[^"]*"`), and a string may span lines.
    let c = parse(
        "interface { minor = 0 name = \"\" }\ndevice { minor = 0 name = \"two\nlines\" pad = 3 }",
    )
    .unwrap();
    assert_eq!(c.interfaces[0].name.as_deref(), Some(""));
    assert!(c.device("two\nlines").is_some());
    // A comment still open at the end of the file runs to the end.
    let c = parse("interface { minor = 0 }\n  /* never closed\n\n").unwrap();
    assert_eq!(c.interfaces.len(), 1);
    // Inside a section, the section is then never closed: the comment is named.
    let e = err("interface { minor = 0\n /* oops }\n");
    assert_eq!(
        (e.line, e.column, &e.problem),
        (2, 2, &Problem::UnterminatedComment)
    );
}

#[test]
#[cfg(feature = "sim")]
fn a_device_on_a_board_without_an_interface_is_unusable_alone() {
    let c = parse(&with_board(
        "device {\n name = lost\n minor = 3\n pad = 1 }\ndevice { minor = 0 name = dmm pad = 2 }",
    ))
    .unwrap();
    assert!(c.device("dmm").is_some(), "the rest of the file is usable");
    assert!(c.device("lost").is_none());
    let e = c.unusable_device("lost").unwrap();
    assert_eq!((e.line, e.column, e.key.as_deref()), (4, 2, Some("minor")));
    assert_eq!(e.problem, Problem::NoInterface { minor: 3 });
    let host = crate::sim::builtin("bench").unwrap();
    let bus = crate::Bus::new(host.board(0).unwrap());
    let why = c.open_device(&bus, "lost").unwrap_err().to_string();
    assert!(why.contains("no interface section has minor = 3"), "{why}");
    assert!(why.contains("line 4"), "{why}");
}

#[test]
fn missing_keys() {
    let e = err(&with_board("device { minor = 0 pad = 3 }"));
    assert_eq!((e.line, e.column, e.key.as_deref()), (2, 1, Some("name")));
    assert!(
        e.to_string().contains("device section has no `name`"),
        "{e}"
    );
    let e = err(&with_board("device { name = x minor = 0 }"));
    assert!(
        e.to_string().contains("device \"x\" section has no `pad`"),
        "{e}"
    );
    let e = err(&with_board("device { name = x pad = 1 }"));
    assert!(
        e.to_string().contains("no `minor` (the board it is on)"),
        "{e}"
    );
}

#[test]
fn duplicates() {
    let e = device("pad = 5 pad = 6").unwrap_err();
    assert!(
        matches!(e.problem, Problem::DuplicateKey { first_line: 2 }),
        "{e}"
    );
    assert_eq!(e.key.as_deref(), Some("pad"));
    let e = device("timo = T1s timeout = T3s").unwrap_err();
    assert_eq!(
        e.key.as_deref(),
        Some("timeout"),
        "timo and timeout are one key"
    );
    let e = err("interface { minor = 0 name = a }\ndevice { minor = 0 name = a pad = 1 }");
    assert_eq!((e.line, e.column), (2, 20));
    assert!(
        matches!(&e.problem, Problem::DuplicateName { name, first_line: 1 } if name == "a"),
        "{e}"
    );
    let e = err("interface { minor = 0 }\n\ninterface { minor = 0 }");
    assert_eq!(e.line, 3);
    assert!(
        matches!(
            e.problem,
            Problem::DuplicateMinor {
                minor: 0,
                first_line: 1
            }
        ),
        "{e}"
    );
}

#[test]
fn lexical_errors() {
    let e = err("interface { minor = 0 name = \"violet }");
    assert_eq!(
        (e.line, e.column, &e.problem),
        (1, 30, &Problem::UnterminatedString)
    );
    let e = err("interface { minor = 0; }");
    assert_eq!(
        (e.column, &e.problem),
        (22, &Problem::UnexpectedCharacter(';'))
    );
    let e = err("# a shell comment\n");
    assert_eq!(e.problem, Problem::UnexpectedCharacter('#'));
    let e = err("// a C++ comment\n");
    assert_eq!(e.problem, Problem::UnexpectedCharacter('/'));
    let e = err("interface { minor = 0 name = vïolet }");
    assert_eq!(
        (e.column, &e.problem),
        (31, &Problem::UnexpectedCharacter('ï'))
    );
}

#[test]
fn syntax_errors() {
    let e = err("board { minor = 0 }");
    assert!(
        e.to_string()
            .contains("expected `interface` or `device`, found `board`"),
        "{e}"
    );
    let e = err("interface minor = 0");
    assert!(
        e.to_string()
            .contains("expected `{` after the section's keyword"),
        "{e}"
    );
    let e = err("interface { minor = 0 pad = 1");
    assert!(
        e.to_string().contains("expected `}` to close the section"),
        "{e}"
    );
    assert!(e.to_string().contains("found the end of the file"), "{e}");
    let e = err("interface { minor = 0 = }");
    assert!(
        e.to_string().contains("expected a key or `}`, found `=`"),
        "{e}"
    );
    let e = err("interface { minor = 0 } }");
    assert!(e.to_string().contains("found `}`"), "{e}");
    // CRLF line ends count as white space.
    assert!(parse("interface {\r\n minor = 0\r\n}\r\n").is_ok());
}

#[test]
fn size_and_section_limits() {
    let big = " ".repeat(MAX_GPIB_CONF_BYTES as usize + 1);
    assert_eq!(
        err(&big).problem,
        Problem::TooLarge {
            limit: MAX_GPIB_CONF_BYTES
        }
    );
    let mut text = with_board("");
    for i in 0..MAX_SECTIONS - 1 {
        text.push_str(&format!("device {{ minor = 0 name = d{i} pad = 1 }}\n"));
    }
    assert_eq!(parse(&text).unwrap().devices.len(), MAX_SECTIONS - 1);
    text.push_str("device { minor = 0 name = last pad = 1 }\n");
    let e = err(&text);
    assert_eq!(
        e.problem,
        Problem::TooManySections {
            limit: MAX_SECTIONS
        }
    );
    assert_eq!(e.line, 64);
}

#[test]
fn files_are_read_capped_and_named_in_errors() {
    let dir = std::env::temp_dir().join(format!("gpibconf-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("gpib.conf");
    std::fs::write(&good, EXAMPLE).unwrap();
    assert_eq!(GpibConf::read(&good).unwrap(), parse(EXAMPLE).unwrap());
    let bad = dir.join("bad.conf");
    std::fs::write(&bad, "interface { minor = 0 pad = 40 }").unwrap();
    let e = GpibConf::read(&bad).unwrap_err();
    assert_eq!(e.file.as_deref(), Some(bad.as_path()));
    assert!(
        e.to_string()
            .starts_with(&format!("{} line 1, column 29: pad: 40", bad.display())),
        "{e}"
    );
    let e = GpibConf::read(dir.join("nosuch.conf")).unwrap_err();
    assert!(e.to_string().ends_with("nosuch.conf: no such file"), "{e}");
    let e = GpibConf::read(&dir).unwrap_err();
    assert!(e.to_string().contains("is a directory"), "{e}");
    let huge = dir.join("huge.conf");
    std::fs::write(&huge, vec![b' '; MAX_GPIB_CONF_BYTES as usize + 1]).unwrap();
    assert!(GpibConf::read(&huge)
        .unwrap_err()
        .to_string()
        .contains("larger than"));
    let as_error: crate::Error = GpibConf::read(&bad).unwrap_err().into();
    assert_eq!(as_error.kind(), crate::ErrorKind::Config);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[cfg(feature = "sim")]
fn open_device_gives_a_handle_with_the_sections_settings() {
    let host = crate::sim::builtin("bench").unwrap();
    let bus = crate::Bus::new(host.board(0).unwrap());
    let conf = parse(&with_board(
        "device { minor = 0 name = dmm pad = 22 timeout = T1s eos = 0x0a set-reos = yes }",
    ))
    .unwrap();
    let dmm = conf.open_device(&bus, "dmm").unwrap();
    assert_eq!(dmm.address().to_string(), "22");
    assert_eq!(dmm.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
    let e = conf.open_device(&bus, "nosuch").unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("names: dmm"), "{e}");
}
