//! The Rust side of the peer comparison (`benches/peers/compare.sh`): runs the bully
//! `leader-crash` workload through the runner, exactly as `election-bench run` would (with
//! `node.profile=ideal` and `workload.interval_ms=0`: the SimPy model has no node time and no
//! write workload), and prints one JSON line with the simulated messages per wall-clock second
//! and the workload's parameters, written as the arguments `bully_simpy.py` takes so that the
//! SimPy model runs the same workload.
//!
//! ```text
//! cargo run --release --example peer-bully -- [NODES] [MIN_TRIALS] [MIN_SECONDS]
//! ```
//!
//! Trials use seeds 0, 1, 2, ... and run until both minimums are reached (defaults: 20 trials,
//! 1 s), so that short trials are timed over enough work.

use std::time::Instant;

use election_runner::SweepSpec;
use election_sim::Latency;
use serde_json::json;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u32 = args
        .next()
        .map_or(5, |s| s.parse().expect("NODES: a number"));
    let min_trials: u64 = args
        .next()
        .map_or(20, |s| s.parse().expect("MIN_TRIALS: a number"));
    let min_secs: f64 = args
        .next()
        .map_or(1.0, |s| s.parse().expect("MIN_SECONDS: a number"));

    let mut spec = SweepSpec {
        protocols: Some(vec!["bully".into()]),
        nodes: Some(vec![n]),
        scenarios: Some(vec!["leader-crash".into()]),
        ..SweepSpec::default()
    };
    // The SimPy model has neither node time nor the write workload (both came later): switch
    // them off so that both sides simulate the same thing.
    for kv in ["node.profile=ideal", "workload.interval_ms=0"] {
        spec.set(kv).expect("valid parameter");
    }
    let plan = spec.plan().expect("valid plan");
    let cell = plan.cells().expect("valid cell").remove(0);
    let r = &cell.resolved;

    // Warm the caches and the allocator with one trial, then time the rest.
    cell.run(u64::MAX, false).expect("trial runs");
    let (mut messages, mut delivered, mut events, mut converged) = (0u64, 0u64, 0u64, 0u64);
    let mut trials = 0;
    let start = Instant::now();
    while trials < min_trials || start.elapsed().as_secs_f64() < min_secs {
        let run = cell.run(trials, false).expect("trial runs");
        trials += 1;
        let m = &run.report.metrics;
        messages += m.total.sent_total();
        delivered += m.total.delivered;
        events += run.report.events;
        converged += u64::from(m.converged);
    }
    let wall = start.elapsed().as_secs_f64();

    let latency = match r.net.latency {
        Latency::Constant { ms } => vec![
            "--latency".into(),
            "constant".into(),
            "--latency-ms".into(),
            ms.to_string(),
        ],
        Latency::LogNormal { median_ms, sigma } => vec![
            "--latency".to_string(),
            "lognormal".into(),
            "--median-ms".into(),
            median_ms.to_string(),
            "--sigma".into(),
            sigma.to_string(),
        ],
        ref other => panic!("the SimPy model has no {other:?} latency"),
    };
    let t_coord = r.bully.t_coord_ms.unwrap_or(2.0 * r.bully.t_elec_ms);
    let mut simpy_args: Vec<String> = vec!["--n".into(), n.to_string()];
    simpy_args.extend(latency);
    for (flag, v) in [
        ("--heartbeat-ms", r.heartbeat_ms),
        ("--detect-ms", r.detect_timeout_ms),
        ("--jitter-ms", r.detect_jitter_ms),
        ("--t-elec-ms", r.bully.t_elec_ms),
        ("--t-coord-ms", t_coord),
        ("--fault-ms", r.fault_at_ms),
        ("--fault-jitter-ms", r.fault_jitter_ms),
        ("--settle-ms", r.settle_ms),
        ("--horizon-ms", r.horizon_ms),
    ] {
        simpy_args.push(flag.into());
        simpy_args.push(v.to_string());
    }
    println!(
        "{}",
        json!({
            "model": "election-bench",
            "protocol": "bully",
            "scenario": "leader-crash",
            "net": cell.net.name,
            "n": n,
            "trials": trials,
            "messages": messages,
            "delivered": delivered,
            "events": events,
            "messages_per_trial": messages as f64 / trials as f64,
            "converged": converged,
            "wall_s": wall,
            "msgs_per_s": messages as f64 / wall,
            "simpy_args": simpy_args,
        })
    );
}
