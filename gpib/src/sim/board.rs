//! [`SimBoard`]: one board of a simulated host, as a [`Backend`].

use std::sync::MutexGuard;
use std::time::Duration;

use crate::address::{Address, PrimaryAddress};
use crate::backend::tuning::BoardTuning;
use crate::backend::{
    Backend, BoardControl, ClockKind, Eos, ReadStatus, Turns, VirtualTime, WriteReadError,
};
use crate::error::{Error, Result};
use crate::sim::host::SimHost;
use crate::sim::ops::SrqWait;
use crate::sim::realtime;
use crate::sim::world::World;
use crate::status::{BoardStatus, BusLines};

/// One board of a [`SimHost`], usable wherever a backend is.
#[derive(Debug, Clone)]
pub struct SimBoard {
    host: SimHost,
    index: usize,
    address: PrimaryAddress,
}

impl SimHost {
    /// A backend for board `index`. A [`crate::Bus`] made of it is a bus of its own (its
    /// own lock and addressing state): make one and clone it, or open the host's boards
    /// through [`crate::ResourceManager::with_host`], which keeps one `Bus` per board.
    pub fn board(&self, index: usize) -> Result<SimBoard> {
        let g = self.lock();
        let Some(address) = g.boards.get(index).map(|b| b.address) else {
            return Err(Error::BackendUnavailable {
                backend: "sim".into(),
                hint: format!(
                    "the simulated host {:?} has {} board(s); board {index} does not exist",
                    g.name,
                    g.boards.len()
                ),
            });
        };
        drop(g);
        Ok(SimBoard {
            host: self.clone(),
            index,
            address,
        })
    }

    /// A backend for the board named `name`.
    pub fn board_named(&self, name: &str) -> Result<SimBoard> {
        let index = {
            let g = self.lock();
            g.boards
                .iter()
                .position(|b| b.name == name)
                .ok_or_else(|| Error::BackendUnavailable {
                    backend: "sim".into(),
                    hint: format!(
                        "no board named {name:?}; boards: {}",
                        g.boards
                            .iter()
                            .map(|b| b.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                })?
        };
        self.board(index)
    }
}

impl SimBoard {
    /// The host this board belongs to (for mounts, faults, transcripts).
    pub fn host(&self) -> &SimHost {
        &self.host
    }

    /// The board's index on its host.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Gives the board primary address `pad`, as a driver does when told a new one
    /// (linux-gpib's `IBPAD` on a board that is online): the addressing it answers to
    /// changes with it.
    pub fn set_address(&mut self, pad: PrimaryAddress) {
        self.run(|w, i| {
            w.boards[i].address = pad;
            w.boards[i].addressing.set_me(pad);
        });
        self.address = pad;
    }

    /// Runs one operation with the host locked, when it is the calling thread's turn.
    /// In real-time mode the virtual time the operation took then passes as wall time,
    /// whether it succeeded or failed (a read that times out takes its timeout), and the
    /// host CPU the model charged it is spent on the calling thread ([`realtime::pass`]).
    ///
    /// The turn is taken and given back under the one lock the operation holds.
    fn run<T>(&self, f: impl FnOnce(&mut World, usize) -> T) -> T {
        // With no participant registered the calling thread takes no turns and no one
        // waits for one: the lock alone (a thread that is one keeps the count up).
        let turns = self.host.has_participants();
        let g = if turns {
            self.host.take_turn(self.host.lock()).0
        } else {
            self.host.lock()
        };
        self.run_locked(g, turns, f)
    }

    /// [`SimBoard::run`] from the point where the host is locked (and the turn taken,
    /// when `turns`).
    fn run_locked<T>(
        &self,
        mut g: MutexGuard<'_, World>,
        turns: bool,
        f: impl FnOnce(&mut World, usize) -> T,
    ) -> T {
        if !g.realtime {
            // Virtual time only (the common case): the operation, and the turn back.
            let out = f(&mut g, self.index);
            if turns {
                self.host.give_turn(g);
            }
            return out;
        }
        // Real time: the caller's time away since its last operation passes in the
        // model, and the operation's modelled time and CPU pass on the wall clock.
        if let Some(idle) = realtime::idle_since_last() {
            g.delay(idle);
        }
        let (t0, cpu0, wall0) = (g.callers.now(), g.cpus.busy(), std::time::Instant::now());
        let out = f(&mut g, self.index);
        let spent = g.callers.now().saturating_sub(t0);
        let cpu = g.cpus.busy().saturating_sub(cpu0);
        if turns {
            self.host.give_turn(g);
        } else {
            drop(g);
        }
        realtime::pass(wall0, spent, cpu);
        realtime::mark_end();
        out
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
        self.run(|w, i| w.command(i, bytes))
    }

    fn write(&mut self, data: &[u8], eoi: bool) -> Result<usize> {
        self.run(|w, i| w.write(i, data, eoi))
    }

    fn read(&mut self, buf: &mut [u8], eos: Option<Eos>) -> Result<ReadStatus> {
        self.run(|w, i| w.read(i, buf, eos))
    }

    /// The addressing and the write under one lock: two bus operations, one call.
    fn command_then_write(&mut self, commands: &[u8], data: &[u8], eoi: bool) -> Result<usize> {
        self.run(|w, i| w.command_then_write(i, commands, data, eoi))
    }

    /// The addressing and the read under one lock.
    fn command_then_read(
        &mut self,
        commands: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        self.run(|w, i| w.command_then_read(i, commands, buf, eos))
    }

    /// The query's two halves under one lock, when no participant takes turns (they
    /// may run between the halves).
    fn command_write_command_read(
        &mut self,
        listen: &[u8],
        data: &[u8],
        talk: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        if self.host.has_participants() {
            self.command_then_write(listen, data, true)
                .map_err(WriteReadError::Write)?;
            return self.run(|w, i| w.command_then_read_apart(i, talk, buf, eos));
        }
        // Virtual time, the common case: the answer made in the caller's place. Through
        // `run` it came back through a copy whose loads could not be served from the
        // stores just made (perf: 3 % of a query), and the query ran 6 % slower.
        let mut g = self.host.lock();
        if !g.realtime {
            return g.command_write_command_read(self.index, listen, data, talk, buf, eos);
        }
        self.run_locked(g, false, |w, i| {
            w.command_write_command_read(i, listen, data, talk, buf, eos)
        })
    }

    fn interface_clear(&mut self) -> Result<()> {
        self.run(|w, i| w.interface_clear(i));
        Ok(())
    }

    fn remote_enable(&mut self, on: bool) -> Result<()> {
        self.run(|w, i| w.remote_enable(i, on));
        Ok(())
    }

    fn set_timeout(&mut self, timeout: crate::Timeout) -> Result<crate::Timeout> {
        self.host.lock().boards[self.index].timeout = timeout;
        Ok(timeout)
    }

    fn timeout(&self) -> crate::Timeout {
        self.host.lock().boards[self.index].timeout
    }

    fn now(&self) -> Duration {
        self.host.lock().callers.now()
    }

    fn tuning(&mut self) -> Option<&mut dyn BoardTuning> {
        Some(self)
    }

    fn srq(&mut self) -> Result<bool> {
        Ok(self.run(|w, i| {
            let t = w.begin();
            w.srq_line(i, t)
        }))
    }

    /// Advances to the next SRQ (an instrument's timer may raise it) or to the
    /// timeout, whichever comes first. Participants wait in turns: the others' earlier
    /// operations (which may raise SRQ) happen first.
    fn wait_srq(&mut self, timeout: crate::Timeout) -> Result<bool> {
        let wait = timeout.duration().unwrap_or(Duration::MAX);
        let deadline = self.run(|w, _| w.callers.now()).saturating_add(wait);
        loop {
            if let Some(srq) = self.wait_srq_step(deadline)? {
                return Ok(srq);
            }
        }
    }

    fn board_control(&mut self) -> Option<&mut dyn BoardControl> {
        Some(self)
    }

    fn virtual_time(&mut self) -> Option<&mut dyn VirtualTime> {
        Some(self)
    }
}

impl BoardControl for SimBoard {
    fn parallel_poll(&mut self) -> Result<u8> {
        Ok(self.run(|w, i| w.parallel_poll(i)))
    }

    fn lines(&mut self) -> Result<BusLines> {
        Ok(self.run(|w, i| w.lines(i)))
    }

    fn board_status(&mut self) -> Result<BoardStatus> {
        Ok(self.run(|w, i| w.board_status(i)))
    }

    fn go_to_standby(&mut self) -> Result<()> {
        self.run(|w, i| w.boards[i].addressing.release_atn());
        Ok(())
    }

    fn take_control(&mut self) -> Result<()> {
        self.run(|w, i| w.boards[i].addressing.assert_atn());
        Ok(())
    }

    fn listener_present(&mut self, address: Address) -> Result<bool> {
        Ok(self.run(|w, i| w.listener_present(i, address)))
    }
}

impl VirtualTime for SimBoard {
    fn clock_kind(&mut self) -> ClockKind {
        ClockKind::Virtual
    }

    fn delay(&mut self, duration: Duration) {
        self.run(|w, _| w.delay(duration));
    }

    fn modelled_host_cpu(&mut self) -> Option<Duration> {
        Some(self.host.lock().cpus.busy())
    }

    fn waits_in_wall_time(&mut self) -> bool {
        self.host.lock().realtime
    }

    fn wait_srq_step(&mut self, deadline: Duration) -> Result<Option<bool>> {
        let outcome = self.run(|w, i| {
            let limit = match w.callers.participant() {
                Some(me) => {
                    let now = w.callers.now();
                    match w.callers.earliest_other(me) {
                        // Others at the same time go first: step past them.
                        Some(t) if t <= now => now.saturating_add(Duration::from_nanos(1)),
                        Some(t) => t,
                        None => Duration::MAX,
                    }
                }
                None => Duration::MAX,
            };
            w.wait_srq(i, deadline, limit)
        });
        Ok(match outcome {
            SrqWait::Asserted => Some(true),
            SrqWait::TimedOut => Some(false),
            SrqWait::Limit => None,
        })
    }

    fn turns(&mut self) -> Option<std::sync::Arc<dyn Turns>> {
        Some(std::sync::Arc::new(self.host.clone()))
    }
}
