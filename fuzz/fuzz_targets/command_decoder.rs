//! The IEEE 488.1 command-byte decoder (`CommandDecoder::next_message`,
//! `InterfaceMessage::decode_with`, `InterfaceMessage::byte`) on arbitrary bytes.
//!
//! Asserts: no panic; the stream decoder agrees with `decode_with` given the PPC state
//! it tracks; every decoded message encodes back to the byte without its parity bit (PPD:
//! to 0x70, its canonical form),
//! and decodes again to itself; Display and mnemonic never panic.
#![no_main]

use gpib::{CommandBuf, CommandDecoder, InterfaceMessage};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut dec = CommandDecoder::new();
    let mut after_ppc = false;
    let mut buf = CommandBuf::new();
    let mut pushed = Vec::new();
    for &byte in data {
        let m = dec.next_message(byte);
        assert_eq!(m, InterfaceMessage::decode_with(byte, after_ppc), "byte 0x{byte:02X}");
        if m == InterfaceMessage::ParallelPollDisable {
            // PPD is 0x70 with four don't-care bits: 0x70..=0x7F after PPC all mean PPD.
            assert!((0x70..=0x7F).contains(&(byte & 0x7F)) && m.byte() == 0x70);
        } else {
            assert_eq!(m.byte(), byte & 0x7F, "{m:?} from 0x{byte:02X}");
        }
        assert_eq!(u8::from(m), m.byte());
        assert_eq!(InterfaceMessage::decode_with(m.byte(), after_ppc), m, "{m:?}");
        if !after_ppc {
            assert_eq!(InterfaceMessage::decode(byte), m);
        }
        let _ = (m.to_string(), m.mnemonic());
        after_ppc = match m {
            InterfaceMessage::ParallelPollConfigure => true,
            InterfaceMessage::ParallelPollEnable { .. } | InterfaceMessage::ParallelPollDisable => after_ppc,
            _ => false,
        };
        if pushed.len() < 8 {
            buf.push(m);
            pushed.push(m.byte());
            assert_eq!(buf.as_bytes(), &pushed[..]);
        }
    }
});
