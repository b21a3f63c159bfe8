//! Helpers shared by the runner's integration tests.
#![allow(dead_code)]

use election_runner::{Cell, SweepSpec};

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
