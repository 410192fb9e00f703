//! `ioctl` on an open `/dev/gpibN`, as linux-gpib's kernel layer answers it
//! (`ibioctl` in its `osfuncs.c`): the same checks in the same order (the board type
//! and `IBONL` first; then a board without a type is ENODEV; the configuration
//! requests; then an offline board is EINVAL; the requests any thread may make; then
//! the ones that need the board's user lock, EPERM without it), the same errno for
//! each refusal, and ENOTTY for a request it does not know.

use std::sync::Arc;

use crate::abi::*;
use crate::board::{tid, Board};
use crate::file::OpenFile;
use crate::io;
use crate::user::{read_in, write_out, Errno};

/// Board types a kernel with linux-gpib's drivers knows (`CFCBOARDTYPE` refuses
/// others with EINVAL).
const BOARD_TYPES: &[&str] = &[
    "agilent_82350b",
    "agilent_82357a",
    "cb_isa_accel",
    "cb_pci",
    "cb_pci_accel",
    "cb_pcmcia",
    "cec_pci",
    "fluke_hybrid",
    "fmh_gpib",
    "fmh_gpib_pci",
    "gpib_bitbang",
    "hp_82335",
    "hp_82341",
    "ines_pci",
    "ines_pcmcia",
    "lpvo_usb_gpib",
    "ni_isa",
    "ni_nat4882_isa",
    "ni_pci",
    "ni_pci_accel",
    "ni_pcmcia",
    "ni_usb_b",
    "pcII",
    "pcIIa",
    "pcII_IIa",
    "tnt4882",
];

/// Runs request `request` with argument address `arg` on `file`.
pub fn ioctl(file: &Arc<OpenFile>, board: &Board, request: u64, arg: usize) -> Result<i32, Errno> {
    // Requests a board without a type takes: its type, online or offline.
    match request {
        CFCBOARDTYPE => return board_type(board, arg),
        IBONL => return online(board, arg),
        _ => {}
    }
    {
        let st = board.lock();
        if st.p.interface.is_none() {
            return Err(libc::ENODEV);
        }
    }
    match request {
        CFCBASE => {
            return config(board, |p| {
                p.base = read_in::<u64>(arg)?;
                Ok(())
            })
        }
        CFCIRQ => {
            return config(board, |p| {
                p.irq = read_in::<u32>(arg)?;
                Ok(())
            })
        }
        CFCDMA => {
            return config(board, |p| {
                p.dma = read_in::<u32>(arg)?;
                Ok(())
            })
        }
        IBSELECT_PCI => {
            return config(board, |p| {
                let s: SelectPci = read_in(arg)?;
                p.pci = (s.pci_bus, s.pci_slot);
                Ok(())
            })
        }
        IBSELECT_DEVICE_PATH => {
            let _: DevicePath = read_in(arg)?;
            return Ok(0);
        }
        IBAUTOSPOLL => return autospoll(file, board, arg),
        IBBOARD_INFO => return board_info(board, arg),
        IBMUTEX => return mutex(file, board, arg),
        IBPAD => return address(file, board, arg, true),
        IBSAD => return address(file, board, arg, false),
        _ => {}
    }
    if !board.lock().p.online {
        return Err(libc::EINVAL);
    }
    match request {
        IBEVENT => return event(board, arg),
        IBCLOSEDEV => return close_dev(file, board, arg),
        IBOPENDEV => return open_dev(file, board, arg),
        IBSPOLL_BYTES => return io::spoll_bytes(board, arg),
        IBWAIT => return io::wait(file, board, arg),
        IBLINES => {
            let mut sim = board.lock().sim()?;
            let lines = crate::driver::lines(&mut sim)?;
            write_out(arg, &lines)?;
            return Ok(0);
        }
        IBLOC => return Ok(0),
        _ => {}
    }
    if !board.user.held_by(tid()) {
        return Err(libc::EPERM);
    }
    match request {
        IB_T1_DELAY => t1_delay(board, arg),
        IBCAC => {
            let _sync: i32 = read_in(arg)?;
            let mut sim = board.lock().sim()?;
            crate::driver::take_control(&mut sim).map(|()| 0)
        }
        IBCMD => io::command(file, board, arg),
        IBEOS => {
            let e: EosArg = read_in(arg)?;
            if e.eos_flags & !EOS_MASK != 0 {
                return Err(libc::EINVAL);
            }
            let mut st = board.lock();
            st.p.eos = e.eos;
            st.p.eos_flags = e.eos_flags;
            st.save(board.minor);
            Ok(0)
        }
        IBGTS => {
            let mut sim = board.lock().sim()?;
            crate::driver::go_to_standby(&mut sim).map(|()| 0)
        }
        IBPPC => ppc(board, arg),
        IBPP2_SET => config(board, |p| {
            p.local_ppoll = read_in::<i16>(arg)? != 0;
            Ok(())
        }),
        IBPP2_GET => {
            let mode = i16::from(board.lock().p.local_ppoll);
            write_out(arg, &mode).map(|()| 0)
        }
        IBQUERY_BOARD_RSV => {
            // The board answers serial polls with no status of its own: a controller
            // of the simulated bus is never polled.
            write_out(arg, &0i32).map(|()| 0)
        }
        IBRD => io::read(file, board, arg),
        IBRPP => io::parallel_poll(board, arg),
        IBRSC => config(board, |p| {
            p.master = read_in::<i32>(arg)? != 0;
            Ok(())
        }),
        IBRSP => io::serial_poll(board, arg),
        IBRSV => {
            let sb: u8 = read_in(arg)?;
            request_service(board, sb, i32::from(sb & RQS_BIT))
        }
        IBRSV2 => {
            let r: RequestService2 = read_in(arg)?;
            request_service(board, r.status_byte, r.new_reason_for_service)
        }
        IBSIC => {
            let _usec: u32 = read_in(arg)?;
            let st = board.lock();
            if !st.p.master {
                return Err(libc::EPERM);
            }
            let mut sim = st.sim()?;
            drop(st);
            use gpib_sim::Backend as _;
            sim.interface_clear().map_err(|_| libc::EIO)?;
            Ok(0)
        }
        IBSRE => {
            let enable: i32 = read_in(arg)?;
            let mut st = board.lock();
            if !st.p.master {
                return Err(libc::EPERM);
            }
            let mut sim = st.sim()?;
            st.p.ren = enable != 0;
            st.save(board.minor);
            drop(st);
            use gpib_sim::Backend as _;
            sim.remote_enable(enable != 0).map_err(|_| libc::EIO)?;
            Ok(0)
        }
        IBTMO => {
            let usec: u32 = read_in(arg)?;
            board.lock().usec_timeout = usec;
            Ok(0)
        }
        IBWRT => io::write(file, board, arg),
        _ => Err(libc::ENOTTY),
    }
}

/// Changes a lasting setting and keeps it for the next process.
fn config(
    board: &Board,
    f: impl FnOnce(&mut crate::persist::Persisted) -> Result<(), Errno>,
) -> Result<i32, Errno> {
    let mut st = board.lock();
    f(&mut st.p)?;
    st.save(board.minor);
    Ok(0)
}

fn board_type(board: &Board, arg: usize) -> Result<i32, Errno> {
    let t: BoardType = read_in(arg)?;
    let len = t.name.iter().position(|&b| b == 0).unwrap_or(t.name.len());
    let name = String::from_utf8_lossy(&t.name[..len]).into_owned();
    let mut st = board.lock();
    if st.p.online {
        return Err(libc::EBUSY);
    }
    if !BOARD_TYPES.contains(&name.as_str()) {
        return Err(libc::EINVAL);
    }
    st.p.interface = Some(name);
    st.save(board.minor);
    Ok(0)
}

fn online(board: &Board, arg: usize) -> Result<i32, Errno> {
    let o: Online = read_in(arg)?;
    if o.init_data_length > 0 {
        // The firmware some boards take: read as the kernel copies it, then unused.
        let len = usize::try_from(o.init_data_length).map_err(|_| libc::EINVAL)?;
        let mut probe = [0u8; 1];
        crate::user::read_bytes(o.init_data_ptr, &mut probe)?;
        crate::user::read_bytes(o.init_data_ptr.saturating_add(len as u64 - 1), &mut probe)?;
    }
    let mut st = board.lock();
    if o.online != 0 {
        if st.p.online {
            return Err(libc::EBUSY);
        }
        if st.p.interface.is_none() {
            return Err(libc::ENODEV);
        }
        let mut sim = crate::host::attach(board.minor, st.p.pad)?;
        // The simulated board's driver starts at its board's T1 and says so, as the
        // drivers that set a T1 delay when they attach do (libgpib's ibask(IbaTIMING)
        // fails on a board whose T1 was never set).
        st.p.t1_ns = attached_t1(&mut sim);
        st.p.bus = crate::host::describe();
        st.sim = Some(sim);
        st.p.online = true;
        // No file polls automatically on a board just brought online.
        model_autopoll(&mut st);
    } else {
        if !st.p.online {
            return Ok(0);
        }
        if st.p.interface.is_none() {
            return Err(libc::ENODEV);
        }
        st.sim = None;
        st.p.online = false;
    }
    st.save(board.minor);
    Ok(0)
}

/// The T1 delay of a board just attached, in ns.
pub fn attached_t1(sim: &mut gpib_sim::sim::SimBoard) -> u32 {
    use gpib_sim::Backend as _;
    sim.tuning()
        .and_then(|t| t.t1().ok())
        .map_or(0, |t| u32::try_from(t.nanos()).unwrap_or(u32::MAX))
}

fn autospoll(file: &Arc<OpenFile>, board: &Board, arg: usize) -> Result<i32, Errno> {
    use std::sync::atomic::Ordering::SeqCst;
    let enable: i16 = read_in(arg)?;
    let desc = file.descriptor(0)?;
    let mut st = board.lock();
    let was = desc.autopoll_enabled.load(SeqCst);
    if enable != 0 {
        if !was {
            st.autospollers += 1;
            desc.autopoll_enabled.store(true, SeqCst);
        }
        model_autopoll(&mut st);
        return Ok(0);
    }
    if !was {
        return Err(libc::EINVAL);
    }
    desc.autopoll_enabled.store(false, SeqCst);
    if st.autospollers == 0 {
        return Err(libc::EINVAL);
    }
    st.autospollers -= 1;
    model_autopoll(&mut st);
    Ok(0)
}

/// Tells the simulated board whether its driver polls automatically (some open file
/// asked for it), so that the simulator's model of polling a device that keeps
/// requesting service (its cost on the bus and the CPU) runs while it does.
pub fn model_autopoll(st: &mut crate::board::State) {
    use gpib_sim::Backend as _;
    let on = st.autospollers > 0;
    if let Some(t) = st.sim.as_mut().and_then(|s| s.tuning()) {
        let _ = t.set_autopoll(on);
    }
}

fn board_info(board: &Board, arg: usize) -> Result<i32, Errno> {
    let st = board.lock();
    let info = BoardInfo {
        pad: st.p.pad,
        sad: st.p.sad,
        parallel_poll_configuration: i32::from(st.p.ppc),
        autopolling: i32::from(st.autospollers > 0),
        is_system_controller: i32::from(st.p.master),
        t1_delay: st.p.t1_ns,
        // ist at bit 0; no_7_bit_eos (bit 1) stays 0: the simulated board compares
        // 7-bit EOS bytes.
        bits: u32::from(st.p.ist),
    };
    drop(st);
    write_out(arg, &info).map(|()| 0)
}

fn mutex(file: &Arc<OpenFile>, board: &Board, arg: usize) -> Result<i32, Errno> {
    let lock: i32 = read_in(arg)?;
    let me = tid();
    if lock != 0 {
        board.user.lock(me);
        file.lock().holding_mutex = true;
    } else {
        board.user.unlock(me)?;
        file.lock().holding_mutex = false;
    }
    Ok(0)
}

fn address(file: &Arc<OpenFile>, board: &Board, arg: usize, primary: bool) -> Result<i32, Errno> {
    let (handle, value) = if primary {
        let p: Pad = read_in(arg)?;
        (i64::from(p.handle), i64::from(p.pad))
    } else {
        let s: Sad = read_in(arg)?;
        (i64::from(s.handle), i64::from(s.sad))
    };
    let desc = file.descriptor(handle)?;
    let mut st = board.lock();
    if desc.is_board {
        // ibpad/ibsad: out of range is -1 (EPERM).
        if value > 30 {
            return Err(libc::EPERM);
        }
        if primary {
            st.p.pad = value as u32;
            if let Some(sim) = st.sim.as_mut() {
                if let Ok(pad) = gpib_sim::PrimaryAddress::try_from(value as u8) {
                    sim.set_address(pad);
                }
            }
        } else {
            st.p.sad = value as i32;
        }
        st.save(board.minor);
        return Ok(0);
    }
    let (pad, sad) = desc.address();
    st.close_device(pad, sad)?;
    if primary {
        desc.set_pad(value as u32);
    } else {
        desc.set_sad(value as i32);
    }
    let (pad, sad) = desc.address();
    st.open_device(pad, sad);
    Ok(0)
}

fn event(board: &Board, arg: usize) -> Result<i32, Errno> {
    let mut st = board.lock();
    let ev = if st.events.is_empty() {
        0i16
    } else if st.event_dropped {
        st.event_dropped = false;
        return Err(libc::EPIPE);
    } else {
        st.events.pop_front().unwrap_or(0)
    };
    drop(st);
    write_out(arg, &ev).map(|()| 0)
}

fn open_dev(file: &Arc<OpenFile>, board: &Board, arg: usize) -> Result<i32, Errno> {
    let mut cmd: OpenDev = read_in(arg)?;
    let handle = {
        let mut f = file.lock();
        let i = f
            .descriptors
            .iter()
            .position(Option::is_none)
            .ok_or(libc::ERANGE)?;
        f.descriptors[i] = Some(Arc::new(crate::file::Descriptor::new(
            cmd.pad,
            cmd.sad,
            cmd.flags & 1 != 0,
        )));
        i
    };
    let mut st = board.lock();
    st.open_device(cmd.pad, cmd.sad);
    st.stuck_srq = false;
    drop(st);
    cmd.handle = handle as u32;
    write_out(arg, &cmd).map(|()| 0)
}

fn close_dev(file: &Arc<OpenFile>, board: &Board, arg: usize) -> Result<i32, Errno> {
    let cmd: CloseDev = read_in(arg)?;
    let i = cmd.handle as usize;
    if i >= MAX_DESCRIPTORS {
        return Err(libc::EINVAL);
    }
    let mut f = file.lock();
    let desc = f.descriptors[i].clone().ok_or(libc::EINVAL)?;
    let (pad, sad) = desc.address();
    board.lock().close_device(pad, sad)?;
    f.descriptors[i] = None;
    Ok(0)
}

fn t1_delay(board: &Board, arg: usize) -> Result<i32, Errno> {
    use gpib_sim::backend::tuning::T1Delay;
    use gpib_sim::Backend as _;
    let ns: u32 = read_in(arg)?;
    let mut st = board.lock();
    let mut sim = st.sim()?;
    let asked = T1Delay::from_nanos(u64::from(ns));
    let set = sim
        .tuning()
        .ok_or(libc::EIO)?
        .set_t1(asked)
        .map_err(|_| libc::EIO)?;
    st.p.t1_ns = u32::try_from(set.nanos()).unwrap_or(u32::MAX);
    st.save(board.minor);
    Ok(0)
}

fn ppc(board: &Board, arg: usize) -> Result<i32, Errno> {
    let c: PpollConfig = read_in(arg)?;
    let config = (c.raw & 0xff) as u8;
    let set_ist = c.raw & 0x100 != 0;
    let clear_ist = c.raw & 0x200 != 0;
    let mut st = board.lock();
    if set_ist {
        st.p.ist = true;
    } else if clear_ist {
        st.p.ist = false;
    }
    if config != 0 {
        st.p.ppc = config & 0x1f;
    }
    st.save(board.minor);
    Ok(0)
}

fn request_service(board: &Board, status_byte: u8, new_reason: i32) -> Result<i32, Errno> {
    let mut sim = board.lock().sim()?;
    if crate::driver::board_bits(&mut sim) & gpib_sim::abi::CIC != 0 {
        return Err(libc::EINVAL);
    }
    if status_byte & RQS_BIT == 0 && new_reason != 0 {
        return Err(libc::EINVAL);
    }
    // The simulated board is always the controller: a request for service is
    // refused above (the kernel's EINVAL while CIC).
    Ok(0)
}

/// What closing a file does (`ibclose`): its autopolling stops counting, its devices
/// close, and the user lock it holds is given back.
pub fn close(file: &OpenFile, board: &Board) {
    let mut f = file.lock();
    let mut st = board.lock();
    if let Some(d) = f.descriptors[0].as_ref() {
        if d.autopoll_enabled.load(std::sync::atomic::Ordering::SeqCst) {
            st.autospollers = st.autospollers.saturating_sub(1);
            model_autopoll(&mut st);
        }
    }
    for d in f.descriptors.iter_mut() {
        if let Some(d) = d.take() {
            if !d.is_board {
                let (pad, sad) = d.address();
                let _ = st.close_device(pad, sad);
            }
        }
    }
    drop(st);
    if f.holding_mutex {
        f.holding_mutex = false;
        board.user.release();
    }
}
