//! A small synthetic results directory in the runner's schema, and a tracer that runs real
//! trials through the simulator, for the report's tests.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use election_core::NodeId;
use election_report::{TracedTrial, TrialId};
use election_sim::{Fault, FaultAction, Selector, Sim, SimConfig};

pub const PROTOCOLS: [&str; 4] = ["bully", "ring", "raft", "raft+pre_vote+check_quorum"];
pub const SIZES: [u32; 3] = [3, 5, 7];
pub const SCENARIOS: [&str; 5] = [
    "leader-crash",
    "leader-crash-lowest-detects",
    "partition-leader-minority",
    "leader-recover",
    "flapping",
];
pub const SEEDS: u64 = 12;

/// One trial's values, before they are written.
#[derive(Clone, Debug)]
pub struct Trial {
    pub protocol: String,
    pub nodes: u32,
    pub scenario: String,
    pub seed: u64,
    pub converged: bool,
    pub elect_ms: f64,
    pub msgs_election: u64,
    pub split_brain: bool,
    pub split_brain_ms: f64,
    pub minority_leader_ms: f64,
    pub unavailable_ms: f64,
    pub leader_changes: u32,
    pub same_epoch: u32,
}

/// The default synthetic trials; deterministic formulas shaped like the real protocols.
pub fn trials() -> Vec<Trial> {
    let mut out = Vec::new();
    for p in PROTOCOLS {
        for sc in SCENARIOS {
            for n in SIZES {
                for seed in 0..SEEDS {
                    let nf = n as f64;
                    let bully = p.starts_with("bully");
                    let raft = p.starts_with("raft");
                    let jitter = ((seed * 37 + n as u64 * 11) % 17) as f64;
                    let msgs = if bully {
                        if sc == "leader-crash-lowest-detects" {
                            (nf * nf * 1.5) as u64 + seed % 3
                        } else {
                            (2.0 * nf) as u64 + seed % 2
                        }
                    } else if raft {
                        (2.0 * (nf - 1.0)) as u64 + seed % 4
                    } else {
                        (3.0 * nf) as u64 + seed % 2
                    };
                    let mut t = Trial {
                        protocol: p.to_string(),
                        nodes: n,
                        scenario: sc.to_string(),
                        seed,
                        converged: true,
                        elect_ms: if raft {
                            190.0
                        } else if bully {
                            230.0
                        } else {
                            260.0
                        } + 7.0 * jitter
                            + nf,
                        msgs_election: msgs,
                        split_brain: false,
                        split_brain_ms: 0.0,
                        minority_leader_ms: 0.0,
                        unavailable_ms: 0.0,
                        leader_changes: 1,
                        same_epoch: 0,
                    };
                    if sc == "partition-leader-minority" {
                        if !raft || (p == "raft" && seed % 3 == 0) {
                            t.split_brain = !raft || seed % 3 == 0;
                            t.split_brain_ms = 1500.0 + 13.0 * jitter;
                            t.minority_leader_ms = t.split_brain_ms;
                        }
                        if p == "raft" && seed % 3 != 0 {
                            t.minority_leader_ms = 0.0;
                        }
                    }
                    if sc == "leader-recover" {
                        t.leader_changes = if bully { 2 } else { 1 };
                    }
                    if sc == "flapping" {
                        t.leader_changes = if bully {
                            5 + (seed % 3) as u32
                        } else if raft {
                            2
                        } else {
                            4
                        };
                    }
                    if p == "ring" && sc == "flapping" && seed % 4 == 0 {
                        t.converged = false;
                    }
                    t.unavailable_ms = if t.converged { t.elect_ms } else { 30_000.0 };
                    out.push(t);
                }
            }
        }
    }
    out
}

fn num(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

fn pctl(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 1 {
        return sorted[0];
    }
    let h = (n - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

fn wilson(k: usize, n: usize) -> (f64, f64) {
    let z = 1.959964f64;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / d;
    ((c - h).max(0.0), (c + h).min(1.0))
}

/// `trials.csv`'s header without varied parameters: the runner's own (one schema).
pub fn trial_header() -> String {
    election_runner::results::trial_header(&[]).join(",")
}
/// The `summary.csv` header of a sweep varying nothing: the runner's (one schema for the writer
/// and every reader).
pub fn summary_header() -> String {
    election_runner::results::summary_header(&[]).join(",")
}

/// A CSV line with `header`'s columns, each from `values` by name (empty when not given).
fn line(header: &str, values: &[(&str, String)]) -> String {
    for (k, _) in values {
        assert!(header.split(',').any(|c| c == *k), "fixture column {k}");
    }
    header
        .split(',')
        .map(|c| {
            values
                .iter()
                .find(|(k, _)| *k == c)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Writes `trials` as a results directory (with one extra skipped cell) and returns it.
pub fn write_results(dir: &Path, trials: &[Trial]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let header = trial_header();
    let mut tcsv = header.clone();
    tcsv.push('\n');
    for t in trials {
        let leader = if t.converged { t.nodes - 1 } else { 0 };
        let opt = |c: bool, v: String| if c { v } else { String::new() };
        let stranded = if t.converged { 0 } else { t.nodes - 1 };
        let row = line(
            &header,
            &[
                ("mode", "sim".into()),
                ("protocol", t.protocol.clone()),
                ("nodes", t.nodes.to_string()),
                ("scenario", t.scenario.clone()),
                ("net", "lan".into()),
                ("seed", t.seed.to_string()),
                ("converged", t.converged.to_string()),
                ("leader", opt(t.converged, leader.to_string())),
                ("detect_ms", num(t.elect_ms * 0.6)),
                ("elect_ms", opt(t.converged, num(t.elect_ms))),
                ("unavailable_ms", num(t.unavailable_ms)),
                (
                    "stranded_node_ms",
                    num(t.unavailable_ms * f64::from(t.nodes - 1)),
                ),
                ("stranded_nodes", stranded.to_string()),
                ("msgs_election", t.msgs_election.to_string()),
                ("msgs_total", (t.msgs_election + 400).to_string()),
                ("bytes_total", ((t.msgs_election + 400) * 24).to_string()),
                ("split_brain", t.split_brain.to_string()),
                ("split_brain_ms", num(t.split_brain_ms)),
                ("minority_leader_ms", num(t.minority_leader_ms)),
                ("max_leaders", if t.split_brain { "2" } else { "1" }.into()),
                ("same_epoch_leaders", t.same_epoch.to_string()),
                ("leader_changes", t.leader_changes.to_string()),
                ("elections_started", "1".into()),
                ("msgs_election_req", (t.msgs_election / 2).to_string()),
                (
                    "msgs_reply",
                    (t.msgs_election - t.msgs_election / 2 - 1).to_string(),
                ),
                ("msgs_leader", "1".into()),
                ("msgs_heartbeat", "12".into()),
                ("faults_skipped", "0".into()),
                ("budget_exceeded", "false".into()),
                ("end_ms", num(4000.0 + t.elect_ms)),
                ("failover_ms", opt(t.converged, num(t.elect_ms))),
                ("paused_leader_ms", "0".into()),
                ("msgs_workload", "0".into()),
                (
                    "outcome",
                    if t.converged {
                        "recovered-after"
                    } else {
                        "no-leader"
                    }
                    .into(),
                ),
                ("recovered_timeouts", opt(t.converged, "2".into())),
            ],
        );
        let _ = writeln!(tcsv, "{row}");
    }
    std::fs::write(dir.join("trials.csv"), tcsv).unwrap();

    let mut scsv = summary_header();
    scsv.push('\n');
    let mut cells: Vec<(String, u32, String)> = Vec::new();
    for t in trials {
        let k = (t.protocol.clone(), t.nodes, t.scenario.clone());
        if !cells.contains(&k) {
            cells.push(k);
        }
    }
    for (p, n, sc) in &cells {
        let ts: Vec<&Trial> = trials
            .iter()
            .filter(|t| &t.protocol == p && t.nodes == *n && &t.scenario == sc)
            .collect();
        let k = ts.len();
        let mut e: Vec<f64> = ts
            .iter()
            .filter(|t| t.converged)
            .map(|t| t.elect_ms)
            .collect();
        e.sort_by(f64::total_cmp);
        let mut m: Vec<f64> = ts.iter().map(|t| t.msgs_election as f64).collect();
        m.sort_by(f64::total_cmp);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let stat = |v: &[f64], f: &dyn Fn(&[f64]) -> f64| {
            if v.is_empty() {
                String::new()
            } else {
                num(f(v))
            }
        };
        let sb = ts.iter().filter(|t| t.split_brain).count();
        let (lo, hi) = wilson(sb, k);
        let mut d: Vec<f64> = ts
            .iter()
            .filter(|t| t.converged)
            .map(|t| t.elect_ms * 0.6)
            .collect();
        d.sort_by(f64::total_cmp);
        let avg = |f: &dyn Fn(&Trial) -> f64| num(ts.iter().map(|t| f(t)).sum::<f64>() / k as f64);
        let row = line(
            &summary_header(),
            &[
                ("protocol", p.clone()),
                ("nodes", n.to_string()),
                ("scenario", sc.clone()),
                ("net", "lan".into()),
                ("trials", k.to_string()),
                ("measured", k.to_string()),
                (
                    "converged_rate",
                    num(ts.iter().filter(|t| t.converged).count() as f64 / k as f64),
                ),
                ("elect_ms_mean", stat(&e, &mean)),
                ("elect_ms_p5", stat(&e, &|v| pctl(v, 0.05))),
                ("elect_ms_p50", stat(&e, &|v| pctl(v, 0.5))),
                ("elect_ms_p95", stat(&e, &|v| pctl(v, 0.95))),
                ("elect_ms_p99", stat(&e, &|v| pctl(v, 0.99))),
                ("elect_ms_max", stat(&e, &|v| v[v.len() - 1])),
                ("msgs_election_mean", num(mean(&m))),
                ("msgs_election_p50", num(pctl(&m, 0.5))),
                ("msgs_election_p95", num(pctl(&m, 0.95))),
                ("msgs_election_p99", num(pctl(&m, 0.99))),
                ("msgs_election_max", num(m[m.len() - 1])),
                ("split_brain_rate", num(sb as f64 / k as f64)),
                ("split_brain_ci_lo", num(lo)),
                ("split_brain_ci_hi", num(hi)),
                ("split_brain_ms_mean", avg(&|t| t.split_brain_ms)),
                ("minority_leader_ms_mean", avg(&|t| t.minority_leader_ms)),
                ("unavailable_ms_mean", avg(&|t| t.unavailable_ms)),
                (
                    "stranded_node_ms_mean",
                    avg(&|t| t.unavailable_ms * f64::from(t.nodes - 1)),
                ),
                ("leader_changes_mean", avg(&|t| t.leader_changes as f64)),
                ("detect_ms_p50", stat(&d, &|v| pctl(v, 0.5))),
                (
                    "same_epoch_leaders_max",
                    ts.iter()
                        .map(|t| t.same_epoch)
                        .max()
                        .unwrap_or(0)
                        .to_string(),
                ),
                ("faults_skipped_trials", "0".into()),
                ("budget_exceeded", "0".into()),
                // failover_ms is elect_ms in these trials (the leader changes once).
                ("failover_ms_p5", stat(&e, &|v| pctl(v, 0.05))),
                ("failover_ms_p50", stat(&e, &|v| pctl(v, 0.5))),
                ("failover_ms_p95", stat(&e, &|v| pctl(v, 0.95))),
                ("failover_ms_p99", stat(&e, &|v| pctl(v, 0.99))),
                ("outcome_stable", "0".into()),
                (
                    "outcome_recovered_after",
                    ts.iter().filter(|t| t.converged).count().to_string(),
                ),
                (
                    "outcome_no_leader",
                    ts.iter().filter(|t| !t.converged).count().to_string(),
                ),
                ("outcome_livelock", "0".into()),
                ("outcome_minority_only", "0".into()),
                (
                    "recovered_timeouts_max",
                    if ts.iter().any(|t| t.converged) {
                        "2"
                    } else {
                        ""
                    }
                    .into(),
                ),
            ],
        );
        let _ = writeln!(scsv, "{row}");
    }
    // A skipped cell, as the runner writes them.
    let skipped = line(
        &summary_header(),
        &[
            ("protocol", "ring".into()),
            ("nodes", "2".into()),
            ("scenario", "partition-leader-minority".into()),
            ("net", "lan".into()),
            ("trials", "0".into()),
            ("measured", "0".into()),
            ("faults_skipped_trials", "0".into()),
            ("budget_exceeded", "0".into()),
            ("skipped", "partition needs at least 3 nodes".into()),
        ],
    );
    let _ = writeln!(scsv, "{skipped}");
    std::fs::write(dir.join("summary.csv"), scsv).unwrap();
    let manifest = format!(
        r#"{{"tool":"election-bench","version":"0.1.0","name":"test","command":"election-bench sweep --name test --seeds {SEEDS}","config":{{"protocols":["bully","ring","raft","raft+pre_vote+check_quorum"],"nodes":[3,5,7],"seeds":{{"count":{SEEDS},"first":0}},"timing":{{"heartbeat_ms":50,"detect_timeout_ms":150,"detect_jitter_ms":150}},"nets":{{"lan":{{"latency":{{"kind":"constant","ms":1.0}},"loss":0.0}}}}}},"cells":{},"trials":{}}}"#,
        cells.len() + 1,
        trials.len()
    );
    std::fs::write(dir.join("manifest.json"), manifest).unwrap();
    dir.to_path_buf()
}

/// Runs `spec` as a sweep on one thread into `results`, recording `command` as its own.
pub fn run_small_sweep(spec: &election_runner::SweepSpec, results: &Path, command: &str) {
    let plan = spec.plan().unwrap();
    election_runner::run_sweep(
        &plan,
        &election_runner::SweepOptions {
            out: results.to_path_buf(),
            jobs: Some(1),
            shard: None,
            shard_by: Default::default(),
            resume: false,
            verify_sample: election_runner::sweep::RESUME_SAMPLE,
            force: false,
            progress: false,
            command: command.into(),
        },
    )
    .unwrap();
}

/// A fresh scratch directory under the target dir.
pub fn scratch(name: &str) -> PathBuf {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("report-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    base
}

/// The scenario's faults, for real traced trials.
pub fn faults(scenario: &str) -> Vec<Fault> {
    match scenario {
        "partition-leader-minority" => vec![
            Fault::at_ms(
                1000.0,
                FaultAction::Partition(vec![vec![Selector::Leader], vec![Selector::Rest]]),
            ),
            Fault::at_ms(2500.0, FaultAction::Heal),
        ],
        "leader-crash-lowest-detects" => vec![
            Fault::at_ms(
                1000.0,
                FaultAction::Detection {
                    nodes: election_sim::NodeSet::AllExcept(Selector::Lowest),
                    enabled: false,
                },
            ),
            Fault::at_ms(1000.0, FaultAction::Crash(Selector::Leader)),
        ],
        _ => vec![Fault::at_ms(1000.0, FaultAction::Crash(Selector::Leader))],
    }
}

/// Runs one trial for real, with tracing on.
pub fn run_traced(protocol: &str, nodes: u32, scenario: &str, seed: u64) -> TracedTrial {
    let mut cfg = SimConfig::new(nodes, seed);
    cfg.faults = faults(scenario);
    cfg.trace = true;
    cfg.horizon = Duration::from_secs(6);
    cfg.settle = Duration::from_millis(500);
    let report = if protocol.starts_with("bully") {
        let c = Arc::new(election_bully::BullyConfig::new(nodes));
        Sim::new(cfg, |id: NodeId| election_bully::Bully::new(id, c.clone()))
            .unwrap()
            .run()
    } else if protocol.starts_with("ring") {
        let c = Arc::new(election_ring::RingConfig::new(nodes));
        Sim::new(cfg, |id: NodeId| election_ring::Ring::new(id, c.clone()))
            .unwrap()
            .run()
    } else {
        let mut rc = election_raft::RaftConfig::new(nodes);
        rc.pre_vote = protocol.contains("pre_vote");
        rc.check_quorum = protocol.contains("check_quorum");
        let c = Arc::new(rc);
        Sim::new(cfg, |id: NodeId| election_raft::Raft::new(id, c.clone()))
            .unwrap()
            .run()
    };
    TracedTrial {
        events: report.trace,
        metrics: report.metrics,
    }
}

/// A tracer for `render_report` that runs trials for real.
pub fn tracer(id: &TrialId) -> Result<TracedTrial, String> {
    Ok(run_traced(&id.protocol, id.nodes, &id.scenario, id.seed))
}

/// Rewrites a results directory as if the sweep had varied `key` over `values`: every trial
/// and summary row is repeated once per value, with the value in a new column.
pub fn vary(dir: &Path, key: &str, values: &[&str]) {
    for (file, after) in [("trials.csv", 6), ("summary.csv", 4)] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let mut out = String::new();
        for (i, line) in text.lines().enumerate() {
            let cols: Vec<&str> = line.split(',').collect();
            let with = |v: &str| {
                let mut c: Vec<&str> = cols[..after].to_vec();
                c.push(v);
                c.extend(&cols[after..]);
                c.join(",")
            };
            if i == 0 {
                out.push_str(&with(key));
                out.push('\n');
            } else {
                for v in values {
                    out.push_str(&with(v));
                    out.push('\n');
                }
            }
        }
        std::fs::write(dir.join(file), out).unwrap();
    }
    // Every cell and trial is now there once per value.
    let mp = dir.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mp).unwrap()).unwrap();
    for k in ["cells", "trials"] {
        m[k] = (m[k].as_u64().unwrap() * values.len() as u64).into();
    }
    std::fs::write(&mp, m.to_string()).unwrap();
}
