//! Shared helpers for the bully's simulator tests: running a trial, counting sent messages
//! from the trace, and replaying node statuses.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use election_bully::{Bully, BullyConfig};
use election_core::{NodeId, Role, Status, Time};
use election_sim::{Fault, Sim, SimConfig, TraceKind, TrialReport};

/// The one-way latency of the constant-latency scenarios, in ms.
pub const L: f64 = 1.0;

/// A traced trial of `n` nodes on a reliable 1 ms network with the given faults.
pub fn scenario(n: u32, seed: u64, faults: Vec<Fault>) -> SimConfig {
    let mut s = SimConfig::new(n, seed);
    s.faults = faults;
    s.horizon = Duration::from_secs(10);
    s.settle = Duration::from_secs(1);
    s.trace = true;
    s
}

/// Runs one trial of the bully with `cfg` on every node.
pub fn run(sim: SimConfig, cfg: BullyConfig) -> TrialReport {
    cfg.validate().expect("valid bully config");
    let cfg = Arc::new(cfg);
    Sim::new(sim, |id| Bully::new(id, cfg.clone()))
        .expect("valid sim config")
        .run()
}

/// Milliseconds as a simulator instant.
pub fn at(ms: f64) -> Time {
    Time((ms * 1e6).round() as u64)
}

/// Messages of `kind` sent at or after `from_ms`.
pub fn sent(report: &TrialReport, kind: &str, from_ms: f64) -> u64 {
    let from = at(from_ms);
    report
        .trace
        .iter()
        .filter(|e| e.at >= from && matches!(&e.what, TraceKind::Send(m) if m.kind == kind))
        .count() as u64
}

/// Every node's status at instant `t` (after all events at `t`), replayed from the trace.
pub fn statuses_at(report: &TrialReport, t: Time) -> Vec<Option<Status>> {
    let mut st = vec![None; report.final_status.len()];
    for e in report.trace.iter().take_while(|e| e.at <= t) {
        if let TraceKind::Status { node, status } = &e.what {
            st[node.index()] = *status;
        }
    }
    st
}

/// The nodes in the leader role at instant `t`.
pub fn leaders_at(report: &TrialReport, t: Time) -> Vec<u32> {
    statuses_at(report, t)
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_some_and(|s| s.role == Role::Leader))
        .map(|(i, _)| i as u32 + 1)
        .collect()
}

/// Instants at or after `from` at which `node` entered the leader role.
pub fn became_leader(report: &TrialReport, node: u32, from: Time) -> Vec<Time> {
    report
        .trace
        .iter()
        .filter(|e| e.at >= from)
        .filter_map(|e| match &e.what {
            TraceKind::Status {
                node: who,
                status: Some(s),
            } if who.0 == node && s.role == Role::Leader => Some(e.at),
            _ => None,
        })
        .collect()
}

/// Asserts that the trial ended with `leader` leading and every live node naming it.
pub fn assert_agreed(report: &TrialReport, leader: u32, what: &str) {
    let m = &report.metrics;
    assert!(m.converged, "{what}: not converged: {m:?}");
    assert_eq!(m.leader, Some(NodeId(leader)), "{what}: agreed leader");
    for (i, st) in report.final_status.iter().enumerate() {
        let Some(st) = st else { continue };
        assert_eq!(st.leader, Some(NodeId(leader)), "{what}: node {}", i + 1);
        let role = if i as u32 + 1 == leader {
            Role::Leader
        } else {
            Role::Follower
        };
        assert_eq!(st.role, role, "{what}: node {}", i + 1);
    }
}

/// The most nodes in the leader role at once during `[from, to)`.
pub fn max_leaders_between(report: &TrialReport, from: Time, to: Time) -> usize {
    let mut st = statuses_at(report, from);
    let count = |st: &[Option<Status>]| {
        st.iter()
            .filter(|s| s.is_some_and(|s| s.role == Role::Leader))
            .count()
    };
    let mut max = count(&st);
    for e in report.trace.iter().filter(|e| e.at > from && e.at < to) {
        if let TraceKind::Status { node, status } = &e.what {
            st[node.index()] = *status;
            max = max.max(count(&st));
        }
    }
    max
}
