//! The abstract log under failures: the election restriction (§5.4.1) with lagging replicas
//! (`RaftConfig::lagging`) and the no-op entry every leader appends (Raft §8, thesis §6.4).

use crate::common;

use std::time::Duration;

use common::{assert_safe, run};
use election_core::NodeId;
use election_raft::RaftConfig;
use election_sim::{Fault, FaultAction, Selector, SimConfig};

fn sim(seed: u64) -> SimConfig {
    let mut s = SimConfig::new(5, seed);
    s.horizon = Duration::from_secs(8);
    s.settle = Duration::from_secs(1);
    // Crash the leader, bring it back, crash the (new) leader again.
    s.faults = vec![
        Fault::at_ms(1000.5, FaultAction::Crash(Selector::Leader)),
        Fault::at_ms(1800.5, FaultAction::Recover(Selector::LastCrashed)),
        Fault::at_ms(2600.5, FaultAction::Crash(Selector::Leader)),
    ];
    s
}

fn lagging(nodes: &[u32]) -> RaftConfig {
    let mut c = RaftConfig::new(5);
    c.lagging = nodes.iter().map(|&id| (NodeId(id), 1)).collect();
    c
}

/// §5.4.1: a candidate wins only with votes from a majority, and a voter refuses a candidate
/// whose log is less up-to-date. Nodes 1 and 2 lag: they never hold the current leader's
/// no-op, so once a first leader has been elected the up-to-date nodes (the other three,
/// counting a crashed leader, which still holds it) are a majority, every majority contains
/// one, and neither lagging node ever leads again — though without the lag they win
/// elections in these same seeds.
#[test]
fn a_lagging_node_never_leads_while_up_to_date_voters_are_a_majority() {
    let mut lagging_would_have_won = 0;
    for seed in 0..12 {
        let what = format!("seed={seed}");
        let (report, log) = run(sim(seed), lagging(&[1, 2]));
        assert_safe(&report, &log, &what);
        assert!(report.metrics.converged, "{what}");
        let terms = log.leaders_by_term();
        let mut later = terms.iter().skip(1);
        assert!(later.len() >= 2, "{what}: both crashes lead to elections");
        assert!(
            later.all(|(_, l)| l.iter().all(|n| n.0 > 2)),
            "{what}: {terms:?}"
        );

        let (_, plain) = run(sim(seed), lagging(&[]));
        lagging_would_have_won += plain
            .leaders_by_term()
            .iter()
            .skip(1)
            .filter(|(_, l)| l.iter().any(|n| n.0 <= 2))
            .count();
    }
    assert!(lagging_would_have_won > 0, "the lag must make a difference");
}

/// With a majority lagging (nodes 1, 2, 3), a crashed leader's no-op was on a minority only,
/// so it was not committed and a lagging node may win (with votes of nodes no more up to
/// date than itself); elections still complete every time.
#[test]
fn elections_complete_when_a_majority_lags() {
    for seed in 0..12 {
        let what = format!("seed={seed}");
        let (report, log) = run(sim(seed), lagging(&[1, 2, 3]));
        assert_safe(&report, &log, &what);
        assert!(report.metrics.converged, "{what}");
        assert!(log.leaders_by_term().len() >= 3, "{what}");
    }
}
