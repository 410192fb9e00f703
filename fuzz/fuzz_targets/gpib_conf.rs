//! `gpib::gpibconf::parse` on arbitrary text (linux-gpib's gpib.conf syntax).
//!
//! Asserts: no panic; an error points inside the text (line 1..=lines+1, column >= 1)
//! and says something; a configuration that parses keeps every promise the parser
//! makes: unique names (but empty ones), every device on a configured board and every
//! unusable one on a board without an interface section (with a NoInterface error on
//! its line), minors 0..=15, timeout steps 0..=17, at most MAX_SECTIONS sections;
//! parsing is deterministic; and the simulator builds a host from it or says why.
#![no_main]

use gpib::gpibconf::{self, Problem};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = gpibconf::parse(text);
    assert_eq!(parsed, gpibconf::parse(text), "parsing is deterministic");
    match parsed {
        Err(e) => {
            let lines = text.bytes().filter(|&b| b == b'\n').count() as u32 + 1;
            if !matches!(e.problem, Problem::TooLarge { .. }) {
                assert!(
                    (1..=lines).contains(&e.line),
                    "line {} of {lines}: {e}",
                    e.line
                );
                assert!(e.column >= 1, "{e}");
            }
            assert!(!e.to_string().is_empty());
        }
        Ok(conf) => {
            assert!(
                conf.interfaces.len() + conf.devices.len() + conf.unusable.len()
                    <= gpibconf::MAX_SECTIONS
            );
            let names = conf.names();
            for (i, n) in names.iter().enumerate() {
                assert!(
                    n.is_empty() || !names[..i].contains(n),
                    "duplicate name {n:?}"
                );
            }
            for (i, b) in conf.interfaces.iter().enumerate() {
                assert!(b.minor < gpibconf::MAX_BOARDS);
                assert!(conf.interfaces[..i].iter().all(|o| o.minor != b.minor));
                assert!(b.settings.timeout_step() <= 17);
            }
            for d in &conf.devices {
                assert!(conf.interface(d.minor).is_some(), "{d:?}");
                assert!(d.settings.timeout_step() <= 17);
                assert!(d.settings.pad.get() <= 30);
                if !d.name.is_empty() {
                    assert_eq!(conf.device(&d.name), Some(d));
                }
            }
            for u in &conf.unusable {
                assert!(conf.interface(u.device.minor).is_none(), "{u:?}");
                assert_eq!(
                    u.error.problem,
                    Problem::NoInterface {
                        minor: u.device.minor
                    }
                );
                assert!(u.error.line >= u.device.line);
                if !u.device.name.is_empty() {
                    assert_eq!(conf.unusable_device(&u.device.name), Some(&u.error));
                    assert!(conf.device(&u.device.name).is_none());
                }
            }
            match gpib::sim::Config::from_gpib_conf("fuzz", &conf) {
                Err(e) => assert!(!e.to_string().is_empty()),
                Ok(cfg) => {
                    let highest = conf.interfaces.iter().map(|i| i.minor).max();
                    assert_eq!(cfg.boards.len(), highest.map_or(0, |m| usize::from(m) + 1));
                    assert_eq!(cfg.unusable_devices.len(), conf.unusable.len());
                }
            }
        }
    }
});
