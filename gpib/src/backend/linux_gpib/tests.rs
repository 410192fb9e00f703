//! Unit tests of the backend's pure parts (no libgpib calls).

use std::time::Duration;

use super::descriptor::addr4882;
use super::impls::bus_lines;
use super::*;
use crate::error::ErrorKind;

#[test]
fn iberr_codes_map_to_kinds() {
    use ErrorKind as K;
    let cases = [
        (0, Call::Other, false, K::BackendUnavailable),
        (1, Call::Command, false, K::NotControllerInCharge),
        (2, Call::Write, false, K::NoListener),
        (2, Call::Command, false, K::NoListener),
        (3, Call::Read, false, K::NotAddressed),
        (4, Call::Other, false, K::InvalidArgument),
        (5, Call::Other, false, K::NotControllerInCharge),
        (6, Call::Read, true, K::Timeout),
        (6, Call::Write, true, K::Timeout),
        (6, Call::Command, true, K::CommandTimeout),
        (6, Call::Other, false, K::Io),
        (7, Call::Other, false, K::BackendUnavailable),
        (8, Call::Read, false, K::Io),
        (10, Call::Read, false, K::Io),
        (11, Call::Other, false, K::Unsupported),
        (12, Call::Other, false, K::Io),
        (14, Call::Command, true, K::CommandTimeout),
        (14, Call::Read, false, K::BusConflict),
        (15, Call::Other, false, K::Io),
        (16, Call::Other, false, K::SrqStuck),
        (17, Call::Other, false, K::BackendUnavailable),
        (20, Call::Other, false, K::InvalidArgument),
    ];
    for (code, call, timo, kind) in cases {
        assert_eq!(
            kind_for_iberr(code, call, timo),
            kind,
            "iberr {code} {call:?}"
        );
    }
}

fn failed(call: &'static str, ibsta: i32, iberr: i32, count: i64) -> LibgpibError {
    LibgpibError {
        call,
        ibsta: ibsta | abi::ERR,
        iberr,
        count,
    }
}

#[test]
fn driver_errors_keep_the_original() {
    use std::error::Error as _;
    let e = driver_error(
        "read",
        Call::Read,
        failed("ibrd", abi::TIMO | abi::CMPL, abi::EABO, 7),
        Some(7),
        Timeout::After(Duration::from_secs(3)),
    );
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert_eq!(e.transferred(), Some(7));
    assert!(e.to_string().contains("EABO = 6"), "{e}");
    assert!(e.to_string().contains("timed out after 3s"), "{e}");
    assert!(e.to_string().contains("[ERR TIMO CMPL]"), "{e}");
    let src = e.source().expect("the linux-gpib error is the source");
    assert!(src.to_string().contains("EABO"), "{src}");
    let lg = src.downcast_ref::<LibgpibError>().expect("a LibgpibError");
    assert_eq!((lg.iberr, lg.count), (abi::EABO, 7));

    let e = driver_error(
        "write",
        Call::Write,
        failed("ibwrt", 0, abi::ENOL, 0),
        Some(0),
        Timeout::After(Duration::from_secs(3)),
    );
    assert_eq!(e.kind(), ErrorKind::NoListener);
    assert_eq!(e.transferred(), Some(0));

    let e = driver_error(
        "ibrpp",
        Call::Other,
        failed("ibrpp", 0, abi::ECAP, 0),
        None,
        Timeout::Never,
    );
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert_eq!(e.transferred(), None);

    // A code linux-gpib-rs did not know (ECNF) keeps its name.
    let e = driver_error(
        "ibfind",
        Call::Other,
        failed("ibfind", 0, abi::ECNF, 0),
        None,
        Timeout::Never,
    );
    assert_eq!(e.kind(), ErrorKind::BackendUnavailable);
    assert!(e.to_string().contains("ECNF = 17"), "{e}");
}

#[test]
fn eos_modes_are_explicit_and_never_xeos() {
    assert_eq!(eos_mode(None), 0);
    assert_eq!(eos_mode(Some(Eos::NEWLINE)), 0x0400 | 0x1000 | 0x0a);
    let seven = Eos {
        byte: b',',
        eight_bit: false,
    };
    assert_eq!(eos_mode(Some(seven)), 0x0400 | i32::from(b','));
}

#[test]
fn secondary_addresses_keep_zero() {
    let a = Address::new(5, Some(0)).unwrap();
    assert_eq!(lg_address(a), (5, 0x60));
    assert_eq!(addr4882(a), 5 | (0x60 << 8));
    let a = Address::new(30, Some(30)).unwrap();
    assert_eq!(addr4882(a), 30 | (0x7e << 8));
    let a = Address::new(7, None).unwrap();
    assert_eq!(lg_address(a), (7, 0));
    assert_eq!(addr4882(a), 7);
}

#[test]
fn lines_count_only_where_the_board_can_sense_them() {
    // SRQ and ATN asserted and sensed; EOI asserted but not sensed; NDAC sensed, off.
    let l = abi::BUS_SRQ | 0x20 | abi::BUS_ATN | 0x40 | abi::BUS_EOI | 0x02;
    let lines = bus_lines(l);
    assert!(lines.srq && lines.atn);
    assert!(!lines.eoi && !lines.ndac && !lines.dav && !lines.ren);
}
