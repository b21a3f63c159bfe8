//! Per-node timing (issue #31): `node.timing_multiplier = NODE:K/...` runs a node with its
//! heartbeat period and failure-detection window multiplied by `K`, like a Consul server with
//! its own `performance.raft_multiplier` (Consul `agent/config/builder.go` multiplies
//! hashicorp/raft's `HeartbeatTimeout`, `ElectionTimeout` and `LeaderLeaseTimeout` by it).
//! Pinned here: a node with multiplier `k` suspects `k` times later; the `mixed-multiplier`
//! scenario's failover is bounded below by the slow nodes' detection wherever a node that
//! still knows a leader refuses votes (hashicorp/raft's `requestVote`), and not without that
//! rule; bad values are refused naming the parameter and the value.

use crate::common;

use election_core::{NodeId, Role};
use election_runner::TrialRun;
use election_sim::TraceKind;

/// Exact timers: ideal nodes (no disk, CPU, drift or timer jitter), no detection jitter (with
/// the `ideal` network's constant 1 ms).
const EXACT: &str = "node.profile = \"ideal\"\ndetect_jitter_ms = 0\n";

/// The first instant a node leaves the follower role after the reference, and which node.
fn first_suspicion(run: &TrialRun) -> (f64, NodeId) {
    let t0 = run.report.metrics.reference_ms;
    run.report
        .trace
        .iter()
        .find_map(|e| match &e.what {
            TraceKind::Status {
                node,
                status: Some(s),
            } if e.at.as_millis_f64() > t0 && s.role != Role::Follower => {
                Some((e.at.as_millis_f64(), *node))
            }
            _ => None,
        })
        .expect("someone suspects")
}

/// The last message `to` received from `from` before `before` (ms).
fn last_heard(run: &TrialRun, from: NodeId, to: NodeId, before: f64) -> f64 {
    run.report
        .trace
        .iter()
        .rev()
        .filter_map(|e| match &e.what {
            TraceKind::Deliver(m) if m.from == from && m.to == to => Some(e.at.as_millis_f64()),
            _ => None,
        })
        .find(|&at| at < before)
        .expect("it heard the leader")
}

/// A single Raft node elects itself one election timeout after it boots: `150 × k` ms with
/// its multiplier `k` (`raft.timeout_ms = 150-150`), and 150 ms without one.
#[test]
fn a_lone_node_with_multiplier_k_times_out_k_times_later() {
    for k in [1.0, 2.0, 5.0, 0.5] {
        let cell = common::cell(
            "raft",
            1,
            "cold-start",
            &format!(
                "nets = [\"ideal\"]\n[params]\n{EXACT}\"raft.timeout_ms\" = \"150-150\"\n\"node.timing_multiplier\" = \"1:{k}\"\n"
            ),
        );
        let row = cell.run(0, false).unwrap().row;
        let elect = row.elect_ms.expect("it elects itself");
        assert!(
            (elect - 150.0 * k).abs() < 1e-6,
            "k = {k}: elected after {elect} ms, expected {} ms",
            150.0 * k
        );
    }
}

/// After a leader crash the first follower of a cluster whose nodes all run multiplier `k`
/// suspects `k` times later than with the shared timing, counted from the last heartbeat it
/// received: exactly `k × detect_timeout_ms` for the bully without detection jitter, and
/// within `k × [150, 300]` ms for Raft's election timeout (Raft with an exact timeout splits
/// its vote forever on ideal nodes, so it keeps its range).
#[test]
fn after_a_crash_a_follower_with_multiplier_k_suspects_k_times_later() {
    for (protocol, jitter) in [("bully", 0), ("raft", 150)] {
        for k in [1.0, 3.0] {
            for seed in 0..3 {
                let what = format!("{protocol}, k = {k}, seed {seed}");
                let cell = common::cell(
                    protocol,
                    3,
                    "leader-crash",
                    &format!(
                        "nets = [\"ideal\"]\n[params]\nnode.profile = \"ideal\"\ndetect_jitter_ms = {jitter}\n\"node.timing_multiplier\" = \"1:{k}/2:{k}/3:{k}\"\n"
                    ),
                );
                let run = cell.run(seed, true).unwrap();
                let leader = run.leader_at_fault.expect("a leader");
                let (at, who) = first_suspicion(&run);
                let waited = at - last_heard(&run, leader, who, run.fault_instant_ms.unwrap());
                let (lo, hi) = (150.0 * k, (150.0 + f64::from(jitter)) * k);
                assert!(
                    waited >= lo - 1e-6 && waited <= hi + 1e-6,
                    "{what}: node {} suspected {waited} ms after it last heard the leader, expected {lo}-{hi}",
                    who.0
                );
            }
        }
    }
}

/// One failover (ms) per seed of `protocol` in `mixed-multiplier` at `n` nodes.
fn failovers(protocol: &str, n: u32, seeds: u64) -> Vec<f64> {
    let cell = common::cell(protocol, n, "mixed-multiplier", "");
    (0..seeds)
        .map(|seed| {
            let row = cell.run(seed, false).unwrap().row;
            assert!(row.converged, "{protocol} n = {n} seed {seed} converges");
            row.failover_ms.expect("a failover")
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Consul: "a new leader is elected no sooner than the slowest server notices". In
/// `mixed-multiplier` the ⌊n/2⌋ highest ids run 5 × slower timing (750 ms heartbeat
/// timeout), and every majority left after the crash needs one of them. A hashicorp/raft
/// node that still knows a leader rejects every vote (`raft.go` `requestVote`: "rejecting
/// vote request since we have a leader") and forgets its leader only when its own heartbeat
/// timeout has passed without contact (`runFollower`): so no new leader before a slow node's
/// 750 ms after its last heartbeat, i.e. after the crash minus one heartbeat period (50 ms).
/// The paper's rule grants the vote at once: the failover is the fast nodes' detection.
#[test]
fn mixed_multipliers_wait_for_the_slow_nodes_where_a_known_leader_refuses_votes() {
    let bound = 5.0 * 150.0 - 50.0;
    for n in [3, 5] {
        let hashicorp = failovers("raft+follower=hashicorp", n, 20);
        let early: Vec<_> = hashicorp.iter().filter(|&&f| f < bound).collect();
        assert!(
            early.is_empty(),
            "n = {n}: hashicorp failovers below {bound} ms: {early:?}"
        );
        let paper = median(failovers("raft", n, 20));
        assert!(
            paper < 400.0,
            "n = {n}: the paper's rule grants votes at once: median failover {paper} ms"
        );
    }
}

/// Bad values are refused naming `node.timing_multiplier` and the value; a node past the
/// cluster size is refused when the cell is built.
#[test]
fn a_bad_multiplier_is_refused_by_name() {
    use election_runner::params::{canonical, lookup};
    let def = lookup("node.timing_multiplier").unwrap();
    assert_eq!(canonical(def, " 3:5 / 1:0.5 ").unwrap(), "1:0.5/3:5");
    assert_eq!(canonical(def, "none").unwrap(), "none");
    for bad in [
        "", "3", "3:0", "0:2", "3:-1", "3:x", "3:2/3:4", "3:1001", "3:inf", "5@3",
    ] {
        let e = canonical(def, bad).unwrap_err().to_string();
        assert!(
            e.starts_with("node.timing_multiplier = ") && e.contains(&format!("{:?}", bad.trim())),
            "{bad:?}: {e}"
        );
    }
    let toml = "protocols = [\"raft\"]\nnodes = [3]\nscenarios = [\"leader-crash\"]\nseeds = 1\n[params]\n\"node.timing_multiplier\" = \"4:2\"\n";
    let e = election_runner::SweepSpec::from_toml(toml)
        .unwrap()
        .plan()
        .unwrap()
        .cells()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("node.timing_multiplier = 4:2") && e.contains("not in 1..=3"),
        "{e}"
    );
}
