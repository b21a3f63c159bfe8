//! `verify`: a results directory's recorded trials, a sample of them run again and compared
//! with what is recorded.

use std::path::{Path, PathBuf};

use clap::{Args, Parser};
use election_runner::{Error, SweepPlan};

use crate::error::CliError;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// A results directory written by `sweep`, `explore` or `reference` (or `merge`).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Recorded trials to run again (a sweep's rows; an exploration's patterns, each with
    /// every seed); 0 runs none (a sweep's trials file is still checked against the SHA-256
    /// its manifest records).
    #[arg(long, default_value_t = 16)]
    pub sample: u64,
    /// Which trials: the sample drawn from this seed (the same every time).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// The sweep a finished sweep's (or the reference sweep's) manifest records, rebuilt from its
/// `command` the way that command builds it.
pub fn recorded_plan(dir: &Path, command: &str) -> Result<SweepPlan, CliError> {
    let mp = dir.join("manifest.json");
    let words = election_runner::replay::split_command(command)
        .filter(|w| w.first().is_some_and(|w| w == "election-bench"))
        .ok_or_else(|| {
            Error::Results(format!(
                "{}: command {command:?} is not an election-bench command line",
                mp.display()
            ))
        })?;
    let cli = crate::Cli::try_parse_from(&words).map_err(|e| {
        Error::Results(format!(
            "{}: command {command:?} does not parse: {}",
            mp.display(),
            e.render().to_string().lines().next().unwrap_or_default()
        ))
    })?;
    let spec = match cli.command {
        crate::Command::Sweep(a) => super::sweep::spec_of(&a)?,
        crate::Command::Reference(a) => super::reference::spec_of(&a).0,
        _ => {
            return Err(Error::Results(format!(
                "{}: command {command:?} is not a sweep's or the reference sweep's",
                mp.display()
            ))
            .into())
        }
    };
    Ok(spec.plan()?)
}

/// The `command` a results directory's `manifest.json` records (empty if it has none); a
/// directory without a manifest is bad input for `what` (exit 2).
pub fn recorded_command(dir: &Path, what: &str) -> Result<String, CliError> {
    let mp = dir.join("manifest.json");
    let text = match std::fs::read_to_string(&mp) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::Usage(format!(
                "{what}: {} is not a results directory (no manifest.json)",
                dir.display()
            ))
            .into())
        }
        Err(e) => {
            return Err(Error::Io {
                context: format!("cannot read {}", mp.display()),
                source: e,
            }
            .into())
        }
    };
    let m: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::Results(format!("{}: not valid JSON: {e}", mp.display())))?;
    Ok(m.get("command")
        .and_then(|c| c.as_str())
        .unwrap_or_default()
        .to_string())
}

/// `verify`: by the manifest's `command`, an exploration's `patterns.csv` or a sweep's
/// `trials.csv` (or `trials.csv.gz`), a sample of it run again.
pub fn run(a: VerifyArgs) -> Result<(), CliError> {
    let command = recorded_command(&a.dir, "verify")?;
    let command = command.as_str();
    let (what, checked) = if command == "explore" {
        let c = election_runner::verify::explore(&a.dir, a.sample, a.seed)?;
        ("patterns.csv", c)
    } else {
        let plan = recorded_plan(&a.dir, command)?;
        let c = election_runner::verify::sweep(&a.dir, &plan, a.sample, a.seed)?;
        let file = election_runner::files::trials_file(&a.dir);
        let name = file
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        (
            if name.ends_with(".gz") {
                "trials.csv.gz"
            } else {
                "trials.csv"
            },
            c,
        )
    };
    out!(
        "verified {}: {} of {} rows of {what} run again ({} trials, sample seed {}) equal their \
         recorded rows{}",
        a.dir.display(),
        checked.rows,
        checked.of,
        checked.trials,
        a.seed,
        if what == "patterns.csv" {
            ""
        } else {
            "; the file has the SHA-256 its manifest records"
        }
    );
    Ok(())
}
