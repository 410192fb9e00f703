//! Linux's `/proc/interrupts`: how often each interrupt line fired, summed over CPUs,
//! so that the lines that fire during a transfer (the GPIB board's, and any other:
//! today's version of a polled disc) can be counted per byte.

/// One line's count at one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The line's name: an IRQ number (`29`) or a kind (`LOC`, `RES`).
    pub irq: String,
    /// Interrupts so far, all CPUs together.
    pub count: u64,
    /// What the kernel says of it: the controller and the drivers on it.
    pub description: String,
}

/// The most characters of `/proc/interrupts` read (a machine with hundreds of CPUs
/// and lines stays well under).
const MAX_BYTES: u64 = 4 << 20;

/// Reads `/proc/interrupts`; empty where it cannot be read.
pub fn read() -> Vec<Line> {
    use std::io::Read;
    let mut text = String::new();
    match std::fs::File::open("/proc/interrupts") {
        Ok(f) => {
            if f.take(MAX_BYTES).read_to_string(&mut text).is_err() {
                return Vec::new();
            }
        }
        Err(_) => return Vec::new(),
    }
    parse(&text)
}

/// Parses `/proc/interrupts`: a header of CPU names, then per line `NAME: count
/// count ... description`. Lines that do not parse are left out; counts add up with
/// saturation.
pub fn parse(text: &str) -> Vec<Line> {
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let cpus = header.split_whitespace().count();
    lines
        .filter_map(|l| {
            let (irq, rest) = l.split_once(':')?;
            let irq = irq.trim();
            if irq.is_empty() {
                return None;
            }
            let mut count = 0u64;
            let mut words = rest.split_whitespace().peekable();
            let mut taken = 0;
            while taken < cpus {
                match words.peek().and_then(|w| w.parse::<u64>().ok()) {
                    Some(n) => {
                        count = count.saturating_add(n);
                        words.next();
                        taken += 1;
                    }
                    None => break,
                }
            }
            if taken == 0 {
                return None;
            }
            Some(Line {
                irq: irq.to_string(),
                count,
                description: words.collect::<Vec<_>>().join(" "),
            })
        })
        .collect()
}

/// Whether `line` is a device's interrupt (a numbered IRQ), not one of the kernel's
/// own (`LOC` timer ticks, `RES`/`CAL`/`TLB` between CPUs).
pub fn is_device(line: &Line) -> bool {
    line.irq.bytes().all(|b| b.is_ascii_digit())
}

/// The device lines that fired between `before` and `after`, with how often, most
/// first.
pub fn fired(before: &[Line], after: &[Line]) -> Vec<Line> {
    let mut out: Vec<Line> = after
        .iter()
        .filter(|a| is_device(a))
        .filter_map(|a| {
            let b = before.iter().find(|b| b.irq == a.irq)?;
            let n = a.count.checked_sub(b.count).filter(|&n| n > 0)?;
            Some(Line {
                irq: a.irq.clone(),
                count: n,
                description: a.description.clone(),
            })
        })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then(a.irq.cmp(&b.irq)));
    out
}

/// Words in a line's description that name a GPIB board's driver (linux-gpib's
/// kernel drivers).
const GPIB_DRIVERS: &[&str] = &[
    "gpib",
    "tnt4882",
    "ni_pci",
    "cb7210",
    "cec_pci",
    "agilent_82350b",
    "hp_82341",
    "hp_82335",
    "ines",
    "nec7210",
    "tms9914",
    "fmh_gpib",
    "fluke",
];

/// Whether `line` is a GPIB board's interrupt.
pub fn is_gpib(line: &Line) -> bool {
    let d = line.description.to_ascii_lowercase();
    GPIB_DRIVERS.iter().any(|w| d.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "           CPU0       CPU1
  0:         40          0   IO-APIC   2-edge      timer
 17:       1000        200   IO-APIC  17-fasteoi   tnt4882
 29:        500        500   PCI-MSI 1048576-edge      eth0
LOC:     123456     654321   Local timer interrupts
ERR:          0
";
    const AFTER: &str = "           CPU0       CPU1
  0:         40          0   IO-APIC   2-edge      timer
 17:       1100        200   IO-APIC  17-fasteoi   tnt4882
 29:       2500        500   PCI-MSI 1048576-edge      eth0
LOC:     123556     654321   Local timer interrupts
ERR:          0
";

    #[test]
    fn counts_add_over_cpus_and_the_description_is_kept() {
        let l = parse(BEFORE);
        assert_eq!(l.len(), 5);
        assert_eq!(l[1].irq, "17");
        assert_eq!(l[1].count, 1200);
        assert_eq!(l[1].description, "IO-APIC 17-fasteoi tnt4882");
        assert_eq!(l[4].irq, "ERR");
        assert_eq!(l[4].count, 0);
        assert!(is_gpib(&l[1]));
        assert!(!is_gpib(&l[2]));
    }

    #[test]
    fn the_lines_that_fired_come_most_first() {
        let f = fired(&parse(BEFORE), &parse(AFTER));
        let got: Vec<(&str, u64)> = f.iter().map(|l| (l.irq.as_str(), l.count)).collect();
        assert_eq!(got, [("29", 2000), ("17", 100)], "LOC is the kernel's own");
    }

    #[test]
    fn what_does_not_parse_is_left_out() {
        assert!(parse("").is_empty());
        assert!(parse("CPU0\nno colon here\n 5: x y\n").is_empty());
        let huge = format!("CPU0 CPU1\n 1: {} {} big\n", u64::MAX, 5);
        assert_eq!(parse(&huge)[0].count, u64::MAX, "saturates");
        // A counter that went backwards (a line re-registered) did not fire.
        assert!(fired(&parse(AFTER), &parse(BEFORE)).is_empty());
    }
}
