//! Summary statistics: mean, percentiles (linear interpolation between closest ranks, R's
//! type 7 and numpy's default) and the Wilson score interval for a proportion.

/// z for a two-sided 95 % interval.
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
