//! Welch's t test of two samples: is the difference of their means real, and how large
//! is it, as a difference and as a ratio, with 95 % confidence intervals.

use serde::Serialize;

use super::student_t::{student_t_975, student_t_two_sided_p};
use super::{summarize, Summary};

/// Significance level of [`Welch::significant`] (two-sided), and one minus the
/// confidence of the intervals.
pub const ALPHA: f64 = 0.05;

/// What Welch's test needs of a sample: its size, mean and standard deviation (the
/// `n`, `mean` and `stddev` a [`Summary`] holds, or a saved record's).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Moments {
    /// Number of samples.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (divisor `n - 1`).
    pub stddev: f64,
}

impl From<&Summary> for Moments {
    fn from(s: &Summary) -> Self {
        Self {
            n: s.n,
            mean: s.mean,
            stddev: s.stddev,
        }
    }
}

/// The outcome of Welch's t test of sample `a` against sample `b` (see [`welch`]).
///
/// Every number is finite: no NaN, no infinity (so it serializes to plain JSON).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Welch {
    /// Sample `a`.
    pub a: Moments,
    /// Sample `b`.
    pub b: Moments,
    /// `mean(a) - mean(b)`.
    pub difference: f64,
    /// 95 % confidence interval of the difference of the means, `[low, high]`.
    pub difference_ci95: [f64; 2],
    /// `mean(a) / mean(b)`; `None` when `mean(b)` is 0.
    pub ratio: Option<f64>,
    /// 95 % confidence interval of the ratio of the means, `[low, high]`, by Fieller's
    /// theorem; `None` when the ratio is undefined or the interval is unbounded (`mean(b)`
    /// is not significantly different from 0).
    pub ratio_ci95: Option<[f64; 2]>,
    /// The t statistic, `difference / sqrt(var(a)/n(a) + var(b)/n(b))`; `None` when
    /// neither sample varies (the standard error is 0).
    pub t: Option<f64>,
    /// Welch–Satterthwaite degrees of freedom (`n(a) + n(b) - 2` when neither sample
    /// varies).
    pub df: f64,
    /// Two-sided p-value: the chance of a difference at least this large if the means
    /// were equal. When neither sample varies it is 0 for different means, 1 for equal.
    pub p: f64,
    /// `p < 0.05`: the means differ at the 5 % level.
    pub significant: bool,
}

/// Welch's t test of `a` against `b` (unequal variances, Welch–Satterthwaite degrees of
/// freedom), as R's `t.test(a, b, var.equal = FALSE)`: the difference of the means with
/// its 95 % confidence interval, the t statistic, the degrees of freedom, the two-sided
/// p-value and whether it is below 5 %; and the ratio of the means with its 95 %
/// confidence interval by Fieller's theorem.
///
/// Returns `None` when a sample has fewer than two values (no variance, so no interval,
/// can be estimated from it) or holds a value that is not finite.
///
/// Samples that do not vary at all (both standard deviations 0, as repeats in the
/// simulator's virtual time are) give zero-width intervals, no t statistic, and a
/// p-value of 0 (different means: the difference is exact) or 1 (equal means).
///
/// # The ratio's interval
///
/// Fieller's theorem (E. C. Fieller, "Some problems in interval estimation", J. R.
/// Stat. Soc. B 16, 1954): the interval holds every `ρ` for which
/// `(mean(a) - ρ mean(b))² <= q² (var(a)/n(a) + ρ² var(b)/n(b))`, the roots of a
/// quadratic in `ρ`. `q` is `t(0.975)` at the Welch–Satterthwaite degrees of freedom of
/// `mean(a) - ρ mean(b)` taken at the estimated ratio. Unlike the delta method's
/// symmetric interval, Fieller's is exact for normal means and lopsided when the
/// denominator is uncertain; it is unbounded when `mean(b)` is not significantly
/// different from 0, and then `ratio_ci95` is `None`. Its `q` is at different degrees of
/// freedom than the test's, so in borderline cases the interval may exclude 1 while
/// `p` is just above 0.05, or the reverse.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    welch_moments(Moments::from(&summarize(a)?), Moments::from(&summarize(b)?))
}

/// [`welch`] from each sample's size, mean and standard deviation (what a summary keeps
/// when the values themselves are gone).
///
/// Returns `None` when a sample has fewer than two values, or a mean or standard
/// deviation that is not finite, or a negative standard deviation.
pub fn welch_moments(a: Moments, b: Moments) -> Option<Welch> {
    let valid =
        |m: &Moments| m.n >= 2 && m.mean.is_finite() && m.stddev.is_finite() && m.stddev >= 0.0;
    if !(valid(&a) && valid(&b)) {
        return None;
    }
    // On a scale where the largest figure is 1, so squares neither overflow nor
    // underflow; differences are scaled back at the end, the rest does not depend on it.
    let scale = [a.mean.abs(), b.mean.abs(), a.stddev, b.stddev]
        .into_iter()
        .fold(0.0, f64::max);
    let unit = |m: Moments| Moments {
        mean: if scale > 0.0 { m.mean / scale } else { 0.0 },
        stddev: if scale > 0.0 { m.stddev / scale } else { 0.0 },
        ..m
    };
    let mut w = welch_unit(unit(a), unit(b));
    let back = if scale > 0.0 { scale } else { 1.0 };
    w.a = a;
    w.b = b;
    let half = (w.difference_ci95[1] - w.difference_ci95[0]) / 2.0 * back;
    w.difference = a.mean - b.mean;
    w.difference_ci95 = [w.difference - half, w.difference + half];
    Some(w)
}

/// [`welch_moments`] of valid moments no larger than 1.
fn welch_unit(a: Moments, b: Moments) -> Welch {
    let (na, nb) = (a.n as f64, b.n as f64);
    // Squared standard errors of the two means.
    let (sa2, sb2) = (a.stddev * a.stddev / na, b.stddev * b.stddev / nb);
    let difference = a.mean - b.mean;
    let ratio = (b.mean != 0.0).then(|| a.mean / b.mean);
    let se2 = sa2 + sb2;
    if se2 == 0.0 {
        // Neither sample varies: the difference is exact.
        return Welch {
            a,
            b,
            difference,
            difference_ci95: [difference, difference],
            ratio,
            ratio_ci95: ratio.map(|r| [r, r]),
            t: None,
            df: na + nb - 2.0,
            p: if difference == 0.0 { 1.0 } else { 0.0 },
            significant: difference != 0.0,
        };
    }
    let se = se2.sqrt();
    let df = satterthwaite(sa2, a.n, sb2, b.n);
    let t = difference / se;
    let p = student_t_two_sided_p(t, df);
    let half = student_t_975(df) * se;
    Welch {
        a,
        b,
        difference,
        difference_ci95: [difference - half, difference + half],
        ratio,
        ratio_ci95: ratio.and_then(|r| fieller((a.mean, sa2, a.n), (b.mean, sb2, b.n), r)),
        t: Some(t),
        df,
        p,
        significant: p < ALPHA,
    }
}

/// The Welch–Satterthwaite degrees of freedom of a sum of two independent variance
/// estimates `u` (from `nu >= 2` values) and `v` (from `nv >= 2`), both at least 0:
/// `(u + v)² / (u²/(nu-1) + v²/(nv-1))`, computed on the shares of the sum so small
/// variances do not underflow; `nu + nv - 2` when both are 0.
fn satterthwaite(u: f64, nu: usize, v: f64, nv: usize) -> f64 {
    if u + v <= 0.0 || (u + v).is_nan() {
        return (nu + nv - 2) as f64;
    }
    let (su, sv) = (u / (u + v), v / (u + v));
    1.0 / (su * su / (nu - 1) as f64 + sv * sv / (nv - 1) as f64)
}

/// Fieller's 95 % interval of `ma / mb` (see [`welch`]) from each side's (mean, squared
/// standard error, size), `r` being the estimate; `None` when it is unbounded.
fn fieller(
    (ma, sa2, na): (f64, f64, usize),
    (mb, sb2, nb): (f64, f64, usize),
    r: f64,
) -> Option<[f64; 2]> {
    let q = student_t_975(satterthwaite(sa2, na, r * r * sb2, nb));
    let q2 = q * q;
    // (mb² - q² sb2) ρ² - 2 ma mb ρ + (ma² - q² sa2) <= 0.
    let lead = mb * mb - q2 * sb2;
    if lead <= 0.0 || lead.is_nan() {
        return None;
    }
    let root = q * (ma * ma * sb2 + lead * sa2).sqrt();
    let (lo, hi) = ((ma * mb - root) / lead, (ma * mb + root) / lead);
    (lo.is_finite() && hi.is_finite()).then_some([lo, hi])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    /// A reference: SciPy 1.17.1's `stats.ttest_ind(a, b, equal_var=False)` (its
    /// `statistic`, `df`, `pvalue` and `confidence_interval(0.95)`, the same figures as
    /// R's `t.test(a, b, var.equal = FALSE)`), and Fieller's interval computed with
    /// NumPy from its formula with `stats.t.ppf(0.975, df)`.
    struct Reference {
        a: &'static [f64],
        b: &'static [f64],
        t: f64,
        df: f64,
        p: f64,
        ci: [f64; 2],
        ratio_df: f64,
        ratio_ci: Option<[f64; 2]>,
    }

    const REFERENCES: &[Reference] = &[
        // Close means, similar spreads.
        Reference {
            a: &[10.1, 9.8, 10.4, 10.0, 9.9],
            b: &[11.2, 10.9, 11.5, 11.0],
            t: -6.621_704_847_618_03,
            df: 6.065_835_296_527_706,
            p: 0.000_546_384_169_729_298_8,
            ci: [-1.519_100_445_123_985_6, -0.700_899_554_876_016_9],
            ratio_df: 6.454_810_321_691_003,
            ratio_ci: Some([0.867_190_396_815_632_8, 0.935_174_786_498_584_8]),
        },
        // The 1988 kind of difference: unequal sizes, spreads and means.
        Reference {
            a: &[0.91, 0.95, 0.89, 0.93, 1.02, 0.97, 0.90, 0.94],
            b: &[53.1, 53.9, 52.8],
            t: -159.228_212_927_932_3,
            df: 2.008_282_062_470_395_4,
            p: 3.802_347_821_338_452e-5,
            ci: [-53.736_344_286_948_8, -50.919_489_046_384_55],
            ratio_df: 8.582_461_946_469_287,
            ratio_ci: Some([0.016_941_801_519_817_23, 0.018_312_338_052_376_073]),
        },
        // Not significant.
        Reference {
            a: &[5.0, 5.3, 4.8, 5.1],
            b: &[5.2, 4.9, 5.4, 5.0, 5.3],
            t: -0.789_076_364_767_033_2,
            df: 6.555_320_544_140_714,
            p: 0.457_650_229_353_478_6,
            ci: [-0.444_224_462_283_198_4, 0.224_224_462_283_199_53],
            ratio_df: 6.484_749_116_650_336,
            ratio_ci: Some([0.916_107_469_833_903_1, 1.044_915_173_324_553_4]),
        },
        // Two values each: Fieller's interval is unbounded.
        Reference {
            a: &[1.0, 2.0],
            b: &[3.0, 5.0],
            t: -2.236_067_977_499_79,
            df: 1.470_588_235_294_117_8,
            p: 0.198_727_388_934_526_02,
            ci: [-9.418_522_830_071_064, 4.418_522_830_071_064],
            ratio_df: 1.854_599_406_528_189_9,
            ratio_ci: None,
        },
    ];

    #[test]
    fn matches_scipy_and_r() {
        for r in REFERENCES {
            let w = welch(r.a, r.b).unwrap();
            let at = format!("{:?} vs {:?}: {w:?}", r.a, r.b);
            assert!(rel(w.t.unwrap(), r.t) < 1e-12, "{at}");
            assert!(rel(w.df, r.df) < 1e-12, "{at}");
            assert!(rel(w.p, r.p) < 1e-9, "{at}");
            assert!(rel(w.difference_ci95[0], r.ci[0]) < 1e-11, "{at}");
            assert!(rel(w.difference_ci95[1], r.ci[1]) < 1e-11, "{at}");
            assert_eq!(w.significant, r.p < 0.05, "{at}");
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            assert!(rel(w.ratio.unwrap(), mean(r.a) / mean(r.b)) < 1e-15, "{at}");
            let (sa2, sb2) = (
                w.a.stddev * w.a.stddev / w.a.n as f64,
                w.b.stddev * w.b.stddev / w.b.n as f64,
            );
            let rho = w.ratio.unwrap();
            assert!(
                rel(
                    satterthwaite(sa2, w.a.n, rho * rho * sb2, w.b.n),
                    r.ratio_df
                ) < 1e-12,
                "{at}"
            );
            match (w.ratio_ci95, r.ratio_ci) {
                (Some(got), Some(want)) => {
                    assert!(rel(got[0], want[0]) < 1e-11, "{at}");
                    assert!(rel(got[1], want[1]) < 1e-11, "{at}");
                }
                (got, want) => assert_eq!(got, want, "{at}"),
            }
            // The same test from the moments alone.
            let again = welch_moments(w.a, w.b).unwrap();
            assert_eq!(again, w);
        }
    }

    /// Large samples, past the normal approximation's bound on the degrees of freedom,
    /// against SciPy's `ttest_ind_from_stats(1.0, 0.5, 1e6, 1.002, 0.6, 8e5,
    /// equal_var=False)` and its interval from `stats.t.ppf(0.975, df)`.
    #[test]
    fn large_samples_from_moments() {
        let w = welch_moments(
            Moments {
                n: 1_000_000,
                mean: 1.0,
                stddev: 0.5,
            },
            Moments {
                n: 800_000,
                mean: 1.002,
                stddev: 0.6,
            },
        )
        .unwrap();
        assert!(rel(w.t.unwrap(), -2.390_457_218_668_789_4) < 1e-9, "{w:?}");
        assert!(rel(w.df, 1_552_473.383_785_888) < 1e-9, "{w:?}");
        assert!(rel(w.p, 0.016_827_527_922_059_996) < 1e-9, "{w:?}");
        assert!(rel(w.difference_ci95[0], -0.003_639_824_797_778_140_7) < 1e-9);
        assert!(rel(w.difference_ci95[1], -0.000_360_175_202_221_859_4) < 1e-9);
        assert!(w.significant);
    }

    /// Repeats in virtual time: nothing varies, the difference is exact.
    #[test]
    fn samples_that_do_not_vary() {
        let w = welch(&[53.4435; 3], &[0.9147; 3]).unwrap();
        assert_eq!(w.t, None);
        assert_eq!(w.p, 0.0);
        assert!(w.significant);
        assert_eq!(w.df, 4.0);
        assert_eq!(w.difference_ci95, [w.difference, w.difference]);
        let r = 53.4435 / 0.9147;
        assert_eq!(w.ratio, Some(r));
        assert_eq!(w.ratio_ci95, Some([r, r]));

        let same = welch(&[2.5; 4], &[2.5; 2]).unwrap();
        assert_eq!(
            (
                same.t,
                same.p,
                same.significant,
                same.ratio,
                same.ratio_ci95
            ),
            (None, 1.0, false, Some(1.0), Some([1.0, 1.0]))
        );
        assert_eq!(same.difference_ci95, [0.0, 0.0]);

        // Only one side varies: the other's zero variance is a valid estimate.
        let one = welch(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(one.df, 2.0);
        assert!(one.p > 0.05 && !one.significant);
    }

    /// Moments at any scale: the same test, the differences scaled.
    #[test]
    fn any_scale() {
        let m = |n, mean, stddev| Moments { n, mean, stddev };
        let base = welch_moments(m(5, 2.0, 0.3), m(4, 3.0, 0.5)).unwrap();
        for k in [1e-200, 1e-160, 1e160, 1e250] {
            let w = welch_moments(m(5, 2.0 * k, 0.3 * k), m(4, 3.0 * k, 0.5 * k)).unwrap();
            assert!(rel(w.t.unwrap(), base.t.unwrap()) < 1e-14, "{k}: {w:?}");
            assert!(
                rel(w.df, base.df) < 1e-14 && rel(w.p, base.p) < 1e-14,
                "{k}"
            );
            assert!(rel(w.difference_ci95[0], base.difference_ci95[0] * k) < 1e-14);
            let (r, rb) = (w.ratio_ci95.unwrap(), base.ratio_ci95.unwrap());
            assert!(rel(r[0], rb[0]) < 1e-14 && rel(r[1], rb[1]) < 1e-14, "{k}");
        }
        let zero = welch_moments(m(2, 0.0, 0.0), m(3, 0.0, 0.0)).unwrap();
        assert_eq!((zero.p, zero.ratio, zero.difference), (1.0, None, 0.0));
    }

    #[test]
    fn degenerate_input_gives_none_or_finite_figures() {
        assert_eq!(welch(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(welch(&[1.0, 2.0], &[]), None);
        assert_eq!(welch(&[1.0, f64::NAN], &[1.0, 2.0]), None);
        assert_eq!(welch(&[1.0, 2.0], &[f64::INFINITY, 2.0]), None);
        let bad = |mean: f64, stddev: f64| Moments { n: 5, mean, stddev };
        assert_eq!(welch_moments(bad(1.0, -1.0), bad(1.0, 1.0)), None);
        assert_eq!(welch_moments(bad(1.0, f64::NAN), bad(1.0, 1.0)), None);
        assert_eq!(welch_moments(bad(f64::INFINITY, 1.0), bad(1.0, 1.0)), None);

        // A zero mean below: no ratio, and the rest is finite.
        let w = welch(&[1.0, 2.0, 3.0], &[-1.0, 0.0, 1.0]).unwrap();
        assert_eq!((w.ratio, w.ratio_ci95), (None, None));
        // A denominator indistinguishable from 0: the ratio exists, its interval not.
        let w = welch(&[1.0, 2.0, 3.0], &[-1.0, 0.5, 1.0]).unwrap();
        assert!(w.ratio.is_some() && w.ratio_ci95.is_none());
        // A zero numerator that does not vary, against a varying denominator.
        let w = welch(&[0.0, 0.0], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(w.ratio, Some(0.0));
        let json = serde_json::to_value(w).unwrap();
        assert!(
            json["p"].is_f64() && json["df"].is_f64() && json["t"].is_f64(),
            "{json}"
        );
        // Values that overflow their squares: no summary, so no test.
        assert_eq!(welch(&[1e200, 2e200], &[3e200, 5e200]), None);
    }
}
