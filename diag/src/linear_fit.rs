//! A straight line through measured points, `y = a + b·x`, by ordinary least squares,
//! with 95 % confidence intervals on both coefficients.
//!
//! The doctor and calibrate fit a transfer's time (or CPU time) against its size: the
//! intercept `a` is what one call costs before its first byte, the slope `b` what each
//! byte costs. The intervals are the textbook ones for the simple linear model (e.g.
//! Montgomery, Peck & Vining, *Introduction to Linear Regression Analysis*, §2.3):
//! `b ± t(0.975, n−2)·s/√Sxx` and `a ± t(0.975, n−2)·s·√(1/n + x̄²/Sxx)`, with
//! `s² = Σ residual² / (n − 2)`.

use serde::Serialize;

use crate::stats::student_t_975;

/// A fitted line and how well it holds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinearFit {
    /// Points fitted.
    pub n: usize,
    /// The intercept: `y` at `x = 0`.
    pub intercept: f64,
    /// Half width of the intercept's 95 % confidence interval (0 when the points lie
    /// on the line; infinite with only two points).
    pub intercept_ci95: f64,
    /// The slope: `y` per unit of `x`.
    pub slope: f64,
    /// Half width of the slope's 95 % confidence interval.
    pub slope_ci95: f64,
    /// The coefficient of determination (1: every point on the line).
    pub r_squared: f64,
    /// The largest relative distance of a point from the line, `|y − ŷ| / ŷ`.
    pub worst_relative_residual: f64,
}

impl LinearFit {
    /// The line's value at `x`.
    pub fn at(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }
}

/// Fits `y = a + b·x` to `points` (x, y). `None` with fewer than two points, with
/// fewer than two distinct `x`, or with a value that is not finite.
pub fn fit(points: &[(f64, f64)]) -> Option<LinearFit> {
    let n = points.len();
    if n < 2 || points.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return None;
    }
    let count = n as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / count;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / count;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if sxx <= 0.0 || !sxx.is_finite() {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    let residuals: Vec<f64> = points
        .iter()
        .map(|p| p.1 - (intercept + slope * p.0))
        .collect();
    let sse: f64 = residuals.iter().map(|r| r * r).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - mean_y).powi(2)).sum();
    let r_squared = if syy > 0.0 { 1.0 - sse / syy } else { 1.0 };
    let (intercept_ci95, slope_ci95) = if n > 2 {
        let s = (sse / (count - 2.0)).sqrt();
        let t = student_t_975((n - 2) as f64);
        (
            t * s * (1.0 / count + mean_x * mean_x / sxx).sqrt(),
            t * s / sxx.sqrt(),
        )
    } else {
        (f64::INFINITY, f64::INFINITY)
    };
    let worst_relative_residual = points
        .iter()
        .zip(&residuals)
        .map(|(p, r)| {
            let fitted = intercept + slope * p.0;
            if fitted.abs() > 0.0 {
                (r / fitted).abs()
            } else {
                r.abs()
            }
        })
        .fold(0.0, f64::max);
    Some(LinearFit {
        n,
        intercept,
        intercept_ci95,
        slope,
        slope_ci95,
        r_squared,
        worst_relative_residual,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn points_on_a_line_give_the_line_with_zero_width_intervals() {
        let pts: Vec<(f64, f64)> = [16.0, 64.0, 256.0, 1024.0]
            .iter()
            .map(|&x| (x, 0.002 + 134e-6 * x))
            .collect();
        let f = fit(&pts).unwrap();
        assert_relative_eq!(f.intercept, 0.002, max_relative = 1e-9);
        assert_relative_eq!(f.slope, 134e-6, max_relative = 1e-12);
        assert!(f.slope_ci95 < 1e-15 && f.intercept_ci95 < 1e-12, "{f:?}");
        assert_relative_eq!(f.r_squared, 1.0);
        assert!(f.worst_relative_residual < 1e-9);
        assert_relative_eq!(f.at(4096.0), 0.002 + 134e-6 * 4096.0, max_relative = 1e-12);
    }

    #[test]
    fn the_intervals_are_the_textbook_ones() {
        // x = 1..5, y = 2.1, 3.9, 6.2, 7.8, 10.1: b = 1.99, a = 0.05, SSE = 0.107,
        // Syy = 39.708, Sxx = 10, t(0.975, 3) = 3.182446.
        let pts = [(1.0, 2.1), (2.0, 3.9), (3.0, 6.2), (4.0, 7.8), (5.0, 10.1)];
        let f = fit(&pts).unwrap();
        assert_relative_eq!(f.slope, 1.99, max_relative = 1e-12);
        assert_relative_eq!(f.intercept, 0.05, max_relative = 1e-9);
        let s = (0.107f64 / 3.0).sqrt();
        assert_relative_eq!(
            f.slope_ci95,
            3.182446 * s / 10f64.sqrt(),
            max_relative = 1e-5
        );
        assert_relative_eq!(
            f.intercept_ci95,
            3.182446 * s * (0.2f64 + 9.0 / 10.0).sqrt(),
            max_relative = 1e-5
        );
        assert_relative_eq!(f.r_squared, 1.0 - 0.107 / 39.708, max_relative = 1e-9);
    }

    #[test]
    fn two_points_fit_with_unknown_intervals() {
        let f = fit(&[(1.0, 1.0), (3.0, 5.0)]).unwrap();
        assert_relative_eq!(f.slope, 2.0);
        assert_relative_eq!(f.intercept, -1.0);
        assert!(f.slope_ci95.is_infinite());
    }

    #[test]
    fn what_cannot_be_fitted_is_none() {
        assert!(fit(&[]).is_none());
        assert!(fit(&[(1.0, 2.0)]).is_none());
        assert!(fit(&[(1.0, 2.0), (1.0, 3.0)]).is_none(), "one distinct x");
        assert!(fit(&[(1.0, 2.0), (2.0, f64::NAN)]).is_none());
        assert!(fit(&[(1.0, 2.0), (f64::INFINITY, 3.0)]).is_none());
    }
}
