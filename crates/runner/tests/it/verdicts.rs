//! Verdicts that no observation window can flip (issue #43), and tick-driven libraries whose
//! members tick in phases of their own.
//!
//! * A cluster whose quorum leadership keeps forming and breaking is a `livelock` however long
//!   the settle window: the verdict is decided by the first quorum leadership that holds ten
//!   of the protocol's longest election timeouts past the last fault
//!   (`crates/sim/src/observer.rs`), never by `settle_ms`.
//! * Howard & Abraham's omission topology (`liveness-omission`): raft-rs without PreVote and
//!   CheckQuorum never settles there; with both it keeps its leader.
//! * raft-rs counts time in ticks of each member's own ticker: the tickers of a cluster booted
//!   at one instant start in phases of their own (`election_core::Ticker::start`).

use crate::common;

use std::collections::BTreeMap;

use common::{cell, cell_with_params};
use election_core::NodeId;
use election_sim::{Outcome, TraceKind};

/// The trial the issue found called `stable`: 4 nodes, plain Raft, a pattern of one-way cuts in
/// which node 4 keeps winning and losing its majority. It is a livelock, and stays one with a
/// five times longer settle window (the trial then ends at the same verdict).
#[test]
fn a_slow_livelock_is_a_livelock_at_any_settle_window() {
    for settle in ["600", "3000"] {
        let c = cell_with_params(
            "raft",
            4,
            "pattern-4d-4c1",
            &format!("\"workload.interval_ms\" = 0\nsettle_ms = {settle}"),
        );
        let m = c.run(0, false).unwrap().report.metrics;
        assert_eq!(m.outcome, Outcome::Livelock, "settle_ms = {settle}");
        assert!(m.leader_changes >= 5, "{}", m.leader_changes);
    }
}

/// `liveness-omission` at 5 nodes: raftrs as shipped (no PreVote, no CheckQuorum) livelocks in
/// every one of 20 seeds; with both options every seed keeps a working leader.
#[test]
fn raft_rs_livelocks_in_the_omission_topology_unless_it_has_pre_vote_and_check_quorum() {
    for (spec, want) in [
        ("raftrs", Outcome::Livelock),
        ("raftrs+pre_vote+check_quorum", Outcome::Stable),
    ] {
        let c = cell(spec, 5, "liveness-omission", "");
        for seed in 0..20 {
            let m = c.run(seed, false).unwrap().report.metrics;
            assert_eq!(m.outcome, want, "{spec} seed {seed}");
        }
    }
}

/// A `leader-crash` trial of raftrs at 10 ms ticks: every node's ticks fall in a phase of its
/// own within the 10 ms period (timer jitter and clock drift move each a little; the phases
/// spread over the period rather than sitting together as they did when every ticker started
/// at the boot instant).
#[test]
fn raft_rs_members_tick_in_phases_of_their_own() {
    let c = cell_with_params("raftrs", 5, "leader-crash", "\"raftrs.tick_ms\" = 10");
    let run = c.run(3, true).unwrap();
    // Each node's first tick after 500 ms, as a phase within the period.
    let mut phase: BTreeMap<NodeId, f64> = BTreeMap::new();
    for e in &run.report.trace {
        if let TraceKind::Timer { node, timer } = &e.what {
            let t = e.at.as_millis_f64();
            if timer.contains("Tick") && t >= 500.0 {
                phase.entry(*node).or_insert(t % 10.0);
            }
        }
    }
    assert_eq!(phase.len(), 5, "{phase:?}");
    let (lo, hi) = phase
        .values()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &p| (lo.min(p), hi.max(p)));
    assert!(
        hi - lo > 2.0,
        "the five phases sit within {} ms: {phase:?}",
        hi - lo
    );
}
