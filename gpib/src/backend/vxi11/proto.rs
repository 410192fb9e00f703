//! VXI-11 (VXIbus TCP/IP Instrument Protocol, VXI-11 rev 1.0, and VXI-11.2 for
//! LAN/GPIB gateways): program numbers, procedures, flags, error codes and the XDR
//! structures, encoded and decoded both ways (the client here, the server in
//! `gpib::serve`, feature `serve`).

use crate::rpc::{XdrError, XdrReader, XdrWriter};

/// Core channel program.
pub const DEVICE_CORE: u32 = 0x0607AF;
/// Abort channel program.
pub const DEVICE_ASYNC: u32 = 0x0607B0;
/// Interrupt channel program (served by the client).
pub const DEVICE_INTR: u32 = 0x0607B1;
/// The one version of each.
pub const VERSION: u32 = 1;

/// Portmapper program, version and `GETPORT` procedure; TCP protocol number.
pub mod portmap {
    /// Program 100000.
    pub const PROG: u32 = 100_000;
    /// Version 2.
    pub const VERS: u32 = 2;
    /// NULL.
    pub const NULL: u32 = 0;
    /// GETPORT(mapping) -> port.
    pub const GETPORT: u32 = 3;
    /// IPPROTO_TCP.
    pub const TCP: u32 = 6;
    /// The well-known port.
    pub const PORT: u16 = 111;
}

/// Core channel procedure numbers.
pub mod procs {
    #![allow(missing_docs)]
    pub const CREATE_LINK: u32 = 10;
    pub const DEVICE_WRITE: u32 = 11;
    pub const DEVICE_READ: u32 = 12;
    pub const DEVICE_READSTB: u32 = 13;
    pub const DEVICE_TRIGGER: u32 = 14;
    pub const DEVICE_CLEAR: u32 = 15;
    pub const DEVICE_REMOTE: u32 = 16;
    pub const DEVICE_LOCAL: u32 = 17;
    pub const DEVICE_LOCK: u32 = 18;
    pub const DEVICE_UNLOCK: u32 = 19;
    pub const DEVICE_ENABLE_SRQ: u32 = 20;
    pub const DEVICE_DOCMD: u32 = 22;
    pub const DESTROY_LINK: u32 = 23;
    pub const CREATE_INTR_CHAN: u32 = 25;
    pub const DESTROY_INTR_CHAN: u32 = 26;
    /// On the abort channel.
    pub const DEVICE_ABORT: u32 = 1;
    /// On the interrupt channel (served by the client).
    pub const DEVICE_INTR_SRQ: u32 = 30;
}

/// Operation flags.
pub mod flags {
    /// Wait for a lock held by another link (up to `lock_timeout`).
    pub const WAITLOCK: u32 = 1;
    /// `device_write`: END (EOI) with the last byte.
    pub const END: u32 = 8;
    /// `device_read`: stop at `termChar`.
    pub const TERMCHRSET: u32 = 128;
}

/// `device_read` reasons.
pub mod reason {
    /// `requestSize` bytes were read.
    pub const REQCNT: u32 = 1;
    /// The termination character was read.
    pub const CHR: u32 = 2;
    /// END (EOI) came with the last byte.
    pub const END: u32 = 4;
}

/// `device_docmd` commands of VXI-11.2 (LAN/GPIB gateways).
pub mod docmd {
    /// Send command bytes with ATN.
    pub const SEND_COMMAND: i32 = 0x020000;
    /// Bus status (data: which item, 2 bytes).
    pub const BUS_STATUS: i32 = 0x020001;
    /// Set ATN.
    pub const ATN_CONTROL: i32 = 0x020002;
    /// Set REN.
    pub const REN_CONTROL: i32 = 0x020003;
    /// Pass control to another controller (data: its address, 4 bytes).
    pub const PASS_CONTROL: i32 = 0x020004;
    /// Set the controller's own bus address (data: the address, 4 bytes).
    pub const BUS_ADDRESS: i32 = 0x02000A;
    /// Pulse IFC.
    pub const IFC_CONTROL: i32 = 0x020010;
    /// Bus status item: REN.
    pub const STATUS_REMOTE: u16 = 1;
    /// Bus status item: SRQ.
    pub const STATUS_SRQ: u16 = 2;
    /// Bus status item: NDAC.
    pub const STATUS_NDAC: u16 = 3;
    /// Bus status item: the board is system controller.
    pub const STATUS_SYSTEM_CONTROLLER: u16 = 4;
    /// Bus status item: the board is controller in charge.
    pub const STATUS_CIC: u16 = 5;
    /// Bus status item: the board is addressed to talk.
    pub const STATUS_TALKER: u16 = 6;
    /// Bus status item: the board is addressed to listen.
    pub const STATUS_LISTENER: u16 = 7;
    /// Bus status item: the board's address.
    pub const STATUS_ADDRESS: u16 = 8;
}

/// Device_ErrorCode values.
pub mod err {
    #![allow(missing_docs)]
    pub const NONE: u32 = 0;
    pub const SYNTAX: u32 = 1;
    pub const NOT_ACCESSIBLE: u32 = 3;
    pub const INVALID_LINK: u32 = 4;
    pub const PARAMETER: u32 = 5;
    pub const NO_CHANNEL: u32 = 6;
    pub const NOT_SUPPORTED: u32 = 8;
    pub const OUT_OF_RESOURCES: u32 = 9;
    pub const LOCKED: u32 = 11;
    pub const NO_LOCK: u32 = 12;
    pub const IO_TIMEOUT: u32 = 15;
    pub const IO_ERROR: u32 = 17;
    pub const INVALID_ADDRESS: u32 = 21;
    pub const ABORT: u32 = 23;
    pub const CHANNEL_ESTABLISHED: u32 = 29;

    /// What a code means.
    pub fn describe(code: u32) -> &'static str {
        match code {
            NONE => "no error",
            SYNTAX => "syntax error",
            NOT_ACCESSIBLE => "device not accessible",
            INVALID_LINK => "invalid link identifier",
            PARAMETER => "parameter error",
            NO_CHANNEL => "channel not established",
            NOT_SUPPORTED => "operation not supported",
            OUT_OF_RESOURCES => "out of resources",
            LOCKED => "device locked by another link",
            NO_LOCK => "no lock held by this link",
            IO_TIMEOUT => "I/O timeout",
            IO_ERROR => "I/O error",
            INVALID_ADDRESS => "invalid address",
            ABORT => "abort",
            CHANNEL_ESTABLISHED => "channel already established",
            _ => "unknown error code",
        }
    }
}

/// Longest device name accepted in `create_link`.
pub const MAX_DEVICE_NAME: usize = 256;
/// Longest SRQ handle (NI-VISA sends 40 bytes).
pub const MAX_SRQ_HANDLE: usize = 40;

/// Create_LinkParms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateLink {
    /// Client id (informative).
    pub client_id: i32,
    /// Take the lock at once.
    pub lock_device: bool,
    /// Milliseconds to wait for that lock.
    pub lock_timeout: u32,
    /// Device name: `inst0`, `gpib0,22`, `gpib0,22,5`, `gpib,22`.
    pub device: Vec<u8>,
}

impl CreateLink {
    /// Encodes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = XdrWriter::new();
        w.i32(self.client_id)
            .bool(self.lock_device)
            .u32(self.lock_timeout)
            .opaque(&self.device);
        w.into_vec()
    }
    /// Decodes.
    pub fn decode(b: &[u8]) -> Result<Self, XdrError> {
        let mut r = XdrReader::new(b);
        Ok(Self {
            client_id: r.i32()?,
            lock_device: r.bool()?,
            lock_timeout: r.u32()?,
            device: r.string(MAX_DEVICE_NAME)?.to_vec(),
        })
    }
}

/// Create_LinkResp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateLinkResp {
    /// Error code.
    pub error: u32,
    /// Link id.
    pub lid: u32,
    /// Abort channel port.
    pub abort_port: u16,
    /// Largest `device_write` data the server takes.
    pub max_recv_size: u32,
}

impl CreateLinkResp {
    /// Encodes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = XdrWriter::new();
        w.u32(self.error)
            .u32(self.lid)
            .u32(u32::from(self.abort_port))
            .u32(self.max_recv_size);
        w.into_vec()
    }
    /// Decodes.
    pub fn decode(b: &[u8]) -> Result<Self, XdrError> {
        let mut r = XdrReader::new(b);
        Ok(Self {
            error: r.u32()?,
            lid: r.u32()?,
            abort_port: r.u32()? as u16,
            max_recv_size: r.u32()?,
        })
    }
}

/// Device_WriteParms (data borrowed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write<'a> {
    /// Link.
    pub lid: u32,
    /// I/O timeout, ms.
    pub io_timeout: u32,
    /// Lock timeout, ms.
    pub lock_timeout: u32,
    /// Flags ([`flags::END`], [`flags::WAITLOCK`]).
    pub flags: u32,
    /// The data.
    pub data: &'a [u8],
}

impl<'a> Write<'a> {
    /// Encodes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = XdrWriter::from_vec(Vec::with_capacity(24 + self.data.len()));
        w.u32(self.lid)
            .u32(self.io_timeout)
            .u32(self.lock_timeout)
            .u32(self.flags)
            .opaque(self.data);
        w.into_vec()
    }
    /// Decodes; `max` bounds the data.
    pub fn decode(b: &'a [u8], max: usize) -> Result<Self, XdrError> {
        let mut r = XdrReader::new(b);
        Ok(Self {
            lid: r.u32()?,
            io_timeout: r.u32()?,
            lock_timeout: r.u32()?,
            flags: r.u32()?,
            data: r.opaque(max)?,
        })
    }
}

/// Device_ReadParms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    /// Link.
    pub lid: u32,
    /// Most bytes wanted.
    pub request_size: u32,
    /// I/O timeout, ms.
    pub io_timeout: u32,
    /// Lock timeout, ms.
    pub lock_timeout: u32,
    /// Flags ([`flags::TERMCHRSET`], [`flags::WAITLOCK`]).
    pub flags: u32,
    /// The termination character.
    pub term_char: u8,
}

impl Read {
    /// Encodes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = XdrWriter::new();
        w.u32(self.lid)
            .u32(self.request_size)
            .u32(self.io_timeout)
            .u32(self.lock_timeout)
            .u32(self.flags)
            .u32(u32::from(self.term_char));
        w.into_vec()
    }
    /// Decodes.
    pub fn decode(b: &[u8]) -> Result<Self, XdrError> {
        let mut r = XdrReader::new(b);
        Ok(Self {
            lid: r.u32()?,
            request_size: r.u32()?,
            io_timeout: r.u32()?,
            lock_timeout: r.u32()?,
            flags: r.u32()?,
            term_char: r.u32()? as u8,
        })
    }
}

/// Device_ReadResp: (error, reason, data).
pub fn encode_read_resp(error: u32, reason: u32, data: &[u8]) -> Vec<u8> {
    let mut w = XdrWriter::from_vec(Vec::with_capacity(12 + data.len()));
    w.u32(error).u32(reason).opaque(data);
    w.into_vec()
}

/// Decodes a Device_ReadResp; `max` bounds the data.
pub fn decode_read_resp(b: &[u8], max: usize) -> Result<(u32, u32, &[u8]), XdrError> {
    let mut r = XdrReader::new(b);
    Ok((r.u32()?, r.u32()?, r.opaque(max)?))
}

/// Device_GenericParms (readstb, trigger, clear, remote, local).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generic {
    /// Link.
    pub lid: u32,
    /// Flags.
    pub flags: u32,
    /// Lock timeout, ms.
    pub lock_timeout: u32,
    /// I/O timeout, ms.
    pub io_timeout: u32,
}

impl Generic {
    /// Encodes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = XdrWriter::new();
        w.u32(self.lid)
            .u32(self.flags)
            .u32(self.lock_timeout)
            .u32(self.io_timeout);
        w.into_vec()
    }
    /// Decodes.
    pub fn decode(b: &[u8]) -> Result<Self, XdrError> {
        let mut r = XdrReader::new(b);
        Ok(Self {
            lid: r.u32()?,
            flags: r.u32()?,
            lock_timeout: r.u32()?,
            io_timeout: r.u32()?,
        })
    }
}

/// Device_LockParms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lock {
    /// Link.
    pub lid: u32,
    /// Flags ([`flags::WAITLOCK`]).
    pub flags: u32,
    /// Lock timeout, ms.
    pub lock_timeout: u32,
}

impl Lock {
    /// Encodes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = XdrWriter::new();
        w.u32(self.lid).u32(self.flags).u32(self.lock_timeout);
        w.into_vec()
    }
    /// Decodes.
    pub fn decode(b: &[u8]) -> Result<Self, XdrError> {
        let mut r = XdrReader::new(b);
        Ok(Self {
            lid: r.u32()?,
            flags: r.u32()?,
            lock_timeout: r.u32()?,
        })
    }
}

/// Device_EnableSrqParms: (link, enable, handle).
pub fn encode_enable_srq(lid: u32, enable: bool, handle: &[u8]) -> Vec<u8> {
    let mut w = XdrWriter::new();
    w.u32(lid).bool(enable).opaque(handle);
    w.into_vec()
}

/// Decodes Device_EnableSrqParms.
pub fn decode_enable_srq(b: &[u8]) -> Result<(u32, bool, Vec<u8>), XdrError> {
    let mut r = XdrReader::new(b);
    Ok((r.u32()?, r.bool()?, r.opaque(MAX_SRQ_HANDLE)?.to_vec()))
}

/// Device_RemoteFunc (create_intr_chan).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteFunc {
    /// IPv4 address of the client's interrupt server.
    pub host_addr: u32,
    /// Its port.
    pub host_port: u16,
    /// Program ([`DEVICE_INTR`]).
    pub prog: u32,
    /// Version.
    pub vers: u32,
    /// 0 = TCP, 1 = UDP.
    pub family: u32,
}

impl RemoteFunc {
    /// Encodes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = XdrWriter::new();
        w.u32(self.host_addr)
            .u32(u32::from(self.host_port))
            .u32(self.prog)
            .u32(self.vers)
            .u32(self.family);
        w.into_vec()
    }
    /// Decodes.
    pub fn decode(b: &[u8]) -> Result<Self, XdrError> {
        let mut r = XdrReader::new(b);
        Ok(Self {
            host_addr: r.u32()?,
            host_port: r.u32()? as u16,
            prog: r.u32()?,
            vers: r.u32()?,
            family: r.u32()?,
        })
    }
}

/// Device_DocmdParms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Docmd<'a> {
    /// Link.
    pub lid: u32,
    /// Flags.
    pub flags: u32,
    /// I/O timeout, ms.
    pub io_timeout: u32,
    /// Lock timeout, ms.
    pub lock_timeout: u32,
    /// Command ([`docmd`]).
    pub cmd: i32,
    /// Data in network order.
    pub network_order: bool,
    /// Size of each datum.
    pub datasize: i32,
    /// The data.
    pub data_in: &'a [u8],
}

impl<'a> Docmd<'a> {
    /// Encodes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = XdrWriter::new();
        w.u32(self.lid)
            .u32(self.flags)
            .u32(self.io_timeout)
            .u32(self.lock_timeout)
            .i32(self.cmd)
            .bool(self.network_order)
            .i32(self.datasize)
            .opaque(self.data_in);
        w.into_vec()
    }
    /// Decodes; `max` bounds the data.
    pub fn decode(b: &'a [u8], max: usize) -> Result<Self, XdrError> {
        let mut r = XdrReader::new(b);
        Ok(Self {
            lid: r.u32()?,
            flags: r.u32()?,
            io_timeout: r.u32()?,
            lock_timeout: r.u32()?,
            cmd: r.i32()?,
            network_order: r.bool()?,
            datasize: r.i32()?,
            data_in: r.opaque(max)?,
        })
    }
}

/// Two u32s: (error, value) — Device_WriteResp (size), Device_ReadStbResp (stb).
pub fn encode_error_value(error: u32, value: u32) -> Vec<u8> {
    let mut w = XdrWriter::new();
    w.u32(error).u32(value);
    w.into_vec()
}

/// Decodes (error, value).
pub fn decode_error_value(b: &[u8]) -> Result<(u32, u32), XdrError> {
    let mut r = XdrReader::new(b);
    Ok((r.u32()?, r.u32()?))
}

/// Device_Error.
pub fn encode_error(error: u32) -> Vec<u8> {
    let mut w = XdrWriter::new();
    w.u32(error);
    w.into_vec()
}

/// Decodes a Device_Error.
pub fn decode_error(b: &[u8]) -> Result<u32, XdrError> {
    XdrReader::new(b).u32()
}

/// Device_DocmdResp: (error, data_out).
pub fn encode_docmd_resp(error: u32, data: &[u8]) -> Vec<u8> {
    let mut w = XdrWriter::new();
    w.u32(error).opaque(data);
    w.into_vec()
}

/// Decodes a Device_DocmdResp.
pub fn decode_docmd_resp(b: &[u8], max: usize) -> Result<(u32, Vec<u8>), XdrError> {
    let mut r = XdrReader::new(b);
    Ok((r.u32()?, r.opaque(max)?.to_vec()))
}

/// What a device name in `create_link` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceName {
    /// The gateway's GPIB interface itself (`gpib0`).
    Interface,
    /// A device on it.
    Device(crate::Address),
}

/// Parses `inst0` (the default instrument, `default`), `gpib0`, `gpib0,N`,
/// `gpib0,N,S` and `gpib,N` (S: 0-30, or 96-126 as sent on the bus): names on the
/// gateway's only interface, `gpib0` ([`parse_link_name`] takes `gpib1,5` too).
pub fn parse_device_name(
    name: &str,
    default: Option<crate::Address>,
) -> Result<DeviceName, String> {
    match parse_link_name(name, default)? {
        (0, t) => Ok(t),
        (_, _) => Err(format!("{name:?}: only board gpib0 exists")),
    }
}

/// Parses a `create_link` device name on a gateway with several interfaces: `gpibB`
/// (interface B), `gpibB,N`, `gpibB,N,S`, `gpib,N` (board 0) and `inst0` (the default
/// instrument `default`, on board 0). Returns the board and what it names there.
pub fn parse_link_name(
    name: &str,
    default: Option<crate::Address>,
) -> Result<(u16, DeviceName), String> {
    let lower = name.trim().to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("inst") {
        if rest.is_empty() || rest.bytes().all(|b| b.is_ascii_digit()) {
            return default
                .map(|a| (0, DeviceName::Device(a)))
                .ok_or_else(|| format!("{name:?}: this gateway has no default instrument"));
        }
    }
    let Some(rest) = lower.strip_prefix("gpib") else {
        return Err(format!(
            "{name:?}: expected inst0, gpib0, gpib0,N or gpib0,N,S"
        ));
    };
    let mut parts = rest.split(',');
    let board = match parts.next().unwrap_or("") {
        "" => 0,
        b if b.len() <= 3 && b.bytes().all(|c| c.is_ascii_digit()) => b
            .parse::<u16>()
            .map_err(|_| format!("{name:?}: bad interface number"))?,
        b => return Err(format!("{name:?}: interface number {b:?} is not a number")),
    };
    let num = |s: Option<&str>, what: &str| -> Result<Option<u32>, String> {
        match s {
            None => Ok(None),
            Some(t) if !t.is_empty() && t.len() <= 3 && t.bytes().all(|b| b.is_ascii_digit()) => t
                .parse()
                .map(Some)
                .map_err(|_| format!("{name:?}: bad {what}")),
            Some(t) => Err(format!("{name:?}: {what} {t:?} is not a number")),
        }
    };
    let pad = num(parts.next(), "primary address")?;
    let sad = num(parts.next(), "secondary address")?;
    if parts.next().is_some() {
        return Err(format!("{name:?}: too many fields"));
    }
    let Some(pad) = pad else {
        return Ok((board, DeviceName::Interface));
    };
    let primary = crate::PrimaryAddress::try_from(pad).map_err(|e| format!("{name:?}: {e}"))?;
    let secondary = match sad {
        None => None,
        Some(s) => {
            let s = if (96..=126).contains(&s) { s - 96 } else { s };
            Some(crate::SecondaryAddress::try_from(s).map_err(|e| format!("{name:?}: {e}"))?)
        }
    };
    Ok((
        board,
        DeviceName::Device(crate::Address { primary, secondary }),
    ))
}

/// The VXI-11 device name for `address` on `gpib0`.
pub fn device_name(address: crate::Address) -> String {
    device_name_on(0, address)
}

/// The VXI-11 device name for `address` on the interface `gpib<board>`.
pub fn device_name_on(board: u16, address: crate::Address) -> String {
    match address.secondary {
        Some(s) => format!("gpib{board},{},{}", address.primary, s.get()),
        None => format!("gpib{board},{}", address.primary),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names() {
        let a = |p: u8| DeviceName::Device(crate::Address::try_from(p).unwrap());
        assert_eq!(parse_device_name("gpib0,22", None).unwrap(), a(22));
        assert_eq!(parse_device_name("GPIB,22", None).unwrap(), a(22));
        assert_eq!(
            parse_device_name("gpib0", None).unwrap(),
            DeviceName::Interface
        );
        let d = crate::Address::try_from(22u8).unwrap();
        assert_eq!(parse_device_name("inst0", Some(d)).unwrap(), a(22));
        assert!(parse_device_name("inst0", None).is_err());
        // Several interfaces: the board comes with the name.
        assert_eq!(parse_link_name("gpib1,5", None).unwrap(), (1, a(5)));
        assert_eq!(
            parse_link_name("GPIB12", None).unwrap(),
            (12, DeviceName::Interface)
        );
        assert_eq!(parse_link_name("inst0", Some(d)).unwrap(), (0, a(22)));
        for bad in ["gpibx,3", "gpib1234,3", "gpib-1,3", "gpib1,31", "gpib 1,3"] {
            assert!(parse_link_name(bad, None).is_err(), "{bad}");
        }
        let DeviceName::Device(x) = parse_device_name("gpib0,22,5", None).unwrap() else {
            panic!()
        };
        assert_eq!(x.secondary.unwrap().get(), 5);
        let DeviceName::Device(y) = parse_device_name("gpib0,22,101", None).unwrap() else {
            panic!()
        };
        assert_eq!(y, x);
        assert_eq!(device_name(x), "gpib0,22,5");
        assert_eq!(device_name_on(1, x), "gpib1,22,5");
        for bad in [
            "gpib1,3",
            "gpib0,31",
            "gpib0,x",
            "gpib0,1,2,3",
            "hislip0",
            "gpib0,22,31",
            "gpib0,99999",
        ] {
            assert!(parse_device_name(bad, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn structures_round_trip() {
        let c = CreateLink {
            client_id: 7,
            lock_device: false,
            lock_timeout: 10_000,
            device: b"gpib0,22".to_vec(),
        };
        assert_eq!(CreateLink::decode(&c.encode()).unwrap(), c);
        let w = Write {
            lid: 1,
            io_timeout: 2,
            lock_timeout: 3,
            flags: flags::END,
            data: b"*IDN?\n",
        };
        assert_eq!(Write::decode(&w.encode(), 100).unwrap(), w);
        assert!(Write::decode(&w.encode(), 3).is_err());
        let r = Read {
            lid: 1,
            request_size: 9,
            io_timeout: 2,
            lock_timeout: 3,
            flags: flags::TERMCHRSET,
            term_char: b'\n',
        };
        assert_eq!(Read::decode(&r.encode()).unwrap(), r);
        let wire = encode_read_resp(0, reason::END, b"abc");
        let (e, why, d) = decode_read_resp(&wire, 10).unwrap();
        assert_eq!((e, why, d), (0, reason::END, &b"abc"[..]));
        assert!(CreateLink::decode(&[0, 0, 0, 1]).is_err());
    }
}
