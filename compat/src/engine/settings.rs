//! Settings: `ibtmo`, `ibeos`, `ibpad`, `ibsad`, `ibbna`, `ibask` and `ibconfig`.

use super::*;

// ---------------------------------------------------------------------------------
// Settings.
// ---------------------------------------------------------------------------------

/// `ibtmo`.
pub fn tmo(d: &mut Desc, v: i32) -> Res {
    d.s.device.timeout = Timeout::from_linux_gpib_code(check_timeout_code(v)?);
    Ok(None)
}

/// `ibeos`.
pub fn eos(d: &mut Desc, v: i32) -> Res {
    d.s.set_eos(check_eos(v)?);
    Ok(None)
}

/// `ibpad`: a device's new primary address; a board's cannot change here.
pub fn pad(d: &mut Desc, v: i32) -> Res {
    let p = check_pad(v)?;
    if d.is_board && p != d.s.pad {
        return Err(Fail::code(ECAP));
    }
    d.s.pad = p;
    Ok(None)
}

/// `ibsad`: a device's new secondary address; a board has none here.
pub fn sad(d: &mut Desc, v: i32) -> Res {
    // linux-gpib's internal_ibsad (lib/ibSad.c:24-33) takes `v - 0x60`: above 30 is
    // EARG, and anything below 0x60 is a negative secondary address, that is none.
    let s = if v < 0x60 { None } else { check_sad(v)? };
    if d.is_board && s.is_some() {
        return Err(Fail::code(ECAP));
    }
    d.s.sad = s;
    Ok(None)
}

/// `ibbna`: moves a device descriptor to the board called `name`.
pub fn bna(lib: &Library, d: &mut Desc, name: &str) -> Res {
    let b = lib.board_named(name).ok_or(Fail::code(ENEB))?;
    d.board = b.index;
    Ok(None)
}

fn bool_opt(v: i32) -> bool {
    v != 0
}

/// `ibask`.
pub fn ask(lib: &Library, d: &Desc, option: i32) -> Res<i32> {
    let s = &d.s;
    let common = match option {
        OPT_PAD => Some(i32::from(s.pad)),
        OPT_SAD => Some(s.sad.map_or(0, |x| i32::from(x) + 0x60)),
        OPT_TMO => Some(s.tmo()),
        OPT_EOT => Some(i32::from(s.eot())),
        OPT_EOS_RD => Some(s.eos_mode().linux_gpib() & REOS),
        OPT_EOS_WRT => Some(s.eos_mode().linux_gpib() & XEOS),
        OPT_EOS_CMP => Some(s.eos_mode().linux_gpib() & BIN),
        // linux-gpib keeps the byte in a `char` (lib/ibask.c:231-233): a byte above 0x7f
        // reads back negative on x86, as there.
        OPT_EOS_CHAR => Some(i32::from(s.eos_mode().byte as i8)),
        OPT_READ_ADJUST | OPT_WRITE_ADJUST => Some(0),
        OPT_END_BIT_IS_NORMAL => Some(1),
        OPT_BNA => Some(d.board as i32),
        _ => None,
    };
    if let Some(v) = common {
        return Ok(v);
    }
    let v = if d.is_board {
        match option {
            OPT_PPC => s.ppc,
            OPT_AUTOPOLL => i32::from(lib.board(d.board).lock().autopolls()),
            OPT_CICPROT | OPT_IRQ | OPT_HS_CABLE_LENGTH => 0,
            OPT_SC => i32::from(lib.board(d.board).lock().system_controller),
            OPT_SRE | OPT_7BIT_EOS => 1,
            OPT_PP2 => i32::from(s.pp2),
            OPT_TIMING => lib.board(d.board).lock().tuning(|t| t.t1())?.code(),
            // linux-gpib answers the board's DMA channel from gpib.conf (lib/ibask.c:315-317,
            // `board->dma`), not whether transfers use DMA: 0, none, on the simulator.
            OPT_DMA => 0,
            OPT_EVENT_QUEUE => i32::from(s.event_queue),
            // linux-gpib: SPOLL detection is always on; LLO on open never.
            OPT_SPOLL_BIT => 1,
            OPT_SEND_LLO => 0,
            OPT_PPOLL_TIME => s.ppoll_tmo,
            OPT_IST => i32::from(s.ist),
            OPT_RSV => s.rsv,
            _ => return Err(Fail::code(EARG)),
        }
    } else {
        match option {
            OPT_READDR => i32::from(s.readdr),
            OPT_SPOLL_TIME => s.spoll_tmo,
            OPT_UN_ADDR => i32::from(s.unaddr),
            _ => return Err(Fail::code(EARG)),
        }
    };
    Ok(v)
}

/// `ibconfig`.
pub fn config(lib: &Library, d: &mut Desc, option: i32, v: i32) -> Res {
    match option {
        OPT_PAD => return pad(d, v),
        OPT_SAD => return sad(d, v),
        OPT_TMO => return tmo(d, v),
        OPT_EOT => d.s.device.eot = Some(bool_opt(v)),
        OPT_EOS_RD => d.s.eos_mut().reos = v != 0,
        OPT_EOS_WRT => d.s.eos_mut().xeos = v != 0,
        OPT_EOS_CMP => d.s.eos_mut().bin = v != 0,
        OPT_EOS_CHAR => {
            let c = u8::try_from(v).map_err(|_| Fail::code(EARG))?;
            d.s.eos_mut().byte = c;
        }
        // Byte swapping is not supported (as in libgpib).
        OPT_READ_ADJUST | OPT_WRITE_ADJUST if v != 0 => return Err(Fail::code(ECAP)),
        OPT_READ_ADJUST | OPT_WRITE_ADJUST => {}
        // linux-gpib: "no support for END on EOI only yet".
        OPT_END_BIT_IS_NORMAL if v == 0 => return Err(Fail::code(ECAP)),
        OPT_END_BIT_IS_NORMAL => {}
        OPT_BNA if !d.is_board => {
            let b = usize::try_from(v)
                .ok()
                .filter(|&b| b < lib.boards.len())
                .ok_or(Fail::code(ENEB))?;
            d.board = b;
        }
        _ if d.is_board => match option {
            OPT_PPC => return ppc(lib, d, v),
            OPT_AUTOPOLL => {
                lib.board(d.board)
                    .lock()
                    .tuning(|t| t.set_autopoll(v != 0))?;
            }
            // linux-gpib: no pass control protocol, no operation without interrupts.
            OPT_CICPROT if v != 0 => return Err(Fail::code(ECAP)),
            OPT_IRQ if v == 0 => return Err(Fail::code(ECAP)),
            OPT_CICPROT | OPT_IRQ => {}
            // Giving system control up or taking it back (IBRSC): the board no longer
            // pulses IFC or drives REN (ESAC), nor goes to standby for data.
            OPT_SC => lib.board(d.board).lock().system_controller = v != 0,
            // linux-gpib checks the length first (lib/ibconfig.c:105-109, 0 to 15 m).
            OPT_HS_CABLE_LENGTH if !(0..=15).contains(&v) => return Err(Fail::code(EARG)),
            // Then it sends CFE and, for a length, its CFGn as commands
            // (lib/ibconfig.c set_cable_length). Its header's CFGn is `0x6 | meters`
            // (include/gpib/gpib_user.h), not IEEE 488.1's 0x60 + meters: those are the
            // bytes a program puts on the bus. No simulated instrument speaks HS488.
            OPT_HS_CABLE_LENGTH => {
                let cfg = [codes::CFE, 0x06 | (v as u8 & 0x0f)];
                let n = if v == 0 { 1 } else { 2 };
                cmd_no_count(lib, d, &cfg[..n])?;
            }
            OPT_SRE => return sre(lib, d, v != 0),
            OPT_PP2 => d.s.pp2 = bool_opt(v),
            OPT_TIMING => {
                let t1 = T1Delay::from_code(v).ok_or(Fail::code(EARG))?;
                lib.board(d.board).lock().tuning(|t| t.set_t1(t1))?;
            }
            // linux-gpib: "disabling DMA not supported".
            OPT_DMA if v == 0 => return Err(Fail::code(ECAP)),
            OPT_DMA => d.s.dma = true,
            OPT_EVENT_QUEUE => d.s.event_queue = bool_opt(v),
            OPT_SPOLL_BIT => {}
            // linux-gpib: "sending local lockout on device open not implemented".
            OPT_SEND_LLO if v != 0 => return Err(Fail::code(ECAP)),
            OPT_SEND_LLO => {}
            OPT_PPOLL_TIME => d.s.ppoll_tmo = check_timeout_code(v)?,
            OPT_IST => d.s.ist = bool_opt(v),
            // linux-gpib checks the byte (lib/ibRsv.c:33-37), then its kernel refuses to
            // request service while the board is controller-in-charge
            // (sys/ibrsv.c:15-19, -EINVAL): the simulated board always is.
            OPT_RSV => {
                u8::try_from(v).map_err(|_| Fail::code(EARG))?;
                return Err(Fail {
                    iberr: EDVR,
                    count: Some(i64::from(libc::EINVAL)),
                    timo: false,
                });
            }
            _ => return Err(Fail::code(EARG)),
        },
        _ => match option {
            OPT_READDR => d.s.readdr = bool_opt(v),
            OPT_SPOLL_TIME => d.s.spoll_tmo = check_timeout_code(v)?,
            OPT_UN_ADDR => d.s.unaddr = bool_opt(v),
            _ => return Err(Fail::code(EARG)),
        },
    }
    Ok(None)
}
