//! Raft with non-voting members (`raft.voters`, issue #31: "should all 51 nodes vote?"), over
//! the simulated network: with 5 voters and 46 learners a leader crash is repaired by the
//! voters alone, with a fraction of the election traffic of 51 voters; a learner's crash or
//! isolation causes no election; and no learner ever leads, whatever the partition.

use crate::common;

use common::cell;
use election_core::{MsgCategory, NodeId, Role};

use election_sim::{Outcome, TraceKind};

const SEEDS: u64 = 12;

/// Election traffic of a trial's measured window: requests (`REQUEST_VOTE`, `PRE_VOTE`) and
/// their answers.
fn election_msgs(m: &election_sim::Metrics) -> u64 {
    m.window.sent_of(MsgCategory::Election) + m.window.sent_of(MsgCategory::Reply)
}

/// Every node that entered the leader role in a traced trial.
fn leaders(run: &election_runner::TrialRun) -> Vec<NodeId> {
    let mut l: Vec<NodeId> = run
        .report
        .trace
        .iter()
        .filter_map(|e| match e.what {
            TraceKind::Status {
                node,
                status: Some(s),
            } if s.role == Role::Leader => Some(node),
            _ => None,
        })
        .collect();
    l.sort_unstable();
    l.dedup();
    l
}

/// At 51 nodes, `voters=5` repairs a leader crash with a voter, and its election traffic is at
/// most a fifth of what 51 voters send (candidates ask 4 voters instead of 50 nodes); the same
/// seeds are measured both ways, so the comparison is of the same crash instants.
#[test]
fn leader_crash_at_51_nodes_five_voters_elect_with_a_fraction_of_the_traffic() {
    let voters = cell(
        "raft+pre_vote+check_quorum+voters=5",
        51,
        "leader-crash",
        "",
    );
    let all = cell("raft+pre_vote+check_quorum", 51, "leader-crash", "");
    let (mut with_learners, mut every_node_votes) = (0, 0);
    for seed in 0..SEEDS {
        let run = voters.run(seed, false).unwrap();
        let m = &run.report.metrics;
        assert_eq!(m.faults_skipped, 0, "seed {seed}");
        assert!(m.converged, "seed {seed}");
        assert_eq!(m.outcome, Outcome::RecoveredAfter, "seed {seed}");
        assert!(!m.split_brain, "seed {seed}");
        let old = run.leader_at_fault.expect("a leader to crash");
        let new = m.leader.unwrap();
        assert!(old.0 <= 5 && new.0 <= 5, "seed {seed}: {old} then {new}");
        assert_ne!(new, old, "seed {seed}");
        with_learners += election_msgs(m);

        let m = all.run(seed, false).unwrap().report.metrics;
        assert!(m.converged, "seed {seed}");
        every_node_votes += election_msgs(&m);
    }
    assert!(with_learners > 0);
    assert!(
        with_learners * 5 <= every_node_votes,
        "election messages over {SEEDS} seeds: {with_learners} with 5 voters, {every_node_votes} with 51"
    );
}

/// The learners' own traffic in a traced trial: only voters (ids 1..=3 of 7) ever send a
/// `PRE_VOTE`, a `REQUEST_VOTE` or a vote, and only voters lead.
#[test]
fn only_voters_campaign_and_vote() {
    for spec in [
        "raft+voters=3",
        "raft+pre_vote+voters=3",
        "raft+pre_vote+check_quorum+voters=3",
    ] {
        let c = cell(spec, 7, "leader-crash", "");
        for seed in 0..SEEDS {
            let run = c.run(seed, true).unwrap();
            assert!(run.report.metrics.converged, "{spec} seed {seed}");
            let mut election = 0;
            for e in &run.report.trace {
                if let TraceKind::Send(m) = e.what {
                    if matches!(m.category, MsgCategory::Election | MsgCategory::Reply) {
                        election += 1;
                        assert!(
                            m.from.0 <= 3 && m.to.0 <= 3,
                            "{spec} seed {seed}: {} {} → {}",
                            m.kind,
                            m.from,
                            m.to
                        );
                    }
                }
            }
            assert!(election > 0, "{spec} seed {seed}: no election traced");
            assert!(
                leaders(&run).iter().all(|l| l.0 <= 3),
                "{spec} seed {seed}: {:?}",
                leaders(&run)
            );
        }
    }
}

/// A learner that crashes, or is cut off and comes back, never campaigns: no election starts,
/// the leader never changes, the cluster never lacks a quorum leader (`stable`). The fault hits
/// the highest id, a learner.
#[test]
fn a_learner_crashing_or_rejoining_causes_no_election() {
    let scenarios = r#"
[[scenario]]
name = "learner-crash"
about = "the highest id (a learner) crashes"
faults = [{ at_ms = 0, action = "crash", node = "highest" }]

[[scenario]]
name = "learner-isolation-rejoin"
about = "the highest id (a learner) is cut off for 1.5 s, then healed"
faults = [
  { at_ms = 0, action = "isolate", node = "highest" },
  { at_ms = 1500, action = "heal" },
]
"#;
    for spec in ["raft+voters=5", "raft+pre_vote+check_quorum+voters=5"] {
        for scenario in ["learner-crash", "learner-isolation-rejoin"] {
            let c = cell(spec, 51, scenario, scenarios);
            for seed in 0..SEEDS / 2 {
                let run = c.run(seed, false).unwrap();
                let m = &run.report.metrics;
                let at = format!("{spec} {scenario} seed {seed}");
                assert_eq!(m.faults_skipped, 0, "{at}");
                assert!(
                    m.fault_log
                        .iter()
                        .any(|(_, a)| format!("{a:?}").contains("51")),
                    "{at}: {:?}",
                    m.fault_log
                );
                assert_eq!(m.elections_started, 0, "{at}");
                assert_eq!(m.leader_changes, 0, "{at}");
                assert_eq!(m.unavailable_ms, 0.0, "{at}");
                assert_eq!(m.outcome, Outcome::Stable, "{at}");
                assert_eq!(m.leader, run.leader_at_fault, "{at}");
            }
        }
    }
}

/// Under `partition-leader-minority` no learner ever leads. At 51 nodes with 5 voters the
/// "minority" side (the leader and the 24 lowest followers) holds every voter: it keeps its
/// quorum leader, and the 26 learners on the other side, a majority of the members but no
/// voter, elect no one and stay stranded until the heal. At 7 nodes with 3 voters the
/// minority side (the leader and the 2 lowest followers) is again every voter: the same holds.
#[test]
fn partition_leader_minority_no_learner_ever_leads() {
    for (spec, n, k) in [
        ("raft+voters=5", 51, 5),
        ("raft+pre_vote+check_quorum+voters=5", 51, 5),
        ("raft+voters=3", 7, 3),
        ("raft+pre_vote+check_quorum+voters=3", 7, 3),
    ] {
        let c = cell(spec, n, "partition-leader-minority", "");
        for seed in 0..SEEDS / 2 {
            let run = c.run(seed, true).unwrap();
            let m = &run.report.metrics;
            let at = format!("{spec} seed {seed}");
            assert_eq!(m.faults_skipped, 0, "{at}");
            let l = leaders(&run);
            assert!(!l.is_empty() && l.iter().all(|l| l.0 <= k), "{at}: {l:?}");
            assert!(m.converged, "{at}");
            assert_eq!(m.unavailable_ms, 0.0, "{at}");
            assert_eq!(m.outcome, Outcome::Stable, "{at}");
            // The learners cut off from the leader had no leader they reach for the outage.
            assert!(m.stranded_node_ms > 0.0, "{at}");
        }
    }
}

/// `minority-crash` takes down floor((n-1)/2) members, the leader among them: a cluster of n
/// voting members elects again; with 5 voters among 51 the voters are gone and nobody can.
#[test]
fn minority_crash_is_survived_by_voters_not_by_learners() {
    let all = cell("raft+pre_vote+check_quorum", 51, "minority-crash", "")
        .run(0, false)
        .unwrap();
    assert_eq!(all.sim.faults.len(), 25);
    assert!(all.report.metrics.converged);
    let few = cell(
        "raft+pre_vote+check_quorum+voters=5",
        51,
        "minority-crash",
        "",
    )
    .run(0, false)
    .unwrap();
    assert_eq!(few.report.metrics.faults_skipped, 0);
    assert!(!few.report.metrics.converged);
}
