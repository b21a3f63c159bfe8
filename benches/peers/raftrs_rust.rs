//! election-bench's side of the turmoil comparison (`benches/peers/compare.sh`, `PEERS=turmoil`):
//! runs the `raftrs` family (raft-rs 0.7 behind our `Protocol` contract) under `leader-crash`
//! through the runner, exactly as `election-bench run` would, with `node.profile=ideal` and
//! `workload.interval_ms=0` (the turmoil peer, `benches/peers/turmoil`, has no node time and no
//! client writes), and prints one JSON line: simulated messages and trials per wall-clock
//! second, and the workload's parameters as the arguments the turmoil peer takes
//! (`turmoil_args`), so that both sides run the same election.
//!
//! ```text
//! cargo run --release --example peer-raftrs -- [NODES] [MIN_TRIALS] [MIN_SECONDS]
//! ```
//!
//! Trials use seeds 0, 1, 2, ... and run until both minimums are reached (defaults: 20 trials,
//! 1 s), one after another on one thread, after one unmeasured warm-up trial.
//!
//! What is the same on both sides: raft-rs 0.7 (`RawNode` over `MemStorage`, no pre-vote, no
//! CheckQuorum), the tick (`raftrs.tick_ms` = 50 ms) and the tick counts derived from it
//! (heartbeat every tick, randomized election timeout of 3-5 ticks, overwritten from a seeded
//! generator), each member's ticker started in its own drawn phase, the fault instant
//! (`fault_at_ms` + U[0, `fault_jitter_ms`], held until there is a quorum leader), the crash of
//! the quorum leader, and the end rule (a quorum leader held for the longer of `settle_ms` and
//! the verdict's hold span after the crash, or the horizon).
//!
//! What still differs (see `benches/README.md`, "peers/: against turmoil"):
//! - latency: ours draws each message from the `lan` log-normal (median 0.25 ms, σ 0.3) and
//!   delivers it at that instant; turmoil draws latency in whole milliseconds and delivers at
//!   its 1 ms steps, so the peer sends every datagram with 250 µs (the median), which arrives
//!   at the next step;
//! - messages: ours hands the `eraftpb::Message` value to the receiver; turmoil's side encodes
//!   it with protobuf into a datagram and decodes it;
//! - time: ours is event-driven (a trial costs its events); turmoil steps every host's tokio
//!   runtime every 1 ms of simulated time, busy or idle;
//! - the observer: ours updates the quorum leader at every status change; the turmoil driver
//!   reads the members' status after each 1 ms step.

#[path = "rust_side.rs"]
mod rust_side;

use election_raftrs::RaftrsConfig;
use election_runner::params::Resolved;
use election_sim::Latency;
use serde_json::json;

fn main() {
    let a = rust_side::args();
    let n = a.n;
    let cell = rust_side::leader_crash("raftrs", n);
    let r = &cell.resolved;
    assert!(
        !r.raftrs.pre_vote && !r.raftrs.check_quorum,
        "the turmoil peer runs raft-rs without pre-vote and CheckQuorum"
    );
    let t = rust_side::time_trials(&cell, &a);

    // The tick counts exactly as the family derives them.
    let mut c = RaftrsConfig::with_timing(n, r.timing());
    c.tick = Resolved::duration(r.raftrs.tick_ms);
    let ticks = c.ticks();
    // turmoil has one latency per message in whole ms above its minimum: the profile's median
    // (or its constant), see the module docs.
    let latency_us = match r.net.latency {
        Latency::Constant { ms } => ms * 1e3,
        Latency::LogNormal { median_ms, .. } => median_ms * 1e3,
        ref other => panic!("the turmoil peer has no {other:?} latency"),
    };
    let turmoil_args = rust_side::flags(&[
        ("--tick-ms", r.raftrs.tick_ms),
        ("--heartbeat-ticks", ticks.heartbeat as f64),
        ("--election-ticks", ticks.election as f64),
        ("--election-max-ticks", ticks.election_max as f64),
        ("--fault-ms", r.fault_at_ms),
        ("--fault-jitter-ms", r.fault_jitter_ms),
        // The trial ends after the longer of the settle window and the verdict's hold span.
        ("--settle-ms", r.settle_ms.max(r.hold_ms())),
        ("--horizon-ms", r.horizon_ms),
        ("--latency-us", latency_us),
    ]);
    let mut row = rust_side::row("election-bench-raftrs", &cell, &t);
    row.insert("trials_per_s".into(), json!(t.trials as f64 / t.wall_s));
    row.insert("timing".into(), json!(c.describe()));
    row.insert("turmoil_args".into(), json!(turmoil_args));
    println!("{}", serde_json::Value::Object(row));
}
