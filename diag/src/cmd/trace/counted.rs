//! A trace sink that counts what it passes on, for `trace record`'s report of what it
//! recorded.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use gpib::trace::{Record, TraceSink};

/// Records, calls, bus transfers and the bytes they moved, so far.
#[derive(Debug, Default)]
pub struct Tally {
    records: AtomicU64,
    calls: AtomicU64,
    transfers: AtomicU64,
    bytes: AtomicU64,
}

/// A [`Tally`]'s figures at one moment.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    /// Records of every kind.
    pub records: u64,
    /// Call records.
    pub calls: u64,
    /// Bus transfer records.
    pub transfers: u64,
    /// Bytes the transfers moved.
    pub bytes: u64,
}

impl Tally {
    /// The figures now.
    pub fn get(&self) -> Figures {
        Figures {
            records: self.records.load(Ordering::Relaxed),
            calls: self.calls.load(Ordering::Relaxed),
            transfers: self.transfers.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }
}

/// Passes every record to `inner` and counts it in `tally`.
pub struct Counted<S> {
    inner: S,
    /// What passed, shared with whoever reports it.
    pub tally: Arc<Tally>,
}

impl<S> Counted<S> {
    /// Counts what goes to `inner`.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            tally: Arc::default(),
        }
    }
}

impl<S: TraceSink> TraceSink for Counted<S> {
    fn record(&mut self, record: &Record<'_>) {
        let t = &self.tally;
        t.records.fetch_add(1, Ordering::Relaxed);
        match record {
            Record::Call(_) => {
                t.calls.fetch_add(1, Ordering::Relaxed);
            }
            Record::Transfer(x) => {
                t.transfers.fetch_add(1, Ordering::Relaxed);
                t.bytes.fetch_add(x.bytes.len() as u64, Ordering::Relaxed);
            }
            _ => {}
        }
        self.inner.record(record);
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
