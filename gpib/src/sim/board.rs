//! [`SimBoard`]: one board of a simulated host, as a [`Backend`].

use std::time::Duration;

use crate::address::{Address, PrimaryAddress};
use crate::backend::{Backend, BoardId, ClockKind, Eos, ReadStatus};
use crate::error::Result;
use crate::sim::host::{SimHost, Spent};
use crate::status::BusLines;

/// One board of a [`SimHost`], usable wherever a backend is.
#[derive(Debug, Clone)]
pub struct SimBoard {
    host: SimHost,
    index: usize,
    address: PrimaryAddress,
}

impl SimBoard {
    pub(crate) fn new(host: SimHost, index: usize, address: PrimaryAddress) -> Self {
        Self {
            host,
            index,
            address,
        }
    }

    /// The host this board belongs to (for mounts, faults, transcripts).
    pub fn host(&self) -> &SimHost {
        &self.host
    }

    /// The board's index on its host.
    pub fn index(&self) -> usize {
        self.index
    }

    /// In real-time mode, sleeps for what the operation cost in virtual time (with the
    /// host unlocked, so other boards go on).
    fn settle(realtime: bool, spent: Spent) {
        if realtime && !spent.0.is_zero() {
            std::thread::sleep(spent.0);
        }
    }

    /// Runs one operation with the host locked. In real-time mode it then sleeps for
    /// the virtual time the operation took, whether it succeeded or failed (a read
    /// that times out takes its timeout).
    fn run<T>(
        &self,
        f: impl FnOnce(&mut crate::sim::host::HostInner) -> Result<(T, Spent)>,
    ) -> Result<T> {
        let (out, realtime, spent) = {
            let mut g = self.host.lock();
            let t0 = g.now;
            let out = f(&mut g);
            (out, g.realtime, Spent(g.now.saturating_sub(t0)))
        };
        Self::settle(realtime, spent);
        out.map(|(v, _)| v)
    }
}

impl Backend for SimBoard {
    fn name(&self) -> &str {
        "sim"
    }

    fn board_address(&self) -> PrimaryAddress {
        self.address
    }

    fn command(&mut self, bytes: &[u8]) -> Result<()> {
        let i = self.index;
        self.run(|h| h.command(i, bytes).map(|s| ((), s)))
    }

    fn write(&mut self, data: &[u8], eoi: bool) -> Result<usize> {
        let i = self.index;
        self.run(|h| h.write(i, data, eoi))
    }

    fn read(&mut self, buf: &mut [u8], eos: Option<Eos>) -> Result<ReadStatus> {
        let i = self.index;
        self.run(|h| h.read(i, buf, eos))
    }

    fn interface_clear(&mut self) -> Result<()> {
        let i = self.index;
        self.run(|h| Ok(((), h.interface_clear(i))))
    }

    fn remote_enable(&mut self, on: bool) -> Result<()> {
        let i = self.index;
        self.run(|h| Ok(((), h.remote_enable(i, on))))
    }

    fn set_timeout(&mut self, timeout: Duration) -> Result<Duration> {
        self.host.lock().set_timeout(self.index, timeout);
        Ok(timeout)
    }

    fn timeout(&self) -> Duration {
        self.host.lock().timeout(self.index)
    }

    fn now(&self) -> Duration {
        self.host.lock().now
    }

    fn clock_kind(&self) -> ClockKind {
        ClockKind::Virtual
    }

    fn delay(&mut self, duration: Duration) {
        let (spent, realtime) = {
            let mut g = self.host.lock();
            (g.delay(duration), g.realtime)
        };
        Self::settle(realtime, spent);
    }

    fn board_id(&self) -> Option<BoardId> {
        // The host's allocation identifies it while this handle keeps it alive.
        Some(BoardId::new("sim", self.host.identity(), self.index))
    }

    fn waits_in_wall_time(&self) -> bool {
        self.host.lock().realtime
    }

    fn modelled_host_cpu(&self) -> Option<Duration> {
        Some(self.host.lock().cpu)
    }

    fn srq(&mut self) -> Result<bool> {
        let i = self.index;
        Ok(self.host.lock().srq_line(i))
    }

    fn wait_srq(&mut self, timeout: Duration) -> Result<bool> {
        let i = self.index;
        self.run(|h| Ok(h.wait_srq(i, timeout)))
    }

    fn parallel_poll(&mut self) -> Result<u8> {
        let i = self.index;
        self.run(|h| Ok(h.parallel_poll(i)))
    }

    fn lines(&mut self) -> Result<BusLines> {
        let i = self.index;
        Ok(self.host.lock().lines(i))
    }

    fn listener_present(&mut self, address: Address) -> Result<bool> {
        let i = self.index;
        self.run(|h| Ok(h.listener_present(i, address)))
    }
}
