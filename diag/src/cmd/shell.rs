//! `gpib-diag shell [RESOURCE]`: an interactive session with instruments, like
//! linux-gpib's `ibterm` and `pyvisa-shell`: a line ending in `?` is a query, any other
//! line is written; commands (`help` lists them) set the timeout and termination, read,
//! poll, clear, trigger, and open another resource. Line editing and history
//! (`~/.gpib_diag_history`) where the input is a terminal; input is bytes (what is
//! typed is what is sent; what is not UTF-8 is shown escaped); answers are shown
//! binary-safe.

mod editor;
mod history;
mod terminal;
mod winsize;

use gpib::{Device, Eos, ResourceManager, Timeout};

use crate::cli::instrument::ShellArgs;
use crate::cmd::instrument::{manager, shown};
use crate::error::{DiagError, Result};

use self::terminal::{Got, Lines};

const HELP: &str = "\
  TEXT?              query: send TEXT, print the answer
  TEXT               write TEXT
  query TEXT         send TEXT, print the answer
  write TEXT         send TEXT
  read               print the next answer
  stb                serial poll: the status byte
  clear | trigger | local | remote
  timeout [S|never]  show or set the I/O timeout
  eos [0xNN|off]     show or set the byte that ends reads besides END
  open RESOURCE      open another instrument (GPIB0::22::INSTR, TCPIP0::host::inst0::INSTR)
  list [PATTERN]     the resources reachable (VISA expression, default ?*)
  help | exit | quit";

/// What one line asks of the session.
enum Next {
    /// Go on, printing this (possibly nothing).
    Print(String),
    /// `exit`, `quit`.
    Leave,
}

/// One session: the manager, the open device, its settings as the user set them.
struct Session {
    rm: ResourceManager,
    device: Option<(String, Device)>,
    timeout: Timeout,
    eos: Option<u8>,
}

impl Session {
    fn device(&self) -> std::result::Result<&Device, String> {
        self.device
            .as_ref()
            .map(|(_, d)| d)
            .ok_or_else(|| "no instrument open: open RESOURCE".to_string())
    }

    fn open(&mut self, resource: &str) -> std::result::Result<String, String> {
        let mut d = self.rm.open(resource).map_err(|e| e.to_string())?;
        d.set_timeout(Some(self.timeout));
        d.set_eos(self.eos.map(|byte| Eos {
            byte,
            eight_bit: true,
        }));
        self.device = Some((resource.to_string(), d));
        Ok(format!("opened {resource}"))
    }

    /// Runs one line of bytes: what it asks, or an error to show. Text for the
    /// instrument goes as typed; a command's own arguments must be text.
    fn line(&mut self, line: &[u8]) -> std::result::Result<Next, String> {
        let (word, rest) = match line.iter().position(|&b| b == b' ') {
            Some(i) => (&line[..i], trim(&line[i + 1..])),
            None => (line, &[][..]),
        };
        let word = word.to_ascii_lowercase();
        match word.as_slice() {
            b"exit" | b"quit" if rest.is_empty() => return Ok(Next::Leave),
            b"exit" | b"quit" => {
                return Err(format!(
                    "{} takes nothing after it: {} (or Ctrl-D) leaves; write TEXT sends \
                     TEXT to the instrument",
                    String::from_utf8_lossy(&word),
                    String::from_utf8_lossy(&word)
                ))
            }
            b"open" if rest.is_empty() => {
                return Err("open needs a resource: open RESOURCE (GPIB0::22::INSTR, \
                     TCPIP0::host::inst0::INSTR)"
                    .into())
            }
            b"query" => {
                let d = self.device()?;
                send(d, rest)?;
                return Ok(Next::Print(shown(
                    &d.read_to_end().map_err(|e| e.to_string())?,
                )));
            }
            b"write" => return send(self.device()?, rest).map(|()| Next::Print(String::new())),
            _ => {}
        }
        let is_command = matches!(
            word.as_slice(),
            b"help"
                | b"?"
                | b"read"
                | b"stb"
                | b"clear"
                | b"trigger"
                | b"local"
                | b"remote"
                | b"timeout"
                | b"eos"
                | b"open"
                | b"list"
        );
        if !is_command {
            // Text for the instrument: a query when it ends in `?`.
            let d = self.device()?;
            send(d, line)?;
            if line.ends_with(b"?") {
                return Ok(Next::Print(shown(
                    &d.read_to_end().map_err(|e| e.to_string())?,
                )));
            }
            return Ok(Next::Print(String::new()));
        }
        let text = std::str::from_utf8(line).map_err(|_| {
            format!(
                "{} takes text: {} is not UTF-8",
                String::from_utf8_lossy(&word),
                shown(line)
            )
        })?;
        self.run(text).map(Next::Print)
    }

    /// Runs one of the shell's own commands; the text to print (possibly empty), or
    /// an error to show.
    fn run(&mut self, line: &str) -> std::result::Result<String, String> {
        let e = |e: gpib::Error| e.to_string();
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        match word.to_ascii_lowercase().as_str() {
            "help" | "?" => Ok(HELP.to_string()),
            "read" => Ok(shown(&self.device()?.read_to_end().map_err(e)?)),
            "stb" => Ok(format!(
                "0x{:02x}",
                self.device()?.serial_poll().map_err(e)?.0
            )),
            "clear" => self.device()?.clear().map(|()| String::new()).map_err(e),
            "trigger" => self.device()?.trigger().map(|()| String::new()).map_err(e),
            "local" => self
                .device()?
                .go_to_local()
                .map(|()| String::new())
                .map_err(e),
            "remote" => self.device()?.remote().map(|()| String::new()).map_err(e),
            "timeout" if rest.is_empty() => Ok(format!("timeout {}", self.timeout)),
            "timeout" => {
                self.timeout = rest.parse()?;
                let t = self.timeout;
                if let Some((_, d)) = self.device.as_mut() {
                    d.set_timeout(Some(t));
                }
                Ok(format!("timeout {}", self.timeout))
            }
            "eos" if rest.is_empty() => Ok(match self.eos {
                Some(b) => format!("eos 0x{b:02x}"),
                None => "eos off (END only)".into(),
            }),
            "eos" => {
                self.eos = match rest {
                    "off" => None,
                    hex => Some(
                        u8::from_str_radix(hex.trim_start_matches("0x"), 16)
                            .map_err(|_| format!("{hex:?} is not a byte (0x0a) nor off"))?,
                    ),
                };
                if let Some((_, d)) = self.device.as_mut() {
                    d.set_eos(self.eos.map(|byte| Eos {
                        byte,
                        eight_bit: true,
                    }));
                }
                self.run("eos")
            }
            "open" => self.open(rest),
            "list" => {
                let pattern = if rest.is_empty() { "?*" } else { rest };
                Ok(self.rm.list_resources(pattern).map_err(e)?.join("\n"))
            }
            other => Err(format!(
                "{other} is no command of the shell (help lists them)"
            )),
        }
    }
}

/// `bytes` without the spaces and tabs around them.
fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace());
    let end = bytes.iter().rposition(|b| !b.is_ascii_whitespace());
    match (start, end) {
        (Some(s), Some(e)) => &bytes[s..=e],
        _ => &[],
    }
}

/// Sends `bytes` as typed, with the write terminator after them: text as it is, other
/// bytes without END, then the terminator with it (one message).
fn send(d: &Device, bytes: &[u8]) -> std::result::Result<(), String> {
    let e = |e: gpib::Error| e.to_string();
    if let Ok(text) = std::str::from_utf8(bytes) {
        return d.write_str(text).map_err(e);
    }
    let mut left = bytes;
    while !left.is_empty() {
        let n = d.write_partial(left).map_err(e)?;
        if n == 0 {
            return Err("the instrument took none of the bytes".into());
        }
        left = left.get(n..).unwrap_or_default();
    }
    d.write_str("").map_err(e)
}

/// Runs the shell until `exit`, end of input or Ctrl-D.
pub fn run(args: &ShellArgs) -> Result<()> {
    let mut session = Session {
        rm: manager(&args.at)?,
        device: None,
        timeout: args.at.timeout,
        eos: None,
    };
    if let Some(r) = &args.resource {
        session.open(r).map_err(crate::error::DiagError::Usage)?;
    }
    let history =
        std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".gpib_diag_history"));
    let mut lines = Lines::new(history.as_deref().map(history::load).unwrap_or_default());
    println!("gpib-diag shell: help lists the commands, exit (or Ctrl-D) leaves");
    loop {
        let prompt = match &session.device {
            Some((r, _)) => format!("{r}> "),
            None => "> ".into(),
        };
        let line = match lines.read(&prompt) {
            Ok(Got::Line(l)) => l,
            Ok(Got::Interrupted) => continue,
            Ok(Got::TooLong) => {
                println!(
                    "error: a line longer than {} bytes: not run",
                    editor::MAX_LINE
                );
                continue;
            }
            Ok(Got::Eof) => break,
            Err(e) => return Err(DiagError::Usage(format!("reading a line: {e}"))),
        };
        let line = trim(&line);
        if line.is_empty() {
            continue;
        }
        lines.add_history(line);
        match session.line(line) {
            Ok(Next::Leave) => break,
            Ok(Next::Print(out)) if out.is_empty() => {}
            Ok(Next::Print(out)) => println!("{out}"),
            Err(why) => println!("error: {why}"),
        }
    }
    if let (Some(h), Some(entries)) = (&history, lines.history()) {
        let _ = history::save(h, entries);
    }
    Ok(())
}
