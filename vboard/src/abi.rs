//! The kernel interface linux-gpib's libgpib speaks: the `ioctl` request numbers of
//! its `gpib_ioctl.h` and the layout of each argument, as `#[repr(C)]` structs, and
//! the numbers of `gpib_user.h` the driver's answers are made of. Written from the
//! interface's description (a 160 "magic", the command number, the argument's size and
//! direction), not copied.

use std::mem::size_of;

const MAGIC: u64 = 160;
const NONE: u64 = 0;
const WRITE: u64 = 1; // user to kernel (_IOW)
const READ: u64 = 2; // kernel to user (_IOR)

/// `_IOC(dir, MAGIC, nr, size)` as Linux lays it out on x86 and arm.
const fn ioc(dir: u64, nr: u64, size: usize) -> u64 {
    (dir << 30) | ((size as u64) << 16) | (MAGIC << 8) | nr
}
const fn iow<T>(nr: u64) -> u64 {
    ioc(WRITE, nr, size_of::<T>())
}
const fn ior<T>(nr: u64) -> u64 {
    ioc(READ, nr, size_of::<T>())
}
const fn iowr<T>(nr: u64) -> u64 {
    ioc(READ | WRITE, nr, size_of::<T>())
}

/// `read_write_ioctl_t`: IBRD, IBWRT, IBCMD.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadWrite {
    pub buffer_ptr: u64,
    pub requested_transfer_count: u32,
    pub completed_transfer_count: u32,
    pub end: i32,
    pub handle: i32,
}

/// `open_dev_ioctl_t`: the last field is a one-bit field (`is_board`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenDev {
    pub handle: u32,
    pub pad: u32,
    pub sad: i32,
    pub flags: u32,
}

/// `close_dev_ioctl_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CloseDev {
    pub handle: u32,
}

/// `serial_poll_ioctl_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SerialPoll {
    pub pad: u32,
    pub sad: i32,
    pub status_byte: u8,
}

/// `eos_ioctl_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct EosArg {
    pub eos: i32,
    pub eos_flags: i32,
}

/// `wait_ioctl_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Wait {
    pub handle: i32,
    pub wait_mask: i32,
    pub clear_mask: i32,
    pub set_mask: i32,
    pub ibsta: i32,
    pub pad: i32,
    pub sad: i32,
    pub usec_timeout: u32,
}

/// `online_ioctl_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Online {
    pub init_data_ptr: u64,
    pub init_data_length: i32,
    pub online: i32,
}

/// `spoll_bytes_ioctl_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SpollBytes {
    pub num_bytes: u32,
    pub pad: u32,
    pub sad: i32,
}

/// `board_info_ioctl_t`: the last word holds two one-bit fields (`ist`, then
/// `no_7_bit_eos`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct BoardInfo {
    pub pad: u32,
    pub sad: i32,
    pub parallel_poll_configuration: i32,
    pub autopolling: i32,
    pub is_system_controller: i32,
    pub t1_delay: u32,
    pub bits: u32,
}

/// `select_pci_ioctl_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SelectPci {
    pub pci_bus: i32,
    pub pci_slot: i32,
}

/// `ppoll_config_ioctl_t`: a byte (`config`), then two one-bit fields (`set_ist`,
/// `clear_ist`) in the same 32-bit unit, at bits 8 and 9.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct PpollConfig {
    pub raw: u32,
}

/// `pad_ioctl_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Pad {
    pub handle: u32,
    pub pad: u32,
}

/// `sad_ioctl_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Sad {
    pub handle: u32,
    pub sad: i32,
}

/// `board_type_ioctl_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct BoardType {
    pub name: [u8; 100],
}

/// `select_device_path_ioctl_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DevicePath {
    pub device_path: [u8; 0x1000],
}

/// `request_service2_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestService2 {
    pub status_byte: u8,
    pub new_reason_for_service: i32,
}

pub const IBRD: u64 = iowr::<ReadWrite>(100);
pub const IBWRT: u64 = iowr::<ReadWrite>(101);
pub const IBCMD: u64 = iowr::<ReadWrite>(102);
pub const IBOPENDEV: u64 = iowr::<OpenDev>(3);
pub const IBCLOSEDEV: u64 = iow::<CloseDev>(4);
pub const IBWAIT: u64 = iowr::<Wait>(5);
pub const IBRPP: u64 = iowr::<u8>(6);
pub const IBSIC: u64 = iow::<u32>(9);
pub const IBSRE: u64 = iow::<i32>(10);
pub const IBGTS: u64 = ioc(NONE, 11, 0);
pub const IBCAC: u64 = iow::<i32>(12);
pub const IBLINES: u64 = ior::<i16>(14);
pub const IBPAD: u64 = iow::<Pad>(15);
pub const IBSAD: u64 = iow::<Sad>(16);
pub const IBTMO: u64 = iow::<u32>(17);
pub const IBRSP: u64 = iowr::<SerialPoll>(18);
pub const IBEOS: u64 = iow::<EosArg>(19);
pub const IBRSV: u64 = iow::<u8>(20);
pub const CFCBASE: u64 = iow::<u64>(21);
pub const CFCIRQ: u64 = iow::<u32>(22);
pub const CFCDMA: u64 = iow::<u32>(23);
pub const CFCBOARDTYPE: u64 = iow::<BoardType>(24);
pub const IBMUTEX: u64 = iow::<i32>(26);
pub const IBSPOLL_BYTES: u64 = iowr::<SpollBytes>(27);
pub const IBPPC: u64 = iow::<PpollConfig>(28);
pub const IBBOARD_INFO: u64 = ior::<BoardInfo>(29);
pub const IBQUERY_BOARD_RSV: u64 = ior::<i32>(31);
pub const IBSELECT_PCI: u64 = iowr::<SelectPci>(32);
pub const IBEVENT: u64 = ior::<i16>(33);
pub const IBRSC: u64 = iow::<i32>(34);
pub const IB_T1_DELAY: u64 = iow::<u32>(35);
pub const IBLOC: u64 = ioc(NONE, 36, 0);
pub const IBAUTOSPOLL: u64 = iow::<i16>(38);
pub const IBONL: u64 = iow::<Online>(39);
pub const IBPP2_SET: u64 = iow::<i16>(40);
pub const IBPP2_GET: u64 = ior::<i16>(41);
pub const IBSELECT_DEVICE_PATH: u64 = iow::<DevicePath>(43);
pub const IBRSV2: u64 = iow::<RequestService2>(45);

/// Descriptors per open file (`GPIB_MAX_NUM_DESCRIPTORS`).
pub const MAX_DESCRIPTORS: usize = 0x1000;
/// Boards (minor numbers) a system has (`GPIB_MAX_NUM_BOARDS`).
pub const MAX_BOARDS: usize = 16;
/// The driver's bounce buffer: transfers are split into pieces of this size.
pub const BUFFER_LENGTH: usize = 0x4000;
/// Status bytes kept per device, and events per board, before the oldest is dropped.
pub const MAX_QUEUED: usize = 1024;

// Command bytes of the serial poll.
pub const UNL: u8 = 0x3f;
pub const UNT: u8 = 0x5f;
pub const SPE: u8 = 0x18;
pub const SPD: u8 = 0x19;
pub const fn mla(pad: u32) -> u8 {
    0x20 | (pad as u8 & 0x1f)
}
pub const fn mta(pad: u32) -> u8 {
    0x40 | (pad as u8 & 0x1f)
}
pub const fn msa(sad: i32) -> u8 {
    0x60 | (sad as u8 & 0x1f)
}

// EOS flags (`eos_flags`).
pub const REOS: i32 = 0x0400;
pub const BIN: i32 = 0x1000;
pub const EOS_MASK: i32 = 0x1c00;

/// The status byte's "request service" bit (RQS, MSS).
pub const RQS_BIT: u8 = 0x40;

#[cfg(test)]
mod tests {
    use super::*;

    /// The request numbers as a C compiler computes them from gpib_ioctl.h on x86-64
    /// (a few spot checks of direction, size and number).
    #[test]
    fn request_numbers_have_the_kernel_layout() {
        assert_eq!(size_of::<ReadWrite>(), 24);
        assert_eq!(IBRD, 0xc018_a064);
        assert_eq!(IBWAIT, 0xc020_a005);
        assert_eq!(IBGTS, 0x0000_a00b);
        assert_eq!(size_of::<BoardInfo>(), 28);
        assert_eq!(IBBOARD_INFO, 0x801c_a01d);
        assert_eq!(size_of::<BoardType>(), 100);
        assert_eq!(size_of::<PpollConfig>(), 4);
        assert_eq!(IBPPC, 0x4004_a01c);
        assert_eq!(IBONL, 0x4010_a027);
        assert_eq!(IBSELECT_DEVICE_PATH, 0x5000_a02b);
        assert_eq!(size_of::<RequestService2>(), 8);
        assert_eq!(size_of::<Online>(), 16);
    }
}
