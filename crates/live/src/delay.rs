//! Added delay: a latency distribution drawn per datagram on top of the real network's own.
//!
//! The simulator's sampler is private to it; this is the same set of distributions with the
//! same parameters ([`Latency`]), drawn from the sending node's own seeded generator.

use std::time::Duration;

use election_core::Rng;
use election_sim::{ConfigError, Latency, SimConfig};
use rand::Rng as _;
use rand_distr::{Distribution, Exp, LogNormal, Normal, Pareto};

/// A validated latency distribution.
#[derive(Clone, Debug)]
pub(crate) enum Delay {
    Constant(f64),
    Uniform(f64, f64),
    Normal(Normal<f64>),
    Exponential(Exp<f64>),
    LogNormal(LogNormal<f64>),
    Pareto(Pareto<f64>),
    Empirical(election_sim::empirical::SharedEmpirical),
}

impl Delay {
    /// Validate `latency` with the simulator's own rules (the error names `field`).
    pub(crate) fn new(latency: &Latency, field: &str) -> Result<Delay, ConfigError> {
        let mut probe = SimConfig::new(1, 0);
        probe.net.latency = latency.clone();
        probe.validate().map_err(|mut e| {
            e.field = e.field.replacen("net.latency", field, 1);
            e
        })?;
        let bad = |e: &dyn std::fmt::Display| {
            ConfigError::new(field, format!("{latency:?}"), e.to_string())
        };
        Ok(match *latency {
            Latency::Constant { ms } => Delay::Constant(ms),
            Latency::Uniform { min_ms, max_ms } => Delay::Uniform(min_ms, max_ms),
            Latency::Normal { mean_ms, sd_ms } => {
                Delay::Normal(Normal::new(mean_ms, sd_ms).map_err(|e| bad(&e))?)
            }
            Latency::Exponential { mean_ms } => {
                Delay::Exponential(Exp::new(1.0 / mean_ms).map_err(|e| bad(&e))?)
            }
            Latency::LogNormal { median_ms, sigma } => {
                Delay::LogNormal(LogNormal::new(median_ms.ln(), sigma).map_err(|e| bad(&e))?)
            }
            Latency::Pareto { scale_ms, shape } => {
                Delay::Pareto(Pareto::new(scale_ms, shape).map_err(|e| bad(&e))?)
            }
            Latency::Empirical(ref e) => Delay::Empirical(e.clone()),
        })
    }

    /// One draw.
    pub(crate) fn sample(&self, rng: &mut Rng) -> Duration {
        let ms = match self {
            Delay::Constant(ms) => *ms,
            Delay::Uniform(lo, hi) => {
                if hi > lo {
                    rng.random_range(*lo..=*hi)
                } else {
                    *lo
                }
            }
            Delay::Normal(d) => (0..64)
                .map(|_| d.sample(rng))
                .find(|x| *x >= 0.0)
                .unwrap_or(0.0),
            Delay::Exponential(d) => d.sample(rng),
            Delay::LogNormal(d) => d.sample(rng),
            Delay::Pareto(d) => d.sample(rng),
            // As the simulator draws it: one uniform, through the measured inverse CDF.
            Delay::Empirical(e) => e.quantile(rng.random::<f64>()),
        };
        // A heavy tail can draw absurd values; no datagram waits longer than a minute.
        Duration::from_secs_f64((ms / 1e3).clamp(0.0, 60.0))
    }
}
