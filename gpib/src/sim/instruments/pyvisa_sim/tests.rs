//! The loader's errors (line and key) and a device's answers, on small files
//! written for these tests.

use super::*;

const SIGGEN: &str = r#"spec: "1.1"
devices:
  gen:
    eom:
      GPIB INSTR:
        q: "\n"
        r: "\r\n"
    error: ERR
    dialogues:
      - q: "?IDN"
        r: "ACME SIGGEN 1"
      - q: "*RST"
      - q: "LINES?"
        r: 'a\nb'
    properties:
      frequency:
        default: 100.0
        getter:
          q: "?FREQ"
          r: "{:.2f}"
        setter:
          q: "!FREQ {:.2f}"
          r: OK
          e: FREQ_ERROR
        specs:
          min: 1
          max: 100000
          type: float
      output:
        default: 0
        getter:
          q: "?OUT"
          r: "{:d}"
        setter:
          q: "!OUT {:d}"
          r: OK
        specs:
          valid: [0, 1]
          type: int
      label:
        default: none
        getter:
          q: "?LBL"
          r: "<{:>6}>"
        setter:
          q: "!LBL {}"
      mode:
        default: 0
        getter:
          q: "?MODE"
          r: "{:d}"
        setter:
          q: "!MODE {:d}"
  psu:
    error:
      response:
        command_error: BAD
      status_register:
        - q: "*ESR?"
          command_error: 32
      error_queue:
        - q: "SYST:ERR?"
          default: '0, No Error'
          command_error: '-100, Command error'
    properties:
      volt:
        default: 1.0
        getter:
          q: "VOLT?"
          r: "{:+.8E}"
        setter:
          q: "VOLT {:.3f}"
        specs:
          min: 1
          max: 6
          type: float
    channels:
      out:
        ids: [1, 2]
        can_select: True
        properties:
          on:
            default: 0
            getter:
              q: "OUTP{ch_id}?"
              r: "{:d}"
            setter:
              q: "OUTP{ch_id} {:d}"
            specs:
              valid: [0, 1]
              type: int
resources:
  GPIB0::8::INSTR:
    device: gen
  GPIB0::9::2::INSTR:
    device: psu
  ASRL1::INSTR:
    device: gen
"#;

fn run(d: &mut Device, msg: &str) -> (Vec<String>, Option<String>) {
    let (a, failed) = d.message(msg.as_bytes(), &mut |_| None);
    (
        a.into_iter()
            .map(|b| String::from_utf8(b).unwrap())
            .collect(),
        failed,
    )
}

fn one(d: &mut Device, msg: &str) -> String {
    let (a, f) = run(d, msg);
    assert!(f.is_none(), "{msg}: {f:?}");
    assert_eq!(a.len(), 1, "{msg}: {a:?}");
    a[0].clone()
}

#[test]
fn answers_as_pyvisa_sim_does() {
    let f = DeviceFile::parse(SIGGEN).unwrap();
    let mut d = f.device("gen", GPIB_INSTR).unwrap();
    assert_eq!(d.query_termination(), b"\n");
    assert_eq!(one(&mut d, "?IDN"), "ACME SIGGEN 1\r\n");
    assert_eq!(run(&mut d, "*RST"), (vec![], None));
    // '\n' written as two characters in single quotes is a newline.
    assert_eq!(one(&mut d, "LINES?"), "a\nb\r\n");
    assert_eq!(one(&mut d, "?FREQ"), "100.00\r\n");
    assert_eq!(one(&mut d, "!FREQ 10.3"), "OK\r\n");
    assert_eq!(one(&mut d, "?FREQ"), "10.30\r\n");
    // Out of range: the setter's own error response, and the value stays.
    assert_eq!(one(&mut d, "!FREQ 0.50"), "FREQ_ERROR\r\n");
    assert_eq!(one(&mut d, "?FREQ"), "10.30\r\n");
    // "5" is no float to stringparser ({:f} wants two digits): an unknown command.
    assert_eq!(one(&mut d, "!FREQ 5"), "ERR\r\n");
    // Not among the valid values and no `e`: the device's error response.
    assert_eq!(one(&mut d, "!OUT 2"), "ERR\r\n");
    assert_eq!(one(&mut d, "!OUT 1"), "OK\r\n");
    assert_eq!(one(&mut d, "?OUT"), "1\r\n");
    assert_eq!(one(&mut d, "BOGUS"), "ERR\r\n");
    // Several queries in one message: one answer each.
    assert_eq!(
        run(&mut d, "?OUT;?IDN;!OUT 0").0,
        ["1\r\n", "ACME SIGGEN 1\r\n", "OK\r\n"]
    );
    // A setter without `r` answers nothing; without specs it keeps the text.
    assert_eq!(run(&mut d, "!LBL abc"), (vec![], None));
    assert_eq!(one(&mut d, "?LBL"), "<   abc>\r\n");
    assert_eq!(d.property("label").as_deref(), Some("abc"));
}

#[test]
fn what_pyvisa_sim_raises_on_stops_the_message() {
    let f = DeviceFile::parse(SIGGEN).unwrap();
    let mut d = f.device("gen", GPIB_INSTR).unwrap();
    // The default "0" is a str (no specs): "{:d}" of a str raises in Python.
    let (a, failed) = run(&mut d, "?IDN;?MODE;?IDN");
    assert_eq!(a, ["ACME SIGGEN 1\r\n"]);
    assert!(failed.unwrap().contains("type 'str'"));
    // Once a setter stored an int, the same getter answers.
    assert_eq!(run(&mut d, "!MODE 3"), (vec![], None));
    assert_eq!(one(&mut d, "?MODE"), "3\r\n");
}

#[test]
fn error_queue_status_register_and_channels() {
    let f = DeviceFile::parse(SIGGEN).unwrap();
    let mut d = f.resource_device("GPIB0::9::2::INSTR").unwrap();
    // No eom for GPIB INSTR: LF both ways.
    assert_eq!(d.response_termination(), b"\n");
    assert_eq!(one(&mut d, "SYST:ERR?"), "0, No Error\n");
    assert_eq!(one(&mut d, "*ESR?"), "0\n");
    assert!(!d.error_pending());
    assert_eq!(one(&mut d, "FAKE"), "BAD\n");
    // Out of range, no `e`: a command error.
    assert_eq!(one(&mut d, "VOLT 0.5"), "BAD\n");
    assert!(d.error_pending());
    assert_eq!(one(&mut d, "*ESR?"), "32\n");
    assert_eq!(one(&mut d, "*ESR?"), "0\n");
    assert_eq!(one(&mut d, "SYST:ERR?"), "-100, Command error\n");
    assert_eq!(one(&mut d, "SYST:ERR?"), "-100, Command error\n");
    assert_eq!(one(&mut d, "SYST:ERR?"), "0, No Error\n");
    assert_eq!(run(&mut d, "VOLT 2.5"), (vec![], None));
    assert_eq!(one(&mut d, "VOLT?"), "+2.50000000E+00\n");
    // Channels selected in the query.
    assert_eq!(one(&mut d, "OUTP1?"), "0\n");
    assert_eq!(run(&mut d, "OUTP2 1"), (vec![], None));
    assert_eq!(one(&mut d, "OUTP2?"), "1\n");
    assert_eq!(one(&mut d, "OUTP1?"), "0\n");
    assert_eq!(one(&mut d, "OUTP3?"), "BAD\n");
    assert_eq!(one(&mut d, "OUTP1 7"), "BAD\n");
}

#[test]
fn resources_give_gpib_addresses_and_eoms() {
    let f = DeviceFile::parse(SIGGEN).unwrap();
    let r = f.resources().unwrap();
    assert_eq!(r.len(), 3);
    assert_eq!(r[0].gpib, Some((0, Address::new(8, None).unwrap())));
    assert_eq!(r[1].gpib, Some((0, Address::new(9, Some(2)).unwrap())));
    assert_eq!(r[2].gpib, None);
    assert_eq!(r[2].interface, "ASRL INSTR");
    assert_eq!(parse_gpib_resource("GPIB::4::INSTR").map(|g| g.0), Some(0));
    assert_eq!(parse_gpib_resource("GPIB1::31::INSTR"), None);
    assert_eq!(
        resource_interface("TCPIP::localhost::10001::SOCKET"),
        "TCPIP SOCKET"
    );
    assert_eq!(
        resource_interface("USB::0x1111::0x2222::0x1234::INSTR"),
        "USB INSTR"
    );
}

/// (line, key, a word of the reason) of the error loading `text`'s device `gen`.
fn load_error(text: &str) -> (usize, String, String) {
    let e = DeviceFile::parse(text).and_then(|f| f.device("gen", GPIB_INSTR));
    match e {
        Err(DeviceFileError::Invalid {
            line, key, reason, ..
        }) => (line, key, reason),
        Err(DeviceFileError::Syntax { line, reason, .. }) => (line, String::new(), reason),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn loader_errors_name_the_line_and_the_key() {
    let head = "spec: '1.1'\ndevices:\n  gen:\n";
    let cases: &[(&str, usize, &str, &str)] = &[
        (
            "    properties:\n      f:\n        specs:\n          type: double\n",
            7,
            r#"devices.gen.properties.f.specs.type"#,
            "invalid property type",
        ),
        (
            "    properties:\n      f:\n        specs:\n          type: int\n          min: 1.5\n",
            8,
            "devices.gen.properties.f.specs.min",
            "not a valid int",
        ),
        (
            "    properties:\n      f:\n        default: 9\n        specs:\n          type: int\n          max: 5\n",
            6,
            "devices.gen.properties.f.default",
            "does not pass",
        ),
        (
            "    dialogues:\n      - r: x\n",
            5,
            "devices.gen.dialogues[0]",
            "no `q` key",
        ),
        (
            "    properties:\n      f:\n        setter:\n          q: 'F {} {}'\n",
            7,
            "devices.gen.properties.f.setter.q",
            "value field",
        ),
        (
            "    properties:\n      f:\n        getter:\n          q: 'F?'\n          r: '{:d'\n",
            8,
            "devices.gen.properties.f.getter.r",
            "expected '}'",
        ),
        (
            "    eom:\n      GPIB:\n        q: x\n        r: y\n",
            6,
            "devices.gen.eom.GPIB",
            "interface type and a resource class",
        ),
        (
            "    channels:\n      c:\n        can_select: False\n        ids: [1]\n",
            6,
            "devices.gen.channels.c",
            "selected_channel",
        ),
        (
            "    error:\n      error_queue:\n        - q: 'E?'\n",
            6,
            "devices.gen.error.error_queue[0]",
            "`default`",
        ),
    ];
    for (body, line, key, word) in cases {
        let (l, k, r) = load_error(&format!("{head}{body}"));
        assert_eq!((l, k.as_str()), (*line, *key), "{body}: {r}");
        assert!(r.contains(word), "{body}: {r}");
    }
}

#[test]
fn file_level_errors() {
    let e = DeviceFile::parse("devices: {}\n").unwrap_err();
    assert!(e.to_string().contains("spec version"), "{e}");
    let e = DeviceFile::parse("spec: '1.2'\n").unwrap_err();
    assert!(
        matches!(&e, DeviceFileError::Invalid { line: 1, key, .. } if key == "spec"),
        "{e}"
    );
    let e = DeviceFile::parse("spec: '2.0'\n").unwrap_err();
    assert!(e.to_string().contains("reads up to 1.1"), "{e}");
    let e = DeviceFile::parse("spec: 'x'\n").unwrap_err();
    assert!(e.to_string().contains("X.Y"), "{e}");
    let e = DeviceFile::parse("spec: '1.0'\ndevices: [\n").unwrap_err();
    assert!(matches!(e, DeviceFileError::Syntax { .. }), "{e}");
    let e = DeviceFile::parse(&"#".repeat(2 << 20)).unwrap_err();
    assert!(matches!(e, DeviceFileError::Read(_)), "{e}");
    let f = DeviceFile::parse("spec: '1.0'\ndevices:\n  a: {}\n  b: {}\n").unwrap();
    let e = f.device("c", GPIB_INSTR).unwrap_err();
    assert!(e.to_string().contains("the file has: a, b"), "{e}");
    assert_eq!(e.to_string().split(':').next(), Some("line 3, column 3"));
}

/// Found while adding the fuzz target: a resource name whose fourth byte is inside a
/// character (`GPIé::8::INSTR`) panicked slicing the `GPIB` prefix.
#[test]
fn resource_names_with_multibyte_characters_are_not_gpib() {
    assert_eq!(parse_gpib_resource("GPIé::8::INSTR"), None);
    assert_eq!(parse_gpib_resource("GPIB\u{e9}::8::INSTR"), None);
    assert_eq!(parse_gpib_resource("é"), None);
    let f = DeviceFile::parse(
        "spec: '1.1'\nresources:\n  GPIé::8::INSTR:\n    device: d\ndevices:\n  d: {}\n",
    )
    .unwrap();
    let r = f.resources().unwrap();
    assert_eq!(r[0].gpib, None);
}

#[test]
fn defaults_and_set_values_in_unicode_digits_convert_as_python_does() {
    // Python's int() and float() read every Unicode decimal digit (category Nd).
    let t = "spec: '1.1'\ndevices:\n  d:\n    eom:\n      GPIB INSTR:\n        q: \"\\n\"\n        r: \"\\n\"\n    properties:\n      n:\n        default: \"٣\"\n        getter:\n          q: \"N?\"\n          r: \"{:d}\"\n        setter:\n          q: \"N {}\"\n        specs:\n          type: int\n      x:\n        default: \"３.５\"\n        getter:\n          q: \"X?\"\n          r: \"{}\"\n        specs:\n          type: float\n";
    let f = DeviceFile::parse(t).unwrap();
    let mut d = f.device("d", GPIB_INSTR).unwrap();
    assert_eq!(one(&mut d, "N?"), "3\n");
    assert_eq!(one(&mut d, "X?"), "3.5\n");
    // A value written on the bus: `{}` takes the text, int() converts it.
    assert_eq!(run(&mut d, "N １_２"), (vec![], None));
    assert_eq!(one(&mut d, "N?"), "12\n");
}

/// A device file that is not there is reported as a missing device file, with its path
/// (it was read through the simulator configuration's reader, which called it an
/// "unknown configuration ... not a built-in").
#[test]
fn a_missing_device_file_is_named_as_one() {
    let path = std::env::temp_dir().join(format!("gpib-no-such-{}.yaml", std::process::id()));
    let e = DeviceFile::read(&path).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, DeviceFileError::Read(_)), "{text}");
    assert!(!text.contains("configuration"), "{text}");
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("cannot open"), "{text}");
    let dir = std::env::temp_dir();
    let text = DeviceFile::read(&dir).unwrap_err().to_string();
    assert!(text.contains("is a directory, not a file"), "{text}");
}
