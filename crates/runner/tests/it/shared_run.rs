//! Sharing the run before the first fault (`Cell::run_all`, `Sim::run_all`) is an optimisation
//! only: every trial it runs must be exactly the trial `Cell::run` runs on its own — the same
//! row, the same metrics, the same final statuses, the same end and the same number of events.
//! Checked over every built-in scenario, for each family (the production library's nodes
//! cannot be cloned, so raft-rs takes the path that runs each trial alone), with node time on
//! and off, with background noise and with a scenario-dependent protocol option.

use election_runner::{Cell, SweepSpec};

/// Every cell of a sweep of `protocols` at `nodes` over every built-in scenario but
/// `steady-noise` (an hour of steady state with no fault: nothing to share, and the slowest
/// trial by far).
fn cells(protocols: &[&str], nodes: &[u32], params: &str) -> Vec<Cell> {
    let scenarios: Vec<String> = election_runner::scenario::CATALOG
        .iter()
        .filter(|b| b.name != "steady-noise")
        .map(|b| format!("\"{}\"", b.name))
        .collect();
    let toml = format!(
        "protocols = [{}]\nnodes = [{}]\nscenarios = [{}]\nseeds = 1\n[params]\n{params}",
        protocols
            .iter()
            .map(|p| format!("\"{p}\""))
            .collect::<Vec<_>>()
            .join(", "),
        nodes
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        scenarios.join(", ")
    );
    SweepSpec::from_toml(&toml)
        .unwrap()
        .plan()
        .unwrap()
        .cells()
        .unwrap()
}

/// Runs `cells` (every scenario of some protocols and sizes) both ways for `seeds` and
/// compares; returns how many trials were compared.
fn same_both_ways(cells: &[Cell], seeds: std::ops::Range<u64>) -> usize {
    let runnable: Vec<&Cell> = cells.iter().filter(|c| c.skipped.is_none()).collect();
    let mut compared = 0;
    for seed in seeds {
        // One call for every cell at once: run_all groups them itself.
        let together = Cell::run_all(&runnable, seed);
        assert_eq!(together.len(), runnable.len());
        for (cell, shared) in runnable.iter().zip(together) {
            let what = format!("{} seed {seed}", cell.describe(&[]));
            let alone = cell
                .run(seed, false)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let shared = shared.unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(shared.row, alone.row, "{what}: the rows differ");
            assert_eq!(
                shared.report.metrics, alone.report.metrics,
                "{what}: the metrics differ"
            );
            assert_eq!(
                shared.report.final_status, alone.report.final_status,
                "{what}"
            );
            assert_eq!(shared.report.end, alone.report.end, "{what}");
            assert_eq!(shared.report.events, alone.report.events, "{what}");
            assert_eq!(shared.sim, alone.sim, "{what}");
            compared += 1;
        }
    }
    compared
}

#[test]
fn every_scenario_runs_the_same_trial_whether_its_start_is_shared_or_not() {
    let cells = cells(
        &[
            "bully",
            "bully+quorum",
            "ring",
            "raft+pre_vote+check_quorum",
            "raft+voters=3",
            "lease",
            "lease+store_nodes=3",
        ],
        &[3, 5],
        "",
    );
    assert!(same_both_ways(&cells, 0..2) > 300);
}

#[test]
fn ideal_nodes_noise_and_a_production_library_run_the_same_trials_too() {
    // Ideal nodes (no node time), and busy noise (pauses and spikes from time zero: the
    // shared run carries a noise schedule under way).
    assert!(
        same_both_ways(
            &cells(&["raft", "bully+epoch"], &[5], "node.profile = \"ideal\""),
            3..5
        ) > 40
    );
    assert!(
        same_both_ways(
            &cells(&["raft+pre_vote", "ring"], &[5], "noise.profile = \"busy\""),
            5..7
        ) > 40
    );
    // raft-rs cannot be cloned: each trial runs alone, through the same call.
    assert!(same_both_ways(&cells(&["raftrs"], &[3], ""), 0..1) > 10);
}
