//! A SCPI instrument: `BLOCK? <n>` answered by a definite-length block read straight
//! into the buffer (read), `DATA #<d><n><data>` (write), `DATA?` to read it back.

use gpib::block::BlockFormat;
use gpib::Device;

use super::{Driver, ProtocolKind};
use crate::error::Result;

/// IEEE 488.2 blocks.
#[derive(Debug, Default)]
pub struct ScpiDriver;

impl Driver for ScpiDriver {
    fn kind(&self) -> ProtocolKind {
        ProtocolKind::Scpi
    }

    fn request_read(&mut self, dev: &Device, n: usize) -> Result<()> {
        dev.write_str(&format!("BLOCK? {n}"))?;
        Ok(())
    }

    fn read(&mut self, dev: &Device, buf: &mut [u8]) -> Result<usize> {
        Ok(dev.read_block_into(buf)?.len)
    }

    fn request_write(&mut self, _dev: &Device, _n: usize) -> Result<bool> {
        Ok(false)
    }

    fn write(&mut self, dev: &Device, data: &[u8]) -> Result<()> {
        dev.write_block(b"DATA ", BlockFormat::Definite, data)?;
        Ok(())
    }

    fn read_back(&mut self, dev: &Device, buf: &mut [u8]) -> Result<usize> {
        Ok(dev.query_block_into("DATA?", buf)?.len)
    }

    fn transaction(&mut self, dev: &Device) -> Result<()> {
        dev.query("*IDN?")?;
        Ok(())
    }
}
