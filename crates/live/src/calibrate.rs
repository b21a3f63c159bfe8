//! `election-bench calibrate`: does the simulator predict what real sockets do?
//!
//! 1. **Measure** the loopback: ping-pong datagrams between two tokio tasks over UDP on
//!    127.0.0.1 (the path a live message takes: a `send_to`, the kernel's loopback, a task
//!    woken by the runtime) and take half of each round trip as a one-way latency.
//! 2. **Fit** a log-normal to it (median = the geometric mean, σ = the standard deviation of
//!    the logarithms) and give it to the simulator as the network.
//! 3. **Run** the same scenario, trial seeds and protocol configurations live and simulated,
//!    and compare the distributions of failover time (`failover_ms`: the fault instant to the
//!    agreed new leader): medians, 95th percentiles, and a bootstrap interval of the ratio of
//!    medians, which tells a real gap from sampling noise.
//! 4. **Explain** the gap from the same runs: the detection phase (`detect_ms`) and the election
//!    phase (`failover_ms − detect_ms`) separately, the measured lateness of every live timer
//!    firing, and the loopback latency.
//!
//! Everything goes into [`CalibrateArgs::out`] (`reports/calibration/` for the committed page;
//! the CLI writes under the temporary directory unless `--out` says so): the data this module
//! measures — `trials.csv` and `summary.csv` (the results schema, `mode` = `sim` / `live`),
//! `loopback.csv` and `calibration.csv` — and returns the page's data as a
//! [`CalibrationPage`] (a type of the results schema); the CLI has the report render it
//! (`README.md` with `failover.svg` and `failover.png`, the report crate's `calibration`). The
//! measurement loop stays here because it needs the sockets and the live driver (the loopback
//! ping-pong and the live trials are tokio code); what the numbers mean is the report's, which
//! renders the same page from fixed results in its tests. This crate does not depend on the
//! report.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use election_core::{Rng, RngExt, SeedableRng};
use election_runner::config::NetDef;
use election_runner::net::format_latency;
pub use election_runner::results::calibration::{
    CalibrationPage, Loopback, ProtocolCalibration, Sample, TARGET,
};
use election_runner::results::fmt_ms;
use election_runner::stats::percentile;
use election_sim::Latency;
use tokio::net::UdpSocket;
use tokio::time::{timeout, Instant};

use crate::driver::LiveError;
use crate::run::{live_trial, plan_cell, write_file, write_rows, RunError, LOOPBACK};

/// The name of the simulator's network profile fitted to the loopback.
pub const FITTED_NET: &str = "loopback-fit";

/// `election-bench calibrate [--protocol P] [--nodes N]`.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibrateArgs {
    /// Protocol specs to calibrate (default: `bully`, `ring`, `raft`, `lease`).
    pub protocols: Vec<String>,
    /// Cluster size (default 5).
    pub nodes: u32,
    /// The scenario (default `leader-crash`).
    pub scenario: String,
    /// Trials per protocol and mode (default 50), seeds `first_seed ..`.
    pub trials: u64,
    /// Simulated trials per protocol (default 500, seeds `first_seed ..`): simulation is
    /// cheap, so the simulated distribution is estimated far more precisely than the live one
    /// and the comparison's uncertainty is the live sample's.
    pub sim_trials: u64,
    /// The first seed (default 0).
    pub first_seed: u64,
    /// Where the report goes (default `reports/calibration`).
    pub out: PathBuf,
    /// Round trips measured on the loopback (default 2000).
    pub pings: usize,
    /// Parameter overrides with the runner's names (`--set key=value`).
    pub params: Vec<(String, String)>,
}

impl Default for CalibrateArgs {
    fn default() -> Self {
        CalibrateArgs {
            protocols: vec!["bully".into(), "ring".into(), "raft".into(), "lease".into()],
            nodes: 5,
            scenario: "leader-crash".into(),
            trials: 50,
            sim_trials: 500,
            first_seed: 0,
            out: PathBuf::from("reports/calibration"),
            pings: 2000,
            params: Vec::new(),
        }
    }
}

/// Ping-pong `pings` datagrams (after a short warm-up) between two tasks on one current-thread
/// runtime over UDP on `ip`, and fit a log-normal to the one-way latencies.
pub fn measure_loopback(pings: usize, ip: IpAddr) -> Result<Loopback, LiveError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(LiveError::Runtime)?;
    let bind = |node| {
        let addr = SocketAddr::new(ip, 0);
        move |source| LiveError::Bind { node, addr, source }
    };
    let result = rt.block_on(async {
        let a = UdpSocket::bind(SocketAddr::new(ip, 0))
            .await
            .map_err(bind(election_core::NodeId(1)))?;
        let b = UdpSocket::bind(SocketAddr::new(ip, 0))
            .await
            .map_err(bind(election_core::NodeId(2)))?;
        let b_addr = b.local_addr().map_err(bind(election_core::NodeId(2)))?;
        let echo = tokio::spawn(async move {
            let mut buf = [0u8; 64];
            while let Ok((n, from)) = b.recv_from(&mut buf).await {
                let _ = b.send_to(&buf[..n], from).await;
            }
        });
        let warmup = 100.min(pings);
        let mut rtts = Vec::with_capacity(pings);
        let mut lost = 0;
        let mut buf = [0u8; 64];
        for i in 0..(warmup + pings) as u32 {
            let start = Instant::now();
            if a.send_to(&i.to_be_bytes(), b_addr).await.is_err() {
                lost += 1;
                continue;
            }
            // Wait for this ping's echo (an earlier, late echo is skipped).
            let answered = timeout(Duration::from_secs(1), async {
                loop {
                    match a.recv_from(&mut buf).await {
                        Ok((4, _)) if buf[..4] == i.to_be_bytes() => return true,
                        Ok(_) => continue,
                        Err(_) => return false,
                    }
                }
            })
            .await
            .unwrap_or(false);
            let rtt = start.elapsed();
            if !answered {
                lost += 1;
            } else if i as usize >= warmup {
                rtts.push(rtt.as_secs_f64() * 1e3);
            }
            // Space the pings like sparse protocol traffic, not a busy loop.
            if i % 16 == 0 {
                tokio::time::sleep(Duration::from_micros(200)).await;
            }
        }
        echo.abort();
        Ok::<_, LiveError>((rtts, lost))
    });
    rt.shutdown_timeout(Duration::from_secs(1));
    let (rtts, lost) = result?;
    let mut one_way: Vec<f64> = rtts.iter().map(|r| r / 2.0).filter(|x| *x > 0.0).collect();
    one_way.sort_by(f64::total_cmp);
    let logs: Vec<f64> = one_way.iter().map(|x| x.ln()).collect();
    let fit = if logs.len() >= 2 {
        let mu = logs.iter().sum::<f64>() / logs.len() as f64;
        let var = logs.iter().map(|l| (l - mu).powi(2)).sum::<f64>() / (logs.len() - 1) as f64;
        Latency::LogNormal {
            median_ms: round_sig(mu.exp()),
            sigma: round_sig(var.sqrt()),
        }
    } else {
        Latency::Constant { ms: 0.05 }
    };
    Ok(Loopback {
        one_way_ms: one_way,
        lost,
        fit,
    })
}

/// Four significant digits, so the fitted profile prints compactly.
fn round_sig(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let p = 10f64.powi(3 - x.abs().log10().floor() as i32);
    (x * p).round() / p
}

/// What [`calibrate`] measured and wrote.
#[derive(Clone, Debug)]
pub struct CalibrationOutcome {
    /// What the page says: the loopback measurement and its fit, one comparison per
    /// protocol in the order asked, and the run's settings.
    pub page: CalibrationPage,
    /// The files written (the data; the page's files are the caller's).
    pub files: Vec<PathBuf>,
}

/// Bootstrap the ratio of medians `live / sim` (2000 resamples, fixed seed): a 95 % interval.
fn bootstrap_ratio(sim: &[f64], live: &[f64]) -> Option<(f64, f64)> {
    if sim.len() < 2 || live.len() < 2 {
        return None;
    }
    let mut rng = Rng::seed_from_u64(0xCA11_B8A7E);
    let resample = |xs: &[f64], rng: &mut Rng| {
        let mut v: Vec<f64> = (0..xs.len())
            .map(|_| xs[rng.random_range(0..xs.len())])
            .collect();
        v.sort_by(f64::total_cmp);
        percentile(&v, 0.5).unwrap_or(f64::NAN)
    };
    election_runner::stats::bootstrap(2000, 0.95, || {
        resample(live, &mut rng) / resample(sim, &mut rng)
    })
}

/// "about 3 min 20 s left" from the time `done` of `total` units took (the rest at the same
/// pace); "done" at the end.
pub fn eta(elapsed: std::time::Duration, done: u64, total: u64) -> String {
    if done >= total {
        return "done".into();
    }
    if done == 0 {
        return "time left unknown".into();
    }
    let left = elapsed.as_secs_f64() / done as f64 * (total - done) as f64;
    let s = left.round() as u64;
    if s >= 60 {
        format!("about {} min {} s left", s / 60, s % 60)
    } else {
        format!("about {s} s left")
    }
}

/// Measure, run, compare and write the report. `progress` is told what is happening, one line
/// at a time.
pub fn calibrate(
    args: &CalibrateArgs,
    mut progress: impl FnMut(&str),
) -> Result<CalibrationOutcome, RunError> {
    let usage = |m: String| RunError::Runner(election_runner::Error::Usage(m));
    if args.trials < 2 || args.sim_trials < 2 {
        return Err(usage(format!(
            "trials = {}, sim_trials = {}: a distribution needs at least 2",
            args.trials, args.sim_trials
        )));
    }
    if args
        .first_seed
        .checked_add(args.trials.max(args.sim_trials))
        .is_none()
    {
        return Err(usage("first_seed + trials overflows".into()));
    }
    if args.pings < 10 {
        return Err(usage(format!(
            "pings = {}: measure at least 10",
            args.pings
        )));
    }
    if args.protocols.is_empty() {
        return Err(usage("no protocol to calibrate".into()));
    }
    let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
    progress(&format!(
        "measuring loopback latency ({} round trips)",
        args.pings
    ));
    let loopback = measure_loopback(args.pings, ip).map_err(|source| RunError::Live {
        context: "measuring the loopback".into(),
        source,
    })?;
    progress(&format!(
        "loopback one-way: median {:.1} µs, p99 {:.1} µs; simulator net = {}",
        loopback.quantile(0.5) * 1e3,
        loopback.quantile(0.99) * 1e3,
        format_latency(&loopback.fit)
    ));
    let fitted = NetDef {
        name: FITTED_NET.into(),
        base: Some("ideal".into()),
        about: Some("log-normal fitted to the measured loopback latency".into()),
        latency: Some(format_latency(&loopback.fit)),
        loss: Some(0.0),
        duplicate: Some(0.0),
        fifo: Some(true),
        links: Vec::new(),
    };
    let seeds = args.first_seed..args.first_seed + args.trials;
    let mut all_rows = Vec::new();
    let mut all_rejected = Vec::new();
    let mut results = Vec::new();
    // Live nodes keep their stable record in memory: the simulated side gets no disk either,
    // unless the user says otherwise. Everything else is the default node model.
    let mut params = args.params.clone();
    if !params.iter().any(|(k, _)| k == "node.fsync_ms") {
        params.push(("node.fsync_ms".into(), "constant:0".into()));
    }
    let mut node_time = None;
    // Progress with an estimate of the time left: live trials take seconds each and dominate.
    let started = std::time::Instant::now();
    let total_live = args.trials * args.protocols.len() as u64;
    let mut done_live = 0u64;
    for spec in &args.protocols {
        let cell = plan_cell(
            spec,
            args.nodes,
            &args.scenario,
            FITTED_NET,
            &params,
            vec![fitted.clone()],
        )?;
        node_time.get_or_insert_with(|| cell.resolved.node.clone());
        let mut sim_rows = Vec::new();
        for seed in args.first_seed..args.first_seed + args.sim_trials {
            sim_rows.push(cell.run(seed, false)?.row);
        }
        let mut live_rows = Vec::new();
        let mut live_rejected = Vec::new();
        let mut lateness = Vec::new();
        let mut anomalies = 0;
        for seed in seeds.clone() {
            let (row, report) = live_trial(&cell, seed, LOOPBACK, false, ip)?;
            done_live += 1;
            progress(&format!(
                "{spec} live seed {seed}: {}  [{done_live}/{total_live} live trials, {}]",
                row.failover_ms
                    .map_or("no quorum leader after the fault".into(), |e| {
                        format!("failover {e:.1} ms")
                    }),
                eta(started.elapsed(), done_live, total_live)
            ));
            lateness.extend_from_slice(&report.health.timer_lateness_ms);
            anomalies +=
                report.health.rejected() + report.health.send_errors + report.health.recv_errors;
            live_rows.push(row);
            live_rejected.push(Some(report.health.rejected()));
        }
        lateness.sort_by(f64::total_cmp);
        let sim = Sample::new(&sim_rows);
        let live = Sample::new(&live_rows);
        let p50_ratio = match (live.p50(), sim.p50()) {
            (Some(l), Some(s)) if s > 0.0 => Some(l / s),
            _ => None,
        };
        let p50_ratio_ci = bootstrap_ratio(&sim.failover_ms, &live.failover_ms);
        let c = ProtocolCalibration {
            protocol: spec.clone(),
            sim,
            live,
            p50_ratio,
            p50_ratio_ci,
            timer_lateness_ms: lateness,
            live_anomalies: anomalies,
        };
        progress(&format!(
            "{spec}: median failover sim {} ms, live {} ms",
            c.sim.p50().map_or("-".into(), fmt_ms),
            c.live.p50().map_or("-".into(), fmt_ms)
        ));
        all_rejected.extend(sim_rows.iter().map(|_| None));
        all_rejected.extend(live_rejected);
        all_rows.extend(sim_rows);
        all_rows.extend(live_rows);
        results.push(c);
    }
    let mut files = write_rows(&args.out, &all_rows, &all_rejected)?;
    files.push(write_loopback_csv(args, &loopback)?);
    files.push(write_calibration_csv(args, &results)?);
    let page = CalibrationPage {
        scenario: args.scenario.clone(),
        nodes: args.nodes,
        trials: args.trials,
        sim_trials: args.sim_trials,
        first_seed: args.first_seed,
        sim_net: FITTED_NET.into(),
        live_net: LOOPBACK.into(),
        loopback,
        protocols: results,
        node: node_time,
    };
    Ok(CalibrationOutcome { page, files })
}

fn opt(x: Option<f64>) -> String {
    x.map(fmt_ms).unwrap_or_default()
}

/// A CSV file from a header and rows of already formatted fields, through the `csv` crate
/// (quoting whatever needs it).
fn write_csv(
    path: &std::path::Path,
    header: &[&str],
    rows: &[Vec<String>],
) -> Result<(), RunError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let io = |e: csv::Error| RunError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    };
    w.write_record(header).map_err(io)?;
    for r in rows {
        w.write_record(r).map_err(io)?;
    }
    let bytes = w.into_inner().map_err(|e| RunError::Io {
        path: path.to_path_buf(),
        source: e.into_error(),
    })?;
    write_file(path, &bytes)
}

fn write_loopback_csv(args: &CalibrateArgs, l: &Loopback) -> Result<PathBuf, RunError> {
    let path = args.out.join("loopback.csv");
    let q = |p| format!("{:.4}", l.quantile(p));
    write_csv(
        &path,
        &[
            "pings",
            "lost",
            "one_way_p5_ms",
            "one_way_p50_ms",
            "one_way_p95_ms",
            "one_way_p99_ms",
            "one_way_max_ms",
            "fitted_latency",
        ],
        &[vec![
            l.one_way_ms.len().to_string(),
            l.lost.to_string(),
            q(0.05),
            q(0.5),
            q(0.95),
            q(0.99),
            q(1.0),
            format_latency(&l.fit),
        ]],
    )?;
    Ok(path)
}

fn write_calibration_csv(
    args: &CalibrateArgs,
    results: &[ProtocolCalibration],
) -> Result<PathBuf, RunError> {
    let path = args.out.join("calibration.csv");
    let header = [
        "protocol",
        "nodes",
        "scenario",
        "trials",
        "sim_led",
        "live_led",
        "sim_failover_p50_ms",
        "live_failover_p50_ms",
        "p50_ratio",
        "p50_ratio_ci_lo",
        "p50_ratio_ci_hi",
        "within_target",
        "sim_failover_p95_ms",
        "live_failover_p95_ms",
        "sim_detect_p50_ms",
        "live_detect_p50_ms",
        "sim_election_phase_p50_ms",
        "live_election_phase_p50_ms",
        "live_timer_late_mean_ms",
        "live_timer_late_p95_ms",
        "live_timer_late_max_ms",
    ];
    let mut rows = Vec::new();
    for c in results {
        let ratio = |x: Option<f64>| x.map(|r| format!("{r:.4}")).unwrap_or_default();
        let late = &c.timer_lateness_ms;
        let mean = election_runner::stats::mean(late);
        rows.push(vec![
            c.protocol.clone(),
            args.nodes.to_string(),
            args.scenario.clone(),
            args.trials.to_string(),
            c.sim.failover_ms.len().to_string(),
            c.live.failover_ms.len().to_string(),
            opt(c.sim.p50()),
            opt(c.live.p50()),
            ratio(c.p50_ratio),
            ratio(c.p50_ratio_ci.map(|x| x.0)),
            ratio(c.p50_ratio_ci.map(|x| x.1)),
            c.within_target().to_string(),
            opt(c.sim.p95()),
            opt(c.live.p95()),
            opt(percentile(&c.sim.detect_ms, 0.5)),
            opt(percentile(&c.live.detect_ms, 0.5)),
            opt(percentile(&c.sim.election_phase_ms, 0.5)),
            opt(percentile(&c.live.election_phase_ms, 0.5)),
            opt(mean),
            opt(percentile(late, 0.95)),
            opt(late.last().copied()),
        ]);
    }
    write_csv(&path, &header, &rows)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::eta;
    use std::time::Duration;

    #[test]
    fn the_estimate_extrapolates_the_pace_so_far() {
        let s = Duration::from_secs;
        assert_eq!(eta(s(10), 1, 5), "about 40 s left");
        assert_eq!(eta(s(30), 3, 23), "about 3 min 20 s left");
        assert_eq!(eta(s(0), 0, 5), "time left unknown");
        assert_eq!(eta(s(50), 5, 5), "done");
    }
}
