//! A stale connection (issue #31): one direction of a link black-holes every message until a
//! keep-alive timeout, then the connection is re-established by itself. Pinned on the
//! `stale-connection` scenario (the leader's links to its followers) and on a custom scenario
//! in which a later cut takes one of the stale links over.

use crate::common;

use election_core::NodeId;
use election_runner::{Cell, TrialRun};
use election_sim::{Applied, DropReason, TraceKind};

fn cell(toml_tail: &str, protocol: &str, scenario: &str) -> Cell {
    common::cell(protocol, 5, scenario, toml_tail)
}

/// Deliveries and drops as `(ms, from, to, dropped on a down link)`.
fn messages(run: &TrialRun) -> Vec<(f64, NodeId, NodeId, bool)> {
    run.report
        .trace
        .iter()
        .filter_map(|e| match &e.what {
            TraceKind::Deliver(m) => Some((e.at.as_millis_f64(), m.from, m.to, false)),
            TraceKind::Drop(m, DropReason::LinkDown) => {
                Some((e.at.as_millis_f64(), m.from, m.to, true))
            }
            _ => None,
        })
        .collect()
}

/// The default keep-alive: 5 × `detect_timeout_ms` (150 ms).
const KEEPALIVE_MS: f64 = 750.0;

/// During the keep-alive nothing the old leader sends reaches a follower (every such message is
/// dropped on the down link) while its followers' messages still reach it; from the reconnect
/// on, its messages are delivered again; the cluster has elected a new leader and ends
/// converged, after the reconnect.
#[test]
fn the_leaders_direction_black_holes_until_the_keepalive_then_delivers() {
    for protocol in ["raft", "raft+pre_vote+check_quorum", "bully"] {
        for seed in 0..3 {
            let run = cell("", protocol, "stale-connection")
                .run(seed, true)
                .unwrap();
            let what = format!("{protocol} seed {seed}");
            let l = run.leader_at_fault.expect("a leader");
            let t = run.fault_instant_ms.unwrap();
            let back = t + KEEPALIVE_MS;
            let msgs = messages(&run);
            let window = |m: &&(f64, NodeId, NodeId, bool)| m.0 >= t && m.0 < back;
            let out: Vec<_> = msgs.iter().filter(window).filter(|m| m.1 == l).collect();
            assert!(!out.is_empty(), "{what}: the leader kept sending");
            assert!(
                out.iter().all(|m| m.3),
                "{what}: delivered in the window: {out:?}"
            );
            let inbound = msgs
                .iter()
                .filter(window)
                .filter(|m| m.2 == l && !m.3)
                .count();
            assert!(inbound > 0, "{what}: the reverse direction still delivers");
            let after: Vec<_> = msgs.iter().filter(|m| m.0 >= back && m.1 == l).collect();
            assert!(
                after.iter().any(|m| !m.3),
                "{what}: delivered again after the keep-alive: {after:?}"
            );
            assert!(
                after.iter().all(|m| !m.3),
                "{what}: nothing dropped on a down link after it: {after:?}"
            );
            // The reconnect is in the fault log, at the end of the keep-alive, for exactly the
            // leader's four links.
            let log = &run.report.metrics.fault_log;
            let reconnect = log
                .iter()
                .find_map(|(at, a)| match a {
                    Applied::Links { pairs, up: true } => Some((at.as_millis_f64(), pairs)),
                    _ => None,
                })
                .expect("the reconnect is logged");
            assert!((reconnect.0 - back).abs() < 1e-6, "{what}: {reconnect:?}");
            assert_eq!(reconnect.1.len(), 4, "{what}");
            assert!(reconnect.1.iter().all(|&(a, b)| a == l && b != l));
            // The trial waits for the reconnect and converges after it.
            assert!(run.report.end.as_millis_f64() >= back, "{what}");
            assert!(run.row.converged, "{what}");
            assert_eq!(run.row.faults_skipped, 0, "{what}");
        }
    }
}

/// A later fault that sets a stale link takes it over: a cut of the leader's link to its first
/// follower in the middle of the keep-alive keeps that link down after it (everything the old
/// leader sends there is still dropped), while the other three come back (nothing sent on them
/// is dropped).
#[test]
fn a_later_cut_takes_a_stale_link_over() {
    let scenario = r#"
[[scenario]]
name = "stale-then-cut"
about = "stale connections from the leader, then one of them cut for good"
faults = [
  { at_ms = 0, action = "stale_connection", from = "initial_leader", to = "all_except:initial_leader", ms = 300 },
  { at_ms = 100, action = "cut_link", from = "initial_leader", to = "initial_follower" },
]
"#;
    for seed in 0..3 {
        let run = cell(scenario, "raft", "stale-then-cut")
            .run(seed, true)
            .unwrap();
        let l = run.leader_at_fault.unwrap();
        let back = run.fault_instant_ms.unwrap() + 300.0;
        let log = &run.report.metrics.fault_log;
        let cut_to = log
            .iter()
            .find_map(|(_, a)| match a {
                Applied::CutLink { to, .. } => Some(to[0]),
                _ => None,
            })
            .expect("the cut fired");
        let restored = log
            .iter()
            .find_map(|(_, a)| match a {
                Applied::Links { pairs, up: true } => Some(pairs.clone()),
                _ => None,
            })
            .expect("the reconnect is logged");
        assert_eq!(restored.len(), 3, "seed {seed}: {restored:?}");
        assert!(!restored.contains(&(l, cut_to)), "seed {seed}");
        let msgs = messages(&run);
        let after = |to: NodeId| {
            msgs.iter()
                .filter(move |m| m.0 >= back && m.1 == l && m.2 == to)
                .map(|m| m.3)
                .collect::<Vec<_>>()
        };
        assert!(after(cut_to).iter().all(|&dropped| dropped), "seed {seed}");
        assert!(
            restored.iter().all(|&(_, b)| after(b).iter().all(|&d| !d)),
            "seed {seed}: a restored link drops nothing"
        );
    }
}
