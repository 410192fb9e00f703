//! Garbage in: random bytes through every parser and into every simulated instrument
//! never panic, and the bus stays usable. (A deterministic generator keeps runs
//! repeatable; `cargo fuzz` targets can take over where this stops.)

use gpib::block::{self, BlockFormat};
use gpib::{Eos, Resource};
use gpib_suite::{Fixture, HP3565, SCPI};

/// xorshift64*: small, fast, and the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn bytes(&mut self, max: usize, alphabet: &[u8]) -> Vec<u8> {
        let n = (self.next() as usize) % (max + 1);
        (0..n)
            .map(|_| alphabet[(self.next() as usize) % alphabet.len()])
            .collect()
    }
}

const BLOCKISH: &[u8] = b"#0123456789AI()\n;x\xFF";

#[test]
fn block_parsers_never_panic_and_round_trip() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..20_000 {
        let junk = rng.bytes(40, BLOCKISH);
        let _ = block::parse_header(&junk);
        let _ = block::decode(&junk, rng.next() % 2 == 0);
        let _ = block::values::<f64>(&junk, block::Endian::Little);
    }
    for _ in 0..2_000 {
        let data = rng.bytes(300, &(0..=255).collect::<Vec<u8>>());
        for format in [
            BlockFormat::Definite,
            BlockFormat::Indefinite,
            BlockFormat::HpA,
            BlockFormat::HpI,
            BlockFormat::Parenthesised,
        ] {
            let mut wire = Vec::new();
            block::encode(format, &data, &mut wire).unwrap();
            assert_eq!(block::decode(&wire, true).unwrap(), &data[..]);
        }
    }
}

#[test]
fn resource_parser_never_panics() {
    let mut rng = Rng(42);
    let alphabet = b"GPIBgpib0123456789:INSTRINTFC ";
    for _ in 0..20_000 {
        let text = String::from_utf8(rng.bytes(30, alphabet)).unwrap();
        if let Ok(r) = text.parse::<Resource>() {
            // Whatever parses prints in a form that parses to the same thing.
            assert_eq!(r.to_string().parse::<Resource>().unwrap(), r, "{text:?}");
        }
    }
}

#[test]
fn instruments_survive_garbage_and_the_bus_stays_usable() {
    let fx = Fixture::sim_bench();
    let mut rng = Rng(7);
    let alphabet: Vec<u8> = b"*IDN?;:\n #0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ,\x00\xFF"
        .iter()
        .copied()
        .chain(0..=255u8)
        .collect();
    for address in [SCPI, HP3565] {
        let mut dev = fx.bus.device(address).unwrap();
        dev.set_timeout(Some(std::time::Duration::from_millis(100).into()));
        dev.set_eos(Some(Eos::NEWLINE));
        for _ in 0..3_000 {
            let junk = rng.bytes(60, &alphabet);
            if junk.is_empty() {
                continue;
            }
            match rng.next() % 3 {
                0 => {
                    let _ = dev.write(&junk);
                }
                1 => {
                    let _ = dev.write_partial(&junk);
                }
                _ => {
                    let _ = dev.write(&junk);
                    let mut buf = [0u8; 256];
                    let _ = dev.read(&mut buf);
                }
            }
        }
        dev.clear().unwrap();
    }
    let dmm = fx.bus.device(SCPI).unwrap();
    dmm.write_str("*CLS").unwrap();
    assert_eq!(dmm.query("*IDN?").unwrap(), "SIMULATED,SCPI-DMM,0,1.0");
    let hp = fx.bus.device(HP3565).unwrap();
    let id: usize = hp.query("NEW 4;NEW?").unwrap().parse().unwrap();
    assert!(id >= 1);
}
