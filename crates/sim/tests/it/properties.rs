//! Property: random fault timelines on random cluster sizes never panic, simulated time never
//! goes backwards, and a trial is a pure function of its configuration.
use crate::common;

use common::Toy;
use election_core::NodeId;
use election_sim::*;
use proptest::prelude::*;

fn selector(n: u32) -> BoxedStrategy<Selector> {
    prop_oneof![
        Just(Selector::Leader),
        Just(Selector::Highest),
        (1..=n).prop_map(Selector::KthHighest),
        Just(Selector::Lowest),
        (1..=n).prop_map(Selector::KthLowest),
        Just(Selector::Random),
        (1..=n).prop_map(|i| Selector::Id(NodeId(i))),
        Just(Selector::LastCrashed),
    ]
    .boxed()
}

fn node_set(n: u32) -> BoxedStrategy<NodeSet> {
    prop_oneof![
        selector(n).prop_map(NodeSet::One),
        Just(NodeSet::All),
        selector(n).prop_map(NodeSet::AllExcept),
        selector(n).prop_map(NodeSet::Above),
        selector(n).prop_map(NodeSet::Below),
    ]
    .boxed()
}

fn action(n: u32) -> BoxedStrategy<FaultAction> {
    prop_oneof![
        selector(n).prop_map(FaultAction::Crash),
        selector(n).prop_map(FaultAction::Recover),
        (selector(n), 0.0..300.0f64).prop_map(|(node, ms)| FaultAction::Pause { node, ms }),
        (selector(n), selector(n)).prop_map(|(a, b)| {
            // The same explicit id twice is a configuration error (tested elsewhere); the
            // timelines here must be valid.
            let group = if a == b { vec![a] } else { vec![a, b] };
            FaultAction::Partition(vec![group, vec![Selector::Rest]])
        }),
        (node_set(n), node_set(n)).prop_map(|(from, to)| FaultAction::CutLink { from, to }),
        selector(n).prop_map(FaultAction::Isolate),
        Just(FaultAction::Heal),
        (0.0..=1.0f64).prop_map(FaultAction::SetLoss),
        selector(n).prop_map(FaultAction::Suspect),
        (node_set(n), any::<bool>())
            .prop_map(|(nodes, enabled)| FaultAction::Detection { nodes, enabled }),
    ]
    .boxed()
}

fn config() -> impl Strategy<Value = SimConfig> {
    (1u32..=12).prop_flat_map(|n| {
        (
            any::<u64>(),
            prop::collection::vec((0.0..800.0f64, action(n)), 0..12),
            prop_oneof![
                Just(Latency::Constant { ms: 1.0 }),
                Just(Latency::Exponential { mean_ms: 3.0 }),
                Just(Latency::Pareto {
                    scale_ms: 0.5,
                    shape: 1.5
                }),
            ],
            any::<bool>(),
            0.0..0.3f64,
        )
            .prop_map(move |(seed, faults, latency, fifo, loss)| {
                let mut cfg = SimConfig::new(n, seed);
                cfg.trace = true;
                cfg.horizon = std::time::Duration::from_millis(1500);
                cfg.net.latency = latency;
                cfg.net.fifo = fifo;
                cfg.net.loss = loss;
                cfg.faults = faults
                    .into_iter()
                    .map(|(t, a)| Fault::at_ms(t, a))
                    .collect();
                cfg
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_timelines_never_panic_and_time_is_monotone(cfg in config()) {
        let n = cfg.nodes;
        let run = |c: SimConfig| Sim::new(c, move |id: NodeId| Toy::new(id, n)).unwrap().run();
        let a = run(cfg.clone());
        for w in a.trace.windows(2) {
            prop_assert!(w[0].at <= w[1].at, "time went backwards: {:?} then {:?}", w[0], w[1]);
        }
        prop_assert!(a.end.0 <= 1_500_000_000);
        let m = &a.metrics;
        prop_assert!(m.unavailable_ms <= m.end_ms - m.reference_ms + 1e-9);
        prop_assert!(m.split_brain_ms <= m.end_ms - m.reference_ms + 1e-9);
        // `elect_ms` (followed by all) needs a quorum leader at the end, and comes no sooner
        // than the first quorum leader after the fault.
        prop_assert!(m.elect_ms.is_none() || m.converged);
        if let (Some(e), Some(f)) = (m.elect_ms, m.failover_ms) {
            prop_assert!(f <= e, "failover {f} after elect {e}");
        }
        prop_assert!(m.stranded_node_ms <= (m.end_ms - m.reference_ms) * f64::from(n) + 1e-9);
        prop_assert!(m.window.sent_total() <= m.total.sent_total());
        // Same configuration, same trial.
        let b = run(cfg);
        prop_assert_eq!(a.trace, b.trace);
        prop_assert_eq!(&a.metrics, &b.metrics);
    }
}
