//! Gray failures in the engine: one-way link cuts and repairs, per-link loss and latency that
//! change over time, slow nodes and amnesia, on the toy protocol with its known timeline
//! (constant 1 ms links, node 4 leads and broadcasts LEADER every 10 ms).
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

fn with(faults: Vec<Fault>) -> SimConfig {
    let mut cfg = SimConfig::new(4, 1);
    cfg.trace = true;
    cfg.horizon = std::time::Duration::from_millis(400);
    cfg.faults = faults;
    cfg
}

fn one(id: u32) -> NodeSet {
    NodeSet::One(Selector::Id(NodeId(id)))
}

/// Latency (ms) of every delivered LEADER from `from` to `to` sent at or after `after_ms`, in
/// order, pairing sends and deliveries on the link (FIFO, nothing lost).
fn latencies(r: &TrialReport, from: u32, to: u32, after_ms: f64) -> Vec<f64> {
    let on = |m: &MsgInfo| m.from.0 == from && m.to.0 == to && m.kind == "LEADER";
    let sent: Vec<f64> = r
        .trace
        .iter()
        .filter(|e| matches!(&e.what, TraceKind::Send(m) if on(m)))
        .map(|e| e.at.as_millis_f64())
        .filter(|&t| t >= after_ms)
        .collect();
    let got: Vec<f64> = r
        .trace
        .iter()
        .filter(|e| matches!(&e.what, TraceKind::Deliver(m) if on(m)))
        .map(|e| e.at.as_millis_f64())
        .filter(|&t| t > after_ms)
        .collect();
    sent.iter().zip(&got).map(|(s, g)| g - s).collect()
}

fn dropped(r: &TrialReport, from: u32, to: u32, why: DropReason) -> usize {
    r.trace
        .iter()
        .filter(|e| matches!(&e.what, TraceKind::Drop(m, w) if m.from.0 == from && m.to.0 == to && *w == why))
        .count()
}

#[test]
fn links_go_down_one_way_and_come_back() {
    let pair = vec![(Selector::Id(NodeId(4)), Selector::Id(NodeId(1)))];
    let r = run(with(vec![
        Fault::at_ms(
            100.0,
            FaultAction::Links {
                pairs: pair.clone(),
                up: false,
            },
        ),
        Fault::at_ms(
            150.0,
            FaultAction::Links {
                pairs: pair,
                up: true,
            },
        ),
    ]));
    // LEADER every 10 ms from t = 0: the broadcasts at 100..=140 ms are cut, only towards 1.
    assert_eq!(dropped(&r, 4, 1, DropReason::LinkDown), 5);
    assert_eq!(dropped(&r, 4, 2, DropReason::LinkDown), 0);
    assert_eq!(dropped(&r, 1, 4, DropReason::LinkDown), 0);
    assert!(latencies(&r, 4, 1, 150.0).iter().all(|&l| l == 1.0));
    assert!(matches!(
        &r.metrics.fault_log[0].1,
        Applied::Links { pairs, up: false } if pairs == &[(NodeId(4), NodeId(1))]
    ));
}

#[test]
fn link_delay_changes_one_link_over_time() {
    let delay = |at, ms| {
        Fault::at_ms(
            at,
            FaultAction::LinkDelay {
                from: one(4),
                to: one(1),
                ms,
            },
        )
    };
    // A 5 ms spike from 100 to 200 ms, then the link is back to normal.
    let r = run(with(vec![delay(100.0, 5.0), delay(200.0, 0.0)]));
    let l = latencies(&r, 4, 1, 100.0);
    assert_eq!(&l[..10], &[6.0; 10], "{l:?}");
    assert!(l[10..].iter().all(|&x| x == 1.0), "{l:?}");
    assert!(latencies(&r, 4, 2, 100.0).iter().all(|&x| x == 1.0));
}

#[test]
fn a_heal_never_lets_a_later_message_overtake_an_earlier_one() {
    // 50 ms more from 100 ms, healed at 115 ms: the LEADERs sent at 100 and 110 ms arrive at
    // 151 and 161 ms; on a FIFO link those sent after the heal wait for them (until 161 ms)
    // instead of arriving 1 ms later.
    let r = run(with(vec![
        Fault::at_ms(
            100.0,
            FaultAction::LinkDelay {
                from: one(4),
                to: one(1),
                ms: 50.0,
            },
        ),
        Fault::at_ms(115.0, FaultAction::Heal),
    ]));
    let l = latencies(&r, 4, 1, 100.0);
    assert_eq!(
        &l[..8],
        &[51.0, 51.0, 41.0, 31.0, 21.0, 11.0, 1.0, 1.0],
        "{l:?}"
    );
}

#[test]
fn link_loss_is_per_directed_link_and_deterministic() {
    let lossy = |p| {
        with(vec![Fault::at_ms(
            100.0,
            FaultAction::LinkLoss {
                from: one(4),
                to: one(1),
                loss: p,
            },
        )])
    };
    let r = run(lossy(1.0));
    // Broadcasts at 100..=400 ms (the horizon's instant included): 31 lost towards 1, none
    // on any other link.
    assert_eq!(dropped(&r, 4, 1, DropReason::Loss), 31);
    assert_eq!(dropped(&r, 4, 2, DropReason::Loss), 0);
    assert_eq!(dropped(&r, 1, 4, DropReason::Loss), 0);
    let half = run(lossy(0.5));
    let lost = dropped(&half, 4, 1, DropReason::Loss);
    assert!((5..=25).contains(&lost), "{lost}");
    assert_eq!(
        half.metrics,
        run(lossy(0.5)).metrics,
        "same seed, same losses"
    );
}

#[test]
fn a_slow_node_answers_late_but_answers() {
    let r = run(with(vec![Fault::at_ms(
        100.0,
        FaultAction::Slow {
            node: Selector::Leader,
            factor: 30.0,
            ms: 0.0,
        },
    )]));
    let l = latencies(&r, 4, 2, 100.0);
    assert!(!l.is_empty() && l.iter().all(|&x| x == 30.0), "{l:?}");
    // Nothing is lost: a slow node is not a dead one.
    assert_eq!(r.metrics.total.dropped, 0);
    // Its LEADERs now come 30 ms late; followers (35 ms detectors) still hear it in time.
    assert_eq!(r.metrics.leader, Some(NodeId(4)));
}

#[test]
fn amnesia_boots_a_node_with_nothing_persisted() {
    // The toy's node 4 claims the lead at boot only on its first boot (it persists a boot
    // count): with its storage lost, its return is a first boot again.
    let faults = |amnesia: bool| {
        let mut f = vec![Fault::at_ms(
            100.0,
            FaultAction::Crash(Selector::Id(NodeId(4))),
        )];
        if amnesia {
            f.push(Fault::at_ms(
                100.0,
                FaultAction::Amnesia(Selector::LastCrashed),
            ));
        }
        f.push(Fault::at_ms(
            200.0,
            FaultAction::Recover(Selector::LastCrashed),
        ));
        f
    };
    let leads_at_200 = |r: &TrialReport| {
        r.trace.iter().any(|e| {
            e.at.0 == 200_000_000
                && matches!(&e.what, TraceKind::Status { node, status: Some(s) }
                    if node.0 == 4 && s.role == Role::Leader)
        })
    };
    assert!(leads_at_200(&run(with(faults(true)))));
    assert!(!leads_at_200(&run(with(faults(false)))));
    // Amnesia picks among crashed nodes: with none, it is skipped and counted.
    let r = run(with(vec![Fault::at_ms(
        100.0,
        FaultAction::Amnesia(Selector::Leader),
    )]));
    assert_eq!(r.metrics.faults_skipped, 1);
}

#[test]
fn bad_gray_parameters_name_the_field() {
    let e = Sim::new(
        with(vec![Fault::at_ms(
            1.0,
            FaultAction::Slow {
                node: Selector::Leader,
                factor: 0.5,
                ms: 0.0,
            },
        )]),
        |id| Toy::new(id, 4),
    )
    .err()
    .unwrap();
    assert_eq!(
        (e.field.as_str(), e.value.as_str()),
        ("faults[0].factor", "0.5")
    );
    let e = Sim::new(
        with(vec![Fault::at_ms(
            1.0,
            FaultAction::LinkLoss {
                from: NodeSet::All,
                to: NodeSet::All,
                loss: 1.5,
            },
        )]),
        |id| Toy::new(id, 4),
    )
    .err()
    .unwrap();
    assert_eq!(e.field, "faults[0].loss");
}

#[test]
fn a_noise_spike_slows_a_nodes_links_and_the_trace_shows_it() {
    let mut cfg = with(Vec::new());
    // About ten spikes a second per node: several within the 400 ms trial.
    cfg.noise = Noise {
        pause: None,
        stall: None,
        spike: Some(Spikes {
            per_hour: 36_000.0,
            extra_ms: Latency::Constant { ms: 50.0 },
            len_ms: Latency::Constant { ms: 20.0 },
        }),
    };
    let r = run(cfg);
    let spikes: Vec<(f64, u32, f64)> = r
        .trace
        .iter()
        .filter_map(|e| match &e.what {
            TraceKind::Fault(Applied::Spike(n, ms)) => Some((e.at.as_millis_f64(), n.0, *ms)),
            _ => None,
        })
        .collect();
    let starts: Vec<&(f64, u32, f64)> = spikes.iter().filter(|s| s.2 > 0.0).collect();
    assert!(!starts.is_empty(), "{spikes:?}");
    assert!(starts.iter().all(|s| s.2 == 50.0));
    assert_eq!(r.metrics.noise_bursts, starts.len() as u64);
    // Each start is followed by its end on the same node 20 ms later (unless past the horizon).
    for &&(at, node, _) in &starts {
        let end = spikes
            .iter()
            .find(|s| s.1 == node && s.0 > at && s.2 == 0.0);
        assert!(
            end.is_none_or(|e| (e.0 - at - 20.0).abs() < 1e-6),
            "{spikes:?}"
        );
    }
    // A LEADER from the leader (4) to a spiking follower, sent during the spike, takes the
    // extra 50 ms on top of the link's 1 ms.
    let &&(at, node, _) = starts
        .iter()
        .find(|s| s.1 != 4)
        .expect("a follower's spike");
    let slow: Vec<f64> = latencies(&r, 4, node, 0.0);
    let sends: Vec<f64> = r
        .trace
        .iter()
        .filter(|e| matches!(&e.what, TraceKind::Send(m) if m.from.0 == 4 && m.to.0 == node && m.kind == "LEADER"))
        .map(|e| e.at.as_millis_f64())
        .collect();
    let during: Vec<usize> = (0..sends.len().min(slow.len()))
        .filter(|&k| sends[k] >= at && sends[k] < at + 20.0)
        .collect();
    assert!(
        !during.is_empty(),
        "no LEADER sent during the spike at {at}"
    );
    assert!(during.iter().all(|&k| slow[k] >= 51.0), "{slow:?}");
}
