//! The ring's own test helpers: running a trial of it, forced suspicions, and its agreement
//! check. Counting sends in the trace is `election_testing::trace`.

use std::sync::Arc;

use election_core::{NodeId, Role, Time};
use election_ring::{Ring, RingConfig};
use election_sim::{Fault, FaultAction, NodeSet, Selector, Sim, SimConfig, TrialReport};

/// Runs one trial of the ring under `sim`.
pub fn run(sim: SimConfig, ring: RingConfig) -> TrialReport {
    assert_eq!(ring.validate(), Ok(()));
    let ring = Arc::new(ring);
    Sim::new(sim, move |id: NodeId| Ring::new(id, ring.clone()))
        .expect("valid simulator config")
        .run()
}

/// Messages of `kind` sent over the whole (traced) trial.
pub fn sent(r: &TrialReport, kind: &str) -> usize {
    election_testing::trace::sent_since(r, kind, Time::ZERO)
}

/// Automatic detection off from the start (so no boot election), then a forced suspicion at
/// `at_ms` for each node of `who`, in that order, at the same instant.
pub fn suspects(at_ms: f64, who: impl IntoIterator<Item = u32>) -> Vec<Fault> {
    let mut faults = vec![Fault::at_ms(
        0.0,
        FaultAction::Detection {
            nodes: NodeSet::All,
            enabled: false,
        },
    )];
    faults.extend(
        who.into_iter()
            .map(|i| Fault::at_ms(at_ms, FaultAction::Suspect(Selector::Id(NodeId(i))))),
    );
    faults
}

/// Asserts that the trial converged on exactly one live leader that every live node names,
/// and returns it.
pub fn one_leader_named_by_all(r: &TrialReport) -> NodeId {
    assert!(r.metrics.converged, "not converged: {:?}", r.metrics);
    let leader = r.metrics.leader.expect("converged means a leader");
    let leaders: Vec<usize> = r
        .final_status
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Some(s) if s.role == Role::Leader))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(leaders, vec![leader.0 as usize], "exactly one node leads");
    for (i, s) in r.final_status.iter().enumerate() {
        if let Some(s) = s {
            assert_eq!(
                s.leader,
                Some(leader),
                "node {} names {:?}",
                i + 1,
                s.leader
            );
        }
    }
    leader
}
