//! Writes the SYNTHETIC etcd scrapes under `examples/etcd/scrapes/`: what `curl
//! http://MEMBER:2379/metrics` returns for the four metrics `election-bench profile` reads, for
//! the three members of an invented cluster (the third in another zone, twice the round trip
//! away), at two instants a day apart. Nothing here was
//! measured: round trips and fsyncs are drawn from fixed log-normal distributions (with a slow
//! tail for the disk) by a seeded generator, so the files are the same bytes on every machine.
//!
//! The invented cluster changes leader 72 times in the day (3 an hour): far more than its
//! network and disks explain, as a cluster with GC or CPU trouble would. The walkthrough in the
//! README shows `tune` noticing that.
//!
//! ```sh
//! cargo run --example synthetic-etcd-scrape -- examples/etcd/scrapes
//! ```

use election_core::{Rng, RngExt, SeedableRng};

/// etcd's member ids of the invented cluster (hex, as the `To` label spells them).
const MEMBERS: [&str; 3] = ["1c8d4a6f0e2b3957", "7a41e2b9c05d6f18", "e0f39b7c4d1a2865"];
/// The first scrape, ms since 1970 (2026-11-01T00:00:00Z), and the second a day later.
const T0_MS: i64 = 1_761_955_200_000;
const DAY_MS: i64 = 86_400_000;
/// Leader changes each member has seen by the first scrape, and during the day.
const CHANGES_BEFORE: u64 = 1;
const CHANGES_DAY: u64 = 72;

/// etcd's buckets: `prometheus.ExponentialBuckets(start, 2, count)`.
fn buckets(start: f64, count: usize) -> Vec<f64> {
    (0..count).map(|i| start * f64::from(1u32 << i)).collect()
}

fn lognormal(rng: &mut Rng, median: f64, sigma: f64) -> f64 {
    // Box-Muller: one standard normal from two uniforms in (0, 1].
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    median * (sigma * z).exp()
}

/// Cumulative counts of `xs` in `bounds` (then the total).
fn cumulative(xs: &[f64], bounds: &[f64]) -> (Vec<u64>, u64) {
    let counts = bounds
        .iter()
        .map(|b| xs.iter().filter(|&&x| x <= *b).count() as u64)
        .collect();
    (counts, xs.len() as u64)
}

fn histogram(out: &mut String, name: &str, help: &str, label: &str, xs: &[f64], bounds: &[f64]) {
    let (counts, total) = cumulative(xs, bounds);
    let sum: f64 = xs.iter().sum();
    let sep = if label.is_empty() { "" } else { "," };
    out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} histogram\n"));
    for (b, c) in bounds.iter().zip(counts) {
        out.push_str(&format!("{name}_bucket{{{label}{sep}le=\"{b}\"}} {c}\n"));
    }
    out.push_str(&format!(
        "{name}_bucket{{{label}{sep}le=\"+Inf\"}} {total}\n"
    ));
    let braces = if label.is_empty() {
        String::new()
    } else {
        format!("{{{label}}}")
    };
    out.push_str(&format!(
        "{name}_sum{braces} {sum:.6}\n{name}_count{braces} {total}\n"
    ));
}

/// Every scrape file: (file name, contents), in order.
pub fn scrapes() -> Vec<(String, String)> {
    let mut rng = Rng::seed_from_u64(33);
    let rtt_b = buckets(0.0001, 16);
    let disk_b = buckets(0.001, 14);
    let mut files = Vec::new();
    for (m, me) in MEMBERS.iter().enumerate() {
        // Observations before the first scrape, then during the day (etcd probes each peer's
        // round trip every few seconds; the WAL syncs on every write).
        let mut rtt: Vec<Vec<f64>> = vec![Vec::new(); MEMBERS.len()];
        let (mut fsync, mut commit) = (Vec::new(), Vec::new());
        for (t, (n_rtt, n_disk)) in [(2_000, 4_000), (17_280, 40_000)].into_iter().enumerate() {
            for (p, _) in MEMBERS.iter().enumerate().filter(|(p, _)| *p != m) {
                // The third member sits in another zone: twice the round trip to it.
                let median = if m == 2 || p == 2 { 0.0012 } else { 0.0006 };
                for _ in 0..n_rtt {
                    rtt[p].push(lognormal(&mut rng, median, 0.35));
                }
            }
            for _ in 0..n_disk {
                // A disk with a slow tail: one sync in 500 waits behind a flush.
                let slow = rng.random::<f64>() < 0.002;
                fsync.push(lognormal(&mut rng, if slow { 0.08 } else { 0.0025 }, 0.5));
                commit.push(lognormal(&mut rng, 0.006, 0.6));
            }
            let at = T0_MS + t as i64 * DAY_MS;
            let changes = CHANGES_BEFORE + if t == 1 { CHANGES_DAY } else { 0 };
            let mut s = format!(
                "# SYNTHETIC: invented by `cargo run --example synthetic-etcd-scrape`; not a measurement of any cluster.\n# member {me}, scrape {} of 2\n# scraped_at_ms {at}\n",
                t + 1
            );
            for (p, peer) in MEMBERS.iter().enumerate().filter(|(p, _)| *p != m) {
                histogram(
                    &mut s,
                    "etcd_network_peer_round_trip_time_seconds",
                    "Round-Trip-Time histogram between peers",
                    &format!("To=\"{peer}\""),
                    &rtt[p],
                    &rtt_b,
                );
            }
            histogram(
                &mut s,
                "etcd_disk_wal_fsync_duration_seconds",
                "The latency distributions of fsync called by WAL.",
                "",
                &fsync,
                &disk_b,
            );
            histogram(
                &mut s,
                "etcd_disk_backend_commit_duration_seconds",
                "The latency distributions of commit called by backend.",
                "",
                &commit,
                &disk_b,
            );
            s.push_str(&format!(
                "# HELP etcd_server_leader_changes_seen_total The number of leader changes seen.\n# TYPE etcd_server_leader_changes_seen_total counter\netcd_server_leader_changes_seen_total {changes}\n"
            ));
            files.push((format!("member{}-scrape{}.prom", m + 1, t + 1), s));
        }
    }
    files
}

#[allow(dead_code)]
fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "examples/etcd/scrapes".into());
    std::fs::create_dir_all(&dir).expect("create the output directory");
    for (name, text) in scrapes() {
        let path = std::path::Path::new(&dir).join(&name);
        std::fs::write(&path, text).expect("write a scrape");
        println!("{}", path.display());
    }
}
