//! `election-bench live`: trials of one protocol spec, cluster size and scenario from the
//! runner's catalog, each over real sockets, written as `trials.csv` and `summary.csv` rows
//! with `mode = live`.
//!
//! A live trial is built exactly like a simulated one (the runner's [`Cell`], whose
//! [`Cell::trial_config`] is the simulator's configuration; [`live_config`]): the same
//! protocol configuration, the same fault instant `fault_at_ms + U[0, fault_jitter_ms]`
//! drawn from the same stream of the trial seed, the same fault timeline, and the same rules for
//! when it fires (it waits for a quorum leader, at most `fault_wait_ms`) and for selectors,
//! which are resolved from the live cluster's state when each fault fires.
//!
//! Both files have the results schema's columns (`election_runner::results`) and one more at
//! the end, [`DATAGRAMS_REJECTED`]: live nodes drop datagrams that simulated ones never see
//! (from outside the cluster, malformed, forged, replayed; see [`crate::driver`]), and a row
//! says how many, so that a trial that met any says so.
//!
//! The network is the real loopback (`net = loopback`); `--net PROFILE` additionally delays
//! and drops datagrams as that profile's model does (`net = loopback+PROFILE`, or
//! `loopback+PROFILE+net.loss=0.05` when `--set net.*` overrides the profile, the simulator's
//! network name after `loopback+`).

use std::fs;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use election_core::{NodeId, ThreadedProtocol};
use election_runner::protocol::{Built, Drive};
use election_runner::results::{summary_header, summary_record, trial_header, CellKey, TrialRow};
use election_runner::{Cell, SweepSpec};

use crate::driver::{run_trial_with, Health, Hooks, LiveConfig, LiveError, LiveReport};

/// The `net` column of a live row without emulation.
pub const LOOPBACK: &str = "loopback";

/// The column after the results schema's in a live `trials.csv` and `summary.csv`: the
/// datagrams the trial's nodes dropped before they reached a protocol (from non-members,
/// malformed, failing authentication, replayed, undecodable: [`Health::rejected`]), summed
/// over the cell's trials in `summary.csv`; empty on a simulated row (`calibrate` writes both).
pub const DATAGRAMS_REJECTED: &str = "datagrams_rejected";

/// What can go wrong in live mode or calibration.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The protocol spec, scenario, parameters or sizes are invalid (the runner's message).
    #[error(transparent)]
    Runner(#[from] election_runner::Error),
    /// A live trial could not run.
    #[error("{context}: {source}")]
    Live {
        /// Which trial.
        context: String,
        /// Why.
        #[source]
        source: LiveError,
    },
    /// A file could not be written.
    #[error("writing {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

impl RunError {
    /// True for errors in what the user asked for (exit status 2), false for failures while
    /// carrying it out (exit status 1).
    pub fn is_usage(&self) -> bool {
        match self {
            RunError::Runner(e) => e.is_usage(),
            RunError::Live { source, .. } => matches!(source, LiveError::Config(_)),
            _ => false,
        }
    }
}

pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    let io = |source| RunError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io)?;
    }
    // A temporary file renamed over the target: a reader, or a run killed mid-write, sees the
    // old file or the new one, never half of one.
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{}.tmp", name.unwrap_or_default()));
    fs::write(&tmp, bytes).map_err(io)?;
    fs::rename(&tmp, path).map_err(io)
}

/// `election-bench live --protocol P --nodes N --scenario S [--trials K] [--out DIR]`.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveArgs {
    /// The protocol spec (`bully`, `raft+pre_vote`, ...).
    pub protocol: String,
    /// Cluster size.
    pub nodes: u32,
    /// A scenario from the runner's catalog.
    pub scenario: String,
    /// Trials to run, seeds `first_seed ..`.
    pub trials: u64,
    /// The first seed.
    pub first_seed: u64,
    /// Where `trials.csv` and `summary.csv` go.
    pub out: PathBuf,
    /// Emulate this network profile's latency and loss on top of loopback (`None`: the bare
    /// loopback).
    pub net: Option<String>,
    /// The address the nodes bind. Loopback unless the user asks for another explicitly.
    pub bind: IpAddr,
    /// Parameter overrides (`--set key=value`), with the runner's names.
    pub params: Vec<(String, String)>,
}

impl LiveArgs {
    /// `trials = 5` from seed 0 into `results/live`, bare loopback, no overrides.
    pub fn new(protocol: &str, nodes: u32, scenario: &str) -> LiveArgs {
        LiveArgs {
            protocol: protocol.to_string(),
            nodes,
            scenario: scenario.to_string(),
            trials: 5,
            first_seed: 0,
            out: PathBuf::from("results/live"),
            net: None,
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            params: Vec::new(),
        }
    }
}

/// What [`run_live`] did.
#[derive(Debug)]
pub struct LiveOutcome {
    /// One row per trial, in seed order (`mode = live`).
    pub rows: Vec<TrialRow>,
    /// Each trial's full report, in the same order.
    pub reports: Vec<LiveReport>,
    /// Health summed over every trial.
    pub health: Health,
    /// The files written.
    pub files: Vec<PathBuf>,
}

/// Plan the single cell of one protocol, size, scenario and network with the runner.
pub(crate) fn plan_cell(
    protocol: &str,
    nodes: u32,
    scenario: &str,
    net: &str,
    params: &[(String, String)],
    custom_nets: Vec<election_runner::config::NetDef>,
) -> Result<Cell, RunError> {
    let mut spec = SweepSpec {
        name: Some("live".into()),
        params: params
            .iter()
            .map(|(k, v)| (k.clone(), vec![v.clone()]))
            .collect(),
        custom_nets,
        ..SweepSpec::default()
    }
    .one_cell(protocol, nodes, scenario, net);
    spec.first_seed = Some(0);
    let cell = spec.plan()?.runnable_cell(|cell, why| {
        format!(
            "{} with {nodes} nodes cannot run {scenario}: {why}",
            cell.protocol.spec
        )
    })?;
    // What the simulator models and real sockets cannot: refused here, before any trial,
    // rather than run as something else (a steady hour would measure a cold start, noise
    // would be dropped).
    if let Err(e) = live_config(&cell, 0, true, IpAddr::V4(Ipv4Addr::LOCALHOST)).validate() {
        return Err(election_runner::Error::Usage(format!(
            "live cannot run {} with {nodes} nodes on {scenario}: {e}",
            cell.protocol.spec
        ))
        .into());
    }
    Ok(cell)
}

/// One live trial of `cell` with `seed`: its row (`mode = live`, the given `net` column) and
/// report. `emulate` adds the cell's network model (latency and loss) on top of loopback.
pub fn live_trial(
    cell: &Cell,
    seed: u64,
    net: &str,
    emulate: bool,
    bind: IpAddr,
) -> Result<(TrialRow, LiveReport), RunError> {
    let built = cell
        .built
        .as_ref()
        .expect("planned cells that run are built");
    let cfg = live_config(cell, seed, emulate, bind);
    let hooks = Hooks::default();
    let key = CellKey {
        mode: "live".into(),
        net: net.to_string(),
        ..cell.key()
    };
    // Named by the live network (`loopback`, `loopback+PROFILE`), not by the profile the
    // cell was planned with.
    let report = run_built(built, &cfg, hooks).map_err(|source| RunError::Live {
        context: format!(
            "live {} / {} nodes / {} / {net}, seed {seed}",
            key.protocol, key.nodes, key.scenario
        ),
        source,
    })?;
    let row = TrialRow::from_metrics(&key, seed, &report.metrics);
    Ok((row, report))
}

/// The live trial of `cell` with `seed`: the simulator's configuration of the same trial
/// ([`Cell::trial_config`]), its horizon capped at [`MAX_HORIZON`](crate::driver::MAX_HORIZON),
/// its network model added on top of the real one if `emulate` (else nothing is added).
pub fn live_config(cell: &Cell, seed: u64, emulate: bool, bind: IpAddr) -> LiveConfig {
    let mut trial = cell.trial_config(seed, false);
    trial.horizon = trial.horizon.min(crate::driver::MAX_HORIZON);
    if !emulate {
        trial.net = election_sim::NetConfig::constant_ms(0.0);
    }
    LiveConfig { trial, bind }
}

/// Run a built protocol configuration live (the family's service endpoints, the lease store,
/// are tasks on their own UDP sockets, as the simulator's endpoints).
pub fn run_built(built: &Built, cfg: &LiveConfig, hooks: Hooks) -> Result<LiveReport, LiveError> {
    struct Live<'a>(&'a LiveConfig, Hooks);
    impl Drive for Live<'_> {
        type Out = Result<LiveReport, LiveError>;
        fn drive<P, F>(self, new: F) -> Self::Out
        where
            P: ThreadedProtocol,
            F: Fn(NodeId) -> P + Send + Sync + 'static,
        {
            run_trial_with(self.0, new, self.1)
        }
    }
    let mut cfg = cfg.clone();
    cfg.trial.services = built.services();
    built.drive(cfg.trial.seed, Live(&cfg, hooks))
}

/// Run `args.trials` live trials one after the other (each stops itself and closes its
/// sockets), calling `progress` after each, and write `trials.csv` and `summary.csv` into
/// `args.out` after every trial: a run that is killed keeps the trials it finished.
pub fn run_live(
    args: &LiveArgs,
    mut progress: impl FnMut(&TrialRow, &LiveReport),
) -> Result<LiveOutcome, RunError> {
    if args.trials == 0 {
        return Err(election_runner::Error::Usage("trials = 0: run at least one".into()).into());
    }
    if args.first_seed.checked_add(args.trials).is_none() {
        return Err(election_runner::Error::Usage("first_seed + trials overflows".into()).into());
    }
    let (profile, emulate) = match &args.net {
        Some(p) => (p.as_str(), true),
        // Timing parameters come from the cell; the profile's latency is unused.
        None => ("ideal", false),
    };
    let cell = plan_cell(
        &args.protocol,
        args.nodes,
        &args.scenario,
        profile,
        &args.params,
        Vec::new(),
    )?;
    // The emulated network is named as in simulation (`lan+net.loss=0.05` when `--set`
    // overrides the profile), after the real one.
    let net_name = if emulate {
        format!("{LOOPBACK}+{}", cell.net_name)
    } else {
        LOOPBACK.to_string()
    };
    let mut rows = Vec::new();
    let mut reports = Vec::new();
    let mut health = Health::default();
    let mut rejected = Vec::new();
    for seed in args.first_seed..args.first_seed + args.trials {
        let (row, report) = live_trial(&cell, seed, &net_name, emulate, args.bind)?;
        health.absorb(&report.health);
        rows.push(row);
        // Rewritten whole after every trial (a live trial takes seconds, so the copy costs
        // nothing), each file replaced atomically: a killed run keeps its finished trials.
        rejected.push(Some(report.health.rejected()));
        write_rows(&args.out, &rows, &rejected)?;
        progress(rows.last().expect("just pushed"), &report);
        reports.push(report);
    }
    let files = vec![args.out.join("trials.csv"), args.out.join("summary.csv")];
    Ok(LiveOutcome {
        rows,
        reports,
        health,
        files,
    })
}

/// Write `trials.csv` (every row) and `summary.csv` (one row per cell) into `dir`, with each
/// row's [`DATAGRAMS_REJECTED`] (`rejected`, by row; `None`: a simulated row).
pub(crate) fn write_rows(
    dir: &Path,
    rows: &[TrialRow],
    rejected: &[Option<u64>],
) -> Result<Vec<PathBuf>, RunError> {
    let rejected_at = |i: usize| rejected.get(i).copied().flatten();
    let cell = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    let csv_err = |path: &Path, e: csv::Error| RunError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e),
    };
    let trials = dir.join("trials.csv");
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = trial_header(&[]);
    header.push(DATAGRAMS_REJECTED.to_string());
    w.write_record(header).map_err(|e| csv_err(&trials, e))?;
    for (i, r) in rows.iter().enumerate() {
        let mut record = r.to_record();
        record.push(cell(rejected_at(i)));
        w.write_record(record).map_err(|e| csv_err(&trials, e))?;
    }
    let bytes = w.into_inner().map_err(|e| RunError::Io {
        path: trials.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    write_file(&trials, &bytes)?;

    let summary = dir.join("summary.csv");
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = summary_header(&[]);
    header.push(DATAGRAMS_REJECTED.to_string());
    w.write_record(header).map_err(|e| csv_err(&summary, e))?;
    let mut keys: Vec<CellKey> = Vec::new();
    for r in rows {
        let k = r.cell_key();
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for k in &keys {
        let in_cell: Vec<usize> = (0..rows.len())
            .filter(|&i| rows[i].cell_key() == *k)
            .collect();
        let cell_rows: Vec<TrialRow> = in_cell.iter().map(|&i| rows[i].clone()).collect();
        // A simulated cell has no count; a live one sums its trials'.
        let sum = in_cell
            .iter()
            .map(|&i| rejected_at(i))
            .try_fold(0u64, |acc, r| r.map(|r| acc + r));
        let mut record = summary_record(k, &cell_rows, None);
        record.push(cell(sum));
        w.write_record(record).map_err(|e| csv_err(&summary, e))?;
    }
    let bytes = w.into_inner().map_err(|e| RunError::Io {
        path: summary.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    write_file(&summary, &bytes)?;
    Ok(vec![trials, summary])
}
