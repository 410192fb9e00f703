//! A driver that sends the instrument nothing: each timed transfer waits exactly
//! 1 µs a byte on the bus's clock, so that on the simulator (virtual time) every
//! figure the tool reports is known exactly. It keeps what was "written" and gives
//! it back.

use std::time::Duration;

use gpib::Device;

use super::{Driver, ProtocolKind};
use crate::error::Result;

/// Time a byte takes with the mock driver.
pub const MOCK_BYTE: Duration = Duration::from_micros(1);

/// The mock driver.
#[derive(Debug, Default)]
pub struct MockDriver {
    written: Vec<u8>,
}

fn take_time(dev: &Device, n: usize) {
    dev.bus()
        .delay(MOCK_BYTE.saturating_mul(u32::try_from(n).unwrap_or(u32::MAX)));
}

impl Driver for MockDriver {
    fn kind(&self) -> ProtocolKind {
        ProtocolKind::Mock
    }

    fn request_read(&mut self, _dev: &Device, _n: usize) -> Result<()> {
        Ok(())
    }

    fn read(&mut self, dev: &Device, buf: &mut [u8]) -> Result<usize> {
        take_time(dev, buf.len());
        Ok(buf.len())
    }

    fn read_in_calls(&mut self, dev: &Device, buf: &mut [u8], call: usize) -> Result<usize> {
        for piece in buf.chunks(call.max(1)) {
            take_time(dev, piece.len());
        }
        Ok(buf.len())
    }

    fn request_write(&mut self, _dev: &Device, _n: usize) -> Result<bool> {
        Ok(false)
    }

    fn write(&mut self, dev: &Device, data: &[u8]) -> Result<()> {
        take_time(dev, data.len());
        self.written.clear();
        self.written.extend_from_slice(data);
        Ok(())
    }

    fn transaction(&mut self, dev: &Device) -> Result<()> {
        take_time(dev, 8);
        Ok(())
    }

    fn read_back(&mut self, _dev: &Device, buf: &mut [u8]) -> Result<usize> {
        let n = buf.len().min(self.written.len());
        buf[..n].copy_from_slice(&self.written[..n]);
        Ok(n)
    }
}
