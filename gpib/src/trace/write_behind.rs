//! Writing behind the recorder: a [`Write`] that hands full buffers to a thread of its
//! own, so that a traced program pays for copying its records into memory and not for
//! the file system's work on them. Memory stays bounded: a few buffers go round between
//! the two threads, and the recorder waits for one when the disk falls behind. The
//! buffers are made, and their pages touched, when writing starts: a recorded
//! operation does not take the page faults of memory met for the first time.

use std::io::{self, Write};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// 256 KiB a buffer. Handing one over costs the recorder no system call (the writing
/// thread looks for buffers, [`next_job`]), so small buffers cost nothing in hand-overs,
/// and they shorten what is left to write when the trace is flushed: the writing thread
/// is at most a buffer or two behind. On a 2-CPU machine, a run that records 19 MB
/// (`cargo bench -p gpib --bench sim_trace`, five rounds of 7 runs, the builds in
/// turn): medians of 2.10x-2.19x its unrecorded time, against 2.17x-2.52x with 512 KiB
/// buffers and 2.17x-2.22x with 1 MiB ones.
pub(super) const BUFFER: usize = 1 << 18;
/// Buffers in all, 2 MiB: one being filled, the others written or waiting to be. With
/// four of 256 KiB the same run was no faster, with sixteen no faster beyond the
/// machine's noise.
pub(super) const BUFFERS: usize = 8;

/// What the recorder asks of the writing thread.
enum Job {
    /// Write the buffer's first `usize` bytes.
    Write(Vec<u8>, usize),
    Flush,
    /// Stop and give `W` back ([`WriteBehind::into_inner`]).
    Return,
}

/// What the writing thread gives back.
enum Reply {
    /// The thread runs (its first message).
    Started,
    /// A buffer written, for reuse.
    Empty(Vec<u8>),
    /// Everything before the flush written and flushed; or the first error since the
    /// last flush.
    Flushed(io::Result<()>),
}

/// Buffers writes to `W` and writes them on a thread of its own.
///
/// A write error is kept by the thread and returned by the next [`WriteBehind::flush`]
/// (or [`WriteBehind::into_inner`]); what is written after it is dropped. Dropping a
/// `WriteBehind` writes out what it holds and waits until it is written; the thread
/// then closes `W` on its own.
///
/// A buffer's bytes are all initialised once, when it is made, and records are
/// written over them from `used` on: a record costs its stores, not also the zeroing
/// and length updates of appending to a `Vec`.
#[derive(Debug)]
pub(crate) struct WriteBehind<W> {
    buf: Vec<u8>,
    used: usize,
    spare: Vec<Vec<u8>>,
    jobs: Option<SyncSender<Job>>,
    replies: Receiver<Reply>,
    thread: Option<JoinHandle<Option<W>>>,
    /// Set by the thread when it starts (for the tests).
    #[cfg(test)]
    pub(super) started: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl<W: Write + Send + 'static> WriteBehind<W> {
    /// Starts the writing thread for `out`, and returns once it runs.
    ///
    /// A thread is not running when it is made: the system starts it on a CPU when it
    /// gets to it, which on a virtual machine whose other CPU is idle took 0.4-0.5 ms
    /// here. A recorder that started at once filled every buffer (2 MiB) in that time
    /// and then waited for the thread: 0.4 ms of a 5 ms recorded run
    /// (`cargo bench -p gpib --bench sim_trace`), which waiting here takes off the
    /// recording. The buffers are made while the thread starts.
    pub(crate) fn new(out: W) -> io::Result<Self> {
        Self::start(out, Duration::ZERO)
    }

    /// [`WriteBehind::new`] with a thread that starts `late` (the tests' stand-in for a
    /// system slow to start it).
    pub(super) fn start(out: W, late: Duration) -> io::Result<Self> {
        let (jobs, todo) = mpsc::sync_channel::<Job>(BUFFERS);
        let (done, replies) = mpsc::channel::<Reply>();
        #[cfg(test)]
        let started = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        #[cfg(test)]
        let started_here = std::sync::Arc::clone(&started);
        let thread = thread::Builder::new()
            .name("gpib-trace-writer".into())
            .spawn(move || {
                if !late.is_zero() {
                    thread::sleep(late);
                }
                #[cfg(test)]
                started_here.store(true, std::sync::atomic::Ordering::Release);
                let _ = done.send(Reply::Started);
                write_jobs(out, &todo, &done)
            })?;
        let behind = Self {
            buf: touched(),
            used: 0,
            spare: (1..BUFFERS).map(|_| touched()).collect(),
            jobs: Some(jobs),
            replies,
            thread: Some(thread),
            #[cfg(test)]
            started,
        };
        match behind.replies.recv() {
            Ok(Reply::Started) => Ok(behind),
            _ => Err(gone()),
        }
    }
}

impl<W> WriteBehind<W> {
    /// Makes room for up to `N` bytes of a record's fields and `more` after them, and
    /// returns the `N` bytes for the fields to be written in place (they hold what an
    /// earlier record left); [`WriteBehind::put_parts`] keeps those written and writes
    /// the rest of the record. A record that does not fit in what is left of the buffer
    /// starts the next one: buffers keep their size unless one record is larger.
    #[inline(always)]
    pub(crate) fn fields<const N: usize>(&mut self, more: usize) -> io::Result<&mut [u8; N]> {
        let need = more.saturating_add(N);
        if self.buf.len() - self.used < need {
            self.room(need)?;
        }
        match self.buf[self.used..].first_chunk_mut::<N>() {
            Some(fields) => Ok(fields),
            None => unreachable!("room was made for {N} bytes"),
        }
    }

    /// Keeps the first `fields` bytes written in what [`WriteBehind::fields`] returned
    /// (at most its `N`), writes `parts` after them, and hands the buffer over once it
    /// is full.
    #[inline(always)]
    pub(crate) fn put_parts(&mut self, fields: usize, parts: &[&[u8]]) -> io::Result<()> {
        self.used += fields;
        for p in parts {
            let end = self.used + p.len();
            if end > self.buf.len() {
                // More than `fields` was told of: a caller's mistake, kept harmless.
                self.buf.resize(end, 0);
            }
            self.buf[self.used..end].copy_from_slice(p);
            self.used = end;
        }
        if self.used >= BUFFER {
            self.hand_over()?;
        }
        Ok(())
    }

    /// Makes room for `need` bytes: hands over a buffer that has something in it, and
    /// grows the next one if one record is larger than a buffer.
    #[cold]
    #[inline(never)]
    fn room(&mut self, need: usize) -> io::Result<()> {
        if self.used > 0 {
            self.hand_over()?;
        }
        if self.buf.len() < need {
            self.buf.resize(need, 0);
        }
        Ok(())
    }

    /// Hands the filled buffer to the thread and takes an empty one: a spare, else the
    /// first the thread gives back.
    fn hand_over(&mut self) -> io::Result<()> {
        while let Ok(reply) = self.replies.try_recv() {
            self.keep(reply);
        }
        let mut next = match self.spare.pop() {
            Some(b) => b,
            None => loop {
                match self.replies.recv() {
                    Ok(Reply::Empty(b)) => break b,
                    Ok(Reply::Flushed(_) | Reply::Started) => {}
                    Err(_) => return Err(gone()),
                }
            },
        };
        // At its usual size again if one record made it grow.
        if next.len() > BUFFER {
            next.truncate(BUFFER);
            next.shrink_to(BUFFER);
        }
        let full = std::mem::replace(&mut self.buf, next);
        let used = std::mem::take(&mut self.used);
        self.send(Job::Write(full, used))
    }

    /// Keeps a buffer given back.
    fn keep(&mut self, reply: Reply) {
        if let Reply::Empty(b) = reply {
            self.spare.push(b);
        }
    }

    fn send(&mut self, job: Job) -> io::Result<()> {
        match &self.jobs {
            Some(jobs) => jobs.send(job).map_err(|_| gone()),
            None => Err(gone()),
        }
    }

    /// Writes out what is buffered and waits until the thread has written it and
    /// flushed `W`; returns the first write error since the last flush.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        if self.used > 0 {
            self.hand_over()?;
        }
        self.send(Job::Flush)?;
        self.wake();
        // Looked for first, for up to FLUSH_SPIN: sleeping until the thread answers
        // would add its waking this one (tens of microseconds on a virtual machine) to
        // every flush.
        let spin_until = std::time::Instant::now() + FLUSH_SPIN;
        loop {
            let reply = match self.replies.try_recv() {
                Ok(reply) => reply,
                Err(mpsc::TryRecvError::Disconnected) => return Err(gone()),
                Err(mpsc::TryRecvError::Empty) if std::time::Instant::now() < spin_until => {
                    std::hint::spin_loop();
                    continue;
                }
                Err(mpsc::TryRecvError::Empty) => match self.replies.recv() {
                    Ok(reply) => reply,
                    Err(_) => return Err(gone()),
                },
            };
            match reply {
                Reply::Flushed(r) => return r,
                reply => self.keep(reply),
            }
        }
    }

    /// Wakes the writing thread if it is between looks for a job ([`next_job`]).
    fn wake(&self) {
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }

    /// Writes out what is buffered, stops the thread and returns `W`, or the first
    /// write error.
    pub(crate) fn into_inner(mut self) -> io::Result<W> {
        self.flush()?;
        self.send(Job::Return)?;
        self.jobs = None;
        self.wake();
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Some(out))) => Ok(out),
            _ => Err(gone()),
        }
    }
}

/// The writing thread: writes each buffer to `out` and gives it back; keeps the first
/// error for the next flush. Returns `out` when asked to ([`Job::Return`]); once the
/// recorder is gone it drops `out` itself, so that closing it (a
/// [`crate::trace::TraceFile`] gives back its reserved space) happens on this thread.
fn write_jobs<W: Write>(mut out: W, todo: &Receiver<Job>, done: &mpsc::Sender<Reply>) -> Option<W> {
    let mut error: Option<io::Error> = None;
    while let Some(job) = next_job(todo) {
        match job {
            Job::Write(b, used) => {
                if error.is_none() {
                    if let Err(e) = out.write_all(&b[..used]) {
                        error = Some(e);
                    }
                }
                let _ = done.send(Reply::Empty(b));
            }
            Job::Flush => {
                let r = match error.take() {
                    Some(e) => Err(e),
                    None => out.flush(),
                };
                let _ = done.send(Reply::Flushed(r));
            }
            Job::Return => return Some(out),
        }
    }
    drop(out);
    None
}

/// How long a flush looks for the writing thread's answer before it sleeps until it
/// comes: a flush's wait is the end of a recording, when the recorder has nothing else
/// to do, and being woken took it 100-250 us more here.
const FLUSH_SPIN: Duration = Duration::from_millis(2);
/// How often the writing thread looks for a buffer while buffers are coming.
const POLL: Duration = Duration::from_micros(50);
/// How long it looks before it sleeps until one comes.
const IDLE: Duration = Duration::from_millis(1);

/// The next job; `None` once the recorder is gone. While buffers are coming the thread
/// looks for the next one every [`POLL`] instead of sleeping until it is sent: waking
/// a sleeping thread costs the recorder a system call and, on a virtual machine, an
/// interrupt to the other CPU, 4.7 % of the recorder's thread in a recorded run that
/// hands over a buffer every 0.3 ms (perf: `futex_wake`). After [`IDLE`] with nothing,
/// it sleeps until one is sent; [`WriteBehind::flush`] wakes it at once. Looking
/// without sleeping in between (spinning) made the recorder slower, not faster:
/// 2.5x-2.9x against 1.9x for a run recorded into nothing.
fn next_job(todo: &Receiver<Job>) -> Option<Job> {
    let mut idle = Duration::ZERO;
    loop {
        match todo.try_recv() {
            Ok(job) => return Some(job),
            Err(mpsc::TryRecvError::Disconnected) => return None,
            Err(mpsc::TryRecvError::Empty) => {}
        }
        if idle >= IDLE {
            return todo.recv().ok();
        }
        thread::park_timeout(POLL);
        idle += POLL;
    }
}

/// A buffer of [`BUFFER`] bytes, all initialised and their pages touched.
fn touched() -> Vec<u8> {
    // Not zeros: those could come from pages the system has not handed over yet.
    vec![0xFF; BUFFER]
}

/// The thread is gone: it can only have panicked in `W`'s own code.
fn gone() -> io::Error {
    io::Error::other("the trace's writing thread stopped")
}

impl<W> Drop for WriteBehind<W> {
    /// Writes out what is held and waits until it is written; the thread then drops
    /// `W` on its own (a [`crate::trace::TraceFile`] gives back its unused space then,
    /// a truncation of 0.1-0.3 ms the program does not wait for).
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.flush();
            self.jobs = None;
            self.wake();
        }
    }
}
