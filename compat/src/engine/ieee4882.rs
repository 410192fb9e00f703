//! IEEE 488.2 calls (on a board descriptor): `SendList`, `Receive`, `AllSpoll`, ...

use super::*;

// ---------------------------------------------------------------------------------
// IEEE 488.2 calls (on a board descriptor).
// ---------------------------------------------------------------------------------

/// Runs `f` with the board of `d` locked and `d`'s I/O timeout applied, so that the
/// bus operations of one call are never interleaved with another thread's.
fn on_bus<T>(
    lib: &Library,
    d: &mut Desc,
    f: impl FnOnce(&mut BoardBus, &mut Desc) -> Res<T>,
) -> Res<T> {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    io_timeout(&mut bus, d)?;
    f(&mut bus, d)
}

/// `SendSetup`.
pub fn send_setup(lib: &Library, d: &mut Desc, to: &[Address]) -> Res {
    if to.is_empty() {
        return Err(Fail::code(EARG));
    }
    on_bus(lib, d, |bus, _| bus.send_setup(to))?;
    Ok(None)
}

fn data_bytes_on(bus: &mut BoardBus, d: &mut Desc, data: &[u8], eotmode: i32) -> Res {
    // A bad mode is refused before anything changes, END included
    // (lib/ibWrt.c:319-327 returns before send_data).
    if !matches!(eotmode, NULLEND | DABEND | NLEND) {
        return Err(Fail::code(EARG));
    }
    d.end = false;
    let n = match eotmode {
        NULLEND => write_data(bus, d, data, false)?,
        DABEND => write_data(bus, d, data, true)?,
        NLEND => {
            let n = write_data(bus, d, data, false)?;
            let nl = bus.write(b"\n", true).map_err(|e| data_fail(&e, n))?;
            d.end = true;
            n + nl
        }
        _ => return Err(Fail::code(EARG)),
    };
    Ok(Some(n as i64))
}

/// `SendDataBytes`: writes with `eotmode` NULLend, DABend or NLend.
pub fn send_data_bytes(lib: &Library, d: &mut Desc, data: &[u8], eotmode: i32) -> Res {
    on_bus(lib, d, |bus, d| data_bytes_on(bus, d, data, eotmode))
}

/// `SendList` / `Send`.
pub fn send_list(lib: &Library, d: &mut Desc, to: &[Address], data: &[u8], eotmode: i32) -> Res {
    if to.is_empty() {
        return Err(Fail::code(EARG));
    }
    // linux-gpib addresses the listeners first and checks the EOT mode after
    // (lib/ibWrt.c:402-405, then :319-327): a bad mode is EARG with the bus addressed.
    on_bus(lib, d, |bus, d| {
        bus.send_setup(to)?;
        data_bytes_on(bus, d, data, eotmode)
    })
}

/// `ReceiveSetup`.
pub fn receive_setup(lib: &Library, d: &mut Desc, from: Address) -> Res {
    on_bus(lib, d, |bus, _| bus.receive_setup(from))?;
    Ok(None)
}

fn termination_eos(termination: i32) -> Res<Option<Eos>> {
    match termination {
        STOPEND => Ok(None),
        0..=0xff => Ok(Some(Eos {
            byte: termination as u8,
            eight_bit: true,
        })),
        _ => Err(Fail::code(EARG)),
    }
}

/// `RcvRespMsg`: reads until END, or the byte `termination` (0..=255; STOPend: END only).
pub fn rcv_resp_msg(lib: &Library, d: &mut Desc, buf: &mut [u8], termination: i32) -> Res {
    let eos = termination_eos(termination)?;
    on_bus(lib, d, |bus, d| {
        let n = read_data(bus, d, buf, eos)?;
        Ok(Some(n as i64))
    })
}

/// `Receive`.
pub fn receive(lib: &Library, d: &mut Desc, from: Address, buf: &mut [u8], term: i32) -> Res {
    let eos = termination_eos(term)?;
    on_bus(lib, d, |bus, d| {
        bus.receive_setup(from)?;
        let n = read_data(bus, d, buf, eos)?;
        Ok(Some(n as i64))
    })
}

/// Universal or addressed commands on a board: `list` empty sends `universal` alone;
/// otherwise MTA, UNL, the listeners, then `addressed`.
fn list_command_on(
    bus: &mut BoardBus,
    list: &[Address],
    universal: &[u8],
    addressed: &[u8],
) -> Res<()> {
    if list.is_empty() {
        bus.command(universal)
    } else {
        bus.send_setup(list)?;
        bus.command(addressed)
    }
}

fn list_command(
    lib: &Library,
    d: &mut Desc,
    list: &[Address],
    universal: &[u8],
    addressed: &[u8],
) -> Res {
    on_bus(lib, d, |bus, _| {
        list_command_on(bus, list, universal, addressed)
    })?;
    Ok(None)
}

fn clear_on(bus: &mut BoardBus, list: &[Address]) -> Res<()> {
    list_command_on(bus, list, &[codes::DCL], &[codes::SDC])?;
    if list.is_empty() {
        bus.spoll.clear();
    } else {
        for a in list {
            bus.spoll.remove(a);
        }
    }
    Ok(())
}

/// `DevClearList` (`DevClear`): SDC to the listed devices, DCL to all for an empty list.
pub fn dev_clear_list(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    on_bus(lib, d, |bus, _| clear_on(bus, list))?;
    Ok(None)
}

/// `TriggerList` (`Trigger`): GET to the listed devices, or to whoever listens.
pub fn trigger_list(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    // linux-gpib sends its send setup before GET even for an empty list
    // (lib/ibTrg.c:40-41, create_send_setup: MTA of the board, UNL, the listeners):
    // the board is left talker.
    let mta = 0x40 | lib.board(d.board).pad;
    list_command(lib, d, list, &[mta, 0x3f, codes::GET], &[codes::GET])
}

/// `EnableLocal`: GTL to the listed devices; REN off for an empty list.
pub fn enable_local(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    if list.is_empty() {
        return sre(lib, d, false);
    }
    list_command(lib, d, list, &[], &[codes::GTL])
}

fn remote_on(bus: &mut BoardBus, list: &[Address]) -> Res<()> {
    bus.remote_enable(true)?;
    if !list.is_empty() {
        bus.send_setup(list)?;
    }
    Ok(())
}

/// `EnableRemote`: REN on, then the listed devices addressed to listen (remote).
pub fn enable_remote(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    on_bus(lib, d, |bus, _| remote_on(bus, list))?;
    Ok(None)
}

/// `SetRWLS`: the listed devices in remote with lockout.
pub fn set_rwls(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    on_bus(lib, d, |bus, _| {
        remote_on(bus, list)?;
        bus.command(&[codes::LLO])
    })?;
    Ok(None)
}

/// `SendLLO`.
pub fn send_llo(lib: &Library, d: &mut Desc) -> Res {
    // linux-gpib enables remote (REN) first (lib/local_lockout.c, local_lockout:
    // InternalEnableRemote, then LLO).
    on_bus(lib, d, |bus, _| {
        bus.remote_enable(true)?;
        bus.command(&[codes::LLO])
    })?;
    Ok(None)
}

/// `PPollConfig`: the device answers parallel polls on DIO `line` (1..=8) with `sense`.
pub fn ppoll_config(lib: &Library, d: &mut Desc, a: Address, line: i32, sense: i32) -> Res {
    if !(1..=8).contains(&line) {
        return Err(Fail::code(EARG));
    }
    let ppe = codes::PPE_BASE | if sense != 0 { 0x08 } else { 0 } | (line - 1) as u8;
    list_command(lib, d, &[a], &[], &[codes::PPC, ppe])
}

/// `PPollUnconfig`: PPD to the listed devices, PPU to all for an empty list.
pub fn ppoll_unconfig(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    list_command(lib, d, list, &[codes::PPU], &[codes::PPC, codes::PPD])
}

/// `ReadStatusByte`.
pub fn read_status_byte(lib: &Library, d: &mut Desc, a: Address) -> Res<u8> {
    status_byte(lib, d, a, super::code_timeout(d.s.spoll_tmo))
}

/// The status byte of `a`: one its automatic polls queued, else a serial poll with
/// `timeout` (the kernel's IBRSP, sys/osfuncs.c serial_poll_ioctl).
fn status_byte(lib: &Library, d: &Desc, a: Address, timeout: Timeout) -> Res<u8> {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    if let Some(b) = bus.spoll.get_mut(&a).and_then(VecDeque::pop_front) {
        return Ok(b);
    }
    bus.use_timeout(timeout)?;
    bus.serial_poll(a)
}

/// `AllSPoll`: the status bytes of the listed devices; on error ibcnt is the index.
pub fn all_spoll(lib: &Library, d: &mut Desc, list: &[Address]) -> Res<Vec<u8>> {
    let mut out = Vec::with_capacity(list.len());
    for (i, &a) in list.iter().enumerate() {
        out.push(read_status_byte(lib, d, a).map_err(|f| Fail {
            count: Some(i as i64),
            ..f
        })?);
    }
    Ok(out)
}

/// `FindRQS`: polls the listed devices in order until one requests service; returns its
/// index and status byte. None does: ETAB.
pub fn find_rqs(lib: &Library, d: &mut Desc, list: &[Address]) -> Res<(usize, u8)> {
    for (i, &a) in list.iter().enumerate() {
        // FindRQS polls within the board's I/O timeout, not the serial poll timeout
        // AllSpoll and ReadStatusByte use (lib/ibRsp.c:184-185).
        let stb = status_byte(lib, d, a, d.s.timeout()).map_err(|f| Fail {
            count: Some(i as i64),
            ..f
        })?;
        if stb & 0x40 != 0 {
            return Ok((i, stb));
        }
    }
    Err(Fail::code(ETAB).counted(list.len()))
}

/// `TestSRQ`.
pub fn test_srq(lib: &Library, d: &Desc) -> bool {
    lib.board(d.board).lock().srq()
}

/// `WaitSRQ`: waits for SRQ for the board's timeout (wall time); true when it came.
pub fn wait_srq(lib: &Library, slot: &Mutex<Desc>) -> Res<bool> {
    wait(lib, slot, SRQI | TIMO)?;
    // linux-gpib's WaitSRQ ends with the board's status read afresh
    // (lib/ibWait.c:220, general_exit_library): a wait that timed out leaves no TIMO.
    let mut d = lock_desc(slot);
    d.timed_out = false;
    Ok(test_srq(lib, &d))
}

/// `ResetSys`: REN, IFC, DCL, then `*RST` to the listed devices.
pub fn reset_sys(lib: &Library, d: &mut Desc, list: &[Address]) -> Res {
    on_bus(lib, d, |bus, d| {
        bus.remote_enable(true)?;
        bus.interface_clear()?;
        clear_on(bus, &[])?;
        // linux-gpib sends `*RST` with InternalSendList (lib/ibBoard.c:160), which
        // refuses an empty list (EARG, after REN, IFC and DCL) and reports the bytes
        // sent in ibcnt (lib/ibWrt.c:335).
        if list.is_empty() {
            return Err(Fail::code(EARG));
        }
        bus.send_setup(list)?;
        data_bytes_on(bus, d, b"*RST", NLEND)
    })
}

/// `TestSys`: `*TST?` to each listed device; the answers, and how many are not 0.
pub fn test_sys(lib: &Library, d: &mut Desc, list: &[Address]) -> Res<(Vec<i16>, usize)> {
    let mut results = Vec::with_capacity(list.len());
    for (i, &a) in list.iter().enumerate() {
        let v = on_bus(lib, d, |bus, d| {
            bus.send_setup(&[a])?;
            data_bytes_on(bus, d, b"*TST?", NLEND)?;
            bus.receive_setup(a)?;
            let mut buf = [0u8; 64];
            let n = read_data(bus, d, &mut buf, None)?;
            let text = String::from_utf8_lossy(&buf[..n]);
            Ok(text.trim().parse::<i16>().unwrap_or(-1))
        })
        .map_err(|f| Fail {
            count: Some(i as i64),
            ..f
        })?;
        results.push(v);
    }
    let failing = results.iter().filter(|&&v| v != 0).count();
    Ok((results, failing))
}
