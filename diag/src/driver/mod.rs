//! How a timed transfer drives an instrument: the commands around the timed part,
//! one implementation per instrument protocol, and a mock whose transfers take an
//! exact time (for tests of the tool itself).

mod hp3565;
mod mock;
mod scpi;

pub use hp3565::Hp3565Driver;
pub use mock::MockDriver;
pub use scpi::ScpiDriver;

use gpib::Device;
use serde::Serialize;

use crate::error::Result;

/// Which protocol drives the instrument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProtocolKind {
    /// The HP3565's commands, as the 1988 io_test program sends them.
    Hp3565,
    /// IEEE 488.2 blocks (`BLOCK? n`, `DATA #...`).
    Scpi,
    /// No instrument commands: each transfer takes exactly 1 µs a byte of the bus's
    /// clock (for tests of the tool: exact figures on the simulator).
    Mock,
}

impl ProtocolKind {
    /// Its name in records: "hp3565", "scpi", "mock".
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolKind::Hp3565 => "hp3565",
            ProtocolKind::Scpi => "scpi",
            ProtocolKind::Mock => "mock",
        }
    }

    /// The driver for this protocol.
    pub fn driver(self) -> Box<dyn Driver> {
        match self {
            ProtocolKind::Hp3565 => Box::new(Hp3565Driver::default()),
            ProtocolKind::Scpi => Box::new(ScpiDriver::default()),
            ProtocolKind::Mock => Box::new(MockDriver::default()),
        }
    }
}

impl std::fmt::Display for ProtocolKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The untimed commands around a timed transfer, and the timed transfer itself.
pub trait Driver {
    /// Which protocol this is.
    fn kind(&self) -> ProtocolKind;

    /// Sets the instrument up for transfers of up to `max` bytes.
    fn prepare(&mut self, dev: &Device, max: usize) -> Result<()> {
        let _ = (dev, max);
        Ok(())
    }

    /// Asks the instrument to talk `n` bytes (untimed; the read follows after the
    /// settle time).
    fn request_read(&mut self, dev: &Device, n: usize) -> Result<()>;

    /// The timed read into `buf` (`buf.len()` bytes asked for): the count read.
    fn read(&mut self, dev: &Device, buf: &mut [u8]) -> Result<usize>;

    /// The timed read of the same `buf.len()` bytes as [`Driver::read`], in calls that
    /// each ask for at most `call` bytes, as a program reading with a buffer of that
    /// size does (ibrd's count, VISA's chunk_size, a VXI-11 device_read's
    /// requestSize): the count of data bytes read.
    fn read_in_calls(&mut self, dev: &Device, buf: &mut [u8], call: usize) -> Result<usize> {
        read_raw_in_calls(dev, buf, call)
    }

    /// After the timed read of `n` bytes (untimed).
    fn after_read(&mut self, dev: &Device, n: usize) -> Result<()> {
        let _ = (dev, n);
        Ok(())
    }

    /// Readies the instrument for a write of `n` bytes (untimed); true when the timed
    /// write waits the settle time first.
    fn request_write(&mut self, dev: &Device, n: usize) -> Result<bool>;

    /// The timed write of `data`.
    fn write(&mut self, dev: &Device, data: &[u8]) -> Result<()>;

    /// Reads back what the last write sent into `buf` (untimed): the count.
    fn read_back(&mut self, dev: &Device, buf: &mut [u8]) -> Result<usize>;

    /// One short transaction, as a program polling an instrument sends them back to
    /// back: a short query and its answer.
    fn transaction(&mut self, dev: &Device) -> Result<()>;
}

/// Reads into `buf` in calls of at most `call` bytes each until the message ends (END
/// or EOS) or `buf` is full: the count read.
pub fn read_raw_in_calls(dev: &Device, buf: &mut [u8], call: usize) -> Result<usize> {
    let call = call.max(1);
    let mut got = 0;
    while got < buf.len() {
        let upto = got.saturating_add(call).min(buf.len());
        let r = dev.read(&mut buf[got..upto])?;
        got += r.count;
        if r.is_end() || r.count == 0 {
            break;
        }
    }
    Ok(got)
}
