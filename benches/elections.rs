//! The protocol comparison as a criterion benchmark: not how fast the simulator runs, but how
//! the protocols behave.
//!
//! For each scenario (`leader-crash`, `leader-crash-lowest-detects`,
//! `partition-leader-minority`) and cluster size (5, 25, 101) there are two criterion groups,
//! `failover/<scenario>/n=<n>` and `messages/<scenario>/n=<n>`, each with one function per
//! protocol spec of the runner's default sweep (`bully`, `bully+quorum`, ..., `raft+pre_vote+
//! check_quorum`, `lease`). Their "time" is a custom measurement:
//!
//! * `failover`: simulated milliseconds from the fault to the final quorum leader followed by
//!   every member that reaches it (the runner's `elect_ms`, within a few ms of `failover_ms` in
//!   these crash scenarios; the group keeps its name for criterion's history; a trial that
//!   never converges counts its whole window after the fault, a lower bound);
//! * `messages`: election messages in that window (the runner's `msgs_election`: every
//!   category but heartbeats).
//!
//! Every iteration is one trial with a fresh seed (seeds `0, 1, 2, ...` per function, so every
//! protocol of a group sees the same fault instants), built by the runner exactly as
//! `election-bench run` builds it: same scenario catalog, default timing and the default `lan`
//! network profile. Criterion's estimates are therefore per-trial means with bootstrap
//! confidence intervals, and its change detection ("regressed +12 %") applies to protocol
//! behaviour. The HTML report (`target/criterion/report/index.html`) shows the protocols of a
//! group side by side; after the run a plain comparison table is printed, with per-trial
//! medians and 95th percentiles (criterion's estimates are means) and the stuck share.
//!
//! ```text
//! cargo bench --bench elections                          # everything (several minutes)
//! cargo bench --bench elections -- 'failover/leader-crash/n=5/'   # one group
//! ```

mod common;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use criterion::measurement::Measurement;
use criterion::{BenchmarkId, Criterion};
use election_runner::plan::DEFAULT_PROTOCOLS;

use common::{cell, outcome, Messages, Outcome, SimulatedMs, MESSAGES, SIMULATED_MS};

/// The scenarios compared.
const SCENARIOS: [&str; 3] = [
    "leader-crash",
    "leader-crash-lowest-detects",
    "partition-leader-minority",
];

/// The cluster sizes compared.
const SIZES: [u32; 3] = [5, 25, 101];

/// Every trial's value each benchmark function ran (warm-up included), for the table printed
/// at the end: (metric, scenario, n, protocol) -> (per-trial values, trials not converged).
type Key = (&'static str, usize, u32, usize);
static TALLY: Mutex<BTreeMap<Key, (Vec<f64>, u64)>> = Mutex::new(BTreeMap::new());

/// One criterion group per scenario and size, one function per protocol spec; `value` is the
/// trial's measured value.
fn compare<M>(c: &mut Criterion<M>, metric: &'static str, value: fn(&Outcome) -> f64)
where
    M: Measurement<Value = f64>,
{
    for (si, scenario) in SCENARIOS.iter().enumerate() {
        for n in SIZES {
            let mut group = c.benchmark_group(format!("{metric}/{scenario}/n={n}"));
            for (pi, spec) in DEFAULT_PROTOCOLS.iter().enumerate() {
                let cell = cell(spec, n, scenario, &[]);
                let (mut seed, mut calls) = (0u64, 0u64);
                group.bench_function(BenchmarkId::from_parameter(spec), |b| {
                    b.iter_custom(|iters| {
                        let (mut sum, mut stuck) = (0.0, 0);
                        let mut values = Vec::with_capacity(iters as usize);
                        for _ in 0..iters {
                            let o = outcome(&cell, seed);
                            seed += 1;
                            sum += value(&o);
                            values.push(value(&o));
                            stuck += u64::from(!o.converged);
                        }
                        let mut t = TALLY.lock().expect("tally");
                        let e = t.entry((metric, si, n, pi)).or_default();
                        e.0.extend(values);
                        e.1 += stuck;
                        calls += 1;
                        sum + dither(iters, calls)
                    })
                });
            }
            group.finish();
        }
    }
}

/// A per-iteration offset of at most 7e-9 (ms or messages) that differs between samples.
///
/// Some cells are exactly deterministic (the bully's `leader-crash-lowest-detects` sends
/// `n² − n − 1` election messages whatever the seed). Criterion 0.5 panicked while plotting a
/// benchmark whose samples are all equal (the density estimate's bandwidth is zero:
/// bheisler/criterion.rs#720), so every sample gets this invisible dither.
fn dither(iters: u64, calls: u64) -> f64 {
    iters as f64 * 1e-9 * (calls % 8) as f64
}

fn failover(c: &mut Criterion<SimulatedMs>) {
    compare(c, "failover", |o| o.failover_ms);
}

fn messages(c: &mut Criterion<Messages>) {
    compare(c, "messages", |o| o.messages as f64);
}

/// Defaults sized for a comparison rather than a timing: the values are simulated, so a
/// short measurement already holds hundreds of trials. Command-line flags override them.
fn config<M: Measurement>(m: M) -> Criterion<M> {
    Criterion::default()
        .with_measurement(m)
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        // 10,000 bootstrap resamples instead of 100,000: plotting the bootstrap
        // distributions dominates the run time otherwise, and the intervals barely change.
        .nresamples(10_000)
        .configure_from_args()
}

/// Per-trial median and 95th percentile, the trial count and the trials that never converged.
struct Tails {
    p50: f64,
    p95: f64,
    trials: u64,
    stuck: u64,
}

fn tails(values: &[f64], stuck: u64) -> Option<Tails> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    Some(Tails {
        p50: election_runner::stats::percentile(&v, 0.5)?,
        p95: election_runner::stats::percentile(&v, 0.95)?,
        trials: v.len() as u64,
        stuck,
    })
}

/// The comparison as a plain table, one block per scenario, one column group per size that
/// ran: tails as well as centres (criterion's own estimates above are means).
fn print_table() {
    let t = TALLY.lock().expect("tally");
    if t.is_empty() {
        return;
    }
    let stat = |metric, si, n, pi| t.get(&(metric, si, n, pi)).and_then(|e| tails(&e.0, e.1));
    println!();
    println!(
        "Protocol comparison, per trial over every trial run above (runner defaults, lan profile):"
    );
    println!(
        "  failover p50 / p95 = median and 95th percentile of simulated ms from the fault to the"
    );
    println!("    final agreed leader,");
    println!("  msgs p50 / p95 = the same percentiles of election messages (all but heartbeats) in that window,");
    println!(
        "  stuck = share of trials that never converged (their failover counts the whole window)."
    );
    for (si, scenario) in SCENARIOS.iter().enumerate() {
        let ran = |n| t.keys().any(|k| k.1 == si && k.2 == n);
        let sizes: Vec<u32> = SIZES.into_iter().filter(|&n| ran(n)).collect();
        if sizes.is_empty() {
            continue;
        }
        let mut header = format!("\n{scenario:<28}");
        let mut sub = format!("{:<28}", "");
        for n in &sizes {
            header += &format!(" | {:<49}", format!("n = {n}"));
            sub += &format!(
                " | {:>9} {:>9} {:>6} {:>6} {:>8}",
                "fail p50", "fail p95", "msgs50", "msgs95", "stuck"
            );
        }
        println!("{header}\n{sub}\n{}", "-".repeat(sub.len()));
        for (pi, spec) in DEFAULT_PROTOCOLS.iter().enumerate() {
            let mut line = format!("{spec:<28}");
            for &n in &sizes {
                let f = stat("failover", si, n, pi);
                let m = stat("messages", si, n, pi);
                let ms = |v: f64| format!("{v:.1} ms");
                let (f50, f95) = f
                    .as_ref()
                    .map_or(("-".into(), "-".into()), |x| (ms(x.p50), ms(x.p95)));
                let (m50, m95) = m.as_ref().map_or(("-".into(), "-".into()), |x| {
                    (format!("{:.0}", x.p50), format!("{:.0}", x.p95))
                });
                let stuck = match &f {
                    Some(x) if x.stuck > 0 => {
                        format!("{:.2} %", 100.0 * x.stuck as f64 / x.trials as f64)
                    }
                    Some(_) => "0".into(),
                    None => "-".into(),
                };
                line += &format!(" | {f50:>9} {f95:>9} {m50:>6} {m95:>6} {stuck:>8}");
            }
            println!("{line}");
        }
    }
    println!();
}

fn main() {
    common::register_fonts();
    let mut c = config(SIMULATED_MS);
    failover(&mut c);
    let mut c = config(MESSAGES);
    messages(&mut c);
    c.final_summary();
    print_table();
}
