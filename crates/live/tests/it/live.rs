//! Live mode end to end: the protocols' own state machines over real UDP sockets on
//! loopback, with faults applied by the driver. These are correctness tests, not timing
//! benchmarks: bounds are generous and assertions qualitative. Every trial stops by itself
//! within a few seconds.

use std::net::UdpSocket;
use std::sync::Arc;
use std::time::Duration;

use election_bully::{Bully, BullyConfig, BullyMsg};
use election_core::{NodeId, Role, Status, Time};
use election_live::{datagram, run_trial, run_trial_with, Hooks, LiveConfig, LiveReport};
use election_raft::{Raft, RaftConfig};
use election_ring::{Ring, RingConfig};
use election_sim::{Applied, Fault, FaultAction, Selector, Sim, SimConfig, TraceKind};

const FAULT_MS: f64 = 800.0;

fn live(n: u32, seed: u64, faults: Vec<Fault>) -> LiveConfig {
    let mut c = LiveConfig::new(n, seed);
    c.trial.faults = faults;
    c.trial.horizon = Duration::from_secs(6);
    c.trial.settle = Duration::from_millis(700);
    c.trial.trace = true;
    c
}

fn bully(n: u32) -> impl Fn(NodeId) -> Bully + Send + Sync + 'static {
    let c = Arc::new(BullyConfig::new(n));
    move |id| Bully::new(id, c.clone())
}

fn raft(n: u32, check_quorum: bool) -> impl Fn(NodeId) -> Raft + Send + Sync + 'static {
    let mut c = RaftConfig::new(n);
    c.check_quorum = check_quorum;
    let c = Arc::new(c);
    move |id| Raft::new(id, c.clone())
}

fn leaders(st: &[Option<Status>]) -> Vec<NodeId> {
    (0..st.len())
        .filter(|&i| matches!(st[i], Some(s) if s.role == Role::Leader))
        .map(NodeId::from_index)
        .collect()
}

/// Nodes that entered the leader role at or after `t`, from a trace.
fn new_leaders_since(trace: &[election_sim::TraceEvent], t: Time) -> Vec<NodeId> {
    let mut out: Vec<NodeId> = trace
        .iter()
        .filter(|e| e.at >= t)
        .filter_map(|e| match &e.what {
            TraceKind::Status {
                node,
                status: Some(s),
            } if s.role == Role::Leader => Some(*node),
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

fn healthy(r: &LiveReport) {
    let h = &r.health;
    assert_eq!(h.rejected(), 0, "{:?}", h.notes);
    assert_eq!(h.send_errors + h.recv_errors, 0, "{:?}", h.notes);
    assert!(r.addresses.iter().all(|a| a.ip().is_loopback()));
}

/// The crashed leader is gone, every live node names `expect`, which leads.
fn converged_on(r: &LiveReport, expect: NodeId) {
    let m = &r.metrics;
    assert!(m.converged, "{m:?}");
    assert_eq!(m.leader, Some(expect), "{m:?}");
    for (i, s) in r.final_status.iter().enumerate() {
        if let Some(s) = s {
            assert_eq!(s.leader, Some(expect), "node {} {s:?}", i + 1);
        }
    }
    // The election took a detection window and a few round trips, not seconds.
    let e = m.elect_ms.expect("converged");
    assert!(e < 2000.0, "elect_ms = {e}");
    // The leader is gone from the fault instant on: failover is at least the time it took to
    // notice, never 0 (a quorum leader observed between the reference instant and the crash
    // once passed for one that survived it).
    let f = m.failover_ms.expect("a quorum leader after the fault");
    assert!(
        f >= m.detect_ms.unwrap_or(0.0) && f > 100.0,
        "failover_ms = {f}, {m:?}"
    );
    assert!(m.unavailable_ms >= f - 1e-6, "{m:?}");
}

/// Garcia-Molina §3: when the coordinator fails, the highest live id becomes coordinator.
#[test]
fn bully_leader_crash_elects_the_highest_live_id() {
    let r = run_trial(
        &live(
            5,
            1,
            vec![Fault::at_ms(FAULT_MS, FaultAction::Crash(Selector::Leader))],
        ),
        bully(5),
    )
    .unwrap();
    assert_eq!(r.final_status[4], None, "node 5, the boot leader, crashed");
    converged_on(&r, NodeId(4));
    healthy(&r);
    // Traffic went over the sockets and was counted by the observer.
    assert!(r.metrics.total.delivered > 0);
    assert!(
        r.metrics.total.dropped > 0,
        "messages to the dead node are dropped"
    );
}

/// Two leader crashes, measured from the second (the simulator's `reference_fault`): node 5
/// crashes, node 4 takes over, then node 4 crashes; the reference instant is the second crash,
/// and the leader then is node 4.
#[test]
fn a_reference_fault_is_measured_from_live_as_in_simulation() {
    let mut cfg = live(
        5,
        1,
        vec![
            Fault::at_ms(FAULT_MS, FaultAction::Crash(Selector::Leader)),
            Fault::at_ms(FAULT_MS + 1200.0, FaultAction::Crash(Selector::Leader)),
        ],
    );
    cfg.trial.fault_wait = Some(Duration::from_secs(2));
    cfg.trial.reference_fault = Some(1);
    let r = run_trial(&cfg, bully(5)).unwrap();
    let m = &r.metrics;
    assert_eq!(m.faults_skipped, 0, "{:?}", m.fault_log);
    let crashes: Vec<(f64, NodeId)> = m
        .fault_log
        .iter()
        .filter_map(|(t, a)| match a {
            Applied::Crash(id) => Some((t.as_millis_f64(), *id)),
            _ => None,
        })
        .collect();
    assert_eq!(
        crashes.iter().map(|c| c.1).collect::<Vec<_>>(),
        [NodeId(5), NodeId(4)]
    );
    assert_eq!(m.reference_ms, crashes[1].0);
    // Faults fire at their scheduled instants (1200 ms apart); the log records when each was
    // applied, and on a loaded machine the first can be applied a little after its instant
    // (the second is scheduled from the instant, not from the late application).
    assert!(
        crashes[1].0 >= crashes[0].0 + 1100.0,
        "second crash at {} ms, first at {} ms",
        crashes[1].0,
        crashes[0].0
    );
    assert_eq!(m.leader_at_reference, Some(NodeId(4)));
    converged_on(&r, NodeId(3));
    healthy(&r);
}

/// Chang & Roberts (1979): the largest id circulates the ring and wins. After the leader (node
/// 5) crashes, the ring is repaired around it and node 4 is elected.
#[test]
fn ring_leader_crash_elects_the_highest_live_id() {
    let c = Arc::new(RingConfig::new(5));
    let r = run_trial(
        &live(
            5,
            11,
            vec![Fault::at_ms(FAULT_MS, FaultAction::Crash(Selector::Leader))],
        ),
        move |id| Ring::new(id, c.clone()),
    )
    .unwrap();
    assert_eq!(r.final_status[4], None, "node 5, the boot leader, crashed");
    converged_on(&r, NodeId(4));
    healthy(&r);
}

/// Raft §5.2: after the leader crashes a new leader is elected by the majority.
#[test]
fn raft_leader_crash_elects_another_live_leader() {
    let r = run_trial(
        &live(
            5,
            2,
            vec![Fault::at_ms(FAULT_MS, FaultAction::Crash(Selector::Leader))],
        ),
        raft(5, false),
    )
    .unwrap();
    let crashed: Vec<usize> = (0..5).filter(|&i| r.final_status[i].is_none()).collect();
    assert_eq!(crashed.len(), 1);
    let leader = r.metrics.leader.expect("a new leader");
    assert_ne!(leader.index(), crashed[0]);
    converged_on(&r, leader);
    healthy(&r);
    // Election safety (§5.2): never two leaders of one term.
    assert_eq!(r.metrics.same_epoch_leaders, 0);
}

/// Crash and recovery through stable storage: Raft's term survives the task being aborted,
/// and the recovered node rejoins as a follower of the new leader's term.
#[test]
fn raft_recovered_node_restarts_from_stable_storage() {
    let faults = vec![
        Fault::at_ms(FAULT_MS, FaultAction::Crash(Selector::Leader)),
        Fault::at_ms(
            FAULT_MS + 700.0,
            FaultAction::Recover(Selector::LastCrashed),
        ),
    ];
    let r = run_trial(&live(5, 3, faults), raft(5, false)).unwrap();
    assert!(
        r.final_status.iter().all(Option::is_some),
        "everyone is back"
    );
    let leader = r.metrics.leader.expect("converged");
    let term = r.final_status[leader.index()].unwrap().epoch.unwrap();
    assert!(r
        .final_status
        .iter()
        .flatten()
        .all(|s| s.epoch == Some(term)));
    assert!(term >= 2, "the failover took a new term");
    healthy(&r);
}

/// The minority side is the two lowest ids; the bully leader (node 5) is on the majority side.
fn split_low_two() -> Vec<Fault> {
    vec![Fault::at_ms(
        FAULT_MS,
        FaultAction::Partition(vec![
            vec![Selector::Lowest, Selector::KthLowest(2)],
            vec![Selector::Rest],
        ]),
    )]
}

/// The bully's known failure mode under partition: each side elects its own highest node,
/// live exactly as in simulation.
#[test]
fn bully_partition_shows_two_leaders_live_as_in_simulation() {
    let cfg = live(5, 4, split_low_two());
    let r = run_trial(&cfg, bully(5)).unwrap();
    assert_eq!(leaders(&r.final_status), [NodeId(2), NodeId(5)]);
    assert!(r.metrics.split_brain && r.metrics.max_leaders == 2);
    assert!(r.metrics.minority_leader_ms > 0.0);
    healthy(&r);

    let mut sim = SimConfig::new(5, 4);
    sim.faults = cfg.trial.faults.clone();
    sim.horizon = cfg.trial.horizon;
    sim.settle = cfg.trial.settle;
    let c = Arc::new(BullyConfig::new(5));
    let s = Sim::new(sim, |id| Bully::new(id, c.clone())).unwrap().run();
    assert_eq!(leaders(&s.final_status), leaders(&r.final_status));
    assert_eq!(s.metrics.max_leaders, r.metrics.max_leaders);
    assert_eq!(s.metrics.leader, r.metrics.leader);
}

/// Raft §5.2: a minority cannot elect. The two lowest followers are cut off (selectors resolved
/// when the partition fires, from the live cluster's state: the leader keeps its majority); no
/// node of the minority ever becomes leader, with or without CheckQuorum, live as in simulation.
#[test]
fn raft_partition_minority_never_elects_live_as_in_simulation() {
    let faults = vec![Fault::at_ms(
        FAULT_MS,
        FaultAction::Partition(vec![
            vec![
                Selector::KthLowestFollower(1),
                Selector::KthLowestFollower(2),
            ],
            vec![Selector::Rest],
        ]),
    )];
    let minority_of = |log: &[(Time, Applied)]| -> Vec<NodeId> {
        match log {
            [(_, Applied::Partition(groups)), ..] => groups[0].clone(),
            other => panic!("the partition did not apply: {other:?}"),
        }
    };
    for (seed, check_quorum) in [(5, false), (6, true)] {
        let mut cfg = live(5, seed, faults.clone());
        cfg.trial.fault_wait = Some(Duration::from_secs(2));
        let r = run_trial_with(&cfg, raft(5, check_quorum), Hooks::default()).unwrap();
        let leader = r
            .metrics
            .leader_at_reference
            .expect("a raft leader when it fired");
        let minority = minority_of(&r.metrics.fault_log);
        assert_eq!(minority.len(), 2);
        assert!(!minority.contains(&leader));
        let t0 = Time::from_millis(FAULT_MS as u64);
        for m in &minority {
            assert!(
                !new_leaders_since(&r.trace, t0).contains(m),
                "minority node {m} led"
            );
            assert_ne!(r.final_status[m.index()].unwrap().role, Role::Leader);
        }
        // The majority keeps (or re-elects) a leader.
        assert!(r.metrics.converged, "{:?}", r.metrics);
        assert!(!minority.contains(&r.metrics.leader.unwrap()));
        assert_eq!(r.metrics.same_epoch_leaders, 0);
        assert_eq!(r.metrics.faults_skipped, 0);
        healthy(&r);

        // The same scenario in simulation, with the same fault list.
        let c = {
            let mut c = RaftConfig::new(5);
            c.check_quorum = check_quorum;
            Arc::new(c)
        };
        let mut sim = SimConfig::new(5, seed);
        sim.faults = faults.clone();
        sim.fault_wait = Some(Duration::from_secs(2));
        sim.horizon = Duration::from_secs(6);
        sim.settle = Duration::from_millis(700);
        sim.trace = true;
        let s = Sim::new(sim, |id| Raft::new(id, c.clone())).unwrap().run();
        let sim_minority = minority_of(&s.metrics.fault_log);
        assert!(!sim_minority.contains(&s.metrics.leader_at_reference.unwrap()));
        for m in &sim_minority {
            assert!(!new_leaders_since(&s.trace, t0).contains(m));
        }
        assert_eq!(s.metrics.converged, r.metrics.converged);
    }
}

/// Datagrams from an address outside the cluster — garbage, empty, oversized, and perfectly
/// framed messages claiming to come from a member — are dropped and counted, and the cluster
/// elects as if they never arrived.
#[test]
fn datagrams_from_non_members_are_dropped_and_counted() {
    let hooks = Hooks {
        on_bound: Some(Box::new(|addrs: &[std::net::SocketAddr]| {
            let addrs = addrs.to_vec();
            std::thread::spawn(move || {
                let s = UdpSocket::bind("127.0.0.1:0").unwrap();
                let mut forged = Vec::new();
                let env = datagram::Envelope {
                    from: NodeId(3),
                    to: NodeId(1),
                    seq: 1,
                };
                datagram::encode(
                    &datagram::Key::from_bytes([0; 32]),
                    env,
                    &BullyMsg::Coordinator { epoch: None },
                    &mut forged,
                );
                let garbage: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(37)).collect();
                let payloads: [&[u8]; 4] = [&forged, &garbage, &[], &[0u8; 4000]];
                // Bounded: 20 rounds over 200 ms, then the thread ends.
                for _ in 0..20 {
                    for a in &addrs {
                        for p in payloads {
                            let _ = s.send_to(p, a);
                        }
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            });
        })),
        ..Hooks::default()
    };
    let r = run_trial_with(&live(3, 7, vec![]), bully(3), hooks).unwrap();
    assert!(r.metrics.converged);
    assert_eq!(r.metrics.leader, Some(NodeId(3)));
    let h = &r.health;
    assert!(h.rejected_non_member > 0, "{h:?}");
    assert_eq!(
        h.rejected_frame + h.rejected_payload + h.rejected_impersonation,
        0
    );
    assert!(
        h.notes.iter().any(|n| n.contains("non-member")),
        "{:?}",
        h.notes
    );
}

/// Pause: the leader stops the world longer than the detection window. The others elect node
/// 4 meanwhile, while the sleeping node 5 still believes it leads (two leaders); when it wakes
/// and handles its stale backlog, the bully order puts node 5 back in charge.
#[test]
fn bully_paused_leader_is_replaced_then_takes_back_over() {
    let faults = vec![Fault::at_ms(
        FAULT_MS,
        FaultAction::Pause {
            node: Selector::Leader,
            ms: 600.0,
        },
    )];
    let r = run_trial(&live(5, 8, faults), bully(5)).unwrap();
    let m = &r.metrics;
    assert!(m.split_brain && m.max_leaders == 2, "{m:?}");
    assert!(m.converged && m.leader == Some(NodeId(5)), "{m:?}");
    assert!(
        m.elect_ms.unwrap() >= 600.0,
        "not before node 5 woke: {m:?}"
    );
    assert!(new_leaders_since(&r.trace, Time::from_millis(FAULT_MS as u64)).contains(&NodeId(4)));
    healthy(&r);
}

/// Added delay and loss are applied by the driver: with every datagram held back 10 ms, the
/// bully's election phase (detection to the agreed leader) lasts at least `t_elec` plus one
/// COORDINATOR flight; with 10 % loss, datagrams are dropped (reason `loss`) and Raft still
/// elects.
#[test]
fn added_delay_and_loss_are_applied() {
    let mut cfg = live(
        5,
        9,
        vec![Fault::at_ms(FAULT_MS, FaultAction::Crash(Selector::Leader))],
    );
    cfg.trial.net.latency = election_sim::Latency::Constant { ms: 10.0 };
    let r = run_trial(&cfg, bully(5)).unwrap();
    converged_on(&r, NodeId(4));
    let m = &r.metrics;
    let phase = m.elect_ms.unwrap() - m.detect_ms.unwrap();
    assert!(phase >= 30.0, "t_elec 20 ms + a 10 ms hop, got {phase} ms");

    let mut cfg = live(5, 10, vec![]);
    cfg.trial.net.loss = 0.1;
    let r = run_trial(&cfg, raft(5, false)).unwrap();
    assert!(r.metrics.converged, "{:?}", r.metrics);
    let lost = r
        .trace
        .iter()
        .filter(|e| matches!(e.what, TraceKind::Drop(_, election_sim::DropReason::Loss)))
        .count();
    assert!(lost > 0);
}

/// Gray faults live: `links` is carried out over the sockets (here the `chained` topology: the
/// leader, node 3, and node 1 lose their link both ways); per-link loss and delay, slow nodes,
/// amnesia, stale connections and clock faults are not modelled live and are refused before the trial runs, naming
/// the fault, never run as something else. The trial gets an outcome like a simulated one.
#[test]
fn gray_links_apply_live_and_the_rest_is_refused() {
    let (one, three) = (Selector::Id(NodeId(1)), Selector::Id(NodeId(3)));
    let links = Fault::at_ms(
        FAULT_MS,
        FaultAction::Links {
            pairs: vec![(one, three), (three, one)],
            up: false,
        },
    );
    for (unsupported, why) in [
        (
            FaultAction::Slow {
                node: Selector::Leader,
                factor: 10.0,
                ms: 0.0,
            },
            "not supported by the live driver",
        ),
        (
            FaultAction::LinkDelay {
                from: election_sim::NodeSet::All,
                to: election_sim::NodeSet::All,
                ms: 5.0,
            },
            "not supported by the live driver",
        ),
        (
            FaultAction::ClockJump {
                node: Selector::Leader,
                ms: 100.0,
            },
            "real clock",
        ),
        (
            FaultAction::StaleConnection {
                from: election_sim::NodeSet::One(Selector::Leader),
                to: election_sim::NodeSet::All,
                ms: 750.0,
            },
            "not supported by the live driver",
        ),
    ] {
        let cfg = live(
            3,
            1,
            vec![links.clone(), Fault::at_ms(FAULT_MS, unsupported)],
        );
        let e = cfg.validate().unwrap_err();
        assert_eq!(e.field, "faults[1].action", "{e}");
        assert!(e.to_string().contains(why), "{e}");
        assert!(matches!(
            run_trial(&cfg, bully(3)),
            Err(election_live::LiveError::Config(_))
        ));
    }
    let r = run_trial(&live(3, 1, vec![links]), bully(3)).unwrap();
    let log: Vec<&Applied> = r.metrics.fault_log.iter().map(|(_, a)| a).collect();
    assert!(
        matches!(log[0], Applied::Links { pairs, up: false } if pairs == &[(NodeId(1), NodeId(3)), (NodeId(3), NodeId(1))]),
        "{log:?}"
    );
    assert_eq!(r.metrics.faults_skipped, 0, "{log:?}");
    // Node 2 still joins both: a connected majority remains, whatever the bully makes of it.
    assert_ne!(r.metrics.outcome, election_sim::Outcome::MinorityOnly);
}

/// A node whose protocol panics 100 ms in (node 2 of 3): the panic is not swallowed. The trial
/// fails with an error naming the node and the panic, well before its horizon, and gives no
/// report (so never a result row).
#[test]
fn a_panicking_node_task_fails_the_trial() {
    use election_core::{Io, Protocol, TimerKind};
    use election_live::LiveError;

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    struct Tick;
    impl TimerKind for Tick {
        const COUNT: usize = 1;
        fn index(self) -> usize {
            0
        }
        fn is_failure_detector(self) -> bool {
            false
        }
    }
    struct Panicky(NodeId);
    impl Protocol for Panicky {
        type Msg = BullyMsg;
        type Timer = Tick;
        type Persist = ();
        fn on_start(&mut self, io: &mut Io<'_, Self>, _: Option<&()>) {
            io.set_timer(Tick, Duration::from_millis(100));
        }
        fn on_message(&mut self, _: &mut Io<'_, Self>, _: NodeId, _: BullyMsg) {}
        fn on_timer(&mut self, _: &mut Io<'_, Self>, _: Tick) {
            assert_ne!(
                self.0,
                NodeId(2),
                "node 2 was handed something it cannot take"
            );
        }
        fn on_suspect(&mut self, _: &mut Io<'_, Self>) {}
        fn status(&self) -> Status {
            Status::FOLLOWER_NO_LEADER
        }
    }
    let started = std::time::Instant::now();
    let err = run_trial(&live(3, 1, vec![]), Panicky).unwrap_err();
    match &err {
        LiveError::NodePanicked { node, message } => {
            assert_eq!(*node, NodeId(2));
            assert!(message.contains("cannot take"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(3), "{err}");
}

/// A deposed leader's lagging writes (`leader.stop_lag_ms`) are simulated only: refused before
/// the trial runs, naming the parameter.
#[test]
fn a_stop_lag_is_refused_live() {
    let mut c = live(3, 1, vec![]);
    c.trial.workload.interval = Some(Duration::from_millis(10));
    c.trial.workload.stop_lag = election_sim::Latency::Constant { ms: 200.0 };
    let e = c.validate().unwrap_err();
    assert_eq!(e.field, "leader.stop_lag_ms", "{e}");
    assert!(run_trial(&c, bully(3)).is_err());
    c.trial.workload.stop_lag = election_sim::Latency::Constant { ms: 0.0 };
    assert!(c.validate().is_ok());
}

/// `--bind 0.0.0.0` (or `::`): a node bound there sends from 127.0.0.1 (or another
/// interface) while its address reads 0.0.0.0, so every datagram would be dropped as a
/// non-member's and the run would report a liveness failure. Refused, naming the field.
#[test]
fn an_unspecified_bind_address_is_refused() {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    for ip in [
        IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        IpAddr::V4(Ipv4Addr::new(224, 0, 0, 1)),
    ] {
        let mut c = live(3, 1, vec![]);
        c.bind = ip;
        let err = c.validate().unwrap_err().to_string();
        assert!(
            err.contains("bind") && err.contains(&ip.to_string()),
            "{err}"
        );
        assert!(run_trial(&c, bully(3)).is_err());
    }
}
