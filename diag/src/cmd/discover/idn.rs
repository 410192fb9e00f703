//! `discover --idn`: every host's `*IDN?` asked in parallel, by at most
//! [`MAX_WORKERS`] threads at once, the whole phase ending at a deadline: a silent host
//! (one that accepts and never answers) costs its timeout once, not once per host.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use gpib::ResourceManager;

/// Most hosts asked at once (threads, each with one connection).
pub const MAX_WORKERS: usize = 32;

/// How long one `*IDN?` waits for its instrument, at most.
pub const IDN_TIMEOUT: Duration = Duration::from_secs(2);

/// The `*IDN?` answers of `resources`, in their order: each the answer shown
/// binary-safe, or why there is none, in parentheses; a host not answered by `deadline`
/// (its query still under way, or not started) says so. Returns by `deadline` (or
/// sooner, when every host has answered): queries still under way then are left to
/// end with the process.
pub fn ask_all(resources: &[String], deadline: Instant, phase: Duration) -> Vec<String> {
    let n = resources.len();
    let mut answers: Vec<Option<String>> = vec![None; n];
    let (tx, rx) = mpsc::channel::<(usize, String)>();
    let next = Arc::new(AtomicUsize::new(0));
    let list: Arc<[String]> = resources.into();
    for _ in 0..n.min(MAX_WORKERS) {
        let (tx, next, list) = (tx.clone(), Arc::clone(&next), Arc::clone(&list));
        let spawned = std::thread::Builder::new()
            .name("discover-idn".into())
            .spawn(move || worker(&list, &next, deadline, &tx));
        if let Err(e) = spawned {
            // Fewer workers: the others ask the hosts this one would have.
            log::warn!("discover --idn: one worker fewer ({e})");
        }
    }
    drop(tx);
    let mut got = 0;
    while got < n {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, answer)) => {
                if let Some(slot) = answers.get_mut(i) {
                    *slot = Some(answer);
                    got += 1;
                }
            }
            // The deadline, or every worker gone (none could be started).
            Err(_) => break,
        }
    }
    answers
        .into_iter()
        .map(|a| {
            a.unwrap_or_else(|| {
                format!(
                    "(no *IDN? answer within the --idn-deadline of {}: give a longer one \
                     to wait for it)",
                    seconds(phase)
                )
            })
        })
        .collect()
}

/// `2 s`, `0.5 s`.
fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// Takes the next host not yet asked until none is left or the deadline has passed.
fn worker(
    list: &[String],
    next: &AtomicUsize,
    deadline: Instant,
    tx: &mpsc::Sender<(usize, String)>,
) {
    let mut rm = ResourceManager::new();
    loop {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(resource) = list.get(i) else {
            return;
        };
        // No query waits past the phase's end.
        let wait = IDN_TIMEOUT.min(deadline.saturating_duration_since(now));
        rm.set_timeout(gpib::Timeout::After(wait.max(Duration::from_millis(1))));
        if tx.send((i, idn(&mut rm, resource))).is_err() {
            return;
        }
    }
}

/// `inst0`'s `*IDN?` answer, or why there is none, in parentheses.
fn idn(rm: &mut ResourceManager, resource: &str) -> String {
    match rm.open(resource).and_then(|d| d.query("*IDN?")) {
        Ok(s) => crate::cmd::instrument::shown(s.as_bytes()),
        Err(e) => format!("(no *IDN? answer: {e})"),
    }
}
