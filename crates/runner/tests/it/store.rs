//! A lease is as available as its store (issue #31): the store can crash, lose its quorum or
//! split, and with `lease.store_nodes` ≥ 2 it is a Raft group (`crates/store`) whose own
//! failover and quorum show up in the lease's availability.

use crate::common;

use common::cell_with_params as cell;
use election_core::{NodeId, Role};
use election_runner::TrialRun;
use election_sim::TraceKind;

fn run(protocol: &str, scenario: &str, params: &str, seed: u64) -> TrialRun {
    cell(protocol, 5, scenario, params).run(seed, true).unwrap()
}

/// The last instant (ms) at which a member was in the leader role, after `from` (none: `from`).
fn last_member_leading_after(run: &TrialRun, from: f64, until: f64) -> Vec<(f64, NodeId)> {
    run.report
        .trace
        .iter()
        .filter(|e| e.at.as_millis_f64() > from && e.at.as_millis_f64() < until)
        .filter_map(|e| match &e.what {
            TraceKind::Status {
                node,
                status: Some(s),
            } if node.0 <= 5 && s.role == Role::Leader => Some((e.at.as_millis_f64(), *node)),
            _ => None,
        })
        .collect()
}

/// Who is in the leader role at instant `t` (ms), by replaying the status changes.
fn leaders_at(run: &TrialRun, t: f64) -> Vec<NodeId> {
    let mut leading = [false; 6];
    for e in &run.report.trace {
        if e.at.as_millis_f64() > t {
            break;
        }
        if let TraceKind::Status { node, status } = &e.what {
            if node.0 <= 5 {
                leading[node.0 as usize] = status.is_some_and(|s| s.role == Role::Leader);
            }
        }
    }
    (1..=5)
        .filter(|&i| leading[i])
        .map(|i| NodeId(i as u32))
        .collect()
}

/// With the store's majority lost the lease has no holder after at most one lease duration
/// (the holder stops within retry + renew deadline of its last renewal, 120 ms < 150 ms), and
/// nobody takes it until the store is back: for the single store and for 3- and 5-endpoint
/// replicated stores.
#[test]
fn with_the_store_quorum_lost_nobody_holds_the_lease_after_one_duration() {
    for stores in [1, 3, 5] {
        for seed in 0..6 {
            let r = run(
                "lease",
                "store-quorum-loss",
                &format!("\"lease.store_nodes\" = {stores}"),
                seed,
            );
            let m = &r.report.metrics;
            assert_eq!(m.faults_skipped, 0, "stores {stores} seed {seed}");
            let t0 = m.reference_ms;
            let duration = 150.0;
            let outage = 1500.0;
            assert!(
                leaders_at(&r, t0 + duration).is_empty(),
                "stores {stores} seed {seed}: a holder {:?} one lease duration after the store lost its quorum",
                leaders_at(&r, t0 + duration)
            );
            let led = last_member_leading_after(&r, t0 + duration, t0 + outage);
            assert!(
                led.is_empty(),
                "stores {stores} seed {seed}: a member led while the store had no quorum: {led:?}"
            );
            assert!(
                m.unavailable_ms >= outage - duration,
                "stores {stores} seed {seed}: unavailable {} ms only",
                m.unavailable_ms
            );
            assert!(
                m.converged,
                "stores {stores} seed {seed}: no holder once the store is back"
            );
        }
    }
}

/// One endpoint of a 3-endpoint store crashing costs the lease at most a store election (its
/// leader's crash) and never a lease duration; the single store's crash stops every renewal for
/// the whole outage.
#[test]
fn a_replicated_store_outlives_one_endpoint_where_a_single_store_does_not() {
    let mut store_leader_lost = 0;
    for seed in 0..12 {
        let single = run("lease", "store-crash", "", seed);
        assert!(
            single.report.metrics.unavailable_ms >= 1500.0 - 150.0,
            "seed {seed}: the single store crashed, yet the lease was unavailable for only {} ms",
            single.report.metrics.unavailable_ms
        );
        let replicated = run("lease", "store-crash", "\"lease.store_nodes\" = 3", seed);
        let m = &replicated.report.metrics;
        assert_eq!(m.faults_skipped, 0);
        assert!(
            m.unavailable_ms < 150.0,
            "seed {seed}: one of three store endpoints crashed and the lease was unavailable for {} ms",
            m.unavailable_ms
        );
        assert_eq!(m.writes.as_ref().unwrap().stale, 0, "seed {seed}");
        assert_eq!(m.same_epoch_leaders, 0, "seed {seed}");
        if m.unavailable_ms > 0.0 {
            store_leader_lost += 1;
            // The store's new leader knew the record (it rides with the entries), so the
            // holder's renewals went on at the version it held: it kept the lease.
            assert_eq!(
                m.leader, replicated.leader_at_fault,
                "seed {seed}: the holder lost the lease to the store's failover"
            );
        }
    }
    // Raft's first leader is whichever endpoint times out first: endpoint 1 leads in some
    // trials, and then the lease waits for the store's election.
    assert!(store_leader_lost > 0, "no trial lost the store's leader");
}

/// A store endpoint cut off from its quorum answers nothing: the holder's member moves to the
/// next endpoint (or loses the lease, and another member takes it once it expired); never two
/// holders at once, never a stale write.
#[test]
fn a_split_store_never_gives_two_holders() {
    for stores in [3, 5] {
        for seed in 0..8 {
            let r = run(
                "lease",
                "store-split",
                &format!("\"lease.store_nodes\" = {stores}"),
                seed,
            );
            let m = &r.report.metrics;
            assert_eq!(m.faults_skipped, 0, "stores {stores} seed {seed}");
            assert!(!m.split_brain, "stores {stores} seed {seed}: split brain");
            assert_eq!(m.writes.as_ref().unwrap().stale, 0);
            assert!(m.converged, "stores {stores} seed {seed}");
        }
    }
}

/// The store's scenarios need a store, and the split needs a replicated one: cells without say
/// why instead of running a scenario that did not happen.
#[test]
fn store_scenarios_say_why_they_cannot_run() {
    let cells = election_runner::SweepSpec::from_toml(
        "protocols = [\"raft\", \"lease\", \"lease+store_nodes=3\"]\nnodes = [5]\nscenarios = [\"store-quorum-loss\", \"store-split\"]\nseeds = 1\n",
    )
    .unwrap()
    .plan()
    .unwrap()
    .cells()
    .unwrap();
    let why = |p: &str, s: &str| {
        let c = cells
            .iter()
            .find(|c| c.protocol.spec == p && c.scenario.name() == s)
            .unwrap();
        c.skipped.clone()
    };
    assert!(why("raft", "store-quorum-loss").is_some_and(|w| w.contains("lease store")));
    assert!(why("lease", "store-quorum-loss").is_none());
    assert!(why("lease", "store-split").is_some_and(|w| w.contains("lease.store_nodes")));
    assert!(why("lease+store_nodes=3", "store-split").is_none());
}
