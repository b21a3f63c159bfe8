//! `report`: charts and REPORT.md from a sweep's results (or an exploration's page), and the
//! checks every reader of a results directory makes first.

use std::path::PathBuf;

use clap::Args;
use election_report::{render_report, ReportOptions, RunnerTracer};
use election_runner::Error;

use crate::error::CliError;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The results directory of a sweep (or of an exploration: its page; or of a real run,
    /// `election-bench reality`: the reality page, the run beside the prediction it computes).
    #[arg(long, default_value = "results/default")]
    pub results: PathBuf,
    /// Where REPORT.md, charts/ and traces/ go [default: reports/<name of the results directory>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Cluster size of the per-scenario charts, the failover CDF and the traces; one of the
    /// sweep's sizes [default: 5, or the sweep's size nearest to it].
    #[arg(long)]
    pub focus_nodes: Option<u32>,
    /// A sweep's results directory to compare against, criterion-style: REPORT.md and
    /// index.html open with what changed from it in every common cell, each change with its
    /// bootstrap interval (as `compare BASELINE RESULTS` computes it).
    #[arg(long, value_name = "DIR")]
    pub baseline: Option<PathBuf>,
    /// Write into a committed report directory (reports/default, reports/gray, ...) from other
    /// results or with other options than its committed page.
    #[arg(long)]
    pub force: bool,
}

/// `report`: the exploration's page, or the sweep's report once its results are checked.
pub fn run(a: ReportArgs) -> Result<(), CliError> {
    let out = a.out.clone().unwrap_or_else(|| {
        let name = a.results.file_name().map(PathBuf::from);
        PathBuf::from("reports").join(name.unwrap_or_else(|| "default".into()))
    });
    // A committed report is its committed results' page with the default options
    // (reports/gray from results/gray); anything else into it is refused without --force.
    let own_results = super::dirs::committed_dir(&out)
        .and_then(|c| c.strip_prefix("reports/"))
        .is_some_and(|name| {
            super::dirs::committed_dir(&a.results) == Some(&format!("results/{name}")[..])
        });
    super::dirs::guard_committed(
        "report",
        &[&out],
        own_results && a.focus_nodes.is_none() && a.baseline.is_none(),
        a.force,
        "give --out DIR (e.g. reports/mine)",
    )?;
    // A real run (`reality`) has its own page: the run beside the prediction it computes.
    if real_results(&a.results) {
        if a.baseline.is_some() || a.focus_nodes.is_some() {
            return Err(Error::Usage(format!(
                "{} holds a real run, whose page computes its own prediction: drop --baseline and --focus-nodes (compare PREDICTION {} compares it with a sweep)",
                a.results.display(),
                a.results.display()
            ))
            .into());
        }
        let analysis = election_report::reality::analyse(&a.results, &Default::default())?;
        let files = election_report::reality::write(&analysis, &out)?;
        let off = analysis.outside_bands().len();
        out!(
            "report: {} ({} experiments, {off} outside the bands; {} files)",
            out.join("README.md").display(),
            analysis.experiments.len(),
            files.len()
        );
        return Ok(());
    }
    // An exploration's results (explore, or the merge of its shards) have their own page.
    if explore_results(&a.results) {
        if let Some(b) = &a.baseline {
            return Err(Error::Usage(format!(
                "--baseline {}: {} holds an exploration, whose page has no comparison; compare two sweeps",
                b.display(),
                a.results.display()
            ))
            .into());
        }
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
    if let Some(b) = &a.baseline {
        verify_results(b)?;
        opts.baseline = Some(b.clone());
    }
    let tracer = RunnerTracer::from_manifest(&a.results)?;
    render(&a.results, &out, &opts, &tracer)
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

/// Does `dir` hold a real run's results (`election-bench reality`: `config.mode = "real"`)?
pub fn real_results(dir: &std::path::Path) -> bool {
    std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|m| m["config"]["mode"] == "real")
}

/// Does `dir` hold an exploration's results (its manifest's command is `explore`)?
fn explore_results(dir: &std::path::Path) -> bool {
    std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|m| m["command"] == "explore" && m.get("shard").is_none())
}

/// A finished results directory is checked before `report` or `compare` reads it: its
/// `trials.csv` is the file the manifest records (bytes and SHA-256), every row holds, and
/// `summary.csv` is exactly what the trials give — an edited file is never published. A
/// directory without a manifest is left to the reader's own error (it names what is missing).
///
/// A real run (`election-bench reality`, `config.mode = "real"`) records no hash: its rows are
/// checked against its logs by `reality --replay DIR`, and its summary by the reader's checks.
pub fn verify_results(dir: &std::path::Path) -> Result<(), CliError> {
    if dir.join("manifest.json").is_file() && !real_results(dir) {
        election_runner::sweep::verify_finished(dir)?;
    }
    Ok(())
}

/// Render the report and tell the user where it is and what to look at.
pub fn render(
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
