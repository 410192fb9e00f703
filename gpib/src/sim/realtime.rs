//! Real-time mode ([`crate::sim::SimHost::set_realtime`]): an operation's modelled time
//! passes as wall time, and the host CPU the model charges it is spent as CPU on the
//! calling thread, so that `getrusage` and `/proc/stat` see what they would with a
//! real board: a programmed-I/O transfer keeps a core busy for its whole length (the
//! driver moves every byte), a DMA transfer leaves it idle but for its set-up and
//! interrupts.

use std::time::{Duration, Instant};

/// How early a sleep is ended to spin the rest: sleeps overshoot by tens of
/// microseconds, so an operation over a millisecond ends within a few of them.
const SPIN_MARGIN: Duration = Duration::from_micros(300);

thread_local! {
    /// When this thread's last real-time operation ended.
    static LAST_END: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// The wall time this thread spent away from the simulator since its last real-time
/// operation ended (its own work, a sleep): in real time that passes on the model's
/// clock too, so an instrument's timers run while the caller sleeps, as on a real bus.
pub(crate) fn idle_since_last() -> Option<Duration> {
    LAST_END.with(|c| c.get()).map(|t| t.elapsed())
}

/// Records that this thread's operation ends now.
pub(crate) fn mark_end() {
    LAST_END.with(|c| c.set(Some(Instant::now())));
}

/// Makes the operation that started at `start` take `modelled` of wall time, `cpu` of
/// it (at most all of it) spent busy on this thread first, the rest asleep.
pub(crate) fn pass(start: Instant, modelled: Duration, cpu: Duration) {
    let end = start + modelled;
    spin_until(start + cpu.min(modelled));
    let now = Instant::now();
    if end > now + SPIN_MARGIN {
        std::thread::sleep(end - now - SPIN_MARGIN);
    }
    spin_until(end);
}

/// Busy until `t`: the CPU the model says the driver spends.
fn spin_until(t: Instant) {
    while Instant::now() < t {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This thread's CPU time (user + system) from /proc, in clock ticks (1/100 s).
    fn thread_ticks() -> Option<u64> {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
        let after = stat.rsplit_once(')')?.1;
        let f: Vec<&str> = after.split_whitespace().collect();
        Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
    }

    // The CPU part is spent busy (the thread's CPU clock moves), the rest asleep.
    #[test]
    fn the_modelled_cpu_is_spent_on_the_thread_and_the_rest_sleeps() {
        let Some(a) = thread_ticks() else { return };
        pass(
            Instant::now(),
            Duration::from_millis(300),
            Duration::from_millis(300),
        );
        let busy = thread_ticks().unwrap() - a;
        let b = thread_ticks().unwrap();
        let t = Instant::now();
        pass(t, Duration::from_millis(300), Duration::ZERO);
        let idle = thread_ticks().unwrap() - b;
        assert!(t.elapsed() >= Duration::from_millis(300));
        // 30 ticks busy on a quiet machine; at least 10 on a loaded one. Asleep: ~0.
        assert!(busy >= 10, "{busy} ticks busy");
        assert!(idle <= 3, "{idle} ticks asleep");
    }
}
