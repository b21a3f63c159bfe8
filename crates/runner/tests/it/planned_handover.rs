//! A planned hand-over (issue #31): `planned-handover` tells the leader it is about to be
//! stopped (`handover`), stops its process `handover_grace_ms` later and brings it back
//! `outage_ms` after that. Pinned over the simulator against `leader-crash` with the same
//! seeds: a planned Raft transfer (TimeoutNow) and a lease release cost less write
//! unavailability than a crash; the transferee, not the old leader, leads after it; a learner
//! is never chosen; a hand-over that finds no leader is counted as skipped; a family without
//! a hand-over is skipped with its reason.

use crate::common;

use election_core::{NodeId, Role};
use election_runner::TrialRun;
use election_sim::{Applied, TraceKind};

const SEEDS: u64 = 8;

fn run(protocol: &str, n: u32, scenario: &str, seed: u64) -> TrialRun {
    common::cell(protocol, n, scenario, "")
        .run(seed, true)
        .unwrap()
}

/// Time without a write taken after the reference instant (`writes_unavailable_ms`).
fn write_unavailable_ms(run: &TrialRun) -> f64 {
    run.report
        .metrics
        .writes
        .expect("the workload runs")
        .unavailable_ms
}

/// The first node that enters the leader role after the reference instant.
fn first_new_leader(run: &TrialRun) -> Option<NodeId> {
    let t0 = run.report.metrics.reference_ms;
    run.report.trace.iter().find_map(|e| match e.what {
        TraceKind::Status { node, status }
            if e.at.as_millis_f64() > t0 && status.is_some_and(|s| s.role == Role::Leader) =>
        {
            Some(node)
        }
        _ => None,
    })
}

/// For every seed, a planned hand-over leaves the cluster without a write for less time than
/// a crash of the same leader at the same instant: Raft's transfer elects the transferee at
/// once (no detection window), the lease's release lets the next member take the lease at
/// its next poll (no lease duration to wait out).
#[test]
fn a_planned_handover_costs_less_write_unavailability_than_a_crash() {
    for protocol in [
        "raft",
        "raft+pre_vote",
        "raft+pre_vote+check_quorum",
        "lease",
        "lease+release_on_cancel",
        "bully",
        "ring",
        "raftrs",
    ] {
        let mut planned_sum = 0.0;
        let mut crash_sum = 0.0;
        for seed in 0..SEEDS {
            let planned = run(protocol, 5, "planned-handover", seed);
            let crash = run(protocol, 5, "leader-crash", seed);
            let what = format!("{protocol} seed {seed}");
            assert_eq!(planned.report.metrics.faults_skipped, 0, "{what}");
            let (p, c) = (write_unavailable_ms(&planned), write_unavailable_ms(&crash));
            assert!(p < c, "{what}: planned {p} ms, crash {c} ms");
            planned_sum += p;
            crash_sum += c;
        }
        // Not a tie broken by a hair: the planned hand-over saves most of the detection.
        assert!(
            planned_sum < 0.5 * crash_sum,
            "{protocol}: planned {planned_sum} ms against crash {crash_sum} ms over {SEEDS} seeds"
        );
    }
}

/// The node that leads after a Raft hand-over is the transferee, never the node that handed
/// over: it is the first to enter the leader role after the hand-over, before the old
/// leader is stopped, and it still leads at the end, after the old leader came back.
#[test]
fn the_transferee_leads_after_the_handover_not_the_old_leader() {
    for protocol in ["raft", "raft+pre_vote+check_quorum", "raftrs"] {
        for seed in 0..SEEDS {
            let r = run(protocol, 5, "planned-handover", seed);
            let what = format!("{protocol} seed {seed}");
            let old = r.leader_at_fault.expect("a leader at the hand-over");
            let new = first_new_leader(&r).expect("a new leader");
            assert_ne!(new, old, "{what}");
            // Elected within the grace, before the old leader's process stops: its crash
            // finds a follower.
            let crash_at = r
                .report
                .metrics
                .fault_log
                .iter()
                .find_map(|(at, a)| matches!(a, Applied::Crash(_)).then_some(at.as_millis_f64()))
                .expect("the old leader is stopped");
            let elected = r
                .report
                .trace
                .iter()
                .find(|e| {
                    matches!(e.what, TraceKind::Status { node, status }
                        if node == new && status.is_some_and(|s| s.role == Role::Leader))
                        && e.at.as_millis_f64() > r.report.metrics.reference_ms
                })
                .unwrap()
                .at
                .as_millis_f64();
            assert!(
                elected < crash_at,
                "{what}: elected at {elected}, stopped at {crash_at}"
            );
            assert_eq!(r.report.metrics.leader, Some(new), "{what}");
            assert!(r.report.metrics.converged, "{what}");
            // The bully's and the ring's successor is the next highest id; Raft's is a voter
            // that is not the old leader.
            assert!(!r.report.metrics.split_brain, "{what}: two leaders at once");
        }
    }
    for (protocol, want) in [("bully", 4), ("ring", 4)] {
        for seed in 0..SEEDS {
            let r = run(protocol, 5, "planned-handover", seed);
            assert_eq!(r.leader_at_fault, Some(NodeId(5)), "{protocol} seed {seed}");
            assert_eq!(
                first_new_leader(&r),
                Some(NodeId(want)),
                "{protocol} seed {seed}"
            );
        }
    }
}

/// With 3 voters and 2 learners, the transferee is always a voter: a learner never leads.
#[test]
fn a_learner_is_never_chosen() {
    for protocol in ["raft+voters=3", "raft+pre_vote+check_quorum+voters=3"] {
        for seed in 0..SEEDS {
            let r = run(protocol, 5, "planned-handover", seed);
            let what = format!("{protocol} seed {seed}");
            let old = r.leader_at_fault.expect("a leader");
            let new = first_new_leader(&r).expect("a new leader");
            assert_ne!(new, old, "{what}");
            assert!(new.0 <= 3, "{what}: learner {new} leads");
            for e in &r.report.trace {
                if let TraceKind::Status { node, status } = e.what {
                    assert!(
                        node.0 <= 3 || status.is_none_or(|s| s.role != Role::Leader),
                        "{what}: learner {node} leads"
                    );
                }
            }
        }
    }
}

/// A hand-over that finds no leader does nothing and is counted as skipped, like the stop
/// and the return that name the leader it did not find: here the faults fire at 0 ms,
/// before any election, without waiting for a leader.
#[test]
fn a_handover_that_finds_no_leader_is_counted_as_skipped() {
    let cell = common::cell_with_params(
        "raft",
        5,
        "planned-handover",
        "fault_at_ms = 0\nfault_jitter_ms = 0\nfault_wait_ms = 0\n",
    );
    let r = cell.run(1, true).unwrap();
    let log = &r.report.metrics.fault_log;
    assert!(
        matches!(&log[0].1, Applied::Skipped(why) if why.starts_with("handover")),
        "{log:?}"
    );
    assert_eq!(r.report.metrics.faults_skipped, 3, "{log:?}");
    assert!(!r
        .report
        .trace
        .iter()
        .any(|e| matches!(e.what, TraceKind::Fault(Applied::Handover(_)))));
}

/// Omni-Paxos' crate has no leadership transfer: its cells are skipped, saying why; the
/// other families' are run.
#[test]
fn a_family_without_a_handover_is_skipped_with_its_reason() {
    let cell = common::cell("omnipaxos", 5, "planned-handover", "");
    let why = cell.skipped.expect("skipped");
    assert!(why.contains("no leadership transfer"), "{why}");
    for p in ["bully", "ring", "raft", "lease", "raftrs"] {
        assert_eq!(
            common::cell(p, 5, "planned-handover", "").skipped,
            None,
            "{p}"
        );
    }
    // Omni-Paxos still runs leader-crash.
    assert_eq!(
        common::cell("omnipaxos", 5, "leader-crash", "").skipped,
        None
    );
}
