//! The bully's own test helpers: its scenario, running a trial of it, its message counts and
//! its agreement check. Replaying node statuses from the trace is `election_testing::trace`.

use std::sync::Arc;
use std::time::Duration;

use election_bully::{Bully, BullyConfig};
use election_core::{NodeId, Role};
use election_sim::{Fault, Sim, SimConfig, TrialReport};
use election_testing::trace;

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

/// Messages of `kind` sent at or after `from_ms`.
pub fn sent(report: &TrialReport, kind: &str, from_ms: f64) -> u64 {
    trace::sent_since(report, kind, trace::at(from_ms)) as u64
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
