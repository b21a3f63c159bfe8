//! State-machine tests against client-go's rules (`tools/leaderelection/leaderelection.go`),
//! one input at a time.

use std::sync::Arc;
use std::time::Duration;

use election_core::{Action, Io, NodeId, Protocol, Rng, Role, SeedableRng, Time};

use crate::{Lease, LeaseConfig, LeaseMsg, LeaseTimer, Op, Record};

const N: u32 = 3;
const STORE: NodeId = NodeId(N + 1);

struct Harness {
    rng: Rng,
    actions: Vec<Action<Lease>>,
}

impl Harness {
    fn new() -> Self {
        Harness {
            rng: Rng::seed_from_u64(7),
            actions: Vec::new(),
        }
    }
    fn run(&mut self, at_ms: u64, f: impl FnOnce(&mut Io<'_, Lease>)) -> Vec<Action<Lease>> {
        self.actions.clear();
        let mut io = Io::new(Time::from_millis(at_ms), &mut self.rng, &mut self.actions);
        f(&mut io);
        std::mem::take(&mut self.actions)
    }
}

fn cfg() -> Arc<LeaseConfig> {
    Arc::new(LeaseConfig::new(N))
}

fn sends(actions: &[Action<Lease>]) -> Vec<(NodeId, LeaseMsg)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send { to, msg } => Some((*to, *msg)),
            _ => None,
        })
        .collect()
}

fn timer_at(actions: &[Action<Lease>], t: LeaseTimer) -> Option<Time> {
    actions.iter().rev().find_map(|a| match a {
        Action::SetTimer { timer, at } if *timer == t => Some(*at),
        _ => None,
    })
}

fn held_by(holder: u32, version: u64, transitions: u64) -> Record {
    Record {
        holder: Some(NodeId(holder)),
        version,
        transitions,
        duration: Duration::from_millis(150),
        acquire: Time::ZERO,
        renew: Time::from_millis(version),
    }
}

/// A booted member 1.
fn member(h: &mut Harness) -> Lease {
    let mut m = Lease::new(NodeId(1), cfg());
    let a = h.run(0, |io| m.on_start(io, None));
    assert_eq!(sends(&a), vec![(STORE, LeaseMsg::Get)], "reads at once");
    let poll = timer_at(&a, LeaseTimer::Poll).unwrap();
    assert!(
        poll >= Time::from_millis(20) && poll <= Time::from_millis(44),
        "retry × U[1, 2.2]: {poll}"
    );
    m
}

fn acquires(a: &[Action<Lease>]) -> Vec<Record> {
    sends(a)
        .into_iter()
        .filter_map(|(_, m)| match m {
            LeaseMsg::Update {
                op: Op::Acquire,
                record,
            } => Some(record),
            _ => None,
        })
        .collect()
}

#[test]
fn an_empty_record_is_taken_at_once() {
    let mut h = Harness::new();
    let mut m = member(&mut h);
    let a = h.run(1, |io| {
        m.on_message(io, STORE, LeaseMsg::Record(Record::EMPTY))
    });
    let acq = acquires(&a);
    assert_eq!(acq.len(), 1);
    assert_eq!(acq[0].holder, Some(NodeId(1)));
    assert_eq!(acq[0].version, 0, "compare-and-swap on the version read");
    assert_eq!(acq[0].transitions, 1, "a change of holder is a transition");
    assert_eq!(m.status().role, Role::Candidate);
}

#[test]
fn acquires_only_after_an_unchanged_record_for_a_full_duration_of_local_time() {
    let mut h = Harness::new();
    let mut m = member(&mut h);
    let rec = held_by(2, 5, 3);
    // Observed at 10 ms local; the record's own timestamps play no part. The failure detector
    // is armed for a full lease duration from the observation.
    let a = h.run(10, |io| m.on_message(io, STORE, LeaseMsg::Record(rec)));
    assert!(acquires(&a).is_empty());
    assert_eq!(
        timer_at(&a, LeaseTimer::Expire),
        Some(Time::from_millis(160))
    );
    assert_eq!(m.status().leader, Some(NodeId(2)));
    assert_eq!(m.status().epoch, Some(3));
    // A renewal seen at 100 ms restarts the wait from there.
    let renewed = held_by(2, 6, 3);
    let a = h.run(100, |io| m.on_message(io, STORE, LeaseMsg::Record(renewed)));
    assert_eq!(
        timer_at(&a, LeaseTimer::Expire),
        Some(Time::from_millis(250))
    );
    // Unchanged 149 ms later: still valid.
    let a = h.run(249, |io| m.on_message(io, STORE, LeaseMsg::Record(renewed)));
    assert!(acquires(&a).is_empty(), "only 149 ms since the change");
    // A full duration after the last change the detector fires, and the next read takes the
    // lease, on the version read, as the next transition.
    let a = h.run(250, |io| m.on_timer(io, LeaseTimer::Expire));
    assert!(sends(&a).is_empty(), "client-go waits for its next read");
    let a = h.run(251, |io| m.on_message(io, STORE, LeaseMsg::Record(renewed)));
    let acq = acquires(&a);
    assert_eq!(acq.len(), 1);
    assert_eq!((acq[0].version, acq[0].transitions), (6, 4));
    assert_eq!(acq[0].acquire, Time::from_millis(251));
    // The holder learns the lease expired only from its own clock: the record's renew time
    // (6 ms here) was never compared with it.
    assert_eq!(m.status().role, Role::Candidate);
}

/// With failure detection off (the detector's firings swallowed), a member keeps reading and
/// following, but never takes a lease someone holds; a forced suspicion lets it.
#[test]
fn without_its_detector_a_member_follows_but_never_takes_over() {
    let mut h = Harness::new();
    let mut m = member(&mut h);
    h.run(10, |io| {
        m.on_message(io, STORE, LeaseMsg::Record(held_by(2, 5, 3)))
    });
    let a = h.run(900, |io| {
        m.on_message(io, STORE, LeaseMsg::Record(held_by(2, 5, 3)))
    });
    assert!(
        acquires(&a).is_empty(),
        "expired by the clock, but not noticed"
    );
    let a = h.run(901, |io| m.on_suspect(io));
    assert_eq!(sends(&a), vec![(STORE, LeaseMsg::Get)], "a forced read");
    let a = h.run(902, |io| {
        m.on_message(io, STORE, LeaseMsg::Record(held_by(2, 5, 3)))
    });
    assert_eq!(acquires(&a).len(), 1);
}

#[test]
fn an_older_record_arriving_late_is_not_a_change() {
    let mut h = Harness::new();
    let mut m = member(&mut h);
    h.run(10, |io| {
        m.on_message(io, STORE, LeaseMsg::Record(held_by(2, 6, 3)))
    });
    // A reordered older read must not restart the wait (nor re-arm the detector).
    let a = h.run(100, |io| {
        m.on_message(io, STORE, LeaseMsg::Record(held_by(2, 5, 3)))
    });
    assert_eq!(timer_at(&a, LeaseTimer::Expire), None);
    h.run(160, |io| m.on_timer(io, LeaseTimer::Expire));
    let a = h.run(160, |io| {
        m.on_message(io, STORE, LeaseMsg::Record(held_by(2, 6, 3)))
    });
    assert_eq!(acquires(&a).len(), 1);
}

/// Member 1 holding the lease at version 1 since `t` ms.
fn holder(h: &mut Harness, cfg: Arc<LeaseConfig>) -> Lease {
    let mut m = Lease::new(NodeId(1), cfg);
    h.run(0, |io| m.on_start(io, None));
    h.run(1, |io| {
        m.on_message(io, STORE, LeaseMsg::Record(Record::EMPTY))
    });
    let a = h.run(2, |io| {
        m.on_message(
            io,
            STORE,
            LeaseMsg::Updated {
                op: Op::Acquire,
                ok: true,
                record: held_by(1, 1, 1),
            },
        )
    });
    assert_eq!(m.status().role, Role::Leader);
    assert_eq!(m.status().leader, Some(NodeId(1)));
    assert_eq!(m.status().epoch, Some(1), "epoch = transitions");
    assert_eq!(timer_at(&a, LeaseTimer::Renew), Some(Time::from_millis(22)));
    assert_eq!(
        timer_at(&a, LeaseTimer::Deadline),
        Some(Time::from_millis(122)),
        "retry + renew_deadline after the success"
    );
    assert!(a
        .iter()
        .any(|x| matches!(x, Action::CancelTimer(LeaseTimer::Poll))));
    m
}

#[test]
fn the_holder_renews_every_retry_and_a_success_moves_the_deadline() {
    let mut h = Harness::new();
    let mut m = holder(&mut h, cfg());
    let a = h.run(22, |io| m.on_timer(io, LeaseTimer::Renew));
    let s = sends(&a);
    assert_eq!(s.len(), 1);
    let LeaseMsg::Update {
        op: Op::Renew,
        record,
    } = s[0].1
    else {
        panic!("{s:?}")
    };
    assert_eq!((record.holder, record.version), (Some(NodeId(1)), 1));
    assert_eq!(record.transitions, 1, "a renewal is no transition");
    assert_eq!(record.renew, Time::from_millis(22));
    assert_eq!(timer_at(&a, LeaseTimer::Renew), Some(Time::from_millis(42)));
    let a = h.run(23, |io| {
        m.on_message(
            io,
            STORE,
            LeaseMsg::Updated {
                op: Op::Renew,
                ok: true,
                record: Record {
                    version: 2,
                    ..record
                },
            },
        )
    });
    assert_eq!(
        timer_at(&a, LeaseTimer::Deadline),
        Some(Time::from_millis(143))
    );
    assert_eq!(m.status().role, Role::Leader);
}

#[test]
fn the_holder_gives_up_at_the_renew_deadline_and_releases_only_if_asked() {
    for release in [false, true] {
        let mut h = Harness::new();
        let mut c = LeaseConfig::new(N);
        c.release_on_cancel = release;
        let mut m = holder(&mut h, Arc::new(c));
        // Renewals leave but nothing comes back (store unreachable).
        h.run(22, |io| m.on_timer(io, LeaseTimer::Renew));
        assert_eq!(m.status().role, Role::Leader);
        let a = h.run(122, |io| m.on_timer(io, LeaseTimer::Deadline));
        assert_eq!(m.status().role, Role::Follower);
        assert_ne!(m.status().leader, Some(NodeId(1)));
        assert!(timer_at(&a, LeaseTimer::Poll).is_some(), "back to polling");
        let released: Vec<_> = sends(&a)
            .into_iter()
            .filter(|(_, m)| {
                matches!(
                    m,
                    LeaseMsg::Update {
                        op: Op::Release,
                        ..
                    }
                )
            })
            .collect();
        if release {
            assert_eq!(released.len(), 1);
            let LeaseMsg::Update { record, .. } = released[0].1 else {
                unreachable!()
            };
            assert_eq!(record.holder, None);
            assert_eq!((record.version, record.transitions), (1, 1));
        } else {
            assert!(released.is_empty());
        }
    }
}

#[test]
fn a_renewal_that_finds_another_holder_deposes_at_once() {
    let mut h = Harness::new();
    let mut m = holder(&mut h, cfg());
    h.run(400, |io| m.on_timer(io, LeaseTimer::Renew));
    h.run(401, |io| {
        m.on_message(
            io,
            STORE,
            LeaseMsg::Updated {
                op: Op::Renew,
                ok: false,
                record: held_by(2, 3, 2),
            },
        )
    });
    assert_eq!(m.status().role, Role::Follower);
    assert_eq!(m.status().leader, Some(NodeId(2)));
    assert_eq!(m.status().epoch, Some(2));
}

#[test]
fn the_store_compares_and_swaps_and_persists() {
    let mut h = Harness::new();
    let mut s = Lease::new(STORE, cfg());
    assert!(s.is_store());
    h.run(0, |io| s.on_start(io, None));
    let want = held_by(2, 0, 1);
    let a = h.run(1, |io| {
        s.on_message(
            io,
            NodeId(2),
            LeaseMsg::Update {
                op: Op::Acquire,
                record: want,
            },
        )
    });
    let applied = Record { version: 1, ..want };
    assert!(matches!(a[0], Action::Persist(r) if r == applied), "{a:?}");
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(2),
            LeaseMsg::Updated {
                op: Op::Acquire,
                ok: true,
                record: applied
            }
        )]
    );
    // A second acquire on the same (now stale) version loses.
    let a = h.run(2, |io| {
        s.on_message(
            io,
            NodeId(3),
            LeaseMsg::Update {
                op: Op::Acquire,
                record: held_by(3, 0, 1),
            },
        )
    });
    assert_eq!(
        sends(&a),
        vec![(
            NodeId(3),
            LeaseMsg::Updated {
                op: Op::Acquire,
                ok: false,
                record: applied
            }
        )]
    );
    let a = h.run(3, |io| s.on_message(io, NodeId(1), LeaseMsg::Get));
    assert_eq!(sends(&a), vec![(NodeId(1), LeaseMsg::Record(applied))]);
    // Recovering with what it persisted keeps the lease.
    let mut s2 = Lease::new(STORE, cfg());
    h.run(4, |io| s2.on_start(io, Some(&applied)));
    assert_eq!(s2.record(), Some(applied));
    assert_eq!(s2.status().role, Role::Follower);
    // The store never leads; it names the holder its record holds (the family's authority).
    assert_eq!(s2.status().leader, applied.holder);
    assert_eq!(s2.quorum_rule(), election_core::QuorumRule::Service);
}

#[test]
fn config_follows_client_go_validation_and_the_tolerated_rate_is_0_8() {
    let c = LeaseConfig::new(5);
    c.validate().unwrap();
    assert!((c.tolerated_clock_rate() - 0.8).abs() < 1e-9);
    let k = LeaseConfig::k8s(5);
    k.validate().unwrap();
    assert!((k.tolerated_clock_rate() - 0.8).abs() < 1e-9);
    let mut bad = LeaseConfig::new(5);
    bad.renew_deadline = Duration::from_millis(150);
    assert!(bad.validate().unwrap_err().contains("lease.duration_ms"));
    let mut bad = LeaseConfig::new(5);
    bad.retry = Duration::from_millis(90);
    assert!(bad.validate().unwrap_err().contains("lease.retry_ms"));
}

/// A lost `ACQUIRE` (or its answer) does not block the member: its next read starts a new
/// attempt, as client-go's request would have timed out.
#[test]
fn a_lost_acquire_is_retried_at_the_next_read() {
    let mut h = Harness::new();
    let mut m = member(&mut h);
    let a = h.run(1, |io| {
        m.on_message(io, STORE, LeaseMsg::Record(Record::EMPTY))
    });
    assert_eq!(acquires(&a).len(), 1);
    // Nothing comes back; the next poll reads again, and the read acquires again.
    let a = h.run(40, |io| m.on_timer(io, LeaseTimer::Poll));
    assert_eq!(sends(&a), vec![(STORE, LeaseMsg::Get)]);
    assert_eq!(m.status().role, Role::Follower);
    let a = h.run(41, |io| {
        m.on_message(io, STORE, LeaseMsg::Record(Record::EMPTY))
    });
    assert_eq!(acquires(&a).len(), 1);
}

// ---- Lease variants (issue #31): the rules other libraries ship. ----

use crate::{Expiry, OnLoss};

fn cfg_with(f: impl FnOnce(&mut LeaseConfig)) -> Arc<LeaseConfig> {
    let mut c = LeaseConfig::new(N);
    f(&mut c);
    c.validate().unwrap();
    Arc::new(c)
}

/// A booted member 1 with configuration `cfg`.
fn member_with(h: &mut Harness, cfg: Arc<LeaseConfig>) -> Lease {
    let mut m = Lease::new(NodeId(1), cfg);
    h.run(0, |io| m.on_start(io, None));
    m
}

/// hendrikmaus/kube-leader-election's `has_lease_expired`: the holder's renew time plus the
/// duration against the member's own clock. A record that has just changed but whose renew
/// time is a duration behind our clock is expired at once (the detector fires with no delay,
/// and the next read takes it); under client-go's rule the same record is valid for a full
/// duration from its observation.
#[test]
fn renew_time_expiry_compares_the_holders_renew_time_with_our_clock() {
    // Member 1's clock reads 1000 ms; the holder wrote renew = 800 ms from its own clock.
    let rec = Record {
        renew: Time::from_millis(800),
        ..held_by(2, 5, 3)
    };
    let mut h = Harness::new();
    let mut m = member_with(&mut h, cfg_with(|c| c.expiry = Expiry::RenewTime));
    let a = h.run(1000, |io| m.on_message(io, STORE, LeaseMsg::Record(rec)));
    assert!(acquires(&a).is_empty(), "waits for its detector");
    assert_eq!(
        timer_at(&a, LeaseTimer::Expire),
        Some(Time::from_millis(1000)),
        "800 + 150 has passed: the detector fires at once"
    );
    assert_eq!(m.status().leader, None, "an expired record names no leader");
    h.run(1000, |io| m.on_timer(io, LeaseTimer::Expire));
    // A renewal that is just as expired on arrival keeps the detector fired: it is taken.
    let renewed = Record {
        renew: Time::from_millis(820),
        ..held_by(2, 6, 3)
    };
    let a = h.run(1020, |io| {
        m.on_message(io, STORE, LeaseMsg::Record(renewed))
    });
    let acq = acquires(&a);
    assert_eq!(acq.len(), 1);
    assert_eq!((acq[0].version, acq[0].transitions), (6, 4));

    // client-go's rule: the same record, observed at 1000 ms, is valid until 1150 ms.
    let mut h = Harness::new();
    let mut m = member(&mut h);
    let a = h.run(1000, |io| m.on_message(io, STORE, LeaseMsg::Record(rec)));
    assert_eq!(
        timer_at(&a, LeaseTimer::Expire),
        Some(Time::from_millis(1150))
    );
    assert_eq!(m.status().leader, Some(NodeId(2)));
}

/// A renew time ahead of our clock (the holder's clock is ahead of ours) keeps the lease
/// valid until renew + duration on our clock: longer than a duration after we saw it.
#[test]
fn renew_time_expiry_waits_out_a_holder_clock_ahead_of_ours() {
    let rec = Record {
        renew: Time::from_millis(900),
        ..held_by(2, 5, 3)
    };
    let mut h = Harness::new();
    let mut m = member_with(&mut h, cfg_with(|c| c.expiry = Expiry::RenewTime));
    let a = h.run(100, |io| m.on_message(io, STORE, LeaseMsg::Record(rec)));
    assert_eq!(
        timer_at(&a, LeaseTimer::Expire),
        Some(Time::from_millis(1050))
    );
    // Past observation + duration (250 ms), still valid by the renew time.
    let a = h.run(600, |io| m.on_message(io, STORE, LeaseMsg::Record(rec)));
    assert!(acquires(&a).is_empty());
    assert_eq!(m.status().leader, Some(NodeId(2)));
    // Its detector switched off (the firing swallowed), it never takes the lease.
    let a = h.run(2000, |io| m.on_message(io, STORE, LeaseMsg::Record(rec)));
    assert!(acquires(&a).is_empty(), "expired, but not noticed");
    h.run(2001, |io| m.on_timer(io, LeaseTimer::Expire));
    let a = h.run(2002, |io| m.on_message(io, STORE, LeaseMsg::Record(rec)));
    assert_eq!(acquires(&a).len(), 1);
}

fn update(s: &mut Lease, h: &mut Harness, at: u64, from: u32, op: Op, record: Record) -> LeaseMsg {
    let a = h.run(at, |io| {
        s.on_message(io, NodeId(from), LeaseMsg::Update { op, record })
    });
    sends(&a)[0].1
}

/// `cas = false`: kube-leader-election's merge patches carry no resourceVersion. Two members
/// that read the same free record both acquire, and both are told they won, with the same
/// transitions count (one epoch, two holders); the store keeps the last writer. A renewal or
/// release from a member the record no longer names is refused (the library reads first), and
/// a renewal only moves the renew time and the duration.
#[test]
fn blind_writes_let_two_acquirers_both_win() {
    let mut h = Harness::new();
    let blind = cfg_with(|c| c.cas = false);
    let mut s = Lease::new(STORE, blind);
    h.run(0, |io| s.on_start(io, None));
    let a2 = update(&mut s, &mut h, 1, 2, Op::Acquire, held_by(2, 0, 1));
    let a3 = update(&mut s, &mut h, 2, 3, Op::Acquire, held_by(3, 0, 1));
    let won = |m: LeaseMsg| match m {
        LeaseMsg::Updated { ok, record, .. } => (ok, record.holder, record.transitions),
        _ => panic!("{m:?}"),
    };
    assert_eq!(won(a2), (true, Some(NodeId(2)), 1));
    assert_eq!(won(a3), (true, Some(NodeId(3)), 1), "the same epoch, twice");
    assert_eq!(
        s.record().unwrap().holder,
        Some(NodeId(3)),
        "last writer wins"
    );
    assert_eq!(s.record().unwrap().version, 2);
    // Member 2's renewal finds 3 holding: refused, and it learns the holder.
    let r2 = update(&mut s, &mut h, 3, 2, Op::Renew, held_by(2, 1, 1));
    assert_eq!(won(r2), (false, Some(NodeId(3)), 1));
    let rel = Record {
        holder: None,
        ..held_by(2, 1, 1)
    };
    let x2 = update(&mut s, &mut h, 4, 2, Op::Release, rel);
    assert_eq!(won(x2), (false, Some(NodeId(3)), 1));
    // Member 3's renewal on a stale version is applied: only renew and duration change.
    let renew = Record {
        renew: Time::from_millis(5),
        transitions: 9,
        ..held_by(3, 0, 1)
    };
    let r3 = update(&mut s, &mut h, 5, 3, Op::Renew, renew);
    assert_eq!(won(r3), (true, Some(NodeId(3)), 1), "transitions untouched");
    assert_eq!(s.record().unwrap().renew, Time::from_millis(5));
    assert_eq!(s.record().unwrap().version, 3);

    // With compare-and-swap (the default) the second acquisition of version 0 loses.
    let mut s = Lease::new(STORE, cfg());
    h.run(0, |io| s.on_start(io, None));
    update(&mut s, &mut h, 1, 2, Op::Acquire, held_by(2, 0, 1));
    let a3 = update(&mut s, &mut h, 2, 3, Op::Acquire, held_by(3, 0, 1));
    assert_eq!(won(a3), (false, Some(NodeId(2)), 1));
}

/// `on_loss = exit`: at the renew deadline the holder (with `release_on_cancel`, after its
/// release, as client-go releases before `OnStoppedLeading` runs) exits: every timer cancelled,
/// nothing sent, state gone (a follower with no leader and no epoch), every message ignored,
/// until the restart delay; then it starts afresh with a read.
#[test]
fn on_loss_exit_goes_down_for_the_restart_delay_then_starts_afresh() {
    for release in [false, true] {
        let mut h = Harness::new();
        let c = cfg_with(|c| {
            c.on_loss = OnLoss::Exit;
            c.release_on_cancel = release;
        });
        let mut m = holder(&mut h, c);
        h.run(22, |io| m.on_timer(io, LeaseTimer::Renew));
        let a = h.run(122, |io| m.on_timer(io, LeaseTimer::Deadline));
        let released = sends(&a)
            .iter()
            .filter(|(_, m)| {
                matches!(
                    m,
                    LeaseMsg::Update {
                        op: Op::Release,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(released, usize::from(release), "release {release}");
        assert_eq!(sends(&a).len(), released, "nothing else leaves");
        for t in [
            LeaseTimer::Poll,
            LeaseTimer::Expire,
            LeaseTimer::Renew,
            LeaseTimer::Deadline,
        ] {
            assert!(
                a.iter()
                    .any(|x| matches!(x, Action::CancelTimer(c) if *c == t)),
                "{t:?} cancelled"
            );
        }
        assert_eq!(
            timer_at(&a, LeaseTimer::Poll),
            None,
            "no polling while down"
        );
        assert_eq!(
            timer_at(&a, LeaseTimer::Restart),
            Some(Time::from_millis(222)),
            "restart after 100 ms"
        );
        assert_eq!(m.status(), election_core::Status::FOLLOWER_NO_LEADER);
        assert_eq!(m.record(), None, "its state is gone");
        // Down: a record, a suspicion, a stray timer change nothing.
        let a = h.run(150, |io| {
            m.on_message(io, STORE, LeaseMsg::Record(held_by(2, 9, 2)))
        });
        assert!(a.is_empty(), "{a:?}");
        assert!(h.run(151, |io| m.on_suspect(io)).is_empty());
        assert!(h.run(152, |io| m.on_timer(io, LeaseTimer::Poll)).is_empty());
        assert_eq!(m.status(), election_core::Status::FOLLOWER_NO_LEADER);
        // The restart: a fresh member, reading at once and polling.
        let a = h.run(222, |io| m.on_timer(io, LeaseTimer::Restart));
        assert_eq!(sends(&a), vec![(STORE, LeaseMsg::Get)]);
        assert!(timer_at(&a, LeaseTimer::Poll).is_some());
        let a = h.run(223, |io| {
            m.on_message(io, STORE, LeaseMsg::Record(held_by(2, 9, 2)))
        });
        assert!(acquires(&a).is_empty());
        assert_eq!(m.status().leader, Some(NodeId(2)), "follows again");
    }
}

/// A holder deposed by a renewal conflict exits too; `continue` (the default) goes back to
/// polling instead.
#[test]
fn on_loss_exit_also_on_a_renewal_conflict() {
    for on_loss in [OnLoss::Continue, OnLoss::Exit] {
        let mut h = Harness::new();
        let mut m = holder(&mut h, cfg_with(|c| c.on_loss = on_loss));
        h.run(400, |io| m.on_timer(io, LeaseTimer::Renew));
        let a = h.run(401, |io| {
            m.on_message(
                io,
                STORE,
                LeaseMsg::Updated {
                    op: Op::Renew,
                    ok: false,
                    record: held_by(2, 3, 2),
                },
            )
        });
        assert_eq!(m.status().role, Role::Follower);
        match on_loss {
            OnLoss::Continue => {
                assert!(timer_at(&a, LeaseTimer::Poll).is_some());
                assert_eq!(m.status().leader, Some(NodeId(2)));
            }
            OnLoss::Exit => {
                assert_eq!(timer_at(&a, LeaseTimer::Poll), None);
                assert_eq!(
                    timer_at(&a, LeaseTimer::Restart),
                    Some(Time::from_millis(501))
                );
                assert_eq!(m.status(), election_core::Status::FOLLOWER_NO_LEADER);
            }
        }
    }
}

#[test]
fn restart_range_must_be_ordered() {
    let mut c = LeaseConfig::new(3);
    c.restart = (Duration::from_millis(200), Duration::from_millis(100));
    let e = c.validate().unwrap_err();
    assert!(
        e.contains("lease.restart_ms") && e.contains("200-100"),
        "{e}"
    );
    assert_eq!(Expiry::from_name("renew_time"), Some(Expiry::RenewTime));
    assert_eq!(OnLoss::from_name("exit"), Some(OnLoss::Exit));
    assert_eq!(OnLoss::from_name("crash"), None);
}

/// A planned stop (client-go with `ReleaseOnCancel`, its context cancelled): the holder
/// releases the lease at once whatever `release_on_cancel` says for an unplanned loss, then
/// neither renews nor tries to acquire again, even an empty record.
#[test]
fn a_holder_told_it_will_be_stopped_releases_and_stops_competing() {
    for release_on_cancel in [false, true] {
        let mut h = Harness::new();
        let mut c = LeaseConfig::new(N);
        c.release_on_cancel = release_on_cancel;
        let mut m = holder(&mut h, Arc::new(c));
        let a = h.run(10, |io| m.on_handover(io));
        assert_eq!(m.status().role, Role::Follower);
        assert_eq!(m.status().leader, None);
        let released: Vec<Record> = sends(&a)
            .into_iter()
            .filter_map(|(to, msg)| match msg {
                LeaseMsg::Update {
                    op: Op::Release,
                    record,
                } if to == STORE => Some(record),
                _ => None,
            })
            .collect();
        assert_eq!(released.len(), 1, "release_on_cancel = {release_on_cancel}");
        assert_eq!(released[0].holder, None);
        assert_eq!((released[0].version, released[0].transitions), (1, 1));
        assert!(a
            .iter()
            .any(|x| matches!(x, Action::CancelTimer(LeaseTimer::Poll))));
        // It does not take the lease back.
        let a = h.run(11, |io| {
            m.on_message(io, STORE, LeaseMsg::Record(Record::EMPTY))
        });
        assert!(acquires(&a).is_empty());
        assert!(sends(&h.run(40, |io| m.on_timer(io, LeaseTimer::Poll))).is_empty());
    }
}

/// A planned release that loses the race with a renewal still in flight is written again
/// over the record the conflict returns (client-go's `release` reads before it writes); an
/// unplanned release (`release_on_cancel` at the deadline) is not retried.
#[test]
fn a_planned_release_that_conflicts_with_an_inflight_renewal_is_retried() {
    let mut h = Harness::new();
    let mut m = holder(&mut h, cfg());
    h.run(22, |io| m.on_timer(io, LeaseTimer::Renew));
    h.run(23, |io| m.on_handover(io));
    // The store took the renewal first (version 2), so the release (version 1) conflicts.
    let renewed = Record {
        version: 2,
        renew: Time::from_millis(22),
        ..held_by(1, 1, 1)
    };
    h.run(24, |io| {
        m.on_message(
            io,
            STORE,
            LeaseMsg::Updated {
                op: Op::Renew,
                ok: true,
                record: renewed,
            },
        )
    });
    let a = h.run(25, |io| {
        m.on_message(
            io,
            STORE,
            LeaseMsg::Updated {
                op: Op::Release,
                ok: false,
                record: renewed,
            },
        )
    });
    let again: Vec<Record> = sends(&a)
        .into_iter()
        .filter_map(|(_, msg)| match msg {
            LeaseMsg::Update {
                op: Op::Release,
                record,
            } => Some(record),
            _ => None,
        })
        .collect();
    assert_eq!(again.len(), 1, "{a:?}");
    assert_eq!((again[0].holder, again[0].version), (None, 2));
    assert_eq!(m.status().role, Role::Follower);
}
