//! The device-level capability: a backend that addresses devices itself (a Prologix
//! adapter, a VXI-11 or HiSLIP gateway, linux-gpib's device descriptors), reached
//! through [`Backend::device_level`](super::Backend::device_level).

use crate::address::Address;
use crate::error::Result;

use super::{Eos, ReadStatus, WriteReadError};

/// Transfers and addressed commands to one device, the backend doing the addressing.
///
/// When a backend returns this from [`Backend::device_level`](super::Backend::device_level),
/// [`crate::Device`] uses it for every transfer instead of addressing the bus with
/// command bytes. Each call's contract is the bus-level one of the matching
/// [`Backend`](super::Backend) call, for `device` only.
pub trait DeviceLevel {
    /// Sends `data` to `device` (addressed to listen, the board to talk), with EOI on
    /// the last byte when `eoi`; returns the count sent.
    ///
    /// Errors as [`Backend::write`](super::Backend::write); a timeout keeps its count.
    fn device_write(&mut self, device: Address, data: &[u8], eoi: bool) -> Result<usize>;

    /// Reads from `device` (addressed to talk, the board to listen) into `buf` until
    /// EOI, the EOS byte (when `eos` is given), or `buf` is full.
    ///
    /// Errors as [`Backend::read`](super::Backend::read): a timeout reports the bytes
    /// already in `buf`.
    fn device_read(
        &mut self,
        device: Address,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus>;

    /// Sends `data` to `device` with END on its last byte, then reads its answer into
    /// `buf` (a query), in one call where the backend can overlap the two: a VXI-11
    /// client sends both RPCs before it waits for either. The default makes the two
    /// calls.
    ///
    /// The error says which half failed: [`WriteReadError::Write`] (nothing was read)
    /// or [`WriteReadError::Read`] (its `transferred` bytes are at the start of `buf`).
    fn device_write_read(
        &mut self,
        device: Address,
        data: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        self.device_write(device, data, true)
            .map_err(WriteReadError::Write)?;
        self.device_read(device, buf, eos)
            .map_err(WriteReadError::Read)
    }

    /// SDC to one device: its input and output buffers are cleared.
    fn device_clear(&mut self, device: Address) -> Result<()>;

    /// GET to one device.
    fn device_trigger(&mut self, device: Address) -> Result<()>;

    /// Puts one device in remote: REN asserted and the device addressed to listen.
    fn device_remote(&mut self, device: Address) -> Result<()>;

    /// GTL to one device: it returns to local (front-panel) control.
    fn device_local(&mut self, device: Address) -> Result<()>;
}

/// `b`'s device-level operations; kind `Unsupported` (with the backend's name) when it
/// has none.
pub(crate) fn of(b: &mut dyn super::Backend) -> Result<&mut dyn DeviceLevel> {
    if b.device_level().is_none() {
        return Err(crate::Error::unsupported(
            "device-level operations",
            b.name(),
        ));
    }
    b.device_level()
        .ok_or_else(|| crate::Error::unsupported("device-level operations", "this backend"))
}
