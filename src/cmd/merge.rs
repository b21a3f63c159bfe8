//! `merge`: the shards of a sweep, an exploration or a tuning joined into what one unsharded
//! run writes.

use std::path::PathBuf;

use clap::Args;
use election_runner::Error;

use crate::error::CliError;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Directory receiving the merged results.
    #[arg(long)]
    pub out: PathBuf,
    /// The shard directories (every k/N of one sweep), or a directory holding them (each
    /// subdirectory a shard, as `sweep --shard` writes without --out).
    #[arg(value_name = "SHARD_DIR", required_unless_present = "list")]
    pub shards: Vec<PathBuf>,
    /// Overwrite results already in --out (never one of the shards).
    #[arg(long)]
    pub force: bool,
    /// A file naming the shard directories, one a line (`-`: standard input), for more shards
    /// than a command line holds (at most 4 MiB); relative paths are relative to the working
    /// directory.
    #[arg(long, value_name = "FILE")]
    pub list: Option<PathBuf>,
    /// No progress on stderr (an exploration's merge checks every chunk).
    #[arg(long)]
    pub quiet: bool,
    /// Merged trials (a sweep's rows; an exploration's patterns, each with every seed; a
    /// tuning's evaluated points, each with every seed it ran) run again, drawn from a fixed
    /// seed, and compared with what the shards recorded, as `verify` does; 0 skips it (the
    /// recorded SHA-256s are still checked).
    #[arg(long, value_name = "K", default_value_t = election_runner::sweep::RESUME_SAMPLE)]
    pub verify_sample: u64,
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
        // The one bounded reader: a regular file (or standard input) of at most 4 MiB.
        use election_runner::input::{self, Kind};
        let text = if list == std::path::Path::new("-") {
            input::read_stream(std::io::stdin().lock(), list, Kind::List)
        } else {
            input::read_text(list, Kind::List)
        }
        .map_err(|e| Error::Usage(format!("--list {e}")))?;
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

/// A sample of the merged trials run again (`--verify-sample`): the shards' rows must be what
/// their configuration gives, not only hash as recorded.
fn verify_merged(a: &MergeArgs, explore: bool) -> Result<(), CliError> {
    use election_runner::{sweep::RESUME_SAMPLE_SEED, verify};
    if a.verify_sample == 0 {
        return Ok(());
    }
    let refused = |e: Error| {
        Error::Results(format!(
            "{e}\n(the merged results in {} are not to be trusted: a shard holds rows its \
             configuration does not give)",
            a.out.display()
        ))
    };
    if explore {
        verify::explore(&a.out, a.verify_sample, RESUME_SAMPLE_SEED).map_err(refused)?;
    } else {
        let command = super::verify::recorded_command(&a.out, "merge")?;
        let plan = super::verify::recorded_plan(&a.out, &command)?;
        verify::sweep(&a.out, &plan, a.verify_sample, RESUME_SAMPLE_SEED).map_err(refused)?;
    }
    Ok(())
}

/// `merge`: the shards of a sweep, an exploration or a tuning, by what the first one is.
pub fn run(a: MergeArgs) -> Result<(), CliError> {
    use election_runner::shard::Kind;
    let shards = merge_inputs(&a)?;
    match election_runner::shard::kind(&shards[0])? {
        Kind::Sweep => {
            let m = election_runner::merge(&a.out, &shards, a.force)?;
            verify_merged(&a, false)?;
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
            verify_merged(&a, true)?;
            super::explore::print_summary(&o.summary)?;
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
            // Before anything is written: the advice is computed from the shards' points.
            election_runner::tune::verify(
                &outcome,
                a.verify_sample,
                election_runner::sweep::RESUME_SAMPLE_SEED,
            )
            .map_err(|e| {
                Error::Results(format!(
                    "{e}\n(merge refused: the tune shards hold points their options do not give)"
                ))
            })?;
            outcome.write()?;
            super::tune::print_outcome(&outcome, None)?;
        }
    }
    Ok(())
}
