//! The practical ring (`hop_acks` on, the default): hop acknowledgements, skipping silent
//! successors, the election bound, partitions and message loss, through the simulator.
use crate::common;

use common::{one_leader_named_by_all, run, sent, suspects};
use election_core::{NodeId, Role};
use election_ring::{ring_order, Arrangement, RingConfig};
use election_sim::{Fault, FaultAction, NodeSet, Selector, SimConfig, TraceKind};
use proptest::prelude::*;

fn crash(at_ms: f64, id: u32) -> Fault {
    Fault::at_ms(at_ms, FaultAction::Crash(Selector::Id(NodeId(id))))
}

fn detection_off(at_ms: f64) -> Fault {
    Fault::at_ms(
        at_ms,
        FaultAction::Detection {
            nodes: NodeSet::All,
            enabled: false,
        },
    )
}

/// Ring repair: the initiator's successor is dead. The initiator waits `t_hop` for an ACK,
/// skips it, and the highest live id wins. On an ascending ring of 6 with 6 crashed and 5
/// initiating at 10 ms (1 ms hops, `t_hop` = 20 ms), the timeline is exact:
/// ELECTION(5) to 6 (lost), skip at 30, round 1..4 back to 5 at 35: 5 leads;
/// ELECTED(5) to 6 (lost), skip at 55, round to 4 by 59, and back to 5 at 60.
#[test]
fn the_initiators_crashed_successor_is_skipped() {
    let mut sim = SimConfig::new(6, 1);
    sim.trace = true;
    sim.faults = suspects(10.0, [5]);
    sim.faults.insert(1, crash(5.0, 6));
    let r = run(sim, RingConfig::new(6));
    assert_eq!(one_leader_named_by_all(&r), NodeId(5));
    // Every hop but the ones into the dead node is acknowledged.
    assert_eq!(sent(&r, "ELECTION"), 6);
    assert_eq!(sent(&r, "ELECTED"), 6);
    assert_eq!(sent(&r, "ACK"), 10);
    // Reference = first fault (t = 0); node 4 learns the leader at 59 ms.
    assert_eq!(r.metrics.elect_ms, Some(59.0));
}

/// The same on random rings: whoever the initiator's dead successor is, the highest live
/// id wins and every live node names it.
#[test]
fn the_crashed_successor_is_skipped_on_random_rings() {
    let n = 7;
    for seed in 0..12 {
        let arrangement = Arrangement::Random { seed };
        let order = ring_order(n, arrangement);
        let (initiator, dead) = (order[0].0, order[1].0);
        let mut sim = SimConfig::new(n, seed);
        sim.faults = suspects(10.0, [initiator]);
        sim.faults.insert(1, crash(5.0, dead));
        let mut ring = RingConfig::new(n);
        ring.arrangement = arrangement;
        let r = run(sim, ring);
        let highest_live = if dead == n { n - 1 } else { n };
        assert_eq!(
            one_leader_named_by_all(&r),
            NodeId(highest_live),
            "seed {seed}"
        );
    }
}

/// Cascading failure, case 1: the leader (6) crashes, node 1 starts an election at 1000 ms,
/// and the next-highest (5) crashes at 1010 ms, after it replaced the candidacy with its own
/// id but before anyone downstream received it (its successor is the dead 6; the skip would
/// have happened at 1024). The election is lost with 5: nothing arrives any more, and the
/// participants 1..4 wait for the election bound (2·n·t_hop = 240 ms) and start again. 4,
/// the highest remaining id, wins.
#[test]
fn next_highest_crashes_before_its_candidacy_spreads_the_bound_restarts() {
    let mut sim = SimConfig::new(6, 2);
    sim.faults = vec![
        detection_off(1000.0),
        crash(1000.0, 6),
        Fault::at_ms(1000.0, FaultAction::Suspect(Selector::Id(NodeId(1)))),
        crash(1010.0, 5),
    ];
    let ring = RingConfig::new(6);
    let bound = ring.restart_bound().as_secs_f64() * 1e3;
    assert_eq!(bound, 240.0);
    let r = run(sim, ring);
    assert_eq!(one_leader_named_by_all(&r), NodeId(4));
    let elect = r.metrics.elect_ms.unwrap();
    assert!(
        elect > bound,
        "recovery went through the election bound: {elect} ms"
    );
}

/// Cascading failure, case 2: 5 crashes at 1026 ms, after ELECTION(5) went past the dead 6
/// (skipped at 1024) and is on its way round 1, 2, 3, 4. When 4 forwards it to 5 and hears
/// no ACK, the message's own candidate is the silent node: 4 drops it (it would circle
/// forever) and starts again at once, past 5 and 6. 4 wins long before the bound.
#[test]
fn next_highest_crashes_after_its_candidacy_spread_the_orphan_is_dropped() {
    let mut sim = SimConfig::new(6, 2);
    sim.trace = true;
    sim.faults = vec![
        detection_off(1000.0),
        crash(1000.0, 6),
        Fault::at_ms(1000.0, FaultAction::Suspect(Selector::Id(NodeId(1)))),
        crash(1026.0, 5),
    ];
    let r = run(sim, RingConfig::new(6));
    assert_eq!(one_leader_named_by_all(&r), NodeId(4));
    // 4 hears nothing from 5 at 1048, skips 5 and 6 (1068) and its ELECTION(4) returns at
    // 1072; ELECTED(4) skips 5 and 6 too (1112) and reaches 3 at 1115.
    assert_eq!(r.metrics.elect_ms, Some(115.0));
    // From the drop on, the only ELECTION messages are 4's own candidacy: to 6 (dead), then
    // 1, 2, 3 and back to 4.
    let late = r
        .trace
        .iter()
        .filter(|e| {
            e.at.as_millis_f64() >= 1048.0
                && matches!(&e.what, TraceKind::Send(m) if m.kind == "ELECTION")
        })
        .count();
    assert_eq!(late, 5, "the orphaned ELECTION(5) is not passed on");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Cascading failure with automatic detection: the leader crashes at 1000 ms and the
    /// then-highest node crashes at any moment of the election that follows; whatever the
    /// moment and the ring, the highest remaining id wins and everyone names it.
    #[test]
    fn the_highest_remaining_id_wins_whenever_the_next_highest_dies(
        n in 4u32..=10,
        seed in any::<u64>(),
        second_ms in 1150.0f64..1500.0,
    ) {
        let mut sim = SimConfig::new(n, seed);
        sim.faults = vec![
            Fault::at_ms(1000.0, FaultAction::Crash(Selector::Leader)),
            Fault::at_ms(second_ms, FaultAction::Crash(Selector::Highest)),
        ];
        let mut ring = RingConfig::new(n);
        ring.arrangement = Arrangement::Random { seed };
        let r = run(sim, ring);
        prop_assert_eq!(one_leader_named_by_all(&r), NodeId(n - 2));
    }

    /// Fault-free random rings of any size: exactly one leader, the highest id, named by
    /// every node, and never two leaders at once.
    #[test]
    fn fault_free_random_rings_elect_the_highest_id(
        n in 2u32..=64,
        seed in any::<u64>(),
        jittery in any::<bool>(),
    ) {
        let mut sim = SimConfig::new(n, seed);
        if jittery {
            sim.net.latency = election_sim::Latency::Uniform { min_ms: 0.2, max_ms: 3.0 };
        }
        let mut ring = RingConfig::new(n);
        ring.arrangement = Arrangement::Random { seed };
        let r = run(sim, ring);
        prop_assert_eq!(one_leader_named_by_all(&r), NodeId(n));
        prop_assert_eq!(r.metrics.max_leaders, 1);
    }
}

/// A partition that cuts an ascending ring of 6 into the arcs {1, 2, 3} and {4, 5, 6}: the
/// arc without the leader routes its election round the silent arc (skipping 4, 5, 6) and
/// elects 3 — split brain. Without a heal both leaders stay.
#[test]
fn a_partition_into_two_arcs_elects_a_leader_on_each_side() {
    let mut sim = SimConfig::new(6, 4);
    sim.horizon = std::time::Duration::from_millis(3000);
    sim.faults = vec![Fault::at_ms(
        1000.0,
        FaultAction::Partition(vec![
            vec![
                Selector::Id(NodeId(1)),
                Selector::Id(NodeId(2)),
                Selector::Id(NodeId(3)),
            ],
            vec![Selector::Rest],
        ]),
    )];
    let r = run(sim, RingConfig::new(6));
    assert!(r.metrics.split_brain);
    assert_eq!(r.metrics.max_leaders, 2);
    let named: Vec<(Role, Option<u32>)> = r
        .final_status
        .iter()
        .map(|s| {
            let s = s.expect("nobody crashed");
            (s.role, s.leader.map(|l| l.0))
        })
        .collect();
    assert_eq!(
        named,
        vec![
            (Role::Follower, Some(3)),
            (Role::Follower, Some(3)),
            (Role::Leader, Some(3)),
            (Role::Follower, Some(6)),
            (Role::Follower, Some(6)),
            (Role::Leader, Some(6)),
        ]
    );
}

/// After the heal the two leaders hear each other's heartbeats; the lower one (3) follows
/// the higher (6), which heartbeats everyone at once: one leader again.
#[test]
fn after_the_partition_heals_one_leader_remains() {
    let mut sim = SimConfig::new(6, 4);
    sim.faults = vec![
        Fault::at_ms(
            1000.0,
            FaultAction::Partition(vec![
                vec![
                    Selector::Id(NodeId(1)),
                    Selector::Id(NodeId(2)),
                    Selector::Id(NodeId(3)),
                ],
                vec![Selector::Rest],
            ]),
        ),
        Fault::at_ms(3000.0, FaultAction::Heal),
    ];
    let r = run(sim, RingConfig::new(6));
    assert!(r.metrics.split_brain, "each side had its leader");
    assert_eq!(one_leader_named_by_all(&r), NodeId(6));
    assert!(
        r.metrics.split_brain_ms < 2000.0 + 100.0,
        "split brain ends within a heartbeat of the heal: {} ms",
        r.metrics.split_brain_ms
    );
}

/// Message loss: a lost ELECTION, ELECTED or ACK looks like a dead successor, so nodes get
/// skipped and elections restart; nothing may panic, and once loss stops the ring elects
/// one leader that every live node names. (Under loss a skipped live node may miss the
/// election, so the winner need not be the highest live id.)
#[test]
fn message_loss_does_not_break_the_ring_and_it_elects_once_loss_stops() {
    for seed in 0..10 {
        for loss in [0.2, 0.5] {
            let n = 5 + (seed % 4) as u32;
            let mut sim = SimConfig::new(n, seed);
            sim.net.duplicate = 0.05;
            sim.faults = vec![
                Fault::at_ms(1000.0, FaultAction::SetLoss(loss)),
                Fault::at_ms(1200.0, FaultAction::Crash(Selector::Leader)),
                Fault::at_ms(4000.0, FaultAction::SetLoss(0.0)),
            ];
            let mut ring = RingConfig::new(n);
            ring.arrangement = Arrangement::Random { seed };
            let r = run(sim, ring);
            let leader = one_leader_named_by_all(&r);
            assert!(leader.0 < n, "seed {seed}: the crashed leader cannot lead");
        }
    }
}

/// Loss from the very first boot, on a lossy network for the whole cold start.
#[test]
fn a_lossy_cold_start_elects_once_loss_stops() {
    for seed in 0..6 {
        let mut sim = SimConfig::new(8, seed);
        sim.net.loss = 0.4;
        sim.faults = vec![Fault::at_ms(3000.0, FaultAction::SetLoss(0.0))];
        let r = run(sim, RingConfig::new(8));
        one_leader_named_by_all(&r);
    }
}

/// Second copies: acks slower than `t_hop` (latency up to 15 ms each way), duplication and
/// heavy loss make senders skip live successors and leave extra copies on the ring. Instance
/// numbers stop every copy at the first node that already handled it, so traffic stays
/// bounded and the ring elects once loss stops.
#[test]
fn skipped_acks_and_duplicates_do_not_multiply_messages() {
    for seed in [3, 12, 40] {
        let n = 15;
        let mut sim = SimConfig::new(n, seed);
        sim.net.duplicate = 0.1;
        sim.net.fifo = false;
        sim.net.latency = election_sim::Latency::Uniform {
            min_ms: 0.5,
            max_ms: 15.0,
        };
        sim.faults = vec![
            Fault::at_ms(500.0, FaultAction::SetLoss(0.6)),
            Fault::at_ms(800.0, FaultAction::Crash(Selector::Leader)),
            Fault::at_ms(5000.0, FaultAction::SetLoss(0.0)),
        ];
        let mut ring = RingConfig::new(n);
        ring.arrangement = Arrangement::Random { seed };
        let r = run(sim, ring);
        one_leader_named_by_all(&r);
        let ring_traffic = r
            .metrics
            .total
            .sent_of(election_core::MsgCategory::Election)
            + r.metrics.total.sent_of(election_core::MsgCategory::Leader);
        assert!(
            ring_traffic < 40_000,
            "seed {seed}: {ring_traffic} ring messages"
        );
    }
}
