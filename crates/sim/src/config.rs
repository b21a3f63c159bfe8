//! Trial configuration: cluster size, seed, network model, fault timeline, horizon — and
//! its validation, which names the offending field and value.

use std::time::Duration;

use election_core::NodeId;
use rand::Rng as _;
use rand::RngCore as _;
use rand_distr::{Distribution, Exp, Normal, Pareto};

use crate::fault::{Fault, FaultAction, NodeSet, Selector};

/// A configuration the simulator refuses to run, naming the field and the value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid {field} = {value}: {reason}")]
pub struct ConfigError {
    /// Dotted path of the offending field, e.g. `net.latency.sd_ms` or `faults[2].at_ms`.
    pub field: String,
    /// The offending value as written.
    pub value: String,
    /// What a valid value looks like.
    pub reason: String,
}

impl ConfigError {
    /// A new error for `field` holding `value`.
    pub fn new(field: impl Into<String>, value: impl ToString, reason: impl Into<String>) -> Self {
        ConfigError {
            field: field.into(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

/// One-way message latency, in milliseconds. Every draw is independent.
#[derive(Clone, Debug, PartialEq)]
pub enum Latency {
    /// Always `ms`.
    Constant {
        /// The latency.
        ms: f64,
    },
    /// Uniform on `[min_ms, max_ms]`.
    Uniform {
        /// Lower bound.
        min_ms: f64,
        /// Upper bound.
        max_ms: f64,
    },
    /// Normal with the given mean and standard deviation, truncated at zero (negative draws
    /// are redrawn).
    Normal {
        /// Mean before truncation.
        mean_ms: f64,
        /// Standard deviation before truncation.
        sd_ms: f64,
    },
    /// Exponential with the given mean.
    Exponential {
        /// Mean.
        mean_ms: f64,
    },
    /// Log-normal: `exp(N(ln median_ms, sigma²))`.
    LogNormal {
        /// Median.
        median_ms: f64,
        /// Standard deviation of the underlying normal.
        sigma: f64,
    },
    /// Pareto (heavy tail) with minimum `scale_ms` and tail index `shape`.
    Pareto {
        /// Minimum value.
        scale_ms: f64,
        /// Tail index (smaller = heavier tail; the mean is finite only above 1).
        shape: f64,
    },
    /// Measured: raw samples or a histogram, drawn by inverse CDF (see [`crate::empirical`]).
    /// Validated when built, so it is always a valid distribution.
    Empirical(crate::empirical::SharedEmpirical),
}

impl Latency {
    /// The same distribution with every value multiplied by `k` (e.g. µs to ms: `k = 1e-3`).
    pub fn scaled(&self, k: f64) -> Latency {
        match *self {
            Latency::Empirical(ref e) => Latency::Empirical(std::sync::Arc::new(e.scaled(k))),
            Latency::Constant { ms } => Latency::Constant { ms: ms * k },
            Latency::Uniform { min_ms, max_ms } => Latency::Uniform {
                min_ms: min_ms * k,
                max_ms: max_ms * k,
            },
            Latency::Normal { mean_ms, sd_ms } => Latency::Normal {
                mean_ms: mean_ms * k,
                sd_ms: sd_ms * k,
            },
            Latency::Exponential { mean_ms } => Latency::Exponential {
                mean_ms: mean_ms * k,
            },
            Latency::LogNormal { median_ms, sigma } => Latency::LogNormal {
                median_ms: median_ms * k,
                sigma,
            },
            Latency::Pareto { scale_ms, shape } => Latency::Pareto {
                scale_ms: scale_ms * k,
                shape,
            },
        }
    }

    /// Always zero (a constant 0 ms): the "instant" of an ideal node.
    pub fn is_zero(&self) -> bool {
        matches!(*self, Latency::Constant { ms } if ms == 0.0)
    }

    /// The distribution's mean in milliseconds (infinite for a Pareto with `shape <= 1`);
    /// the truncated normal's mean is approximated by the untruncated one.
    pub fn mean_ms(&self) -> f64 {
        match *self {
            Latency::Empirical(ref e) => e.mean_ms(),
            Latency::Constant { ms } => ms,
            Latency::Uniform { min_ms, max_ms } => (min_ms + max_ms) / 2.0,
            Latency::Normal { mean_ms, .. } => mean_ms,
            Latency::Exponential { mean_ms } => mean_ms,
            Latency::LogNormal { median_ms, sigma } => median_ms * (sigma * sigma / 2.0).exp(),
            Latency::Pareto { scale_ms, shape } => {
                if shape > 1.0 {
                    shape * scale_ms / (shape - 1.0)
                } else {
                    f64::INFINITY
                }
            }
        }
    }

    /// Validate this distribution and make its sampler (the error names `field`).
    pub fn sampler(&self, field: &str) -> Result<Sampler, ConfigError> {
        fn finite_nonneg(field: &str, name: &str, v: f64) -> Result<(), ConfigError> {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(ConfigError::new(
                    format!("{field}.{name}"),
                    v,
                    "must be a finite number >= 0",
                ))
            }
        }
        fn positive(field: &str, name: &str, v: f64) -> Result<(), ConfigError> {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(ConfigError::new(
                    format!("{field}.{name}"),
                    v,
                    "must be a finite number > 0",
                ))
            }
        }
        Ok(match *self {
            Latency::Empirical(ref e) => Sampler::Empirical(e.clone()),
            Latency::Constant { ms } => {
                finite_nonneg(field, "ms", ms)?;
                Sampler::Constant(ms_to_ns(ms))
            }
            Latency::Uniform { min_ms, max_ms } => {
                finite_nonneg(field, "min_ms", min_ms)?;
                finite_nonneg(field, "max_ms", max_ms)?;
                if max_ms < min_ms {
                    return Err(ConfigError::new(
                        format!("{field}.max_ms"),
                        max_ms,
                        format!("must be >= min_ms ({min_ms})"),
                    ));
                }
                Sampler::Uniform(ms_to_ns(min_ms), ms_to_ns(max_ms))
            }
            Latency::Normal { mean_ms, sd_ms } => {
                finite_nonneg(field, "mean_ms", mean_ms)?;
                finite_nonneg(field, "sd_ms", sd_ms)?;
                let d = Normal::new(mean_ms, sd_ms).map_err(|e| {
                    ConfigError::new(format!("{field}.sd_ms"), sd_ms, e.to_string())
                })?;
                Sampler::Normal(d)
            }
            Latency::Exponential { mean_ms } => {
                positive(field, "mean_ms", mean_ms)?;
                let d = Exp::new(1.0 / mean_ms).map_err(|e| {
                    ConfigError::new(format!("{field}.mean_ms"), mean_ms, e.to_string())
                })?;
                Sampler::Exponential(d)
            }
            Latency::LogNormal { median_ms, sigma } => {
                positive(field, "median_ms", median_ms)?;
                finite_nonneg(field, "sigma", sigma)?;
                if sigma == 0.0 {
                    // No spread: always the median.
                    Sampler::Constant(ms_to_ns(median_ms))
                } else {
                    Sampler::LogNormal(LogNormalTable::shared(median_ms, sigma))
                }
            }
            Latency::Pareto { scale_ms, shape } => {
                positive(field, "scale_ms", scale_ms)?;
                positive(field, "shape", shape)?;
                let d = Pareto::new(scale_ms, shape).map_err(|e| {
                    ConfigError::new(format!("{field}.shape"), shape, e.to_string())
                })?;
                Sampler::Pareto(d)
            }
        })
    }
}

/// Milliseconds to whole nanoseconds, rounding half away from zero; negative and NaN give 0,
/// too large saturates. Equal to `(ms * 1e6).round().clamp(0.0, u64::MAX as f64) as u64` for
/// every input, without the `round` library call (this runs once per message).
#[inline]
pub(crate) fn ms_to_ns(ms: f64) -> u64 {
    round_to_u64(ms * 1e6)
}

/// `x.round().clamp(0.0, u64::MAX as f64) as u64` (round half away from zero; negative and NaN
/// give 0, too large saturates) without the `round` library call, which the default x86-64
/// target cannot inline (it runs once per message and once per input with drifting clocks).
#[inline]
pub(crate) fn round_to_u64(x: f64) -> u64 {
    // Float-to-int casts saturate (NaN to 0). Below 2^53, `x - floor(x)` is exact; above it
    // `x` is a whole number and the difference is 0 (or, past u64::MAX, saturates anyway).
    let i = to_u64(x);
    if x - i as f64 >= 0.5 {
        i.saturating_add(1)
    } else {
        i
    }
}

/// `x as u64`, through the signed conversion (one instruction on x86-64, where the unsigned one
/// takes a branchy sequence) below 2^63, where both agree (NaN and negatives give 0 either
/// way).
#[inline(always)]
fn to_u64(x: f64) -> u64 {
    if x < 9_223_372_036_854_775_808.0 {
        (x as i64).max(0) as u64
    } else {
        x as u64
    }
}

/// `x.ceil().clamp(0.0, u64::MAX as f64) as u64` without the `ceil` library call.
#[inline]
pub(crate) fn ceil_to_u64(x: f64) -> u64 {
    // Below 2^53 the truncation is exact, so `x` has a fraction exactly when it exceeds it;
    // above, `x` is whole (or saturates).
    let i = to_u64(x);
    if (i as f64) < x {
        i.saturating_add(1)
    } else {
        i
    }
}

/// A validated latency distribution, ready to draw nanoseconds from ([`Latency::sampler`]):
/// the simulator's per-message latency and the live driver's added delay.
#[derive(Clone, Debug)]
pub enum Sampler {
    /// Always this many ns.
    Constant(u64),
    /// Uniform over `[lo, hi]` ns.
    Uniform(u64, u64),
    /// Normal in ms, truncated at zero.
    Normal(Normal<f64>),
    /// Exponential in ms.
    Exponential(Exp<f64>),
    /// Log-normal, by its table of quantiles ([`LogNormalTable`]).
    LogNormal(std::sync::Arc<LogNormalTable>),
    /// Pareto in ms.
    Pareto(Pareto<f64>),
    /// A measured distribution, by its inverse CDF.
    Empirical(crate::empirical::SharedEmpirical),
}

impl Sampler {
    /// Exponential with the given mean (ms > 0, finite).
    pub(crate) fn exponential_ms(mean_ms: f64) -> Sampler {
        Sampler::Exponential(Exp::new(1.0 / mean_ms).expect("a positive finite mean"))
    }

    /// One draw, in nanoseconds.
    #[inline]
    pub fn sample_ns(&self, rng: &mut election_core::Rng) -> u64 {
        match self {
            Sampler::Constant(ns) => *ns,
            Sampler::Uniform(lo, hi) => {
                if hi > lo {
                    rng.random_range(*lo..=*hi)
                } else {
                    *lo
                }
            }
            Sampler::Normal(d) => {
                // Truncation at zero by rejection; after 64 negative draws (a mean many
                // deviations below zero) fall back to zero.
                for _ in 0..64 {
                    let x = d.sample(rng);
                    if x >= 0.0 {
                        return ms_to_ns(x);
                    }
                }
                0
            }
            Sampler::Exponential(d) => ms_to_ns(d.sample(rng)),
            Sampler::LogNormal(t) => t.sample_ns(rng),
            Sampler::Pareto(d) => ms_to_ns(d.sample(rng)),
            // One uniform draw per sample, inverted through the measured CDF.
            Sampler::Empirical(e) => ms_to_ns(e.quantile(rng.random::<f64>())),
        }
    }
}

/// Bits of a log-normal draw that pick its table bin: 4,096 bins of equal probability.
const LN_BITS: u32 = 12;
const LN_BINS: usize = 1 << LN_BITS;

/// A log-normal latency drawn by inverse transform: one 64-bit draw, a table lookup and a
/// linear interpolation, instead of a ziggurat normal draw and an `exp` (about 60 instructions
/// with the random draw itself, against 160; a latency is drawn for every message and, on
/// `server` nodes, a processing time for every input, so this was a sixth of a whole trial).
///
/// The 12 high bits of the draw pick one of 4,096 bins of equal probability; the low 52 bits,
/// `f`, the point within it. The table holds the distribution's exact quantiles at the bins'
/// edges (`median · exp(σ Φ⁻¹(i / 4096))`, through statrs' inverse error function), and a draw
/// in bin `i` is `q[i] + f (q[i+1] − q[i])`: the draws' distribution equals the log-normal's
/// at every edge, its CDF differs from it by less than 1/4096 anywhere in between (far less in
/// practice: within a bin the density is nearly flat), and its quantiles at the edges, the
/// median and the 1-in-4096 points among them, are exact. The two outer bins are unbounded, so
/// their draws (1 in 2,048) are computed exactly: `Φ⁻¹` of the drawn probability, with the
/// upper tail's taken from its complement so that it keeps its precision out to 1 − 2⁻⁶⁴.
///
/// Tables are built once per `(median, σ)` and shared by every trial of the process
/// ([`LogNormalTable::shared`]): a sweep draws from a handful of distributions (the network's,
/// the processing time's, the disk's). The values depend only on `(median, σ)`, so sharing
/// changes no draw.
pub struct LogNormalTable {
    median_ms: f64,
    sigma: f64,
    /// `ln` of the median in ns.
    mu: f64,
    /// The quantile at `i / LN_BINS`, in ns, for `i` in `1..LN_BINS` (`q[0]` and `q[LN_BINS]`
    /// are unused: the outer bins are drawn exactly). A fixed size, so that indexing it needs
    /// no bounds check.
    q: Box<[f64; LN_BINS + 1]>,
}

impl std::fmt::Debug for LogNormalTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogNormalTable")
            .field("median_ms", &self.median_ms)
            .field("sigma", &self.sigma)
            .finish_non_exhaustive()
    }
}

impl LogNormalTable {
    /// The table of the log-normal of median `median_ms` (> 0) and `sigma` (> 0): the one
    /// already built in this process, or a new one.
    pub fn shared(median_ms: f64, sigma: f64) -> std::sync::Arc<LogNormalTable> {
        use std::sync::{Arc, Mutex, PoisonError};
        /// At most this many tables are kept (a tune run visits a few dozen distributions).
        const KEEP: usize = 64;
        static TABLES: Mutex<Vec<Arc<LogNormalTable>>> = Mutex::new(Vec::new());
        let mut tables = TABLES.lock().unwrap_or_else(PoisonError::into_inner);
        let same = |t: &&Arc<LogNormalTable>| {
            t.median_ms.to_bits() == median_ms.to_bits() && t.sigma.to_bits() == sigma.to_bits()
        };
        if let Some(t) = tables.iter().find(same) {
            return Arc::clone(t);
        }
        let t = Arc::new(LogNormalTable::new(median_ms, sigma));
        if tables.len() >= KEEP {
            tables.remove(0);
        }
        tables.push(Arc::clone(&t));
        t
    }

    fn new(median_ms: f64, sigma: f64) -> LogNormalTable {
        let mut t = LogNormalTable {
            median_ms,
            sigma,
            mu: (median_ms * 1e6).ln(),
            q: Box::new([f64::NAN; LN_BINS + 1]),
        };
        for i in 1..LN_BINS {
            t.q[i] = t.at_z(probit(i as f64 / LN_BINS as f64));
        }
        t
    }

    /// The value (ns) at `z` standard deviations of the underlying normal.
    #[inline]
    fn at_z(&self, z: f64) -> f64 {
        (self.mu + self.sigma * z).exp()
    }

    /// One draw, in nanoseconds.
    #[inline]
    pub fn sample_ns(&self, rng: &mut election_core::Rng) -> u64 {
        let u = rng.next_u64();
        let i = (u >> (64 - LN_BITS)) as usize;
        let k = u & ((1 << 52) - 1);
        if i == 0 || i == LN_BINS - 1 {
            return self.tail_ns(i == 0, k);
        }
        // Signed conversions, one instruction each where unsigned ones take several: `k` is
        // below 2^52, and a value past 2^63 ns (292 years, past any horizon) saturates there.
        // Rounded half up (the value is positive).
        let f = k as i64 as f64 * (1.0 / (1u64 << 52) as f64);
        // `i < LN_BINS`: the high 12 bits.
        let (lo, hi) = (self.q[i], self.q[i + 1]);
        (lo + (hi - lo) * f + 0.5) as i64 as u64
    }

    /// A draw in an outer bin, at `k / 2⁵²` of its way out from the table's edge (1 draw in
    /// 2,048; out of line, so that the common path stays small enough to inline).
    #[cold]
    #[inline(never)]
    fn tail_ns(&self, lower: bool, k: u64) -> u64 {
        let z = if lower {
            // Probability f / 4096 below.
            probit(k as f64 * (1.0 / (1u64 << 52) as f64) / LN_BINS as f64)
        } else {
            // Probability (1 − f) / 4096 above, from the complement (exact: `1 − f` is a whole
            // number of 2⁻⁵² steps).
            let above = ((1u64 << 52) - k) as f64 * (1.0 / (1u64 << 52) as f64);
            -probit(above / LN_BINS as f64)
        };
        round_to_u64(self.at_z(z))
    }
}

/// `Φ⁻¹(p)`, the standard normal's quantile, for `p` in `[0, 1)` (`−∞` at 0).
fn probit(p: f64) -> f64 {
    -std::f64::consts::SQRT_2 * statrs::function::erf::erfc_inv(2.0 * p)
}

/// A per-link latency override (one direction).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkLatency {
    /// Sender.
    pub from: NodeId,
    /// Receiver.
    pub to: NodeId,
    /// Latency on this link instead of the default.
    pub latency: Latency,
}

/// The network model.
#[derive(Clone, Debug, PartialEq)]
pub struct NetConfig {
    /// Default one-way latency of every link.
    pub latency: Latency,
    /// Probability that a sent message is lost, in `[0, 1]`.
    pub loss: f64,
    /// Probability that a sent (not lost) message is delivered twice, in `[0, 1]`; the copy
    /// draws its own latency.
    pub duplicate: f64,
    /// `true`: every link delivers in the order it sent (a message never overtakes an earlier
    /// one on the same link). `false`: each message's latency is independent, so messages
    /// may be reordered.
    pub fifo: bool,
    /// Per-link latency overrides.
    pub links: Vec<LinkLatency>,
}

impl NetConfig {
    /// A reliable FIFO network with constant latency `ms`.
    pub fn constant_ms(ms: f64) -> Self {
        NetConfig {
            latency: Latency::Constant { ms },
            loss: 0.0,
            duplicate: 0.0,
            fifo: true,
            links: Vec::new(),
        }
    }
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig::constant_ms(1.0)
    }
}

/// The time a node spends and the clock it reads: the simulator's model of a real server, next
/// to its model of the network. Protocols see none of it except through [`Io`](election_core::Io):
/// `Io::now` is the node's own clock, and timers are armed in that clock.
///
/// * **Processing time** (`cpu`): every input a node handles (a message, a timer, a boot) keeps
///   it busy for a draw of `cpu`; inputs arriving meanwhile wait in its queue and are handled in
///   arrival order when it is free, as a single-threaded server would. The input's messages
///   leave when its processing is done. A timer that only re-arms or cancels timers (a
///   tick-driven library's tick that just counts, a check that finds nothing to do) takes
///   none: it costs a real node a counter increment, and charging it a message's draw would
///   make a finer tick (`raftrs+tick_ms`) a slower node.
/// * **Stable storage** (`fsync`): an action that follows a `persist` in the same input leaves only
///   when the write is durable, a draw of `fsync` later; the node handles nothing else meanwhile.
/// * **Clocks**: each node's clock runs at rate `1 + U[-drift_ppm, +drift_ppm]·10⁻⁶` from an offset
///   `U[0, offset_ms]`, drawn per trial and node; a timer armed for local instant `L` fires at the
///   global instant at which the node's clock reads `L`, plus `U[0, timer_jitter_ms]` (a runtime's
///   timer granularity). Timers are monotonic: a later clock jump (`ClockJump`) moves what `now`
///   reads, not timers already armed; a rate change (`ClockRate`) applies to timers armed after it.
///
/// One simplification: an input's actions are decided when it starts, so the messages of an
/// input still in progress (processing or fsync) when its node crashes leave anyway, at most one
/// processing time plus one fsync after the crash.
///
/// [`NodeTime::IDEAL`] (the default of a bare `SimConfig`) is instantaneous processing and
/// storage and perfect clocks: every event at the instant it is due.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeTime {
    /// Per-input processing time (`None`: instantaneous).
    pub cpu: Option<Latency>,
    /// Stable-storage write latency (`None`: instantaneous).
    pub fsync: Option<Latency>,
    /// Upper bound of the delay added to every timer firing, ms.
    pub timer_jitter_ms: f64,
    /// Bound of each node's clock rate error, parts per million.
    pub drift_ppm: f64,
    /// Bound of each node's clock offset, ms.
    pub offset_ms: f64,
}

impl NodeTime {
    /// Instantaneous nodes with perfect clocks.
    pub const IDEAL: NodeTime = NodeTime {
        cpu: None,
        fsync: None,
        timer_jitter_ms: 0.0,
        drift_ppm: 0.0,
        offset_ms: 0.0,
    };

    /// Nothing takes time and every clock is perfect.
    pub fn is_ideal(&self) -> bool {
        self.cpu.as_ref().is_none_or(Latency::is_zero)
            && self.fsync.as_ref().is_none_or(Latency::is_zero)
            && self.timer_jitter_ms == 0.0
            && self.drift_ppm == 0.0
            && self.offset_ms == 0.0
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if let Some(l) = &self.cpu {
            l.sampler("node.cpu_us")?;
        }
        if let Some(l) = &self.fsync {
            l.sampler("node.fsync_ms")?;
        }
        for (field, v, max) in [
            ("node.timer_jitter_ms", self.timer_jitter_ms, 1e12),
            ("clock.drift_ppm", self.drift_ppm, 100_000.0),
            ("clock.offset_ms", self.offset_ms, 1e12),
        ] {
            if !(v.is_finite() && (0.0..=max).contains(&v)) {
                return Err(ConfigError::new(
                    field,
                    v,
                    format!("must be a finite number in [0, {max}]"),
                ));
            }
        }
        Ok(())
    }
}

impl Default for NodeTime {
    fn default() -> Self {
        NodeTime::IDEAL
    }
}

/// Everything that defines one trial. The same `SimConfig` (and protocol factory) gives the
/// same event sequence on every machine.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Cluster size; node ids are `1..=nodes`.
    pub nodes: u32,
    /// Service endpoints the protocol needs besides its members (the lease store): ids
    /// `nodes + 1 ..= nodes + services`, built by the same factory and driven like any node
    /// (messages, timers, crashes, pauses, clocks, processing time), but not members of the
    /// cluster: they are left out of every leadership and agreement metric, of `n`, of the
    /// majority commit's quorum, and of every selector but [`Selector::Service`]. Partitions
    /// split members only, so a service endpoint's links are cut only by actions that name it
    /// (`cut_link`, `isolate`) or isolate the member at their other end. 0 (the default): none.
    pub services: u32,
    /// The trial seed. The network, the protocols and the fault selectors each draw from
    /// their own ChaCha8 stream of this seed, so a different protocol sending a different
    /// number of messages does not shift which node `Selector::Random` picks.
    pub seed: u64,
    /// The network model.
    pub net: NetConfig,
    /// The fault timeline.
    pub faults: Vec<Fault>,
    /// The trial never runs past this instant.
    pub horizon: Duration,
    /// The election timeout the `outcome`'s `recovered_timeouts` counts in (see the
    /// [observer](crate::observer) docs); 150 ms by default.
    pub election_timeout: Duration,
    /// A trial ends early once every fault has fired and the cluster has had the same quorum
    /// leader for `settle` (and for the [`hold`](SimConfig::hold) span) since both the start
    /// of its leadership and the last fault. It does not enter the verdict.
    pub settle: Duration,
    /// The hold span of the `outcome` verdict: how long a quorum leadership must last past
    /// the calm for the cluster to count as settled (see the [observer](crate::observer)
    /// docs); 2 s by default. The runner sets it to ten of the protocol's longest election
    /// timeouts.
    pub hold: Duration,
    /// Never end early: run to the horizon whatever happens (a steady-state window of fixed
    /// length, such as the runner's `steady-noise`); the settle window still feeds the
    /// `outcome` verdict. Off by default.
    pub run_to_horizon: bool,
    /// Record every event in [`TrialReport::trace`](crate::TrialReport::trace).
    pub trace: bool,
    /// The reference instant for every duration metric, in ms. `None`: the instant the
    /// [`reference_fault`](SimConfig::reference_fault) fired, else the instant the first fault
    /// fired (its scheduled time, shifted by any wait for a leader), or zero when there are no
    /// faults (a cold start).
    pub reference_ms: Option<f64>,
    /// Measure from the instant this fault (an index into [`faults`](SimConfig::faults)) fires
    /// instead of the first one: its scheduled time, shifted with the whole timeline by any wait
    /// for a leader, so earlier faults can run (a leader crash, say) and a new leader settle
    /// before the measured one. `None` (the default): the first fault. Not with
    /// [`reference_ms`](SimConfig::reference_ms). If the timeline gives up waiting for a leader,
    /// the reference is the instant it gave up, as without this option.
    pub reference_fault: Option<usize>,
    /// Hold the fault timeline until the cluster has a quorum leader, waiting at most this
    /// long after the first fault's scheduled instant (see the [`fault`](crate::fault) module
    /// docs). `None`: faults fire at their scheduled instants whoever leads.
    pub fault_wait: Option<Duration>,
    /// The leader's work and the shared resource (see [`crate::workload`]); off by default.
    pub workload: crate::workload::Workload,
    /// The time nodes spend and their clocks ([`NodeTime::IDEAL`] by default).
    pub node: NodeTime,
    /// Background noise (pauses, disk stalls, latency spikes) from time zero to the horizon;
    /// none by default (see [`crate::noise`]).
    pub noise: crate::noise::Noise,
    /// The work budget: events processed plus messages sent. A trial that uses it up stops
    /// there (no wall clock involved, so the stop is deterministic) and reports
    /// [`Metrics::budget_exceeded`](crate::Metrics::budget_exceeded). At least 1. A trial
    /// also stops so when more than 2^24 events (16.8 M: messages in flight, timers) wait at
    /// once, which a large enough cluster's boot storm reaches before its work budget.
    pub budget: u64,
}

impl SimConfig {
    /// `n` nodes, the given seed, a 1 ms constant-latency reliable network, no faults, a 30 s
    /// horizon and a 2 s settle window.
    pub fn new(n: u32, seed: u64) -> Self {
        SimConfig {
            nodes: n,
            services: 0,
            seed,
            net: NetConfig::default(),
            faults: Vec::new(),
            horizon: Duration::from_secs(30),
            election_timeout: Duration::from_millis(150),
            settle: Duration::from_secs(2),
            hold: Duration::from_secs(2),
            run_to_horizon: false,
            trace: false,
            reference_ms: None,
            reference_fault: None,
            fault_wait: None,
            workload: crate::workload::Workload::OFF,
            budget: SimConfig::default_budget(n),
            node: NodeTime::IDEAL,
            noise: crate::noise::Noise::default(),
        }
    }

    /// Work units per node in [`SimConfig::default_budget`].
    pub const BUDGET_PER_NODE: u64 = 100_000;
    /// The most [`SimConfig::default_budget`] gives, whatever the cluster size.
    pub const BUDGET_CAP: u64 = 20_000_000;

    /// The default work budget for `n` nodes: [`SimConfig::BUDGET_PER_NODE`] × `n`, at most
    /// [`SimConfig::BUDGET_CAP`]. That is 5.1 million at 51 nodes, about 13 times the heaviest
    /// trial of the default sweep; the cap (from 200 nodes) stops a runaway trial within
    /// seconds to a minute and about 1 GB of queued messages (bully at 5001 nodes: 16 s).
    pub fn default_budget(n: u32) -> u64 {
        Self::BUDGET_PER_NODE
            .saturating_mul(u64::from(n.max(1)))
            .min(Self::BUDGET_CAP)
    }

    /// The reference instant in nanoseconds (see [`SimConfig::reference_ms`]).
    pub fn reference(&self) -> election_core::Time {
        let reference_fault = self
            .reference_fault
            .and_then(|i| self.faults.get(i))
            .map(|f| f.at_ms);
        let ms = self.reference_ms.or(reference_fault).unwrap_or_else(|| {
            self.faults
                .iter()
                .map(|f| f.at_ms)
                .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.min(t))))
                .unwrap_or(0.0)
        });
        election_core::Time(ms_to_ns(ms))
    }

    /// Check every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let n = self.nodes;
        if n == 0 {
            return Err(ConfigError::new(
                "nodes",
                n,
                "a cluster needs at least 1 node",
            ));
        }
        if n > 100_000 {
            return Err(ConfigError::new(
                "nodes",
                n,
                "at most 100000 nodes are supported",
            ));
        }
        // The engine numbers the boots below 2^22 and the timeline's events in a range of
        // 2^21 (see its sequence-number ranges).
        if self.services > 100_000 {
            return Err(ConfigError::new(
                "services",
                self.services,
                "at most 100000 service endpoints are supported",
            ));
        }
        if self.faults.len() >= 1 << 20 {
            return Err(ConfigError::new(
                "faults",
                self.faults.len(),
                "at most 1048575 faults are supported",
            ));
        }
        self.net.latency.sampler("net.latency")?;
        self.workload.stop_lag.sampler("leader.stop_lag_ms")?;
        self.node.validate()?;
        self.noise.validate(n, self.horizon.as_secs_f64() * 1e3)?;
        for (name, p) in [
            ("net.loss", self.net.loss),
            ("net.duplicate", self.net.duplicate),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(ConfigError::new(name, p, "must be a probability in [0, 1]"));
            }
        }
        for (i, l) in self.net.links.iter().enumerate() {
            check_id(&format!("net.links[{i}].from"), l.from, n)?;
            check_id(&format!("net.links[{i}].to"), l.to, n)?;
            l.latency.sampler(&format!("net.links[{i}].latency"))?;
        }
        if self.budget == 0 {
            return Err(ConfigError::new(
                "budget",
                0,
                "the work budget must allow at least 1 event",
            ));
        }
        if self.horizon.is_zero() {
            return Err(ConfigError::new("horizon", "0", "must be positive"));
        }
        if let Some(r) = self.reference_ms {
            if !(r.is_finite() && r >= 0.0) {
                return Err(ConfigError::new(
                    "reference_ms",
                    r,
                    "must be a finite time >= 0",
                ));
            }
        }
        if let Some(i) = self.reference_fault {
            if i >= self.faults.len() {
                return Err(ConfigError::new(
                    "reference_fault",
                    i,
                    format!("there are {} faults", self.faults.len()),
                ));
            }
            if self.reference_ms.is_some() {
                return Err(ConfigError::new(
                    "reference_fault",
                    i,
                    "give reference_ms or reference_fault, not both",
                ));
            }
        }
        for (i, f) in self.faults.iter().enumerate() {
            let field = format!("faults[{i}]");
            if !(f.at_ms.is_finite() && f.at_ms >= 0.0) {
                return Err(ConfigError::new(
                    format!("{field}.at_ms"),
                    f.at_ms,
                    "a fault must be scheduled at a finite time >= 0",
                ));
            }
            validate_action(&field, &f.action, n, self.services)?;
        }
        Ok(())
    }
}

fn check_id(field: &str, id: NodeId, n: u32) -> Result<(), ConfigError> {
    if id.0 >= 1 && id.0 <= n {
        Ok(())
    } else {
        Err(ConfigError::new(
            field,
            id.0,
            format!("node ids run from 1 to {n}"),
        ))
    }
}

fn check_selector(
    field: &str,
    s: &Selector,
    n: u32,
    services: u32,
    allow_rest: bool,
) -> Result<(), ConfigError> {
    match *s {
        Selector::Id(id) => check_id(field, id, n),
        Selector::KthHighest(k) | Selector::KthLowest(k) => {
            if k >= 1 && k <= n {
                Ok(())
            } else {
                Err(ConfigError::new(field, k, format!("k must be in 1..={n}")))
            }
        }
        Selector::Service(_) if allow_rest => Err(ConfigError::new(
            field,
            "store",
            "a service endpoint is not a member: partitions split members (cut its links with \
             cut_link or isolate instead)",
        )),
        Selector::Service(k) if k < 1 || k > services => Err(ConfigError::new(
            field,
            k,
            if services == 0 {
                "this protocol has no service endpoint (no store)".to_string()
            } else {
                format!("service endpoints run from 1 to {services}")
            },
        )),
        Selector::Rest if !allow_rest => Err(ConfigError::new(
            field,
            "rest",
            "`rest` is only meaningful inside a partition group",
        )),
        _ => Ok(()),
    }
}

fn check_set(field: &str, s: &NodeSet, n: u32, services: u32) -> Result<(), ConfigError> {
    match s {
        NodeSet::All => Ok(()),
        NodeSet::One(s) | NodeSet::AllExcept(s) | NodeSet::Above(s) | NodeSet::Below(s) => {
            check_selector(field, s, n, services, false)
        }
    }
}

fn validate_action(field: &str, a: &FaultAction, n: u32, services: u32) -> Result<(), ConfigError> {
    let node = |s: &Selector| check_selector(&format!("{field}.node"), s, n, services, false);
    let sets = |from: &NodeSet, to: &NodeSet| {
        check_set(&format!("{field}.from"), from, n, services)?;
        check_set(&format!("{field}.to"), to, n, services)
    };
    match a {
        FaultAction::Crash(s)
        | FaultAction::Recover(s)
        | FaultAction::Isolate(s)
        | FaultAction::Suspect(s)
        | FaultAction::Handover(s)
        | FaultAction::Amnesia(s)
        | FaultAction::Pause { node: s, .. }
        | FaultAction::Slow { node: s, .. }
        | FaultAction::ClockJump { node: s, .. }
        | FaultAction::ClockRate { node: s, .. } => node(s)?,
        FaultAction::CutLink { from, to }
        | FaultAction::StaleConnection { from, to, .. }
        | FaultAction::LinkLoss { from, to, .. }
        | FaultAction::LinkDelay { from, to, .. } => sets(from, to)?,
        FaultAction::Detection { nodes, .. } | FaultAction::ResourceCut(nodes) => {
            check_set(&format!("{field}.nodes"), nodes, n, services)?
        }
        FaultAction::Heal | FaultAction::SetLoss(_) => {}
        FaultAction::Links { pairs, .. } => {
            for (k, (a, b)) in pairs.iter().enumerate() {
                check_selector(&format!("{field}.pairs[{k}].from"), a, n, services, false)?;
                check_selector(&format!("{field}.pairs[{k}].to"), b, n, services, false)?;
            }
        }
        FaultAction::Partition(groups) => {
            validate_partition(&format!("{field}.groups"), groups, n, services)?
        }
    }
    a.check_values().map_err(|e| ConfigError {
        field: format!("{field}.{}", e.field),
        ..e
    })
}

fn validate_partition(
    field: &str,
    groups: &[Vec<Selector>],
    n: u32,
    services: u32,
) -> Result<(), ConfigError> {
    if groups.len() < 2 {
        return Err(ConfigError::new(
            field,
            groups.len(),
            "a partition needs at least two groups",
        ));
    }
    let mut rest_groups = 0;
    let mut all_explicit = true;
    let mut seen = vec![false; n as usize];
    for (g, group) in groups.iter().enumerate() {
        if group.is_empty() {
            return Err(ConfigError::new(
                format!("{field}[{g}]"),
                "[]",
                "a group cannot be empty",
            ));
        }
        for (j, s) in group.iter().enumerate() {
            let f = format!("{field}[{g}][{j}]");
            check_selector(&f, s, n, services, true)?;
            match s {
                Selector::Rest => {
                    rest_groups += 1;
                    if group.len() != 1 {
                        return Err(ConfigError::new(
                            f,
                            "rest",
                            "`rest` must be alone in its group",
                        ));
                    }
                }
                Selector::Id(id) => {
                    if std::mem::replace(&mut seen[id.index()], true) {
                        return Err(ConfigError::new(
                            f,
                            id.0,
                            "node appears in more than one partition group",
                        ));
                    }
                }
                _ => all_explicit = false,
            }
        }
    }
    if rest_groups > 1 {
        return Err(ConfigError::new(
            field,
            rest_groups,
            "at most one group may be `rest`",
        ));
    }
    if rest_groups == 0 {
        if !all_explicit {
            return Err(ConfigError::new(
                field,
                "(dynamic selectors)",
                "a partition with selectors other than explicit ids needs a `rest` group so no node is left out",
            ));
        }
        if let Some(i) = seen.iter().position(|s| !s) {
            return Err(ConfigError::new(
                field,
                format!("node {} in no group", i + 1),
                "partition groups must cover every node (or use a `rest` group)",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use election_core::SeedableRng;

    /// Mean and standard deviation of 200 000 draws, in ms.
    fn moments(l: &Latency) -> (f64, f64) {
        let s = l.sampler("latency").unwrap();
        let mut rng = election_core::Rng::seed_from_u64(7);
        let k = 200_000;
        let xs: Vec<f64> = (0..k).map(|_| s.sample_ns(&mut rng) as f64 / 1e6).collect();
        let mean = xs.iter().sum::<f64>() / k as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (k - 1) as f64;
        (mean, var.sqrt())
    }

    fn close(got: f64, want: f64, rel: f64) {
        assert!(
            (got - want).abs() <= rel * want,
            "got {got}, want {want} ± {}%",
            rel * 100.0
        );
    }

    #[test]
    fn round_and_ceil_to_u64_equal_the_library_calls() {
        let round = |x: f64| x.round().clamp(0.0, u64::MAX as f64) as u64;
        let ceil = |x: f64| x.ceil().clamp(0.0, u64::MAX as f64) as u64;
        let mut rng = election_core::Rng::seed_from_u64(5);
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            -0.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            4_503_599_627_370_495.5,
            9_007_199_254_740_993.0,
            u64::MAX as f64,
            9_223_372_036_854_775_808.0,
            9_223_372_036_854_774_784.0,
            -9_223_372_036_854_775_808.0,
            -1e30,
            1e30,
        ];
        for _ in 0..1_000_000 {
            xs.push(f64::from_bits(rng.random::<u64>()));
            xs.push(rng.random_range(0u64..1 << 62) as f64 + rng.random_range(0.0..1.0));
            xs.push(rng.random_range(0u64..1 << 50) as f64 + 0.5);
            xs.push(rng.random_range(-1.0..1e12));
        }
        for x in xs {
            assert_eq!(round_to_u64(x), round(x), "round {x:e}");
            assert_eq!(ceil_to_u64(x), ceil(x), "ceil {x:e}");
        }
    }

    #[test]
    fn ms_to_ns_rounds_like_f64_round() {
        let reference = |ms: f64| (ms * 1e6).round().clamp(0.0, u64::MAX as f64) as u64;
        let edge = [
            0.0,
            -0.0,
            0.5e-6,
            f64::from_bits(0.5e-6f64.to_bits() - 1),
            1.5e-6,
            2.5e-6,
            -0.5e-6,
            -1e-6,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e300,
            u64::MAX as f64 / 1e6,
            4_503_599_627_370_495.5 / 1e6,
            9_007_199_254_740_994.0 / 1e6,
        ];
        for ms in edge {
            assert_eq!(ms_to_ns(ms), reference(ms), "{ms:e}");
        }
        let mut rng = election_core::Rng::seed_from_u64(3);
        for _ in 0..1_000_000 {
            let any = f64::from_bits(rng.random::<u64>());
            let half = (rng.random_range(0..1u64 << 50) as f64 + 0.5) / 1e6;
            let small = rng.random_range(-1.0..1e4);
            for ms in [any, half, small] {
                assert_eq!(ms_to_ns(ms), reference(ms), "{ms:e}");
            }
        }
    }

    #[test]
    fn a_reference_fault_must_exist_and_stand_alone() {
        use crate::{Fault, FaultAction};
        let mut c = SimConfig::new(3, 0);
        c.faults = vec![
            Fault::at_ms(100.0, FaultAction::Heal),
            Fault::at_ms(300.0, FaultAction::Heal),
        ];
        assert_eq!(c.reference(), election_core::Time(100_000_000));
        c.reference_fault = Some(1);
        assert!(c.validate().is_ok());
        assert_eq!(c.reference(), election_core::Time(300_000_000));
        c.reference_fault = Some(2);
        let e = c.validate().unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.value.as_str()),
            ("reference_fault", "2")
        );
        c.reference_fault = Some(0);
        c.reference_ms = Some(50.0);
        let e = c.validate().unwrap_err();
        assert!(
            e.field == "reference_fault" && e.reason.contains("not both"),
            "{e}"
        );
    }

    #[test]
    fn constant_has_no_spread() {
        assert_eq!(moments(&Latency::Constant { ms: 2.5 }), (2.5, 0.0));
    }

    #[test]
    fn uniform_mean_and_spread() {
        let (m, sd) = moments(&Latency::Uniform {
            min_ms: 1.0,
            max_ms: 3.0,
        });
        close(m, 2.0, 0.01);
        close(sd, 2.0 / 12f64.sqrt(), 0.02);
    }

    #[test]
    fn normal_mean_and_spread_when_truncation_is_negligible() {
        let (m, sd) = moments(&Latency::Normal {
            mean_ms: 10.0,
            sd_ms: 2.0,
        });
        close(m, 10.0, 0.01);
        close(sd, 2.0, 0.02);
    }

    #[test]
    fn normal_truncated_at_zero_never_goes_negative() {
        let s = Latency::Normal {
            mean_ms: 0.1,
            sd_ms: 1.0,
        }
        .sampler("l")
        .unwrap();
        let mut rng = election_core::Rng::seed_from_u64(1);
        // Half-normal-ish: the mean is well above the untruncated 0.1 ms.
        let mean = (0..50_000)
            .map(|_| s.sample_ns(&mut rng) as f64)
            .sum::<f64>()
            / 50_000.0
            / 1e6;
        assert!(mean > 0.5, "{mean}");
    }

    #[test]
    fn exponential_mean_equals_spread() {
        let (m, sd) = moments(&Latency::Exponential { mean_ms: 4.0 });
        close(m, 4.0, 0.02);
        close(sd, 4.0, 0.03);
    }

    #[test]
    fn lognormal_mean_and_spread() {
        let l = Latency::LogNormal {
            median_ms: 1.0,
            sigma: 0.5,
        };
        let (m, sd) = moments(&l);
        let want_mean = (0.125f64).exp();
        let want_sd = ((0.25f64).exp() - 1.0).sqrt() * want_mean;
        close(m, want_mean, 0.01);
        close(m, l.mean_ms(), 0.01);
        close(sd, want_sd, 0.03);
    }

    /// The table's edges are the log-normal's exact quantiles: `Φ((ln q_i − μ) / σ)`, through
    /// statrs' error function (not the inverse the table was built with), is `i / 4096` to
    /// within a relative 10⁻⁹ (the two functions' own accuracy in the tails).
    #[test]
    fn lognormal_table_edges_are_exact_quantiles() {
        for (median_ms, sigma) in [
            (0.25, 0.3),
            (0.02, 0.5),
            (2.0, 0.5),
            (25.0, 0.35),
            (1.0, 2.0),
        ] {
            let t = LogNormalTable::shared(median_ms, sigma);
            for i in (1..LN_BINS)
                .step_by(7)
                .chain([1, 2, LN_BINS - 2, LN_BINS - 1])
            {
                let z = ((t.q[i]).ln() - (median_ms * 1e6).ln()) / sigma;
                let p = 0.5 * statrs::function::erf::erfc(-z / std::f64::consts::SQRT_2);
                let want = i as f64 / LN_BINS as f64;
                assert!(
                    (p - want).abs() < 1e-9 * want,
                    "median {median_ms}, sigma {sigma}, edge {i}: P = {p}, want {want}"
                );
            }
            assert!(
                t.q[1..LN_BINS].windows(2).all(|w| w[0] < w[1]),
                "increasing"
            );
        }
    }

    /// Draws through the table follow the log-normal: the share of draws below each of 12
    /// quantiles, from 1 in 100,000 to 99,999 in 100,000 (the outer ones in the exactly drawn
    /// tail bins), is within 5 binomial standard deviations of its probability, and the
    /// largest gap between the draws' CDF and the log-normal's (the Kolmogorov–Smirnov
    /// statistic) is below its 1 % critical value; the mean is the log-normal's.
    #[test]
    fn lognormal_draws_follow_the_distribution() {
        let (median_ms, sigma) = (0.25, 0.3);
        let s = Latency::LogNormal { median_ms, sigma }
            .sampler("x")
            .unwrap();
        let mut rng = crate::Stream::Net.rng(42);
        let n = 400_000;
        let mut v: Vec<f64> = (0..n).map(|_| s.sample_ns(&mut rng) as f64).collect();
        v.sort_by(f64::total_cmp);
        let cdf = |x: f64| {
            let z = (x.ln() - (median_ms * 1e6).ln()) / sigma;
            0.5 * statrs::function::erf::erfc(-z / std::f64::consts::SQRT_2)
        };
        let quantile = |p: f64| (median_ms * 1e6) * (sigma * probit(p)).exp();
        for p in [
            1e-5, 1e-4, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999, 0.99999,
        ] {
            let below = v.partition_point(|&x| x < quantile(p)) as f64;
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (below - n as f64 * p).abs() <= 5.0 * sd + 1.0,
                "p = {p}: {below} of {n} below"
            );
        }
        let ks = v
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let f = cdf(x);
                (f - i as f64 / n as f64)
                    .abs()
                    .max((f - (i + 1) as f64 / n as f64).abs())
            })
            .fold(0.0, f64::max);
        assert!(ks < 1.63 / (n as f64).sqrt(), "KS statistic {ks}");
        let mean = v.iter().sum::<f64>() / n as f64;
        let want = median_ms * 1e6 * (sigma * sigma / 2.0).exp();
        assert!(
            (mean / want - 1.0).abs() < 0.002,
            "mean {mean} against {want}"
        );
        // The tails reach past the table: the exactly drawn outer bins.
        assert!(v[n - 1] > LogNormalTable::shared(median_ms, sigma).q[LN_BINS - 1]);
        assert!(v[0] < LogNormalTable::shared(median_ms, sigma).q[1]);
    }

    #[test]
    fn pareto_mean_and_spread() {
        // shape 5: mean = 5/4 * scale, variance finite.
        let l = Latency::Pareto {
            scale_ms: 2.0,
            shape: 5.0,
        };
        let (m, sd) = moments(&l);
        close(m, 2.5, 0.01);
        let want_sd = (2.0f64 * 2.0 * 5.0 / (16.0 * 3.0)).sqrt();
        close(sd, want_sd, 0.05);
        assert!(Latency::Pareto {
            scale_ms: 1.0,
            shape: 1.0
        }
        .mean_ms()
        .is_infinite());
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let e = Latency::Uniform {
            min_ms: 3.0,
            max_ms: 1.0,
        }
        .sampler("net.latency")
        .unwrap_err();
        assert_eq!(e.field, "net.latency.max_ms");
        let e = Latency::Pareto {
            scale_ms: 1.0,
            shape: 0.0,
        }
        .sampler("x")
        .unwrap_err();
        assert_eq!((e.field.as_str(), e.value.as_str()), ("x.shape", "0"));
        let e = Latency::LogNormal {
            median_ms: 1.0,
            sigma: f64::NAN,
        }
        .sampler("x")
        .unwrap_err();
        assert_eq!((e.field.as_str(), e.value.as_str()), ("x.sigma", "NaN"));
    }
}
