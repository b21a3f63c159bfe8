//! Lease-based election (issue #15) over the simulated network: the client-go rules hold up
//! under every scenario the lease store makes possible, and the clock-rate tolerance a lease
//! promises, `(retry + renew_deadline) / duration` = 0.8, is exactly where split brain begins.

use crate::common;

use common::cell_with_params as cell;
use election_runner::SweepSpec;

const SEEDS: u64 = 40;

/// A crashed holder's lease runs out: another member takes it a lease duration (150 ms) after
/// it last saw the record change, plus up to two jittered reads (20–44 ms each), with the
/// transitions counter (the epoch) one higher. Never two holders.
#[test]
fn leader_crash_a_member_takes_the_lease_after_a_full_duration() {
    let c = cell("lease", 5, "leader-crash", "");
    for seed in 0..SEEDS {
        let run = c.run(seed, false).unwrap();
        let m = &run.report.metrics;
        assert!(m.converged, "seed {seed}");
        assert!(!m.split_brain, "seed {seed}");
        let f = m.failover_ms.expect("a new holder");
        // The member saw the last renewal at most a read before the crash; it then waits the
        // full duration on its own clock, and takes the lease at its next read.
        assert!(
            f > 150.0 - 45.0 && f < 150.0 + 2.0 * 44.0 + 10.0,
            "seed {seed}: {f}"
        );
        let new = m.leader.unwrap();
        assert_ne!(Some(new), run.leader_at_fault, "seed {seed}");
        let epochs: Vec<_> = run
            .report
            .final_status
            .iter()
            .flatten()
            .map(|s| s.epoch)
            .collect();
        assert!(
            epochs.iter().all(|&e| e == Some(2)),
            "seed {seed}: {epochs:?}"
        );
    }
}

/// The store is not a member: the final status lists members only, and the store's id is
/// never anyone's leader.
#[test]
fn the_store_is_not_a_member() {
    let c = cell("lease", 3, "cold-start", "");
    let run = c.run(1, true).unwrap();
    assert_eq!(run.report.final_status.len(), 3);
    assert!(run.report.metrics.converged);
    assert!(run.report.metrics.leader.unwrap().0 <= 3);
    // It does take part in the traffic: every member talks only to it.
    assert!(run.report.trace.iter().any(|e| matches!(
        e.what,
        election_sim::TraceKind::Send(m) if m.to.0 == 4
    )));
}

/// Cut off the store, a holder with a true clock stops leading before anyone else may take
/// the lease: no split brain, and nothing for fencing to do.
#[test]
fn store_cut_holder_the_holder_steps_down_before_a_successor_takes_over() {
    let c = cell("lease", 5, "store-cut-holder", "");
    for seed in 0..SEEDS {
        let m = c.run(seed, false).unwrap().report.metrics;
        assert_eq!(m.faults_skipped, 0, "seed {seed}");
        assert!(!m.split_brain, "seed {seed}");
        assert!(m.leader_changes >= 1, "seed {seed}: someone else took over");
        let w = m.writes.unwrap();
        assert_eq!((w.stale, w.fenced), (0, 0), "seed {seed}");
    }
}

/// The lease's clock-rate tolerance: with the holder's clock at 0.9 of real time (inside the
/// tolerated 0.8) losing the store never yields two holders; at 0.4 (outside) it always does,
/// for `120 / 0.4 = 300` ms after its last renewal minus the ~150–240 ms the successor takes,
/// and the deposed holder keeps writing. Fencing refuses those writes once the new holder's
/// higher token reached the resource; without fencing the resource takes them.
#[test]
fn clock_rate_split_brain_beyond_the_tolerated_ratio_and_none_within() {
    let within = cell("lease", 5, "store-cut-slow-clock-within", "");
    let beyond = cell("lease", 5, "store-cut-slow-clock-beyond", "");
    let unfenced = cell(
        "lease",
        5,
        "store-cut-slow-clock-beyond",
        "\"workload.fencing\" = \"off\"",
    );
    for seed in 0..SEEDS {
        let m = within.run(seed, false).unwrap().report.metrics;
        assert!(!m.split_brain, "within, seed {seed}");
        assert_eq!(m.max_leaders, 1, "within, seed {seed}");
        let w = m.writes.unwrap();
        assert_eq!((w.stale, w.fenced), (0, 0), "within, seed {seed}");
        assert!(m.leader_changes >= 1, "within, seed {seed}");

        let m = beyond.run(seed, false).unwrap().report.metrics;
        assert!(m.split_brain, "beyond, seed {seed}");
        assert_eq!(m.max_leaders, 2, "beyond, seed {seed}");
        // Two holders for the gap between the old one's stretched deadline and the takeover.
        assert!(
            m.split_brain_ms > 30.0 && m.split_brain_ms < 200.0,
            "beyond, seed {seed}: {}",
            m.split_brain_ms
        );
        let w = m.writes.unwrap();
        assert!(w.fenced >= 5, "beyond, seed {seed}: {w:?}");

        let w = unfenced
            .run(seed, false)
            .unwrap()
            .report
            .metrics
            .writes
            .unwrap();
        assert!(
            w.stale >= 5 && w.fenced == 0,
            "unfenced, seed {seed}: {w:?}"
        );
    }
}

/// The seeds' GC-pause story under a lease: the holder pauses 600 ms against a 150 ms lease,
/// another member takes the lease, and the woken holder's due write carries the old
/// transitions count: fenced with tokens, stale without.
#[test]
fn leader_pause_the_woken_holders_write_is_fenced_or_stale() {
    for (fencing, fenced) in [("token", true), ("off", false)] {
        let c = cell(
            "lease",
            5,
            "leader-pause",
            &format!("\"workload.fencing\" = \"{fencing}\""),
        );
        for seed in 0..10 {
            let m = c.run(seed, false).unwrap().report.metrics;
            assert!(m.leader_changes >= 1, "seed {seed}");
            let w = m.writes.unwrap();
            if fenced {
                assert!(w.fenced >= 1 && w.stale == 0, "seed {seed}: {w:?}");
            } else {
                assert!(w.stale >= 1 && w.fenced == 0, "seed {seed}: {w:?}");
            }
        }
    }
}

/// A slow store serves a few members fine; past its capacity (9 members reading every
/// 20–44 ms against 5 ms per request) the holder's renewals queue past the renew deadline and
/// leadership changes hands.
#[test]
fn store_slow_starves_renewals_only_past_the_stores_capacity() {
    let small = cell("lease", 3, "store-slow", "");
    let big = cell("lease", 9, "store-slow", "");
    for seed in 0..10 {
        let m = small.run(seed, false).unwrap().report.metrics;
        assert_eq!(m.leader_changes, 0, "3 nodes, seed {seed}");
        let m = big.run(seed, false).unwrap().report.metrics;
        assert!(m.leader_changes >= 1, "9 nodes, seed {seed}");
        assert!(!m.split_brain, "9 nodes, seed {seed}");
    }
}

/// Partitions split members only: the store stays reachable from both sides, so the holder
/// on the minority side keeps its lease and nobody else takes it.
#[test]
fn partition_leader_minority_does_not_depose_a_lease_holder() {
    let c = cell("lease", 5, "partition-leader-minority", "");
    for seed in 0..10 {
        let run = c.run(seed, false).unwrap();
        let m = &run.report.metrics;
        assert_eq!(m.leader_changes, 0, "seed {seed}");
        assert!(!m.split_brain, "seed {seed}");
        assert_eq!(m.leader, run.leader_at_fault, "seed {seed}");
        // Every member still reaches the store, through which they all hear the holder.
        assert_eq!(m.unavailable_ms, 0.0, "seed {seed}");
    }
}

/// With every detector off but the lowest node's forced suspicion, the others keep reading the
/// record and following; only the lowest takes the lease, once it expired by its own clock.
#[test]
fn leader_crash_lowest_detects_only_the_lowest_takes_the_lease() {
    let c = cell("lease", 5, "leader-crash-lowest-detects", "");
    for seed in 0..10 {
        let run = c.run(seed, false).unwrap();
        let m = &run.report.metrics;
        assert!(m.converged, "seed {seed}");
        let lowest_live = if run.leader_at_fault == Some(election_core::NodeId(1)) {
            2
        } else {
            1
        };
        assert_eq!(m.leader.map(|l| l.0), Some(lowest_live), "seed {seed}");
        let f = m.failover_ms.unwrap();
        assert!(
            (150.0..150.0 + 2.0 * 44.0 + 10.0).contains(&f),
            "seed {seed}: {f}"
        );
    }
}

/// The k8s profile is client-go's real defaults: the first holder is elected at once from an
/// empty record, and a crash costs the full 15 s lease.
#[test]
fn k8s_profile_uses_the_real_defaults() {
    let c = cell("lease+profile=k8s", 3, "leader-crash", "");
    let m = c.run(0, false).unwrap().report.metrics;
    let f = m.failover_ms.unwrap();
    assert!(f > 13_000.0 && f < 15_000.0 + 2.0 * 4_400.0 + 100.0, "{f}");
}

/// The k8s profile runs the whole trial at Kubernetes' time scale: the fault comes 120 to 150 s
/// in (four of its 30 s detection windows, give or take one),
/// a partition lasts 5 windows of 30 s, so a holder whose clock runs slow past the lease's
/// tolerance keeps acting for seconds, not milliseconds, and a crash is followed to its end
/// instead of being cut by a 20 s horizon. An explicit value still wins.
#[test]
fn k8s_profile_runs_every_scenario_time_at_its_scale() {
    let c = cell("lease+profile=k8s", 5, "partition-leader-minority", "");
    let run = c.run(0, false).unwrap();
    let faults: Vec<f64> = run.sim.faults.iter().map(|f| f.at_ms).collect();
    assert!(
        faults[0] >= 120_000.0 && faults[0] <= 150_000.0,
        "{faults:?}"
    );
    let outage = faults[1] - faults[0];
    assert!((outage - 5.0 * 30_000.0).abs() < 1.0, "{faults:?}");

    // The holder's clock at 0.4 of real time: two holders act at once for about a lease
    // (15 s less what the slow clock already counted), 100 times the scaled profile's.
    let beyond = |spec: &str| {
        cell(spec, 5, "store-cut-slow-clock-beyond", "")
            .run(0, false)
            .unwrap()
            .report
            .metrics
            .split_brain_ms
    };
    let (scaled, k8s) = (beyond("lease"), beyond("lease+profile=k8s"));
    assert!(scaled > 50.0 && scaled < 150.0, "{scaled}");
    assert!(
        k8s > 50.0 * scaled && k8s < 150.0 * scaled,
        "{scaled} {k8s}"
    );

    // A crash at n = 51 is followed to a new holder (a 15 s lease under a 20 s horizon was not).
    let m = cell("lease+profile=k8s", 51, "lossy-leader-crash", "")
        .run(0, false)
        .unwrap()
        .report
        .metrics;
    assert!(m.converged && m.failover_ms.unwrap() > 13_000.0, "{m:?}");

    let set = cell(
        "lease+profile=k8s",
        3,
        "leader-crash",
        "fault_at_ms = 30000",
    );
    let run = set.run(0, false).unwrap();
    assert!(run.sim.faults[0].at_ms < 40_000.0, "{:?}", run.sim.faults);
}

/// The store scenarios run only for a protocol that has a store; the others' cells are
/// skipped and say why.
#[test]
fn store_scenarios_are_skipped_for_protocols_without_a_store() {
    let toml = "protocols = [\"raft\", \"lease\"]\nnodes = [3]\nscenarios = [\"store-cut-holder\"]\nseeds = 1\n";
    let cells = SweepSpec::from_toml(toml)
        .unwrap()
        .plan()
        .unwrap()
        .cells()
        .unwrap();
    assert!(cells[0].skipped.as_deref().unwrap().contains("lease store"));
    assert!(cells[1].skipped.is_none());
}

/// Same configuration and seed, same trial, byte for byte.
#[test]
fn lease_trials_are_deterministic() {
    let c = cell("lease", 7, "store-cut-slow-clock-beyond", "");
    let a = c.run(3, true).unwrap();
    let b = c.run(3, true).unwrap();
    assert_eq!(a.row, b.row);
    assert_eq!(
        format!("{:?}", a.report.trace),
        format!("{:?}", b.report.trace)
    );
}

/// A vanished API server (kubernetes/kubernetes#125530): under `k8s-lease` with a store of
/// three endpoints (an HA control plane's API servers) every member stays
/// on its silent connection until client-go's HTTP/2 health check gives it up (45 s), so the
/// holder misses its renew deadline and nobody can take the lease meanwhile; a client that
/// moves at its next request (`reconnect_ms = 0`, etcd's balancer) loses only the store's own
/// re-election.
#[test]
fn a_vanished_store_endpoint_strands_k8s_clients_until_their_health_check() {
    for seed in 0..4 {
        let stuck = cell("k8s-lease+store_nodes=3", 3, "store-endpoint-vanish", "")
            .run(seed, false)
            .unwrap()
            .report
            .metrics;
        assert!(stuck.converged, "seed {seed}: {stuck:?}");
        assert!(
            (30_000.0..50_000.0).contains(&stuck.unavailable_ms),
            "seed {seed}: {}",
            stuck.unavailable_ms
        );
        assert!(stuck.leader_changes >= 1, "seed {seed}");
        let moved = cell(
            "k8s-lease+store_nodes=3+reconnect_ms=0",
            3,
            "store-endpoint-vanish",
            "",
        )
        .run(seed, false)
        .unwrap()
        .report
        .metrics;
        assert!(moved.converged, "seed {seed}: {moved:?}");
        assert!(
            moved.unavailable_ms < 5_000.0,
            "seed {seed}: {}",
            moved.unavailable_ms
        );
    }
    // The bundle is the lease with its options: written out, it is the same spec.
    let bundle = election_runner::protocol::ProtocolSpec::parse("k8s-lease").unwrap();
    let spelled = election_runner::protocol::ProtocolSpec::parse("lease+profile=k8s").unwrap();
    assert_eq!(bundle.effective_options(), spelled.effective_options());
    let over = election_runner::protocol::ProtocolSpec::parse("k8s-lease+profile=scaled").unwrap();
    assert_eq!(over.options.get("lease.profile").unwrap(), "scaled");
}
