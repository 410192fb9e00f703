//! The board as a [`Backend`], with [`DeviceLevel`] transfers on device descriptors
//! and [`BoardControl`].

use std::time::Duration;

use super::descriptor::{addr4882, lg_address, read_on, write_on};
use super::errors::{clamp_count, driver_error};
use super::{calls, Call, LinuxGpibBoard, NAME};
use crate::abi;
use crate::address::{Address, PrimaryAddress};
use crate::backend::{Backend, BoardControl, DeviceLevel, Eos, ReadStatus, WriteReadError};
use crate::error::{Error, ErrorKind, Result};
use crate::message::addressing;
use crate::status::{BusLines, StatusByte};
use crate::Timeout;

impl Backend for LinuxGpibBoard {
    fn name(&self) -> &str {
        NAME
    }

    fn board_address(&self) -> PrimaryAddress {
        self.address
    }

    fn command(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        calls::cmd(self.ud, bytes).map_err(|e| {
            let sent = clamp_count(e.count, bytes.len());
            match self.error("command", Call::Command, e, Some(sent)) {
                Error::Backend {
                    kind: ErrorKind::CommandTimeout,
                    message,
                    source,
                    ..
                } => Error::Backend {
                    kind: ErrorKind::CommandTimeout,
                    message: format!("{message}; {sent} of {} command byte(s) sent", bytes.len()),
                    transferred: Some(sent),
                    source,
                },
                other => other,
            }
        })
    }

    fn write(&mut self, data: &[u8], eoi: bool) -> Result<usize> {
        write_on(self.ud, &mut self.applied, data, eoi, self.timeout)
    }

    fn read(&mut self, buf: &mut [u8], eos: Option<Eos>) -> Result<ReadStatus> {
        read_on(self.ud, &mut self.applied, buf, eos, self.timeout)
    }

    fn tuning(&mut self) -> Option<&mut dyn crate::backend::tuning::BoardTuning> {
        Some(self)
    }

    fn interface_clear(&mut self) -> Result<()> {
        calls::sic(self.ud).map_err(|e| self.error("interface clear", Call::Other, e, None))
    }

    fn remote_enable(&mut self, on: bool) -> Result<()> {
        calls::sre(self.ud, on).map_err(|e| self.error("remote enable", Call::Other, e, None))
    }

    fn set_timeout(&mut self, timeout: Timeout) -> Result<Timeout> {
        let (code, applied) = (timeout.linux_gpib_code(), timeout.linux_gpib_step());
        calls::tmo(self.ud, code).map_err(|e| self.error("ibtmo", Call::Other, e, None))?;
        self.timeout = applied;
        self.applied.timeout = Some(applied);
        Ok(applied)
    }

    fn timeout(&self) -> Timeout {
        self.timeout
    }

    fn now(&self) -> Duration {
        self.opened.elapsed()
    }

    fn serial_poll(&mut self, device: Address) -> Result<StatusByte> {
        let stb = calls::read_status_byte(self.ud, addr4882(device))
            .map_err(|e| self.error("serial poll", Call::Read, e, None))?;
        Ok(StatusByte(stb))
    }

    fn srq(&mut self) -> Result<bool> {
        calls::test_srq(self.ud).map_err(|e| self.error("TestSRQ", Call::Other, e, None))
    }

    fn device_level(&mut self) -> Option<&mut dyn DeviceLevel> {
        Some(self)
    }

    fn board_control(&mut self) -> Option<&mut dyn BoardControl> {
        Some(self)
    }
}

impl DeviceLevel for LinuxGpibBoard {
    fn device_write(&mut self, device: Address, data: &[u8], eoi: bool) -> Result<usize> {
        let t = self.timeout;
        let (ud, applied) = self.device_descriptor(device)?;
        write_on(ud, applied, data, eoi, t)
    }

    fn device_read(
        &mut self,
        device: Address,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        let t = self.timeout;
        let (ud, applied) = self.device_descriptor(device)?;
        read_on(ud, applied, buf, eos, t)
    }

    /// A query: `ibwrt` then `ibrd` on the device's descriptor, found once.
    fn device_write_read(
        &mut self,
        device: Address,
        data: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        let t = self.timeout;
        let (ud, applied) = self
            .device_descriptor(device)
            .map_err(WriteReadError::Write)?;
        write_on(ud, applied, data, true, t).map_err(WriteReadError::Write)?;
        read_on(ud, applied, buf, eos, t).map_err(WriteReadError::Read)
    }

    fn device_clear(&mut self, device: Address) -> Result<()> {
        let t = self.timeout;
        let (ud, _) = self.device_descriptor(device)?;
        calls::clr(ud).map_err(|e| driver_error("ibclr", Call::Other, e, None, t))
    }

    fn device_trigger(&mut self, device: Address) -> Result<()> {
        let t = self.timeout;
        let (ud, _) = self.device_descriptor(device)?;
        calls::trg(ud).map_err(|e| driver_error("ibtrg", Call::Other, e, None, t))
    }

    /// REN, then the device addressed to listen with `ibcmd` (UNL, MTA board, MLA
    /// device \[MSA\]), as `EnableRemote` does for one device.
    fn device_remote(&mut self, device: Address) -> Result<()> {
        self.remote_enable(true)?;
        self.command(addressing::to_devices(self.address, &[device]).as_bytes())
    }

    fn device_local(&mut self, device: Address) -> Result<()> {
        let t = self.timeout;
        let (ud, _) = self.device_descriptor(device)?;
        calls::loc(ud).map_err(|e| driver_error("ibloc", Call::Other, e, None, t))
    }
}

impl BoardControl for LinuxGpibBoard {
    fn board_status(&mut self) -> Result<crate::status::BoardStatus> {
        Err(Error::unsupported("reading the board's status", NAME))
    }

    fn go_to_standby(&mut self) -> Result<()> {
        Err(Error::unsupported("going to standby", NAME))
    }

    fn take_control(&mut self) -> Result<()> {
        Err(Error::unsupported("taking control", NAME))
    }

    fn parallel_poll(&mut self) -> Result<u8> {
        calls::rpp(self.ud).map_err(|e| self.error("parallel poll", Call::Other, e, None))
    }

    fn lines(&mut self) -> Result<BusLines> {
        let l = calls::lines(self.ud).map_err(|e| self.error("iblines", Call::Other, e, None))?;
        Ok(bus_lines(l))
    }

    fn listener_present(&mut self, address: Address) -> Result<bool> {
        let (pad, sad) = lg_address(address);
        calls::ln(self.ud, pad, sad).map_err(|e| self.error("ibln", Call::Other, e, None))
    }
}

/// The lines of an `iblines` word: each `BusXXX` bit (high byte) counts only when its
/// `ValidXXX` bit (the same bit in the low byte) says the board can sense that line; a
/// line it cannot sense is reported as not asserted.
pub(super) fn bus_lines(l: i32) -> BusLines {
    let on = |bus: i32| l & bus != 0 && l & (bus >> 8) != 0;
    BusLines {
        dav: on(abi::BUS_DAV),
        nrfd: on(abi::BUS_NRFD),
        ndac: on(abi::BUS_NDAC),
        atn: on(abi::BUS_ATN),
        eoi: on(abi::BUS_EOI),
        srq: on(abi::BUS_SRQ),
        ifc: on(abi::BUS_IFC),
        ren: on(abi::BUS_REN),
    }
}
