//! Findings and the protocol-choice guide, written by code from the summary numbers.
//!
//! Nothing here is typed by hand: every sentence is chosen by a condition on the data and every
//! number in it is read from `summary.csv` (or computed from it: ratios, slopes), so the prose
//! changes when the results change. Each claim links the table row or chart that supports it.

use crate::data::{CellKey, Results, Stat, SummaryRow};
use crate::doc::Severity;
use crate::figures::{
    compared_series, failover_scenarios, leader_change_scenarios, nearest_size, ChartInfo,
};
use crate::markdown::{chart_link, table_link};
use crate::quote::{pct, ranked, shown, tie_names, Ranked};
use crate::ReportOptions;
use election_runner::replay::{Flags, Replay};

/// Everything the prose generator needs.
pub(crate) struct Ctx<'a> {
    pub results: &'a Results,
    pub opts: &'a ReportOptions,
    pub charts: &'a [ChartInfo],
    /// The network profile the prose is about (the first of the sweep).
    pub net: String,
    pub focus: u32,
    pub n_max: u32,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        results: &'a Results,
        opts: &'a ReportOptions,
        charts: &'a [ChartInfo],
    ) -> Self {
        let sizes = results.sizes();
        Ctx {
            results,
            opts,
            charts,
            net: results.nets().first().cloned().unwrap_or_default(),
            focus: nearest_size(&sizes, opts.focus_nodes).unwrap_or(opts.focus_nodes),
            n_max: sizes.last().copied().unwrap_or(0),
        }
    }

    fn chart(&self, number: u32) -> String {
        self.charts
            .iter()
            .find(|c| c.number == number && c.net == self.net)
            .map(chart_link)
            .unwrap_or_else(|| format!("chart {number}"))
    }

    /// Ran cells of one scenario at one size, one per series (protocol + parameter values).
    fn cells(&self, scenario: &str, n: u32) -> Vec<(String, &'a SummaryRow)> {
        compared_series(self.results, &self.net)
            .into_iter()
            .filter_map(|s| {
                let key = CellKey {
                    protocol: s.protocol.clone(),
                    nodes: n,
                    scenario: scenario.to_string(),
                    net: self.net.clone(),
                    params: s.params.clone(),
                };
                self.results
                    .cell(&key)
                    .filter(|r| r.ran())
                    .map(|r| (s.label.clone(), r))
            })
            .collect()
    }

    fn row(&self, r: &SummaryRow) -> String {
        table_link(self.results, r)
    }
}

fn ratio(a: f64, b: f64) -> String {
    let r = a / b;
    if r >= 100.0 {
        format!("{r:.0}×")
    } else {
        format!("{r:.1}×")
    }
}

/// ", but in steady state ..." when the protocol with the fewest election messages is not also
/// the one with the least steady traffic in the same cells (by more than 25 %): the other side
/// of the message bill, `msgs_steady_per_s_mean`, linked to its table.
fn steady_caveat(c: &Ctx, best: (&String, &SummaryRow), cells: &[(String, &SummaryRow)]) -> String {
    let Some(mine) = best.1.get(Stat::SteadyRateMean) else {
        return String::new();
    };
    let least = cells
        .iter()
        .filter_map(|(l, r)| r.get(Stat::SteadyRateMean).map(|v| (l, *r, v)))
        .min_by(|a, b| a.2.total_cmp(&b.2));
    match least {
        Some((l, r, v)) if l != best.0 && mine > 1.25 * v => format!(
            "; but in steady state (no fault, no election) `{}` sends [{} messages per second]({}) against [{}]({}) for `{l}`",
            best.0,
            shown(c.results, best.1, Stat::SteadyRateMean),
            anchor(&c.row(best.1)),
            shown(c.results, r, Stat::SteadyRateMean),
            anchor(&c.row(r))
        ),
        _ => String::new(),
    }
}

/// Nested bullets under a finding.
fn items(v: &[String]) -> String {
    v.iter().map(|i| format!("\n  - {i}")).collect()
}

pub(crate) fn names(v: &[String]) -> String {
    let q: Vec<String> = v.iter().map(|s| format!("`{s}`")).collect();
    match q.len() {
        0 => String::new(),
        1 => q[0].clone(),
        _ => format!("{} and {}", q[..q.len() - 1].join(", "), q[q.len() - 1]),
    }
}

/// Least-squares slope of ln(y) on ln(x).
pub(crate) fn loglog_slope(pts: &[(f64, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = pts
        .iter()
        .filter(|p| p.0 > 0.0 && p.1 > 0.0)
        .map(|p| (p.0.ln(), p.1.ln()))
        .collect();
    if pts.len() < 3 {
        return None;
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// The growth class of an exponent, as the matrix grades it ([`crate::matrix::growth_verdict`]).
fn growth_class(slope: f64) -> String {
    format!("≈ {}", crate::matrix::growth_verdict(slope))
}

/// One warning per cell (of every network) in which some trial's fault did not apply, first
/// among the findings: those trials are left out of the cell's statistics, and a cell with no
/// measured trial has none.
pub(crate) fn skipped_faults(c: &Ctx) -> Vec<String> {
    let mut out = Vec::new();
    for r in &c.results.summary {
        let b = r.budget_exceeded();
        if r.skipped.is_empty() && b > 0 {
            let seeds: Vec<String> = c
                .results
                .trials_of(&r.key)
                .into_iter()
                .filter(|t| t.budget_exceeded)
                .map(|t| t.seed.to_string())
                .take(5)
                .collect();
            let seed = seeds.first().map(String::as_str).unwrap_or("0");
            out.push(format!(
                "**Trials stopped by their work budget**: `{}` at n = {} in `{}` on `{}`: {} of {} trials used up `work_budget` and were cut short; they are left out of every statistic{} (seeds {}; replay with `{}` and a larger `--set work_budget=`; its event log up to the stop: `{}`; {}).",
                r.key.protocol,
                r.key.nodes,
                r.key.scenario,
                r.key.net,
                b,
                r.trials(),
                if r.measured() == 0 {
                    ": **the cell has no measurement at all**"
                } else {
                    ""
                },
                seeds.join(", "),
                replay(c.results, &r.key, "run", Flags::Long, seed)
                    .sets(replay_params(c.results, r, Some("work_budget"))),
                replay(c.results, &r.key, "trace", Flags::Long, seed)
                    .sets(replay_params(c.results, r, None))
                    .arg("--format", "jsonl")
                    .arg("--out", "trace.jsonl"),
                c.row(r)
            ));
        }
        let k = r.faults_skipped_trials();
        if !r.skipped.is_empty() || k == 0 {
            continue;
        }
        let (seeds, listed) = seeds_of(c, r, |t| t.faults_skipped > 0);
        let trace = crate::skipped_fault_trial(c.results)
            .filter(|t| t.key == r.key)
            .map(|t| format!("; trace: [{0}](traces/{0})", crate::trace_file_name(t)))
            .unwrap_or_default();
        let verdict = if r.measured() == 0 {
            "**no trial measured the scenario**: the cell has no statistics and is not a failover result".to_string()
        } else {
            format!(
                "its statistics cover only the other {} trials",
                r.measured()
            )
        };
        out.push(format!(
            "**Faults that did not apply**: `{}` at n = {} in `{}` on `{}`: in {} of {} trials a fault found no target (no quorum leader within `fault_wait_ms`, or the trial ended first); {verdict} (seeds {listed}; replay: `{}`{trace}; {}).",
            r.key.protocol,
            r.key.nodes,
            r.key.scenario,
            r.key.net,
            k,
            r.trials(),
            replay(c.results, &r.key, "run", Flags::Long, seeds.first().copied().unwrap_or(0))
                .sets(replay_params(c.results, r, None)),
            c.row(r)
        ));
    }
    out
}

/// The seeds of a cell's trials that `pick` selects, and how a finding lists them: the first
/// five, then how many more.
fn seeds_of(
    c: &Ctx,
    r: &SummaryRow,
    pick: impl Fn(&crate::data::TrialRow) -> bool,
) -> (Vec<u64>, String) {
    let seeds: Vec<u64> = c
        .results
        .trials_of(&r.key)
        .into_iter()
        .filter(|t| pick(t))
        .map(|t| t.seed)
        .collect();
    let shown: Vec<String> = seeds.iter().take(5).map(u64::to_string).collect();
    let mut listed = shown.join(", ");
    if seeds.len() > shown.len() {
        listed.push_str(&format!(" and {} more", seeds.len() - shown.len()));
    }
    (seeds, listed)
}

/// Whether scenario `sc` exercises `protocol` at all. A protocol with service endpoints (a
/// lease, whose members talk only to its store) is untouched by link cuts among members, so a
/// scenario that cuts links without reaching a service endpoint says nothing about it: it is
/// left out of every claim about partitions rather than credited with a clean result.
pub(crate) fn exercises(c: &Ctx, protocol: &str, sc: &str) -> bool {
    let services =
        election_runner::protocol::ProtocolSpec::parse(protocol).map_or(0, |s| s.services());
    services == 0
        || c.results
            .scenario_kind(sc)
            .is_none_or(|k| k.touches_services || !k.cuts_links)
}

/// `election-bench <command>` for one trial of the cell `key`: its protocol, size, scenario, the
/// sweep's `--config` if it had one, the network profile it ran over and its seed; the sweep's parameters are added with
/// [`replay_params`].
pub(crate) fn replay(
    results: &crate::data::Results,
    key: &crate::data::CellKey,
    command: &str,
    flags: Flags,
    seed: impl std::fmt::Display,
) -> Replay {
    let r = Replay::new(command, flags, &key.protocol, key.nodes, &key.scenario);
    // A sweep run from a config file needs it again: its custom networks, scenarios and
    // measured distributions are defined there, not by name.
    let r = match election_runner::replay::config_file(&results.manifest.command) {
        Some(config) => r.arg("--config", config),
        None => r,
    };
    r.arg("--net", election_runner::net::profile_of(&key.net))
        .arg("--seed", seed)
}

/// The `--set` pairs that replay a trial of the cell of `r`: the sweep's fixed parameters (its
/// `net.*` ones included: the `net` column's overrides) and the cell's varied values, except
/// `skip`.
pub(crate) fn replay_params(
    results: &crate::data::Results,
    r: &crate::data::SummaryRow,
    skip: Option<&str>,
) -> Vec<(String, String)> {
    fixed_params(results)
        .into_iter()
        .chain(
            results
                .param_keys
                .iter()
                .cloned()
                .zip(r.key.params.iter().cloned()),
        )
        .filter(|(k, v)| !v.is_empty() && Some(k.as_str()) != skip)
        .collect()
}

/// The parameters the sweep set to one value (`--set k=v` without a list), from the manifest,
/// in its order: a replay command needs them as much as the varied ones. A sweep run with
/// `--config` gives only those its command line set: the replay names the config, which holds
/// the rest (its `empirical:` files relative to the file, so the replay runs from any
/// directory).
pub(crate) fn fixed_params(results: &crate::data::Results) -> Vec<(String, String)> {
    let Some(params) = results.manifest.config["params"].as_object() else {
        return Vec::new();
    };
    let command = &results.manifest.command;
    let from_command = election_runner::replay::config_file(command)
        .map(|_| election_runner::replay::set_keys(command));
    params
        .iter()
        .filter(|(k, _)| from_command.as_ref().is_none_or(|keys| keys.contains(k)))
        .filter_map(|(k, p)| match &p["value"] {
            serde_json::Value::String(v) => Some((k.clone(), v.clone())),
            serde_json::Value::Number(v) => Some((k.clone(), v.to_string())),
            serde_json::Value::Bool(v) => Some((k.clone(), v.to_string())),
            _ => None,
        })
        .collect()
}

/// The damage a cell's splits did, for prose next to a split-brain rate: stale writes per
/// failure and what fencing stopped ("" without a workload).
fn damage_of(c: &Ctx, r: &SummaryRow) -> String {
    let Some(stale) = r.get(Stat::WritesStaleMean) else {
        return String::new();
    };
    let fenced = r.get(Stat::WritesFencedMean).unwrap_or(0.0);
    let fenced_text = shown(c.results, r, Stat::WritesFencedMean);
    match (stale > 0.0, fenced > 0.0) {
        (false, false) => ", no write taken from a deposed leader".into(),
        (false, true) => format!(
            ", no write taken from a deposed leader ({fenced_text} per failure refused by fencing tokens)"
        ),
        (true, _) => format!(
            ", {} writes per failure taken from a deposed leader{}",
            shown(c.results, r, Stat::WritesStaleMean),
            if fenced > 0.0 {
                format!(" ({fenced_text} more refused by fencing tokens)")
            } else {
                String::new()
            }
        ),
    }
}

/// A split-brain rate with its duration and its damage: "12% of trials, 3.4 ms on average, ...".
fn split_of(c: &Ctx, r: &SummaryRow) -> String {
    format!(
        "{} of trials, {} ms on average{}",
        shown(c.results, r, Stat::SplitRate),
        shown(c.results, r, Stat::SplitMsMean),
        damage_of(c, r)
    )
}

/// What a split costs, one sentence per protocol series: of every scenario at n = focus on the
/// report's network, the one where a deposed leader's writes did the most damage (or, with none
/// anywhere, the longest overlap of acting leaders), with the split's rate and duration next to
/// the writes taken from deposed leaders, fenced and unfenced. Empty without a workload.
pub(crate) fn damage(c: &Ctx) -> Vec<String> {
    let mut grouped: Vec<(Vec<String>, String)> = Vec::new();
    for s in compared_series(c.results, &c.net) {
        // (unfenced damage, split ms, row)
        let mut worst: Option<(f64, f64, &SummaryRow)> = None;
        for sc in c.results.scenarios() {
            let key = crate::figures::key_of(&s, c.focus, &sc, &c.net);
            let Some(r) = c.results.cell(&key).filter(|r| r.ran()) else {
                continue;
            };
            let Some(stale) = r.get(Stat::WritesStaleMean) else {
                continue;
            };
            let unfenced = stale + r.get(Stat::WritesFencedMean).unwrap_or(0.0);
            let split = r.get(Stat::SplitMsMean).unwrap_or(0.0);
            let better = match worst {
                None => true,
                Some((d, sp, _)) => unfenced > d || (unfenced == d && split > sp),
            };
            if better {
                worst = Some((unfenced, split, r));
            }
        }
        let Some((unfenced, split, r)) = worst else {
            continue;
        };
        let rate = r.get(Stat::SplitRate).unwrap_or(0.0);
        let stale = r.get(Stat::WritesStaleMean).unwrap_or(0.0);
        let fenced = r.get(Stat::WritesFencedMean).unwrap_or(0.0);
        let q = |stat: Stat| shown(c.results, r, stat);
        let split_text = if rate > 0.0 && split > 0.0 {
            format!(
                "two leaders acted at once in {} of trials, for {} ms on average",
                q(Stat::SplitRate),
                q(Stat::SplitMsMean)
            )
        } else if rate > 0.0 {
            format!(
                "two leaders acted at once in {} of trials, for a single instant",
                q(Stat::SplitRate)
            )
        } else {
            "two leaders never acted at once".to_string()
        };
        let verdict = if unfenced == 0.0 {
            if rate > 0.0 {
                "**harmless**: no write was ever taken from a deposed leader".to_string()
            } else {
                "**no damage**: no write was ever taken from a deposed leader".to_string()
            }
        } else if stale == 0.0 {
            format!(
                "**harmless with fencing tokens, damaging without**: the tokens refused every write a deposed leader sent ({} per failure), which a resource without fencing would have taken",
                q(Stat::WritesFencedMean)
            )
        } else {
            let fencing = if fenced > 0.0 {
                format!(
                    "; fencing tokens refused {} more per failure, the rest arrived before the new leader's first write raised the resource's token",
                    q(Stat::WritesFencedMean)
                )
            } else {
                "; no fencing token refused any of them".to_string()
            };
            format!(
                "**damaging in {} of trials**: {} writes per failure on average were taken from a deposed leader, over {} ms{fencing}",
                q(Stat::StaleRate),
                q(Stat::WritesStaleMean),
                q(Stat::StaleWindowMean)
            )
        };
        let rest = format!(
            "worst case `{}`: {}; {} ({}).",
            r.key.scenario,
            split_text,
            verdict,
            c.row(r)
        );
        // Series that measured the same thing (e.g. Raft with `voters=5` at n <= 5) share a line.
        match grouped.iter_mut().find(|(_, r)| *r == rest) {
            Some((labels, _)) => labels.push(s.label.clone()),
            None => grouped.push((vec![s.label.clone()], rest)),
        }
    }
    let lines: Vec<String> = grouped
        .into_iter()
        .map(|(labels, rest)| format!("{}, {rest}", names(&labels)))
        .collect();
    if lines.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "**What a failure costs** at n = {} (the workload: every leader writes to a shared resource every interval, carrying its epoch as a fencing token; a *stale* write is one taken from a leader that another node was elected after):{}",
        c.focus,
        items(&lines)
    )]
}

/// The findings, as markdown bullets, most severe first — anomalies (lost liveness, safety
/// violations), then damage and split brain, then failover time, then cost and churn, then
/// clean bills — and the long per-protocol lists that belong in the appendix.
pub(crate) fn findings(c: &Ctx) -> (Vec<String>, Vec<String>) {
    let mut out: Vec<(Severity, String)> = damage(c)
        .into_iter()
        .map(|d| (Severity::Damage, d))
        .collect();
    let mut appendix: Vec<String> = Vec::new();
    // Lost liveness, right after a safety violation.
    if let Some(f) = crate::liveness::headline(c.results) {
        out.push((Severity::Liveness, f));
    }
    if let Some(f) = crate::liveness::by_shape(c.results) {
        out.push((Severity::Liveness, f));
    }
    let failover = failover_scenarios(c.results, c.opts);

    // Message cost at the largest size: most vs least, ties as ties (the first failover
    // scenario in the report, the matrix's; the others in the appendix).
    for (k, sc) in failover.iter().enumerate() {
        let cells = c.cells(sc, c.n_max);
        let v = ranked(c.results, &cells, Stat::MsgsMean);
        if v.len() < 2 {
            continue;
        }
        let (hi, lo) = (Ranked::highest(&v), Ranked::lowest(&v));
        let (h, l) = (hi[0], lo[0]);
        if l.value > 0.0 && h.value > l.value && !overlaps(&hi, &lo) {
            let line = format!(
                "At n = {} in `{sc}`, {} sent {} the election messages of {} per failover ([mean {} vs {}]({}); {}){}.",
                c.n_max,
                tie_names(&hi),
                ratio(h.value, l.value),
                tie_names(&lo),
                shown(c.results, h.item, Stat::MsgsMean),
                shown(c.results, l.item, Stat::MsgsMean),
                anchor(&c.row(h.item)),
                c.chart(1),
                // The whole bill per second is the matrix's column (and the guide's caveat).
                if k == 0 {
                    String::new()
                } else {
                    steady_caveat(c, (&l.label, l.item), &cells)
                }
            );
            if k == 0 {
                out.push((Severity::Cost, line));
            } else {
                appendix.push(line);
            }
        }
    }

    // Growth exponents.
    if let Some(sc) = failover.first() {
        let sizes = c.results.sizes();
        let mut parts = Vec::new();
        for s in compared_series(c.results, &c.net) {
            let pts: Vec<(f64, f64)> = sizes
                .iter()
                .filter_map(|&n| {
                    let key = crate::figures::key_of(&s, n, sc, &c.net);
                    let r = c.results.cell(&key).filter(|r| r.ran())?;
                    Some((n as f64, r.get(Stat::MsgsMean)?))
                })
                .collect();
            if let Some(k) = loglog_slope(&pts) {
                parts.push(format!("`{}` {:.2} ({})", s.label, k, growth_class(k)));
            }
        }
        if !parts.is_empty() {
            // The matrix grades each protocol by this exponent; the list is the appendix's.
            appendix.push(format!(
                "How election messages grow with n in `{sc}`, as the least-squares slope of log messages on log n over n = {}…{} (1 is O(n), 2 is O(n²); {}):{}",
                sizes.first().unwrap_or(&0),
                c.n_max,
                c.chart(1),
                items(&parts)
            ));
        }
    }

    // Who detects the crash: highest vs lowest id.
    if failover.len() >= 2 {
        let (a, b) = (&failover[0], &failover[1]);
        let ca = c.cells(a, c.n_max);
        let cb = c.cells(b, c.n_max);
        let mut sensitive = Vec::new();
        let mut flat = Vec::new();
        for (label, ra) in &ca {
            let Some((_, rb)) = cb.iter().find(|(l, _)| l == label) else {
                continue;
            };
            let (Some(va), Some(vb)) = (ra.get(Stat::MsgsMean), rb.get(Stat::MsgsMean)) else {
                continue;
            };
            if va <= 0.0 || vb <= 0.0 {
                continue;
            }
            let r = vb / va;
            if !(1.0 / 1.25..=1.25).contains(&r) {
                sensitive.push(format!(
                    "`{label}` {} ([{}]({}) vs [{}]({}) messages)",
                    ratio(vb, va),
                    shown(c.results, rb, Stat::MsgsMean),
                    anchor(&c.row(rb)),
                    shown(c.results, ra, Stat::MsgsMean),
                    anchor(&c.row(ra))
                ));
            } else {
                flat.push(label.clone());
            }
        }
        if !sensitive.is_empty() {
            let mut s = format!(
                "Which node detects the crash matters for some protocols: at n = {}, `{b}` costs, relative to `{a}` ({}),",
                c.n_max,
                c.chart(1)
            );
            s.push_str(&items(&sensitive));
            if !flat.is_empty() {
                s.push_str(&items(&[format!(
                    "{}: within 25% either way",
                    names(&flat)
                )]));
            }
            appendix.push(s);
        } else if !flat.is_empty() {
            out.push((Severity::Cost, format!(
                "Which node detects the crash barely matters here: at n = {}, `{b}` costs within 25% of `{a}` for every protocol ({}).",
                c.n_max,
                c.chart(1)
            )));
        }
    }

    // Failover time at the focus size: fastest and slowest median, ties as ties.
    if let Some(sc) = failover.first() {
        let cells = c.cells(sc, c.focus);
        let v = ranked(c.results, &cells, Stat::FailoverP50);
        let (fast, slow) = (Ranked::lowest(&v), Ranked::highest(&v));
        if v.len() >= 2 && !overlaps(&fast, &slow) {
            let (f, s) = (fast[0], slow[0]);
            out.push((Severity::Failover, format!(
                "At n = {} in `{sc}`, the fastest median failover is [{} ms (p95 {} ms)]({}), under {}, and the slowest [{} ms (p95 {} ms)]({}), under {}, {} apart ({}, {}).",
                c.focus,
                shown(c.results, f.item, Stat::FailoverP50),
                shown(c.results, f.item, Stat::FailoverP95),
                anchor(&c.row(f.item)),
                tie_names(&fast),
                shown(c.results, s.item, Stat::FailoverP50),
                shown(c.results, s.item, Stat::FailoverP95),
                anchor(&c.row(s.item)),
                tie_names(&slow),
                ratio(s.value, f.value),
                c.chart(2),
                c.chart(3)
            )));
        } else if v.len() >= 2 {
            out.push((Severity::Failover, format!(
                "At n = {} in `{sc}`, the 95 % intervals of the median failover do not separate the protocols ({} ms to {} ms; {}, {}).",
                c.focus,
                shown(c.results, fast[0].item, Stat::FailoverP50),
                shown(c.results, slow[0].item, Stat::FailoverP50),
                c.chart(2),
                c.chart(3)
            )));
        }
    }

    // Split brain in the partition scenario of interest.
    let sbs = &c.opts.split_brain_scenario;
    let cells: Vec<(String, &SummaryRow)> = c
        .cells(sbs, c.focus)
        .into_iter()
        .filter(|(_, r)| exercises(c, &r.key.protocol, sbs))
        .collect();
    if !cells.is_empty() {
        let safe: Vec<&(String, &SummaryRow)> = cells
            .iter()
            .filter(|(_, r)| r.get(Stat::SplitRate) == Some(0.0))
            .collect();
        let unsafe_: Vec<&(String, &SummaryRow)> = cells
            .iter()
            .filter(|(_, r)| r.get(Stat::SplitRate).is_some_and(|v| v > 0.0))
            .collect();
        let describe_unsafe = |v: &[&(String, &SummaryRow)]| {
            v.iter()
                .map(|(l, r)| {
                    format!(
                        "`{l}` in {} (95% CI of the rate {}–{}; {})",
                        split_of(c, r),
                        pct(r.get(Stat::SplitCiLo).unwrap_or(0.0)),
                        pct(r.get(Stat::SplitCiHi).unwrap_or(0.0)),
                        c.row(r)
                    )
                })
                .collect::<Vec<_>>()
        };
        let safe_names: Vec<String> = safe.iter().map(|(l, _)| l.clone()).collect();
        let sentence = match (safe.is_empty(), unsafe_.is_empty()) {
            (false, false) => format!(
                "In `{sbs}` at n = {}, {} never had two acting leaders at once (split-brain rate 0 over {} trials, 95% upper bound {}), while split brain happened for the others ({}):{}",
                c.focus,
                names(&safe_names),
                safe.iter()
                    .map(|(_, r)| r.raw(Stat::Trials).to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                safe.iter()
                    .map(|(_, r)| pct(r.get(Stat::SplitCiHi).unwrap_or(0.0)))
                    .collect::<Vec<_>>()
                    .join(", "),
                c.chart(4),
                items(&describe_unsafe(&unsafe_))
            ),
            (false, true) => format!(
                "In `{sbs}` at n = {}, no protocol ever had two acting leaders at once ({}).",
                c.focus,
                c.chart(4)
            ),
            (true, false) => format!(
                "In `{sbs}` at n = {}, every protocol had split brain ({}):{}",
                c.focus,
                c.chart(4),
                items(&describe_unsafe(&unsafe_))
            ),
            (true, true) => String::new(),
        };
        // The matrix's split-brain column and the guide carry the worst case of every
        // protocol; the per-protocol list of this one scenario is evidence for the appendix.
        if !sentence.is_empty() {
            appendix.push(sentence);
        }
        // Stranded leaders.
        let stranded: Vec<String> = cells
            .iter()
            .filter(|(_, r)| r.get(Stat::MinorityMsMean).is_some_and(|v| v > 0.0))
            .map(|(l, r)| format!("`{l}` {} ms ({})", r.prose(Stat::MinorityMsMean), c.row(r)))
            .collect();
        if !stranded.is_empty() {
            appendix.push(format!(
                "A leader stranded outside the majority side kept believing it led (mean `minority_leader_ms` in `{sbs}` at n = {}):{}",
                c.focus,
                items(&stranded)
            ));
        }
    }

    // Split brain anywhere else.
    let mut per_protocol = Vec::new();
    for s in compared_series(c.results, &c.net) {
        let mut hits = Vec::new();
        for sc in c.results.scenarios() {
            let key = crate::figures::key_of(&s, c.focus, &sc, &c.net);
            if let Some(r) = c.results.cell(&key).filter(|r| r.ran()) {
                if r.get(Stat::SplitRate).is_some_and(|v| v > 0.0) {
                    hits.push(format!("`{sc}` {}", split_of(c, r)));
                }
            }
        }
        if !hits.is_empty() {
            per_protocol.push(format!("`{}`: {}", s.label, hits.join(", ")));
        }
    }
    if !per_protocol.is_empty() {
        appendix.push(format!(
            "Scenarios with any split brain at n = {}, by protocol (share of trials, mean overlap, and the damage done; {}):{}",
            c.focus,
            c.chart(4),
            items(&per_protocol)
        ));
    }

    // Convergence failures.
    let mut stuck = Vec::new();
    for sc in c.results.scenarios() {
        for (l, r) in c.cells(&sc, c.focus) {
            if let Some(v) = r.get(Stat::ConvergedRate).filter(|&v| v < 1.0) {
                stuck.push(format!("`{l}` in `{sc}` {} ({})", pct(v), c.row(r)));
            }
        }
    }
    if !stuck.is_empty() {
        out.push((Severity::Liveness, format!(
            "Not every trial ended with a quorum leader at n = {} (share that converged). A majority protocol cut off from its majority should refuse to elect; anywhere else this is lost liveness; either way it counts as unavailability ({}):{}",
            c.focus,
            c.chart(5),
            items(&stuck)
        )));
    }

    // Safety: same-epoch leaders.
    let violations: Vec<&SummaryRow> = c
        .results
        .summary
        .iter()
        .filter(|r| r.ran() && r.get(Stat::SameEpochMax).is_some_and(|v| v > 0.0))
        .collect();
    if violations.is_empty() {
        out.push((Severity::Clean, "No trial of any protocol ever had two live leaders claiming the same epoch or term (`same_epoch_leaders_max` is 0 in every cell).".to_string()));
    } else {
        let mut protos: Vec<String> = Vec::new();
        for r in &violations {
            if !protos.contains(&r.key.protocol) {
                protos.push(r.key.protocol.clone());
            }
        }
        let r = violations[0];
        let (seeds, listed) = seeds_of(c, r, |t| t.same_epoch_leaders > 0);
        let trace = crate::safety_trial(c.results)
            .map(|t| format!("; trace: [{0}](traces/{0})", crate::trace_file_name(t)))
            .unwrap_or_default();
        out.push((Severity::Safety, format!(
            "**Safety violation**: two live leaders claimed the same epoch or term in {} cells, for {}. First: `{}` at n = {} in `{}`, in {} of {} trials (seeds {listed}; replay: `{}`{trace}; {}).",
            violations.len(),
            names(&protos),
            r.key.protocol,
            r.key.nodes,
            r.key.scenario,
            seeds.len(),
            r.trials(),
            replay(c.results, &r.key, "trace", Flags::Long, seeds.first().copied().unwrap_or(0))
                .sets(replay_params(c.results, r, None))
                .arg("--out", "trace.svg"),
            c.row(r)
        )));
    }

    // Leader changes: the first scenario here, the others in the appendix (the matrix's churn
    // column and the guide sum them all).
    for (k, sc) in leader_change_scenarios(c.results, c.opts)
        .into_iter()
        .enumerate()
    {
        let cells = c.cells(&sc, c.focus);
        let v = ranked(c.results, &cells, Stat::LeaderChangesMean);
        if v.len() < 2 {
            continue;
        }
        let (most, least) = (Ranked::highest(&v), Ranked::lowest(&v));
        if most[0].value > least[0].value && !overlaps(&most, &least) {
            let line = format!(
                "In `{sc}` at n = {}, leadership moved most often under {} ([mean leader changes per trial {}]({})) and least under {} ([{}]({})) ({}).",
                c.focus,
                tie_names(&most),
                shown(c.results, most[0].item, Stat::LeaderChangesMean),
                anchor(&c.row(most[0].item)),
                tie_names(&least),
                shown(c.results, least[0].item, Stat::LeaderChangesMean),
                anchor(&c.row(least[0].item)),
                c.chart(6)
            );
            if k == 0 {
                out.push((Severity::Cost, line));
            } else {
                appendix.push(line);
            }
        }
    }
    // A stable sort keeps the order within a severity.
    out.sort_by_key(|(sev, _)| *sev);
    (out.into_iter().map(|(_, s)| s).collect(), appendix)
}

/// The protocol-choice guide, as markdown bullets: which protocol under which constraint.
pub(crate) fn guide(c: &Ctx) -> Vec<String> {
    let mut out = Vec::new();
    let series = compared_series(c.results, &c.net);

    // 0. Damage: whose deposed leaders got writes accepted, with and without fencing.
    let mut never = Vec::new();
    let mut fenced_only = Vec::new();
    let mut damaging: Vec<(String, f64, &SummaryRow)> = Vec::new();
    for s in &series {
        let mut worst_stale: Option<(f64, &SummaryRow)> = None;
        let mut worst_unfenced = 0.0f64;
        let mut any = false;
        for sc in c.results.scenarios() {
            let key = crate::figures::key_of(s, c.focus, &sc, &c.net);
            let Some(r) = c.results.cell(&key).filter(|r| r.ran()) else {
                continue;
            };
            let Some(stale) = r.get(Stat::WritesStaleMean) else {
                continue;
            };
            any = true;
            worst_unfenced =
                worst_unfenced.max(stale + r.get(Stat::WritesFencedMean).unwrap_or(0.0));
            if worst_stale.is_none_or_lt(stale) {
                worst_stale = Some((stale, r));
            }
        }
        match worst_stale {
            _ if !any => {}
            Some((v, r)) if v > 0.0 => damaging.push((s.label.clone(), v, r)),
            _ if worst_unfenced > 0.0 => fenced_only.push(s.label.clone()),
            _ => never.push(s.label.clone()),
        }
    }
    if !never.is_empty() || !fenced_only.is_empty() || !damaging.is_empty() {
        let mut text = format!(
            "**A deposed leader's work must never be accepted** (the question behind split brain): at n = {}, over every scenario of this sweep,",
            c.focus
        );
        if !never.is_empty() {
            text.push_str(&format!(
                " {} never had a write taken from a deposed leader, even without fencing;",
                names(&never)
            ));
        }
        if !fenced_only.is_empty() {
            text.push_str(&format!(
                " {} had none taken only because the resource checks fencing tokens — without them it would have taken a deposed leader's writes;",
                names(&fenced_only)
            ));
        }
        if !damaging.is_empty() {
            damaging.sort_by(|a, b| b.1.total_cmp(&a.1));
            // Their numbers, worst scenario and first failing seed are the matrix's.
            text.push_str(&format!(
                " {} had writes taken from a deposed leader despite fencing, most first (the matrix's fenced-writes column).",
                names(&damaging.iter().map(|d| d.0.clone()).collect::<Vec<_>>())
            ));
        } else if text.ends_with(';') {
            text.pop();
            text.push('.');
        }
        out.push(text);
    }
    // Read off the scenarios' faults (a partition, a one-way cut, an isolation), not their names.
    let partition_scenarios: Vec<String> = c
        .results
        .scenarios()
        .into_iter()
        .filter(|s| c.results.scenario_kind(s).is_some_and(|k| k.cuts_links))
        .collect();

    // 1. Partitions and split brain.
    if !partition_scenarios.is_empty() {
        let mut clean = Vec::new();
        let mut worst: Vec<(String, f64, &SummaryRow)> = Vec::new();
        for s in &series {
            let mut max_rate: Option<(f64, &SummaryRow)> = None;
            for sc in &partition_scenarios {
                if !exercises(c, &s.protocol, sc) {
                    continue;
                }
                let key = crate::figures::key_of(s, c.focus, sc, &c.net);
                if let Some(r) = c.results.cell(&key).filter(|r| r.ran()) {
                    let v = r.get(Stat::SplitRate).unwrap_or(0.0);
                    if max_rate.is_none_or_lt(v) {
                        max_rate = Some((v, r));
                    }
                }
            }
            match max_rate {
                Some((0.0, _)) => clean.push(s.label.clone()),
                Some((v, r)) => worst.push((s.label.clone(), v, r)),
                None => {}
            }
        }
        if !clean.is_empty() {
            // Only the scenarios the recommended protocols ran (a store scenario is lease-only).
            let ran: Vec<String> = partition_scenarios
                .iter()
                .filter(|sc| {
                    series.iter().filter(|s| clean.contains(&s.label)).any(|s| {
                        if !exercises(c, &s.protocol, sc) {
                            return false;
                        }
                        let key = crate::figures::key_of(s, c.focus, sc, &c.net);
                        c.results.cell(&key).is_some_and(|r| r.ran())
                    })
                })
                .cloned()
                .collect();
            let mut s = format!(
                "**The network can partition and two leaders at once are unacceptable** (nothing downstream fences a deposed leader): choose {} — split-brain rate 0 in every partition scenario of this sweep it ran ({}) at n = {} ({}).",
                names(&clean),
                names(&ran),
                c.focus,
                c.chart(4)
            );
            if !worst.is_empty() {
                let mut w: Vec<&(String, f64, &SummaryRow)> = worst.iter().collect();
                w.sort_by(|a, b| b.1.total_cmp(&a.1));
                // Their rate, overlap and damage are the matrix's split-brain column.
                s.push_str(&format!(
                    " {} split in some partition scenario, most often first (rate, overlap and damage: the matrix's split-brain column).",
                    names(&w.iter().map(|x| x.0.clone()).collect::<Vec<_>>())
                ));
            }
            out.push(s);
        } else if !worst.is_empty() {
            let best = worst.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
            out.push(format!(
                "**The network can partition**: no protocol of this sweep avoided split brain in every partition scenario at n = {}; the lowest worst case is `{}` ({}; {}). Pair it with fencing (epochs or lease checks on every write) ({}).",
                c.focus,
                best.0,
                split_of(c, best.2),
                c.row(best.2),
                c.chart(4)
            ));
        }
    }

    // 2. Fast failover on crash-only networks: the lowest p95, ties as ties.
    let failover = failover_scenarios(c.results, c.opts);
    if let Some(sc) = failover.first() {
        let cells = c.cells(sc, c.focus);
        let v = ranked(c.results, &cells, Stat::FailoverP95);
        let best = Ranked::lowest(&v);
        if let Some(b) = best.first() {
            out.push(format!(
                "**Crash-stop failures on a reliable network, and failover time is what matters**: {} {} the lowest 95th-percentile failover at n = {} in `{sc}`: [p95 {} ms, median {} ms]({}) ({}, {}).",
                tie_names(&best),
                if best.len() == 1 { "has" } else { "have" },
                c.focus,
                shown(c.results, b.item, Stat::FailoverP95),
                shown(c.results, b.item, Stat::FailoverP50),
                anchor(&c.row(b.item)),
                c.chart(2),
                c.chart(3)
            ));
        }
    }

    // 3. Large clusters and message budgets: the matrix's scenario and size.
    if let Some(sc) = failover.first() {
        let cells = c.cells(sc, c.n_max);
        let v = ranked(c.results, &cells, Stat::MsgsMean);
        let (best, worst) = (Ranked::lowest(&v), Ranked::highest(&v));
        if let (Some(b), Some(w)) = (best.first(), worst.first()) {
            let mut s = format!(
                "**Large clusters, or election traffic is expensive**: {} {} the fewest election messages at n = {} in `{sc}` ([{} per failover]({}))",
                tie_names(&best),
                if best.len() == 1 { "sends" } else { "send" },
                c.n_max,
                shown(c.results, b.item, Stat::MsgsMean),
                anchor(&c.row(b.item))
            );
            if w.value > b.value && b.value > 0.0 && !overlaps(&best, &worst) {
                s.push_str(&format!(
                    ", {} fewer than {} ([{}]({}))",
                    ratio(w.value, b.value),
                    tie_names(&worst),
                    shown(c.results, w.item, Stat::MsgsMean),
                    anchor(&c.row(w.item))
                ));
            }
            s.push_str(&steady_caveat(c, (&b.label, b.item), &cells));
            s.push_str(&format!(" ({}).", c.chart(1)));
            out.push(s);
        }
    }

    // 4. Recovering or flapping nodes: the summed leader changes of the by-protocol table.
    let lc = leader_change_scenarios(c.results, c.opts);
    if !lc.is_empty() {
        let totals: Vec<Ranked<()>> = series
            .iter()
            .filter_map(|s| {
                let (v, half) = churn_total(c, s)?;
                Some(Ranked::new(
                    s.label.clone(),
                    v,
                    Some((v - half, v + half)),
                    (),
                ))
            })
            .collect();
        let (best, worst) = (Ranked::lowest(&totals), Ranked::highest(&totals));
        if let (Some(b), Some(w)) = (best.first(), worst.first()) {
            let link = by_protocol_target();
            let mut text = format!(
                "**Nodes crash and come back, or flap**: {} {} leadership least — [{} leader changes per trial]({link}) summed over {} at n = {}",
                tie_names(&best),
                if best.len() == 1 { "moves" } else { "move" },
                churn_text(b.value, b.hi - b.value),
                names(&lc),
                c.focus,
            );
            if !overlaps(&best, &worst) {
                text.push_str(&format!(
                    ", against [{}]({link}) for {}",
                    churn_text(w.value, w.hi - w.value),
                    tie_names(&worst)
                ));
            }
            text.push_str(&format!(" ({}).", c.chart(6)));
            out.push(text);
        }
    }

    // 5. Availability during partitions: every protocol that ran the scenario, ties as ties;
    // then, if a protocol the partition does not reach (a lease whose store sits outside it)
    // is the least unavailable, the least unavailable of those it does reach.
    let sbs = &c.opts.split_brain_scenario;
    let cells = c.cells(sbs, c.focus);
    let all = ranked(c.results, &cells, Stat::UnavailableMean);
    let least = Ranked::lowest(&all);
    if !least.is_empty() {
        let describe = |group: &[&Ranked<&SummaryRow>]| -> String {
            group
                .iter()
                .map(|g| {
                    let r = g.item;
                    let mut t = format!(
                        "`{}` ([{} ms on average]({}){})",
                        g.label,
                        shown(c.results, r, Stat::UnavailableMean),
                        anchor(&c.row(r)),
                        if exercises(c, &r.key.protocol, sbs) {
                            ""
                        } else {
                            ": the partition does not reach it"
                        }
                    );
                    match r.get(Stat::SplitRate) {
                        Some(v) if v > 0.0 => t.push_str(&format!(
                            ", at the price of split brain in [{} of trials, {} ms on average]({})",
                            shown(c.results, r, Stat::SplitRate),
                            shown(c.results, r, Stat::SplitMsMean),
                            anchor(&c.row(r))
                        )),
                        Some(_) => t.push_str(", without split brain"),
                        None => {}
                    }
                    // Its worst partition elsewhere: a protocol spared by this partition may
                    // not be spared by another.
                    let worst = partition_scenarios
                        .iter()
                        .filter(|sc| *sc != sbs && exercises(c, &r.key.protocol, sc))
                        .filter_map(|sc| {
                            let key = CellKey {
                                scenario: sc.clone(),
                                ..r.key.clone()
                            };
                            let w = c.results.cell(&key).filter(|w| w.ran())?;
                            Some((w.get(Stat::UnavailableMean)?, w))
                        })
                        .max_by(|a, b| a.0.total_cmp(&b.0));
                    if let Some((v, w)) = worst {
                        if v > 2.0 * g.value.max(1.0) {
                            t.push_str(&format!(
                                "; its worst partition scenario, `{}`, left it without a quorum leader (`unavailable_ms`) for [{} ms on average]({})",
                                w.key.scenario,
                                shown(c.results, w, Stat::UnavailableMean),
                                anchor(&c.row(w))
                            ));
                        }
                    }
                    t
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let mut s = format!(
            "**Availability through a partition matters more than a single leader**: in `{sbs}` at n = {}, {} {} unavailable least: {}",
            c.focus,
            tie_names(&least),
            if least.len() == 1 { "is" } else { "are" },
            describe(&least)
        );
        if least
            .iter()
            .any(|g| !exercises(c, &g.item.key.protocol, sbs))
        {
            let reached: Vec<Ranked<&SummaryRow>> = ranked(
                c.results,
                &cells
                    .iter()
                    .filter(|(_, r)| exercises(c, &r.key.protocol, sbs))
                    .cloned()
                    .collect::<Vec<_>>(),
                Stat::UnavailableMean,
            );
            let low = Ranked::lowest(&reached);
            if !low.is_empty() {
                s.push_str(&format!(
                    ". Of the protocols the partition reaches, {} {} least: {}",
                    tie_names(&low),
                    if low.len() == 1 { "is" } else { "are" },
                    describe(&low)
                ));
            }
        }
        s.push_str(&format!(" ({}).", c.chart(5)));
        out.push(s);
    }

    // 6. Safety caveat.
    let mut bad: Vec<String> = Vec::new();
    for r in &c.results.summary {
        if r.ran()
            && r.get(Stat::SameEpochMax).is_some_and(|v| v > 0.0)
            && !bad.contains(&r.key.protocol)
        {
            bad.push(r.key.protocol.clone());
        }
    }
    if !bad.is_empty() {
        out.push(format!(
            "**Correctness depends on epochs or terms** (fencing tokens): do not rely on {} — two live leaders claimed the same epoch in this sweep (see the `same-epoch` column of the tables).",
            names(&bad)
        ));
    }
    out
}

/// The mean leader changes of series `s` summed over the recovery and flapping scenarios at
/// the focus size (the matrix's churn column, the guide's and the by-protocol table's), and
/// the half-width of its 95 % interval (the cells' intervals combined as independent);
/// `None` unless every one of those scenarios ran.
pub(crate) fn churn_total(c: &Ctx, s: &crate::charts::Series) -> Option<(f64, f64)> {
    let scenarios = leader_change_scenarios(c.results, c.opts);
    if scenarios.is_empty() {
        return None;
    }
    let (mut sum, mut var) = (0.0, 0.0);
    for sc in &scenarios {
        let key = crate::figures::key_of(s, c.focus, sc, &c.net);
        let r = c.results.cell(&key).filter(|r| r.ran())?;
        let v = r.get(Stat::LeaderChangesMean)?;
        let half = crate::quote::interval(c.results, r, Stat::LeaderChangesMean)
            .map_or(0.0, |(lo, hi)| (hi - v).max(v - lo));
        sum += v;
        var += (half / crate::data::Z95).powi(2);
    }
    Some((sum, crate::data::Z95 * var.sqrt()))
}

/// A summed leader-change count as quoted: rounded to its interval, like every other number.
pub(crate) fn churn_text(v: f64, half: f64) -> String {
    crate::data::fmt_ci(v, half)
}

/// The link target of the appendix's by-protocol table (the numbers that sum or count over
/// scenarios: churn, liveness, safety).
pub(crate) fn by_protocol_target() -> String {
    format!("APPENDIX.md#{}", crate::markdown::slug(BY_PROTOCOL))
}

/// The heading of the appendix's by-protocol table.
pub(crate) const BY_PROTOCOL: &str = "Table: by protocol";

/// True if two tie groups share a candidate: then nothing separates the extremes.
fn overlaps<T>(a: &[&Ranked<T>], b: &[&Ranked<T>]) -> bool {
    a.iter().any(|x| b.iter().any(|y| std::ptr::eq(*x, *y)))
}

/// The link target of a markdown link `[text](target)`.
fn anchor(link: &str) -> String {
    link.rsplit_once("](")
        .map(|(_, t)| t.trim_end_matches(')').to_string())
        .unwrap_or_default()
}

trait NoneOrLt {
    fn is_none_or_lt(&self, v: f64) -> bool;
}

impl<T> NoneOrLt for Option<(f64, T)> {
    fn is_none_or_lt(&self, v: f64) -> bool {
        match self {
            None => true,
            Some((m, _)) => v > *m,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_of_quadratic_is_two() {
        let pts: Vec<(f64, f64)> = [3.0, 5.0, 9.0, 17.0]
            .iter()
            .map(|&n| (n, 2.0 * n * n))
            .collect();
        assert!((loglog_slope(&pts).unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(growth_class(2.0), "≈ O(n²)");
        assert_eq!(growth_class(0.04), "≈ O(1)");
        assert_eq!(growth_class(1.0), "≈ O(n)");
    }

    #[test]
    fn counts_keep_two_significant_digits_below_one_tenth() {
        assert_eq!(crate::data::fmt_count(0.0), "0");
        assert_eq!(crate::data::fmt_count(0.035), "0.035");
        assert_eq!(crate::data::fmt_count(0.04), "0.04");
        assert_eq!(crate::data::fmt_count(0.005), "0.005");
        assert_eq!(crate::data::fmt_count(0.6), "0.6");
        assert_eq!(crate::data::fmt_count(1.0), "1");
        assert_eq!(crate::data::fmt_count(134.4), "134");
    }

    #[test]
    fn ratios_and_names() {
        assert_eq!(ratio(273.0, 10.0), "27.3×");
        assert_eq!(ratio(27.3, 10.0), "2.7×");
        assert_eq!(
            names(&["a".into(), "b".into(), "c".into()]),
            "`a`, `b` and `c`"
        );
    }
}
