//! The lease protocol on the simulator, through the service-endpoint contract: the store is
//! node `n + 1`, crashable and recoverable like any node, and never counted as a member.

use std::sync::Arc;
use std::time::Duration;

use election_core::{NodeId, Role};
use election_lease::{Lease, LeaseConfig, SERVICES};
use election_sim::{Applied, Fault, FaultAction, NodeSet, Selector, Sim, SimConfig, TrialReport};

const N: u32 = 5;
const STORE: Selector = Selector::Service(1);

fn run(seed: u64, faults: Vec<Fault>) -> TrialReport {
    let mut s = SimConfig::new(N, seed);
    s.services = SERVICES;
    s.horizon = Duration::from_secs(4);
    s.settle = Duration::from_millis(600);
    s.faults = faults;
    let c = Arc::new(LeaseConfig::new(N));
    Sim::new(s, move |id| Lease::new(id, c.clone()))
        .unwrap()
        .run()
}

/// Always: at most one holder per transitions count; the store never leads.
fn assert_one_holder_per_epoch(r: &TrialReport) {
    assert_eq!(r.metrics.same_epoch_leaders, 0);
    assert_eq!(r.final_status.len(), N as usize, "members only");
}

/// Cold start: every member reads the empty record at once and races to take it; the store's
/// compare-and-swap lets exactly one win, with transitions 1, and the others follow it.
#[test]
fn cold_start_one_compare_and_swap_wins() {
    for seed in 0..30 {
        let r = run(seed, vec![]);
        assert!(r.metrics.converged, "seed {seed}");
        let l = r.metrics.leader.unwrap();
        assert!(l.0 <= N);
        for (i, s) in r.final_status.iter().enumerate() {
            let s = s.unwrap();
            assert_eq!(s.leader, Some(l), "seed {seed} node {}", i + 1);
            assert_eq!(s.epoch, Some(1), "seed {seed} node {}", i + 1);
            assert_eq!(s.role == Role::Leader, NodeId::from_index(i) == l);
        }
        assert_one_holder_per_epoch(&r);
    }
}

/// The store crashes (its record is on stable storage, like etcd's) and recovers 400 ms later.
/// Meanwhile nobody can renew or read: the holder stops leading at its renew deadline and
/// nobody takes over. When the store is back, the record still names the old holder. The old
/// holder takes it back at once (client-go: a record naming oneself is renewed, not waited
/// out), keeping the transitions count; but so may any member, because nothing changed during
/// the outage and it last saw the record change more than a lease duration ago (client-go's
/// rule counts from the observed change, so an API-server outage longer than the lease hands
/// the lease to whoever asks first). Whoever wins the compare-and-swap, one holder.
#[test]
fn a_store_crash_stops_the_holder_and_the_recovered_record_brings_a_holder_back() {
    let (mut kept, mut moved) = (0, 0);
    for seed in 0..20 {
        let r = run(
            seed,
            vec![
                Fault::at_ms(1000.0, FaultAction::Crash(STORE)),
                Fault::at_ms(1400.0, FaultAction::Recover(Selector::LastCrashed)),
            ],
        );
        let log = &r.metrics.fault_log;
        assert!(
            matches!(log[0].1, Applied::Crash(id) if id == NodeId(N + 1)),
            "{log:?}"
        );
        assert!(matches!(log[1].1, Applied::Recover(id) if id == NodeId(N + 1)));
        assert_eq!(r.metrics.faults_skipped, 0);
        let before = r.metrics.leader_at_reference.expect("a holder before");
        assert!(r.metrics.converged, "seed {seed}");
        let after = r.metrics.leader.unwrap();
        let s = r.final_status[after.index()].unwrap();
        if after == before {
            kept += 1;
            assert_eq!((s.role, s.epoch), (Role::Leader, Some(1)), "seed {seed}");
        } else {
            moved += 1;
            assert_eq!((s.role, s.epoch), (Role::Leader, Some(2)), "seed {seed}");
        }
        // It did stop leading while the store was down: someone noticed no leader.
        assert!(r.metrics.unavailable_ms > 100.0, "seed {seed}");
        assert!(!r.metrics.split_brain, "seed {seed}");
        assert_one_holder_per_epoch(&r);
    }
    assert!(kept > 0 && moved > 0, "kept {kept}, moved {moved}");
}

/// Selectors other than `Service` never pick the store: crashing "the highest" crashes
/// member n, and cutting "all" from the store leaves nobody able to take the lease.
#[test]
fn member_selectors_never_pick_the_store() {
    let r = run(
        3,
        vec![Fault::at_ms(1000.0, FaultAction::Crash(Selector::Highest))],
    );
    assert!(matches!(r.metrics.fault_log[0].1, Applied::Crash(id) if id == NodeId(N)));
    let r = run(
        3,
        vec![
            Fault::at_ms(
                1000.0,
                FaultAction::CutLink {
                    from: NodeSet::All,
                    to: NodeSet::One(STORE),
                },
            ),
            Fault::at_ms(1000.0, FaultAction::Crash(Selector::Leader)),
        ],
    );
    match &r.metrics.fault_log[0].1 {
        Applied::CutLink { from, to } => {
            assert_eq!(from.len(), N as usize);
            assert_eq!(to, &vec![NodeId(N + 1)]);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        !r.metrics.converged,
        "nobody reaches the store: no new holder"
    );
    assert_eq!(r.metrics.leader_changes, 0);
}

/// A configuration naming a service endpoint the protocol does not have is refused by field.
#[test]
fn a_store_selector_without_a_store_is_a_config_error() {
    let mut s = SimConfig::new(3, 0);
    s.faults = vec![Fault::at_ms(10.0, FaultAction::Crash(STORE))];
    let e = s.validate().unwrap_err().to_string();
    assert!(
        e.contains("faults[0].node") && e.contains("no service endpoint"),
        "{e}"
    );
}
