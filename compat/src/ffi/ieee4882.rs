//! The IEEE 488.2 API: board descriptor first, results through ibsta/iberr/ibcnt
//! (`AllSpoll`, `DevClear`, `SendList`, `WaitSRQ`, ...).

use super::*;

// ---------------------------------------------------------------------------------
// IEEE 488.2 API: board descriptor first, results through ibsta/iberr/ibcnt.
// ---------------------------------------------------------------------------------

/// Serial-polls the listed devices.
///
/// # Safety
/// `address_list` must end with NOADDR; `result_list` must hold as many `short`s.
#[no_mangle]
pub unsafe extern "C" fn AllSPoll(
    board_desc: c_int,
    address_list: *const Addr4882_t,
    result_list: *mut c_short,
) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let l = unsafe { list(address_list) }?;
        if result_list.is_null() {
            return Err(Fail::code(EARG));
        }
        let r = engine::all_spoll(lib, d, &l)?;
        for (i, v) in r.iter().enumerate() {
            // SAFETY: the result list has one element per address.
            unsafe { result_list.add(i).write(c_short::from(*v)) };
        }
        Ok(None)
    })
}

/// Same as [`AllSPoll`] (linux-gpib exports both spellings).
///
/// # Safety
/// As [`AllSPoll`].
#[no_mangle]
pub unsafe extern "C" fn AllSpoll(
    board_desc: c_int,
    address_list: *const Addr4882_t,
    result_list: *mut c_short,
) {
    // SAFETY: forwarded contract.
    unsafe { AllSPoll(board_desc, address_list, result_list) }
}

/// SDC to one device (NOADDR: DCL to all).
#[no_mangle]
pub extern "C" fn DevClear(board_desc: c_int, address: Addr4882_t) {
    let mut failed = None;
    call4882(board_desc, |lib, d| {
        let r = if address == NOADDR {
            Ok(vec![])
        } else {
            one_address(address).map(|a| vec![a])
        };
        masked(
            &mut failed,
            r.and_then(|l| engine::dev_clear_list(lib, d, &l)),
        )
    });
    report_masked(board_desc, failed);
}

/// linux-gpib's DevClearList reports a failure, then falls through to report success
/// (lib/ibClr.c:124-128: no `return` after `exit_library(boardID, 1)`): ibsta has no
/// ERR, iberr keeps the failure's code. `masked` keeps the failure for
/// [`report_masked`], which gives the call's status without ERR and that code.
fn masked(failed: &mut Option<Fail>, r: Res) -> Res {
    match r {
        Ok(v) => Ok(v),
        Err(f) => {
            *failed = Some(f);
            Ok(None)
        }
    }
}

fn report_masked(board_desc: c_int, failed: Option<Fail>) {
    // A board taken offline: the final status query fails too, and ERR stays.
    let closed = engine::library()
        .get(board_desc)
        .is_some_and(|s| engine::lock_desc(&s).handle_closed);
    if closed {
        return;
    }
    if let Some(f) = failed {
        let sta = crate::status::thread().sta & !ERR;
        finish(sta, Some(f.iberr), f.count);
    }
}

/// SDC to the listed devices (empty list: DCL to all).
///
/// # Safety
/// `address_list` must be null or end with NOADDR.
#[no_mangle]
pub unsafe extern "C" fn DevClearList(board_desc: c_int, address_list: *const Addr4882_t) {
    let mut failed = None;
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let r = unsafe { list(address_list) };
        masked(
            &mut failed,
            r.and_then(|l| engine::dev_clear_list(lib, d, &l)),
        )
    });
    report_masked(board_desc, failed);
}

/// GTL to the listed devices (empty list: REN off).
///
/// # Safety
/// `address_list` must be null or end with NOADDR.
#[no_mangle]
pub unsafe extern "C" fn EnableLocal(board_desc: c_int, address_list: *const Addr4882_t) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let l = unsafe { list(address_list) }?;
        engine::enable_local(lib, d, &l)
    })
}

/// REN on, and the listed devices to remote.
///
/// # Safety
/// `address_list` must be null or end with NOADDR.
#[no_mangle]
pub unsafe extern "C" fn EnableRemote(board_desc: c_int, address_list: *const Addr4882_t) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let l = unsafe { list(address_list) }?;
        engine::enable_remote(lib, d, &l)
    })
}

/// Finds the listeners among the primary addresses of `pad_list`; their count in ibcnt.
///
/// # Safety
/// `pad_list` must end with NOADDR; `result_list` must hold `max_num_results` entries.
#[no_mangle]
pub unsafe extern "C" fn FindLstn(
    board_desc: c_int,
    pad_list: *const Addr4882_t,
    result_list: *mut Addr4882_t,
    max_num_results: c_int,
) {
    call4882(board_desc, |lib, d| {
        if pad_list.is_null() || result_list.is_null() || max_num_results < 0 {
            return Err(Fail::code(EARG));
        }
        // SAFETY: forwarded contract.
        let pads = unsafe { raw_list(pad_list) }?;
        let max = max_num_results as usize;
        // linux-gpib stores each listener as it finds it: on ETAB (one more than
        // fits) or an error the ones found are in the list already.
        let mut found = Vec::new();
        let r = engine::find_lstn(lib, d, &pads, max, &mut found);
        for (i, a) in found.iter().take(max).enumerate() {
            // SAFETY: at most `max_num_results` entries are written.
            unsafe { result_list.add(i).write(*a) };
        }
        r?;
        Ok(Some(found.len() as i64))
    })
}

/// Polls the listed devices until one requests service: its status byte, its index in
/// ibcnt (ETAB when none does).
///
/// # Safety
/// `address_list` must end with NOADDR; `result` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn FindRQS(
    board_desc: c_int,
    address_list: *const Addr4882_t,
    result: *mut c_short,
) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let l = unsafe { list(address_list) }?;
        if result.is_null() {
            return Err(Fail::code(EARG));
        }
        let (i, stb) = engine::find_rqs(lib, d, &l)?;
        // SAFETY: forwarded contract.
        unsafe { store(result, c_short::from(stb)) }?;
        Ok(Some(i as i64))
    })
}

/// Passes control: not possible on the simulated bus (ECAP).
#[no_mangle]
pub extern "C" fn PassControl(board_desc: c_int, address: Addr4882_t) {
    let _ = address;
    call4882(board_desc, |_, _| Err(Fail::code(ECAP)));
}

/// Conducts a parallel poll.
///
/// # Safety
/// `result` must be null or valid for writing a `short`.
#[no_mangle]
pub unsafe extern "C" fn PPoll(board_desc: c_int, result: *mut c_short) {
    call4882(board_desc, |lib, d| {
        if result.is_null() {
            return Err(Fail::code(EARG));
        }
        let v = engine::rpp(lib, d)?;
        // SAFETY: forwarded contract.
        unsafe { store(result, c_short::from(v)) }?;
        Ok(None)
    })
}

/// Configures a device's parallel poll response: DIO `data_line` (1..=8), `line_sense`.
#[no_mangle]
pub extern "C" fn PPollConfig(
    board_desc: c_int,
    address: Addr4882_t,
    data_line: c_int,
    line_sense: c_int,
) {
    call4882(board_desc, |lib, d| {
        let a = one_address(address)?;
        engine::ppoll_config(lib, d, a, data_line, line_sense)
    })
}

/// Unconfigures parallel poll of the listed devices (empty list: PPU to all).
///
/// # Safety
/// `address_list` must be null or end with NOADDR.
#[no_mangle]
pub unsafe extern "C" fn PPollUnconfig(board_desc: c_int, address_list: *const Addr4882_t) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let l = unsafe { list(address_list) }?;
        engine::ppoll_unconfig(lib, d, &l)
    })
}

/// Reads from the talker already addressed, until END or byte `termination`.
///
/// # Safety
/// `buffer` must point to `count` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn RcvRespMsg(
    board_desc: c_int,
    buffer: *mut c_void,
    count: c_long,
    termination: c_int,
) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let b = unsafe { bytes_mut(buffer, count) }?;
        engine::rcv_resp_msg(lib, d, b, termination)
    })
}

/// Serial-polls one device.
///
/// # Safety
/// `result` must be null or valid for writing a `short`.
#[no_mangle]
pub unsafe extern "C" fn ReadStatusByte(
    board_desc: c_int,
    address: Addr4882_t,
    result: *mut c_short,
) {
    call4882(board_desc, |lib, d| {
        // NOADDR passes linux-gpib's addressIsValid (lib/ibutil.c:527), and the serial
        // poll of its primary address 255 is refused by the kernel's dvrsp with -1
        // (sys/device.c:213-216):
        // EDVR, errno EPERM.
        if address == NOADDR {
            return Err(Fail {
                iberr: EDVR,
                count: Some(i64::from(libc::EPERM)),
                timo: false,
            });
        }
        let a = one_address(address)?;
        if result.is_null() {
            return Err(Fail::code(EARG));
        }
        crossings::charge(Op::ReadStatusByte, d);
        let v = engine::read_status_byte(lib, d, a)?;
        // SAFETY: forwarded contract.
        unsafe { store(result, c_short::from(v)) }?;
        Ok(None)
    })
}

/// Addresses the device to talk and reads until END or byte `termination`.
///
/// # Safety
/// `buffer` must point to `count` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn Receive(
    board_desc: c_int,
    address: Addr4882_t,
    buffer: *mut c_void,
    count: c_long,
    termination: c_int,
) {
    call4882(board_desc, |lib, d| {
        let a = one_address(address)?;
        // SAFETY: forwarded contract.
        let b = unsafe { bytes_mut(buffer, count) }?;
        crossings::charge(Op::Receive, d);
        engine::receive(lib, d, a, b, termination)
    })
}

/// Addresses the device to talk and the board to listen.
#[no_mangle]
pub extern "C" fn ReceiveSetup(board_desc: c_int, address: Addr4882_t) {
    call4882(board_desc, |lib, d| {
        let a = one_address(address)?;
        engine::receive_setup(lib, d, a)
    })
}

/// REN, IFC, DCL, then `*RST` to the listed devices.
///
/// # Safety
/// `address_list` must be null or end with NOADDR.
#[no_mangle]
pub unsafe extern "C" fn ResetSys(board_desc: c_int, address_list: *const Addr4882_t) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let l = unsafe { list(address_list) }?;
        engine::reset_sys(lib, d, &l)
    })
}

/// Addresses one device and writes to it.
///
/// # Safety
/// `buffer` must point to `count` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn Send(
    board_desc: c_int,
    address: Addr4882_t,
    buffer: *const c_void,
    count: c_long,
    eot_mode: c_int,
) {
    call4882(board_desc, |lib, d| {
        let a = one_address(address)?;
        // SAFETY: forwarded contract.
        let b = unsafe { bytes(buffer, count) }?;
        crossings::charge(
            Op::Send {
                nl: eot_mode == NLEND,
            },
            d,
        );
        engine::send_list(lib, d, &[a], b, eot_mode)
    })
}

/// Sends command bytes (as [`ibcmd`]).
///
/// # Safety
/// `cmds` must point to `count` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn SendCmds(board_desc: c_int, cmds: *const c_void, count: c_long) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let b = unsafe { bytes(cmds, count) }?;
        engine::cmd_no_count(lib, d, b)
    })
}

/// Writes to the listeners already addressed.
///
/// # Safety
/// `buffer` must point to `count` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn SendDataBytes(
    board_desc: c_int,
    buffer: *const c_void,
    count: c_long,
    eotmode: c_int,
) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let b = unsafe { bytes(buffer, count) }?;
        engine::send_data_bytes(lib, d, b, eotmode)
    })
}

/// Pulses IFC.
#[no_mangle]
pub extern "C" fn SendIFC(board_desc: c_int) {
    call4882(board_desc, engine::sic);
}

/// LLO to all devices.
#[no_mangle]
pub extern "C" fn SendLLO(board_desc: c_int) {
    call4882(board_desc, engine::send_llo);
}

/// Addresses the listed devices and writes to them.
///
/// # Safety
/// `address_list` must end with NOADDR; `buffer` must point to `count` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn SendList(
    board_desc: c_int,
    address_list: *const Addr4882_t,
    buffer: *const c_void,
    count: c_long,
    eotmode: c_int,
) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let l = unsafe { list(address_list) }?;
        // SAFETY: forwarded contract.
        let b = unsafe { bytes(buffer, count) }?;
        engine::send_list(lib, d, &l, b, eotmode)
    })
}

/// Addresses the listed devices to listen and the board to talk.
///
/// # Safety
/// `address_list` must end with NOADDR.
#[no_mangle]
pub unsafe extern "C" fn SendSetup(board_desc: c_int, address_list: *const Addr4882_t) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let l = unsafe { list(address_list) }?;
        engine::send_setup(lib, d, &l)
    })
}

/// The listed devices in remote with lockout.
///
/// # Safety
/// `address_list` must be null or end with NOADDR.
#[no_mangle]
pub unsafe extern "C" fn SetRWLS(board_desc: c_int, address_list: *const Addr4882_t) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let l = unsafe { list(address_list) }?;
        engine::set_rwls(lib, d, &l)
    })
}

/// Whether SRQ is asserted: 1 or 0.
///
/// # Safety
/// `result` must be null or valid for writing a `short`.
#[no_mangle]
pub unsafe extern "C" fn TestSRQ(board_desc: c_int, result: *mut c_short) {
    call4882(board_desc, |lib, d| {
        crossings::charge(Op::Lines, d);
        let v = engine::test_srq(lib, d);
        // SAFETY: forwarded contract.
        unsafe { store(result, c_short::from(v)) }?;
        Ok(None)
    })
}

/// `*TST?` to the listed devices; their answers, and how many are not 0 in ibcnt.
///
/// # Safety
/// `address_list` must end with NOADDR; `result_list` must hold as many `short`s.
#[no_mangle]
pub unsafe extern "C" fn TestSys(
    board_desc: c_int,
    address_list: *const Addr4882_t,
    result_list: *mut c_short,
) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let l = unsafe { list(address_list) }?;
        if result_list.is_null() {
            return Err(Fail::code(EARG));
        }
        let (r, failing) = engine::test_sys(lib, d, &l)?;
        for (i, v) in r.iter().enumerate() {
            // SAFETY: the result list has one element per address.
            unsafe { result_list.add(i).write(*v) };
        }
        Ok(Some(failing as i64))
    })
}

/// GET to one device (NOADDR: to whoever listens).
#[no_mangle]
pub extern "C" fn Trigger(board_desc: c_int, address: Addr4882_t) {
    call4882(board_desc, |lib, d| {
        let l = if address == NOADDR {
            vec![]
        } else {
            vec![one_address(address)?]
        };
        engine::trigger_list(lib, d, &l)
    })
}

/// GET to the listed devices together (empty list: to whoever listens).
///
/// # Safety
/// `address_list` must be null or end with NOADDR.
#[no_mangle]
pub unsafe extern "C" fn TriggerList(board_desc: c_int, address_list: *const Addr4882_t) {
    call4882(board_desc, |lib, d| {
        // SAFETY: forwarded contract.
        let l = unsafe { list(address_list) }?;
        engine::trigger_list(lib, d, &l)
    })
}

/// Waits for SRQ up to the board's timeout: 1 when it came, else 0.
///
/// # Safety
/// `result` must be null or valid for writing a `short`.
#[no_mangle]
pub unsafe extern "C" fn WaitSRQ(board_desc: c_int, result: *mut c_short) {
    call_unlocked(board_desc, Want::Board, |lib, slot| {
        if result.is_null() {
            return Err(Fail::code(EARG));
        }
        let v = engine::wait_srq(lib, slot)?;
        // SAFETY: forwarded contract.
        unsafe { store(result, c_short::from(v)) }?;
        Ok(None)
    });
}
