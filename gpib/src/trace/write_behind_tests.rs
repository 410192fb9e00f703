//! Writing a trace behind the program: the same bytes as writing in line, errors
//! kept for the flush, nothing lost on drop, and the recorder held back (not
//! allocating) while the disk is behind.

use std::borrow::Cow;
use std::io::{self, Seek, Write};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::Duration;

use super::write_behind::{WriteBehind, BUFFER, BUFFERS};
use super::*;

fn header() -> Header {
    Header {
        clock: Clock::Virtual,
        label: "write behind".into(),
    }
}

/// `n` transfers of 1 KiB each, their bytes numbered: several of the writer's buffers.
fn transfers(n: usize) -> Vec<Record<'static>> {
    (0..n)
        .map(|i| {
            Record::Transfer(Transfer {
                board: 0,
                flags: 0,
                talker: 22,
                listeners: 1,
                start_ns: i as u64 * 1000,
                ready_ns: i as u64 * 1000,
                first_ns: i as u64 * 1000 + 10,
                byte_ns: 1000,
                end_ns: i as u64 * 1000 + 999,
                t1_ns: 2000,
                accept_ns: 500,
                bytes: Cow::Owned((0..1024).map(|j| (i + j) as u8).collect()),
            })
        })
        .collect()
}

/// What the writing thread wrote, shared with the test.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn writing_behind_gives_the_bytes_of_writing_in_line() {
    let recs = transfers(2000); // 2 MiB: eight buffers, each one reused
    let mut in_line = TraceWriter::new(Vec::new(), &header()).unwrap();
    let shared = Shared::default();
    let mut behind = TraceWriter::behind(shared.clone(), &header()).unwrap();
    for r in &recs {
        in_line.write(r).unwrap();
        behind.write(r).unwrap();
    }
    assert_eq!(behind.records(), 2000);
    let expected = in_line.finish().unwrap();
    behind.finish().unwrap();
    assert_eq!(shared.0.lock().unwrap().len(), expected.len());
    assert!(*shared.0.lock().unwrap() == expected);
    let back: Vec<Record> = TraceReader::new(&expected[..])
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back, recs);
}

/// Takes `room` bytes, then fails as a full disk does.
#[derive(Debug)]
struct Full {
    room: usize,
}

impl Write for Full {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if self.room == 0 {
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                "no space left on device",
            ));
        }
        let n = b.len().min(self.room);
        self.room -= n;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_write_error_behind_comes_back_from_the_next_flush() {
    let mut w = TraceWriter::behind(Full { room: 300 << 10 }, &header()).unwrap();
    for r in &transfers(1000) {
        w.record(r); // as a sink: never fails the traced operation
    }
    let e = w.flush().unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::StorageFull, "{e}");
    // The disk is still full: the next flush says so again, and nothing hangs.
    for r in &transfers(10) {
        w.record(r);
    }
    assert_eq!(w.flush().unwrap_err().kind(), io::ErrorKind::StorageFull);
    let e = TraceWriter::behind(Full { room: 10 }, &header())
        .unwrap()
        .finish()
        .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::StorageFull);
}

#[test]
fn a_file_written_behind_is_complete_when_its_writer_is_dropped() {
    let dir = std::env::temp_dir().join(format!("gpib-write-behind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("dropped.trace");
    let recs = transfers(700);
    {
        let mut w = create_file(&path, &header()).unwrap();
        for r in &recs {
            w.record(r);
        }
    } // no flush: the drop writes out what is held
    let (h, back) = read_file(&path).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(h, header());
    assert_eq!(back, recs);
}

/// Writes nothing until opened, and counts what it took.
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<(bool, usize)>, Condvar)>);

impl Gate {
    fn open(&self) {
        self.0 .0.lock().unwrap().0 = true;
        self.0 .1.notify_all();
    }
}

impl Write for Gate {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let (lock, cv) = &*self.0;
        let mut g = cv.wait_while(lock.lock().unwrap(), |g| !g.0).unwrap();
        g.1 += b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_recorder_waits_for_a_disk_that_is_behind_instead_of_growing() {
    let gate = Gate::default();
    let g = gate.clone();
    let (done, finished) = mpsc::channel();
    let producer = std::thread::spawn(move || {
        let mut w = TraceWriter::behind(g, &header()).unwrap();
        // Four times what all the buffers hold, in records of about 1 KiB.
        for r in &transfers(FOUR_TIMES_THE_BUFFERS) {
            w.record(r);
        }
        done.send(()).unwrap();
        w.finish().map(|_| ())
    });
    // Held back: the buffers' worth at most (one being written, the others queued or
    // being filled) can be taken before the disk writes anything.
    assert!(
        finished.recv_timeout(Duration::from_millis(300)).is_err(),
        "the recorder went on while nothing was written: its memory grows with the run"
    );
    gate.open();
    finished.recv_timeout(Duration::from_secs(60)).unwrap();
    producer.join().unwrap().unwrap();
    let written = gate.0 .0.lock().unwrap().1;
    assert!(
        written > FOUR_TIMES_THE_BUFFERS * 1024,
        "{written} bytes written"
    );
}

/// Records of about 1 KiB ([`transfers`]) that fill the buffers four times over.
const FOUR_TIMES_THE_BUFFERS: usize = 4 * BUFFERS * BUFFER / 1024;

/// Keeps the size of each write the thread makes (one a buffer).
#[derive(Clone, Default)]
struct Sizes(Arc<Mutex<Vec<usize>>>);

impl Write for Sizes {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().push(b.len());
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `n` transfers of `size` data bytes each.
fn big_transfers(n: usize, size: usize) -> Vec<Record<'static>> {
    let mut recs = transfers(n);
    for r in &mut recs {
        if let Record::Transfer(t) = r {
            t.bytes = Cow::Owned(vec![0x5A; size]);
        }
    }
    recs
}

#[test]
fn a_record_that_does_not_fit_starts_the_next_buffer_instead_of_growing_this_one() {
    let sizes = Sizes::default();
    let mut w = TraceWriter::behind(sizes.clone(), &header()).unwrap();
    // Records of 40 % of a buffer: two fit in one, the third starts the next one.
    let part = BUFFER * 2 / 5;
    for r in &big_transfers(12, part) {
        w.write(r).unwrap();
    }
    // One record larger than a buffer goes out alone, in one write; the buffer that
    // grew for it takes its usual size again.
    let larger = BUFFER * 6 / 5;
    for r in &big_transfers(1, larger) {
        w.write(r).unwrap();
    }
    for r in &big_transfers(24, part) {
        w.write(r).unwrap();
    }
    w.finish().unwrap();
    let sizes = sizes.0.lock().unwrap().clone();
    // Six buffers of two records (the header in the first), the big one, twelve more.
    assert_eq!(sizes.len(), 6 + 1 + 12, "{sizes:?}");
    let big = sizes[6];
    assert!(big > larger && big < larger + 1024, "{sizes:?}");
    assert!(
        sizes.iter().filter(|&&n| n != big).all(|&n| n <= BUFFER),
        "a buffer grew past {BUFFER} bytes: writes of {sizes:?} bytes"
    );
}

#[test]
fn a_writer_that_fell_asleep_still_writes_what_comes_later() {
    // The writing thread looks for buffers for a while, then sleeps until one is sent:
    // records before, between and after its sleeps all reach the file in order.
    let shared = Shared::default();
    let mut w = TraceWriter::behind(shared.clone(), &header()).unwrap();
    let mut in_line = TraceWriter::new(Vec::new(), &header()).unwrap();
    let recs = transfers(3 * BUFFER / 1024);
    for (i, chunk) in recs.chunks(BUFFER / 1024).enumerate() {
        for r in chunk {
            w.write(r).unwrap();
            in_line.write(r).unwrap();
        }
        if i == 1 {
            w.flush().unwrap();
        }
        // Longer than the thread looks before it sleeps.
        std::thread::sleep(Duration::from_millis(20));
    }
    w.flush().unwrap();
    let expected = in_line.finish().unwrap();
    assert!(*shared.0.lock().unwrap() == expected);
    w.finish().unwrap();
}

#[cfg(unix)]
#[test]
fn a_trace_file_reserves_its_space_ahead_and_gives_back_what_it_did_not_use() {
    use std::os::unix::fs::MetadataExt;
    let dir = std::env::temp_dir().join(format!("gpib-trace-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("reserved.trace");
    let recs = transfers(1000); // about 1 MiB
    let mut w = create_file(&path, &header()).unwrap();
    for r in &recs {
        w.write(r).unwrap();
    }
    w.flush().unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    // The size is that of the bytes written; the reservation is past it.
    assert!(len > 1000 * 1024 && len < 1100 * 1024, "{len}");
    let reserved = std::fs::metadata(&path).unwrap().blocks() * 512;
    let file = w.finish().unwrap();
    assert_eq!(file.get_ref().metadata().unwrap().len(), len);
    drop(file);
    let after = std::fs::metadata(&path).unwrap().blocks() * 512;
    let (h, back) = read_file(&path).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!((h, back), (header(), recs));
    // Where the file system reserves (ext4, xfs, tmpfs: Linux's temporary
    // directories), 8 MiB ahead; given back when the file is dropped.
    if cfg!(target_os = "linux") {
        assert!(
            reserved >= len + (7 << 20),
            "{reserved} bytes reserved for {len}"
        );
    }
    assert!(after < len + (1 << 20), "{after} bytes kept for {len}");
}

/// Keeps what it is given, and on drop waits until the test lets it go.
struct SlowToClose {
    shared: Shared,
    closing: mpsc::Receiver<()>,
}

impl Write for SlowToClose {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.shared.write(b)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for SlowToClose {
    fn drop(&mut self) {
        let _ = self.closing.recv_timeout(Duration::from_secs(30));
    }
}

#[test]
fn dropping_the_writer_waits_for_the_bytes_not_for_the_output_to_close() {
    // A trace file gives back its reserved space when it closes (a truncation): the
    // program waits for its records to be written, not for that.
    let shared = Shared::default();
    let (close, closing) = mpsc::channel();
    let w = SlowToClose {
        shared: shared.clone(),
        closing,
    };
    let recs = transfers(300);
    let mut writer = TraceWriter::behind(w, &header()).unwrap();
    let mut in_line = TraceWriter::new(Vec::new(), &header()).unwrap();
    for r in &recs {
        writer.record(r);
        in_line.write(r).unwrap();
    }
    let (dropped, done) = mpsc::channel();
    std::thread::spawn(move || {
        drop(writer);
        dropped.send(()).unwrap();
    });
    // Returned while the output is still open, with every byte written.
    done.recv_timeout(Duration::from_secs(10))
        .expect("dropping the writer waited for its output to close");
    assert!(*shared.0.lock().unwrap() == in_line.finish().unwrap());
    close.send(()).unwrap();
}

#[test]
fn a_trace_file_on_a_file_with_bytes_in_it_keeps_them() {
    let dir = std::env::temp_dir().join(format!("gpib-trace-file-kept-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("kept.bin");
    std::fs::write(&path, vec![7u8; 3 << 20]).unwrap();
    // Opened at its end: what it writes goes after the bytes there, and giving back the
    // reservation keeps them all.
    let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.seek(io::SeekFrom::End(0)).unwrap();
    let mut f = TraceFile::new(file);
    f.write_all(b"after").unwrap();
    f.give_back().unwrap();
    drop(f);
    let back = std::fs::read(&path).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(back.len(), (3 << 20) + 5);
    assert!(back[..3 << 20].iter().all(|&b| b == 7));
    assert_eq!(&back[3 << 20..], b"after");
}

/// A recording may start as soon as its writer is made: the writing thread must run by
/// then. Before, `WriteBehind::new` returned as soon as the thread was made, and a
/// recorder that started at once filled every buffer and waited for the thread to
/// start (0.4 ms of a 5 ms run on a virtual machine). Here the system is slow to start
/// the thread (20 ms).
#[test]
fn a_writer_behind_returns_once_its_thread_runs() {
    use std::sync::atomic::Ordering;
    let w = WriteBehind::start(io::sink(), Duration::from_millis(20)).expect("writer");
    assert!(
        w.started.load(Ordering::Acquire),
        "WriteBehind::new returned before its writing thread ran"
    );
}
