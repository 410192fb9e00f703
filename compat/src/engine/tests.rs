use super::*;

#[test]
fn simulator_errors_become_libgpib_codes() {
    use gpib_sim::Error as E;
    let t = E::Timeout {
        operation: "read",
        timeout: Timeout::After(Duration::from_secs(1)),
        transferred: 4,
    };
    assert_eq!(
        fail_from(&t, Call::Read),
        Fail {
            iberr: EABO,
            count: Some(4),
            timo: true
        }
    );
    let c = E::CommandTimeout {
        transferred: 1,
        total: 3,
    };
    assert_eq!(fail_from(&c, Call::Command).iberr, EBUS);
    assert!(fail_from(&c, Call::Command).timo);
    assert_eq!(
        fail_from(&E::NoListener { transferred: 0 }, Call::Read).iberr,
        ENOL
    );
    assert_eq!(
        fail_from(&E::NotControllerInCharge, Call::Other).iberr,
        ECIC
    );
    assert_eq!(
        fail_from(&E::SrqStuck { polled: vec![] }, Call::Other).iberr,
        ESRQ
    );
    let bus = E::BusConflict {
        detail: "x".into(),
        transferred: 0,
    };
    assert_eq!(fail_from(&bus, Call::Read).iberr, EBUS);
    // The simulator's NotAddressed is a timeout, as on linux-gpib (which has no EADR).
    let not_addressed = E::NotAddressed("not addressed to listen".into());
    let f = fail_from(&not_addressed, Call::Read);
    assert_eq!((f.iberr, f.timo), (EABO, true));
    let arg = E::InvalidArgument("bad".into());
    assert_eq!(fail_from(&arg, Call::Read).iberr, EARG);
    assert_eq!(fail_from(&arg, Call::Other).iberr, EARG);
    assert_eq!(
        fail_from(&E::unsupported("x", "sim"), Call::Other).iberr,
        ECAP
    );
    let io = E::Io(std::io::Error::from_raw_os_error(13));
    assert_eq!(
        fail_from(&io, Call::Other),
        Fail {
            iberr: EDVR,
            count: Some(13),
            timo: false
        }
    );
    assert_eq!(fail_from(&E::Protocol("?".into()), Call::Read).iberr, EDVR);
}

#[test]
fn addresses_in_4882_form() {
    assert_eq!(decode_addr(22), Some(Address::new(22, None).unwrap()));
    assert_eq!(
        decode_addr(5 | (0x60 << 8)),
        Some(Address::new(5, Some(0)).unwrap())
    );
    assert_eq!(
        decode_addr(5 | (0x7E << 8)),
        Some(Address::new(5, Some(30)).unwrap())
    );
    assert_eq!(decode_addr(31), None);
    assert_eq!(decode_addr(5 | (0x20 << 8)), None);
    assert_eq!(decode_addr(NOADDR), None);
    for a in [3u16, 30, 7 | (0x61 << 8)] {
        assert_eq!(encode_addr(decode_addr(a).unwrap()), a);
    }
    assert_eq!(
        decode_list(&[1, 2, 40]),
        Err(Fail {
            iberr: EARG,
            count: Some(2),
            timo: false
        })
    );
    assert_eq!(check_sad(0), Ok(None));
    assert_eq!(check_sad(0x60), Ok(Some(0)));
    assert_eq!(check_sad(5), Err(Fail::code(EARG)));
    assert_eq!(check_pad(31), Err(Fail::code(EARG)));
}

#[test]
fn settings_eos_for_reads() {
    let mut s = Settings::device(1, None, 11, true, 0);
    assert_eq!(s.read_eos(), None);
    s.set_eos(REOS | 0x0a);
    assert_eq!(
        s.read_eos(),
        Some(Eos {
            byte: b'\n',
            eight_bit: false
        })
    );
    s.set_eos(REOS | BIN | b',' as i32);
    assert_eq!(
        s.read_eos(),
        Some(Eos {
            byte: b',',
            eight_bit: true
        })
    );
    // XEOS alone does not end reads.
    s.set_eos(XEOS | 0x0a);
    assert_eq!(s.read_eos(), None);
}

#[test]
fn a_bad_configuration_leaves_no_boards() {
    let lib = Library::load("/no/such/config.toml");
    assert!(lib.boards.is_empty());
    assert!(lib.load_error.as_deref().unwrap().contains("bench"));
    assert_eq!(dev(&lib, 0, 22, 0, 11, 1, 0), Err(Fail::code(ENEB)));
    assert_eq!(find(&lib, "gpib0").unwrap_err().iberr, EDVR);
}

#[test]
fn descriptors_start_at_16_and_are_reused() {
    let lib = Library::load("bench");
    assert_eq!(lib.boards.len(), 1);
    assert!(lib.get(0).is_some() && lib.get(1).is_none());
    let a = dev(&lib, 0, 22, 0, 11, 1, 0).unwrap();
    let b = dev(&lib, 0, 11, 0x60, 11, 1, 0).unwrap();
    assert_eq!((a, b), (16, 17));
    let da = lib.get(a).unwrap();
    onl(&lib, a, &mut da.lock().unwrap(), 0).unwrap();
    assert!(lib.get(a).is_none());
    assert_eq!(dev(&lib, 0, 5, 0, 11, 1, 0).unwrap(), 16);
    // Board descriptors survive ibonl(ud, 0).
    let d0 = lib.get(0).unwrap();
    onl(&lib, 0, &mut d0.lock().unwrap(), 0).unwrap();
    assert!(lib.get(0).is_some());
    // Bad arguments.
    assert_eq!(dev(&lib, 0, 31, 0, 11, 1, 0), Err(Fail::code(EARG)));
    assert_eq!(dev(&lib, 0, 1, 5, 11, 1, 0), Err(Fail::code(EARG)));
    assert_eq!(dev(&lib, 0, 1, 0, 18, 1, 0), Err(Fail::code(EARG)));
    assert_eq!(dev(&lib, 0, 1, 0, 11, 1, 0x2000), Err(Fail::code(EARG)));
    // No board 3: EDVR with EBADF, as linux-gpib; beyond 15, ENEB.
    assert_eq!(
        dev(&lib, 3, 1, 0, 11, 1, 0).map_err(|f| (f.iberr, f.count)),
        Err((EDVR, Some(9)))
    );
    assert_eq!(dev(&lib, 16, 1, 0, 11, 1, 0), Err(Fail::code(ENEB)));
    let f = find(&lib, "gpib0").unwrap();
    assert!(f >= 16 && lib.get(f).unwrap().lock().unwrap().is_board);
}

#[test]
fn status_words_of_boards_and_devices() {
    let lib = Library::load("bench");
    let b = lib.get(0).unwrap();
    let mut b = b.lock().unwrap();
    assert_eq!(lib.status(&b), CMPL | CIC);
    let ud = dev(&lib, 0, 22, 0, 13, 1, 0).unwrap();
    let slot = lib.get(ud).unwrap();
    let mut d = slot.lock().unwrap();
    assert_eq!(lib.status(&d), CMPL);
    wrt(&lib, &mut d, b"*SRE 16;*IDN?\n").unwrap();
    assert_eq!(lib.status(&d), CMPL | END);
    // MAV with *SRE 16: SRQ, seen on the board; the device's status gets RQS
    // once automatic polling (switched on: linux-gpib's boards open without it)
    // took its status byte.
    assert_eq!(lib.status(&b) & SRQI, SRQI);
    config(&lib, &mut b, OPT_AUTOPOLL, 1).unwrap();
    drop(d);
    wait(&lib, &slot, RQS | TIMO).unwrap();
    let mut d = slot.lock().unwrap();
    assert_eq!(lib.status(&d) & RQS, RQS);
    assert_eq!(rsp(&lib, &mut d).unwrap() & 0x50, 0x50);
    assert_eq!(lib.status(&d) & RQS, 0);
    let mut buf = [0u8; 64];
    let n = rd(&lib, &mut d, &mut buf).unwrap().unwrap() as usize;
    assert_eq!(&buf[..n], b"SIMULATED,SCPI-DMM,0,1.0\n");
    assert_eq!(lib.status(&d), CMPL | END);
    assert_eq!(lib.status(&b) & SRQI, 0);
    // The board was last addressed to listen.
    assert_eq!(lib.status(&b) & (LACS | TACS), LACS);
    // A timeout: TIMO, and the count of what arrived.
    let f = rd(&lib, &mut d, &mut buf).unwrap_err();
    assert_eq!((f.iberr, f.count, f.timo), (EABO, Some(0), true));
    sic(&lib, &mut b).unwrap();
    assert_eq!(lib.status(&b) & (LACS | TACS), 0);
}

#[test]
fn ibwrtf_sends_regular_files_only() {
    let lib = Library::load("bench");
    let ud = dev(&lib, 0, 22, 0, 11, 1, 0).unwrap();
    let slot = lib.get(ud).unwrap();
    let mut d = slot.lock().unwrap();
    // A character device (endless for /dev/zero) or a folder: EFSO, not read.
    for path in ["/dev/null", "/dev/zero", "/"] {
        let f = wrtf(&lib, &mut d, path).unwrap_err();
        assert_eq!(f.iberr, EFSO, "{path}");
    }
    // A regular file is sent.
    let p = std::env::temp_dir().join(format!("gpib-wrtf-{}.txt", std::process::id()));
    std::fs::write(&p, b"*IDN?\n").unwrap();
    assert_eq!(wrtf(&lib, &mut d, p.to_str().unwrap()), Ok(Some(6)));
    let _ = std::fs::remove_file(&p);
}

/// A program finds a board as linux-gpib's gpib_config leaves a system controller's:
/// REN asserted (linux-gpib's own library over the virtual board shows `REN on` in
/// ibtest's line status; this library showed `REN off`).
#[test]
fn boards_start_with_ren_asserted_as_gpib_config_leaves_them() {
    let lib = Library::load("bench");
    let lines = lib.board(0).lock().lines().unwrap();
    assert!(lines.ren, "{lines:?}");
    assert!(!lines.ifc, "{lines:?}");
}
