//! `reference`: the differential sweep of our Raft against the production libraries
//! (`results/reference/`) and its page (`reports/reference/`).

use std::path::PathBuf;

use clap::Args;
use election_runner::reference;
use election_runner::SweepOptions;

use super::{check_jobs, dirs};
use crate::error::CliError;

#[derive(Args, Debug)]
pub struct ReferenceArgs {
    /// Only render the page from the results already in --results (no trials).
    #[arg(long)]
    pub no_run: bool,
    /// Results directory [default: results/reference].
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// Page directory [default: reports/reference].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seeds per cell [default: the reference sweep's, 100]; fewer give a quick, coarser page
    /// whose tests can flag differences the full run explains (exit 1 like any unexplained
    /// one); with --results and --out elsewhere, or --force, since the committed pages use the
    /// default.
    #[arg(long)]
    pub seeds: Option<u64>,
    /// Cluster sizes [default: 3, 5, 7].
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub nodes: Option<Vec<u32>>,
    /// Worker threads [default: one per core].
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// No progress output.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Write into the committed results/reference and reports/reference with options other
    /// than the defaults (without it, such a run needs --results and --out elsewhere).
    #[arg(long)]
    pub force: bool,
}

/// The reference sweep the arguments describe, and the command that reproduces it.
pub fn spec_of(a: &ReferenceArgs) -> (election_runner::SweepSpec, String) {
    let mut spec = reference::sweep_spec();
    let mut command = "election-bench reference".to_string();
    if let Some(k) = a.seeds {
        spec.seeds = Some(k);
        command.push_str(&format!(" --seeds {k}"));
    }
    if let Some(n) = &a.nodes {
        spec.nodes = Some(n.clone());
        let sizes: Vec<String> = n.iter().map(u32::to_string).collect();
        command.push_str(&format!(" --nodes {}", sizes.join(",")));
    }
    (spec, command)
}

/// `reference`: the sweep (unless `--no-run`), then the page; exit 1 when a difference is
/// unexplained.
pub fn run(a: ReferenceArgs) -> Result<(), CliError> {
    check_jobs(a.jobs)?;
    let results = a
        .results
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(reference::NAME));
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(reference::NAME));
    // The committed results/reference and reports/reference are the run with every default;
    // fewer seeds or other sizes (or a page from other results) would replace them.
    let default_run = a.seeds.is_none()
        && a.nodes.is_none()
        && dirs::committed_dir(&results) == Some("results/reference");
    let written: Vec<&std::path::Path> = if a.no_run {
        vec![&out]
    } else {
        vec![&results, &out]
    };
    dirs::guard_committed(
        "reference",
        &written,
        default_run,
        a.force,
        "give --results DIR and --out DIR (e.g. results/reference-quick, reports/reference-quick)",
    )?;
    if !a.no_run {
        let (spec, command) = spec_of(&a);
        let plan = spec.plan()?;
        let opts = SweepOptions {
            out: results.clone(),
            jobs: a.jobs,
            shard: None,
            shard_by: election_runner::ShardBy::Cells,
            resume: false,
            verify_sample: election_runner::sweep::RESUME_SAMPLE,
            // The reference sweep's configuration is the code's: results of an older one are
            // replaced, never kept.
            force: true,
            progress: !a.quiet,
            command,
        };
        let o = election_runner::run_sweep(&plan, &opts)?;
        if !a.quiet {
            out!(
                "reference sweep: {} cells ({} skipped), {} trials -> {}",
                o.cells,
                o.skipped,
                o.trials,
                o.out.display()
            );
        }
    }
    let (analysis, files) = election_report::reference::write(&results, &out)?;
    for p in analysis.pairings.iter() {
        out!(
            "{} vs {}: {} tests, {} differences as shipped, {}, {} unexplained",
            p.pairing.model,
            p.pairing.library,
            p.tests(),
            p.shipped(),
            p.matched()
                .map_or("no matched rule set".to_string(), |m| format!(
                    "{m} with the rules matched"
                )),
            p.unexplained()
        );
    }
    out!("page: {}", files[0].display());
    match analysis.unexplained() {
        0 => Ok(()),
        n => Err(CliError::Reference(n, files[0].clone())),
    }
}
