//! A block query on a device-level backend: the command goes out with the block's
//! first read, in one backend call, and a failure of either half keeps its meaning.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::address::{Address, PrimaryAddress};
use crate::backend::{Backend, DeviceLevel, Eos, ReadEnd, ReadStatus, WriteReadError};
use crate::error::{Error, ErrorKind, Result};
use crate::{Bus, Timeout};

/// A device-level board whose one device answers every query with `answer`, and
/// which logs each backend call it gets.
struct Answering {
    answer: Vec<u8>,
    /// What `device_write_read` fails with instead of answering (once).
    fail: Option<WriteReadError>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Answering {
    fn note(&self, what: String) {
        self.log.lock().unwrap().push(what);
    }
    fn answer_into(&self, buf: &mut [u8]) -> ReadStatus {
        let n = self.answer.len().min(buf.len());
        buf[..n].copy_from_slice(&self.answer[..n]);
        let end = if n == self.answer.len() {
            ReadEnd::Eoi
        } else {
            ReadEnd::BufferFull
        };
        ReadStatus { count: n, end }
    }
}

impl Backend for Answering {
    fn name(&self) -> &str {
        "answering"
    }
    fn board_address(&self) -> PrimaryAddress {
        PrimaryAddress::new_const(0)
    }
    fn write(&mut self, _: &[u8], _: bool) -> Result<usize> {
        unreachable!("a device-level backend gets device-level writes")
    }
    fn read(&mut self, _: &mut [u8], _: Option<Eos>) -> Result<ReadStatus> {
        unreachable!("a device-level backend gets device-level reads")
    }
    fn interface_clear(&mut self) -> Result<()> {
        Ok(())
    }
    fn remote_enable(&mut self, _: bool) -> Result<()> {
        Ok(())
    }
    fn set_timeout(&mut self, t: Timeout) -> Result<Timeout> {
        Ok(t)
    }
    fn timeout(&self) -> Timeout {
        Timeout::After(Duration::from_secs(1))
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
    fn device_level(&mut self) -> Option<&mut dyn DeviceLevel> {
        Some(self)
    }
}

impl DeviceLevel for Answering {
    fn device_write(&mut self, _: Address, data: &[u8], eoi: bool) -> Result<usize> {
        self.note(format!("device_write {:?} eoi={eoi}", data.len()));
        Ok(data.len())
    }
    fn device_read(&mut self, _: Address, buf: &mut [u8], _: Option<Eos>) -> Result<ReadStatus> {
        self.note(format!("device_read {}", buf.len()));
        Ok(self.answer_into(buf))
    }
    fn device_write_read(
        &mut self,
        _: Address,
        data: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        self.note(format!(
            "device_write_read {:?} eos={eos:?}",
            String::from_utf8_lossy(data)
        ));
        match self.fail.take() {
            Some(WriteReadError::Read(e)) => {
                // The answer came, then the read timed out (no END).
                self.answer_into(buf);
                return Err(WriteReadError::Read(e));
            }
            Some(e) => return Err(e),
            None => {}
        }
        Ok(self.answer_into(buf))
    }
    fn device_clear(&mut self, _: Address) -> Result<()> {
        Ok(())
    }
    fn device_trigger(&mut self, _: Address) -> Result<()> {
        Ok(())
    }
    fn device_remote(&mut self, _: Address) -> Result<()> {
        Ok(())
    }
    fn device_local(&mut self, _: Address) -> Result<()> {
        Ok(())
    }
}

fn board(answer: &[u8], fail: Option<WriteReadError>) -> (Bus, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let b = Answering {
        answer: answer.to_vec(),
        fail,
        log: log.clone(),
    };
    (Bus::new(b), log)
}

fn timeout_after(transferred: usize) -> Error {
    Error::Timeout {
        operation: "io",
        timeout: Timeout::After(Duration::from_secs(1)),
        transferred,
    }
}

#[test]
fn a_block_query_is_one_backend_call() {
    let (bus, log) = board(b"#15hello\n", None);
    let dev = bus.device(5).unwrap();
    let mut buf = [0u8; 64];
    let info = dev.query_block_into("CURV?", &mut buf).unwrap();
    assert_eq!(&buf[..info.len], b"hello");
    let v = dev.query_block("CURV?").unwrap();
    assert_eq!(v, b"hello");
    assert_eq!(
        *log.lock().unwrap(),
        ["device_write_read \"CURV?\\n\" eos=None"; 2],
        "the command and the block's first read, EOS off, in one call each"
    );
}

#[test]
fn a_long_block_query_writes_then_reads() {
    let (bus, log) = board(b"#13abc\n", None);
    let dev = bus.device(5).unwrap();
    let command = format!("DATA? {}", "x".repeat(600));
    let mut buf = [0u8; 64];
    let info = dev.query_block_into(&command, &mut buf).unwrap();
    assert_eq!(&buf[..info.len], b"abc");
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 3, "{log:?}");
    assert_eq!(log[0], format!("device_write {} eoi=false", command.len()));
    assert_eq!(log[1], "device_write 1 eoi=true");
    assert!(log[2].starts_with("device_read "), "{log:?}");
}

#[test]
fn a_failed_write_is_not_taken_for_a_read() {
    // The write half timed out after 3 bytes: that is the error, and no block byte
    // was read (the 3 are bytes written, not a header).
    let (bus, _) = board(b"#15hello\n", Some(WriteReadError::Write(timeout_after(3))));
    let dev = bus.device(5).unwrap();
    let mut buf = [0u8; 64];
    let e = dev.query_block_into("CURV?", &mut buf).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert_eq!(e.transferred(), Some(3));
    assert_eq!(buf, [0u8; 64]);
}

#[test]
fn a_whole_block_whose_read_timed_out_is_kept() {
    // The read half timed out after a whole block and its NL (a device that dropped
    // EOI): accepted, as when the read goes apart from the write.
    let (bus, _) = board(b"#15hello\n", Some(WriteReadError::Read(timeout_after(9))));
    let dev = bus.device(5).unwrap();
    let mut buf = [0u8; 64];
    let info = dev.query_block_into("CURV?", &mut buf).unwrap();
    assert_eq!(&buf[..info.len], b"hello");
}

#[test]
fn a_read_that_times_out_mid_block_says_how_much_came() {
    let (bus, _) = board(b"#15he", Some(WriteReadError::Read(timeout_after(5))));
    let dev = bus.device(5).unwrap();
    let mut buf = [0u8; 64];
    let e = dev.query_block_into("CURV?", &mut buf).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert_eq!(e.transferred(), Some(5), "{e}");
    assert_eq!(&buf[..2], b"he", "the body bytes that came, at the start");
}
