//! Writing behind the recorder: a [`Write`] that hands full buffers to a thread of its
//! own, so that a traced program pays for copying its records into memory and not for
//! the file system's work on them. Memory stays bounded: a few buffers go round between
//! the two threads, and the recorder waits for one when the disk falls behind. The
//! buffers are made, and their pages touched, when writing starts: a recorded
//! operation does not take the page faults of memory met for the first time.

use std::io::{self, Write};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::{self, JoinHandle};

/// 1 MiB a buffer. Each full buffer wakes the writing thread, about 10 us of the
/// recorder's time on a virtual machine (a system call and an interrupt to the other
/// CPU), and the file system takes large writes faster: on a 2-CPU machine, a run that
/// records 19 MB took 2.3x its unrecorded time with 1 MiB buffers against 2.8x with
/// 256 KiB ones (`cargo bench -p gpib --bench sim_trace`, the two builds in turn).
pub(super) const BUFFER: usize = 1 << 20;
/// Buffers in all: one being filled, the others written or waiting to be. Four: with
/// three the same run took 2.2x-2.7x, with six no less than with four (beyond the
/// machine's noise).
pub(super) const BUFFERS: usize = 4;

/// What the recorder asks of the writing thread.
enum Job {
    Write(Vec<u8>),
    Flush,
}

/// What the writing thread gives back.
enum Reply {
    /// A buffer written and emptied, for reuse.
    Empty(Vec<u8>),
    /// Everything before the flush written and flushed; or the first error since the
    /// last flush.
    Flushed(io::Result<()>),
}

/// Buffers writes to `W` and writes them on a thread of its own.
///
/// A write error is kept by the thread and returned by the next [`WriteBehind::flush`]
/// (or [`WriteBehind::into_inner`]); what is written after it is dropped. Dropping a
/// `WriteBehind` writes out what it holds and waits for the thread.
#[derive(Debug)]
pub(crate) struct WriteBehind<W> {
    buf: Vec<u8>,
    spare: Vec<Vec<u8>>,
    jobs: Option<SyncSender<Job>>,
    replies: Receiver<Reply>,
    thread: Option<JoinHandle<W>>,
}

impl<W: Write + Send + 'static> WriteBehind<W> {
    /// Starts the writing thread for `out`.
    pub(crate) fn new(out: W) -> io::Result<Self> {
        let (jobs, todo) = mpsc::sync_channel::<Job>(BUFFERS);
        let (done, replies) = mpsc::channel::<Reply>();
        let thread = thread::Builder::new()
            .name("gpib-trace-writer".into())
            .spawn(move || write_jobs(out, &todo, &done))?;
        Ok(Self {
            buf: touched(),
            spare: (1..BUFFERS).map(|_| touched()).collect(),
            jobs: Some(jobs),
            replies,
            thread: Some(thread),
        })
    }
}

impl<W> WriteBehind<W> {
    /// Appends `N` zero bytes, with room for `more` bytes after them, and returns them
    /// to be written in place; [`WriteBehind::put_parts`] appends the rest of the
    /// record. A record that does not fit in what is left of the buffer starts the next
    /// one: buffers keep their size unless one record is larger.
    #[inline(always)]
    pub(crate) fn fixed<const N: usize>(&mut self, more: usize) -> io::Result<&mut [u8; N]> {
        let need = more.saturating_add(N);
        if self.buf.capacity() - self.buf.len() < need && !self.buf.is_empty() {
            self.hand_over()?;
        }
        self.buf.reserve(need);
        let at = self.buf.len();
        self.buf.resize(at + N, 0);
        match self.buf[at..].first_chunk_mut::<N>() {
            Some(fixed) => Ok(fixed),
            None => unreachable!("{N} bytes were just appended"),
        }
    }

    /// Appends `parts` after a record's fixed fields; hands the buffer over once it is
    /// full.
    #[inline(always)]
    pub(crate) fn put_parts(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        for p in parts {
            self.buf.extend_from_slice(p);
        }
        if self.buf.len() >= BUFFER {
            self.hand_over()?;
        }
        Ok(())
    }

    /// Hands the filled buffer to the thread and takes an empty one: a spare, else the
    /// first the thread gives back.
    fn hand_over(&mut self) -> io::Result<()> {
        while let Ok(reply) = self.replies.try_recv() {
            self.keep(reply);
        }
        let next = match self.spare.pop() {
            Some(b) => b,
            None => loop {
                match self.replies.recv() {
                    Ok(Reply::Empty(b)) => break b,
                    Ok(Reply::Flushed(_)) => {}
                    Err(_) => return Err(gone()),
                }
            },
        };
        let full = std::mem::replace(&mut self.buf, next);
        // At its usual size again if one record made it grow.
        self.buf.shrink_to(BUFFER);
        self.send(Job::Write(full))
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
        if !self.buf.is_empty() {
            self.hand_over()?;
        }
        self.send(Job::Flush)?;
        loop {
            match self.replies.recv() {
                Ok(Reply::Flushed(r)) => return r,
                Ok(reply) => self.keep(reply),
                Err(_) => return Err(gone()),
            }
        }
    }

    /// Writes out what is buffered, stops the thread and returns `W`, or the first
    /// write error.
    pub(crate) fn into_inner(mut self) -> io::Result<W> {
        self.flush()?;
        self.jobs = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(out)) => Ok(out),
            _ => Err(gone()),
        }
    }
}

/// The writing thread: writes each buffer to `out` and gives it back; keeps the first
/// error for the next flush.
fn write_jobs<W: Write>(mut out: W, todo: &Receiver<Job>, done: &mpsc::Sender<Reply>) -> W {
    let mut error: Option<io::Error> = None;
    for job in todo {
        match job {
            Job::Write(mut b) => {
                if error.is_none() {
                    if let Err(e) = out.write_all(&b) {
                        error = Some(e);
                    }
                }
                b.clear();
                let _ = done.send(Reply::Empty(b));
            }
            Job::Flush => {
                let r = match error.take() {
                    Some(e) => Err(e),
                    None => out.flush(),
                };
                let _ = done.send(Reply::Flushed(r));
            }
        }
    }
    out
}

/// An empty buffer of [`BUFFER`] bytes whose pages are touched.
fn touched() -> Vec<u8> {
    // Not zeros: those could come from pages the system has not handed over yet.
    let mut b = vec![0xFF; BUFFER];
    std::hint::black_box(&mut b).clear();
    b
}

/// The thread is gone: it can only have panicked in `W`'s own code.
fn gone() -> io::Error {
    io::Error::other("the trace's writing thread stopped")
}

impl<W> Drop for WriteBehind<W> {
    fn drop(&mut self) {
        if self.thread.is_some() {
            if !self.buf.is_empty() {
                let _ = self.hand_over();
            }
            self.jobs = None;
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}
