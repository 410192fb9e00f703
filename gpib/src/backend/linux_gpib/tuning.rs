//! [`BoardTuning`] on a linux-gpib board: `ibconfig` and `ibask` on the board
//! descriptor for T1 and autopoll (the driver's, shared by every descriptor of the
//! board), on the device descriptors for unaddressing.

use super::{calls, Call, LinuxGpibBoard};
use crate::abi;
use crate::backend::tuning::{BoardTuning, T1Delay};
use crate::error::{Error, Result};

impl LinuxGpibBoard {
    fn ask(&self, option: i32) -> Result<i32> {
        calls::ask(self.ud, option).map_err(|e| self.error("ibask", Call::Other, e, None))
    }

    fn configure(&self, ud: i32, option: i32, value: i32) -> Result<()> {
        calls::config(ud, option, value).map_err(|e| self.error("ibconfig", Call::Other, e, None))
    }
}

impl BoardTuning for LinuxGpibBoard {
    fn t1(&mut self) -> Result<T1Delay> {
        let code = self.ask(abi::OPT_TIMING)?;
        T1Delay::from_code(code)
            .ok_or_else(|| Error::Protocol(format!("ibask(IbaTIMING) answered {code}")))
    }

    /// `ibconfig(IbcTIMING)`, then the driver's own figure (`ibask(IbaTIMING)`): a NEC
    /// 7210 board asked for 350 ns settles 500 ns.
    fn set_t1(&mut self, t1: T1Delay) -> Result<T1Delay> {
        self.configure(self.ud, abi::OPT_TIMING, t1.code())?;
        self.t1()
    }

    /// `ibask(IbaAUTOPOLL)`: whether any user of the board has it on.
    fn autopoll(&mut self) -> Result<bool> {
        Ok(self.ask(abi::OPT_AUTOPOLL)? != 0)
    }

    fn set_autopoll(&mut self, on: bool) -> Result<bool> {
        self.configure(self.ud, abi::OPT_AUTOPOLL, i32::from(on))?;
        self.autopoll()
    }

    /// Always true: libgpib addresses the bus for every device call.
    fn readdress(&mut self) -> Result<bool> {
        Ok(true)
    }

    /// Nothing to change: libgpib addresses the bus for every device call whatever
    /// `IbcREADDR` says ("useless, included for compatibility only"), so this returns
    /// true either way.
    fn set_readdress(&mut self, _on: bool) -> Result<bool> {
        Ok(true)
    }

    fn unaddress(&mut self) -> Result<bool> {
        Ok(self.unaddress)
    }

    /// `ibconfig(IbcUnAddr)` on every device descriptor, now and when one opens.
    fn set_unaddress(&mut self, on: bool) -> Result<bool> {
        let uds: Vec<i32> = self.devices.iter().map(|d| d.ud).collect();
        for ud in uds {
            self.configure(ud, abi::OPT_UN_ADDR, i32::from(on))?;
        }
        self.unaddress = on;
        Ok(on)
    }
}
