//! `sweep`: a grid of trials into results/<name>/, then its report.

use std::path::PathBuf;

use clap::Args;
use election_report::{ReportOptions, RunnerTracer};
use election_runner::replay::shell_quote;
use election_runner::{SweepOptions, SweepSpec};

use super::{check_jobs, out_dir, ShardArgs};
use crate::error::CliError;

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// TOML config describing the sweep (flags override it; a regular file of at most 1 MiB).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Sweep name; results go to results/<name>/ unless --out is given [default: default].
    #[arg(long)]
    pub name: Option<String>,
    /// Protocol specs (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub protocols: Option<Vec<String>>,
    /// Cluster sizes.
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub nodes: Option<Vec<u32>>,
    /// Scenario names, or `all`.
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub scenarios: Option<Vec<String>>,
    /// Network profiles.
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub nets: Option<Vec<String>>,
    /// Seeds per cell.
    #[arg(long)]
    pub seeds: Option<u64>,
    /// The first seed (cells run first_seed .. first_seed + seeds).
    #[arg(long)]
    pub first_seed: Option<u64>,
    /// Set a parameter, key=value, or vary it, key=v1,v2,... (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE[,VALUE...]")]
    pub set: Vec<String>,
    /// Worker threads [default: one per core].
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub shard: ShardArgs,
    /// What a sweep's shard runs: whole cells (round-robin), or every cell with one block of
    /// its seeds (for few cells and many seeds).
    #[arg(
        long,
        value_name = "cells|seeds",
        default_value = "cells",
        requires = "shard"
    )]
    pub shard_by: String,
    /// Continue an interrupted sweep in the output directory.
    #[arg(long, conflicts_with = "force")]
    pub resume: bool,
    /// With --resume: kept trials run again (drawn from a fixed seed) and compared with their
    /// rows before the sweep continues; 0 trusts the SHA-256 recorded as they were written.
    #[arg(long, value_name = "K", default_value_t = election_runner::sweep::RESUME_SAMPLE, requires = "resume")]
    pub verify_sample: u64,
    /// Overwrite the output directory's results (finished or interrupted) even when they
    /// come from a different configuration; without it such results are refused (exit 2).
    /// Results of the same configuration are always overwritten (or continued with --resume).
    #[arg(long)]
    pub force: bool,
    /// Output directory [default: results/<name>]; the report goes to reports/<its last
    /// component>, as `report --results DIR` puts it.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Do not render the report after the sweep.
    #[arg(long)]
    pub no_report: bool,
    /// No progress output.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// The sweep the arguments describe: the `--config` (or the defaults) with the flags over it.
pub fn spec_of(a: &SweepArgs) -> Result<SweepSpec, CliError> {
    let mut spec = SweepSpec::from_config(a.config.as_deref())?;
    if a.name.is_some() {
        spec.name = a.name.clone();
    }
    macro_rules! over {
        ($($f:ident),*) => { $( if a.$f.is_some() { spec.$f = a.$f.clone(); } )* };
    }
    over!(protocols, nodes, scenarios, nets, seeds, first_seed);
    spec.set_all(&a.set)?;
    Ok(spec)
}

/// `sweep`: the plan, its trials into the results directory, then the report unless
/// `--no-report` or a shard.
pub fn run(a: SweepArgs) -> Result<(), CliError> {
    let spec = spec_of(&a)?;
    // The manifest's command names the config by its absolute path, so the command and the
    // report's replay commands (which take the config's own parameters, `empirical:` files
    // included, from it) run from any directory.
    let config = match &a.config {
        Some(c) => Some(std::path::absolute(c).map_err(|e| {
            election_runner::Error::Usage(format!("--config {}: {e}", c.display()))
        })?),
        None => None,
    };
    let shard = a.shard.resolve()?;
    let shard_by: election_runner::ShardBy = a.shard_by.parse()?;
    check_jobs(a.jobs)?;
    let plan = spec.plan()?;
    for w in plan.warnings() {
        eprintln!("warning: {w}");
    }
    let results_dir = out_dir(
        a.out.as_deref(),
        PathBuf::from("results").join(&plan.name),
        shard,
    );
    let out = results_dir.clone();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = SweepOptions {
        out,
        jobs: a.jobs,
        shard,
        shard_by,
        resume: a.resume,
        verify_sample: a.verify_sample,
        force: a.force,
        progress: !a.quiet,
        command: reproduce_command(&args, config.as_deref()),
    };
    // The report renders while the sweep's trials.csv.gz is compressed. It goes where
    // `report --results DIR` puts it: reports/<the results directory's name> (reports/<name>
    // without --out), so results elsewhere never replace the committed reports/<name>.
    let report_dir = PathBuf::from("reports").join(
        results_dir
            .file_name()
            .map_or_else(|| PathBuf::from(&plan.name), PathBuf::from),
    );
    // A committed report (reports/default) is the page of its own committed results
    // (results/default), whose configuration the sweep checks.
    if !a.no_report && shard.is_none() {
        let own = super::dirs::committed_dir(&results_dir)
            .and_then(|r| r.strip_prefix("results/"))
            .is_some_and(|name| {
                super::dirs::committed_dir(&report_dir) == Some(&format!("reports/{name}")[..])
            });
        super::dirs::guard_committed(
            "sweep",
            &[&report_dir],
            own,
            a.force,
            "give --out DIR under another name, or --no-report",
        )?;
    }
    let (_, rendered, compressed) = election_runner::sweep::run_sweep_then(&plan, &opts, |o| {
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
        super::report::render(
            &results_dir,
            &report_dir,
            &ReportOptions::default(),
            &RunnerTracer::new(spec),
        )
    })?;
    // The report's error first (it may be bad input, exit 2); a compression error after it is
    // still said.
    match (rendered, compressed) {
        (Err(report), Err(gz)) => {
            eprintln!("error: {gz}");
            Err(report)
        }
        (rendered, compressed) => rendered.and(compressed.map_err(CliError::from)),
    }
}

/// The command line that reproduces a sweep: the arguments as given, without those that only
/// say how to carry it out (threads, shard, resume, re-run sample, output directory, report,
/// progress), and with `--config`'s file as `config` (its absolute path), so it runs from any
/// directory.
fn reproduce_command(args: &[String], config: Option<&std::path::Path>) -> String {
    const WITH_VALUE: [&str; 7] = [
        "--verify-sample",
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
    let mut config_next = false;
    let config = config.map(|c| shell_quote(&c.to_string_lossy()));
    for a in args {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if let (true, Some(c)) = (std::mem::take(&mut config_next), &config) {
            out.push(c.clone());
            continue;
        }
        if a == "--config" {
            config_next = true;
        } else if let (Some(_), Some(c)) = (a.strip_prefix("--config="), &config) {
            out.push(format!("--config={c}"));
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

#[cfg(test)]
mod tests {
    use super::*;

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
            reproduce_command(&args, None),
            "election-bench sweep --protocols raft,bully --set net.loss=0,0.1 --name 'a b'"
        );
    }

    #[test]
    fn the_reproducing_command_names_the_config_by_its_absolute_path() {
        let args =
            |words: &[&str]| -> Vec<String> { words.iter().map(|s| s.to_string()).collect() };
        let abs = std::path::Path::new("/home/me/my profiles/p.toml");
        assert_eq!(
            reproduce_command(
                &args(&["sweep", "--config", "p.toml", "--seeds", "2"]),
                Some(abs)
            ),
            "election-bench sweep --config '/home/me/my profiles/p.toml' --seeds 2"
        );
        assert_eq!(
            reproduce_command(&args(&["sweep", "--config=p.toml"]), Some(abs)),
            "election-bench sweep --config='/home/me/my profiles/p.toml'"
        );
    }
}
