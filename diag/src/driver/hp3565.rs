//! The HP3565 as the 1988 io_test program drives it: `ABRT;DISA;`, `NEW <words>;NEW?`,
//! then `RBLD <id>,<last>` (read) and `WBLD <id>,<n>,#I` + data with END (write).

use gpib::Device;

use super::{Driver, ProtocolKind};
use crate::error::Result;

/// The HP3565's block commands.
#[derive(Debug, Default)]
pub struct Hp3565Driver {
    block_id: usize,
}

/// Words holding `n` bytes (at least one).
fn words(n: usize) -> usize {
    n.div_ceil(2).max(1)
}

impl Hp3565Driver {
    fn request(&self, dev: &Device, n: usize) -> Result<()> {
        dev.write_str(&format!("RBLD {},{}", self.block_id, words(n) - 1))?;
        Ok(())
    }

    /// The odd byte of the last word stays behind: clear it.
    fn drop_odd_byte(dev: &Device, n: usize) -> Result<()> {
        if words(n) * 2 != n {
            dev.clear()?;
        }
        Ok(())
    }
}

impl Driver for Hp3565Driver {
    fn kind(&self) -> ProtocolKind {
        ProtocolKind::Hp3565
    }

    fn prepare(&mut self, dev: &Device, max: usize) -> Result<()> {
        dev.write_str("ABRT;DISA;")?;
        let answer = dev.query(&format!("NEW {};NEW?", words(max)))?;
        self.block_id = answer.trim().parse().map_err(|_| {
            gpib::Error::Protocol(format!("NEW? answered {answer:?}, not a block id"))
        })?;
        Ok(())
    }

    fn request_read(&mut self, dev: &Device, n: usize) -> Result<()> {
        self.request(dev, n)
    }

    fn read(&mut self, dev: &Device, buf: &mut [u8]) -> Result<usize> {
        Ok(dev.read(buf)?.count)
    }

    fn after_read(&mut self, dev: &Device, n: usize) -> Result<()> {
        Self::drop_odd_byte(dev, n)
    }

    fn request_write(&mut self, dev: &Device, n: usize) -> Result<bool> {
        dev.write_partial(format!("WBLD {},{},#I", self.block_id, n.div_ceil(2)).as_bytes())?;
        Ok(true)
    }

    fn write(&mut self, dev: &Device, data: &[u8]) -> Result<()> {
        dev.write(data)?;
        Ok(())
    }

    fn read_back(&mut self, dev: &Device, buf: &mut [u8]) -> Result<usize> {
        let n = buf.len();
        self.request(dev, n)?;
        let got = dev.read(buf)?.count;
        Self::drop_odd_byte(dev, n)?;
        Ok(got)
    }

    fn transaction(&mut self, dev: &Device) -> Result<()> {
        dev.query("NEW?")?;
        Ok(())
    }
}
