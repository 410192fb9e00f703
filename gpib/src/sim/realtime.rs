//! Real-time mode ([`crate::sim::SimHost::set_realtime`]): an operation's modelled time
//! passes as wall time, and the host CPU the model charges it is spent as CPU on the
//! calling thread, so that `getrusage` and `/proc/stat` see what they would with a
//! real board: a programmed-I/O transfer keeps a core busy for its whole length (the
//! driver moves every byte), a DMA transfer leaves it idle but for its set-up and
//! interrupts.

use std::time::{Duration, Instant};

/// How early a sleep is ended to spin the rest: with the thread's timer slack at 1 ns
/// ([`precise_sleeps`]) a sleep overshoots by a few microseconds to a few tens, so an
/// operation over a millisecond ends within a few of them, and an operation whose
/// wait is longer than this leaves the CPU idle for it, as a DMA transfer does.
const SPIN_MARGIN: Duration = Duration::from_micros(60);

thread_local! {
    /// When this thread's last real-time operation ended.
    static LAST_END: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
    /// Whether this thread's timer slack was set.
    static PRECISE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Has the kernel wake this thread's sleeps on time: its timer slack (50 us by default
/// on Linux) is set to 1 ns, once per thread. Without it every wait shorter than the
/// slack would have to be spun, and a DMA transfer would show a busy CPU.
fn precise_sleeps() {
    if PRECISE.with(|c| c.replace(true)) {
        return;
    }
    // /proc/thread-self links to `PID/task/TID`; /proc/TID/timerslack_ns is that
    // thread's slack (Linux 4.6 and later; a thread may always set its own).
    let set = std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|l| l.file_name().map(|t| t.to_string_lossy().into_owned()))
        .map(|tid| std::fs::write(format!("/proc/{tid}/timerslack_ns"), "1"));
    match set {
        Some(Ok(())) => {}
        Some(Err(e)) => log::debug!("timer slack unchanged: {e}"),
        None => log::debug!("timer slack unchanged: no /proc/thread-self"),
    }
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
    precise_sleeps();
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

    /// This thread's time on a CPU (/proc/thread-self/schedstat, nanoseconds).
    fn thread_cpu() -> Option<Duration> {
        let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        Some(Duration::from_nanos(
            s.split_whitespace().next()?.parse().ok()?,
        ))
    }

    // Short DMA-like operations (a 200 us wait, no CPU) leave the CPU idle, as a DMA
    // transfer does: with a 300 us spin margin every one of them was spun (a CPU share
    // of 100 %; contention through libgpib read "the host CPU saturates").
    #[test]
    fn short_waits_without_cpu_are_slept_not_spun() {
        let Some(cpu0) = thread_cpu() else { return };
        let t0 = Instant::now();
        for _ in 0..200 {
            pass(Instant::now(), Duration::from_micros(200), Duration::ZERO);
        }
        let (cpu, wall) = (thread_cpu().unwrap() - cpu0, t0.elapsed());
        assert!(wall >= Duration::from_millis(40), "{wall:?}");
        let share = cpu.as_secs_f64() / wall.as_secs_f64();
        assert!(share < 0.5, "CPU {cpu:?} of {wall:?}: {share:.2}");
    }
}
