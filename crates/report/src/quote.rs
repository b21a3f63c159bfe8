//! How the report quotes a number, once for the matrix, the guide and the findings: one
//! rounding rule per quantity and one rule for ties.
//!
//! * **Rounding**: a statistic of a cell is quoted by [`shown`]: the value `summary.csv`
//!   holds, rounded to what its 95 % interval supports ([`fmt_ci`]): the distribution-free
//!   order-statistic interval for a percentile, the normal interval for a mean, Wilson's for a
//!   rate (quoted as a percentage, [`pct`]). The same cell's same statistic therefore reads
//!   the same wherever the report quotes it, and always rounds from the number in the table
//!   the quote links to.
//! * **Ties**: "the lowest" or "the most" names every candidate that the 95 % intervals do not
//!   separate from the extreme ([`Ranked::lowest`], [`Ranked::highest`]): another candidate is
//!   tied with the lowest when its interval reaches down to the lowest one's upper bound (the
//!   rule the guide used for failover p95), and with the highest when its interval reaches up
//!   to the highest one's lower bound. Exact values (half-width 0) tie only when equal.

use crate::data::{fmt_ci, fmt_sig, mean_ci, quantile_ci, Results, Stat, SummaryRow, TrialRow};

/// A share as a percentage for prose: three significant digits of the percentage, the
/// rounding of every rate the report quotes (`0.981155` → `98.1%`).
pub(crate) fn pct(v: f64) -> String {
    format!("{}%", fmt_sig((v * 1000.0).round() / 10.0))
}

/// The 95 % interval `(lo, hi)` of statistic `stat` of the cell `r`, from its measured
/// trials; `None` for a statistic the report does not quote with an interval (it is then
/// quoted as [`fmt_sig`] prints it).
pub(crate) fn interval(results: &Results, r: &SummaryRow, stat: Stat) -> Option<(f64, f64)> {
    let trials = results.measured_trials_of(&r.key);
    let sample = |f: &dyn Fn(&TrialRow) -> Option<f64>| -> Vec<f64> {
        let mut v: Vec<f64> = trials.iter().filter_map(|t| f(t)).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let mean =
        |f: &dyn Fn(&TrialRow) -> Option<f64>| mean_ci(&sample(f)).map(|(m, h)| (m - h, m + h));
    let q = |f: &dyn Fn(&TrialRow) -> Option<f64>, p: f64| quantile_ci(&sample(f), p);
    match stat {
        Stat::FailoverP5 => q(&|t| t.failover_ms, 0.05),
        Stat::FailoverP50 => q(&|t| t.failover_ms, 0.5),
        Stat::FailoverP95 => q(&|t| t.failover_ms, 0.95),
        Stat::FailoverP99 => q(&|t| t.failover_ms, 0.99),
        Stat::ElectP50 => q(&|t| t.elect_ms, 0.5),
        Stat::ElectP95 => q(&|t| t.elect_ms, 0.95),
        Stat::ElectP99 => q(&|t| t.elect_ms, 0.99),
        Stat::ElectMean => mean(&|t| t.elect_ms),
        Stat::MsgsMean => mean(&|t| Some(t.msgs_election as f64)),
        Stat::SplitMsMean => mean(&|t| Some(t.split_brain_ms)),
        Stat::MinorityMsMean => mean(&|t| Some(t.minority_leader_ms)),
        Stat::UnavailableMean => mean(&|t| Some(t.unavailable_ms)),
        Stat::LeaderChangesMean => mean(&|t| Some(t.leader_changes as f64)),
        Stat::WritesStaleMean => mean(&|t| t.writes_stale.map(|v| v as f64)),
        Stat::WritesFencedMean => mean(&|t| t.writes_fenced.map(|v| v as f64)),
        Stat::StaleWindowMean => mean(&|t| t.stale_window_ms),
        Stat::MsgsTotalMean => mean(&|t| Some(t.msgs_total as f64)),
        Stat::SteadyRateMean => mean(&|t| t.steady_per_second()),
        Stat::SplitRate => Some((r.get(Stat::SplitCiLo)?, r.get(Stat::SplitCiHi)?)),
        Stat::StaleRate | Stat::ConvergedRate => {
            let n = trials.len() as u64;
            let k = (r.get(stat)? * n as f64).round() as u64;
            election_runner::stats::wilson(k, n, election_runner::stats::Z95)
        }
        _ => None,
    }
}

/// Statistic `stat` of the cell `r` as the report quotes it anywhere (see the module docs);
/// `–` for an empty one.
pub(crate) fn shown(results: &Results, r: &SummaryRow, stat: Stat) -> String {
    let Some(v) = r.get(stat) else {
        return "–".to_string();
    };
    if matches!(
        stat,
        Stat::SplitRate | Stat::StaleRate | Stat::ConvergedRate
    ) {
        return pct(v);
    }
    match interval(results, r, stat) {
        Some((lo, hi)) => fmt_ci(v, (hi - v).max(v - lo).max(0.0)),
        None => fmt_sig(v),
    }
}

/// Candidates for an extreme: a label, the value ranked and its 95 % interval.
pub(crate) struct Ranked<T> {
    pub label: String,
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
    pub item: T,
}

impl<T> Ranked<T> {
    /// A candidate whose interval is `interval`, or the value itself when there is none.
    pub(crate) fn new(label: String, value: f64, interval: Option<(f64, f64)>, item: T) -> Self {
        let (lo, hi) = interval.unwrap_or((value, value));
        Ranked {
            label,
            value,
            lo: lo.min(value),
            hi: hi.max(value),
            item,
        }
    }

    /// The candidate with the lowest value, then every other one tied with it, in input order
    /// after the first (empty input: empty output).
    pub(crate) fn lowest(v: &[Ranked<T>]) -> Vec<&Ranked<T>> {
        let Some(best) = v.iter().min_by(|a, b| a.value.total_cmp(&b.value)) else {
            return Vec::new();
        };
        let mut out = vec![best];
        out.extend(
            v.iter()
                .filter(|o| !std::ptr::eq(*o, best) && o.lo <= best.hi),
        );
        out
    }

    /// The candidate with the highest value, then every other one tied with it.
    pub(crate) fn highest(v: &[Ranked<T>]) -> Vec<&Ranked<T>> {
        let Some(top) = v.iter().max_by(|a, b| a.value.total_cmp(&b.value)) else {
            return Vec::new();
        };
        let mut out = vec![top];
        out.extend(
            v.iter()
                .filter(|o| !std::ptr::eq(*o, top) && o.hi >= top.lo),
        );
        out
    }
}

/// The labels of a tie group as prose: "`a`", or "`a`, `b` and `c` (tied: their 95 %
/// intervals overlap)" — the one way the report says a tie.
pub(crate) fn tie_names<T>(group: &[&Ranked<T>]) -> String {
    let labels: Vec<String> = group.iter().map(|g| g.label.clone()).collect();
    let names = crate::findings::names(&labels);
    if labels.len() > 1 {
        format!("{names} (tied: their 95 % intervals overlap)")
    } else {
        names
    }
}

/// The candidates of `cells` ranked by statistic `stat` with its interval ([`interval`]).
pub(crate) fn ranked<'a>(
    results: &Results,
    cells: &[(String, &'a SummaryRow)],
    stat: Stat,
) -> Vec<Ranked<&'a SummaryRow>> {
    cells
        .iter()
        .filter_map(|(l, r)| {
            let v = r.get(stat)?;
            Some(Ranked::new(l.clone(), v, interval(results, r, stat), *r))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(label: &str, value: f64, lo: f64, hi: f64) -> Ranked<()> {
        Ranked::new(label.into(), value, Some((lo, hi)), ())
    }

    #[test]
    fn ties_follow_the_intervals() {
        let v = vec![
            r("a", 10.0, 9.0, 11.0),
            r("b", 10.5, 10.8, 12.0), // reaches down to a's upper bound: tied with the lowest
            r("c", 20.0, 19.0, 21.0),
            r("d", 19.5, 19.2, 19.8), // reaches up to c's lower bound: tied with the highest
        ];
        let low: Vec<&str> = Ranked::lowest(&v)
            .iter()
            .map(|x| x.label.as_str())
            .collect();
        assert_eq!(low, ["a", "b"]);
        let high: Vec<&str> = Ranked::highest(&v)
            .iter()
            .map(|x| x.label.as_str())
            .collect();
        assert_eq!(high, ["c", "d"]);
        assert_eq!(
            tie_names(&Ranked::lowest(&v)),
            "`a` and `b` (tied: their 95 % intervals overlap)"
        );
        // Exact values tie only when equal.
        let exact = vec![
            Ranked::new("x".into(), 2.0, None, ()),
            Ranked::new("y".into(), 2.0, None, ()),
            Ranked::new("z".into(), 2.0001, None, ()),
        ];
        assert_eq!(Ranked::lowest(&exact).len(), 2);
        assert_eq!(tie_names(&Ranked::highest(&exact)), "`z`");
    }

    #[test]
    fn percentages_keep_three_digits() {
        assert_eq!(pct(0.981155), "98.1%");
        assert_eq!(pct(1.0), "100%");
        assert_eq!(pct(0.035), "3.5%");
    }
}
