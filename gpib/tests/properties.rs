//! Property tests (proptest): blocks in every format, on their own and through the
//! simulated bus; resource strings; IEEE 488.1 command bytes.
//!
//! Case counts are modest so that the file runs in a few seconds in debug builds; the
//! fuzz targets in `fuzz/` explore the same ground for longer.

use std::time::Duration;

use gpib::block::{self, BlockFormat, HeaderParse};
use gpib::sim::timing::{BoardTiming, DeviceTiming};
use gpib::sim::{DeviceIo, Instrument, SimHost};
use gpib::{
    Address, Bus, CommandDecoder, Device, InterfaceMessage, PrimaryAddress, Resource,
    SecondaryAddress,
};
use proptest::prelude::*;

const ALL_FORMATS: [BlockFormat; 5] = [
    BlockFormat::Definite,
    BlockFormat::Indefinite,
    BlockFormat::HpA,
    BlockFormat::HpI,
    BlockFormat::Parenthesised,
];

fn format() -> impl Strategy<Value = BlockFormat> {
    prop::sample::select(&ALL_FORMATS[..])
}

/// Block data with plenty of 0x0A (NL) and '#' bytes, the ones that could end or
/// confuse a block reader; up to 3000 bytes (every format's limit is larger).
fn data() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            3 => any::<u8>(),
            1 => Just(b'\n'),
            1 => Just(b'#'),
        ],
        0..3000,
    )
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------
// Blocks, in memory.
// ---------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn encode_then_decode_gives_the_data(format in format(), data in data(), nl in any::<bool>()) {
        let mut wire = Vec::new();
        block::encode(format, &data, &mut wire).unwrap();
        // The header parses completely, in one go and from every prefix that holds it.
        let header = match block::parse_header(&wire).unwrap() {
            HeaderParse::Complete(h) => h,
            other => panic!("{format:?}: {other:?}"),
        };
        prop_assert_eq!(header.format, format);
        if let Some(len) = header.body_len {
            prop_assert_eq!(len, data.len() as u64);
        }
        for k in 0..header.header_len {
            match block::parse_header(&wire[..k]) {
                Ok(HeaderParse::NeedAtLeast(n)) => prop_assert!(n > k),
                other => panic!("{format:?}: prefix of {k} byte(s): {other:?}"),
            }
        }
        prop_assert_eq!(block::decode(&wire, true).unwrap(), &data[..]);
        // Definite-length formats: a final NL is allowed, END is not needed.
        if header.body_len.is_some() {
            if nl {
                wire.push(b'\n');
            }
            prop_assert_eq!(block::decode(&wire, false).unwrap(), &data[..]);
        } else {
            // END-terminated formats need END.
            prop_assert!(block::decode(&wire, false).is_err());
        }
    }

    #[test]
    fn decode_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64), ended in any::<bool>()) {
        let _ = block::parse_header(&bytes);
        if let Ok(body) = block::decode(&bytes, ended) {
            prop_assert!(body.len() <= bytes.len());
        }
    }

    #[test]
    fn typed_values_round_trip(values in prop::collection::vec(any::<i32>(), 0..64), big in any::<bool>()) {
        let endian = if big { block::Endian::Big } else { block::Endian::Little };
        let bytes: Vec<u8> = values
            .iter()
            .flat_map(|v| if big { v.to_be_bytes() } else { v.to_le_bytes() })
            .collect();
        prop_assert_eq!(block::values::<i32>(&bytes, endian).unwrap(), values);
    }
}

// ---------------------------------------------------------------------------------
// Blocks, through the simulated bus.
// ---------------------------------------------------------------------------------

/// Answers every message with the same bytes, END on the last.
struct Sender {
    wire: Vec<u8>,
}

impl Instrument for Sender {
    fn model(&self) -> &str {
        "BLOCK-SENDER"
    }
    fn listen(&mut self, _data: &[u8], end: bool, io: &mut DeviceIo<'_>) {
        if end {
            io.output.push(&self.wire);
            io.output.finish_message();
        }
    }
}

fn device_sending(wire: Vec<u8>) -> Device {
    let host = SimHost::new("properties");
    let board = host.add_board(
        "gpib0",
        PrimaryAddress::try_from(0u8).unwrap(),
        BoardTiming::default(),
        Duration::from_secs(1).into(),
    );
    let address = Address::try_from(7u8).unwrap();
    host.attach(
        board,
        address,
        Box::new(Sender { wire }),
        DeviceTiming::default(),
    )
    .unwrap();
    Bus::new(host.board(board).unwrap())
        .device(address)
        .unwrap()
}

proptest! {
    #![proptest_config(config(96))]

    #[test]
    fn blocks_read_from_the_bus_give_the_data(
        format in format(),
        data in data(),
        nl in any::<bool>(),
        spare in 0usize..16,
    ) {
        let mut wire = Vec::new();
        block::encode(format, &data, &mut wire).unwrap();
        let definite = !matches!(format, BlockFormat::Indefinite | BlockFormat::HpI);
        if definite && nl {
            wire.push(b'\n'); // IEEE 488.2's NL+END after the body
        }
        let dev = device_sending(wire);

        // Straight into a caller's buffer: exactly big enough (plus the #0 block's NL),
        // or with room to spare.
        let need = data.len() + usize::from(format == BlockFormat::Indefinite);
        let mut buf = vec![0u8; need + spare];
        dev.write(b"SEND").unwrap();
        let info = dev.read_block_into(&mut buf).unwrap();
        prop_assert_eq!(info.format, format);
        prop_assert_eq!(&buf[..info.len], &data[..]);

        // Into a Vec.
        dev.write(b"SEND").unwrap();
        prop_assert_eq!(dev.read_block().unwrap(), data.clone());

        // Query and read in one transaction.
        prop_assert_eq!(dev.query_block("SEND").unwrap(), data.clone());

        // A buffer one byte short is an InvalidArgument, never a wrong answer.
        if need > 0 {
            let mut small = vec![0u8; need - 1];
            dev.clear().unwrap();
            dev.write(b"SEND").unwrap();
            let e = dev.read_block_into(&mut small).unwrap_err();
            prop_assert_eq!(e.kind(), gpib::ErrorKind::InvalidArgument, "{}", e);
        }
    }
}

// ---------------------------------------------------------------------------------
// Resource strings.
// ---------------------------------------------------------------------------------

fn resource() -> impl Strategy<Value = Resource> {
    prop_oneof![
        any::<u16>().prop_map(|board| Resource::Interface { board }),
        (any::<u16>(), 0u8..=30, prop::option::of(0u8..=30)).prop_map(|(board, p, s)| {
            Resource::Instrument {
                board,
                address: Address::new(p, s).unwrap(),
            }
        }),
    ]
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn resources_display_then_parse(r in resource(), lower in any::<bool>(), pad in any::<bool>()) {
        let shown = r.to_string();
        prop_assert_eq!(shown.parse::<Resource>().unwrap(), r);
        // Case and surrounding blanks do not matter.
        let mut text = if lower { shown.to_ascii_lowercase() } else { shown.clone() };
        if pad {
            text = format!("  {text}\t");
        }
        prop_assert_eq!(text.parse::<Resource>().unwrap(), r);
    }

    #[test]
    fn arbitrary_strings_never_panic(s in any::<String>()) {
        if let Ok(r) = s.parse::<Resource>() {
            prop_assert_eq!(r.to_string().parse::<Resource>().unwrap(), r);
        }
    }

    #[test]
    fn resource_like_strings_never_panic(
        s in "(GPIB|gpib|GPIb|GPI|é|)[0-9]{0,6}(::([0-9]{0,6}|INSTR|INTFC|instr|x|é)){0,5}[ \t]?"
    ) {
        match s.parse::<Resource>() {
            Ok(r) => prop_assert_eq!(r.to_string().parse::<Resource>().unwrap(), r),
            Err(e) => prop_assert_eq!(e.kind(), gpib::ErrorKind::InvalidResource),
        }
    }
}

// ---------------------------------------------------------------------------------
// Command bytes.
// ---------------------------------------------------------------------------------

/// Every interface message, each with whether it needs a PPC before it to decode as
/// itself (PPE and PPD live in the secondary group).
fn every_message() -> Vec<(InterfaceMessage, bool)> {
    use InterfaceMessage::*;
    let mut v: Vec<(InterfaceMessage, bool)> = [
        GoToLocal,
        SelectedDeviceClear,
        ParallelPollConfigure,
        GroupExecuteTrigger,
        TakeControl,
        LocalLockout,
        DeviceClear,
        ParallelPollUnconfigure,
        SerialPollEnable,
        SerialPollDisable,
        Unlisten,
        Untalk,
    ]
    .into_iter()
    .map(|m| (m, false))
    .collect();
    for a in PrimaryAddress::all() {
        v.push((Listen(a), false));
        v.push((Talk(a), false));
    }
    for s in 0..=30u8 {
        v.push((Secondary(SecondaryAddress::try_from(s).unwrap()), false));
    }
    for line in 0..8 {
        for sense in [false, true] {
            v.push((ParallelPollEnable { sense, line }, true));
        }
    }
    v.push((ParallelPollDisable, true));
    // The undefined codes: whatever decodes as Undefined outside PPC.
    for b in 0..0x80u8 {
        if let Undefined(x) = InterfaceMessage::decode(b) {
            v.push((Undefined(x), false));
        }
    }
    v
}

#[test]
fn every_message_byte_decodes_back_to_it() {
    let all = every_message();
    // 12 fixed + 31 MLA + 31 MTA + 31 MSA + 16 PPE + PPD + the undefined codes: every
    // one of the 128 7-bit codes is some message outside PPC.
    assert_eq!(all.iter().filter(|(_, ppc)| !ppc).count(), 128);
    for (m, after_ppc) in all {
        let byte = m.byte();
        assert_eq!(
            InterfaceMessage::decode_with(byte, after_ppc),
            m,
            "{m} = 0x{byte:02X}"
        );
        // The same through the stream decoder, and with the parity bit set.
        let mut dec = CommandDecoder::new();
        if after_ppc {
            assert_eq!(
                dec.next_message(InterfaceMessage::ParallelPollConfigure.byte()),
                InterfaceMessage::ParallelPollConfigure
            );
        }
        assert_eq!(dec.next_message(byte), m, "{m} via CommandDecoder");
        assert_eq!(
            InterfaceMessage::decode_with(byte | 0x80, after_ppc),
            m,
            "{m} with parity"
        );
        assert_eq!(u8::from(m), byte);
        assert!(!m.to_string().is_empty());
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn command_streams_decode_to_messages_that_encode_back(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let mut dec = CommandDecoder::new();
        for b in bytes {
            let m = dec.next_message(b);
            if m == InterfaceMessage::ParallelPollDisable {
                // PPD: 0x70 with four don't-care bits.
                prop_assert_eq!(b & 0x70, 0x70);
                prop_assert_eq!(m.byte(), 0x70);
            } else {
                prop_assert_eq!(m.byte(), b & 0x7F, "{} from 0x{:02X}", m, b);
            }
        }
    }

    #[test]
    fn ppe_and_ppd_follow_ppc_until_a_primary_command(
        secondaries in prop::collection::vec(0x60u8..=0x7F, 1..8),
        primary in 0u8..0x60,
    ) {
        let mut dec = CommandDecoder::new();
        dec.next_message(InterfaceMessage::ParallelPollConfigure.byte());
        for &s in &secondaries {
            let m = dec.next_message(s);
            prop_assert!(
                matches!(m, InterfaceMessage::ParallelPollEnable { .. } | InterfaceMessage::ParallelPollDisable),
                "0x{:02X} after PPC decoded as {}", s, m
            );
        }
        let m = dec.next_message(primary);
        if m != InterfaceMessage::ParallelPollConfigure {
            // Out of configuration mode: the secondary group is MSA again (0x7F: undefined).
            let after = dec.next_message(0x60);
            prop_assert_eq!(after, InterfaceMessage::Secondary(SecondaryAddress::try_from(0u8).unwrap()));
        }
    }
}
