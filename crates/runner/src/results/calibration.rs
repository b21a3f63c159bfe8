//! The calibration's measurements as typed data: what `election-bench calibrate` (the live
//! crate) measures and the report's calibration page renders. They live in the results schema,
//! beside [`TrialRow`], so that the live crate hands them over without depending on the report.

use election_sim::{Latency, NodeTime};

use super::TrialRow;
use crate::stats::percentile;

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
