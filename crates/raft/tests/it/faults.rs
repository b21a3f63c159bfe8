//! Partitions, isolation and crash-recovery: the failure modes Raft's terms, majorities,
//! stable storage and the two options (CheckQuorum, thesis §6.2; PreVote, thesis §9.6) exist for.

use crate::common;

use std::time::Duration;

use common::{assert_safe, ms, run, run_with, Log};
use election_core::{NodeId, Role, Status};
use election_raft::RaftConfig;
use election_sim::{Fault, FaultAction, Latency, Selector, SimConfig, TrialReport};
use proptest::prelude::*;

const PARTITION: u64 = 1000;
const HEAL: u64 = 3000;

fn sim(n: u32, seed: u64) -> SimConfig {
    let mut s = SimConfig::new(n, seed);
    s.horizon = Duration::from_secs(6);
    s.settle = Duration::from_secs(1);
    s
}

fn raft(n: u32, pre_vote: bool, check_quorum: bool) -> RaftConfig {
    let mut c = RaftConfig::new(n);
    c.pre_vote = pre_vote;
    c.check_quorum = check_quorum;
    c
}

/// The leader and its term just before `PARTITION` in the fault-free run of this seed (the
/// run with faults is identical up to the first fault).
fn leader_before_faults(n: u32, seed: u64, cfg: &RaftConfig) -> (NodeId, u64) {
    let mut s = sim(n, seed);
    s.horizon = Duration::from_millis(PARTITION);
    let (report, _) = run(s, cfg.clone());
    let l = report.metrics.leader.expect("a leader before the faults");
    (l, report.final_status[l.index()].unwrap().epoch.unwrap())
}

/// Splits 5 nodes 2/3 with the leader and one follower on the minority side, heals at `HEAL`.
fn minority_leader_partition(seed: u64, check_quorum: bool) -> (NodeId, u64, TrialReport, Log) {
    let cfg = raft(5, false, check_quorum);
    let (old, term) = leader_before_faults(5, seed, &cfg);
    let buddy = NodeId(if old.0 == 1 { 2 } else { 1 });
    let mut s = sim(5, seed);
    s.faults = vec![
        Fault::at_ms(
            PARTITION as f64,
            FaultAction::Partition(vec![
                vec![Selector::Id(old), Selector::Id(buddy)],
                vec![Selector::Rest],
            ]),
        ),
        Fault::at_ms(HEAL as f64, FaultAction::Heal),
    ];
    let (report, log) = run(s, cfg);
    assert_eq!(
        log.status_at(old, ms(PARTITION)).unwrap().role,
        Role::Leader
    );
    (old, term, report, log)
}

/// The majority side of the partition elects a new leader in a higher term, which leads until
/// the heal; after it, the cluster converges on one leader again.
fn assert_majority_takes_over(old: NodeId, term: u64, report: &TrialReport, log: &Log, what: &str) {
    let during: Vec<_> = log
        .leaders_by_term()
        .into_iter()
        .filter(|(t, _)| *t > term)
        .collect();
    let (new_term, new) = during.first().expect("majority elects");
    let new = *new.first().unwrap();
    assert_ne!(new, old, "{what}");
    let elected = log
        .statuses
        .iter()
        .find(|(_, n, s)| *n == new && s.role == Role::Leader && s.epoch == Some(*new_term))
        .unwrap()
        .0;
    assert!(
        elected > ms(PARTITION) && elected < ms(PARTITION + 700),
        "{what}: {elected}"
    );
    assert!(
        log.changes(new, elected + Duration::from_nanos(1), ms(HEAL))
            .is_empty(),
        "{what}"
    );
    assert!(report.metrics.converged, "{what}");
}

/// §5.2 / §5.4: a leader cut off on a minority side cannot stop the majority from electing a
/// new leader in a higher term; without CheckQuorum the old leader goes on believing it leads
/// (in its old term, so never a same-term conflict) until the heal, when the higher term
/// reaches it and it steps down at once.
#[test]
fn partitioned_leader_without_check_quorum_leads_until_heal() {
    for seed in 0..6 {
        let what = format!("seed={seed}");
        let (old, term, report, log) = minority_leader_partition(seed, false);
        assert_safe(&report, &log, &what);
        assert_majority_takes_over(old, term, &report, &log, &what);
        // No status change at all for the old leader between partition and heal.
        assert!(
            log.changes(old, ms(PARTITION), ms(HEAL)).is_empty(),
            "{what}"
        );
        assert_eq!(log.status_at(old, ms(HEAL - 1)).unwrap().epoch, Some(term));
        // Two live leaders (of different terms) at once: split brain, but no same-term leaders.
        assert!(report.metrics.split_brain, "{what}");
        assert!(
            report.metrics.split_brain_ms >= (HEAL - PARTITION - 700) as f64,
            "{what}"
        );
        // After the heal it steps down within one heartbeat plus a round trip.
        let (t, st) = log.changes(old, ms(HEAL), ms(10_000))[0];
        assert!(t <= ms(HEAL + 50 + 2), "{what}: stepped down at {t}");
        assert_eq!(st.role, Role::Follower, "{what}");
        assert!(st.epoch.unwrap() > term, "{what}");
    }
}

/// Thesis §6.2: with CheckQuorum the cut-off leader steps down once it has gone `timeout_min`
/// (150 ms) without hearing from a majority. Its last majority contact is the answer to its
/// last heartbeat before the partition, sent at most 50 ms earlier and answered 2 ms later,
/// so it steps down between 98 and 150 ms after the partition, in its own term.
#[test]
fn partitioned_leader_with_check_quorum_steps_down_within_an_election_timeout() {
    for seed in 0..6 {
        let what = format!("seed={seed}");
        let (old, term, report, log) = minority_leader_partition(seed, true);
        assert_safe(&report, &log, &what);
        assert_majority_takes_over(old, term, &report, &log, &what);
        let (t, st) = log.changes(old, ms(PARTITION), ms(HEAL))[0];
        assert_eq!(
            st,
            Status {
                role: Role::Follower,
                leader: None,
                epoch: Some(term)
            },
            "{what}"
        );
        assert!(
            t >= ms(PARTITION + 98) && t <= ms(PARTITION + 150),
            "{what}: stepped down at {t}"
        );
        // With CheckQuorum the time with two leaders is at most that step-down delay.
        assert!(report.metrics.split_brain_ms <= 150.0, "{what}");
        let stranded = report.metrics.minority_leader_ms;
        assert!((98.0..=150.0).contains(&stranded), "{what}: {stranded}");
        // It never leads again while cut off: a minority cannot elect.
        assert!(
            log.changes(old, t, ms(HEAL))
                .iter()
                .all(|(_, s)| s.role != Role::Leader),
            "{what}"
        );
    }
}

/// Isolates a follower from `PARTITION` to `HEAL` (2 s, at least 6 election timeouts).
fn isolated_follower(seed: u64, pre_vote: bool) -> (NodeId, NodeId, u64, TrialReport, Log) {
    isolated_follower_with(seed, pre_vote, false)
}

fn isolated_follower_with(
    seed: u64,
    pre_vote: bool,
    check_quorum: bool,
) -> (NodeId, NodeId, u64, TrialReport, Log) {
    let cfg = raft(5, pre_vote, check_quorum);
    let (leader, term) = leader_before_faults(5, seed, &cfg);
    let follower = NodeId(if leader.0 == 1 { 2 } else { 1 });
    let mut s = sim(5, seed);
    s.faults = vec![
        Fault::at_ms(
            PARTITION as f64,
            FaultAction::Isolate(Selector::Id(follower)),
        ),
        Fault::at_ms(HEAL as f64, FaultAction::Heal),
    ];
    s.reference_ms = Some(HEAL as f64);
    let (report, log) = run(s, cfg);
    (leader, follower, term, report, log)
}

/// Thesis §9.6, the disruptive server: without PreVote an isolated follower raises its term
/// on every election timeout (at least 2000 / 300 = 6 times in 2 s); when it rejoins, its
/// higher term deposes the healthy leader and forces a new election in an inflated term.
#[test]
fn without_pre_vote_a_rejoining_follower_deposes_the_healthy_leader() {
    for seed in 0..6 {
        let what = format!("seed={seed}");
        let (leader, follower, term, report, log) = isolated_follower(seed, false);
        assert_safe(&report, &log, &what);
        let rejoin_term = log.status_at(follower, ms(HEAL)).unwrap().epoch.unwrap();
        assert!(
            rejoin_term >= term + 6,
            "{what}: term {term} -> {rejoin_term}"
        );
        // The healthy leader is deposed after the heal, and a new election follows.
        let after = log.changes(leader, ms(HEAL), ms(10_000));
        assert!(
            after.iter().any(|(_, s)| s.role != Role::Leader),
            "{what}: {after:?}"
        );
        assert!(report.metrics.leader_changes >= 1, "{what}");
        assert!(report.metrics.unavailable_ms > 0.0, "{what}");
        assert!(log.max_term() > rejoin_term.max(term), "{what}");
    }
}

/// Thesis §9.6: with PreVote the isolated follower never gets a majority of pre-votes, so its
/// term stays put and it sends no RequestVote; when it rejoins, the leader's next heartbeat
/// (same term) makes it a follower again. The healthy leader is never disturbed.
#[test]
fn with_pre_vote_a_rejoining_follower_does_not_disturb_the_leader() {
    for seed in 0..6 {
        let what = format!("seed={seed}");
        let (leader, follower, term, report, log) = isolated_follower(seed, true);
        assert_safe(&report, &log, &what);
        // Isolated, it keeps asking for pre-votes but never raises its term.
        assert!(log.sent_since("PRE_VOTE", ms(PARTITION)) >= 6 * 4, "{what}");
        assert_eq!(log.sent_since("REQUEST_VOTE", ms(PARTITION)), 0, "{what}");
        assert_eq!(log.max_term(), term, "{what}");
        assert_eq!(
            log.status_at(follower, ms(HEAL)).unwrap().role,
            Role::Candidate,
            "{what}"
        );
        // The leader leads throughout, and the follower is back within a heartbeat.
        assert!(
            log.changes(leader, ms(PARTITION), ms(10_000)).is_empty(),
            "{what}"
        );
        assert_eq!(report.metrics.leader_changes, 0, "{what}");
        // Unavailable only until the heartbeat reaches the rejoined pre-candidate.
        assert!(report.metrics.unavailable_ms <= 51.0, "{what}");
        let (t, st) = *log.changes(follower, ms(HEAL), ms(10_000)).last().unwrap();
        assert_eq!(
            st,
            Status {
                role: Role::Follower,
                leader: Some(leader),
                epoch: Some(term)
            }
        );
        assert!(t <= ms(HEAL + 51), "{what}: back at {t}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// §5.2 and Figure 2's stable-storage rule under crashes, recoveries and message loss:
    /// never two leaders in one term, never two votes by one node in one term (across its
    /// incarnations), never a message sent before the state it depends on was persisted.
    #[test]
    fn crash_recovery_with_loss_never_breaks_election_safety(
        n in 3u32..=7,
        seed in any::<u64>(),
        loss in 0.0f64..0.2,
        pre_vote in any::<bool>(),
        check_quorum in any::<bool>(),
        events in prop::collection::vec((0u64..4000, 0u8..4, 0u32..7), 1..12),
    ) {
        let mut s = sim(n, seed);
        s.net.latency = Latency::Uniform { min_ms: 0.5, max_ms: 5.0 };
        s.net.loss = loss;
        let mut events = events;
        events.sort();
        s.faults = events
            .into_iter()
            .map(|(at, what, k)| {
                let id = Selector::Id(NodeId(k % n + 1));
                let action = match what {
                    0 => FaultAction::Crash(Selector::Leader),
                    1 => FaultAction::Crash(id),
                    2 => FaultAction::Recover(id),
                    _ => FaultAction::Recover(Selector::LastCrashed),
                };
                Fault::at_ms(at as f64 + 0.5, action)
            })
            .collect();
        let (report, log) = run(s, raft(n, pre_vote, check_quorum));
        assert_safe(&report, &log, &format!("n={n} seed={seed}"));
    }
}

/// The audit above can fail: nodes that forget their stable storage on recovery vote twice.
/// With equal timeouts all 5 nodes become candidates in term 1 at 150 ms, each voting for
/// itself; node 2 crashes at 150.5 ms and recovers at 150.9 ms, before the RequestVotes sent
/// at 150 ms arrive (1 ms latency). Restored from stable storage it refuses them all; an
/// amnesiac node 2 adopts term 1 afresh and grants the first: a second vote in term 1.
#[test]
fn a_node_that_forgets_its_vote_is_caught_voting_twice() {
    let mut s = sim(5, 1);
    s.horizon = Duration::from_millis(400);
    s.faults = vec![
        Fault::at_ms(150.5, FaultAction::Crash(Selector::Id(NodeId(2)))),
        Fault::at_ms(150.9, FaultAction::Recover(Selector::Id(NodeId(2)))),
    ];
    let mut cfg = RaftConfig::new(5);
    cfg.timeout_max = cfg.timeout_min;

    let (report, log) = run_with(s.clone(), cfg.clone(), false);
    assert_safe(&report, &log, "with stable storage");
    assert_eq!(log.status_at(NodeId(2), ms(151)).unwrap().epoch, Some(1));

    let (_, log) = run_with(s, cfg, true);
    assert_eq!(
        log.double_votes(),
        vec!["node 2 voted for {NodeId(1), NodeId(2)} in term 1"]
    );
}

/// For each follower other than the leader and the rejoining node, the end of its lease
/// after the heal: the last AppendEntries the old leader sent it in its `term`, plus
/// `timeout_min` = 150 ms (it arrives a little later, so the real lease ends later still).
/// Returns how many of them changed term before their lease ended, and how many RequestVotes
/// the rejoining node sent them inside their leases.
fn lease_window(leader: NodeId, follower: NodeId, term: u64, log: &Log) -> (usize, usize) {
    use election_core::Message;
    let (mut changed, mut rv_in_lease) = (0, 0);
    for f in (1..=5)
        .map(NodeId)
        .filter(|&f| f != leader && f != follower)
    {
        let last_ae = log
            .sends
            .iter()
            .filter(|(_, from, to, m)| {
                *from == leader && *to == f && m.kind() == "APPEND_ENTRIES" && m.term() == term
            })
            .map(|(t, ..)| *t)
            .max()
            .unwrap();
        let lease_end = last_ae + Duration::from_millis(150);
        let term = log.status_at(f, ms(HEAL)).unwrap().epoch;
        if log
            .changes(f, ms(HEAL), lease_end)
            .iter()
            .any(|(_, s)| s.epoch != term)
        {
            changed += 1;
        }
        rv_in_lease += log
            .sends
            .iter()
            .filter(|(t, from, to, m)| {
                *from == follower
                    && *to == f
                    && m.kind() == "REQUEST_VOTE"
                    && *t >= ms(HEAL)
                    && *t < lease_end
            })
            .count();
    }
    (changed, rv_in_lease)
}

/// Thesis §4.2.3, leader stickiness (on with CheckQuorum, as in etcd): a follower that heard
/// its leader within the minimum election timeout ignores the rejoining node's RequestVote —
/// its term does not move — where without CheckQuorum the same RequestVote raises it. The
/// rejoining node did send RequestVotes inside those leases (so the check is not vacuous).
///
/// Stickiness does not save the leader, though: its heartbeat reaches the rejoined node,
/// whose answer carries the higher term, and Figure 2's rule ("if RPC request or response
/// contains term T > currentTerm: set currentTerm = T, convert to follower") deposes it. etcd
/// says as much where a follower answers a lower-term heartbeat (raft.go, `Step`: "this
/// disruption is inevitable to free this stuck node with fresh election. This can be prevented
/// with Pre-Vote phase").
#[test]
fn stickiness_stops_a_rejoining_nodes_request_vote_but_not_its_heartbeat_answer() {
    let (mut rv_sticky, mut changed_plain) = (0, 0);
    for seed in 0..8 {
        let what = format!("seed={seed}");
        let (leader, follower, term, report, log) = isolated_follower_with(seed, false, true);
        assert_safe(&report, &log, &what);
        let (changed, rv) = lease_window(leader, follower, term, &log);
        assert_eq!(changed, 0, "{what}: a follower in its lease changed term");
        rv_sticky += rv;
        // Deposed all the same, by the answer to its heartbeat: its first change after the
        // heal adopts the rejoining node's term, within a heartbeat and a round trip.
        let rejoin_term = log.status_at(follower, ms(HEAL)).unwrap().epoch.unwrap();
        assert!(rejoin_term > term + 1, "{what}");
        let (t, st) = log.changes(leader, ms(HEAL), ms(10_000))[0];
        assert_eq!(
            st,
            Status {
                role: Role::Follower,
                leader: None,
                epoch: Some(rejoin_term)
            },
            "{what}"
        );
        assert!(t <= ms(HEAL + 52), "{what}: stepped down at {t}");
        assert!(report.metrics.leader_changes >= 1, "{what}");

        let (leader, follower, term, _, log) = isolated_follower_with(seed, false, false);
        changed_plain += lease_window(leader, follower, term, &log).0;
    }
    assert!(
        rv_sticky > 0,
        "no RequestVote reached a follower in its lease"
    );
    assert!(
        changed_plain > 0,
        "without CheckQuorum the RequestVote raises terms"
    );
}
