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
    for p in &o.protocols {
        out!(
            "{}: live/sim median failover ratio {} ({})",
            p.protocol,
            p.p50_ratio.map_or("-".into(), |r| format!("{r:.3}")),
            if p.within_target() {
                "within 15 %"
            } else {
                "OUTSIDE 15 %"
            }
        );
    }
    out!("calibration: {}", c.out.join("README.md").display());
    Ok(())
}
