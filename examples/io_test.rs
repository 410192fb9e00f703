//! The `io_test.c` of the 1988 HP 9000/350 measurement (Jeff Harrell, comp.sys.hp, March
//! 1988; HP-UX 6.01), ported step by step to typed calls. The story: docs/hp9000-350-1988.md.
//!
//! `cargo run --release --example io_test -- 400000` runs it on the simulated
//! HP 9000/350 with /disc mounted (test #1); add `--unmount` for test #2. The output is
//! the original program's, line for line.
//!
//! `cargo run --release --example io_test -- RESOURCE 400000` runs it on the HP3565 (or
//! an instrument that speaks its `NEW`, `RBLD` and `WBLD`) that RESOURCE names, as the
//! other examples take it: `GPIB0::11::INSTR` (linux-gpib),
//! `TCPIP0::10.0.0.5::gpib0,11::INSTR` (VXI-11), `PRLGX-TCPIP::10.0.0.6::1234::11::INSTR`
//! (Prologix). The times are then wall-clock time, not the simulator's virtual time, and
//! `--unmount` is not available (only the simulated machine has a /disc to unmount).
//! On a network adapter, which addresses the device itself, the explicit `listencmd`
//! before the timed read is not sent.
//!
//! | C (HP-UX DIL)                                   | here                                   |
//! |-------------------------------------------------|----------------------------------------|
//! | `open("/dev/hpib7", 2)`                          | `rm.open("GPIB7::11::INSTR")` (the simulated `hpib7` as `GPIB7`) |
//! | `hpib_bus_status(iodes, 7)` (my address)         | `tx.board_address()`                   |
//! | `talkcmd = {63, MTA, 32+11}` + `hpib_send_cmnd`  | `tx.address_to_device(hp)`: UNL, MTA, MLA11 |
//! | `listencmd = {63, 64+11, MLA}` + `hpib_send_cmnd`| `tx.address_from_device(hp)`: UNL, MTA11, MLA |
//! | `write(iodes, "ABRT;DISA;\n", 11)`               | `hp.write(b"ABRT;DISA;\n")`            |
//! | `read(iodes, response, 256)`                     | `hp.read(&mut response)` (64 bytes, see below) |
//! | `for(idle=0;idle<21000;idle++);`                 | `bus.delay(22 ms)` on the bus's clock  |
//! | `gettimeofday`                                   | `bus.now()`: the backend's clock       |

use std::time::Duration;

use gpib::{sim, Bus, InterfaceMessage, ResourceManager};

fn run() -> Result<(), Box<dyn std::error::Error>> {
    // usage: io_test [RESOURCE] [transfer_size] [--unmount]; a number first is the
    // size (the 1988 program's own usage: io_test 400000).
    let args: Vec<String> = std::env::args().skip(1).collect();
    let unmount = args.iter().any(|a| a == "--unmount");
    let mut positional = args.iter().filter(|a| !a.starts_with("--"));
    let (resource, size) = match (positional.next(), positional.next()) {
        (Some(n), None) if n.bytes().all(|b| b.is_ascii_digit()) => (None, Some(n)),
        (r, n) => (r, n),
    };
    let size: usize = size.map_or(Ok(400_000), |s| s.parse())?;
    if size < 2 {
        return Err("transfer_size must be at least 2 bytes (one HP3565 word)".into());
    }

    // The machine: unless a resource names another, an HP 9000/350 with the HP3565 at 11
    // on the internal HP-IB (select code 7, GPIB7 here) and, unless --unmount, the
    // scratch disc /disc mounted on an external HP-IB.
    let host; // the simulated machine, alive while its board is used
    let (mut rm, resource) = match resource {
        Some(r) => {
            if unmount {
                eprintln!("io_test: --unmount is not available on {r}: only the simulated HP 9000/350 has a /disc to unmount");
            }
            (ResourceManager::from_env()?, r.clone())
        }
        None => {
            host = sim::builtin("hp9000-350")?;
            if unmount {
                host.unmount("/disc")?;
            }
            let mut rm = ResourceManager::new();
            rm.attach(7, Bus::new(host.board_named("hpib7")?));
            (rm, "GPIB7::11::INSTR".to_string())
        }
    };
    // iodes = open("/dev/hpib7", 2);
    let hp = rm.open(&resource)?;
    let bus = hp.bus().clone();

    // MTA = hpib_bus_status(iodes, 7) + 64; MLA = ... + 32;
    // talkcmd = {63, MTA, 32 + 11}; listencmd = {63, 64 + 11, MLA};
    // With the typed layer these are [Unlisten, Talk(board), Listen(dev)] and
    // [Unlisten, Talk(dev), Listen(board)], built by address_to/from_device.
    let me = bus.transaction(|tx| Ok(tx.board_address()))?;
    log::info!(
        "controller at {me}: talkcmd = {:?}",
        [
            InterfaceMessage::Unlisten.byte(),
            InterfaceMessage::Talk(me).byte(),
            InterfaceMessage::Listen(hp.address().primary).byte()
        ]
    );

    // Set up the instrument.
    // hpib_send_cmnd(iodes, talkcmd, 3); write(...); write(...);
    hp.write(b"ABRT;DISA;\n")?;
    hp.write(format!("NEW {};NEW?\n", size / 2).as_bytes())?;
    // hpib_send_cmnd(iodes, listencmd, 3); read(iodes, response, 256);
    // The original reads up to 256 bytes into `char response[64]`: a buffer overrun if
    // the instrument ever answered more than 64 bytes. Here the read is bounded by the
    // slice it is given; a longer answer stays queued (ReadEnd::BufferFull), never
    // written past the end.
    let mut response = [0u8; 64];
    let got = hp.read(&mut response)?;
    // sscanf(response, "%d", &id);
    let id: usize = std::str::from_utf8(&response[..got.count])?
        .trim()
        .parse()?;

    // First test the read.
    // sprintf(cmnd_string, "RBLD %d,%d\n", id, (size/2)-1); hpib_send_cmnd(talkcmd); write(...)
    hp.write(format!("RBLD {},{}\n", id, size / 2 - 1).as_bytes())?;
    // hpib_send_cmnd(iodes, listencmd, 3); (a network adapter addresses the device
    // itself, with the read)
    if !bus.device_level() {
        bus.transaction(|tx| tx.address_from_device(hp.address()))?;
    }
    // for(idle=0;idle<21000;idle++);  "about .022 seconds for Paragon to do its thing"
    bus.delay(Duration::from_millis(22));
    // Static in the original (int data[100000]); a Vec of the size asked for here.
    let mut data = vec![0u8; size];
    let t1 = bus.now();
    let bytes = hp.read(&mut data)?.count; // bytes = read(iodes, data, size);
    let t2 = bus.now();
    let sys_time = (t2 - t1).as_secs_f64();
    println!(
        "read time: {sys_time:.6}\ntransfer rate: {:.6}",
        bytes as f64 / sys_time
    );
    println!("transfer size: {bytes}\n");

    // Now test the write.
    // sprintf(cmnd_string, "WBLD %d,%d,#I", id, size/2); hpib_send_cmnd(talkcmd); write(...)
    // No newline and no EOI: the binary data that follows belongs to the same message.
    hp.write_partial(format!("WBLD {},{},#I", id, size / 2).as_bytes())?;
    bus.delay(Duration::from_millis(22));
    let t1 = bus.now();
    hp.write(&data)?; // bytes = write(iodes, data, size); EOI on the last byte ends #I
    let t2 = bus.now();
    let sys_time = (t2 - t1).as_secs_f64();
    println!(
        "write time: {sys_time:.6}\ntransfer rate: {:.6}",
        size as f64 / sys_time
    );
    println!("transfer size: {size}");
    // close(iodes): the Bus is dropped here.
    Ok(())
}

fn main() -> std::process::ExitCode {
    env_logger::init();
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("io_test: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
