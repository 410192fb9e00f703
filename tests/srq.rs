//! Serial poll, SRQ, and finding who asked for service.

use std::time::Duration;

use gpib::{Error, ErrorKind, StatusByte, Timeout};
use gpib_suite::{on_every_backend, Fixture, HP3565, SCPI};

on_every_backend! {
    fn serial_poll_reports_mav(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        assert_eq!(dmm.serial_poll().unwrap(), StatusByte(0));
        dmm.write_str("*IDN?").unwrap();
        let stb = dmm.serial_poll().unwrap();
        assert!(stb.mav() && !stb.rqs(), "{stb}");
        dmm.read_to_end().unwrap();
        assert!(!dmm.serial_poll().unwrap().mav());
    }

    fn srq_on_mav_then_poll_finds_the_requester(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        dmm.write_str("*SRE 16").unwrap();
        assert!(!fx.bus.srq().unwrap());
        dmm.trigger().unwrap();
        assert!(fx.bus.srq().unwrap());
        let candidates = [Fixture::addr(HP3565), Fixture::addr(SCPI)];
        let (who, stb) = fx.bus.wait_for_service(&candidates, Duration::from_secs(1).into()).unwrap();
        assert_eq!(who, Fixture::addr(SCPI));
        assert!(stb.rqs() && stb.mav(), "{stb}");
        // The poll cleared RQS, so SRQ is released though MAV stays.
        assert!(!fx.bus.srq().unwrap());
        assert!(dmm.read_string().unwrap().parse::<f64>().is_ok());
    }

    fn srq_on_operation_complete(fx: Fixture) {
        let dmm = fx.bus.device(SCPI).unwrap();
        dmm.write_str("*CLS;*ESE 1;*SRE 32").unwrap();
        dmm.write_str("*OPC").unwrap();
        assert!(fx.bus.wait_srq(Duration::from_secs(1).into()).unwrap());
        let stb = dmm.serial_poll().unwrap();
        assert!(stb.rqs() && stb.esb(), "{stb}");
        assert_eq!(dmm.query("*ESR?").unwrap(), "1");
    }

    fn wait_srq_times_out_in_virtual_time(fx: Fixture) {
        let t0 = fx.bus.now();
        let e = fx.bus.wait_for_service(&[Fixture::addr(SCPI)], Duration::from_secs(5).into()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert!(fx.bus.now() - t0 >= Duration::from_secs(5));
    }

    // Issue 31 item 3: a zero wait checks once; it is not "no timeout".
    fn a_zero_wait_for_service_checks_once(fx: Fixture) {
        let scpi = [Fixture::addr(SCPI)];
        let now = Timeout::After(Duration::ZERO);
        let e = fx.bus.wait_for_service(&scpi, now).unwrap_err();
        assert!(
            matches!(e, Error::Timeout { timeout, .. } if timeout == now),
            "{e:?}"
        );
        assert!(!e.to_string().contains("forever"), "{e}");
        assert!(!fx.bus.wait_srq(now).unwrap());
        // With SRQ asserted, the one check finds it and the poll its requester.
        let dmm = fx.bus.device(SCPI).unwrap();
        dmm.write_str("*SRE 16").unwrap();
        dmm.trigger().unwrap();
        assert!(fx.bus.wait_srq(now).unwrap());
        let (who, stb) = fx.bus.wait_for_service(&scpi, now).unwrap();
        assert_eq!(who, scpi[0]);
        assert!(stb.rqs(), "{stb}");
        dmm.read_string().unwrap();
    }
}

/// Issue 31 item 3: with no timeout, a wait for SRQ lasts until it comes (here an
/// operation that completes later), and the simulator reports one that nothing will
/// end instead of hanging or jumping its clock to the end of time.
#[test]
fn a_wait_for_service_with_no_timeout_waits_until_srq_or_says_it_never_comes() {
    let fx = Fixture::sim_bench();
    let scpi = [Fixture::addr(SCPI)];
    let t0 = fx.bus.now();
    let e = fx.bus.wait_for_service(&scpi, Timeout::Never).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Timeout {
                timeout: Timeout::Never,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("would wait forever"), "{e}");
    assert!(
        fx.bus.now() - t0 < Duration::from_secs(1),
        "{:?}",
        fx.bus.now()
    );
    let dmm = fx.bus.device(SCPI).unwrap();
    dmm.write_str("*CLS;*ESE 1;*SRE 32").unwrap();
    dmm.write_str("*OPC").unwrap();
    let (who, stb) = fx.bus.wait_for_service(&scpi, Timeout::Never).unwrap();
    assert_eq!(who, scpi[0]);
    assert!(stb.rqs() && stb.esb(), "{stb}");
}

#[test]
fn listeners_found() {
    let fx = Fixture::sim_bench();
    let found: Vec<u8> = fx
        .bus
        .find_listeners()
        .unwrap()
        .iter()
        .map(|a| a.primary.get())
        .collect();
    assert_eq!(found, [HP3565, SCPI]);
}

#[test]
fn parallel_poll_after_configure() {
    use gpib::InterfaceMessage::*;
    let fx = Fixture::sim_bench();
    let dmm = fx.bus.device(SCPI).unwrap();
    dmm.write_str("*SRE 16").unwrap();
    let me = gpib::PrimaryAddress::try_from(0u8).unwrap();
    let pad = gpib::PrimaryAddress::try_from(SCPI).unwrap();
    fx.bus
        .command(&[
            Unlisten,
            Talk(me),
            Listen(pad),
            ParallelPollConfigure,
            ParallelPollEnable {
                sense: true,
                line: 2,
            },
            Unlisten,
        ])
        .unwrap();
    assert_eq!(fx.bus.parallel_poll().unwrap(), 0);
    dmm.trigger().unwrap();
    assert_eq!(fx.bus.parallel_poll().unwrap(), 1 << 2);
    let lines = fx.bus.lines().unwrap();
    assert!(lines.srq);
}
