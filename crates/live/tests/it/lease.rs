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

/// `lease.on_loss = exit` runs live unchanged (the exit is the member's own state, no driver
/// support needed): the holder cut off from the store stops leading at its renew deadline and
/// exits, sends nothing for the restart delay (300 ms here), then starts afresh with a read.
#[test]
fn an_exited_holder_is_silent_for_the_restart_delay_live() {
    use election_lease::OnLoss;
    use election_sim::NodeSet;
    let n = 3;
    let store = Selector::Service(1);
    let mut cfg = LiveConfig::new(n, 7);
    cfg.trial.services = SERVICES;
    let cut = |from, to| {
        Fault::at_ms(
            800.0,
            FaultAction::CutLink {
                from: NodeSet::One(from),
                to: NodeSet::One(to),
            },
        )
    };
    cfg.trial.faults = vec![cut(Selector::Leader, store), cut(store, Selector::Leader)];
    cfg.trial.horizon = Duration::from_secs(3);
    cfg.trial.settle = Duration::from_millis(700);
    cfg.trial.trace = true;
    let mut c = LeaseConfig::new(n);
    c.on_loss = OnLoss::Exit;
    c.restart = (Duration::from_millis(300), Duration::from_millis(300));
    let c = Arc::new(c);
    let r = run_trial(&cfg, move |id| Lease::new(id, c.clone())).unwrap();
    assert_eq!(r.health.rejected(), 0, "{:?}", r.health.notes);
    let old = r
        .metrics
        .fault_log
        .iter()
        .find_map(|(_, a)| match a {
            Applied::CutLink { from, .. } if from[0].0 <= n => Some(from[0]),
            _ => None,
        })
        .expect("the holder was cut off");
    let down_at = r
        .trace
        .iter()
        .find_map(|e| match e.what {
            TraceKind::Status {
                node,
                status: Some(s),
            } if node == old && s.role != Role::Leader && e.at.as_millis_f64() > 800.0 => {
                Some(e.at.as_millis_f64())
            }
            _ => None,
        })
        .expect("it stopped leading");
    let next = r
        .trace
        .iter()
        .find_map(|e| match e.what {
            TraceKind::Send(m) if m.from == old && e.at.as_millis_f64() > down_at => {
                Some(e.at.as_millis_f64())
            }
            _ => None,
        })
        .expect("it reads again after its restart");
    let gap = next - down_at;
    assert!(gap > 290.0 && gap < 500.0, "silent for {gap} ms");
    assert!(r.metrics.leader.is_some_and(|l| l != old));
}
