//! Unit tests that drive single nodes by hand and inspect their actions.

use super::*;
use election_core::{Action, Message, MsgCategory, Rng, SeedableRng, TimerKind};

type Actions = Vec<Action<Raft>>;

/// A RequestVote for `term` from a candidate with an empty log.
fn rv(term: u64) -> RaftMsg {
    RaftMsg::RequestVote {
        term,
        last_log: LogPos::EMPTY,
        transfer: false,
    }
}

/// A PreVote for `term` from a pre-candidate with an empty log.
fn pv(term: u64) -> RaftMsg {
    RaftMsg::PreVote {
        term,
        last_log: LogPos::EMPTY,
    }
}

/// An AppendEntries of `term` that ships nothing (the log of a leader that never wrote).
fn ae(term: u64) -> RaftMsg {
    RaftMsg::AppendEntries {
        term,
        log: LogPos::EMPTY,
    }
}

struct Node {
    raft: Raft,
    rng: Rng,
    now: Time,
}

fn config(n: u32) -> RaftConfig {
    RaftConfig::new(n)
}

impl Node {
    fn new(id: u32, cfg: RaftConfig) -> Node {
        Node {
            raft: Raft::new(NodeId(id), Arc::new(cfg)),
            rng: Rng::seed_from_u64(u64::from(id)),
            now: Time::ZERO,
        }
    }
    fn at(&mut self, ms: u64) -> &mut Self {
        self.now = Time::from_millis(ms);
        self
    }
    fn start(&mut self, stored: Option<Stable>) -> Actions {
        let mut a = Vec::new();
        let mut io = Io::new(self.now, &mut self.rng, &mut a);
        self.raft.on_start(&mut io, stored.as_ref());
        a
    }
    fn msg(&mut self, from: u32, msg: RaftMsg) -> Actions {
        let mut a = Vec::new();
        let mut io = Io::new(self.now, &mut self.rng, &mut a);
        self.raft.on_message(&mut io, NodeId(from), msg);
        a
    }
    fn timer(&mut self, t: RaftTimer) -> Actions {
        let mut a = Vec::new();
        let mut io = Io::new(self.now, &mut self.rng, &mut a);
        self.raft.on_timer(&mut io, t);
        a
    }
    fn suspect(&mut self) -> Actions {
        let mut a = Vec::new();
        let mut io = Io::new(self.now, &mut self.rng, &mut a);
        self.raft.on_suspect(&mut io);
        a
    }
    fn role(&self) -> Role {
        self.raft.status().role
    }
    /// Boots, then wins term 1 with votes from `voters`.
    fn elect(&mut self, voters: &[u32]) {
        self.start(None);
        self.timer(RaftTimer::Election);
        if self.raft.is_pre_candidate() {
            for &v in voters {
                self.msg(
                    v,
                    RaftMsg::PreVoteResp {
                        term: 1,
                        granted: true,
                    },
                );
            }
        }
        for &v in voters {
            self.msg(
                v,
                RaftMsg::Vote {
                    term: 1,
                    granted: true,
                },
            );
        }
        assert_eq!(self.role(), Role::Leader);
    }
}

fn sends(a: &Actions) -> Vec<(NodeId, RaftMsg)> {
    a.iter()
        .filter_map(|x| match x {
            Action::Send { to, msg } => Some((*to, *msg)),
            _ => None,
        })
        .collect()
}

fn persists(a: &Actions) -> Vec<Stable> {
    a.iter()
        .filter_map(|x| match x {
            Action::Persist(s) => Some(*s),
            _ => None,
        })
        .collect()
}

fn timer_set(a: &Actions, t: RaftTimer) -> Option<Time> {
    a.iter().rev().find_map(|x| match x {
        Action::SetTimer { timer, at } if *timer == t => Some(*at),
        _ => None,
    })
}

fn cancelled(a: &Actions, t: RaftTimer) -> bool {
    a.iter()
        .any(|x| matches!(x, Action::CancelTimer(c) if *c == t))
}

/// Position of the first persist and of the first send, to check the §5.2 / Figure 2 rule
/// "persist before responding to RPCs".
fn persist_precedes_sends(a: &Actions) -> bool {
    let p = a.iter().position(|x| matches!(x, Action::Persist(_)));
    let s = a.iter().position(|x| matches!(x, Action::Send { .. }));
    match (p, s) {
        (Some(p), Some(s)) => p < s,
        _ => false,
    }
}

#[test]
fn boot_arms_the_failure_detector_within_the_timeout_range() {
    for seed in 1..50 {
        let mut n = Node::new(seed, config(50));
        let a = n.start(None);
        let at = timer_set(&a, RaftTimer::Election).expect("election timer armed");
        assert!(
            at >= Time::from_millis(150) && at <= Time::from_millis(300),
            "{at}"
        );
        assert_eq!(n.raft.status().epoch, Some(0));
        assert_eq!(n.role(), Role::Follower);
    }
    assert!(RaftTimer::Election.is_failure_detector());
    for t in [
        RaftTimer::ElectionRetry,
        RaftTimer::Heartbeat,
        RaftTimer::CheckQuorum,
    ] {
        assert!(!t.is_failure_detector());
    }
}

#[test]
fn timeout_is_redrawn_at_every_reset_and_equal_bounds_mean_no_randomness() {
    let mut n = Node::new(2, config(3));
    n.start(None);
    let mut draws = Vec::new();
    for i in 1..=20 {
        n.at(i * 10);
        let a = n.msg(1, ae(1));
        draws.push(timer_set(&a, RaftTimer::Election).unwrap() - n.now);
    }
    draws.sort();
    draws.dedup();
    assert!(draws.len() > 15, "timeouts must be redrawn: {draws:?}");

    let mut cfg = config(3);
    cfg.timeout_max = cfg.timeout_min;
    let mut n = Node::new(2, cfg);
    let a = n.start(None);
    assert_eq!(
        timer_set(&a, RaftTimer::Election),
        Some(Time::from_millis(150))
    );
    let a = n.at(40).msg(1, ae(1));
    assert_eq!(
        timer_set(&a, RaftTimer::Election),
        Some(Time::from_millis(190))
    );
}

#[test]
fn election_timeout_persists_the_self_vote_before_requesting_votes() {
    let mut n = Node::new(3, config(5));
    n.start(None);
    let a = n.at(200).timer(RaftTimer::Election);
    assert_eq!(
        persists(&a),
        vec![Stable {
            current_term: 1,
            voted_for: Some(NodeId(3)),
            ..Stable::default()
        }]
    );
    assert!(persist_precedes_sends(&a));
    let s = sends(&a);
    let to: Vec<u32> = s.iter().map(|(to, _)| to.0).collect();
    assert_eq!(to, vec![1, 2, 4, 5]);
    assert!(s.iter().all(|(_, m)| *m == rv(1)));
    assert!(timer_set(&a, RaftTimer::ElectionRetry).is_some());
    assert!(cancelled(&a, RaftTimer::Election));
    assert_eq!(
        n.raft.status(),
        Status {
            role: Role::Candidate,
            leader: None,
            epoch: Some(1)
        }
    );
}

#[test]
fn majority_of_the_configured_cluster_counting_self_and_no_double_counting() {
    // n = 5 needs 3 votes: itself and two others; a duplicated vote counts once.
    let mut n = Node::new(1, config(5));
    n.start(None);
    n.timer(RaftTimer::Election);
    n.msg(
        2,
        RaftMsg::Vote {
            term: 1,
            granted: true,
        },
    );
    n.msg(
        2,
        RaftMsg::Vote {
            term: 1,
            granted: true,
        },
    );
    n.msg(
        3,
        RaftMsg::Vote {
            term: 1,
            granted: false,
        },
    );
    n.msg(
        4,
        RaftMsg::Vote {
            term: 0,
            granted: true,
        },
    ); // stale term: ignored
    assert_eq!(n.role(), Role::Candidate);
    let a = n.msg(
        5,
        RaftMsg::Vote {
            term: 1,
            granted: true,
        },
    );
    assert_eq!(n.role(), Role::Leader);
    assert_eq!(n.raft.status().leader, Some(NodeId(1)));
    // The win is announced at once by the first heartbeat to everyone, which ships the
    // leader's no-op entry (Raft §8): index 1 of term 1.
    let s = sends(&a);
    assert_eq!(s.len(), 4);
    assert!(s.iter().all(|(_, m)| *m
        == RaftMsg::AppendEntries {
            term: 1,
            log: LogPos { term: 1, index: 1 }
        }));
    assert_eq!(
        timer_set(&a, RaftTimer::Heartbeat),
        Some(n.now + Duration::from_millis(50))
    );
    assert!(cancelled(&a, RaftTimer::ElectionRetry));

    // n = 4 needs 3 as well: a 2-2 split never wins.
    let mut n = Node::new(1, config(4));
    n.start(None);
    n.timer(RaftTimer::Election);
    n.msg(
        2,
        RaftMsg::Vote {
            term: 1,
            granted: true,
        },
    );
    assert_eq!(n.role(), Role::Candidate);
    n.msg(
        3,
        RaftMsg::Vote {
            term: 1,
            granted: true,
        },
    );
    assert_eq!(n.role(), Role::Leader);
}

#[test]
fn split_vote_retry_starts_the_next_term_with_a_fresh_timeout() {
    let mut n = Node::new(1, config(5));
    n.start(None);
    n.timer(RaftTimer::Election);
    let a = n.at(400).timer(RaftTimer::ElectionRetry);
    assert_eq!(n.raft.status().epoch, Some(2));
    assert_eq!(
        persists(&a),
        vec![Stable {
            current_term: 2,
            voted_for: Some(NodeId(1)),
            ..Stable::default()
        }]
    );
    assert!(sends(&a).iter().all(|(_, m)| *m == rv(2)));
    let at = timer_set(&a, RaftTimer::ElectionRetry).unwrap();
    assert!(at >= Time::from_millis(550) && at <= Time::from_millis(700));
}

#[test]
fn one_vote_per_term_persisted_before_the_grant_and_kept_across_a_crash() {
    let mut n = Node::new(2, config(5));
    n.start(None);
    let a = n.at(10).msg(4, rv(3));
    assert_eq!(
        persists(&a),
        vec![Stable {
            current_term: 3,
            voted_for: Some(NodeId(4)),
            ..Stable::default()
        }]
    );
    assert!(persist_precedes_sends(&a));
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(4),
            RaftMsg::Vote {
                term: 3,
                granted: true
            }
        )]
    );
    assert!(
        timer_set(&a, RaftTimer::Election).is_some(),
        "granting resets the timeout"
    );

    // A rival in the same term is refused; the same candidate asking again is granted again.
    let a = n.msg(5, rv(3));
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(5),
            RaftMsg::Vote {
                term: 3,
                granted: false
            }
        )]
    );
    assert!(persists(&a).is_empty());
    let a = n.msg(4, rv(3));
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(4),
            RaftMsg::Vote {
                term: 3,
                granted: true
            }
        )]
    );

    // Crash and recover with the persisted record: still refuses node 5 in term 3.
    let stored = n.raft.stable();
    let mut r = Node::new(2, config(5));
    r.start(Some(stored));
    assert_eq!(r.raft.status().epoch, Some(3));
    let a = r.msg(5, rv(3));
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(5),
            RaftMsg::Vote {
                term: 3,
                granted: false
            }
        )]
    );
    // ... but votes in a later term, persisting first.
    let a = r.msg(5, rv(4));
    assert_eq!(
        persists(&a),
        vec![Stable {
            current_term: 4,
            voted_for: Some(NodeId(5)),
            ..Stable::default()
        }]
    );
    assert!(persist_precedes_sends(&a));
}

#[test]
fn stale_terms_are_refused_with_the_newer_term() {
    let mut n = Node::new(2, config(3));
    n.start(Some(Stable {
        current_term: 5,
        voted_for: None,
        ..Stable::default()
    }));
    let a = n.msg(1, rv(4));
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(1),
            RaftMsg::Vote {
                term: 5,
                granted: false
            }
        )]
    );
    let a = n.msg(1, ae(4));
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(1),
            RaftMsg::AppendResp {
                term: 5,
                success: false
            }
        )]
    );
    assert!(
        timer_set(&a, RaftTimer::Election).is_none(),
        "a stale leader is no sign of life"
    );
    assert_eq!(n.raft.status().leader, None);
}

#[test]
fn follower_that_knows_the_terms_leader_refuses_its_vote() {
    let mut n = Node::new(2, config(3));
    n.start(None);
    n.msg(1, ae(2));
    assert_eq!(n.raft.status().leader, Some(NodeId(1)));
    let a = n.msg(3, rv(2));
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(3),
            RaftMsg::Vote {
                term: 2,
                granted: false
            }
        )]
    );
}

#[test]
fn higher_term_makes_a_leader_step_down_and_persist_the_term() {
    let mut n = Node::new(1, config(3));
    n.elect(&[2]);
    let a = n.msg(
        3,
        RaftMsg::AppendResp {
            term: 7,
            success: false,
        },
    );
    assert_eq!(
        n.raft.status(),
        Status {
            role: Role::Follower,
            leader: None,
            epoch: Some(7)
        }
    );
    assert_eq!(
        persists(&a),
        vec![Stable {
            current_term: 7,
            voted_for: None,
            // The no-op entry it appended on winning term 1 stays in its log.
            last_log: LogPos { term: 1, index: 1 },
        }]
    );
    assert!(cancelled(&a, RaftTimer::Heartbeat));
    assert!(timer_set(&a, RaftTimer::Election).is_some());

    // A candidate hearing a leader of its own term becomes its follower.
    let mut c = Node::new(1, config(3));
    c.start(None);
    c.timer(RaftTimer::Election);
    let a = c.msg(2, ae(1));
    assert_eq!(
        c.raft.status(),
        Status {
            role: Role::Follower,
            leader: Some(NodeId(2)),
            epoch: Some(1)
        }
    );
    assert!(cancelled(&a, RaftTimer::ElectionRetry));
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(2),
            RaftMsg::AppendResp {
                term: 1,
                success: true
            }
        )]
    );
}

#[test]
fn single_node_cluster_elects_itself() {
    for pre_vote in [false, true] {
        let mut cfg = config(1);
        cfg.pre_vote = pre_vote;
        cfg.check_quorum = true;
        let mut n = Node::new(1, cfg);
        n.start(None);
        let a = n.at(200).timer(RaftTimer::Election);
        assert_eq!(
            n.raft.status(),
            Status {
                role: Role::Leader,
                leader: Some(NodeId(1)),
                epoch: Some(1)
            }
        );
        assert_eq!(
            persists(&a),
            // One record: the self-vote and the no-op entry of its term (Raft §8).
            vec![Stable {
                current_term: 1,
                voted_for: Some(NodeId(1)),
                last_log: LogPos { term: 1, index: 1 },
            }]
        );
        assert!(sends(&a).is_empty());
        // A majority of one is always heard from: CheckQuorum never deposes it.
        n.at(1000).timer(RaftTimer::CheckQuorum);
        assert_eq!(n.role(), Role::Leader);
    }
}

#[test]
fn on_suspect_acts_as_the_election_timeout_and_a_leader_ignores_it() {
    let mut n = Node::new(2, config(3));
    n.start(None);
    n.msg(1, ae(1));
    let a = n.suspect();
    assert_eq!(n.raft.status().epoch, Some(2));
    assert_eq!(n.role(), Role::Candidate);
    assert!(cancelled(&a, RaftTimer::Election));

    let mut l = Node::new(1, config(3));
    l.elect(&[2]);
    assert!(l.suspect().is_empty());
    assert_eq!(l.role(), Role::Leader);
}

#[test]
fn pre_vote_asks_without_raising_the_term_and_only_then_campaigns() {
    let mut cfg = config(5);
    cfg.pre_vote = true;
    let mut n = Node::new(1, cfg);
    n.start(Some(Stable {
        current_term: 4,
        voted_for: None,
        ..Stable::default()
    }));
    let a = n.at(300).timer(RaftTimer::Election);
    assert!(n.raft.is_pre_candidate());
    assert_eq!(
        n.raft.status(),
        Status {
            role: Role::Candidate,
            leader: None,
            epoch: Some(4)
        }
    );
    assert!(
        persists(&a).is_empty(),
        "a pre-vote changes no stable state"
    );
    assert!(sends(&a).iter().all(|(_, m)| *m == pv(5)));
    assert!(timer_set(&a, RaftTimer::ElectionRetry).is_some());

    n.msg(
        2,
        RaftMsg::PreVoteResp {
            term: 5,
            granted: true,
        },
    );
    assert_eq!(n.raft.status().epoch, Some(4));
    let a = n.msg(
        3,
        RaftMsg::PreVoteResp {
            term: 5,
            granted: true,
        },
    );
    assert!(!n.raft.is_pre_candidate());
    assert_eq!(
        n.raft.status(),
        Status {
            role: Role::Candidate,
            leader: None,
            epoch: Some(5)
        }
    );
    assert!(persist_precedes_sends(&a));
    assert!(sends(&a).iter().all(|(_, m)| *m == rv(5)));
}

#[test]
fn pre_vote_is_refused_by_nodes_that_hear_a_current_leader() {
    let mut cfg = config(3);
    cfg.pre_vote = true;
    let mut f = Node::new(2, cfg.clone());
    f.start(None);
    f.at(1000).msg(1, ae(3));
    // Within timeout_min (150 ms) of the heartbeat: refused, with no change of term.
    let a = f.at(1149).msg(3, pv(9));
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(3),
            RaftMsg::PreVoteResp {
                term: 3,
                granted: false
            }
        )]
    );
    assert!(persists(&a).is_empty());
    assert_eq!(f.raft.status().epoch, Some(3));
    // Once the leader has been silent for timeout_min: granted, still without adopting it.
    let a = f.at(1150).msg(3, pv(9));
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(3),
            RaftMsg::PreVoteResp {
                term: 9,
                granted: true
            }
        )]
    );
    assert_eq!(f.raft.status().epoch, Some(3));
    assert!(
        timer_set(&a, RaftTimer::Election).is_none(),
        "a pre-vote does not reset the timer"
    );
    // A pre-vote for a term not above ours is refused.
    let a = f.msg(3, pv(3));
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(3),
            RaftMsg::PreVoteResp {
                term: 3,
                granted: false
            }
        )]
    );

    // The leader itself always refuses.
    let mut l = Node::new(1, cfg.clone());
    l.elect(&[2]);
    let a = l.at(5000).msg(3, pv(9));
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(3),
            RaftMsg::PreVoteResp {
                term: 1,
                granted: false
            }
        )]
    );
    assert_eq!(l.role(), Role::Leader);
}

#[test]
fn pre_candidate_denied_by_a_majority_or_hearing_the_leader_goes_back_to_following() {
    let mut cfg = config(5);
    cfg.pre_vote = true;
    let mut n = Node::new(1, cfg.clone());
    n.start(Some(Stable {
        current_term: 2,
        voted_for: None,
        ..Stable::default()
    }));
    n.timer(RaftTimer::Election);
    n.msg(
        2,
        RaftMsg::PreVoteResp {
            term: 2,
            granted: false,
        },
    );
    n.msg(
        3,
        RaftMsg::PreVoteResp {
            term: 2,
            granted: false,
        },
    );
    assert!(
        n.raft.is_pre_candidate(),
        "two denials of five still leave a majority possible"
    );
    let a = n.msg(
        4,
        RaftMsg::PreVoteResp {
            term: 2,
            granted: false,
        },
    );
    assert_eq!(
        n.raft.status(),
        Status {
            role: Role::Follower,
            leader: None,
            epoch: Some(2)
        }
    );
    assert!(cancelled(&a, RaftTimer::ElectionRetry));
    assert!(timer_set(&a, RaftTimer::Election).is_some());

    // Thesis §9.6: the rejoining node hears the leader's heartbeat in its own term.
    let mut n = Node::new(1, cfg);
    n.start(Some(Stable {
        current_term: 2,
        voted_for: None,
        ..Stable::default()
    }));
    n.timer(RaftTimer::Election);
    n.msg(3, ae(2));
    assert_eq!(
        n.raft.status(),
        Status {
            role: Role::Follower,
            leader: Some(NodeId(3)),
            epoch: Some(2)
        }
    );
}

#[test]
fn check_quorum_steps_down_exactly_one_timeout_after_losing_the_majority() {
    let mut cfg = config(5);
    cfg.check_quorum = true;
    let mut n = Node::new(1, cfg);
    n.elect(&[2, 3]);
    // Nodes 2 and 3 answer heartbeats until t = 500 ms, 4 and 5 never do. Run the answers
    // and the leader's CheckQuorum timer in time order.
    let mut check = Time::from_millis(150); // one timeout after the election at t = 0
    for t in (50..=500).step_by(50) {
        while check <= Time::from_millis(t) {
            n.now = check;
            let a = n.timer(RaftTimer::CheckQuorum);
            assert_eq!(n.role(), Role::Leader, "at {check}");
            check = timer_set(&a, RaftTimer::CheckQuorum).unwrap();
        }
        n.at(t);
        n.msg(
            2,
            RaftMsg::AppendResp {
                term: 1,
                success: true,
            },
        );
        n.msg(
            3,
            RaftMsg::AppendResp {
                term: 1,
                success: true,
            },
        );
    }
    // Silence from t = 500 ms: the deadline becomes exactly one timeout after the last
    // answer from the majority, and the leader keeps leading until then.
    while check < Time::from_millis(650) {
        n.now = check;
        let a = n.timer(RaftTimer::CheckQuorum);
        assert_eq!(n.role(), Role::Leader, "at {check}");
        check = timer_set(&a, RaftTimer::CheckQuorum).unwrap();
    }
    assert_eq!(check, Time::from_millis(650));
    let a = n.at(649).timer(RaftTimer::CheckQuorum);
    assert_eq!(n.role(), Role::Leader);
    assert_eq!(
        timer_set(&a, RaftTimer::CheckQuorum),
        Some(Time::from_millis(650))
    );
    let a = n.at(650).timer(RaftTimer::CheckQuorum);
    assert_eq!(
        n.raft.status(),
        Status {
            role: Role::Follower,
            leader: None,
            epoch: Some(1)
        }
    );
    assert!(cancelled(&a, RaftTimer::Heartbeat));
    assert!(timer_set(&a, RaftTimer::Election).is_some());
}

#[test]
fn messages_have_literature_names_categories_and_compact_sizes() {
    let all = [
        (rv(1), "REQUEST_VOTE", MsgCategory::Election),
        (pv(1), "PRE_VOTE", MsgCategory::Election),
        (
            RaftMsg::Vote {
                term: 1,
                granted: true,
            },
            "VOTE",
            MsgCategory::Reply,
        ),
        (
            RaftMsg::Vote {
                term: 1,
                granted: false,
            },
            "VOTE_DENIED",
            MsgCategory::Reply,
        ),
        (
            RaftMsg::PreVoteResp {
                term: 1,
                granted: true,
            },
            "PRE_VOTE_GRANT",
            MsgCategory::Reply,
        ),
        (
            RaftMsg::PreVoteResp {
                term: 1,
                granted: false,
            },
            "PRE_VOTE_DENIED",
            MsgCategory::Reply,
        ),
        (ae(1), "APPEND_ENTRIES", MsgCategory::Heartbeat),
        (
            RaftMsg::AppendResp {
                term: 1,
                success: true,
            },
            "APPEND_RESP",
            MsgCategory::Heartbeat,
        ),
    ];
    for (m, kind, cat) in all {
        assert_eq!(m.kind(), kind);
        assert_eq!(m.category(), cat);
        // Tag and term; the three messages that carry a log position add its term and index.
        let carries_log = matches!(
            m,
            RaftMsg::RequestVote { .. } | RaftMsg::PreVote { .. } | RaftMsg::AppendEntries { .. }
        );
        assert_eq!(m.wire_size(), if carries_log { 25 } else { 9 });
        assert_eq!(m.term(), 1);
    }
}

#[test]
fn config_defaults_are_the_shared_detection_window_and_validation_names_the_field() {
    let c = RaftConfig::new(5);
    assert_eq!(c.timeout_min, Duration::from_millis(150));
    assert_eq!(c.timeout_max, Duration::from_millis(300));
    assert_eq!(c.timing.heartbeat, Duration::from_millis(50));
    assert!(!c.pre_vote && !c.check_quorum);
    assert_eq!(c.validate(), Ok(()));

    let mut bad = c.clone();
    bad.timeout_max = Duration::from_millis(100);
    assert!(bad
        .validate()
        .unwrap_err()
        .starts_with("timeout_max (100ms)"));
    let mut bad = c.clone();
    bad.n = 0;
    assert!(bad.validate().unwrap_err().starts_with("n (0)"));
    let mut bad = c.clone();
    bad.timing.heartbeat = Duration::from_millis(150);
    assert!(bad
        .validate()
        .unwrap_err()
        .starts_with("timing.heartbeat (150ms)"));
    let mut bad = c;
    bad.timeout_min = Duration::ZERO;
    assert!(bad.validate().unwrap_err().starts_with("timeout_min"));
}

/// A node whose stable record says it is in `term` with a log ending at `log`.
fn with_log(id: u32, cfg: RaftConfig, term: u64, log: LogPos) -> Node {
    let mut n = Node::new(id, cfg);
    n.start(Some(Stable {
        current_term: term,
        voted_for: None,
        last_log: log,
    }));
    n
}

fn pos(term: u64, index: u64) -> LogPos {
    LogPos { term, index }
}

fn vote_reply(a: &Actions) -> Option<bool> {
    match sends(a).as_slice() {
        [(_, RaftMsg::Vote { granted, .. })] | [(_, RaftMsg::PreVoteResp { granted, .. })] => {
            Some(*granted)
        }
        [] => None,
        other => panic!("unexpected sends {other:?}"),
    }
}

/// §5.4.1, the election restriction: "the voter denies its vote if its own log is more
/// up-to-date than that of the candidate": a later last term wins whatever the lengths; with
/// equal last terms the longer log wins; an equal log is up to date. A refused candidate's
/// higher term is still adopted (§5.1), without a vote.
#[test]
fn vote_is_refused_to_a_candidate_whose_log_is_less_up_to_date_section_5_4_1() {
    let voter = || with_log(2, config(5), 3, pos(3, 5));
    let cases = [
        (pos(2, 9), false, "earlier last term, longer log"),
        (pos(3, 4), false, "same last term, shorter log"),
        (LogPos::EMPTY, false, "empty log"),
        (pos(3, 5), true, "the same log"),
        (pos(3, 6), true, "same last term, longer log"),
        (pos(4, 1), true, "later last term, shorter log"),
    ];
    for (log, granted, what) in cases {
        let mut n = voter();
        let a = n.msg(
            1,
            RaftMsg::RequestVote {
                term: 5,
                last_log: log,
                transfer: false,
            },
        );
        assert_eq!(vote_reply(&a), Some(granted), "{what}");
        assert_eq!(n.raft.status().epoch, Some(5), "{what}: term adopted");
        let voted = if granted { Some(NodeId(1)) } else { None };
        assert_eq!(
            persists(&a),
            vec![Stable {
                current_term: 5,
                voted_for: voted,
                last_log: pos(3, 5)
            }],
            "{what}"
        );
        assert!(persist_precedes_sends(&a), "{what}");
        // A refusal is no reason to wait longer for a leader: the timer is not reset.
        assert_eq!(
            timer_set(&a, RaftTimer::Election).is_some(),
            granted,
            "{what}"
        );
    }
}

/// Thesis §9.6: a pre-vote is granted only where the vote would be, so it checks the
/// pre-candidate's log like §5.4.1 does; nothing is adopted or persisted either way.
#[test]
fn pre_vote_is_refused_to_a_less_up_to_date_pre_candidate() {
    let mut cfg = config(5);
    cfg.pre_vote = true;
    for (log, granted) in [
        (pos(2, 9), false),
        (pos(3, 4), false),
        (pos(3, 5), true),
        (pos(4, 1), true),
    ] {
        let mut n = with_log(2, cfg.clone(), 4, pos(3, 5));
        let a = n.msg(
            1,
            RaftMsg::PreVote {
                term: 5,
                last_log: log,
            },
        );
        assert_eq!(vote_reply(&a), Some(granted), "{log}");
        assert!(persists(&a).is_empty(), "{log}");
        assert_eq!(n.raft.status().epoch, Some(4), "{log}");
    }
}

/// A candidate and a pre-candidate ask with their own last log position.
#[test]
fn requests_carry_the_candidates_last_log_position() {
    let mut n = with_log(1, config(3), 6, pos(4, 7));
    let a = n.timer(RaftTimer::Election);
    assert!(sends(&a).iter().all(|(_, m)| *m
        == RaftMsg::RequestVote {
            term: 7,
            last_log: pos(4, 7),
            transfer: false,
        }));
    let mut cfg = config(3);
    cfg.pre_vote = true;
    let mut n = with_log(1, cfg, 6, pos(4, 7));
    let a = n.timer(RaftTimer::Election);
    assert!(sends(&a).iter().all(|(_, m)| *m
        == RaftMsg::PreVote {
            term: 7,
            last_log: pos(4, 7)
        }));
}

/// Raft §8 / thesis §6.4: a new leader appends a no-op entry of its term; it is persisted
/// before the first AppendEntries ships it, and a follower that accepts it adopts the
/// leader's log, persisted before it answers (Figure 2). The log survives a restart and
/// still decides votes afterwards.
#[test]
fn leader_no_op_is_shipped_adopted_persisted_and_survives_a_restart() {
    let mut l = with_log(1, config(3), 4, pos(2, 6));
    l.timer(RaftTimer::Election);
    let a = l.msg(
        2,
        RaftMsg::Vote {
            term: 5,
            granted: true,
        },
    );
    assert_eq!(l.role(), Role::Leader);
    assert_eq!(l.raft.last_log(), pos(5, 7));
    assert_eq!(
        persists(&a),
        vec![Stable {
            current_term: 5,
            voted_for: Some(NodeId(1)),
            last_log: pos(5, 7)
        }]
    );
    assert!(persist_precedes_sends(&a));
    let ship = RaftMsg::AppendEntries {
        term: 5,
        log: pos(5, 7),
    };
    assert!(sends(&a).iter().all(|(_, m)| *m == ship));

    let mut f = with_log(2, config(3), 5, pos(2, 6));
    let a = f.msg(1, ship);
    assert_eq!(f.raft.last_log(), pos(5, 7));
    assert_eq!(
        persists(&a),
        vec![Stable {
            current_term: 5,
            voted_for: None,
            last_log: pos(5, 7)
        }]
    );
    assert!(persist_precedes_sends(&a));
    // The next heartbeat ships nothing new: nothing to persist.
    assert!(persists(&f.at(50).msg(1, ship)).is_empty());

    // Restarted from its record, it refuses a candidate that lacks the no-op.
    let stored = f.raft.stable();
    let mut r = Node::new(2, config(3));
    r.start(Some(stored));
    assert_eq!(r.raft.last_log(), pos(5, 7));
    let a = r.msg(
        3,
        RaftMsg::RequestVote {
            term: 6,
            last_log: pos(2, 6),
            transfer: false,
        },
    );
    assert_eq!(vote_reply(&a), Some(false));
}

/// A follower's log never shrinks because an older AppendEntries of the same leader arrives
/// late (entries of the leader's term come only from it, so the longer log is its prefix);
/// a leader of a new term overwrites a tail from an earlier term (§5.3).
#[test]
fn reordered_append_entries_do_not_shrink_the_log_but_a_new_leader_truncates() {
    let mut f = with_log(2, config(3), 5, pos(5, 9));
    f.msg(
        1,
        RaftMsg::AppendEntries {
            term: 5,
            log: pos(5, 8),
        },
    );
    assert_eq!(f.raft.last_log(), pos(5, 9));
    f.msg(
        3,
        RaftMsg::AppendEntries {
            term: 6,
            log: pos(6, 8),
        },
    );
    assert_eq!(f.raft.last_log(), pos(6, 8));
}

/// `lagging`: the leader ships a node lagging `k` entries its log up to `k` entries short of
/// its last one, but never further back than the log it won the term with (`term_base`).
#[test]
fn lagging_nodes_are_shipped_the_leaders_log_k_entries_short_capped_at_the_terms_start() {
    let mut cfg = config(4);
    cfg.lagging = vec![(NodeId(2), 1), (NodeId(3), 3)];
    let mut l = with_log(1, cfg, 4, pos(2, 6));
    l.timer(RaftTimer::Election);
    l.msg(
        2,
        RaftMsg::Vote {
            term: 5,
            granted: true,
        },
    );
    let a = l.msg(
        3,
        RaftMsg::Vote {
            term: 5,
            granted: true,
        },
    );
    assert_eq!(l.role(), Role::Leader);
    // Only the no-op of term 5 is new: both lagging nodes stop before it.
    assert_eq!(
        sends(&a),
        vec![
            (
                NodeId(2),
                RaftMsg::AppendEntries {
                    term: 5,
                    log: pos(2, 6)
                }
            ),
            (
                NodeId(3),
                RaftMsg::AppendEntries {
                    term: 5,
                    log: pos(2, 6)
                }
            ),
            (
                NodeId(4),
                RaftMsg::AppendEntries {
                    term: 5,
                    log: pos(5, 7)
                }
            ),
        ]
    );
    // With entries of the term beyond the no-op (as committed writes will append), a lag
    // counts entries: 10 - 1 = 9, 10 - 3 = 7, and a lag past the no-op stops at the base.
    l.raft.last_log = pos(5, 10);
    assert_eq!(l.raft.shipped_to(NodeId(2)), pos(5, 9));
    assert_eq!(l.raft.shipped_to(NodeId(3)), pos(5, 7));
    assert_eq!(l.raft.shipped_to(NodeId(4)), pos(5, 10));
    l.raft.last_log = pos(5, 8);
    assert_eq!(l.raft.shipped_to(NodeId(3)), pos(2, 6));
}

/// Thesis §4.2.3 (leader stickiness), on with CheckQuorum as in etcd: "if a server receives a
/// RequestVote request within the minimum election timeout of hearing from a current leader,
/// it does not update its term or grant its vote". It does not answer either (etcd's
/// `inLease` returns before any reply). From `timeout_min` after the last heartbeat on, the
/// request is handled as usual; without CheckQuorum, always.
#[test]
fn stickiness_ignores_request_vote_within_the_minimum_election_timeout() {
    let rv6 = RaftMsg::RequestVote {
        term: 6,
        last_log: pos(3, 5),
        transfer: false,
    };
    for check_quorum in [true, false] {
        let mut cfg = config(3);
        cfg.check_quorum = check_quorum;
        let mut f = with_log(2, cfg, 3, pos(3, 5));
        f.at(1000).msg(
            1,
            RaftMsg::AppendEntries {
                term: 3,
                log: pos(3, 5),
            },
        );
        let a = f.at(1149).msg(3, rv6);
        if check_quorum {
            assert!(
                a.is_empty(),
                "ignored: no reply, no persist, no timer: {a:?}"
            );
            assert_eq!(
                f.raft.status(),
                Status {
                    role: Role::Follower,
                    leader: Some(NodeId(1)),
                    epoch: Some(3)
                }
            );
            let a = f.at(1150).msg(3, rv6);
            assert_eq!(vote_reply(&a), Some(true));
        } else {
            assert_eq!(vote_reply(&a), Some(true));
        }
        assert_eq!(f.raft.status().epoch, Some(6));
    }

    // The leader itself is in its lease: with CheckQuorum it ignores a higher-term
    // RequestVote and keeps leading; without, it steps down.
    for check_quorum in [true, false] {
        let mut cfg = config(3);
        cfg.check_quorum = check_quorum;
        let mut l = Node::new(1, cfg);
        l.elect(&[2]);
        let a = l.at(5000).msg(
            3,
            RaftMsg::RequestVote {
                term: 9,
                last_log: pos(1, 1),
                transfer: false,
            },
        );
        if check_quorum {
            assert!(a.is_empty());
            assert_eq!(l.role(), Role::Leader);
        } else {
            assert_eq!(l.role(), Role::Follower);
            assert_eq!(l.raft.status().epoch, Some(9));
        }
    }

    // PreVote in the lease is answered negatively (it was already, by §9.6's own rule).
    let mut cfg = config(3);
    cfg.check_quorum = true;
    cfg.pre_vote = true;
    let mut f = with_log(2, cfg, 3, pos(3, 5));
    f.at(1000).msg(
        1,
        RaftMsg::AppendEntries {
            term: 3,
            log: pos(3, 5),
        },
    );
    let a = f.at(1100).msg(
        3,
        RaftMsg::PreVote {
            term: 4,
            last_log: pos(3, 5),
        },
    );
    assert_eq!(vote_reply(&a), Some(false));
}

#[test]
fn lagging_is_validated_naming_the_field_and_value() {
    let mut c = config(5);
    c.lagging = vec![(NodeId(1), 2), (NodeId(5), 1)];
    assert_eq!(c.validate(), Ok(()));
    assert_eq!(c.lag(NodeId(1)), 2);
    assert_eq!(c.lag(NodeId(3)), 0);
    for (bad, msg) in [
        (
            vec![(NodeId(6), 1)],
            "lagging (6:1): node 6 is not in the cluster 1..=5",
        ),
        (
            vec![(NodeId(0), 1)],
            "lagging (0:1): node 0 is not in the cluster 1..=5",
        ),
        (
            vec![(NodeId(2), 0)],
            "lagging (2:0): a lag must be at least 1 entry",
        ),
        (
            vec![(NodeId(2), 1), (NodeId(2), 3)],
            "lagging (2:3): node 2 is listed twice",
        ),
    ] {
        let mut c = config(5);
        c.lagging = bad;
        assert_eq!(c.validate(), Err(msg.to_string()));
    }
}

#[test]
fn a_node_at_the_last_term_stays_a_follower_and_ignores_larger_terms() {
    for pre_vote in [false, true] {
        let mut cfg = config(3);
        cfg.pre_vote = pre_vote;
        let mut n = Node::new(1, cfg);
        n.start(Some(Stable {
            current_term: MAX_TERM - 1,
            voted_for: None,
            last_log: LogPos::EMPTY,
        }));
        // One election is still possible: to MAX_TERM (with PreVote, the pre-vote asks for it).
        let a = n.at(300).timer(RaftTimer::Election);
        let want = if pre_vote {
            RaftMsg::PreVote {
                term: MAX_TERM,
                last_log: LogPos::EMPTY,
            }
        } else {
            RaftMsg::RequestVote {
                term: MAX_TERM,
                last_log: LogPos::EMPTY,
                transfer: false,
            }
        };
        assert!(sends(&a).iter().all(|(_, m)| *m == want), "{a:?}");
        assert_eq!(sends(&a).len(), 2);
        if pre_vote {
            n.msg(
                2,
                RaftMsg::PreVoteResp {
                    term: MAX_TERM,
                    granted: true,
                },
            );
        }
        assert_eq!(n.raft.status().epoch, Some(MAX_TERM));
        assert_eq!(n.role(), Role::Candidate);
        // The vote is lost; the retry has no term to go to: back to following, no sends, no
        // overflow, and the election timer re-armed so the node keeps listening.
        let a = n.at(1000).timer(RaftTimer::ElectionRetry);
        assert!(sends(&a).is_empty(), "{a:?}");
        assert_eq!(n.role(), Role::Follower);
        assert_eq!(n.raft.status().epoch, Some(MAX_TERM));
        assert!(cancelled(&a, RaftTimer::ElectionRetry));
        assert!(timer_set(&a, RaftTimer::Election).is_some());
        let a = n.at(2000).timer(RaftTimer::Election);
        assert!(sends(&a).is_empty(), "{a:?}");
        assert_eq!(n.role(), Role::Follower);
        assert!(timer_set(&a, RaftTimer::Election).is_some());
        // A message with a term past MAX_TERM is ignored; a leader of MAX_TERM is followed.
        let a = n.msg(
            2,
            RaftMsg::AppendEntries {
                term: u64::MAX,
                log: LogPos::EMPTY,
            },
        );
        assert!(a.is_empty(), "{a:?}");
        assert_eq!(n.raft.status().epoch, Some(MAX_TERM));
        n.msg(
            3,
            RaftMsg::AppendEntries {
                term: MAX_TERM,
                log: LogPos::EMPTY,
            },
        );
        assert_eq!(n.raft.status().leader, Some(NodeId(3)));
    }
}

// ---- Rule sets of production libraries (config.rs: Redraw, CheckQuorumEvery, FollowerRule) ----

/// The delay each arming of the follower's election timer asks for, over 20 heartbeats of
/// the same leader and term.
fn heartbeat_delays(cfg: RaftConfig) -> Vec<Duration> {
    let mut n = Node::new(2, cfg);
    n.start(None);
    (1..=20)
        .map(|i| {
            let a = n.at(i * 10).msg(1, ae(1));
            timer_set(&a, RaftTimer::Election).map_or(Duration::ZERO, |at| at - n.now)
        })
        .collect()
}

/// etcd-io/raft `raft.go` `reset(term)` (and raft-rs `src/raft.rs` `reset`) is the only caller
/// of `resetRandomizedElectionTimeout`; a heartbeat only sets `electionElapsed = 0`. Under
/// `per_term` every heartbeat of one term re-arms the same drawn delay; under `every_rearm`
/// each draws anew; under `hashicorp` (`runFollower` never resets its timer on contact) a
/// heartbeat arms nothing.
#[test]
fn redraw_rule_decides_what_a_heartbeat_re_arms() {
    struct Row {
        source: &'static str,
        redraw: Redraw,
        follower: FollowerRule,
        /// How many distinct delays 20 heartbeats arm (0: none is armed).
        distinct: fn(usize) -> bool,
    }
    let table = [
        Row {
            source: "this crate: redraw at every re-arm",
            redraw: Redraw::EveryRearm,
            follower: FollowerRule::Reset,
            distinct: |d| d > 15,
        },
        Row {
            source: "etcd-io/raft raft.go reset(term); raft-rs src/raft.rs reset",
            redraw: Redraw::PerTerm,
            follower: FollowerRule::Reset,
            distinct: |d| d == 1,
        },
        Row {
            source: "hashicorp/raft raft.go runFollower: contact does not reset the timer",
            redraw: Redraw::EveryRearm,
            follower: FollowerRule::Hashicorp,
            distinct: |d| d == 0,
        },
    ];
    for row in table {
        let mut cfg = config(3);
        cfg.redraw = row.redraw;
        cfg.follower = row.follower;
        let mut d: Vec<Duration> = heartbeat_delays(cfg)
            .into_iter()
            .filter(|d| !d.is_zero())
            .collect();
        d.sort();
        d.dedup();
        assert!((row.distinct)(d.len()), "{}: {d:?}", row.source);
    }
}

/// etcd-io/raft: `becomeFollower`/`becomeCandidate` call `reset` (a new draw);
/// `becomePreCandidate` does not (the pre-candidate retries after the same timeout); a vote
/// granted in the same term only sets `electionElapsed = 0`.
#[test]
fn per_term_redraw_keeps_the_draw_within_a_term_and_role_and_draws_on_a_change() {
    let mut changed_on_new_term = 0;
    for seed in 1..=20 {
        let mut cfg = config(3);
        cfg.redraw = Redraw::PerTerm;
        cfg.pre_vote = true;
        let mut n = Node::new(seed % 3 + 1, cfg);
        n.rng = Rng::seed_from_u64(u64::from(seed));
        let a = n.start(None);
        let drawn = timer_set(&a, RaftTimer::Election).unwrap() - n.now;
        // A same-term vote grant (term 0, no leader): the same delay.
        let from = if n.raft.id().0 == 1 { 2 } else { 1 };
        let a = n.at(10).msg(from, rv(0));
        assert_eq!(vote_reply(&a), Some(true), "seed {seed}");
        assert_eq!(timer_set(&a, RaftTimer::Election).unwrap() - n.now, drawn);
        // The pre-candidacy keeps it (becomePreCandidate does not reset).
        let a = n.at(20).timer(RaftTimer::Election);
        assert!(n.raft.is_pre_candidate());
        assert_eq!(
            timer_set(&a, RaftTimer::ElectionRetry).unwrap() - n.now,
            drawn
        );
        // A leader of a new term: becomeFollower(term) draws again.
        let leader = if n.raft.id().0 == 3 { 2 } else { 3 };
        let a = n.at(30).msg(leader, ae(1));
        let next = timer_set(&a, RaftTimer::Election).unwrap() - n.now;
        assert!(next >= Duration::from_millis(150) && next <= Duration::from_millis(300));
        changed_on_new_term += usize::from(next != drawn);
        // ... and keeps that one for the term's heartbeats.
        let a = n.at(80).msg(leader, ae(1));
        assert_eq!(timer_set(&a, RaftTimer::Election).unwrap() - n.now, next);
    }
    assert!(changed_on_new_term >= 18, "{changed_on_new_term} of 20");
}

/// When a leader elected at t = 0 whose majority (nodes 2 and 3 of 5) answers every 10 ms
/// until `cut` steps down. `rearm`: exactly `timeout_min` (150 ms) after the last answer.
/// `timeout` (etcd-io/raft `tickHeartbeat` → `MsgCheckQuorum`, `stepLeader`: `QuorumActive`
/// then every `RecentActive = false`): at the first check, on the 150 ms grid, that finds no
/// answer since the previous one — between 1 and 2 timeouts after the cut.
fn step_down_instant(every: CheckQuorumEvery, cut_ms: u64) -> Time {
    let mut cfg = config(5);
    cfg.check_quorum = true;
    cfg.check_quorum_every = every;
    let mut n = Node::new(1, cfg);
    n.elect(&[2, 3]);
    let mut check = Time::from_millis(150);
    let mut t = 0;
    loop {
        t += 10;
        while check <= Time::from_millis(t) {
            n.now = check;
            let a = n.timer(RaftTimer::CheckQuorum);
            if n.role() != Role::Leader {
                return check;
            }
            check = timer_set(&a, RaftTimer::CheckQuorum).unwrap();
        }
        if t <= cut_ms {
            for from in [2, 3] {
                n.at(t).msg(
                    from,
                    RaftMsg::AppendResp {
                        term: 1,
                        success: true,
                    },
                );
            }
        }
        assert!(t < 10_000, "the leader never stepped down");
    }
}

#[test]
fn check_quorum_every_timeout_steps_down_one_to_two_timeouts_after_the_cut() {
    // (rule, cut, step-down instant), all in ms.
    let table = [
        (CheckQuorumEvery::Rearm, 440, 590),
        (CheckQuorumEvery::Rearm, 500, 650),
        (CheckQuorumEvery::Rearm, 0, 150),
        // Last answer at 440, before the check at 450: that check passes, 600 finds nothing.
        (CheckQuorumEvery::Timeout, 440, 600),
        // Last answer at 450, after the check at 450: 600 passes, 750 finds nothing.
        (CheckQuorumEvery::Timeout, 450, 750),
        (CheckQuorumEvery::Timeout, 500, 750),
        // No answer at all: the first check, one timeout after taking office.
        (CheckQuorumEvery::Timeout, 0, 150),
    ];
    for (every, cut, want) in table {
        let got = step_down_instant(every, cut);
        assert_eq!(got, Time::from_millis(want), "{every:?}, cut at {cut} ms");
        if every == CheckQuorumEvery::Timeout && cut > 0 {
            let after = got - Time::from_millis(cut);
            assert!(
                after >= Duration::from_millis(150) && after <= Duration::from_millis(300),
                "{after:?}"
            );
        }
    }
}

/// hashicorp/raft `runFollower`: on each `heartbeatTimer` wake-up the follower campaigns only
/// if `time.Since(lastContact) >= HeartbeatTimeout` (here `timeout_min`, 150 ms), and re-arms
/// `randomTimeout(HeartbeatTimeout)` otherwise; `lastContact` is set by `appendEntries` and by a
/// granted `requestVote`.
#[test]
fn hashicorp_follower_campaigns_only_when_its_last_contact_is_a_timeout_old() {
    // (last contact kind, its instant, wake-up instant, campaigns?)
    let table = [
        ("heartbeat", 100, 249, false),
        ("heartbeat", 100, 250, true),
        ("vote", 100, 249, false),
        ("vote", 100, 250, true),
        ("none", 0, 150, true),
    ];
    for (kind, contact, wake, campaigns) in table {
        let mut cfg = config(3);
        cfg.follower = FollowerRule::Hashicorp;
        let mut n = Node::new(2, cfg);
        n.start(None);
        match kind {
            "heartbeat" => {
                let a = n.at(contact).msg(1, ae(1));
                assert_eq!(
                    timer_set(&a, RaftTimer::Election),
                    None,
                    "no reset on contact"
                );
            }
            "vote" => {
                let a = n.at(contact).msg(3, rv(1));
                assert_eq!(vote_reply(&a), Some(true));
            }
            _ => {}
        }
        let term = n.raft.status().epoch.unwrap();
        let a = n.at(wake).timer(RaftTimer::Election);
        if campaigns {
            assert_eq!(
                n.role(),
                Role::Candidate,
                "{kind} at {contact}, wake at {wake}"
            );
            assert_eq!(n.raft.status().epoch, Some(term + 1));
            assert_eq!(n.raft.status().leader, None);
        } else {
            assert_eq!(
                n.role(),
                Role::Follower,
                "{kind} at {contact}, wake at {wake}"
            );
            let next = timer_set(&a, RaftTimer::Election).unwrap() - n.now;
            assert!(next >= Duration::from_millis(150) && next <= Duration::from_millis(300));
            assert!(sends(&a).is_empty());
        }
    }
}

/// hashicorp/raft `requestVote`/`requestPreVote`: "rejecting vote request since we have a
/// leader" is checked before the term, so the voter neither grants nor adopts the term; the
/// paper's rule (`reset`) adopts the higher term, forgets the leader and grants.
#[test]
fn hashicorp_voter_rejects_every_vote_while_it_knows_a_leader() {
    for follower in [FollowerRule::Reset, FollowerRule::Hashicorp] {
        for pre_vote in [false, true] {
            let mut cfg = config(3);
            cfg.follower = follower;
            let mut n = Node::new(2, cfg);
            n.start(None);
            n.at(10).msg(1, ae(1));
            let a = if pre_vote {
                n.at(20).msg(3, pv(5))
            } else {
                n.at(20).msg(3, rv(5))
            };
            let reply = sends(&a);
            assert_eq!(reply.len(), 1, "{follower:?}");
            let (term, granted) = match reply[0].1 {
                RaftMsg::Vote { term, granted } | RaftMsg::PreVoteResp { term, granted } => {
                    (term, granted)
                }
                other => panic!("unexpected reply {other:?}"),
            };
            let hashicorp = follower == FollowerRule::Hashicorp;
            // A pre-vote never changes the voter's term; PreVote's own rule (heard a leader
            // within timeout_min) denies it here under both rules.
            let want_granted = !hashicorp && !pre_vote;
            assert_eq!(granted, want_granted, "{follower:?} pre_vote={pre_vote}");
            let want_term = if hashicorp || pre_vote { 1 } else { 5 };
            assert_eq!(term, want_term, "{follower:?} pre_vote={pre_vote}");
            assert_eq!(n.raft.status().epoch, Some(want_term));
            let leader = if hashicorp || pre_vote {
                Some(NodeId(1))
            } else {
                None
            };
            assert_eq!(n.raft.status().leader, leader);
        }
    }
    // The known leader itself may still ask (its own re-election): not rejected for that.
    let mut cfg = config(3);
    cfg.follower = FollowerRule::Hashicorp;
    let mut n = Node::new(2, cfg);
    n.start(None);
    n.at(10).msg(1, ae(1));
    let a = n.at(20).msg(1, rv(2));
    assert_eq!(vote_reply(&a), Some(true));
}

#[test]
fn rule_names_round_trip_and_default_to_this_crates_rules() {
    assert_eq!(Redraw::NAMES, ["every_rearm", "per_term"]);
    assert_eq!(CheckQuorumEvery::NAMES, ["rearm", "timeout"]);
    assert_eq!(FollowerRule::NAMES, ["reset", "hashicorp"]);
    for name in Redraw::NAMES {
        assert_eq!(Redraw::from_name(name).unwrap().name(), *name);
    }
    for name in CheckQuorumEvery::NAMES {
        assert_eq!(CheckQuorumEvery::from_name(name).unwrap().name(), *name);
    }
    for name in FollowerRule::NAMES {
        assert_eq!(FollowerRule::from_name(name).unwrap().name(), *name);
    }
    assert_eq!(Redraw::from_name("sometimes"), None);
    let c = config(3);
    assert_eq!(
        (c.redraw, c.check_quorum_every, c.follower),
        (
            Redraw::default(),
            CheckQuorumEvery::default(),
            FollowerRule::default()
        )
    );
    assert_eq!(Redraw::default(), Redraw::EveryRearm);
    assert_eq!(CheckQuorumEvery::default(), CheckQuorumEvery::Rearm);
    assert_eq!(FollowerRule::default(), FollowerRule::Reset);
}

/// etcd-io/raft `raft.go` `Step`, `case m.Term < r.Term`: without CheckQuorum or PreVote a
/// stale message is ignored; with either, a stale append is answered (so the stale leader
/// learns the term) but a stale RequestVote still is not. And with CheckQuorum, `inLease`
/// makes a node ignore (not refuse) a higher-term pre-vote.
#[test]
fn etcd_replies_stay_silent_where_the_paper_answers() {
    let stale = |pre_vote: bool, check_quorum: bool| {
        let mut cfg = config(3);
        cfg.replies = RepliesRule::Etcd;
        cfg.pre_vote = pre_vote;
        cfg.check_quorum = check_quorum;
        let mut n = Node::new(2, cfg);
        n.start(Some(Stable {
            current_term: 5,
            voted_for: None,
            ..Stable::default()
        }));
        (sends(&n.msg(1, rv(4))).len(), sends(&n.msg(1, ae(4))).len())
    };
    assert_eq!(stale(false, false), (0, 0));
    assert_eq!(stale(true, false), (0, 1));
    assert_eq!(stale(false, true), (0, 1));

    for (replies, answered) in [(RepliesRule::Paper, 1), (RepliesRule::Etcd, 0)] {
        let mut cfg = config(3);
        cfg.check_quorum = true;
        cfg.replies = replies;
        let mut n = Node::new(2, cfg);
        n.start(None);
        n.at(10).msg(1, ae(1)); // follows leader 1 of term 1: in its lease
        let a = n.at(20).msg(3, pv(2));
        assert_eq!(sends(&a).len(), answered, "{replies:?}: {a:?}");
    }
}

/// etcd-io/raft `becomeFollower` → `reset(term)`: `electionElapsed = 0` and a new draw, also
/// for a follower that adopts a higher term from a RequestVote it refuses. The paper's
/// follower keeps its timer then.
#[test]
fn per_term_restarts_a_followers_count_when_it_adopts_a_higher_term() {
    for (redraw, restarts) in [(Redraw::EveryRearm, false), (Redraw::PerTerm, true)] {
        let mut cfg = config(3);
        cfg.redraw = redraw;
        let mut n = with_log(2, cfg, 1, pos(1, 5));
        n.start(Some(Stable {
            current_term: 1,
            voted_for: None,
            last_log: pos(1, 5),
        }));
        // A candidate of term 2 whose log is behind: refused, but its term is adopted.
        let a = n.at(40).msg(3, rv(2));
        assert_eq!(vote_reply(&a), Some(false), "{redraw:?}");
        assert_eq!(
            timer_set(&a, RaftTimer::Election).is_some(),
            restarts,
            "{redraw:?}: {a:?}"
        );
    }
}

/// etcd-io/raft `stepLeader` on `MsgProp`: `appendEntry` then `bcastAppend`; the
/// paper-shaped default waits for the next heartbeat. (This model persists the leader's entry
/// before the appends leave, as before every send.)
#[test]
fn immediate_append_ships_a_client_entry_at_once_before_the_leaders_persist() {
    for (append, shipped) in [
        (AppendRule::Heartbeat, false),
        (AppendRule::Immediate, true),
    ] {
        let mut cfg = config(3);
        cfg.append = append;
        let mut n = Node::new(1, cfg);
        n.elect(&[2]);
        let mut a = Vec::new();
        let mut io = Io::new(n.now, &mut n.rng, &mut a);
        n.raft.on_client_entry(&mut io);
        let s = sends(&a);
        assert_eq!(!s.is_empty(), shipped, "{append:?}: {a:?}");
        if shipped {
            assert_eq!(s.len(), 2);
            assert!(matches!(s[0].1, RaftMsg::AppendEntries { log, .. } if log.index == 2));
            assert!(
                persist_precedes_sends(&a),
                "nothing leaves ahead of its state"
            );
            assert_eq!(persists(&a).len(), 1);
        }
    }
}

/// raft-rs (`RawNode::ready`: a leader's `Ready` carries `messages`, every other role's
/// `persisted_messages`) and etcd's server (`raftNode.start`: `if islead`, send before
/// `storage.Save`): under `leader_send = parallel` a leader's appends leave ahead of its own
/// write, which still follows in the same input; a candidate's and a follower's messages
/// still wait for theirs.
#[test]
fn a_parallel_leader_sends_before_its_persist_and_no_one_else_does() {
    for (rule, first) in [(LeaderSend::Persisted, false), (LeaderSend::Parallel, true)] {
        let mut cfg = config(3);
        cfg.leader_send = rule;
        cfg.append = AppendRule::Immediate;
        let mut n = Node::new(1, cfg.clone());
        // The candidate's RequestVotes follow the record of its self-vote either way.
        n.start(None);
        let a = n.timer(RaftTimer::Election);
        assert!(persist_precedes_sends(&a), "{rule:?}: {a:?}");
        // Taking office: the no-op entry and the first AppendEntries.
        let a = n.msg(
            2,
            RaftMsg::Vote {
                term: 1,
                granted: true,
            },
        );
        assert_eq!(n.role(), Role::Leader);
        assert_eq!(sends(&a).len(), 2, "{a:?}");
        assert_eq!(persists(&a).len(), 1, "the no-op entry is written: {a:?}");
        assert_eq!(!persist_precedes_sends(&a), first, "{rule:?}: {a:?}");
        // A client entry, shipped at once.
        let mut a = Vec::new();
        let mut io = Io::new(n.now, &mut n.rng, &mut a);
        n.raft.on_client_entry(&mut io);
        assert_eq!(sends(&a).len(), 2, "{a:?}");
        assert_eq!(persists(&a), vec![n.raft.stable()], "{a:?}");
        assert_eq!(!persist_precedes_sends(&a), first, "{rule:?}: {a:?}");
        // A follower's answer to an append still follows the record of the entries.
        let mut f = Node::new(2, cfg);
        f.start(None);
        let a = f.msg(1, ae(1));
        assert!(persist_precedes_sends(&a), "{rule:?}: {a:?}");
    }
}

// ---- Learners (`voters`): etcd-io/raft's learners, hashicorp/raft's non-voters. ----

/// `n` nodes of which the `k` lowest ids vote.
fn voters(n: u32, k: u32) -> RaftConfig {
    let mut c = config(n);
    c.voters = Some(k);
    c
}

/// Every combination of the options and rule sets that touch vote handling, so a learner's
/// rules are checked under each.
fn vote_rule_variants(n: u32, k: u32) -> Vec<RaftConfig> {
    let mut all = Vec::new();
    for pre_vote in [false, true] {
        for check_quorum in [false, true] {
            for replies in [RepliesRule::Paper, RepliesRule::Etcd] {
                for follower in [FollowerRule::Reset, FollowerRule::Hashicorp] {
                    for redraw in [Redraw::EveryRearm, Redraw::PerTerm] {
                        let mut c = voters(n, k);
                        c.pre_vote = pre_vote;
                        c.check_quorum = check_quorum;
                        c.replies = replies;
                        c.follower = follower;
                        c.redraw = redraw;
                        all.push(c);
                    }
                }
            }
        }
    }
    all
}

#[test]
fn voters_is_validated_capped_at_n_and_stated_as_the_quorum_rule() {
    let mut c = voters(5, 0);
    assert_eq!(
        c.validate(),
        Err("voters (0) must be at least 1 (every node votes unless set)".to_string())
    );
    c.voters = Some(3);
    assert_eq!(c.validate(), Ok(()));
    assert_eq!((c.voter_count(), c.quorum()), (3, 2));
    assert!(c.is_voter(NodeId(3)) && !c.is_voter(NodeId(4)) && !c.is_voter(NodeId(0)));
    let rule = |c: &RaftConfig| Raft::new(NodeId(1), Arc::new(c.clone())).quorum_rule();
    assert_eq!(rule(&c), QuorumRule::Voters(3));
    // K >= n: plain Raft, every node votes.
    for k in [5, 6, 1000] {
        let c = voters(5, k);
        assert_eq!((c.voter_count(), c.quorum()), (5, 3), "K = {k}");
        assert_eq!(rule(&c), QuorumRule::Members, "K = {k}");
    }
    assert_eq!(rule(&config(5)), QuorumRule::Members);
    assert_eq!(voters(51, 5).quorum(), 3);
    assert_eq!(voters(51, 1).quorum(), 1);
}

/// A learner that receives a RequestVote or a PreVote (which no candidate sends it) ignores
/// it: no grant, no refusal, no term adopted, nothing persisted — under every rule set. The
/// same request to a voter of the same cluster is granted, so the request itself is valid.
#[test]
fn a_learner_never_votes_nor_pre_votes_and_keeps_its_term() {
    for cfg in vote_rule_variants(7, 3) {
        let label = format!(
            "pre_vote {} check_quorum {} {:?} {:?} {:?}",
            cfg.pre_vote, cfg.check_quorum, cfg.replies, cfg.follower, cfg.redraw
        );
        let mut learner = Node::new(5, cfg.clone());
        assert!(!learner.raft.is_voter());
        learner.start(None);
        for (from, m) in [(1, rv(1)), (2, rv(7)), (6, rv(3)), (1, pv(1)), (3, pv(9))] {
            let a = learner.at(400).msg(from, m);
            assert!(a.is_empty(), "{label}: {m:?} from {from}: {a:?}");
            assert_eq!(learner.raft.stable(), Stable::default(), "{label}");
            assert_eq!(learner.role(), Role::Follower, "{label}");
        }
        // The voter control: the same RequestVote is granted.
        let mut voter = Node::new(3, cfg.clone());
        assert!(voter.raft.is_voter());
        voter.start(None);
        let a = voter.at(400).msg(1, rv(1));
        assert_eq!(vote_reply(&a), Some(true), "{label}");
    }
}

/// A learner arms no election timeout, so it never becomes a (pre-)candidate: not at boot, not
/// when an (impossible) election timer fires, not when told to suspect, not after following a
/// leader that then goes silent. It still follows a leader: adopts its term, takes its
/// entries, answers.
#[test]
fn a_learners_election_timeout_never_starts_an_election() {
    for cfg in vote_rule_variants(7, 3) {
        let mut learner = Node::new(7, cfg.clone());
        let a = learner.start(None);
        assert_eq!(timer_set(&a, RaftTimer::Election), None);
        for a in [
            learner.at(1_000).timer(RaftTimer::Election),
            learner.at(2_000).suspect(),
            learner.at(3_000).timer(RaftTimer::ElectionRetry),
        ] {
            assert!(sends(&a).is_empty(), "{a:?}");
            assert_eq!(learner.role(), Role::Follower);
        }
        assert_eq!(learner.raft.stable().current_term, 0);
        // A leader of term 4 ships its log: the learner follows it like any follower.
        let log = pos(4, 9);
        let a = learner
            .at(3_100)
            .msg(2, RaftMsg::AppendEntries { term: 4, log });
        assert_eq!(
            sends(&a),
            vec![(
                NodeId(2),
                RaftMsg::AppendResp {
                    term: 4,
                    success: true
                }
            )]
        );
        assert_eq!(timer_set(&a, RaftTimer::Election), None);
        assert_eq!(
            learner.raft.stable(),
            Stable {
                current_term: 4,
                voted_for: None,
                last_log: log
            }
        );
        assert_eq!(learner.raft.status().leader, Some(NodeId(2)));
        // The leader goes silent for good: still no campaign, and the learner keeps naming it.
        let a = learner.at(60_000).timer(RaftTimer::Election);
        let b = learner.suspect();
        assert!(sends(&a).is_empty() && sends(&b).is_empty());
        assert_eq!(
            learner.raft.status(),
            Status {
                role: Role::Follower,
                leader: Some(NodeId(2)),
                epoch: Some(4)
            }
        );
        // A voter of the same cluster does campaign (the control).
        let mut voter = Node::new(2, cfg);
        let a = voter.start(None);
        assert!(timer_set(&a, RaftTimer::Election).is_some());
        let a = voter.at(1_000).timer(RaftTimer::Election);
        assert_eq!(voter.role(), Role::Candidate);
        assert!(!sends(&a).is_empty());
    }
}

/// etcd-io/raft `campaign` sends MsgVote/MsgPreVote to `r.trk.Voters.IDs()` only, and a
/// candidate wins with a majority of the voters, `K / 2 + 1`, however many learners there are;
/// a learner's grant is never counted. The winner's heartbeat goes to every node.
#[test]
fn candidates_ask_only_the_voters_and_a_majority_of_the_voters_wins() {
    let grant = |term| RaftMsg::Vote {
        term,
        granted: true,
    };
    // n = 51, K = 5: RequestVote to the 4 other voters; 3 votes (itself and two) win.
    let mut n = Node::new(2, voters(51, 5));
    n.start(None);
    let a = n.timer(RaftTimer::Election);
    let asked: Vec<NodeId> = sends(&a).iter().map(|&(to, _)| to).collect();
    assert_eq!(asked, vec![NodeId(1), NodeId(3), NodeId(4), NodeId(5)]);
    assert!(sends(&a).iter().all(|(_, m)| *m == rv(1)));
    // Grants from learners (forged: none was asked) count for nothing.
    for learner in 6..=51 {
        n.msg(learner, grant(1));
    }
    assert_eq!(n.role(), Role::Candidate);
    n.msg(4, grant(1));
    assert_eq!(n.role(), Role::Candidate);
    let a = n.msg(5, grant(1));
    assert_eq!(n.role(), Role::Leader);
    let shipped: Vec<NodeId> = sends(&a).iter().map(|&(to, _)| to).collect();
    assert_eq!(
        shipped,
        (1..=51).filter(|&i| i != 2).map(NodeId).collect::<Vec<_>>()
    );
    assert!(sends(&a)
        .iter()
        .all(|(_, m)| matches!(m, RaftMsg::AppendEntries { term: 1, .. })));

    // PreVote likewise: asked of the voters only, learners' grants and denials not counted.
    let mut cfg = voters(9, 5);
    cfg.pre_vote = true;
    let mut n = Node::new(1, cfg.clone());
    n.start(None);
    let a = n.timer(RaftTimer::Election);
    let asked: Vec<NodeId> = sends(&a).iter().map(|&(to, _)| to).collect();
    assert_eq!(asked, (2..=5).map(NodeId).collect::<Vec<_>>());
    assert!(sends(&a).iter().all(|(_, m)| *m == pv(1)));
    let pre = |granted| RaftMsg::PreVoteResp { term: 1, granted };
    for learner in 6..=9 {
        n.msg(learner, pre(true));
    }
    assert!(n.raft.is_pre_candidate());
    n.msg(2, pre(true));
    let a = n.msg(3, pre(true));
    assert_eq!(n.role(), Role::Candidate);
    assert!(!n.raft.is_pre_candidate());
    let asked: Vec<NodeId> = sends(&a).iter().map(|&(to, _)| to).collect();
    assert_eq!(asked, (2..=5).map(NodeId).collect::<Vec<_>>());
    // Denials (a denial carries the denier's term, 0 here): K = 5 gives up after 3 voters
    // deny (more than K - quorum = 2); the learners' 4 denials change nothing.
    let deny = RaftMsg::PreVoteResp {
        term: 0,
        granted: false,
    };
    let mut n = Node::new(1, cfg);
    n.start(None);
    n.timer(RaftTimer::Election);
    for learner in 6..=9 {
        n.msg(learner, deny);
    }
    n.msg(2, deny);
    n.msg(3, deny);
    assert!(n.raft.is_pre_candidate());
    n.msg(4, deny);
    assert_eq!(n.role(), Role::Follower);
}

/// CheckQuorum counts the voters only (etcd-io/raft `QuorumActive` skips learners;
/// hashicorp/raft `checkLeaderLease` counts `Suffrage == Voter`): a leader that hears every
/// learner but no other voter steps down one timeout after taking office; one that hears a
/// single other voter (a majority of 3 with itself) and no learner stays — under both
/// check rules.
#[test]
fn check_quorum_counts_the_voters_only() {
    for every in [CheckQuorumEvery::Rearm, CheckQuorumEvery::Timeout] {
        // (who answers every heartbeat, leads at t = 1 s?)
        for (answering, stays) in [
            ((4..=7).collect::<Vec<u32>>(), false),
            (vec![2], true),
            (vec![3, 4, 5, 6, 7], true),
        ] {
            let mut cfg = voters(7, 3);
            cfg.check_quorum = true;
            cfg.check_quorum_every = every;
            let mut n = Node::new(1, cfg);
            n.elect(&[2]);
            let mut check = Time::from_millis(150);
            let mut led = true;
            for t in (10..=1_000).step_by(10) {
                while check <= Time::from_millis(t) && led {
                    n.now = check;
                    let a = n.timer(RaftTimer::CheckQuorum);
                    led = n.role() == Role::Leader;
                    if led {
                        check = timer_set(&a, RaftTimer::CheckQuorum).unwrap();
                    } else {
                        assert_eq!(check, Time::from_millis(150), "{every:?} {answering:?}");
                    }
                }
                for &from in &answering {
                    n.at(t).msg(
                        from,
                        RaftMsg::AppendResp {
                            term: 1,
                            success: true,
                        },
                    );
                }
            }
            assert_eq!(led, stays, "{every:?}, answering {answering:?}");
        }
    }
}

impl Node {
    fn handover(&mut self) -> Actions {
        let mut a = Vec::new();
        let mut io = Io::new(self.now, &mut self.rng, &mut a);
        self.raft.on_handover(&mut io);
        a
    }
    fn client_entry(&mut self) -> Actions {
        let mut a = Vec::new();
        let mut io = Io::new(self.now, &mut self.rng, &mut a);
        self.raft.on_client_entry(&mut io);
        a
    }
}

/// A leader of term 1 whose followers `acks` answered a heartbeat of its term.
fn leader_heard_by(n: u32, cfg: RaftConfig, acks: &[u32]) -> Node {
    let mut a = Node::new(n, cfg);
    let voters: Vec<u32> = (1..n).collect();
    a.elect(&voters);
    for &f in acks {
        a.msg(
            f,
            RaftMsg::AppendResp {
                term: 1,
                success: true,
            },
        );
    }
    a
}

/// Thesis §3.10 / etcd-io/raft `MsgTransferLeader`: the leader ships its whole log to the
/// transferee, refuses client entries from then on, and sends `TimeoutNow` exactly once, when
/// the transferee answers; the transferee is the most up-to-date voter that answered, lowest
/// id on ties.
#[test]
fn a_leader_hands_over_to_the_lowest_up_to_date_voter_with_timeout_now_once_it_answers() {
    let mut a = leader_heard_by(5, config(5), &[3, 2, 4]);
    let log = a.raft.last_log();
    let out = a.handover();
    // Node 1 never answered: 2, 3 and 4 are equally up to date, 2 is the lowest.
    assert_eq!(
        sends(&out),
        vec![(NodeId(2), RaftMsg::AppendEntries { term: 1, log })]
    );
    assert_eq!(
        a.role(),
        Role::Leader,
        "it leads until the new term reaches it"
    );
    // No client entry while handing over.
    assert!(a.client_entry().is_empty());
    assert_eq!(a.raft.last_log(), log);
    // Another follower's answer does not trigger it; the transferee's does, once.
    let ok = RaftMsg::AppendResp {
        term: 1,
        success: true,
    };
    assert!(sends(&a.msg(3, ok)).is_empty());
    assert_eq!(
        sends(&a.msg(2, ok)),
        vec![(NodeId(2), RaftMsg::TimeoutNow { term: 1 })]
    );
    assert!(sends(&a.msg(2, ok)).is_empty());
    // The transferee's higher term makes it step down, and it grants its vote.
    let out = a.msg(
        2,
        RaftMsg::RequestVote {
            term: 2,
            last_log: log,
            transfer: true,
        },
    );
    assert_eq!(a.role(), Role::Follower);
    assert_eq!(vote_reply(&out), Some(true));
}

/// A learner is never the transferee, even when it is the only node that answered.
#[test]
fn a_learner_is_never_the_transferee() {
    let mut cfg = config(5);
    cfg.voters = Some(3);
    let mut a = Node::new(1, cfg);
    a.elect(&[2, 3]);
    for f in [4, 5] {
        a.msg(
            f,
            RaftMsg::AppendResp {
                term: 1,
                success: true,
            },
        );
    }
    let out = a.handover();
    let to: Vec<NodeId> = sends(&out).iter().map(|(to, _)| *to).collect();
    assert_eq!(to, vec![NodeId(2)]);
}

/// etcd-io/raft `MsgTimeoutNow` → `campaignTransfer`: the transferee campaigns at once, with
/// PreVote on, skipping the pre-vote, and its requests carry `transfer`; a voter within its
/// leader lease (CheckQuorum) grants such a request where it ignores an ordinary one. A stale
/// `TimeoutNow`, a learner and a node being stopped do nothing.
#[test]
fn timeout_now_starts_a_transfer_campaign_that_passes_leader_stickiness() {
    let mut cfg = config(3);
    cfg.pre_vote = true;
    cfg.check_quorum = true;
    let mut b = Node::new(2, cfg.clone());
    b.start(None);
    b.msg(3, ae(1));
    let out = b.msg(3, RaftMsg::TimeoutNow { term: 1 });
    assert_eq!(b.role(), Role::Candidate);
    assert!(!b.raft.is_pre_candidate());
    assert_eq!(b.raft.stable().current_term, 2);
    let want = RaftMsg::RequestVote {
        term: 2,
        last_log: LogPos::EMPTY,
        transfer: true,
    };
    assert_eq!(sends(&out), vec![(NodeId(1), want), (NodeId(3), want)]);
    // Node 1 heard the leader just now: it ignores an ordinary request and grants this one.
    let mut c = Node::new(1, cfg.clone());
    c.start(None);
    c.msg(3, ae(1));
    let plain = RaftMsg::RequestVote {
        term: 2,
        last_log: LogPos::EMPTY,
        transfer: false,
    };
    assert!(c.msg(2, plain).is_empty());
    assert_eq!(vote_reply(&c.msg(2, want)), Some(true));
    // A stale TimeoutNow does nothing; nor does one to a node being stopped.
    let mut d = Node::new(1, cfg.clone());
    d.start(None);
    d.msg(3, ae(4));
    assert!(d.msg(3, RaftMsg::TimeoutNow { term: 3 }).is_empty());
    d.handover();
    assert!(sends(&d.msg(3, RaftMsg::TimeoutNow { term: 4 })).is_empty());
    assert_eq!(d.role(), Role::Follower);
    // ... nor does its election timeout.
    assert!(sends(&d.timer(RaftTimer::Election)).is_empty());
    let mut learner_cfg = config(3);
    learner_cfg.voters = Some(2);
    let mut l = Node::new(3, learner_cfg);
    l.start(None);
    l.msg(1, ae(1));
    assert!(l.msg(1, RaftMsg::TimeoutNow { term: 1 }).is_empty());
}

/// TIMEOUT_NOW is an election message of 9 bytes.
#[test]
fn timeout_now_is_an_election_message() {
    let m = RaftMsg::TimeoutNow { term: 3 };
    assert_eq!(m.kind(), "TIMEOUT_NOW");
    assert_eq!(m.category(), MsgCategory::Election);
    assert_eq!(m.wire_size(), 9);
}

/// A 3-node configuration counting ticks of 50 ms ([`Clock::Ticks`]): `E` = 150 / 50 = 3
/// ticks, the randomized timeout in `[3, 6)` ticks, CheckQuorum (every `E` ticks, as it must
/// be with ticks) with its lease.
fn ticks_config() -> RaftConfig {
    let mut cfg = config(3);
    cfg.clock = Clock::Ticks;
    cfg.check_quorum = true;
    cfg.check_quorum_every = CheckQuorumEvery::Timeout;
    cfg
}

impl Node {
    /// One tick of the node's ticker, at the instant it is due (`due`, updated to the next).
    fn tick(&mut self, due: &mut Time) -> Actions {
        self.now = *due;
        let a = self.timer(RaftTimer::Tick);
        *due = timer_set(&a, RaftTimer::Tick).expect("the ticker re-arms on every tick");
        a
    }
}

/// With ticks the node arms one timer, its ticker's first tick within one period, and each
/// tick re-arms it a whole period after the one before: the election timers are never armed.
#[test]
fn ticks_arm_only_the_ticker_at_a_fixed_rate() {
    let mut a = Node::new(2, ticks_config());
    let boot = a.start(None);
    let first = timer_set(&boot, RaftTimer::Tick).expect("ticker armed");
    assert!(first > Time::ZERO && first <= Time::from_millis(50));
    assert_eq!(timer_set(&boot, RaftTimer::Election), None);
    assert!(
        (3..6).contains(&a.raft.timeout_ticks),
        "{}",
        a.raft.timeout_ticks
    );
    let mut due = first;
    a.tick(&mut due);
    assert_eq!(due, first + Duration::from_millis(50));
    assert_eq!(a.raft.elapsed, 1);
}

/// etcd-io/raft `Step`'s `inLease` (`checkQuorum && lead != None && electionElapsed <
/// electionTimeout`): a follower that heard its leader `E - 1` ticks ago ignores a
/// RequestVote of a higher term (no answer, no new term: "lease is not expired (remaining
/// ticks: 1)"), however much *time* has passed, and grants the same request one tick later.
/// A pre-vote is refused and granted alike. The count restarts on the leader's AppendEntries.
#[test]
fn ticks_lease_ignores_a_vote_one_tick_early_and_grants_after() {
    let mut f = Node::new(2, ticks_config());
    let boot = f.start(None);
    let mut due = timer_set(&boot, RaftTimer::Tick).unwrap();
    f.at(0).msg(1, ae(1));
    assert_eq!(f.raft.elapsed, 0);
    // Pin the drawn timeout above E so the follower does not campaign on the E-th tick.
    f.raft.timeout_ticks = 5;
    f.tick(&mut due);
    f.tick(&mut due);
    assert_eq!(f.raft.elapsed, 2);
    // Two ticks is 50-100 ms of time, less than timeout_min either way; a third puts the
    // node out of its lease whatever the time.
    f.now = Time(due.0 - 1);
    // (A pre-vote in the lease is refused under `replies = paper`, ignored under `etcd`.)
    assert_eq!(
        vote_reply(&f.msg(3, pv(2))),
        Some(false),
        "pre-vote refused"
    );
    assert!(f.msg(3, rv(2)).is_empty(), "vote ignored in the lease");
    assert_eq!(f.raft.stable().current_term, 1);
    f.tick(&mut due);
    assert_eq!(f.raft.elapsed, 3);
    assert_eq!(f.role(), Role::Follower);
    assert_eq!(vote_reply(&f.msg(3, pv(2))), Some(true));
    assert_eq!(vote_reply(&f.msg(3, rv(2))), Some(true));
    assert_eq!(f.raft.stable().voted_for, Some(NodeId(3)));
    // Granting a vote restarts the count (`Step`: `r.electionElapsed = 0`): in the lease of
    // the new term's leader-to-be only once it hears from it.
    assert_eq!(f.raft.elapsed, 0);
    // The leader's AppendEntries restarts it too, and with it the lease.
    let mut g = Node::new(2, ticks_config());
    let boot = g.start(None);
    let mut due = timer_set(&boot, RaftTimer::Tick).unwrap();
    g.msg(1, ae(1));
    g.raft.timeout_ticks = 5;
    for _ in 0..3 {
        g.tick(&mut due);
    }
    g.msg(1, ae(1));
    assert_eq!(g.raft.elapsed, 0);
    assert!(g.msg(3, rv(2)).is_empty());
}

/// A follower campaigns on the tick its count reaches the drawn timeout (`tickElection`,
/// `pastElectionTimeout`), not before.
#[test]
fn ticks_follower_campaigns_when_the_count_reaches_its_timeout() {
    let mut f = Node::new(2, ticks_config());
    let boot = f.start(None);
    let mut due = timer_set(&boot, RaftTimer::Tick).unwrap();
    f.msg(1, ae(1));
    f.raft.timeout_ticks = 4;
    for _ in 0..3 {
        assert!(sends(&f.tick(&mut due)).is_empty());
    }
    let a = f.tick(&mut due);
    assert_eq!(f.role(), Role::Candidate);
    assert_eq!(f.raft.stable().current_term, 2);
    assert_eq!(sends(&a).len(), 2, "RequestVote to both voters");
    assert_eq!(f.raft.elapsed, 0);
}

/// etcd-io/raft `tickHeartbeat`: the leader ships AppendEntries on every tick and checks its
/// quorum every `E` ticks of its own ticker since it took office (`electionElapsed >=
/// electionTimeout` → `MsgCheckQuorum`), stepping down at a check unless a majority answered
/// since the last one.
#[test]
fn ticks_check_quorum_every_election_timeout_of_ticks() {
    let mut l = Node::new(1, ticks_config());
    let boot = l.start(None);
    let mut due = timer_set(&boot, RaftTimer::Tick).unwrap();
    l.suspect();
    l.msg(
        2,
        RaftMsg::Vote {
            term: 1,
            granted: true,
        },
    );
    assert_eq!(l.role(), Role::Leader);
    assert_eq!(l.raft.elapsed, 0);
    // Node 2 answers in the first period, then nobody does.
    let a = l.tick(&mut due);
    assert_eq!(
        sends(&a).len(),
        2,
        "AppendEntries to both followers every tick"
    );
    l.msg(
        2,
        RaftMsg::AppendResp {
            term: 1,
            success: true,
        },
    );
    l.tick(&mut due);
    assert_eq!(l.role(), Role::Leader);
    // Third tick: the first check; node 2 answered since the leader took office.
    l.tick(&mut due);
    assert_eq!(l.role(), Role::Leader);
    assert_eq!(l.raft.elapsed, 0);
    // Two more ticks without an answer: still leading, whatever the time.
    l.tick(&mut due);
    l.tick(&mut due);
    assert_eq!(l.role(), Role::Leader);
    // The sixth tick is the second check: nobody answered since the first; step down.
    let a = l.tick(&mut due);
    assert_eq!(l.role(), Role::Follower);
    assert!(sends(&a).is_empty(), "no AppendEntries after stepping down");
}

/// Counting ticks is etcd's rule set: hashicorp/raft's follower has no ticks, and a leader
/// counting ticks checks its quorum once per election timeout of them.
#[test]
fn ticks_refuse_the_rules_that_count_no_ticks() {
    let mut c = ticks_config();
    c.check_quorum_every = CheckQuorumEvery::Rearm;
    assert!(c.validate().unwrap_err().contains("check_quorum_every"));
    let mut c = ticks_config();
    c.follower = FollowerRule::Hashicorp;
    assert!(c.validate().unwrap_err().contains("hashicorp"));
    ticks_config().validate().unwrap();
    assert_eq!(ticks_config().election_ticks(), (3, 6));
    let mut c = ticks_config();
    c.timing.heartbeat = Duration::from_millis(100);
    c.timeout_min = Duration::from_millis(1000);
    c.timeout_max = Duration::from_millis(2000);
    assert_eq!(
        c.election_ticks(),
        (10, 20),
        "etcd's [E, 2E) at 100/1000 ms"
    );
    // A heartbeat written to three significant digits (tune: 500 ms at ratio 3 → 167 ms)
    // keeps its whole ticks; a timeout clearly between two multiples is cut as etcd cuts it.
    c.timing.heartbeat = Duration::from_millis(167);
    c.timeout_min = Duration::from_millis(500);
    c.timeout_max = Duration::from_millis(1000);
    assert_eq!(c.election_ticks(), (3, 6));
    c.timing.heartbeat = Duration::from_millis(100);
    c.timeout_min = Duration::from_millis(290);
    c.timeout_max = Duration::from_millis(580);
    assert_eq!(c.election_ticks(), (2, 5));
}
