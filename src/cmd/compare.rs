//! `compare`: what changed between two results directories, with bootstrap intervals.

use std::path::PathBuf;

use clap::Args;
use election_report::CompareOptions;
use election_runner::Error;

use crate::error::CliError;

pub const ABOUT: &str = "What changed between two results directories (A before, B after a protocol change or a tuning), per cell that both contain.

A cell is (protocol, nodes, scenario, net, varied parameters); both directories must vary the same parameters. Per common cell, over the measured trials of trials.csv: failover_ms_p50 (not in cold-start), elect_ms_p50 (cold-start only), msgs_election_mean, unavailable_ms_mean, split_brain_rate, converged_rate and writes_stale_mean (with a workload); medians for durations, means for counts and rates. Each difference B - A gets a seeded two-sample percentile bootstrap interval; it is significant when the interval excludes 0 and |B - A| is at least --min-change percent of A. The same two directories always give byte-identical output.

A real run (`election-bench reality` DIR, mode = real) against a simulated sweep is matched by (protocol spec, nodes, scenario): the real rows' protocol is the system spec they are compared with (etcd@3.4, etcd@3.4+pre_vote), their net (loopback) is left out of the match, and messages are not compared (etcd's are not counted). E.g. `election-bench sweep --name etcd-prediction --protocols etcd@3.4 --nodes 3,5 --scenarios leader-crash,leader-pause,partition-leader-minority --nets ideal --seeds 1000` then `compare results/etcd-prediction results/reality`.

--ignore COLUMN matches cells without a column that names the change itself (net for lan against lan+net.loss=0.05, protocol for raft against raft+pre_vote).

Prints the significant changes, largest relative change first, and writes COMPARE.md (every comparison), compare.csv and charts/changes.svg/.png into --out. No common cells, a missing directory or another schema: exit 2.";

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Results directory A (before).
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// Results directory B (after).
    #[arg(value_name = "B")]
    pub b: PathBuf,
    /// Where COMPARE.md, compare.csv and charts/ go [default: reports/compare-<A's name>-vs-<B's name>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Overwrite an output directory that holds something else (another comparison, other
    /// files); the same comparison is always overwritten.
    #[arg(long)]
    pub force: bool,
    /// Smallest change that counts, in percent of A's value.
    #[arg(long, default_value_t = 5.0, value_name = "PERCENT")]
    pub min_change: f64,
    /// Confidence level of the bootstrap interval.
    #[arg(long, default_value_t = 0.95)]
    pub level: f64,
    /// Bootstrap resamples per cell and metric.
    #[arg(long, default_value_t = 2000)]
    pub resamples: u32,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 19)]
    pub seed: u64,
    /// Significant changes printed (all are in COMPARE.md).
    #[arg(long, default_value_t = 40)]
    pub rows: usize,
    /// Match cells without this column (protocol, nodes, scenario, net or a varied parameter),
    /// the one that names the change: e.g. `--ignore net` for lan against
    /// lan+net.loss=0.05, `--ignore protocol` for raft against raft+pre_vote.
    #[arg(long, value_delimiter = ',', value_name = "COLUMN")]
    pub ignore: Vec<String>,
}

/// `compare`: print the significant changes, write COMPARE.md, compare.csv and the chart.
pub fn run(a: CompareArgs) -> Result<(), CliError> {
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
    super::report::verify_results(&a.a)?;
    super::report::verify_results(&a.b)?;
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
