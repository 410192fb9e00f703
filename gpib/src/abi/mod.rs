//! linux-gpib's C ABI in numbers (`include/gpib/ib.h`): `ibsta` bits, `iberr` codes,
//! timeout steps, EOS flags, `iblines` bits, `ibask`/`ibconfig` options; and the two
//! mappings between `iberr` and [`ErrorKind`], one the inverse of the other where both
//! are defined. The linux-gpib backend and the libgpib-compatible library both use it.
#![allow(missing_docs)] // the names are linux-gpib's, documented in its ib.h

use crate::error::ErrorKind;

// ibsta bits.
pub const DCAS: i32 = 0x0001;
pub const DTAS: i32 = 0x0002;
pub const LACS: i32 = 0x0004;
pub const TACS: i32 = 0x0008;
pub const ATN: i32 = 0x0010;
pub const CIC: i32 = 0x0020;
pub const REM: i32 = 0x0040;
pub const LOK: i32 = 0x0080;
pub const CMPL: i32 = 0x0100;
pub const EVENT: i32 = 0x0200;
pub const SPOLL: i32 = 0x0400;
pub const RQS: i32 = 0x0800;
pub const SRQI: i32 = 0x1000;
pub const END: i32 = 0x2000;
pub const TIMO: i32 = 0x4000;
pub const ERR: i32 = 0x8000;
/// Bits meaningful for a device descriptor.
pub const DEVICE_STATUS_MASK: i32 = ERR | TIMO | END | CMPL | RQS;
/// Bits meaningful for a board descriptor.
pub const BOARD_STATUS_MASK: i32 = 0xffff & !RQS;

// iberr codes.
pub const EDVR: i32 = 0;
pub const ECIC: i32 = 1;
pub const ENOL: i32 = 2;
pub const EADR: i32 = 3;
pub const EARG: i32 = 4;
pub const ESAC: i32 = 5;
pub const EABO: i32 = 6;
pub const ENEB: i32 = 7;
pub const EDMA: i32 = 8;
pub const EOIP: i32 = 10;
pub const ECAP: i32 = 11;
pub const EFSO: i32 = 12;
pub const EBUS: i32 = 14;
pub const ESTB: i32 = 15;
pub const ESRQ: i32 = 16;
pub const ECNF: i32 = 17;
pub const ETAB: i32 = 20;

/// errno values reported in ibcntl with EDVR/EFSO.
pub const EINVAL: i64 = 22;
pub const EIO: i64 = 5;

/// Timeout codes TNONE (0) ... T1000s (17) and the timeout each stands for (the
/// conversion is [`crate::Timeout::from_linux_gpib_code`] and
/// [`crate::Timeout::linux_gpib_code`]).
pub use crate::timeout::TIMEOUT_STEPS as TIMEOUTS;
pub const T1S: i32 = 11;

// EOS flags.
pub const REOS: i32 = 0x0400;
pub const XEOS: i32 = 0x0800;
pub const BIN: i32 = 0x1000;
pub const EOS_MASK: i32 = 0x1c00;

// iblines bits.
pub const VALID_ALL: i32 = 0xff;
pub const BUS_DAV: i32 = 0x0100;
pub const BUS_NDAC: i32 = 0x0200;
pub const BUS_NRFD: i32 = 0x0400;
pub const BUS_IFC: i32 = 0x0800;
pub const BUS_REN: i32 = 0x1000;
pub const BUS_SRQ: i32 = 0x2000;
pub const BUS_ATN: i32 = 0x4000;
pub const BUS_EOI: i32 = 0x8000;

/// `iblines`' status word for `lines`: every line valid, and the bit of each asserted
/// one (what libgpib's `IBLINES` returns).
pub fn iblines_word(lines: &crate::status::BusLines) -> i16 {
    let mut v = VALID_ALL;
    for (on, bit) in [
        (lines.dav, BUS_DAV),
        (lines.ndac, BUS_NDAC),
        (lines.nrfd, BUS_NRFD),
        (lines.ifc, BUS_IFC),
        (lines.ren, BUS_REN),
        (lines.srq, BUS_SRQ),
        (lines.atn, BUS_ATN),
        (lines.eoi, BUS_EOI),
    ] {
        if on {
            v |= bit;
        }
    }
    v as u16 as i16
}

// ibask / ibconfig options.
pub const OPT_PAD: i32 = 0x1;
pub const OPT_SAD: i32 = 0x2;
pub const OPT_TMO: i32 = 0x3;
pub const OPT_EOT: i32 = 0x4;
pub const OPT_PPC: i32 = 0x5;
pub const OPT_READDR: i32 = 0x6;
pub const OPT_AUTOPOLL: i32 = 0x7;
pub const OPT_CICPROT: i32 = 0x8;
pub const OPT_IRQ: i32 = 0x9;
pub const OPT_SC: i32 = 0xa;
pub const OPT_SRE: i32 = 0xb;
pub const OPT_EOS_RD: i32 = 0xc;
pub const OPT_EOS_WRT: i32 = 0xd;
pub const OPT_EOS_CMP: i32 = 0xe;
pub const OPT_EOS_CHAR: i32 = 0xf;
pub const OPT_PP2: i32 = 0x10;
pub const OPT_TIMING: i32 = 0x11;
pub const OPT_DMA: i32 = 0x12;
pub const OPT_READ_ADJUST: i32 = 0x13;
pub const OPT_WRITE_ADJUST: i32 = 0x14;
pub const OPT_EVENT_QUEUE: i32 = 0x15;
pub const OPT_SPOLL_BIT: i32 = 0x16;
pub const OPT_SEND_LLO: i32 = 0x17;
pub const OPT_SPOLL_TIME: i32 = 0x18;
pub const OPT_PPOLL_TIME: i32 = 0x19;
pub const OPT_END_BIT_IS_NORMAL: i32 = 0x1a;
pub const OPT_UN_ADDR: i32 = 0x1b;
pub const OPT_HS_CABLE_LENGTH: i32 = 0x1f;
pub const OPT_IST: i32 = 0x20;
pub const OPT_RSV: i32 = 0x21;
pub const OPT_BNA: i32 = 0x200;
pub const OPT_7BIT_EOS: i32 = 0x1000;

// T1 delays (IbaTIMING).
pub const T1_DELAY_2000NS: i32 = 1;
pub const T1_DELAY_500NS: i32 = 2;
pub const T1_DELAY_350NS: i32 = 3;

// IEEE 488.2 addressing.
pub const NOADDR: u16 = 0xffff;
pub const STOPEND: i32 = 0x100;
pub const NULLEND: i32 = 0;
pub const DABEND: i32 = 1;
pub const NLEND: i32 = 2;
pub const NO_SAD: i32 = 0;
pub const ALL_SAD: i32 = -1;

/// linux-gpib's `iberr` codes, by name (for messages).
pub const IBERR_NAMES: &[(i32, &str, &str)] = &[
    (0, "EDVR", "system error"),
    (1, "ECIC", "the board is not controller-in-charge"),
    (2, "ENOL", "no listeners"),
    (3, "EADR", "the board is not addressed correctly"),
    (4, "EARG", "invalid argument"),
    (5, "ESAC", "the board is not system controller"),
    (6, "EABO", "I/O aborted"),
    (7, "ENEB", "no such board"),
    (8, "EDMA", "DMA error"),
    (10, "EOIP", "asynchronous I/O in progress"),
    (11, "ECAP", "capability missing or disabled"),
    (12, "EFSO", "file system error"),
    (14, "EBUS", "command bytes not accepted (bus error)"),
    (15, "ESTB", "serial poll status bytes lost"),
    (16, "ESRQ", "SRQ stuck on"),
    (17, "ECNF", "configuration file error"),
    (20, "ETAB", "table overflow"),
];

/// The library's [`ErrorKind`] for linux-gpib error `iberr` (its `iberr` code) raised
/// by a call of kind `call`, with `timed_out` when `TIMO` was set in `ibsta`.
///
/// | iberr | kind |
/// |---|---|
/// | EDVR, ENEB, ECNF | [`ErrorKind::BackendUnavailable`] |
/// | ECIC, ESAC | [`ErrorKind::NotControllerInCharge`] |
/// | ENOL | [`ErrorKind::NoListener`] |
/// | EADR | [`ErrorKind::NotAddressed`] |
/// | EARG, ETAB | [`ErrorKind::InvalidArgument`] |
/// | EABO | [`ErrorKind::Timeout`] ([`ErrorKind::CommandTimeout`] for `ibcmd`); [`ErrorKind::Io`] when aborted without `TIMO` |
/// | EBUS | [`ErrorKind::CommandTimeout`] for `ibcmd`, else [`ErrorKind::BusConflict`] |
/// | ECAP | [`ErrorKind::Unsupported`] |
/// | ESRQ | [`ErrorKind::SrqStuck`] |
/// | EDMA, EOIP, EFSO, ESTB, others | [`ErrorKind::Io`] |
pub fn kind_for_iberr(iberr: i32, call: Call, timed_out: bool) -> ErrorKind {
    match iberr {
        0 | 7 | 17 => ErrorKind::BackendUnavailable,
        1 | 5 => ErrorKind::NotControllerInCharge,
        2 => ErrorKind::NoListener,
        EADR => ErrorKind::NotAddressed,
        4 | 20 => ErrorKind::InvalidArgument,
        6 if call == Call::Command => ErrorKind::CommandTimeout,
        6 if timed_out || matches!(call, Call::Read | Call::Write) => ErrorKind::Timeout,
        6 => ErrorKind::Io,
        14 if call == Call::Command => ErrorKind::CommandTimeout,
        14 => ErrorKind::BusConflict,
        11 => ErrorKind::Unsupported,
        16 => ErrorKind::SrqStuck,
        _ => ErrorKind::Io,
    }
}

/// Which kind of linux-gpib call failed (the same code means different things for
/// command bytes and data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `ibcmd`: command bytes with ATN.
    Command,
    /// `ibwrt`: data bytes out.
    Write,
    /// `ibrd`: data bytes in.
    Read,
    /// Any other call.
    Other,
}

/// The `iberr` (and whether `TIMO` goes with it) libgpib reports for an error of
/// `kind` raised by a call of kind `call`: the inverse of [`kind_for_iberr`].
pub fn iberr_for(kind: ErrorKind, _call: Call) -> (i32, bool) {
    match kind {
        ErrorKind::Timeout => (EABO, true),
        ErrorKind::CommandTimeout => (EBUS, true),
        ErrorKind::NoListener => (ENOL, false),
        ErrorKind::NotControllerInCharge => (ECIC, false),
        ErrorKind::NotAddressed => (EADR, false),
        ErrorKind::SrqStuck => (ESRQ, false),
        ErrorKind::BusConflict => (EBUS, false),
        ErrorKind::InvalidArgument | ErrorKind::InvalidAddress | ErrorKind::InvalidResource => {
            (EARG, false)
        }
        ErrorKind::Unsupported => (ECAP, false),
        ErrorKind::BackendUnavailable => (ENEB, false),
        // A system-level failure (the errno goes in ibcntl).
        _ => (EDVR, false),
    }
}

/// The text of linux-gpib's `gpib_error_string` for `iberr`.
pub fn error_text(iberr: i32) -> &'static std::ffi::CStr {
    match iberr {
        EDVR => c"A system call has failed.",
        ECIC => c"Your interface needs to be controller-in-charge, but is not.",
        ENOL => c"You have attempted to write data or command bytes, but there are no listeners currently addressed.",
        EADR => c"The interface board has failed to address itself properly before starting an io operation.",
        EARG => c"One or more arguments to the function call were invalid.",
        ESAC => c"The interface board needs to be system controller, but is not.",
        EABO => c"A read or write of data bytes has been aborted, possibly due to a timeout or reception of a device clear command.",
        ENEB => c"The GPIB interface board does not exist, its driver is not loaded, or it is not configured properly.",
        EDMA => c"Not used (DMA error), included for compatibility purposes.",
        EOIP => c"Function call can not proceed due to an asynchronous IO operation (ibrda(), ibwrta(), or ibcmda()) in progress.",
        ECAP => c"Incapable of executing function call, due the GPIB board lacking the capability, or the capability being disabled in software.",
        EFSO => c"File system error.",
        EBUS => c"An attempt to write command bytes to the bus has timed out.",
        ESTB => c"One or more serial poll status bytes have been lost.",
        ESRQ => c"The serial poll request service line is stuck on.",
        ECNF => c"Configuration file error.",
        ETAB => c"Table problem (ibevent, FindLstn or FindRQS).",
        _ => c"Unknown error code.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_masks_match_the_header() {
        assert_eq!(DEVICE_STATUS_MASK, 0xe900);
        assert_eq!(BOARD_STATUS_MASK, 0xf7ff);
        assert_eq!(ERR | TIMO | END | SRQI | RQS | SPOLL | EVENT | CMPL, 0xff00);
        assert_eq!(LOK | REM | CIC | ATN | TACS | LACS | DTAS | DCAS, 0x00ff);
    }

    #[test]
    fn every_code_has_a_text() {
        for code in [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 14, 15, 16, 17, 20] {
            assert_ne!(error_text(code), c"Unknown error code.", "{code}");
        }
        assert_eq!(error_text(99), c"Unknown error code.");
    }

    #[test]
    fn iberr_and_kinds_map_both_ways() {
        use ErrorKind::*;
        // Every kind a backend reports comes back as itself through its iberr.
        for (kind, call) in [
            (Timeout, Call::Read),
            (Timeout, Call::Write),
            (CommandTimeout, Call::Command),
            (NoListener, Call::Write),
            (NotControllerInCharge, Call::Other),
            (NotAddressed, Call::Read),
            (SrqStuck, Call::Other),
            (BusConflict, Call::Read),
            (InvalidArgument, Call::Other),
            (Unsupported, Call::Other),
            (BackendUnavailable, Call::Other),
        ] {
            let (iberr, timo) = iberr_for(kind, call);
            assert_eq!(
                kind_for_iberr(iberr, call, timo),
                kind,
                "{kind:?} -> {iberr}"
            );
        }
        // And every iberr that names a kind comes back as itself.
        for (iberr, call) in [
            (ENOL, Call::Write),
            (EADR, Call::Read),
            (EABO, Call::Read),
            (ECAP, Call::Other),
            (ESRQ, Call::Other),
            (ENEB, Call::Other),
            (ECIC, Call::Other),
            (EARG, Call::Other),
            (EBUS, Call::Read),
        ] {
            let kind = kind_for_iberr(iberr, call, iberr == EABO);
            assert_eq!(iberr_for(kind, call).0, iberr, "{iberr} -> {kind:?}");
        }
        for (code, name, _) in IBERR_NAMES {
            assert!(!error_text(*code).to_bytes().is_empty(), "{name}");
        }
    }
}
