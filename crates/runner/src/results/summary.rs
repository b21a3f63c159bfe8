//! `summary.csv`: one typed row per cell, its statistic columns defined once in the table
//! of this module's `summary_stats!` invocation — each column's name, its one-line definition (the
//! text of `results/README.md`'s table), its type and print format — and computed in one
//! place, [`SummaryRow::compute`]. The writer ([`SummaryRow::to_record`]), every reader
//! ([`SummaryRow::from_record`]), the column id [`Stat`] and the README table all come from
//! that table: adding a statistic is one entry there plus its line in `compute`.

use election_sim::Outcome;

use super::{fmt_ms, fmt_rate, CellKey, Column, FieldError, TrialRow};
use crate::stats::{mean, percentile, wilson, Z95};

/// How a statistic is typed and printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A count, always given (`u64`).
    Count,
    /// A count, empty when the cell measured nothing (`Option<u64>`).
    OptCount,
    /// A time or mean, 3 decimals ([`fmt_ms`]); empty when there is nothing to summarize.
    Ms,
    /// A rate or interval bound, 6 decimals ([`fmt_rate`]); empty when nothing was measured.
    Rate,
}

/// The Rust type of a statistic of kind `$kind`.
macro_rules! stat_type {
    (Count) => { u64 };
    (OptCount) => { Option<u64> };
    (Ms) => { Option<f64> };
    (Rate) => { Option<f64> };
}

/// One statistic value: its number, its text and its parse, by its [`Kind`].
trait StatValue: Sized {
    fn number(&self) -> Option<f64>;
    fn text(&self, kind: Kind) -> String;
    fn parse(s: &str, kind: Kind) -> Result<Self, &'static str>;
    /// The value as its text reads back (what a reader of the file gets).
    fn rounded(self, kind: Kind) -> Self {
        Self::parse(&self.text(kind), kind).expect("a printed statistic reads back")
    }
}

impl StatValue for u64 {
    fn number(&self) -> Option<f64> {
        Some(*self as f64)
    }
    fn text(&self, _: Kind) -> String {
        self.to_string()
    }
    fn parse(s: &str, _: Kind) -> Result<Self, &'static str> {
        s.parse().map_err(|_| "not a whole number")
    }
}

impl StatValue for Option<u64> {
    fn number(&self) -> Option<f64> {
        self.map(|v| v as f64)
    }
    fn text(&self, _: Kind) -> String {
        self.map(|v| v.to_string()).unwrap_or_default()
    }
    fn parse(s: &str, _: Kind) -> Result<Self, &'static str> {
        if s.is_empty() {
            return Ok(None);
        }
        s.parse()
            .map(Some)
            .map_err(|_| "not a whole number or an empty field")
    }
}

impl StatValue for Option<f64> {
    fn number(&self) -> Option<f64> {
        *self
    }
    fn text(&self, kind: Kind) -> String {
        let f = if kind == Kind::Rate { fmt_rate } else { fmt_ms };
        self.map(f).unwrap_or_default()
    }
    fn parse(s: &str, _: Kind) -> Result<Self, &'static str> {
        if s.is_empty() {
            return Ok(None);
        }
        match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Some(v)),
            _ => Err("not a finite number or an empty field"),
        }
    }
}

/// The statistic columns of `summary.csv`: groups of columns sharing one definition, each
/// column a [`Stat`] variant and a [`Stats`] field named like the column, of a [`Kind`].
macro_rules! summary_stats {
    ($( [ $( $variant:ident $field:ident ),+ ] : $kind:ident = $def:literal ; )*) => {
        /// One statistic column of `summary.csv` (every column after the varied parameters
        /// but `skipped`), in column order; generated from the one table of statistics.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[allow(missing_docs)] // each variant is the column named by `column()`
        pub enum Stat {
            $( $( $variant, )+ )*
        }

        impl Stat {
            /// Every statistic, in column order.
            pub const ALL: [Stat; [$( $( stringify!($field), )+ )*].len()] =
                [$( $( Stat::$variant, )+ )*];

            /// The column name in `summary.csv`.
            pub const fn column(self) -> &'static str {
                match self {
                    $( $( Stat::$variant => stringify!($field), )+ )*
                }
            }

            /// The column's definition (`results/README.md`'s text, shared by a group).
            pub const fn definition(self) -> &'static str {
                match self {
                    $( $( Stat::$variant )|+ => $def, )*
                }
            }

            /// How the column is typed and printed.
            pub const fn kind(self) -> Kind {
                match self {
                    $( $( Stat::$variant )|+ => Kind::$kind, )*
                }
            }
        }

        /// The statistics of one cell, one field per `summary.csv` column (see [`Stat`]).
        #[derive(Clone, Debug, Default, PartialEq)]
        #[allow(missing_docs)] // each field is the column of the same name
        pub struct Stats {
            $( $( pub $field: stat_type!($kind), )+ )*
        }

        impl Stats {
            /// The statistic's value (`None` for an empty field).
            pub fn get(&self, s: Stat) -> Option<f64> {
                match s {
                    $( $( Stat::$variant => self.$field.number(), )+ )*
                }
            }

            /// The statistic as `summary.csv` prints it.
            pub fn text(&self, s: Stat) -> String {
                match s {
                    $( $( Stat::$variant => self.$field.text(s.kind()), )+ )*
                }
            }

            /// Every statistic rounded as printed: a row computed and the same row read back
            /// from `summary.csv` are equal.
            fn rounded(self) -> Stats {
                Stats {
                    $( $( $field: self.$field.rounded(Kind::$kind), )+ )*
                }
            }

            /// The statistics from their fields, `field(stat)` giving each column's text.
            fn parse<'a>(field: impl Fn(Stat) -> &'a str) -> Result<Stats, FieldError> {
                Ok(Stats {
                    $( $( $field: {
                        let s = field(Stat::$variant);
                        StatValue::parse(s, Kind::$kind).map_err(|reason| FieldError {
                            column: stringify!($field).to_string(),
                            value: s.to_string(),
                            reason: reason.to_string(),
                        })?
                    }, )+ )*
                })
            }
        }
    };
}

summary_stats! {
    [Trials trials]: Count = "trials in the cell (the number of seeds); 0 for a skipped cell";
    [Measured measured]: Count = "trials in which every fault applied (`faults_skipped = 0`) and that finished within their work budget (`budget_exceeded = false`). **Every statistic below is over these trials only**; with none, every statistic is empty";
    [ConvergedRate converged_rate]: Rate = "fraction of measured trials with `converged = true`";
    [ElectMean elect_ms_mean, ElectP5 elect_ms_p5, ElectP50 elect_ms_p50, ElectP95 elect_ms_p95,
     ElectP99 elect_ms_p99, ElectMax elect_ms_max]: Ms =
        "statistics of `elect_ms` over the trials where it is given only (empty if none); percentiles here and in every `_p` column interpolate linearly between closest ranks (R's type 7, numpy's default)";
    [MsgsMean msgs_election_mean, MsgsP50 msgs_election_p50, MsgsP95 msgs_election_p95,
     MsgsP99 msgs_election_p99, MsgsMax msgs_election_max]: Ms =
        "statistics of `msgs_election` over all trials";
    [SplitRate split_brain_rate]: Rate = "fraction of trials with `split_brain = true`";
    [SplitCiLo split_brain_ci_lo, SplitCiHi split_brain_ci_hi]: Rate =
        "95 % Wilson score interval of that rate (z = 1.959964)";
    [SplitMsMean split_brain_ms_mean]: Ms = "mean `split_brain_ms`";
    [MinorityMsMean minority_leader_ms_mean]: Ms = "mean `minority_leader_ms`";
    [UnavailableMean unavailable_ms_mean]: Ms = "mean `unavailable_ms`";
    [StrandedMean stranded_node_ms_mean]: Ms = "mean `stranded_node_ms`";
    [LeaderChangesMean leader_changes_mean]: Ms = "mean `leader_changes`";
    [DetectP50 detect_ms_p50]: Ms =
        "median `detect_ms` over the trials where some node left the follower role";
    [SameEpochMax same_epoch_leaders_max]: OptCount =
        "the largest `same_epoch_leaders` of any trial (anything above 0 is a safety violation)";
    [FailoverP5 failover_ms_p5, FailoverP50 failover_ms_p50, FailoverP95 failover_ms_p95,
     FailoverP99 failover_ms_p99]: Ms =
        "percentiles of `failover_ms` over the trials where it is given";
    [PausedLeaderMean paused_leader_ms_mean]: Ms = "mean `paused_leader_ms`";
    [WritesOkMean writes_ok_mean, WritesStaleMean writes_stale_mean]: Ms =
        "means over the trials with a workload (empty without one)";
    [WritesStaleMax writes_stale_max]: OptCount = "the largest `writes_stale` of any trial";
    [StaleRate stale_rate]: Rate = "fraction of trials in which some stale write was taken";
    [WritesFencedMean writes_fenced_mean]: Ms =
        "mean `writes_fenced` over the trials with a workload (empty without one)";
    [StaleWindowMean stale_window_ms_mean, WriteUnavailableMean write_unavailable_ms_mean]: Ms =
        "means of `stale_window_ms` and `write_unavailable_ms`";
    [FaultsSkippedTrials faults_skipped_trials]: Count =
        "trials in which some fault did not apply (`faults_skipped > 0`); the report flags every cell where this is above 0";
    [BudgetExceeded budget_exceeded]: Count =
        "how many of the cell's trials used up their work budget (`budget_exceeded = true` in `trials.csv`), left out of every statistic like those with skipped faults; 0 for a skipped cell";
    [OutcomeStable outcome_stable, OutcomeRecoveredAfter outcome_recovered_after,
     OutcomeNoLeader outcome_no_leader, OutcomeLivelock outcome_livelock,
     OutcomeMinorityOnly outcome_minority_only]: OptCount =
        "how many measured trials ended in each `outcome`; empty when the cell has no measured trial (or was skipped). A cell with `outcome_no_leader` or `outcome_livelock` above 0 had a trial that ended without a settled quorum leader although one was possible: a liveness failure";
    [RecoveredTimeoutsMax recovered_timeouts_max]: OptCount =
        "the largest `recovered_timeouts` of any measured trial";
    [MsgsTotalMean msgs_total_mean]: Ms = "mean `msgs_total`: the whole trial's protocol messages, boot election included";
    [SteadyRateMean msgs_steady_per_s_mean]: Ms =
        "mean steady message rate, `msgs_steady` / `steady_ms` per second, over the trials with a steady window (empty if none): what the protocol sends with no fault and no election (heartbeats, a lease's renewals and polls)";
}

impl Stat {
    /// The statistics in column order, in runs of neighbouring columns that share one
    /// definition (`elect_ms_mean` … `elect_ms_max`), each with that definition: the lines of
    /// `results/README.md`'s table and of the report's glossary.
    pub fn groups() -> Vec<(Vec<Stat>, &'static str)> {
        let mut out: Vec<(Vec<Stat>, &'static str)> = Vec::new();
        for s in Stat::ALL {
            match out.last_mut() {
                Some((group, def)) if *def == s.definition() => group.push(s),
                _ => out.push((vec![s], s.definition())),
            }
        }
        out
    }
}

/// The leading columns of `summary.csv`, before the varied parameters.
pub const SUMMARY_KEY_COLUMNS: [&str; 4] = ["protocol", "nodes", "scenario", "net"];

/// The last column of `summary.csv`, after the statistics.
pub const SKIPPED: Column = Column {
    name: "skipped",
    definition: "empty, or why the cell was not run (e.g. `partition-leader-minority needs at least 3 nodes: ...`); such a row has `trials = 0` and empty statistics",
};

/// The statistic columns of `summary.csv`, after the varied parameters (the statistics, then
/// `skipped`).
pub const SUMMARY_STAT_COLUMNS: [&str; Stat::ALL.len() + 1] = {
    let mut out = [SKIPPED.name; Stat::ALL.len() + 1];
    let mut i = 0;
    while i < Stat::ALL.len() {
        out[i] = Stat::ALL[i].column();
        i += 1;
    }
    out
};

/// The `summary.csv` header for a sweep varying `varied` (sorted keys).
pub fn summary_header(varied: &[&str]) -> Vec<String> {
    super::header(&SUMMARY_KEY_COLUMNS, varied, &SUMMARY_STAT_COLUMNS)
}

/// A cell as `summary.csv` names it: protocol spec, cluster size, scenario, network profile
/// and the values of the varied parameters (empty text where a parameter does not apply). A
/// results directory holds one mode, so the summary has no `mode` column ([`CellKey`] has).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SummaryKey {
    /// Protocol spec string (`bully+quorum`, `raft+pre_vote`, ...).
    pub protocol: String,
    /// Cluster size.
    pub nodes: u32,
    /// Scenario name.
    pub scenario: String,
    /// Network profile name.
    pub net: String,
    /// Varied parameter values, in the header's (sorted key) order.
    pub params: Vec<String>,
}

impl CellKey {
    /// The cell as `summary.csv` names it (without `mode`).
    pub fn summary_key(&self) -> SummaryKey {
        SummaryKey {
            protocol: self.protocol.clone(),
            nodes: self.nodes,
            scenario: self.scenario.clone(),
            net: self.net.clone(),
            params: self.params.clone(),
        }
    }
}

/// One `summary.csv` row: a cell, its statistics, and why it was skipped (empty if it ran).
/// Statistics hold their values as the file prints them (rounded to 3 or 6 decimals), so a row
/// computed from trials and the same row read back are equal.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    /// The cell.
    pub key: SummaryKey,
    /// Its statistics.
    pub stats: Stats,
    /// Empty, or why the cell was skipped.
    pub skipped: String,
}

impl SummaryRow {
    /// The statistics of one cell's trials (`all`, in seed order), or a skipped cell with its
    /// reason. Every statistic is over the **measured** trials (see [`TrialRow::measured`]);
    /// `trials` counts them all and `faults_skipped_trials` those that did not undergo the
    /// scenario as described.
    pub fn compute(key: &CellKey, all: &[TrialRow], skipped: Option<&str>) -> SummaryRow {
        let rows: Vec<&TrialRow> = all.iter().filter(|t| t.measured()).collect();
        let rows = &rows[..];
        let n = rows.len();
        let sorted = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v
        };
        let elect = sorted(rows.iter().filter_map(|t| t.elect_ms).collect());
        let msgs = sorted(rows.iter().map(|t| t.msgs_election as f64).collect());
        let detect = sorted(rows.iter().filter_map(|t| t.detect_ms).collect());
        let failover = sorted(rows.iter().filter_map(|t| t.failover_ms).collect());
        let of = |f: fn(&TrialRow) -> f64| -> Vec<f64> { rows.iter().map(|t| f(t)).collect() };
        let converged = rows.iter().filter(|t| t.converged).count();
        let split = rows.iter().filter(|t| t.split_brain).count() as u64;
        let ci = wilson(split, n as u64, Z95);
        let rate = |k: usize| (n > 0).then(|| k as f64 / n as f64);
        let wrote: Vec<&&TrialRow> = rows.iter().filter(|t| t.writes_ok.is_some()).collect();
        let of_w = |f: fn(&TrialRow) -> Option<f64>| -> Vec<f64> {
            wrote.iter().filter_map(|t| f(t)).collect()
        };
        let stale_trials = wrote
            .iter()
            .filter(|t| t.writes_stale.unwrap_or(0) > 0)
            .count();
        // Outcome counts over the measured trials (none measured, or a skipped cell: empty,
        // like every statistic).
        let count = |o: Outcome| {
            (!rows.is_empty()).then(|| rows.iter().filter(|t| t.outcome == o).count() as u64)
        };
        let stats = Stats {
            trials: all.len() as u64,
            measured: n as u64,
            converged_rate: rate(converged),
            // The elect_ms statistics are over elect_ms values, i.e. converged trials only.
            elect_ms_mean: mean(&rows.iter().filter_map(|t| t.elect_ms).collect::<Vec<_>>()),
            elect_ms_p5: percentile(&elect, 0.05),
            elect_ms_p50: percentile(&elect, 0.50),
            elect_ms_p95: percentile(&elect, 0.95),
            elect_ms_p99: percentile(&elect, 0.99),
            elect_ms_max: elect.last().copied(),
            msgs_election_mean: mean(&of(|t| t.msgs_election as f64)),
            msgs_election_p50: percentile(&msgs, 0.50),
            msgs_election_p95: percentile(&msgs, 0.95),
            msgs_election_p99: percentile(&msgs, 0.99),
            msgs_election_max: msgs.last().copied(),
            split_brain_rate: rate(split as usize),
            split_brain_ci_lo: ci.map(|c| c.0),
            split_brain_ci_hi: ci.map(|c| c.1),
            split_brain_ms_mean: mean(&of(|t| t.split_brain_ms)),
            minority_leader_ms_mean: mean(&of(|t| t.minority_leader_ms)),
            unavailable_ms_mean: mean(&of(|t| t.unavailable_ms)),
            stranded_node_ms_mean: mean(&of(|t| t.stranded_node_ms)),
            leader_changes_mean: mean(&of(|t| t.leader_changes as f64)),
            detect_ms_p50: percentile(&detect, 0.50),
            same_epoch_leaders_max: rows.iter().map(|t| t.same_epoch_leaders as u64).max(),
            failover_ms_p5: percentile(&failover, 0.05),
            failover_ms_p50: percentile(&failover, 0.50),
            failover_ms_p95: percentile(&failover, 0.95),
            failover_ms_p99: percentile(&failover, 0.99),
            paused_leader_ms_mean: mean(&of(|t| t.paused_leader_ms)),
            writes_ok_mean: mean(&of_w(|t| t.writes_ok.map(|v| v as f64))),
            writes_stale_mean: mean(&of_w(|t| t.writes_stale.map(|v| v as f64))),
            writes_stale_max: wrote.iter().filter_map(|t| t.writes_stale).max(),
            stale_rate: (!wrote.is_empty()).then(|| stale_trials as f64 / wrote.len() as f64),
            writes_fenced_mean: mean(&of_w(|t| t.writes_fenced.map(|v| v as f64))),
            stale_window_ms_mean: mean(&of_w(|t| t.stale_window_ms)),
            write_unavailable_ms_mean: mean(&of_w(|t| t.write_unavailable_ms)),
            faults_skipped_trials: all.iter().filter(|t| t.faults_skipped > 0).count() as u64,
            budget_exceeded: all.iter().filter(|t| t.budget_exceeded).count() as u64,
            outcome_stable: count(Outcome::Stable),
            outcome_recovered_after: count(Outcome::RecoveredAfter),
            outcome_no_leader: count(Outcome::NoLeader),
            outcome_livelock: count(Outcome::Livelock),
            outcome_minority_only: count(Outcome::MinorityOnly),
            recovered_timeouts_max: rows
                .iter()
                .filter_map(|t| t.recovered_timeouts.map(u64::from))
                .max(),
            msgs_total_mean: mean(&of(|t| t.msgs_total as f64)),
            msgs_steady_per_s_mean: mean(
                &rows
                    .iter()
                    .filter_map(|t| t.steady_per_second())
                    .collect::<Vec<_>>(),
            ),
        };
        SummaryRow {
            key: key.summary_key(),
            stats: stats.rounded(),
            skipped: skipped.unwrap_or("").to_string(),
        }
    }

    /// The statistic's value (`None` for an empty field).
    pub fn get(&self, s: Stat) -> Option<f64> {
        self.stats.get(s)
    }

    /// The statistic as `summary.csv` prints it.
    pub fn text(&self, s: Stat) -> String {
        self.stats.text(s)
    }

    /// The row's fields in `summary.csv` column order (its CSV line, split).
    pub fn to_record(&self) -> Vec<String> {
        let k = &self.key;
        let mut r = vec![
            k.protocol.clone(),
            k.nodes.to_string(),
            k.scenario.clone(),
            k.net.clone(),
        ];
        r.extend(k.params.iter().cloned());
        r.extend(Stat::ALL.map(|s| self.text(s)));
        r.push(self.skipped.clone());
        r
    }

    /// Read a row back from its `summary.csv` fields (`n_params` varied parameters). The error
    /// names the column, the value and what was expected ([`FieldError`]).
    pub fn from_record(rec: &[&str], n_params: usize) -> Result<SummaryRow, FieldError> {
        let want = SUMMARY_KEY_COLUMNS.len() + n_params + SUMMARY_STAT_COLUMNS.len();
        if rec.len() != want {
            return Err(FieldError {
                column: String::new(),
                value: String::new(),
                reason: format!("{} fields, expected {want}", rec.len()),
            });
        }
        let text = |name: &str, s: &str, what: &str| -> Result<String, FieldError> {
            if s.is_empty() {
                Err(FieldError {
                    column: name.to_string(),
                    value: String::new(),
                    reason: format!("must not be empty ({what})"),
                })
            } else {
                Ok(s.to_string())
            }
        };
        let nodes = rec[1].parse().map_err(|_| FieldError {
            column: "nodes".to_string(),
            value: rec[1].to_string(),
            reason: "not a whole number".to_string(),
        })?;
        let key = SummaryKey {
            protocol: text("protocol", rec[0], "a protocol spec")?,
            nodes,
            scenario: text("scenario", rec[2], "a scenario name")?,
            net: text("net", rec[3], "a network profile")?,
            params: rec[4..4 + n_params].iter().map(|s| s.to_string()).collect(),
        };
        let stats = &rec[4 + n_params..];
        Ok(SummaryRow {
            key,
            stats: Stats::parse(|s| stats[s as usize])?,
            skipped: rec[want - 1].to_string(),
        })
    }
}

/// One `summary.csv` record of a cell ([`SummaryRow::compute`], printed).
pub fn summary_record(key: &CellKey, all: &[TrialRow], skipped: Option<&str>) -> Vec<String> {
    SummaryRow::compute(key, all, skipped).to_record()
}

/// The `summary.csv` column table of `results/README.md`, generated from the statistics'
/// table: one line per group of columns sharing a definition.
pub fn summary_columns_markdown() -> String {
    let mut s = String::from("| column | meaning |\n| --- | --- |\n");
    let names = |cols: &[&str]| {
        cols.iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    s.push_str(&format!("| {} | the cell |\n", names(&SUMMARY_KEY_COLUMNS)));
    s.push_str("| *varied parameters* | as in `trials.csv` |\n");
    for (group, def) in Stat::groups() {
        let cols: Vec<&str> = group.iter().map(|s| s.column()).collect();
        s.push_str(&format!("| {} | {def} |\n", names(&cols)));
    }
    s.push_str(&SKIPPED.markdown_row());
    s
}
