//! `gpib::sim::Config::parse` then `.build()` on arbitrary text.
//!
//! Asserts: no panic; errors are `Config` errors; a host that builds has one board
//! per `[[board]]`, each usable as a backend, and as many devices as configured.
#![no_main]

use gpib::sim::Config;
use gpib::ErrorKind;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let cfg = match Config::parse(text) {
        Ok(c) => c,
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Config, "{e}");
            return;
        }
    };
    // Keep each run small: TOML arrays can describe many boards in few bytes.
    if cfg.boards.len() > 16 || cfg.boards.iter().map(|b| b.devices.len()).sum::<usize>() > 64 {
        return;
    }
    match cfg.build() {
        Ok(host) => {
            assert_eq!(host.board_names().len(), cfg.boards.len());
            for (i, b) in cfg.boards.iter().enumerate() {
                assert_eq!(host.devices(i).len(), b.devices.len(), "board {i}");
                host.board(i).unwrap_or_else(|e| panic!("board {i} of a built host: {e}"));
            }
            assert!(host.board(cfg.boards.len()).is_err());
        }
        Err(e) => assert_eq!(e.kind(), ErrorKind::Config, "{e}"),
    }
});
