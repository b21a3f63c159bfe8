//! Lease-based election live (issue #15): the members and the lease store are tasks on their
//! own UDP sockets on loopback, running the same protocol code as in simulation.

use std::sync::Arc;
use std::time::Duration;

use election_core::{NodeId, Role};
use election_lease::{Lease, LeaseConfig, SERVICES};
use election_live::{run_trial, LiveConfig};
use election_sim::{Applied, Fault, FaultAction, Selector, TraceKind};

#[test]
fn lease_holder_crash_a_member_takes_the_lease_live() {
    let n = 5;
    let mut cfg = LiveConfig::new(n, 7);
    cfg.trial.services = SERVICES;
    cfg.trial.faults = vec![Fault::at_ms(800.0, FaultAction::Crash(Selector::Leader))];
    cfg.trial.horizon = Duration::from_secs(6);
    cfg.trial.settle = Duration::from_millis(700);
    cfg.trial.trace = true;
    let c = Arc::new(LeaseConfig::new(n));
    let r = run_trial(&cfg, move |id| Lease::new(id, c.clone())).unwrap();
    let h = &r.health;
    assert_eq!(h.rejected(), 0, "{:?}", h.notes);
    assert_eq!(h.send_errors + h.recv_errors, 0, "{:?}", h.notes);
    assert_eq!(
        r.addresses.len(),
        n as usize + 1,
        "the store has its own socket"
    );
    assert!(r.addresses.iter().all(|a| a.ip().is_loopback()));
    let crashed = r
        .metrics
        .fault_log
        .iter()
        .find_map(|(_, a)| match a {
            Applied::Crash(id) => Some(*id),
            _ => None,
        })
        .expect("the holder crashed");
    assert!(crashed.0 <= n, "the store is never the leader");
    let m = &r.metrics;
    assert!(m.converged, "{m:?}");
    assert!(!m.split_brain);
    let new = m.leader.unwrap();
    assert_ne!(new, crashed);
    // A full lease (150 ms) after the last renewal was seen, plus up to two reads.
    let f = m.failover_ms.unwrap();
    assert!(f > 100.0 && f < 400.0, "failover {f} ms");
    // Members only in the final status; the new holder's epoch is the second transition.
    assert_eq!(r.final_status.len(), n as usize);
    let holder = r.final_status[new.index()].unwrap();
    assert_eq!((holder.role, holder.epoch), (Role::Leader, Some(2)));
    // The store took part: members' datagrams reached it.
    let store = NodeId(n + 1);
    assert!(r
        .trace
        .iter()
        .any(|e| matches!(e.what, TraceKind::Deliver(m) if m.to == store)));
}
