//! What `election-bench explore` costs: criterion group `explore`.
//!
//! * `explore/canonical-5d`: enumerating the directed 5-node patterns up to a permutation of
//!   the followers (2^20 masks, 24 permutations each);
//! * `explore/pattern/<protocol>/<verdict>`: one trial of one pattern at 5 nodes, for a pattern
//!   that settles (`stable`, ends `settle_ms` after the fault) and one that never does (runs to
//!   the 10 s horizon: the expensive case, which sets the cost of the failing patterns);
//! * `explore/n=3`: the whole 3-node exploration (4 protocols, 3 seeds, 176 patterns with a
//!   majority) into a temporary directory.
//!
//! The full run's wall time for n = 3, 4, 5 is measured with the command itself and recorded in
//! `benches/README.md`.
//!
//! ```text
//! cargo bench --bench explore
//! ```

mod common;

use std::time::Duration;

use criterion::{criterion_group, Criterion};
use election_runner::explore::{self, ExploreOptions, Family, Mode, Pattern};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("explore");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("canonical-5d", |b| {
        b.iter(|| {
            Family {
                n: 5,
                directed: true,
                mode: Mode::Canonical,
                store: false,
            }
            .patterns()
            .len()
        })
    });
    let protocols: Vec<String> = explore::DEFAULT_PROTOCOLS
        .iter()
        .map(|s| s.to_string())
        .collect();
    let cells = explore::cells(&protocols, &[5], &[]).unwrap();
    // Nothing cut (stable for every protocol) and quorum-loss's topology (symmetric: every pair
    // not involving follower 1 cut), which leaves Raft without a settled leader.
    let quorum_loss = {
        let links = Pattern::links(5, false);
        let mask = links
            .iter()
            .enumerate()
            .filter(|(_, &(a, _))| a != 1)
            .fold(0u64, |m, (i, _)| m | 1 << i);
        Pattern {
            n: 5,
            directed: false,
            mask,
            store: false,
        }
    };
    for cell in &cells {
        for (label, p) in [
            (
                "none-cut",
                Pattern {
                    n: 5,
                    directed: false,
                    mask: 0,
                    store: false,
                },
            ),
            ("quorum-loss", quorum_loss),
        ] {
            let mut c = cell.clone();
            c.scenario = std::sync::Arc::new(p.scenario());
            let mut seed = 0;
            g.bench_function(format!("pattern/{}/{label}", cell.protocol.spec), |b| {
                b.iter(|| {
                    seed += 1;
                    c.run(seed, false).unwrap().row.outcome
                })
            });
        }
    }
    let cells3 = explore::cells(&protocols, &[3], &[]).unwrap();
    g.bench_function("n=3", |b| {
        b.iter(|| {
            let dir = tempfile::tempdir().unwrap();
            explore::explore(&ExploreOptions {
                cells: cells3.clone(),
                set: Vec::new(),
                shard: None,
                seeds: 3,
                sample: 4096,
                out: dir.path().to_path_buf(),
                resume: false,
                verify_sample: election_runner::sweep::RESUME_SAMPLE,
                progress: false,
                jobs: None,
            })
            .unwrap()
            .trials_run
        })
    });
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    common::register_fonts();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
