//! `gpib-diag query | write | read | list`: everyday instrument work on any resource
//! string, through the library's one entry point (`gpib::ResourceManager`).

use std::io::Write as _;

use gpib::ResourceManager;

use crate::cli::instrument::{ListArgs, QueryArgs, ReadArgs, ResourceArgs, WriteArgs};
use crate::error::{DiagError, Result};

/// The manager a command's resource strings are opened with.
pub fn manager(at: &ResourceArgs) -> Result<ResourceManager> {
    let mut rm = if at.hardware {
        if !cfg!(feature = "linux-gpib") {
            return Err(DiagError::NoLinuxGpib);
        }
        ResourceManager::new()
    } else {
        let name = at
            .bus
            .clone()
            .or_else(|| {
                std::env::var("GPIB_SIM_CONFIG")
                    .ok()
                    .filter(|v| !v.is_empty())
            })
            .unwrap_or_else(|| "bench".into());
        ResourceManager::simulated(&name)?
    };
    rm.set_timeout(at.timeout);
    Ok(rm)
}

/// Text as received: printable ASCII as it is, everything else escaped (`\x07`), the
/// final newline dropped, so that a binary answer cannot upset the terminal.
pub fn shown(bytes: &[u8]) -> String {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let body = body.strip_suffix(b"\r").unwrap_or(body);
    let mut out = String::with_capacity(body.len());
    for &b in body {
        match b {
            b'\\' => out.push_str("\\\\"),
            b' '..=b'~' => out.push(b as char),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

/// `query RESOURCE TEXT [--block FILE]`: sends TEXT, prints the answer (or writes the
/// block it answers with).
pub fn query(args: &QueryArgs) -> Result<()> {
    let dev = manager(&args.at)?.open(&args.resource)?;
    dev.write_str(&args.text)?;
    answer(&dev, args.block.as_deref())
}

/// `write RESOURCE TEXT`.
pub fn write(args: &WriteArgs) -> Result<()> {
    manager(&args.at)?
        .open(&args.resource)?
        .write_str(&args.text)?;
    Ok(())
}

/// `read RESOURCE [--block FILE]`.
pub fn read(args: &ReadArgs) -> Result<()> {
    let dev = manager(&args.at)?.open(&args.resource)?;
    answer(&dev, args.block.as_deref())
}

/// Reads the answer: text to standard output, or a block's body into `block`.
fn answer(dev: &gpib::Device, block: Option<&std::path::Path>) -> Result<()> {
    let Some(path) = block else {
        println!("{}", shown(&dev.read_to_end()?));
        return Ok(());
    };
    let body = dev.read_block()?;
    let out = |source| DiagError::Output {
        path: path.display().to_string(),
        source,
    };
    if path.as_os_str() == "-" {
        std::io::stdout().write_all(&body).map_err(out)?;
    } else {
        std::fs::write(path, &body).map_err(out)?;
        eprintln!(
            "gpib-diag: {} bytes of block into {}",
            body.len(),
            path.display()
        );
    }
    Ok(())
}

/// `list [PATTERN]`: the resources the manager reaches, one a line.
pub fn list(args: &ListArgs) -> Result<()> {
    let mut rm = manager(&args.at)?;
    for r in rm.list_resources(&args.pattern)? {
        println!("{r}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn answers_are_shown_binary_safe() {
        assert_eq!(shown(b"ACME,1\n"), "ACME,1");
        assert_eq!(shown(b"a\x07b\xff\\\r\n"), "a\\x07b\\xff\\\\");
        assert_eq!(shown(b"two\nlines\n"), "two\\nlines");
    }
}
