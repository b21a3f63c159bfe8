//! The bully under the failures its model excludes — partitions, recoveries, loss and
//! reordering — and the options that fix what breaks: `quorum` (no minority leader),
//! `rejoin = defer` (no churn when the old leader returns), `epoch` (fencing).

use crate::common;

use std::time::Duration;

use common::{assert_agreed, run, scenario};
use election_bully::{BullyConfig, Rejoin};
use election_core::{NodeId, Role};
use election_sim::{Fault, FaultAction, Latency, Selector, SimConfig};
use election_testing::trace::{at, became_leader, leaders_at, max_leaders_between, statuses_at};

const T: f64 = 1010.0;
/// How long partitions last.
const CUT: f64 = 2000.0;

fn ids(r: std::ops::RangeInclusive<u32>) -> Vec<Selector> {
    r.map(|i| Selector::Id(NodeId(i))).collect()
}

/// The low ids `1..=n-k` cut off from the high ids `n-k+1..=n` (the leader `n` with them)
/// at T, healed at T + CUT.
fn partitioned(n: u32, k: u32, seed: u64) -> SimConfig {
    scenario(
        n,
        seed,
        vec![
            Fault::at_ms(
                T,
                FaultAction::Partition(vec![ids(1..=n - k), ids(n - k + 1..=n)]),
            ),
            Fault::at_ms(T + CUT, FaultAction::Heal),
        ],
    )
}

const SPLITS: [(u32, u32); 4] = [(5, 2), (5, 1), (7, 3), (9, 2)];

/// The bully's known failure: under partition each side elects its own highest node —
/// split brain while it lasts — and after the heal the two leaders' heartbeats meet, the lower
/// one yields, and the highest id leads alone.
#[test]
fn partition_with_leader_on_small_side_splits_brain_then_heals_to_highest() {
    for (n, k) in SPLITS {
        let what = format!("n={n} small side={k}");
        let report = run(partitioned(n, k, 11), BullyConfig::new(n));
        let m = &report.metrics;
        assert!(m.split_brain, "{what}: {m:?}");
        assert_eq!(m.max_leaders, 2, "{what}");
        // The old leader leads its minority for the whole partition.
        assert!(m.minority_leader_ms >= CUT, "{what}: {m:?}");
        assert_eq!(
            leaders_at(&report, at(T + CUT - 1.0)),
            vec![n - k, n],
            "{what}: both sides lead just before the heal"
        );
        assert_agreed(&report, n, &what);
        assert!(m.elect_ms.unwrap() > CUT, "{what}");
    }
}

/// `quorum` fixes it: the old leader, cut off with a minority, stops hearing a majority's
/// heartbeat acknowledgements and steps down (check-quorum lease) before any majority-side
/// follower can suspect it; no minority node is ever elected; the majority elects its
/// highest; after the heal the highest id leads again.
#[test]
fn quorum_minority_side_never_has_a_leader() {
    for (n, k) in SPLITS {
        for seed in [1, 2, 3] {
            let what = format!("n={n} small side={k} seed={seed}");
            let mut cfg = BullyConfig::new(n);
            cfg.quorum = true;
            let lease = cfg.timing.detect_timeout.as_secs_f64() * 1e3;
            let report = run(partitioned(n, k, seed), cfg);
            // Never two leaders while the partition lasts. (At the heal, the returning
            // highest id declares one flight before the interim leader hears it: the usual
            // bully handover, not a partition effect.)
            assert_eq!(
                max_leaders_between(&report, at(T), at(T + CUT)),
                1,
                "{what}"
            );
            // No minority node takes the leader role while the partition lasts.
            for node in n - k + 1..=n {
                assert!(
                    became_leader(&report, node, at(T))
                        .iter()
                        .all(|&t| t >= at(T + CUT)),
                    "{what}: node {node} led on the minority side"
                );
            }
            // The old leader stepped down within its lease.
            let minority = report.metrics.minority_leader_ms;
            assert!(
                minority <= lease,
                "{what}: minority leader for {minority} ms"
            );
            let during = statuses_at(&report, at(T + lease));
            assert_ne!(during[n as usize - 1].unwrap().role, Role::Leader, "{what}");
            // The majority side elected its highest, which is the only leader before the heal.
            assert_eq!(
                leaders_at(&report, at(T + CUT - 1.0)),
                vec![n - k],
                "{what}"
            );
            for node in 1..=n - k {
                let st = statuses_at(&report, at(T + CUT - 1.0))[node as usize - 1].unwrap();
                assert_eq!(st.leader, Some(NodeId(n - k)), "{what}: node {node}");
            }
            assert_agreed(&report, n, &what);
        }
    }
}

/// The old leader returns. The paper (eager rejoin): a recovered node holds an election, so
/// the highest id takes leadership back. `rejoin = defer`: it hears the interim leader's
/// heartbeat first and joins it as a follower.
#[test]
fn recovered_old_leader_takes_over_unless_rejoin_defers() {
    for n in [3, 5, 8] {
        for rejoin in [Rejoin::Eager, Rejoin::Defer] {
            let what = format!("n={n} rejoin={rejoin}");
            let s = scenario(
                n,
                5,
                vec![
                    Fault::at_ms(T, FaultAction::Crash(Selector::Leader)),
                    Fault::at_ms(T + 1000.0, FaultAction::Recover(Selector::LastCrashed)),
                ],
            );
            let mut cfg = BullyConfig::new(n);
            cfg.rejoin = rejoin;
            let report = run(s, cfg);
            // The interim leader was elected before the recovery.
            assert_eq!(leaders_at(&report, at(T + 999.0)), vec![n - 1], "{what}");
            match rejoin {
                Rejoin::Eager => {
                    assert_agreed(&report, n, &what);
                    assert_eq!(report.metrics.leader_changes, 2, "{what}");
                }
                Rejoin::Defer => {
                    assert_agreed(&report, n - 1, &what);
                    assert_eq!(report.metrics.leader_changes, 1, "{what}");
                    assert!(became_leader(&report, n, at(T)).is_empty(), "{what}");
                }
            }
        }
    }
}

/// Message loss, duplication and reordering do not panic a node, and once loss stops the
/// cluster elects the highest live id — under every combination of options.
#[test]
fn loss_and_reordering_then_eventual_election() {
    for n in [4, 7] {
        for seed in 0..4 {
            for (quorum, epoch, rejoin) in [
                (false, false, Rejoin::Eager),
                (true, false, Rejoin::Eager),
                (false, true, Rejoin::Defer),
                (true, true, Rejoin::Defer),
            ] {
                let what = format!("n={n} seed={seed} quorum={quorum} epoch={epoch} {rejoin}");
                let mut s = SimConfig::new(n, seed);
                s.net.latency = Latency::Uniform {
                    min_ms: 0.2,
                    max_ms: 8.0,
                };
                s.net.fifo = false;
                s.net.loss = 0.25;
                s.net.duplicate = 0.05;
                s.horizon = Duration::from_secs(15);
                s.settle = Duration::from_secs(1);
                s.faults = vec![
                    Fault::at_ms(T, FaultAction::Crash(Selector::Highest)),
                    Fault::at_ms(T + 500.0, FaultAction::Recover(Selector::LastCrashed)),
                    Fault::at_ms(T + 700.0, FaultAction::Crash(Selector::Random)),
                    Fault::at_ms(T + 3000.0, FaultAction::SetLoss(0.0)),
                ];
                let mut cfg = BullyConfig::new(n);
                cfg.quorum = quorum;
                cfg.epoch = epoch;
                cfg.rejoin = rejoin;
                let report = run(s, cfg);
                let highest_live = (1..=n)
                    .rev()
                    .find(|&i| report.final_status[i as usize - 1].is_some())
                    .unwrap();
                let m = &report.metrics;
                assert!(m.converged, "{what}: {m:?}");
                if rejoin != Rejoin::Defer {
                    assert_agreed(&report, highest_live, &what);
                } else {
                    // A deferring node may legitimately follow a lower leader.
                    let l = m.leader.unwrap().0;
                    assert_agreed(&report, l, &what);
                }
                if epoch {
                    let e = report.final_status[m.leader.unwrap().index()]
                        .unwrap()
                        .epoch;
                    assert!(e.is_some_and(|e| e > 0), "{what}");
                }
            }
        }
    }
}

/// `epoch` as a fencing token: across a split brain the two sides' leaders hold different
/// epochs, and after the heal everyone carries the final leader's epoch, the highest seen.
#[test]
fn epoch_increases_with_every_election_and_fences_the_heal() {
    let (n, k) = (5, 2);
    let mut cfg = BullyConfig::new(n);
    cfg.epoch = true;
    let report = run(partitioned(n, k, 4), cfg);
    let before = statuses_at(&report, at(T - 1.0));
    let during = statuses_at(&report, at(T + CUT - 1.0));
    let e0 = before[n as usize - 1].unwrap().epoch.unwrap();
    let low = during[(n - k) as usize - 1].unwrap().epoch.unwrap();
    assert!(low > e0, "the low side's election increased the epoch");
    assert_eq!(during[n as usize - 1].unwrap().epoch, Some(e0));
    assert_agreed(&report, n, "epoch heal");
    let fin = report.final_status[0].unwrap().epoch.unwrap();
    assert!(fin > low);
    for st in &report.final_status {
        assert_eq!(st.unwrap().epoch, Some(fin));
    }
    assert_eq!(report.metrics.same_epoch_leaders, 0);
}

/// Determinism: the same seed gives the same trace, event for event.
#[test]
fn same_seed_same_trace() {
    let mk = || {
        let mut s = partitioned(6, 2, 99);
        s.net.latency = Latency::Exponential { mean_ms: 2.0 };
        s.net.fifo = false;
        s.net.loss = 0.1;
        s.faults.push(Fault::at_ms(
            T + 500.0,
            FaultAction::Crash(Selector::Random),
        ));
        let mut cfg = BullyConfig::new(6);
        cfg.quorum = true;
        cfg.epoch = true;
        run(s, cfg)
    };
    let (a, b) = (mk(), mk());
    assert!(!a.trace.is_empty());
    assert_eq!(a.trace, b.trace);
    assert_eq!(a.metrics, b.metrics);
}
