//! Regression tests for the bounds on what a device file may cost: bytes after
//! aliases are expanded, setter patterns' wildcards, and the time of one write.

use std::time::{Duration, Instant};

use super::*;

fn file_with_setter(q: &str) -> String {
    format!(
        "spec: \"1.1\"\ndevices:\n  d:\n    eom:\n      GPIB INSTR:\n        q: \"\\n\"\n        r: \"\\n\"\n    properties:\n      p:\n        default: a\n        setter:\n          q: '{q}'\n"
    )
}

#[test]
fn aliases_of_a_large_string_are_bounded_in_bytes() {
    // A 900 kB string repeated through 100 aliases: 90 MB once expanded, far fewer
    // nodes than MAX_NODES.
    let mut t = format!("spec: \"1.1\"\nbig: &b '{}'\nlist:\n", "x".repeat(900_000));
    for _ in 0..100 {
        t.push_str("  - *b\n");
    }
    let started = Instant::now();
    let Err(e) = DeviceFile::parse(&t) else {
        panic!("a file of 90 MB once expanded was accepted");
    };
    assert!(started.elapsed() < Duration::from_secs(5));
    match e {
        DeviceFileError::Syntax { line, reason, .. } => {
            assert!(reason.contains("bytes"), "{reason}");
            assert!((3..=103).contains(&line), "{line}");
        }
        other => panic!("{other:?}"),
    }
    // A few copies of a small anchor stay fine.
    let ok = "spec: \"1.1\"\na: &x 'hello'\nb: [*x, *x, *x]\n";
    DeviceFile::parse(ok).unwrap();
}

#[test]
fn setter_patterns_with_too_many_wildcards_are_refused_at_load() {
    let q = format!("{}S {{}}", "{_}".repeat(3000));
    let t = file_with_setter(&q);
    let f = DeviceFile::parse(&t).unwrap();
    let started = Instant::now();
    let e = f.device("d", GPIB_INSTR).map(|_| ()).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    let DeviceFileError::Invalid {
        line, key, reason, ..
    } = e
    else {
        panic!("{e:?}");
    };
    assert_eq!(line, 12);
    assert!(key.ends_with("setter.q"), "{key}");
    assert!(reason.contains("fields"), "{reason}");
}

#[test]
fn a_write_against_the_widest_setter_allowed_is_quick() {
    let q = format!("{}S {{}}", "{_}".repeat(pattern::MAX_SETTER_FIELDS - 1));
    let t = file_with_setter(&q);
    let f = DeviceFile::parse(&t).unwrap();
    let mut d = f.device("d", GPIB_INSTR).unwrap();
    // A 64 KiB write that matches, with the template's text all along it: every
    // wildcard is tried at every position. (A debug build matches it in a fraction of
    // a second, a loaded machine's included; an optimised one, MAX_INPUT likewise.)
    let msg = "aS b".repeat(MAX_INPUT / 64);
    let started = Instant::now();
    let _ = d.message(msg.as_bytes(), &mut |_| None);
    let took = started.elapsed();
    eprintln!("a write of {} bytes: {took:?}", msg.len());
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn a_mapping_of_many_keys_loads_quickly() {
    // Repeated keys are merged through an index, not a scan of the entries so far.
    let mut t = String::from("spec: \"1.1\"\nm:\n");
    for i in 0..80_000 {
        t.push_str(&format!("  k{i}: v\n"));
    }
    let started = Instant::now();
    assert!(DeviceFile::parse(&t).is_ok());
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "{took:?}");
}
