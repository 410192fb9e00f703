//! The Prologix client's side: an adapter that answers with arbitrary bytes. The
//! client opens the adapter (`++ver`), then runs a query, a read, a block query, a
//! serial poll and an SRQ test. The adapter's bytes come in pieces whose size the
//! first byte chooses (bits 0-4), one piece for each read that waits (a read that
//! does not wait finds nothing new), then the stream ends. Bit 6: the client waits
//! for what follows an EOT byte (else it takes it for END at once); bit 7: the EOT
//! byte is NL.
//!
//! Asserts, besides no panic and no hang: every error's `transferred()` and every
//! answer is at most the bytes the adapter sent.
#![no_main]

use std::io;
use std::time::Duration;

use gpib::backend::prologix::{PrologixBoard, PrologixOptions, Port};
use gpib::Bus;
use libfuzzer_sys::fuzz_target;

/// The adapter: `data` in pieces of `piece` bytes, then the end of the stream.
struct Script {
    data: Vec<u8>,
    at: usize,
    piece: usize,
}

impl Port for Script {
    fn read_within(&mut self, buf: &mut [u8], wait: Duration) -> io::Result<usize> {
        if wait.is_zero() {
            // Nothing arrives while nobody waits.
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = (self.data.len() - self.at).min(buf.len()).min(self.piece);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
    fn write_all_bytes(&mut self, _data: &[u8]) -> io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let sent = rest.len();
    let port = Script {
        data: rest.to_vec(),
        at: 0,
        piece: usize::from(head % 32) + 1,
    };
    let opts = PrologixOptions {
        eot_char: if head & 0x80 != 0 { b'\n' } else { 0x04 },
        eot_quiet: if head & 0x40 != 0 {
            Duration::from_micros(1)
        } else {
            Duration::ZERO
        },
        margin: Duration::ZERO,
        open_timeout: Duration::from_millis(100),
    };
    let Ok(board) = PrologixBoard::open(Box::new(port), opts) else {
        return;
    };
    let bus = Bus::new(board);
    let Ok(mut dev) = bus.device(22u8) else {
        return;
    };
    dev.set_timeout(Some(Duration::from_millis(100).into()));
    let check = |what: &str, e: &gpib::Error| {
        assert!(e.transferred().unwrap_or(0) <= sent, "{what}: {e}");
    };
    match dev.query("*IDN?") {
        Ok(a) => assert!(a.len() <= sent),
        Err(e) => check("query", &e),
    }
    let mut buf = [0u8; 64];
    match dev.read(&mut buf) {
        Ok(st) => assert!(st.count <= sent.min(buf.len())),
        Err(e) => check("read", &e),
    }
    match dev.query_block("BLOCK? 10") {
        Ok(b) => assert!(b.len() <= sent),
        Err(e) => check("query_block", &e),
    }
    if let Err(e) = dev.serial_poll() {
        check("serial poll", &e);
    }
    if let Err(e) = bus.srq() {
        check("srq", &e);
    }
});
