//! Data and commands on a descriptor: `ibwrt`, `ibrd`, `ibcmd`, the file calls, clear,
//! trigger, serial and parallel poll, `ibwait`.

use super::*;

// ---------------------------------------------------------------------------------
// Data and commands.
// ---------------------------------------------------------------------------------

pub(super) fn io_timeout(bus: &mut BoardBus, d: &Desc) -> Res<()> {
    bus.use_timeout(d.s.timeout())
}

fn unaddress(bus: &mut BoardBus, d: &Desc) -> Res<()> {
    if !d.is_board && d.s.unaddr {
        bus.command(gpib_sim::addressing::unaddress().as_bytes())?;
    }
    Ok(())
}

/// Writes `data` on the bus with `d`'s EOT/EOS settings (board already addressed).
pub(super) fn write_data(
    bus: &mut BoardBus,
    d: &mut Desc,
    data: &[u8],
    eoi_last: bool,
) -> Res<usize> {
    // linux-gpib's kernel ibwrt puts a controller in standby (ATN off) before it moves
    // a byte, whether the transfer then succeeds or not (sys/ibwrite.c:43-47); none
    // for no bytes (sys/ibwrite.c:37-41).
    if data.is_empty() {
        return Ok(0);
    }
    bus.standby_for_data()?;
    let mut sent = 0usize;
    let mut rest = data;
    let mode = d.s.eos_mode();
    if mode.xeos {
        // XEOS: EOI goes with every EOS byte sent.
        let eos = Eos {
            byte: mode.byte,
            eight_bit: mode.bin,
        };
        while let Some(i) = eos.find(rest) {
            let n = bus
                .write(&rest[..=i], true)
                .map_err(|e| data_fail(&e, sent))?;
            sent += n;
            rest = &rest[i + 1..];
            d.end = true;
        }
        if rest.is_empty() && !data.is_empty() {
            return Ok(sent);
        }
    }
    let n = bus.write(rest, eoi_last).map_err(|e| data_fail(&e, sent))?;
    d.end = eoi_last;
    Ok(sent + n)
}

/// `ibwrt` (and `ibwrta`): device descriptors address first.
pub fn wrt(lib: &Library, d: &mut Desc, data: &[u8]) -> Res {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    io_timeout(&mut bus, d)?;
    d.end = false;
    if !d.is_board {
        bus.send_setup(&[d.address()])?;
    }
    let eot = d.s.eot();
    let r = write_data(&mut bus, d, data, eot);
    finish_transfer(&mut bus, d, r)
}

/// Unaddresses after a device transfer (IbcUnAddr). linux-gpib's result is then
/// `unlisten_untalk`'s, which replaces the transfer's (lib/ibRd.c:126-131,
/// lib/ibWrt.c:156-160): a transfer that failed is reported as done, with the bytes it
/// moved and TIMO if it timed out, and no ERR.
fn finish_transfer(bus: &mut BoardBus, d: &mut Desc, r: Res<usize>) -> Res {
    match r {
        Ok(n) => {
            unaddress(bus, d)?;
            Ok(Some(n as i64))
        }
        Err(f) if !d.is_board && d.s.unaddr => {
            unaddress(bus, d)?;
            d.timed_out = f.timo;
            Ok(Some(f.count.unwrap_or(0)))
        }
        Err(f) => Err(f),
    }
}

pub(super) fn read_data(
    bus: &mut BoardBus,
    d: &mut Desc,
    buf: &mut [u8],
    eos: Option<Eos>,
) -> Res<usize> {
    d.end = false;
    // Every read of linux-gpib's sets the board's EOS first (config_read_eos).
    bus.read_eos = eos;
    // Nothing asked for: linux-gpib's kernel moves no byte and waits for none
    // (sys/osfuncs.c, read_ioctl: its loop runs while bytes remain), so the read
    // succeeds at once, addressed or not.
    if buf.is_empty() {
        return Ok(0);
    }
    // As for a write: standby first (sys/ibread.c:49-53).
    bus.standby_for_data()?;
    match bus.read(buf, eos) {
        Ok(st) => {
            d.end = match st.end {
                ReadEnd::Eoi => true,
                // linux-gpib sets END on EOS too (IbcEndBitIsNormal cannot be 0).
                ReadEnd::Eos => true,
                _ => false,
            };
            Ok(st.count)
        }
        Err(e) => Err(data_fail(&e, 0)),
    }
}

/// `ibrd` (and `ibrda`): one read into `buf`, ending on END, EOS (with REOS) or a
/// full buffer.
pub fn rd(lib: &Library, d: &mut Desc, buf: &mut [u8]) -> Res {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    io_timeout(&mut bus, d)?;
    d.end = false;
    if !d.is_board {
        bus.receive_setup(d.address())?;
    }
    let eos = bus.descriptor_eos(&d.s);
    let r = read_data(&mut bus, d, buf, eos);
    finish_transfer(&mut bus, d, r)
}

/// `ibcmd` and `SendCmds`: linux-gpib's `ibcmd` never sets ibcnt (lib/ibCmd.c:
/// `ibcmd` has no `setIbcnt`; `SendCmds` is `ibcmd`), so neither the bytes sent nor, on
/// a failure, the bytes that went before it are reported (errno still is, after EDVR).
pub fn cmd_no_count(lib: &Library, d: &mut Desc, bytes: &[u8]) -> Res {
    match cmd(lib, d, bytes) {
        Ok(_) => Ok(None),
        Err(f) if f.iberr == EDVR => Err(f),
        Err(f) => Err(Fail { count: None, ..f }),
    }
}

/// `ibcmda` (the bytes sent are its asynchronous count).
pub fn cmd(lib: &Library, d: &mut Desc, bytes: &[u8]) -> Res {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    io_timeout(&mut bus, d)?;
    // linux-gpib's kernel calls its ibcmd at least once, and it takes control first
    // (sys/osfuncs.c:652 do-while, sys/ibcmd.c:95 ibcac): no bytes still assert ATN.
    if bytes.is_empty() {
        bus.take_control()?;
    }
    bus.command(bytes)?;
    Ok(Some(bytes.len() as i64))
}

/// `ibrdf`: reads until END into the file at `path`.
pub fn rdf(lib: &Library, d: &mut Desc, path: &str) -> Res {
    let efso = |e: std::io::Error| Fail {
        iberr: EFSO,
        count: Some(e.raw_os_error().map_or(EIO, i64::from)),
        timo: false,
    };
    let mut file = std::fs::File::create(path).map_err(efso)?;
    let mut total = 0usize;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match rd(lib, d, &mut buf) {
            Ok(n) => n.unwrap_or(0) as usize,
            Err(f) => {
                let got = f.count.unwrap_or(0).max(0) as usize;
                file.write_all(&buf[..got.min(buf.len())]).map_err(efso)?;
                return Err(Fail {
                    count: Some((total + got) as i64),
                    ..f
                });
            }
        };
        file.write_all(&buf[..n]).map_err(efso)?;
        total += n;
        if d.end || n < buf.len() {
            return Ok(Some(total as i64));
        }
    }
}

/// The largest file `ibwrtf` sends (64 MiB): it is read whole before the write.
pub const MAX_WRTF_BYTES: u64 = 64 << 20;

/// `ibwrtf`: writes the regular file at `path` (at most [`MAX_WRTF_BYTES`]). It is
/// opened without blocking and checked on its handle: a device, FIFO or folder fails
/// with EFSO (errno EINVAL) unread, a bigger file with EFSO (EFBIG).
pub fn wrtf(lib: &Library, d: &mut Desc, path: &str) -> Res {
    use std::os::unix::fs::OpenOptionsExt as _;
    let efso = |errno: i64| Fail {
        iberr: EFSO,
        count: Some(errno),
        timo: false,
    };
    let io = |e: std::io::Error| efso(e.raw_os_error().map_or(EIO, i64::from));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(efso(EINVAL));
    }
    let too_big = efso(i64::from(libc::EFBIG));
    if meta.len() > MAX_WRTF_BYTES {
        return Err(too_big);
    }
    let mut data = Vec::new();
    file.take(MAX_WRTF_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(io)?;
    if data.len() as u64 > MAX_WRTF_BYTES {
        return Err(too_big);
    }
    wrt(lib, d, &data)
}

/// Sends one addressed command (SDC, GET, GTL) to the device of `d`.
fn addressed(lib: &Library, d: &mut Desc, m: u8) -> Res {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    io_timeout(&mut bus, d)?;
    bus.send_setup(&[d.address()])?;
    bus.command(&[m])?;
    // No UNL UNT after it, whatever IbcUnAddr says: linux-gpib sends them after
    // reads and writes only.
    Ok(None)
}

/// `ibclr`: SDC to the device.
pub fn clr(lib: &Library, d: &mut Desc) -> Res {
    let r = addressed(lib, d, codes::SDC);
    if r.is_ok() {
        lib.board(d.board).lock().spoll.remove(&d.address());
    }
    r
}

/// `ibtrg`: GET to the device.
pub fn trg(lib: &Library, d: &mut Desc) -> Res {
    addressed(lib, d, codes::GET)
}

/// `ibloc`: GTL to a device; a board (never in remote as a device here) has nothing to do.
pub fn loc(lib: &Library, d: &mut Desc) -> Res {
    if d.is_board {
        return Ok(None);
    }
    addressed(lib, d, codes::GTL)
}

/// `ibppc`: configures a device's parallel poll response (PPE byte 0x60..=0x6F, or
/// PPD 0x70..=0x7F; 0 means PPD), or a board's local configuration.
pub fn ppc(lib: &Library, d: &mut Desc, v: i32) -> Res {
    let byte = match v {
        0 => codes::PPD,
        0x60..=0x7F => v as u8,
        _ => return Err(Fail::code(EARG)),
    };
    if d.is_board {
        // A board configures its own response only in local parallel poll configure
        // mode (`IbcPP2`), which its kernel starts with off (lib/ibppc.c board_ppc:
        // ECAP when query_local_ppoll_mode is 0; sys/ibinit.c: local_ppoll_mode = 0).
        if !d.s.pp2 {
            return Err(Fail::code(ECAP));
        }
        d.s.ppc = v;
        return Ok(None);
    }
    let board = lib.board(d.board);
    let mut bus = board.lock();
    io_timeout(&mut bus, d)?;
    bus.send_setup(&[d.address()])?;
    bus.command(&[codes::PPC, byte])?;
    Ok(None)
}

/// `ibrpp` / `PPoll`: a parallel poll.
pub fn rpp(lib: &Library, d: &mut Desc) -> Res<u8> {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    bus.use_timeout(code_timeout(d.s.ppoll_tmo))?;
    bus.parallel_poll()
}

/// `ibrsp`: the device's status byte (a byte taken by automatic polling first).
pub fn rsp(lib: &Library, d: &mut Desc) -> Res<u8> {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    let a = d.address();
    if let Some(b) = bus.spoll.get_mut(&a).and_then(VecDeque::pop_front) {
        return Ok(b);
    }
    bus.use_timeout(code_timeout(d.s.spoll_tmo))?;
    bus.serial_poll(a)
}

/// `ibspb`: status bytes queued for the device.
pub fn spb(lib: &Library, d: &Desc) -> i16 {
    let bus = lib.board(d.board).lock();
    bus.spoll.get(&d.address()).map_or(0, |q| q.len() as i16)
}

/// `ibsic` / `SendIFC`.
pub fn sic(lib: &Library, d: &mut Desc) -> Res {
    lib.board(d.board).lock().interface_clear()?;
    Ok(None)
}

/// `ibcac`: the board becomes active controller, asserting ATN.
pub fn cac(lib: &Library, d: &mut Desc) -> Res {
    lib.board(d.board).lock().take_control()?;
    Ok(None)
}

/// `ibgts`: the board goes to standby, releasing ATN.
pub fn gts(lib: &Library, d: &mut Desc) -> Res {
    lib.board(d.board).lock().go_to_standby()?;
    Ok(None)
}

/// `ibsre`: REN on or off.
pub fn sre(lib: &Library, d: &mut Desc, on: bool) -> Res {
    lib.board(d.board).lock().remote_enable(on)?;
    Ok(None)
}

/// `ibln`: whether a listener answers at `pad`/`sad` (NO_SAD: the primary only,
/// ALL_SAD: any secondary of it), with linux-gpib's bus traffic (lib/ibFindLstn.c,
/// ibln): MTA board, then [`listener_found`], then UNL UNT.
pub fn ln(lib: &Library, d: &mut Desc, pad: i32, sad: i32) -> Res<bool> {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    // The board is addressed as talker before the address is looked at
    // (address_board_as_talker, then listenerFound's addressListIsValid): a bad address
    // is EARG with the board talker and ATN on.
    bus.command(&[0x40 | board.pad])?;
    let probe = ln_probe(pad, sad)?;
    let found = listener_found(&mut bus, &probe)?;
    // linux-gpib's ibln ends with UNL UNT (unlisten_untalk): ATN asserted, nobody
    // addressed, the board included.
    unlisten_untalk(&mut bus)?;
    Ok(found)
}

/// The listen addresses `ibln` probes: `pad` alone, with its secondary, or (ALL_SAD)
/// with each of the 31 secondaries (secondaryListenerFound).
fn ln_probe(pad: i32, sad: i32) -> Res<Vec<u8>> {
    let mla = 0x20 | check_pad(pad)?;
    Ok(match sad {
        ALL_SAD => (0..=30u8).flat_map(|s| [mla, 0x60 | s]).collect(),
        s => match check_sad(s)? {
            Some(s) => vec![mla, 0x60 | s],
            None => vec![mla],
        },
    })
}

/// linux-gpib's listenerFound (lib/ibFindLstn.c): UNL and the listen addresses in one
/// command, standby, then NDAC: someone listens when it is asserted. (Its 1.5 ms sleep
/// before the lines is the program's own time, not the bus's.)
fn listener_found(bus: &mut BoardBus, listen: &[u8]) -> Res<bool> {
    let mut cmd = Vec::with_capacity(listen.len() + 1);
    cmd.push(codes::UNL);
    cmd.extend_from_slice(listen);
    bus.command(&cmd)?;
    bus.go_to_standby()?;
    Ok(bus.lines()?.ndac)
}

/// `ibln` on a device descriptor: linux-gpib addresses the board as talker and `pad`
/// as listener and goes to standby, then fails with EARG when it reads the lines,
/// which only a board descriptor may (lib/ibFindLstn.c `listenerFound`,
/// lib/ibLines.c:25-28): the bus is left so.
pub fn ln_on_device(lib: &Library, d: &mut Desc, pad: i32, sad: i32) -> Res<bool> {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    bus.command(&[0x40 | board.pad])?;
    let mut cmd = vec![codes::UNL];
    cmd.extend(ln_probe(pad, sad)?);
    bus.command(&cmd)?;
    bus.go_to_standby()?;
    Err(Fail::code(EARG))
}

/// `FindLstn` as linux-gpib runs it (lib/ibFindLstn.c): MTA board, then for each
/// primary address a [`listener_found`] probe, and when none answers, one probe of all
/// its secondaries followed by one probe of each (whose answers linux-gpib never keeps:
/// its test is `retval > 1`); UNL UNT at the end. The listeners found go into `found`,
/// at most `max`: one more stops the search where it is (no UNL UNT) and is ETAB with
/// ibcnt `max`.
pub fn find_lstn(
    lib: &Library,
    d: &mut Desc,
    pads: &[u16],
    max: usize,
    found: &mut Vec<u16>,
) -> Res<()> {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    io_timeout(&mut bus, d)?;
    bus.command(&[0x40 | board.pad])?;
    for (i, &a) in pads.iter().enumerate() {
        let pad = (a & 0xff) as i32;
        if a >> 8 != 0 || pad > 30 {
            return Err(Fail::code(EARG).counted(i));
        }
        if listener_found(&mut bus, &ln_probe(pad, NO_SAD)?)? {
            if found.len() >= max {
                return Err(Fail {
                    iberr: ETAB,
                    count: Some(max as i64),
                    timo: false,
                });
            }
            found.push(a & 0xff);
        } else if listener_found(&mut bus, &ln_probe(pad, ALL_SAD)?)? {
            for s in 0..=30 {
                listener_found(&mut bus, &ln_probe(pad, 0x60 + s)?)?;
            }
        }
    }
    unlisten_untalk(&mut bus)
}

/// UNL UNT, as linux-gpib's `unlisten_untalk` (lib/ibFindLstn.c:53-62) sends them.
pub(super) fn unlisten_untalk(bus: &mut BoardBus) -> Res<()> {
    bus.command(&[0x3f, 0x5f])
}

/// `iblines`: the line status word (every line valid).
pub fn lines(lib: &Library, d: &Desc) -> Res<i16> {
    let mut bus = lib.board(d.board).lock();
    let l = bus.lines()?;
    drop(bus);
    Ok(gpib_sim::abi::iblines_word(&l))
}

/// Serial-polls the device of `d` when SRQ is asserted and keeps its status byte if it
/// requests service (the library's automatic serial polling).
fn autopoll(lib: &Library, d: &Desc) {
    let board = lib.board(d.board);
    let mut bus = board.lock();
    let a = d.address();
    // "RQS will only be set if you have automatic serial polling enabled" (linux-gpib).
    if !bus.autopolls() || !bus.srq() || bus.spoll.get(&a).is_some_and(|q| !q.is_empty()) {
        return;
    }
    if bus.use_timeout(code_timeout(d.s.spoll_tmo)).is_err() {
        return;
    }
    if let Ok(stb) = bus.serial_poll(a) {
        if stb & 0x40 != 0 {
            bus.spoll.entry(a).or_default().push_back(stb);
        }
    }
}

/// Locks a descriptor (a panic elsewhere leaves it usable).
pub fn lock_desc(slot: &Mutex<Desc>) -> MutexGuard<'_, Desc> {
    slot.lock().unwrap_or_else(|p| p.into_inner())
}

/// `ibwait`: waits until a bit of `mask` is set in the descriptor's status, or (with
/// TIMO in the mask) for the descriptor's timeout, in wall time. A completed
/// asynchronous I/O is resynchronized into the calling thread's `Async*` values.
///
/// The descriptor is locked only to look at it, not while waiting: another thread can
/// use it (the board descriptor, for instance) to make the condition come true.
pub fn wait(lib: &Library, slot: &Mutex<Desc>, mask: i32) -> Res {
    let (limit, is_board) = {
        let mut d = lock_desc(slot);
        if mask == 0 {
            return Ok(None);
        }
        // The bits linux-gpib lets a wait name (lib/ibWait.c:21-23): the status bits
        // without ERR; any other bit is EARG.
        let allowed = if d.is_board {
            BOARD_STATUS_MASK
        } else {
            DEVICE_STATUS_MASK
        } & !ERR;
        if mask & !allowed != 0 {
            return Err(Fail::code(EARG));
        }
        if let Some(v) = d.pending.take() {
            status::set_async(v);
            d.end = v.sta & END != 0;
            if v.sta & ERR != 0 {
                return Err(Fail {
                    iberr: v.err,
                    count: Some(v.cntl),
                    timo: v.sta & TIMO != 0,
                });
            }
            return Ok(Some(v.cntl));
        }
        (d.s.timeout(), d.is_board)
    };
    let board = lock_desc(slot).board;
    let wall = lib.board(board).lock().waits_in_wall_time();
    let srq_bit = if is_board { SRQI } else { RQS };
    let done = |d: &Desc| {
        if !is_board && mask & RQS != 0 {
            autopoll(lib, d);
        }
        // The kernel's wait never sees END: neither its board-independent layer nor a
        // board's update_status sets it (sys/ibutil.c general_ibstatus; the NEC 7210's
        // keeps a received END in its private state). A wait for END ends by another
        // bit of the mask or TIMO; the library then adds its own END (lib/ibWait.c
        // my_wait, `if( conf->end )`).
        let sta = lib.status(d) & !END;
        sta & mask & !TIMO != 0
    };
    // With TIMO in the mask, the wait ends after the timeout, if there is one.
    let limit = limit.duration().filter(|_| mask & TIMO != 0);
    if let Some(limit) = limit.filter(|_| !wall && mask & srq_bit != 0) {
        if done(&lock_desc(slot)) {
            return Ok(None);
        }
        // An instrument event is due before the timeout (a measurement that ends, an
        // operation that completes): wait for it on the simulator's clock, which jumps
        // to it at once (the 200 ms of a measurement take no wall time).
        let due = lib.host.as_ref().and_then(SimHost::next_event);
        let now = lib.host.as_ref().map_or(Duration::ZERO, SimHost::now);
        if due.is_some_and(|t| t <= now.saturating_add(limit)) {
            lib.board(board).lock().wait_srq(limit);
            let mut d = lock_desc(slot);
            if !done(&d) {
                d.timed_out = true;
            }
            return Ok(None);
        }
    }
    // Nothing scheduled can bring the condition: only another thread's call can. Wait
    // in wall time (the descriptor unlocked), and let the simulator's clock wait too.
    let start = Instant::now();
    loop {
        {
            let mut d = lock_desc(slot);
            if done(&d) {
                return Ok(None);
            }
            if let Some(limit) = limit.filter(|l| start.elapsed() >= *l) {
                d.timed_out = true;
                drop(d);
                if !wall {
                    lib.board(board).lock().delay(limit);
                }
                return Ok(None);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `ibstop`: resynchronizes (and so ends) a pending asynchronous I/O.
pub fn stop(d: &mut Desc) -> Res {
    if let Some(v) = d.pending.take() {
        status::set_async(v);
    }
    Ok(None)
}
