//! The decision matrix: protocol by concern, the first thing `REPORT.md` shows.
//!
//! Each cell is one rounded number and a plain verdict, linked to the table or chart it rests
//! on. A concern appears only when the sweep has the scenarios that measure it; the failover
//! scenario is read off the scenarios' faults ([`ScenarioKind`], recorded in the manifest):
//!
//! | concern | scenarios | number | verdict |
//! |---|---|---|---|
//! | failover | the first of the report's failover scenarios the sweep has (`leader-crash`), else the first that crashes or pauses the leader without cutting links or bringing nodes back; focus size | p50 / p95 of `failover_ms` | on p95, against the best protocol: `best`, `good` (≤ 1.25×), `fair` (≤ 2×), `poor` |
//! | election messages | the same scenario at the largest size | mean `msgs_election` | against the best: `best`, `good` (≤ 2×), `fair` (≤ 10×), `poor` |
//! | messages per second | the same | mean `msgs_total / end_ms`: the whole bill, steady traffic included (a lease's elections are one compare-and-swap, but its members poll the store all the time) | as above |
//! | failover, unrecovered trials | the same | the share of trials with no failover time at all, appended | such a cell ranks as infinitely slow: `poor` |
//! | damage, unfenced | every scenario (the worst is named); focus size | worst mean `writes_stale + writes_fenced` per trial: what a resource without fencing takes from deposed leaders | `none` (0), `rare` (< 1 write per trial), `damaging` |
//! | damage, fenced | the same | worst mean `writes_stale` | as above |
//! | split brain (only without a workload) | the same | worst `split_brain_rate`, with the mean overlap of the trials that split | `none`, `brief` (< 1 ms), `lasting` |
//! | liveness failures | every scenario and size | share of trials whose `outcome` is `no-leader` or `livelock`, and the worst scenario | `none` (0), `rare` (< 1 %), `poor` |
//! | churn | the recovery and flapping scenarios (the same as the guide's and chart 6's); focus size | mean `leader_changes` summed over them | against the best: `best`, `good` (≤ 1.5×), `fair` (≤ 3×), `poor` |
//!
//! Numbers are rounded to what their 95% interval supports ([`fmt_ci`]): distribution-free
//! order-statistic intervals for percentiles, normal intervals for means. A cell with no
//! measured trial reads `–` and has no verdict.

use crate::charts::Series;
use crate::data::{fmt_ci, fmt_sig, mean_ci, percentile, quantile_ci, CellKey, TrialRow, Z95};
use crate::figures::{failover_scenarios, key_of, series_for};
use crate::findings::Ctx;

/// A concern of the matrix.
pub(crate) struct Column {
    /// Header text.
    pub title: String,
    /// What it measures and where, for the legend under the matrix.
    pub about: String,
}

/// One cell: the number and the verdict, and the link target of its evidence.
pub(crate) struct Cell {
    pub text: String,
    pub verdict: &'static str,
    pub link: String,
}

/// The matrix: columns, then one row per protocol series.
pub(crate) struct Matrix {
    pub columns: Vec<Column>,
    pub rows: Vec<(String, Vec<Option<Cell>>)>,
}

fn by_ratio(v: f64, best: f64, good: f64, fair: f64) -> &'static str {
    if v.is_infinite() {
        "poor" // e.g. a failover that some trials never completed
    } else if v <= best {
        "best"
    } else if best > 0.0 && v <= best * good {
        "good"
    } else if best > 0.0 && v <= best * fair {
        "fair"
    } else {
        "poor"
    }
}

fn sorted(v: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = v.collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The scenario the failover column reads.
fn failover_scenario(c: &Ctx) -> Option<String> {
    let kinds = |s: &String| c.results.scenario_kind(s);
    failover_scenarios(c.results, c.opts)
        .into_iter()
        .find(|s| kinds(s).is_some_and(|k| k.takes_leader))
        .or_else(|| {
            c.results.scenarios().into_iter().find(|s| {
                kinds(s).is_some_and(|k| k.takes_leader && !k.cuts_links && !k.brings_back)
            })
        })
}

struct Builder<'a, 'b> {
    c: &'b Ctx<'a>,
    series: Vec<Series>,
    m: Matrix,
}

impl<'a> Builder<'a, '_> {
    fn trials(&self, s: &Series, n: u32, sc: &str) -> Vec<&'a TrialRow> {
        let key: CellKey = key_of(s, n, sc, &self.c.net);
        self.c.results.measured_trials_of(&key)
    }

    /// The mean of `metric` over a cell's measured trials (those where it is defined) and the
    /// half-width of its 95 % interval.
    fn mean_of(
        &self,
        s: &Series,
        n: u32,
        sc: &str,
        metric: impl Fn(&TrialRow) -> Option<f64>,
    ) -> Option<(f64, f64)> {
        let v: Vec<f64> = self
            .trials(s, n, sc)
            .iter()
            .filter_map(|t| metric(t))
            .collect();
        mean_ci(&v)
    }

    fn link(&self, sc: &str) -> String {
        crate::markdown::table_target(self.c.results, sc, &self.c.net)
    }

    /// Adds a column whose cells are `(value to rank, text, link)` per series, with verdicts
    /// from `verdict(value, best)`.
    fn column(
        &mut self,
        title: String,
        about: String,
        cells: Vec<Option<(f64, String, String)>>,
        verdict: impl Fn(f64, f64) -> &'static str,
    ) {
        if cells.iter().all(Option::is_none) {
            return;
        }
        let best = cells
            .iter()
            .flatten()
            .map(|c| c.0)
            .fold(f64::INFINITY, f64::min);
        self.m.columns.push(Column { title, about });
        for (row, cell) in self.m.rows.iter_mut().zip(cells) {
            row.1.push(cell.map(|(v, text, link)| Cell {
                text,
                verdict: verdict(v, best),
                link,
            }));
        }
    }

    fn failover(&mut self) {
        let Some(sc) = failover_scenario(self.c) else {
            return;
        };
        let n = self.c.focus;
        let cells = self
            .series
            .iter()
            .map(|s| {
                let all = self.trials(s, n, &sc);
                let f = sorted(all.iter().filter_map(|t| t.failover_ms));
                if f.is_empty() {
                    return None;
                }
                // Trials that never had a quorum leader again have no failover time: say how
                // many, and never call such a cell good.
                let never = all.len() - f.len();
                let p50 = percentile(&f, 0.5);
                let p95 = percentile(&f, 0.95);
                let half = |q: f64, v: f64| {
                    quantile_ci(&f, q)
                        .map(|(lo, hi)| (hi - v).max(v - lo))
                        .unwrap_or(0.0)
                };
                let mut text = format!(
                    "{} / {} ms",
                    fmt_ci(p50, half(0.5, p50)),
                    fmt_ci(p95, half(0.95, p95))
                );
                if never > 0 {
                    text.push_str(&format!(
                        "; {}% never recovered",
                        fmt_sig(100.0 * never as f64 / all.len() as f64)
                    ));
                }
                // Unrecovered trials rank as infinitely slow.
                let rank = if never > 0 { f64::INFINITY } else { p95 };
                Some((rank, text, self.link(&sc)))
            })
            .collect();
        self.column(
            format!("failover p50 / p95, n = {n}"),
            format!("`failover_ms` in `{sc}`: time from the fault to the first instant with a quorum leader; p95 against the best (good ≤ 1.25×, fair ≤ 2×)"),
            cells,
            |v, best| by_ratio(v, best, 1.25, 2.0),
        );
    }

    fn messages(&mut self) {
        let Some(sc) = failover_scenario(self.c) else {
            return;
        };
        let n = self.c.n_max;
        let cells = self
            .series
            .iter()
            .map(|s| {
                let (mean, half) = self.mean_of(s, n, &sc, |t| Some(t.msgs_election as f64))?;
                Some((mean, fmt_ci(mean, half), self.link(&sc)))
            })
            .collect();
        self.column(
            format!("election messages, n = {n}"),
            format!("mean `msgs_election` per failover in `{sc}` (good ≤ 2× the fewest, fair ≤ 10×); read it with the next column: a cheap election can sit on costly steady traffic (a lease's members poll the store)"),
            cells,
            |v, best| by_ratio(v, best, 2.0, 10.0),
        );
        // The other side of the message bill: everything a cluster sends per second.
        let cells = self
            .series
            .iter()
            .map(|s| {
                let (mean, half) = self.mean_of(s, n, &sc, TrialRow::msgs_per_second)?;
                Some((mean, fmt_ci(mean, half), self.link(&sc)))
            })
            .collect();
        self.column(
            format!("messages per second, n = {n}"),
            format!("mean `msgs_total` / `end_ms` in `{sc}`: every protocol message of the trial (boot, election, heartbeats, polling; not the workload) per simulated second (good ≤ 2× the fewest, fair ≤ 10×)"),
            cells,
            |v, best| by_ratio(v, best, 2.0, 10.0),
        );
    }

    /// The worst scenario among `scenarios` at the focus size by the per-trial `metric`.
    fn worst(
        &self,
        s: &Series,
        scenarios: &[String],
        metric: impl Fn(&TrialRow) -> Option<f64>,
    ) -> Option<(f64, f64, String)> {
        let mut worst: Option<(f64, f64, String)> = None;
        for sc in scenarios {
            if let Some((mean, half)) = self.mean_of(s, self.c.focus, sc, &metric) {
                if worst.as_ref().is_none_or(|w| mean > w.0) {
                    worst = Some((mean, half, sc.clone()));
                }
            }
        }
        worst
    }

    fn damage(&mut self) {
        // Every scenario of the sweep: a pause or a slow leader deposes a leader as surely as a
        // partition, and the guide and findings speak of every scenario too.
        let parts = self.c.results.scenarios();
        if parts.is_empty() {
            return;
        }
        let n = self.c.focus;
        let has_workload = self
            .c
            .results
            .trials
            .iter()
            .any(|t| t.writes_stale.is_some());
        let damage_verdict = |v: f64, _best: f64| {
            if v == 0.0 {
                "none"
            } else if v < 1.0 {
                "rare"
            } else {
                "damaging"
            }
        };
        if has_workload {
            for (fenced, title) in [
                (false, format!("damage, unfenced, n = {n}")),
                (true, format!("damage, fenced, n = {n}")),
            ] {
                let metric = move |t: &TrialRow| {
                    let stale = t.writes_stale? as f64;
                    let refused = t.writes_fenced.unwrap_or(0) as f64;
                    Some(if fenced { stale } else { stale + refused })
                };
                let cells = self
                    .series
                    .iter()
                    .map(|s| {
                        let (mean, half, sc) = self.worst(s, &parts, metric)?;
                        let text = if mean == 0.0 {
                            "0 writes".to_string()
                        } else {
                            let v = fmt_ci(mean, half);
                            let unit = if v == "1" { "write" } else { "writes" };
                            format!("{v} {unit} (`{sc}`)")
                        };
                        Some((mean, text, self.link(&sc)))
                    })
                    .collect();
                let about = if fenced {
                    "worst mean `writes_stale` per trial over every scenario (named): writes taken from a deposed leader despite fencing tokens (rare: < 1 per trial)".to_string()
                } else {
                    "worst mean `writes_stale + writes_fenced` per trial over every scenario (named): what a resource without fencing would take from deposed leaders".to_string()
                };
                self.column(title, about, cells, damage_verdict);
            }
        } else {
            let cells = self
                .series
                .iter()
                .map(|s| {
                    let (rate, _, sc) =
                        self.worst(s, &parts, |t| Some(if t.split_brain { 1.0 } else { 0.0 }))?;
                    // The overlap of the trials that split, not diluted by those that did not.
                    let ms: Vec<f64> = self
                        .trials(s, n, &sc)
                        .iter()
                        .filter(|t| t.split_brain)
                        .map(|t| t.split_brain_ms)
                        .collect();
                    let mean_ms = mean_ci(&ms).map_or(0.0, |m| m.0);
                    let text = if rate == 0.0 {
                        "never".to_string()
                    } else {
                        format!(
                            "{}% of trials, {} ms each (`{sc}`)",
                            fmt_sig(rate * 100.0),
                            fmt_sig(mean_ms)
                        )
                    };
                    // Ranked by rate; a split of any length is never "none".
                    let rank = if rate == 0.0 {
                        0.0
                    } else {
                        mean_ms.max(f64::MIN_POSITIVE)
                    };
                    Some((rank, text, self.link(&sc)))
                })
                .collect();
            self.column(
                format!("split brain, n = {n}"),
                "the worst `split_brain_rate` over every scenario (named), with the mean overlap of acting leaders in the trials that split (brief: < 1 ms; lasting: more)".to_string(),
                cells,
                |v, _| {
                    if v == 0.0 {
                        "none"
                    } else if v < 1.0 {
                        "brief"
                    } else {
                        "lasting"
                    }
                },
            );
        }
    }

    /// Lost liveness anywhere in the sweep: trials that ended with a connected majority and no
    /// settled leader (`no-leader`) or with leadership still changing (`livelock`).
    fn liveness(&mut self) {
        let failing = |o: &election_sim::Outcome| o.is_failure();
        let cells = self
            .series
            .iter()
            .map(|s| {
                let mut total = 0u64;
                let mut bad = 0u64;
                // (failing share, scenario) of the worst scenario.
                let mut worst: Option<(f64, String)> = None;
                for sc in self.c.results.scenarios() {
                    let (mut t_sc, mut b_sc) = (0u64, 0u64);
                    for n in self.c.results.sizes() {
                        for t in self.trials(s, n, &sc) {
                            t_sc += 1;
                            b_sc += u64::from(failing(&t.outcome));
                        }
                    }
                    total += t_sc;
                    bad += b_sc;
                    if b_sc > 0 {
                        let share = b_sc as f64 / t_sc as f64;
                        if worst.as_ref().is_none_or(|w| share > w.0) {
                            worst = Some((share, sc));
                        }
                    }
                }
                if total == 0 {
                    return None;
                }
                let share = bad as f64 / total as f64;
                Some(match worst {
                    None => (
                        0.0,
                        format!("0 of {total} trials"),
                        self.link(&self.c.results.scenarios()[0]),
                    ),
                    Some((w, sc)) => (
                        share,
                        format!(
                            "{}% of trials; worst `{sc}` {}%",
                            fmt_sig(share * 100.0),
                            fmt_sig(w * 100.0)
                        ),
                        self.link(&sc),
                    ),
                })
            })
            .collect();
        self.column(
            "liveness failures, all cells".to_string(),
            "share of all measured trials whose `outcome` is `no-leader` or `livelock` (no settled quorum leader although one was possible), and the worst scenario; cells, seeds and replay commands in the appendix (rare: < 1 %)".to_string(),
            cells,
            |v, _| {
                if v == 0.0 {
                    "none"
                } else if v < 0.01 {
                    "rare"
                } else {
                    "poor"
                }
            },
        );
    }

    fn churn(&mut self) {
        // The same scenarios as the guide and chart 6.
        let back = crate::figures::leader_change_scenarios(self.c.results, self.c.opts);
        if back.is_empty() {
            return;
        }
        let n = self.c.focus;
        let cells = self
            .series
            .iter()
            .map(|s| {
                let mut total = 0.0;
                let mut var = 0.0;
                let mut first = None;
                for sc in &back {
                    let (mean, half) = self.mean_of(s, n, sc, |t| Some(t.leader_changes as f64))?;
                    total += mean;
                    var += (half / Z95).powi(2);
                    first.get_or_insert_with(|| sc.clone());
                }
                let link = self.link(first.as_deref()?);
                Some((total, fmt_ci(total, Z95 * var.sqrt()), link))
            })
            .collect();
        let names: Vec<String> = back.iter().map(|s| format!("`{s}`")).collect();
        self.column(
            format!("leader changes in recovery and flapping scenarios, n = {n}"),
            format!("mean `leader_changes` per trial (every entry into the leader role after the first fault, failovers included), summed over {} (good ≤ 1.5× the fewest, fair ≤ 3×)", names.join(", ")),
            cells,
            |v, best| by_ratio(v, best, 1.5, 3.0),
        );
    }
}

/// The decision matrix of the report's network at its focus size.
pub(crate) fn matrix(c: &Ctx) -> Matrix {
    let series = series_for(c.results, &c.net);
    let rows = series
        .iter()
        .map(|s| (s.label.clone(), Vec::new()))
        .collect();
    let mut b = Builder {
        c,
        series,
        m: Matrix {
            columns: Vec::new(),
            rows,
        },
    };
    b.failover();
    b.messages();
    b.damage();
    b.liveness();
    b.churn();
    b.m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_by_ratio() {
        assert_eq!(by_ratio(10.0, 10.0, 1.25, 2.0), "best");
        assert_eq!(by_ratio(12.0, 10.0, 1.25, 2.0), "good");
        assert_eq!(by_ratio(19.0, 10.0, 1.25, 2.0), "fair");
        assert_eq!(by_ratio(21.0, 10.0, 1.25, 2.0), "poor");
        // A best of zero makes every other value poor, never good.
        assert_eq!(by_ratio(1.0, 0.0, 1.25, 2.0), "poor");
    }
}
