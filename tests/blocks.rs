//! Arbitrary blocks over the bus: 0 B, 1 B, 10 MB, with 0x0A bytes inside, every format.

use gpib::block::{BlockFormat, Endian};
use gpib::{Eos, ErrorKind};
use gpib_suite::{on_every_backend, Fixture, HP3565, SCPI};

fn pattern(n: usize) -> Vec<u8> {
    // 0x0A every 7 bytes, and every other byte value too.
    (0..n)
        .map(|i| {
            if i % 7 == 3 {
                b'\n'
            } else {
                (i * 31 % 251) as u8
            }
        })
        .collect()
}

on_every_backend! {
    fn definite_blocks_round_trip(fx: Fixture) {
        let mut dmm = fx.bus.device(SCPI).unwrap();
        // 10 MB at the 1 MB/s handshake ceiling takes 10 s of virtual time.
        dmm.set_timeout(Some(std::time::Duration::from_secs(60).into()));
        // EOS on NL must not cut a block body short.
        dmm.set_eos(Some(Eos::NEWLINE));
        for n in [0usize, 1, 2, 10, 4096, 10_000_000] {
            let data = pattern(n);
            dmm.write_block(b"DATA ", BlockFormat::Definite, &data).unwrap();
            assert_eq!(dmm.query("DATA:LEN?").unwrap(), n.to_string());
            let back = dmm.query_block("DATA?").unwrap();
            assert_eq!(back.len(), n);
            assert!(back == data, "block of {n} bytes changed on the way");
        }
    }

    fn block_into_caller_buffer(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let info = dmm.query_block_into("BLOCK? 1048576", &mut buf).unwrap();
        assert_eq!(info.len, 1 << 20);
        assert_eq!(info.format, BlockFormat::Definite);
        assert!(buf.iter().enumerate().all(|(i, &b)| b == i as u8));
        // Too small a buffer: a typed error, the bytes that fit are there.
        let mut small = [0u8; 100];
        let e = dmm.query_block_into("BLOCK? 1000", &mut small).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(small[99], 99);
        dmm.clear().unwrap();
        assert_eq!(dmm.query("*OPC?").unwrap(), "1");
    }

    fn waveform_as_f32(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        dmm.write_str("WAV:POIN 1000").unwrap();
        let w: Vec<f32> = dmm.query_values("WAV:DATA?", Endian::Big).unwrap();
        assert_eq!(w.len(), 1000);
        assert!(w[0].abs() < 1e-6);
        assert!((w[250] - 1.0).abs() < 1e-3, "{}", w[250]);
        assert!(w.iter().all(|v| (-1.0..=1.0).contains(v)));
    }

    fn other_formats_write(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        for format in [BlockFormat::Indefinite, BlockFormat::HpA, BlockFormat::Parenthesised] {
            let data = pattern(1000);
            dmm.write_block(b"DATA ", format, &data).unwrap();
            assert_eq!(dmm.query("DATA:LEN?").unwrap(), "1000", "{format:?}");
            assert!(dmm.query_block("DATA?").unwrap() == data, "{format:?}");
        }
    }

    fn hp3565_binary_blocks(fx: Fixture) {
        let mut hp = fx.bus.device(HP3565).unwrap();
        hp.set_timeout(Some(std::time::Duration::from_secs(60).into()));
        hp.write_str("ABRT;DISA;").unwrap();
        let id: usize = hp.query("NEW 5000000;NEW?").unwrap().parse().unwrap();
        // #I: binary until END, 10 MB with 0x0A inside.
        let data = pattern(10_000_000);
        hp.write_block(format!("WBLD {id},5000000,").as_bytes(), BlockFormat::HpI, &data)
            .unwrap();
        hp.write_str(&format!("RBLD {id},4999999")).unwrap();
        let mut back = vec![0u8; 10_000_000];
        let st = hp.read(&mut back).unwrap();
        assert_eq!(st.count, 10_000_000);
        assert!(back == data);
        // One word (2 bytes) and a single byte read out of it.
        hp.write_str(&format!("RBLD {id},0")).unwrap();
        let mut one = [0u8; 1];
        let st = hp.read(&mut one).unwrap();
        assert_eq!((st.count, one[0]), (1, data[0]));
        let st = hp.read(&mut one).unwrap();
        assert_eq!((st.count, one[0]), (1, data[1]));
        assert_eq!(hp.query("ERR?").unwrap(), "0");
    }
}

#[test]
fn malformed_block_from_device_is_typed() {
    let fx = Fixture::sim_bench();
    let dmm = fx.bus.device(SCPI).unwrap();
    // *IDN? answers text, not a block.
    let e = dmm.query_block("*IDN?").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MalformedBlock);
    assert!(e.to_string().contains("expected '#'"), "{e}");
    assert!(e.transferred().unwrap() > 0);
    dmm.clear().unwrap();
    assert_eq!(dmm.query("*OPC?").unwrap(), "1");
}
