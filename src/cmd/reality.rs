//! `reality`: a real etcd cluster through the simulator's faults, measured in its terms.

use std::path::PathBuf;

use clap::Args;
use election_reality::run::{Fault, Progress, RealityArgs, TrialReport, Trials};
use election_reality::Failover;
use election_runner::results::{fmt_ms, TrialRow};
use election_runner::Error;

use super::dirs::refuse_committed;
use crate::error::CliError;

pub const ABOUT: &str = "Run a real etcd cluster on loopback through the simulator's faults \
and write its measurements as `mode = real` rows beside the prediction's.

It reads `etcd --version` to choose the system spec the rows are compared with (etcd 3.4: \
etcd@3.4, or etcd@3.4+pre_vote with --pre-vote; 3.5: etcd@3.5), starts each cluster size on \
127.0.0.1 (free ports, a temporary data directory, one log file per member under \
OUT/logs/), and for each fault runs its trials one after the other: wait until every member \
names the same leader at the same term for two election timeouts, SIGKILL (`kill`, scenario \
leader-crash) or SIGSTOP for the spec's pause_ms then SIGCONT (`pause`, scenario \
leader-pause) that leader, or cut it and the lowest followers (floor((n-1)/2) members) off \
from the rest both ways for the spec's outage_ms, then heal (`partition`, scenario \
partition-leader-minority: a TCP proxy in front of each member's peer port drops the \
connections that carry the cut links, known by etcd's X-Server-From header), wait until the \
cluster agrees again (at most --deadline-ms), and \
measure the trial from the members' own zap logs with the simulator's observer. A killed \
member is restarted with its data before the next trial. Every etcd process it started is \
killed when it ends, on error and on Ctrl-C.

Files: OUT/trials.csv and OUT/summary.csv (the simulator's schema, mode = real; \
results/README.md), OUT/reality.csv (per trial: the leaders and terms before and after, \
the terms the failover took, (pre-)candidacies, votes ignored within a leader's lease, \
check-quorum step-downs, the machine's load at the fault, the trial's instants, lost_terms: \
what the logs show for each term the failover lost), OUT/run.json (settings, etcd's version, \
the machine), OUT/manifest.json (a sweep-style manifest with config.mode = real, so `compare \
PREDICTION OUT` and `report --results OUT` read the run), and per cluster OUT/logs/nN/: each member's log mI.log, \
members.csv (raft ids, addresses) and journal.csv (what was injected when), from which \
--replay measures the run again.

When the trials are done it writes the page (`--report`, by default reports/<name of OUT>: \
README.md and index.html): each experiment beside the prediction of the same spec at the same \
timing, simulated there (1000 seeds), with the ratios of p50 and p95 and their intervals, and \
what the logs show for each lost term; `report --results OUT` writes it again. An interrupted \
run (Ctrl-C, exit status 130) keeps its finished trials and writes no page.";

pub const AFTER_HELP: &str = "Examples:
  election-bench reality                                     # 3 members, 10 kills, 10 pauses
  election-bench reality --nodes 3,5 --faults kill --trials 40 --out results/reality-40
  election-bench reality --faults partition --trials 5 --out results/reality-partition
  election-bench reality --nodes 3,5 --trials 3:kill=40,3:pause=20,3:partition=15,5:kill=40
  election-bench reality --timing 50/500 --pre-vote --trials 5
  election-bench run -p etcd@3.4 -n 3 -s leader-crash --seed 1   # one simulated prediction

At etcd's defaults (100/1000) a kill trial takes about 6 s, a pause trial about 7 s and a
partition trial (a 10 s outage) about 13 s: the issue's experiment (the fourth example, 115
trials) took 13.6 minutes on a 2-core VM.";

#[derive(Args, Debug)]
pub struct RealityCliArgs {
    /// The etcd binary (a name is looked up on PATH).
    #[arg(long, default_value = "etcd", value_name = "PATH")]
    pub etcd: PathBuf,
    /// Compare with this system spec instead of the one `etcd --version` selects (etcd@3.4,
    /// etcd@3.5).
    #[arg(long, value_name = "SPEC")]
    pub system: Option<String>,
    /// Cluster sizes, one cluster each (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "3")]
    pub nodes: Vec<u32>,
    /// etcd's --heartbeat-interval and --election-timeout, in ms.
    #[arg(long, default_value = "100/1000", value_name = "HEARTBEAT/ELECTION")]
    pub timing: String,
    /// Faults: kill, pause, partition (comma-separated) [default: the faults --trials names,
    /// else kill,pause].
    #[arg(long, value_delimiter = ',')]
    pub faults: Option<Vec<String>>,
    /// Trials per fault and cluster size: K (every fault on every size), FAULT=K or
    /// N:FAULT=K, comma-separated; the most specific entry counts, a cell no entry names is
    /// not run (e.g. 3:kill=40,3:pause=20,3:partition=15,5:kill=40).
    #[arg(long, default_value = "10", value_name = "K|FAULT=K|N:FAULT=K,..")]
    pub trials: String,
    /// Start the members with --pre-vote (etcd 3.4's default is off).
    #[arg(long)]
    pub pre_vote: bool,
    /// How long a trial may take to settle after its last action, ms [default: 20 election
    /// timeouts]; a trial with no agreed leader by then is recorded as such.
    #[arg(long, value_name = "MS")]
    pub deadline_ms: Option<u64>,
    /// Where the files go (git ignores everything under results/ but its committed runs;
    /// results/reality is the committed run, replaced only with --force).
    #[arg(long, default_value = "results/reality-run")]
    pub out: PathBuf,
    /// Where the page goes [default: reports/<name of --out>, where `report --results OUT`
    /// writes it]; reports/reality is the committed run's page, written only by `--out
    /// results/reality --force`.
    #[arg(long, value_name = "DIR", conflicts_with = "no_report")]
    pub report: Option<PathBuf>,
    /// Write no page (`report --results OUT` writes it later).
    #[arg(long)]
    pub no_report: bool,
    /// Replace an earlier run's files in --out (and the committed page with --out
    /// results/reality).
    #[arg(long)]
    pub force: bool,
    /// Start nothing: measure the finished run in DIR again from its files (run.json,
    /// reality.csv, logs/) with this build, print its summary and how many rows differ from
    /// the trials.csv it wrote; writes nothing without --write.
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,
    /// With --replay: write the run's trials.csv, summary.csv, reality.csv and manifest.json
    /// anew from its logs with this build (an older run gains the columns and the manifest
    /// `compare` and `report` read; target, load and note are kept).
    #[arg(long, requires = "replay")]
    pub write: bool,
}

/// `--timing H/E`.
fn parse_timing(s: &str) -> Result<(u64, u64), Error> {
    let bad = |why: &str| {
        Error::Usage(format!(
            "--timing {s:?}: {why}; give HEARTBEAT/ELECTION in ms, e.g. 100/1000 (etcd's defaults)"
        ))
    };
    let (h, e) = s.split_once('/').ok_or_else(|| bad("no '/'"))?;
    let ms = |x: &str| {
        x.trim()
            .parse::<u64>()
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| bad(&format!("{x:?} is not a whole number of ms above 0")))
    };
    Ok((ms(h)?, ms(e)?))
}

pub fn run(a: RealityCliArgs) -> Result<(), CliError> {
    if let Some(dir) = &a.replay {
        replay(dir)?;
        if a.write {
            for f in election_reality::replay::rewrite(dir, dir)? {
                out!("wrote {}", f.display());
            }
        }
        return Ok(());
    }
    let (heartbeat_ms, election_ms) = parse_timing(&a.timing)?;
    let trials = Trials::parse(&a.trials)?;
    let faults = match &a.faults {
        Some(fs) => fs
            .iter()
            .map(|f| Fault::parse(f.trim()))
            .collect::<Result<Vec<_>, _>>()?,
        None => trials
            .faults()
            .unwrap_or_else(|| vec![Fault::Kill, Fault::Pause]),
    };
    let page = (!a.no_report).then(|| {
        a.report.clone().unwrap_or_else(|| {
            let name = a.out.file_name().map(PathBuf::from);
            PathBuf::from("reports").join(name.unwrap_or_else(|| "reality-run".into()))
        })
    });
    refuse_committed(
        "reality",
        &[&a.out],
        Some(a.force),
        "real measurements are not reproduced byte for byte",
        "give another --out DIR, e.g. results/reality-run (the page goes to reports/<its name>, or --report DIR)",
    )?;
    if let Some(page) = &page {
        // The committed page is the committed run's: another run's page goes elsewhere,
        // --force or not (--force replaces an earlier run in --out).
        let own = super::dirs::committed_dir(&a.out).is_some_and(|c| {
            super::dirs::committed_dir(page) == Some(&c.replacen("results/", "reports/", 1)[..])
        });
        if let Some(c) = super::dirs::committed_dir(page).filter(|_| !own) {
            return Err(Error::Usage(format!(
                "the page would go into the committed {c}, the page of the committed run: give --report DIR (or --no-report)"
            ))
            .into());
        }
        let same = |x: &std::path::Path, y: &std::path::Path| {
            x == y || matches!((x.canonicalize(), y.canonicalize()), (Ok(p), Ok(q)) if p == q)
        };
        if same(page, &a.out) {
            return Err(Error::Usage(format!(
                "--report {}: the same directory as --out, whose reality.csv the page's would replace; give another --report DIR",
                page.display()
            ))
            .into());
        }
    }
    if a.out.join("trials.csv").exists() && !a.force {
        return Err(Error::Usage(format!(
            "--out {}: it holds an earlier run's trials.csv; give another --out DIR, or --force to replace it",
            a.out.display()
        ))
        .into());
    }
    let args = RealityArgs {
        etcd: a.etcd,
        system: a.system,
        nodes: a.nodes,
        heartbeat_ms,
        election_ms,
        faults,
        trials,
        pre_vote: a.pre_vote,
        out: a.out,
        deadline_ms: a.deadline_ms,
    };
    election_reality::install_interrupt_handler()?;
    eprintln!(
        "reality: rows into {} as each trial finishes",
        args.out.display()
    );
    let out = election_reality::run(&args, |p| match p {
        Progress::Version(v, spec) => {
            eprintln!("reality: etcd {v}, compared with {spec}");
        }
        Progress::ClusterUp(n, pids) => {
            let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
            eprintln!("reality: {n} members up (pids {})", pids.join(" "));
        }
        Progress::Trial(t, k, of) => eprintln!("{}", trial_line(t, k, of)),
    })?;
    out!(
        "summary          etcd {} as {} | {}/{} ms | {} trials",
        out.version,
        out.protocol,
        args.heartbeat_ms,
        args.election_ms,
        out.trials.len()
    );
    let all: Vec<Trial> = out
        .trials
        .iter()
        .map(|t| (&t.row, &t.failover, t.load.0.map(|l| l[0])))
        .collect();
    print_cells(&all)?;
    for f in &out.files {
        out!("wrote {}", f.display());
    }
    out!("wrote {}", args.out.join("logs").display());
    if let Some(page) = page {
        eprintln!("reality: the page, beside the prediction simulated at the run's timing");
        let analysis = election_report::reality::analyse(&args.out, &Default::default())?;
        // Ctrl-C while the prediction was simulated: the trials are written, the page is not.
        if election_reality::interrupted() {
            return Err(election_reality::Error::Interrupted.into());
        }
        election_report::reality::write(&analysis, &page)?;
        let off = analysis.outside_bands().len();
        out!(
            "report: {} ({} experiments, {off} outside the bands)",
            page.join("README.md").display(),
            analysis.experiments.len()
        );
    }
    Ok(())
}

fn opt_ms(x: Option<f64>) -> String {
    x.map_or("-".into(), fmt_ms)
}

/// The progress line of one trial.
fn trial_line(t: &TrialReport, k: u32, of: u32) -> String {
    let f = &t.failover;
    let load = t.load.0.map_or("-".into(), |l| format!("{:.2}", l[0]));
    format!(
        "  {} n={} {k}/{of}: member {} | failover_ms {} elect_ms {} | terms {} candidacies {} pre {} ignored votes {} | outcome {} | load {load}{}",
        t.row.scenario,
        t.row.nodes,
        t.target,
        opt_ms(t.row.failover_ms),
        opt_ms(t.row.elect_ms),
        f.terms().map_or("-".into(), |x| x.to_string()),
        f.candidacies,
        f.pre_candidacies,
        f.votes_ignored,
        t.row.outcome.name(),
        if t.note.is_empty() {
            String::new()
        } else {
            format!(" | {}", t.note)
        }
    )
}

/// A trial as the summary reads it: its row, its failover, the load at its fault.
type Trial<'a> = (&'a TrialRow, &'a Failover, Option<f64>);

/// One summary line per size and fault, in the trials' order.
fn print_cells(all: &[Trial]) -> Result<(), CliError> {
    let mut cells: Vec<(u32, &str)> = Vec::new();
    for (r, _, _) in all {
        if !cells.contains(&(r.nodes, r.scenario.as_str())) {
            cells.push((r.nodes, r.scenario.as_str()));
        }
    }
    for (n, scenario) in cells {
        let ts: Vec<Trial> = all
            .iter()
            .filter(|(r, _, _)| r.nodes == n && r.scenario == scenario)
            .copied()
            .collect();
        out!("{}", cell_summary(n, scenario, &ts));
    }
    Ok(())
}

/// One line per size and fault: failover p50/p95, and how many failovers lost a term.
fn cell_summary(n: u32, scenario: &str, ts: &[Trial]) -> String {
    use election_runner::stats::percentile;
    let mut fo: Vec<f64> = ts.iter().filter_map(|t| t.0.failover_ms).collect();
    fo.sort_by(f64::total_cmp);
    let p = |q: f64| percentile(&fo, q).map_or("-".into(), |v| format!("{} ms", fmt_ms(v)));
    let lost = ts
        .iter()
        .filter(|t| t.1.terms().is_some_and(|k| k >= 2))
        .count();
    let loads: Vec<f64> = ts.iter().filter_map(|t| t.2).collect();
    let load = if loads.is_empty() {
        "-".into()
    } else {
        format!("{:.2}", loads.iter().sum::<f64>() / loads.len() as f64)
    };
    let mut minority: Vec<f64> = ts.iter().map(|t| t.0.minority_leader_ms).collect();
    minority.sort_by(f64::total_cmp);
    let lingered = if minority.iter().any(|&m| m > 0.0) {
        format!(
            " | minority leader p50 {}",
            percentile(&minority, 0.5).map_or("-".into(), |v| format!("{} ms", fmt_ms(v)))
        )
    } else {
        String::new()
    };
    format!(
        "{scenario:<16} n={n} | {} trials, {} with a new leader | failover p50 {}, p95 {} | {lost} needed a second term{lingered} | mean load {load}",
        ts.len(),
        fo.len(),
        p(0.5),
        p(0.95)
    )
}

/// `--replay DIR`.
fn replay(dir: &std::path::Path) -> Result<(), CliError> {
    let again = election_reality::replay::replay_dir(dir)?;
    let written = std::fs::read_to_string(dir.join("trials.csv"))
        .map_err(|e| Error::Usage(format!("--replay {}: no trials.csv ({e})", dir.display())))?;
    let lines: Vec<&str> = written.lines().skip(1).collect();
    let differ = again
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            let line = election_runner::results::write_trials([&r.row]);
            lines.get(*i).map(|l| format!("{l}\n").into_bytes()) != Some(line)
        })
        .count();
    out!(
        "replay           {}: {} trials measured again; {differ} rows differ from its trials.csv",
        dir.display(),
        again.len()
    );
    let loads = load_column(dir);
    let all: Vec<Trial> = again
        .iter()
        .enumerate()
        .map(|(i, r)| (&r.row, &r.failover, loads.get(i).copied().flatten()))
        .collect();
    print_cells(&all)
}

/// `reality.csv`'s `load1`, by trial.
fn load_column(dir: &std::path::Path) -> Vec<Option<f64>> {
    let Ok(text) = std::fs::read_to_string(dir.join("reality.csv")) else {
        return Vec::new();
    };
    let mut lines = text.lines();
    let at = lines
        .next()
        .and_then(|h| h.split(',').position(|c| c == "load1"));
    lines
        .map(|l| at.and_then(|i| l.split(',').nth(i)?.parse().ok()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_names_the_bad_value() {
        assert_eq!(parse_timing("100/1000").unwrap(), (100, 1000));
        let e = parse_timing("100-1000").unwrap_err().to_string();
        assert!(e.contains("--timing \"100-1000\""), "{e}");
        let e = parse_timing("0/1000").unwrap_err().to_string();
        assert!(e.contains("\"0\""), "{e}");
    }
}
