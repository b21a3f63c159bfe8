//! The experiment: for each cluster size a fresh cluster, then for each fault its trials on it
//! (a count per fault and size, [`Trials`]).
//!
//! A trial:
//!
//! 1. waits until the cluster is **healthy**: every running member answers its status endpoint
//!    and they all name the same leader (which names itself) at the same term, continuously for
//!    two election timeouts (polled every heartbeat interval, at most every 50 ms). The instant
//!    that agreement was first seen is the trial's *origin*;
//! 2. reads the machine's load (`/proc/loadavg`) and injects the fault into the leader it agreed
//!    on: `kill` is SIGKILL (scenario `leader-crash`), `pause` is SIGSTOP for the spec's
//!    `pause_ms` then SIGCONT (scenario `leader-pause`), `partition` cuts the leader and the
//!    lowest followers (`floor((n-1)/2)` members) off from the rest both ways for the spec's
//!    `outage_ms`, then heals (scenario `partition-leader-minority`, through the peer proxies of
//!    [`crate::proxy`]); the instant just before the signal or the cut is `t0`;
//! 3. waits for the cluster to be healthy again after the last action (the SIGCONT), at most
//!    the trial's deadline (`deadline_ms` after it, by default twenty election timeouts): the
//!    end of the trial. A trial with no agreement by then ends at the deadline and is recorded
//!    as it is (no failover, its outcome), never dropped;
//! 4. measures the trial from the members' logs ([`crate::measure`]) with the simulator's
//!    observer, judging the outcome over a hold span of two election timeouts (the simulator's
//!    is ten of its longest: real trials would take minutes each), and writes the row;
//! 5. restores what the fault took: a killed member is started again with the same flags and
//!    data before the next trial's health check. After a pause or a partition nothing is
//!    restarted, and the agreement that ended the trial (every member, one leader and term, for
//!    two election timeouts) is the next trial's health check: the next fault follows it at
//!    once, its origin the instant that agreement was first seen.
//!
//! The prediction to compare with is the system spec (`etcd@3.4`, or `etcd@3.4+pre_vote` with
//! `--pre-vote`) at the same timing: `run`/`sweep` with `--set heartbeat_ms=H --set
//! detect_timeout_ms=E --set detect_jitter_ms=E`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use election_runner::results::{
    summary_header, summary_record, trial_header, CellKey, Manifest, TrialRow,
};
use election_runner::SweepSpec;

use crate::cluster::{now_ms, Agreement, Cluster, ClusterConfig};
use crate::log::{parse_line, LogEvent};
use crate::measure::{lost_terms, measure, Act, Failover, Verdict, Window};
use crate::version::{parse_version_output, system_for, EtcdVersion};
use crate::Error;

/// The `mode` column of a real row.
pub const MODE: &str = "real";

/// The `net` column of a real row: etcd's own peer traffic over loopback.
pub const NET: &str = "loopback";

/// A fault the run can inject.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// SIGKILL the leader (`leader-crash`); it is restarted with its data after the trial.
    Kill,
    /// SIGSTOP the leader for `pause_ms`, then SIGCONT (`leader-pause`).
    Pause,
    /// Cut the leader and the lowest followers, `floor((n-1)/2)` members in all, off from the
    /// majority both ways for `outage_ms`, then heal (`partition-leader-minority`).
    Partition,
}

/// The faults `--faults` names, in order.
pub const FAULTS: [Fault; 3] = [Fault::Kill, Fault::Pause, Fault::Partition];

impl Fault {
    /// Its name in `--faults`.
    pub fn name(self) -> &'static str {
        match self {
            Fault::Kill => "kill",
            Fault::Pause => "pause",
            Fault::Partition => "partition",
        }
    }

    /// The simulator's scenario it is.
    pub fn scenario(self) -> &'static str {
        match self {
            Fault::Kill => "leader-crash",
            Fault::Pause => "leader-pause",
            Fault::Partition => "partition-leader-minority",
        }
    }

    /// The fault called `s`, or an error naming the valid ones.
    pub fn parse(s: &str) -> Result<Fault, Error> {
        if let Some(f) = FAULTS.iter().find(|f| f.name() == s) {
            return Ok(*f);
        }
        Err(Error::Usage(format!(
            "--faults {s:?}: not a fault; the faults are {}",
            FAULTS.map(Fault::name).join(", ")
        )))
    }
}

/// One entry of `--trials`: `K` (every fault on every size), `FAULT=K` (that fault on every
/// size) or `N:FAULT=K` (that fault on `N` members).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrialCount {
    /// The cluster size it is for (`None`: every size).
    pub nodes: Option<u32>,
    /// The fault it is for (`None`: every fault).
    pub fault: Option<Fault>,
    /// How many trials.
    pub trials: u32,
}

/// How many trials each (cluster size, fault) gets: the most specific [`TrialCount`] that
/// names it (`N:FAULT=K` over `FAULT=K` over `K`), none when no entry names it (that cell is
/// not run). `10` is ten of every fault on every size; `kill=40,pause=20` is 40 kills and 20
/// pauses on every size; `3:kill=40,3:pause=20,3:partition=15,5:kill=40` is the issue's
/// experiment in one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trials(pub Vec<TrialCount>);

impl Trials {
    /// `k` trials of every fault on every size.
    pub fn each(k: u32) -> Trials {
        Trials(vec![TrialCount {
            nodes: None,
            fault: None,
            trials: k,
        }])
    }

    /// `--trials` as written (comma-separated entries).
    pub fn parse(s: &str) -> Result<Trials, Error> {
        let bad = |e: &str, why: &str| {
            Error::Usage(format!(
                "--trials {s:?}: {e:?} {why}; give K, FAULT=K or N:FAULT=K, comma-separated \
                 (e.g. 3:kill=40,3:pause=20,5:kill=40)"
            ))
        };
        let mut out = Vec::new();
        for e in s.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (cell, k) = match e.split_once('=') {
                Some((c, k)) => (Some(c.trim()), k.trim()),
                None => (None, e),
            };
            let trials: u32 = k
                .parse()
                .map_err(|_| bad(e, "does not end in a whole number of trials"))?;
            let (nodes, fault) = match cell {
                None => (None, None),
                Some(c) => {
                    let (n, f) = match c.split_once(':') {
                        Some((n, f)) => (
                            Some(n.trim().parse::<u32>().map_err(|_| {
                                bad(e, "has no whole number of members before ':'")
                            })?),
                            f.trim(),
                        ),
                        None => (None, c),
                    };
                    let f = FAULTS
                        .iter()
                        .copied()
                        .find(|x| x.name() == f)
                        .ok_or_else(|| bad(e, "names no fault (kill, pause, partition)"))?;
                    (n, Some(f))
                }
            };
            let entry = TrialCount {
                nodes,
                fault,
                trials,
            };
            if out
                .iter()
                .any(|o: &TrialCount| (o.nodes, o.fault) == (nodes, fault))
            {
                return Err(bad(e, "repeats an earlier entry's cell"));
            }
            out.push(entry);
        }
        if out.is_empty() {
            return Err(bad(s, "is empty"));
        }
        Ok(Trials(out))
    }

    /// The trials of `fault` on `n` members (0: the cell is not run).
    pub fn of(&self, n: u32, fault: Fault) -> u32 {
        let rank = |c: &TrialCount| {
            let fits = c.nodes.is_none_or(|m| m == n) && c.fault.is_none_or(|f| f == fault);
            fits.then_some(u8::from(c.nodes.is_some()) * 2 + u8::from(c.fault.is_some()))
        };
        self.0
            .iter()
            .filter_map(|c| rank(c).map(|r| (r, c.trials)))
            .max_by_key(|&(r, _)| r)
            .map_or(0, |(_, k)| k)
    }

    /// The faults the entries name, in `--faults` order (none when an entry names no fault).
    pub fn faults(&self) -> Option<Vec<Fault>> {
        if self.0.iter().any(|c| c.fault.is_none()) {
            return None;
        }
        Some(
            FAULTS
                .into_iter()
                .filter(|f| self.0.iter().any(|c| c.fault == Some(*f)))
                .collect(),
        )
    }
}

impl std::fmt::Display for Trials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|c| match (c.nodes, c.fault) {
                (None, None) => c.trials.to_string(),
                (None, Some(x)) => format!("{}={}", x.name(), c.trials),
                (Some(n), Some(x)) => format!("{n}:{}={}", x.name(), c.trials),
                (Some(n), None) => format!("{n}:={}", c.trials),
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// What to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RealityArgs {
    /// The `etcd` binary (a name is looked up on `PATH`).
    pub etcd: PathBuf,
    /// The system spec to compare with, instead of the one `etcd --version` selects.
    pub system: Option<String>,
    /// Cluster sizes, one cluster each.
    pub nodes: Vec<u32>,
    /// `--heartbeat-interval`, ms.
    pub heartbeat_ms: u64,
    /// `--election-timeout`, ms.
    pub election_ms: u64,
    /// The faults, each run [`Trials::of`] times per size.
    pub faults: Vec<Fault>,
    /// Trials per fault and size.
    pub trials: Trials,
    /// Start the members with `--pre-vote`.
    pub pre_vote: bool,
    /// Where the files go.
    pub out: PathBuf,
    /// How long after its last action a trial may take to settle, ms (`None`: twenty election
    /// timeouts).
    pub deadline_ms: Option<u64>,
}

impl RealityArgs {
    /// etcd's defaults: 3 members, 100/1000 ms, kills and pauses, 10 trials each.
    pub fn new(out: PathBuf) -> RealityArgs {
        RealityArgs {
            etcd: PathBuf::from("etcd"),
            system: None,
            nodes: vec![3],
            heartbeat_ms: 100,
            election_ms: 1000,
            faults: vec![Fault::Kill, Fault::Pause],
            trials: Trials::each(10),
            pre_vote: false,
            out,
            deadline_ms: None,
        }
    }

    /// The per-trial deadline after the last action, ms.
    pub fn deadline(&self) -> u64 {
        self.deadline_ms.unwrap_or(20 * self.election_ms)
    }

    fn check(&self) -> Result<(), Error> {
        let usage = |s: String| Err(Error::Usage(s));
        if self.nodes.is_empty() {
            return usage("--nodes: give at least one cluster size".into());
        }
        if let Some(n) = self.nodes.iter().find(|&&n| !(1..=9).contains(&n)) {
            return usage(format!(
                "--nodes {n}: a cluster here has 1 to 9 members (each is an etcd process on this machine)"
            ));
        }
        if self.faults.is_empty() {
            return usage("--faults: give at least one fault".into());
        }
        for c in &self.trials.0 {
            if let Some(n) = c.nodes.filter(|n| !self.nodes.contains(n)) {
                return usage(format!(
                    "--trials {}: {n} members is not one of --nodes",
                    self.trials
                ));
            }
            if let Some(f) = c.fault.filter(|f| !self.faults.contains(f)) {
                return usage(format!(
                    "--trials {}: {} is not one of --faults",
                    self.trials,
                    f.name()
                ));
            }
        }
        for &n in &self.nodes {
            if self.faults.iter().all(|&f| self.trials.of(n, f) == 0) {
                return usage(format!(
                    "--trials {}: no trials on {n} members; give some or drop {n} from --nodes",
                    self.trials
                ));
            }
        }
        if self.heartbeat_ms == 0 {
            return usage("--timing: the heartbeat interval must be at least 1 ms".into());
        }
        // etcd's own rule (embed/config.go Validate): the election timeout is at least five
        // heartbeat intervals.
        if self.election_ms < 5 * self.heartbeat_ms {
            return usage(format!(
                "--timing {}/{}: etcd requires an election timeout of at least 5 heartbeat intervals",
                self.heartbeat_ms, self.election_ms
            ));
        }
        if self.deadline_ms == Some(0) {
            return usage("--deadline-ms 0: a trial needs time to elect".into());
        }
        Ok(())
    }
}

/// The machine's load when a trial's fault was injected: `/proc/loadavg`'s first three fields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Load(pub Option<[f64; 3]>);

impl Load {
    /// Read `/proc/loadavg` (none where there is no such file).
    pub fn now() -> Load {
        Load(
            fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|s| parse_loadavg(&s)),
        )
    }
}

fn parse_loadavg(s: &str) -> Option<[f64; 3]> {
    let mut it = s.split_whitespace().map(str::parse::<f64>);
    Some([it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?])
}

/// One finished trial.
#[derive(Clone, Debug, PartialEq)]
pub struct TrialReport {
    /// Its `trials.csv` row (`mode = real`).
    pub row: TrialRow,
    /// What the log says about the failover.
    pub failover: Failover,
    /// The load at the fault.
    pub load: Load,
    /// The trial's instants (origin, fault, calm, end), ms since the Unix epoch.
    pub window: Window,
    /// The member (1-based) the fault hit.
    pub target: u32,
    /// What the logs show for each lost term ([`crate::measure::lost_terms`]).
    pub lost_terms: String,
    /// Empty, or why the trial did not settle.
    pub note: String,
}

/// What [`run`] did.
#[derive(Debug)]
pub struct RealityOutcome {
    /// etcd's version.
    pub version: EtcdVersion,
    /// The system spec of the rows' `protocol` column.
    pub protocol: String,
    /// Every trial, in order.
    pub trials: Vec<TrialReport>,
    /// The files written.
    pub files: Vec<PathBuf>,
}

/// What [`run`] tells its caller as it goes.
#[derive(Debug)]
pub enum Progress<'a> {
    /// etcd's version and the spec it is compared with.
    Version(EtcdVersion, &'a str),
    /// A cluster of this size is up (its member PIDs).
    ClusterUp(u32, Vec<u32>),
    /// A trial finished (index within its fault, trials per fault).
    Trial(&'a TrialReport, u32, u32),
}

/// `etcd --version`.
pub fn etcd_version(etcd: &Path) -> Result<EtcdVersion, Error> {
    let out = Command::new(etcd).arg("--version").output().map_err(|e| {
        Error::Usage(format!(
            "--etcd {}: cannot run it ({e}); install etcd (Debian: apt-get install etcd-server) or give its path",
            etcd.display()
        ))
    })?;
    if !out.status.success() {
        return Err(Error::Version(format!(
            "--etcd {}: `--version` failed ({}): {}",
            etcd.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    parse_version_output(&String::from_utf8_lossy(&out.stdout))
}

/// The protocol spec real rows carry: the system, with `+pre_vote` when etcd 3.4 runs with
/// `--pre-vote` (3.5 has it on by default).
pub fn protocol_spec(system: &str, pre_vote: bool) -> String {
    if pre_vote && system == "etcd@3.4" {
        format!("{system}+pre_vote")
    } else {
        system.to_string()
    }
}

/// The simulator's cell of the prediction: the spec at this timing, on `scenario` — whose
/// `pause_ms` the real pause lasts, and whose key the real rows take (mode and net aside).
fn plan_cell(
    protocol: &str,
    nodes: u32,
    scenario: &str,
    args: &RealityArgs,
) -> Result<election_runner::Cell, Error> {
    let e = args.election_ms.to_string();
    let params = [
        ("heartbeat_ms", args.heartbeat_ms.to_string()),
        ("detect_timeout_ms", e.clone()),
        ("detect_jitter_ms", e),
    ];
    let spec = SweepSpec {
        name: Some("reality".into()),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), vec![v.clone()]))
            .collect(),
        ..SweepSpec::default()
    }
    .one_cell(protocol, nodes, scenario, "ideal");
    Ok(spec.plan()?.runnable_cell(|cell, why| {
        format!(
            "{} with {nodes} nodes cannot run {scenario}: {why}",
            cell.protocol.spec
        )
    })?)
}

/// A member's log, read as it grows.
#[derive(Debug)]
struct LogFollower {
    path: PathBuf,
    offset: u64,
    partial: String,
    events: Vec<LogEvent>,
}

impl LogFollower {
    fn new(path: PathBuf) -> LogFollower {
        LogFollower {
            path,
            offset: 0,
            partial: String::new(),
            events: Vec::new(),
        }
    }

    fn read(&mut self) -> Result<(), Error> {
        use std::io::{Read, Seek, SeekFrom};
        let io = |e| Error::Io {
            path: self.path.clone(),
            source: e,
        };
        let mut f = fs::File::open(&self.path).map_err(io)?;
        f.seek(SeekFrom::Start(self.offset)).map_err(io)?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf).map_err(io)?;
        self.offset += buf.len() as u64;
        self.partial.push_str(&String::from_utf8_lossy(&buf));
        // Whole lines only: the last may still be being written.
        if let Some(end) = self.partial.rfind('\n') {
            let done: String = self.partial.drain(..=end).collect();
            self.events.extend(done.lines().filter_map(parse_line));
        }
        Ok(())
    }
}

/// The run's settings and machine, beside its rows.
pub const MANIFEST: &str = "run.json";

/// `run.json`: what ran, where, when (`finished_unix_ms` once it has).
fn manifest(
    args: &RealityArgs,
    version: EtcdVersion,
    protocol: &str,
    started: i64,
    finished: Option<i64>,
    trials: usize,
) -> serde_json::Value {
    let load = Load::now().0;
    serde_json::json!({
        "mode": MODE,
        "etcd": args.etcd.display().to_string(),
        "out": args.out.display().to_string(),
        "etcd_version": version.to_string(),
        "protocol": protocol,
        "heartbeat_ms": args.heartbeat_ms,
        "election_ms": args.election_ms,
        "pre_vote": args.pre_vote,
        "nodes": args.nodes,
        "faults": args.faults.iter().map(|f| f.name()).collect::<Vec<_>>(),
        "trials": args.trials.to_string(),
        "cells": args.nodes.iter().flat_map(|&n| args.faults.iter().map(move |&f| (n, f)))
            .map(|(n, f)| serde_json::json!({"nodes": n, "fault": f.name(), "scenario": f.scenario(), "trials": args.trials.of(n, f)}))
            .collect::<Vec<_>>(),
        "deadline_ms": args.deadline(),
        "hold_ms": verdict(args.election_ms).hold_ms,
        "host": fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_default(),
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "loadavg_now": load.map(|l| l.to_vec()),
        "started_unix_ms": started,
        "finished_unix_ms": finished,
        "trials_done": trials,
    })
}

fn write_manifest(out: &Path, v: &serde_json::Value) -> Result<(), Error> {
    let path = out.join(MANIFEST);
    let text = serde_json::to_string_pretty(v).expect("JSON of plain values") + "\n";
    fs::write(&path, text).map_err(|e| Error::Io { path, source: e })
}

/// The injector's journal of one cluster, beside its members' logs: `unix_ms,act,member`.
pub const JOURNAL: &str = "journal.csv";

/// The members of one cluster, beside their logs: `member,raft_id,client,peer`.
pub const MEMBERS: &str = "members.csv";

fn write_csv(path: &Path, rows: Vec<Vec<String>>) -> Result<(), Error> {
    let io = |e: std::io::Error| Error::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    for r in rows {
        w.write_record(&r)
            .map_err(|e| io(std::io::Error::other(e)))?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| io(std::io::Error::other(e.to_string())))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    // Renamed into place: a run stopped mid-write leaves the previous whole file.
    let tmp = path.with_file_name(format!(".{}.tmp", name.unwrap_or_default()));
    fs::write(&tmp, bytes).map_err(io)?;
    fs::rename(&tmp, path).map_err(io)
}

fn write_members(dir: &Path, c: &Cluster) -> Result<(), Error> {
    let mut rows = vec![["member", "raft_id", "client", "peer"]
        .map(String::from)
        .to_vec()];
    for (i, id) in c.ids().iter().enumerate() {
        let (client, peer) = c.addrs(i);
        rows.push(vec![
            (i + 1).to_string(),
            format!("{id:x}"),
            client.to_string(),
            peer.to_string(),
        ]);
    }
    write_csv(&dir.join(MEMBERS), rows)
}

fn write_journal(path: &Path, journal: &[(i64, Act)]) -> Result<(), Error> {
    let mut rows = vec![["unix_ms", "act", "member"].map(String::from).to_vec()];
    for (t, a) in journal {
        let (name, who) = match a {
            Act::Crash(i) => ("crash", (i + 1).to_string()),
            Act::Restart(i) => ("restart", (i + 1).to_string()),
            Act::Pause(i) => ("pause", (i + 1).to_string()),
            Act::Resume(i) => ("resume", (i + 1).to_string()),
            // The groups' members, 1-based, space-separated, the groups joined by `|`.
            Act::Partition(groups) => (
                "partition",
                groups
                    .iter()
                    .map(|g| {
                        g.iter()
                            .map(|i| (i + 1).to_string())
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect::<Vec<_>>()
                    .join("|"),
            ),
            Act::Heal => ("heal", String::new()),
        };
        rows.push(vec![t.to_string(), name.to_string(), who]);
    }
    write_csv(path, rows)
}

/// The files of a run.
pub(crate) struct Files {
    pub(crate) out: PathBuf,
}

/// The sweep-style manifest beside a run's rows, so that the readers of results directories
/// (`compare`, `report`) read a real run as they read a sweep.
pub const SWEEP_MANIFEST: &str = "manifest.json";

/// `manifest.json` of a real run: the runner's [`Manifest`] with `config.mode = "real"`, the
/// cells' protocol, sizes, scenarios and net (`loopback`) as a sweep's config names them, and
/// the whole `run.json` under `config.run`; `cells` and `trials` count `summary.csv`'s and
/// `trials.csv`'s rows. It records no `trials_csv` hash: a real run is checked against its
/// logs (`reality --replay`), not against a recomputation.
pub fn sweep_manifest(
    out: &Path,
    run: &serde_json::Value,
    rows: &[&TrialRow],
    cells: usize,
) -> Manifest {
    let mut nodes: Vec<u32> = rows.iter().map(|r| r.nodes).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let mut scenarios: Vec<&str> = Vec::new();
    for r in rows {
        if !scenarios.contains(&r.scenario.as_str()) {
            scenarios.push(&r.scenario);
        }
    }
    let protocol = run["protocol"].as_str().unwrap_or_default();
    let name = out
        .file_name()
        .map_or("reality".into(), |n| n.to_string_lossy().into_owned());
    let mut command = format!(
        "election-bench reality --nodes {} --trials {} --timing {}/{}",
        run["nodes"]
            .as_array()
            .map(|a| a
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(","))
            .unwrap_or_default(),
        run["trials"]
            .as_str()
            .map(String::from)
            .or_else(|| run["trials_per_fault"].as_u64().map(|k| k.to_string()))
            .unwrap_or_default(),
        run["heartbeat_ms"],
        run["election_ms"],
    );
    if run["pre_vote"] == true {
        command.push_str(" --pre-vote");
    }
    command.push_str(&format!(" --out {}", out.display()));
    Manifest {
        tool: "election-bench".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        config_sha256: None,
        name,
        command,
        config: serde_json::json!({
            "mode": MODE,
            "protocols": [{"spec": protocol}],
            "nodes": nodes,
            "scenarios": scenarios.iter().map(|s| serde_json::json!({"name": s})).collect::<Vec<_>>(),
            "nets": [NET],
            "run": run,
        }),
        shard: None,
        shard_by: None,
        seeds_run: None,
        cells: cells as u64,
        trials: rows.len() as u64,
        trials_csv: None,
    }
}

/// The columns of `reality.csv`, one row per trial beside its `trials.csv` row.
pub const REALITY_COLUMNS: [&str; 22] = [
    "nodes",
    "scenario",
    "seed",
    "origin_unix_ms",
    "t0_unix_ms",
    "calm_unix_ms",
    "end_unix_ms",
    "target",
    "leader_before",
    "term_before",
    "leader_after",
    "term_after",
    "terms",
    "pre_candidacies",
    "candidacies",
    "votes_ignored",
    "stepped_down",
    "load1",
    "load5",
    "load15",
    "lost_terms",
    "note",
];

/// A trial's `reality.csv` record.
pub fn reality_record(t: &TrialReport) -> Vec<String> {
    let opt = |x: Option<String>| x.unwrap_or_default();
    let f = &t.failover;
    let load = |i: usize| opt(t.load.0.map(|l| format!("{:.2}", l[i])));
    vec![
        t.row.nodes.to_string(),
        t.row.scenario.clone(),
        t.row.seed.to_string(),
        t.window.origin_ms.to_string(),
        t.window.t0_ms.to_string(),
        t.window.calm_ms.to_string(),
        t.window.end_ms.to_string(),
        t.target.to_string(),
        opt(f.leader_before.map(|l| l.0.to_string())),
        opt(f.leader_before.map(|l| l.1.to_string())),
        opt(f.leader_after.map(|l| l.0.to_string())),
        opt(f.leader_after.map(|l| l.1.to_string())),
        opt(f.terms().map(|x| x.to_string())),
        f.pre_candidacies.to_string(),
        f.candidacies.to_string(),
        f.votes_ignored.to_string(),
        f.stepped_down.to_string(),
        load(0),
        load(1),
        load(2),
        t.lost_terms.clone(),
        t.note.clone(),
    ]
}

impl Files {
    fn write(
        &self,
        name: &str,
        header: Vec<String>,
        rows: Vec<Vec<String>>,
    ) -> Result<PathBuf, Error> {
        let path = self.out.join(name);
        write_csv(&path, std::iter::once(header).chain(rows).collect())?;
        Ok(path)
    }

    /// `trials.csv`, `summary.csv`, `reality.csv` and `manifest.json` (of `run`, the run's
    /// `run.json`), rewritten whole after every trial.
    pub(crate) fn write_all(
        &self,
        trials: &[TrialReport],
        run: &serde_json::Value,
    ) -> Result<Vec<PathBuf>, Error> {
        let rows: Vec<&TrialRow> = trials.iter().map(|t| &t.row).collect();
        let a = self.write(
            "trials.csv",
            trial_header(&[]),
            rows.iter().map(|r| r.to_record()).collect(),
        )?;
        let mut keys: Vec<CellKey> = Vec::new();
        for r in &rows {
            if !keys.contains(&r.cell_key()) {
                keys.push(r.cell_key());
            }
        }
        let summary = keys
            .iter()
            .map(|k| {
                let cell: Vec<TrialRow> = rows
                    .iter()
                    .filter(|r| r.cell_key() == *k)
                    .map(|r| (*r).clone())
                    .collect();
                summary_record(k, &cell, None)
            })
            .collect();
        let b = self.write("summary.csv", summary_header(&[]), summary)?;
        let c = self.write(
            "reality.csv",
            REALITY_COLUMNS.map(String::from).to_vec(),
            trials.iter().map(reality_record).collect(),
        )?;
        let d = self.out.join(SWEEP_MANIFEST);
        let m = sweep_manifest(&self.out, run, &rows, keys.len());
        fs::write(&d, m.to_bytes()).map_err(|e| Error::Io {
            path: d.clone(),
            source: e,
        })?;
        Ok(vec![a, b, c, d])
    }
}

/// Run the experiment (see the module docs), calling `progress` as it goes. Every member is
/// killed before this returns, whatever it returns; the trials finished before an error or an
/// interrupt are in the files.
pub fn run(
    args: &RealityArgs,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<RealityOutcome, Error> {
    args.check()?;
    let version = etcd_version(&args.etcd)?;
    let system = match &args.system {
        Some(s) => {
            if election_runner::systems::named(s).is_none() {
                return Err(Error::Usage(format!(
                    "--system {s}: not a system spec; the etcd specs are {}",
                    crate::version::SPECS.map(|(_, s)| s).join(", ")
                )));
            }
            s.clone()
        }
        None => system_for(version)?.to_string(),
    };
    let protocol = protocol_spec(&system, args.pre_vote);
    progress(Progress::Version(version, &protocol));
    // Every cell is planned before any process starts: a spec or size the simulator refuses
    // is refused here.
    let mut cells = Vec::new();
    for &n in &args.nodes {
        for &f in &args.faults {
            let k = args.trials.of(n, f);
            if k > 0 {
                cells.push((n, f, k, plan_cell(&protocol, n, f.scenario(), args)?));
            }
        }
    }
    fs::create_dir_all(&args.out).map_err(|e| Error::Io {
        path: args.out.clone(),
        source: e,
    })?;
    let files = Files {
        out: args.out.clone(),
    };
    let mut trials: Vec<TrialReport> = Vec::new();
    let mut written = Vec::new();
    let started = now_ms();
    let run_json = manifest(args, version, &protocol, started, None, 0);
    write_manifest(&args.out, &run_json)?;
    for &n in &args.nodes {
        let cfg = ClusterConfig {
            etcd: args.etcd.clone(),
            nodes: n,
            heartbeat_ms: args.heartbeat_ms,
            election_ms: args.election_ms,
            pre_vote: args.pre_vote,
            log_dir: args.out.join("logs").join(format!("n{n}")),
            proxies: args.trials.of(n, Fault::Partition) > 0
                && args.faults.contains(&Fault::Partition),
        };
        // A cluster from an earlier run into the same directory would be appended to.
        for i in 1..=n {
            let _ = fs::remove_file(cfg.log_dir.join(format!("m{i}.log")));
        }
        let mut cluster = Cluster::start(&cfg, Duration::from_secs(60))?;
        write_members(&cfg.log_dir, &cluster)?;
        progress(Progress::ClusterUp(
            n,
            (0..cluster.len()).filter_map(|i| cluster.pid(i)).collect(),
        ));
        let mut logs: Vec<LogFollower> = (0..cluster.len())
            .map(|i| LogFollower::new(cluster.log_path(i).to_path_buf()))
            .collect();
        let mut journal: Vec<(i64, Act)> = Vec::new();
        let journal_file = cfg.log_dir.join(JOURNAL);
        // The agreement that ended the last trial, while it still stands for the whole
        // cluster (nothing restarted since).
        let mut healthy: Option<Agreement> = None;
        for (_, fault, of, cell) in cells.iter().filter(|(m, _, _, _)| *m == n) {
            for k in 1..=*of {
                let (t, after) = trial(
                    args,
                    &mut cluster,
                    &mut logs,
                    &mut journal,
                    healthy.take(),
                    *fault,
                    cell,
                    &protocol,
                    k,
                )?;
                healthy = after;
                trials.push(t);
                write_journal(&journal_file, &journal)?;
                written = files.write_all(&trials, &run_json)?;
                progress(Progress::Trial(trials.last().expect("pushed"), k, *of));
            }
        }
        // Dropping the cluster kills its members (and removes their data).
        drop(cluster);
    }
    let done = manifest(
        args,
        version,
        &protocol,
        started,
        Some(now_ms()),
        trials.len(),
    );
    write_manifest(&args.out, &done)?;
    files.write_all(&trials, &done)?;
    written.push(args.out.join(MANIFEST));
    Ok(RealityOutcome {
        version,
        protocol,
        trials,
        files: written,
    })
}

/// `partition-leader-minority`'s sides, as the simulator's scenario draws them: the leader and
/// the lowest-numbered followers, `floor((n-1)/2)` members in all, against the rest.
pub fn minority_partition(n: usize, leader: usize) -> Vec<Vec<usize>> {
    let k = (n.saturating_sub(1)) / 2;
    let mut side = vec![leader];
    side.extend((0..n).filter(|&i| i != leader).take(k.saturating_sub(1)));
    side.sort_unstable();
    let rest = (0..n).filter(|i| !side.contains(i)).collect();
    vec![side, rest]
}

/// The verdict window of a real trial: the election timeout, and a hold span of two of them.
pub fn verdict(election_ms: u64) -> Verdict {
    Verdict {
        election_ms,
        hold_ms: 2 * election_ms,
    }
}

/// One trial (see the module docs).
#[allow(clippy::too_many_arguments)]
fn trial(
    args: &RealityArgs,
    cluster: &mut Cluster,
    logs: &mut [LogFollower],
    journal: &mut Vec<(i64, Act)>,
    healthy: Option<Agreement>,
    fault: Fault,
    cell: &election_runner::Cell,
    protocol: &str,
    seed: u32,
) -> Result<(TrialReport, Option<Agreement>), Error> {
    let e = Duration::from_millis(args.election_ms);
    let every = Duration::from_millis(args.heartbeat_ms.min(50));
    // The run waits a little longer than the verdict's hold span, so the leadership the
    // members' logs show (which began before the first poll that saw it) surely covers it.
    let hold = Duration::from_millis(2 * args.election_ms + 2 * args.heartbeat_ms);
    let healthy = match healthy {
        Some(a) => a,
        None => cluster
            .wait_agreement(
                hold,
                every,
                Instant::now() + Duration::from_secs(60) + 10 * e,
            )?
            .ok_or_else(|| {
                Error::Process(format!(
                "the {}-member cluster did not become healthy (one leader and term on every member \
                 for two election timeouts) within {} s before {} trial {seed}",
                cluster.len(),
                60 + 10 * args.election_ms / 1000,
                fault.name()
            ))
            })?,
    };
    let target = healthy.leader;
    let load = Load::now();
    let ms = |x: f64| Duration::from_secs_f64(x / 1000.0);
    let calm = match fault {
        Fault::Kill => {
            let t0 = cluster.kill(target)?;
            journal.push((t0, Act::Crash(target)));
            t0
        }
        Fault::Pause => {
            let t0 = cluster.pause(target)?;
            journal.push((t0, Act::Pause(target)));
            crate::cluster::sleep(ms(cell.resolved.pause_ms))?;
            let t1 = cluster.resume(target)?;
            journal.push((t1, Act::Resume(target)));
            t1
        }
        Fault::Partition => {
            let groups = minority_partition(cluster.len(), target);
            let t0 = cluster.partition(&groups)?;
            journal.push((t0, Act::Partition(groups)));
            crate::cluster::sleep(ms(cell.resolved.outage_ms))?;
            let t1 = cluster.heal()?;
            journal.push((t1, Act::Heal));
            t1
        }
    };
    let t0 = journal
        .iter()
        .rev()
        .find(|(_, a)| matches!(a, Act::Crash(_) | Act::Pause(_) | Act::Partition(_)))
        .map(|(t, _)| *t)
        .expect("the fault was journaled");
    let deadline = Instant::now() + Duration::from_millis(args.deadline());
    let settled = cluster.wait_agreement(hold, every, deadline)?;
    let end = now_ms();
    let note = match settled {
        Some(_) => String::new(),
        None => format!(
            "no leader agreed on by every running member within {} ms of the last action",
            args.deadline()
        ),
    };
    // etcd writes each line as it logs it; a moment for the last ones to reach the files.
    crate::cluster::sleep(Duration::from_millis(100))?;
    for l in logs.iter_mut() {
        l.read()?;
    }
    let events: Vec<LogEvent> = logs.iter().flat_map(|l| l.events.iter().copied()).collect();
    let window = Window {
        origin_ms: healthy.since_ms,
        t0_ms: t0,
        calm_ms: calm,
        end_ms: end,
    };
    let measured = measure(
        &cluster.ids(),
        &events,
        journal,
        window,
        verdict(args.election_ms),
    );
    let lost = lost_terms(&cluster.ids(), &events, journal, window, &measured.failover);
    let settled = if fault == Fault::Kill {
        cluster.restart(target)?;
        journal.push((now_ms(), Act::Restart(target)));
        None
    } else {
        settled
    };
    let key = CellKey {
        mode: MODE.into(),
        net: NET.into(),
        protocol: protocol.to_string(),
        ..cell.key()
    };
    let report = TrialReport {
        row: TrialRow::from_metrics(&key, u64::from(seed), &measured.metrics),
        failover: measured.failover,
        load,
        window,
        target: target as u32 + 1,
        lost_terms: lost,
        note,
    };
    Ok((report, settled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loadavg_and_fault_names() {
        assert_eq!(
            parse_loadavg("0.48 1.47 2.14 1/234 5678\n"),
            Some([0.48, 1.47, 2.14])
        );
        assert_eq!(parse_loadavg(""), None);
        assert_eq!(Fault::parse("kill").unwrap(), Fault::Kill);
        assert_eq!(Fault::parse("partition").unwrap(), Fault::Partition);
        let e = Fault::parse("crash").unwrap_err().to_string();
        assert!(e.contains("kill, pause, partition"), "{e}");
        assert_eq!(minority_partition(3, 1), vec![vec![1], vec![0, 2]]);
        assert_eq!(minority_partition(5, 3), vec![vec![0, 3], vec![1, 2, 4]]);
        assert_eq!(minority_partition(5, 0), vec![vec![0, 1], vec![2, 3, 4]]);
        assert_eq!(protocol_spec("etcd@3.4", true), "etcd@3.4+pre_vote");
        assert_eq!(protocol_spec("etcd@3.5", true), "etcd@3.5");
    }
}
