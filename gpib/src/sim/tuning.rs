//! A simulated board's driver settings ([`BoardTuning`]): T1 is the board's timing
//! parameter, the others its driver's behaviour ([`crate::sim::behaviour`]), so each
//! changes what the operations after it cost.

use crate::backend::tuning::{BoardTuning, T1Delay};
use crate::error::Result;
use crate::sim::behaviour::{AddressingMode, BoardBehaviour};
use crate::sim::SimBoard;

impl SimBoard {
    fn behaviour(&self) -> Result<BoardBehaviour> {
        self.host().board_behaviour(self.index())
    }

    fn change_behaviour(&self, f: impl FnOnce(&mut BoardBehaviour)) -> Result<BoardBehaviour> {
        let mut b = self.behaviour()?;
        f(&mut b);
        self.host().set_board_behaviour(self.index(), b)?;
        Ok(b)
    }
}

impl BoardTuning for SimBoard {
    fn t1(&mut self) -> Result<T1Delay> {
        Ok(T1Delay::from_nanos(
            self.host().board_timing(self.index())?.t1_ns,
        ))
    }

    /// The simulated board settles exactly the time asked for.
    fn set_t1(&mut self, t1: T1Delay) -> Result<T1Delay> {
        let mut timing = self.host().board_timing(self.index())?;
        timing.t1_ns = t1.nanos();
        self.host().set_board_timing(self.index(), timing)?;
        self.t1()
    }

    fn autopoll(&mut self) -> Result<bool> {
        Ok(self.behaviour()?.autopoll)
    }

    fn set_autopoll(&mut self, on: bool) -> Result<bool> {
        Ok(self.change_behaviour(|b| b.autopoll = on)?.autopoll)
    }

    fn readdress(&mut self) -> Result<bool> {
        Ok(self.behaviour()?.addressing == AddressingMode::EveryCall)
    }

    fn set_readdress(&mut self, on: bool) -> Result<bool> {
        let mode = if on {
            AddressingMode::EveryCall
        } else {
            AddressingMode::Cached
        };
        Ok(self.change_behaviour(|b| b.addressing = mode)?.addressing == AddressingMode::EveryCall)
    }

    fn unaddress(&mut self) -> Result<bool> {
        Ok(self.behaviour()?.unaddress)
    }

    fn set_unaddress(&mut self, on: bool) -> Result<bool> {
        Ok(self.change_behaviour(|b| b.unaddress = on)?.unaddress)
    }
}
