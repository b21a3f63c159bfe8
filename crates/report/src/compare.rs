//! `election-bench compare A B`: what changed between two results directories (before and
//! after a protocol change or a tuning), cell by cell, with a bootstrap interval on each
//! difference.
//!
//! # What is compared
//!
//! A *cell* is what `summary.csv` identifies one by: protocol spec, cluster size, scenario,
//! network and the values of the varied parameters. Cells present in both directories, and
//! run in both, are compared; cells in one directory only are counted and listed, never
//! compared. Both directories must vary the same parameters (otherwise no cell can be matched
//! and the comparison is refused).
//!
//! Per common cell, [`Metric::ALL`] are compared from the per-trial rows of `trials.csv`,
//! using only the *measured* trials (every fault applied, within the work budget), each metric
//! over the same trials as its `summary.csv` column of the same name, so the "A" and "B"
//! values printed are that column's values: `failover_ms_p50` (not in `cold-start`, which has
//! no leader to lose) or `elect_ms_p50` (`cold-start` only), `msgs_election_mean`,
//! `unavailable_ms_mean`, `split_brain_rate`, `converged_rate` and `writes_stale_mean` (when the
//! workload is on). Durations compare medians, counts and rates compare means.
//!
//! # A real run against its prediction
//!
//! A results directory written by `election-bench reality` (its manifest's `config.mode` is
//! `real`) holds rows of a real etcd cluster whose `protocol` is the system spec they are
//! compared with (`etcd@3.4`, `etcd@3.4+pre_vote`) and whose `net` is `loopback`. Against a
//! simulated sweep, cells are matched by **(protocol spec, nodes, scenario)** and the varied
//! parameters: `net` is left out of the match as if `--ignore net` were given (the sweep's
//! network profile, `ideal` for the prediction at etcd's own timing, is the model of the
//! loopback), and the metrics a real row does not measure ([`Metric::measured_in_real`]:
//! etcd's messages are not counted) are not tested. So `compare PREDICTION REAL` puts each
//! real cell beside the simulated cell of the same system, size and fault.
//!
//! # The test
//!
//! The difference is B − A. Its interval is a two-sample percentile bootstrap: each side is
//! resampled with replacement on its own, [`CompareOptions::resamples`] times, and the
//! interval holds the central [`CompareOptions::level`] of the resampled differences
//! (quantiles by linear interpolation, as everywhere in the project). A change is
//! **significant** when the interval excludes 0 *and* the difference is at least
//! [`CompareOptions::min_change`] of A's value (any non-zero difference when A's is 0). The
//! relative threshold keeps differences too small to matter out of the list, and limits the
//! chance findings of testing many cells at once (each test alone errs 5 % of the time at the
//! 95 % level; the report says how many tests were made). A metric with fewer than
//! [`MIN_SAMPLES`] values on a side is not tested.
//!
//! # Determinism
//!
//! Each (cell, metric) draws from its own ChaCha8 stream, seeded from
//! [`CompareOptions::seed`] and a stable hash (FNV-1a) of the cell and the metric name, so a
//! result does not depend on which other cells are present, on the thread count or on the
//! machine: the same two directories always give byte-identical output.
//!
//! # Output
//!
//! [`compare`] returns a [`Comparison`]; [`write_comparison`] writes `COMPARE.md`,
//! `compare.csv` (every comparison, one row each) and `charts/changes.svg` / `.png` (the
//! significant changes relative to A, with their intervals); [`Comparison::text`] is the
//! compact table the CLI prints.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::charts::{self, compact, frame, rgb, text_style, Chart, DrawResult, Swatch};
use crate::data::{fmt_num, percentile, CellKey, Results, TrialRow};
use crate::doc::{self, code, strong, text, Block, Cell, Document, Figure, Inline, Table};
use crate::error::ReportError;
use crate::palette;

/// Fewer values than this on either side and a metric is not tested.
pub const MIN_SAMPLES: usize = 5;

/// The most bootstrap resamples allowed (each test holds one difference per resample).
pub const MAX_RESAMPLES: u32 = 1_000_000;

/// At most this many significant changes are drawn (the largest); the table lists them all.
const CHART_ROWS: usize = 30;

/// How the comparison is made.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareOptions {
    /// Bootstrap resamples per (cell, metric).
    pub resamples: u32,
    /// Confidence level of the interval (0.95).
    pub level: f64,
    /// Smallest difference, as a fraction of A's value, that counts as a change (0.05).
    pub min_change: f64,
    /// Seed of the bootstrap streams.
    pub seed: u64,
    /// Also write a PNG copy of the chart.
    pub png: bool,
    /// Identifying columns left out when matching cells (`net`, `protocol`, `nodes`,
    /// `scenario` or a varied parameter): the column that names the change itself, e.g. `net`
    /// for `lan` against `lan+net.loss=0.05`, or `protocol` for `raft` against `raft+pre_vote`.
    pub ignore: Vec<String>,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            resamples: 2000,
            level: 0.95,
            min_change: 0.05,
            seed: 19,
            png: true,
            ignore: Vec::new(),
        }
    }
}

/// How a metric summarizes a cell's trials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// The median (type 7), for durations.
    Median,
    /// The mean, for counts and rates.
    Mean,
}

/// A compared metric; each is named after the `summary.csv` column it equals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Metric {
    /// Median `failover_ms` over the trials where it is given (not in `cold-start`).
    FailoverP50,
    /// Median `elect_ms` over the converged trials (`cold-start` only: the time to the first
    /// leader).
    ElectP50,
    /// Mean `msgs_election`.
    MsgsElection,
    /// Mean `unavailable_ms`.
    Unavailable,
    /// Fraction of trials with `split_brain = true`.
    SplitBrainRate,
    /// Fraction of trials with `converged = true`.
    ConvergedRate,
    /// Mean `writes_stale` over the trials with a workload.
    WritesStale,
}

impl Metric {
    /// Every metric, in table order.
    pub const ALL: [Metric; 7] = [
        Metric::FailoverP50,
        Metric::ElectP50,
        Metric::MsgsElection,
        Metric::Unavailable,
        Metric::SplitBrainRate,
        Metric::ConvergedRate,
        Metric::WritesStale,
    ];

    /// The `summary.csv` column this metric's value equals.
    pub fn name(self) -> &'static str {
        match self {
            Metric::FailoverP50 => "failover_ms_p50",
            Metric::ElectP50 => "elect_ms_p50",
            Metric::MsgsElection => "msgs_election_mean",
            Metric::Unavailable => "unavailable_ms_mean",
            Metric::SplitBrainRate => "split_brain_rate",
            Metric::ConvergedRate => "converged_rate",
            Metric::WritesStale => "writes_stale_mean",
        }
    }

    /// Is a higher value better? Only for the share of converged trials; for times,
    /// messages, split brain and stale writes lower is better.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::ConvergedRate)
    }

    /// Median or mean.
    pub fn statistic(self) -> Statistic {
        match self {
            Metric::FailoverP50 | Metric::ElectP50 => Statistic::Median,
            _ => Statistic::Mean,
        }
    }

    /// Is it measured in a real run's rows (`mode = real`)? Not the messages: etcd's are not
    /// counted (the columns are 0), nor the writes (no workload runs).
    pub fn measured_in_real(self) -> bool {
        !matches!(self, Metric::MsgsElection | Metric::WritesStale)
    }

    /// Does the metric mean something in `scenario`? A failover needs a leader to lose;
    /// `cold-start` is measured by its first election instead.
    pub fn applies(self, scenario: &str) -> bool {
        match self {
            Metric::FailoverP50 => scenario != "cold-start",
            Metric::ElectP50 => scenario == "cold-start",
            _ => true,
        }
    }

    /// The values of the metric over the measured trials of a cell (those it is defined for).
    fn values(self, trials: &[&TrialRow]) -> Vec<f64> {
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        trials
            .iter()
            .filter(|t| t.measured())
            .filter_map(|t| match self {
                Metric::FailoverP50 => t.failover_ms,
                Metric::ElectP50 => t.elect_ms,
                Metric::MsgsElection => Some(t.msgs_election as f64),
                Metric::Unavailable => Some(t.unavailable_ms),
                Metric::SplitBrainRate => Some(flag(t.split_brain)),
                Metric::ConvergedRate => Some(flag(t.converged)),
                Metric::WritesStale => t.writes_stale.map(|w| w as f64),
            })
            .collect()
    }
}

/// One metric of one common cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// The cell (A's, when columns are ignored in matching).
    pub cell: CellKey,
    /// B's cell (differs from `cell` only in the ignored columns).
    pub cell_b: CellKey,
    /// `raft n=5 leader-crash lan` (and the varied parameters).
    pub label: String,
    /// The metric.
    pub metric: Metric,
    /// Values (trials) in A.
    pub n_a: usize,
    /// Values (trials) in B.
    pub n_b: usize,
    /// The metric in A.
    pub a: f64,
    /// The metric in B.
    pub b: f64,
    /// Lower end of the bootstrap interval of B − A.
    pub lo: f64,
    /// Upper end of the bootstrap interval of B − A.
    pub hi: f64,
    /// The interval excludes 0 and the change is at least `min_change` of A.
    pub significant: bool,
}

impl Change {
    /// B − A.
    pub fn diff(&self) -> f64 {
        self.b - self.a
    }

    /// criterion's words for the change from A to B: `improved` or `regressed` when it is
    /// significant (by the metric's better direction, [`Metric::higher_is_better`]), else
    /// `within noise`.
    pub fn verdict(&self) -> &'static str {
        if !self.significant {
            "within noise"
        } else if (self.diff() > 0.0) == self.metric.higher_is_better() {
            "improved"
        } else {
            "regressed"
        }
    }

    /// (B − A) / A; `None` when A is 0.
    pub fn relative(&self) -> Option<f64> {
        (self.a != 0.0).then(|| self.diff() / self.a.abs())
    }

    /// Sort key: the size of the relative change, a change from 0 counting as infinite.
    fn size(&self) -> f64 {
        match self.relative() {
            Some(r) => r.abs(),
            None if self.diff() != 0.0 => f64::INFINITY,
            None => 0.0,
        }
    }

    fn rel_text(&self) -> String {
        match self.relative() {
            Some(r) => format!("{:+.1}%", r * 100.0),
            None if self.diff() == 0.0 => "0".into(),
            None => "from 0".into(),
        }
    }
}

/// What one side contains, for messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Contents {
    /// The directory as given.
    pub dir: PathBuf,
    /// The sweep's name (manifest).
    pub name: String,
    /// The SHA-256 of its configuration, if the manifest records it.
    pub config_sha256: Option<String>,
    /// The command that made it.
    pub command: String,
    /// Cells in `summary.csv`.
    pub cells: usize,
    /// Trials in `trials.csv`.
    pub trials: usize,
    /// Protocol specs.
    pub protocols: Vec<String>,
    /// Cluster sizes at which some cell ran.
    pub sizes: Vec<u32>,
    /// Scenarios.
    pub scenarios: Vec<String>,
    /// Networks.
    pub nets: Vec<String>,
    /// Varied parameters.
    pub varied: Vec<String>,
}

impl Contents {
    fn of(r: &Results) -> Contents {
        Contents {
            dir: r.dir.clone(),
            name: r.manifest.name.clone(),
            config_sha256: r.manifest.config_sha256.clone(),
            command: r.manifest.command.clone(),
            cells: r.summary.len(),
            trials: r.trials.len(),
            protocols: r.protocols(),
            sizes: r.sizes(),
            scenarios: r.scenarios(),
            nets: r.nets(),
            varied: r.param_keys.clone(),
        }
    }

    /// `protocols [bully, raft], sizes [3, 5], scenarios [leader-crash], nets [lan]`.
    pub fn describe(&self) -> String {
        let sizes: Vec<String> = self.sizes.iter().map(u32::to_string).collect();
        let mut s = format!(
            "protocols [{}], sizes [{}], scenarios [{}], nets [{}]",
            self.protocols.join(", "),
            sizes.join(", "),
            self.scenarios.join(", "),
            self.nets.join(", ")
        );
        if !self.varied.is_empty() {
            s.push_str(&format!(", varied [{}]", self.varied.join(", ")));
        }
        s
    }
}

/// The result of [`compare`].
#[derive(Clone, Debug)]
pub struct Comparison {
    /// Side A (before).
    pub a: Contents,
    /// Side B (after).
    pub b: Contents,
    /// The options used.
    pub opts: CompareOptions,
    /// The varied parameters' names (the same on both sides).
    pub param_keys: Vec<String>,
    /// Cells in both directories and run in both.
    pub common: usize,
    /// Cells in both, skipped or without measured trials on some side.
    pub not_run: usize,
    /// Labels of the cells only in A, in A's order.
    pub only_a: Vec<String>,
    /// Labels of the cells only in B, in B's order.
    pub only_b: Vec<String>,
    /// Every tested (cell, metric): significant first by relative size, then the rest in cell
    /// order.
    pub changes: Vec<Change>,
    /// (cell, metric) pairs not tested for lack of values.
    pub untested: usize,
}

/// The cell's columns that `ignore` names, as `column=value`.
fn ignored_parts(param_keys: &[String], ignore: &[String], k: &CellKey) -> Vec<String> {
    let mut out = Vec::new();
    for col in ignore {
        let v = match col.as_str() {
            "protocol" => k.protocol.clone(),
            "nodes" => k.nodes.to_string(),
            "scenario" => k.scenario.clone(),
            "net" => k.net.clone(),
            p => param_keys
                .iter()
                .position(|x| x == p)
                .map(|i| k.params[i].clone())
                .unwrap_or_default(),
        };
        out.push(format!("{col}={v}"));
    }
    out
}

/// The key cells are matched by: `k` with the ignored columns blanked.
fn match_key(param_keys: &[String], ignore: &[String], k: &CellKey) -> CellKey {
    let mut m = k.clone();
    for col in ignore {
        match col.as_str() {
            "protocol" => m.protocol.clear(),
            "nodes" => m.nodes = 0,
            "scenario" => m.scenario.clear(),
            "net" => m.net.clear(),
            p => {
                if let Some(i) = param_keys.iter().position(|x| x == p) {
                    m.params[i].clear();
                }
            }
        }
    }
    m
}

fn cell_label(param_keys: &[String], k: &CellKey) -> String {
    let mut s = format!("{} n={} {} {}", k.protocol, k.nodes, k.scenario, k.net);
    for (key, v) in param_keys.iter().zip(&k.params) {
        if !v.is_empty() {
            s.push_str(&format!(" {key}={v}"));
        }
    }
    s
}

/// Loads both directories and compares every common cell. See the module docs.
pub fn compare(
    a_dir: &Path,
    b_dir: &Path,
    opts: &CompareOptions,
) -> Result<Comparison, ReportError> {
    for d in [a_dir, b_dir] {
        if !d.is_dir() {
            return Err(ReportError::Usage(format!(
                "results directory {} does not exist or is not a directory",
                d.display()
            )));
        }
    }
    let a = Results::load(a_dir)?;
    let b = Results::load(b_dir)?;
    compare_results(&a, &b, opts)
}

/// Was `r` written by `election-bench reality` (its manifest's `config.mode` is `real`)?
pub fn is_real(r: &Results) -> bool {
    r.manifest.config["mode"] == "real"
}

/// The trials of every cell, by cell.
fn by_cell(r: &Results) -> HashMap<&CellKey, Vec<&TrialRow>> {
    let mut m: HashMap<&CellKey, Vec<&TrialRow>> = HashMap::new();
    for t in &r.trials {
        m.entry(&t.key).or_default().push(t);
    }
    m
}

/// [`compare`] on loaded results.
pub fn compare_results(
    a: &Results,
    b: &Results,
    opts: &CompareOptions,
) -> Result<Comparison, ReportError> {
    if !(opts.level > 0.0 && opts.level < 1.0) {
        return Err(ReportError::Usage(format!(
            "level = {}: must be between 0 and 1 (0.95 for a 95 % interval)",
            opts.level
        )));
    }
    if !(opts.min_change >= 0.0 && opts.min_change.is_finite()) {
        return Err(ReportError::Usage(format!(
            "min_change = {}: must be a fraction of at least 0 (0.05 for 5 %)",
            opts.min_change
        )));
    }
    if !(100..=MAX_RESAMPLES).contains(&opts.resamples) {
        return Err(ReportError::Usage(format!(
            "resamples = {}: must be between 100 (for a usable interval) and {MAX_RESAMPLES}",
            opts.resamples
        )));
    }
    let (ca, cb) = (Contents::of(a), Contents::of(b));
    if a.param_keys != b.param_keys {
        return Err(ReportError::Mismatch {
            a: a.dir.clone(),
            b: b.dir.clone(),
            reason: format!(
                "{} varies [{}] but {} varies [{}]: cells are identified by their varied parameters, so none can be matched",
                a.dir.display(),
                a.param_keys.join(", "),
                b.dir.display(),
                b.param_keys.join(", ")
            ),
        });
    }
    let keys = &a.param_keys;
    // A real run beside a simulated one: matched without `net` (module docs).
    let real = [a, b].map(is_real);
    let mut ignore = opts.ignore.clone();
    if real[0] != real[1] && !ignore.iter().any(|c| c == "net") {
        ignore.push("net".into());
    }
    let ignore = &ignore;
    let fixed = ["protocol", "nodes", "scenario", "net"];
    for col in ignore {
        if !fixed.contains(&col.as_str()) && !keys.contains(col) {
            return Err(ReportError::Usage(format!(
                "--ignore {col}: not an identifying column; choose from {}{}",
                fixed.join(", "),
                keys.iter().map(|k| format!(", {k}")).collect::<String>()
            )));
        }
    }
    // Cells by their match key; ignoring a column that varies within one side would merge
    // different cells of that side, which is refused.
    let index = |r: &'_ Results, side: &str| -> Result<HashMap<CellKey, usize>, ReportError> {
        let mut m: HashMap<CellKey, usize> = HashMap::new();
        for (i, row) in r.summary.iter().enumerate() {
            if let Some(j) = m.insert(match_key(keys, ignore, &row.key), i) {
                return Err(ReportError::Usage(format!(
                    "--ignore {}: {side} ({}) has both `{}` and `{}`, which would become one cell; ignore only a column that differs between the directories, not one that varies within one",
                    ignore.join(","),
                    r.dir.display(),
                    cell_label(keys, &r.summary[j].key),
                    cell_label(keys, &row.key)
                )));
            }
        }
        Ok(m)
    };
    let (in_a, in_b) = (index(a, "A")?, index(b, "B")?);
    let only = |r: &Results, other: &HashMap<CellKey, usize>| -> Vec<String> {
        r.summary
            .iter()
            .filter(|row| !other.contains_key(&match_key(keys, ignore, &row.key)))
            .map(|row| cell_label(keys, &row.key))
            .collect()
    };
    let (only_a, only_b) = (only(a, &in_b), only(b, &in_a));
    let both: Vec<(&CellKey, &CellKey)> = a
        .summary
        .iter()
        .filter_map(|r| {
            let rb = &b.summary[*in_b.get(&match_key(keys, ignore, &r.key))?];
            (r.ran() && rb.ran()).then_some((&r.key, &rb.key))
        })
        .collect();
    let not_run = a.summary.len() - only_a.len() - both.len();
    if both.is_empty() {
        // Would leaving one more column out match something? Then say so.
        let would_match: Vec<&str> = fixed
            .iter()
            .copied()
            .filter(|col| !ignore.iter().any(|i| i == col))
            .filter(|col| {
                let mut more = ignore.clone();
                more.push(col.to_string());
                let bs: std::collections::HashSet<CellKey> = b
                    .summary
                    .iter()
                    .map(|r| match_key(keys, &more, &r.key))
                    .collect();
                a.summary
                    .iter()
                    .any(|r| bs.contains(&match_key(keys, &more, &r.key)))
            })
            .collect();
        let mut detail = String::new();
        if not_run > 0 {
            detail.push_str(&format!(
                " ({not_run} cells are in both but were skipped or measured nothing on a side)"
            ));
        }
        detail.push_str(&format!(
            ": {} has {}; {} has {}",
            a.dir.display(),
            ca.describe(),
            b.dir.display(),
            cb.describe()
        ));
        for c in would_match {
            detail.push_str(&format!(" (cells would match with --ignore {c})"));
        }
        return Err(ReportError::NoCommonCells {
            a: a.dir.clone(),
            b: b.dir.clone(),
            detail,
        });
    }
    let (ta, tb) = (by_cell(a), by_cell(b));
    let jobs: Vec<(&CellKey, &CellKey, Metric)> = both
        .iter()
        .flat_map(|&(ka, kb)| {
            Metric::ALL
                .iter()
                .filter(move |m| m.applies(&ka.scenario) && m.applies(&kb.scenario))
                .filter(move |m| !(real[0] || real[1]) || m.measured_in_real())
                .map(move |m| (ka, kb, *m))
        })
        .collect();
    let empty: Vec<&TrialRow> = Vec::new();
    let results: Vec<Option<Change>> = jobs
        .par_iter()
        .map(|&(key, key_b, metric)| {
            let xa = metric.values(ta.get(key).unwrap_or(&empty));
            let xb = metric.values(tb.get(key_b).unwrap_or(&empty));
            if xa.len() < MIN_SAMPLES || xb.len() < MIN_SAMPLES {
                return None;
            }
            let mut label = cell_label(keys, key);
            if key != key_b {
                label.push_str(&format!(
                    " [B: {}]",
                    ignored_parts(keys, ignore, key_b).join(" ")
                ));
            }
            let seed = opts.seed ^ palette::fnv1a(&format!("{label}\n{}", metric.name()));
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (va, vb) = (
                point(&xa, metric.statistic()),
                point(&xb, metric.statistic()),
            );
            let (lo, hi) = bootstrap(&xa, &xb, metric.statistic(), opts, &mut rng);
            let d = vb - va;
            let big_enough = if va == 0.0 {
                d != 0.0
            } else {
                d.abs() >= opts.min_change * va.abs()
            };
            Some(Change {
                cell: key.clone(),
                cell_b: key_b.clone(),
                label,
                metric,
                n_a: xa.len(),
                n_b: xb.len(),
                a: va,
                b: vb,
                lo,
                hi,
                significant: (lo > 0.0 || hi < 0.0) && big_enough,
            })
        })
        .collect();
    let untested = results.iter().filter(|c| c.is_none()).count();
    let tested: Vec<Change> = results.into_iter().flatten().collect();
    let (mut sig, rest): (Vec<Change>, Vec<Change>) =
        tested.into_iter().partition(|c| c.significant);
    // Stable: ties keep cell order.
    sig.sort_by(|x, y| y.size().total_cmp(&x.size()));
    sig.extend(rest);
    Ok(Comparison {
        a: ca,
        b: cb,
        // The columns left out of the match, a real run's `net` among them.
        opts: CompareOptions {
            ignore: ignore.clone(),
            ..opts.clone()
        },
        param_keys: keys.clone(),
        common: both.len(),
        not_run,
        only_a,
        only_b,
        changes: sig,
        untested,
    })
}

/// The statistic of a sample as `summary.csv` computes it.
fn point(xs: &[f64], s: Statistic) -> f64 {
    match s {
        Statistic::Mean => xs.iter().sum::<f64>() / xs.len() as f64,
        Statistic::Median => {
            let mut v = xs.to_vec();
            v.sort_by(f64::total_cmp);
            percentile(&v, 0.5)
        }
    }
}

/// The statistic of one resample of `xs` (drawn into `buf`).
fn resample(xs: &[f64], s: Statistic, buf: &mut Vec<f64>, rng: &mut ChaCha8Rng) -> f64 {
    let n = xs.len();
    match s {
        Statistic::Mean => (0..n).map(|_| xs[rng.random_range(0..n)]).sum::<f64>() / n as f64,
        Statistic::Median => {
            buf.clear();
            buf.extend((0..n).map(|_| xs[rng.random_range(0..n)]));
            let mid = n / 2;
            let (left, m, _) = buf.select_nth_unstable_by(mid, f64::total_cmp);
            let upper = *m;
            if n % 2 == 1 {
                upper
            } else {
                let lower = left.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                lower + 0.5 * (upper - lower)
            }
        }
    }
}

/// The percentile bootstrap interval of `stat(b) − stat(a)`.
fn bootstrap(
    a: &[f64],
    b: &[f64],
    s: Statistic,
    opts: &CompareOptions,
    rng: &mut ChaCha8Rng,
) -> (f64, f64) {
    let mut buf = Vec::with_capacity(a.len().max(b.len()));
    election_runner::stats::bootstrap(opts.resamples as usize, opts.level, || {
        let ra = resample(a, s, &mut buf, rng);
        let rb = resample(b, s, &mut buf, rng);
        rb - ra
    })
    .unwrap_or((f64::NAN, f64::NAN))
}

/// The ratio of two samples' quantiles, `quantile(b) / quantile(a)`, with its percentile
/// bootstrap interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio {
    /// The ratio of the samples' quantiles.
    pub point: f64,
    /// Lower end of the interval.
    pub lo: f64,
    /// Upper end of the interval.
    pub hi: f64,
}

impl Ratio {
    /// Is the point estimate within `band` of 1 (0.2: from 0.8 to 1.2)?
    pub fn within(&self, band: f64) -> bool {
        (self.point - 1.0).abs() <= band
    }
}

/// `quantile(b, q) / quantile(a, q)` (quantiles by linear interpolation, `q` a fraction) with
/// the percentile bootstrap interval of the same scheme as the differences: each side
/// resampled with replacement on its own, `opts.resamples` times, the central `opts.level` of
/// the resampled ratios, from a ChaCha8 stream seeded from `opts.seed` and `label` (so one
/// label always gives the same interval). `None` with fewer than [`MIN_SAMPLES`] values on a
/// side or a zero quantile of `a`.
pub fn quantile_ratio(
    a: &[f64],
    b: &[f64],
    q: f64,
    opts: &CompareOptions,
    label: &str,
) -> Option<Ratio> {
    if a.len() < MIN_SAMPLES || b.len() < MIN_SAMPLES {
        return None;
    }
    let quantile = |xs: &[f64]| {
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        percentile(&v, q)
    };
    let (qa, qb) = (quantile(a), quantile(b));
    if qa <= 0.0 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed ^ palette::fnv1a(&format!("{label}\n{q}")));
    let mut buf = Vec::with_capacity(a.len().max(b.len()));
    let mut draw = |xs: &[f64], rng: &mut ChaCha8Rng| {
        buf.clear();
        buf.extend((0..xs.len()).map(|_| xs[rng.random_range(0..xs.len())]));
        buf.sort_by(f64::total_cmp);
        percentile(&buf, q)
    };
    let (lo, hi) = election_runner::stats::bootstrap(opts.resamples as usize, opts.level, || {
        let ra = draw(a, &mut rng);
        let rb = draw(b, &mut rng);
        if ra > 0.0 {
            rb / ra
        } else {
            f64::INFINITY
        }
    })?;
    Some(Ratio {
        point: qb / qa,
        lo,
        hi,
    })
}

/// A value as the tables print it: 3 decimals, trailing zeros trimmed.
fn num(v: f64) -> String {
    fmt_num(v)
}

fn signed(v: f64) -> String {
    let s = num(v);
    if s.starts_with('-') || s == "0" {
        s
    } else {
        format!("+{s}")
    }
}

impl Comparison {
    /// The significant changes.
    pub fn significant(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.significant)
    }

    fn rule(&self) -> String {
        format!(
            "significant: the {}% bootstrap interval of B - A excludes 0 and |B - A| >= {}% of A ({} resamples per test, seed {}); with nothing changed, about {} of {} intervals would exclude 0 by chance",
            fmt_num(self.opts.level * 100.0),
            fmt_num(self.opts.min_change * 100.0),
            self.opts.resamples,
            self.opts.seed,
            fmt_num((self.changes.len() as f64 * (1.0 - self.opts.level)).round()),
            self.changes.len()
        )
    }

    fn headline(&self) -> String {
        let sig = self.significant().count();
        let regressed = self
            .significant()
            .filter(|c| c.verdict() == "regressed")
            .count();
        let sig = if sig > 0 {
            format!(
                "{sig} significant: {regressed} regressed, {} improved",
                sig - regressed
            )
        } else {
            format!("{sig} significant")
        };
        format!(
            "{} common cells ({} only in A, {} only in B{}), {} tests, {}{}",
            self.common,
            self.only_a.len(),
            self.only_b.len(),
            if self.not_run > 0 {
                format!(", {} not run on a side", self.not_run)
            } else {
                String::new()
            },
            self.changes.len(),
            sig,
            if self.untested > 0 {
                format!(
                    " ({} not tested: fewer than {MIN_SAMPLES} values)",
                    self.untested
                )
            } else {
                String::new()
            }
        )
    }

    /// The compact table the CLI prints: the headline, the rule, and the significant changes
    /// (at most `max_rows`, then how many more).
    pub fn text(&self, max_rows: usize) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "compare A = {} -> B = {}",
            self.a.dir.display(),
            self.b.dir.display()
        );
        let _ = writeln!(out, "{}", self.headline());
        let _ = writeln!(out, "{}", self.rule());
        let sig: Vec<&Change> = self.significant().collect();
        if sig.is_empty() {
            let _ = writeln!(out, "no significant change");
            return out;
        }
        let header = [
            "cell", "metric", "A", "B", "B - A", "interval", "change", "verdict",
        ];
        let rows: Vec<[String; 8]> = sig
            .iter()
            .take(max_rows)
            .map(|c| {
                [
                    c.label.clone(),
                    c.metric.name().to_string(),
                    num(c.a),
                    num(c.b),
                    signed(c.diff()),
                    format!("[{}, {}]", signed(c.lo), signed(c.hi)),
                    c.rel_text(),
                    c.verdict().to_string(),
                ]
            })
            .collect();
        let mut w = header.map(str::len);
        for r in &rows {
            for (i, f) in r.iter().enumerate() {
                w[i] = w[i].max(f.chars().count());
            }
        }
        let line = |f: &[String]| {
            let mut s = String::new();
            for (i, x) in f.iter().enumerate() {
                let pad = w[i] - x.chars().count();
                if i < 2 || i == 7 {
                    s.push_str(x);
                    s.push_str(&" ".repeat(pad));
                } else {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(x);
                }
                if i + 1 < f.len() {
                    s.push_str("  ");
                }
            }
            s.trim_end().to_string()
        };
        let _ = writeln!(out, "{}", line(&header.map(String::from)));
        for r in &rows {
            let _ = writeln!(out, "{}", line(r));
        }
        if sig.len() > max_rows {
            let _ = writeln!(
                out,
                "... and {} more significant changes (all in COMPARE.md)",
                sig.len() - max_rows
            );
        }
        out
    }

    fn title_spans(&self) -> Vec<Inline> {
        vec![
            text("Comparison: "),
            code(self.a.dir.display().to_string()),
            text(" → "),
            code(self.b.dir.display().to_string()),
        ]
    }

    /// `COMPARE.md`'s first line; a directory whose `COMPARE.md` starts with it holds this
    /// same comparison and may be overwritten.
    pub fn title(&self) -> String {
        format!("# {}", doc::markdown_spans(&self.title_spans()))
    }

    /// The comparison page as a document (`chart`: the forest plot's path, if drawn).
    pub fn document(&self, chart: Option<&str>) -> Document {
        let mut d = Document::titled(self.title_spans());
        d.paragraph(vec![Inline::Emph(vec![
            text("Generated by "),
            code("election-bench compare"),
            text(" from the two results directories; do not edit."),
        ])]);
        let mut sides = Vec::new();
        for (side, c) in [("A (before)", &self.a), ("B (after)", &self.b)] {
            let mut item = vec![
                strong(side),
                text(": "),
                code(c.dir.display().to_string()),
                text(" — sweep "),
                code(&c.name),
                text(format!(
                    ", {} cells, {} trials, configuration ",
                    c.cells, c.trials
                )),
            ];
            item.push(match c.config_sha256.as_deref() {
                Some(g) => code(&g[..g.len().min(12)]),
                None => text("unknown"),
            });
            item.extend([
                text("; made by "),
                code(&c.command),
                text(format!(". Contains {}.", c.describe())),
            ]);
            sides.push(item);
        }
        d.push(Block::list(sides));
        d.paragraph(vec![strong(format!("{}.", self.headline()))]);
        d.heading(2, vec![text("Method")]);
        d.paragraph(vec![
            text(
                "Each cell present and run in both directories is compared metric by metric, \
                 over its measured trials only (every fault applied, within the work budget), \
                 each metric over the same trials as the ",
            ),
            code("summary.csv"),
            text(" column it is named after: "),
            code("failover_ms_p50"),
            text(" (not in "),
            code("cold-start"),
            text("), "),
            code("elect_ms_p50"),
            text(" ("),
            code("cold-start"),
            text(" only), "),
            code("msgs_election_mean"),
            text(", "),
            code("unavailable_ms_mean"),
            text(", "),
            code("split_brain_rate"),
            text(", "),
            code("converged_rate"),
            text(", "),
            code("writes_stale_mean"),
            text(format!(
                " (with a workload). Medians for durations, means for counts and rates. The \
                 interval is a two-sample percentile bootstrap of B − A: each side resampled \
                 with replacement {} times, the central {}% of the differences. A change is ",
                self.opts.resamples,
                fmt_num(self.opts.level * 100.0),
            )),
            strong("significant"),
            text(format!(
                " when the interval excludes 0 and |B − A| is at least {}% of A (any non-zero \
                 change from 0). Each test alone errs {}% of the time when nothing changed: of \
                 {} tests, about {} would exclude 0 by chance alone if nothing had changed; the \
                 {}% threshold drops those that are also small, so read an isolated change near \
                 the threshold with care. Metrics with fewer than {MIN_SAMPLES} values on a side \
                 are not tested. The bootstrap is seeded (ChaCha8, seed {}, one stream per cell \
                 and metric): reruns give identical output.",
                fmt_num(self.opts.min_change * 100.0),
                fmt_num((1.0 - self.opts.level) * 100.0),
                self.changes.len(),
                fmt_num((self.changes.len() as f64 * (1.0 - self.opts.level)).round()),
                fmt_num(self.opts.min_change * 100.0),
                self.opts.seed
            )),
        ]);
        if !self.opts.ignore.is_empty() {
            let mut p = vec![text("Cells were matched ignoring ")];
            for (i, c) in self.opts.ignore.iter().enumerate() {
                if i > 0 {
                    p.push(text(", "));
                }
                p.push(code(c));
            }
            p.push(text(
                ": each row names A's cell, and B's value of the ignored columns in brackets.",
            ));
            d.paragraph(p);
        }
        let sig: Vec<&Change> = self.significant().collect();
        d.heading(2, vec![text("Significant changes")]);
        if sig.is_empty() {
            d.paragraph(vec![text("None.")]);
        } else {
            if let Some(file) = chart {
                d.push(Block::Figure(Figure {
                    path: file.to_string(),
                    alt: "Significant changes relative to A, with their intervals".into(),
                    caption: None,
                }));
            }
            d.paragraph(vec![text("Largest relative change first.")]);
            d.push(Block::Table(table(&sig)));
        }
        let rest: Vec<&Change> = self.changes.iter().filter(|c| !c.significant).collect();
        d.heading(2, vec![text("No significant change")]);
        if rest.is_empty() {
            d.paragraph(vec![text("None.")]);
        } else {
            d.paragraph(vec![text("In cell order.")]);
            d.push(Block::Table(table(&rest)));
        }
        d.heading(2, vec![text("Cells in one directory only")]);
        let mut only = Vec::new();
        for (side, list) in [("A", &self.only_a), ("B", &self.only_b)] {
            if list.is_empty() {
                only.push(vec![text(format!("Only in {side}: none."))]);
            } else {
                let mut item = vec![text(format!("Only in {side} ({}): ", list.len()))];
                for (i, l) in list.iter().enumerate() {
                    if i > 0 {
                        item.push(text(", "));
                    }
                    item.push(code(l));
                }
                item.push(text("."));
                only.push(item);
            }
        }
        if self.not_run > 0 {
            only.push(vec![text(format!(
                "In both but skipped or without measured trials on a side: {}.",
                self.not_run
            ))]);
        }
        d.push(Block::list(only));
        d
    }

    /// The heading of the appendix section [`Comparison::baseline_appendix`] writes.
    const UNCHANGED: &'static str = "Changes against the baseline: no significant change";

    /// The report's section on its baseline (`report --baseline DIR`, A = the baseline, B =
    /// the report's results), criterion-style: what changed in which cell, each change with
    /// its bootstrap interval, the forest plot `chart` when a change has a finite relative
    /// size, and a pointer to the rest in the appendix.
    pub(crate) fn baseline_section(&self, d: &mut Document, chart: &str) {
        d.heading(2, vec![text("Changes against the baseline")]);
        d.paragraph(vec![
            text("Against "),
            code(self.a.dir.display().to_string()),
            text(" (sweep "),
            code(&self.a.name),
            text(format!(
                ", {} cells, {} trials), as ",
                self.a.cells, self.a.trials
            )),
            code("election-bench compare"),
            text(" computes it: "),
            strong(format!("{}.", self.headline())),
            text(format!(
                " {}.",
                self.rule()
                    .replacen("significant: ", "Significant when ", 1)
            )),
        ]);
        let sig: Vec<&Change> = self.significant().collect();
        if sig.is_empty() {
            d.paragraph(vec![text(
                "No cell changed significantly: every difference is within its interval's reach of 0 or smaller than the threshold.",
            )]);
        } else {
            if sig.iter().any(|c| c.a != 0.0) {
                d.push(Block::Figure(Figure {
                    path: chart.to_string(),
                    alt: "Significant changes relative to the baseline, with their intervals"
                        .into(),
                    caption: None,
                }));
            }
            d.paragraph(vec![text(
                "Significant changes, largest relative change first (A: the baseline, B: this sweep):",
            )]);
            d.push(Block::Table(table(&sig)));
        }
        let rest = self.changes.iter().filter(|c| !c.significant).count();
        if rest > 0 {
            d.paragraph(vec![
                text(format!(
                    "The {rest} comparisons without a significant change, with their intervals: "
                )),
                doc::link(
                    "the appendix",
                    format!("APPENDIX.md#{}", doc::anchor(Self::UNCHANGED)),
                ),
                text("."),
            ]);
        }
    }

    /// The appendix's part of [`Comparison::baseline_section`]: every comparison without a
    /// significant change, in cell order (nothing when there is none).
    pub(crate) fn baseline_appendix(&self, d: &mut Document) {
        let rest: Vec<&Change> = self.changes.iter().filter(|c| !c.significant).collect();
        if rest.is_empty() {
            return;
        }
        d.heading(2, vec![text(Self::UNCHANGED)]);
        d.push(Block::Table(table(&rest)));
    }

    fn csv(&self) -> Result<Vec<u8>, csv::Error> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header: Vec<String> = ["protocol", "nodes", "scenario", "net"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        header.extend(self.param_keys.iter().cloned());
        header.extend(self.opts.ignore.iter().map(|c| format!("{c}_b")));
        header.extend(
            [
                "metric",
                "n_a",
                "n_b",
                "a",
                "b",
                "diff",
                "ci_lo",
                "ci_hi",
                "relative",
                "significant",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        w.write_record(&header)?;
        for c in &self.changes {
            let mut r = vec![
                c.cell.protocol.clone(),
                c.cell.nodes.to_string(),
                c.cell.scenario.clone(),
                c.cell.net.clone(),
            ];
            r.extend(c.cell.params.iter().cloned());
            r.extend(
                ignored_parts(&self.param_keys, &self.opts.ignore, &c.cell_b)
                    .into_iter()
                    .map(|p| {
                        p.split_once('=')
                            .map(|x| x.1.to_string())
                            .unwrap_or_default()
                    }),
            );
            r.extend([
                c.metric.name().to_string(),
                c.n_a.to_string(),
                c.n_b.to_string(),
                num(c.a),
                num(c.b),
                num(c.diff()),
                num(c.lo),
                num(c.hi),
                c.relative()
                    .map(election_runner::results::fmt_rate)
                    .unwrap_or_default(),
                c.significant.to_string(),
            ]);
            w.write_record(&r)?;
        }
        w.into_inner().map_err(|e| e.into_error().into())
    }
}

fn table(rows: &[&Change]) -> Table {
    use doc::Align::{Left, Right};
    let mut t = Table::new([
        "cell",
        "metric",
        "A",
        "B",
        "B − A",
        "interval",
        "change",
        "verdict",
        "values A / B",
    ])
    .aligned([Left, Left, Right, Right, Right, Right, Right, Left, Right]);
    for c in rows {
        t.rows.push(vec![
            Cell::new(vec![code(&c.label)]),
            Cell::new(vec![code(c.metric.name())]),
            Cell::text(num(c.a)).sorted_by(c.a),
            Cell::text(num(c.b)).sorted_by(c.b),
            Cell::text(signed(c.diff())).sorted_by(c.diff()),
            Cell::text(format!("[{}, {}]", signed(c.lo), signed(c.hi))),
            Cell::text(c.rel_text()).sorted_by(c.size()),
            if c.significant {
                Cell::new(vec![doc::verdict(c.verdict())])
            } else {
                Cell::text(c.verdict())
            },
            Cell::text(format!("{} / {}", c.n_a, c.n_b)),
        ]);
    }
    t
}

/// What [`write_comparison`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareOutput {
    /// `out/COMPARE.md`.
    pub report: PathBuf,
    /// Every file written.
    pub files: Vec<PathBuf>,
}

/// Writes `COMPARE.md`, `compare.csv` and `charts/changes.{svg,png}` into `out`. An existing
/// `out` is refused unless it is empty, holds this same comparison (its `COMPARE.md` starts
/// with [`Comparison::title`]) or `force` is set.
pub fn write_comparison(
    cmp: &Comparison,
    out: &Path,
    force: bool,
) -> Result<CompareOutput, ReportError> {
    let existing = out.join("COMPARE.md");
    if out.exists() && !force {
        let mut entries = fs::read_dir(out).map_err(|e| ReportError::io(out, e))?;
        if entries.next().is_some() {
            let same = fs::read_to_string(&existing)
                .ok()
                .and_then(|s| s.lines().next().map(|l| l == cmp.title()))
                .unwrap_or(false);
            if !same {
                return Err(ReportError::OutputExists {
                    path: out.to_path_buf(),
                    reason: if existing.exists() {
                        "holds the comparison of other directories".into()
                    } else {
                        "is not empty and holds no comparison".into()
                    },
                });
            }
        }
    }
    let charts_dir = out.join("charts");
    fs::create_dir_all(&charts_dir).map_err(|e| ReportError::io(&charts_dir, e))?;
    let mut files = Vec::new();
    let stem = "changes";
    for ext in ["svg", "png"] {
        let p = charts_dir.join(format!("{stem}.{ext}"));
        if p.exists() {
            fs::remove_file(&p).map_err(|e| ReportError::io(&p, e))?;
        }
    }
    let chart = ChangeChart::new(cmp);
    let written = charts::write_chart(&chart, &charts_dir, stem, cmp.opts.png)?;
    let shown = if cmp.opts.png {
        format!("charts/{stem}.png")
    } else {
        format!("charts/{stem}.svg")
    };
    files.extend(written);
    let csv_path = out.join("compare.csv");
    let bytes = cmp.csv().map_err(|e| ReportError::Csv {
        path: csv_path.clone(),
        reason: e.to_string(),
    })?;
    fs::write(&csv_path, bytes).map_err(|e| ReportError::io(&csv_path, e))?;
    files.push(csv_path);
    fs::write(&existing, cmp.document(Some(&shown)).to_markdown())
        .map_err(|e| ReportError::io(&existing, e))?;
    files.push(existing.clone());
    Ok(CompareOutput {
        report: existing,
        files,
    })
}

/// The significant changes with a finite relative size, largest first, as a forest plot: one
/// row per change, the point at (B − A) / A and the bootstrap interval as a whisker.
pub(crate) struct ChangeChart {
    title: String,
    subtitle: String,
    /// (label, protocol colour, relative change, relative interval), top to bottom.
    rows: Vec<(String, RGBColor, f64, f64, f64)>,
    legend: Vec<(String, RGBColor)>,
    note: String,
}

impl ChangeChart {
    pub(crate) fn new(cmp: &Comparison) -> ChangeChart {
        let sig: Vec<&Change> = cmp.significant().collect();
        let finite: Vec<&Change> = sig.iter().copied().filter(|c| c.a != 0.0).collect();
        let rows: Vec<(String, RGBColor, f64, f64, f64)> = finite
            .iter()
            .take(CHART_ROWS)
            .map(|c| {
                let s = c.a.abs() / 100.0;
                // B's values of ignored columns are in the subtitle, not on every row.
                let cell = c.label.split(" [B: ").next().unwrap_or(&c.label);
                (
                    format!("{cell} · {}", c.metric.name()),
                    rgb(palette::protocol_colour(&c.cell.protocol)),
                    c.diff() / s,
                    c.lo / s,
                    c.hi / s,
                )
            })
            .collect();
        let mut protocols: Vec<String> = Vec::new();
        for c in finite.iter().take(CHART_ROWS) {
            if !protocols.contains(&c.cell.protocol) {
                protocols.push(c.cell.protocol.clone());
            }
        }
        let legend = palette::sort_protocols(protocols)
            .into_iter()
            .map(|p| {
                let c = rgb(palette::protocol_colour(&p));
                (p, c)
            })
            .collect();
        let from_zero = sig.len() - finite.len();
        let mut subtitle = format!(
            "B = {} vs A = {}: {} of {} tests significant",
            cmp.b.dir.display(),
            cmp.a.dir.display(),
            sig.len(),
            cmp.changes.len()
        );
        if !cmp.opts.ignore.is_empty() {
            subtitle.push_str(&format!(
                "; cells matched ignoring {} (rows name A's cell)",
                cmp.opts.ignore.join(", ")
            ));
        }
        if finite.len() > CHART_ROWS {
            subtitle.push_str(&format!("; the {CHART_ROWS} largest shown"));
        }
        if from_zero > 0 {
            subtitle.push_str(&format!(
                "; {from_zero} changes from 0 are in the table only"
            ));
        }
        ChangeChart {
            title: format!(
                "Significant changes, (B − A) / A, with {}% bootstrap intervals",
                fmt_num(cmp.opts.level * 100.0)
            ),
            subtitle,
            rows,
            legend,
            note: if sig.is_empty() {
                "no significant change".into()
            } else {
                "every significant change is from 0 (see COMPARE.md)".into()
            },
        }
    }
}

impl Chart for ChangeChart {
    fn size(&self) -> (u32, u32) {
        (1400, 260 + 34 * self.rows.len().max(4) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let body = frame(root, &self.title, &self.subtitle, &self.legend, Swatch::Bar)?;
        if self.rows.is_empty() {
            return charts::empty_panel(&body, "", &self.note);
        }
        draw_forest(&body, &self.rows)
    }
}

fn draw_forest<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    rows: &[(String, RGBColor, f64, f64, f64)],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let m = rows.len();
    let lo = rows.iter().map(|r| r.3.min(r.2)).fold(0.0, f64::min);
    let hi = rows.iter().map(|r| r.4.max(r.2)).fold(0.0, f64::max);
    let pad = ((hi - lo) * 0.06).max(1.0);
    let (x0, x1) = (lo - pad, hi + pad);
    let style = text_style(15);
    let mut label_w = 80;
    for r in rows {
        label_w = label_w.max(area.estimate_text_size(&r.0, &style)?.0 + 20);
    }
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .margin_right(40)
        .x_label_area_size(58)
        .y_label_area_size(label_w)
        .build_cartesian_2d(x0..x1, 0f64..m as f64)?;
    chart
        .configure_mesh()
        .x_desc("change relative to A (%)")
        .axis_desc_style(text_style(20))
        .label_style(text_style(17))
        .x_label_formatter(&|v| format!("{}%", compact(*v)))
        .y_labels(0)
        .x_labels(10)
        .disable_y_mesh()
        .max_light_lines(1)
        .light_line_style(RGBColor(242, 242, 242))
        .bold_line_style(RGBColor(215, 215, 215))
        .draw()?;
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(0.0, 0.0), (0.0, m as f64)],
        RGBColor(90, 90, 90).stroke_width(2),
    )))?;
    let (ax, ay) = area.get_base_pixel();
    for (i, (label, colour, v, l, h)) in rows.iter().enumerate() {
        let y = (m - 1 - i) as f64 + 0.5;
        let (px, py) = chart.backend_coord(&(x0, y));
        area.draw(&Text::new(
            label.clone(),
            (px - ax - 10, py - ay),
            style.clone().pos(Pos::new(HPos::Right, VPos::Center)),
        ))?;
        let cap = 0.22;
        chart.draw_series([
            PathElement::new(vec![(*l, y), (*h, y)], colour.stroke_width(3)),
            PathElement::new(vec![(*l, y - cap), (*l, y + cap)], colour.stroke_width(2)),
            PathElement::new(vec![(*h, y - cap), (*h, y + cap)], colour.stroke_width(2)),
        ])?;
        chart.draw_series(std::iter::once(Circle::new((*v, y), 6, colour.filled())))?;
        chart.draw_series(std::iter::once(
            EmptyElement::at((*h, y))
                + Text::new(
                    format!("{:+.1}%", v),
                    (8, 0),
                    text_style(14)
                        .color(&RGBColor(50, 50, 50))
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                ),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng() -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(7)
    }

    #[test]
    fn identical_samples_give_an_interval_around_zero() {
        let xs: Vec<f64> = (0..50).map(|i| (i * 37 % 101) as f64).collect();
        for s in [Statistic::Mean, Statistic::Median] {
            let (lo, hi) = bootstrap(&xs, &xs, s, &CompareOptions::default(), &mut rng());
            assert!(lo < 0.0 && hi > 0.0, "{s:?}: [{lo}, {hi}]");
        }
    }

    #[test]
    fn a_shift_is_inside_its_interval_and_excludes_zero() {
        let a: Vec<f64> = (0..60).map(|i| 100.0 + (i * 13 % 50) as f64).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 40.0).collect();
        for s in [Statistic::Mean, Statistic::Median] {
            let (lo, hi) = bootstrap(&a, &b, s, &CompareOptions::default(), &mut rng());
            assert!(lo > 0.0 && lo <= 40.0 && hi >= 40.0, "{s:?}: [{lo}, {hi}]");
        }
    }

    #[test]
    fn the_resampled_median_is_the_type7_median() {
        // With every draw the same index set, resample's median must equal `point`.
        for n in [5usize, 6, 7, 10] {
            let xs: Vec<f64> = (0..n).map(|i| ((i * 7) % n) as f64 * 1.5).collect();
            let mut buf = Vec::new();
            let mut r = rng();
            for _ in 0..50 {
                let mut copy = r.clone();
                let got = resample(&xs, Statistic::Median, &mut buf, &mut r);
                let drawn: Vec<f64> = (0..n).map(|_| xs[copy.random_range(0..n)]).collect();
                assert_eq!(got, point(&drawn, Statistic::Median), "n = {n}");
            }
        }
    }

    #[test]
    fn metrics_apply_where_they_mean_something() {
        assert!(!Metric::FailoverP50.applies("cold-start"));
        assert!(Metric::FailoverP50.applies("leader-crash"));
        assert!(Metric::ElectP50.applies("cold-start"));
        assert!(!Metric::ElectP50.applies("leader-crash"));
        assert!(Metric::SplitBrainRate.applies("cold-start"));
    }
}
