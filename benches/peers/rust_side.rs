//! What the Rust sides of the peer comparisons share (`bully_rust.rs` against SimPy,
//! `raftrs_rust.rs` against turmoil): their arguments, the cell they run, the timed loop of
//! trials and the flag list they hand to the peer. Included by each with `#[path]`.

use std::time::Instant;

use election_runner::{Cell, SweepSpec};

/// `[NODES] [MIN_TRIALS] [MIN_SECONDS]` (defaults 5, 20, 1.0).
pub struct Args {
    pub n: u32,
    pub min_trials: u64,
    pub min_secs: f64,
}

pub fn args() -> Args {
    let mut args = std::env::args().skip(1);
    Args {
        n: args
            .next()
            .map_or(5, |s| s.parse().expect("NODES: a number")),
        min_trials: args
            .next()
            .map_or(20, |s| s.parse().expect("MIN_TRIALS: a number")),
        min_secs: args
            .next()
            .map_or(1.0, |s| s.parse().expect("MIN_SECONDS: a number")),
    }
}

/// `protocol`'s `leader-crash` cell at `n` nodes, as `election-bench run` builds it, with no
/// node time and no write workload: neither peer models them, so both sides simulate the same.
pub fn leader_crash(protocol: &str, n: u32) -> Cell {
    let mut spec = SweepSpec {
        protocols: Some(vec![protocol.into()]),
        nodes: Some(vec![n]),
        scenarios: Some(vec!["leader-crash".into()]),
        ..SweepSpec::default()
    };
    for kv in ["node.profile=ideal", "workload.interval_ms=0"] {
        spec.set(kv).expect("valid parameter");
    }
    let plan = spec.plan().expect("valid plan");
    plan.cells().expect("valid cell").remove(0)
}

/// What the timed trials did.
pub struct Timed {
    pub trials: u64,
    pub messages: u64,
    pub delivered: u64,
    pub events: u64,
    pub converged: u64,
    pub wall_s: f64,
}

/// One warm-up trial (caches, allocator), then trials with seeds 0, 1, 2, ... one after
/// another until both minimums are reached.
pub fn time_trials(cell: &Cell, a: &Args) -> Timed {
    cell.run(u64::MAX, false).expect("trial runs");
    let mut t = Timed {
        trials: 0,
        messages: 0,
        delivered: 0,
        events: 0,
        converged: 0,
        wall_s: 0.0,
    };
    let start = Instant::now();
    while t.trials < a.min_trials || start.elapsed().as_secs_f64() < a.min_secs {
        let run = cell.run(t.trials, false).expect("trial runs");
        t.trials += 1;
        let m = &run.report.metrics;
        t.messages += m.total.sent_total();
        t.delivered += m.total.delivered;
        t.events += run.report.events;
        t.converged += u64::from(m.converged);
    }
    t.wall_s = start.elapsed().as_secs_f64();
    t
}

/// `--flag value` pairs as the peer's arguments.
pub fn flags(pairs: &[(&str, f64)]) -> Vec<String> {
    pairs
        .iter()
        .flat_map(|(flag, v)| [flag.to_string(), v.to_string()])
        .collect()
}

/// The JSON row both sides print, with what is particular to each side added by it.
pub fn row(model: &str, cell: &Cell, t: &Timed) -> serde_json::Map<String, serde_json::Value> {
    let serde_json::Value::Object(m) = serde_json::json!({
        "model": model,
        "protocol": cell.protocol.spec,
        "scenario": "leader-crash",
        "net": cell.net.name,
        "n": cell.nodes,
        "trials": t.trials,
        "messages": t.messages,
        "delivered": t.delivered,
        "events": t.events,
        "messages_per_trial": t.messages as f64 / t.trials as f64,
        "converged": t.converged,
        "wall_s": t.wall_s,
        "msgs_per_s": t.messages as f64 / t.wall_s,
    }) else {
        unreachable!("an object")
    };
    m
}
