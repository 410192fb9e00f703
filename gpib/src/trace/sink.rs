//! Where records go as they happen: the [`TraceSink`] trait, a sink shared between
//! writers ([`SharedSink`]: the simulator and a [`crate::trace::TracedBackend`] into one
//! file), and an in-memory one ([`MemorySink`]).

use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::trace::format::Record;

/// Receives trace records as they happen, in the order they are made (a call's record
/// follows the bus records it caused).
///
/// A sink must not fail the traced operation: one that cannot write keeps its error
/// and returns it from [`TraceSink::flush`].
pub trait TraceSink: Send {
    /// Takes one record (borrowed: copy what must outlive the call).
    fn record(&mut self, record: &Record<'_>);

    /// Pushes out what is buffered; returns the first error since the last flush.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<S: TraceSink + ?Sized> TraceSink for Box<S> {
    fn record(&mut self, record: &Record<'_>) {
        (**self).record(record);
    }
    fn flush(&mut self) -> io::Result<()> {
        (**self).flush()
    }
}

/// One sink that several recorders feed: clones share it.
#[derive(Clone)]
pub struct SharedSink(Arc<Mutex<dyn TraceSink>>);

impl std::fmt::Debug for SharedSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedSink")
    }
}

impl SharedSink {
    /// Shares `sink`.
    pub fn new(sink: impl TraceSink + 'static) -> Self {
        Self(Arc::new(Mutex::new(sink)))
    }

    fn lock(&self) -> MutexGuard<'_, dyn TraceSink + 'static> {
        match self.0.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }
}

impl TraceSink for SharedSink {
    fn record(&mut self, record: &Record<'_>) {
        self.lock().record(record);
    }
    fn flush(&mut self) -> io::Result<()> {
        self.lock().flush()
    }
}

/// Keeps every record in memory (clones share the list): for tests, and for replaying
/// a session recorded in the same program.
#[derive(Debug, Clone, Default)]
pub struct MemorySink(Arc<Mutex<Vec<Record<'static>>>>);

impl MemorySink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the records kept so far.
    pub fn take(&self) -> Vec<Record<'static>> {
        match self.0.lock() {
            Ok(mut g) => std::mem::take(&mut *g),
            Err(p) => std::mem::take(&mut *p.into_inner()),
        }
    }
}

impl TraceSink for MemorySink {
    fn record(&mut self, record: &Record<'_>) {
        let r = record.clone().into_owned();
        match self.0.lock() {
            Ok(mut g) => g.push(r),
            Err(p) => p.into_inner().push(r),
        }
    }
}
