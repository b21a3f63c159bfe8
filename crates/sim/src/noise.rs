//! Background noise: what a healthy cluster lives with — stop-the-world pauses (a garbage
//! collector), disk stalls, latency spikes — as opposed to faults, which a scenario fires to
//! test a failover.
//!
//! Noise is not a fault: it never sets the reference instant, never waits for a leader, is
//! never "skipped" (a pause drawn for a crashed or already paused node simply does not
//! happen), and it runs for the whole trial, from time zero to the horizon. It is what makes a
//! healthy cluster hold an election nobody needed (issue #17's `steady-noise` scenario), and
//! what a failover must get through.
//!
//! # The model
//!
//! Each kind is a renewal process per member (service endpoints, such as the lease store, are
//! left alone: their own noise is a scenario's `slow` fault): the gaps between the end of one
//! burst and the start of the next are exponential with the kind's rate, so bursts of one
//! kind on one node never overlap, and a rate of `r` per hour gives about `r` bursts per hour
//! while bursts are short against the gaps.
//!
//! * [`Noise::pause`] — a stop-the-world pause of `ms` (a draw per pause): the node handles
//!   nothing, exactly as the [`Pause`](crate::FaultAction::Pause) fault; messages and timers
//!   queue and are handled when it wakes.
//! * [`Noise::stall`] — a disk stall, modelled the same way: a node whose stable-storage write
//!   blocks its event loop handles nothing until the write completes (etcd's documented reason
//!   for elections on slow disks). It is its own process so that a GC distribution and a disk
//!   distribution can be given separately. A stall or pause that starts while the node is
//!   already paused is absorbed by that pause.
//! * [`Noise::spike`] — a latency spike on one node's network: for `len_ms` (a draw per spike)
//!   every message to or from that node takes `extra_ms` (a draw per spike) longer. A message
//!   between two spiking nodes takes the larger extra. On a FIFO link a message sent during
//!   a spike also holds back the ones sent after it, so a spike that adds a second of latency
//!   silences the link for about a second however briefly it lasts. A trace shows a spike's
//!   start and end as `spike` records ([`Applied::Spike`](crate::Applied::Spike)).
//!
//! # Fairness and determinism
//!
//! The whole schedule is drawn when the trial is built, from streams of the trial seed that
//! nothing else draws from (one per kind), so every protocol run with the same seed meets the
//! same pauses, stalls and spikes at the same instants on the same node ids, and turning one
//! kind on changes none of the other kinds' draws nor any other draw of the trial.

use election_core::{NodeId, Rng, Time};

use crate::config::{ConfigError, Latency, Sampler};
use crate::stream::Stream;

/// At most this many noise bursts per trial (the schedule is held in memory).
pub const MAX_BURSTS: u64 = 5_000_000;

/// One kind of burst: how often, and how long each lasts.
#[derive(Clone, Debug, PartialEq)]
pub struct Bursts {
    /// Bursts per node per hour of simulated time (0: none).
    pub per_hour: f64,
    /// Each burst's length, in ms.
    pub ms: Latency,
}

/// Latency spikes: how often per node, how much extra latency, for how long.
#[derive(Clone, Debug, PartialEq)]
pub struct Spikes {
    /// Spikes per node per hour of simulated time (0: none).
    pub per_hour: f64,
    /// The extra one-way latency of every message to or from the node during a spike, ms.
    pub extra_ms: Latency,
    /// How long a spike lasts, ms.
    pub len_ms: Latency,
}

/// The noise of a trial (see the module docs). The default is none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Noise {
    /// Stop-the-world pauses (a garbage collector).
    pub pause: Option<Bursts>,
    /// Disk stalls: the node handles nothing while a write is stuck.
    pub stall: Option<Bursts>,
    /// Latency spikes on one node's links.
    pub spike: Option<Spikes>,
}

/// What a burst does when it starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum NoiseKind {
    /// The node handles nothing until the given instant (a pause or a disk stall).
    Pause(Time),
    /// Messages to and from the node take this many more ns, until `SpikeEnd`.
    SpikeStart(u64),
    /// The node's spike is over.
    SpikeEnd,
}

/// One scheduled burst edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct NoiseEvent {
    pub(crate) at: Time,
    pub(crate) node: NodeId,
    pub(crate) kind: NoiseKind,
}

impl Noise {
    /// Is there any noise?
    pub fn is_none(&self) -> bool {
        let off = |r: Option<f64>| r.is_none_or(|r| r == 0.0);
        off(self.pause.as_ref().map(|b| b.per_hour))
            && off(self.stall.as_ref().map(|b| b.per_hour))
            && off(self.spike.as_ref().map(|s| s.per_hour))
    }

    /// Expected bursts over `hours` for `n` nodes (for the size check).
    pub fn expected_bursts(&self, n: u32, hours: f64) -> f64 {
        let r = |r: Option<f64>| r.unwrap_or(0.0);
        (r(self.pause.as_ref().map(|b| b.per_hour))
            + r(self.stall.as_ref().map(|b| b.per_hour))
            + r(self.spike.as_ref().map(|s| s.per_hour)))
            * n as f64
            * hours
    }

    /// Check every field; the error names the first bad one.
    pub fn validate(&self, n: u32, horizon_ms: f64) -> Result<(), ConfigError> {
        let rate = |field: &str, r: f64| {
            if (0.0..=3.6e6).contains(&r) {
                Ok(())
            } else {
                Err(ConfigError::new(
                    field,
                    r,
                    "a rate per node per hour must be finite, >= 0 and at most 3600000 (one a millisecond)",
                ))
            }
        };
        if let Some(b) = &self.pause {
            rate("noise.pause_per_hour", b.per_hour)?;
            b.ms.sampler("noise.pause_ms")?;
        }
        if let Some(b) = &self.stall {
            rate("noise.stall_per_hour", b.per_hour)?;
            b.ms.sampler("noise.stall_ms")?;
        }
        if let Some(s) = &self.spike {
            rate("noise.spike_per_hour", s.per_hour)?;
            s.extra_ms.sampler("noise.spike_ms")?;
            s.len_ms.sampler("noise.spike_len_ms")?;
        }
        let expected = self.expected_bursts(n, horizon_ms / 3.6e6);
        if expected > MAX_BURSTS as f64 {
            return Err(ConfigError::new(
                "noise",
                format!("{expected:.0} bursts"),
                format!(
                    "at most {MAX_BURSTS} noise bursts per trial (rates x nodes x hours); lower a rate or the trial's length"
                ),
            ));
        }
        Ok(())
    }

    /// The trial's schedule up to `horizon`, in time order (ties: pause, stall, spike, then by
    /// node), drawn from the seed's noise streams (see the module docs). Assumes
    /// [`Noise::validate`] passed.
    pub(crate) fn schedule(
        &self,
        seed: u64,
        n: u32,
        horizon: Time,
    ) -> Result<Vec<NoiseEvent>, ConfigError> {
        let mut out = Vec::new();
        let stream = |s: Stream| s.rng(seed);
        let bursts = |b: &Bursts, field: &str, s: Stream, out: &mut Vec<NoiseEvent>| {
            if b.per_hour <= 0.0 {
                return Ok(());
            }
            let len = b.ms.sampler(field)?;
            let mut rng = stream(s);
            for i in 0..n as usize {
                renewal(&mut rng, b.per_hour, horizon, |rng, t| {
                    let d = len.sample_ns(rng);
                    let end = Time(t.0.saturating_add(d));
                    out.push(NoiseEvent {
                        at: t,
                        node: NodeId::from_index(i),
                        kind: NoiseKind::Pause(end),
                    });
                    end
                });
            }
            Ok::<(), ConfigError>(())
        };
        if let Some(b) = &self.pause {
            bursts(b, "noise.pause_ms", Stream::NoisePause, &mut out)?;
        }
        if let Some(b) = &self.stall {
            bursts(b, "noise.stall_ms", Stream::NoiseStall, &mut out)?;
        }
        if let Some(s) = self.spike.as_ref().filter(|s| s.per_hour > 0.0) {
            let extra = s.extra_ms.sampler("noise.spike_ms")?;
            let len = s.len_ms.sampler("noise.spike_len_ms")?;
            let mut rng = stream(Stream::NoiseSpike);
            for i in 0..n as usize {
                let node = NodeId::from_index(i);
                renewal(&mut rng, s.per_hour, horizon, |rng, t| {
                    let x = extra.sample_ns(rng);
                    let end = Time(t.0.saturating_add(len.sample_ns(rng)));
                    out.push(NoiseEvent {
                        at: t,
                        node,
                        kind: NoiseKind::SpikeStart(x),
                    });
                    out.push(NoiseEvent {
                        at: end,
                        node,
                        kind: NoiseKind::SpikeEnd,
                    });
                    end
                });
            }
        }
        // Stable: equal instants keep the order above (kind, then node).
        out.sort_by_key(|e| e.at);
        Ok(out)
    }
}

/// Call `burst(rng, start) -> end` for each burst of a renewal process with `per_hour` bursts
/// per hour starting before `horizon`: exponential gaps from the end of one burst to the start
/// of the next.
fn renewal(
    rng: &mut Rng,
    per_hour: f64,
    horizon: Time,
    mut burst: impl FnMut(&mut Rng, Time) -> Time,
) {
    let mean_gap_ms = 3.6e6 / per_hour;
    let gap = Sampler::exponential_ms(mean_gap_ms);
    let mut t = Time::ZERO;
    loop {
        let start = Time(t.0.saturating_add(gap.sample_ns(rng)));
        if start >= horizon {
            return;
        }
        t = burst(rng, start);
        if t >= horizon {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy() -> Noise {
        Noise {
            pause: Some(Bursts {
                per_hour: 180.0,
                ms: Latency::LogNormal {
                    median_ms: 5.0,
                    sigma: 1.0,
                },
            }),
            stall: None,
            spike: Some(Spikes {
                per_hour: 6.0,
                extra_ms: Latency::Constant { ms: 20.0 },
                len_ms: Latency::Constant { ms: 500.0 },
            }),
        }
    }

    #[test]
    fn the_schedule_is_the_seeds_alone_with_the_configured_rates() {
        let hours = 20.0;
        let horizon = Time((hours * 3.6e12) as u64);
        let a = busy().schedule(7, 5, horizon).unwrap();
        assert_eq!(a, busy().schedule(7, 5, horizon).unwrap());
        assert_ne!(a, busy().schedule(8, 5, horizon).unwrap());
        // Turning spikes off changes none of the pause draws.
        let mut no_spikes = busy();
        no_spikes.spike = None;
        let pauses = |v: &[NoiseEvent]| -> Vec<NoiseEvent> {
            v.iter()
                .copied()
                .filter(|e| matches!(e.kind, NoiseKind::Pause(_)))
                .collect()
        };
        assert_eq!(pauses(&a), no_spikes.schedule(7, 5, horizon).unwrap());
        // About 180 pauses per node-hour (a Poisson count of 18,000: within 3 %).
        let n = pauses(&a).len() as f64;
        assert!((n / (5.0 * hours) - 180.0).abs() < 180.0 * 0.03, "{n}");
        // In time order; a node's spikes never overlap and each ends 500 ms after it starts.
        assert!(a.windows(2).all(|w| w[0].at <= w[1].at));
        for node in 0..5 {
            let mut on: Option<Time> = None;
            for e in a.iter().filter(|e| e.node.index() == node) {
                match e.kind {
                    NoiseKind::SpikeStart(x) => {
                        assert!(on.is_none());
                        assert_eq!(x, 20_000_000);
                        on = Some(e.at);
                    }
                    NoiseKind::SpikeEnd => {
                        assert_eq!(e.at.0 - on.take().unwrap().0, 500_000_000);
                    }
                    NoiseKind::Pause(until) => assert!(until > e.at),
                }
            }
        }
        assert!(Noise::default().is_none());
        assert!(Noise::default().schedule(1, 5, horizon).unwrap().is_empty());
    }

    #[test]
    fn bad_noise_names_its_field() {
        let mut n = busy();
        n.pause.as_mut().unwrap().per_hour = -1.0;
        let e = n.validate(5, 3.6e6).unwrap_err();
        assert_eq!(e.field, "noise.pause_per_hour");
        let e = busy().validate(5, 3.6e6 * 1e4).unwrap_err();
        assert_eq!(e.field, "noise");
    }
}
