//! What `election-bench tune` costs: criterion group `tune`.
//!
//! * `tune/steady-noise-hour/<protocol>/n=5`: one `steady-noise` trial, an hour of simulated
//!   time of a healthy 5-node cluster under the `busy` noise, at the workbench's default
//!   timing (`T` = 150 ms, ratio 3: a 50 ms heartbeat or lease retry) — the unit of the false-
//!   election side of a tune (issue #17's target: well under a second);
//! * `tune/leader-crash/<protocol>/n=5`: one leader-crash trial under the same noise, the unit
//!   of the failover side.
//!
//! A whole `tune` with its defaults is timed with the command itself (`benches/README.md`).
//!
//! ```text
//! cargo bench --bench tune
//! ```

mod common;

use std::time::Duration;

use criterion::{criterion_group, Criterion};
use election_runner::protocol::ProtocolSpec;
use election_runner::tune::{point_cell, TuneOptions};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("tune");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    let o = TuneOptions::defaults("bench");
    for spec in &o.protocols {
        let spec = ProtocolSpec::parse(spec).unwrap();
        for scenario in ["steady-noise", "leader-crash"] {
            let cell = point_cell(&o, &spec, 150.0, 3.0, scenario).unwrap();
            let mut seed = 0;
            let name = if scenario == "steady-noise" {
                "steady-noise-hour"
            } else {
                scenario
            };
            g.bench_function(format!("{name}/{}/n={}", spec.spec, o.nodes), |b| {
                b.iter(|| {
                    seed += 1;
                    cell.run(seed, false).unwrap().report.metrics.leader_changes
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    common::register_fonts();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
