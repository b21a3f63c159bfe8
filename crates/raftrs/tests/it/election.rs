//! raft-rs in the simulator: a leader is elected in 3- and 5-node clusters, a crashed leader
//! is replaced by the survivors in a higher term, and a seed fixes the whole run (the
//! library's `thread_rng` draw is overwritten from the node's generator).

use std::sync::Arc;
use std::time::Duration;

use election_core::{NodeId, Role};
use election_raftrs::{RaftRs, RaftrsConfig};
use election_sim::workload::Workload;
use election_sim::{Fault, FaultAction, Latency, NodeTime, Selector, SimConfig, TrialReport};

fn sim(n: u32, seed: u64) -> SimConfig {
    let mut s = SimConfig::new(n, seed);
    s.horizon = Duration::from_secs(10);
    s.settle = Duration::from_secs(1);
    s.net.latency = Latency::Uniform {
        min_ms: 0.5,
        max_ms: 5.0,
    };
    s
}

fn run(s: SimConfig, cfg: RaftrsConfig) -> TrialReport {
    cfg.validate().expect("valid config");
    let cfg = Arc::new(cfg);
    election_sim::Sim::new(s, move |id| RaftRs::new(id, Arc::clone(&cfg)))
        .expect("valid sim config")
        .run()
}

/// Every live node follows `leader` in its term.
fn all_follow(report: &TrialReport, what: &str) -> (NodeId, u64) {
    let m = &report.metrics;
    assert!(m.converged, "{what}: no leader");
    assert_eq!(m.same_epoch_leaders, 0, "{what}");
    let leader = m.leader.expect("converged");
    let st = report.final_status[leader.index()].expect("leader is up");
    assert_eq!(st.role, Role::Leader, "{what}");
    let term = st.epoch.expect("raft-rs has terms");
    for st in report.final_status.iter().flatten() {
        assert_eq!(st.leader, Some(leader), "{what}");
        assert_eq!(st.epoch, Some(term), "{what}");
    }
    (leader, term)
}

#[test]
fn a_leader_is_elected_in_three_and_five_node_clusters() {
    for n in [3, 5] {
        for (pre_vote, check_quorum) in [(false, false), (true, false), (false, true), (true, true)]
        {
            for seed in 0..4 {
                let mut cfg = RaftrsConfig::new(n);
                cfg.pre_vote = pre_vote;
                cfg.check_quorum = check_quorum;
                let what =
                    format!("n={n} pre_vote={pre_vote} check_quorum={check_quorum} seed={seed}");
                let report = run(sim(n, seed), cfg);
                all_follow(&report, &what);
                assert_eq!(report.metrics.leader_changes, 1, "{what}");
            }
        }
    }
}

#[test]
fn a_crashed_leader_is_replaced_in_a_higher_term() {
    for check_quorum in [false, true] {
        for seed in 0..6 {
            let mut s = sim(5, seed);
            s.faults = vec![Fault::at_ms(1000.0, FaultAction::Crash(Selector::Leader))];
            let mut cfg = RaftrsConfig::new(5);
            cfg.check_quorum = check_quorum;
            let what = format!("check_quorum={check_quorum} seed={seed}");
            let report = run(s, cfg);
            let (leader, term) = all_follow(&report, &what);
            let m = &report.metrics;
            // One new leader after the fault instant.
            assert_eq!(m.leader_changes, 1, "{what}");
            assert!(report.final_status.iter().filter(|s| s.is_none()).count() == 1);
            assert!(report.final_status[leader.index()].is_some(), "{what}");
            assert!(term >= 2, "{what}: term {term}");
            // Detection: 3-6 ticks of 50 ms after the last heartbeat, counted in whole ticks.
            let detect = m.detect_ms.expect("detected");
            assert!((50.0..=360.0).contains(&detect), "{what}: detect {detect}");
            assert!(m.failover_ms.expect("failed over") < 1000.0, "{what}");
        }
    }
}

/// A restarted node rebuilds its log and term from the record: a crashed-and-recovered
/// follower rejoins the same leader, with the server node-time model (fsync before votes and
/// append responses) and the workload's entries replicated meanwhile.
#[test]
fn a_recovered_node_rejoins_from_its_record() {
    for seed in 0..4 {
        let mut s = sim(3, seed);
        s.node = NodeTime {
            fsync: Some(Latency::Constant { ms: 2.0 }),
            cpu: Some(Latency::Constant { ms: 0.02 }),
            timer_jitter_ms: 1.0,
            drift_ppm: 50.0,
            offset_ms: 0.0,
        };
        s.workload = Workload {
            interval: Some(Duration::from_millis(10)),
            ..Workload::default()
        };
        s.faults = vec![
            Fault::at_ms(1000.0, FaultAction::Crash(Selector::KthLowestFollower(1))),
            Fault::at_ms(1500.0, FaultAction::Recover(Selector::LastCrashed)),
        ];
        let report = run(s, RaftrsConfig::new(3));
        let what = format!("seed={seed}");
        all_follow(&report, &what);
        assert!(report.final_status.iter().all(|s| s.is_some()), "{what}");
        // No election after the fault instant: the leader keeps its office.
        assert_eq!(report.metrics.leader_changes, 0, "{what}");
    }
}

/// The same seed gives the same run, event for event, though raft-rs itself draws from an
/// unseeded `thread_rng`; another seed gives another run.
#[test]
fn runs_are_deterministic_for_a_seed() {
    let mk = |seed| {
        let mut s = sim(5, seed);
        s.net.loss = 0.05;
        s.trace = true;
        s.faults = vec![Fault::at_ms(800.0, FaultAction::Crash(Selector::Leader))];
        let mut cfg = RaftrsConfig::new(5);
        cfg.pre_vote = true;
        run(s, cfg)
    };
    let (a, b) = (mk(42), mk(42));
    assert_eq!(a.metrics, b.metrics);
    assert_eq!(a.final_status, b.final_status);
    assert_eq!(format!("{:?}", a.trace), format!("{:?}", b.trace));
    assert!(!a.trace.is_empty());
    let c = mk(43);
    assert_ne!(format!("{:?}", a.trace), format!("{:?}", c.trace));
}
