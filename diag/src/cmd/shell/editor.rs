//! The shell's line editor, as a state machine over the bytes the terminal sends: no
//! terminal here, so its output can be counted in tests. A line is bytes (what is sent
//! to the instrument is what was typed); what is not UTF-8 is shown escaped (`\xff`),
//! never an error. The line is shown on one row that scrolls sideways, redrawn only
//! when it must be: a byte typed at the end is written alone. A bracketed paste is
//! taken literally up to [`MAX_PASTE`] bytes, and Ctrl-C and Ctrl-D act within it.

/// The longest line kept (bytes past it are refused with the terminal's bell).
pub const MAX_LINE: usize = 1 << 20;

/// The longest bracketed paste: past it the paste ends, saying so, and what follows is
/// taken as typed.
pub const MAX_PASTE: usize = 64 << 10;

/// Most lines the history keeps.
pub const MAX_HISTORY: usize = 1000;

/// What a byte fed to the editor ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Enter: the line as typed.
    Line(Vec<u8>),
    /// Ctrl-C: the line given up.
    Interrupted,
    /// Ctrl-D on an empty line: the end of the session.
    Eof,
}

/// One character on the screen: a UTF-8 character, or a byte that is not one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cell {
    bytes: [u8; 4],
    len: u8,
    /// Shown as `\xNN` (a byte that is no character, or a control byte).
    escaped: bool,
}

impl Cell {
    fn byte(b: u8) -> Self {
        Self {
            bytes: [b, 0, 0, 0],
            len: 1,
            escaped: !(b' '..=b'~').contains(&b),
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// Columns it takes.
    fn cols(&self) -> usize {
        if self.escaped {
            4
        } else {
            1
        }
    }

    fn draw(&self, out: &mut Vec<u8>) {
        if self.escaped {
            out.extend_from_slice(format!("\\x{:02x}", self.bytes[0]).as_bytes());
        } else {
            out.extend_from_slice(self.bytes());
        }
    }
}

/// Where the escape-sequence parser is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Esc {
    None,
    /// ESC seen.
    Start,
    /// `ESC [` and the parameter bytes so far (at most 16 kept).
    Csi(Vec<u8>),
    /// `ESC O`.
    Ss3,
}

/// The editor: the line, the cursor, the history, the paste under way.
#[derive(Debug)]
pub struct Editor {
    prompt: Vec<u8>,
    prompt_cols: usize,
    width: usize,
    cells: Vec<Cell>,
    /// Bytes in `cells` (bounded by [`MAX_LINE`]).
    line_bytes: usize,
    cursor: usize,
    /// The first cell shown.
    start: usize,
    /// A UTF-8 character's bytes so far.
    partial: Vec<u8>,
    esc: Esc,
    /// Bytes of the bracketed paste under way, when one is.
    paste: Option<usize>,
    history: Vec<Vec<u8>>,
    /// The history entry shown (Up, Down), when one is.
    recalled: Option<usize>,
}

impl Editor {
    /// An editor with `history` (oldest first).
    pub fn new(history: Vec<Vec<u8>>) -> Self {
        Self {
            prompt: Vec::new(),
            prompt_cols: 0,
            width: 80,
            cells: Vec::new(),
            line_bytes: 0,
            cursor: 0,
            start: 0,
            partial: Vec::new(),
            esc: Esc::None,
            paste: None,
            history,
            recalled: None,
        }
    }

    /// The history, oldest first.
    pub fn history(&self) -> &[Vec<u8>] {
        &self.history
    }

    /// Adds `line` to the history (not twice in a row; the oldest dropped past
    /// [`MAX_HISTORY`]).
    pub fn add_history(&mut self, line: &[u8]) {
        if self.history.last().is_some_and(|l| l == line) {
            return;
        }
        if self.history.len() >= MAX_HISTORY {
            self.history.remove(0);
        }
        self.history.push(line.to_vec());
    }

    /// Starts a line: draws `prompt` on a terminal `width` columns wide. A paste under
    /// way goes on (its next line).
    pub fn begin(&mut self, prompt: &str, width: usize, out: &mut Vec<u8>) {
        self.prompt = prompt.as_bytes().to_vec();
        self.prompt_cols = prompt.chars().count();
        self.width = if width == 0 { 80 } else { width };
        self.cells.clear();
        self.line_bytes = 0;
        self.cursor = 0;
        self.start = 0;
        self.recalled = None;
        out.extend_from_slice(&self.prompt);
    }

    /// Columns the line may use: what the prompt leaves, less one for the cursor, and
    /// at least 8.
    fn room(&self) -> usize {
        self.width.saturating_sub(self.prompt_cols + 1).max(8)
    }

    /// Feeds one byte from the terminal; what to draw goes to `out`.
    pub fn feed(&mut self, b: u8, out: &mut Vec<u8>) -> Option<Event> {
        match std::mem::replace(&mut self.esc, Esc::None) {
            Esc::Start => {
                match b {
                    b'[' => self.esc = Esc::Csi(Vec::new()),
                    b'O' => self.esc = Esc::Ss3,
                    _ => {}
                }
                return None;
            }
            Esc::Csi(mut params) => {
                if (0x40..=0x7e).contains(&b) {
                    self.csi(&params, b, out);
                } else {
                    if params.len() < 16 {
                        params.push(b);
                    }
                    self.esc = Esc::Csi(params);
                }
                return None;
            }
            Esc::Ss3 => {
                if self.paste.is_none() {
                    self.key_final(b, out);
                }
                return None;
            }
            Esc::None => {}
        }
        if let Some(n) = self.paste {
            if n >= MAX_PASTE {
                self.paste = None;
                out.extend_from_slice(
                    format!(
                        "\r\n(a paste of more than {MAX_PASTE} bytes without its end: what \
                         follows is taken as typed)\r\n"
                    )
                    .as_bytes(),
                );
                self.refresh(out);
            } else {
                self.paste = Some(n + 1);
            }
        }
        match b {
            0x1b => self.esc = Esc::Start,
            b'\r' | b'\n' => return Some(self.accept(out)),
            0x03 => {
                self.paste = None;
                self.partial.clear();
                out.extend_from_slice(b"^C\r\n");
                return Some(Event::Interrupted);
            }
            0x04 => {
                self.paste = None;
                self.flush_partial(out);
                if self.cells.is_empty() {
                    out.extend_from_slice(b"\r\n");
                    return Some(Event::Eof);
                }
                self.delete_at_cursor(out);
            }
            _ if self.paste.is_some() => self.typed(b, out),
            0x7f | 0x08 => {
                self.flush_partial(out);
                self.backspace(out);
            }
            0x01 => self.move_to(0, out),
            0x05 => self.move_to(self.cells.len(), out),
            0x02 => self.move_to(self.cursor.saturating_sub(1), out),
            0x06 => self.move_to((self.cursor + 1).min(self.cells.len()), out),
            0x15 => {
                self.cells.drain(..self.cursor);
                self.recount();
                self.cursor = 0;
                self.refresh(out);
            }
            0x0b => {
                self.cells.truncate(self.cursor);
                self.recount();
                self.refresh(out);
            }
            0x0c => {
                out.extend_from_slice(b"\x1b[H\x1b[2J");
                self.refresh(out);
            }
            _ => self.typed(b, out),
        }
        None
    }

    /// A CSI sequence's final byte `f` with its parameters.
    fn csi(&mut self, params: &[u8], f: u8, out: &mut Vec<u8>) {
        match (params, f) {
            (b"200", b'~') => self.paste = Some(0),
            (b"201", b'~') => self.paste = None,
            // Other sequences within a paste are not keys.
            _ if self.paste.is_some() => {}
            (b"3", b'~') => self.delete_at_cursor(out),
            (b"1" | b"7", b'~') => self.move_to(0, out),
            (b"4" | b"8", b'~') => self.move_to(self.cells.len(), out),
            (_, f) => self.key_final(f, out),
        }
    }

    /// An arrow, Home or End key by its final byte.
    fn key_final(&mut self, f: u8, out: &mut Vec<u8>) {
        match f {
            b'A' => self.recall(true, out),
            b'B' => self.recall(false, out),
            b'C' => self.move_to((self.cursor + 1).min(self.cells.len()), out),
            b'D' => self.move_to(self.cursor.saturating_sub(1), out),
            b'H' => self.move_to(0, out),
            b'F' => self.move_to(self.cells.len(), out),
            _ => {}
        }
    }

    /// A byte of text: a character once its UTF-8 bytes are all in.
    fn typed(&mut self, b: u8, out: &mut Vec<u8>) {
        if b < 0x80 {
            self.flush_partial(out);
            self.insert(Cell::byte(b), out);
            return;
        }
        let is_continuation = (0x80..0xc0).contains(&b);
        if !self.partial.is_empty() && !is_continuation {
            self.flush_partial(out);
        }
        if self.partial.is_empty() && is_continuation {
            self.insert(Cell::byte(b), out);
            return;
        }
        self.partial.push(b);
        match std::str::from_utf8(&self.partial) {
            Ok(_) => {
                let mut bytes = [0u8; 4];
                bytes[..self.partial.len()].copy_from_slice(&self.partial);
                let cell = Cell {
                    bytes,
                    len: self.partial.len() as u8,
                    escaped: false,
                };
                self.partial.clear();
                self.insert(cell, out);
            }
            // Incomplete: wait for the rest.
            Err(e) if e.error_len().is_none() && self.partial.len() < 4 => {}
            Err(_) => self.flush_partial(out),
        }
    }

    /// The bytes of a character never finished, each shown escaped.
    fn flush_partial(&mut self, out: &mut Vec<u8>) {
        let partial = std::mem::take(&mut self.partial);
        for b in partial {
            let mut c = Cell::byte(b);
            c.escaped = true;
            self.insert(c, out);
        }
    }

    fn insert(&mut self, c: Cell, out: &mut Vec<u8>) {
        if self.line_bytes + c.bytes().len() > MAX_LINE {
            out.push(0x07);
            return;
        }
        self.line_bytes += c.bytes().len();
        let at_end = self.cursor == self.cells.len();
        self.cells.insert(self.cursor, c);
        self.cursor += 1;
        if at_end && self.cols(self.start, self.cursor) <= self.room() {
            // The common case: written alone, nothing redrawn.
            c.draw(out);
        } else {
            self.refresh(out);
        }
    }

    fn backspace(&mut self, out: &mut Vec<u8>) {
        if self.cursor == 0 {
            return;
        }
        let at_end = self.cursor == self.cells.len();
        self.cursor -= 1;
        let c = self.cells.remove(self.cursor);
        self.line_bytes -= c.bytes().len();
        if at_end && self.cursor > self.start {
            out.extend_from_slice(format!("\x1b[{}D\x1b[K", c.cols()).as_bytes());
        } else {
            self.refresh(out);
        }
    }

    fn delete_at_cursor(&mut self, out: &mut Vec<u8>) {
        if self.cursor < self.cells.len() {
            let c = self.cells.remove(self.cursor);
            self.line_bytes -= c.bytes().len();
            self.refresh(out);
        }
    }

    fn move_to(&mut self, to: usize, out: &mut Vec<u8>) {
        if to != self.cursor {
            self.cursor = to;
            self.refresh(out);
        }
    }

    /// Up (`back`) or Down through the history.
    fn recall(&mut self, back: bool, out: &mut Vec<u8>) {
        let n = self.history.len();
        let at = match (self.recalled, back) {
            (None, true) if n > 0 => Some(n - 1),
            (Some(i), true) => Some(i.saturating_sub(1)),
            (Some(i), false) if i + 1 < n => Some(i + 1),
            (Some(_), false) => None,
            _ => return,
        };
        self.recalled = at;
        let line = at.map(|i| self.history[i].clone()).unwrap_or_default();
        self.cells.clear();
        self.partial.clear();
        for c in cells_of(&line) {
            self.cells.push(c);
        }
        self.recount();
        self.cursor = self.cells.len();
        self.refresh(out);
    }

    fn recount(&mut self) {
        self.line_bytes = self.cells.iter().map(|c| c.bytes().len()).sum();
        self.cursor = self.cursor.min(self.cells.len());
    }

    /// Columns of cells `from..to`.
    fn cols(&self, from: usize, to: usize) -> usize {
        self.cells[from..to].iter().map(Cell::cols).sum()
    }

    /// Redraws the row: the prompt and the part of the line around the cursor, scrolled
    /// so that the cursor is in view (a quarter of the way in when it had left it).
    fn refresh(&mut self, out: &mut Vec<u8>) {
        let room = self.room();
        let at_left_edge = self.cursor == self.start && self.start > 0;
        if self.cursor < self.start || at_left_edge || self.cols(self.start, self.cursor) > room {
            // Back from the cursor by a quarter of the room.
            let mut start = self.cursor;
            let mut cols = 0;
            while start > 0 && cols + self.cells[start - 1].cols() <= room / 4 {
                start -= 1;
                cols += self.cells[start].cols();
            }
            self.start = start;
        }
        out.push(b'\r');
        out.extend_from_slice(&self.prompt);
        let mut cols = 0;
        let mut cursor_col = 0;
        for (i, c) in self.cells[self.start..].iter().enumerate() {
            if self.start + i == self.cursor {
                cursor_col = cols;
            }
            if cols + c.cols() > room {
                break;
            }
            c.draw(out);
            cols += c.cols();
        }
        if self.cursor == self.cells.len() {
            cursor_col = self.cols(self.start, self.cursor);
        }
        out.extend_from_slice(b"\x1b[K\r");
        let to = self.prompt_cols + cursor_col;
        if to > 0 {
            out.extend_from_slice(format!("\x1b[{to}C").as_bytes());
        }
    }

    /// Enter: the line's bytes, the cursor to the next row.
    fn accept(&mut self, out: &mut Vec<u8>) -> Event {
        self.flush_partial(out);
        // The line stays as shown (one row): the cursor goes to the next.
        out.extend_from_slice(b"\r\n");
        let line: Vec<u8> = self.cells.iter().flat_map(|c| c.bytes().to_vec()).collect();
        Event::Line(line)
    }
}

/// The cells of `line`: its UTF-8 characters, and each byte that is none.
fn cells_of(line: &[u8]) -> Vec<Cell> {
    let mut out = Vec::new();
    for chunk in line.utf8_chunks() {
        for ch in chunk.valid().chars() {
            let mut bytes = [0u8; 4];
            let len = ch.encode_utf8(&mut bytes).len() as u8;
            out.push(if ch.is_ascii() {
                Cell::byte(ch as u8)
            } else {
                Cell {
                    bytes,
                    len,
                    escaped: false,
                }
            });
        }
        for &b in chunk.invalid() {
            let mut c = Cell::byte(b);
            c.escaped = true;
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests;
