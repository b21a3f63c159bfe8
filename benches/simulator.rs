//! Wall-clock cost of the simulator itself.
//!
//! * `engine/ping-pong/<n>`: the raw event engine with a protocol that does nothing but bounce
//!   messages (see `election_sim::pingpong`), reported as delivered messages per second. The
//!   target (issue #18) is at least 25 million per second on one core.
//! * `trial/<scenario>/<protocol>/<n>`: one whole trial as the runner runs it (`Cell::run`:
//!   configuration, boot, the fault, the election and the settle window, and the metrics),
//!   with throughput in simulated messages per second (every message the trial sent, heartbeats
//!   included). Each benchmark repeats the same trial (seed 1), so its message count is exact.
//!   Target (issue #18): bully `leader-crash-lowest-detects` at n = 101 at 15 million simulated
//!   messages per second or more.
//! * `trial-ideal/<scenario>/<protocol>/<n>`: the same trials with ideal nodes
//!   (`node.profile = ideal`: no processing time, fsync, clock drift or timer jitter), the
//!   work the engine and the protocols do on their own. Targets (issue #32): bully
//!   `leader-crash-lowest-detects` at n = 101 at 10 million messages per second or more, and
//!   every `trial-ideal` bench at 8 million or more.
//! * `raft-scaling/leader-crash/<n>`: the raft `leader-crash` trial from 5 to 1001 nodes.
//!   Flat messages per second across sizes (targets: within 20 %, issue #18; within 30 %,
//!   issue #32) means the cost of a trial grows in proportion to the messages the protocol
//!   sends.
//! * `node-time/<scenario>/<protocol>/n=<n>/{ideal,server}`: the cost of the node-time model,
//!   the same trial with ideal nodes and with the default server nodes.
//!
//! ```text
//! cargo bench --bench simulator
//! cargo bench --bench simulator -- raft-scaling
//! cargo run --release --example perf-table -- --write   # the READMEs' tables, from the results
//! ```

mod common;

use std::hint::black_box;

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use election_sim::pingpong::bench_trial;

use common::cell;

/// The seed every wall-clock trial uses.
const SEED: u64 = 1;

fn engine(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    for n in [2u32, 64] {
        let delivered = bench_trial(n);
        group.throughput(Throughput::Elements(delivered));
        group.bench_with_input(BenchmarkId::new("ping-pong", n), &n, |b, &n| {
            b.iter(|| bench_trial(n))
        });
    }
    group.finish();
}

/// Benchmark one runner trial per (protocol, n) in `group`, throughput = messages it sends;
/// `sets`: parameters as `--set` takes them.
fn trial_bench(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    protocol: &str,
    scenario: &str,
    n: u32,
    sets: &[&str],
) {
    let cell = cell(protocol, n, scenario, sets);
    let sent = cell.run(SEED, false).expect("trial runs").row.msgs_total;
    group.throughput(Throughput::Elements(sent));
    group.bench_with_input(BenchmarkId::new(protocol, n), &cell, |b, cell| {
        b.iter(|| black_box(cell.run(SEED, false).expect("trial runs")))
    });
}

/// The `trial` groups with the default (`server`) nodes and the `trial-ideal` groups.
fn trials(c: &mut Criterion) {
    for (prefix, sets) in [
        ("trial", &[][..]),
        ("trial-ideal", &["node.profile=ideal"][..]),
    ] {
        let mut group = c.benchmark_group(format!("{prefix}/leader-crash"));
        for protocol in ["bully", "ring", "raft", "lease"] {
            for n in [5, 25, 101] {
                trial_bench(&mut group, protocol, "leader-crash", n, sets);
            }
        }
        group.finish();

        let mut group = c.benchmark_group(format!("{prefix}/leader-crash-lowest-detects"));
        for n in [5, 25, 101] {
            trial_bench(&mut group, "bully", "leader-crash-lowest-detects", n, sets);
        }
        group.finish();
    }
}

fn raft_scaling(c: &mut Criterion) {
    let mut group = c.benchmark_group("raft-scaling/leader-crash");
    for n in [5, 25, 101, 251, 501, 1001] {
        // The largest trials take milliseconds each: fewer samples keep the group short.
        group.sample_size(if n > 200 { 20 } else { 50 });
        trial_bench(&mut group, "raft", "leader-crash", n, &[]);
    }
    group.finish();
}

/// The cost of the node-time model (issue #14): the same trials with `node.profile = ideal`
/// (nothing takes time, perfect clocks) and with the default `server` profile (processing time,
/// fsync, drifting clocks, timer jitter), and the workload on in both.
fn node_time(c: &mut Criterion) {
    let mut group = c.benchmark_group("node-time");
    for (protocol, scenario, n) in [
        ("raft", "leader-crash", 5),
        ("bully", "leader-crash", 25),
        ("raft", "partition-leader-minority", 25),
    ] {
        for profile in ["ideal", "server"] {
            let set = format!("node.profile={profile}");
            let cell = cell(protocol, n, scenario, &[set.as_str()]);
            let sent = cell.run(SEED, false).expect("trial runs").row.msgs_total;
            group.throughput(Throughput::Elements(sent));
            group.bench_with_input(
                BenchmarkId::new(format!("{scenario}/{protocol}/n={n}"), profile),
                &cell,
                |b, cell| b.iter(|| black_box(cell.run(SEED, false).expect("trial runs"))),
            );
        }
    }
    group.finish();
}

criterion_group!(benches, engine, trials, raft_scaling, node_time);

fn main() {
    common::register_fonts();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
