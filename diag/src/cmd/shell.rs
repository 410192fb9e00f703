//! `gpib-diag shell [RESOURCE]`: an interactive session with instruments, like
//! linux-gpib's `ibterm` and `pyvisa-shell`: a line ending in `?` is a query, any other
//! line is written; commands (`help` lists them) set the timeout and termination, read,
//! poll, clear, trigger, and open another resource. Line editing and history
//! (`~/.gpib_diag_history`) where the input is a terminal; answers are shown binary-safe.

use gpib::{Device, Eos, ResourceManager, Timeout};
use rustyline::error::ReadlineError;

use crate::cli::instrument::ShellArgs;
use crate::cmd::instrument::{manager, shown};
use crate::error::Result;

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
  help | exit";

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
        d.set_timeout(Some(self.timeout.duration().unwrap_or_default()));
        d.set_eos(self.eos.map(|byte| Eos {
            byte,
            eight_bit: true,
        }));
        self.device = Some((resource.to_string(), d));
        Ok(format!("opened {resource}"))
    }

    /// Runs one line; the text to print (possibly empty), or an error to show.
    fn run(&mut self, line: &str) -> std::result::Result<String, String> {
        let e = |e: gpib::Error| e.to_string();
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        match word.to_ascii_lowercase().as_str() {
            "help" | "?" => Ok(HELP.to_string()),
            "query" => {
                let d = self.device()?;
                d.write_str(rest).map_err(e)?;
                Ok(shown(&d.read_to_end().map_err(e)?))
            }
            "write" => self
                .device()?
                .write_str(rest)
                .map(|()| String::new())
                .map_err(e),
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
                let t = self.timeout.duration().unwrap_or_default();
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
            "open" if !rest.is_empty() => self.open(rest),
            "list" => {
                let pattern = if rest.is_empty() { "?*" } else { rest };
                Ok(self.rm.list_resources(pattern).map_err(e)?.join("\n"))
            }
            _ if line.ends_with('?') => self.run(&format!("query {line}")),
            _ => self.run(&format!("write {line}")),
        }
    }
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
    let mut editor = rustyline::DefaultEditor::new()
        .map_err(|e| crate::error::DiagError::Usage(format!("cannot start the shell: {e}")))?;
    let history =
        std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".gpib_diag_history"));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    println!("gpib-diag shell: help lists the commands, exit (or Ctrl-D) leaves");
    loop {
        let prompt = match &session.device {
            Some((r, _)) => format!("{r}> "),
            None => "> ".into(),
        };
        let line = match editor.readline(&prompt) {
            Ok(l) => l,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                return Err(crate::error::DiagError::Usage(format!(
                    "reading a line: {e}"
                )))
            }
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(line);
        if matches!(line, "exit" | "quit") {
            break;
        }
        match session.run(line) {
            Ok(out) if out.is_empty() => {}
            Ok(out) => println!("{out}"),
            Err(why) => println!("error: {why}"),
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    Ok(())
}
