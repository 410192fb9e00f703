//! Summary statistics (mean, median, spread, 95 % confidence interval and
//! outliers) over a set of repeated measurements such as latencies in seconds
//! or transfer rates.

/// Threshold on the absolute modified Z-score above which a sample counts as
/// an outlier, as recommended by Iglewicz and Hoaglin (1993).
pub const OUTLIER_THRESHOLD: f64 = 3.5;

/// Constant that makes the median absolute deviation (MAD) a consistent
/// estimator of the standard deviation of a normal distribution
/// (0.6745 is the 0.75 quantile of the standard normal distribution).
const MAD_SCALE: f64 = 0.6745;

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Summary of a non-empty set of finite samples.
///
/// All fields are finite: none of them is ever NaN or infinite.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median; for an even number of samples, the mean of the middle two.
    pub median: f64,
    /// Sample standard deviation (divisor `n - 1`); 0 for a single sample.
    pub stddev: f64,
    /// Half width of the 95 % confidence interval of the mean,
    /// `t(0.975, n - 1) * stddev / sqrt(n)`; 0 for a single sample.
    pub ci95_half_width: f64,
    /// Indices (into the slice given to [`summarize`], ascending) of the
    /// samples whose modified Z-score exceeds [`OUTLIER_THRESHOLD`].
    pub outliers: Vec<usize>,
}

/// Two-sided 95 % quantile `t(0.975, df)` of Student's t distribution (from
/// `statrs`): 12.706 for `df = 1`, 2.776 for 4, 2.042 for 30, towards the normal
/// quantile 1.960 as `df` grows. `df = 0` has no finite quantile, so it gives
/// `f64::INFINITY`. Past 100 000 degrees of freedom the quantile is taken at
/// 100 000 (within 2e-5 of the limit; `statrs` loses precision beyond).
pub fn student_t_975(df: usize) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    StudentsT::new(0.0, 1.0, df.min(100_000) as f64).map_or(f64::INFINITY, |t| t.inverse_cdf(0.975))
}

/// Welch's t-test of two samples' means (unequal variances, Welch–Satterthwaite
/// degrees of freedom), as R's `t.test(a, b)` computes it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Welch {
    /// Mean of the first sample.
    pub mean_a: f64,
    /// Mean of the second sample.
    pub mean_b: f64,
    /// `mean_a - mean_b`.
    pub difference: f64,
    /// Half width of the difference's 95 % confidence interval.
    pub difference_ci95: f64,
    /// The t statistic (0 when both samples have no spread and equal means).
    pub t: f64,
    /// Degrees of freedom (Welch–Satterthwaite).
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether the means differ at the 5 % level.
    pub significant: bool,
}

/// Welch's t-test of `a` against `b`: `None` unless each has two finite samples at
/// least. Samples with no spread on either side are exact: their means differ or not,
/// with p 0 or 1.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    let (na, nb) = (a.len(), b.len());
    if na < 2 || nb < 2 || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let var =
        |x: &[f64], m: f64| x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - 1) as f64;
    let (ma, mb) = (mean(a), mean(b));
    let (va, vb) = (var(a, ma) / na as f64, var(b, mb) / nb as f64);
    let se = (va + vb).sqrt();
    let difference = ma - mb;
    if se == 0.0 || !se.is_finite() {
        let differ = difference != 0.0;
        return Some(Welch {
            mean_a: ma,
            mean_b: mb,
            difference,
            difference_ci95: 0.0,
            t: if differ {
                difference.signum() * f64::INFINITY
            } else {
                0.0
            },
            df: (na + nb - 2) as f64,
            p: if differ { 0.0 } else { 1.0 },
            significant: differ,
        });
    }
    let df = (va + vb).powi(2) / (va * va / (na - 1) as f64 + vb * vb / (nb - 1) as f64);
    let t = difference / se;
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = (2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0);
    Some(Welch {
        mean_a: ma,
        mean_b: mb,
        difference,
        difference_ci95: dist.inverse_cdf(0.975) * se,
        t,
        df,
        p,
        significant: p < 0.05,
    })
}

/// The `p` quantile (0..=1) of `sorted` (ascending), by the nearest-rank method; 0
/// for no samples.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Summarizes `samples`.
///
/// Returns `None` when `samples` is empty or holds a value that is not finite
/// (NaN or infinite), since no meaningful summary exists then.
///
/// Outliers are found with the modified Z-score of Iglewicz and Hoaglin:
/// `M_i = 0.6745 * (x_i - median) / MAD`, where MAD is the median absolute
/// deviation from the median, and a sample is an outlier when
/// `|M_i| > 3.5`. When the MAD is 0 (more than half the samples are equal),
/// no sample is reported as an outlier.
///
/// References:
/// - Boris Iglewicz and David Hoaglin (1993), "Volume 16: How to Detect and
///   Handle Outliers", The ASQC Basic References in Quality Control:
///   Statistical Techniques, Edward F. Mykytka, Ph.D., Editor.
///
/// The same method is used by hyperfine (`src/outlier_detection.rs`).
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = samples.len();
    let count = n as f64;

    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let min = sorted[0];
    let max = sorted[n - 1];
    let median = median_of_sorted(&sorted);
    let mean = samples.iter().sum::<f64>() / count;

    let (stddev, ci95_half_width) = if n > 1 {
        let sum_sq: f64 = samples.iter().map(|x| (x - mean) * (x - mean)).sum();
        let sd = (sum_sq / (count - 1.0)).sqrt();
        (sd, student_t_975(n - 1) * sd / count.sqrt())
    } else {
        (0.0, 0.0)
    };

    Some(Summary {
        n,
        min,
        max,
        mean,
        median,
        stddev,
        ci95_half_width,
        outliers: modified_z_outliers(samples, median),
    })
}

/// Tells whether the 95 % confidence interval of the mean is tight enough to
/// stop measuring, in the manner of netperf's `-I` option.
///
/// True when the full interval width (`2 * ci95_half_width`) is at most
/// `relative_width` times the absolute mean: `relative_width = 0.05` asks for
/// the mean to be known to within ±2.5 %. Always false for fewer than two
/// samples, where no interval can be estimated.
pub fn ci_is_tight(summary: &Summary, relative_width: f64) -> bool {
    if summary.n < 2 || !relative_width.is_finite() || relative_width < 0.0 {
        return false;
    }
    2.0 * summary.ci95_half_width <= relative_width * summary.mean.abs()
}

/// Median of an already sorted, non-empty slice.
fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Indices of the samples whose modified Z-score exceeds the threshold.
fn modified_z_outliers(samples: &[f64], median: f64) -> Vec<usize> {
    let mut deviations: Vec<f64> = samples.iter().map(|x| (x - median).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    let mad = median_of_sorted(&deviations);
    if mad <= 0.0 {
        return Vec::new();
    }
    samples
        .iter()
        .enumerate()
        .filter(|(_, &x)| (MAD_SCALE * (x - median) / mad).abs() > OUTLIER_THRESHOLD)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile_sorted(&v, 0.5), 50.0);
        assert_eq!(percentile_sorted(&v, 0.99), 99.0);
        assert_eq!(percentile_sorted(&v, 1.0), 100.0);
        assert_eq!(percentile_sorted(&v, 0.0), 1.0);
        assert_eq!(percentile_sorted(&[], 0.5), 0.0);
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn one_to_five() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(s.n, 5);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 5.0);
        assert!(close(s.mean, 3.0));
        assert!(close(s.median, 3.0));
        // sqrt(10 / 4)
        assert!(close(s.stddev, 1.581_138_8));
        // 2.7764451 * 1.5811388 / sqrt(5)
        assert!(
            close(s.ci95_half_width, 1.963_243_3),
            "{}",
            s.ci95_half_width
        );
        assert!(s.outliers.is_empty());
    }

    #[test]
    fn unsorted_input_and_even_median() {
        let s = summarize(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert!(close(s.median, 2.5));
        assert!(close(s.mean, 2.5));
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 4.0);
        // sum of squares 5, / 3, sqrt
        assert!(close(s.stddev, (5.0f64 / 3.0).sqrt()));
        assert!(close(
            s.ci95_half_width,
            3.182_446_3 * (5.0f64 / 3.0).sqrt() / 2.0
        ));
    }

    #[test]
    fn outlier_found_by_modified_z_score() {
        // median 3, absolute deviations 2,1,0,1,97 -> MAD 1;
        // M(100) = 0.6745 * 97 = 65.4, M(1) = 1.349.
        let s = summarize(&[1.0, 2.0, 3.0, 100.0, 4.0]).unwrap();
        assert_eq!(s.outliers, vec![3]);
        // Borderline: M = 0.6745 * 5 = 3.3725 is not an outlier,
        // M = 0.6745 * 6 = 4.047 is.
        let s = summarize(&[1.0, 2.0, 3.0, 4.0, 8.0]).unwrap();
        assert!(s.outliers.is_empty());
        let s = summarize(&[1.0, 2.0, 3.0, 4.0, 9.0]).unwrap();
        assert_eq!(s.outliers, vec![4]);
        // Low outliers count too.
        let s = summarize(&[-50.0, 10.0, 11.0, 12.0, 13.0]).unwrap();
        assert_eq!(s.outliers, vec![0]);
    }

    #[test]
    fn zero_mad_gives_no_outliers() {
        let s = summarize(&[10.0, 10.0, 10.0, 10.0, 50.0]).unwrap();
        assert!(s.outliers.is_empty());
    }

    #[test]
    fn empty_and_non_finite() {
        assert_eq!(summarize(&[]), None);
        assert_eq!(summarize(&[1.0, f64::NAN]), None);
        assert_eq!(summarize(&[f64::INFINITY]), None);
    }

    #[test]
    fn single_sample() {
        let s = summarize(&[0.25]).unwrap();
        assert_eq!(
            s,
            Summary {
                n: 1,
                min: 0.25,
                max: 0.25,
                mean: 0.25,
                median: 0.25,
                stddev: 0.0,
                ci95_half_width: 0.0,
                outliers: vec![],
            }
        );
        assert!(!ci_is_tight(&s, 0.05));
    }

    #[test]
    fn t_quantiles() {
        assert_eq!(student_t_975(0), f64::INFINITY);
        // The published table, to its three decimals.
        for (df, t) in [
            (1, 12.706),
            (2, 4.303),
            (4, 2.776),
            (10, 2.228),
            (30, 2.042),
            (120, 1.980),
        ] {
            assert!((student_t_975(df) - t).abs() < 5e-4, "df {df}");
        }
        assert!((student_t_975(100_000) - 1.959_984).abs() < 1e-5);
        assert_eq!(student_t_975(usize::MAX), student_t_975(100_000));
        // Decreasing towards the normal quantile.
        for df in 1..200 {
            assert!(student_t_975(df) > student_t_975(df + 1));
        }
    }

    #[test]
    fn tightness() {
        // mean 100, sd 0.0816, half = 3.182 * 0.0816 / 2 = 0.130: width 0.26 %.
        let tight = summarize(&[100.0, 100.1, 99.9, 100.0]).unwrap();
        assert!(ci_is_tight(&tight, 0.05));
        assert!(!ci_is_tight(&tight, 0.001));
        // width 3.93 against a mean of 3.
        let loose = summarize(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert!(!ci_is_tight(&loose, 0.05));
        assert!(ci_is_tight(&loose, 1.5));
        // Identical samples: zero width is tight.
        let flat = summarize(&[2.0, 2.0, 2.0]).unwrap();
        assert!(ci_is_tight(&flat, 0.05));
        assert!(!ci_is_tight(&flat, f64::NAN));
    }

    #[test]
    fn serializes() {
        // Serialize is derived; the summary has no NaN, so any serializer
        // accepts it. Check the derive compiles against a trivial bound.
        fn is_serialize<T: serde::Serialize>(_: &T) {}
        is_serialize(&summarize(&[1.0]).unwrap());
    }

    #[test]
    fn welch_is_rs_t_test() {
        // Reference figures computed apart from this code: the same formulas in Python
        // with the tail of Student's t density integrated by Simpson's rule (200,000
        // steps) for p, and bisected for the 97.5 % quantile (2.368358 at 6.946 df).
        let w = welch(&[19.1, 20.3, 18.7, 21.2, 19.9], &[15.2, 16.8, 14.9, 15.5]).unwrap();
        assert!((w.difference - 4.24).abs() < 1e-9, "{w:?}");
        assert!((w.t - 6.964872).abs() < 1e-6, "{w:?}");
        assert!((w.df - 6.945995).abs() < 1e-6, "{w:?}");
        assert!((w.p - 0.000226171).abs() < 1e-8, "{w:?}");
        assert!((w.difference_ci95 - 1.441783).abs() < 1e-5, "{w:?}");
        assert!(w.significant);
        // Overlapping samples: not significant.
        let w = welch(&[1.0, 2.0, 3.0], &[1.5, 2.5, 3.5]).unwrap();
        assert!(!w.significant && w.p > 0.5, "{w:?}");
        // No spread: exact.
        assert_eq!(welch(&[2.0, 2.0], &[2.0, 2.0]).unwrap().p, 1.0);
        assert_eq!(welch(&[3.0, 3.0], &[2.0, 2.0]).unwrap().p, 0.0);
        assert!(welch(&[1.0], &[1.0, 2.0]).is_none());
        assert!(welch(&[1.0, f64::NAN], &[1.0, 2.0]).is_none());
    }
}
