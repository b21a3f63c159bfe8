//! A trial's memory, estimated before anything is allocated, so that a size or a parameter
//! beyond reason (`-n 100000`, `flaps=1000000000`) is refused with a usage error naming it and
//! the estimate instead of aborting on an 80 GB allocation.
//!
//! The estimate is deliberately generous (an upper bound for the protocols in this
//! workbench, not a measurement) and counts, for `n` nodes:
//!
//! * `nodes`: the per-link tables, n² × ([`PER_LINK_BYTES`] + [`LINK_OVERRIDE_BYTES`] with
//!   per-link latencies): the FIFO order table (8 bytes a link), the link up/down table, and
//!   per-node protocol state that grows with `n` (vote tallies, the bully detector's scratch
//!   list); plus [`PER_NODE_BYTES`] a node for the node table, timers and the observer.
//! * `flaps`: the flapping scenario's fault timeline, two faults a flap, each held by the
//!   configuration, its copy for the simulator and the event queue.
//! * `work_budget`: messages in flight, at most one per unit of work and, in practice, at most
//!   a broadcast from every node (n² + 16 n) at once; and with a buffered trace (`run
//!   --trace`, `trace` to SVG or Mermaid), up to [`TRACE_EVENTS_PER_WORK`] trace records per
//!   unit of work. `trace --format jsonl` streams its records and buffers none. The horizon
//!   itself allocates nothing: it only lengthens a trial, whose work the budget bounds.
//!
//! A trial whose estimate exceeds [`MEMORY_LIMIT`] (4 GiB) is refused.

use std::mem::size_of;

use election_sim::{Fault, TraceEvent};

use crate::error::{usage, Result};
use crate::params::Resolved;

/// The most one trial may be estimated to need: 4 GiB.
pub const MEMORY_LIMIT: u64 = 4 << 30;

/// Bytes a (directed) link: the FIFO table's last-delivery instant (8), the link table's
/// up/down flag (1), and up to 16 bytes of per-peer protocol state at the sending node.
pub const PER_LINK_BYTES: u64 = 8 + 1 + 16;

/// Extra bytes a link when per-link latency overrides are configured.
pub const LINK_OVERRIDE_BYTES: u64 = 64;

/// Bytes a node: its protocol instance, timer slots, backlog and the observer's vectors.
pub const PER_NODE_BYTES: u64 = 1024;

/// Bytes a queued event (a message in flight).
pub const QUEUED_EVENT_BYTES: u64 = 64;

/// Trace records one unit of work (an event or a message sent) can add at most.
pub const TRACE_EVENTS_PER_WORK: u64 = 2;

/// One trial's estimated memory, by the parameter it grows with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// `(parameter, bytes)`: `nodes`, `flaps`, `work_budget`.
    pub parts: Vec<(&'static str, u64)>,
}

impl Estimate {
    /// The estimate for one trial with `nodes` nodes and parameters `r` (`trace`: the trial
    /// buffers its full trace).
    pub fn new(nodes: u32, r: &Resolved, trace: bool) -> Estimate {
        let n = u64::from(nodes);
        let links = n.saturating_mul(n);
        let per_link = PER_LINK_BYTES
            + if r.net.links.is_empty() {
                0
            } else {
                LINK_OVERRIDE_BYTES
            };
        let node_bytes = links
            .saturating_mul(per_link)
            .saturating_add(n.saturating_mul(PER_NODE_BYTES));
        let fault_bytes = 2 * size_of::<Fault>() as u64 + 8 + QUEUED_EVENT_BYTES;
        let flap_bytes = u64::from(r.flaps)
            .saturating_mul(2)
            .saturating_mul(fault_bytes);
        let budget = r.budget(nodes, r.horizon_ms);
        let in_flight = budget.min(links.saturating_add(n.saturating_mul(16)));
        let mut work_bytes = in_flight.saturating_mul(QUEUED_EVENT_BYTES);
        if trace {
            work_bytes = work_bytes.saturating_add(
                budget
                    .saturating_mul(TRACE_EVENTS_PER_WORK)
                    .saturating_mul(size_of::<TraceEvent>() as u64),
            );
        }
        Estimate {
            parts: vec![
                ("nodes", node_bytes),
                ("flaps", flap_bytes),
                ("work_budget", work_bytes),
            ],
        }
    }

    /// The whole estimate, in bytes.
    pub fn total(&self) -> u64 {
        self.parts
            .iter()
            .fold(0u64, |t, (_, b)| t.saturating_add(*b))
    }

    /// The parameter contributing the most.
    pub fn largest(&self) -> (&'static str, u64) {
        *self
            .parts
            .iter()
            .max_by_key(|(_, b)| *b)
            .expect("three parts")
    }
}

/// `bytes` for people: `1.5 GiB`, `80 GiB`, `12 MiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Refuse a trial with `nodes` nodes and parameters `r` whose estimate is over
/// [`MEMORY_LIMIT`], naming the parameter that contributes most and its value.
pub fn check(nodes: u32, r: &Resolved, trace: bool) -> Result<()> {
    let e = Estimate::new(nodes, r, trace);
    let total = e.total();
    if total <= MEMORY_LIMIT {
        return Ok(());
    }
    let (param, bytes) = e.largest();
    let value = match param {
        "nodes" => nodes.to_string(),
        "flaps" => r.flaps.to_string(),
        _ => r.budget(nodes, r.horizon_ms).to_string(),
    };
    let why = match param {
        "nodes" => "per-link tables grow as nodes²".to_string(),
        "flaps" => "two faults a flap".to_string(),
        _ if trace => {
            "messages in flight and the buffered trace; `trace --format jsonl` streams instead"
                .to_string()
        }
        _ => "messages in flight".to_string(),
    };
    usage!(
        "{param} = {value}: one trial would need about {} of memory ({} of it for {param}: {why}); the limit is {} per trial",
        human(total),
        human(bytes),
        human(MEMORY_LIMIT)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::NetProfile;
    use crate::params::ParamMap;

    fn resolved(sets: &[(&'static str, &str)]) -> Resolved {
        let mut m = ParamMap::new();
        for (k, v) in sets {
            m.insert(k, v.to_string());
        }
        Resolved::resolve(&NetProfile::builtin("lan").unwrap(), &m).unwrap()
    }

    #[test]
    fn normal_trials_are_far_below_the_limit() {
        let r = resolved(&[]);
        for n in [1, 3, 51, 1001] {
            let e = Estimate::new(n, &r, false);
            assert!(e.total() < MEMORY_LIMIT / 4, "{n}: {e:?}");
            check(n, &r, true).unwrap();
        }
        // The n² tables by hand: 51² links × 25 bytes + 51 × 1024.
        assert_eq!(
            Estimate::new(51, &r, false).parts[0],
            ("nodes", 51 * 51 * 25 + 51 * 1024)
        );
    }

    #[test]
    fn a_size_or_parameter_beyond_reason_is_refused_by_name() {
        let r = resolved(&[]);
        let e = check(100_000, &r, false).unwrap_err().to_string();
        assert!(e.contains("nodes = 100000") && e.contains("GiB"), "{e}");
        let r = resolved(&[("flaps", "1000000000")]);
        let e = check(5, &r, false).unwrap_err().to_string();
        assert!(e.contains("flaps = 1000000000"), "{e}");
        let r = resolved(&[("work_budget", "100000000000")]);
        check(5, &r, false).unwrap();
        let e = check(5, &r, true).unwrap_err().to_string();
        assert!(
            e.contains("work_budget = 100000000000") && e.contains("jsonl"),
            "{e}"
        );
        assert_eq!(human(512), "512 bytes");
        assert_eq!(human(3 << 29), "1.5 GiB");
    }
}
