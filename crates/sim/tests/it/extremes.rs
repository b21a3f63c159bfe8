//! Property: latencies, timings, pauses, fault instants and horizons anywhere up to the end of
//! the 64-bit nanosecond clock — constant latencies up to 1e15 ms, Pareto tails with a tiny
//! shape, huge jitter — never panic (tests run in debug, so an arithmetic overflow would), the
//! trial never runs past its horizon, time never goes backwards, the work budget holds, and the
//! trial is still a pure function of its configuration.

use std::time::Duration;

use election_core::{Io, Message, MsgCategory, NodeId, Protocol, Role, Status, TimerKind, Timing};
use election_sim::*;
use proptest::prelude::*;

/// A protocol whose every timer comes from a [`Timing`] the test draws, extreme values
/// included: the highest live node heartbeats every `heartbeat`; the others suspect it after
/// `Timing::draw_detect` (timeout plus uniform jitter) and claim the lead.
struct Timed {
    id: NodeId,
    n: u32,
    timing: Timing,
    leader: Option<NodeId>,
}

#[derive(Clone, Debug)]
struct Beat;

impl Message for Beat {
    fn category(&self) -> MsgCategory {
        MsgCategory::Heartbeat
    }
    fn kind(&self) -> &'static str {
        "BEAT"
    }
    fn wire_size(&self) -> usize {
        1
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum T {
    Beat,
    Detect,
}

impl TimerKind for T {
    const COUNT: usize = 2;
    fn index(self) -> usize {
        self as usize
    }
    fn is_failure_detector(self) -> bool {
        self == T::Detect
    }
}

impl Timed {
    fn lead(&mut self, io: &mut Io<'_, Self>) {
        self.leader = Some(self.id);
        io.cancel_timer(T::Detect);
        let me = self.id;
        io.send_many((1..=self.n).map(NodeId).filter(|&v| v != me), &Beat);
        io.set_timer(T::Beat, self.timing.heartbeat);
    }
    fn follow(&mut self, io: &mut Io<'_, Self>) {
        let d = self.timing.draw_detect(io);
        io.set_timer(T::Detect, d);
    }
}

impl Protocol for Timed {
    type Msg = Beat;
    type Timer = T;
    type Persist = ();
    fn on_start(&mut self, io: &mut Io<'_, Self>, _: Option<&()>) {
        if self.id.0 == self.n {
            self.lead(io);
        } else {
            self.follow(io);
        }
    }
    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, _: Beat) {
        if self.leader == Some(self.id) && from < self.id {
            return;
        }
        if self.leader == Some(self.id) {
            io.cancel_timer(T::Beat);
        }
        self.leader = Some(from);
        self.follow(io);
    }
    fn on_timer(&mut self, io: &mut Io<'_, Self>, t: T) {
        match t {
            T::Beat => self.lead(io),
            T::Detect => self.on_suspect(io),
        }
    }
    fn on_suspect(&mut self, io: &mut Io<'_, Self>) {
        if self.leader != Some(self.id) {
            self.lead(io);
        }
    }
    fn status(&self) -> Status {
        Status {
            role: if self.leader == Some(self.id) {
                Role::Leader
            } else {
                Role::Follower
            },
            leader: self.leader,
            epoch: None,
        }
    }
}

/// Milliseconds from ordinary to far past the end of the clock (u64::MAX ns ≈ 1.8e13 ms).
fn ms() -> BoxedStrategy<f64> {
    prop_oneof![
        0.0..50.0f64,
        0.0..1e6f64,
        1e12..1e16f64,
        Just(u64::MAX as f64 / 1e6),
        Just(1e15),
    ]
    .boxed()
}

/// Durations from ordinary to `Duration::MAX`.
fn duration() -> BoxedStrategy<Duration> {
    prop_oneof![
        (1u64..500).prop_map(Duration::from_millis),
        (1u64..u64::MAX).prop_map(Duration::from_nanos),
        Just(Duration::from_nanos(u64::MAX)),
        Just(Duration::MAX),
    ]
    .boxed()
}

fn latency() -> BoxedStrategy<Latency> {
    prop_oneof![
        ms().prop_map(|ms| Latency::Constant { ms }),
        (ms(), ms()).prop_map(|(a, b)| Latency::Uniform {
            min_ms: a.min(b),
            max_ms: a.max(b)
        }),
        (ms(), ms()).prop_map(|(mean_ms, sd_ms)| Latency::Normal { mean_ms, sd_ms }),
        (0.01..1e15f64).prop_map(|mean_ms| Latency::Exponential { mean_ms }),
        (0.01..1e6f64, 0.0..40.0f64)
            .prop_map(|(median_ms, sigma)| Latency::LogNormal { median_ms, sigma }),
        (0.01..10.0f64, 0.01..2.0f64)
            .prop_map(|(scale_ms, shape)| Latency::Pareto { scale_ms, shape }),
    ]
    .boxed()
}

fn fault() -> BoxedStrategy<Fault> {
    let action = prop_oneof![
        Just(FaultAction::Crash(Selector::Leader)),
        Just(FaultAction::Recover(Selector::LastCrashed)),
        ms().prop_map(|ms| FaultAction::Pause {
            node: Selector::Random,
            ms
        }),
        Just(FaultAction::Suspect(Selector::Lowest)),
    ];
    (ms(), action).prop_map(|(t, a)| Fault::at_ms(t, a)).boxed()
}

fn case() -> impl Strategy<Value = (SimConfig, Timing)> {
    (
        1u32..=6,
        any::<u64>(),
        latency(),
        any::<bool>(),
        0.0..0.3f64,
        prop::collection::vec(fault(), 0..5),
        (duration(), duration(), duration()),
        (duration(), duration()),
        prop_oneof![Just(None), ms().prop_map(Some)],
        1u64..30_000,
    )
        .prop_map(
            |(n, seed, latency, fifo, dup, faults, (hb, to, jit), (horizon, settle), r, budget)| {
                let mut cfg = SimConfig::new(n, seed);
                cfg.trace = true;
                cfg.net.latency = latency;
                cfg.net.fifo = fifo;
                cfg.net.duplicate = dup;
                cfg.faults = faults;
                cfg.horizon = horizon;
                cfg.settle = settle;
                cfg.reference_ms = r;
                // Huge horizons are only bounded by the work budget.
                cfg.budget = budget;
                let timing = Timing {
                    heartbeat: hb,
                    detect_timeout: to,
                    detect_jitter: jit,
                };
                (cfg, timing)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn extreme_latencies_and_timings_never_panic_or_overrun((cfg, timing) in case()) {
        let n = cfg.nodes;
        let run = |c: SimConfig| {
            Sim::new(c, move |id: NodeId| Timed { id, n, timing, leader: None })
                .unwrap()
                .run()
        };
        let a = run(cfg.clone());
        let horizon = cfg.horizon.as_nanos().min(u64::MAX as u128) as u64;
        prop_assert!(a.end.0 <= horizon, "ended at {:?} past the horizon {horizon}", a.end);
        for w in a.trace.windows(2) {
            prop_assert!(w[0].at <= w[1].at, "time went backwards: {:?} then {:?}", w[0], w[1]);
        }
        if let Some(last) = a.trace.last() {
            prop_assert!(last.at <= a.end);
        }
        let m = &a.metrics;
        // Work: one event's sends (at most n - 1 here) may overshoot the budget.
        let work = a.events + m.total.sent_total();
        prop_assert!(work <= cfg.budget + u64::from(n), "work {work}, budget {}", cfg.budget);
        if m.budget_exceeded {
            prop_assert!(work >= cfg.budget, "stopped early: work {work}, budget {}", cfg.budget);
            prop_assert!(!m.converged && m.leader.is_none() && m.elect_ms.is_none());
        }
        // `elect_ms` (followed by all) needs a quorum leader at the end; a quorum leader some
        // reachable member does not follow yet has none.
        prop_assert!(m.elect_ms.is_none() || m.converged);
        for x in [m.unavailable_ms, m.split_brain_ms, m.minority_leader_ms, m.end_ms, m.reference_ms] {
            prop_assert!(x.is_finite() && x >= 0.0, "{x}");
        }
        let span = (m.end_ms - m.reference_ms).max(0.0);
        // f64 milliseconds of u64 nanoseconds: allow the rounding of the conversion.
        let slack = 1e-9 + span * 1e-12;
        prop_assert!(m.unavailable_ms <= span + slack, "{} > {span}", m.unavailable_ms);
        prop_assert!(m.split_brain_ms <= span + slack);
        prop_assert!(m.stranded_node_ms.is_finite() && m.stranded_node_ms >= 0.0);
        prop_assert!(m.stranded_node_ms <= (span + slack) * f64::from(n));
        prop_assert!(m.window.sent_total() <= m.total.sent_total());
        // Same configuration, same trial.
        let b = run(cfg);
        prop_assert_eq!(a.end, b.end);
        prop_assert_eq!(a.events, b.events);
        prop_assert_eq!(&a.metrics, &b.metrics);
    }
}
