//! Engine semantics: ordering, network faults in flight, crash/recover/pause, determinism,
//! bad input, and the observer's metrics on a toy protocol with a known timeline.
use crate::common;

use common::Toy;
use election_core::{NodeId, Role};
use election_sim::*;

fn run(cfg: SimConfig) -> TrialReport {
    let n = cfg.nodes;
    Sim::new(cfg, move |id: NodeId| Toy::new(id, n))
        .unwrap()
        .run()
}

fn traced(n: u32, seed: u64) -> SimConfig {
    let mut cfg = SimConfig::new(n, seed);
    cfg.trace = true;
    cfg
}

fn sends(r: &TrialReport, kind: &str) -> usize {
    r.trace
        .iter()
        .filter(|e| matches!(&e.what, TraceKind::Send(m) if m.kind == kind))
        .count()
}

#[test]
fn boots_happen_in_id_order_at_time_zero_and_the_highest_leads() {
    let r = run(traced(4, 1));
    let boots: Vec<_> = r
        .trace
        .iter()
        .filter_map(|e| match e.what {
            TraceKind::Boot(id) => Some((e.at.0, id.0)),
            _ => None,
        })
        .collect();
    assert_eq!(boots, vec![(0, 1), (0, 2), (0, 3), (0, 4)]);
    assert!(r.metrics.converged);
    assert_eq!(r.metrics.leader, Some(NodeId(4)));
    // Cold start: the reference instant is zero and the leader agreed at the first heartbeat's
    // arrival (1 ms constant latency).
    assert_eq!(r.metrics.elect_ms, Some(1.0));
    assert_eq!(r.metrics.unavailable_ms, 1.0);
}

#[test]
fn trace_time_never_goes_backwards_and_ties_keep_scheduling_order() {
    let r = run(traced(5, 3));
    for w in r.trace.windows(2) {
        assert!(w[0].at <= w[1].at);
    }
    // The leader's broadcast at t=0 goes to 1, 2, 3, 4 in that order; with equal latency the
    // deliveries at t=1ms keep that order.
    let delivered: Vec<u32> = r
        .trace
        .iter()
        .filter(|e| e.at.0 == 1_000_000)
        .filter_map(|e| match &e.what {
            TraceKind::Deliver(m) => Some(m.to.0),
            _ => None,
        })
        .collect();
    assert_eq!(delivered, vec![1, 2, 3, 4]);
}

#[test]
fn leader_crash_is_detected_and_a_new_leader_agreed() {
    let mut cfg = traced(5, 1);
    cfg.faults = vec![Fault::at_ms(100.0, FaultAction::Crash(Selector::Leader))];
    let r = run(cfg);
    let m = &r.metrics;
    assert_eq!(m.reference_ms, 100.0);
    assert!(m.converged);
    assert_eq!(r.final_status[4], None, "node 5 is crashed at the end");
    // Last heartbeat from node 5 was sent at 90 ms and arrived at 91 ms: every follower's
    // detector (35 ms) fires at 126 ms, so detection takes 26 ms.
    assert_eq!(m.detect_ms, Some(26.0));
    // All four claim at 131 ms, broadcast, and node 4 wins when its LEADER arrives at 132 ms.
    assert_eq!(m.leader, Some(NodeId(4)));
    assert_eq!(m.elect_ms, Some(32.0));
    assert!(m.split_brain, "every candidate claimed at once");
    assert_eq!(m.max_leaders, 4);
    assert_eq!(m.split_brain_ms, 1.0);
    assert_eq!(m.leader_changes, 4);
    assert_eq!(m.elections_started, 4);
    // Election window: four claims, each a LEADER to the four other ids (the crashed one
    // included: a message to a dead node is still sent) = 16 leader-category messages.
    assert_eq!(m.window.sent_of(election_core::MsgCategory::Leader), 16);
    // Three of the four LEADERs to the crashed node are dropped before node 4's LEADER makes
    // the last follower agree; the fourth arrives (and is dropped) just after the window.
    assert_eq!(m.window.dropped, 3);
    assert_eq!(m.window.delivered, 12);
    assert_eq!(m.same_epoch_leaders, 0);
    // The trial ended one settle window (2 s) after convergence.
    assert_eq!(m.end_ms, 132.0 + 2000.0);
}

#[test]
fn symmetric_partition_drops_both_ways_and_heal_restores() {
    let mut cfg = traced(5, 1);
    let ids = |v: &[u32]| {
        v.iter()
            .map(|&i| Selector::Id(NodeId(i)))
            .collect::<Vec<_>>()
    };
    cfg.faults = vec![
        Fault::at_ms(
            100.0,
            FaultAction::Partition(vec![ids(&[1, 2, 3]), ids(&[4, 5])]),
        ),
        Fault::at_ms(300.0, FaultAction::Heal),
    ];
    let r = run(cfg);
    // Nothing crosses the cut while it lasts.
    let crossing = r.trace.iter().any(|e| {
        e.at.0 > 100_000_000
            && e.at.0 < 300_000_000
            && matches!(&e.what, TraceKind::Deliver(m) if (m.from.0 <= 3) != (m.to.0 <= 3))
    });
    assert!(!crossing);
    let m = &r.metrics;
    assert!(
        m.split_brain,
        "the majority side elects its own leader while 5 still leads"
    );
    assert!(m.converged);
    assert_eq!(
        m.leader,
        Some(NodeId(5)),
        "after heal the highest claimant wins"
    );
}

#[test]
fn one_way_cut_drops_only_that_direction() {
    let mut cfg = traced(2, 1);
    cfg.faults = vec![Fault::at_ms(
        50.0,
        FaultAction::CutLink {
            from: NodeSet::One(Selector::Id(NodeId(2))),
            to: NodeSet::One(Selector::Id(NodeId(1))),
        },
    )];
    cfg.horizon = std::time::Duration::from_millis(200);
    let r = run(cfg);
    // Node 1 stops hearing node 2 and claims leadership; node 2 keeps hearing node 1.
    let delivered_2_to_1_after = r
        .trace
        .iter()
        .any(|e| e.at.0 > 51_000_000 && matches!(&e.what, TraceKind::Deliver(m) if m.from.0 == 2));
    assert!(!delivered_2_to_1_after);
    let delivered_1_to_2_after = r
        .trace
        .iter()
        .any(|e| e.at.0 > 51_000_000 && matches!(&e.what, TraceKind::Deliver(m) if m.from.0 == 1));
    assert!(delivered_1_to_2_after);
    // With one direction cut, the two nodes are not connected: two components of one.
    assert!(r.metrics.split_brain);
}

#[test]
fn messages_in_flight_when_a_link_is_cut_are_dropped_on_arrival() {
    let mut cfg = traced(2, 1);
    cfg.net = NetConfig::constant_ms(10.0);
    // Node 2 leads and beats at 0, 10, 20 ms ...; each beat takes 10 ms to arrive. Cutting
    // at 25 ms strands the 20 ms beat on the wire.
    cfg.faults = vec![Fault::at_ms(
        25.0,
        FaultAction::Isolate(Selector::Id(NodeId(1))),
    )];
    cfg.horizon = std::time::Duration::from_millis(60);
    let r = run(cfg);
    let dropped_in_flight = r.trace.iter().any(|e| {
        e.at.0 == 30_000_000
            && matches!(&e.what, TraceKind::Drop(m, DropReason::LinkDown) if m.from.0 == 2)
    });
    assert!(
        dropped_in_flight,
        "the beat sent at 20 ms is dropped when it arrives at 30 ms"
    );
}

#[test]
fn crash_drops_arrivals_and_recovery_restores_persisted_state() {
    let mut cfg = traced(3, 1);
    cfg.faults = vec![
        Fault::at_ms(50.0, FaultAction::Crash(Selector::Id(NodeId(1)))),
        Fault::at_ms(80.0, FaultAction::Recover(Selector::LastCrashed)),
    ];
    let r = run(cfg);
    let dropped_at_crashed = r
        .trace
        .iter()
        .any(|e| matches!(&e.what, TraceKind::Drop(m, DropReason::Crashed) if m.to.0 == 1));
    assert!(dropped_at_crashed);
    let boots_of_1 = r
        .trace
        .iter()
        .filter(|e| matches!(e.what, TraceKind::Boot(NodeId(1))))
        .count();
    assert_eq!(boots_of_1, 2);
    assert!(r.metrics.converged);
    assert_eq!(r.metrics.leader, Some(NodeId(3)));
}

#[test]
fn recovered_node_sees_its_persisted_record() {
    // Crash and recover node 3 (the boot leader); its second boot reads boots = 1 and so it
    // does not lead again at once (the toy leads only on a first boot).
    let mut cfg = traced(3, 1);
    cfg.faults = vec![
        Fault::at_ms(50.0, FaultAction::Crash(Selector::Id(NodeId(3)))),
        Fault::at_ms(51.0, FaultAction::Recover(Selector::Id(NodeId(3)))),
    ];
    cfg.horizon = std::time::Duration::from_millis(60);
    let r = run(cfg);
    assert_eq!(
        r.final_status[2].map(|s| s.role),
        Some(Role::Follower),
        "the recovered node read its persisted boot count"
    );
}

#[test]
fn pause_queues_messages_and_late_timers_and_handles_them_at_wake_up() {
    let mut cfg = traced(3, 1);
    // Pause the leader (3) for 100 ms at 50 ms: the others suspect it and elect 2; when 3
    // wakes at 150 ms it still believes it leads (stale leader) until it hears 2... and the
    // toy's leader ignores lower LEADERs, so 3 stays leader and 2 steps down.
    cfg.faults = vec![Fault::at_ms(
        50.0,
        FaultAction::Pause {
            node: Selector::Leader,
            ms: 100.0,
        },
    )];
    let r = run(cfg);
    let handled_while_paused = r.trace.iter().any(|e| {
        e.at.0 > 50_000_000
            && e.at.0 < 150_000_000
            && matches!(&e.what, TraceKind::Deliver(m) if m.to.0 == 3)
    });
    assert!(!handled_while_paused, "a paused node handles nothing");
    let backlog_at_wake = r
        .trace
        .iter()
        .filter(|e| {
            e.at.0 == 150_000_000 && matches!(&e.what, TraceKind::Deliver(m) if m.to.0 == 3)
        })
        .count();
    assert!(backlog_at_wake > 0, "the backlog is delivered at wake-up");
    let m = &r.metrics;
    assert!(m.split_brain, "the paused leader still counts as a leader");
    assert!(m.converged);
    assert_eq!(m.leader, Some(NodeId(3)));
}

#[test]
fn detection_off_swallows_the_detector_but_not_forced_suspicion() {
    let mut cfg = traced(4, 1);
    cfg.faults = vec![
        Fault::at_ms(
            100.0,
            FaultAction::Detection {
                nodes: NodeSet::All,
                enabled: false,
            },
        ),
        Fault::at_ms(100.0, FaultAction::Crash(Selector::Leader)),
        Fault::at_ms(100.0, FaultAction::Suspect(Selector::Lowest)),
    ];
    let r = run(cfg);
    let m = &r.metrics;
    assert_eq!(m.detect_ms, Some(0.0));
    assert_eq!(
        m.elections_started, 1,
        "only the forced node started an election"
    );
    assert_eq!(m.leader, Some(NodeId(1)));

    // With nobody forced, nobody notices: the detectors fire into the void and the cluster
    // stays leaderless to the horizon.
    let mut cfg = traced(4, 1);
    cfg.horizon = std::time::Duration::from_secs(1);
    cfg.faults = vec![
        Fault::at_ms(
            100.0,
            FaultAction::Detection {
                nodes: NodeSet::All,
                enabled: false,
            },
        ),
        Fault::at_ms(100.0, FaultAction::Crash(Selector::Leader)),
    ];
    let r = run(cfg);
    assert_eq!(
        r.trace
            .iter()
            .filter(|e| matches!(e.what, TraceKind::DetectorSuppressed(_)))
            .count(),
        3
    );
    assert!(!r.metrics.converged);
    assert_eq!(r.metrics.elect_ms, None);
    assert_eq!(r.metrics.detect_ms, None);
    assert_eq!(r.metrics.unavailable_ms, 900.0);
    assert_eq!(r.metrics.end_ms, 1000.0);
}

#[test]
fn selectors_resolve_when_the_action_fires() {
    let mut cfg = traced(5, 9);
    cfg.faults = vec![
        Fault::at_ms(100.0, FaultAction::Crash(Selector::Leader)),
        // By 300 ms node 4 leads; "leader" now means 4.
        Fault::at_ms(300.0, FaultAction::Crash(Selector::Leader)),
        Fault::at_ms(300.0, FaultAction::Crash(Selector::KthLowest(2))),
    ];
    let r = run(cfg);
    let crashed: Vec<u32> = r
        .trace
        .iter()
        .filter_map(|e| match e.what {
            TraceKind::Fault(Applied::Crash(id)) => Some(id.0),
            _ => None,
        })
        .collect();
    assert_eq!(crashed, vec![5, 4, 2]);
    assert_eq!(r.metrics.leader, Some(NodeId(3)));
}

#[test]
fn same_seed_same_trace_different_seed_different_trace() {
    let cfg = |seed| {
        let mut c = traced(7, seed);
        c.net.latency = Latency::Exponential { mean_ms: 2.0 };
        c.net.loss = 0.05;
        c.faults = vec![
            Fault::at_ms(100.0, FaultAction::Crash(Selector::Random)),
            Fault::at_ms(200.0, FaultAction::Crash(Selector::Leader)),
        ];
        c
    };
    let a = run(cfg(42));
    let b = run(cfg(42));
    let c = run(cfg(43));
    assert_eq!(a.trace, b.trace);
    assert_eq!(a.metrics, b.metrics);
    assert_ne!(a.trace, c.trace);
}

#[test]
fn duplication_delivers_extra_copies() {
    let mut cfg = traced(3, 5);
    cfg.net.duplicate = 1.0;
    cfg.horizon = std::time::Duration::from_millis(55);
    let r = run(cfg);
    let sent = sends(&r, "LEADER");
    let delivered = r
        .trace
        .iter()
        .filter(|e| matches!(&e.what, TraceKind::Deliver(m) if m.kind == "LEADER"))
        .count();
    assert!(
        delivered >= 2 * sent - 4,
        "sent {sent}, delivered {delivered}"
    );
}

#[test]
fn reordering_happens_without_fifo_and_never_with_it() {
    // Node 1 sends PING(0..200) to node 2 at boot; a PING's size encodes its number.
    let inversions = |fifo: bool| {
        let mut cfg = traced(2, 11);
        cfg.net.latency = Latency::Uniform {
            min_ms: 1.0,
            max_ms: 30.0,
        };
        cfg.net.fifo = fifo;
        cfg.horizon = std::time::Duration::from_millis(100);
        let r = Sim::new(cfg, |id: NodeId| {
            let mut t = Toy::new(id, 2);
            t.pings = if id.0 == 1 { 200 } else { 0 };
            t
        })
        .unwrap()
        .run();
        let order: Vec<u32> = r
            .trace
            .iter()
            .filter_map(|e| match &e.what {
                TraceKind::Deliver(m) if m.kind == "PING" => Some(m.bytes),
                _ => None,
            })
            .collect();
        assert_eq!(order.len(), 200);
        order.windows(2).filter(|w| w[1] < w[0]).count()
    };
    assert_eq!(inversions(true), 0);
    assert!(inversions(false) > 10);
}

#[test]
fn invalid_configurations_name_the_field_and_value() {
    let ok = |c: SimConfig| Sim::new(c, |id: NodeId| Toy::new(id, 3)).map(|_| ());
    let err = |c: SimConfig| ok(c).unwrap_err();

    let e = err(SimConfig::new(0, 1));
    assert_eq!((e.field.as_str(), e.value.as_str()), ("nodes", "0"));

    let mut c = SimConfig::new(3, 1);
    c.net.latency = Latency::Normal {
        mean_ms: 1.0,
        sd_ms: -2.0,
    };
    let e = err(c);
    assert_eq!(
        (e.field.as_str(), e.value.as_str()),
        ("net.latency.sd_ms", "-2")
    );

    let mut c = SimConfig::new(3, 1);
    c.net.latency = Latency::Exponential { mean_ms: f64::NAN };
    assert_eq!(err(c).field, "net.latency.mean_ms");

    let mut c = SimConfig::new(3, 1);
    c.net.loss = 1.5;
    let e = err(c);
    assert_eq!((e.field.as_str(), e.value.as_str()), ("net.loss", "1.5"));

    let mut c = SimConfig::new(3, 1);
    c.faults = vec![Fault::at_ms(
        10.0,
        FaultAction::Crash(Selector::Id(NodeId(7))),
    )];
    let e = err(c);
    assert_eq!(
        (e.field.as_str(), e.value.as_str()),
        ("faults[0].node", "7")
    );
    assert!(e.to_string().contains("1 to 3"), "{e}");

    let mut c = SimConfig::new(3, 1);
    c.faults = vec![Fault::at_ms(-5.0, FaultAction::Heal)];
    let e = err(c);
    assert_eq!(
        (e.field.as_str(), e.value.as_str()),
        ("faults[0].at_ms", "-5")
    );

    let id = |i| Selector::Id(NodeId(i));
    let mut c = SimConfig::new(3, 1);
    c.faults = vec![Fault::at_ms(
        1.0,
        FaultAction::Partition(vec![vec![id(1), id(2)], vec![id(2), id(3)]]),
    )];
    let e = err(c);
    assert_eq!(e.field, "faults[0].groups[1][0]");
    assert!(e.reason.contains("more than one"));

    let mut c = SimConfig::new(3, 1);
    c.faults = vec![Fault::at_ms(
        1.0,
        FaultAction::Partition(vec![vec![id(1)], vec![id(2)]]),
    )];
    let e = err(c);
    assert!(e.value.contains("node 3"), "{e}");

    let mut c = SimConfig::new(3, 1);
    c.faults = vec![Fault::at_ms(
        1.0,
        FaultAction::Partition(vec![vec![Selector::Leader], vec![Selector::Lowest]]),
    )];
    assert!(err(c).reason.contains("rest"));

    let mut c = SimConfig::new(3, 1);
    c.faults = vec![Fault::at_ms(1.0, FaultAction::SetLoss(-0.1))];
    assert_eq!(err(c).field, "faults[0].loss");
}

#[test]
fn messages_to_nonexistent_nodes_are_counted_not_fatal() {
    let mut cfg = SimConfig::new(2, 1);
    cfg.horizon = std::time::Duration::from_millis(20);
    let r = Sim::new(cfg, |id: NodeId| {
        let mut t = Toy::new(id, 2);
        t.bogus = id.0 == 1;
        t
    })
    .unwrap()
    .run();
    assert_eq!(r.metrics.invalid_destinations, 1);
}

#[test]
fn a_follower_crash_does_not_restart_the_agreed_interval() {
    // Node 5 leads from the first heartbeat's arrival (1 ms); crashing follower 2 at 500 ms
    // leaves the survivors in agreement, so elect_ms (a cold start) stays 1 ms.
    let mut cfg = traced(5, 1);
    cfg.reference_ms = Some(0.0);
    cfg.faults = vec![Fault::at_ms(
        500.0,
        FaultAction::Crash(Selector::Id(NodeId(2))),
    )];
    let r = run(cfg);
    assert!(r.metrics.converged);
    assert_eq!(r.metrics.elect_ms, Some(1.0));
    assert_eq!(r.metrics.unavailable_ms, 1.0);
}

#[test]
fn a_trial_that_uses_up_its_work_budget_stops_there_and_says_so() {
    // The default budget is far above what a normal trial needs.
    let full = run(SimConfig::new(5, 3));
    assert!(full.metrics.converged && !full.metrics.budget_exceeded);
    assert_eq!(SimConfig::new(5, 3).budget, 500_000);
    let work = full.events + full.metrics.total.sent_total();
    assert!(work < 500_000 / 10, "{work}");
    // A budget of 20 units (events plus messages): the trial stops at the instant of the last
    // event it processed, long before its settle window, and never counts as converged.
    let mut cfg = SimConfig::new(5, 3);
    cfg.budget = 20;
    let cut = run(cfg.clone());
    assert!(cut.metrics.budget_exceeded);
    assert!(!cut.metrics.converged);
    assert_eq!(cut.metrics.leader, None);
    assert_eq!(cut.metrics.elect_ms, None);
    assert!(cut.end < full.end, "{:?} vs {:?}", cut.end, full.end);
    let used = cut.events + cut.metrics.total.sent_total();
    assert!((20..20 + 5).contains(&used), "{used}");
    // Deterministic: the same budget stops at the same point.
    let again = run(cfg.clone());
    assert_eq!((again.end, again.events), (cut.end, cut.events));
    // Exactly the work the full trial needed is enough to finish it unchanged.
    cfg.budget = work;
    let r = run(cfg.clone());
    assert!(!r.metrics.budget_exceeded && r.metrics.converged);
    assert_eq!(r.end, full.end);
    cfg.budget = 0;
    let e = Sim::new(cfg, |id: NodeId| Toy::new(id, 5)).err().unwrap();
    assert_eq!(e.field, "budget");
}

#[test]
fn a_streamed_trace_is_the_buffered_trace_without_the_buffer() {
    use std::sync::{Arc, Mutex};
    let mut cfg = traced(5, 9);
    cfg.faults = vec![Fault::at_ms(100.0, FaultAction::Crash(Selector::Leader))];
    let buffered = run(cfg.clone());
    assert!(buffered.trace.len() > 20);
    for also_buffer in [false, true] {
        cfg.trace = also_buffer;
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let got = got.clone();
            TraceSink::new(move |e: &TraceEvent| got.lock().unwrap().push(e.clone()))
        };
        let mut sim = Sim::new(cfg.clone(), |id: NodeId| Toy::new(id, 5)).unwrap();
        sim.stream_trace(sink);
        let r = sim.run();
        assert_eq!(*got.lock().unwrap(), buffered.trace);
        assert_eq!(
            r.trace.len(),
            if also_buffer { buffered.trace.len() } else { 0 }
        );
        assert_eq!(r.metrics, buffered.metrics);
    }
}
