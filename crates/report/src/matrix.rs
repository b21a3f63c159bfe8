//! The decision matrix: protocol by concern, the first thing `REPORT.md` shows.
//!
//! Each cell is one rounded number and a plain verdict, linked to the table or chart it rests
//! on. A concern appears only when the sweep has the scenarios that measure it, and which
//! scenarios those are is read off their faults ([`ScenarioKind`], recorded in the manifest),
//! never off their names:
//!
//! | concern | scenarios | number | verdict |
//! |---|---|---|---|
//! | failover | the first of the report's failover scenarios the sweep has (`leader-crash`), else the first that crashes or pauses the leader without cutting links or bringing nodes back; focus size | p50 / p95 of `failover_ms` | on p95, against the best protocol: `best`, `good` (≤ 1.25×), `fair` (≤ 2×), `poor` |
//! | election messages | the same scenario at the largest size | mean `msgs_election` | against the best: `best`, `good` (≤ 2×), `fair` (≤ 10×), `poor` |
//! | messages per second | the same | mean `msgs_total / end_ms`: the whole bill, steady traffic included (a lease's elections are one compare-and-swap, but its members poll the store all the time) | as above |
//! | damage under partition, unfenced | every scenario that cuts links; focus size | worst mean `writes_stale + writes_fenced` per trial: what a resource without fencing takes from deposed leaders | `none` (0), `rare` (< 1 write per failure), `damaging` |
//! | damage under partition, fenced | the same | worst mean `writes_stale` | as above |
//! | split brain under partition (only without a workload) | the same | worst `split_brain_rate` and its mean duration | `none`, `brief` (mean overlap < 1 ms), `lasting` |
//! | liveness failures | every scenario and size | share of trials whose `outcome` is `no-leader` or `livelock`, and the worst scenario | `none` (0), `rare` (< 1 %), `poor` |
//! | churn | every scenario that brings crashed nodes back; focus size | mean `leader_changes` summed over them | against the best: `best`, `good` (≤ 1.5×), `fair` (≤ 3×), `poor` |
//!
//! Numbers are rounded to what their 95% interval supports ([`fmt_ci`]): distribution-free
//! order-statistic intervals for percentiles, normal intervals for means. A cell with no
//! measured trial reads `–` and has no verdict.

use election_runner::scenario::ScenarioKind;

use crate::charts::Series;
use crate::data::{fmt_ci, fmt_sig, mean_ci, percentile, quantile_ci, CellKey, TrialRow};
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
    if v <= best {
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

fn scenarios_where(c: &Ctx, f: impl Fn(ScenarioKind) -> bool) -> Vec<String> {
    c.results
        .scenarios()
        .into_iter()
        .filter(|s| c.results.scenario_kind(s).is_some_and(&f))
        .collect()
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
                let f = sorted(self.trials(s, n, &sc).iter().filter_map(|t| t.failover_ms));
                if f.is_empty() {
                    return None;
                }
                let p50 = percentile(&f, 0.5);
                let p95 = percentile(&f, 0.95);
                let half = |q: f64, v: f64| {
                    quantile_ci(&f, q)
                        .map(|(lo, hi)| (hi - v).max(v - lo))
                        .unwrap_or(0.0)
                };
                Some((
                    p95,
                    format!(
                        "{} / {} ms",
                        fmt_ci(p50, half(0.5, p50)),
                        fmt_ci(p95, half(0.95, p95))
                    ),
                    self.link(&sc),
                ))
            })
            .collect();
        self.column(
            format!("failover p50 / p95, n = {n}"),
            format!("`failover_ms` in `{sc}`: time until the largest component agrees on a leader again; p95 against the best (good ≤ 1.25×, fair ≤ 2×)"),
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
                let v: Vec<f64> = self
                    .trials(s, n, &sc)
                    .iter()
                    .map(|t| t.msgs_election as f64)
                    .collect();
                let (mean, half) = mean_ci(&v)?;
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
                let v: Vec<f64> = self
                    .trials(s, n, &sc)
                    .iter()
                    .filter(|t| t.end_ms > 0.0)
                    .map(|t| t.msgs_total as f64 * 1000.0 / t.end_ms)
                    .collect();
                let (mean, half) = mean_ci(&v)?;
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
            let v: Vec<f64> = self
                .trials(s, self.c.focus, sc)
                .iter()
                .filter_map(|t| metric(t))
                .collect();
            if let Some((mean, half)) = mean_ci(&v) {
                if worst.as_ref().is_none_or(|w| mean > w.0) {
                    worst = Some((mean, half, sc.clone()));
                }
            }
        }
        worst
    }

    fn damage(&mut self) {
        let parts = scenarios_where(self.c, |k| k.cuts_links);
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
                (false, format!("damage under partition, unfenced, n = {n}")),
                (true, format!("damage under partition, fenced, n = {n}")),
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
                            format!("{} writes (`{sc}`)", fmt_ci(mean, half))
                        };
                        Some((mean, text, self.link(&sc)))
                    })
                    .collect();
                let about = if fenced {
                    "worst mean `writes_stale` per trial over the scenarios that cut links: taken from a deposed leader despite fencing tokens (rare: < 1 per failure)".to_string()
                } else {
                    "worst mean `writes_stale + writes_fenced` per trial over the scenarios that cut links: what a resource without fencing would take from deposed leaders".to_string()
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
                    let ms: Vec<f64> = self
                        .trials(s, n, &sc)
                        .iter()
                        .map(|t| t.split_brain_ms)
                        .collect();
                    let (mean_ms, _) = mean_ci(&ms)?;
                    let text = if rate == 0.0 {
                        "never".to_string()
                    } else {
                        format!(
                            "{}% of trials, {} ms (`{sc}`)",
                            fmt_sig(rate * 100.0),
                            fmt_sig(mean_ms)
                        )
                    };
                    Some((mean_ms, text, self.link(&sc)))
                })
                .collect();
            self.column(
                format!("split brain under partition, n = {n}"),
                format!("the worst `split_brain_rate` at n = {n} over the scenarios that cut links, with the mean overlap of acting leaders (none; brief: < 1 ms; lasting)"),
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
        if self.c.results.trials.iter().all(|t| t.outcome.is_empty()) {
            return; // results written before verdicts existed
        }
        let failing = |o: &str| o == "no-leader" || o == "livelock";
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
            "share of all measured trials whose `outcome` is `no-leader` or `livelock` (a connected majority but no settled leader), and the worst scenario; cells, seeds and replay commands in the appendix (rare: < 1 %)".to_string(),
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
        let back = scenarios_where(self.c, |k| k.brings_back);
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
                    let v: Vec<f64> = self
                        .trials(s, n, sc)
                        .iter()
                        .map(|t| t.leader_changes as f64)
                        .collect();
                    let (mean, half) = mean_ci(&v)?;
                    total += mean;
                    var += (half / 1.96).powi(2);
                    first.get_or_insert_with(|| sc.clone());
                }
                let link = self.link(first.as_deref()?);
                Some((total, fmt_ci(total, 1.96 * var.sqrt()), link))
            })
            .collect();
        let names: Vec<String> = back.iter().map(|s| format!("`{s}`")).collect();
        self.column(
            format!("leader changes on return, n = {n}"),
            format!("mean `leader_changes` per trial, summed over the scenarios that bring crashed nodes back ({}) (good ≤ 1.5× the fewest, fair ≤ 3×)", names.join(", ")),
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
