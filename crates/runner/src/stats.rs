//! Every statistic the workbench reports, defined once: the mean and its normal interval,
//! percentiles (linear interpolation between closest ranks, R's type 7 and numpy's default)
//! and the distribution-free interval of a quantile, the Wilson score interval for a
//! proportion, the exact (Garwood) interval of a Poisson mean, and the percentile bootstrap.
//! Every "95 %" is [`Z95`]; the runner, the report, `tune`, `validate`, `compare` and
//! `calibrate` all call these.

/// z for a two-sided 95 % interval (the one value of it in the workbench).
pub const Z95: f64 = 1.959964;

/// The arithmetic mean, summed in the given order (so the result is reproducible bit for
/// bit), or `None` for no values.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        None
    } else {
        Some(xs.iter().sum::<f64>() / xs.len() as f64)
    }
}

/// The mean of a sample and the half-width of its 95 % normal interval (`Z95 · s/√k`, with the
/// sample standard deviation `s`); the half-width is `None` for a single value, and the whole
/// is `None` for none.
pub fn mean_ci(xs: &[f64]) -> Option<(f64, Option<f64>)> {
    let m = mean(xs)?;
    let k = xs.len();
    if k < 2 {
        return Some((m, None));
    }
    let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (k - 1) as f64;
    Some((m, Some(Z95 * (var / k as f64).sqrt())))
}

/// The exact (Garwood) two-sided 95 % interval of a Poisson mean, for `k` events observed.
pub fn poisson_ci(k: u64) -> (f64, f64) {
    use statrs::distribution::{ChiSquared, ContinuousCDF};
    let lo = if k == 0 {
        0.0
    } else {
        ChiSquared::new(2.0 * k as f64)
            .expect("positive degrees of freedom")
            .inverse_cdf(0.025)
            / 2.0
    };
    let hi = ChiSquared::new(2.0 * (k as f64 + 1.0))
        .expect("positive degrees of freedom")
        .inverse_cdf(0.975)
        / 2.0;
    (lo, hi)
}

/// The percentile bootstrap interval at confidence `level` (0.95 for 95 %) of a statistic, from
/// `resamples` draws of it (`draw` resamples the data and computes the statistic, with the
/// caller's seeded generator, so the interval is the same on every run). Draws that are not
/// finite (a ratio over a zero median) are left out; `None` when none is.
pub fn bootstrap(
    resamples: usize,
    level: f64,
    mut draw: impl FnMut() -> f64,
) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = (0..resamples)
        .map(|_| draw())
        .filter(|x| x.is_finite())
        .collect();
    v.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some((percentile(&v, tail)?, percentile(&v, 1.0 - tail)?))
}

/// The `p`-quantile (`p` in `[0, 1]`) of `sorted` (ascending) by linear interpolation between
/// closest ranks: with `h = (len - 1) p`, `x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋ + 1] − x[⌊h⌋])`.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

/// The distribution-free interval of the `q`-quantile of an ascending sample at the given `z`
/// (binomial order statistics, normal approximation), as sample values, and whether its upper
/// end is the sample's largest value (too few values to bound the quantile from above).
pub fn quantile_ci(sorted: &[f64], q: f64, z: f64) -> Option<(f64, f64, bool)> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let nf = n as f64;
    let half = z * (nf * q * (1.0 - q)).sqrt();
    let lo = ((nf * q - half).floor().max(0.0) as usize).min(n - 1);
    let hi_raw = (nf * q + half).ceil() as usize;
    Some((sorted[lo], sorted[hi_raw.min(n - 1)], hi_raw >= n - 1))
}

/// The Wilson score interval for `k` successes out of `n` trials at the given `z`, clamped to
/// `[0, 1]`; `None` when `n` is 0.
pub fn wilson(k: u64, n: u64, z: f64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let p = k as f64 / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    Some(((center - half).max(0.0), (center + half).min(1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn percentiles_match_hand_computation() {
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        // h = 9p: p5 → 0.45 → 1 + 0.45; p50 → 4.5 → 5.5; p95 → 8.55 → 9.55; p99 → 8.91.
        assert!(close(percentile(&xs, 0.05).unwrap(), 1.45));
        assert!(close(percentile(&xs, 0.50).unwrap(), 5.5));
        assert!(close(percentile(&xs, 0.95).unwrap(), 9.55));
        assert!(close(percentile(&xs, 0.99).unwrap(), 9.91));
        assert_eq!(percentile(&xs, 1.0), Some(10.0));
        assert_eq!(percentile(&xs, 0.0), Some(1.0));
        assert_eq!(percentile(&[7.0], 0.95), Some(7.0));
        assert_eq!(percentile(&[], 0.5), None);
        // numpy.percentile([0, 10, 30], 25) == 5.0
        assert!(close(percentile(&[0.0, 10.0, 30.0], 0.25).unwrap(), 5.0));
    }

    #[test]
    fn mean_is_plain() {
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn mean_interval_by_hand() {
        // 1..=5: mean 3, s = √2.5, half = 1.959964 · √2.5 / √5 = 1.3859038.
        let (m, h) = mean_ci(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(m, 3.0);
        assert!((h.unwrap() - 1.3859038).abs() < 1e-6);
        assert_eq!(mean_ci(&[4.0]), Some((4.0, None)));
        assert_eq!(mean_ci(&[]), None);
    }

    #[test]
    fn poisson_interval_matches_the_tables() {
        // Garwood: 0 events → [0, 3.689]; 1 → [0.0253, 5.572]; 10 → [4.795, 18.39].
        let (lo, hi) = poisson_ci(0);
        assert_eq!(lo, 0.0);
        assert!((hi - 3.688879).abs() < 1e-5, "{hi}");
        let (lo, hi) = poisson_ci(1);
        assert!((lo - 0.025318).abs() < 1e-5 && (hi - 5.571643).abs() < 1e-5);
        let (lo, hi) = poisson_ci(10);
        assert!((lo - 4.795389).abs() < 1e-5 && (hi - 18.390356).abs() < 1e-5);
    }

    #[test]
    fn bootstrap_takes_the_tails_of_the_finite_draws() {
        // Draws 0, 1, ..., 99 then infinities: the 95 % interval of the finite ones is
        // their 2.5th and 97.5th percentiles, 2.475 and 96.525.
        let mut i = 0.0;
        let (lo, hi) = bootstrap(120, 0.95, || {
            i += 1.0;
            if i <= 100.0 {
                i - 1.0
            } else {
                f64::INFINITY
            }
        })
        .unwrap();
        assert!(
            (lo - 2.475).abs() < 1e-9 && (hi - 96.525).abs() < 1e-9,
            "{lo} {hi}"
        );
        assert_eq!(bootstrap(10, 0.95, || f64::NAN), None);
    }

    #[test]
    fn wilson_matches_hand_computation() {
        // 10 of 100: p = 0.1, z² = 3.841459; center = (0.1 + 0.0192073) / 1.0384146 =
        // 0.1147974, half = 1.959964 · √(0.0009 + 0.0000960365) / 1.0384146 = 0.0595683.
        let (lo, hi) = wilson(10, 100, Z95).unwrap();
        assert!((lo - 0.0552291).abs() < 1e-6, "{lo}");
        assert!((hi - 0.1743657).abs() < 1e-6, "{hi}");
        // 0 of 200: the lower bound is 0, the upper z²/(n + z²) = 0.0188453.
        let (lo, hi) = wilson(0, 200, Z95).unwrap();
        assert_eq!(lo, 0.0);
        assert!((hi - 0.0188453).abs() < 1e-6, "{hi}");
        // n of n mirrors 0 of n.
        let (lo, hi) = wilson(200, 200, Z95).unwrap();
        assert!(
            (lo - (1.0 - 0.0188453)).abs() < 1e-6 && (hi - 1.0).abs() < 1e-12,
            "{lo} {hi}"
        );
        assert_eq!(wilson(0, 0, Z95), None);
    }
}
