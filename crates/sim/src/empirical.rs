//! Empirical distributions: a latency measured on a real system (raw samples, or a
//! Prometheus-style histogram of cumulative bucket counts) instead of a parametric model.
//!
//! The simulator holds the data, never a path: whoever reads the file (the runner, for
//! `empirical:FILE` values) builds an [`Empirical`] from the numbers with
//! [`Empirical::from_samples`] or [`Empirical::from_buckets`], naming where they came from
//! (`source`) and the file's SHA-256, which travel with the distribution into manifests. The
//! simulator never touches the file system, so a trial stays a pure function of its
//! configuration.
//!
//! # The distribution
//!
//! Both kinds become one piecewise-linear cumulative distribution function: points
//! `(x_0, 0) ... (x_m, 1)`, `x` non-decreasing in milliseconds (or whatever unit the parameter
//! takes), probability non-decreasing. A draw is the inverse CDF at `u = U[0, 1)` from the
//! caller's seeded generator (one `f64` per draw), interpolated linearly inside the segment
//! `u` falls in, so reruns are byte-identical.
//!
//! * **Samples** `s_(0) <= ... <= s_(n-1)` (sorted): the points are `(s_(i), i / (n-1))`, so the
//!   `q`-quantile of the distribution is exactly the sample's `q`-quantile by linear
//!   interpolation between closest ranks (Hyndman and Fan's type 7, the default of R and
//!   NumPy). One sample is a constant.
//! * **Histogram** buckets `(le_j, c_j)`, `c_j` the cumulative count of observations `<= le_j`
//!   and `N` the total (the `+Inf` bucket's count): the points are `(0, 0)` and
//!   `(le_j, c_j / N)`; inside a bucket the observations are taken as uniform (the usual
//!   assumption, e.g. Prometheus' `histogram_quantile`). Observations above the largest finite
//!   bound (`N > c_last`) have no upper edge: they are put at that bound, so the tail beyond it
//!   is a lower bound ([`Empirical::overflow`] counts them).

use std::sync::Arc;

/// Numbers that do not make a distribution: which one (0-based, in the order given), its
/// value, and why.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("value #{index} = {value}: {reason}")]
pub struct EmpiricalError {
    /// Index of the offending sample or bucket in the input (0-based); the input's length for
    /// a problem with the whole (an empty input, a total below the last bucket).
    pub index: usize,
    /// The offending value as a number prints.
    pub value: String,
    /// What a valid value looks like.
    pub reason: String,
}

impl EmpiricalError {
    fn new(index: usize, value: impl ToString, reason: impl Into<String>) -> Self {
        EmpiricalError {
            index,
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

/// What an [`Empirical`] was built from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EmpiricalKind {
    /// Raw samples, this many.
    Samples(usize),
    /// A histogram of this many observations in this many finite buckets.
    Histogram {
        /// Total observations (the `+Inf` bucket).
        count: f64,
        /// Finite buckets.
        buckets: usize,
    },
}

/// A measured distribution (see the module docs), ready to draw from.
#[derive(Clone, PartialEq)]
pub struct Empirical {
    source: String,
    sha256: String,
    kind: EmpiricalKind,
    overflow: f64,
    xs: Vec<f64>,
    ps: Vec<f64>,
    mean: f64,
}

impl std::fmt::Debug for Empirical {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The points can number in the hundreds of thousands: name the data, do not print it.
        f.debug_struct("Empirical")
            .field("source", &self.source)
            .field("sha256", &self.sha256)
            .field("kind", &self.kind)
            .field("points", &self.xs.len())
            .finish()
    }
}

fn check_value(index: usize, v: f64) -> Result<(), EmpiricalError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(EmpiricalError::new(
            index,
            v,
            "a duration must be a finite number >= 0",
        ))
    }
}

impl Empirical {
    /// The distribution of raw samples (any order). Refused: no samples, a negative or
    /// non-finite one.
    pub fn from_samples(
        source: impl Into<String>,
        sha256: impl Into<String>,
        samples: &[f64],
    ) -> Result<Empirical, EmpiricalError> {
        if samples.is_empty() {
            return Err(EmpiricalError::new(0, "(none)", "no samples"));
        }
        for (i, &v) in samples.iter().enumerate() {
            check_value(i, v)?;
        }
        let mut xs = samples.to_vec();
        xs.sort_by(f64::total_cmp);
        let n = xs.len();
        let ps: Vec<f64> = if n == 1 {
            xs.push(xs[0]);
            vec![0.0, 1.0]
        } else {
            (0..n).map(|i| i as f64 / (n - 1) as f64).collect()
        };
        Ok(Empirical::new(
            source.into(),
            sha256.into(),
            EmpiricalKind::Samples(n),
            0.0,
            xs,
            ps,
        ))
    }

    /// The distribution of a histogram: `buckets` are `(le, cumulative count)` with finite
    /// bounds, strictly increasing, counts non-decreasing; `total` is the count of every
    /// observation (the `+Inf` bucket), at least the last bucket's and above 0. Refused
    /// otherwise, naming the first offending bucket (`index = buckets.len()` for `total`).
    pub fn from_buckets(
        source: impl Into<String>,
        sha256: impl Into<String>,
        buckets: &[(f64, f64)],
        total: f64,
    ) -> Result<Empirical, EmpiricalError> {
        let mut xs = vec![0.0];
        let mut ps = vec![0.0];
        let (mut prev_le, mut prev_c) = (f64::NEG_INFINITY, 0.0);
        for (i, &(le, c)) in buckets.iter().enumerate() {
            check_value(i, le)?;
            if le <= prev_le {
                return Err(EmpiricalError::new(
                    i,
                    le,
                    format!("bucket bounds must increase (the previous one is {prev_le})"),
                ));
            }
            if !(c.is_finite() && c >= 0.0) {
                return Err(EmpiricalError::new(
                    i,
                    c,
                    "a bucket count must be a finite number >= 0",
                ));
            }
            if c < prev_c {
                return Err(EmpiricalError::new(
                    i,
                    c,
                    format!(
                        "cumulative counts must not decrease (the previous bucket holds {prev_c})"
                    ),
                ));
            }
            xs.push(le);
            ps.push(c);
            (prev_le, prev_c) = (le, c);
        }
        let k = buckets.len();
        if !(total.is_finite() && total > 0.0) {
            return Err(EmpiricalError::new(
                k,
                total,
                "the histogram must hold at least one observation",
            ));
        }
        if total < prev_c {
            return Err(EmpiricalError::new(
                k,
                total,
                format!("the total (+Inf bucket) is below the last bucket's count {prev_c}"),
            ));
        }
        if k == 0 {
            return Err(EmpiricalError::new(
                0,
                total,
                "a histogram needs at least one finite bucket",
            ));
        }
        let overflow = total - prev_c;
        for p in &mut ps {
            *p /= total;
        }
        if overflow > 0.0 {
            xs.push(prev_le);
            ps.push(1.0);
        } else {
            // Exactly 1 whatever the division rounded to.
            *ps.last_mut().expect("a bucket") = 1.0;
        }
        Ok(Empirical::new(
            source.into(),
            sha256.into(),
            EmpiricalKind::Histogram {
                count: total,
                buckets: k,
            },
            overflow,
            xs,
            ps,
        ))
    }

    fn new(
        source: String,
        sha256: String,
        kind: EmpiricalKind,
        overflow: f64,
        xs: Vec<f64>,
        ps: Vec<f64>,
    ) -> Empirical {
        let mean = xs
            .windows(2)
            .zip(ps.windows(2))
            .map(|(x, p)| (p[1] - p[0]) * (x[0] + x[1]) / 2.0)
            .sum();
        Empirical {
            source,
            sha256,
            kind,
            overflow,
            xs,
            ps,
            mean,
        }
    }

    /// Where the data came from, as the user named it (the runner: `PATH` or `PATH#COLUMN`).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The SHA-256 (hex) of the file the data was read from.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Samples or histogram, and how much data.
    pub fn kind(&self) -> EmpiricalKind {
        self.kind
    }

    /// Observations above the largest finite bucket bound, drawn as that bound (0 for samples).
    pub fn overflow(&self) -> f64 {
        self.overflow
    }

    /// The distribution's mean (of the piecewise-linear CDF, so a histogram's mean assumes
    /// uniform observations inside each bucket).
    pub fn mean_ms(&self) -> f64 {
        self.mean
    }

    /// The `u`-quantile (`u` in `[0, 1)`; clamped): the inverse CDF.
    pub fn quantile(&self, u: f64) -> f64 {
        let u = if u.is_nan() { 0.0 } else { u.clamp(0.0, 1.0) };
        // The first point whose probability exceeds u; the segment before it holds u.
        let i = self.ps.partition_point(|&p| p <= u);
        if i == 0 {
            return self.xs[0];
        }
        if i >= self.ps.len() {
            return self.xs[self.xs.len() - 1];
        }
        let (p0, p1, x0, x1) = (self.ps[i - 1], self.ps[i], self.xs[i - 1], self.xs[i]);
        x0 + (u - p0) / (p1 - p0) * (x1 - x0)
    }

    /// The same data with every value multiplied by `k` (e.g. µs to ms).
    pub fn scaled(&self, k: f64) -> Empirical {
        Empirical::new(
            self.source.clone(),
            self.sha256.clone(),
            self.kind,
            self.overflow,
            self.xs.iter().map(|x| x * k).collect(),
            self.ps.clone(),
        )
    }

    /// The CDF's points `(value, cumulative probability)`.
    pub fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.xs.iter().copied().zip(self.ps.iter().copied())
    }
}

/// A shared empirical distribution, as [`Latency::Empirical`](crate::Latency::Empirical) holds it.
pub type SharedEmpirical = Arc<Empirical>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_give_their_type_7_quantiles() {
        let e = Empirical::from_samples("s", "h", &[4.0, 1.0, 3.0, 2.0, 5.0]).unwrap();
        assert_eq!(e.quantile(0.0), 1.0);
        assert_eq!(e.quantile(0.5), 3.0);
        assert_eq!(e.quantile(0.25), 2.0);
        assert!((e.quantile(0.375) - 2.5).abs() < 1e-12);
        assert!((e.quantile(0.999_999) - 5.0).abs() < 1e-4);
        assert_eq!(e.mean_ms(), 3.0);
        let one = Empirical::from_samples("s", "h", &[7.0]).unwrap();
        assert_eq!((one.quantile(0.0), one.quantile(0.9)), (7.0, 7.0));
    }

    #[test]
    fn a_histogram_interpolates_inside_buckets() {
        // 10 observations <= 1, 30 <= 2, 40 in all: 10 above 2 (overflow, drawn as 2).
        let e = Empirical::from_buckets("h", "x", &[(1.0, 10.0), (2.0, 30.0)], 40.0).unwrap();
        assert_eq!(e.quantile(0.0), 0.0);
        assert!((e.quantile(0.125) - 0.5).abs() < 1e-12);
        assert!((e.quantile(0.5) - 1.5).abs() < 1e-12);
        assert_eq!(e.quantile(0.9), 2.0);
        assert_eq!(e.overflow(), 10.0);
        // Mean: 0.25 * 0.5 + 0.5 * 1.5 + 0.25 * 2.
        assert!((e.mean_ms() - 1.375).abs() < 1e-12);
        // Empty buckets are skipped by the inverse.
        let e =
            Empirical::from_buckets("h", "x", &[(1.0, 0.0), (2.0, 0.0), (4.0, 8.0)], 8.0).unwrap();
        assert!((e.quantile(0.5) - 3.0).abs() < 1e-12);
    }

    #[test]
    fn bad_data_is_refused_naming_the_value() {
        let e = Empirical::from_samples("s", "h", &[1.0, -2.0]).unwrap_err();
        assert_eq!((e.index, e.value.as_str()), (1, "-2"));
        assert!(Empirical::from_samples("s", "h", &[]).is_err());
        assert!(Empirical::from_samples("s", "h", &[f64::NAN]).is_err());
        let e = Empirical::from_buckets("h", "x", &[(1.0, 5.0), (2.0, 3.0)], 5.0).unwrap_err();
        assert_eq!((e.index, e.value.as_str()), (1, "3"));
        let e = Empirical::from_buckets("h", "x", &[(2.0, 1.0), (1.0, 3.0)], 5.0).unwrap_err();
        assert_eq!((e.index, e.value.as_str()), (1, "1"));
        let e = Empirical::from_buckets("h", "x", &[(1.0, 5.0)], 4.0).unwrap_err();
        assert_eq!(e.index, 1);
        assert!(Empirical::from_buckets("h", "x", &[(1.0, 0.0)], 0.0).is_err());
        assert!(Empirical::from_buckets("h", "x", &[], 3.0).is_err());
    }
}
