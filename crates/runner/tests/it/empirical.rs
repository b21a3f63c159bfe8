//! `empirical:FILE` end to end through the runner's parser and the simulator's network: the
//! one-way latencies a trial draws reproduce the file's quantiles within their sampling error,
//! and a rerun draws the same latencies to the nanosecond.
//!
//! The trial is the engine's ping-pong (`election_sim::pingpong`): two ideal nodes bounce one
//! ball, so the time between consecutive deliveries is exactly one latency draw. The expected
//! quantiles are computed here from the file's text, by a formula independent of the
//! simulator's inverse CDF: for a histogram, Prometheus' `histogram_quantile` (linear inside
//! the bucket the rank falls in); for samples, the type-7 sample quantile.

use election_core::{NodeId, Rng, RngExt, SeedableRng};
use election_runner::net::parse_latency;
use election_sim::pingpong::PingPong;
use election_sim::{NetConfig, Sim, SimConfig, TraceKind};

/// The latencies, in ms, of every hop of a ping-pong trial with this latency value.
fn hops(latency: &str, seed: u64, hops: u64) -> Vec<f64> {
    let mut cfg = SimConfig::new(2, seed);
    cfg.net = NetConfig {
        latency: parse_latency(latency).unwrap(),
        ..NetConfig::default()
    };
    cfg.trace = true;
    cfg.horizon = std::time::Duration::from_secs(1_000_000);
    // Stop after `hops` deliveries: a budget of two work units per hop (event + send).
    cfg.budget = 2 * hops + 4;
    let r = Sim::new(cfg, |id: NodeId| PingPong::new(id, 2))
        .unwrap()
        .run();
    let at: Vec<u64> = r
        .trace
        .iter()
        .filter(|e| matches!(e.what, TraceKind::Deliver(_)))
        .map(|e| e.at.0)
        .collect();
    let mut prev = 0;
    at.iter()
        .map(|&t| {
            let d = (t - prev) as f64 / 1e6;
            prev = t;
            d
        })
        .collect()
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// Type-7 quantile of an ascending sample.
fn type7(s: &[f64], q: f64) -> f64 {
    let h = (s.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(s.len() - 1);
    s[lo] + (h - lo as f64) * (s[hi] - s[lo])
}

/// Prometheus' histogram_quantile over `le,count` lines (bounds ascending, cumulative).
fn histogram_quantile(buckets: &[(f64, f64)], total: f64, q: f64) -> f64 {
    let rank = q * total;
    let mut lower = (0.0, 0.0);
    for &(le, c) in buckets {
        if c >= rank && c > lower.1 {
            return lower.0 + (le - lower.0) * (rank - lower.1) / (c - lower.1);
        }
        lower = (le, c);
    }
    lower.0
}

/// The sample quantile at q lies between the true quantiles at q ± 4 binomial standard errors
/// (the draws are independent).
fn check(drawn: &[f64], truth: impl Fn(f64) -> f64, what: &str) {
    let n = drawn.len() as f64;
    for q in [0.05, 0.25, 0.5, 0.75, 0.9, 0.99] {
        let se = (q * (1.0 - q) / n).sqrt();
        let (lo, hi) = (
            truth((q - 4.0 * se).max(0.0)),
            truth((q + 4.0 * se).min(1.0)),
        );
        let got = type7(drawn, q);
        // 1 ns of rounding either way.
        assert!(
            got >= lo - 1e-6 && got <= hi + 1e-6,
            "{what}: drawn p{} = {got} ms, expected within [{lo}, {hi}] (file's p{} = {})",
            q * 100.0,
            q * 100.0,
            truth(q)
        );
    }
}

#[test]
fn a_histogram_file_is_reproduced_within_sampling_error_and_reruns_are_identical() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rtt.csv");
    // A one-way latency histogram as `election-bench profile` writes it (ms, cumulative).
    let buckets = [
        (0.05, 0.0),
        (0.1, 120.0),
        (0.2, 2_300.0),
        (0.4, 14_000.0),
        (0.8, 19_100.0),
        (1.6, 19_800.0),
        (3.2, 19_990.0),
    ];
    let total = 20_000.0;
    let mut text = String::from("# test histogram\nle,count\n");
    for (le, c) in buckets {
        text.push_str(&format!("{le},{c}\n"));
    }
    text.push_str(&format!("+Inf,{total}\n"));
    std::fs::write(&path, text).unwrap();
    let spec = format!("empirical:{}", path.display());
    let drawn = hops(&spec, 7, 100_000);
    assert!(drawn.len() >= 99_000, "{} hops", drawn.len());
    let drawn = sorted(drawn);
    check(
        &drawn,
        |q| histogram_quantile(&buckets, total, q),
        "histogram",
    );
    // Observations above the last bound are drawn at it: never beyond.
    assert!(drawn[drawn.len() - 1] <= 3.2 + 1e-6);
    // Byte-identical rerun; another seed draws differently.
    assert_eq!(hops(&spec, 7, 20_000), hops(&spec, 7, 20_000));
    assert_ne!(hops(&spec, 7, 2_000), hops(&spec, 8, 2_000));
}

#[test]
fn a_sample_file_and_a_csv_column_are_reproduced_within_sampling_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::seed_from_u64(11);
    // 5000 samples of a skewed distribution (a ping log reduced to its numbers).
    let samples: Vec<f64> = (0..5_000)
        .map(|_| {
            let u: f64 = rng.random();
            0.2 + 3.0 * u * u * u
        })
        .collect();
    let mut plain = String::from("# ping, ms\n");
    let mut csv = String::from("host,rtt_ms\n");
    for (i, s) in samples.iter().enumerate() {
        plain.push_str(&format!("{s}\n"));
        csv.push_str(&format!("h{},{s}\n", i % 3));
    }
    std::fs::write(dir.path().join("ping.txt"), plain).unwrap();
    std::fs::write(dir.path().join("ping.csv"), csv).unwrap();
    let truth = sorted(samples);
    for spec in [
        format!("empirical:{}", dir.path().join("ping.txt").display()),
        format!("empirical:{}#rtt_ms", dir.path().join("ping.csv").display()),
    ] {
        let drawn = sorted(hops(&spec, 3, 60_000));
        check(&drawn, |q| type7(&truth, q), &spec);
        assert!(drawn[0] >= truth[0] - 1e-6 && drawn[drawn.len() - 1] <= truth[4_999] + 1e-6);
    }
}

/// The same through a sweep's own path (`SweepSpec` → plan → cell → trial, as `sweep` runs
/// them): a Raft cluster on a network whose latency is the histogram file, every message's
/// one-way time (send to delivery, links in order) over many seeds reproduces the file's
/// quantiles within sampling error, and the sweep's manifest names the file with its hash.
#[test]
fn a_sweep_on_an_empirical_network_draws_the_files_quantiles() {
    use std::collections::{HashMap, VecDeque};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one_way.csv");
    let buckets = [
        (0.1, 0.0),
        (0.3, 900.0),
        (0.6, 3_900.0),
        (1.2, 4_800.0),
        (2.4, 5_000.0),
    ];
    let total = 5_000.0;
    let mut text = String::from("le,count\n");
    for (le, c) in buckets {
        text.push_str(&format!("{le},{c}\n"));
    }
    text.push_str(&format!("+Inf,{total}\n"));
    std::fs::write(&path, text).unwrap();
    let toml = format!(
        "name = \"emp\"\nprotocols = [\"raft\"]\nnodes = [3]\nscenarios = [\"cold-start\"]\n\
         seeds = 400\n[params]\n\"net.latency\" = \"empirical:{}\"\n\"node.profile\" = \"ideal\"\n\
         \"workload.interval_ms\" = 0\n\"horizon_ms\" = 20000\n",
        path.display()
    );
    let plan = election_runner::SweepSpec::from_toml(&toml)
        .unwrap()
        .plan()
        .unwrap();
    let m = plan.manifest_config();
    let entry = m["empirical"].to_string();
    assert!(
        entry.contains("one_way.csv") && entry.contains("sha256"),
        "{m}"
    );
    let cell = plan.cells().unwrap().remove(0);
    let mut one_way = Vec::new();
    for seed in plan.seed_range() {
        let run = cell.run(seed, true).unwrap();
        let mut in_flight: HashMap<(u32, u32), VecDeque<u64>> = HashMap::new();
        for e in &run.report.trace {
            match &e.what {
                TraceKind::Send(m) => in_flight
                    .entry((m.from.0, m.to.0))
                    .or_default()
                    .push_back(e.at.0),
                TraceKind::Deliver(m) => {
                    let sent = in_flight
                        .get_mut(&(m.from.0, m.to.0))
                        .and_then(VecDeque::pop_front)
                        .expect("every delivery was sent");
                    one_way.push((e.at.0 - sent) as f64 / 1e6);
                }
                _ => {}
            }
        }
    }
    assert!(one_way.len() > 15_000, "{} messages", one_way.len());
    let drawn = sorted(one_way);
    check(
        &drawn,
        |q| histogram_quantile(&buckets, total, q),
        "sweep cell",
    );
}
