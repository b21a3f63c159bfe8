//! `election-bench`: the command-line front door of the workbench.
//!
//! Subcommands: `scenarios` (the catalog), `params` (every parameter and network profile),
//! `run` (one trial), `sweep` (a grid of trials into `results/<name>/`, then the report into
//! `reports/<name>/`), `explore` (every link-failure pattern of small clusters), `tune` (the
//! timeout advisor), `profile` (a config from an etcd cluster's Prometheus scrapes), `merge`
//! (join the shards of a sweep, an exploration or a tuning), `report` (charts and REPORT.md from
//! a results directory), `compare` (what changed between two results directories, with
//! bootstrap intervals), `trace` (one trial as a message-sequence chart), `validate` (textbook
//! results), `verify` (re-run a sample of a results directory's trials), `live` and `calibrate` (real UDP on loopback), and `reality` (a real etcd cluster through the same faults). Exit codes:
//! 0 success, 2 bad input (unknown names, bad values, malformed TOML, bad flags, a results
//! directory that is missing or of another schema), 1 failures while running (files that
//! cannot be written), 130 a `reality` run stopped by Ctrl-C or SIGTERM (its members killed,
//! its finished trials written).
//!
//! This file is the command line and its dispatch; each subcommand's arguments and body live in
//! its module under [`cmd`].

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[macro_use]
mod out;
mod cmd;
mod error;

use cmd::help;
use error::{is_broken_pipe, CliError};

#[derive(Parser, Debug)]
#[command(
    name = "election-bench",
    version,
    about = "Compare leader-election protocols (bully, Chang-Roberts ring, Raft-style, lease-based) over one deterministic simulated network",
    after_help = "Examples:
  election-bench sweep                                    # the default sweep and its report
  election-bench run -p bully -n 5 -s leader-crash        # one trial, readable
  election-bench sweep --name loss --protocols bully+quorum,raft+pre_vote --nodes 5,9 \\
      --scenarios lossy-leader-crash --set fault_loss=0,0.05,0.1 --seeds 500
  election-bench trace -p raft -n 5 -s leader-crash --out reports/traces/raft.svg
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
    Scenarios(cmd::scenarios::ScenariosArgs),
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
    Run(cmd::run::RunArgs),
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
    Sweep(cmd::sweep::SweepArgs),
    /// Every link-failure pattern of small clusters on a settled cluster, every protocol, a
    /// liveness verdict per pattern (results/explore/).
    #[command(after_help = "Examples:
  election-bench explore                      # n = 3, 4, 5 -> results/explore/, reports/explore/
  election-bench explore --protocols raft,raft+pre_vote --nodes 3 --seeds 1 \\
      --out results/explore-3 --report-out reports/explore-3")]
    Explore(cmd::explore::ExploreArgs),
    /// The timeout advisor: search each protocol's timing for the best trade between p99
    /// failover and false elections under noise, and map it onto etcd, hashicorp/raft,
    /// Consul and client-go settings (reports/tune-<name>/).
    #[command(after_help = "Examples:
  election-bench tune                                   # raft, bully, ring, lease -> reports/tune-default/
  election-bench tune --name etcd --protocols raft+pre_vote+check_quorum --net dc \\
      --max-false-per-day 0.5 --max-p99-ms 3000
  election-bench tune --name quick --hours 1 --max-hours 8 --crash-trials 200 --rounds 1
  election-bench tune --name stalls --set noise.stall_per_hour=60 --set noise.stall_ms=lognormal:50:1")]
    Tune(cmd::tune::TuneArgs),
    /// Build a config (network and node profile, current timing, observed leader changes) for
    /// your etcd cluster from Prometheus scrapes, ready for run, sweep and tune --config.
    #[command(after_help = "Examples:
  cargo run --example synthetic-etcd-scrape -- examples/etcd/scrapes     # SYNTHETIC scrapes
  election-bench profile --from-prometheus examples/etcd/scrapes \\
      --heartbeat-interval 100 --election-timeout 1000 --name etcd-example
  election-bench tune --config profiles/etcd-example/profile.toml --name etcd-example

Every metric read and every assumption: crates/runner/src/profile.rs.")]
    Profile(cmd::profile::ProfileArgs),
    /// Join the shard directories of a sharded sweep into what one unsharded run writes.
    #[command(after_help = "Examples:
  election-bench sweep --shard 1/2 --out shards/1 --no-report
  election-bench sweep --shard 2/2 --out shards/2 --no-report
  election-bench merge --out results/mine shards/1 shards/2
  election-bench merge --out results/all shards               # every subdirectory of shards/
  find shards -name manifest.json -printf '%h\\n' > list.txt
  election-bench merge --out results/listed --list list.txt   # a thousand shards: not argv
  election-bench report --results results/mine

Every k/N of one sweep must be there (a missing, duplicated or unfinished shard is named and
nothing is written); the merged files equal the unsharded run's byte for byte.")]
    Merge(cmd::merge::MergeArgs),
    /// Render charts and REPORT.md from a sweep's results.
    #[command(after_help = "Example:
  election-bench report --results results/loss          # into reports/loss/")]
    Report(cmd::report::ReportArgs),
    /// What changed between two results directories (before A, after B), per common cell,
    /// with a bootstrap interval on each difference; significant changes first.
    #[command(long_about = cmd::compare::ABOUT)]
    Compare(cmd::compare::CompareArgs),
    /// Draw one trial as a message-sequence chart (SVG, Mermaid or JSON lines).
    #[command(after_help = "Examples:
  election-bench trace -p raft -n 5 -s leader-crash --seed 1 --out reports/traces/raft.svg
  election-bench trace -p bully -n 5 -s leader-crash --out reports/traces/bully.mmd   # Mermaid
  election-bench trace -p ring -n 5 -s leader-crash --format jsonl")]
    Trace(cmd::trace::TraceArgs),
    /// Run a scenario with the same protocol code over real UDP sockets (loopback by default).
    ///
    /// Every datagram carries an HMAC-SHA-256 tag under a key drawn per trial and a per-link
    /// sequence number: only the trial's own nodes can speak in it. Anything else (from
    /// another address, malformed, forged, replayed) is dropped and counted in the
    /// `datagrams_rejected` column of trials.csv and summary.csv.
    #[command(after_help = "Example:
  election-bench live -p bully -n 5 -s leader-crash --trials 5     # rows into a temporary directory
  election-bench live -p raft -n 5 -s leader-crash --out results/live")]
    Live(cmd::live::LiveCliArgs),
    /// Measure loopback, then compare simulated and live failover times (into a temporary
    /// directory; `--out reports/calibration --force` replaces the committed page).
    #[command(after_help = "Examples:
  election-bench calibrate --trials 10 --sim-trials 100
  election-bench calibrate --out reports/calibration --force   # replace the committed page

Each protocol's line gives the live/sim ratio of median failover and whether it is within
15 %, OUTSIDE 15 %, or that the live trials are too few to judge (the ratio's 95 % interval
crosses a 15 % bound). Exit 0 once the page is written, whatever the ratios: calibrate
measures, it does not check.")]
    Calibrate(cmd::calibrate::CalibrateCliArgs),
    /// Run a real etcd cluster on loopback through the simulator's faults (leader killed,
    /// paused, cut off) and write its measurements as `mode = real` rows beside the prediction's.
    #[command(long_about = cmd::reality::ABOUT, after_help = cmd::reality::AFTER_HELP)]
    Reality(cmd::reality::RealityCliArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to standard output.
    #[command(after_help = "Examples:
  mkdir -p ~/.local/share/bash-completion/completions
  election-bench completions bash > ~/.local/share/bash-completion/completions/election-bench
  mkdir -p ~/.zfunc ~/.config/fish/completions
  election-bench completions zsh > ~/.zfunc/_election-bench
  election-bench completions fish > ~/.config/fish/completions/election-bench.fish

Protocol specs (each family's base name and the specs of the family table), scenario names,
network profiles, trace formats and file paths complete.")]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Run the catalog of textbook results; three lines per case (verdict and name, the
    /// published figure, the measured one); exit 1 if any fails.
    Validate(cmd::validate::ValidateArgs),
    /// Our Raft against tikv's raft-rs and Omni-Paxos in the same simulator: the differential
    /// sweep into results/reference/ and its page reports/reference/REFERENCE.md; exit 1 if a
    /// difference is unexplained.
    #[command(after_help = "Examples:
  election-bench reference                 # the sweep (about a minute on 2 cores) and the page
  election-bench reference --no-run        # the page again from results/reference
  election-bench reference --seeds 20 --nodes 3 --results results/reference-quick \\
      --out reports/reference-quick          # a quick, coarser page beside the committed one")]
    Reference(cmd::reference::ReferenceArgs),
    /// Run a sample of a results directory's recorded trials again (sweep, reference, explore)
    /// and compare them byte for byte with their rows; exit 1 naming the first that differs.
    #[command(after_help = "Examples:
  election-bench verify results/default                 # 16 recorded trials run again
  election-bench verify results/explore --sample 64 --seed 3

Exit 0 when every re-run trial equals its recorded row; 1 naming the first that differs.")]
    Verify(cmd::verify::VerifyArgs),
}

/// The command line, with help that lists the valid values of `--protocol`, `--scenario`
/// (computed from the catalogs, so it cannot fall out of date) and `--format`.
fn cli_command() -> clap::Command {
    use clap::CommandFactory;
    let proto = help::protocol_help();
    let protos = format!("{proto} (comma-separated or repeated)");
    let one = help::scenario_help(false);
    let many = help::scenario_help(true);
    let net = help::net_help(false);
    let nets = help::net_help(true);
    // Any value parses (a spec with options, a --config's custom names); the candidates are
    // for shell completion, and the help text lists them itself.
    let values = |a: clap::Arg, c: help::Candidates| a.value_parser(c).hide_possible_values(true);
    let protocol =
        |a: clap::Arg, h: &String| values(a.help(h.clone()), help::protocol_candidates());
    let scenario = |a: clap::Arg, h: &String, list: bool| {
        values(a.help(h.clone()), help::scenario_candidates(list))
    };
    let network = |a: clap::Arg, h: &String| values(a.help(h.clone()), help::net_candidates());
    Cli::command()
        .mut_subcommand("run", |c| {
            c.mut_arg("protocol", |a| protocol(a, &proto))
                .mut_arg("scenario", |a| scenario(a, &one, false))
                .mut_arg("net", |a| network(a, &net))
        })
        .mut_subcommand("trace", |c| {
            c.mut_arg("protocol", |a| protocol(a, &proto))
                .mut_arg("scenario", |a| scenario(a, &one, false))
                .mut_arg("net", |a| network(a, &net))
        })
        .mut_subcommand("live", |c| {
            c.mut_arg("protocol", |a| protocol(a, &proto))
                .mut_arg("scenario", |a| scenario(a, &one, false))
                .mut_arg("net", |a| values(a, help::net_candidates()))
        })
        .mut_subcommand("calibrate", |c| {
            c.mut_arg("protocol", |a| protocol(a, &proto))
        })
        .mut_subcommand("explore", |c| {
            c.mut_arg("protocols", |a| {
                let h = format!(
                    "Protocol specs [default: {}]",
                    election_runner::explore::DEFAULT_PROTOCOLS.join(", ")
                );
                values(a.help(h), help::protocol_candidates())
            })
        })
        .mut_subcommand("tune", |c| {
            c.mut_arg("protocols", |a| values(a, help::protocol_candidates()))
                .mut_arg("net", |a| values(a, help::net_candidates()))
        })
        .mut_subcommand("validate", |c| c.after_help(help::validate_help()))
        .mut_subcommand("sweep", |c| {
            c.mut_arg("protocols", |a| protocol(a, &protos))
                .mut_arg("scenarios", |a| scenario(a, &many, true))
                .mut_arg("nets", |a| network(a, &nets))
        })
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

/// clap_complete's bash script names the state of a subcommand of a hyphenated binary two
/// ways: the loop that reads the words arrives at `election__bench__subcmd__run`, the case arms
/// are labelled `election__subcmd__bench__subcmd__run`, so no subcommand's options or values
/// ever completed (clap-rs/clap#6421, open for clap_complete 4.6). The arms take the loop's
/// spelling.
fn bash_subcommand_arms(script: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(script)
        .replace("election__subcmd__bench", "election__bench")
        .into_bytes()
}

fn dispatch(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Scenarios(a) => cmd::scenarios::run(a),
        Command::Params => cmd::params::run(),
        Command::Run(a) => cmd::run::run(a),
        Command::Sweep(a) => cmd::sweep::run(a),
        Command::Explore(a) => cmd::explore::run(a),
        Command::Tune(a) => cmd::tune::run(a),
        Command::Profile(a) => cmd::profile::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Trace(a) => cmd::trace::run(a),
        Command::Live(a) => cmd::live::run(a),
        Command::Calibrate(a) => cmd::calibrate::run(a),
        Command::Reality(a) => cmd::reality::run(a),
        Command::Validate(a) => cmd::validate::run(a),
        Command::Reference(a) => cmd::reference::run(a),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cli_command(), "election-bench", &mut script);
            if shell == clap_complete::Shell::Bash {
                script = bash_subcommand_arms(&script);
            }
            use std::io::Write as _;
            std::io::stdout()
                .write_all(&script)
                .map_err(CliError::Stdout)
        }
        Command::Merge(a) => cmd::merge::run(a),
        Command::Verify(a) => cmd::verify::run(a),
    }
}
