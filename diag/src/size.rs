//! Transfer sizes on the command line: `400000`, `4K`, `16M`, `4kB`, `1MB`.

/// Parses a size in bytes: a whole number with an optional suffix (K/KiB = 1024,
/// M/MiB = 1024², G/GiB = 1024³, kB = 1000, MB = 1000², GB = 1000³). Zero is refused.
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
        "K" | "k" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        other => {
            return Err(format!(
                "unknown size suffix {other:?} in {text:?} (use K, M, G, kB, MB, GB)"
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
    fn human_sizes() {
        assert_eq!(human(400_000), "400000 B");
        assert_eq!(human(4096), "4 KiB");
        assert_eq!(human(16 << 20), "16 MiB");
    }
}
