//! A SCPI instrument: `BLOCK? <n>` answered by a definite-length block read straight
//! into the buffer (read), `DATA #<d><n><data>` (write), `DATA?` to read it back.

use gpib::block::BlockFormat;
use gpib::Device;

use super::{Driver, ProtocolKind};
use crate::error::Result;

/// IEEE 488.2 blocks.
#[derive(Debug, Default)]
pub struct ScpiDriver {
    /// The whole response (header, body, terminator) of a read in calls.
    scratch: Vec<u8>,
}

/// Bytes around a definite block's body: `#9` and nine digits, and a newline.
const BLOCK_FRAME: usize = 12;

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

    fn read_in_calls(&mut self, dev: &Device, buf: &mut [u8], call: usize) -> Result<usize> {
        let whole = buf.len().saturating_add(BLOCK_FRAME);
        self.scratch.resize(whole, 0);
        let got = super::read_raw_in_calls(dev, &mut self.scratch, call)?;
        let body = gpib::block::decode(&self.scratch[..got], true)?;
        let n = body.len().min(buf.len());
        buf[..n].copy_from_slice(&body[..n]);
        Ok(body.len())
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
