//! One device's view of a locked transaction: the same calls whether the backend
//! addresses devices with raw command bytes or by itself (device-level backends).

use crate::address::Address;
use crate::backend::{device_level, Backend, DeviceLevel, Eos, ReadStatus, WriteReadError};
use crate::bus::Transaction;
use crate::error::Result;
use crate::message::InterfaceMessage;

/// A [`Transaction`] bound to one device.
///
/// On a raw backend every call is the transaction's own (addressing sent only when it
/// is not in place). On a device-level backend ([`Backend::device_level`]) the
/// addressing calls do nothing and each transfer goes to the backend's device-level
/// operation for this device.
pub(crate) struct Link<'t, 'a> {
    tx: &'t mut Transaction<'a>,
    device: Address,
    device_level: bool,
}

impl<'t, 'a> Link<'t, 'a> {
    pub(crate) fn new(tx: &'t mut Transaction<'a>, device: Address) -> Self {
        let device_level = tx.device_level();
        Self {
            tx,
            device,
            device_level,
        }
    }

    /// Addresses the device to listen (nothing to send on a device-level backend).
    pub(crate) fn address_to_device(&mut self, device: Address) -> Result<()> {
        self.device = device;
        if self.device_level {
            return Ok(());
        }
        self.tx.address_to_device(device)
    }

    /// Addresses the device to talk (nothing to send on a device-level backend).
    pub(crate) fn address_from_device(&mut self, device: Address) -> Result<()> {
        self.device = device;
        if self.device_level {
            return Ok(());
        }
        self.tx.address_from_device(device)
    }

    /// Addresses `device` to listen and writes to it (one backend call where it can).
    pub(crate) fn write_to(&mut self, device: Address, data: &[u8], eoi: bool) -> Result<usize> {
        self.device = device;
        if self.device_level {
            return self.level()?.device_write(device, data, eoi);
        }
        self.tx.write_to_device(device, data, eoi)
    }

    /// Addresses `device` to talk and reads from it (one backend call where it can).
    pub(crate) fn read_from(
        &mut self,
        device: Address,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        self.device = device;
        if self.device_level {
            return self.level()?.device_read(device, buf, eos);
        }
        self.tx.read_from_device(device, buf, eos)
    }

    /// Sends `data` (END on its last byte) to `device` and reads its answer: one
    /// backend call on a device-level backend
    /// ([`crate::backend::DeviceLevel::device_write_read`]), and on a raw one
    /// ([`Transaction::write_read_device`]) where the bus needs both addressings.
    pub(crate) fn write_read(
        &mut self,
        device: Address,
        data: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        self.device = device;
        if self.device_level {
            return self
                .level()
                .map_err(WriteReadError::Write)?
                .device_write_read(device, data, buf, eos);
        }
        self.tx.write_read_device(device, data, buf, eos)
    }

    /// Whether a raw backend's bus is unaddressed after every device transfer.
    pub(crate) fn unaddresses(&self) -> bool {
        !self.device_level && self.tx.unaddresses()
    }

    /// Writes to the device (already addressed on a raw backend).
    pub(crate) fn write(&mut self, data: &[u8], eoi: bool) -> Result<usize> {
        if self.device_level {
            let device = self.device;
            return self.level()?.device_write(device, data, eoi);
        }
        self.tx.write(data, eoi)
    }

    /// Reads from the device (already addressed on a raw backend).
    pub(crate) fn read(&mut self, buf: &mut [u8], eos: Option<Eos>) -> Result<ReadStatus> {
        if self.device_level {
            let device = self.device;
            return self.level()?.device_read(device, buf, eos);
        }
        self.tx.read(buf, eos)
    }

    /// SDC, GET or GTL to the device.
    pub(crate) fn addressed_command(&mut self, device: Address, m: InterfaceMessage) -> Result<()> {
        if self.device_level {
            let b = device_level::of(self.tx.backend())?;
            return match m {
                InterfaceMessage::SelectedDeviceClear => b.device_clear(device),
                InterfaceMessage::GroupExecuteTrigger => b.device_trigger(device),
                InterfaceMessage::GoToLocal => b.device_local(device),
                _ => Err(crate::Error::unsupported(
                    "this addressed command",
                    "a device-level backend",
                )),
            };
        }
        self.tx.addressed_command(device, m)
    }

    /// The device this link was last pointed at.
    pub(crate) fn device(&self) -> Address {
        self.device
    }

    /// The backend's device-level transfers (one call to the backend; [`Link::new`]
    /// found them there).
    fn level(&mut self) -> Result<&mut dyn DeviceLevel> {
        self.tx
            .backend()
            .device_level()
            .ok_or_else(not_device_level)
    }

    /// The backend's clock.
    pub(crate) fn now(&mut self) -> std::time::Duration {
        self.tx.backend().now()
    }

    /// The timeout in force.
    pub(crate) fn timeout(&self) -> crate::Timeout {
        self.tx.timeout()
    }

    /// Whether the backend is device-level.
    pub(crate) fn device_level(&self) -> bool {
        self.device_level
    }

    /// The backend itself.
    pub(crate) fn backend(&mut self) -> &mut dyn Backend {
        self.tx.backend()
    }
}

/// A device-level transfer on a backend that has none (never: [`Link::new`] checked).
#[cold]
fn not_device_level() -> crate::Error {
    crate::Error::unsupported("device-level operations", "this backend")
}
