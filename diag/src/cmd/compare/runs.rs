//! `gpib-diag compare BEFORE.json AFTER.json`: two saved runs of one command (measure,
//! change the machine, measure again), figure by figure: the rates before and after,
//! their ratio with its 95 % confidence interval, and whether the difference is
//! significant (Welch's t test at 5 %).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde::Serialize;

use crate::cli::{Format, OutputArgs};
use crate::error::{DiagError, Result};
use crate::export::{self, csv::Num, table::Align, table::Grid};
use crate::saved::{self, Figure, Measure, SavedRun};
use crate::stats::{welch_moments, Welch};

/// One side of a compared figure.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Side {
    /// The configuration it was measured on.
    pub config: String,
    /// Its clock ("virtual", "wall"), when the file says.
    pub clock: Option<String>,
    /// Samples: runs (contention: devices).
    pub n: usize,
    /// Mean of the samples (seconds per transfer, or bytes per second).
    pub mean: f64,
    /// Their standard deviation.
    pub stddev: f64,
    /// The mean rate (bytes, or queries, per second).
    pub rate: f64,
}

impl Side {
    fn of(f: &Figure) -> Self {
        Self {
            config: f.config.clone(),
            clock: f.clock.clone(),
            n: f.moments.n,
            mean: f.moments.mean,
            stddev: f.moments.stddev,
            rate: f.rate(),
        }
    }
}

/// A figure both runs have, compared.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Compared {
    /// The figure as people read it.
    pub figure: String,
    /// What it is ("read", "large write", "3 devices").
    pub what: String,
    /// Bytes per transfer (queries for doctor's short queries).
    pub size: u64,
    /// The device, or empty.
    pub device: String,
    /// The rates' unit.
    pub unit: &'static str,
    /// What the samples are: seconds per transfer, or rates.
    pub samples: Measure,
    /// Before the change.
    pub before: Side,
    /// After it.
    pub after: Side,
    /// The rate after over the rate before (above 1: faster after); `None` when the
    /// rate before is 0.
    pub ratio: Option<f64>,
    /// Its 95 % confidence interval (Fieller); `None` when a side has one sample, or
    /// the interval is unbounded.
    pub ratio_ci95: Option<[f64; 2]>,
    /// Welch's two-sided p-value; `None` when a side has one sample.
    pub p: Option<f64>,
    /// `p < 0.05`; `None` when a side has one sample.
    pub significant: Option<bool>,
    /// The whole test (its `a` is the slower-is-larger side: seconds before, or rates
    /// after), when both sides have two samples or more.
    pub welch: Option<Welch>,
}

/// Two runs compared.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Comparison {
    /// The file before the change.
    pub before: String,
    /// The file after it.
    pub after: String,
    /// The command both were saved by.
    pub saved_by: String,
    /// The figures both have.
    pub figures: Vec<Compared>,
    /// Figures only the first run has.
    pub only_before: Vec<String>,
    /// Figures only the second run has.
    pub only_after: Vec<String>,
}

/// Runs the comparison of the runs saved in `before` and `after`.
pub fn run(before: &str, after: &str, out: &OutputArgs) -> Result<()> {
    let c = compare(&saved::read(before)?, &saved::read(after)?)?;
    let text = match out.format {
        Format::Text => text(&c, &grid(&c).text()),
        Format::Markdown => text(&c, &grid(&c).markdown()),
        Format::Json => json(&c)?,
        Format::Csv => csv(&c)?,
    };
    export::emit(&out.output, &text)
}

/// Matches the two runs' figures and tests each difference.
pub fn compare(before: &SavedRun, after: &SavedRun) -> Result<Comparison> {
    let refuse = |why: String| DiagError::Incomparable {
        before: before.path.clone(),
        after: after.path.clone(),
        why,
    };
    if before.command != after.command {
        return Err(refuse(format!(
            "the first was saved by {}, the second by {}: compare two runs of the same \
             command",
            before.command, after.command
        )));
    }
    if let (Some(a), Some(b)) = (&before.workload, &after.workload) {
        if a != b {
            return Err(refuse(format!(
                "the devices did different work ({a} before, {b} after)"
            )));
        }
    }
    // Each run's figures by key (each key once: `saved::read` refuses a repeat), so
    // matching is linear in the figures.
    let (in_before, in_after) = (index(before), index(after));
    let figures: Vec<Compared> = before
        .figures
        .iter()
        .filter_map(|b| in_after.get(&b.key()).map(|a| compared(b, a)))
        .collect::<std::result::Result<_, _>>()
        .map_err(refuse)?;
    let only = |run: &SavedRun, other: &Index<'_>| -> Vec<String> {
        run.figures
            .iter()
            .filter(|f| !other.contains_key(&f.key()))
            .map(Figure::label)
            .collect()
    };
    let (only_before, only_after) = (only(before, &in_after), only(after, &in_before));
    if figures.is_empty() {
        let list = |v: &[String]| {
            let mut s = v.iter().take(4).cloned().collect::<Vec<_>>().join("; ");
            if v.len() > 4 {
                let _ = write!(s, "; and {} more", v.len() - 4);
            }
            s
        };
        return Err(refuse(format!(
            "no figure in common (the first has {}; the second has {})",
            list(&only_before),
            list(&only_after)
        )));
    }
    Ok(Comparison {
        before: before.path.clone(),
        after: after.path.clone(),
        saved_by: before.command.clone(),
        figures,
        only_before,
        only_after,
    })
}

/// A run's figures by their key.
type Index<'a> = HashMap<(&'a str, u64, &'a str), &'a Figure>;

/// The figures of `run` by their key.
fn index(run: &SavedRun) -> Index<'_> {
    run.figures.iter().map(|f| (f.key(), f)).collect()
}

/// One figure of both runs, tested; refused, naming it, when the test's arithmetic
/// leaves a figure that is not finite.
fn compared(before: &Figure, after: &Figure) -> std::result::Result<Compared, String> {
    // The ratio of the test's means is the rate after over the rate before: seconds
    // before over seconds after, or rates after over rates before.
    let welch = match before.measure {
        Measure::Seconds => welch_moments(before.moments, after.moments),
        Measure::Rate => welch_moments(after.moments, before.moments),
    };
    let (b, a) = (Side::of(before), Side::of(after));
    let ratio = match &welch {
        Some(w) => w.ratio,
        None => (b.rate > 0.0).then(|| a.rate / b.rate),
    };
    let mut numbers = vec![("the ratio", ratio)];
    numbers.extend(welch.iter().flat_map(|w| {
        [
            ("the p-value", Some(w.p)),
            ("the interval's low end", w.ratio_ci95.map(|c| c[0])),
            ("the interval's high end", w.ratio_ci95.map(|c| c[1])),
        ]
    }));
    if let Some((name, Some(v))) = numbers
        .into_iter()
        .find(|(_, v)| v.is_some_and(|v| !v.is_finite()))
    {
        return Err(format!(
            "{} ({} before, {} after): {name} comes out as {v}: its figures are past \
             what can be computed with",
            before.label(),
            before.place,
            after.place
        ));
    }
    Ok(Compared {
        figure: before.label(),
        what: before.what.clone(),
        size: before.size,
        device: before.device.clone(),
        unit: before.unit,
        samples: before.measure,
        before: b,
        after: a,
        ratio,
        ratio_ci95: welch.and_then(|w| w.ratio_ci95),
        p: welch.map(|w| w.p),
        significant: welch.map(|w| w.significant),
        welch,
    })
}

/// A ratio to three significant digits: `58.4x`, `1.00x`, `0.0171x`.
pub fn ratio_text(r: f64) -> String {
    if !(r.is_finite() && r > 0.0) {
        return format!("{r}x");
    }
    let decimals = |r: f64| (2 - r.log10().floor() as i64).clamp(0, 12) as usize;
    let d = decimals(r);
    // 0.99996 is 1.00, not 1.000: the digits of the rounded value.
    let d = decimals(format!("{r:.d$}").parse().unwrap_or(r));
    format!("{r:.d$}x")
}

/// A p-value: `<0.0001`, or four decimals.
fn p_text(p: f64) -> String {
    if p < 1e-4 {
        "<0.0001".to_string()
    } else {
        format!("{p:.4}")
    }
}

fn grid(c: &Comparison) -> Grid {
    let mut grid = Grid::new(&[
        ("figure", Align::Left),
        ("before", Align::Right),
        ("after", Align::Right),
        ("after/before", Align::Right),
        ("95 % CI", Align::Left),
        ("p", Align::Right),
        ("n", Align::Right),
        ("difference", Align::Left),
    ]);
    for f in &c.figures {
        let rate = |r: f64| format!("{r:.0} {}", f.unit);
        grid.row(vec![
            f.figure.clone(),
            rate(f.before.rate),
            rate(f.after.rate),
            f.ratio.map_or("-".into(), ratio_text),
            f.ratio_ci95.map_or("-".into(), |[lo, hi]| {
                format!("{} to {}", ratio_text(lo), ratio_text(hi))
            }),
            f.p.map_or("-".into(), p_text),
            format!("{}/{}", f.before.n, f.after.n),
            match f.significant {
                Some(true) => "significant",
                Some(false) => "not significant",
                None => "cannot tell",
            }
            .into(),
        ]);
    }
    grid
}

/// The table, then what the columns mean and what to know about these figures.
fn text(c: &Comparison, table: &str) -> String {
    let mut out = format!(
        "before: {} ({}, {})\nafter:  {} ({}, {})\n\n{table}\n",
        c.before,
        c.saved_by,
        configs(c, |f| &f.before),
        c.after,
        c.saved_by,
        configs(c, |f| &f.after)
    );
    let per = if c.saved_by == "contention" {
        "the devices' rates at each point (n: devices)"
    } else {
        "each run's seconds (n: runs)"
    };
    let _ = writeln!(
        out,
        "after/before: the rate after over the rate before (above 1: faster after), with \
         its 95 % confidence interval (Fieller); p: Welch's t test on {per}; \
         significant: p below 0.05."
    );
    let single: Vec<&Compared> = c.figures.iter().filter(|f| f.welch.is_none()).collect();
    if !single.is_empty() {
        let how = match c.saved_by.as_str() {
            "io-test" | "sweep" => format!(
                "save each run with --repeat N (N of 2 or more, e.g. `gpib-diag {} \
                 --repeat 10 --format json -o FILE ...`)",
                c.saved_by
            ),
            "contention" => "a point with one device active has no spread between devices".into(),
            _ => "this command timed each transfer once".into(),
        };
        let _ = writeln!(
            out,
            "cannot tell: {} {} one sample on a side, so no confidence interval or test \
             can be computed: {how}.",
            single
                .iter()
                .map(|f| f.figure.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            if single.len() == 1 { "has" } else { "have" }
        );
    }
    let clock = |side: fn(&Compared) -> &Side| -> Vec<&str> {
        let mut v: Vec<&str> = c
            .figures
            .iter()
            .filter_map(|f| side(f).clock.as_deref())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (cb, ca) = (clock(|f| &f.before), clock(|f| &f.after));
    // Repeats that did not vary (beyond the rounding of their mean).
    let still = |s: &Side| s.n > 1 && s.stddev <= 1e-9 * s.mean.abs();
    let still = c
        .figures
        .iter()
        .any(|f| still(&f.before) && still(&f.after));
    if cb == ["virtual"] && ca == ["virtual"] && still {
        let _ = writeln!(
            out,
            "virtual clock: the simulator gives the same figures on every run, so repeats \
             do not vary: the intervals have zero width and any difference is exact. On \
             hardware (wall clock) they show how much runs differ."
        );
    } else if !cb.is_empty() && !ca.is_empty() && cb != ca {
        let _ = writeln!(
            out,
            "clocks: {} before, {} after: one run is simulated (virtual time), the other \
             measured (wall time).",
            cb.join(", "),
            ca.join(", ")
        );
    }
    for (side, list) in [("before", &c.only_before), ("after", &c.only_after)] {
        if !list.is_empty() {
            let _ = writeln!(out, "only {side}: {}", list.join("; "));
        }
    }
    out
}

/// The configurations of one side, in order, each once.
fn configs(c: &Comparison, side: fn(&Compared) -> &Side) -> String {
    let mut seen = HashSet::new();
    let mut v: Vec<&str> = Vec::new();
    for f in &c.figures {
        let s = side(f).config.as_str();
        if seen.insert(s) {
            v.push(s);
        }
    }
    v.join(", ")
}

/// The JSON document, written straight from the comparison (a `serde_json::Value` of
/// it first took about 4 KB a figure).
#[derive(Serialize)]
struct Document<'a> {
    command: &'static str,
    comparison: &'a Comparison,
    tool: &'static str,
    version: &'static str,
}

fn json(c: &Comparison) -> Result<String> {
    let doc = Document {
        command: "compare",
        comparison: c,
        tool: "gpib-diag",
        version: env!("CARGO_PKG_VERSION"),
    };
    let mut s = serde_json::to_string_pretty(&doc)
        .map_err(|e| DiagError::Usage(format!("cannot encode JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}

/// A CSV row: one figure, unrounded.
#[derive(Serialize)]
struct Row<'a> {
    figure: &'a str,
    what: &'a str,
    size: u64,
    device: &'a str,
    unit: &'a str,
    before_config: &'a str,
    before_n: usize,
    before_rate: Num,
    after_config: &'a str,
    after_n: usize,
    after_rate: Num,
    ratio: Option<Num>,
    ratio_ci95_low: Option<Num>,
    ratio_ci95_high: Option<Num>,
    p: Option<Num>,
    significant: Option<bool>,
}

fn csv(c: &Comparison) -> Result<String> {
    export::csv::rows(
        &[],
        c.figures.iter().map(|f| Row {
            figure: &f.figure,
            what: &f.what,
            size: f.size,
            device: &f.device,
            unit: f.unit,
            before_config: &f.before.config,
            before_n: f.before.n,
            before_rate: Num(f.before.rate),
            after_config: &f.after.config,
            after_n: f.after.n,
            after_rate: Num(f.after.rate),
            ratio: f.ratio.map(Num),
            ratio_ci95_low: f.ratio_ci95.map(|c| Num(c[0])),
            ratio_ci95_high: f.ratio_ci95.map(|c| Num(c[1])),
            p: f.p.map(Num),
            significant: f.significant,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_to_three_significant_digits() {
        assert_eq!(ratio_text(58.4286), "58.4x");
        assert_eq!(ratio_text(45.87), "45.9x");
        assert_eq!(ratio_text(1.0), "1.00x");
        assert_eq!(ratio_text(0.017_12), "0.0171x");
        assert_eq!(ratio_text(133.46), "133x");
        assert_eq!(ratio_text(0.999_999_999_9), "1.00x");
        assert_eq!(ratio_text(9.9996), "10.0x");
        assert_eq!(p_text(0.0), "<0.0001");
        assert_eq!(p_text(0.04567), "0.0457");
        assert_eq!(p_text(1.0), "1.0000");
    }
}
