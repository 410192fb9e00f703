//! Summary statistics (mean, median, spread, 95 % confidence interval and
//! outliers) over a set of repeated measurements such as latencies in seconds
//! or transfer rates; Student's t distribution ([`student_t`]); and Welch's t test of
//! two such sets, with the ratio of their means ([`welch::welch`]).

/// Threshold on the absolute modified Z-score above which a sample counts as
/// an outlier, as recommended by Iglewicz and Hoaglin (1993).
pub const OUTLIER_THRESHOLD: f64 = 3.5;

/// Constant that makes the median absolute deviation (MAD) a consistent
/// estimator of the standard deviation of a normal distribution
/// (0.6745 is the 0.75 quantile of the standard normal distribution).
const MAD_SCALE: f64 = 0.6745;

pub mod student_t;
pub mod welch;

pub use student_t::student_t_975;
pub use welch::{welch_moments, Moments, Welch};

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
        (sd, student_t_975(count - 1.0) * sd / count.sqrt())
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
}
