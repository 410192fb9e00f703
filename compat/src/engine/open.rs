//! Opening descriptors: `ibdev`, `ibfind`, `ibonl`.

use super::*;

// ---------------------------------------------------------------------------------
// Opening descriptors.
// ---------------------------------------------------------------------------------

/// `ibdev`: a new device descriptor.
pub fn dev(
    lib: &Library,
    board: i32,
    pad: i32,
    sad: i32,
    tmo: i32,
    eot: i32,
    eos: i32,
) -> Res<i32> {
    // A board index with no interface section: linux-gpib's ibdev goes on to an ioctl
    // on the board's file, which was never opened (fd -1): EDVR with errno EBADF
    // (lib/ibutil.c:258-276, open_gpib_handle). Outside 0..15 it asserts
    // (ib_internal.h:128); ENEB here.
    // The descriptor is taken before that (lib/ibdev.c:87, my_ibdev: ibGetDescriptor,
    // then enter_library fails) and never given back: the next one gets the next
    // number, and the lost one answers as its board does (EDVR, EBADF).
    let missing = match usize::try_from(board).ok() {
        Some(b) if b < lib.boards.len() => None,
        Some(b) if b < MAX_BOARDS && lib.load_error.is_none() => Some(b),
        _ => return Err(Fail::code(ENEB)),
    };
    let pad = check_pad(pad)?;
    let sad = check_sad(sad)?;
    let tmo = check_timeout_code(tmo)?;
    let eos = check_eos(eos)?;
    let s = Settings::device(pad, sad, tmo, eot != 0, eos);
    if let Some(b) = missing {
        lib.insert(Desc::new(b, false, s))?;
        return Err(no_board_file());
    }
    lib.insert(Desc::new(board as usize, false, s))
}

/// A call on a board with no interface section: linux-gpib's ioctl on the board's file,
/// never opened (fd -1), fails with EBADF: EDVR.
pub fn no_board_file() -> Fail {
    Fail {
        iberr: EDVR,
        count: Some(i64::from(libc::EBADF)),
        timo: false,
    }
}

/// `ibfind`: a new device descriptor for the device called `name` (with its configured
/// address, timeout, EOS and EOT settings, as a gpib.conf `device` section gives), or
/// a new board descriptor for the board called `name`.
pub fn find(lib: &Library, name: &str) -> Res<i32> {
    if let Some(n) = lib.named.iter().find(|n| n.name == name) {
        let b = lib.board(n.board);
        let s = Settings::with(
            n.address.primary.get(),
            n.address.secondary.map(|s| s.get()),
            n.settings.or(b.defaults),
        );
        return lib.insert(Desc::new(n.board, false, s));
    }
    let Some(b) = lib.board_named(name) else {
        if let Some((_, why)) = lib.unusable.iter().find(|(n, _)| n == name) {
            eprintln!("libgpib (simulated bus): ibfind({name:?}): {why}");
        }
        return Err(not_configured());
    };
    lib.insert(Desc::new(b.index, true, Settings::board(b)))
}

/// What libgpib's `ibfind` reports for a name not in its configuration (one that is
/// not UTF-8 text included: no name of a configuration is): EDVR, and `ibcnt` left as
/// the previous call left it, since linux-gpib's `ibfind` fails before it enters the
/// library (lib/ibFind.c:38-42 sets only iberr and ibsta).
pub fn not_configured() -> Fail {
    Fail {
        iberr: EDVR,
        count: Some(crate::status::thread().cntl),
        timo: false,
    }
}

/// `ibonl`: 0 closes a device descriptor (a board descriptor stays usable); anything
/// else restores the settings it was opened with.
pub fn onl(lib: &Library, ud: i32, d: &mut Desc, v: i32) -> Res {
    d.pending = None;
    // reinit_descriptor (lib/ibOnl.c), for a non-zero `v` only, restores the address,
    // the I/O timeout, EOS, EOT, the parallel poll configuration and READDR, and sets
    // the serial and parallel poll timeouts to the I/O timeout; the rest stays as the
    // program set it.
    if v != 0 {
        let (s, def) = (&mut d.s, &d.defaults);
        s.pad = def.pad;
        s.sad = def.sad;
        s.device = def.device;
        s.spoll_tmo = def.tmo();
        s.ppoll_tmo = def.tmo();
        s.ppc = def.ppc;
        s.readdr = def.readdr;
    }
    // The status reports END of the last transfer still: closing computes it before
    // close_gpib_handle, and reinit_descriptor leaves conf->end alone (lib/ibOnl.c).
    if v == 0 && ud >= MAX_BOARDS as i32 {
        lib.remove(ud);
    }
    // A board descriptor (0..15) is kept, its kernel handle closed (lib/ibOnl.c:118-139:
    // close_gpib_handle, and ibConfigs[ud] freed only from GPIB_MAX_NUM_BOARDS up), for
    // good: `ibonl(ud, 1)` only runs reinit_descriptor, whose IBPAD on the closed handle
    // fails.
    if ud < MAX_BOARDS as i32 && v == 0 {
        d.handle_closed = true;
        lib.board(d.board).lock().handle0_free = true;
    }
    Ok(None)
}
