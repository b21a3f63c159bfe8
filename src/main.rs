//! `election-bench`: the command-line front door of the workbench.
//!
//! Subcommands: `scenarios` (the catalog), `params` (every parameter and network profile),
//! `run` (one trial), `sweep` (a grid of trials into `results/<name>/`, then the report into
//! `reports/<name>/`), `merge` (join the shards of a sweep), `report` (charts and REPORT.md
//! from a results directory), `compare` (what changed between two results directories, with
//! bootstrap intervals) and `trace` (one trial as a message-sequence chart). Exit codes:
//! 0 success, 2 bad input (unknown names, bad values, malformed TOML, bad flags, a results
//! directory that is missing or of another schema), 1 failures while running (files that
//! cannot be written).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use election_report::{
    render_report, render_trace, CompareOptions, ReportError, ReportOptions, RunnerTracer,
    TraceFormat, TraceMeta,
};
use election_runner::net::{format_latency, NetProfile, BUILTIN_NETS};
use election_runner::params::PARAMS;
use election_runner::plan::TrialRun;
use election_runner::results::fmt_ms;
use election_runner::{Error, Shard, SweepOptions, SweepSpec};

#[derive(Parser, Debug)]
#[command(
    name = "election-bench",
    version,
    about = "Compare leader-election protocols (bully, Chang-Roberts ring, Raft-style, lease-based) over one deterministic simulated network",
    after_help = "Examples:
  election-bench sweep                                    # the default sweep and its report
  election-bench run -p bully -n 5 -s leader-crash        # one trial, readable
  election-bench sweep --name loss --protocols bully+quorum,raft+pre_vote --nodes 5,9 \\
      --scenarios leader-crash --set net.loss=0,0.05,0.1 --seeds 500
  election-bench trace -p raft -n 5 -s leader-crash --out raft.svg
  mkdir -p ~/.local/share/bash-completion/completions
  election-bench completions bash > ~/.local/share/bash-completion/completions/election-bench

`election-bench scenarios` and `election-bench params` list every scenario and parameter."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the scenario catalog, one line each on what the scenario shows.
    #[command(after_help = "Examples:
  election-bench scenarios
  election-bench scenarios --config examples/configs/custom-scenario.toml   # plus its custom ones")]
    Scenarios {
        /// Also list the custom scenarios of this TOML config.
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// List every parameter (its default and meaning) and the network profiles.
    #[command(after_help = "Examples:
  election-bench params
  election-bench params | grep -A1 '^raft\\.'          # Raft's parameters with their defaults")]
    Params,
    /// Run one trial and print its metrics.
    #[command(after_help = "Examples:
  election-bench run -p bully -n 5 -s leader-crash
  election-bench run -p raft+pre_vote -n 5 -s partition-leader-minority --seed 3 --trace
  election-bench run -p ring -n 7 -s lossy-leader-crash --set fault_loss=0.2 --json")]
    Run(RunArgs),
    /// Run a grid of trials into results/<name>/ (with no arguments: the default sweep).
    #[command(after_help = "Examples:
  election-bench sweep
  election-bench sweep --name loss --protocols bully+quorum,raft+pre_vote --nodes 5,9 \\
      --scenarios lossy-leader-crash --set fault_loss=0,0.05,0.1 --seeds 500
  election-bench sweep --config examples/configs/raft-timeouts.toml
  election-bench sweep --shard 1/4 --out results/part1 --no-report
  JOB_COMPLETION_INDEX=3 election-bench sweep --shard auto --shard-count 8 --no-report
      # shard 4/8 into results/default-shards/4-of-8 (a Kubernetes Indexed Job's pod)
  election-bench sweep --shard auto --no-report          # in a Slurm job array (sbatch --array=0-7)")]
    Sweep(SweepArgs),
    /// Every link-failure pattern of small clusters on a settled cluster, every protocol, a
    /// liveness verdict per pattern (results/explore/).
    Explore(ExploreArgs),
    /// The timeout advisor: search each protocol's timing for the best trade between p99
    /// failover and false elections under noise, and map it onto etcd, hashicorp/raft,
    /// Consul and client-go settings (reports/tune-<name>/).
    #[command(after_help = "Examples:
  election-bench tune                                   # raft, bully, ring, lease -> reports/tune-default/
  election-bench tune --name etcd --protocols raft+pre_vote+check_quorum --net dc \\
      --max-false-per-day 0.5 --max-p99-ms 3000
  election-bench tune --name quick --hours 1 --max-hours 8 --crash-trials 200 --rounds 1
  election-bench tune --set noise.stall_per_hour=60 --set noise.stall_ms=lognormal:50:1")]
    Tune(TuneArgs),
    /// Build a config (network and node profile, current timing, observed leader changes) for
    /// your etcd cluster from Prometheus scrapes, ready for run, sweep and tune --config.
    #[command(after_help = "Examples:
  cargo run --example synthetic-etcd-scrape -- examples/etcd/scrapes     # SYNTHETIC scrapes
  election-bench profile --from-prometheus examples/etcd/scrapes \\
      --heartbeat-interval 100 --election-timeout 1000 --name etcd-example
  election-bench tune --config profiles/etcd-example/profile.toml --name etcd-example

Every metric read and every assumption: crates/runner/src/profile.rs.")]
    Profile(ProfileArgs),
    /// Join the shard directories of a sharded sweep into what one unsharded run writes.
    #[command(after_help = "Examples:
  election-bench sweep --shard 1/2 --out shards/1 --no-report
  election-bench sweep --shard 2/2 --out shards/2 --no-report
  election-bench merge --out results/mine shards/1 shards/2
  election-bench merge --out results/mine shards              # every subdirectory of shards/
  find /data/shards -name manifest.json -printf '%h\\n' > list.txt
  election-bench merge --out results/mine --list list.txt     # a thousand shards: not argv
  election-bench report --results results/mine

Every k/N of one sweep must be there (a missing, duplicated or unfinished shard is named and
nothing is written); the merged files equal the unsharded run's byte for byte.")]
    Merge(MergeArgs),
    /// Render charts and REPORT.md from a sweep's results.
    #[command(after_help = "Example:
  election-bench report --results results/loss          # into reports/loss/")]
    Report(ReportArgs),
    /// What changed between two results directories (before A, after B), per common cell,
    /// with a bootstrap interval on each difference; significant changes first.
    #[command(long_about = COMPARE_ABOUT)]
    Compare(CompareArgs),
    /// Draw one trial as a message-sequence chart (SVG, Mermaid or JSON lines).
    #[command(after_help = "Examples:
  election-bench trace -p raft -n 5 -s leader-crash --seed 1 --out raft.svg
  election-bench trace -p bully -n 5 -s leader-crash --out bully.mmd     # Mermaid, from the extension
  election-bench trace -p ring -n 5 -s leader-crash --format jsonl")]
    Trace(TraceArgs),
    /// Run a scenario with the same protocol code over real UDP sockets (loopback by default).
    #[command(after_help = "Example:
  election-bench live -p bully -n 5 -s leader-crash --trials 5     # rows into a temporary directory
  election-bench live -p raft -n 5 -s leader-crash --out results/live")]
    Live(LiveCliArgs),
    /// Measure loopback, then compare simulated and live failover times (into a temporary
    /// directory; `--out reports/calibration` regenerates the committed page).
    #[command(after_help = "Examples:
  election-bench calibrate --trials 10 --sim-trials 100
  election-bench calibrate --out reports/calibration       # regenerate the committed page")]
    Calibrate(CalibrateCliArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to standard output.
    #[command(after_help = "Examples:
  mkdir -p ~/.local/share/bash-completion/completions
  election-bench completions bash > ~/.local/share/bash-completion/completions/election-bench
  election-bench completions zsh > ~/.zfunc/_election-bench
  election-bench completions fish > ~/.config/fish/completions/election-bench.fish")]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Run the catalog of textbook results; one line per case; exit 1 if any fails.
    Validate {
        /// Fewer seeds per case (for CI).
        #[arg(long)]
        quick: bool,
        /// Only this case (repeatable) [default: every case].
        #[arg(long = "case", value_name = "NAME")]
        cases: Vec<String>,
    },
}

#[derive(Args, Debug)]
struct LiveCliArgs {
    /// Protocol spec, e.g. bully, ring, raft+pre_vote.
    #[arg(long, short = 'p')]
    protocol: String,
    /// Cluster size.
    #[arg(long, short = 'n')]
    nodes: u32,
    /// Scenario name (see `election-bench scenarios`).
    #[arg(long, short = 's')]
    scenario: String,
    /// Trials to run (seeds first-seed, first-seed + 1, ...); each stops itself.
    #[arg(long, default_value_t = 5)]
    trials: u64,
    /// The first seed (fault instant, protocol randomness, loss draws).
    #[arg(long, default_value_t = 0)]
    first_seed: u64,
    /// Where trials.csv and summary.csv go, rewritten as each trial finishes [default: a new
    /// directory per run under the system's temporary directory, printed].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Emulate this network profile's latency and loss on top of loopback.
    #[arg(long)]
    net: Option<String>,
    /// Address the nodes bind; loopback unless given explicitly.
    #[arg(long, default_value = "127.0.0.1")]
    bind: std::net::IpAddr,
    /// Set a parameter: key=value (repeatable; see `election-bench params`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

#[derive(Args, Debug)]
struct CalibrateCliArgs {
    /// Only this protocol spec [default: bully, ring, raft and lease].
    #[arg(long, short = 'p')]
    protocol: Option<String>,
    /// Cluster size.
    #[arg(long, short = 'n', default_value_t = 5)]
    nodes: u32,
    /// Live trials per protocol.
    #[arg(long, default_value_t = 50)]
    trials: u64,
    /// Simulated trials per protocol.
    #[arg(long, default_value_t = 500)]
    sim_trials: u64,
    /// The first seed.
    #[arg(long, default_value_t = 0)]
    first_seed: u64,
    /// Where the chart, tables and README go [default: a directory under the system's
    /// temporary directory, printed; `--out reports/calibration` regenerates the committed page].
    #[arg(long)]
    out: Option<PathBuf>,
}

/// `key=value` pairs for the live driver, which takes the runner's parameter names.
fn key_values(set: &[String]) -> Result<Vec<(String, String)>, Error> {
    set.iter()
        .map(|s| {
            s.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| Error::Usage(format!("--set {s:?}: expected key=value")))
        })
        .collect()
}

#[derive(Args, Debug)]
struct ReportArgs {
    /// The results directory of a sweep (or of an exploration: its page).
    #[arg(long, default_value = "results/default")]
    results: PathBuf,
    /// Where REPORT.md, charts/ and traces/ go [default: reports/<name of the results directory>].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Cluster size of the per-scenario charts, the failover CDF and the traces; one of the
    /// sweep's sizes [default: 5, or the sweep's size nearest to it].
    #[arg(long)]
    focus_nodes: Option<u32>,
}

const COMPARE_ABOUT: &str = "What changed between two results directories (A before, B after a protocol change or a tuning), per cell that both contain.

A cell is (protocol, nodes, scenario, net, varied parameters); both directories must vary the same parameters. Per common cell, over the measured trials of trials.csv: failover_ms_p50 (not in cold-start), elect_ms_p50 (cold-start only), msgs_election_mean, unavailable_ms_mean, split_brain_rate, converged_rate and writes_stale_mean (with a workload); medians for durations, means for counts and rates. Each difference B - A gets a seeded two-sample percentile bootstrap interval; it is significant when the interval excludes 0 and |B - A| is at least --min-change percent of A. The same two directories always give byte-identical output.

--ignore COLUMN matches cells without a column that names the change itself (net for lan against lan+net.loss=0.05, protocol for raft against raft+pre_vote).

Prints the significant changes, largest relative change first, and writes COMPARE.md (every comparison), compare.csv and charts/changes.svg/.png into --out. No common cells, a missing directory or another schema: exit 2.";

#[derive(Args, Debug)]
struct CompareArgs {
    /// Results directory A (before).
    #[arg(value_name = "A")]
    a: PathBuf,
    /// Results directory B (after).
    #[arg(value_name = "B")]
    b: PathBuf,
    /// Where COMPARE.md, compare.csv and charts/ go [default: reports/compare-<A's name>-vs-<B's name>].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Overwrite an output directory that holds something else (another comparison, other
    /// files); the same comparison is always overwritten.
    #[arg(long)]
    force: bool,
    /// Smallest change that counts, in percent of A's value.
    #[arg(long, default_value_t = 5.0, value_name = "PERCENT")]
    min_change: f64,
    /// Confidence level of the bootstrap interval.
    #[arg(long, default_value_t = 0.95)]
    level: f64,
    /// Bootstrap resamples per cell and metric.
    #[arg(long, default_value_t = 2000)]
    resamples: u32,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 19)]
    seed: u64,
    /// Significant changes printed (all are in COMPARE.md).
    #[arg(long, default_value_t = 40)]
    rows: usize,
    /// Match cells without this column (protocol, nodes, scenario, net or a varied parameter),
    /// the one that names the change: e.g. `--ignore net` for lan against
    /// lan+net.loss=0.05, `--ignore protocol` for raft against raft+pre_vote.
    #[arg(long, value_delimiter = ',', value_name = "COLUMN")]
    ignore: Vec<String>,
}

#[derive(Args, Debug)]
struct TraceArgs {
    #[command(flatten)]
    trial: TrialArgs,
    /// Output format (default: from the --out extension, .svg, .mmd or .mermaid, .jsonl; else
    /// svg).
    #[arg(long, value_parser = ["svg", "mermaid", "jsonl"])]
    format: Option<String>,
    /// Write to this file instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Any error of the CLI, with its exit code.
#[derive(Debug, thiserror::Error)]
enum CliError {
    /// Standard output could not be written (a full disk; a closed pipe ends quietly).
    #[error("cannot write to standard output: {0}")]
    Stdout(std::io::Error),
    #[error(transparent)]
    Runner(#[from] Error),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Live(#[from] election_live::RunError),
    #[error("{0} validate case(s) failed")]
    Validate(usize),
}

impl CliError {
    fn exit_code(&self) -> u8 {
        let usage = match self {
            CliError::Runner(e) => e.is_usage(),
            // Reading a results directory that is missing, empty or of another schema is bad
            // input; failing to write or draw is a runtime failure.
            CliError::Report(e) => !matches!(
                e,
                ReportError::Io { .. } | ReportError::Chart { .. } | ReportError::Trace(_)
            ),
            CliError::Live(e) => e.is_usage(),
            CliError::Validate(_) | CliError::Stdout(_) => false,
        };
        if usage {
            2
        } else {
            1
        }
    }
}

/// One trial, as `run` and `trace` name it.
#[derive(Args, Debug)]
struct TrialArgs {
    /// Protocol spec: a protocol plus options, e.g. bully, bully+quorum, raft+pre_vote.
    #[arg(long, short = 'p')]
    protocol: String,
    /// Cluster size.
    #[arg(long, short = 'n')]
    nodes: u32,
    /// Scenario name (see `election-bench scenarios`).
    #[arg(long, short = 's')]
    scenario: String,
    /// Network profile (see `election-bench params`) [default: the --config's only net, else lan].
    #[arg(long)]
    net: Option<String>,
    /// Trial seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Set a parameter: key=value (repeatable; see `election-bench params`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// TOML config with parameters, custom scenarios and network profiles.
    #[arg(long)]
    config: Option<PathBuf>,
}

impl TrialArgs {
    /// The trial's cell of a one-cell sweep, checked: one value per parameter, a size the
    /// scenario can use.
    fn cell(&self, command: &str) -> Result<election_runner::Cell, Error> {
        let mut spec = match &self.config {
            Some(p) => SweepSpec::from_file(p)?,
            None => SweepSpec::default(),
        };
        spec.protocols = Some(vec![self.protocol.clone()]);
        spec.nodes = Some(vec![self.nodes]);
        spec.scenarios = Some(vec![self.scenario.clone()]);
        // A config that names one network (a profile's) runs on it unless --net says otherwise.
        let net = match (&self.net, spec.nets.as_deref()) {
            (Some(n), _) => n.clone(),
            (None, Some([only])) => only.clone(),
            (None, _) => "lan".into(),
        };
        spec.nets = Some(vec![net]);
        // The cell does not depend on the seed (it is `run`'s argument), so the plan's seed
        // range is left at its default: any u64 seed runs, 2^64 - 1 included.
        spec.seeds = Some(1);
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
        let cell = plan.cells()?.swap_remove(0);
        if let Some(why) = &cell.skipped {
            return Err(Error::Usage(format!(
                "scenario {} cannot run with {} nodes: {why}",
                self.scenario, self.nodes
            )));
        }
        Ok(cell)
    }
}

#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    trial: TrialArgs,
    /// Print one JSON object whose keys are the trials.csv columns.
    #[arg(long)]
    json: bool,
    /// Also print every simulator event (status changes, faults; with --trace-messages, messages too).
    #[arg(long)]
    trace: bool,
    /// With --trace: include message sends, deliveries and drops.
    #[arg(long, requires = "trace")]
    trace_messages: bool,
}

#[derive(Args, Debug)]
struct ExploreArgs {
    /// Protocol specs [default: the list in DEFAULT_PROTOCOLS, filled in by `cli_command`].
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    protocols: Option<Vec<String>>,
    /// Cluster sizes (2 to 8; the issue's families are defined for 3 to 5).
    #[arg(long, value_delimiter = ',', num_args = 1.., default_value = "3,4,5")]
    nodes: Vec<u32>,
    /// Seeds per pattern (0, 1, ...).
    #[arg(long, default_value_t = 3)]
    seeds: u64,
    /// Directed 5-node patterns drawn for the protocols whose behaviour depends on ids.
    #[arg(long, default_value_t = 4096)]
    sample: u64,
    /// Output directory [default: results/explore; a shard: results/explore-shards/<k>-of-<N>].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep the finished chunks of an interrupted run.
    #[arg(long)]
    resume: bool,
    #[command(flatten)]
    shard: ShardArgs,
    /// Worker threads [default: one per core].
    #[arg(long)]
    jobs: Option<usize>,
    /// No progress on stderr.
    #[arg(long)]
    quiet: bool,
    /// Set a parameter: key=value (repeatable; see `election-bench params`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Where the report (REPORT.md, graphs of the smallest failing patterns) goes.
    #[arg(long, default_value = "reports/explore")]
    report_out: PathBuf,
    /// Do not render the report.
    #[arg(long)]
    no_report: bool,
    /// Write into the committed results/explore and reports/explore with options other than
    /// the defaults (without it, such a run needs --out and --report-out elsewhere).
    #[arg(long)]
    force: bool,
}

#[derive(Args, Debug)]
struct TuneArgs {
    /// The run's name: the page goes to reports/tune-<name>/ unless --out is given.
    #[arg(long, default_value = "default")]
    name: String,
    /// Protocol specs to tune (each family's timing knobs are set by tune) [default: the
    /// --config's protocols, else raft,bully,ring,lease].
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    protocols: Option<Vec<String>>,
    /// Cluster size [default: the --config's first size, else 5].
    #[arg(long)]
    nodes: Option<u32>,
    /// Network profile (see `election-bench params`) [default: the --config's first net, else lan].
    #[arg(long)]
    net: Option<String>,
    /// A TOML config every point starts from: its parameters, network profiles and custom
    /// scenarios. A profile from `election-bench profile` also gives the cluster's current
    /// settings, evaluated as their own point and compared with the leader changes the cluster
    /// was seen to make.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Set a parameter: key=value (repeatable): the noise (noise.*), the network (net.*),
    /// node time (node.*, clock.*). Over tune's own: workload.interval_ms=0, noise.profile=busy.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// The most unnecessary elections a day you accept.
    #[arg(long, default_value_t = 1.0)]
    max_false_per_day: f64,
    /// The slowest p99 failover you accept, ms.
    #[arg(long, default_value_t = 2000.0)]
    max_p99_ms: f64,
    /// Timeout range of the coarse grid, LO-HI ms (9 log-spaced values).
    #[arg(long, default_value = "50-5000")]
    timeouts: String,
    /// Ratios timeout / heartbeat (or lease duration / retry).
    #[arg(long, value_delimiter = ',', num_args = 1.., default_value = "3,5,10")]
    ratios: Vec<f64>,
    /// Steady-noise trials (an hour of simulated time each) per point in the search.
    #[arg(long, default_value_t = 4)]
    hours: u64,
    /// At most this many steady-noise hours for a point being confirmed; the confirm phase
    /// spends at most 4 times this per protocol.
    #[arg(long, default_value_t = 96)]
    max_hours: u64,
    /// Leader-crash trials per point (p99 needs ~1000 for a bounded interval).
    #[arg(long, default_value_t = 1000)]
    crash_trials: u64,
    /// Refinement rounds around the frontier (and at most as many bisections when nothing
    /// confirmed meets the limits).
    #[arg(long, default_value_t = 2)]
    rounds: u32,
    /// The first seed.
    #[arg(long, default_value_t = 1)]
    first_seed: u64,
    /// Output directory [default: reports/tune-<name>; a shard: reports/tune-<name>-shards/<k>-of-<N>].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Tune shards by protocol (each protocol's search is sequential): at most one shard a
    /// protocol.
    #[command(flatten)]
    shard: ShardArgs,
    /// Worker threads [default: one per core].
    #[arg(long)]
    jobs: Option<usize>,
    /// No progress on stderr.
    #[arg(long)]
    quiet: bool,
    /// Write into the committed reports/tune-default with options other than the defaults
    /// (without it, such a run needs --name or --out).
    #[arg(long)]
    force: bool,
}

#[derive(Args, Debug)]
struct ProfileArgs {
    /// Prometheus text-format scrapes of the cluster's members (`curl http://MEMBER:2379/metrics`,
    /// or Prometheus' /federate), one or more per member, or directories of *.prom files;
    /// times from sample timestamps or a `# scraped_at_ms MS` line.
    #[arg(long = "from-prometheus", value_name = "FILE", num_args = 1.., required = true)]
    from_prometheus: Vec<PathBuf>,
    /// The cluster's current --heartbeat-interval, ms [default: etcd's, 100].
    #[arg(long)]
    heartbeat_interval: Option<f64>,
    /// The cluster's current --election-timeout, ms [default: etcd's, 1000].
    #[arg(long)]
    election_timeout: Option<f64>,
    /// The profile's name (its network profile's too).
    #[arg(long, default_value = "etcd-profile")]
    name: String,
    /// The config to write; the distribution files go next to it [default:
    /// profiles/<name>/profile.toml].
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct SweepArgs {
    /// TOML config describing the sweep (flags override it).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Sweep name; results go to results/<name>/ unless --out is given [default: default].
    #[arg(long)]
    name: Option<String>,
    /// Protocol specs (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    protocols: Option<Vec<String>>,
    /// Cluster sizes.
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    nodes: Option<Vec<u32>>,
    /// Scenario names, or `all`.
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    scenarios: Option<Vec<String>>,
    /// Network profiles.
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    nets: Option<Vec<String>>,
    /// Seeds per cell.
    #[arg(long)]
    seeds: Option<u64>,
    /// The first seed (cells run first_seed .. first_seed + seeds).
    #[arg(long)]
    first_seed: Option<u64>,
    /// Set a parameter, key=value, or vary it, key=v1,v2,... (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE[,VALUE...]")]
    set: Vec<String>,
    /// Worker threads [default: one per core].
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    #[command(flatten)]
    shard: ShardArgs,
    /// What a sweep's shard runs: whole cells (round-robin), or every cell with one block of
    /// its seeds (for few cells and many seeds).
    #[arg(
        long,
        value_name = "cells|seeds",
        default_value = "cells",
        requires = "shard"
    )]
    shard_by: String,
    /// Continue an interrupted sweep in the output directory.
    #[arg(long, conflicts_with = "force")]
    resume: bool,
    /// Overwrite the output directory's results (finished or interrupted) even when they
    /// come from a different configuration; without it such results are refused (exit 2).
    /// Results of the same configuration are always overwritten (or continued with --resume).
    #[arg(long)]
    force: bool,
    /// Output directory [default: results/<name>].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Do not render the report after the sweep.
    #[arg(long)]
    no_report: bool,
    /// No progress output.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// `--shard` and `--shard-count`, the same for `sweep`, `explore` and `tune`.
#[derive(Args, Debug)]
struct ShardArgs {
    /// Run only shard k of N (1-based), for batch-scheduler job arrays; join with `merge`.
    /// `auto`: k and N from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, 0-based, with
    /// --shard-count) or a Slurm job array (SLURM_ARRAY_TASK_ID, _MIN, _STEP, _COUNT).
    /// Without --out, a shard writes <default out>-shards/<k>-of-<N>.
    #[arg(long, value_name = "k/N|auto")]
    shard: Option<String>,
    /// With --shard auto: the number of shards (a Kubernetes Indexed Job's completions; for
    /// Slurm it must agree with SLURM_ARRAY_TASK_COUNT).
    #[arg(long, value_name = "N", requires = "shard")]
    shard_count: Option<u32>,
}

impl ShardArgs {
    /// The shard this process runs, if any.
    fn resolve(&self) -> Result<Option<Shard>, Error> {
        election_runner::shard::resolve(self.shard.as_deref(), self.shard_count, |k| {
            std::env::var(k).ok()
        })
    }
}

#[derive(Args, Debug)]
struct MergeArgs {
    /// Directory receiving the merged results.
    #[arg(long)]
    out: PathBuf,
    /// The shard directories (every k/N of one sweep), or a directory holding them (each
    /// subdirectory a shard, as `sweep --shard` writes without --out).
    #[arg(value_name = "SHARD_DIR", required_unless_present = "list")]
    shards: Vec<PathBuf>,
    /// Overwrite results already in --out (never one of the shards).
    #[arg(long)]
    force: bool,
    /// A file naming the shard directories, one a line (`-`: standard input), for more shards
    /// than a command line holds; relative paths are relative to the working directory.
    #[arg(long, value_name = "FILE")]
    list: Option<PathBuf>,
    /// No progress on stderr (an exploration's merge checks every chunk).
    #[arg(long)]
    quiet: bool,
}

/// The shard directories `merge` is given: each argument that is not itself a shard (it has
/// no manifest.json) stands for its subdirectories, then the lines of `--list`.
fn merge_inputs(a: &MergeArgs) -> Result<Vec<PathBuf>, Error> {
    let io = |what: &str, p: &std::path::Path, e: std::io::Error| Error::Io {
        context: format!("{what} {}", p.display()),
        source: e,
    };
    let mut dirs = Vec::new();
    for d in &a.shards {
        if d.join("manifest.json").exists() || !d.is_dir() {
            dirs.push(d.clone());
            continue;
        }
        let mut subs: Vec<PathBuf> = std::fs::read_dir(d)
            .map_err(|e| io("cannot read", d, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        if subs.is_empty() {
            return Err(Error::Usage(format!(
                "merge: {} is neither a shard (no manifest.json) nor a directory of shards",
                d.display()
            )));
        }
        subs.sort();
        dirs.extend(subs);
    }
    if let Some(list) = &a.list {
        let text = if list == std::path::Path::new("-") {
            std::io::read_to_string(std::io::stdin()).map_err(|e| io("cannot read", list, e))?
        } else {
            std::fs::read_to_string(list).map_err(|e| io("cannot read", list, e))?
        };
        dirs.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(PathBuf::from),
        );
    }
    if dirs.is_empty() {
        return Err(Error::Usage("merge: no shard directories given".into()));
    }
    Ok(dirs)
}

/// The protocols and their options, for `--protocol`'s help.
fn protocol_help() -> String {
    use election_runner::protocol::{ProtocolKind, PROTOCOLS};
    let opts: Vec<String> = PROTOCOLS
        .iter()
        .map(|p| {
            let k = ProtocolKind::parse(p).expect("a listed protocol");
            format!("{p} (+{})", k.options().join(", +"))
        })
        .collect();
    format!(
        "Protocol spec: a protocol plus +options, e.g. bully+quorum, raft+pre_vote+check_quorum, \
         raft+timeout_ms=300-600. Protocols and their options: {}",
        opts.join("; ")
    )
}

/// `validate --help`'s end: the PASS rule, every case and examples.
fn validate_help() -> String {
    let cases = election_runner::validate::CASES;
    let width = cases.iter().map(|c| c.name.len()).max().unwrap_or(0);
    let mut s = format!("{}\n\nCases:\n", election_runner::validate::PASS_RULE);
    for c in cases {
        s.push_str(&format!("  {:width$}  {}\n", c.name, c.claim));
    }
    s.push_str(
        "\nExamples:
  election-bench validate --quick                       # every case, fewer seeds (CI)
  election-bench validate --case chang-roberts-worst --case etcd-3-1-down",
    );
    s
}

/// The built-in scenarios, for `--scenario`'s help.
fn scenario_help(list: bool) -> String {
    let names: Vec<&str> = election_runner::scenario::BUILTINS
        .iter()
        .map(|b| b.name())
        .collect();
    format!(
        "{}: {}{}, or a custom scenario of --config (see `election-bench scenarios`)",
        if list {
            "Scenario names, or all"
        } else {
            "Scenario name"
        },
        if list { "all, " } else { "" },
        names.join(", ")
    )
}

/// The command line, with help that lists the valid values of `--protocol`, `--scenario`
/// (computed from the catalogs, so it cannot fall out of date) and `--format`.
fn cli_command() -> clap::Command {
    use clap::CommandFactory;
    let proto = protocol_help();
    let protos = format!("{proto} (comma-separated or repeated)");
    let one = scenario_help(false);
    let many = scenario_help(true);
    let net = format!(
        "Network profile: {}, or a custom one of --config (see `election-bench params`) [default: the --config's only net, else lan]",
        BUILTIN_NETS.join(", ")
    );
    let nets = format!(
        "Network profiles: {}, or custom ones of --config [default: lan]",
        BUILTIN_NETS.join(", ")
    );
    Cli::command()
        .mut_subcommand("run", |c| {
            c.mut_arg("protocol", |a| a.help(proto.clone()))
                .mut_arg("scenario", |a| a.help(one.clone()))
                .mut_arg("net", |a| a.help(net.clone()))
        })
        .mut_subcommand("trace", |c| {
            c.mut_arg("protocol", |a| a.help(proto.clone()))
                .mut_arg("scenario", |a| a.help(one.clone()))
                .mut_arg("net", |a| a.help(net.clone()))
        })
        .mut_subcommand("live", |c| {
            c.mut_arg("protocol", |a| a.help(proto.clone()))
                .mut_arg("scenario", |a| a.help(one.clone()))
        })
        .mut_subcommand("calibrate", |c| {
            c.mut_arg("protocol", |a| a.help(proto.clone()))
        })
        .mut_subcommand("explore", |c| {
            c.mut_arg("protocols", |a| {
                a.help(format!(
                    "Protocol specs [default: {}]",
                    election_runner::explore::DEFAULT_PROTOCOLS.join(", ")
                ))
            })
        })
        .mut_subcommand("validate", |c| c.after_help(validate_help()))
        .mut_subcommand("sweep", |c| {
            c.mut_arg("protocols", |a| a.help(protos.clone()))
                .mut_arg("scenarios", |a| a.help(many.clone()))
                .mut_arg("nets", |a| a.help(nets.clone()))
        })
}

/// The output directories committed to the repository (`.gitignore` lists the same ones; every
/// other directory under `results/` and `reports/` is ignored by git).
const COMMITTED_DIRS: [&str; 8] = [
    "results/default",
    "results/gray",
    "results/explore",
    "reports/default",
    "reports/gray",
    "reports/explore",
    "reports/tune-default",
    "reports/calibration",
];

/// The committed directory `dir` names (relative to the working directory, as the defaults
/// are), if it is one.
fn committed_dir(dir: &std::path::Path) -> Option<&'static str> {
    let clean: PathBuf = dir
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    COMMITTED_DIRS
        .into_iter()
        .find(|c| clean == std::path::Path::new(c))
}

/// Refuses (exit 2) a run whose options are not the committed run's from writing into a
/// committed directory, unless `--force`: the committed output is regenerated only on purpose.
fn guard_committed(
    command: &str,
    dirs: &[&std::path::Path],
    same_as_committed: bool,
    force: bool,
    elsewhere: &str,
) -> Result<(), Error> {
    if same_as_committed || force {
        return Ok(());
    }
    match dirs.iter().find_map(|d| committed_dir(d)) {
        Some(c) => Err(Error::Usage(format!(
            "{command} with options other than the defaults would overwrite the committed {c}: \
             {elsewhere}, or --force to replace the committed output"
        ))),
        None => Ok(()),
    }
}

/// A directory for output nobody asked to keep: under the system's temporary directory, so
/// `live` and `calibrate` never write into the repository's tracked `results/` or `reports/`
/// unless `--out` says so.
fn scratch_dir(what: &str) -> PathBuf {
    std::env::temp_dir().join("election-bench").join(what)
}

/// `println!` that returns a write error ([`CliError::Stdout`]) instead of panicking (exit
/// 101) on a closed pipe or a full disk.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*).map_err(CliError::Stdout)?
    }};
}

/// `print!`, likewise.
macro_rules! out_nonl {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout(), $($arg)*).map_err(CliError::Stdout)?
    }};
}

/// Whether `e` is, or was caused by, writing to a pipe whose reader has gone (`params | head
/// -1`): the output was not wanted any more, so the command ends quietly and successfully.
fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::BrokenPipe {
                return true;
            }
        }
        cur = err.source();
    }
    false
}

/// A new directory under `parent`, named for the time and the process (`run-<unix seconds>-<pid>`,
/// with `-2`, `-3`, ... if taken), so no run overwrites another's files.
fn fresh_dir(parent: &std::path::Path) -> Result<PathBuf, Error> {
    let io = |p: &std::path::Path, e| Error::Io {
        context: format!("cannot create {}", p.display()),
        source: e,
    };
    std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let base = format!("run-{secs}-{}", std::process::id());
    for i in 1u32.. {
        let name = if i == 1 {
            base.clone()
        } else {
            format!("{base}-{i}")
        };
        let dir = parent.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(&dir, e)),
        }
    }
    unreachable!("some name is free")
}

fn main() -> ExitCode {
    use clap::FromArgMatches;
    let cli = match Cli::from_arg_matches(&cli_command().get_matches()) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let result = dispatch(cli).and_then(|()| {
        use std::io::Write as _;
        std::io::stdout().flush().map_err(CliError::Stdout)
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Stdout(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn dispatch(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Scenarios { config } => Ok(scenarios(config)?),
        Command::Params => params(),
        Command::Run(a) => Ok(run(a)?),
        Command::Sweep(a) => sweep(a),
        Command::Explore(a) => explore(a),
        Command::Tune(a) => tune(a),
        Command::Profile(a) => profile(a),
        Command::Report(a) => {
            let out = a.out.clone().unwrap_or_else(|| {
                let name = a.results.file_name().map(PathBuf::from);
                PathBuf::from("reports").join(name.unwrap_or_else(|| "default".into()))
            });
            // An exploration's results (explore, or the merge of its shards) have their own page.
            if explore_results(&a.results) {
                let r = election_report::render_explore(&a.results, &out, 8, true)?;
                out!("report: {}", r.report.display());
                return Ok(());
            }
            // The reader's own checks first (they name the file, line and column, exit 2),
            // then the recorded hash and the recomputed summary.
            if a.results.join("manifest.json").is_file() {
                election_report::load_results(&a.results)?;
            }
            verify_results(&a.results)?;
            let mut opts = ReportOptions::default();
            if let Some(n) = a.focus_nodes {
                check_focus_nodes(&a.results, n)?;
                opts.focus_nodes = n;
            }
            let tracer = RunnerTracer::from_manifest(&a.results)?;
            report(&a.results, &out, &opts, &tracer)
        }
        Command::Compare(a) => compare(a),
        Command::Trace(a) => trace(a),
        Command::Live(a) => live(a),
        Command::Calibrate(a) => {
            let mut c = election_live::CalibrateArgs {
                nodes: a.nodes,
                trials: a.trials,
                sim_trials: a.sim_trials,
                first_seed: a.first_seed,
                out: a.out.unwrap_or_else(|| scratch_dir("calibration")),
                ..election_live::CalibrateArgs::default()
            };
            if let Some(p) = a.protocol {
                c.protocols = vec![p];
            }
            let o = election_live::calibrate(&c, |line| eprintln!("{line}"))?;
            for p in &o.protocols {
                out!(
                    "{}: live/sim median failover ratio {} ({})",
                    p.protocol,
                    p.p50_ratio.map_or("-".into(), |r| format!("{r:.3}")),
                    if p.within_target() {
                        "within 15 %"
                    } else {
                        "OUTSIDE 15 %"
                    }
                );
            }
            out!("calibration: {}", c.out.join("README.md").display());
            Ok(())
        }
        Command::Validate { quick, cases } => validate(quick, &cases),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cli_command(), "election-bench", &mut script);
            use std::io::Write as _;
            std::io::stdout()
                .write_all(&script)
                .map_err(CliError::Stdout)
        }
        Command::Merge(a) => merge(a),
    }
}

/// `report --focus-nodes N`: N must be one of the sweep's cluster sizes (its manifest's
/// `config.nodes`); without the flag the report takes the size nearest to 5.
fn check_focus_nodes(results: &std::path::Path, n: u32) -> Result<(), CliError> {
    let path = results.join("manifest.json");
    let sizes: Option<Vec<u64>> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|m| {
            m["config"]["nodes"]
                .as_array()
                .map(|a| a.iter().filter_map(serde_json::Value::as_u64).collect())
        });
    // A missing or unreadable manifest is reported by the report itself, with its reason.
    let Some(sizes) = sizes else { return Ok(()) };
    if sizes.contains(&u64::from(n)) {
        return Ok(());
    }
    let list: Vec<String> = sizes.iter().map(u64::to_string).collect();
    Err(Error::Usage(format!(
        "--focus-nodes {n}: {} has no cells of {n} nodes; its sizes are {}",
        results.display(),
        list.join(", ")
    ))
    .into())
}

/// `validate`: the selected cases (every case for no names), one aligned line each, then the
/// tally; exit 1 if any fails, 2 for an unknown case name.
fn validate(quick: bool, names: &[String]) -> Result<(), CliError> {
    let cases = election_runner::validate::select(names)?;
    validate_cases(&cases.into_iter().copied().collect::<Vec<_>>(), quick)
}

fn validate_cases(cases: &[election_runner::validate::Case], quick: bool) -> Result<(), CliError> {
    let outcomes = cases
        .iter()
        .map(|case| case.run(quick))
        .collect::<Result<Vec<_>, _>>()?;
    out_nonl!("{}", election_runner::validate::render(&outcomes));
    match outcomes.iter().filter(|o| !o.pass).count() {
        0 => Ok(()),
        failed => Err(CliError::Validate(failed)),
    }
}

#[cfg(test)]
mod validate_tests {
    use super::*;

    #[test]
    fn a_wrong_published_figure_fails_with_exit_1() {
        let mut case = *election_runner::validate::select(&["bully-best-case".into()]).unwrap()[0];
        case.quick_seeds = 2;
        assert!(validate_cases(&[case], true).is_ok());
        case.published.value = || 7.0;
        let e = validate_cases(&[case], true).unwrap_err();
        assert!(matches!(e, CliError::Validate(1)), "{e}");
        assert_eq!(e.exit_code(), 1);
    }
}

fn scenarios(config: Option<PathBuf>) -> Result<(), CliError> {
    let mut spec = match &config {
        Some(p) => SweepSpec::from_file(p)?,
        None => SweepSpec::default(),
    };
    spec.scenarios = Some(vec!["all".into()]);
    let plan = spec.plan()?;
    let all = plan.scenarios.iter().chain(&plan.custom_scenarios);
    let gray = election_runner::scenario::GRAY;
    let width = all
        .clone()
        .map(|s| s.name().len())
        .chain(gray.iter().map(|b| b.name().len()))
        .max()
        .unwrap_or(0);
    for s in all {
        out!("{:width$}  {}", s.name(), s.about());
    }
    out!("\nGray failures (not part of `all`; swept into results/gray):\n");
    for b in gray {
        out!("{:width$}  {}", b.name(), b.about());
    }
    out!("\nSteady state (not part of `all`; an hour per trial, run by `election-bench tune`):\n");
    for b in election_runner::scenario::STEADY {
        out!("{:width$}  {}", b.name(), b.about());
    }
    Ok(())
}

fn params() -> Result<(), CliError> {
    let width = PARAMS.iter().map(|d| d.key.len()).max().unwrap_or(0);
    out!("Parameters (TOML [params], --set key=value, protocol options bully+quorum):\n");
    for d in PARAMS {
        out!("{:width$}  {}", d.key, d.about);
        out!(
            "{:width$}  default: {}; values: {}",
            "",
            d.default,
            election_runner::params::values(d)
        );
    }
    out!("\nNetwork profiles (--net, --nets):\n");
    for n in BUILTIN_NETS {
        let p = NetProfile::builtin(n).expect("built-in");
        out!(
            "{n:6}  latency {}, loss {}  ({})",
            format_latency(&p.net.latency),
            p.net.loss,
            p.about
        );
    }
    Ok(())
}

/// The command line that reproduces a sweep: the arguments as given, without those that only
/// say how to carry it out (threads, shard, resume, output directory, report, progress).
fn reproduce_command(args: &[String]) -> String {
    const WITH_VALUE: [&str; 6] = [
        "--jobs",
        "-j",
        "--shard",
        "--shard-count",
        "--shard-by",
        "--out",
    ];
    const FLAGS: [&str; 5] = ["--resume", "--force", "--no-report", "--quiet", "-q"];
    let mut out = vec!["election-bench".to_string()];
    let mut skip_next = false;
    for a in args {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if WITH_VALUE.contains(&a.as_str()) {
            skip_next = true;
            continue;
        }
        if FLAGS.contains(&a.as_str())
            || WITH_VALUE.iter().any(|w| a.starts_with(&format!("{w}=")))
            || (a.starts_with("-j") && a.len() > 2 && a[2..].chars().all(|c| c.is_ascii_digit()))
        {
            continue;
        }
        out.push(shell_quote(a));
    }
    out.join(" ")
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,/=+:@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The most threads `--jobs` may ask for: far above any machine this runs on, far below what
/// exhausts the process's threads (each is a stack).
const MAX_JOBS: usize = 1024;

fn check_jobs(jobs: Option<usize>) -> Result<(), CliError> {
    match jobs {
        Some(j) if j > MAX_JOBS => Err(Error::Usage(format!(
            "--jobs {j}: at most {MAX_JOBS} threads (this machine has {} cores; leave --jobs out \
             to use one thread per core)",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        ))
        .into()),
        _ => Ok(()),
    }
}

/// A finished results directory is checked before `report` or `compare` reads it: its
/// `trials.csv` is the file the manifest records (bytes and SHA-256), every row holds, and
/// `summary.csv` is exactly what the trials give — an edited file is never published. A
/// directory without a manifest is left to the reader's own error (it names what is missing).
fn verify_results(dir: &std::path::Path) -> Result<(), CliError> {
    if dir.join("manifest.json").is_file() {
        election_runner::sweep::verify_finished(dir)?;
    }
    Ok(())
}

/// Render the report and tell the user where it is and what to look at.
fn report(
    results: &std::path::Path,
    out: &std::path::Path,
    opts: &ReportOptions,
    tracer: &RunnerTracer,
) -> Result<(), CliError> {
    let o = render_report(results, out, opts, Some(tracer))?;
    for w in &o.warnings {
        eprintln!("warning: {w}");
    }
    out!(
        "report: {} ({} charts, {} files)",
        o.report.display(),
        o.charts.len(),
        o.files.len()
    );
    Ok(())
}

/// `compare`: print the significant changes, write COMPARE.md, compare.csv and the chart.
fn compare(a: CompareArgs) -> Result<(), CliError> {
    // The flag is in percent; the library's option is a fraction, and its message says so.
    if !(a.min_change.is_finite() && a.min_change >= 0.0) {
        return Err(Error::Usage(format!(
            "--min-change {}: expected a percentage >= 0 (5 for 5 %)",
            a.min_change
        ))
        .into());
    }
    let opts = CompareOptions {
        resamples: a.resamples,
        level: a.level,
        min_change: a.min_change / 100.0,
        seed: a.seed,
        png: true,
        ignore: a.ignore.clone(),
    };
    let cmp = election_report::compare(&a.a, &a.b, &opts)?;
    verify_results(&a.a)?;
    verify_results(&a.b)?;
    let out = a.out.clone().unwrap_or_else(|| {
        let name = |p: &std::path::Path| {
            p.file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "results".into())
        };
        PathBuf::from("reports").join(format!("compare-{}-vs-{}", name(&a.a), name(&a.b)))
    });
    let o = election_report::write_comparison(&cmp, &out, a.force)?;
    out_nonl!("{}", cmp.text(a.rows));
    out!(
        "comparison: {} ({} files)",
        o.report.display(),
        o.files.len()
    );
    Ok(())
}

fn explore(a: ExploreArgs) -> Result<(), CliError> {
    use election_runner::explore;
    if a.jobs == Some(0) {
        return Err(Error::Usage("--jobs 0: need at least one thread".into()).into());
    }
    check_jobs(a.jobs)?;
    let protocols = a.protocols.clone().unwrap_or_else(|| {
        explore::DEFAULT_PROTOCOLS
            .iter()
            .map(|s| s.to_string())
            .collect()
    });
    let shard = a.shard.resolve()?;
    let default_out = PathBuf::from("results/explore");
    let out = a.out.clone().unwrap_or_else(|| {
        shard.map_or(default_out.clone(), |s| {
            election_runner::shard::default_dir(&default_out, s)
        })
    });
    let default_run = a.protocols.is_none()
        && a.nodes == [3, 4, 5]
        && a.seeds == 3
        && a.sample == 4096
        && a.set.is_empty();
    // A shard renders no report: `merge` the shards, then `election-bench report` them.
    let render = !a.no_report && shard.is_none();
    let report_dirs: Vec<&std::path::Path> = if render {
        vec![&out, &a.report_out]
    } else {
        vec![&out]
    };
    guard_committed(
        "explore",
        &report_dirs,
        default_run,
        a.force,
        "give --out DIR and --report-out DIR (e.g. results/explore-mine, reports/explore-mine)",
    )?;
    let cells = explore::cells(&protocols, &a.nodes, &a.set)?;
    let start = std::time::Instant::now();
    let o = explore::explore(&explore::ExploreOptions {
        cells,
        set: a.set.clone(),
        seeds: a.seeds,
        sample: a.sample,
        shard,
        out: out.clone(),
        resume: a.resume,
        progress: !a.quiet,
        jobs: a.jobs,
    })?;
    if let Some(s) = shard {
        out!(
            "explore shard {s}: {} trials run in {:.1} s -> {} (its chunks; `election-bench merge` \
             joins every shard's)",
            o.trials_run,
            start.elapsed().as_secs_f64(),
            out.display()
        );
        return Ok(());
    }
    print_explore_summary(&o.summary)?;
    out!(
        "explore: {} trials run in {:.1} s -> {} (patterns.csv, summary.csv, failing.csv)",
        o.trials_run,
        start.elapsed().as_secs_f64(),
        out.display()
    );
    if render {
        let r = election_report::render_explore(&out, &a.report_out, 8, true)?;
        out!("report: {}", r.report.display());
    }
    Ok(())
}

/// explore's summary table on standard output (explore and the merge of its shards).
fn print_explore_summary(summary: &[Vec<String>]) -> Result<(), CliError> {
    out!(
        "{:<28} {:>5} {:<14} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8}",
        "protocol",
        "nodes",
        "family",
        "patterns",
        "majority",
        "stable",
        "recovered",
        "no-leader",
        "livelock"
    );
    for r in summary {
        out!(
            "{:<28} {:>5} {:<14} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8}",
            r[0],
            r[1],
            r[2],
            r[4],
            r[5],
            r[7],
            r[8],
            r[9],
            r[10]
        );
    }
    Ok(())
}

fn profile(a: ProfileArgs) -> Result<(), CliError> {
    use election_runner::profile;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| profile::default_out(&a.name));
    let mut command = String::from("election-bench profile --from-prometheus");
    for f in &a.from_prometheus {
        command.push_str(&format!(" {}", f.display()));
    }
    if let Some(h) = a.heartbeat_interval {
        command.push_str(&format!(" --heartbeat-interval {h}"));
    }
    if let Some(e) = a.election_timeout {
        command.push_str(&format!(" --election-timeout {e}"));
    }
    command.push_str(&format!(" --name {} --out {}", a.name, out.display()));
    let p = profile::profile(&profile::ProfileOptions {
        files: a.from_prometheus.clone(),
        out,
        name: a.name.clone(),
        heartbeat_ms: a.heartbeat_interval,
        election_timeout_ms: a.election_timeout,
        command,
    })?;
    out!("{}", p.source.describe());
    out!("cluster size     {} nodes", p.nodes);
    for l in &p.summary {
        out!("{l}");
    }
    match p.source.observed_per_hour() {
        Some((r, lo, hi)) => out!(
            "leader changes   {} in {} h: {:.3} an hour (95 % interval {:.3}-{:.3})",
            p.source.leader_changes,
            fmt_ms(p.source.span_s / 3600.0),
            r,
            lo,
            hi
        ),
        None => out!(
            "leader changes   not observed: {}",
            p.source.no_rate.as_deref().unwrap_or("no time span")
        ),
    }
    out!(
        "profile: {} (use with run, sweep or tune --config)",
        p.config.display()
    );
    Ok(())
}

fn tune(a: TuneArgs) -> Result<(), CliError> {
    use election_runner::tune;
    if a.jobs == Some(0) {
        return Err(Error::Usage("--jobs 0: need at least one thread".into()).into());
    }
    check_jobs(a.jobs)?;
    let bad_range = || {
        Error::Usage(format!(
            "--timeouts {:?}: expected LO-HI in milliseconds, e.g. 50-5000",
            a.timeouts
        ))
    };
    let (lo, hi) = a.timeouts.split_once('-').ok_or_else(bad_range)?;
    let timeouts = (
        lo.trim().parse::<f64>().map_err(|_| bad_range())?,
        hi.trim().parse::<f64>().map_err(|_| bad_range())?,
    );
    let mut o = tune::TuneOptions::defaults(&a.name);
    if let Some(p) = &a.config {
        let c = SweepSpec::from_file(p)?;
        let first = |v: &Option<Vec<String>>| v.as_ref().and_then(|v| v.first().cloned());
        o.protocols = c.protocols.clone().unwrap_or(o.protocols);
        o.nodes = c
            .nodes
            .as_ref()
            .and_then(|n| n.first().copied())
            .unwrap_or(o.nodes);
        o.net = first(&c.nets).unwrap_or(o.net);
        o.config = Some((p.clone(), c));
    }
    if let Some(p) = &a.protocols {
        o.protocols = p.clone();
    }
    o.nodes = a.nodes.unwrap_or(o.nodes);
    if let Some(n) = &a.net {
        o.net = n.clone();
    }
    o.set = a.set.clone();
    o.max_false_per_day = a.max_false_per_day;
    o.max_p99_ms = a.max_p99_ms;
    o.timeouts = timeouts;
    o.ratios = a.ratios.clone();
    o.hours = a.hours;
    o.max_hours = a.max_hours;
    o.crash_trials = a.crash_trials;
    o.rounds = a.rounds;
    o.first_seed = a.first_seed;
    o.jobs = a.jobs.unwrap_or(0);
    o.progress = !a.quiet;
    o.shard = a.shard.resolve()?;
    match (&a.out, o.shard) {
        (Some(out), _) => o.out = out.clone(),
        (None, Some(s)) => o.out = election_runner::shard::default_dir(&o.out, s),
        (None, None) => {}
    }
    // The committed reports/tune-default is the run with every default; any other run with the
    // default name would replace it.
    let default_run = {
        let d = tune::TuneOptions::defaults("default");
        let mut mine = o.clone();
        (mine.jobs, mine.progress, mine.out, mine.shard) =
            (d.jobs, d.progress, d.out.clone(), d.shard);
        // TuneOptions' Debug holds the config; a run with one is never the default run.
        format!("{mine:?}") == format!("{d:?}")
    };
    guard_committed(
        "tune",
        &[&o.out],
        default_run,
        a.force,
        "give --name NAME (into reports/tune-NAME) or --out DIR",
    )?;
    let start = std::time::Instant::now();
    let outcome = tune::tune(&o)?;
    outcome.write()?;
    if let Some(s) = o.shard {
        out!(
            "tune shard {s}: {} trials in {:.1} s -> {} (its searches; `election-bench merge` \
             joins every shard's and writes the page)",
            outcome.trials,
            start.elapsed().as_secs_f64(),
            o.out.display()
        );
        return Ok(());
    }
    print_tune_outcome(&outcome, Some(start))
}

/// tune's advice on standard output, its notes on standard error, and where the page is
/// (tune and the merge of its shards).
fn print_tune_outcome(
    outcome: &election_runner::tune::TuneOutcome,
    start: Option<std::time::Instant>,
) -> Result<(), CliError> {
    let o = &outcome.options;
    let page = election_report::render_tune(outcome, &o.out)?;
    let lim = (o.max_false_per_hour(), o.max_p99_ms);
    for a in &outcome.advice {
        let contradicted = outcome
            .agreement(a)
            .filter(|c| c.3 != election_runner::tune::Agreement::Consistent);
        match a.chosen {
            _ if contradicted.is_some() => out!(
                "{:<28} recommendation withheld: the model contradicts the cluster at its current settings ({})",
                a.protocol,
                contradicted.expect("checked").3.name()
            ),
            Some(i) => {
                let p = &a.points[i];
                out!(
                    "{:<28} T = {} ms, ratio {}: p99 failover {:.0} ms, {:.3} false elections a day ({})",
                    a.protocol,
                    p.timeout_ms,
                    p.ratio,
                    p.failover(0.99).unwrap_or(f64::NAN),
                    p.false_per_hour().unwrap_or(f64::NAN) * 24.0,
                    p.verdict(lim.0, lim.1).name()
                );
            }
            None => out!(
                "{:<28} no evaluated setting meets both limits (closest points in the page)",
                a.protocol
            ),
        }
    }
    for a in &outcome.advice {
        if let Some((fe, lo, hi, agree)) = outcome.agreement(a) {
            let (ob, olo, ohi) = outcome
                .observed()
                .expect("an agreement needs an observed rate");
            out!(
                "{:<28} at the current settings: {:.3} false elections an hour simulated ({:.3}-{:.3}), {:.3} leader changes an hour observed ({:.3}-{:.3}): {}",
                a.protocol,
                fe,
                lo,
                hi,
                ob,
                olo,
                ohi,
                agree.name()
            );
        }
    }
    for w in &outcome.warnings {
        eprintln!("note: {w}");
    }
    out!(
        "tune: {} trials {} -> {} (ADVICE.md, points.csv, frontier.png)",
        outcome.trials,
        start.map_or("in its shards".into(), |t| format!(
            "in {:.1} s",
            t.elapsed().as_secs_f64()
        )),
        page.parent().unwrap_or(&o.out).display()
    );
    Ok(())
}

/// Does `dir` hold an exploration's results (its manifest's command is `explore`)?
fn explore_results(dir: &std::path::Path) -> bool {
    std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|m| m["command"] == "explore" && m.get("shard").is_none())
}

/// `merge`: the shards of a sweep, an exploration or a tuning, by what the first one is.
fn merge(a: MergeArgs) -> Result<(), CliError> {
    use election_runner::shard::Kind;
    let shards = merge_inputs(&a)?;
    match election_runner::shard::kind(&shards[0])? {
        Kind::Sweep => {
            let m = election_runner::merge(&a.out, &shards, a.force)?;
            out!(
                "merged {} shards: {} cells, {} trials into {}",
                shards.len(),
                m.cells,
                m.trials,
                a.out.display()
            );
        }
        Kind::Explore => {
            let (_, o) = election_runner::explore::merge(&a.out, &shards, a.force, !a.quiet, None)?;
            print_explore_summary(&o.summary)?;
            out!(
                "merged {} explore shards into {} (patterns.csv, summary.csv, failing.csv); \
                 its page: election-bench report --results {}",
                shards.len(),
                a.out.display(),
                a.out.display()
            );
        }
        Kind::Tune => {
            let outcome = election_runner::tune::merge(&a.out, &shards, a.force)?;
            outcome.write()?;
            print_tune_outcome(&outcome, None)?;
        }
    }
    Ok(())
}

fn sweep(a: SweepArgs) -> Result<(), CliError> {
    let mut spec = match &a.config {
        Some(p) => SweepSpec::from_file(p)?,
        None => SweepSpec::default(),
    };
    if a.name.is_some() {
        spec.name = a.name.clone();
    }
    macro_rules! over {
        ($($f:ident),*) => { $( if a.$f.is_some() { spec.$f = a.$f.clone(); } )* };
    }
    over!(protocols, nodes, scenarios, nets, seeds, first_seed);
    spec.set_all(&a.set)?;
    let shard = a.shard.resolve()?;
    let shard_by: election_runner::ShardBy = a.shard_by.parse()?;
    if a.jobs == Some(0) {
        return Err(Error::Usage("--jobs 0: need at least one thread".into()).into());
    }
    check_jobs(a.jobs)?;
    let plan = spec.plan()?;
    for w in plan.warnings() {
        eprintln!("warning: {w}");
    }
    let results_dir = a.out.clone().unwrap_or_else(|| {
        let dir = PathBuf::from("results").join(&plan.name);
        // Every shard of an array runs the same command line: each gets its own directory,
        // and `merge` takes their parent.
        shard.map_or(dir.clone(), |s| {
            election_runner::shard::default_dir(&dir, s)
        })
    });
    let out = results_dir.clone();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = SweepOptions {
        out,
        jobs: a.jobs,
        shard,
        shard_by,
        resume: a.resume,
        force: a.force,
        progress: !a.quiet,
        command: reproduce_command(&args),
    };
    let o = election_runner::run_sweep(&plan, &opts)?;
    out!(
        "sweep {}{}: {} cells ({} skipped), {} trials{} -> {}",
        plan.name,
        shard.map(|s| format!(" shard {s}")).unwrap_or_default(),
        o.cells,
        o.skipped,
        o.trials,
        if o.resumed_cells > 0 {
            format!(" ({} cells kept from the interrupted run)", o.resumed_cells)
        } else {
            String::new()
        },
        o.out.display()
    );
    if a.no_report {
        return Ok(());
    }
    if shard.is_some() {
        out!("report: not rendered for one shard; `merge` the shards, then run `election-bench report`");
        return Ok(());
    }
    let report_dir = PathBuf::from("reports").join(&plan.name);
    report(
        &results_dir,
        &report_dir,
        &ReportOptions::default(),
        &RunnerTracer::new(spec),
    )
}

fn live(a: LiveCliArgs) -> Result<(), CliError> {
    let mut args = election_live::LiveArgs::new(&a.protocol, a.nodes, &a.scenario);
    args.trials = a.trials;
    args.first_seed = a.first_seed;
    let fresh = a.out.is_none();
    args.out = match a.out {
        Some(out) => out,
        None => fresh_dir(&scratch_dir("live"))?,
    };
    args.net = a.net;
    args.bind = a.bind;
    args.params = key_values(&a.set)?;
    // Said first, so a run stopped early still says where its finished trials are.
    eprintln!(
        "live: rows into {} as each trial finishes",
        args.out.display()
    );
    let out = election_live::run_live(&args, |row, report| {
        // A progress line: a write error here shows again, and ends the command, at the
        // summary.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stdout(),
            "seed {}: converged {} leader {} failover_ms {} split_brain {} rejected datagrams {}",
            row.seed,
            row.converged,
            row.leader.map_or("-".into(), |l| l.to_string()),
            row.failover_ms.map_or("-".into(), fmt_ms),
            row.split_brain,
            report.health.rejected(),
        );
    });
    let out = match out {
        Ok(out) => out,
        Err(e) => {
            // A run refused before its first trial leaves no empty directory behind (a
            // directory with finished trials is kept: remove_dir only removes an empty one).
            if fresh {
                let _ = std::fs::remove_dir(&args.out);
            }
            return Err(e.into());
        }
    };
    print_live_summary(&args, &out)?;
    for f in &out.files {
        out!("wrote {}", f.display());
    }
    Ok(())
}

/// The end of `live`: what the trials add up to, in the words of `run`'s summary.
fn print_live_summary(
    args: &election_live::LiveArgs,
    out: &election_live::LiveOutcome,
) -> Result<(), CliError> {
    use election_runner::stats::percentile;
    let rows = &out.rows;
    let n = rows.len();
    let converged = rows.iter().filter(|r| r.converged).count();
    let mut failover: Vec<f64> = rows.iter().filter_map(|r| r.failover_ms).collect();
    failover.sort_by(f64::total_cmp);
    let ms = |p: f64| percentile(&failover, p).map_or("-".into(), |v| format!("{} ms", fmt_ms(v)));
    let split = rows.iter().filter(|r| r.split_brain).count();
    let stale: u64 = rows.iter().filter_map(|r| r.writes_stale).sum();
    let msgs: Vec<f64> = rows.iter().map(|r| r.msgs_election as f64).collect();
    out!(
        "summary          {} | {} nodes | {} | {n} live trials",
        args.protocol,
        args.nodes,
        args.scenario
    );
    out!("converged        {converged} of {n}");
    out!(
        "failover         p50 {}, p95 {} (over the {} trials with a quorum leader after the fault)",
        ms(0.5),
        ms(0.95),
        failover.len()
    );
    out!(
        "election msgs    mean {}",
        election_runner::stats::mean(&msgs).map_or("-".into(), |m| format!("{m:.1}"))
    );
    out!("split brain      {split} of {n} trials; {stale} stale writes in all");
    out!(
        "datagrams        {} rejected (malformed or from outside the cluster)",
        out.health.rejected()
    );
    Ok(())
}

/// The trace format `--format` names, or else the one `--out`'s extension names, or SVG.
fn trace_format(format: Option<&str>, out: Option<&std::path::Path>) -> Result<TraceFormat, Error> {
    let from_ext = || match out
        .and_then(|p| p.extension())
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("mmd" | "mermaid") => "mermaid",
        Some("jsonl") => "jsonl",
        _ => "svg",
    };
    format
        .unwrap_or_else(from_ext)
        .parse()
        .map_err(|e: ReportError| Error::Usage(e.to_string()))
}

fn trace(a: TraceArgs) -> Result<(), CliError> {
    let format = trace_format(a.format.as_deref(), a.out.as_deref())?;
    let cell = a.trial.cell("trace")?;
    if format == TraceFormat::Jsonl {
        return trace_jsonl(&a, &cell);
    }
    let t = cell.run(a.trial.seed, true)?;
    let meta = TraceMeta::from_metrics(
        &t.row.protocol,
        &t.row.scenario,
        &t.row.net,
        a.trial.seed,
        &t.report.metrics,
    );
    let meta = TraceMeta {
        services: cell.protocol.kind.services(),
        ..meta
    };
    // The store of a lease trial is one more lane, after the members.
    let lanes = a.trial.nodes + meta.services;
    let text = render_trace(&t.report.trace, lanes, &meta, format)?;
    match &a.out {
        Some(path) => {
            election_runner::files::write_atomic(path, text.as_bytes())?;
            out!("trace: {}", path.display());
        }
        None => out_nonl!("{text}"),
    }
    Ok(())
}

/// `trace --format jsonl`, written as the trial runs instead of buffered, so a trace of any
/// length takes no memory. The `meta` line comes first and carries the trial's outcome, so the
/// trial runs twice (it is deterministic): once for its metrics, once streaming its records.
/// The output is byte-identical to rendering the buffered trace.
fn trace_jsonl(a: &TraceArgs, cell: &election_runner::Cell) -> Result<(), CliError> {
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    let seed = a.trial.seed;
    let first = cell.run(seed, false)?;
    let meta = TraceMeta::from_metrics(
        &first.row.protocol,
        &first.row.scenario,
        &first.row.net,
        seed,
        &first.report.metrics,
    );
    let io_err = |what: &str, path: &std::path::Path, source| Error::Io {
        context: format!("{what} {}", path.display()),
        source,
    };
    // To a file: a temporary file in the same directory, renamed over the target at the end.
    let tmp = a.out.as_ref().map(|p| {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        p.with_file_name(format!(".{}.tmp", name.unwrap_or_default()))
    });
    let target: Box<dyn Write + Send> = match (&a.out, &tmp) {
        (Some(path), Some(tmp)) => {
            Box::new(std::fs::File::create(tmp).map_err(|e| io_err("cannot write", path, e))?)
        }
        _ => Box::new(std::io::stdout()),
    };
    // The writer and the first write error, shared with the sink.
    type Shared = Arc<
        Mutex<(
            std::io::BufWriter<Box<dyn Write + Send>>,
            std::io::Result<()>,
        )>,
    >;
    let out: Shared = Arc::new(Mutex::new((std::io::BufWriter::new(target), Ok(()))));
    let write = |out: &Shared, line: &str| {
        let mut g = out.lock().unwrap_or_else(|p| p.into_inner());
        if g.1.is_ok() {
            g.1 = g.0.write_all(line.as_bytes());
        }
    };
    write(&out, &election_report::jsonl_meta(a.trial.nodes, &meta));
    let sink = {
        let out = out.clone();
        election_sim::TraceSink::new(move |e| write(&out, &election_report::jsonl_event(e)))
    };
    let second = cell.run_streaming(seed, sink);
    let (mut w, status) = {
        let mut g = out.lock().unwrap_or_else(|p| p.into_inner());
        let w = std::mem::replace(&mut g.0, std::io::BufWriter::new(Box::new(std::io::sink())));
        (w, std::mem::replace(&mut g.1, Ok(())))
    };
    let written = status.and_then(|()| w.flush());
    let result = (|| -> Result<(), CliError> {
        let second = second?;
        if second.row != first.row {
            return Err(Error::Usage(
                "the trial did not repeat itself while streaming its trace (a determinism bug)"
                    .into(),
            )
            .into());
        }
        let path = a
            .out
            .as_deref()
            .unwrap_or(std::path::Path::new("standard output"));
        written.map_err(|e| io_err("cannot write", path, e))?;
        if let (Some(path), Some(tmp)) = (&a.out, &tmp) {
            drop(w);
            std::fs::rename(tmp, path).map_err(|e| io_err("cannot write", path, e))?;
            out!("trace: {}", path.display());
        }
        Ok(())
    })();
    if result.is_err() {
        if let Some(tmp) = &tmp {
            let _ = std::fs::remove_file(tmp);
        }
    }
    result
}

fn run(a: RunArgs) -> Result<(), CliError> {
    let cell = a.trial.cell("run")?;
    let t = cell.run(a.trial.seed, a.trace)?;
    if a.json {
        out!("{}", t.row.to_json(&[]));
    } else {
        print_trial(&t)?;
    }
    if a.trace {
        use election_sim::TraceKind;
        for e in &t.report.trace {
            let message = matches!(
                e.what,
                TraceKind::Send(_) | TraceKind::Deliver(_) | TraceKind::Drop(..)
            );
            if a.trace_messages || !message {
                out!("{}", election_report::text_event(e));
            }
        }
    }
    Ok(())
}

fn print_trial(t: &TrialRun) -> Result<(), CliError> {
    let r = &t.row;
    let m = &t.report.metrics;
    let opt = |x: Option<f64>| x.map(|v| format!("{} ms", fmt_ms(v))).unwrap_or("-".into());
    out!(
        "{} | {} nodes | {} | {} | seed {}",
        r.protocol,
        r.nodes,
        r.scenario,
        r.net,
        r.seed
    );
    // A scenario with a reference fault is measured from that fault, not the first.
    let measured = match t.sim.reference_fault {
        None => " (every time below is measured from it)",
        Some(_) => "",
    };
    match (t.drawn_fault_ms, t.fault_instant_ms) {
        (None, _) => out!("fault instant    none: times are measured from boot at 0 ms"),
        (Some(drawn), Some(f)) if f > drawn => out!(
            "fault instant    {} ms{measured}: drawn {} ms, \
             then {} ms waiting for a quorum leader",
            fmt_ms(f),
            fmt_ms(drawn),
            fmt_ms(f - drawn)
        ),
        (Some(_), Some(f)) => out!("fault instant    {} ms{measured}", fmt_ms(f)),
        (Some(drawn), None) => out!(
            "fault instant    NONE: drawn {} ms, but no fault fired; times are measured from {} ms",
            fmt_ms(drawn),
            fmt_ms(m.reference_ms)
        ),
    }
    if let (Some(k), Some(_)) = (t.sim.reference_fault, t.fault_instant_ms) {
        out!(
            "reference        {} ms: when the scenario's reference fault, faults[{k}], fired \
             (every time below is measured from it)",
            fmt_ms(m.reference_ms)
        );
    }
    if let Some(l) = t.leader_at_fault {
        out!("leader then      node {l}");
    }
    if r.faults_skipped > 0 {
        out!(
            "FAULTS SKIPPED   {} of the scenario's actions ({} faults, and any raft.lagging) did \
             not apply, the reasons in the fault log below: this trial did not undergo {} as \
             described, and its times do not measure it",
            r.faults_skipped,
            t.sim.faults.len(),
            r.scenario
        );
    }
    if r.budget_exceeded {
        out!(
            "BUDGET EXCEEDED  the trial used up its work budget of {} (events + messages) and was stopped at {} ms; raise work_budget to run it to the end",
            t.sim.budget,
            fmt_ms(m.end_ms)
        );
    }
    match (r.converged, r.leader) {
        (true, Some(l)) => out!("converged        yes: node {l} is the quorum leader"),
        _ if r.budget_exceeded => {
            out!("converged        NO: stopped by the work budget before the trial could end")
        }
        _ => out!("converged        NO: no quorum leader at the end of the trial"),
    }
    out!(
        "outcome          {}{}",
        r.outcome.name(),
        match (r.outcome, r.recovered_timeouts) {
            (election_sim::Outcome::RecoveredAfter, Some(k)) => {
                format!(" after {k} election timeout(s)")
            }
            (election_sim::Outcome::NoLeader, _) => {
                " (a quorum leader was possible and none was won: a liveness failure)".to_string()
            }
            (election_sim::Outcome::Livelock, _) => {
                " (quorum leadership still changing at the end: a liveness failure)".to_string()
            }
            (election_sim::Outcome::MinorityOnly, _) => {
                " (no member reaches a majority at the end: no quorum leader possible)".to_string()
            }
            _ => String::new(),
        }
    );
    out!("detect           {}", opt(r.detect_ms));
    out!(
        "failover         {}",
        match r.failover_ms {
            Some(0.0) => "0 ms: a quorum leader right after the fault".to_string(),
            Some(v) => format!("{} ms (the first quorum leader after the fault)", fmt_ms(v)),
            None => "-: no quorum leader after the fault".to_string(),
        }
    );
    out!(
        "elect            {} (the final quorum leader, followed by every member that reaches it)",
        opt(r.elect_ms)
    );
    out!(
        "unavailable      {} ms without a quorum leader",
        fmt_ms(r.unavailable_ms)
    );
    out!(
        "stranded         {} node-ms (members without a leader they reach); {} at the end",
        fmt_ms(r.stranded_node_ms),
        r.stranded_nodes
    );
    out!(
        "split brain      {} (most acting leaders at once: {}; {} ms with several; minority leader {} ms; paused leader {} ms)",
        if r.split_brain { "YES" } else { "no" },
        r.max_leaders,
        fmt_ms(r.split_brain_ms),
        fmt_ms(r.minority_leader_ms),
        fmt_ms(r.paused_leader_ms)
    );
    match (r.writes_ok, r.writes_stale, r.writes_fenced) {
        (Some(ok), Some(stale), Some(fenced)) => {
            let w = t.sim.workload;
            out!(
                "writes           {ok} ok, {stale} STALE (taken from a deposed leader), {fenced} fenced; \
                 stale window {} ms, no write taken for {} ms (every {} ms, fencing {}, commit at the {})",
                fmt_ms(r.stale_window_ms.unwrap_or(0.0)),
                fmt_ms(r.write_unavailable_ms.unwrap_or(0.0)),
                fmt_ms(w.interval.map_or(0.0, |d| d.as_secs_f64() * 1e3)),
                w.fencing.name(),
                w.commit.name()
            );
        }
        _ => out!("writes           - (no workload: workload.interval_ms = 0)"),
    }
    out!(
        "elections        {} started, {} leader changes, {} same-epoch leaders",
        r.elections_started,
        r.leader_changes,
        r.same_epoch_leaders
    );
    out!(
        "messages         election window: {} (election {}, reply {}, leader {}) + heartbeat {}",
        r.msgs_election,
        r.msgs_election_req,
        r.msgs_reply,
        r.msgs_leader,
        r.msgs_heartbeat
    );
    if r.msgs_workload > 0 {
        out!(
            "                 workload: {} messages (not election traffic)",
            r.msgs_workload
        );
    }
    out!(
        "                 whole trial: {} messages, {} bytes",
        r.msgs_total,
        r.bytes_total
    );
    out!(
        "trial ended at   {} ms ({} events)",
        fmt_ms(m.end_ms),
        t.report.events
    );
    if !m.fault_log.is_empty() {
        out!("faults:");
        for (at, applied) in &m.fault_log {
            let at = fmt_ms(at.as_millis_f64());
            match applied {
                election_sim::Applied::Skipped(why) => out!("  {at:>10} ms  SKIPPED: {why}"),
                other => out!("  {at:>10} ms  {}", election_report::text_fault(other)),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_format_follows_the_extension_unless_named() {
        use std::path::Path;
        let f = |fmt: Option<&str>, out: Option<&str>| trace_format(fmt, out.map(Path::new));
        assert_eq!(f(None, Some("x.mmd")).unwrap(), TraceFormat::Mermaid);
        assert_eq!(f(None, Some("x.MERMAID")).unwrap(), TraceFormat::Mermaid);
        assert_eq!(f(None, Some("x.jsonl")).unwrap(), TraceFormat::Jsonl);
        assert_eq!(f(None, Some("x.svg")).unwrap(), TraceFormat::Svg);
        assert_eq!(f(None, None).unwrap(), TraceFormat::Svg);
        assert_eq!(f(Some("svg"), Some("x.mmd")).unwrap(), TraceFormat::Svg);
        assert!(f(Some("png"), None).is_err());
    }

    #[test]
    fn the_reproducing_command_drops_execution_flags() {
        let args: Vec<String> = [
            "sweep",
            "--jobs",
            "2",
            "--protocols",
            "raft,bully",
            "--shard=1/2",
            "-j4",
            "--resume",
            "--force",
            "--out",
            "x y",
            "--set",
            "net.loss=0,0.1",
            "--name",
            "a b",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            reproduce_command(&args),
            "election-bench sweep --protocols raft,bully --set net.loss=0,0.1 --name 'a b'"
        );
    }
}
