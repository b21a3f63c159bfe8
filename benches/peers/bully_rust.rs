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

#[path = "rust_side.rs"]
mod rust_side;

use election_sim::Latency;
use serde_json::json;

fn main() {
    let a = rust_side::args();
    let n = a.n;
    let cell = rust_side::leader_crash("bully", n);
    let r = &cell.resolved;
    let t = rust_side::time_trials(&cell, &a);

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
    simpy_args.extend(rust_side::flags(&[
        ("--heartbeat-ms", r.heartbeat_ms),
        ("--detect-ms", r.detect_timeout_ms),
        ("--jitter-ms", r.detect_jitter_ms),
        ("--t-elec-ms", r.bully.t_elec_ms),
        ("--t-coord-ms", t_coord),
        ("--fault-ms", r.fault_at_ms),
        ("--fault-jitter-ms", r.fault_jitter_ms),
        ("--settle-ms", r.settle_ms),
        ("--horizon-ms", r.horizon_ms),
    ]));
    let mut row = rust_side::row("election-bench", &cell, &t);
    row.insert("simpy_args".into(), json!(simpy_args));
    println!("{}", serde_json::Value::Object(row));
}
