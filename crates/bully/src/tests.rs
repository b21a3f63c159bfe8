//! Unit tests that drive one node's handlers directly and inspect its actions.

use std::sync::Arc;

use election_core::{Action, Io, NodeId, Protocol, Rng, Role, SeedableRng, Status, Time};

use crate::{Bully, BullyConfig, BullyMsg, BullyTimer, Rejoin};

/// One node under test with its own clock, generator and action log.
struct Harness {
    node: Bully,
    now: Time,
    rng: Rng,
    actions: Vec<Action<Bully>>,
}

impl Harness {
    fn new(id: u32, cfg: BullyConfig) -> Self {
        Harness {
            node: Bully::new(NodeId(id), Arc::new(cfg)),
            now: Time::ZERO,
            rng: Rng::seed_from_u64(1),
            actions: Vec::new(),
        }
    }
    fn at(&mut self, ms: u64) -> &mut Self {
        self.now = Time::from_millis(ms);
        self
    }
    fn io(&mut self) -> (&mut Bully, Io<'_, Bully>) {
        self.actions.clear();
        (
            &mut self.node,
            Io::new(self.now, &mut self.rng, &mut self.actions),
        )
    }
    fn start(&mut self) -> Vec<Action<Bully>> {
        let (node, mut io) = self.io();
        node.on_start(&mut io, None);
        self.actions.clone()
    }
    fn msg(&mut self, from: u32, msg: BullyMsg) -> Vec<Action<Bully>> {
        let (node, mut io) = self.io();
        node.on_message(&mut io, NodeId(from), msg);
        self.actions.clone()
    }
    fn timer(&mut self, t: BullyTimer) -> Vec<Action<Bully>> {
        let (node, mut io) = self.io();
        node.on_timer(&mut io, t);
        self.actions.clone()
    }
    fn suspect(&mut self) -> Vec<Action<Bully>> {
        let (node, mut io) = self.io();
        node.on_suspect(&mut io);
        self.actions.clone()
    }
    fn status(&self) -> Status {
        self.node.status()
    }
}

fn sends(actions: &[Action<Bully>], kind: &str) -> Vec<u32> {
    use election_core::Message;
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send { to, msg } if msg.kind() == kind => Some(to.0),
            _ => None,
        })
        .collect()
}

fn armed(actions: &[Action<Bully>], timer: BullyTimer) -> Option<Time> {
    actions.iter().rev().find_map(|a| match a {
        Action::SetTimer { timer: t, at } if *t == timer => Some(*at),
        _ => None,
    })
}

const E: BullyMsg = BullyMsg::Election {
    epoch: None,
    stamp: None,
};
const OK: BullyMsg = BullyMsg::Ok { epoch: None };
const COORD: BullyMsg = BullyMsg::Coordinator { epoch: None };
const HB: BullyMsg = BullyMsg::Heartbeat {
    epoch: None,
    stamp: None,
};

/// A node of a 5-cluster that has accepted 5 as coordinator.
fn follower_of_5(id: u32) -> Harness {
    let mut h = Harness::new(id, BullyConfig::new(5));
    h.start();
    h.msg(5, COORD);
    assert_eq!(h.status().leader, Some(NodeId(5)));
    h
}

#[test]
fn election_goes_to_higher_ids_and_declares_after_t_elec_without_ok() {
    // Garcia-Molina §3: ELECTION to every higher id; no answer within T => coordinator.
    let mut h = Harness::new(2, BullyConfig::new(4));
    let a = h.start();
    assert_eq!(sends(&a, "ELECTION"), vec![3, 4]);
    assert_eq!(armed(&a, BullyTimer::Elect), Some(Time::from_millis(20)));
    assert_eq!(h.status().role, Role::Candidate);
    let a = h.at(20).timer(BullyTimer::Elect);
    assert_eq!(sends(&a, "COORDINATOR"), vec![1]);
    assert_eq!(
        armed(&a, BullyTimer::Heartbeat),
        Some(Time::from_millis(70))
    );
    assert_eq!(
        h.status(),
        Status {
            role: Role::Leader,
            leader: Some(NodeId(2)),
            epoch: None
        }
    );
    let a = h.at(70).timer(BullyTimer::Heartbeat);
    assert_eq!(sends(&a, "HEARTBEAT"), vec![1, 3, 4]);
}

#[test]
fn highest_id_declares_at_once() {
    let mut h = Harness::new(5, BullyConfig::new(5));
    let a = h.start();
    assert!(sends(&a, "ELECTION").is_empty());
    assert_eq!(sends(&a, "COORDINATOR"), vec![1, 2, 3, 4]);
    assert_eq!(h.status().role, Role::Leader);
}

#[test]
fn ok_makes_the_candidate_yield_and_t_coord_restarts_it() {
    // The second timeout: a yielded node whose higher node dies mid-election starts again.
    let mut h = Harness::new(2, BullyConfig::new(4));
    h.start();
    let a = h.at(2).msg(3, OK);
    assert!(a
        .iter()
        .any(|a| matches!(a, Action::CancelTimer(BullyTimer::Elect))));
    assert_eq!(armed(&a, BullyTimer::Coord), Some(Time::from_millis(42)));
    assert_eq!(h.status().role, Role::Candidate);
    // A late Elect firing of the abandoned round does nothing.
    assert!(h.at(20).timer(BullyTimer::Elect).is_empty());
    let a = h.at(42).timer(BullyTimer::Coord);
    assert_eq!(sends(&a, "ELECTION"), vec![3, 4]);
    // This time COORDINATOR arrives.
    h.at(45).msg(3, COORD);
    assert_eq!(h.status().role, Role::Follower);
    assert_eq!(h.status().leader, Some(NodeId(3)));
}

#[test]
fn election_from_lower_is_answered_and_starts_own_election_once() {
    let mut h = follower_of_5(3);
    let a = h.at(10).msg(1, E);
    assert_eq!(sends(&a, "OK"), vec![1]);
    assert_eq!(sends(&a, "ELECTION"), vec![4, 5]);
    // Already in an election: answer, do not restart.
    let a = h.at(11).msg(2, E);
    assert_eq!(sends(&a, "OK"), vec![2]);
    assert!(sends(&a, "ELECTION").is_empty());
    h.at(12).msg(4, OK);
    let a = h.at(13).msg(1, E);
    assert_eq!(sends(&a, "OK"), vec![1]);
    assert!(sends(&a, "ELECTION").is_empty());
}

#[test]
fn sitting_leader_reannounces_to_the_asker() {
    let mut h = Harness::new(5, BullyConfig::new(5));
    h.start();
    let a = h.at(5).msg(2, E);
    assert_eq!(sends(&a, "OK"), vec![2]);
    assert_eq!(sends(&a, "COORDINATOR"), vec![2]);
    assert_eq!(h.status().role, Role::Leader);
}

#[test]
fn detector_fires_an_election_and_is_rearmed_by_heartbeats() {
    let mut h = follower_of_5(2);
    let a = h.at(30).msg(5, HB);
    let at = armed(&a, BullyTimer::Detect).unwrap();
    assert!(at >= Time::from_millis(180) && at <= Time::from_millis(330));
    let a = h.at(400).timer(BullyTimer::Detect);
    assert_eq!(sends(&a, "ELECTION"), vec![3, 4, 5]);
    // A forced suspicion acts the same way, but a candidate or leader ignores it.
    assert!(h.suspect().is_empty());
    let mut l = Harness::new(5, BullyConfig::new(5));
    l.start();
    assert!(l.suspect().is_empty());
    let mut f = follower_of_5(1);
    assert_eq!(sends(&f.suspect(), "ELECTION"), vec![2, 3, 4, 5]);
}

#[test]
fn coordinator_from_lower_is_bullied_back() {
    let mut h = follower_of_5(4);
    let a = h.at(50).msg(3, COORD);
    assert_eq!(sends(&a, "ELECTION"), vec![5]);
    assert_eq!(h.status().role, Role::Candidate);
    // A leader hearing a lower leader's heartbeat (partition healed) re-asserts itself.
    let mut l = Harness::new(5, BullyConfig::new(5));
    l.start();
    let a = l.at(60).msg(3, HB);
    assert_eq!(sends(&a, "COORDINATOR"), vec![1, 2, 3, 4]);
    // A leader hearing a higher one steps down.
    let mut m = Harness::new(4, BullyConfig::new(5));
    m.start();
    m.at(20).timer(BullyTimer::Elect);
    assert_eq!(m.status().role, Role::Leader);
    m.at(70).msg(5, HB);
    assert_eq!(m.status().role, Role::Follower);
    assert_eq!(m.status().leader, Some(NodeId(5)));
}

#[test]
fn follower_keeps_a_higher_leader_over_a_lower_heartbeat() {
    let mut h = follower_of_5(2);
    let a = h.at(70).msg(3, HB);
    assert!(a.is_empty(), "{a:?}");
    assert_eq!(h.status().leader, Some(NodeId(5)));
}

#[test]
fn defer_rejoin_listens_then_joins_even_a_lower_leader() {
    let mut cfg = BullyConfig::new(5);
    cfg.rejoin = Rejoin::Defer;
    let mut h = Harness::new(5, cfg.clone());
    let a = h.start();
    assert!(sends(&a, "ELECTION").is_empty() && sends(&a, "COORDINATOR").is_empty());
    assert_eq!(armed(&a, BullyTimer::Listen), Some(Time::from_millis(150)));
    assert_eq!(h.status(), Status::FOLLOWER_NO_LEADER);
    h.at(40).msg(4, HB);
    assert_eq!(h.status().leader, Some(NodeId(4)));
    assert_eq!(h.status().role, Role::Follower);
    // Its heartbeats keep it there.
    assert!(sends(&h.at(90).msg(4, HB), "ELECTION").is_empty());
    assert_eq!(h.status().leader, Some(NodeId(4)));
    // Silence through the window: elect.
    let mut s = Harness::new(3, cfg);
    s.start();
    let a = s.at(150).timer(BullyTimer::Listen);
    assert_eq!(sends(&a, "ELECTION"), vec![4, 5]);
}

#[test]
fn quorum_probes_lower_ids_and_needs_a_majority() {
    let mut cfg = BullyConfig::new(5);
    cfg.quorum = true;
    let mut h = Harness::new(5, cfg.clone());
    let a = h.start();
    assert_eq!(sends(&a, "ELECTION"), vec![1, 2, 3, 4]);
    assert_eq!(h.status().role, Role::Candidate);
    let ack = BullyMsg::Ack {
        epoch: None,
        stamp: Time::ZERO,
    };
    h.at(2).msg(4, ack);
    h.at(2).msg(4, ack); // a duplicate counts once
    assert_eq!(h.status().role, Role::Candidate);
    let stale = BullyMsg::Ack {
        epoch: None,
        stamp: Time::from_millis(1),
    };
    h.at(2).msg(3, stale); // answers another round
    assert_eq!(h.status().role, Role::Candidate);
    let a = h.at(2).msg(3, ack);
    assert_eq!(sends(&a, "COORDINATOR"), vec![1, 2, 3, 4]);
    assert_eq!(h.status().role, Role::Leader);

    // A minority: no declaration, retry after t_coord.
    let mut m = Harness::new(5, cfg.clone());
    m.start();
    m.at(2).msg(4, ack);
    let a = m.at(20).timer(BullyTimer::Elect);
    assert!(sends(&a, "COORDINATOR").is_empty());
    assert_eq!(armed(&a, BullyTimer::Coord), Some(Time::from_millis(60)));
    assert_eq!(m.status().role, Role::Candidate);
    assert_eq!(
        sends(&m.at(60).timer(BullyTimer::Coord), "ELECTION"),
        vec![1, 2, 3, 4]
    );

    // A lower node answers a probe with ACK and keeps its leader.
    let mut f = Harness::new(2, cfg);
    f.start();
    f.at(1).msg(5, COORD);
    let probe = BullyMsg::Election {
        epoch: None,
        stamp: Some(Time::from_millis(7)),
    };
    let a = f.at(8).msg(5, probe);
    assert!(matches!(
        a.as_slice(),
        [Action::Send {
            to: NodeId(5),
            msg: BullyMsg::Ack { stamp, .. }
        }] if *stamp == Time::from_millis(7)
    ));
    assert_eq!(f.status().leader, Some(NodeId(5)));
}

#[test]
fn quorum_leader_steps_down_when_acks_stop() {
    // Check-quorum lease: a leader cut off from the majority stops leading.
    let mut cfg = BullyConfig::new(5);
    cfg.quorum = true;
    let mut h = Harness::new(5, cfg);
    h.start();
    for j in 1..=4 {
        h.at(2).msg(
            j,
            BullyMsg::Ack {
                epoch: None,
                stamp: Time::ZERO,
            },
        );
    }
    assert_eq!(h.status().role, Role::Leader);
    // Lease armed for declaration time (2 ms) + detect_timeout.
    let a = h.at(50).timer(BullyTimer::Heartbeat);
    let hb_stamp = Time::from_millis(50);
    assert!(a.iter().all(|a| match a {
        Action::Send {
            msg: BullyMsg::Heartbeat { stamp, .. },
            ..
        } => *stamp == Some(hb_stamp),
        _ => true,
    }));
    // Two acks (with self: 3 of 5) renew the lease.
    for j in [3, 4] {
        h.at(51).msg(
            j,
            BullyMsg::HeartbeatAck {
                epoch: None,
                stamp: hb_stamp,
            },
        );
    }
    let a = h.at(152).timer(BullyTimer::Lease);
    assert_eq!(armed(&a, BullyTimer::Lease), Some(Time::from_millis(200)));
    assert_eq!(h.status().role, Role::Leader);
    let a = h.at(200).timer(BullyTimer::Lease);
    assert_eq!(h.status().role, Role::Candidate);
    assert_eq!(sends(&a, "ELECTION"), vec![1, 2, 3, 4]);
    assert!(sends(&a, "COORDINATOR").is_empty());
}

#[test]
fn follower_acks_heartbeats_only_under_quorum() {
    let mut h = follower_of_5(2);
    assert!(sends(&h.at(50).msg(5, HB), "HEARTBEAT_ACK").is_empty());
    let mut cfg = BullyConfig::new(5);
    cfg.quorum = true;
    let mut q = Harness::new(2, cfg);
    q.start();
    q.at(1).msg(5, COORD);
    let hb = BullyMsg::Heartbeat {
        epoch: None,
        stamp: Some(Time::from_millis(50)),
    };
    assert_eq!(sends(&q.at(51).msg(5, hb), "HEARTBEAT_ACK"), vec![5]);
}

#[test]
fn epoch_fences_older_leaders_and_is_persisted() {
    let mut cfg = BullyConfig::new(5);
    cfg.epoch = true;
    let mut h = Harness::new(2, cfg.clone());
    let a = h.start();
    assert_eq!(h.status().epoch, Some(0));
    assert!(a.iter().any(|a| matches!(
        a,
        Action::Send {
            msg: BullyMsg::Election { epoch: Some(0), .. },
            ..
        }
    )));
    let a = h.at(1).msg(4, BullyMsg::Coordinator { epoch: Some(3) });
    assert!(a.iter().any(|a| matches!(a, Action::Persist(3))));
    assert_eq!(h.status().leader, Some(NodeId(4)));
    assert_eq!(h.status().epoch, Some(3));
    // An older leader's claims are ignored, even from a higher id.
    let a = h.at(2).msg(
        5,
        BullyMsg::Heartbeat {
            epoch: Some(2),
            stamp: None,
        },
    );
    assert!(a.is_empty());
    h.at(3).msg(5, BullyMsg::Coordinator { epoch: Some(1) });
    assert_eq!(h.status().leader, Some(NodeId(4)));

    // A declaring node takes the highest epoch it knows plus one; a recovered node restores
    // its persisted epoch.
    let mut l = Harness::new(5, cfg.clone());
    let (node, mut io) = l.io();
    node.on_start(&mut io, Some(&7));
    assert_eq!(l.status().epoch, Some(8));
    assert!(l.actions.iter().any(|a| matches!(a, Action::Persist(8))));
    // A leader that learns of a newer epoch re-elects itself into it.
    let a = l.at(5).msg(1, BullyMsg::Ok { epoch: Some(11) });
    assert_eq!(sends(&a, "COORDINATOR"), vec![1, 2, 3, 4]);
    assert_eq!(l.status().epoch, Some(12));
    assert_eq!(l.status().role, Role::Leader);
}

#[test]
fn bad_or_self_senders_are_ignored() {
    let mut h = follower_of_5(2);
    assert!(h.msg(2, COORD).is_empty());
    assert!(h.msg(9, COORD).is_empty());
    assert!(h.msg(0, E).is_empty());
}

#[test]
fn late_messages_in_any_mode_do_not_panic() {
    let msgs = [
        E,
        OK,
        COORD,
        HB,
        BullyMsg::Ack {
            epoch: Some(4),
            stamp: Time::ZERO,
        },
        BullyMsg::HeartbeatAck {
            epoch: Some(1),
            stamp: Time::ZERO,
        },
        BullyMsg::Election {
            epoch: Some(2),
            stamp: Some(Time::ZERO),
        },
    ];
    for quorum in [false, true] {
        for epoch in [false, true] {
            for rejoin in [Rejoin::Eager, Rejoin::Defer] {
                let mut cfg = BullyConfig::new(4);
                cfg.quorum = quorum;
                cfg.epoch = epoch;
                cfg.rejoin = rejoin;
                for id in 1..=4 {
                    let mut h = Harness::new(id, cfg.clone());
                    h.start();
                    let mut t = 0;
                    for round in 0..3 {
                        for from in 1..=4 {
                            for m in msgs {
                                t += 1;
                                h.at(t).msg(from, m);
                            }
                        }
                        for timer in [
                            BullyTimer::Detect,
                            BullyTimer::Elect,
                            BullyTimer::Coord,
                            BullyTimer::Heartbeat,
                            BullyTimer::Listen,
                            BullyTimer::Lease,
                        ] {
                            t += 1;
                            h.at(t + round).timer(timer);
                        }
                        h.suspect();
                    }
                }
            }
        }
    }
}

impl Harness {
    fn handover(&mut self) -> Vec<Action<Bully>> {
        let (node, mut io) = self.io();
        node.on_handover(&mut io);
        self.actions.clone()
    }
}

const RESIGN: BullyMsg = BullyMsg::Resign { epoch: None };

/// A planned stop: the coordinator sends RESIGN to every other node and from then on takes
/// no part (answers no ELECTION, so nobody yields to it); a follower that receives RESIGN
/// elects at once, without its detector, leaving the resigner out, so the next highest
/// declares at once; a message from the resigner brings it back into elections.
#[test]
fn a_resigning_coordinator_hands_over_to_the_next_highest_at_once() {
    let mut five = Harness::new(5, BullyConfig::new(5));
    five.start();
    assert_eq!(five.status().role, Role::Leader);
    let out = five.handover();
    assert_eq!(sends(&out, "RESIGN"), vec![1, 2, 3, 4]);
    assert_eq!(five.status().role, Role::Follower);
    assert_eq!(five.status().leader, None);
    assert!(five.msg(4, E).is_empty(), "it answers no ELECTION");
    // 4 is now the highest that takes part: it declares at once.
    let mut four = follower_of_5(4);
    let out = four.msg(5, RESIGN);
    assert!(sends(&out, "ELECTION").is_empty());
    assert_eq!(sends(&out, "COORDINATOR"), vec![1, 2, 3]);
    assert_eq!(four.status().role, Role::Leader);
    // 3 elects at once too, asking 4 only.
    let mut three = follower_of_5(3);
    let out = three.msg(5, RESIGN);
    assert_eq!(sends(&out, "ELECTION"), vec![4]);
    // When 5 is heard from again, it is asked again.
    three.msg(5, HB);
    let out = three.suspect();
    assert_eq!(sends(&out, "ELECTION"), vec![4, 5]);
}
