//! `scenarios`: the catalog, one line each on what the scenario shows.

use std::path::PathBuf;

use clap::Args;
use election_runner::scenario::Part;
use election_runner::SweepSpec;

use crate::error::CliError;

#[derive(Args, Debug)]
pub struct ScenariosArgs {
    /// Also list the custom scenarios of this TOML config.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// `scenarios`: the catalog (with `--config`'s custom scenarios), the gray failures and the
/// steady-state scenarios.
pub fn run(a: ScenariosArgs) -> Result<(), CliError> {
    let mut spec = SweepSpec::from_config(a.config.as_deref())?;
    spec.scenarios = Some(vec!["all".into()]);
    let plan = spec.plan()?;
    let all = plan.scenarios.iter().chain(&plan.custom_scenarios);
    let part = |p| election_runner::scenario::Builtin::part(p);
    let width = all
        .clone()
        .map(|s| s.name().len())
        .chain(part(Part::Gray).map(|b| b.name.len()))
        .max()
        .unwrap_or(0);
    for s in all {
        out!("{:width$}  {}", s.name(), s.about());
    }
    out!("\nGray failures (not part of `all`; run by name; results/gray/manifest.json lists those its sweep runs):\n");
    for b in part(Part::Gray) {
        out!("{:width$}  {}", b.name, b.about);
    }
    out!("\nSteady state (not part of `all`; an hour per trial, run by `election-bench tune`):\n");
    for b in part(Part::Steady) {
        out!("{:width$}  {}", b.name, b.about);
    }
    Ok(())
}
