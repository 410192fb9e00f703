//! Shared pieces of the fuzz targets.
//!
//! # The script format of `scpi_input` and `hp3565_input`
//!
//! An input is a list of chunks separated by the byte 0xFF; the first byte of a chunk
//! says what the controller does, the rest is its argument:
//!
//! | chunk | action |
//! |---|---|
//! | `W<bytes>` | write the bytes, EOI on the last one |
//! | `P<bytes>` | write the bytes without EOI (the message goes on in the next write) |
//! | `Q<bytes>` | write with EOI, then read until END |
//! | `R<decimal>` | read into a buffer of that size (modulo 4096; 256 without digits) |
//! | `E` | read until END |
//! | `B` | read one arbitrary block (`read_block`) |
//! | `C` / `D` | SDC / DCL |
//! | `S` | serial poll |
//! | `T` | GET |
//! | anything else | the whole chunk is written with EOI |
//!
//! So a seed is readable text: `W*IDN?\n` 0xFF `E`. Every operation may fail
//! (timeouts, malformed blocks); none may panic or hang.

use std::time::Duration;

use gpib::sim::timing::{BoardTiming, DeviceTiming};
use gpib::sim::{Instrument, SimHost};
use gpib::{Address, Bus, Device, PrimaryAddress};

/// The chunk separator of the script format.
pub const SEPARATOR: u8 = 0xFF;

/// At most this many actions run per input, so one input cannot run long.
pub const MAX_ACTIONS: usize = 64;

/// Builds a host with `instrument` alone at address 9 on a DMA board (200 ms timeout,
/// in virtual time) and returns the bus and the device.
pub fn single(instrument: Box<dyn Instrument>) -> (SimHost, Bus, Device) {
    let host = SimHost::new("fuzz");
    let board = host.add_board(
        "gpib0",
        PrimaryAddress::try_from(0u8).unwrap(),
        BoardTiming::default(),
        Duration::from_millis(200).into(),
    );
    let address = Address::try_from(9u8).unwrap();
    let dt = DeviceTiming {
        response_latency: Duration::from_micros(10),
        ..DeviceTiming::default()
    };
    host.attach(board, address, instrument, dt).unwrap();
    let bus = Bus::new(host.board(board).unwrap());
    let dev = bus.device(address).unwrap();
    (host, bus, dev)
}

/// Runs a script (see the module documentation) against `instrument`.
pub fn drive(instrument: Box<dyn Instrument>, script: &[u8]) {
    let (_host, bus, dev) = single(instrument);
    for chunk in script.split(|&b| b == SEPARATOR).take(MAX_ACTIONS) {
        run(&bus, &dev, chunk);
    }
}

fn size_of(arg: &[u8]) -> usize {
    let digits: Vec<u8> = arg.iter().copied().take_while(u8::is_ascii_digit).take(4).collect();
    if digits.is_empty() {
        return 256;
    }
    let n: usize = std::str::from_utf8(&digits).unwrap().parse().unwrap();
    n % 4096
}

fn run(bus: &Bus, dev: &Device, chunk: &[u8]) {
    let Some((&op, arg)) = chunk.split_first() else {
        return;
    };
    match op {
        b'W' => {
            let _ = dev.write(arg);
        }
        b'P' => {
            if let Ok(n) = dev.write_partial(arg) {
                assert!(n <= arg.len());
            }
        }
        b'Q' => {
            let _ = dev.write(arg);
            let _ = dev.read_to_end();
        }
        b'R' => {
            let mut buf = vec![0u8; size_of(arg)];
            match dev.read(&mut buf) {
                Ok(st) => assert!(st.count <= buf.len()),
                Err(e) => assert!(e.transferred().unwrap_or(0) <= buf.len(), "{e}"),
            }
        }
        b'E' => {
            let _ = dev.read_to_end();
        }
        b'B' => {
            let _ = dev.read_block();
        }
        b'C' => {
            let _ = dev.clear();
        }
        b'D' => {
            let _ = bus.device_clear_all();
        }
        b'S' => {
            let _ = dev.serial_poll();
        }
        b'T' => {
            let _ = dev.trigger();
        }
        _ => {
            let _ = dev.write(chunk);
        }
    }
}
