//! The calibration page (`reports/calibration/README.md` and its chart): simulated against
//! live failover, rendered from what `election-bench calibrate` measured.
//!
//! The live crate measures (the loopback, the live and simulated trials) and hands the numbers
//! over as a [`CalibrationPage`]; this module only says what they mean: [`document`] builds
//! the page as a [`Document`](crate::doc::Document) and [`write_calibration_page`] renders it
//! to Markdown next to the failover chart. Nothing here touches a socket, so the page renders
//! the same from a fixed set of results (the tests do) as from a fresh measurement.

mod chart;

use std::fs;
use std::path::{Path, PathBuf};

use election_runner::net::format_latency;
use election_runner::results::TrialRow;
use election_runner::stats::{mean, percentile};
use election_sim::{Latency, NodeTime};

use crate::doc::{code, strong, text, Block, Cell, Document, Figure, Inline, Table};
use crate::error::ReportError;
use chart::{Chart, Panel};

/// The calibration target: simulated and live median failover within 15 % of each other.
pub const TARGET: f64 = 0.15;

/// The loopback measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Loopback {
    /// One-way latencies (half round trips), ms, ascending.
    pub one_way_ms: Vec<f64>,
    /// Pings that got no answer within a second.
    pub lost: usize,
    /// The fitted distribution.
    pub fit: Latency,
}

impl Loopback {
    /// A quantile of the measured one-way latency, ms.
    pub fn quantile(&self, p: f64) -> f64 {
        percentile(&self.one_way_ms, p).unwrap_or(0.0)
    }
}

/// One mode's failover times.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Trials run.
    pub trials: usize,
    /// `failover_ms` of the trials that had a quorum leader after the fault, ascending.
    pub failover_ms: Vec<f64>,
    /// `detect_ms` of those trials, ascending.
    pub detect_ms: Vec<f64>,
    /// `failover_ms − detect_ms` of those trials, ascending.
    pub election_phase_ms: Vec<f64>,
}

impl Sample {
    /// The sample of these trials.
    pub fn new(rows: &[TrialRow]) -> Sample {
        let sorted = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v
        };
        let led = || rows.iter().filter(|r| r.failover_ms.is_some());
        Sample {
            trials: rows.len(),
            failover_ms: sorted(led().filter_map(|r| r.failover_ms).collect()),
            detect_ms: sorted(led().filter_map(|r| r.detect_ms).collect()),
            election_phase_ms: sorted(
                led()
                    .filter_map(|r| Some(r.failover_ms? - r.detect_ms?))
                    .collect(),
            ),
        }
    }
    /// The median failover time, ms.
    pub fn p50(&self) -> Option<f64> {
        percentile(&self.failover_ms, 0.5)
    }
    /// The 95th-percentile failover time, ms.
    pub fn p95(&self) -> Option<f64> {
        percentile(&self.failover_ms, 0.95)
    }
}

/// One protocol's comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct ProtocolCalibration {
    /// The protocol spec.
    pub protocol: String,
    /// Simulated trials.
    pub sim: Sample,
    /// Live trials.
    pub live: Sample,
    /// Live median / simulated median.
    pub p50_ratio: Option<f64>,
    /// 95 % bootstrap interval of that ratio.
    pub p50_ratio_ci: Option<(f64, f64)>,
    /// Lateness of every live timer firing, ms, ascending.
    pub timer_lateness_ms: Vec<f64>,
    /// Datagrams rejected or socket errors in the live trials (zero on a healthy loopback).
    pub live_anomalies: u64,
}

impl ProtocolCalibration {
    /// `|live median / sim median − 1| <= TARGET`.
    pub fn within_target(&self) -> bool {
        self.p50_ratio.is_some_and(|r| (r - 1.0).abs() <= TARGET)
    }
}

/// Everything the calibration page says, as measured.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibrationPage {
    /// The scenario run in both modes.
    pub scenario: String,
    /// Cluster size.
    pub nodes: u32,
    /// Live trials per protocol.
    pub trials: u64,
    /// Simulated trials per protocol.
    pub sim_trials: u64,
    /// The first seed of both modes.
    pub first_seed: u64,
    /// The `net` of simulated rows (the profile fitted to the loopback).
    pub sim_net: String,
    /// The `net` of live rows.
    pub live_net: String,
    /// The loopback measurement.
    pub loopback: Loopback,
    /// One comparison per protocol, in the order asked.
    pub protocols: Vec<ProtocolCalibration>,
    /// The simulated nodes' model of a server, when the simulated side had one.
    pub node: Option<NodeTime>,
}

fn pct(ratio: f64) -> String {
    format!("{:+.1} %", (ratio - 1.0) * 100.0)
}

fn cells(v: Vec<String>) -> Vec<Cell> {
    v.into_iter().map(Cell::text).collect()
}

/// The calibration page as a document.
pub fn document(p: &CalibrationPage) -> Document {
    let l = &p.loopback;
    let results = &p.protocols;
    let mut d = Document::new("Calibration: simulated vs live failover");
    let seeds = |k: u64| format!("{}..{}", p.first_seed, p.first_seed + k - 1);
    d.paragraph(vec![
        text("Generated by "),
        code("election-bench calibrate"),
        text(": scenario "),
        code(&p.scenario),
        text(format!(
            ", n = {}, per protocol {} live trials (seeds {}) and {} simulated ones (seeds {}: \
simulation is cheap, so the simulated distribution is pinned down far more precisely and the \
comparison's uncertainty is the live sample's), the same protocol configurations, fault \
instants and fault timelines in both modes. A live run is not reproducible (the operating \
system schedules it): re-running gives new numbers of the same kind. Files: ",
            p.nodes,
            p.trials,
            seeds(p.trials),
            p.sim_trials,
            seeds(p.sim_trials)
        )),
        code("trials.csv"),
        text(" and "),
        code("summary.csv"),
        text(" (the results schema; "),
        code("net"),
        text(" = "),
        code(&p.sim_net),
        text(" for simulated rows, "),
        code(&p.live_net),
        text(" for live ones), "),
        code("calibration.csv"),
        text(", "),
        code("loopback.csv"),
        text(", "),
        code("failover.svg"),
        text(" / "),
        code("failover.png"),
        text("."),
    ]);

    d.heading(2, vec![text("Loopback latency")]);
    let us = |q| format!("{:.1} µs", l.quantile(q) * 1e3);
    d.paragraph(vec![
        text(format!(
            "{} UDP round trips between two tokio tasks on 127.0.0.1 ({} lost); one way (half a \
round trip): median {}, p95 {}, p99 {}, max {}. Fitted log-normal: ",
            l.one_way_ms.len(),
            l.lost,
            us(0.5),
            us(0.95),
            us(0.99),
            us(1.0),
        )),
        code(format_latency(&l.fit)),
        text(", the simulator's network in this comparison."),
    ]);

    d.heading(
        2,
        vec![
            text("Failover time ("),
            code("failover_ms"),
            text(": fault instant to the first quorum leader)"),
        ],
    );
    let mut t = Table::new([
        "protocol".to_string(),
        "quorum leader after the fault, sim / live".into(),
        "median sim".into(),
        "median live".into(),
        "gap".into(),
        "95 % interval of live/sim median".into(),
        "p95 sim".into(),
        "p95 live".into(),
        "gap".into(),
        format!("within {:.0} %?", TARGET * 100.0),
    ]);
    for c in results {
        let ms = |x: Option<f64>| x.map_or("–".into(), |v| format!("{v:.1} ms"));
        let gap = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(s), Some(l)) if s > 0.0 => pct(l / s),
            _ => "–".into(),
        };
        let mut row = cells(vec![
            c.protocol.clone(),
            format!(
                "{}/{} / {}/{}",
                c.sim.failover_ms.len(),
                c.sim.trials,
                c.live.failover_ms.len(),
                c.live.trials
            ),
            ms(c.sim.p50()),
            ms(c.live.p50()),
            gap(c.sim.p50(), c.live.p50()),
            c.p50_ratio_ci
                .map_or("–".into(), |(a, b)| format!("{a:.3} – {b:.3}")),
            ms(c.sim.p95()),
            ms(c.live.p95()),
            gap(c.sim.p95(), c.live.p95()),
        ]);
        row.push(Cell::new(vec![if c.within_target() {
            text("yes")
        } else {
            strong("no")
        }]));
        t.rows.push(row);
    }
    d.push(Block::Table(t));
    d.push(Block::Figure(Figure {
        path: "failover.png".into(),
        alt: "failover time distributions".into(),
        caption: None,
    }));
    let met: Vec<&str> = results
        .iter()
        .filter(|c| c.within_target())
        .map(|c| c.protocol.as_str())
        .collect();
    let missed: Vec<&str> = results
        .iter()
        .filter(|c| !c.within_target())
        .map(|c| c.protocol.as_str())
        .collect();
    let mut target = vec![text(format!(
        "Target (medians within {:.0} %): ",
        TARGET * 100.0
    ))];
    if missed.is_empty() {
        target.push(text(format!(
            "met for every protocol ({}).",
            met.join(", ")
        )));
    } else {
        let met = if met.is_empty() {
            "none".to_string()
        } else {
            met.join(", ")
        };
        target.extend([
            text(format!("met for {met}; ")),
            strong("missed"),
            text(format!(" for {}.", missed.join(", "))),
        ]);
    }
    d.paragraph(target);

    let all_late: Vec<f64> = {
        let mut v: Vec<f64> = results
            .iter()
            .flat_map(|c| c.timer_lateness_ms.iter().copied())
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let late_mean = mean(&all_late).unwrap_or(0.0);
    if let Some(n) = &p.node {
        let lat = |l: &Option<Latency>, k: f64| {
            l.as_ref()
                .map_or("0".to_string(), |l| format_latency(&l.scaled(k)))
        };
        d.heading(2, vec![text("Node time")]);
        d.paragraph(vec![
            text("The simulated nodes' model of a server (the "),
            code("node.*"),
            text(" and "),
            code("clock.*"),
            text(" parameters, see "),
            code("crates/runner/README.md"),
            text("), next to what the live nodes have."),
        ]);
        let mut t = Table::new(["parameter", "simulated", "live"]);
        for (param, sim, live) in [
            (
                "node.fsync_ms",
                lat(&n.fsync, 1.0),
                "no disk: live nodes keep their stable record in memory".to_string(),
            ),
            (
                "node.cpu_us",
                lat(&n.cpu, 1e3),
                "this machine's CPU".to_string(),
            ),
            (
                "node.timer_jitter_ms",
                format!("U[0, {}]", n.timer_jitter_ms),
                format!("measured: timers fired {late_mean:.2} ms late on average (below)"),
            ),
            (
                "clock.drift_ppm",
                format!("±{}", n.drift_ppm),
                "one machine clock for every node: no drift between them".to_string(),
            ),
        ] {
            t.rows.push(vec![
                Cell::new(vec![code(param)]),
                Cell::text(sim),
                Cell::text(live),
            ]);
        }
        d.push(Block::Table(t));
    }

    d.heading(2, vec![text("Where the gap comes from")]);
    d.paragraph(vec![
        text("A failover is a detection phase ("),
        code("detect_ms"),
        text(
            ": the fault to the first node leaving the follower role, set by the failure \
detector's timeout) followed by an election phase (",
        ),
        code("failover_ms − detect_ms"),
        text(": message exchanges and, for the bully, the "),
        code("t_elec"),
        text(" wait). Medians per phase:"),
    ]);
    let mut t = Table::new([
        "protocol",
        "detection sim",
        "detection live",
        "Δ",
        "election phase sim",
        "election phase live",
        "Δ",
        "live timer firings",
        "lateness mean",
        "p50",
        "p95",
        "max",
    ]);
    for c in results {
        let p50 = |v: &[f64]| percentile(v, 0.5);
        let d = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => format!("{:+.2} ms", b - a),
            _ => "–".into(),
        };
        let ms = |x: Option<f64>| x.map_or("–".into(), |v| format!("{v:.2} ms"));
        let late = &c.timer_lateness_ms;
        t.rows.push(cells(vec![
            c.protocol.clone(),
            ms(p50(&c.sim.detect_ms)),
            ms(p50(&c.live.detect_ms)),
            d(p50(&c.sim.detect_ms), p50(&c.live.detect_ms)),
            ms(p50(&c.sim.election_phase_ms)),
            ms(p50(&c.live.election_phase_ms)),
            d(
                p50(&c.sim.election_phase_ms),
                p50(&c.live.election_phase_ms),
            ),
            late.len().to_string(),
            ms(mean(late)),
            ms(percentile(late, 0.5)),
            ms(percentile(late, 0.95)),
            ms(late.last().copied()),
        ]));
    }
    d.push(Block::Table(t));

    let late_p95 = percentile(&all_late, 0.95).unwrap_or(0.0);
    let late_max = all_late.last().copied().unwrap_or(0.0);
    let sim_timers: Vec<Inline> = match p.node.as_ref().map_or(0.0, |n| n.timer_jitter_ms) {
        j if j > 0.0 => vec![
            text(format!("The simulator delays each timer by U[0, {j}] ms (")),
            code("node.timer_jitter_ms"),
            text(format!("), {:.2} ms on average.", j / 2.0)),
        ],
        _ => vec![
            text("The simulator fires timers exactly ("),
            code("node.timer_jitter_ms"),
            text(" = 0)."),
        ],
    };
    let mut timers = vec![
        strong("Timer granularity."),
        text(format!(
            " Every live timer fired {late_mean:.2} ms after its deadline on average (p95 \
{late_p95:.2} ms, over {} firings). tokio's timer wheel has a resolution of one millisecond \
and rounds each deadline up to its next tick, and the runtime's thread must then be woken by \
the kernel. ",
            all_late.len()
        )),
    ];
    timers.extend(sim_timers);
    timers.extend([
        text(
            " A failover waits on timers in sequence: the follower's failure detector (whose \
deadline was itself set by a heartbeat that left late by the same amount), then any wait inside \
the election — the bully's ",
        ),
        code("t_elec"),
        text(" (its election phase of about 20 ms above), the ring's "),
        code("t_hop"),
        text(format!(
            " once for ELECTION and once for ELECTED while they skip the dead leader (about 40 \
ms), none for Raft; the lease's members notice the expired lease at a read (their own jittered \
poll timer) and take it in one round trip to the store. Each timer on the path adds about \
{late_mean:.2} ms: roughly {late_mean:.1} ms for Raft, {:.1} ms for the bully and {:.1} ms for \
the ring; compare the Δ columns above.",
            2.0 * late_mean,
            3.0 * late_mean,
        )),
    ]);
    let noise: Vec<String> = results
        .iter()
        .filter_map(|c| {
            let (lo, hi) = c.p50_ratio_ci?;
            let verdict = if lo <= 1.0 && 1.0 <= hi {
                "contains 1: the medians are indistinguishable at this sample size"
            } else {
                "excludes 1: a real, systematic gap"
            };
            Some(format!("{} [{lo:.3}, {hi:.3}] {verdict}", c.protocol))
        })
        .collect();
    d.push(Block::list(vec![
        timers,
        vec![
            strong("Scheduler noise."),
            text(format!(
                " The lateness tail (p95 {late_p95:.2} ms, max {late_max:.2} ms) is the \
operating system and the other processes on this machine delaying the runtime's thread; it \
widens the live distribution's upper tail more than it moves its median."
            )),
        ],
        vec![
            strong("Network."),
            text(format!(
                " A loopback hop takes {:.0} µs (median), and a failover puts a handful of hops \
in sequence: well under a millisecond of a failover lasting hundreds, and modelled by the \
fitted profile anyway.",
                l.quantile(0.5) * 1e3
            )),
        ],
        vec![
            strong("Sampling noise."),
            text(" Failover time is dominated by the randomized detection timeout ("),
            code("detect_timeout + U[0, detect_jitter]"),
            text(format!(
                " per follower), drawn from different random streams in the two modes, so a \
sample of {} live trials differs from the simulated distribution by chance. The 95 % bootstrap \
interval of the ratio live/sim median: {}. Note that a live node draws its timeouts from its \
own stream of the trial seed, so re-running with the same seeds repeats most of the same draws \
(and the same luck): a fresh sample needs other seeds (",
                p.trials,
                noise.join("; ")
            )),
            code("first_seed"),
            text(")."),
        ],
    ]));
    let anomalies: u64 = results.iter().map(|c| c.live_anomalies).sum();
    d.paragraph(vec![text(format!(
        "Live trials saw {anomalies} rejected datagrams or socket errors in total."
    ))]);
    d
}

/// Writes the page into `dir`: `failover.svg` and `failover.png` (each protocol's simulated
/// and live failover distributions) and `README.md`. Returns the files written.
pub fn write_calibration_page(
    p: &CalibrationPage,
    dir: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    fs::create_dir_all(dir).map_err(|e| ReportError::io(dir, e))?;
    let chart = Chart {
        title: format!(
            "Failover time, simulated ({} trials) vs live ({} trials): {}, n = {}",
            p.sim_trials, p.trials, p.scenario, p.nodes
        ),
        x_label: "failover_ms: fault to the first quorum leader (ms)".into(),
        panels: p
            .protocols
            .iter()
            .map(|c| Panel {
                title: format!(
                    "{}: median sim {} / live {} ms",
                    c.protocol,
                    c.sim.p50().map_or("-".into(), |x| format!("{x:.0}")),
                    c.live.p50().map_or("-".into(), |x| format!("{x:.0}"))
                ),
                sim: c.sim.failover_ms.clone(),
                live: c.live.failover_ms.clone(),
            })
            .collect(),
    };
    let mut files = chart.write(dir, "failover")?;
    let readme = dir.join("README.md");
    fs::write(&readme, document(p).to_markdown()).map_err(|e| ReportError::io(&readme, e))?;
    files.push(readme);
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(failover: &[f64], detect: &[f64], trials: usize) -> Sample {
        Sample {
            trials,
            failover_ms: failover.to_vec(),
            detect_ms: detect.to_vec(),
            election_phase_ms: failover.iter().zip(detect).map(|(f, d)| f - d).collect(),
        }
    }

    /// A fixed set of calibration results: `bully` within the target, `ring` outside it.
    fn page() -> CalibrationPage {
        CalibrationPage {
            scenario: "leader-crash".into(),
            nodes: 5,
            trials: 3,
            sim_trials: 4,
            first_seed: 10,
            sim_net: "loopback-fit".into(),
            live_net: "loopback".into(),
            loopback: Loopback {
                one_way_ms: vec![0.004, 0.006, 0.008, 0.010],
                lost: 1,
                fit: Latency::LogNormal {
                    median_ms: 0.007,
                    sigma: 0.3,
                },
            },
            protocols: vec![
                ProtocolCalibration {
                    protocol: "bully".into(),
                    sim: sample(&[100.0, 110.0, 120.0, 130.0], &[80.0, 85.0, 90.0, 95.0], 4),
                    live: sample(&[105.0, 115.0, 125.0], &[82.0, 88.0, 94.0], 3),
                    p50_ratio: Some(1.0),
                    p50_ratio_ci: Some((0.9, 1.1)),
                    timer_lateness_ms: vec![0.5, 1.0, 1.5],
                    live_anomalies: 0,
                },
                ProtocolCalibration {
                    protocol: "ring".into(),
                    sim: sample(&[200.0, 210.0], &[150.0, 160.0], 4),
                    live: sample(&[300.0], &[200.0], 3),
                    p50_ratio: Some(300.0 / 205.0),
                    p50_ratio_ci: Some((1.3, 1.6)),
                    timer_lateness_ms: vec![2.0, 3.0],
                    live_anomalies: 2,
                },
            ],
            node: Some(NodeTime {
                timer_jitter_ms: 1.0,
                ..NodeTime::IDEAL
            }),
        }
    }

    #[test]
    fn the_page_renders_from_fixed_results() {
        let p = page();
        let md = document(&p).to_markdown();
        assert!(md.starts_with("# Calibration: simulated vs live failover\n\nGenerated by `election-bench calibrate`: scenario `leader-crash`, n = 5, per protocol 3 live trials (seeds 10..12) and 4 simulated ones (seeds 10..13:"), "{md}");
        // The loopback: 4 answered pings, 1 lost, quantiles in µs, the fit as the profile.
        assert!(md.contains("4 UDP round trips between two tokio tasks on 127.0.0.1 (1 lost); one way (half a round trip): median 7.0 µs, p95 9.7 µs, p99 9.9 µs, max 10.0 µs. Fitted log-normal: `lognormal:0.007:0.3`"), "{md}");
        // One failover row per protocol, computed from the samples.
        assert!(md.contains("| bully | 4/4 / 3/3 | 115.0 ms | 115.0 ms | +0.0 % | 0.900 – 1.100 | 128.5 ms | 124.0 ms | -3.5 % | yes |"), "{md}");
        assert!(md.contains("| ring | 2/4 / 1/3 | 205.0 ms | 300.0 ms | +46.3 % | 1.300 – 1.600 | 209.5 ms | 300.0 ms | +43.2 % | **no** |"), "{md}");
        assert!(md.contains("Target (medians within 15 %): met for bully; **missed** for ring.\n"));
        assert!(md.contains("| `node.timer_jitter_ms` | U[0, 1] | measured: timers fired 1.60 ms late on average (below) |"), "{md}");
        // Phases: detection 87.5 vs 88, election phase 27.5 vs 27 for the bully.
        assert!(md.contains("| bully | 87.50 ms | 88.00 ms | +0.50 ms | 27.50 ms | 27.00 ms | -0.50 ms | 3 | 1.00 ms | 1.00 ms | 1.45 ms | 1.50 ms |"), "{md}");
        assert!(md.contains("- **Timer granularity.** Every live timer fired 1.60 ms after its deadline on average (p95 2.80 ms, over 5 firings)."), "{md}");
        assert!(md.contains("| ring | 155.00 ms | 200.00 ms | +45.00 ms | 50.00 ms | 100.00 ms | +50.00 ms | 2 | 2.50 ms | 2.50 ms | 2.95 ms | 3.00 ms |"), "{md}");
        assert!(md.contains("(p95 2.80 ms, max 3.00 ms)"));
        assert!(md.contains("bully [0.900, 1.100] contains 1: the medians are indistinguishable at this sample size; ring [1.300, 1.600] excludes 1: a real, systematic gap"));
        assert!(
            md.ends_with("\n\nLive trials saw 2 rejected datagrams or socket errors in total.\n")
        );
        // The same document as HTML says the same.
        let html = document(&p).to_html("");
        assert!(
            html.contains("<td>ring</td><td>2/4 / 1/3</td><td>205.0 ms</td><td>300.0 ms</td>"),
            "{html}"
        );
        assert!(html.contains("<td><strong>no</strong></td>"));
    }

    #[test]
    fn the_page_is_written_with_its_chart() {
        let dir = std::env::temp_dir().join(format!("eb-calibration-page-{}", std::process::id()));
        let files = write_calibration_page(&page(), &dir).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["failover.svg", "failover.png", "README.md"]);
        let md = fs::read_to_string(dir.join("README.md")).unwrap();
        assert_eq!(md, document(&page()).to_markdown());
        let svg = fs::read_to_string(dir.join("failover.svg")).unwrap();
        assert!(svg.contains("ring: median sim 205 / live 300 ms"), "{svg}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
