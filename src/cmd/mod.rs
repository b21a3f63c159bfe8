//! The subcommands, one module each: its clap arguments and its body. `main` parses and
//! dispatches; adding a subcommand is one module here, one variant of `Command` and one line
//! of `dispatch`. Shared here: the arguments of one trial (`run`, `trace`) and of a shard
//! (`sweep`, `explore`, `tune`), and the bounds of `--jobs`.

pub mod calibrate;
pub mod compare;
pub mod dirs;
pub mod explore;
pub mod help;
pub mod live;
pub mod merge;
pub mod params;
pub mod profile;
pub mod reality;
pub mod reference;
pub mod report;
pub mod run;
pub mod scenarios;
pub mod sweep;
pub mod trace;
pub mod tune;
pub mod validate;
pub mod verify;

use std::path::{Path, PathBuf};

use clap::Args;
use election_runner::{Error, Shard, SweepSpec};

use crate::error::CliError;

/// A cell's protocol, size and scenario, as `run`, `trace` and `live` name it (`main` puts the
/// valid protocols and scenarios into the help).
#[derive(Args, Debug)]
pub struct CellArgs {
    /// Protocol spec: a protocol plus options, e.g. bully, bully+quorum, raft+pre_vote.
    #[arg(long, short = 'p')]
    pub protocol: String,
    /// Cluster size.
    #[arg(long, short = 'n')]
    pub nodes: u32,
    /// Scenario name (see `election-bench scenarios`).
    #[arg(long, short = 's')]
    pub scenario: String,
}

/// One trial, as `run` and `trace` name it.
#[derive(Args, Debug)]
pub struct TrialArgs {
    #[command(flatten)]
    pub cell: CellArgs,
    /// Network profile (see `election-bench params`) [default: the --config's only net, else lan].
    #[arg(long)]
    pub net: Option<String>,
    /// Trial seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Set a parameter: key=value (repeatable; see `election-bench params`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// TOML config with parameters, custom scenarios and network profiles (a regular file of at
    /// most 1 MiB).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

impl TrialArgs {
    /// The trial's cell of a one-cell sweep, checked: one value per parameter, a size the
    /// scenario can use.
    pub fn cell(&self, command: &str) -> Result<election_runner::Cell, Error> {
        let spec = SweepSpec::from_config(self.config.as_deref())?;
        // A config that names one network (a profile's) runs on it unless --net says otherwise.
        let net = match (&self.net, spec.nets.as_deref()) {
            (Some(n), _) => n.clone(),
            (None, Some([only])) => only.clone(),
            (None, _) => "lan".into(),
        };
        let mut spec = spec.one_cell(
            &self.cell.protocol,
            self.cell.nodes,
            &self.cell.scenario,
            &net,
        );
        // The cell does not depend on the seed (it is `run`'s argument), so the plan's seed
        // range is left at its default: any u64 seed runs, 2^64 - 1 included.
        spec.first_seed = None;
        spec.set_all(&self.set)?;
        let plan = spec.plan()?;
        if let Some((k, v)) = plan.varied.first() {
            return Err(Error::Usage(format!(
                "{command} takes one value per parameter; {k} has {} ({}) — use sweep to vary it",
                v.len(),
                v.join(", ")
            )));
        }
        plan.runnable_cell(|_, why| {
            format!(
                "scenario {} cannot run with {} nodes: {why}",
                self.cell.scenario, self.cell.nodes
            )
        })
    }
}

/// How `explore` and `tune` carry out their work: the shard, the threads, the progress.
#[derive(Args, Debug)]
pub struct WorkArgs {
    #[command(flatten)]
    pub shard: ShardArgs,
    /// Worker threads [default: one per core].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// No progress on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// `--shard` and `--shard-count`, the same for `sweep`, `explore` and `tune`.
#[derive(Args, Debug)]
pub struct ShardArgs {
    /// Run only shard k of N (1-based), for batch-scheduler job arrays; join with `merge`.
    /// `auto`: k and N from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, 0-based, with
    /// --shard-count) or a Slurm job array (SLURM_ARRAY_TASK_ID, _MIN, _STEP, _COUNT).
    /// Without --out, a shard writes <default out>-shards/<k>-of-<N>.
    #[arg(long, value_name = "k/N|auto")]
    pub shard: Option<String>,
    /// With --shard auto: the number of shards (a Kubernetes Indexed Job's completions; for
    /// Slurm it must agree with SLURM_ARRAY_TASK_COUNT).
    #[arg(long, value_name = "N", requires = "shard")]
    pub shard_count: Option<u32>,
}

impl ShardArgs {
    /// The shard this process runs, if any.
    pub fn resolve(&self) -> Result<Option<Shard>, Error> {
        election_runner::shard::resolve(self.shard.as_deref(), self.shard_count, |k| {
            std::env::var(k).ok()
        })
    }
}

/// Where a command writes: `--out` if given, else `default`, or for a shard of an array (every
/// shard runs the same command line) its own `<default>-shards/<k>-of-<N>`, whose parent
/// `merge` takes.
pub fn out_dir(out: Option<&Path>, default: PathBuf, shard: Option<Shard>) -> PathBuf {
    match (out, shard) {
        (Some(out), _) => out.to_path_buf(),
        (None, Some(s)) => election_runner::shard::default_dir(&default, s),
        (None, None) => default,
    }
}

/// The most threads `--jobs` may ask for: far above any machine this runs on, far below what
/// exhausts the process's threads (each is a stack).
const MAX_JOBS: usize = 1024;

/// `--jobs`: at least one thread, at most [`MAX_JOBS`].
pub fn check_jobs(jobs: Option<usize>) -> Result<(), CliError> {
    match jobs {
        Some(0) => Err(Error::Usage("--jobs 0: need at least one thread".into()).into()),
        Some(j) if j > MAX_JOBS => Err(Error::Usage(format!(
            "--jobs {j}: at most {MAX_JOBS} threads (this machine has {} cores; leave --jobs out \
             to use one thread per core)",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        ))
        .into()),
        _ => Ok(()),
    }
}
