//! `explore`: every link-failure pattern of small clusters, a liveness verdict per pattern.

use std::path::PathBuf;

use clap::Args;

use super::dirs::guard_committed;
use super::{check_jobs, out_dir, WorkArgs};
use crate::error::CliError;

#[derive(Args, Debug)]
pub struct ExploreArgs {
    /// Protocol specs [default: the list in DEFAULT_PROTOCOLS, filled in by `cli_command`].
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub protocols: Option<Vec<String>>,
    /// Cluster sizes, 2 to 8: every symmetric pattern up to 5 (2^(n(n-1)/2)), every directed
    /// one up to 4, at 5 the directed classes up to isomorphism with the leader marked (Raft,
    /// raft-rs) or --sample patterns (the bully, the ring, Omni-Paxos, per-node timing: ids
    /// matter to them); from 6 the symmetric classes (544 at 6, 5096 at 7) or --sample
    /// patterns. The lease is explored on its store links instead.
    #[arg(long, value_delimiter = ',', num_args = 1.., default_value = "3,4,5")]
    pub nodes: Vec<u32>,
    /// Seeds per pattern (0, 1, ...).
    #[arg(long, default_value_t = 3)]
    pub seeds: u64,
    /// Patterns drawn where a family is sampled: the directed 5-node patterns and the symmetric
    /// ones from 6 nodes for protocols whose behaviour depends on ids, and the directed store
    /// patterns from 6 nodes.
    #[arg(long, default_value_t = 4096)]
    pub sample: u64,
    /// Output directory [default: results/explore; a shard: results/explore-shards/<k>-of-<N>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Keep the finished chunks of an interrupted run.
    #[arg(long)]
    pub resume: bool,
    /// With --resume: kept patterns run again (drawn from a fixed seed) and compared with their
    /// rows before they are used; 0 trusts the SHA-256 recorded beside each chunk.
    #[arg(long, value_name = "K", default_value_t = election_runner::sweep::RESUME_SAMPLE, requires = "resume")]
    pub verify_sample: u64,
    #[command(flatten)]
    pub work: WorkArgs,
    /// Set a parameter: key=value (repeatable; see `election-bench params`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Where the report (REPORT.md, graphs of the smallest failing patterns) goes.
    #[arg(long, default_value = "reports/explore")]
    pub report_out: PathBuf,
    /// Do not render the report.
    #[arg(long)]
    pub no_report: bool,
    /// Write into the committed results/explore and reports/explore with options other than
    /// the defaults (without it, such a run needs --out and --report-out elsewhere).
    #[arg(long)]
    pub force: bool,
}

/// `explore`: the patterns of the chosen protocols and sizes (or one shard of them), the summary
/// table, and the page unless `--no-report` or a shard.
pub fn run(a: ExploreArgs) -> Result<(), CliError> {
    use election_runner::explore;
    check_jobs(a.work.jobs)?;
    let protocols = a.protocols.clone().unwrap_or_else(|| {
        explore::DEFAULT_PROTOCOLS
            .iter()
            .map(|s| s.to_string())
            .collect()
    });
    let shard = a.work.shard.resolve()?;
    let out = out_dir(a.out.as_deref(), PathBuf::from("results/explore"), shard);
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
        verify_sample: a.verify_sample,
        progress: !a.work.quiet,
        jobs: a.work.jobs,
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
    print_summary(&o.summary)?;
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
pub fn print_summary(summary: &[Vec<String>]) -> Result<(), CliError> {
    out!(
        "{:<28} {:>5} {:<14} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8} {:>9}",
        "protocol",
        "nodes",
        "family",
        "patterns",
        "majority",
        "stable",
        "recovered",
        "no-leader",
        "livelock",
        "covers"
    );
    for r in summary {
        out!(
            "{:<28} {:>5} {:<14} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8} {:>9}",
            r[0],
            r[1],
            r[2],
            r[4],
            r[5],
            r[7],
            r[8],
            r[9],
            r[10],
            r[13]
        );
    }
    Ok(())
}
