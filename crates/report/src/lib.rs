//! `election-report`: the comparison charts, the message-sequence traces and the design-review
//! report of an election-bench sweep, all generated from the results the sweep wrote, so the
//! report is always true to the code that produced them.
//!
//! # Entry points
//!
//! * [`render_report`] reads `results/<name>/{trials.csv, summary.csv, manifest.json}` (the
//!   schema in `results/README.md`) and writes `REPORT.md`, `charts/*.svg` and
//!   `charts/*.png`, and `traces/*.svg` into an output directory (with `--baseline`, it opens
//!   with the [`compare()`] of a baseline and the results: [`ReportOptions::baseline`]). Traces
//!   of the worst and the failing trials come with a timeline of the same run
//!   (`traces/*-timeline.{svg,png}`: leaders per epoch, the quorum leader, writes, fault
//!   windows; see [`trace::timeline`]). Traces need a trial re-run
//!   with tracing on; the caller supplies that as a [`TrialTracer`]: [`RunnerTracer`] runs it
//!   through `election-runner` (from the sweep's spec, or from its `manifest.json`), and any
//!   `Fn(&TrialId) -> Result<TracedTrial, E>` is one too.
//! * [`compare()`] and [`write_comparison`] compare two results directories cell by cell,
//!   with a seeded bootstrap interval on each difference (see [`compare`](mod@compare)).
//! * [`calibration::write_calibration_page`] renders the sim-vs-live calibration page from
//!   what `election-live` measured ([`calibration::CalibrationPage`]).
//! * [`doc`] is the pages' document model: a [`doc::Document`] of headings, paragraphs,
//!   typed tables, figures, lists, findings with a [`doc::Severity`] and notes, rendered to
//!   Markdown and to HTML by two small renderers (escaping in one place).
//! * [`render_trace`] draws one trial's event log as an SVG message-sequence chart, a Mermaid
//!   `sequenceDiagram` or raw JSON lines (see [`trace`]).
//!
//! # Charts
//!
//! 1. Election messages vs cluster size, log-log, with O(n), O(n log n) and O(n²) guides, for
//!    the leader-crash scenarios. 2. Failover time vs cluster size as small multiples, a panel
//!    per protocol and scenario on one y scale (median, p5–p95 band); charts 1 and 2 only when
//!    a scaling scenario ran at more than one size.
//!    3. Cumulative distribution of failover time at one size. 4. Split-brain rate (Wilson
//!    95% whiskers) and mean duration per scenario. 5. Unavailability per scenario. 6. Leader
//!    changes in recovery and flapping scenarios. Every chart is SVG (text kept as text) and
//!    PNG, rasterised with DejaVu Sans compiled into the binary (the `dejavu` crate through
//!    plotters' `ab_glyph` backend), so nothing depends on the machine's fonts. Colours are
//!    fixed per protocol spec ([`palette`]).
//!
//! # Determinism
//!
//! Identical results give byte-identical output: no timestamps, no absolute paths, no
//! hash-map iteration anywhere an order reaches the output.
pub mod calibration;
pub mod charts;
mod cluster;
mod companions;
pub mod compare;
pub mod data;
pub mod doc;
mod error;
mod figures;
mod findings;
mod html;
mod liveness;
mod markdown;
mod matrix;
pub mod palette;
mod quote;
pub mod reality;
pub mod reference;
mod runner;
pub mod trace;
mod tune;

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use election_sim::{Metrics, TraceEvent};

pub use compare::{compare, write_comparison, CompareOptions, Comparison};
pub use data::Results;
pub use error::ReportError;
pub use figures::ChartInfo;
pub use liveness::{render_explore, ExploreReport};
pub use runner::RunnerTracer;
pub use trace::{
    jsonl_event, jsonl_meta, render_trace, text_event, text_fault, TraceFormat, TraceMeta,
    TraceWindow,
};
pub use tune::render_tune;

use data::{fmt_num, CellKey, TrialRow};
use election_runner::replay::Flags;
use figures::{nearest_size, series_for};
use markdown::TraceDoc;
use trace::timeline::{Timeline, TimelineChart};

/// What the report looks at. [`ReportOptions::default`] matches the issue: n = 5 for the
/// per-scenario charts and the traces, the two leader-crash scenarios for the scaling charts,
/// `partition-leader-minority` for the split-brain trace.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportOptions {
    /// Cluster size of the per-scenario charts (3–6), the failover CDF and the traces; the
    /// nearest swept size is used if this one was not swept.
    pub focus_nodes: u32,
    /// Also write PNG copies of the charts.
    pub png: bool,
    /// Scenarios of the scaling charts (1 and 2); the first is also the CDF's (3) and the
    /// representative traces'. The second is read as the worst case for message counts.
    pub failover_scenarios: Vec<String>,
    /// The partition scenario whose worst split-brain trial is traced and which the findings
    /// discuss.
    pub split_brain_scenario: String,
    /// Scenarios of the leader-changes chart (6). Empty: every scenario whose name contains
    /// `recover`, `flap`, `rejoin`, `restart` or `bounce`.
    pub leader_change_scenarios: Vec<String>,
    /// Trials larger than this are not traced (a sequence chart stops being legible).
    pub max_trace_nodes: u32,
    /// A results directory to compare against (`report --baseline DIR`): the report then
    /// opens with what changed from it in every common cell, each change with its bootstrap
    /// interval (the [`compare()`] of the baseline and the results, default options), and
    /// draws the changes as `charts/baseline_changes`. `None`: no comparison, and the report
    /// is exactly what it is without one.
    pub baseline: Option<PathBuf>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            focus_nodes: 5,
            png: true,
            failover_scenarios: vec![
                "leader-crash".to_string(),
                "leader-crash-lowest-detects".to_string(),
            ],
            split_brain_scenario: "partition-leader-minority".to_string(),
            leader_change_scenarios: Vec::new(),
            max_trace_nodes: 12,
            baseline: None,
        }
    }
}

/// One trial of a sweep, as the runner needs it to run the trial again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrialId {
    /// Protocol spec (`raft+pre_vote`).
    pub protocol: String,
    /// Cluster size.
    pub nodes: u32,
    /// Scenario name.
    pub scenario: String,
    /// Network profile name.
    pub net: String,
    /// The varied parameters of the cell, `(key, value)` as in the CSV header and cells
    /// (values empty where a parameter does not apply).
    pub params: Vec<(String, String)>,
    /// The trial seed.
    pub seed: u64,
}

impl fmt::Display for TrialId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} n={} {} net={} seed={}",
            self.protocol, self.nodes, self.scenario, self.net, self.seed
        )?;
        for (k, v) in &self.params {
            if !v.is_empty() {
                write!(f, " {k}={v}")?;
            }
        }
        Ok(())
    }
}

/// A trial re-run with tracing on.
#[derive(Clone, Debug)]
pub struct TracedTrial {
    /// The full event log.
    pub events: Vec<TraceEvent>,
    /// The trial's metrics (checked against `trials.csv`).
    pub metrics: Metrics,
}

/// Re-runs one trial of the sweep with tracing on. Implemented for every
/// `Fn(&TrialId) -> Result<TracedTrial, E>` with a displayable `E`.
pub trait TrialTracer {
    /// Run `trial` again and return its event log and metrics.
    fn trace_trial(&self, trial: &TrialId) -> Result<TracedTrial, String>;
}

impl<F, E> TrialTracer for F
where
    F: Fn(&TrialId) -> Result<TracedTrial, E>,
    E: fmt::Display,
{
    fn trace_trial(&self, trial: &TrialId) -> Result<TracedTrial, String> {
        self(trial).map_err(|e| e.to_string())
    }
}

/// What [`render_report`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportOutput {
    /// `out_dir/REPORT.md`.
    pub report: PathBuf,
    /// The charts, in report order.
    pub charts: Vec<ChartInfo>,
    /// Every chart and trace file written.
    pub files: Vec<PathBuf>,
    /// Things the caller should tell the user (traces that could not be made, re-runs that
    /// disagree with `trials.csv`). They are in the report too.
    pub warnings: Vec<String>,
}

/// Loads and checks a results directory.
pub fn load_results(results_dir: &Path) -> Result<Results, ReportError> {
    Results::load(results_dir)
}

/// Reads `results_dir`, writes `out_dir/REPORT.md`, `out_dir/charts/` and (when `tracer` is
/// given) `out_dir/traces/`. See the crate docs.
pub fn render_report(
    results_dir: &Path,
    out_dir: &Path,
    opts: &ReportOptions,
    tracer: Option<&dyn TrialTracer>,
) -> Result<ReportOutput, ReportError> {
    let results = Results::load(results_dir)?;
    fs::create_dir_all(out_dir).map_err(|e| ReportError::io(out_dir, e))?;
    // Charts and traces of an earlier report (a trace of another seed, say) would otherwise
    // linger next to the new ones.
    for sub in ["charts", "traces"] {
        remove_generated(&out_dir.join(sub))?;
    }
    let charts = figures::render_charts(&results, opts, out_dir)?;
    let mut files: Vec<PathBuf> = Vec::new();
    for c in &charts {
        files.push(out_dir.join(&c.svg));
        if let Some(p) = &c.png {
            files.push(out_dir.join(p));
        }
    }
    let baseline = match &opts.baseline {
        Some(dir) => {
            let copts = CompareOptions {
                png: opts.png,
                ..CompareOptions::default()
            };
            let cmp = compare(dir, results_dir, &copts)?;
            let stem = "baseline_changes";
            let chart = compare::ChangeChart::new(&cmp);
            files.extend(charts::write_chart(
                &chart,
                &out_dir.join("charts"),
                stem,
                opts.png,
            )?);
            Some((cmp, format!("charts/{stem}.svg")))
        }
        None => None,
    };
    let mut warnings = Vec::new();
    let (docs, note) = match tracer {
        Some(t) => traces(&results, opts, out_dir, t, &mut files, &mut warnings)?,
        None => (
            Vec::new(),
            "_Traces were not generated: no trial runner was supplied to the report generator._"
                .to_string(),
        ),
    };
    // The reference page beside this report (`reports/reference/`), if there is one: the
    // guide says how close our Raft is to the libraries.
    let closeness = out_dir
        .parent()
        .map(|p| {
            p.join(election_runner::reference::NAME)
                .join("closeness.csv")
        })
        .and_then(|p| fs::read_to_string(p).ok())
        .map(|s| reference::Closeness::parse(&s))
        .unwrap_or_default();
    // The gray sweep and the exploration beside this report, if they are there.
    let companions = companions::guide_lines(&results, results_dir, out_dir);
    let gray = companions::gray_beside(results_dir, out_dir);
    let md = markdown::write_report(
        &results,
        opts,
        &charts,
        &docs,
        &note,
        baseline.as_ref().map(|(c, f)| (c, f.as_str())),
        markdown::Beside {
            closeness: &closeness,
            companions: &companions,
            gray: &gray,
        },
    );
    let report = out_dir.join("REPORT.md");
    fs::write(&report, &md.report).map_err(|e| ReportError::io(&report, e))?;
    let appendix = out_dir.join("APPENDIX.md");
    fs::write(&appendix, &md.appendix).map_err(|e| ReportError::io(&appendix, e))?;
    files.push(appendix);
    let page = html::write_page(
        &format!("Leader-election design review: {}", results.manifest.name),
        &md.report,
        &md.appendix,
        out_dir,
    )?;
    let index = out_dir.join("index.html");
    fs::write(&index, page).map_err(|e| ReportError::io(&index, e))?;
    files.push(index);
    Ok(ReportOutput {
        report,
        charts,
        files,
        warnings,
    })
}

/// Removes the `.svg` and `.png` files of `dir`, if it exists; nothing else.
fn remove_generated(dir: &Path) -> Result<(), ReportError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(ReportError::io(dir, e)),
    };
    for entry in entries {
        let path = entry.map_err(|e| ReportError::io(dir, e))?.path();
        let generated = path.extension().is_some_and(|x| x == "svg" || x == "png");
        if generated && path.is_file() {
            fs::remove_file(&path).map_err(|e| ReportError::io(&path, e))?;
        }
    }
    Ok(())
}

/// The file name of a trial's trace under `traces/`.
pub(crate) fn trace_file_name(t: &TrialRow) -> String {
    format!(
        "{}-{}-n{}-seed{}.svg",
        file_slug(&t.key.scenario),
        file_slug(&t.key.protocol),
        t.key.nodes,
        t.seed
    )
}

/// The trial the report traces as the example of a safety violation (two live leaders with
/// the same epoch): the first such trial of the first cell (in the sweep's order) that has
/// one, among the sizes small enough to trace.
pub(crate) fn safety_trial(results: &Results) -> Option<&TrialRow> {
    let max = ReportOptions::default().max_trace_nodes;
    results
        .trials
        .iter()
        .find(|t| t.same_epoch_leaders > 0 && t.key.nodes <= max)
}

/// The trial the report traces for a cell whose faults did not all apply: the first such
/// trial of the sweep, among the sizes small enough to trace (one trace shows what "no target"
/// looked like; the finding of every such cell lists its own seeds and replay command).
pub(crate) fn skipped_fault_trial(results: &Results) -> Option<&TrialRow> {
    let max = ReportOptions::default().max_trace_nodes;
    results
        .trials
        .iter()
        .find(|t| t.faults_skipped > 0 && !t.budget_exceeded && t.key.nodes <= max)
}

fn trial_id(results: &Results, t: &TrialRow) -> TrialId {
    TrialId {
        protocol: t.key.protocol.clone(),
        nodes: t.key.nodes,
        scenario: t.key.scenario.clone(),
        net: t.key.net.clone(),
        params: results
            .param_keys
            .iter()
            .cloned()
            .zip(t.key.params.iter().cloned())
            .collect(),
        seed: t.seed,
    }
}

fn file_slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// The trial of a cell whose `failover_ms` is closest to the cell's median (lowest seed on
/// ties); the first trial if none had a quorum leader after the fault.
fn representative<'a>(trials: &[&'a TrialRow]) -> Option<&'a TrialRow> {
    let mut e: Vec<f64> = trials.iter().filter_map(|t| t.failover_ms).collect();
    if e.is_empty() {
        return trials.first().copied();
    }
    e.sort_by(f64::total_cmp);
    let med = data::percentile(&e, 0.5);
    trials
        .iter()
        .filter(|t| t.failover_ms.is_some())
        .min_by(|a, b| {
            let da = (a.failover_ms.unwrap() - med).abs();
            let db = (b.failover_ms.unwrap() - med).abs();
            da.total_cmp(&db).then(a.seed.cmp(&b.seed))
        })
        .copied()
}

/// Differences between a re-run's metrics and the trial's row, in words (empty if none).
fn disagreement(t: &TrialRow, m: &Metrics) -> Vec<String> {
    let mut d = Vec::new();
    let r3 = |v: f64| fmt_num(v);
    if t.converged != m.converged {
        d.push(format!("converged {} vs {}", t.converged, m.converged));
    }
    if t.elect_ms.map(r3) != m.elect_ms.map(r3) {
        d.push(format!(
            "elect_ms {} vs {}",
            t.elect_ms.map(r3).unwrap_or_default(),
            m.elect_ms.map(r3).unwrap_or_default()
        ));
    }
    if t.msgs_election != m.window.sent_election() {
        d.push(format!(
            "msgs_election {} vs {}",
            t.msgs_election,
            m.window.sent_election()
        ));
    }
    if r3(t.split_brain_ms) != r3(m.split_brain_ms) {
        d.push(format!(
            "split_brain_ms {} vs {}",
            r3(t.split_brain_ms),
            r3(m.split_brain_ms)
        ));
    }
    d
}

fn traces(
    results: &Results,
    opts: &ReportOptions,
    out_dir: &Path,
    tracer: &dyn TrialTracer,
    files: &mut Vec<PathBuf>,
    warnings: &mut Vec<String>,
) -> Result<(Vec<TraceDoc>, String), ReportError> {
    let dir = out_dir.join("traces");
    fs::create_dir_all(&dir).map_err(|e| ReportError::io(&dir, e))?;
    let net = results.nets().first().cloned().unwrap_or_default();
    let focus = nearest_size(&results.sizes(), opts.focus_nodes).unwrap_or(opts.focus_nodes);
    // (heading, caption, trial)
    let mut wanted: Vec<(String, String, &TrialRow)> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    if focus > opts.max_trace_nodes {
        notes.push(format!(
            "No trace at n = {focus}: more than {} lifelines are not legible as a sequence chart.",
            opts.max_trace_nodes
        ));
    } else if let Some(sc) = opts.failover_scenarios.first() {
        for s in series_for(results, &net) {
            let key = CellKey {
                protocol: s.protocol.clone(),
                nodes: focus,
                scenario: sc.clone(),
                net: net.clone(),
                params: s.params.clone(),
            };
            let trials: Vec<&TrialRow> = results.trials_of(&key);
            let Some(t) = representative(&trials) else {
                continue;
            };
            let mut e: Vec<f64> = trials.iter().filter_map(|t| t.failover_ms).collect();
            e.sort_by(f64::total_cmp);
            let why = if e.is_empty() {
                "no trial of this cell had a quorum leader after the fault; this is the first seed"
                    .to_string()
            } else {
                format!(
                    "the trial whose `failover_ms` ({} ms) is closest to the cell's median ({} ms)",
                    data::fmt_sig(t.failover_ms.unwrap_or(0.0)),
                    data::fmt_sig(data::percentile(&e, 0.5))
                )
            };
            wanted.push((
                format!("`{}` — `{sc}`, n = {focus}", s.label),
                format!(
                    "Seed {}: {why}. {} election messages.",
                    t.seed, t.msgs_election
                ),
                t,
            ));
        }
    }
    // Every trace after these is of a worst or failing trial, drawn over time as well.
    let representatives = wanted.len();
    // The worst split-brain trial of the partition scenario, among legible sizes.
    let sbs = &opts.split_brain_scenario;
    let protocols = results.protocols();
    let rank = |p: &str| protocols.iter().position(|x| x == p).unwrap_or(usize::MAX);
    let worst = results
        .trials
        .iter()
        .filter(|t| &t.key.scenario == sbs && t.key.nodes <= opts.max_trace_nodes && t.split_brain)
        .max_by(|a, b| {
            a.split_brain_ms
                .total_cmp(&b.split_brain_ms)
                .then(a.max_leaders.cmp(&b.max_leaders))
                // On ties prefer the smaller cluster, the earlier protocol, the lower seed.
                .then(b.key.nodes.cmp(&a.key.nodes))
                .then(rank(&b.key.protocol).cmp(&rank(&a.key.protocol)))
                .then(b.seed.cmp(&a.seed))
        });
    match worst {
        Some(t) => wanted.push((
            format!(
                "Worst split brain of `{sbs}`: `{}`, n = {}",
                t.key.protocol, t.key.nodes
            ),
            format!(
                "Seed {}: of every `{sbs}` trial with at most {} nodes, the one with the longest split brain: {} ms in all, up to {} live leaders at once{}.",
                t.seed,
                opts.max_trace_nodes,
                data::fmt_sig(t.split_brain_ms),
                t.max_leaders,
                if t.minority_leader_ms > 0.0 {
                    format!(
                        "; a leader stranded outside the largest group believed it led for {} ms",
                        data::fmt_sig(t.minority_leader_ms)
                    )
                } else {
                    String::new()
                }
            ),
            t,
        )),
        None => {
            if results.scenarios().contains(sbs) {
                notes.push(format!(
                    "No `{sbs}` trial had split brain, so there is no split-brain trace."
                ));
            } else {
                notes.push(format!("The sweep has no `{sbs}` scenario."));
            }
        }
    }
    if let Some(t) = safety_trial(results) {
        wanted.push((
            format!(
                "Safety violation: `{}`, `{}`, n = {}",
                t.key.protocol, t.key.scenario, t.key.nodes
            ),
            format!(
                "Seed {}: the first trial of the sweep (at most {} nodes) in which a node took the leader role while another live leader claimed the same epoch or term ({} time{} in this trial).",
                t.seed,
                opts.max_trace_nodes,
                t.same_epoch_leaders,
                if t.same_epoch_leaders == 1 { "" } else { "s" }
            ),
            t,
        ));
    }
    if let Some(t) = skipped_fault_trial(results) {
        wanted.push((
            format!(
                "Faults that did not apply: `{}`, `{}`, n = {}",
                t.key.protocol, t.key.scenario, t.key.nodes
            ),
            format!(
                "Seed {}: the first trial of the sweep (at most {} nodes) in which {} fault action{} found no target.",
                t.seed,
                opts.max_trace_nodes,
                t.faults_skipped,
                if t.faults_skipped == 1 { "" } else { "s" }
            ),
            t,
        ));
    }
    // The first trial of each liveness failure (livelock, then no-leader) among legible sizes:
    // the headline findings of the liveness section, drawn.
    for kind in [
        election_sim::Outcome::Livelock,
        election_sim::Outcome::NoLeader,
    ] {
        let outcome = kind.name();
        if let Some(t) = results.trials.iter().find(|t| {
            t.outcome == kind && t.key.nodes <= opts.max_trace_nodes && t.faults_skipped == 0
        }) {
            wanted.push((
                format!(
                    "Liveness failure (`{outcome}`): `{}` — `{}`, n = {}",
                    t.key.protocol, t.key.scenario, t.key.nodes
                ),
                format!(
                    "Seed {}: the first trial of the sweep whose outcome is `{outcome}` ({}; see [the appendix](APPENDIX.md#f-liveness)). {} leader changes after the reference instant.",
                    t.seed,
                    if outcome == "livelock" {
                        "leadership formed but never held after the last fault"
                    } else {
                        "no settled quorum leader although one was possible"
                    },
                    t.leader_changes
                ),
                t,
            ));
        }
    }
    let mut docs = Vec::new();
    for (k, (heading, caption, t)) in wanted.into_iter().enumerate() {
        let id = trial_id(results, t);
        let traced = match tracer.trace_trial(&id) {
            Ok(x) => x,
            Err(e) => {
                let w = format!("trace of {id} failed: {e}");
                notes.push(format!("_{w}_"));
                warnings.push(w);
                continue;
            }
        };
        let mut caption = caption;
        let diff = disagreement(t, &traced.metrics);
        if !diff.is_empty() {
            let w = format!(
                "the traced re-run of {id} disagrees with trials.csv: {}",
                diff.join(", ")
            );
            caption.push_str(&format!(" **Warning:** {w}."));
            warnings.push(w);
        }
        let meta = TraceMeta::from_metrics(
            &t.key.protocol,
            &t.key.scenario,
            &t.key.net,
            t.seed,
            &traced.metrics,
        );
        let services = election_runner::protocol::ProtocolSpec::parse(&t.key.protocol)
            .map_or(0, |s| s.services());
        let meta = TraceMeta { services, ..meta };
        let svg = render_trace(
            &traced.events,
            t.key.nodes + services,
            &meta,
            TraceFormat::Svg,
        )?;
        let name = trace_file_name(t);
        let path = dir.join(&name);
        fs::write(&path, svg).map_err(|e| ReportError::io(&path, e))?;
        files.push(path);
        let timeline = if k >= representatives {
            let tl = Timeline::build(&traced.events, t.key.nodes, &meta, traced.metrics.end_ms);
            // The quorum row is the observer's own record: its gaps must be the trial's
            // unavailability.
            if fmt_num(tl.unavailable_ms()) != fmt_num(traced.metrics.unavailable_ms) {
                warnings.push(format!(
                    "the timeline of {id} shows {} ms without a quorum leader, its metrics {} ms",
                    fmt_num(tl.unavailable_ms()),
                    fmt_num(traced.metrics.unavailable_ms)
                ));
            }
            let stem = format!("{}-timeline", name.trim_end_matches(".svg"));
            let chart = TimelineChart {
                timeline: &tl,
                title: format!(
                    "{}, {}, n = {}, seed {}",
                    t.key.protocol, t.key.scenario, t.key.nodes, t.seed
                ),
            };
            files.extend(charts::write_chart(&chart, &dir, &stem, opts.png)?);
            Some(format!("traces/{stem}.svg"))
        } else {
            None
        };
        docs.push(TraceDoc {
            heading,
            file: format!("traces/{name}"),
            timeline,
            caption: format!(
                "{caption} Reproduce: `{}`.",
                // The sweep's fixed parameters and the cell's varied ones: the same trial.
                findings::replay(results, &t.key, "trace", Flags::Long, t.seed).sets(
                    results
                        .cell(&t.key)
                        .map(|r| findings::replay_params(results, r, None))
                        .unwrap_or_default()
                )
            ),
        });
    }
    Ok((docs, notes.join("\n\n")))
}
