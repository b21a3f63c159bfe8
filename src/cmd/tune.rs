//! `tune`: the timeout advisor, and its advice printed (also for the merge of its shards).

use std::path::PathBuf;

use clap::Args;
use election_runner::Error;

use super::dirs::guard_committed;
use super::{check_jobs, out_dir, WorkArgs};
use crate::error::CliError;

#[derive(Args, Debug)]
pub struct TuneArgs {
    /// The run's name: the page goes to reports/tune-<name>/ unless --out is given.
    #[arg(long, default_value = "default")]
    pub name: String,
    /// Protocol specs to tune (each family's timing knobs are set by tune) [default: the
    /// --config's protocols, else raft,bully,ring,lease].
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub protocols: Option<Vec<String>>,
    /// Cluster size [default: the --config's first size, else 5].
    #[arg(long)]
    pub nodes: Option<u32>,
    /// Network profile (see `election-bench params`) [default: the --config's first net, else lan].
    #[arg(long)]
    pub net: Option<String>,
    /// A TOML config every point starts from: its parameters, network profiles and custom
    /// scenarios. A profile from `election-bench profile` also gives the cluster's current
    /// settings, evaluated as their own point and compared with the leader changes the cluster
    /// was seen to make.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Set a parameter: key=value (repeatable): the noise (noise.*), the network (net.*),
    /// node time (node.*, clock.*). Over tune's own: workload.interval_ms=0, noise.profile=busy.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// The most unnecessary elections a day you accept.
    #[arg(long, default_value_t = 1.0)]
    pub max_false_per_day: f64,
    /// The slowest p99 failover you accept, ms.
    #[arg(long, default_value_t = 2000.0)]
    pub max_p99_ms: f64,
    /// Timeout range of the coarse grid, LO-HI ms (9 log-spaced values).
    #[arg(long, default_value = "50-5000")]
    pub timeouts: String,
    /// Ratios timeout / heartbeat (or lease duration / retry).
    #[arg(long, value_delimiter = ',', num_args = 1.., default_value = "3,5,10")]
    pub ratios: Vec<f64>,
    /// Steady-noise trials (an hour of simulated time each) per point in the search.
    #[arg(long, default_value_t = 4)]
    pub hours: u64,
    /// At most this many steady-noise hours for a point being confirmed; the confirm phase
    /// spends at most 4 times this per protocol.
    #[arg(long, default_value_t = 96)]
    pub max_hours: u64,
    /// Leader-crash trials per point (p99 needs ~1000 for a bounded interval).
    #[arg(long, default_value_t = 1000)]
    pub crash_trials: u64,
    /// Refinement rounds around the frontier (and at most as many bisections when nothing
    /// confirmed meets the limits).
    #[arg(long, default_value_t = 2)]
    pub rounds: u32,
    /// Steady-noise hours of the advised point on each disk preset (node.disk), for the
    /// page's false elections per day against fsync p99; 0 skips the disk curve.
    #[arg(long, default_value_t = election_runner::tune::DISK_HOURS)]
    pub disk_hours: u64,
    /// The first seed.
    #[arg(long, default_value_t = 1)]
    pub first_seed: u64,
    /// Output directory [default: reports/tune-<name>; a shard: reports/tune-<name>-shards/<k>-of-<N>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    // Tune shards by protocol (each protocol's search is sequential): at most one shard a
    // protocol.
    #[command(flatten)]
    pub work: WorkArgs,
    /// Write into the committed reports/tune-default with options other than the defaults
    /// (without it, such a run needs --name or --out).
    #[arg(long)]
    pub force: bool,
}

/// `tune`: the search, its files and the advice printed (a shard: its searches only).
pub fn run(a: TuneArgs) -> Result<(), CliError> {
    use election_runner::tune;
    check_jobs(a.work.jobs)?;
    let bad_range = || {
        Error::Usage(format!(
            "--timeouts {:?}: expected LO-HI in milliseconds, e.g. 50-5000",
            a.timeouts
        ))
    };
    let (lo, hi) = a.timeouts.split_once('-').ok_or_else(bad_range)?;
    let timeouts = (
        lo.trim().parse::<f64>().map_err(|_| bad_range())?,
        hi.trim().parse::<f64>().map_err(|_| bad_range())?,
    );
    let mut o = tune::TuneOptions::defaults(&a.name);
    if let Some(p) = &a.config {
        let c = election_runner::SweepSpec::from_file(p)?;
        let first = |v: &Option<Vec<String>>| v.as_ref().and_then(|v| v.first().cloned());
        o.protocols = c.protocols.clone().unwrap_or(o.protocols);
        o.nodes = c
            .nodes
            .as_ref()
            .and_then(|n| n.first().copied())
            .unwrap_or(o.nodes);
        o.net = first(&c.nets).unwrap_or(o.net);
        o.config = Some((p.clone(), c));
    }
    if let Some(p) = &a.protocols {
        o.protocols = p.clone();
    }
    o.nodes = a.nodes.unwrap_or(o.nodes);
    if let Some(n) = &a.net {
        o.net = n.clone();
    }
    o.set = a.set.clone();
    o.max_false_per_day = a.max_false_per_day;
    o.max_p99_ms = a.max_p99_ms;
    o.timeouts = timeouts;
    o.ratios = a.ratios.clone();
    o.hours = a.hours;
    o.max_hours = a.max_hours;
    o.crash_trials = a.crash_trials;
    o.rounds = a.rounds;
    o.disk_hours = a.disk_hours;
    o.first_seed = a.first_seed;
    o.jobs = a.work.jobs.unwrap_or(0);
    o.progress = !a.work.quiet;
    o.shard = a.work.shard.resolve()?;
    o.out = out_dir(a.out.as_deref(), o.out.clone(), o.shard);
    // The committed reports/tune-default is the run with every default; any other run with the
    // default name would replace it.
    let default_run = {
        let d = tune::TuneOptions::defaults("default");
        let mut mine = o.clone();
        (mine.jobs, mine.progress, mine.out, mine.shard) =
            (d.jobs, d.progress, d.out.clone(), d.shard);
        // TuneOptions' Debug holds the config; a run with one is never the default run.
        format!("{mine:?}") == format!("{d:?}")
    };
    guard_committed(
        "tune",
        &[&o.out],
        default_run,
        a.force,
        "give --name NAME (into reports/tune-NAME) or --out DIR",
    )?;
    let start = std::time::Instant::now();
    let outcome = tune::tune(&o)?;
    outcome.write()?;
    if let Some(s) = o.shard {
        out!(
            "tune shard {s}: {} trials in {:.1} s -> {} (its searches; `election-bench merge` \
             joins every shard's and writes the page)",
            outcome.trials,
            start.elapsed().as_secs_f64(),
            o.out.display()
        );
        return Ok(());
    }
    print_outcome(&outcome, Some(start))
}

/// tune's advice on standard output, its notes on standard error, and where the page is
/// (tune and the merge of its shards).
pub fn print_outcome(
    outcome: &election_runner::tune::TuneOutcome,
    start: Option<std::time::Instant>,
) -> Result<(), CliError> {
    let o = &outcome.options;
    let page = election_report::render_tune(outcome, &o.out)?;
    let lim = (o.max_false_per_hour(), o.max_p99_ms);
    for a in &outcome.advice {
        let contradicted = outcome
            .agreement(a)
            .filter(|c| c.3 != election_runner::tune::Agreement::Consistent);
        match a.chosen {
            _ if contradicted.is_some() => out!(
                "{:<28} recommendation withheld: the model contradicts the cluster at its current settings ({})",
                a.protocol,
                contradicted.expect("checked").3.name()
            ),
            Some(i) => {
                let p = &a.points[i];
                out!(
                    "{:<28} T = {} ms, ratio {}: p99 failover {:.0} ms, {:.3} false elections a day ({})",
                    a.protocol,
                    p.timeout_ms,
                    p.ratio,
                    p.failover(0.99).unwrap_or(f64::NAN),
                    p.false_per_hour().unwrap_or(f64::NAN) * 24.0,
                    p.verdict(lim.0, lim.1).name()
                );
                // Each system measured under its own rules at that timing, with its own verdict.
                for c in &a.systems {
                    out!(
                        "{:<28}   under {}: p99 failover {:.0} ms, {:.3} false elections a day ({})",
                        "",
                        c.spec,
                        c.point.failover(0.99).unwrap_or(f64::NAN),
                        c.point.false_per_hour().unwrap_or(f64::NAN) * 24.0,
                        c.point.verdict(lim.0, lim.1).name()
                    );
                }
            }
            None => out!(
                "{:<28} no evaluated setting meets both limits (closest points in the page)",
                a.protocol
            ),
        }
    }
    for a in &outcome.advice {
        if let Some((fe, lo, hi, agree)) = outcome.agreement(a) {
            let (ob, olo, ohi) = outcome
                .observed()
                .expect("an agreement needs an observed rate");
            out!(
                "{:<28} at the current settings: {:.3} false elections an hour simulated ({:.3}-{:.3}), {:.3} leader changes an hour observed ({:.3}-{:.3}): {}",
                a.protocol,
                fe,
                lo,
                hi,
                ob,
                olo,
                ohi,
                agree.name()
            );
        }
    }
    // What the budget cannot show belongs with the advice it qualifies, on standard output.
    for w in &outcome.warnings {
        out!("note: {w}");
    }
    out!(
        "tune: {} trials {} -> {} (ADVICE.md, points.csv, frontier.png)",
        outcome.trials,
        start.map_or("in its shards".into(), |t| format!(
            "in {:.1} s",
            t.elapsed().as_secs_f64()
        )),
        page.parent().unwrap_or(&o.out).display()
    );
    Ok(())
}
