//! Leader election without and with crashed nodes (Raft paper §5.2): one leader per term,
//! majorities of the configured cluster, and split votes with and without randomized timeouts.

use crate::common;

use std::time::Duration;

use common::{assert_safe, ms, run};
use election_core::{majority, NodeId, Role};
use election_raft::RaftConfig;
use election_sim::{Fault, FaultAction, Latency, NodeSet, Selector, SimConfig};
use proptest::prelude::*;

fn sim(n: u32, seed: u64) -> SimConfig {
    let mut s = SimConfig::new(n, seed);
    s.horizon = Duration::from_secs(10);
    s.settle = Duration::from_secs(1);
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// §5.2, fault-free: for any cluster size and seed, a leader is elected, every node
    /// follows it in its term, and no term ever has two leaders.
    #[test]
    fn fault_free_elects_exactly_one_leader_per_term(
        n in 1u32..=15,
        seed in any::<u64>(),
        jitter in any::<bool>(),
        pre_vote in any::<bool>(),
        check_quorum in any::<bool>(),
    ) {
        let mut s = sim(n, seed);
        if jitter {
            s.net.latency = Latency::Uniform { min_ms: 0.5, max_ms: 5.0 };
        }
        let mut cfg = RaftConfig::new(n);
        cfg.pre_vote = pre_vote;
        cfg.check_quorum = check_quorum;
        let (report, log) = run(s, cfg);
        let what = format!("n={n} seed={seed}");
        assert_safe(&report, &log, &what);
        let m = &report.metrics;
        prop_assert!(m.converged, "{}: no leader", what);
        let leader = m.leader.unwrap();
        let term = report.final_status[leader.index()].unwrap().epoch;
        prop_assert_eq!(log.leaders_by_term().values().map(|l| l.len()).sum::<usize>(),
            log.leaders_by_term().len());
        for (i, st) in report.final_status.iter().enumerate() {
            let st = st.expect("nobody crashed");
            prop_assert_eq!(st.leader, Some(leader), "{}: node {}", what, i + 1);
            prop_assert_eq!(st.epoch, term, "{}: node {}", what, i + 1);
        }
        // Nothing disturbs a leader on a reliable network: it is the only one ever elected.
        prop_assert_eq!(m.leader_changes, 1, "{}", what);
    }
}

/// Starts `n` nodes with the ids in `crashed` crashed from the start, for `horizon_ms`.
fn with_crashed(n: u32, crashed: &[u32], seed: u64) -> (election_sim::TrialReport, common::Log) {
    let mut s = sim(n, seed);
    s.horizon = Duration::from_secs(5);
    s.faults = crashed
        .iter()
        .map(|&id| Fault::at_ms(0.0, FaultAction::Crash(Selector::Id(NodeId(id)))))
        .collect();
    run(s, RaftConfig::new(n))
}

/// Every `k`-subset of `1..=n`.
fn subsets(n: u32, k: usize) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    for mask in 0u32..(1 << n) {
        if mask.count_ones() as usize == k {
            out.push((1..=n).filter(|i| mask & (1 << (i - 1)) != 0).collect());
        }
    }
    out
}

/// §5.2: "a candidate wins an election if it receives votes from a majority of the servers in
/// the full cluster". Live nodes >= n/2+1 elect; fewer never do, however long they try.
#[test]
fn majority_of_the_configured_cluster_not_of_the_reachable_nodes() {
    for (n, down, elects) in [(3, 1, true), (3, 2, false), (4, 2, false), (5, 2, true)] {
        assert_eq!(n - down >= majority(n), elects);
        for crashed in subsets(n, down as usize) {
            for seed in 0..3 {
                let what = format!("n={n} crashed={crashed:?} seed={seed}");
                let (report, log) = with_crashed(n, &crashed, seed);
                assert_safe(&report, &log, &what);
                let leaders = log.leaders_by_term();
                if elects {
                    assert!(report.metrics.converged, "{what}: no leader");
                    let l = report.metrics.leader.unwrap();
                    assert!(!crashed.contains(&l.0), "{what}");
                } else {
                    assert!(leaders.is_empty(), "{what}: minority elected {leaders:?}");
                    assert!(!report.metrics.converged, "{what}");
                    // The survivors keep trying: at least one term per 300 ms timeout.
                    assert!(
                        log.max_term() >= 5000 / 300,
                        "{what}: term {}",
                        log.max_term()
                    );
                }
            }
        }
    }
}

/// Crashing the leader (and one more node of five): the three survivors are a majority and
/// elect a new leader in a higher term, with either option or both.
#[test]
fn a_crashed_leader_is_replaced_by_a_majority() {
    for (pre_vote, check_quorum) in [(false, false), (true, false), (false, true), (true, true)] {
        for seed in 0..8 {
            let mut s = sim(5, seed);
            s.net.latency = Latency::Uniform {
                min_ms: 0.5,
                max_ms: 5.0,
            };
            s.faults = vec![
                Fault::at_ms(1000.0, FaultAction::Crash(Selector::Leader)),
                Fault::at_ms(1000.0, FaultAction::Crash(Selector::Lowest)),
            ];
            let mut cfg = RaftConfig::new(5);
            cfg.pre_vote = pre_vote;
            cfg.check_quorum = check_quorum;
            let (report, log) = run(s, cfg);
            let what = format!("pre_vote={pre_vote} check_quorum={check_quorum} seed={seed}");
            assert_safe(&report, &log, &what);
            let m = &report.metrics;
            assert!(m.converged, "{what}");
            let (first_term, first) = log.leaders_by_term().into_iter().next().unwrap();
            assert_ne!(m.leader, first.first().copied(), "{what}");
            let st = report.final_status[m.leader.unwrap().index()].unwrap();
            assert!(st.epoch.unwrap() > first_term, "{what}");
            // Detection is one election timeout after the last heartbeat: 150-300 ms after a
            // heartbeat that is at most 50 ms (plus latency) old at the crash.
            let detect = m.detect_ms.unwrap();
            assert!((95.0..=300.0).contains(&detect), "{what}: detect {detect}");
            assert!(
                m.elect_ms.unwrap() < 1000.0,
                "{what}: elect {:?}",
                m.elect_ms
            );
        }
    }
}

/// §5.2 without randomization: with `timeout_min == timeout_max` and every node starting
/// together, every node times out at the same instant in every term, votes for itself and
/// refuses the others, so the vote splits forever. With 150 ms timeouts over 3 s each of the
/// 5 nodes starts the terms at 150, 300, ..., 3000 ms: 20 terms, 5 x 20 = 100 elections.
#[test]
fn equal_timeouts_split_the_vote_in_every_term() {
    for (seed, jitter) in [(1, false), (2, false), (3, true), (4, true)] {
        let mut s = sim(5, seed);
        s.horizon = Duration::from_secs(3);
        if jitter {
            s.net.latency = Latency::Uniform {
                min_ms: 0.5,
                max_ms: 5.0,
            };
        }
        let mut cfg = RaftConfig::new(5);
        cfg.timeout_max = cfg.timeout_min;
        let (report, log) = run(s, cfg);
        let what = format!("seed={seed}");
        assert_safe(&report, &log, &what);
        assert!(log.leaders_by_term().is_empty(), "{what}");
        assert_eq!(log.max_term(), 20, "{what}");
        assert_eq!(report.metrics.elections_started, 100, "{what}");
        assert_eq!(
            log.sent_since("VOTE", ms(0)),
            0,
            "{what}: every node voted for itself"
        );
        assert_eq!(log.sent_since("REQUEST_VOTE", ms(0)), 20 * 5 * 4, "{what}");
    }
}

/// §5.2: randomized timeouts make split votes rare. Over 100 seeds (5 nodes, 0.5-5 ms
/// latency), count the trials in which term 1 ended without a leader.
#[test]
fn randomized_timeouts_make_split_votes_rare() {
    let split = |min: u64, max: u64| {
        (0..100u64)
            .filter(|&seed| {
                let mut s = sim(5, seed);
                s.horizon = Duration::from_secs(2);
                s.net.latency = Latency::Uniform {
                    min_ms: 0.5,
                    max_ms: 5.0,
                };
                let mut cfg = RaftConfig::new(5);
                cfg.timeout_min = Duration::from_millis(min);
                cfg.timeout_max = Duration::from_millis(max);
                let (report, log) = run(s, cfg);
                assert_safe(&report, &log, &format!("seed={seed}"));
                assert!(report.metrics.converged || min == max, "seed={seed}");
                !log.leaders_by_term().contains_key(&1)
            })
            .count()
    };
    let none = split(150, 150);
    let narrow = split(150, 155);
    let wide = split(150, 300);
    eprintln!(
        "term 1 split in 100 trials: 150-150 ms {none}, 150-155 ms {narrow}, 150-300 ms {wide}"
    );
    assert_eq!(none, 100);
    assert!(narrow > wide, "{narrow} vs {wide}");
    assert!(wide <= 5, "{wide}");
}

/// The follower's election timeout is the failure detector, the candidate's retry is not:
/// with automatic detection off everywhere, forced suspicions on two of three nodes (the third
/// is down) split the vote in term 1, and the candidates' retry timers still resolve it.
#[test]
fn detection_off_does_not_stop_a_candidacy_from_retrying() {
    for seed in 0..5 {
        let mut s = sim(3, seed);
        s.faults = vec![
            Fault::at_ms(
                0.0,
                FaultAction::Detection {
                    nodes: NodeSet::All,
                    enabled: false,
                },
            ),
            Fault::at_ms(0.0, FaultAction::Crash(Selector::Id(NodeId(3)))),
            Fault::at_ms(500.0, FaultAction::Suspect(Selector::Id(NodeId(1)))),
            Fault::at_ms(500.0, FaultAction::Suspect(Selector::Id(NodeId(2)))),
        ];
        let (report, log) = run(s, RaftConfig::new(3));
        let what = format!("seed={seed}");
        assert_safe(&report, &log, &what);
        // Nobody moved before the forced suspicions.
        assert!(log.changes(NodeId(1), ms(1), ms(500)).is_empty(), "{what}");
        assert!(
            !log.leaders_by_term().contains_key(&1),
            "{what}: term 1 split"
        );
        assert!(report.metrics.converged, "{what}");
        assert!(log.max_term() >= 2, "{what}");
    }
    // Without a forced suspicion nothing happens at all.
    let mut s = sim(3, 9);
    s.horizon = Duration::from_secs(2);
    s.faults = vec![Fault::at_ms(
        0.0,
        FaultAction::Detection {
            nodes: NodeSet::All,
            enabled: false,
        },
    )];
    let (_, log) = run(s, RaftConfig::new(3));
    assert_eq!(log.max_term(), 0);
}

/// A one-node cluster is its own majority.
#[test]
fn single_node_elects_itself_after_one_timeout() {
    let (report, log) = run(sim(1, 3), RaftConfig::new(1));
    assert!(report.metrics.converged);
    assert_eq!(report.metrics.leader, Some(NodeId(1)));
    let (t, st) = log.changes(NodeId(1), ms(1), ms(10_000))[0];
    assert_eq!(st.role, Role::Leader);
    assert!(t >= ms(150) && t <= ms(300), "{t}");
    assert_eq!(report.metrics.total.sent.iter().sum::<u64>(), 0);
}

/// The same seed gives the same run, event for event.
#[test]
fn runs_are_deterministic_for_a_seed() {
    let mk = || {
        let mut s = sim(7, 42);
        s.net.latency = Latency::Uniform {
            min_ms: 0.5,
            max_ms: 5.0,
        };
        s.net.loss = 0.05;
        s.faults = vec![Fault::at_ms(800.0, FaultAction::Crash(Selector::Leader))];
        let mut cfg = RaftConfig::new(7);
        cfg.pre_vote = true;
        cfg.check_quorum = true;
        run(s, cfg)
    };
    let (a, la) = mk();
    let (b, lb) = mk();
    assert_eq!(a.metrics, b.metrics);
    assert_eq!(a.final_status, b.final_status);
    assert_eq!(la, lb);
}
