//! pyvisa-sim device files (`gpib::sim::instruments::pyvisa_sim::DeviceFile`) on
//! arbitrary text, then each device answering the file's own lines as messages.
//!
//! Asserts: no panic; a file holds at most `expanded_budget` bytes once its aliases
//! are expanded (memory bounded by what the text carries); a file that loads gives
//! the same devices twice; every device
//! of the file builds or gives an error that says something; answers are bounded by
//! what a message can produce.
#![no_main]

use gpib::sim::instruments::pyvisa_sim::{expanded_budget, DeviceFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = DeviceFile::parse(text) else {
        return;
    };
    assert!(file.expanded_size() <= expanded_budget(text.len()));
    let names = file.device_names();
    assert_eq!(names.is_ok(), file.device_names().is_ok());
    let _ = file.resources();
    for name in names.unwrap_or_default().iter().take(4) {
        match file.device(name, "GPIB INSTR") {
            Err(e) => assert!(!e.to_string().is_empty()),
            Ok(mut dev) => {
                for line in text.lines().take(16) {
                    let mut extra = |_: &[u8]| None;
                    let (answers, _error) = dev.message(line.as_bytes(), &mut extra);
                    assert!(answers.len() <= 1024, "{} answers", answers.len());
                }
            }
        }
    }
});
