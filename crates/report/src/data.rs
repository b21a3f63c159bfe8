//! Loading a sweep's results directory (`trials.csv`, `summary.csv`, `manifest.json`, as
//! described in `results/README.md`) into the runner's typed rows and manifest
//! (`election_runner::results`: one schema for the writer and every reader), with the header
//! checked column by column so that a file of another schema is refused with the name of what
//! is missing, and a field that does not read as its type refused with its line, column and
//! value.
//!
//! Tables in the report print each statistic through the runner's formatter of its column
//! ([`SummaryRow::raw`]), the text the sweep wrote, so the report's numbers are the summary's
//! numbers, character for character.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::ReportError;

// The schema is the runner's: one definition of every column for the writer and every reader.
pub use election_runner::results::{
    Stat, SUMMARY_KEY_COLUMNS, SUMMARY_STAT_COLUMNS, TRIAL_KEY_COLUMNS, TRIAL_METRIC_COLUMNS,
};

/// What identifies a cell of the sweep as `summary.csv` names it: protocol spec, cluster size,
/// scenario, network profile and the values of the varied parameters (aligned with
/// [`Results::param_keys`]; empty text where a parameter does not apply). The runner's
/// [`election_runner::results::SummaryKey`].
pub use election_runner::results::SummaryKey as CellKey;

/// One row of `summary.csv`: the runner's typed row ([`election_runner::results::SummaryRow`],
/// through `Deref`: `key`, `stats`, `skipped`, `get`), read by the runner's reader, with each
/// statistic's text as the file prints it and the row's line for messages.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    row: election_runner::results::SummaryRow,
    /// Each statistic as printed, by [`Stat`] (the runner's formatting of the typed value).
    text: Vec<String>,
    /// 1-based line in the file, for messages.
    pub line: u64,
}

impl std::ops::Deref for SummaryRow {
    type Target = election_runner::results::SummaryRow;
    fn deref(&self) -> &Self::Target {
        &self.row
    }
}

impl SummaryRow {
    /// The report's row of the runner's `row`, read from `line`.
    pub fn new(row: election_runner::results::SummaryRow, line: u64) -> SummaryRow {
        let text = Stat::ALL.iter().map(|&s| row.text(s)).collect();
        SummaryRow { row, text, line }
    }
    /// The statistic's text exactly as the summary file prints it.
    pub fn raw(&self, s: Stat) -> &str {
        &self.text[s as usize]
    }
    /// Number of trials in the cell.
    pub fn trials(&self) -> u64 {
        self.stats.trials
    }
    /// Number of trials that underwent the scenario as described (every statistic is over
    /// these).
    pub fn measured(&self) -> u64 {
        self.stats.measured
    }
    /// Number of trials in which some fault did not apply.
    pub fn faults_skipped_trials(&self) -> u64 {
        self.stats.faults_skipped_trials
    }
    /// Number of trials stopped by their work budget.
    pub fn budget_exceeded(&self) -> u64 {
        self.stats.budget_exceeded
    }
    /// The statistic for prose ([`fmt_sig`]), or `–` if the cell is empty.
    pub fn prose(&self, s: Stat) -> String {
        self.get(s).map(fmt_sig).unwrap_or_else(|| "–".to_string())
    }
    /// True if the cell ran and measured something (not skipped, at least one measured trial).
    pub fn ran(&self) -> bool {
        self.skipped.is_empty() && self.measured() > 0
    }
}

/// A mean count for prose and chart labels: whole from 10 up, one decimal from 0.1, two
/// significant digits below (0.035, never a misleading 0).
pub fn fmt_count(v: f64) -> String {
    if v == 0.0 || v >= 10.0 || v == v.round() {
        format!("{v:.0}")
    } else if v >= 0.1 {
        format!("{v:.1}")
    } else {
        let digits = (-v.log10().floor()) as usize + 1;
        format!("{v:.digits$}").trim_end_matches('0').to_string()
    }
}

/// A number for prose: whole from 100 up, then three significant digits, trailing zeros
/// trimmed (157.415 → 157, 17.928 → 17.9, 1.547 → 1.55, 0.0349 → 0.0349). The summary
/// file keeps three decimals for machines; a reader needs no more digits than a 200-seed cell
/// supports.
pub fn fmt_sig(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    let decimals = if a >= 100.0 || a == 0.0 {
        0
    } else {
        (2 - a.log10().floor() as i32).max(0) as usize
    };
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

/// `v` rounded to what an interval of half-width `half` supports: to the power of ten at or
/// below `half` (157.415 with ±3.2 → 157; 1.5474 with ±0.3 → 1.5), and never to more digits
/// than [`fmt_sig`]'s three significant ones. Exact values (`half` = 0) get [`fmt_sig`];
/// an interval wider than the value supports one significant digit (0.0449 ± 0.05 → 0.04).
pub fn fmt_ci(v: f64, half: f64) -> String {
    if half.is_nan() || half <= 0.0 || !half.is_finite() {
        return fmt_sig(v);
    }
    if half >= v.abs() {
        // The interval is wider than the value: one significant digit is all it supports.
        if v == 0.0 {
            return "0".to_string();
        }
        let e = v.abs().log10().floor() as i32;
        let unit = 10f64.powi(e);
        let r = (v / unit).round() * unit;
        return if e >= 0 {
            format!("{r:.0}")
        } else {
            format!("{r:.*}", (-e) as usize)
        };
    }
    let exp = half.log10().floor() as i32;
    if exp >= 0 {
        let unit = 10f64.powi(exp);
        format!("{:.0}", (v / unit).round() * unit)
    } else {
        let d = (-exp) as usize;
        let s = format!("{v:.d$}");
        // Never more digits than fmt_sig would print.
        if s.len() > fmt_sig(v).len() {
            fmt_sig(v)
        } else {
            s
        }
    }
}

/// The distribution-free 95% interval of the `q`-quantile of a sorted sample (binomial order
/// statistics, normal approximation): `(lo, hi)` values of the sample
/// ([`election_runner::stats::quantile_ci`]).
pub fn quantile_ci(sorted: &[f64], q: f64) -> Option<(f64, f64)> {
    election_runner::stats::quantile_ci(sorted, q, Z95).map(|(lo, hi, _)| (lo, hi))
}

/// The mean of a sample and the half-width of its 95% normal interval (0 for one value;
/// [`election_runner::stats::mean_ci`]).
pub fn mean_ci(v: &[f64]) -> Option<(f64, f64)> {
    election_runner::stats::mean_ci(v).map(|(m, h)| (m, h.unwrap_or(0.0)))
}

pub use election_runner::stats::Z95;

/// Formats a number the way the runner writes it: three decimals, trailing zeros trimmed.
pub use election_runner::results::fmt_ms as fmt_num;

/// One row of `trials.csv`: the runner's row, read by the runner's own reader (one schema for
/// the writer and every reader), with its cell as the report groups it. Its fields are the
/// runner's ([`election_runner::results::TrialRow`], through `Deref`).
#[derive(Clone, Debug, PartialEq)]
pub struct TrialRow {
    /// The cell (without `mode`: a results directory holds one mode).
    pub key: CellKey,
    row: election_runner::results::TrialRow,
}

impl std::ops::Deref for TrialRow {
    type Target = election_runner::results::TrialRow;
    fn deref(&self) -> &Self::Target {
        &self.row
    }
}

impl TrialRow {
    /// A measurement: every fault applied, the budget held ([`election_runner::results::measured`]).
    pub fn measured(&self) -> bool {
        election_runner::results::measured(self.faults_skipped, self.budget_exceeded)
    }
}

/// `manifest.json`: the runner's typed manifest, written and read through one type.
pub use election_runner::results::Manifest;

/// A loaded results directory.
///
/// Read it, do not edit it: the trials of each cell are indexed once, on first use
/// ([`Results::trials_of`]); [`Results::only_protocol`] makes a filtered copy with its own index.
#[derive(Clone, Debug)]
pub struct Results {
    /// Where it was read from.
    pub dir: PathBuf,
    /// The manifest.
    pub manifest: Manifest,
    /// The varied parameters' names, in column order.
    pub param_keys: Vec<String>,
    /// Every summary row, in file order (the sweep's cell order).
    pub summary: Vec<SummaryRow>,
    /// Every trial, in file order.
    pub trials: Vec<TrialRow>,
    /// Each cell's trials (indices into `trials`, in file order), built on first use: the
    /// report asks for a cell's trials thousands of times, and a scan of every trial per
    /// question made it quadratic (two thirds of the default report's time).
    trial_index: std::sync::OnceLock<std::collections::HashMap<CellKey, Vec<usize>>>,
}

impl Results {
    /// Results from their parts (already checked, or made by the caller).
    pub fn new(
        dir: PathBuf,
        manifest: Manifest,
        param_keys: Vec<String>,
        summary: Vec<SummaryRow>,
        trials: Vec<TrialRow>,
    ) -> Results {
        Results {
            dir,
            manifest,
            param_keys,
            summary,
            trials,
            trial_index: std::sync::OnceLock::new(),
        }
    }

    /// A copy holding only the cells and trials of protocol spec `spec`.
    pub fn only_protocol(&self, spec: &str) -> Results {
        Results::new(
            self.dir.clone(),
            self.manifest.clone(),
            self.param_keys.clone(),
            self.summary
                .iter()
                .filter(|s| s.key.protocol == spec)
                .cloned()
                .collect(),
            self.trials
                .iter()
                .filter(|t| t.key.protocol == spec)
                .cloned()
                .collect(),
        )
    }

    /// What scenario `name`'s faults do: as the manifest records it, or, for results written
    /// before it did, as the runner's catalog says for a built-in.
    pub fn scenario_kind(&self, name: &str) -> Option<election_runner::scenario::ScenarioKind> {
        use election_runner::scenario::ScenarioKind;
        let recorded = self.manifest.config["scenarios"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["name"] == name))
            .and_then(|s| s.get("kind"))
            .map(|k| ScenarioKind {
                takes_leader: k["takes_leader"] == true,
                cuts_links: k["cuts_links"] == true,
                brings_back: k["brings_back"] == true,
                touches_services: k["touches_services"] == true,
            });
        recorded.or_else(|| {
            let sc = election_runner::scenario::Scenario::builtin(name)?;
            let lan = election_runner::net::NetProfile::builtin("lan")?;
            let r = election_runner::params::Resolved::resolve(&lan, &Default::default()).ok()?;
            Some(sc.kind(&r))
        })
    }

    /// The trials of a cell that every statistic is computed over: every fault applied and
    /// the work budget held.
    pub fn measured_trials_of(&self, key: &CellKey) -> Vec<&TrialRow> {
        self.trials_of(key)
            .into_iter()
            .filter(|t| t.measured())
            .collect()
    }

    /// Read and check `dir/{manifest.json,summary.csv,trials.csv}` (`trials.csv.gz` when
    /// `trials.csv` is absent).
    pub fn load(dir: &Path) -> Result<Results, ReportError> {
        if !dir.is_dir() {
            return Err(ReportError::MissingResults(dir.to_path_buf()));
        }
        let manifest = load_manifest(&dir.join("manifest.json"))?;
        let (param_keys, summary) = load_summary(&dir.join("summary.csv"))?;
        // `trials.csv`, or the committed `trials.csv.gz` when the plain file is absent.
        let (trial_params, trials) = load_trials(&election_runner::files::trials_file(dir))?;
        if trial_params != param_keys {
            return Err(ReportError::Inconsistent {
                path: dir.to_path_buf(),
                reason: format!(
                    "summary.csv varies [{}] but trials.csv varies [{}]",
                    param_keys.join(", "),
                    trial_params.join(", ")
                ),
            });
        }
        let results = Results::new(dir.to_path_buf(), manifest, param_keys, summary, trials);
        results.check_not_empty()?;
        results.check_consistent()?;
        Ok(results)
    }

    /// `summary.csv` agrees with `manifest.json` (cells, trials) and with `trials.csv` (each
    /// cell's trial count), and every statistic is in range: rates and interval bounds in
    /// [0, 1] with the interval around its rate, percentiles in order up to the maximum,
    /// times and counts non-negative, a skipped cell without trials or statistics. These hold
    /// for every summary the runner writes (rounding is monotonic, so orders survive it).
    fn check_consistent(&self) -> Result<(), ReportError> {
        let summary_path = self.dir.join("summary.csv");
        let inconsistent = |reason: String| ReportError::Inconsistent {
            path: self.dir.clone(),
            reason,
        };
        if self.manifest.cells != self.summary.len() as u64 {
            return Err(inconsistent(format!(
                "manifest.json says {} cells but summary.csv has {}",
                self.manifest.cells,
                self.summary.len()
            )));
        }
        let counted: u64 = self.summary.iter().map(SummaryRow::trials).sum();
        if self.manifest.trials != counted || counted != self.trials.len() as u64 {
            return Err(inconsistent(format!(
                "manifest.json says {} trials, summary.csv counts {counted} and trials.csv has {}",
                self.manifest.trials,
                self.trials.len()
            )));
        }
        let mut per_cell: std::collections::HashMap<&CellKey, u64> =
            std::collections::HashMap::new();
        for t in &self.trials {
            *per_cell.entry(&t.key).or_default() += 1;
        }
        for r in &self.summary {
            let bad = |s: Stat, reason: String| ReportError::OutOfRange {
                path: summary_path.clone(),
                line: r.line,
                column: s.column().to_string(),
                value: r.raw(s).to_string(),
                reason,
            };
            let trials = r.get(Stat::Trials).unwrap_or(-1.0);
            if trials < 0.0 || trials.fract() != 0.0 {
                return Err(bad(Stat::Trials, "is not a whole number of trials".into()));
            }
            let in_file = per_cell.get(&r.key).copied().unwrap_or(0);
            if in_file != r.trials() {
                return Err(bad(
                    Stat::Trials,
                    format!("but trials.csv has {in_file} trials of this cell"),
                ));
            }
            // Counts of trials, as opposed to statistics over them.
            let counts = [
                Stat::Trials,
                Stat::Measured,
                Stat::FaultsSkippedTrials,
                Stat::BudgetExceeded,
            ];
            for s in &counts[1..] {
                let v = r.get(*s).unwrap_or(-1.0);
                if v < 0.0 || v.fract() != 0.0 || v > trials {
                    return Err(bad(
                        *s,
                        format!("is not a whole number of trials between 0 and trials ({trials})"),
                    ));
                }
            }
            let statistic = |s: &&Stat| !counts.contains(s);
            if !r.skipped.is_empty() || r.trials() == 0 || r.measured() == 0 {
                if let Some(s) = Stat::ALL
                    .iter()
                    .filter(statistic)
                    .find(|&&s| r.get(s).is_some())
                {
                    return Err(bad(
                        *s,
                        "in a cell without measured trials (must be empty)".into(),
                    ));
                }
                if !r.skipped.is_empty() && r.trials() != 0 {
                    return Err(bad(Stat::Trials, "in a skipped cell (must be 0)".into()));
                }
                continue;
            }
            for s in Stat::ALL {
                if r.get(s).is_some_and(|v| v < 0.0) {
                    return Err(bad(s, "is negative".into()));
                }
            }
            if r.get(Stat::StaleRate).is_some_and(|v| v > 1.0) {
                return Err(bad(Stat::StaleRate, "is a rate above 1".into()));
            }
            for s in [
                Stat::ConvergedRate,
                Stat::SplitRate,
                Stat::SplitCiLo,
                Stat::SplitCiHi,
            ] {
                match r.get(s) {
                    None => return Err(bad(s, "is empty in a cell with trials".into())),
                    Some(v) if v > 1.0 => return Err(bad(s, "is a rate above 1".into())),
                    _ => {}
                }
            }
            let get = |s: Stat| r.get(s).unwrap_or(0.0);
            if get(Stat::SplitCiLo) > get(Stat::SplitRate) {
                return Err(bad(
                    Stat::SplitCiLo,
                    format!("is above split_brain_rate {}", r.raw(Stat::SplitRate)),
                ));
            }
            if get(Stat::SplitCiHi) < get(Stat::SplitRate) {
                return Err(bad(
                    Stat::SplitCiHi,
                    format!("is below split_brain_rate {}", r.raw(Stat::SplitRate)),
                ));
            }
            let converged = get(Stat::ConvergedRate) > 0.0;
            let elect = [
                Stat::ElectMean,
                Stat::ElectP5,
                Stat::ElectP50,
                Stat::ElectP95,
                Stat::ElectP99,
                Stat::ElectMax,
            ];
            // `elect_ms` needs a leader followed by every member that reaches it, which needs
            // a quorum leader: elect columns only where some trial converged (a converged
            // cell may still have none, e.g. under partial connectivity).
            if let Some(&s) = elect.iter().find(|&&s| r.get(s).is_some() && !converged) {
                return Err(bad(
                    s,
                    format!(
                        "is given but no trial converged (converged_rate {})",
                        r.raw(Stat::ConvergedRate)
                    ),
                ));
            }
            if elect.iter().any(|&s| r.get(s).is_some())
                != elect.iter().all(|&s| r.get(s).is_some())
            {
                return Err(bad(
                    Stat::ElectMean,
                    "the elect_ms columns must be all given or all empty".to_string(),
                ));
            }
            let msgs = [
                Stat::MsgsMean,
                Stat::MsgsP50,
                Stat::MsgsP95,
                Stat::MsgsP99,
                Stat::MsgsMax,
            ];
            if let Some(&s) = msgs.iter().find(|&&s| r.get(s).is_none()) {
                return Err(bad(s, "is empty in a cell with trials".into()));
            }
            for order in [&elect[1..], &msgs[1..]] {
                for w in order.windows(2) {
                    if let (Some(a), Some(b)) = (r.get(w[0]), r.get(w[1])) {
                        if a > b {
                            return Err(bad(
                                w[0],
                                format!("is above {} {}", w[1].column(), r.raw(w[1])),
                            ));
                        }
                    }
                }
            }
            if get(Stat::SameEpochMax).fract() != 0.0 {
                return Err(bad(Stat::SameEpochMax, "is not a whole number".into()));
            }
        }
        Ok(())
    }

    fn check_not_empty(&self) -> Result<(), ReportError> {
        if self.summary.is_empty() {
            return Err(ReportError::EmptySweep {
                path: self.dir.clone(),
                reason: "summary.csv has a header but no cells".into(),
            });
        }
        if !self
            .summary
            .iter()
            .any(|r| r.skipped.is_empty() && r.trials() > 0)
        {
            let reasons: Vec<&str> = self
                .summary
                .iter()
                .map(|r| r.skipped.as_str())
                .filter(|s| !s.is_empty())
                .collect();
            return Err(ReportError::EmptySweep {
                path: self.dir.clone(),
                reason: format!(
                    "every one of the {} cells was skipped or ran 0 trials{}",
                    self.summary.len(),
                    reasons
                        .first()
                        .map(|r| format!(" (first reason: {r})"))
                        .unwrap_or_default()
                ),
            });
        }
        if self.trials.is_empty() {
            return Err(ReportError::EmptySweep {
                path: self.dir.clone(),
                reason: "trials.csv has a header but no trials".into(),
            });
        }
        Ok(())
    }

    /// Protocol specs in the documented order (known specs first, then others in order of
    /// first appearance).
    pub fn protocols(&self) -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for r in &self.summary {
            if !seen.contains(&r.key.protocol) {
                seen.push(r.key.protocol.clone());
            }
        }
        crate::palette::sort_protocols(seen)
    }

    /// Scenarios in the sweep's order of first appearance.
    pub fn scenarios(&self) -> Vec<String> {
        first_appearance(self.summary.iter().map(|r| &r.key.scenario))
    }

    /// Network profiles in order of first appearance.
    pub fn nets(&self) -> Vec<String> {
        first_appearance(self.summary.iter().map(|r| &r.key.net))
    }

    /// Cluster sizes at which some cell ran, ascending.
    pub fn sizes(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .summary
            .iter()
            .filter(|r| r.ran())
            .map(|r| r.key.nodes)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The summary row of a cell.
    pub fn cell(&self, key: &CellKey) -> Option<&SummaryRow> {
        self.summary.iter().find(|r| &r.key == key)
    }

    /// The trials of a cell, in seed order as written.
    pub fn trials_of(&self, key: &CellKey) -> Vec<&TrialRow> {
        let index = self.trial_index.get_or_init(|| {
            let mut index: std::collections::HashMap<CellKey, Vec<usize>> =
                std::collections::HashMap::new();
            for (i, t) in self.trials.iter().enumerate() {
                index.entry(t.key.clone()).or_default().push(i);
            }
            index
        });
        // Only ever looked up, never iterated: the map's order cannot reach the output.
        index
            .get(key)
            .map(|is| is.iter().map(|&i| &self.trials[i]).collect())
            .unwrap_or_default()
    }

    /// The parameter values that can matter to `protocol`: a key named after a protocol
    /// family (`raft.timeout_ms`) is blanked for the other families, whose cells a sweep still
    /// repeats once per value.
    pub fn relevant_params(&self, protocol: &str, params: &[String]) -> Vec<String> {
        // The family of a system spec or bundle (`etcd@3.4`, `k8s-lease`) is the one it runs.
        let family = election_runner::protocol::ProtocolSpec::parse(protocol).map_or_else(
            |_| protocol.split('+').next().unwrap_or(protocol).to_string(),
            |s| s.kind.name().to_string(),
        );
        let family = family.as_str();
        self.param_keys
            .iter()
            .zip(params)
            .map(|(k, v)| match k.split_once('.') {
                Some((fam, _))
                    if ["bully", "ring", "raft", "lease"].contains(&fam) && fam != family =>
                {
                    String::new()
                }
                _ => v.clone(),
            })
            .collect()
    }

    /// A human label of the varied parameters of a cell (`raft.timeout_ms=150-300`), empty
    /// when nothing varies or nothing applies.
    pub fn params_label(&self, params: &[String]) -> String {
        self.param_keys
            .iter()
            .zip(params)
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
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

fn read_file(path: &Path) -> Result<String, ReportError> {
    if path.extension().is_some_and(|e| e == "gz") {
        // The committed trials (`trials.csv.gz`): decompressed whole, like a plain file.
        use std::io::Read;
        let f = fs::File::open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ReportError::MissingFile(path.to_path_buf()),
            _ => ReportError::io(path, e),
        })?;
        let mut s = String::new();
        flate2::read::GzDecoder::new(std::io::BufReader::new(f))
            .read_to_string(&mut s)
            .map_err(|e| ReportError::io(path, e))?;
        return Ok(s);
    }
    match fs::read_to_string(path) {
        Ok(s) => Ok(s),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(ReportError::MissingFile(path.to_path_buf()))
        }
        Err(e) => Err(ReportError::io(path, e)),
    }
}

fn load_manifest(path: &Path) -> Result<Manifest, ReportError> {
    Manifest::from_json(&read_file(path)?).map_err(|reason| ReportError::Manifest {
        path: path.to_path_buf(),
        reason,
    })
}

/// A CSV file's header, with the varied-parameter columns located between the fixed key
/// columns and the fixed metric columns.
struct Header {
    path: PathBuf,
    names: Vec<String>,
}

impl Header {
    fn find(&self, col: &str) -> Result<usize, ReportError> {
        self.names
            .iter()
            .position(|c| c == col)
            .ok_or_else(|| ReportError::Schema {
                path: self.path.clone(),
                column: col.to_string(),
                header: self.names.join(","),
            })
    }

    /// Checks the header is exactly `want`: the runner's readers take fields by position.
    fn exactly(&self, want: &[String]) -> Result<(), ReportError> {
        let names = &self.names;
        match (0..want.len().max(names.len())).find(|&i| want.get(i) != names.get(i)) {
            None => Ok(()),
            Some(i) => Err(ReportError::Csv {
                path: self.path.clone(),
                reason: format!(
                    "header column {} is {:?}, expected {:?} (the columns, in order: {})",
                    i + 1,
                    names.get(i).map_or("nothing", String::as_str),
                    want.get(i).map_or("nothing", String::as_str),
                    want.join(",")
                ),
            }),
        }
    }

    /// Checks every required column is present and returns the parameter columns (those
    /// strictly between `last_key` and `first_metric`).
    fn params(&self, keys: &[&str], metrics: &[&str]) -> Result<Vec<(String, usize)>, ReportError> {
        for c in keys.iter().chain(metrics) {
            self.find(c)?;
        }
        let lo = self.find(keys[keys.len() - 1])?;
        let hi = self.find(metrics[0])?;
        if hi <= lo {
            return Err(ReportError::Schema {
                path: self.path.clone(),
                column: format!("{} after {}", metrics[0], keys[keys.len() - 1]),
                header: self.names.join(","),
            });
        }
        Ok(((lo + 1)..hi).map(|i| (self.names[i].clone(), i)).collect())
    }
}

type CsvReader = csv::Reader<std::io::Cursor<Vec<u8>>>;

fn csv_reader(path: &Path) -> Result<(CsvReader, Header), ReportError> {
    let text = read_file(path)?;
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(std::io::Cursor::new(text.into_bytes()));
    let names: Vec<String> = rdr
        .headers()
        .map_err(|e| ReportError::Csv {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?
        .iter()
        .map(|s| s.trim().to_string())
        .collect();
    Ok((
        rdr,
        Header {
            path: path.to_path_buf(),
            names,
        },
    ))
}

fn records(rdr: &mut CsvReader, path: &Path) -> Result<Vec<(u64, csv::StringRecord)>, ReportError> {
    let mut out = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| ReportError::Csv {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let line = rec.position().map(|p| p.line()).unwrap_or(0);
        // A blank trailing line is not a row.
        if rec.len() == 1 && rec.get(0).is_some_and(|s| s.trim().is_empty()) {
            continue;
        }
        out.push((line, rec));
    }
    Ok(out)
}

fn load_summary(path: &Path) -> Result<(Vec<String>, Vec<SummaryRow>), ReportError> {
    let (mut rdr, header) = csv_reader(path)?;
    let params = header.params(&SUMMARY_KEY_COLUMNS, &SUMMARY_STAT_COLUMNS)?;
    let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
    header.exactly(&election_runner::results::summary_header(&names))?;
    let mut rows = Vec::new();
    for (line, rec) in records(&mut rdr, path)? {
        let fields: Vec<&str> = rec.iter().collect();
        let row = election_runner::results::SummaryRow::from_record(&fields, params.len())
            .map_err(|e| field_error(path, line, e))?;
        rows.push(SummaryRow::new(row, line));
    }
    Ok((params.into_iter().map(|(n, _)| n).collect(), rows))
}

/// A field the runner's reader refused, with the file and line.
fn field_error(path: &Path, line: u64, e: election_runner::results::FieldError) -> ReportError {
    if e.column.is_empty() {
        ReportError::Csv {
            path: path.to_path_buf(),
            reason: format!("line {line}: {}", e.reason),
        }
    } else {
        ReportError::Value {
            path: path.to_path_buf(),
            line,
            column: e.column,
            value: e.value,
            reason: e.reason,
        }
    }
}

fn load_trials(path: &Path) -> Result<(Vec<String>, Vec<TrialRow>), ReportError> {
    let (mut rdr, header) = csv_reader(path)?;
    let params = header.params(&TRIAL_KEY_COLUMNS, &TRIAL_METRIC_COLUMNS)?;
    let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
    header.exactly(&election_runner::results::trial_header(&names))?;
    // The records are split serially (the CSV reader), then parsed in parallel: the default
    // sweep's 212,800 rows are most of the report's time. Each record's result keeps its
    // place, so the error reported is the first bad line's, as a serial parse would give.
    let parse = |(line, rec): (u64, csv::StringRecord)| -> Result<TrialRow, ReportError> {
        let fields: Vec<&str> = rec.iter().collect();
        let row = election_runner::results::TrialRow::from_record(&fields, params.len())
            .map_err(|e| field_error(path, line, e))?;
        if row.mode.is_empty() {
            return Err(ReportError::Value {
                path: path.to_path_buf(),
                line,
                column: "mode".into(),
                value: String::new(),
                reason: "must not be empty".into(),
            });
        }
        Ok(TrialRow {
            key: row.cell_key().summary_key(),
            row,
        })
    };
    let parsed: Vec<Result<TrialRow, ReportError>> = {
        use rayon::prelude::*;
        // Each record is dropped once parsed.
        records(&mut rdr, path)?
            .into_par_iter()
            .map(parse)
            .collect()
    };
    let rows = parsed.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok((params.into_iter().map(|(n, _)| n).collect(), rows))
}

/// Percentile by linear interpolation between closest ranks (R type 7, numpy's default), the
/// definition the runner uses. `sorted` must be ascending and non-empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    election_runner::stats::percentile(sorted, p).expect("percentile of an empty sample")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_numbers_have_three_significant_digits() {
        assert_eq!(fmt_sig(157.415), "157");
        assert_eq!(fmt_sig(5502.525), "5503");
        assert_eq!(fmt_sig(17.928), "17.9");
        assert_eq!(fmt_sig(1.547), "1.55");
        assert_eq!(fmt_sig(0.0349), "0.0349");
        assert_eq!(fmt_sig(0.26150696497717923), "0.262");
        assert_eq!(fmt_sig(2.0), "2");
        assert_eq!(fmt_sig(0.0), "0");
    }

    #[test]
    fn numbers_are_rounded_to_their_interval() {
        assert_eq!(fmt_ci(157.415, 3.2), "157");
        // Never more than three significant digits, even when the interval allows them.
        assert_eq!(fmt_ci(157.415, 0.4), "157");
        // Fewer when the interval is wide.
        assert_eq!(fmt_ci(1.5474, 0.3), "1.5");
        assert_eq!(fmt_ci(2499.3, 48.0), "2500");
        assert_eq!(fmt_ci(99.0, 0.0), "99");
        // An interval wider than the value: one significant digit.
        assert_eq!(fmt_ci(0.0449, 0.05), "0.04");
        assert_eq!(fmt_ci(13.4, 20.0), "10");
    }

    #[test]
    fn order_statistic_interval_of_the_median() {
        let v: Vec<f64> = (0..100).map(f64::from).collect();
        let (lo, hi) = quantile_ci(&v, 0.5).unwrap();
        // n q ± 1.96 sqrt(n q (1 - q)) = 50 ± 9.8.
        assert_eq!((lo, hi), (40.0, 60.0));
        assert_eq!(quantile_ci(&[], 0.5), None);
        let (m, h) = mean_ci(&[1.0, 3.0]).unwrap();
        assert_eq!(m, 2.0);
        assert!((h - Z95 * (2.0f64 / 2.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn fmt_num_trims() {
        assert_eq!(fmt_num(1.0), "1");
        assert_eq!(fmt_num(1.5), "1.5");
        assert_eq!(fmt_num(1.2345), "1.234");
        assert_eq!(fmt_num(-0.0001), "0");
        assert_eq!(fmt_num(100.0), "100");
    }

    #[test]
    fn percentile_type7() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 0.5), 2.5);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 1.0), 4.0);
        assert!((percentile(&v, 0.95) - 3.85).abs() < 1e-12);
    }
}
