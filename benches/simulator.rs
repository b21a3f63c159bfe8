//! Wall-clock cost of the simulator itself.
//!
//! `engine/ping-pong`: the raw event engine with a protocol that does nothing but bounce
//! messages (see `election_sim::pingpong`), reported as delivered messages per second. The
//! target is at least 10 million per second on one core.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use election_core::NodeId;
use election_sim::pingpong::PingPong;
use election_sim::{NetConfig, Sim, SimConfig};

/// One ping-pong trial: `n / 2` balls in flight for 100 simulated ms at 10 µs latency.
fn ping_pong(n: u32) -> u64 {
    let mut cfg = SimConfig::new(n, 1);
    cfg.net = NetConfig::constant_ms(0.01);
    cfg.horizon = Duration::from_millis(100);
    let report = Sim::new(cfg, move |id: NodeId| PingPong::new(id, n))
        .expect("valid config")
        .run();
    report.metrics.total.delivered
}

fn engine(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    for n in [2u32, 64] {
        let delivered = ping_pong(n);
        group.throughput(Throughput::Elements(delivered));
        group.bench_with_input(BenchmarkId::new("ping-pong", n), &n, |b, &n| {
            b.iter(|| ping_pong(n))
        });
    }
    group.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
