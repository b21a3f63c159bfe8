//! Helpers shared by the runner's integration tests.

use election_core::NodeId;
use election_runner::{Cell, SweepSpec, TrialRun};
use election_sim::observer::WriteOutcome;
use election_sim::{Applied, TraceKind};

/// The one cell of a one-seed sweep of `protocol` at `n` nodes under `scenario`, with `tail`
/// appended to the sweep's TOML (custom scenarios, a `[params]` table).
pub fn cell(protocol: &str, n: u32, scenario: &str, tail: &str) -> Cell {
    let toml = format!(
        "protocols = [\"{protocol}\"]\nnodes = [{n}]\nscenarios = [\"{scenario}\"]\nseeds = 1\n{tail}"
    );
    let mut cells = SweepSpec::from_toml(&toml)
        .unwrap()
        .plan()
        .unwrap()
        .cells()
        .unwrap();
    cells.remove(0)
}

/// [`cell`] with `params` as the sweep's `[params]` table.
pub fn cell_with_params(protocol: &str, n: u32, scenario: &str, params: &str) -> Cell {
    cell(protocol, n, scenario, &format!("[params]\n{params}"))
}

/// Every write that took effect or was fenced: instant (ms), writer, token, outcome.
pub fn writes(run: &TrialRun) -> Vec<(f64, NodeId, Option<u64>, WriteOutcome)> {
    run.report
        .trace
        .iter()
        .filter_map(|e| match e.what {
            TraceKind::Write {
                writer,
                token,
                outcome,
            } => Some((e.at.as_millis_f64(), writer, token, outcome)),
            _ => None,
        })
        .collect()
}

/// When the paused leader resumed (ms).
pub fn resume_ms(run: &TrialRun) -> f64 {
    run.report
        .trace
        .iter()
        .find_map(|e| match e.what {
            TraceKind::Fault(Applied::Resume(_)) => Some(e.at.as_millis_f64()),
            _ => None,
        })
        .expect("the paused leader resumes")
}
