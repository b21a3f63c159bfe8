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
//!   configuration, its copy for the simulator and the event queue ([`PER_FLAP_BYTES`],
//!   measured).
//! * `work_budget`: messages in flight, at most one per unit of work and, in practice, at most
//!   a broadcast from every node (n² + 16 n) at once; and with a buffered trace (`run
//!   --trace`, `trace` to SVG or Mermaid), up to [`TRACE_EVENTS_PER_WORK`] trace records per
//!   unit of work. `trace --format jsonl` streams its records and buffers none. The horizon
//!   itself allocates nothing: it only lengthens a trial, whose work the budget bounds; a
//!   budget that follows from the horizon is itself bounded ([`MAX_TRIAL_WORK`]).
//!
//! A trial whose estimate exceeds [`MEMORY_LIMIT`] (4 GiB) is refused.

use std::mem::size_of;

use election_sim::TraceEvent;

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

/// Bytes a flap (two faults), measured: 8 million flaps peak at 6.1 GB, 762 bytes a flap (each
/// fault is held by the configuration, the simulator's copy, the timeline's keys and the event
/// queue, in vectors that grow by doubling); rounded up. Queuing them all at once also bounds
/// flaps by the event queue (2^24 events): at this size the memory limit refuses first.
pub const PER_FLAP_BYTES: u64 = 1024;

/// The most work (events processed plus messages sent) a trial may be budgeted when the
/// budget follows from its length (`work_budget` unset): 4 × 10^9 units. The default budget
/// of an hour of `steady-noise` is at most 3.6 × 10^9 at any size (20 million per 20 s, 180
/// times); `horizon_ms = 1e12` (31 years) would be budgeted ten thousand times more.
pub const MAX_TRIAL_WORK: u64 = 4_000_000_000;

/// The work a refused trial is told it may take instead: 3 × 10^8 units, about a minute of one
/// core (the simulator does roughly 5 million units of work a second: [`MAX_TRIAL_WORK`] ran
/// about 12 minutes, issue 47). A minute a trial is what "reasonable" means here: a sweep of a
/// few cells and seeds still finishes within the hour.
pub const REASONABLE_TRIAL_WORK: u64 = 300_000_000;

/// The longest trial (its horizon, ms) whose default work budget with `nodes` nodes stays
/// within [`REASONABLE_TRIAL_WORK`] (the budget grows with the horizon past 20 s).
pub fn reasonable_horizon_ms(r: &Resolved, nodes: u32) -> f64 {
    let per = election_sim::SimConfig::default_budget(nodes) as f64;
    (REASONABLE_TRIAL_WORK as f64 / per * 20_000.0 * r.time_scale).floor()
}

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
        let flap_bytes = u64::from(r.flaps).saturating_mul(PER_FLAP_BYTES);
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

/// Bytes a trial row held in memory: the row with its strings, and the task that made it.
/// A sweep holds a whole cell's rows at once (to write it, and to summarize it).
pub const ROW_BYTES: u64 = 1024;

/// The most seeds a cell may have: its rows must fit in [`MEMORY_LIMIT`] (4,194,304).
pub const MAX_SEEDS: u64 = MEMORY_LIMIT / ROW_BYTES;

/// The most trials one sweep or exploration may run: 10^9, about six thousand times the
/// default sweep (162,400 trials), days of work on any machine.
pub const MAX_TRIALS: u64 = 1_000_000_000;

/// Refuse more seeds a cell than its rows can be held for, with the estimate.
pub fn check_seeds(seeds: u64) -> Result<()> {
    if seeds <= MAX_SEEDS {
        return Ok(());
    }
    usage!(
        "seeds = {seeds}: a cell's trial rows are held in memory at once (to write and summarize \
         it), about {} for {seeds} seeds at {ROW_BYTES} bytes a row; the limit is {}, so at \
         most {MAX_SEEDS} seeds a cell",
        human(seeds.saturating_mul(ROW_BYTES)),
        human(MEMORY_LIMIT)
    )
}

/// `units` (cells, or patterns) × `seeds` trials, refused above [`MAX_TRIALS`] with the
/// count; `what` names the units.
pub fn check_trials(units: u64, seeds: u64, what: &str) -> Result<u64> {
    match units.checked_mul(seeds) {
        Some(t) if t <= MAX_TRIALS => Ok(t),
        t => usage!(
            "{units} {what} × {seeds} seeds = {} trials; one run does at most {MAX_TRIALS} \
             (the default sweep runs 162400): fewer seeds, or split it",
            t.map_or_else(|| format!("more than {}", u64::MAX), |t| t.to_string())
        ),
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
    if r.work_budget.is_none() {
        let budget = r.budget(nodes, r.horizon_ms);
        if budget > MAX_TRIAL_WORK {
            // A steady-state scenario's horizon is fault_at_ms + fault_jitter_ms + steady_ms.
            let start = r.fault_at_ms + r.fault_jitter_ms;
            let fit = reasonable_horizon_ms(r, nodes);
            let (param, shorter) = if r.horizon_ms == start + r.steady_ms {
                let s = crate::results::fmt_ms(r.steady_ms);
                (
                    format!("steady_ms = {s}"),
                    format!(
                        "steady_ms = {}",
                        crate::results::fmt_ms((fit - start).max(0.0))
                    ),
                )
            } else {
                let h = crate::results::fmt_ms(r.horizon_ms);
                (
                    format!("horizon_ms = {h}"),
                    format!("horizon_ms = {}", crate::results::fmt_ms(fit)),
                )
            };
            return usage!(
                "{param}: a trial of {} ms of simulated time with {nodes} nodes would be \
                 budgeted {budget} units of work ({} per 20 s); at most {MAX_TRIAL_WORK} a \
                 trial. For a trial that finishes in about a minute ({REASONABLE_TRIAL_WORK} \
                 units, at roughly 5 million a second): {shorter} or less, or an explicit \
                 work_budget = {REASONABLE_TRIAL_WORK} (the trial stops there, marked \
                 budget_exceeded)",
                crate::results::fmt_ms(r.horizon_ms),
                r.budget(nodes, 20_000.0)
            );
        }
    }
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

    /// 8 million flaps were measured at 6.1 GB while the estimate said 4 GiB (and between 8.4
    /// and 12.9 million the event queue panicked): the estimate now covers the measurement, so
    /// the limit refuses them first.
    #[test]
    fn flaps_are_counted_at_their_measured_size() {
        let r = resolved(&[("flaps", "8000000")]);
        let e = Estimate::new(5, &r, false);
        assert!(e.parts[1].1 >= 6_100_000_000, "{e:?}");
        let msg = check(5, &r, false).unwrap_err().to_string();
        assert!(msg.contains("flaps = 8000000"), "{msg}");
        // Below the event queue's 2^24 events (two a flap) whatever else the trial holds.
        let max_flaps = MEMORY_LIMIT / PER_FLAP_BYTES;
        assert!(2 * max_flaps < 1 << 24);
        check(5, &resolved(&[("flaps", "100000")]), false).unwrap();
    }

    /// A horizon up to the documented 1e12 ms ran for hours; its budget is now estimated and
    /// refused by name (steady_ms for steady-noise), unless the work is bounded explicitly.
    #[test]
    fn a_trial_too_long_to_finish_is_refused_by_name() {
        let r = resolved(&[("horizon_ms", "1e12")]);
        let e = check(5, &r, false).unwrap_err().to_string();
        assert!(e.starts_with("horizon_ms = 1000000000000:"), "{e}");
        // Issue 47: the refusal suggested 4 × 10^9 units, about 12 minutes a trial; it now
        // suggests a horizon and a budget of about a minute, and the horizon's budget fits.
        let fit = reasonable_horizon_ms(&r, 5);
        assert_eq!(fit, 12_000_000.0);
        assert!(e.contains("horizon_ms = 12000000 or less"), "{e}");
        assert!(e.contains("work_budget = 300000000"), "{e}");
        let shorter = resolved(&[("horizon_ms", "12000000")]);
        assert!(shorter.budget(5, shorter.horizon_ms) <= REASONABLE_TRIAL_WORK);
        check(5, &shorter, false).unwrap();
        let r = resolved(&[("horizon_ms", "1e12"), ("work_budget", "300000000")]);
        check(5, &r, false).unwrap();
        let r = resolved(&[("horizon_ms", "1e12"), ("work_budget", "1000000")]);
        check(5, &r, false).unwrap();
        let sc = crate::scenario::Scenario::builtin("steady-noise").unwrap();
        let r = resolved(&[("steady_ms", "1e12")]).for_scenario(&sc);
        let e = check(5, &r, false).unwrap_err().to_string();
        assert!(e.starts_with("steady_ms = 1000000000000:"), "{e}");
        let start = r.fault_at_ms + r.fault_jitter_ms;
        let want = crate::results::fmt_ms(reasonable_horizon_ms(&r, 5) - start);
        assert!(e.contains(&format!("steady_ms = {want} or less")), "{e}");
        // The default hour of steady-noise runs at any size.
        let r = resolved(&[]).for_scenario(&sc);
        for n in [3, 51, 1001] {
            assert!(r.budget(n, r.horizon_ms) <= MAX_TRIAL_WORK);
        }
    }

    #[test]
    fn seeds_and_trials_are_bounded_with_an_estimate() {
        check_seeds(MAX_SEEDS).unwrap();
        for s in [MAX_SEEDS + 1, 1 << 32, u64::MAX] {
            let e = check_seeds(s).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("seeds = {s}:")) && e.contains("GiB"),
                "{e}"
            );
        }
        assert_eq!(check_trials(10, 7, "cells").unwrap(), 70);
        let e = check_trials(2, u64::MAX, "cells").unwrap_err().to_string();
        assert!(e.contains("more than"), "{e}");
        assert!(check_trials(1000, 1_000_001, "cells").is_err());
    }
}
