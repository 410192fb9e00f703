//! Where the shell's lines come from: a terminal (raw mode while a line is edited,
//! [`super::editor`] drawing it) or anything else (a pipe, a file: lines of bytes, no
//! echo). Either way a line is bytes, and a byte that is not UTF-8 never ends the
//! session.

use std::collections::VecDeque;
use std::io::{BufRead, IsTerminal, Read, Write};
use std::os::fd::AsFd;

use nix::sys::termios::{self, SetArg, Termios};

use super::editor::{Editor, Event, MAX_LINE};

/// The most bytes one read of the terminal takes.
const CHUNK: usize = 4096;

/// Lines from standard input.
pub enum Lines {
    /// A terminal, edited.
    Terminal {
        /// The editor (its history too).
        editor: Box<Editor>,
        /// Bytes read and not yet fed (a paste of several lines).
        pending: VecDeque<u8>,
    },
    /// Not a terminal: lines as they come.
    Plain,
}

/// What one line read gave.
pub enum Got {
    /// A line, without its end.
    Line(Vec<u8>),
    /// Ctrl-C: nothing to run.
    Interrupted,
    /// A line past [`MAX_LINE`] from a pipe: refused (skipped to its end).
    TooLong,
    /// The end of input.
    Eof,
}

impl Lines {
    /// The editor where standard input and output are terminals, else plain lines.
    pub fn new(history: Vec<Vec<u8>>) -> Self {
        if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
            Lines::Terminal {
                editor: Box::new(Editor::new(history)),
                pending: VecDeque::new(),
            }
        } else {
            Lines::Plain
        }
    }

    /// The history to save (none for plain lines).
    pub fn history(&self) -> Option<&[Vec<u8>]> {
        match self {
            Lines::Terminal { editor, .. } => Some(editor.history()),
            Lines::Plain => None,
        }
    }

    /// Adds a line to the history.
    pub fn add_history(&mut self, line: &[u8]) {
        if let Lines::Terminal { editor, .. } = self {
            editor.add_history(line);
        }
    }

    /// The next line, with `prompt` shown on a terminal.
    pub fn read(&mut self, prompt: &str) -> std::io::Result<Got> {
        match self {
            Lines::Terminal { editor, pending } => edited(editor, pending, prompt),
            Lines::Plain => plain(),
        }
    }
}

/// A line of a pipe or file: bytes to the next `\n` (a `\r` before it dropped).
fn plain() -> std::io::Result<Got> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut line = Vec::new();
    let n = (&mut input)
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', &mut line)?;
    if n == 0 {
        return Ok(Got::Eof);
    }
    if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
        // Skipped to the line's end, a buffer at a time.
        loop {
            let buf = input.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            match buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    input.consume(i + 1);
                    break;
                }
                None => {
                    let n = buf.len();
                    input.consume(n);
                }
            }
        }
        return Ok(Got::TooLong);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Got::Line(line))
}

/// Standard input in raw mode until dropped (the settings it had put back).
struct Raw(Termios);

impl Raw {
    fn new() -> std::io::Result<Self> {
        let stdin = std::io::stdin();
        let saved = termios::tcgetattr(stdin.as_fd())?;
        let mut raw = saved.clone();
        termios::cfmakeraw(&mut raw);
        // Output as before (a `\n` printed while raw still starts its row).
        raw.output_flags = saved.output_flags;
        termios::tcsetattr(stdin.as_fd(), SetArg::TCSADRAIN, &raw)?;
        Ok(Raw(saved))
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(std::io::stdin().as_fd(), SetArg::TCSADRAIN, &self.0);
    }
}

/// A line edited on the terminal, bracketed paste on while it is.
fn edited(editor: &mut Editor, pending: &mut VecDeque<u8>, prompt: &str) -> std::io::Result<Got> {
    let _raw = Raw::new()?;
    let mut stdout = std::io::stdout().lock();
    let mut out = b"\x1b[?2004h".to_vec();
    editor.begin(prompt, super::winsize::columns(), &mut out);
    let mut buf = [0u8; CHUNK];
    let got = 'line: loop {
        while let Some(b) = pending.pop_front() {
            if let Some(event) = editor.feed(b, &mut out) {
                break 'line event;
            }
        }
        stdout.write_all(&out)?;
        stdout.flush()?;
        out.clear();
        let n = match std::io::stdin().lock().read(&mut buf) {
            Ok(n) => n,
            // A signal (the window resized, say): read again.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break Event::Eof;
        }
        pending.extend(&buf[..n]);
    };
    out.extend_from_slice(b"\x1b[?2004l");
    stdout.write_all(&out)?;
    stdout.flush()?;
    Ok(match got {
        Event::Line(l) => Got::Line(l),
        Event::Interrupted => Got::Interrupted,
        Event::Eof => Got::Eof,
    })
}
