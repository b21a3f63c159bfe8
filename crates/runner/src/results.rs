//! The results files: `trials.csv` rows, `summary.csv` rows, their headers and their exact
//! number formatting, as `results/README.md` defines them, and `manifest.json`
//! ([`Manifest`]). Each is one type that the writer and every reader use; the column tables of
//! `results/README.md` are generated from the column definitions here (`trial_columns`,
//! `summary`) and checked by `crates/runner/tests/it/readme_columns.rs`.
//!
//! Millisecond values are rounded to 3 decimals when a row is made (`{:.3}`, trailing zeros
//! trimmed), and a row read back from a CSV is the same value: summaries are computed from
//! rows as the CSV holds them, so a resumed or merged sweep summarizes exactly like an
//! uninterrupted one.

use election_core::MsgCategory;
use election_sim::{Metrics, Outcome};
use serde_json::{Map, Value};

pub mod calibration;
mod manifest;
mod summary;
mod trial_columns;
pub use manifest::*;
pub use summary::*;
pub use trial_columns::*;

/// A results column: its name and its one-line definition (`results/README.md`'s text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    /// The name in the header.
    pub name: &'static str,
    /// What it holds.
    pub definition: &'static str,
}

impl Column {
    /// The column as a line of a README table.
    pub fn markdown_row(&self) -> String {
        format!("| `{}` | {} |\n", self.name, self.definition)
    }
}

/// The `trials.csv` header for a sweep varying `varied` (sorted keys).
pub fn trial_header(varied: &[&str]) -> Vec<String> {
    header(&TRIAL_KEY_COLUMNS, varied, &TRIAL_METRIC_COLUMNS)
}

/// A CSV header: the key columns, the varied parameters, the metric columns.
fn header(keys: &[&str], varied: &[&str], metrics: &[&str]) -> Vec<String> {
    keys.iter()
        .chain(varied)
        .chain(metrics)
        .map(|s| s.to_string())
        .collect()
}

fn fmt_fixed(x: f64, decimals: usize) -> String {
    let s = format!("{:.*}", decimals, x + 0.0);
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// A millisecond value as the CSVs print it: 3 decimals, trailing zeros trimmed.
pub fn fmt_ms(x: f64) -> String {
    fmt_fixed(x, 3)
}

/// A rate or proportion as `summary.csv` prints it: 6 decimals, trailing zeros trimmed.
pub fn fmt_rate(x: f64) -> String {
    fmt_fixed(x, 6)
}

fn ser_ms<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&fmt_ms(*x))
}

fn ser_outcome<S: serde::Serializer>(x: &Outcome, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(x.name())
}

fn ser_opt_ms<S: serde::Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(v) => s.serialize_str(&fmt_ms(*v)),
        None => s.serialize_none(),
    }
}

/// `rows` as `trials.csv` lines (no header), through the rows' serde derive.
pub fn write_trials<'a>(rows: impl IntoIterator<Item = &'a TrialRow>) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    for r in rows {
        w.serialize(r).expect("a row serializes to memory");
    }
    w.into_inner().expect("writing to memory")
}

/// `x` rounded exactly as [`fmt_ms`] prints it.
///
/// Every metrics row rounds a dozen values, so this avoids formatting and parsing (4 % of a
/// 5-node trial, issue #32) wherever the answer is certain: `x * 1000` is computed with an
/// error below 2^-13 for |x| < 2^40 µs, so when its fraction is more than 10^-3 away from
/// one half, the printed value is `x * 1000` rounded to the nearest whole number `r`, and
/// parsing `r / 1000` gives the nearest double to it, which is what dividing the exact `r` by
/// 1000 gives. Near a tie (where `{:.3}` looks at `x`'s exact binary value), and for huge or
/// non-finite values, it formats and parses. `round_ms_matches_formatting` checks both paths.
pub fn round_ms(x: f64) -> f64 {
    let y = x * 1000.0;
    if y.abs() < (1u64 << 40) as f64 {
        let i = y as i64; // towards zero; exact below 2^52
        let frac = (y - i as f64).abs();
        if (frac - 0.5).abs() > 1e-3 {
            let r = if frac > 0.5 {
                i + i64::from(y.signum() as i8)
            } else {
                i
            };
            // `+ 0.0` turns -0 into 0, as the printed "-0" becomes "0".
            return r as f64 / 1000.0 + 0.0;
        }
    }
    round_ms_by_formatting(x)
}

fn round_ms_by_formatting(x: f64) -> f64 {
    fmt_ms(x).parse().expect("formatted number")
}

/// The one rule for which trials are measurements (every reader of `trials.csv` filters with
/// it): every fault of the scenario applied (`faults_skipped` 0) and the work budget held.
pub fn measured(faults_skipped: u32, budget_exceeded: bool) -> bool {
    faults_skipped == 0 && !budget_exceeded
}

/// A `trials.csv` field that does not read as its column's type: the column, the value as
/// written, and what was expected (an empty column: the row's field count is wrong).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The column (empty when the row has the wrong number of fields).
    pub column: String,
    /// The field as written.
    pub value: String,
    /// What was expected.
    pub reason: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.column.is_empty() {
            f.write_str(&self.reason)
        } else {
            write!(
                f,
                "column {} = {:?}: {}",
                self.column, self.value, self.reason
            )
        }
    }
}

/// One trial: its cell, its seed and its metrics — a `trials.csv` row. Serialized (serde
/// derive, field order = column order, the varied parameters' values in place) by
/// [`write_trials`]; milliseconds print through [`fmt_ms`], absent values as empty fields.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TrialRow {
    /// `sim`, `live` or `real`.
    pub mode: String,
    /// The protocol spec (`raft+pre_vote`).
    pub protocol: String,
    /// Cluster size.
    pub nodes: u32,
    /// Scenario name.
    pub scenario: String,
    /// Network profile name.
    pub net: String,
    /// The trial seed.
    pub seed: u64,
    /// The varied parameters' values, in the header's (sorted key) order.
    pub params: Vec<String>,
    /// See [`Metrics::converged`].
    pub converged: bool,
    /// The quorum leader at the end.
    pub leader: Option<u32>,
    /// Reference instant to the first node leaving the follower role.
    #[serde(serialize_with = "ser_opt_ms")]
    pub detect_ms: Option<f64>,
    /// Reference instant to the final quorum leader followed by every member that reaches it.
    #[serde(serialize_with = "ser_opt_ms")]
    pub elect_ms: Option<f64>,
    /// Reference instant to the first instant with a quorum leader (0: one at the reference).
    #[serde(serialize_with = "ser_opt_ms")]
    pub failover_ms: Option<f64>,
    /// Time without a quorum leader.
    #[serde(serialize_with = "ser_ms")]
    pub unavailable_ms: f64,
    /// Node-milliseconds during which a live member had no leader it reaches and follows.
    #[serde(serialize_with = "ser_ms")]
    pub stranded_node_ms: f64,
    /// Live members without a leader they reach and follow at the end.
    pub stranded_nodes: u32,
    /// Election traffic (every category but heartbeats) in the election window.
    pub msgs_election: u64,
    /// Messages over the whole trial.
    pub msgs_total: u64,
    /// Bytes over the whole trial.
    pub bytes_total: u64,
    /// Two or more live leaders at once after the reference instant.
    pub split_brain: bool,
    /// Total time with two or more live leaders.
    #[serde(serialize_with = "ser_ms")]
    pub split_brain_ms: f64,
    /// Time with a leader-role member that is not quorum-connected.
    #[serde(serialize_with = "ser_ms")]
    pub minority_leader_ms: f64,
    /// Time with a paused node in the leader role.
    #[serde(serialize_with = "ser_ms")]
    pub paused_leader_ms: f64,
    /// Most live leaders at once.
    pub max_leaders: u32,
    /// Leaders claiming the same epoch at once.
    pub same_epoch_leaders: u32,
    /// Entries into the leader role after the reference instant.
    pub leader_changes: u32,
    /// Elections started after the reference instant.
    pub elections_started: u32,
    /// Writes taken from leaders not deposed (`None`: no workload).
    pub writes_ok: Option<u64>,
    /// Writes taken from deposed leaders.
    pub writes_stale: Option<u64>,
    /// Writes refused for their fencing token.
    pub writes_fenced: Option<u64>,
    /// Time during which deposed leaders' writes were being taken.
    #[serde(serialize_with = "ser_opt_ms")]
    pub stale_window_ms: Option<f64>,
    /// Time during which no write was taken.
    #[serde(serialize_with = "ser_opt_ms")]
    pub write_unavailable_ms: Option<f64>,
    /// Window count of Election-category messages.
    pub msgs_election_req: u64,
    /// Window count of Reply-category messages.
    pub msgs_reply: u64,
    /// Window count of Leader-category messages.
    pub msgs_leader: u64,
    /// Window count of Heartbeat-category messages.
    pub msgs_heartbeat: u64,
    /// Workload messages over the whole trial.
    pub msgs_workload: u64,
    /// Fault actions that did not apply (see [`Metrics::faults_skipped`]).
    pub faults_skipped: u32,
    /// The trial used up its work budget and was stopped (see [`Metrics::budget_exceeded`]).
    pub budget_exceeded: bool,
    /// When the trial ended, ms.
    #[serde(serialize_with = "ser_ms")]
    pub end_ms: f64,
    /// The verdict on liveness (see [`Metrics::outcome`]).
    #[serde(serialize_with = "ser_outcome")]
    pub outcome: Outcome,
    /// With `outcome = recovered-after`: after how many election timeouts.
    pub recovered_timeouts: Option<u32>,
    /// Messages sent in the steady window (see [`Metrics::steady`]).
    pub msgs_steady: Option<u64>,
    /// The steady window's length, ms.
    #[serde(serialize_with = "ser_opt_ms")]
    pub steady_ms: Option<f64>,
}

/// Where a row belongs: everything but the seed and the metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellKey {
    /// `sim` or `live`.
    pub mode: String,
    /// The protocol spec.
    pub protocol: String,
    /// Cluster size.
    pub nodes: u32,
    /// Scenario name.
    pub scenario: String,
    /// Network profile name.
    pub net: String,
    /// Varied parameter values.
    pub params: Vec<String>,
}

impl TrialRow {
    /// The row of one trial of `cell` with `seed`, from the observer's metrics.
    pub fn from_metrics(cell: &CellKey, seed: u64, m: &Metrics) -> TrialRow {
        let w = &m.window;
        TrialRow {
            mode: cell.mode.clone(),
            protocol: cell.protocol.clone(),
            nodes: cell.nodes,
            scenario: cell.scenario.clone(),
            net: cell.net.clone(),
            seed,
            params: cell.params.clone(),
            converged: m.converged,
            leader: m.leader.map(|l| l.0),
            detect_ms: m.detect_ms.map(round_ms),
            elect_ms: m.elect_ms.map(round_ms),
            failover_ms: m.failover_ms.map(round_ms),
            unavailable_ms: round_ms(m.unavailable_ms),
            stranded_node_ms: round_ms(m.stranded_node_ms),
            stranded_nodes: m.stranded_nodes,
            msgs_election: w.sent_election(),
            msgs_total: m.total.sent_total(),
            bytes_total: m.total.bytes_total(),
            split_brain: m.split_brain,
            split_brain_ms: round_ms(m.split_brain_ms),
            minority_leader_ms: round_ms(m.minority_leader_ms),
            paused_leader_ms: round_ms(m.paused_leader_ms),
            max_leaders: m.max_leaders,
            same_epoch_leaders: m.same_epoch_leaders,
            leader_changes: m.leader_changes,
            elections_started: m.elections_started,
            writes_ok: m.writes.map(|x| x.ok),
            writes_stale: m.writes.map(|x| x.stale),
            writes_fenced: m.writes.map(|x| x.fenced),
            stale_window_ms: m.writes.map(|x| round_ms(x.stale_window_ms)),
            write_unavailable_ms: m.writes.map(|x| round_ms(x.unavailable_ms)),
            msgs_election_req: w.sent_of(MsgCategory::Election),
            msgs_reply: w.sent_of(MsgCategory::Reply),
            msgs_leader: w.sent_of(MsgCategory::Leader),
            msgs_heartbeat: w.sent_of(MsgCategory::Heartbeat),
            msgs_workload: m.msgs_workload,
            faults_skipped: m.faults_skipped,
            budget_exceeded: m.budget_exceeded,
            end_ms: round_ms(m.end_ms),
            outcome: m.outcome,
            recovered_timeouts: m.recovered_timeouts,
            msgs_steady: m.steady.map(|s| s.0),
            steady_ms: m.steady.map(|s| round_ms(s.1)),
        }
    }

    /// The steady message rate of the trial: `msgs_steady` per second of its steady window
    /// (see the `msgs_steady` column); `None` without a window.
    pub fn steady_per_second(&self) -> Option<f64> {
        match (self.msgs_steady, self.steady_ms) {
            (Some(k), Some(ms)) if ms > 0.0 => Some(k as f64 * 1000.0 / ms),
            _ => None,
        }
    }

    /// Did the trial undergo its scenario as described (every fault applied) and run to its
    /// end within its work budget? Only such trials enter a cell's statistics ([`measured`]).
    pub fn measured(&self) -> bool {
        measured(self.faults_skipped, self.budget_exceeded)
    }

    /// The row's cell.
    pub fn cell_key(&self) -> CellKey {
        CellKey {
            mode: self.mode.clone(),
            protocol: self.protocol.clone(),
            nodes: self.nodes,
            scenario: self.scenario.clone(),
            net: self.net.clone(),
            params: self.params.clone(),
        }
    }

    fn metric_cells(&self) -> Vec<String> {
        self.to_record()
            .split_off(TRIAL_KEY_COLUMNS.len() + self.params.len())
    }

    /// The row's fields in `trials.csv` column order (its CSV line, split).
    pub fn to_record(&self) -> Vec<String> {
        let line = write_trials([self]);
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(line.as_slice());
        let rec = r
            .records()
            .next()
            .expect("one line")
            .expect("our own CSV reads back");
        rec.iter().map(str::to_string).collect()
    }

    /// Read a row back from its `trials.csv` fields (`n_params` varied parameters). The error
    /// names the column, the value and what was expected ([`FieldError`]).
    pub fn from_record(rec: &[&str], n_params: usize) -> Result<TrialRow, FieldError> {
        let want = TRIAL_KEY_COLUMNS.len() + n_params + TRIAL_METRIC_COLUMNS.len();
        if rec.len() != want {
            return Err(FieldError {
                column: String::new(),
                value: String::new(),
                reason: format!("{} fields, expected {want}", rec.len()),
            });
        }
        let metrics = &rec[TRIAL_KEY_COLUMNS.len() + n_params..];
        let m = |name: &str| -> &str {
            let i = TRIAL_METRIC_COLUMNS
                .iter()
                .position(|c| *c == name)
                .expect("a metric column");
            metrics[i]
        };
        let bad = |name: &str, s: &str, reason: &str| FieldError {
            column: name.to_string(),
            value: s.to_string(),
            reason: reason.to_string(),
        };
        let int = |name: &str, s: &str| -> Result<u64, FieldError> {
            s.parse().map_err(|_| bad(name, s, "not a whole number"))
        };
        let int32 = |name: &str, s: &str| -> Result<u32, FieldError> {
            let v = int(name, s)?;
            u32::try_from(v).map_err(|_| bad(name, s, "too large"))
        };
        let float = |name: &str, s: &str| -> Result<f64, FieldError> {
            s.parse()
                .ok()
                .filter(|x: &f64| x.is_finite())
                .ok_or_else(|| bad(name, s, "not a finite number"))
        };
        let boolean = |name: &str, s: &str| -> Result<bool, FieldError> {
            match s {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(bad(name, s, "not true/false")),
            }
        };
        let b = |name: &str| boolean(name, m(name));
        let f = |name: &str| float(name, m(name));
        let opt_f = |name: &str| -> Result<Option<f64>, FieldError> {
            match m(name) {
                "" => Ok(None),
                s => float(name, s).map(Some),
            }
        };
        let opt_n = |name: &str| -> Result<Option<u64>, FieldError> {
            match m(name) {
                "" => Ok(None),
                s => int(name, s).map(Some),
            }
        };
        let opt_n32 = |name: &str| -> Result<Option<u32>, FieldError> {
            match m(name) {
                "" => Ok(None),
                s => int32(name, s).map(Some),
            }
        };
        macro_rules! n {
            ($name:literal) => {
                int($name, m($name))?
            };
        }
        macro_rules! n32 {
            ($name:literal) => {
                int32($name, m($name))?
            };
        }
        Ok(TrialRow {
            mode: rec[0].to_string(),
            protocol: rec[1].to_string(),
            nodes: int32("nodes", rec[2])?,
            scenario: rec[3].to_string(),
            net: rec[4].to_string(),
            seed: int("seed", rec[5])?,
            params: rec[6..6 + n_params].iter().map(|s| s.to_string()).collect(),
            converged: b("converged")?,
            leader: opt_n32("leader")?,
            detect_ms: opt_f("detect_ms")?,
            elect_ms: opt_f("elect_ms")?,
            failover_ms: opt_f("failover_ms")?,
            unavailable_ms: f("unavailable_ms")?,
            stranded_node_ms: f("stranded_node_ms")?,
            stranded_nodes: n32!("stranded_nodes"),
            msgs_election: n!("msgs_election"),
            msgs_total: n!("msgs_total"),
            bytes_total: n!("bytes_total"),
            split_brain: b("split_brain")?,
            split_brain_ms: f("split_brain_ms")?,
            minority_leader_ms: f("minority_leader_ms")?,
            paused_leader_ms: f("paused_leader_ms")?,
            max_leaders: n32!("max_leaders"),
            same_epoch_leaders: n32!("same_epoch_leaders"),
            leader_changes: n32!("leader_changes"),
            elections_started: n32!("elections_started"),
            writes_ok: opt_n("writes_ok")?,
            writes_stale: opt_n("writes_stale")?,
            writes_fenced: opt_n("writes_fenced")?,
            stale_window_ms: opt_f("stale_window_ms")?,
            write_unavailable_ms: opt_f("write_unavailable_ms")?,
            msgs_election_req: n!("msgs_election_req"),
            msgs_reply: n!("msgs_reply"),
            msgs_leader: n!("msgs_leader"),
            msgs_heartbeat: n!("msgs_heartbeat"),
            msgs_workload: n!("msgs_workload"),
            faults_skipped: n32!("faults_skipped"),
            budget_exceeded: b("budget_exceeded")?,
            end_ms: f("end_ms")?,
            outcome: Outcome::from_name(m("outcome")).ok_or_else(|| {
                bad(
                    "outcome",
                    m("outcome"),
                    &format!("not one of {}", Outcome::ALL.map(Outcome::name).join(", ")),
                )
            })?,
            recovered_timeouts: opt_n32("recovered_timeouts")?,
            msgs_steady: opt_n("msgs_steady")?,
            steady_ms: opt_f("steady_ms")?,
        })
    }

    /// The value of `column` as `trials.csv` prints it (`None` for an unknown column).
    pub fn field(&self, column: &str) -> Option<String> {
        let at = |cols: &[&str], vals: Vec<String>| {
            cols.iter()
                .position(|c| *c == column)
                .map(|i| vals[i].clone())
        };
        at(&TRIAL_KEY_COLUMNS, self.to_record()).or_else(|| {
            at(
                &TRIAL_METRIC_COLUMNS,
                self.metric_cells().into_iter().collect(),
            )
        })
    }

    /// Check that the row's values are ones the observer can produce (see [`ROW_RULES`]): a
    /// row that parses but breaks one of them was damaged or edited. The error names the
    /// column, its value and the rule.
    pub fn validate(&self) -> Result<(), String> {
        for rule in ROW_RULES {
            if !(rule.holds)(self) {
                let value = self.field(rule.column).unwrap_or_default();
                return Err(format!(
                    "column {} = {value:?}: {}",
                    rule.column, rule.requires
                ));
            }
        }
        Ok(())
    }

    /// The row as one JSON object whose keys are the `trials.csv` column names (`varied` are
    /// the varied parameters' keys); numbers are numbers, empty cells `null`.
    pub fn to_json(&self, varied: &[&str]) -> Value {
        let mut o = Map::new();
        o.insert("mode".into(), self.mode.clone().into());
        o.insert("protocol".into(), self.protocol.clone().into());
        o.insert("nodes".into(), self.nodes.into());
        o.insert("scenario".into(), self.scenario.clone().into());
        o.insert("net".into(), self.net.clone().into());
        o.insert("seed".into(), self.seed.into());
        for (k, v) in varied.iter().zip(&self.params) {
            o.insert(k.to_string(), v.clone().into());
        }
        let cells = self.metric_cells();
        for (name, cell) in TRIAL_METRIC_COLUMNS.iter().zip(cells) {
            let v = if cell.is_empty() {
                Value::Null
            } else if cell == "true" || cell == "false" {
                Value::Bool(cell == "true")
            } else if name == &"outcome" {
                Value::String(cell)
            } else if let Ok(i) = cell.parse::<u64>() {
                i.into()
            } else {
                cell.parse::<f64>()
                    .map(Value::from)
                    .unwrap_or(Value::String(cell))
            };
            o.insert(name.to_string(), v);
        }
        Value::Object(o)
    }
}

/// One invariant of a `trials.csv` row, reported against one column.
pub struct RowRule {
    /// The column named in the error (whose value is shown).
    pub column: &'static str,
    /// What must hold, as the error says it.
    pub requires: &'static str,
    /// The check.
    pub holds: fn(&TrialRow) -> bool,
}

/// Every rule a row written by the observer (`crates/sim/src/observer.rs`) satisfies, checked
/// on rows read back by `--resume`, `merge` and the final summary. Each one follows from how
/// the observer computes the metrics: rounding to 3 decimals is monotonic, so an order between
/// exact values survives it. (Counts are non-negative integers and booleans exactly
/// `true`/`false` by parsing; durations are finite by parsing.)
pub const ROW_RULES: &[RowRule] = &[
    RowRule {
        column: "mode",
        requires: "must be sim, live or real",
        holds: |r| matches!(r.mode.as_str(), "sim" | "live" | "real"),
    },
    RowRule {
        column: "nodes",
        requires: "a cluster has at least one node",
        holds: |r| r.nodes >= 1,
    },
    RowRule {
        column: "detect_ms",
        requires: "a duration is >= 0 and <= end_ms",
        holds: |r| r.detect_ms.is_none_or(|v| (0.0..=r.end_ms).contains(&v)),
    },
    RowRule {
        column: "elect_ms",
        requires: "a duration is >= 0 and <= end_ms",
        holds: |r| r.elect_ms.is_none_or(|v| (0.0..=r.end_ms).contains(&v)),
    },
    RowRule {
        column: "unavailable_ms",
        requires: "a duration is >= 0 and <= end_ms",
        holds: |r| (0.0..=r.end_ms).contains(&r.unavailable_ms),
    },
    RowRule {
        column: "stranded_node_ms",
        requires: "node-milliseconds are >= 0 and <= nodes x end_ms",
        holds: |r| (0.0..=r.end_ms * r.nodes as f64).contains(&r.stranded_node_ms),
    },
    RowRule {
        column: "stranded_nodes",
        requires: "at most nodes members are stranded",
        holds: |r| r.stranded_nodes <= r.nodes,
    },
    RowRule {
        column: "split_brain_ms",
        requires: "a duration is >= 0 and <= end_ms",
        holds: |r| (0.0..=r.end_ms).contains(&r.split_brain_ms),
    },
    RowRule {
        column: "minority_leader_ms",
        requires: "a duration is >= 0 and <= end_ms",
        holds: |r| (0.0..=r.end_ms).contains(&r.minority_leader_ms),
    },
    RowRule {
        column: "failover_ms",
        requires: "a duration is >= 0 and <= end_ms",
        holds: |r| r.failover_ms.is_none_or(|v| (0.0..=r.end_ms).contains(&v)),
    },
    RowRule {
        column: "paused_leader_ms",
        requires: "a duration is >= 0 and <= end_ms",
        holds: |r| (0.0..=r.end_ms).contains(&r.paused_leader_ms),
    },
    RowRule {
        column: "stale_window_ms",
        requires: "a duration is >= 0 and <= end_ms",
        holds: |r| {
            r.stale_window_ms
                .is_none_or(|v| (0.0..=r.end_ms).contains(&v))
        },
    },
    RowRule {
        column: "write_unavailable_ms",
        requires: "a duration is >= 0 and <= end_ms",
        holds: |r| {
            r.write_unavailable_ms
                .is_none_or(|v| (0.0..=r.end_ms).contains(&v))
        },
    },
    RowRule {
        column: "writes_ok",
        requires: "the write columns are all given (a workload ran) or all empty",
        holds: |r| {
            let given = [
                r.writes_ok.is_some(),
                r.writes_stale.is_some(),
                r.writes_fenced.is_some(),
                r.stale_window_ms.is_some(),
                r.write_unavailable_ms.is_some(),
            ];
            given.iter().all(|&g| g) || given.iter().all(|&g| !g)
        },
    },
    RowRule {
        column: "stale_window_ms",
        requires: "stale_window_ms is 0 when writes_stale = 0",
        holds: |r| r.writes_stale != Some(0) || r.stale_window_ms == Some(0.0),
    },
    RowRule {
        column: "end_ms",
        requires: "a time is >= 0",
        holds: |r| r.end_ms >= 0.0,
    },
    RowRule {
        column: "converged",
        requires: "converged = true exactly when a leader is given",
        holds: |r| r.converged == r.leader.is_some(),
    },
    RowRule {
        column: "leader",
        requires: "a leader is one of 1..=nodes",
        holds: |r| r.leader.is_none_or(|l| (1..=r.nodes).contains(&l)),
    },
    RowRule {
        column: "elect_ms",
        requires: "elect_ms is given only when converged = true (the leader it measures is the quorum leader), and not before failover_ms",
        holds: |r| {
            r.elect_ms.is_none()
                || (r.converged && r.failover_ms.is_some_and(|f| f <= r.elect_ms.unwrap_or(0.0)))
        },
    },
    RowRule {
        column: "unavailable_ms",
        requires: "a converged trial has no time without a leader after elect_ms \
                   (unavailable_ms <= elect_ms)",
        holds: |r| r.elect_ms.is_none_or(|e| r.unavailable_ms <= e),
    },
    RowRule {
        column: "split_brain",
        requires: "split_brain = true exactly when max_leaders >= 2",
        holds: |r| r.split_brain == (r.max_leaders >= 2),
    },
    RowRule {
        column: "split_brain_ms",
        requires: "split_brain_ms is 0 when split_brain = false",
        holds: |r| r.split_brain || r.split_brain_ms == 0.0,
    },
    RowRule {
        column: "max_leaders",
        requires: "at most nodes leaders, and at least 1 when converged or leader_changes > 0 \
                   (unless a paused leader was the only one: paused_leader_ms > 0)",
        holds: |r| {
            r.max_leaders <= r.nodes
                && (r.max_leaders >= 1
                    || r.paused_leader_ms > 0.0
                    || (!r.converged && r.leader_changes == 0))
        },
    },
    RowRule {
        column: "msgs_election",
        requires: "msgs_election = msgs_election_req + msgs_reply + msgs_leader",
        holds: |r| {
            r.msgs_election_req
                .checked_add(r.msgs_reply)
                .and_then(|s| s.checked_add(r.msgs_leader))
                == Some(r.msgs_election)
        },
    },
    RowRule {
        column: "msgs_total",
        requires: "the election window's messages (msgs_election + msgs_heartbeat) are part of \
                   msgs_total",
        holds: |r| {
            r.msgs_election
                .checked_add(r.msgs_heartbeat)
                .is_some_and(|w| w <= r.msgs_total)
        },
    },
    RowRule {
        column: "recovered_timeouts",
        requires: "recovered_timeouts is given exactly when outcome = recovered-after",
        holds: |r| r.recovered_timeouts.is_some() == (r.outcome == Outcome::RecoveredAfter),
    },
    RowRule {
        column: "steady_ms",
        requires: "steady_ms is given exactly when msgs_steady is, and is above 0",
        holds: |r| r.steady_ms.is_some() == r.msgs_steady.is_some() && r.steady_ms.is_none_or(|v| v > 0.0),
    },
    RowRule {
        column: "outcome",
        requires: "a settled outcome (stable, recovered-after) needs failover_ms given (a \
                   quorum leader held after the reference instant)",
        holds: |r| match r.outcome {
            Outcome::Stable | Outcome::RecoveredAfter => r.failover_ms.is_some(),
            _ => true,
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use election_core::{RngExt, SeedableRng};

    fn row(seed: u64, elect: Option<f64>, msgs: u64, split: bool) -> TrialRow {
        TrialRow {
            mode: "sim".into(),
            protocol: "bully".into(),
            nodes: 5,
            scenario: "leader-crash".into(),
            net: "lan".into(),
            seed,
            params: vec!["0.1".into()],
            converged: elect.is_some(),
            leader: elect.map(|_| 4),
            detect_ms: Some(150.5),
            elect_ms: elect,
            failover_ms: elect,
            unavailable_ms: elect.unwrap_or(19000.0),
            stranded_node_ms: 4.0 * elect.unwrap_or(19000.0),
            stranded_nodes: if elect.is_some() { 0 } else { 4 },
            msgs_election: msgs,
            msgs_total: 100 + msgs,
            bytes_total: 1000,
            split_brain: split,
            split_brain_ms: if split { 2.0 } else { 0.0 },
            minority_leader_ms: 0.0,
            paused_leader_ms: 0.0,
            max_leaders: if split { 2 } else { 1 },
            same_epoch_leaders: 0,
            leader_changes: 1,
            elections_started: 2,
            writes_ok: Some(80),
            writes_stale: Some(if split { 3 } else { 0 }),
            writes_fenced: Some(if split { 1 } else { 0 }),
            stale_window_ms: Some(if split { 30.0 } else { 0.0 }),
            write_unavailable_ms: Some(elect.unwrap_or(19000.0)),
            msgs_election_req: msgs,
            msgs_reply: 0,
            msgs_leader: 0,
            msgs_heartbeat: 3,
            msgs_workload: 83,
            faults_skipped: 0,
            budget_exceeded: seed == 8,
            end_ms: 2000.25,
            outcome: if elect.is_some() {
                Outcome::RecoveredAfter
            } else {
                Outcome::NoLeader
            },
            recovered_timeouts: elect.map(|_| 2),
            msgs_steady: Some(40),
            steady_ms: Some(900.0),
        }
    }

    #[test]
    fn numbers_print_trimmed() {
        assert_eq!(fmt_ms(150.0), "150");
        assert_eq!(fmt_ms(0.25), "0.25");
        assert_eq!(fmt_ms(1.23456), "1.235");
        assert_eq!(fmt_ms(-0.0), "0");
        assert_eq!(fmt_ms(-0.0001), "0");
        assert_eq!(fmt_rate(0.0188453266), "0.018845");
        assert_eq!(round_ms(1.0004), 1.0);
    }

    /// The fast path of [`round_ms`] gives bit for bit what formatting and parsing gives:
    /// over the ranges metrics take, at ties and just beside them, and at the edges.
    #[test]
    fn round_ms_matches_formatting() {
        let same = |x: f64| {
            let (a, b) = (round_ms(x), round_ms_by_formatting(x));
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{x:e}: {a:e} against {b:e}"
            );
        };
        for x in [
            0.0,
            -0.0,
            -0.0001,
            -0.0005,
            0.0005,
            0.0015,
            1.0004,
            1.0005,
            2.5e-3,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            (1u64 << 30) as f64,
            (1u64 << 40) as f64 / 1000.0,
        ] {
            same(x);
        }
        let mut rng = election_core::Rng::seed_from_u64(32);
        for _ in 0..200_000 {
            // Whole nanoseconds in ms (how the simulator's metrics come), arbitrary doubles
            // over 12 decades, and values within a few ulps of a rounding tie.
            let ns: u64 = rng.random_range(0..10_000_000_000_000);
            same(ns as f64 / 1e6);
            let e: i32 = rng.random_range(-6..7);
            let x = rng.random::<f64>() * 10f64.powi(e);
            same(x);
            same(-x);
            let tie = (rng.random_range(0..1_000_000_000i64) as f64 + 0.5) / 1000.0;
            let k: i64 = rng.random_range(-4..5);
            same(f64::from_bits((tie.to_bits() as i64 + k) as u64));
        }
    }

    #[test]
    fn rows_round_trip_through_csv_fields() {
        let r = row(7, Some(163.127), 12, false);
        let rec = r.to_record();
        let fields: Vec<&str> = rec.iter().map(String::as_str).collect();
        assert_eq!(TrialRow::from_record(&fields, 1).unwrap(), r);
        assert_eq!(rec.len(), trial_header(&["net.loss"]).len());
        let nc = row(8, None, 3, true);
        let rec = nc.to_record();
        assert_eq!(rec[6 + 1 + 1], "", "no leader is an empty cell");
        let j = nc.to_json(&["net.loss"]);
        assert_eq!(j["elect_ms"], Value::Null);
        assert_eq!(j["net.loss"], "0.1");
        assert_eq!(j["msgs_election"], 3);
        assert_eq!(j["split_brain"], true);
        assert_eq!(j["budget_exceeded"], true);
        let col = |name: &str| {
            trial_header(&["net.loss"])
                .iter()
                .position(|c| c == name)
                .unwrap()
        };
        assert_eq!(rec[col("budget_exceeded")], "true");
        assert_eq!(rec[col("outcome")], "no-leader");
        assert_eq!(j["outcome"], "no-leader");
        assert_eq!(j["recovered_timeouts"], Value::Null);
        let fields: Vec<&str> = rec.iter().map(String::as_str).collect();
        assert!(TrialRow::from_record(&fields, 1).unwrap().budget_exceeded);
        let mut bad = fields.clone();
        bad[col("outcome")] = "fine";
        let e = TrialRow::from_record(&bad, 1).unwrap_err().to_string();
        assert!(e.contains("outcome") && e.contains("livelock"), "{e}");
        let mut bad = fields.clone();
        let at = col("budget_exceeded");
        bad[at] = "maybe";
        let e = TrialRow::from_record(&bad, 1).unwrap_err().to_string();
        assert!(e.contains("budget_exceeded"), "{e}");
        let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
        assert_eq!(keys, trial_header(&["net.loss"]).iter().collect::<Vec<_>>());
    }

    /// A row as the observer could write it.
    fn valid_row() -> TrialRow {
        let mut r = row(3, Some(163.127), 12, false);
        r.unavailable_ms = 160.0;
        r.msgs_election_req = 6;
        r.msgs_reply = 4;
        r.msgs_leader = 2;
        r
    }

    #[test]
    fn valid_rows_pass_and_each_broken_invariant_is_named() {
        valid_row().validate().unwrap();
        let mut split = valid_row();
        split.split_brain = true;
        split.max_leaders = 2;
        split.split_brain_ms = 0.0; // an instant of split brain
        split.validate().unwrap();
        let mut lost = valid_row();
        lost.converged = false;
        lost.leader = None;
        lost.elect_ms = None;
        lost.unavailable_ms = 2000.0;
        lost.outcome = Outcome::Livelock;
        lost.recovered_timeouts = None;
        lost.validate().unwrap();
        type Break = fn(&mut TrialRow);
        let cases: Vec<(&str, Break)> = vec![
            ("column mode", |r| r.mode = "both".into()),
            ("column nodes", |r| r.nodes = 0),
            ("column detect_ms = \"-1\"", |r| r.detect_ms = Some(-1.0)),
            ("column elect_ms", |r| r.elect_ms = Some(3000.0)),
            ("column unavailable_ms", |r| r.unavailable_ms = -0.5),
            ("column unavailable_ms", |r| r.unavailable_ms = 170.0),
            ("column split_brain_ms", |r| r.split_brain_ms = 1.0),
            ("column recovered_timeouts", |r| r.recovered_timeouts = None),
            ("column recovered_timeouts", |r| {
                r.outcome = Outcome::NoLeader
            }),
            ("column outcome", |r| {
                r.outcome = Outcome::Stable;
                r.recovered_timeouts = None;
                r.converged = false;
                r.leader = None;
                r.elect_ms = None;
                r.failover_ms = None;
            }),
            ("column minority_leader_ms", |r| {
                r.minority_leader_ms = 2500.0
            }),
            ("column leader = \"6\"", |r| r.leader = Some(6)),
            ("column leader = \"0\"", |r| r.leader = Some(0)),
            ("column converged = \"false\"", |r| r.converged = false),
            ("column converged = \"true\"", |r| r.leader = None),
            ("column elect_ms", |r| r.failover_ms = None),
            ("column stranded_node_ms", |r| r.stranded_node_ms = 1e9),
            ("column stranded_nodes", |r| r.stranded_nodes = 6),
            ("column split_brain = \"true\"", |r| r.split_brain = true),
            ("column split_brain = \"false\"", |r| r.max_leaders = 2),
            ("column max_leaders", |r| r.max_leaders = 0),
            ("column max_leaders", |r| {
                r.max_leaders = 6;
                r.split_brain = true
            }),
            ("column msgs_election", |r| r.msgs_leader += 1),
            ("column msgs_total", |r| r.msgs_total = 14),
        ];
        for (want, break_it) in cases {
            let mut r = valid_row();
            break_it(&mut r);
            let e = r.validate().unwrap_err();
            assert!(e.contains(want), "{want:?} not in {e:?}");
        }
    }

    #[test]
    fn unparsable_fields_name_the_column_and_value() {
        assert_fields_named(
            &valid_row().to_record(),
            &trial_header(&["net.loss"]),
            &[
                ("elect_ms", "NaN"),
                ("end_ms", "inf"),
                ("unavailable_ms", "x"),
                ("split_brain", "TRUE"),
                ("converged", ""),
                ("msgs_total", "-3"),
                ("leader", "2.5"),
            ],
            |f| TrialRow::from_record(f, 1).map(|_| ()),
        );
    }

    /// Each `(column, bad)` written into `good` makes `read` fail naming the column and value.
    fn assert_fields_named(
        good: &[String],
        header: &[String],
        cases: &[(&str, &str)],
        read: impl Fn(&[&str]) -> Result<(), FieldError>,
    ) {
        for (col, bad) in cases {
            let mut rec = good.to_vec();
            rec[header.iter().position(|c| c == col).unwrap()] = bad.to_string();
            let fields: Vec<&str> = rec.iter().map(String::as_str).collect();
            let e = read(&fields).unwrap_err().to_string();
            assert!(e.contains(&format!("column {col} = {bad:?}")), "{e}");
        }
    }

    #[test]
    fn summary_statistics_by_hand() {
        // Ten measured trials: elect 10, 20, ..., 90 ms converged, one not converged; msgs
        // 1..=10; split brain in two. An eleventh ran out of its work budget: counted, and
        // left out of every statistic.
        let mut rows: Vec<TrialRow> = (1..=10u64)
            .map(|i| {
                let elect = (i < 10).then_some(i as f64 * 10.0);
                let mut r = row(i, elect, i, i <= 2);
                r.budget_exceeded = false;
                r
            })
            .collect();
        let mut cut = row(11, None, 1000, true);
        cut.budget_exceeded = true;
        rows.push(cut);
        let key = rows[0].cell_key();
        let rec = summary_record(&key, &rows, None);
        let h = summary_header(&["net.loss"]);
        let get = |name: &str| rec[h.iter().position(|c| c == name).unwrap()].clone();
        assert_eq!(get("trials"), "11");
        assert_eq!(get("measured"), "10");
        assert_eq!(get("converged_rate"), "0.9");
        assert_eq!(get("elect_ms_mean"), "50");
        // 9 values 10..90: h = 8p; p5 → 0.4 → 14; p95 → 7.6 → 86; p99 → 7.92 → 89.2.
        assert_eq!(get("elect_ms_p5"), "14");
        assert_eq!(get("elect_ms_p50"), "50");
        assert_eq!(get("elect_ms_p95"), "86");
        assert_eq!(get("elect_ms_p99"), "89.2");
        assert_eq!(get("elect_ms_max"), "90");
        assert_eq!(get("msgs_election_mean"), "5.5");
        assert_eq!(get("msgs_election_p50"), "5.5");
        assert_eq!(get("msgs_election_p95"), "9.55");
        assert_eq!(get("msgs_election_max"), "10");
        assert_eq!(get("split_brain_rate"), "0.2");
        // Wilson 2/10: center (0.2 + 0.1920730) / 1.3841459 = 0.2832598,
        // half 1.959964 · √(0.016 + 0.0096036) / 1.3841459 = 0.2265777.
        assert_eq!(get("split_brain_ci_lo"), "0.056682");
        assert_eq!(get("split_brain_ci_hi"), "0.509838");
        assert_eq!(get("split_brain_ms_mean"), "0.4");
        assert_eq!(get("leader_changes_mean"), "1");
        assert_eq!(get("detect_ms_p50"), "150.5");
        assert_eq!(get("same_epoch_leaders_max"), "0");
        assert_eq!(get("budget_exceeded"), "1", "seed 11 ran out of budget");
        assert_eq!(get("skipped"), "");
        assert_eq!(get("faults_skipped_trials"), "0");
        let skipped = summary_record(&key, &[], Some("too small"));
        assert_eq!(skipped[h.iter().position(|c| c == "trials").unwrap()], "0");
        assert_eq!(skipped.last().unwrap(), "too small");
        assert_eq!(
            skipped[h.iter().position(|c| c == "elect_ms_p50").unwrap()],
            ""
        );
    }

    /// Summary rows of a few cells, as the sweep writes them.
    fn summary_rows() -> Vec<SummaryRow> {
        let rows: Vec<TrialRow> = (1..=10u64)
            .map(|i| row(i, (i < 9).then_some(i as f64 * 10.5), i, i <= 2))
            .collect();
        let key = rows[0].cell_key();
        vec![
            SummaryRow::compute(&key, &rows, None),
            SummaryRow::compute(&key, &rows[..1], None),
            SummaryRow::compute(&key, &[], Some("too small, \"quoted\"")),
        ]
    }

    #[test]
    fn summary_rows_round_trip_through_csv_fields() {
        let h = summary_header(&["net.loss"]);
        for r in summary_rows() {
            let rec = r.to_record();
            assert_eq!(rec.len(), h.len());
            let fields: Vec<&str> = rec.iter().map(String::as_str).collect();
            let back = SummaryRow::from_record(&fields, 1).unwrap();
            assert_eq!(back, r);
            assert_eq!(
                back.to_record(),
                rec,
                "reading and writing again is the same text"
            );
            for s in Stat::ALL {
                assert_eq!(
                    rec[h.iter().position(|c| c == s.column()).unwrap()],
                    r.text(s)
                );
            }
        }
        // Through a real CSV file: the header and the records, quoting included.
        let rows = summary_rows();
        let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
        w.write_record(&h).unwrap();
        for r in &rows {
            w.write_record(r.to_record()).unwrap();
        }
        let bytes = w.into_inner().unwrap();
        let mut rd = csv::Reader::from_reader(bytes.as_slice());
        assert_eq!(rd.headers().unwrap().iter().collect::<Vec<_>>(), h);
        let back: Vec<SummaryRow> = rd
            .records()
            .map(|rec| {
                let rec = rec.unwrap();
                SummaryRow::from_record(&rec.iter().collect::<Vec<_>>(), 1).unwrap()
            })
            .collect();
        assert_eq!(back, rows);
        // The statistic columns are the table's, in its order, then `skipped`.
        assert_eq!(SUMMARY_STAT_COLUMNS.len(), Stat::ALL.len() + 1);
        assert_eq!(SUMMARY_STAT_COLUMNS[0], "trials");
        assert_eq!(SUMMARY_STAT_COLUMNS[Stat::ALL.len()], "skipped");
        assert_eq!(
            Stat::RecoveredTimeoutsMax.column(),
            "recovered_timeouts_max"
        );
    }

    #[test]
    fn a_bad_summary_field_names_the_column_and_value() {
        let good = summary_rows()[0].to_record();
        assert_fields_named(
            &good,
            &summary_header(&["net.loss"]),
            &[
                ("nodes", "five"),
                ("trials", ""),
                ("trials", "2.5"),
                ("measured", "-1"),
                ("elect_ms_p50", "fast"),
                ("split_brain_rate", "NaN"),
                ("split_brain_ci_hi", "inf"),
                ("outcome_stable", "1.5"),
                ("same_epoch_leaders_max", "x"),
            ],
            |f| SummaryRow::from_record(f, 1).map(|_| ()),
        );
        let fields: Vec<&str> = good.iter().map(String::as_str).collect();
        let e = SummaryRow::from_record(&fields[1..], 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("fields, expected"), "{e}");
    }

    #[test]
    fn trials_whose_faults_did_not_apply_stay_out_of_the_statistics() {
        // Three measured trials (elect 10, 20, 30 ms) and two whose fault found no target;
        // those two look fast (elect 1 ms) and must not pull the statistics down.
        let mut rows: Vec<TrialRow> = (1..=3u64)
            .map(|i| row(i, Some(i as f64 * 10.0), 4, false))
            .collect();
        for seed in 4..=5 {
            let mut r = row(seed, Some(1.0), 0, true);
            r.faults_skipped = 1;
            rows.push(r);
        }
        let key = rows[0].cell_key();
        let h = summary_header(&["net.loss"]);
        let rec = summary_record(&key, &rows, None);
        let get = |name: &str| rec[h.iter().position(|c| c == name).unwrap()].clone();
        assert_eq!(get("trials"), "5");
        assert_eq!(get("measured"), "3");
        assert_eq!(get("faults_skipped_trials"), "2");
        assert_eq!(get("elect_ms_p50"), "20");
        assert_eq!(get("elect_ms_mean"), "20");
        assert_eq!(get("split_brain_rate"), "0");
        // Every fault skipped: no statistic at all, never a failover time.
        let none: Vec<TrialRow> = rows[3..].to_vec();
        let rec = summary_record(&key, &none, None);
        let get = |name: &str| rec[h.iter().position(|c| c == name).unwrap()].clone();
        assert_eq!(get("measured"), "0");
        assert_eq!(get("faults_skipped_trials"), "2");
        assert_eq!(get("elect_ms_p50"), "");
        assert_eq!(get("converged_rate"), "");
        assert_eq!(get("split_brain_rate"), "");
    }
}
