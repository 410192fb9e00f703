//! The 1988 HP 9000/350 io_test measurement's four figures on the built-in `hp9000-350`
//! configuration (docs/hp9000-350-1988.md).

use std::time::Duration;

use approx::assert_relative_eq;
use gpib::sim;
use gpib::Bus;

/// The 1988 io_test program, step by step: returns (read seconds, write seconds, host CPU of the read).
fn io_test(unmount_disc: bool, size: usize) -> (f64, f64, f64) {
    let host = sim::builtin("hp9000-350").unwrap();
    if unmount_disc {
        host.unmount("/disc").unwrap();
    }
    let bus = Bus::new(host.board_named("hpib7").unwrap());
    let hp = bus.device(11).unwrap();
    hp.write_str("ABRT;DISA;").unwrap();
    let id: usize = hp
        .query(&format!("NEW {};NEW?", size / 2))
        .unwrap()
        .parse()
        .unwrap();

    hp.write_str(&format!("RBLD {id},{}", size / 2 - 1))
        .unwrap();
    bus.transaction(|tx| tx.address_from_device(hp.address()))
        .unwrap();
    bus.delay(Duration::from_millis(22));
    let mut data = vec![0u8; size];
    let (t0, c0) = (bus.now(), bus.modelled_host_cpu().unwrap());
    let st = hp.read(&mut data).unwrap();
    let (t1, c1) = (bus.now(), bus.modelled_host_cpu().unwrap());
    assert_eq!(st.count, size);

    hp.write_partial(format!("WBLD {id},{},#I", size / 2).as_bytes())
        .unwrap();
    bus.delay(Duration::from_millis(22));
    let t2 = bus.now();
    hp.write(&data).unwrap();
    let t3 = bus.now();
    (
        (t1 - t0).as_secs_f64(),
        (t3 - t2).as_secs_f64(),
        (c1 - c0).as_secs_f64(),
    )
}

#[test]
fn disc_mounted_400000_bytes() {
    let (read, write, cpu) = io_test(false, 400_000);
    assert_relative_eq!(read, 53.444, max_relative = 0.0005);
    assert_relative_eq!(write, 47.408, max_relative = 0.0005);
    assert_relative_eq!(400_000.0 / read, 7_484.0, max_relative = 0.0005);
    assert_relative_eq!(400_000.0 / write, 8_437.0, max_relative = 0.0005);
    // Programmed I/O: the CPU is busy for the whole transfer.
    assert_relative_eq!(cpu, read, max_relative = 1e-9);
}

#[test]
fn disc_unmounted_400000_bytes() {
    let (read, write, _) = io_test(true, 400_000);
    assert_relative_eq!(read, 0.915, max_relative = 0.0005);
    assert_relative_eq!(write, 1.034, max_relative = 0.0005);
    assert_relative_eq!(400_000.0 / read, 437_166.0, max_relative = 0.0005);
    assert_relative_eq!(400_000.0 / write, 386_940.0, max_relative = 0.0005);
}

#[test]
fn slowdown_ratios_match_the_1988_measurement() {
    let (rm, wm, _) = io_test(false, 400_000);
    let (ru, wu, _) = io_test(true, 400_000);
    assert_relative_eq!(rm / ru, 58.4, epsilon = 0.05);
    assert_relative_eq!(wm / wu, 45.9, epsilon = 0.05);
}

#[test]
fn other_sizes_follow_the_mechanism() {
    // Time is linear in size: call overhead plus a fixed time per byte.
    let (r4k, _, _) = io_test(true, 4096);
    let (r400k, _, _) = io_test(true, 400_000);
    let per_byte = (r400k - r4k) / (400_000.0 - 4096.0);
    assert_relative_eq!(per_byte, 2.286e-6, max_relative = 1e-6);
    assert_relative_eq!(r4k - 4096.0 * per_byte, 300e-6, max_relative = 1e-6);
}

#[test]
fn dma_interface_is_not_slowed_by_polling() {
    let host = sim::builtin("hp9000-350").unwrap();
    let bus = Bus::new(host.board_named("disc").unwrap());
    let t = |bus: &Bus| {
        let t0 = bus.now();
        bus.device(0).unwrap().write(&[0u8; 100_000]).unwrap();
        bus.now() - t0
    };
    t(&bus); // addressing happens once
    let mounted = t(&bus);
    host.unmount("/disc").unwrap();
    assert_eq!(t(&bus), mounted);
    assert!(host
        .mount("/nowhere")
        .unwrap_err()
        .to_string()
        .contains("/users"));
}
