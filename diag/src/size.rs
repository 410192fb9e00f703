//! Transfer sizes on the command line: `400000`, `4K`, `16M`, `4kB`, `1MB`.
//!
//! One rule: an upper-case `K`, `M`, `G` alone, or with `iB`, is binary (1024, 1024²,
//! 1024³); `kB`, `MB`, `GB` are decimal (1000, 1000², 1000³). Suffixes that people read
//! both ways are refused with the two spellings to choose from: `k` alone, `KB` (1000 in
//! SI, 1024 in JEDEC's usage), and lower-case `m`, `g`, `mb`, `kb` (bits?).

/// Parses a size in bytes: a whole number with an optional suffix (see the module
/// docs). Zero is refused.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim().replace('_', "");
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    if digits.is_empty() {
        return Err(format!(
            "{text:?} is not a size (expected e.g. 400000, 4K, 16M)"
        ));
    }
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is too large"))?;
    let mult: u64 = match suffix {
        "" | "B" => 1,
        "K" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "k" | "KB" | "kb" | "Kb" | "kiB" | "kib" => {
            return Err(ambiguous(text, digits, "K", 1 << 10, "kB", 1_000));
        }
        "m" | "mb" | "Mb" | "mB" | "mib" | "MIB" => {
            return Err(ambiguous(text, digits, "M", 1 << 20, "MB", 1_000_000));
        }
        "g" | "gb" | "Gb" | "gB" | "gib" | "GIB" => {
            return Err(ambiguous(text, digits, "G", 1 << 30, "GB", 1_000_000_000));
        }
        other => {
            return Err(format!(
                "unknown size suffix {other:?} in {text:?} (use K, M, G for 1024-based sizes, \
                 kB, MB, GB for 1000-based ones)"
            ))
        }
    };
    let size = n
        .checked_mul(mult)
        .ok_or_else(|| format!("{text:?} is too large"))?;
    if size == 0 {
        return Err("the transfer size must be at least 1 byte".into());
    }
    Ok(size)
}

fn ambiguous(text: &str, digits: &str, bin: &str, b: u64, dec: &str, d: u64) -> String {
    let n: u64 = digits.parse().unwrap_or(0);
    format!(
        "{text:?} is ambiguous: write {digits}{bin} for {} bytes or {digits}{dec} for {} bytes",
        n.saturating_mul(b),
        n.saturating_mul(d)
    )
}

/// A size for people: `400000 B`, `4 KiB`, `16 MiB`.
pub fn human(size: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (u, name) in UNITS {
        if size >= u && size % u == 0 {
            return format!("{} {name}", size / u);
        }
    }
    format!("{size} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("400000"), Ok(400_000));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("16M"), Ok(16 << 20));
        assert_eq!(parse_size("4kB"), Ok(4000));
        assert_eq!(parse_size("1_000"), Ok(1000));
        assert!(parse_size("0").unwrap_err().contains("at least 1 byte"));
        assert!(parse_size("x").is_err());
        assert!(parse_size("4Q").unwrap_err().contains("suffix"));
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("9999999999999999G").is_err());
    }

    #[test]
    fn ambiguous_suffixes_are_refused() {
        // `4k` meant 1024 while `4kB` meant 1000.
        let e = parse_size("4k").unwrap_err();
        assert!(
            e.contains("ambiguous") && e.contains("4K for 4096") && e.contains("4kB for 4000"),
            "{e}"
        );
        assert!(parse_size("4KB").unwrap_err().contains("ambiguous"));
        assert!(parse_size("1m").unwrap_err().contains("1M for 1048576"));
        assert!(parse_size("2g").unwrap_err().contains("ambiguous"));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human(400_000), "400000 B");
        assert_eq!(human(4096), "4 KiB");
        assert_eq!(human(16 << 20), "16 MiB");
    }
}
