//! The reality page (`reports/reality/`): a real etcd run (`election-bench reality`) beside the
//! simulator's prediction of the matching system spec under the same timing.
//!
//! How it is built:
//!
//! * the real side is the run's results directory, read as any results directory
//!   ([`Results::load`]: its `manifest.json` has `config.mode = "real"`, its rows are
//!   `mode = real`), plus its `reality.csv` (per trial: the terms the failover took, the
//!   (pre-)candidacies, the votes ignored within a leader's lease, the check-quorum
//!   step-downs, the load, what the logs show for each lost term);
//! * the prediction is **computed here**, never read from a file or typed: for every real cell,
//!   the same system spec (`protocol` of the real rows), cluster size and scenario, on the
//!   `ideal` network, at the run's timing (`heartbeat_ms = H`, `detect_timeout_ms =
//!   detect_jitter_ms = E`, as `election-reality`'s `plan_cell` sets them), simulated for
//!   [`PageOptions::seeds`] seeds — the cells `election-bench sweep --protocols SPEC --nets ideal
//!   --set heartbeat_ms=H --set detect_timeout_ms=E --set detect_jitter_ms=E` runs;
//! * cells are matched by (system spec, nodes, scenario), as `compare` matches a real run
//!   ([`crate::compare`]'s module docs); the ratio of the real p50 (p95) of `failover_ms` to the
//!   predicted one gets the compare module's percentile bootstrap interval
//!   ([`quantile_ratio`]);
//! * an experiment whose p50 is off by more than [`P50_BAND`] or whose p95 is off by more than
//!   [`P95_BAND`] gets a line naming what differs: the share of failovers that took a second
//!   term and what their logs show (a vote ignored within the lease, a split vote), the time
//!   to the first candidacy, or the deposed leader's lingering.
//!
//! Analysis first ([`analyse`] returns typed [`Experiment`]s, no text), then the document.

use std::fs;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::compare::{quantile_ratio, CompareOptions, Ratio, MIN_SAMPLES};
use crate::data::{fmt_num, percentile, CellKey, Results, TrialRow};
use crate::doc::{code, spans, strong, text, Align, Block, Cell, Document, Inline, Table};
use crate::error::ReportError;

/// The p50 of an experiment is "as predicted" within this fraction of the prediction.
pub const P50_BAND: f64 = 0.20;

/// The p95 of an experiment is "as predicted" within this fraction of the prediction.
pub const P95_BAND: f64 = 0.25;

/// How the page is made.
#[derive(Clone, Debug, PartialEq)]
pub struct PageOptions {
    /// Simulated seeds per predicted cell.
    pub seeds: u64,
    /// The bootstrap of the ratios (resamples, level, seed).
    pub bootstrap: CompareOptions,
}

impl Default for PageOptions {
    fn default() -> Self {
        PageOptions {
            seeds: 1000,
            bootstrap: CompareOptions::default(),
        }
    }
}

/// One trial's `reality.csv` record, as far as the page reads it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RealTrial {
    /// Cluster size.
    pub nodes: u32,
    /// Scenario.
    pub scenario: String,
    /// Trial number within its cell (the row's `seed`).
    pub seed: u64,
    /// The member the fault hit (1-based).
    pub target: u32,
    /// Terms the failover took (new leader's term minus the old one's).
    pub terms: Option<u64>,
    /// `became candidate` lines in the failover.
    pub candidacies: u32,
    /// Votes ignored within a leader's lease in the failover.
    pub votes_ignored: u32,
    /// CheckQuorum step-downs after the fault.
    pub stepped_down: u32,
    /// The 1-minute load at the fault.
    pub load1: Option<f64>,
    /// What the logs show for each lost term (empty: none lost, or a run written before the
    /// column existed).
    pub lost_terms: String,
    /// Its `failover_ms` (from `trials.csv`; `None` as read from `reality.csv`).
    pub failover_ms: Option<f64>,
}

/// `reality.csv` of `dir`.
pub fn load_reality_csv(dir: &Path) -> Result<Vec<RealTrial>, ReportError> {
    let path = dir.join("reality.csv");
    let text = fs::read_to_string(&path).map_err(|e| ReportError::io(&path, e))?;
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let bad = |reason: String| ReportError::Csv {
        path: path.clone(),
        reason,
    };
    let header: Vec<String> = r
        .headers()
        .map_err(|e| bad(e.to_string()))?
        .iter()
        .map(String::from)
        .collect();
    let col = |k: &str| header.iter().position(|h| h == k);
    let need = |k: &str| col(k).ok_or_else(|| bad(format!("no column {k}")));
    let (n, sc, seed, target) = (
        need("nodes")?,
        need("scenario")?,
        need("seed")?,
        need("target")?,
    );
    let (terms, cand, ign, down) = (
        need("terms")?,
        need("candidacies")?,
        need("votes_ignored")?,
        need("stepped_down")?,
    );
    let (load1, lost) = (col("load1"), col("lost_terms"));
    let mut out = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| bad(e.to_string()))?;
        let num = |c: usize| -> Result<u64, ReportError> {
            rec[c].parse().map_err(|_| {
                bad(format!(
                    "line {}: column {} = {:?} is not a number",
                    i + 2,
                    header[c],
                    &rec[c]
                ))
            })
        };
        out.push(RealTrial {
            nodes: num(n)? as u32,
            scenario: rec[sc].to_string(),
            seed: num(seed)?,
            target: num(target)? as u32,
            terms: rec[terms].parse().ok(),
            candidacies: num(cand)? as u32,
            votes_ignored: num(ign)? as u32,
            stepped_down: num(down)? as u32,
            load1: load1.and_then(|c| rec[c].parse().ok()),
            lost_terms: lost.map(|c| rec[c].to_string()).unwrap_or_default(),
            failover_ms: None,
        });
    }
    Ok(out)
}

/// A sample's p50 and p95 (`None` when empty).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quantiles {
    /// Values.
    pub n: usize,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Largest value.
    pub max: f64,
}

fn quantiles(xs: &[f64]) -> Option<Quantiles> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| Quantiles {
        n: v.len(),
        p50: percentile(&v, 0.5),
        p95: percentile(&v, 0.95),
        max: v[v.len() - 1],
    })
}

/// A share: `k` of `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    /// How many.
    pub k: usize,
    /// Of how many.
    pub n: usize,
}

impl Share {
    fn of<T>(xs: &[T], f: impl Fn(&T) -> bool) -> Share {
        Share {
            k: xs.iter().filter(|x| f(x)).count(),
            n: xs.len(),
        }
    }
    /// `k / n` (0 when empty).
    pub fn rate(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.k as f64 / self.n as f64
        }
    }
}

/// One experiment (fault × cluster size), real beside predicted.
#[derive(Clone, Debug, PartialEq)]
pub struct Experiment {
    /// The real cell.
    pub key: CellKey,
    /// Does the scenario cut links (the deposed leader can linger)?
    pub cuts_links: bool,
    /// Real trials (rows).
    pub real_trials: usize,
    /// Predicted trials (seeds).
    pub pred_trials: usize,
    /// `failover_ms` of the measured real trials that have one.
    pub real: Option<Quantiles>,
    /// The same, predicted.
    pub pred: Option<Quantiles>,
    /// Real p50 / predicted p50, with its interval.
    pub p50: Option<Ratio>,
    /// Real p95 / predicted p95, with its interval.
    pub p95: Option<Ratio>,
    /// `detect_ms` (the first candidacy after the fault), real and predicted.
    pub detect: (Option<Quantiles>, Option<Quantiles>),
    /// `minority_leader_ms`, the deposed leader's lingering, real and predicted.
    pub lingering: (Option<Quantiles>, Option<Quantiles>),
    /// Failovers with more than one election started (the observer's `elections_started` ≥
    /// 2), real and predicted: the same definition on both sides.
    pub more_elections: (Share, Share),
    /// Real failovers that took a second term (the logs: `terms` ≥ 2).
    pub second_term: Share,
    /// The real trials that took a second term.
    pub lost: Vec<RealTrial>,
    /// Of those, how many logs show a vote ignored within the lease, and a split vote.
    pub lost_by: (usize, usize),
    /// Trials whose leader stepped down by CheckQuorum.
    pub stepped_down: Share,
    /// The slowest real failovers the p95 lies among (`k` of them, the linear-interpolation
    /// p95 of `n` values sitting between positions `floor(0.95 (n - 1))` and the next), and how
    /// many of those needed more than one election.
    pub slow_tail: (usize, usize),
}

impl Experiment {
    /// p50 within [`P50_BAND`] and p95 within [`P95_BAND`] of the prediction.
    pub fn as_predicted(&self) -> Option<bool> {
        Some(self.p50?.within(P50_BAND) && self.p95?.within(P95_BAND))
    }
}

/// The run's settings and machine, from its manifest's `config.run` (`run.json`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Machine {
    /// `etcd --version`.
    pub etcd_version: String,
    /// The system spec the rows are compared with.
    pub protocol: String,
    /// `--heartbeat-interval`, ms.
    pub heartbeat_ms: u64,
    /// `--election-timeout`, ms.
    pub election_ms: u64,
    /// `--pre-vote`.
    pub pre_vote: bool,
    /// Host name.
    pub host: String,
    /// Cores.
    pub cores: u64,
    /// Lowest and highest 1-minute load at a fault.
    pub load: Option<(f64, f64)>,
    /// Start, ms since the Unix epoch.
    pub started_unix_ms: Option<i64>,
    /// The command that made the run.
    pub command: String,
}

/// The page's analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// Where the run is.
    pub dir: PathBuf,
    /// Its machine and settings.
    pub machine: Machine,
    /// Each experiment, in the run's cell order.
    pub experiments: Vec<Experiment>,
    /// Seeds per predicted cell.
    pub seeds: u64,
}

fn column(rows: &[&TrialRow], f: impl Fn(&TrialRow) -> Option<f64>) -> Vec<f64> {
    rows.iter()
        .filter(|t| t.measured())
        .filter_map(|t| f(t))
        .collect()
}

/// The predicted rows of the real cell `key` at the run's timing (module docs).
fn predict(
    key: &CellKey,
    m: &Machine,
    seeds: u64,
) -> Result<Vec<election_runner::results::TrialRow>, ReportError> {
    let e = m.election_ms.to_string();
    let mut spec = election_runner::SweepSpec {
        name: Some("reality-prediction".into()),
        params: vec![
            ("heartbeat_ms".into(), vec![m.heartbeat_ms.to_string()]),
            ("detect_timeout_ms".into(), vec![e.clone()]),
            ("detect_jitter_ms".into(), vec![e]),
        ],
        ..election_runner::SweepSpec::default()
    }
    .one_cell(&key.protocol, key.nodes, &key.scenario, "ideal");
    spec.seeds = Some(seeds);
    let runner = |e: election_runner::Error| ReportError::Usage(format!("the prediction: {e}"));
    let plan = spec.plan().map_err(runner)?;
    let cell = plan
        .runnable_cell(|c, why| {
            format!(
                "{} with {} nodes cannot run {}: {why}",
                c.protocol.spec, key.nodes, key.scenario
            )
        })
        .map_err(runner)?;
    plan.seed_range()
        .collect::<Vec<u64>>()
        .par_iter()
        .map(|&s| cell.run(s, false).map(|t| t.row).map_err(runner))
        .collect()
}

fn machine(r: &Results, trials: &[RealTrial]) -> Machine {
    let run = &r.manifest.config["run"];
    let loads: Vec<f64> = trials.iter().filter_map(|t| t.load1).collect();
    let load = (!loads.is_empty()).then(|| {
        (
            loads.iter().cloned().fold(f64::INFINITY, f64::min),
            loads.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        )
    });
    Machine {
        etcd_version: run["etcd_version"].as_str().unwrap_or("?").into(),
        protocol: run["protocol"].as_str().unwrap_or("?").into(),
        heartbeat_ms: run["heartbeat_ms"].as_u64().unwrap_or(100),
        election_ms: run["election_ms"].as_u64().unwrap_or(1000),
        pre_vote: run["pre_vote"] == true,
        host: run["host"].as_str().unwrap_or("?").into(),
        cores: run["cores"].as_u64().unwrap_or(0),
        load,
        started_unix_ms: run["started_unix_ms"].as_i64(),
        command: r.manifest.command.clone(),
    }
}

/// Read the real run in `dir`, compute the prediction and compare them (module docs).
pub fn analyse(dir: &Path, opts: &PageOptions) -> Result<Analysis, ReportError> {
    let r = Results::load(dir)?;
    if !crate::compare::is_real(&r) {
        return Err(ReportError::Usage(format!(
            "{}: not a real run (its manifest's config.mode is not \"real\"; `election-bench reality` writes one)",
            dir.display()
        )));
    }
    let details = load_reality_csv(dir)?;
    let m = machine(&r, &details);
    let mut experiments = Vec::new();
    for s in &r.summary {
        let key = &s.key;
        let real: Vec<&TrialRow> = r.trials_of(key);
        let pred_rows = predict(key, &m, opts.seeds)?;
        let pred: Vec<&election_runner::results::TrialRow> = pred_rows.iter().collect();
        let pcol = |f: &dyn Fn(&election_runner::results::TrialRow) -> Option<f64>| -> Vec<f64> {
            pred.iter()
                .filter(|t| t.measured())
                .filter_map(|t| f(t))
                .collect()
        };
        let (rf, pf) = (column(&real, |t| t.failover_ms), pcol(&|t| t.failover_ms));
        let label = format!("{} n={} {}", key.protocol, key.nodes, key.scenario);
        let mine: Vec<RealTrial> = details
            .iter()
            .filter(|t| t.nodes == key.nodes && t.scenario == key.scenario)
            .map(|t| RealTrial {
                failover_ms: real
                    .iter()
                    .find(|r| r.seed == t.seed)
                    .and_then(|r| r.failover_ms),
                ..t.clone()
            })
            .collect();
        let lost: Vec<RealTrial> = mine
            .iter()
            .filter(|t| t.terms.is_some_and(|k| k >= 2))
            .cloned()
            .collect();
        let cuts_links = r.scenario_kind(&key.scenario).is_some_and(|k| k.cuts_links);
        experiments.push(Experiment {
            key: key.clone(),
            cuts_links,
            real_trials: real.len(),
            pred_trials: pred.len(),
            real: quantiles(&rf),
            pred: quantiles(&pf),
            p50: quantile_ratio(&pf, &rf, 0.5, &opts.bootstrap, &label),
            p95: quantile_ratio(&pf, &rf, 0.95, &opts.bootstrap, &label),
            detect: (
                quantiles(&column(&real, |t| t.detect_ms)),
                quantiles(&pcol(&|t| t.detect_ms)),
            ),
            lingering: (
                quantiles(&column(&real, |t| Some(t.minority_leader_ms))),
                quantiles(&pcol(&|t| Some(t.minority_leader_ms))),
            ),
            more_elections: (
                Share::of(&real, |t| t.measured() && t.elections_started >= 2),
                Share::of(&pred, |t| t.measured() && t.elections_started >= 2),
            ),
            second_term: Share {
                k: lost.len(),
                n: mine.iter().filter(|t| t.terms.is_some()).count(),
            },
            lost_by: (
                lost.iter()
                    .filter(|t| t.lost_terms.contains("lease is not expired"))
                    .count(),
                lost.iter()
                    .filter(|t| t.lost_terms.contains("split vote"))
                    .count(),
            ),
            stepped_down: Share::of(&mine, |t| t.stepped_down > 0),
            slow_tail: slow_tail(&real),
            lost,
        });
    }
    Ok(Analysis {
        dir: dir.to_path_buf(),
        machine: m,
        experiments,
        seeds: opts.seeds,
    })
}

/// The spans with the code marks of their text read (`` `x` `` in a sentence is code).
fn marked(v: Vec<Inline>) -> Vec<Inline> {
    v.into_iter()
        .flat_map(|i| match i {
            Inline::Text(s) if s.contains('`') => spans(&s),
            other => vec![other],
        })
        .collect()
}

fn ms(x: f64) -> String {
    fmt_num(x.round())
}

fn ratio_text(r: Option<Ratio>) -> String {
    match r {
        Some(r) => format!("{:.2} [{:.2}, {:.2}]", r.point, r.lo, r.hi),
        None => "–".into(),
    }
}

/// The slowest measured failovers the p95 lies among, and how many of them needed more than
/// one election ([`Experiment::slow_tail`]).
fn slow_tail(real: &[&TrialRow]) -> (usize, usize) {
    let mut f: Vec<(f64, bool)> = real
        .iter()
        .filter_map(|t| t.failover_ms.map(|ms| (ms, t.elections_started >= 2)))
        .collect();
    if f.is_empty() {
        return (0, 0);
    }
    f.sort_by(|a, b| b.0.total_cmp(&a.0));
    let tail = f.len() - ((f.len() - 1) as f64 * 0.95).floor() as usize;
    (tail, f[..tail].iter().filter(|x| x.1).count())
}

/// The binomial probability of `k` or fewer (`lower`) or `k` or more successes in `n` trials
/// of probability `p`.
fn binomial_tail(n: usize, k: usize, p: f64, lower: bool) -> f64 {
    let mut pmf = (1.0 - p).powi(n as i32);
    let mut sum = 0.0;
    for i in 0..=n {
        if (lower && i <= k) || (!lower && i >= k) {
            sum += pmf;
        }
        // P(i + 1) = P(i) (n - i) / (i + 1) p / (1 - p).
        if p < 1.0 {
            pmf *= (n - i) as f64 / (i + 1) as f64 * p / (1.0 - p);
        }
    }
    if p >= 1.0 {
        // Every trial succeeds.
        return if !lower || k >= n { 1.0 } else { 0.0 };
    }
    sum.min(1.0)
}

fn pct(s: Share) -> String {
    format!("{} of {} ({:.0} %)", s.k, s.n, 100.0 * s.rate())
}

fn fault_of(scenario: &str) -> &str {
    match scenario {
        "leader-crash" => "kill",
        "leader-pause" => "pause",
        "partition-leader-minority" => "partition",
        other => other,
    }
}

/// The experiment's name: `kill, 3 members`.
fn name(e: &Experiment) -> String {
    format!("{}, {} members", fault_of(&e.key.scenario), e.key.nodes)
}

/// The rule or quantity that differs, for an experiment off its band (module docs).
fn differs(e: &Experiment, m: &Machine) -> Vec<Inline> {
    let mut out = vec![strong(name(e)), text(": ")];
    let (rp, pp) = (e.p50.map(|r| r.point), e.p95.map(|r| r.point));
    out.push(text(format!(
        "p50 {} ({}), p95 {} ({}). ",
        rp.map_or("–".into(), |x| format!("{x:.2}×")),
        if e.p50.is_some_and(|r| r.within(P50_BAND)) {
            "within 20 %"
        } else {
            "outside 20 %"
        },
        pp.map_or("–".into(), |x| format!("{x:.2}×")),
        if e.p95.is_some_and(|r| r.within(P95_BAND)) {
            "within 25 %"
        } else {
            "outside 25 %"
        },
    )));
    // A band missed by the point estimate alone: say whether the interval still holds 1.
    for (q, r, band) in [("p50", e.p50, P50_BAND), ("p95", e.p95, P95_BAND)] {
        if let Some(r) = r.filter(|r| !r.within(band)) {
            out.push(text(if r.lo <= 1.0 && 1.0 <= r.hi {
                format!(
                    "The {q} ratio's 95 % interval [{:.2}, {:.2}] holds 1: with {} real trials the difference is within the sampling noise. ",
                    r.lo, r.hi, e.real_trials
                )
            } else {
                format!(
                    "The {q} ratio's 95 % interval [{:.2}, {:.2}] excludes 1. ",
                    r.lo, r.hi
                )
            }));
        }
    }
    let (rm, pm) = e.more_elections;
    let p95_off = e.p95.is_some_and(|r| !r.within(P95_BAND));
    if !e.cuts_links && ((rm.rate() - pm.rate()).abs() >= 0.05 || p95_off) {
        out.push(text(format!(
            "More than one election in {} real failovers against {:.0} % predicted ({:.1} of {} expected; at the predicted rate, {} or {} of {} happen with probability {:.0} %). ",
            pct(rm),
            100.0 * pm.rate(),
            pm.rate() * rm.n as f64,
            rm.n,
            rm.k,
            if rm.rate() <= pm.rate() { "fewer" } else { "more" },
            rm.n,
            100.0 * binomial_tail(rm.n, rm.k, pm.rate(), rm.rate() <= pm.rate()),
        )));
        let (tail, multi) = e.slow_tail;
        if p95_off && tail > 0 {
            out.push(text(format!(
                "The p95 of {} failovers lies among the slowest {tail}; {multi} of those needed more than one election. ",
                e.real.map_or(0, |q| q.n)
            )));
        }
    }
    if e.second_term.k > 0 {
        out.push(text(format!(
            "{} took a second term; the logs show a vote ignored within the leader lease in {} (",
            pct(e.second_term),
            e.lost_by.0
        )));
        out.push(code("ignored MsgVote ... lease is not expired"));
        out.push(text(
            ": raft.go Step's inLease rule, a member that heard from a leader within the last election timeout ignores a vote request, so the first candidate loses the vote of a member whose timer has ticks left, which then stands at the same term) and a split vote in ",
        ));
        out.push(text(format!("{}. ", e.lost_by.1)));
    }
    if let (Some(rd), Some(pd)) = e.detect {
        if (rd.p50 / pd.p50 - 1.0).abs() > P50_BAND {
            out.push(text(format!(
                "The first candidacy comes {} ms after the fault at p50 against {} ms predicted (",
                ms(rd.p50),
                ms(pd.p50)
            )));
            out.push(code("detect_ms"));
            out.push(text(format!(
                "; the randomized election timeout of {}–{} ms after the last heartbeat). ",
                m.election_ms,
                2 * m.election_ms
            )));
        }
    }
    if e.cuts_links {
        if let (Some(rl), Some(pl)) = e.lingering {
            out.push(text(format!(
                "The deposed leader lingers {} ms at p50 against {} ms predicted (",
                ms(rl.p50),
                ms(pl.p50)
            )));
            out.push(code("minority_leader_ms"));
            out.push(text("; CheckQuorum's step-down). "));
        }
    }
    if let Some(Inline::Text(last)) = out.last_mut() {
        *last = last.trim_end().to_string();
    }
    out
}

impl Analysis {
    /// The experiments whose p50 or p95 is outside its band ([`Experiment::as_predicted`]).
    pub fn outside_bands(&self) -> Vec<&Experiment> {
        self.experiments
            .iter()
            .filter(|e| e.as_predicted() == Some(false))
            .collect()
    }

    /// The page.
    pub fn document(&self) -> Document {
        let m = &self.machine;
        let mut d = Document::new(format!(
            "Reality check: etcd {} beside {}",
            m.etcd_version, m.protocol
        ));
        let load = m
            .load
            .map_or("not recorded".into(), |(a, b)| format!("{a:.2} to {b:.2}"));
        let trials: usize = self.experiments.iter().map(|e| e.real_trials).sum();
        d.paragraph(marked(vec![
            text("Written by "),
            code("election-bench reality"),
            text(" at the end of its run, or by "),
            code(format!("election-bench report --results {}", self.dir.display())),
            text(format!(
                " from its files: one real run of {trials} trials: etcd {} (as `etcd --version` reports it) on host {}, {} cores, 1-minute load {load} at the faults; {}/{} ms (heartbeat/election timeout){}. Made by ",
                m.etcd_version,
                m.host,
                m.cores,
                m.heartbeat_ms,
                m.election_ms,
                if m.pre_vote { ", --pre-vote" } else { ", pre-vote off" },
            )),
            code(m.command.as_str()),
            text(". A real run is a sample of one machine at one time: running it again gives other numbers, so this page is not regenerated byte for byte; the prediction beside it is computed by the page (deterministic)."),
        ]));
        d.paragraph(marked(vec![text(format!(
            "The prediction is the system spec `{}` at the same timing, simulated by the page for {} seeds per experiment on the `ideal` network: the cells of ",
            m.protocol, self.seeds
        )), code(format!(
            "election-bench sweep --protocols {} --nets ideal --set heartbeat_ms={} --set detect_timeout_ms={} --set detect_jitter_ms={} --seeds {}",
            m.protocol, m.heartbeat_ms, m.election_ms, m.election_ms, self.seeds
        )), text(format!(
            " with the run's sizes and scenarios. Cells are matched by (system spec, nodes, scenario), as `compare PREDICTION {}` matches them. Ratios are real / predicted, with a 95 % percentile bootstrap interval (each side resampled on its own, 2000 times). As predicted: p50 within 20 % and p95 within 25 %.",
            self.dir.display()
        ))]));

        d.heading(2, vec![text("Failover, real beside predicted")]);
        let mut t = Table::new([
            "experiment",
            "trials real / predicted",
            "p50 real ms",
            "p50 predicted ms",
            "p50 ratio [95 % CI]",
            "p95 real ms",
            "p95 predicted ms",
            "p95 ratio [95 % CI]",
            "as predicted",
        ])
        .aligned([
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Left,
        ]);
        for e in &self.experiments {
            let q = |x: Option<Quantiles>, f: fn(&Quantiles) -> f64| {
                x.map_or(Cell::text("–"), |q| {
                    Cell::text(ms(f(&q))).sorted_by(f(&q))
                })
            };
            t.rows.push(vec![
                Cell::text(name(e)),
                Cell::text(format!("{} / {}", e.real_trials, e.pred_trials)),
                q(e.real, |q| q.p50),
                q(e.pred, |q| q.p50),
                Cell::text(ratio_text(e.p50)),
                q(e.real, |q| q.p95),
                q(e.pred, |q| q.p95),
                Cell::text(ratio_text(e.p95)),
                Cell::text(match e.as_predicted() {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "–",
                }),
            ]);
        }
        d.push(Block::Table(t));

        let off = self.outside_bands();
        // An experiment without a ratio (too few failovers on a side) is neither as
        // predicted nor off: it is named as not judged.
        let unjudged: Vec<&Experiment> = self
            .experiments
            .iter()
            .filter(|e| e.as_predicted().is_none())
            .collect();
        d.heading(2, vec![text("What differs")]);
        if off.is_empty() && unjudged.is_empty() {
            d.paragraph(marked(vec![text(
                "Every experiment is as predicted (p50 within 20 %, p95 within 25 %).",
            )]));
        } else if off.is_empty() {
            d.paragraph(marked(vec![text(
                "No experiment that could be judged differs (p50 within 20 %, p95 within 25 %).",
            )]));
        } else {
            d.push(Block::list(
                off.iter().map(|e| marked(differs(e, m))).collect(),
            ));
        }
        if !unjudged.is_empty() {
            d.push(Block::list(
                unjudged
                    .iter()
                    .map(|e| {
                        marked(vec![
                            strong(name(e)),
                            text(format!(
                                ": not judged: {} real failovers (a ratio needs at least {MIN_SAMPLES} on each side and a p50 above 0).",
                                e.real.as_ref().map_or(0, |r| r.n)
                            )),
                        ])
                    })
                    .collect(),
            ));
        }

        d.heading(2, vec![text("Failovers that took more than one term")]);
        let mut t = Table::new([
            "experiment",
            "second term, real (logs: terms ≥ 2)",
            "more than one election, real",
            "more than one election, predicted",
            "of the real lost terms: vote ignored in lease / split vote",
        ])
        .aligned([
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
        ]);
        for e in &self.experiments {
            let (rm, pm) = e.more_elections;
            // A cut-off leader keeps standing on its side: elections_started counts those.
            let share = |s: Share| {
                if e.cuts_links {
                    Cell::text("– (counts the cut-off side's candidacies)")
                } else {
                    Cell::text(pct(s)).sorted_by(s.rate())
                }
            };
            t.rows.push(vec![
                Cell::text(name(e)),
                Cell::text(pct(e.second_term)).sorted_by(e.second_term.rate()),
                share(rm),
                share(pm),
                Cell::text(format!("{} / {}", e.lost_by.0, e.lost_by.1)),
            ]);
        }
        d.push(Block::Table(t));
        d.paragraph(marked(vec![
            text("\"More than one election\" is the observer's "),
            code("elections_started"),
            text(" ≥ 2 on both sides (one definition, real and simulated); \"second term\" is what the logs say: the new leader's term minus the old one's. For each real trial that took a second term, what its members' logs show for each lost term ("),
            code("lost_terms"),
            text(" of reality.csv; m1.. are the members, as in "),
            code("logs/nN/members.csv"),
            text("):"),
        ]));
        let mut t = Table::new([
            "experiment",
            "trial",
            "fault on",
            "failover ms",
            "terms",
            "candidacies",
            "votes ignored",
            "what the log shows",
        ])
        .aligned([
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Left,
        ]);
        for e in &self.experiments {
            for l in &e.lost {
                let fo = l.failover_ms;
                t.rows.push(vec![
                    Cell::text(name(e)),
                    Cell::text(l.seed.to_string()).sorted_by(l.seed as f64),
                    Cell::text(format!("m{}", l.target)),
                    fo.map_or(Cell::text("–"), |x| Cell::text(ms(x)).sorted_by(x)),
                    Cell::text(l.terms.map_or("–".into(), |k| k.to_string())),
                    Cell::text(l.candidacies.to_string()),
                    Cell::text(l.votes_ignored.to_string()),
                    Cell::text(if l.lost_terms.is_empty() {
                        "(not recorded: run `reality --replay DIR --write`)".to_string()
                    } else {
                        l.lost_terms.clone()
                    }),
                ]);
            }
        }
        if t.rows.is_empty() {
            d.paragraph(marked(vec![text("None.")]));
        } else {
            d.push(Block::Table(t));
        }

        let cut: Vec<&Experiment> = self.experiments.iter().filter(|e| e.cuts_links).collect();
        if !cut.is_empty() {
            d.heading(2, vec![text("The deposed leader's lingering (partitions)")]);
            d.paragraph(marked(vec![
                text("How long the cut-off leader still held the leader role after the cut ("),
                code("minority_leader_ms"),
                text(format!(
                    "): etcd 3.4 runs CheckQuorum, so it steps down once an election timeout ({} ms) passes without a quorum's replies.",
                    m.election_ms
                )),
            ]));
            let mut t = Table::new([
                "experiment",
                "p50 real ms",
                "p50 predicted ms",
                "max real ms",
                "max predicted ms",
                "stepped down (logs)",
            ])
            .aligned([
                Align::Left,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right,
            ]);
            for e in cut {
                let q = |x: Option<Quantiles>, f: fn(&Quantiles) -> f64| {
                    x.map_or(Cell::text("–"), |q| {
                        Cell::text(ms(f(&q))).sorted_by(f(&q))
                    })
                };
                t.rows.push(vec![
                    Cell::text(name(e)),
                    q(e.lingering.0, |q| q.p50),
                    q(e.lingering.1, |q| q.p50),
                    q(e.lingering.0, |q| q.max),
                    q(e.lingering.1, |q| q.max),
                    Cell::text(pct(e.stepped_down)),
                ]);
            }
            d.push(Block::Table(t));
        }

        d.heading(2, vec![text("Reproduce")]);
        d.push(Block::Code {
            lang: "sh".into(),
            text: format!(
                "{}\nelection-bench report --results {} --out reports/NAME\nelection-bench reality --replay {}   # the rows again from the logs",
                m.command,
                self.dir.display(),
                self.dir.display()
            ),
        });
        d
    }
}

/// Write `README.md`, `index.html` and `reality.csv` (the table of the page) into `out`.
pub fn write(analysis: &Analysis, out: &Path) -> Result<Vec<PathBuf>, ReportError> {
    fs::create_dir_all(out).map_err(|e| ReportError::io(out, e))?;
    let doc = analysis.document();
    let mut csv = String::from("nodes,scenario,trials_real,trials_predicted,p50_real_ms,p50_predicted_ms,p50_ratio,p50_ratio_lo,p50_ratio_hi,p95_real_ms,p95_predicted_ms,p95_ratio,p95_ratio_lo,p95_ratio_hi,second_term_real,more_elections_real,more_elections_predicted\n");
    for e in &analysis.experiments {
        let q =
            |x: Option<Quantiles>, f: fn(&Quantiles) -> f64| x.map_or(String::new(), |q| ms(f(&q)));
        let r = |x: Option<Ratio>| {
            x.map_or([String::new(), String::new(), String::new()], |r| {
                [
                    format!("{:.3}", r.point),
                    format!("{:.3}", r.lo),
                    format!("{:.3}", r.hi),
                ]
            })
        };
        let (p50, p95) = (r(e.p50), r(e.p95));
        csv.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3},{:.3},{:.3}\n",
            e.key.nodes,
            e.key.scenario,
            e.real_trials,
            e.pred_trials,
            q(e.real, |q| q.p50),
            q(e.pred, |q| q.p50),
            p50[0],
            p50[1],
            p50[2],
            q(e.real, |q| q.p95),
            q(e.pred, |q| q.p95),
            p95[0],
            p95[1],
            p95[2],
            e.second_term.rate(),
            e.more_elections.0.rate(),
            e.more_elections.1.rate(),
        ));
    }
    let mut files = Vec::new();
    for (name, body) in [
        ("README.md", doc.to_markdown()),
        ("index.html", doc.to_html(STYLE)),
        ("reality.csv", csv),
    ] {
        let p = out.join(name);
        election_runner::files::write_atomic(&p, body.as_bytes())
            .map_err(|e| ReportError::Usage(format!("{}: {e}", p.display())))?;
        files.push(p);
    }
    Ok(files)
}

const STYLE: &str = "body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 0 1.5em 4em; color: #1b1f24; } table { border-collapse: collapse; font-size: 13px; } th, td { border: 1px solid #d0d7de; padding: .25em .5em; vertical-align: top; } th { background: #f6f8fa; } code { background: #f2f4f6; padding: 0 .25em; } pre { background: #f6f8fa; padding: .8em; overflow-x: auto; }";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_tails() {
        // 20 trials at 9 %: 1 or fewer with probability 0.91^20 + 20 (0.09) 0.91^19.
        let want = 0.91f64.powi(20) + 20.0 * 0.09 * 0.91f64.powi(19);
        assert!((binomial_tail(20, 1, 0.09, true) - want).abs() < 1e-12);
        assert!((binomial_tail(20, 2, 0.09, false) - (1.0 - want)).abs() < 1e-12);
        assert!((binomial_tail(5, 5, 0.5, true) - 1.0).abs() < 1e-12);
        assert_eq!(binomial_tail(3, 1, 0.0, false), 0.0);
        assert_eq!(binomial_tail(3, 1, 1.0, true), 0.0);
        assert_eq!(binomial_tail(3, 3, 1.0, true), 1.0);
    }
}
