//! Lanes: many simulated callers run by one thread, in virtual-time order.
//!
//! A workload of many devices (a contention run) can give each device a thread and
//! make the threads [`Participant`](crate::sim::Participant)s; each operation then
//! hands the turn to another thread, a wake-up and a context switch in wall time. Run
//! as lanes, the same workload gives the same virtual times from one thread, and a
//! simulated transaction costs what it costs alone.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::ControlFlow;
use std::time::Duration;

use crate::sim::host::SimHost;
use crate::sim::schedule::AsLane;

impl SimHost {
    /// Runs one lane per element of `lanes` on the calling thread, each a caller with
    /// its own virtual clock that starts at the calling thread's time, until every lane
    /// has returned [`ControlFlow::Break`] from `step`.
    ///
    /// Each call of `step` runs as the lane whose clock is earliest (ties go to the
    /// lower index), with that lane's state: the operations it makes start at that
    /// lane's time and move it. Make one turn-taking operation per step (a device call
    /// such as a query, or a `delay`) and the lanes interleave exactly as participant
    /// threads would, the same virtual times, with no thread hand-offs. The calling
    /// thread's own clock does not move; returns the latest lane's end.
    ///
    /// Lanes are ordinary callers to other threads on the host: they do not take turns
    /// with participants.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use gpib::{Bus, sim};
    /// let host = sim::bench();
    /// let bus = Bus::new(host.board(0).unwrap());
    /// let dmm = bus.device(22).unwrap();
    /// // Two callers, three queries each, interleaved in virtual time: (count, end).
    /// let mut lanes = vec![(0u32, std::time::Duration::ZERO); 2];
    /// host.run_lanes(&mut lanes, |(n, end)| {
    ///     dmm.query("*IDN?").unwrap();
    ///     *n += 1;
    ///     *end = bus.now();
    ///     if *n == 3 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    /// });
    /// assert!(lanes.iter().all(|(n, _)| *n == 3));
    /// assert_ne!(lanes[0].1, lanes[1].1, "each waited for the bus while the other used it");
    /// ```
    pub fn run_lanes<S>(
        &self,
        lanes: &mut [S],
        mut step: impl FnMut(&mut S) -> ControlFlow<()>,
    ) -> Duration {
        let keys: Vec<u64> = {
            let mut g = self.lock();
            lanes.iter().map(|_| g.callers.add_lane()).collect()
        };
        // Earliest clock first, ties to the lower index.
        let mut ready: BinaryHeap<Reverse<(Duration, usize)>> = {
            let g = self.lock();
            keys.iter()
                .enumerate()
                .map(|(i, &k)| Reverse((g.callers.lane_now(k), i)))
                .collect()
        };
        let mut latest = Duration::ZERO;
        while let Some(Reverse((_, i))) = ready.pop() {
            let flow = {
                let _lane = AsLane::enter(keys[i]);
                step(&mut lanes[i])
            };
            let now = self.lock().callers.lane_now(keys[i]);
            latest = latest.max(now);
            if flow.is_continue() {
                ready.push(Reverse((now, i)));
            }
        }
        let mut g = self.lock();
        for k in keys {
            g.callers.remove_lane(k);
        }
        latest
    }
}

#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;
    use std::time::Duration;

    use crate::sim::{Config, SimHost};
    use crate::Bus;

    /// Two DMA boards, three SCPI instruments each, sharing one CPU.
    fn host() -> SimHost {
        let mut toml = String::from("name = \"lanes\"\ncpus = 1\n");
        for b in 0..2 {
            toml.push_str(&format!(
                "[[board]]\nname = \"b{b}\"\naddress = 0\ntransfer = \"dma\"\n"
            ));
            for d in 1..=3 {
                toml.push_str(&format!(
                    "  [[board.device]]\n  address = {d}\n  model = \"scpi\"\n"
                ));
            }
        }
        Config::parse(&toml).unwrap().build().unwrap()
    }

    /// Device `i`'s workload: queries, with a pause after every second one; the
    /// virtual time each call ended at.
    struct Work {
        bus: Bus,
        dev: crate::Device,
        calls: usize,
        ends: Vec<Duration>,
    }

    impl Work {
        fn new(host: &SimHost, i: usize) -> Self {
            let bus = Bus::new(host.board(i / 3).unwrap());
            let dev = bus.device((i % 3 + 1) as u8).unwrap();
            Self {
                bus,
                dev,
                calls: 0,
                ends: Vec::new(),
            }
        }

        fn step(&mut self) -> ControlFlow<()> {
            if self.calls % 3 == 2 {
                self.bus.delay(Duration::from_micros(700));
            } else {
                self.dev.query("*IDN?").unwrap();
            }
            self.calls += 1;
            self.ends.push(self.bus.now());
            if self.calls == 12 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
    }

    #[test]
    fn lanes_give_the_virtual_times_participant_threads_give() {
        let threaded = {
            let host = host();
            let works: Vec<_> = (0..6).map(|i| Work::new(&host, i)).collect();
            let workers: Vec<_> = works.iter().map(|_| host.participant()).collect();
            let threads: Vec<_> = workers
                .into_iter()
                .zip(works)
                .map(|(p, mut w)| {
                    std::thread::spawn(move || {
                        p.enter();
                        while w.step().is_continue() {}
                        w.ends
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|t| t.join().unwrap())
                .collect::<Vec<_>>()
        };
        let host = host();
        let t0 = host.now();
        let mut works: Vec<_> = (0..6).map(|i| Work::new(&host, i)).collect();
        let latest = host.run_lanes(&mut works, Work::step);
        let lanes: Vec<_> = works.into_iter().map(|w| w.ends).collect();
        assert_eq!(lanes, threaded);
        assert_eq!(Some(&latest), lanes.iter().flatten().max());
        assert_eq!(host.now(), t0, "the calling thread's clock stays");
        // They contended: the lanes on one board did not all end their first query
        // at the same time.
        assert_ne!(lanes[0][0], lanes[1][0]);
    }

    #[test]
    fn a_lane_alone_runs_as_the_thread_would() {
        let alone = {
            let host = host();
            let mut w = Work::new(&host, 0);
            while w.step().is_continue() {}
            w.ends
        };
        let host = host();
        let mut works = vec![Work::new(&host, 0)];
        host.run_lanes(&mut works, Work::step);
        assert_eq!(works[0].ends, alone);
        assert!(host
            .run_lanes(&mut Vec::<Work>::new(), Work::step)
            .is_zero());
    }
}
