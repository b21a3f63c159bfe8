//! `calibrate`: loopback measured, then simulated and live failover times compared.

use std::path::PathBuf;

use clap::Args;

use super::dirs::{refuse_committed, scratch_dir};
use crate::error::CliError;

#[derive(Args, Debug)]
pub struct CalibrateCliArgs {
    /// Only this protocol spec [default: bully, ring, raft and lease].
    #[arg(long, short = 'p')]
    pub protocol: Option<String>,
    /// Cluster size.
    #[arg(long, short = 'n', default_value_t = 5)]
    pub nodes: u32,
    /// Live trials per protocol.
    #[arg(long, default_value_t = 50)]
    pub trials: u64,
    /// Simulated trials per protocol.
    #[arg(long, default_value_t = 500)]
    pub sim_trials: u64,
    /// The first seed.
    #[arg(long, default_value_t = 0)]
    pub first_seed: u64,
    /// Where the chart, tables and README go [default: a directory under the system's
    /// temporary directory, printed; `--out reports/calibration --force` replaces the committed
    /// page].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace the committed reports/calibration (measured live, so no rerun reproduces it:
    /// it is replaced only on purpose).
    #[arg(long)]
    pub force: bool,
}

/// `calibrate`: the live and simulated failover times of each protocol, their ratio printed and
/// the page written (into a scratch directory unless `--out`).
pub fn run(a: CalibrateCliArgs) -> Result<(), CliError> {
    if let Some(out) = &a.out {
        refuse_committed(
            "calibrate",
            &[out],
            Some(a.force),
            "measured live, so no rerun reproduces it",
            "leave out --out (a temporary directory) or give another DIR",
        )?;
    }
    let mut c = election_live::CalibrateArgs {
        nodes: a.nodes,
        trials: a.trials,
        sim_trials: a.sim_trials,
        first_seed: a.first_seed,
        out: a.out.unwrap_or_else(|| scratch_dir("calibration")),
        ..election_live::CalibrateArgs::default()
    };
    if let Some(p) = a.protocol {
        c.protocols = vec![p];
    }
    let o = election_live::calibrate(&c, |line| eprintln!("{line}"))?;
    // The live crate measures; the report says what the numbers mean.
    election_report::calibration::write_calibration_page(&o.page, &c.out)?;
    for p in &o.page.protocols {
        out!(
            "{}: live/sim median failover ratio {} ({})",
            p.protocol,
            p.p50_ratio.map_or("-".into(), |r| format!("{r:.3}")),
            verdict(p.p50_ratio, p.p50_ratio_ci, p.live.trials)
        );
    }
    out!("calibration: {}", c.out.join("README.md").display());
    Ok(())
}

/// What a protocol's ratio shows against the target (live and simulated medians within 15 %
/// of each other), said with its sample: within or OUTSIDE only when the ratio's 95 %
/// bootstrap interval lies wholly on one side of the band; when it crosses a bound, the live
/// sample (`live` trials) is too few to judge, and the line says so with the interval.
fn verdict(ratio: Option<f64>, ci: Option<(f64, f64)>, live: usize) -> String {
    use election_report::calibration::TARGET;
    let pct = TARGET * 100.0;
    let (lo_band, hi_band) = (1.0 - TARGET, 1.0 + TARGET);
    let Some(r) = ratio else {
        return format!("no ratio: no converged trial in one of the modes ({live} live)");
    };
    let inside = (r - 1.0).abs() <= TARGET;
    match ci {
        Some((lo, hi)) if lo >= lo_band && hi <= hi_band => format!("within {pct:.0} %"),
        Some((lo, hi)) if hi < lo_band || lo > hi_band => format!("OUTSIDE {pct:.0} %"),
        Some((lo, hi)) => format!(
            "{} {pct:.0} % at the median, but n = {live} live trials are too few to judge: the \
             ratio's 95 % interval {lo:.3}-{hi:.3} crosses {pct:.0} %; more --trials narrow it",
            if inside { "within" } else { "outside" }
        ),
        None => format!(
            "{} {pct:.0} % at the median, but n = {live} live trials are too few to judge \
             (no interval)",
            if inside { "within" } else { "outside" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::verdict;

    #[test]
    fn a_verdict_needs_an_interval_on_one_side_of_the_band() {
        assert_eq!(verdict(Some(1.02), Some((0.95, 1.10)), 50), "within 15 %");
        assert_eq!(verdict(Some(1.40), Some((1.25, 1.60)), 50), "OUTSIDE 15 %");
        let small = verdict(Some(1.30), Some((0.70, 1.90)), 5);
        assert!(
            small.starts_with("outside 15 % at the median, but n = 5 live trials are too few")
                && small.contains("0.700-1.900"),
            "{small}"
        );
        let small = verdict(Some(1.05), Some((0.80, 1.20)), 5);
        assert!(
            small.starts_with("within 15 % at the median, but n = 5"),
            "{small}"
        );
        assert!(verdict(None, None, 0).starts_with("no ratio"));
    }
}
