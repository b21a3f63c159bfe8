//! The comparison charts of the report, built from a loaded results directory: which rows
//! feed which chart, at which cluster size, for which scenarios.
//!
//! The chart set follows the sweep, never the default scenario names: the scaling charts (1,
//! 2) are drawn only when cluster sizes vary, over the scenarios
//! [`ReportOptions::failover_scenarios`] names if the sweep ran them, else the sweep's own
//! ([`scaling_scenarios`]); every varied parameter gets charts of the key metrics against it
//! (7 on, [`Ctx::param_charts`]), one line per protocol spec, with interval bands; and a chart
//! (or panel) with no data is not drawn at all — no "no data" placeholders.

use std::path::Path;

use plotters::style::RGBColor;

use crate::charts::{
    bar_text, rgb, write_chart, Bar, BarPanel, CdfPanel, Guide, Line, LinePanel, PanelChart,
    ParamAxis, ParamPanel, Series, Swatch,
};
use crate::data::{percentile, CellKey, Results, Stat};
use crate::error::ReportError;
use crate::palette::variant_colour;
use crate::quote::shown;
use crate::ReportOptions;

/// A chart written to disk, with what the report says about it.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartInfo {
    /// 1..=6, the chart's number in the issue and the report.
    pub number: u32,
    /// File stem (`messages_vs_nodes`, or `messages_vs_nodes-wan` when there are several nets).
    pub stem: String,
    /// The network profile it shows.
    pub net: String,
    /// Title, as drawn.
    pub title: String,
    /// What it shows and how to read it (markdown).
    pub caption: String,
    /// The SVG file, relative to the report directory.
    pub svg: String,
    /// The PNG file, relative to the report directory, if written.
    pub png: Option<String>,
}

/// The detection window (`detect_timeout_ms + detect_jitter_ms`) of a protocol spec that runs
/// at a time scale of its own (`k8s-lease`: every time 100×,
/// `election_runner::params::K8S_TIME_SCALE`), from the manifest's `timing.specs`; `None`
/// for a spec at the sweep's time scale.
pub(crate) fn own_window(results: &Results, protocol: &str) -> Option<f64> {
    let t = &results.manifest.config["timing"]["specs"][protocol];
    Some(t["detect_timeout_ms"].as_f64()? + t["detect_jitter_ms"].as_f64()?)
}

/// [`series_for`] without the series at a time scale of their own ([`own_window`]): what
/// charts draw on shared axes and what the guide and findings rank. Such a series is in the
/// decision matrix (graded against its own window, not ranked) and in the tables.
pub(crate) fn compared_series(results: &Results, net: &str) -> Vec<Series> {
    series_for(results, net)
        .into_iter()
        .filter(|s| own_window(results, &s.protocol).is_none())
        .collect()
}

/// The series of one net: every protocol (legend order) and, within it, every combination of
/// varied parameters in order of first appearance.
pub(crate) fn series_for(results: &Results, net: &str) -> Vec<Series> {
    let mut out = Vec::new();
    for p in results.protocols() {
        // (what matters to the protocol, the first cell's full parameter values)
        let mut combos: Vec<(Vec<String>, Vec<String>)> = Vec::new();
        for r in &results.summary {
            if r.key.protocol != p || r.key.net != net {
                continue;
            }
            let relevant = results.relevant_params(&p, &r.key.params);
            if !combos.iter().any(|c| c.0 == relevant) {
                combos.push((relevant, r.key.params.clone()));
            }
        }
        for (k, (relevant, params)) in combos.into_iter().enumerate() {
            let pl = results.params_label(&relevant);
            let label = if pl.is_empty() {
                p.clone()
            } else {
                format!("{p} ({pl})")
            };
            out.push(Series {
                colour: variant_colour(&p, k),
                protocol: p.clone(),
                params,
                label,
            });
        }
    }
    out
}

pub(crate) fn key_of(s: &Series, nodes: u32, scenario: &str, net: &str) -> CellKey {
    CellKey {
        protocol: s.protocol.clone(),
        nodes,
        scenario: scenario.to_string(),
        net: net.to_string(),
        params: s.params.clone(),
    }
}

/// The size closest to `want` among those swept (ties go to the smaller one).
pub(crate) fn nearest_size(sizes: &[u32], want: u32) -> Option<u32> {
    sizes
        .iter()
        .copied()
        .min_by_key(|&n| ((n as i64 - want as i64).abs(), n))
}

/// Scenarios whose name marks them as recovery or flapping scenarios.
pub(crate) fn leader_change_scenarios(results: &Results, opts: &ReportOptions) -> Vec<String> {
    let all = results.scenarios();
    if !opts.leader_change_scenarios.is_empty() {
        return all
            .into_iter()
            .filter(|s| opts.leader_change_scenarios.contains(s))
            .collect();
    }
    all.into_iter()
        .filter(|s| {
            ["recover", "flap", "rejoin", "restart", "bounce"]
                .iter()
                .any(|w| s.contains(w))
        })
        .collect()
}

/// The failover scenarios present, in the order asked for.
pub(crate) fn failover_scenarios(results: &Results, opts: &ReportOptions) -> Vec<String> {
    let all = results.scenarios();
    opts.failover_scenarios
        .iter()
        .filter(|s| all.contains(s))
        .cloned()
        .collect()
}

fn legend(series: &[Series]) -> Vec<(String, RGBColor)> {
    series
        .iter()
        .map(|s| (s.label.clone(), rgb(s.colour)))
        .collect()
}

fn points(results: &Results, net: &str, scenario: &str, s: &Series, stat: Stat) -> Vec<(f64, f64)> {
    let mut pts = Vec::new();
    for n in results.sizes() {
        if let Some(r) = results.cell(&key_of(s, n, scenario, net)) {
            if let (true, Some(v)) = (r.ran(), r.get(stat)) {
                pts.push((n as f64, v));
            }
        }
    }
    pts
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// Draws every chart into `out_dir/charts/` and describes them.
pub(crate) fn render_charts(
    results: &Results,
    opts: &ReportOptions,
    out_dir: &Path,
) -> Result<Vec<ChartInfo>, ReportError> {
    let dir = out_dir.join("charts");
    std::fs::create_dir_all(&dir).map_err(|e| ReportError::io(&dir, e))?;
    let nets = results.nets();
    let mut infos = Vec::new();
    for net in &nets {
        let suffix = if nets.len() > 1 {
            format!("-{}", slug(net))
        } else {
            String::new()
        };
        let ctx = Ctx {
            results,
            opts,
            net,
            series: compared_series(results, net),
            dir: &dir,
            suffix,
            multi_net: nets.len() > 1,
        };
        // Sizes on the x axis only when some scaling scenario ran at more than one size.
        let scales = scaling_scenarios(results, opts).iter().any(|sc| {
            let mut sizes: Vec<u32> = results
                .summary
                .iter()
                .filter(|r| &r.key.scenario == sc && &r.key.net == net)
                .map(|r| r.key.nodes)
                .collect();
            sizes.sort_unstable();
            sizes.dedup();
            sizes.len() > 1
        });
        let mut size_note = String::new();
        if scales {
            let msgs = ctx.messages_vs_nodes()?;
            let fail = ctx.failover_vs_nodes()?;
            let missing: Vec<&str> = [
                (msgs.is_none(), "election messages"),
                (fail.is_none(), "failover time"),
            ]
            .iter()
            .filter(|m| m.0)
            .map(|m| m.1)
            .collect();
            if !missing.is_empty() {
                size_note = format!(
                    " No chart of {} against cluster size is drawn: the sweep ran sizes {}, but no protocol has measured values of {} at two or more of them, and a line against size needs two.",
                    missing.join(" or "),
                    results
                        .sizes()
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    scaling_scenarios(results, opts)
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(" or ")
                );
            }
            infos.extend(msgs);
            infos.extend(fail);
        }
        infos.extend(ctx.failover_cdf(&size_note)?);
        infos.extend(ctx.split_brain()?);
        infos.extend(ctx.unavailability()?);
        infos.extend(ctx.leader_changes()?);
        let mut number = 7;
        for j in 0..results.param_keys.len() {
            for c in ctx.param_charts(j)? {
                let info = ctx.write_param(number, c)?;
                number += 1;
                infos.push(info);
            }
        }
    }
    Ok(infos)
}

/// The scenarios of the scaling charts (1, 2) and the failover CDF (3): those
/// [`ReportOptions::failover_scenarios`] names that the sweep ran, else every scenario of the
/// sweep with a converged trial, in sweep order, at most three — never a scenario the sweep
/// did not run.
pub(crate) fn scaling_scenarios(results: &Results, opts: &ReportOptions) -> Vec<String> {
    let asked = failover_scenarios(results, opts);
    if !asked.is_empty() {
        return asked;
    }
    results
        .scenarios()
        .into_iter()
        .filter(|sc| {
            results
                .summary
                .iter()
                .any(|r| &r.key.scenario == sc && r.ran() && r.get(Stat::FailoverP50).is_some())
        })
        .take(3)
        .collect()
}

/// A scenario's name for a small panel's title: its initials when it has more than one word
/// (`leader-crash-lowest-detects` → `lcld`), else itself; the chart's subtitle spells them out.
fn short_scenario(sc: &str) -> String {
    let words: Vec<&str> = sc.split('-').filter(|w| !w.is_empty()).collect();
    if words.len() > 1 {
        words.iter().filter_map(|w| w.chars().next()).collect()
    } else {
        sc.to_string()
    }
}

/// Mean and a 95% interval of the mean (normal approximation, `mean ± Z95·s/√k`,
/// [`election_runner::stats::mean_ci`]) of the measured trials' values, clamped at 0 below;
/// the interval is absent below two values.
fn mean_ci(values: &[f64]) -> Option<(f64, Option<(f64, f64)>)> {
    let (mean, half) = election_runner::stats::mean_ci(values)?;
    Some((mean, half.map(|h| ((mean - h).max(0.0), mean + h))))
}

/// One chart of key metrics against a varied parameter, before it is drawn.
pub(crate) struct ParamChart {
    pub key: String,
    pub scenario: String,
    pub nodes: u32,
    pub series: Vec<Series>,
    pub panels: Vec<ParamPanel>,
    /// Protocols the parameter does not apply to (a family parameter), left out.
    pub unaffected: Vec<String>,
}

struct Ctx<'a> {
    results: &'a Results,
    opts: &'a ReportOptions,
    net: &'a str,
    series: Vec<Series>,
    dir: &'a Path,
    suffix: String,
    multi_net: bool,
}

impl Ctx<'_> {
    fn write<P: crate::charts::Panel>(
        &self,
        number: u32,
        stem: &str,
        chart: PanelChart<P>,
        caption: String,
    ) -> Result<ChartInfo, ReportError> {
        let stem = format!("{stem}{}", self.suffix);
        let files = write_chart(&chart, self.dir, &stem, self.opts.png)?;
        Ok(ChartInfo {
            number,
            stem: stem.clone(),
            net: self.net.to_string(),
            title: chart.title.clone(),
            caption,
            svg: format!("charts/{stem}.svg"),
            png: (files.len() > 1).then(|| format!("charts/{stem}.png")),
        })
    }

    /// Every series' label, in series order: printed on each bar ([`BarPanel::labels`]).
    fn labels(&self) -> Vec<String> {
        self.series.iter().map(|s| s.label.clone()).collect()
    }

    fn net_note(&self) -> String {
        if self.multi_net {
            format!(", net {}", self.net)
        } else {
            String::new()
        }
    }

    fn focus(&self) -> Option<u32> {
        nearest_size(&self.results.sizes(), self.opts.focus_nodes)
    }

    fn messages_vs_nodes(&self) -> Result<Option<ChartInfo>, ReportError> {
        let sizes: Vec<f64> = self.results.sizes().iter().map(|&n| n as f64).collect();
        let mut panels = Vec::new();
        let mut drawn = Vec::new();
        let mut one_size = Vec::new();
        for sc in &scaling_scenarios(self.results, self.opts) {
            let lines: Vec<Line> = self
                .series
                .iter()
                .enumerate()
                .map(|(k, s)| Line {
                    k,
                    colour: rgb(s.colour),
                    points: points(self.results, self.net, sc, s, Stat::MsgsMean),
                    band: Vec::new(),
                })
                .collect();
            if lines.iter().all(|l| l.points.iter().all(|p| p.1 <= 0.0)) {
                continue;
            }
            // A line against size needs two sizes: a panel where no series has them is left
            // out (the caption names it), never drawn as lone dots on a size axis.
            if !lines.iter().any(|l| spans_sizes(&l.points)) {
                one_size.push(sc.clone());
                continue;
            }
            drawn.push(sc.clone());
            let guides = guides(&lines, &sizes);
            panels.push(LinePanel {
                title: format!("scenario {sc}"),
                x_desc: "cluster size n (nodes, log scale)".into(),
                y_desc: "election messages per failover (mean, log scale)".into(),
                log_y: true,
                lines,
                guides,
                x_keys: sizes.clone(),
                empty_note: format!("no trials of {sc} in this sweep"),
                y_max: None,
            });
        }
        if panels.is_empty() {
            return Ok(None);
        }
        let shown = drawn;
        let chart = PanelChart {
            title: format!("Election messages vs cluster size{}", self.net_note()),
            subtitle: "messages sent from the fault to convergence (heartbeats excluded); dashed: O(n), O(n log n), O(n²) through the smallest size".into(),
            legend: legend(&self.series),
            swatch: Swatch::Line,
            size: (760 * shown.len().max(1) as u32 + 40, 760),
            panels,
            cols: 3,
        };
        let caption = format!(
            "Mean election messages per trial (`msgs_election_mean`: every category but heartbeats, sent from the reference instant to convergence) against cluster size, both axes logarithmic, in {}. On log-log axes a cost of O(n^k) is a straight line of slope k; the dashed guides have slopes 1 (O(n)), ~1.1–1.3 (O(n log n)) and 2 (O(n²)), anchored at the geometric mean of the protocols' values at the smallest size.{}",
            shown.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(" and "),
            left_out_note(&one_size, "scenario")
        );
        self.write(1, "messages_vs_nodes", chart, caption).map(Some)
    }

    /// Small multiples: one panel per protocol series (and scenario), each with its own median
    /// line and 5th–95th percentile band, all on the same axes, so no band hides another.
    fn failover_vs_nodes(&self) -> Result<Option<ChartInfo>, ReportError> {
        let sizes: Vec<f64> = self.results.sizes().iter().map(|&n| n as f64).collect();
        let scenarios = scaling_scenarios(self.results, self.opts);
        let mut panels = Vec::new();
        let mut shown = Vec::new();
        let mut one_size = Vec::new();
        let mut no_trial = Vec::new();
        for sc in &scenarios {
            let lines: Vec<(String, Line)> = self
                .series
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let p50 = points(self.results, self.net, sc, s, Stat::FailoverP50);
                    let p5 = points(self.results, self.net, sc, s, Stat::FailoverP5);
                    let p95 = points(self.results, self.net, sc, s, Stat::FailoverP95);
                    let band = p5
                        .iter()
                        .filter_map(|&(n, lo)| {
                            p95.iter().find(|q| q.0 == n).map(|&(_, hi)| (n, lo, hi))
                        })
                        .collect();
                    let line = Line {
                        k,
                        colour: rgb(s.colour),
                        points: p50,
                        band,
                    };
                    (s.label.clone(), line)
                })
                .collect();
            if lines.iter().all(|(_, l)| l.points.is_empty()) {
                continue;
            }
            let mut any = false;
            for (label, line) in lines {
                // A line against size needs two sizes: a series measured at fewer is left out
                // (the caption names it), never drawn as a lone dot on a size axis.
                if !spans_sizes(&line.points) {
                    if line.points.is_empty() {
                        no_trial.push(format!("{label} · {sc}"));
                    } else {
                        one_size.push(format!(
                            "{label} · {sc} (n = {})",
                            line.points
                                .iter()
                                .map(|p| format!("{}", p.0))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                    continue;
                }
                any = true;
                panels.push(LinePanel {
                    title: if scenarios.len() > 1 {
                        format!("{label} · {}", short_scenario(sc))
                    } else {
                        label
                    },
                    x_desc: "n (nodes, log scale)".into(),
                    y_desc: "failover_ms (ms)".into(),
                    log_y: false,
                    lines: vec![line],
                    guides: Vec::new(),
                    x_keys: sizes.clone(),
                    empty_note: format!("no converged trials of {sc}"),
                    y_max: None,
                });
            }
            if any {
                shown.push(sc.clone());
            }
        }
        if panels.is_empty() {
            return Ok(None);
        }
        // One y scale for every panel: small multiples compare by position.
        let top = panels
            .iter()
            .flat_map(|p| p.lines.iter())
            .flat_map(|l| {
                l.points
                    .iter()
                    .map(|p| p.1)
                    .chain(l.band.iter().map(|b| b.2))
            })
            .fold(0.0, f64::max);
        for p in &mut panels {
            p.y_max = Some(top);
        }
        let cols = 4;
        let rows = panels.len().div_ceil(cols) as u32;
        let chart = PanelChart {
            title: format!("Failover time vs cluster size{}", self.net_note()),
            subtitle: format!(
                "one panel per protocol{}, same axes; line: median failover_ms; band: 5th to 95th percentile",
                if shown.len() > 1 {
                    format!(
                        " and scenario ({})",
                        shown
                            .iter()
                            .map(|s| format!("{}: {s}", short_scenario(s)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                } else {
                    format!(", scenario {}", shown[0])
                }
            ),
            legend: Vec::new(),
            swatch: Swatch::Line,
            size: (1800, 150 + 380 * rows),
            panels,
            cols,
        };
        let caption = format!("Failover time (`failover_ms`: from the fault to the first instant with a quorum leader) against cluster size, one small panel per protocol on the same axes: the line is the median (`failover_ms_p50`), the shaded band runs from `failover_ms_p5` to `failover_ms_p95`. Only trials that had a quorum leader after the fault count; see `unavailable_ms` and the liveness table for the others.{}{}",
            left_out_note(&one_size, "protocol and scenario"),
            if no_trial.is_empty() {
                String::new()
            } else {
                format!(
                    " Without any converged trial, so not drawn: {}.",
                    no_trial
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
        self.write(2, "failover_vs_nodes", chart, caption).map(Some)
    }

    /// `size_note`: what the caption says of charts against size that were left out.
    fn failover_cdf(&self, size_note: &str) -> Result<Option<ChartInfo>, ReportError> {
        let Some(sc) = scaling_scenarios(self.results, self.opts)
            .into_iter()
            .next()
        else {
            return Ok(None);
        };
        let Some(n) = self.focus() else {
            return Ok(None);
        };
        let mut curves = Vec::new();
        for s in &self.series {
            let key = key_of(s, n, &sc, self.net);
            let trials: Vec<_> = self.results.trials_of(&key);
            let mut v: Vec<f64> = trials.iter().filter_map(|t| t.failover_ms).collect();
            v.sort_by(f64::total_cmp);
            curves.push((rgb(s.colour), v, trials.len()));
        }
        if curves.iter().all(|c| c.1.is_empty()) {
            return Ok(None);
        }
        let panel = CdfPanel {
            title: format!("scenario {sc}, n = {n}"),
            x_desc: "failover_ms (ms)".into(),
            curves,
            empty_note: format!("no converged trials of {sc} at n = {n}"),
        };
        let chart = PanelChart {
            title: format!("Distribution of failover time at n = {n}{}", self.net_note()),
            subtitle: "share of all trials that had converged within x ms (a curve ending below 100% had trials that never converged)".into(),
            legend: legend(&self.series),
            swatch: Swatch::Plain,
            size: (1200, 780),
            panels: vec![panel],
            cols: 3,
        };
        let caption = format!(
            "Empirical cumulative distribution of `failover_ms` over every trial of `{sc}` at n = {n}, from `trials.csv`. The denominator is every trial, so a curve that stops below 100% shows the share that never had a quorum leader after the fault. When the sweep varies a parameter (a Raft timeout range, say), each value is its own curve, a shade of its protocol's colour.{size_note}"
        );
        self.write(3, "failover_cdf", chart, caption).map(Some)
    }

    /// Scenarios that ran at size `n` on this net.
    fn scenarios_at(&self, n: u32, only: Option<&[String]>) -> Vec<String> {
        self.results
            .scenarios()
            .into_iter()
            .filter(|sc| match only {
                Some(o) => o.contains(sc),
                None => true,
            })
            .filter(|sc| {
                self.results.summary.iter().any(|r| {
                    r.key.nodes == n && &r.key.scenario == sc && r.key.net == self.net && r.ran()
                })
            })
            .collect()
    }

    fn bars(
        &self,
        n: u32,
        scenarios: &[String],
        f: impl Fn(&Series, &CellKey) -> Option<Bar>,
    ) -> Vec<Vec<Option<Bar>>> {
        scenarios
            .iter()
            .map(|sc| {
                self.series
                    .iter()
                    .map(|s| f(s, &key_of(s, n, sc, self.net)))
                    .collect()
            })
            .collect()
    }

    fn split_brain(&self) -> Result<Option<ChartInfo>, ReportError> {
        let Some(n) = self.focus() else {
            return Ok(None);
        };
        let r = self.results;
        // Only scenarios where some protocol split: the others are named in the subtitle.
        let (scenarios, clean): (Vec<String>, Vec<String>) =
            self.scenarios_at(n, None).into_iter().partition(|sc| {
                self.series.iter().any(|s| {
                    r.cell(&key_of(s, n, sc, self.net))
                        .filter(|row| row.ran())
                        .and_then(|row| row.get(Stat::SplitRate))
                        .is_some_and(|v| v > 0.0)
                })
            });
        if scenarios.is_empty() {
            // No protocol ever had two leaders: nothing to draw (the findings say so).
            return Ok(None);
        }
        let rate = self.bars(n, &scenarios, |_, k| {
            let row = r.cell(k).filter(|row| row.ran())?;
            let v = row.get(Stat::SplitRate)? * 100.0;
            let whisker = match (row.get(Stat::SplitCiLo), row.get(Stat::SplitCiHi)) {
                (Some(lo), Some(hi)) => Some((lo * 100.0, hi * 100.0)),
                _ => None,
            };
            Some(Bar {
                value: v,
                whisker,
                text: bar_text(v, shown(r, row, Stat::SplitRate)),
            })
        });
        let dur = self.bars(n, &scenarios, |_, k| {
            let row = r.cell(k).filter(|row| row.ran())?;
            let v = row.get(Stat::SplitMsMean)?;
            Some(Bar {
                value: v,
                whisker: None,
                text: bar_text(v, format!("{} ms", shown(r, row, Stat::SplitMsMean))),
            })
        });
        let colours: Vec<RGBColor> = self.series.iter().map(|s| rgb(s.colour)).collect();
        let p1 = BarPanel {
            title: "split-brain rate (% of trials, 95% Wilson interval)".into(),
            x_desc: "trials with two or more acting leaders at once (%)".into(),
            categories: scenarios.clone(),
            colours: colours.clone(),
            labels: self.labels(),
            bars: rate,
            x_max: Some(109.0),
            empty_note: format!("no split brain in any scenario at n = {n}"),
        };
        let p2 = BarPanel {
            title: "mean split-brain duration per trial".into(),
            x_desc: "time with two or more acting leaders (ms, mean over trials)".into(),
            categories: scenarios,
            colours,
            labels: self.labels(),
            bars: dur,
            x_max: None,
            empty_note: format!("no scenario ran at n = {n}"),
        };
        // The damage: writes taken from a deposed leader (and, in the label, those fencing
        // tokens refused), when the sweep ran the workload.
        let damage = self.bars(n, &p2.categories, |_, k| {
            let row = r.cell(k).filter(|row| row.ran())?;
            let stale = row.get(Stat::WritesStaleMean)?;
            let fenced = row.get(Stat::WritesFencedMean).unwrap_or(0.0);
            Some(Bar {
                value: stale,
                whisker: None,
                text: if fenced > 0.0 {
                    format!(
                        "{} (+{} fenced)",
                        bar_text(stale, shown(r, row, Stat::WritesStaleMean)),
                        shown(r, row, Stat::WritesFencedMean)
                    )
                } else {
                    bar_text(stale, shown(r, row, Stat::WritesStaleMean))
                },
            })
        });
        let with_workload = damage.iter().flatten().any(Option::is_some);
        let h = p1.height();
        let mut panels = vec![p1, p2];
        if with_workload {
            panels.push(BarPanel {
                title: "what it cost: stale writes per trial".into(),
                x_desc: "writes taken from a deposed leader (mean; fenced ones in brackets)".into(),
                categories: panels[1].categories.clone(),
                colours: panels[1].colours.clone(),
                labels: self.labels(),
                bars: damage,
                x_max: None,
                empty_note: format!("no workload at n = {n}"),
            });
        }
        let width = 850 * panels.len() as u32;
        let chart = PanelChart {
            title: format!("Split brain by scenario at n = {n}{}", self.net_note()),
            subtitle: if clean.is_empty() {
                "share of trials with two or more acting leaders at some instant after the fault, how long that lasted, and the writes a deposed leader got taken".into()
            } else {
                format!(
                    "share of trials with two or more acting leaders after the fault, for how long, and the writes a deposed leader got taken; never in: {}",
                    clean.join(", ")
                )
            },
            legend: legend(&self.series),
            swatch: Swatch::Bar,
            size: (width, h + 150),
            panels,
            cols: 3,
        };
        let never =
            if clean.is_empty() {
                String::new()
            } else {
                format!(
                " Scenarios in which no protocol ever had two leaders at n = {n} are left out: {}.",
                clean.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
            )
            };
        let caption = format!("Per scenario at n = {n}: first, `split_brain_rate` (share of trials in which two or more acting leaders — live, unpaused nodes in the leader role — existed at the same instant after the reference instant), with whiskers from `split_brain_ci_lo` to `split_brain_ci_hi` (95% Wilson score interval); second, `split_brain_ms_mean`, the mean total time per trial with two or more acting leaders; third (with a workload), `writes_stale_mean`, the writes per trial taken from a deposed leader, with `writes_fenced_mean` (refused by fencing tokens) in brackets. A split with no stale write did no damage. A bar of exactly zero reads `none`.{never}");
        self.write(4, "split_brain", chart, caption).map(Some)
    }

    fn unavailability(&self) -> Result<Option<ChartInfo>, ReportError> {
        let Some(n) = self.focus() else {
            return Ok(None);
        };
        let scenarios = self.scenarios_at(n, None);
        let r = self.results;
        let bars = self.bars(n, &scenarios, |_, k| {
            let row = r.cell(k).filter(|row| row.ran())?;
            let v = row.get(Stat::UnavailableMean)?;
            Some(Bar {
                value: v,
                whisker: None,
                text: bar_text(v, format!("{} ms", shown(r, row, Stat::UnavailableMean))),
            })
        });
        if bars.iter().flatten().all(Option::is_none) {
            return Ok(None);
        }
        let panel = BarPanel {
            title: String::new(),
            x_desc: "time without a quorum leader after the fault (ms, mean over trials)".into(),
            categories: scenarios,
            colours: self.series.iter().map(|s| rgb(s.colour)).collect(),
            labels: self.labels(),
            bars,
            x_max: None,
            empty_note: format!("no scenario ran at n = {n}"),
        };
        let h = panel.height();
        let chart = PanelChart {
            title: format!("Unavailability by scenario at n = {n}{}", self.net_note()),
            subtitle: "mean time per trial without a quorum leader".into(),
            legend: legend(&self.series),
            swatch: Swatch::Bar,
            size: (1300, h + 120),
            panels: vec![panel],
            cols: 3,
        };
        let caption = format!("Per scenario at n = {n}: `unavailable_ms_mean`, the mean total time per trial, from the reference instant to the end of the trial, without a quorum leader (a leader that a majority of the members name over links up both ways; for the lease, the holder the store names while it reaches the store). A trial that never converges is unavailable until its horizon. A bar of exactly zero reads `none`.");
        self.write(5, "unavailability", chart, caption).map(Some)
    }

    fn leader_changes(&self) -> Result<Option<ChartInfo>, ReportError> {
        let Some(n) = self.focus() else {
            return Ok(None);
        };
        let wanted = leader_change_scenarios(self.results, self.opts);
        let scenarios = self.scenarios_at(n, Some(&wanted));
        let r = self.results;
        let bars = self.bars(n, &scenarios, |_, k| {
            let row = r.cell(k).filter(|row| row.ran())?;
            let v = row.get(Stat::LeaderChangesMean)?;
            let mut per: Vec<f64> = r
                .trials_of(k)
                .iter()
                .map(|t| t.leader_changes as f64)
                .collect();
            per.sort_by(f64::total_cmp);
            let whisker =
                (!per.is_empty()).then(|| (percentile(&per, 0.05), percentile(&per, 0.95)));
            Some(Bar {
                value: v,
                whisker,
                text: bar_text(v, shown(r, row, Stat::LeaderChangesMean)),
            })
        });
        if bars.iter().flatten().all(Option::is_none) {
            // No recovery or flapping scenario ran: nothing to draw.
            return Ok(None);
        }
        let panel = BarPanel {
            title: String::new(),
            x_desc: "entries into the leader role after the fault, per trial (mean; whiskers 5th–95th percentile)".into(),
            categories: scenarios.clone(),
            colours: self.series.iter().map(|s| rgb(s.colour)).collect(),
            labels: self.labels(),
            bars,
            x_max: None,
            empty_note: if wanted.is_empty() {
                "this sweep has no recovery or flapping scenario".into()
            } else {
                format!("no recovery or flapping scenario ran at n = {n}")
            },
        };
        let h = panel.height();
        let chart = PanelChart {
            title: format!("Leader changes in recovery and flapping scenarios at n = {n}{}", self.net_note()),
            subtitle: "how often leadership moved: each entry of any node into the leader role after the fault".into(),
            legend: legend(&self.series),
            swatch: Swatch::Bar,
            size: (1300, h + 120),
            panels: vec![panel],
            cols: 3,
        };
        let caption = format!("Per recovery or flapping scenario at n = {n}: bars are `leader_changes_mean` (entries into the leader role at or after the reference instant, per trial); whiskers run from the 5th to the 95th percentile of `leader_changes` over the cell's trials in `trials.csv`. A protocol that hands leadership back to a recovered higher-id node (the bully's rejoin) pays one extra change per recovery; a flapping node can make it pay many. A bar of exactly zero reads `none`.");
        self.write(6, "leader_changes", chart, caption).map(Some)
    }
}

/// The charts of key metrics against a varied parameter (see [`Ctx::param_charts`]).
impl Ctx<'_> {
    /// Charts of the key metrics against varied parameter `j`: one per scenario and cluster
    /// size (every size when at most three were swept, else the focus size and the largest),
    /// one line per protocol spec (and per combination of the other varied parameters). A
    /// sweep of more than four scenarios draws only its scaling scenarios
    /// ([`scaling_scenarios`]). Panels: failover time (median, band 5th–95th percentile),
    /// election messages, unavailability (means, band: 95% interval of the mean), and — only
    /// where some cell has any — split-brain rate (band: Wilson 95%), stale writes and
    /// non-converged trials. A panel with no point, and a chart with no panel, is not drawn.
    pub(crate) fn param_charts(&self, j: usize) -> Result<Vec<ParamChart>, ReportError> {
        let r = self.results;
        let key = r.param_keys[j].clone();
        let rows: Vec<_> = r
            .summary
            .iter()
            .filter(|row| row.key.net == self.net && !row.key.params[j].is_empty())
            .collect();
        let values = first_appearance(rows.iter().map(|row| &row.key.params[j]));
        if values.len() < 2 {
            return Ok(Vec::new());
        }
        let axis = ParamAxis::new(values.clone());
        let affected: Vec<String> = r
            .protocols()
            .into_iter()
            .filter(|p| rows.iter().any(|row| &row.key.protocol == p))
            .collect();
        let unaffected: Vec<String> = r
            .protocols()
            .into_iter()
            .filter(|p| !affected.contains(p))
            .collect();
        // Series: a protocol and the values of the other varied parameters (this one blank).
        let mut series: Vec<Series> = Vec::new();
        for p in &affected {
            let mut combos: Vec<Vec<String>> = Vec::new();
            for row in rows.iter().filter(|row| &row.key.protocol == p) {
                let mut other = r.relevant_params(p, &row.key.params);
                other[j] = String::new();
                if !combos.contains(&other) {
                    combos.push(other);
                }
            }
            for (k, other) in combos.into_iter().enumerate() {
                let pl = r.params_label(&other);
                series.push(Series {
                    colour: variant_colour(p, k),
                    protocol: p.clone(),
                    label: if pl.is_empty() {
                        p.clone()
                    } else {
                        format!("{p} ({pl})")
                    },
                    params: other,
                });
            }
        }
        let mut sizes: Vec<u32> = r
            .sizes()
            .into_iter()
            .filter(|&n| rows.iter().any(|row| row.key.nodes == n && row.ran()))
            .collect();
        if sizes.len() > 3 {
            let focus = nearest_size(&sizes, self.opts.focus_nodes);
            let largest = sizes.last().copied();
            sizes = focus.into_iter().chain(largest).collect();
            sizes.dedup();
        }
        let mut scenarios: Vec<String> = first_appearance(rows.iter().map(|row| &row.key.scenario));
        if scenarios.len() > 4 {
            let scaling = scaling_scenarios(r, self.opts);
            scenarios.retain(|sc| scaling.contains(sc));
        }
        // The trials of the cells drawn, by cell, in one pass (a sweep can hold millions).
        let mut by_key: std::collections::HashMap<&CellKey, Vec<&crate::data::TrialRow>> =
            std::collections::HashMap::new();
        for t in &r.trials {
            if t.key.net == self.net
                && !t.key.params[j].is_empty()
                && scenarios.contains(&t.key.scenario)
                && sizes.contains(&t.key.nodes)
            {
                by_key.entry(&t.key).or_default().push(t);
            }
        }
        let mut out = Vec::new();
        for sc in &scenarios {
            for &n in &sizes {
                // The rows of a series, by parameter value.
                let cells = |s: &Series| -> Vec<(f64, &crate::data::SummaryRow)> {
                    rows.iter()
                        .filter(|row| {
                            row.ran()
                                && row.key.protocol == s.protocol
                                && row.key.nodes == n
                                && &row.key.scenario == sc
                                && {
                                    let mut other = r.relevant_params(&s.protocol, &row.key.params);
                                    other[j] = String::new();
                                    other == s.params
                                }
                        })
                        .filter_map(|row| Some((axis.x(&row.key.params[j])?, *row)))
                        .collect()
                };
                let measured = |row: &crate::data::SummaryRow| -> Vec<&crate::data::TrialRow> {
                    by_key
                        .get(&row.key)
                        .into_iter()
                        .flatten()
                        .copied()
                        .filter(|t| t.measured())
                        .collect()
                };
                type Pick<'a> =
                    &'a dyn Fn(&crate::data::SummaryRow) -> Option<(f64, Option<(f64, f64)>)>;
                let line = |k: usize, s: &Series, pick: Pick| -> Line {
                    let mut points = Vec::new();
                    let mut band = Vec::new();
                    for (x, row) in cells(s) {
                        if let Some((y, b)) = pick(row) {
                            points.push((x, y));
                            if let Some((lo, hi)) = b {
                                band.push((x, lo, hi));
                            }
                        }
                    }
                    Line {
                        k,
                        colour: rgb(s.colour),
                        points,
                        band,
                    }
                };
                let panel =
                    |title: &str, y_desc: &str, y_max: Option<f64>, pick: Pick| ParamPanel {
                        title: title.to_string(),
                        x_desc: key.clone(),
                        y_desc: y_desc.to_string(),
                        axis: axis.clone(),
                        lines: series
                            .iter()
                            .enumerate()
                            .map(|(k, s)| line(k, s, pick))
                            .collect(),
                        y_max,
                    };
                let mean_of =
                    |row: &crate::data::SummaryRow,
                     f: fn(&crate::data::TrialRow) -> Option<f64>| {
                        let v: Vec<f64> = measured(row).into_iter().filter_map(f).collect();
                        mean_ci(&v)
                    };
                let failover = |row: &crate::data::SummaryRow| {
                    let y = row.get(Stat::FailoverP50)?;
                    let band = row.get(Stat::FailoverP5).zip(row.get(Stat::FailoverP95));
                    Some((y, band))
                };
                let msgs =
                    |row: &crate::data::SummaryRow| mean_of(row, |t| Some(t.msgs_election as f64));
                let unavailable =
                    |row: &crate::data::SummaryRow| mean_of(row, |t| Some(t.unavailable_ms));
                let split = |row: &crate::data::SummaryRow| {
                    let y = row.get(Stat::SplitRate)? * 100.0;
                    let band = row
                        .get(Stat::SplitCiLo)
                        .zip(row.get(Stat::SplitCiHi))
                        .map(|(lo, hi)| (lo * 100.0, hi * 100.0));
                    Some((y, band))
                };
                let stale = |row: &crate::data::SummaryRow| {
                    mean_of(row, |t| t.writes_stale.map(|w| w as f64))
                };
                let unconverged = |row: &crate::data::SummaryRow| {
                    Some(((1.0 - row.get(Stat::ConvergedRate)?) * 100.0, None))
                };
                let mut panels = vec![
                    panel(
                        "failover time (median; band 5th–95th percentile)",
                        "failover_ms (ms)",
                        None,
                        &failover,
                    ),
                    panel(
                        "election messages (mean; band 95% CI)",
                        "msgs_election per trial",
                        None,
                        &msgs,
                    ),
                    panel(
                        "unavailability (mean; band 95% CI)",
                        "unavailable_ms per trial (ms)",
                        None,
                        &unavailable,
                    ),
                ];
                let any =
                    |p: &ParamPanel| p.lines.iter().any(|l| l.points.iter().any(|pt| pt.1 > 0.0));
                for extra in [
                    panel(
                        "split-brain rate (band: Wilson 95%)",
                        "split_brain_rate (% of trials)",
                        Some(100.0),
                        &split,
                    ),
                    panel(
                        "stale writes (mean; band 95% CI)",
                        "writes_stale per trial",
                        None,
                        &stale,
                    ),
                    panel(
                        "trials that never converged",
                        "1 − converged_rate (% of trials)",
                        Some(100.0),
                        &unconverged,
                    ),
                ] {
                    if any(&extra) {
                        panels.push(extra);
                    }
                }
                panels.retain(ParamPanel::has_data);
                if panels.is_empty() {
                    continue;
                }
                out.push(ParamChart {
                    key: key.clone(),
                    scenario: sc.clone(),
                    nodes: n,
                    series: series.clone(),
                    panels,
                    unaffected: unaffected.clone(),
                });
            }
        }
        Ok(out)
    }

    /// Draws one [`ParamChart`] as chart `number`.
    fn write_param(&self, number: u32, c: ParamChart) -> Result<ChartInfo, ReportError> {
        let names: Vec<String> = c.panels.iter().map(|p| p.title.clone()).collect();
        let cols = c.panels.len().clamp(1, 3) as u32;
        let rows = c.panels.len().div_ceil(3).max(1) as u32;
        let stem = format!("vs-{}-{}-n{}", slug(&c.key), slug(&c.scenario), c.nodes);
        let unaffected = if c.unaffected.is_empty() {
            String::new()
        } else {
            format!(
                " {} does not apply to {}, which ran once and {} not drawn.",
                c.key,
                c.unaffected
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if c.unaffected.len() == 1 { "is" } else { "are" }
            )
        };
        let chart = PanelChart {
            title: format!(
                "{} vs {}, scenario {}, n = {}{}",
                "Key metrics",
                c.key,
                c.scenario,
                c.nodes,
                self.net_note()
            ),
            subtitle: format!(
                "x: the values of {} the sweep ran; one line per protocol spec",
                c.key
            ),
            legend: legend(&c.series),
            swatch: Swatch::Line,
            size: (700 * cols + 40, 640 * rows + 150),
            panels: c.panels,
            cols: 3,
        };
        let caption = format!(
            "Scenario `{}` at n = {}, against `{}` (the values the sweep varied, in its order; one line per protocol spec, a shade of its colour per combination of the other varied parameters). Panels: {}. Failover is `failover_ms_p50` with a band from `failover_ms_p5` to `failover_ms_p95`; means are over the trials kept in the statistics (`trials.csv`, faults applied, budget not exceeded) with a band of ±1.96 standard errors (z = 1.959964); the split-brain band is `split_brain_ci_lo` to `split_brain_ci_hi`. Split brain, stale writes and non-converged trials are drawn only when some cell has any.{unaffected}",
            c.scenario,
            c.nodes,
            c.key,
            names.join("; ")
        );
        let stem = format!("{stem}{}", self.suffix);
        let files = write_chart(&chart, self.dir, &stem, self.opts.png)?;
        Ok(ChartInfo {
            number,
            stem: stem.clone(),
            net: self.net.to_string(),
            title: chart.title.clone(),
            caption,
            svg: format!("charts/{stem}.svg"),
            png: (files.len() > 1).then(|| format!("charts/{stem}.png")),
        })
    }
}

fn first_appearance<'a>(it: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in it {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}

/// Whether a line's points cover two or more cluster sizes: only then is it drawn against
/// size.
pub(crate) fn spans_sizes(points: &[(f64, f64)]) -> bool {
    points.iter().any(|p| p.0 != points[0].0)
}

/// The caption's sentence naming the panels left out of a chart against cluster size because
/// they were measured at one size only (empty when none was).
fn left_out_note(left: &[String], what: &str) -> String {
    if left.is_empty() {
        return String::new();
    }
    format!(
        " Left out, each {what} measured at one cluster size only (a line against size needs two; its values are in the tables): {}.",
        left.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
    )
}

/// O(n), O(n log n) and O(n²) through the geometric mean of the lines' values at the smallest
/// size that has values.
fn guides(lines: &[Line], sizes: &[f64]) -> Vec<Guide> {
    let Some(&n0) = sizes.iter().find(|&&n| {
        lines
            .iter()
            .any(|l| l.points.iter().any(|p| p.0 == n && p.1 > 0.0))
    }) else {
        return Vec::new();
    };
    let vals: Vec<f64> = lines
        .iter()
        .flat_map(|l| {
            l.points
                .iter()
                .filter(|p| p.0 == n0 && p.1 > 0.0)
                .map(|p| p.1)
        })
        .collect();
    let anchor = (vals.iter().map(|v| v.ln()).sum::<f64>() / vals.len() as f64).exp();
    let n1 = sizes.iter().cloned().fold(n0, f64::max);
    let steps = 48;
    let xs: Vec<f64> = (0..=steps)
        .map(|i| n0 * (n1 / n0).powf(i as f64 / steps as f64))
        .collect();
    type Growth = (&'static str, fn(f64) -> f64);
    let f: [Growth; 3] = [
        ("O(n)", |n| n),
        ("O(n log n)", |n| n * n.log2()),
        ("O(n²)", |n| n * n),
    ];
    f.iter()
        .map(|(label, g)| Guide {
            label: label.to_string(),
            points: xs.iter().map(|&x| (x, anchor * g(x) / g(n0))).collect(),
        })
        .collect()
}
