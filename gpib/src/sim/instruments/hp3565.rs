//! The HP 3565 signal processor, as the io_test program of the 1988 HP 9000/350
//! measurement drives it (docs/hp9000-350-1988.md).
//!
//! | command | effect |
//! |---|---|
//! | `ABRT;` `DISA;` | abort, disable (accepted, nothing else) |
//! | `NEW <words>` | allocate a block of 16-bit words |
//! | `NEW?` | answer the id of the last block allocated |
//! | `RBLD <id>,<last>` | talk words 0..=last of block id as binary, END on the last byte |
//! | `WBLD <id>,<count>,#I` | take binary data until END into block id (at most count words) |
//! | `ERR?` | answer the count of commands it could not execute, and reset it |
//!
//! Commands end with `;`, NL or END.

use std::sync::Arc;

use crate::sim::instrument::{DeviceIo, Instrument};
use crate::status::StatusByte;

/// Largest block `NEW` accepts, in words (32 MiB of data).
pub const MAX_BLOCK_WORDS: usize = 16 << 20;
/// Block memory in all, in words (64 MiB): `NEW` past it fails, as on the real box.
pub const MAX_TOTAL_WORDS: usize = 32 << 20;
/// Longest command text held (bytes): a longer command is one error, and its text is
/// dropped up to its terminator (`;`, NL or END).
pub const MAX_INPUT: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Text,
    /// Saw `#`; the next byte says which block format.
    Hash,
    /// Taking `#I` data into a block until END.
    Binary {
        block: usize,
        pos: usize,
        limit: usize,
    },
}

/// The HP 3565 model.
#[derive(Debug)]
pub struct Hp3565 {
    blocks: Vec<Arc<[u8]>>,
    input: Vec<u8>,
    /// The command being received is longer than [`MAX_INPUT`].
    overlong: bool,
    mode: Mode,
    errors: u32,
    overflow: u64,
}

impl Default for Hp3565 {
    fn default() -> Self {
        Self::new()
    }
}

impl Hp3565 {
    /// A freshly powered-on HP 3565.
    pub fn new() -> Self {
        Self {
            blocks: Vec::new(),
            input: Vec::with_capacity(64),
            overlong: false,
            mode: Mode::Text,
            errors: 0,
            overflow: 0,
        }
    }

    /// The contents of block `id` (1-based), for checking transfers end to end.
    pub fn block(&self, id: usize) -> Option<&[u8]> {
        self.blocks.get(id.checked_sub(1)?).map(|b| &b[..])
    }

    /// Words allocated by `NEW` so far.
    pub fn words_in_use(&self) -> usize {
        self.blocks.iter().map(|b| b.len() / 2).sum()
    }

    /// Commands it could not execute since the last `ERR?`.
    pub fn errors(&self) -> u32 {
        self.errors
    }

    /// Bytes of command text received and not yet executed (at most [`MAX_INPUT`]).
    pub fn pending_input(&self) -> usize {
        self.input.len()
    }

    /// Holds command text, up to [`MAX_INPUT`] bytes.
    fn hold(&mut self, text: &[u8]) {
        if self.overlong || self.input.len() + text.len() > MAX_INPUT {
            self.overlong = true;
            self.input.clear();
        } else {
            self.input.extend_from_slice(text);
        }
    }

    fn execute(&mut self, io: &mut DeviceIo<'_>) {
        if std::mem::take(&mut self.overlong) {
            log::debug!("HP3565: command longer than {MAX_INPUT} bytes dropped");
            self.errors = self.errors.saturating_add(1);
            self.input.clear();
            return;
        }
        let text = std::mem::take(&mut self.input);
        let cmd = String::from_utf8_lossy(&text);
        let cmd = cmd.trim();
        if !cmd.is_empty() {
            if !self.run(cmd, io) {
                log::debug!("HP3565: cannot execute {cmd:?}");
                self.errors = self.errors.saturating_add(1);
            }
            io.executed();
        }
        self.input = text;
        self.input.clear();
    }

    fn run(&mut self, cmd: &str, io: &mut DeviceIo<'_>) -> bool {
        let (head, args) = match cmd.split_once(char::is_whitespace) {
            Some((h, a)) => (h, a.trim()),
            None => (cmd, ""),
        };
        let nums: Vec<Option<usize>> = args
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.trim().parse().ok())
            .collect();
        match (head.to_ascii_uppercase().as_str(), nums.as_slice()) {
            ("ABRT" | "DISA", []) => true,
            ("NEW", [Some(words)])
                if *words > 0
                    && *words <= MAX_BLOCK_WORDS
                    && self.words_in_use() + words <= MAX_TOTAL_WORDS =>
            {
                let data: Vec<u8> = (0..*words).flat_map(|i| (i as u16).to_be_bytes()).collect();
                self.blocks.push(Arc::from(data));
                true
            }
            ("NEW?", []) => {
                io.output.push_str(&format!("{}\n", self.blocks.len()));
                io.output.finish_message();
                true
            }
            ("ERR?", []) => {
                io.output.push_str(&format!("{}\n", self.errors));
                io.output.finish_message();
                self.errors = 0;
                true
            }
            ("RBLD", [Some(id), Some(last)]) => match (self.block(*id), words_to_bytes(*last, 1)) {
                (Some(b), Some(n)) if n <= b.len() => {
                    let arc = self.blocks[id - 1].clone();
                    io.output.push_shared(arc, 0..n);
                    io.output.finish_message();
                    true
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// `#I` seen: the text so far must be `WBLD <id>,<count>,`.
    fn start_binary(&mut self) -> bool {
        let text = String::from_utf8_lossy(&self.input).trim().to_string();
        self.input.clear();
        let Some(rest) = text
            .strip_prefix("WBLD")
            .or_else(|| text.strip_prefix("wbld"))
        else {
            return false;
        };
        let parts: Vec<&str> = rest.trim().trim_end_matches(',').split(',').collect();
        let (Some(id), Some(count)) = (
            parts.first().and_then(|s| s.trim().parse::<usize>().ok()),
            parts.get(1).and_then(|s| s.trim().parse::<usize>().ok()),
        ) else {
            return false;
        };
        let Some(len) = self.block(id).map(<[u8]>::len) else {
            return false;
        };
        self.mode = Mode::Binary {
            block: id - 1,
            pos: 0,
            limit: count.saturating_mul(2).min(len),
        };
        true
    }

    fn take_binary(&mut self, data: &[u8]) {
        if let Mode::Binary { block, pos, limit } = &mut self.mode {
            let take = data.len().min(*limit - *pos);
            if take > 0 {
                let arc = &mut self.blocks[*block];
                if Arc::get_mut(arc).is_none() {
                    // Still being talked out: copy on write.
                    *arc = Arc::from(&arc[..]);
                }
                if let Some(b) = Arc::get_mut(arc) {
                    b[*pos..*pos + take].copy_from_slice(&data[..take]);
                }
                *pos += take;
            }
            self.overflow = self.overflow.saturating_add((data.len() - take) as u64);
        }
    }
}

/// Bytes in words `0..=last` (plus `extra` words), when that does not overflow.
fn words_to_bytes(last: usize, extra: usize) -> Option<usize> {
    last.checked_add(extra)?.checked_mul(2)
}

impl Instrument for Hp3565 {
    fn status_changes_with_time(&self) -> bool {
        false // its status follows its calls and its output queue
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn model(&self) -> &str {
        "HP3565"
    }

    fn listen(&mut self, data: &[u8], end: bool, io: &mut DeviceIo<'_>) {
        let mut i = 0;
        while i < data.len() {
            match self.mode {
                Mode::Binary { .. } => {
                    self.take_binary(&data[i..]);
                    i = data.len();
                }
                Mode::Hash => {
                    if data[i] == b'I' && !self.overlong && self.start_binary() {
                        io.executed();
                    } else {
                        self.overlong = false;
                        self.input.clear();
                        self.errors = self.errors.saturating_add(1);
                        self.mode = Mode::Text;
                    }
                    if self.mode == Mode::Hash {
                        self.mode = Mode::Text;
                    }
                    i += 1;
                }
                Mode::Text => {
                    let rest = &data[i..];
                    match rest.iter().position(|&b| matches!(b, b';' | b'\n' | b'#')) {
                        None => {
                            self.hold(rest);
                            i = data.len();
                        }
                        Some(j) => {
                            self.hold(&rest[..j]);
                            if rest[j] == b'#' {
                                self.mode = Mode::Hash;
                            } else {
                                self.execute(io);
                            }
                            i += j + 1;
                        }
                    }
                }
            }
        }
        if end {
            match self.mode {
                Mode::Text => self.execute(io),
                Mode::Binary { .. } => {
                    self.mode = Mode::Text;
                    io.executed();
                }
                Mode::Hash => {
                    self.errors = self.errors.saturating_add(1);
                    self.mode = Mode::Text;
                }
            }
        }
    }

    fn clear(&mut self, io: &mut DeviceIo<'_>) {
        io.output.clear();
        self.input.clear();
        self.overlong = false;
        self.mode = Mode::Text;
    }

    fn status(&mut self, io: &DeviceIo<'_>) -> StatusByte {
        StatusByte(if io.output.is_empty() {
            0
        } else {
            StatusByte::MAV
        })
    }
}
