//! The scenario catalog, and custom scenarios written in a TOML config.
//!
//! Every scenario starts from a cold start (all nodes boot at 0 ms), lets a leader establish
//! itself, and fires its first fault at the trial's **fault instant**: the drawn instant
//! `fault_at_ms + U[0, fault_jitter_ms]` (drawn per trial from the trial seed, the same for
//! every protocol) or, if the cluster has no quorum leader then, the first instant after it at
//! which it has one, waiting at most `fault_wait_ms`; the whole timeline shifts with it. A
//! trial whose cluster elects no leader within the wait undergoes no fault, and its row says so
//! (`faults_skipped`). The instant the first fault fires is the reference every metric is
//! measured from, unless a custom scenario marks another of its faults `reference = true`: then
//! it is the instant that fault fires (shifted with the timeline), so earlier faults can set the
//! stage. `cold-start` has no fault; its reference is 0.
//!
//! Selectors name nodes by their role *when the fault fires* (the leader, the lowest follower,
//! the k-th lowest follower), resolved by the simulator at that instant, so a Raft leader of any
//! id lands on the side of a partition the scenario names. The rules are the simulator's:
//! [`election_sim::fault`].
//!
//! # The lease store
//!
//! For `lease`, "the leader" is the lease holder, and every scenario above means the same as
//! for the others, with one difference to keep in mind: the store is a service endpoint outside
//! the members' network (an etcd or API server), and partitions split members only. So in
//! `partition-leader-minority` the holder still reaches the store and keeps its lease; the
//! majority side cannot take it, and the minority holder stays the only leader. Members talk
//! through the store, so the observer counts them in one component while the store reaches
//! them all (see `Observer::set_services`): no leader is lost. `leader-pause`
//! (2 × the detection window, 600 ms, against a 150 ms lease) is the seeds' GC-pause story: the
//! holder wakes believing it leads, with a write due, after another member took the lease.
//!
//! The scenarios below name the store (selector `store`) and run only for protocols that
//! have one (the others' cells are skipped and say so):
//!
//! - `store-cut-holder`: the holder's links to and from the store fail for `outage_ms`, then
//!   heal. The holder can no longer renew; it stops leading `retry + renew_deadline` after its
//!   last renewal, before the others may take the lease `duration` after they saw it.
//! - `store-slow`: the store takes `store_slow_ms` more per request for `outage_ms` (an
//!   overloaded API server or a slow etcd disk): requests queue, and once they arrive faster
//!   than it serves them (more members, shorter retries) renewals miss the deadline.
//! - `store-cut-slow-clock-within` / `-beyond`: the holder's clock is slowed to 0.9 (within)
//!   or 0.4 (beyond) of real time; after `detect_timeout_ms`, time for a renewal at the new
//!   rate, it is cut off the store as in `store-cut-holder`. A lease tolerates holder clocks
//!   down to `(retry + renew_deadline) / duration` = 0.8 with the default and the k8s timings:
//!   within it the holder stops before anyone else may take over; beyond it, it keeps
//!   believing it leads, and writing, for `(retry + renew_deadline) / 0.4` = 300 ms after its
//!   last renewal while a new holder took over by ~240 ms: two holders act at once, and only
//!   fencing (the new holder's higher transitions count) keeps the old one's writes out.

use election_core::NodeId;
use election_core::{Rng, RngExt};
use election_sim::{Fault, FaultAction, NodeSet, Selector};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::{usage, Result};
use crate::params::Resolved;

/// The built-in scenarios.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// Everyone boots, no leader.
    ColdStart,
    /// The leader crashes; every follower's detector notices.
    LeaderCrash,
    /// The leader crashes; only the lowest id notices.
    LeaderCrashLowestDetects,
    /// The would-be successor dies mid-election.
    CascadeCrash,
    /// The old leader returns after a new one is elected.
    LeaderRecovers,
    /// Whoever leads crashes and recovers, cycle after cycle.
    FlappingLeader,
    /// The initial leader's node crashes and recovers repeatedly (a flaky NIC).
    FlappingNode,
    /// The leader ends up on the minority side of a partition.
    PartitionLeaderMinority,
    /// The leader stays on the majority side of a partition.
    PartitionLeaderMajority,
    /// The leader's outgoing links fail.
    AsymmetricLeaderOut,
    /// One follower cannot reach the higher ids.
    AsymmetricFollower,
    /// The leader pauses longer than the detection window.
    LeaderPause,
    /// A follower is isolated for several timeouts, then healed.
    FollowerIsolationRejoin,
    /// A leader crash under sustained loss.
    LossyLeaderCrash,
    /// The holder loses the lease store for a while.
    StoreCutHolder,
    /// The lease store serves requests slowly for a while.
    StoreSlow,
    /// The holder's clock runs slow, within the lease's tolerance, and it loses the store.
    StoreCutSlowClockWithin,
    /// The holder's clock runs slow, beyond the lease's tolerance, and it loses the store.
    StoreCutSlowClockBeyond,
    /// Gray: one follower reaches everyone; every other pair is cut (5 nodes).
    QuorumLoss,
    /// Gray: a lagging follower is the only link between the others (5 nodes).
    ConstrainedElection,
    /// Gray: the leader and one follower lose their link; the third reaches both (3 nodes).
    Chained,
    /// Gray: two halves joined only through one node (n >= 5).
    Bridge,
    /// Gray: Howard & Abraham's omission topology, the leader inside the clique (5 nodes).
    LivenessOmission,
    /// Gray: the same topology with the leader one of the poorly connected nodes (5 nodes).
    LivenessOmissionLeaderOut,
    /// Gray: the link between the leader and the lowest follower goes down and up at random.
    FlakyLeaderLink,
    /// Gray: the leader stays alive but answers slow_factor times late.
    SlowLeader,
    /// Gray: the leader crashes, loses its stable storage, and comes back.
    AmnesiaRecover,
    /// No fault: a healthy cluster under background noise for `steady_ms` (issue #17).
    SteadyNoise,
}

/// Every built-in scenario, in catalog order.
pub const BUILTINS: [Builtin; 28] = [
    Builtin::ColdStart,
    Builtin::LeaderCrash,
    Builtin::LeaderCrashLowestDetects,
    Builtin::CascadeCrash,
    Builtin::LeaderRecovers,
    Builtin::FlappingLeader,
    Builtin::FlappingNode,
    Builtin::PartitionLeaderMinority,
    Builtin::PartitionLeaderMajority,
    Builtin::AsymmetricLeaderOut,
    Builtin::AsymmetricFollower,
    Builtin::LeaderPause,
    Builtin::FollowerIsolationRejoin,
    Builtin::LossyLeaderCrash,
    Builtin::StoreCutHolder,
    Builtin::StoreSlow,
    Builtin::StoreCutSlowClockWithin,
    Builtin::StoreCutSlowClockBeyond,
    Builtin::QuorumLoss,
    Builtin::ConstrainedElection,
    Builtin::Chained,
    Builtin::Bridge,
    Builtin::LivenessOmission,
    Builtin::LivenessOmissionLeaderOut,
    Builtin::FlakyLeaderLink,
    Builtin::SlowLeader,
    Builtin::AmnesiaRecover,
    Builtin::SteadyNoise,
];

/// The gray-failure scenarios (partial partitions, flaky links, slow and amnesiac nodes), in
/// catalog order: not in the default sweep, swept by `results/gray`.
pub const GRAY: [Builtin; 9] = [
    Builtin::QuorumLoss,
    Builtin::ConstrainedElection,
    Builtin::Chained,
    Builtin::Bridge,
    Builtin::LivenessOmission,
    Builtin::LivenessOmissionLeaderOut,
    Builtin::FlakyLeaderLink,
    Builtin::SlowLeader,
    Builtin::AmnesiaRecover,
];

/// The steady-state scenarios (no fault; an hour of a healthy cluster under noise): not part of
/// `all`, run by `election-bench tune`.
pub const STEADY: [Builtin; 1] = [Builtin::SteadyNoise];

/// Node `k` of a topology given by position (1..=n): position n is the quorum leader at the
/// reference instant (the first fault) and positions 1..n-1 the other nodes in id order, fixed
/// for the whole trial even if leadership moves between the faults that build the topology. For
/// a bully or ring cluster, whose leader is the highest id, position k is node k.
pub fn position(k: u32, n: u32) -> Selector {
    if k == n {
        Selector::InitialLeader
    } else {
        Selector::KthInitialFollower(k)
    }
}

/// The one-way links, both directions of every pair `(a, b)` of positions, as selectors.
fn both_ways(pairs: &[(u32, u32)], n: u32) -> Vec<(Selector, Selector)> {
    pairs
        .iter()
        .flat_map(|&(a, b)| {
            let (x, y) = (position(a, n), position(b, n));
            [(x, y), (y, x)]
        })
        .collect()
}

/// Every unordered pair of positions `1..=n` that `keep` does not list: what a topology that
/// keeps only `keep` cuts.
fn all_but(keep: &[(u32, u32)], n: u32) -> Vec<(u32, u32)> {
    let kept = |a: u32, b: u32| {
        keep.iter()
            .any(|&(x, y)| (x, y) == (a, b) || (y, x) == (a, b))
    };
    (1..=n)
        .flat_map(|a| (a + 1..=n).map(move |b| (a, b)))
        .filter(|&(a, b)| !kept(a, b))
        .collect()
}

/// The holder's clock rate in `store-cut-slow-clock-within`: inside the 0.8 a lease tolerates.
pub const CLOCK_RATE_WITHIN: f64 = 0.9;
/// The holder's clock rate in `store-cut-slow-clock-beyond`: far outside it.
pub const CLOCK_RATE_BEYOND: f64 = 0.4;

impl Builtin {
    /// The scenario's name.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::ColdStart => "cold-start",
            Builtin::LeaderCrash => "leader-crash",
            Builtin::LeaderCrashLowestDetects => "leader-crash-lowest-detects",
            Builtin::CascadeCrash => "cascade-crash",
            Builtin::LeaderRecovers => "leader-recovers",
            Builtin::FlappingLeader => "flapping-leader",
            Builtin::FlappingNode => "flapping-node",
            Builtin::PartitionLeaderMinority => "partition-leader-minority",
            Builtin::PartitionLeaderMajority => "partition-leader-majority",
            Builtin::AsymmetricLeaderOut => "asymmetric-leader-out",
            Builtin::AsymmetricFollower => "asymmetric-follower",
            Builtin::LeaderPause => "leader-pause",
            Builtin::FollowerIsolationRejoin => "follower-isolation-rejoin",
            Builtin::LossyLeaderCrash => "lossy-leader-crash",
            Builtin::StoreCutHolder => "store-cut-holder",
            Builtin::StoreSlow => "store-slow",
            Builtin::StoreCutSlowClockWithin => "store-cut-slow-clock-within",
            Builtin::StoreCutSlowClockBeyond => "store-cut-slow-clock-beyond",
            Builtin::QuorumLoss => "quorum-loss",
            Builtin::ConstrainedElection => "constrained-election",
            Builtin::Chained => "chained",
            Builtin::Bridge => "bridge",
            Builtin::LivenessOmission => "liveness-omission",
            Builtin::LivenessOmissionLeaderOut => "liveness-omission-leader-out",
            Builtin::FlakyLeaderLink => "flaky-leader-link",
            Builtin::SlowLeader => "slow-leader",
            Builtin::AmnesiaRecover => "amnesia-recover",
            Builtin::SteadyNoise => "steady-noise",
        }
    }

    /// One line on what the scenario does and shows.
    pub fn about(self) -> &'static str {
        match self {
            Builtin::ColdStart => "every node boots at 0 ms with no leader; time to the first quorum leader",
            Builtin::LeaderCrash => "the leader crashes; every follower's own detector notices, with the configured jitter",
            Builtin::LeaderCrashLowestDetects => "the leader crashes and only the lowest id notices (every detector off; the lowest is made to suspect after detect_timeout_ms, then its own detector is back on for retries): the bully's worst case, a single initiator elsewhere",
            Builtin::CascadeCrash => "as leader-crash-lowest-detects, then the highest live node (the would-be successor) crashes cascade_delay_ms into the election, after it answered",
            Builtin::LeaderRecovers => "the leader crashes and comes back outage_ms later, after a new leader was elected: does it take over again?",
            Builtin::FlappingLeader => "whoever leads at each cycle crashes and recovers, `flaps` times (down flap_down_ms, up flap_up_ms): the cost of losing the leader again and again",
            Builtin::FlappingNode => "the node that led at the fault instant crashes and recovers `flaps` times (down flap_down_ms, up flap_up_ms), whatever it is doing: a flaky node, and the churn its returns cause",
            Builtin::PartitionLeaderMinority => "the leader and the lowest followers, floor((n-1)/2) nodes in all, are cut off from the majority; heals after outage_ms",
            Builtin::PartitionLeaderMajority => "the floor((n-1)/2) lowest followers are cut off from the leader's majority; heals after outage_ms",
            Builtin::AsymmetricLeaderOut => "the leader's outgoing links fail for good while it still receives: a half-dead leader",
            Builtin::AsymmetricFollower => "the lowest follower can no longer reach any higher id while they still reach it, then the leader crashes",
            Builtin::LeaderPause => "the leader stops the world for pause_ms (longer than the detection window), then resumes with its stale backlog",
            Builtin::FollowerIsolationRejoin => "the lowest follower is cut off from everyone for outage_ms (several timeouts), then healed: does its return disturb the leader?",
            Builtin::LossyLeaderCrash => "message loss rises to fault_loss and the leader crashes; the loss lasts to the end of the trial",
            Builtin::StoreCutHolder => "lease store only: the holder's links to and from the store fail for outage_ms, then heal; the holder must stop leading before anyone else may take the lease",
            Builtin::StoreSlow => "lease store only: the store takes store_slow_ms more per request for outage_ms; requests queue, and past its capacity renewals miss the deadline",
            Builtin::StoreCutSlowClockWithin => "lease store only: the holder's clock slows to 0.9 of real time (within the 0.8 a lease tolerates), then after detect_timeout_ms it loses the store for outage_ms: no two holders",
            Builtin::StoreCutSlowClockBeyond => "lease store only: the holder's clock slows to 0.4 of real time (beyond the 0.8 a lease tolerates), then after detect_timeout_ms it loses the store for outage_ms: two holders act at once, and fencing decides whether the old one's writes land",
            Builtin::QuorumLoss => "5 nodes, by position (1-4 the followers in id order, 5 the leader): follower 1 keeps its links to everyone, every other pair is cut both ways, to the end of the trial; only 1 can reach a majority",
            Builtin::ConstrainedElection => "5 nodes, by position (Omni-Paxos, EuroSys '23): follower 1's links to and from the leader (5) are delayed by half an election timeout (detect_timeout_ms / 2) for outage_ms, so it falls behind in the log (with workload.commit = majority) without ever suspecting the leader; then followers 2-4 keep only their link to 1 and the leader is cut from them too, to the end: only the lagging 1 reaches a majority",
            Builtin::Chained => "3 nodes, by position: the leader (3) and follower 1 lose their link both ways, to the end; follower 2 still reaches both",
            Builtin::Bridge => "n >= 5, by position: follower 1 is the bridge; the leader with followers 2..=ceil((n-1)/2) and the other followers are cut from each other both ways, to the end; only the bridge reaches both halves",
            Builtin::LivenessOmission => "5 nodes, by position (Howard & Abraham 2020): the leader (5), 1 and 2 fully connected; 3 reaches only 2; 4 reaches only the leader; every other pair cut both ways, to the end. The leader keeps a direct majority (1, 2, 4): plain Raft's 3 keeps deposing it, PreVote + CheckQuorum keeps it",
            Builtin::LivenessOmissionLeaderOut => "5 nodes, by position: the same topology with the leader (5) as a poorly connected node: 1, 2, 3 fully connected; 4 reaches only 2; the leader reaches only 3; every other pair cut both ways, to the end. The leader has lost its majority and a new one must be elected inside the clique",
            Builtin::FlakyLeaderLink => "the link between the leader and the lowest follower goes down and up again, `flaps` times, both ways; each down time is U[0.5, 1.5] x flap_down_ms and each up time U[0.5, 1.5] x flap_up_ms, drawn per trial",
            Builtin::SlowLeader => "the leader stays alive but slow, to the end: its processing time and the latency of every message it sends are multiplied by slow_factor",
            Builtin::AmnesiaRecover => "the leader crashes, loses its stable storage (a replaced disk) and comes back outage_ms later as a blank node (on_start with nothing persisted)",
            Builtin::SteadyNoise => "no fault: a healthy cluster runs for steady_ms (an hour) after the fault instant under the noise.* background noise (GC pauses, disk stalls, latency spikes; none unless set); every entry into the leader role there (leader_changes) is an election nobody needed",
        }
    }

    /// The one cluster size a fixed topology is defined for, if it is.
    pub fn exact_nodes(self) -> Option<u32> {
        match self {
            Builtin::QuorumLoss
            | Builtin::ConstrainedElection
            | Builtin::LivenessOmission
            | Builtin::LivenessOmissionLeaderOut => Some(5),
            Builtin::Chained => Some(3),
            _ => None,
        }
    }

    /// Does the scenario act on a service endpoint (the lease store)?
    pub fn needs_store(self) -> bool {
        matches!(
            self,
            Builtin::StoreCutHolder
                | Builtin::StoreSlow
                | Builtin::StoreCutSlowClockWithin
                | Builtin::StoreCutSlowClockBeyond
        )
    }

    /// The smallest cluster the scenario makes sense for, and why.
    pub fn min_nodes(self) -> (u32, &'static str) {
        match self {
            Builtin::Bridge => (5, "two halves of at least two nodes each, plus the bridge"),
            Builtin::ColdStart | Builtin::SteadyNoise => (1, ""),
            Builtin::CascadeCrash => (3, "it crashes two nodes and needs one left to elect"),
            Builtin::PartitionLeaderMinority | Builtin::PartitionLeaderMajority => (
                3,
                "a partition with a minority side of floor((n-1)/2) >= 1 nodes needs at least 3",
            ),
            Builtin::AsymmetricFollower | Builtin::FollowerIsolationRejoin => (
                3,
                "it needs a follower besides the leader and one more node",
            ),
            _ => (
                2,
                "it takes the leader away and needs another node to elect",
            ),
        }
    }

    fn faults(self, n: u32, r: &Resolved, t: f64, rng: &mut Rng) -> Vec<Fault> {
        use FaultAction::*;
        let at = Fault::at_ms;
        let minority = (n - 1) / 2;
        // The k lowest followers (live nodes other than the leader when the fault fires).
        let lowest_followers = |k: u32| (1..=k).map(Selector::KthLowestFollower);
        let lowest_follower = Selector::KthLowestFollower(1);
        match self {
            Builtin::ColdStart | Builtin::SteadyNoise => vec![],
            Builtin::LeaderCrash => vec![at(t, Crash(Selector::Leader))],
            Builtin::LeaderCrashLowestDetects => vec![
                at(
                    t,
                    Detection {
                        nodes: NodeSet::All,
                        enabled: false,
                    },
                ),
                at(t, Crash(Selector::Leader)),
                at(t + r.detect_timeout_ms, Suspect(Selector::Lowest)),
                // From then on the lowest node's own detector works again, so an election it
                // started but could not finish (a PreVote refused by followers that heard the
                // leader moments before the crash) is retried as it would be in a real cluster.
                at(
                    t + r.detect_timeout_ms,
                    Detection {
                        nodes: NodeSet::One(Selector::Lowest),
                        enabled: true,
                    },
                ),
            ],
            Builtin::CascadeCrash => {
                let mut f = Builtin::LeaderCrashLowestDetects.faults(n, r, t, rng);
                f.push(at(
                    t + r.detect_timeout_ms + r.cascade_delay_ms,
                    Crash(Selector::Highest),
                ));
                f
            }
            Builtin::LeaderRecovers => vec![
                at(t, Crash(Selector::Leader)),
                at(t + r.outage_ms, Recover(Selector::LastCrashed)),
            ],
            Builtin::FlappingLeader | Builtin::FlappingNode => {
                let (down, up) = if self == Builtin::FlappingLeader {
                    (Selector::Leader, Selector::LastCrashed)
                } else {
                    (Selector::InitialLeader, Selector::InitialLeader)
                };
                let period = r.flap_down_ms + r.flap_up_ms;
                (0..r.flaps)
                    .flat_map(|k| {
                        let c = t + k as f64 * period;
                        [at(c, Crash(down)), at(c + r.flap_down_ms, Recover(up))]
                    })
                    .collect()
            }
            Builtin::PartitionLeaderMinority | Builtin::PartitionLeaderMajority => {
                let side: Vec<Selector> = if self == Builtin::PartitionLeaderMinority {
                    std::iter::once(Selector::Leader)
                        .chain(lowest_followers(minority - 1))
                        .collect()
                } else {
                    lowest_followers(minority).collect()
                };
                vec![
                    at(t, Partition(vec![side, vec![Selector::Rest]])),
                    at(t + r.outage_ms, Heal),
                ]
            }
            Builtin::AsymmetricLeaderOut => vec![at(
                t,
                CutLink {
                    from: NodeSet::One(Selector::Leader),
                    to: NodeSet::AllExcept(Selector::Leader),
                },
            )],
            Builtin::AsymmetricFollower => vec![
                at(
                    t,
                    CutLink {
                        from: NodeSet::One(lowest_follower),
                        to: NodeSet::Above(lowest_follower),
                    },
                ),
                at(t, Crash(Selector::Leader)),
            ],
            Builtin::LeaderPause => vec![at(
                t,
                Pause {
                    node: Selector::Leader,
                    ms: r.pause_ms,
                },
            )],
            Builtin::FollowerIsolationRejoin => {
                vec![at(t, Isolate(lowest_follower)), at(t + r.outage_ms, Heal)]
            }
            Builtin::LossyLeaderCrash => {
                vec![at(t, SetLoss(r.fault_loss)), at(t, Crash(Selector::Leader))]
            }
            Builtin::StoreCutHolder => {
                let mut f = cut_store(t);
                f.push(at(t + r.outage_ms, Heal));
                f
            }
            Builtin::StoreSlow => vec![
                at(
                    t,
                    Slow {
                        node: STORE,
                        factor: 1.0,
                        ms: r.store_slow_ms,
                    },
                ),
                at(
                    t + r.outage_ms,
                    Slow {
                        node: STORE,
                        factor: 1.0,
                        ms: 0.0,
                    },
                ),
            ],
            Builtin::StoreCutSlowClockWithin | Builtin::StoreCutSlowClockBeyond => {
                let rate = if self == Builtin::StoreCutSlowClockWithin {
                    CLOCK_RATE_WITHIN
                } else {
                    CLOCK_RATE_BEYOND
                };
                let cut = t + r.detect_timeout_ms;
                let mut f = vec![at(
                    t,
                    ClockRate {
                        node: Selector::Leader,
                        ppm: (rate - 1.0) * 1e6,
                    },
                )];
                f.extend(cut_store(cut));
                f.push(at(cut + r.outage_ms, Heal));
                f
            }
            Builtin::QuorumLoss
            | Builtin::Chained
            | Builtin::Bridge
            | Builtin::LivenessOmission
            | Builtin::LivenessOmissionLeaderOut
            | Builtin::ConstrainedElection => {
                let cut = |pairs: Vec<(u32, u32)>| Links {
                    pairs: both_ways(&pairs, n),
                    up: false,
                };
                match self {
                    Builtin::ConstrainedElection => {
                        let delay = |from: u32, to: u32| LinkDelay {
                            from: NodeSet::One(position(from, n)),
                            to: NodeSet::One(position(to, n)),
                            ms: r.detect_timeout_ms / 2.0,
                        };
                        vec![
                            at(t, delay(1, n)),
                            at(t, delay(n, 1)),
                            at(t + r.outage_ms, cut(self.cut_pairs(n))),
                        ]
                    }
                    _ => vec![at(t, cut(self.cut_pairs(n)))],
                }
            }
            Builtin::FlakyLeaderLink => {
                let pair = both_ways(&[(1, n)], n);
                let mut c = t;
                let mut f = Vec::new();
                for _ in 0..r.flaps {
                    let down = r.flap_down_ms * (0.5 + draw_ms(rng, 1.0));
                    let up = r.flap_up_ms * (0.5 + draw_ms(rng, 1.0));
                    f.push(at(
                        c,
                        Links {
                            pairs: pair.clone(),
                            up: false,
                        },
                    ));
                    f.push(at(
                        c + down,
                        Links {
                            pairs: pair.clone(),
                            up: true,
                        },
                    ));
                    c += down + up;
                }
                f
            }
            Builtin::SlowLeader => vec![at(
                t,
                Slow {
                    node: Selector::Leader,
                    factor: f64::from(r.slow_factor),
                    ms: 0.0,
                },
            )],
            Builtin::AmnesiaRecover => vec![
                at(t, Crash(Selector::Leader)),
                at(t, Amnesia(Selector::LastCrashed)),
                at(t + r.outage_ms, Recover(Selector::LastCrashed)),
            ],
        }
    }

    /// The pairs of positions a fixed partial partition cuts (both ways), for the scenarios
    /// that are one topology; empty for the others. With [`Builtin::ConstrainedElection`], the
    /// final topology.
    pub fn cut_pairs(self, n: u32) -> Vec<(u32, u32)> {
        match self {
            // Follower 1 is the hub.
            Builtin::QuorumLoss => all_but(&(2..=n).map(|b| (1, b)).collect::<Vec<_>>(), n),
            Builtin::ConstrainedElection => all_but(&[(1, 2), (1, 3), (1, 4)], n),
            Builtin::Chained => vec![(1, n)],
            Builtin::Bridge => {
                let leader_half: Vec<u32> =
                    std::iter::once(n).chain(2..=(n - 1).div_ceil(2)).collect();
                let other: Vec<u32> = ((n - 1).div_ceil(2) + 1..n).collect();
                leader_half
                    .iter()
                    .flat_map(|&a| other.iter().map(move |&b| (a.min(b), a.max(b))))
                    .collect()
            }
            Builtin::LivenessOmission => all_but(&[(1, 2), (1, 5), (2, 5), (2, 3), (4, 5)], n),
            Builtin::LivenessOmissionLeaderOut => {
                all_but(&[(1, 2), (1, 3), (2, 3), (2, 4), (3, 5)], n)
            }
            _ => Vec::new(),
        }
    }
}

/// The lease store: the first service endpoint.
const STORE: Selector = Selector::Service(1);

/// The holder's links to and from the store fail at `t`.
fn cut_store(t: f64) -> Vec<Fault> {
    vec![
        Fault::at_ms(
            t,
            FaultAction::CutLink {
                from: NodeSet::One(Selector::Leader),
                to: NodeSet::One(STORE),
            },
        ),
        Fault::at_ms(
            t,
            FaultAction::CutLink {
                from: NodeSet::One(STORE),
                to: NodeSet::One(Selector::Leader),
            },
        ),
    ]
}

/// A node selector of a custom scenario: the simulator's, resolved when the action fires.
pub type Sel = Selector;

/// A node set of a custom scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelSet {
    /// One node.
    One(Sel),
    /// Every node.
    All,
    /// Every node but one.
    AllExcept(Sel),
    /// Every node above one.
    Above(Sel),
    /// Every node below one.
    Below(Sel),
}

/// A custom fault action (the simulator's, with [`Sel`] selectors).
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Crash.
    Crash(Sel),
    /// Recover.
    Recover(Sel),
    /// Pause for `ms`.
    Pause(Sel, f64),
    /// Partition into groups.
    Partition(Vec<Vec<Sel>>),
    /// Cut one-way links.
    CutLink(SelSet, SelSet),
    /// Isolate.
    Isolate(Sel),
    /// Heal every link.
    Heal,
    /// Set the loss probability.
    SetLoss(f64),
    /// Force suspicion.
    Suspect(Sel),
    /// Switch automatic detection.
    Detection(SelSet, bool),
    /// Cut nodes off the shared resource.
    CutResource(SelSet),
    /// A node's clock jumps by this many ms.
    ClockJump(Sel, f64),
    /// A node's clock runs at this rate error (ppm) from now on.
    ClockRate(Sel, f64),
    /// These one-way links go down (`false`) or up (`true`).
    Links(Vec<(Sel, Sel)>, bool),
    /// Loss probability on the one-way links from one set to another.
    LinkLoss(SelSet, SelSet, f64),
    /// Extra latency (ms) on the one-way links from one set to another.
    LinkDelay(SelSet, SelSet, f64),
    /// A slow node: its factor and its extra ms per input.
    Slow(Sel, f64, f64),
    /// A crashed node loses its stable storage.
    Amnesia(Sel),
}

/// One fault of a custom scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomFault {
    /// Offset from the fault instant, ms.
    pub at_ms: f64,
    /// A further random offset U[0, jitter_ms], drawn per trial.
    pub jitter_ms: f64,
    /// What happens.
    pub action: Action,
    /// The reference instant is when this fault fires (at most one fault of a scenario).
    pub reference: bool,
}

/// A scenario written in a config file.
#[derive(Clone, Debug, PartialEq)]
pub struct Custom {
    /// Its name.
    pub name: String,
    /// One line on what it shows.
    pub about: String,
    /// Its faults, in list order.
    pub faults: Vec<CustomFault>,
    /// The definition as written, for the manifest.
    pub source: Value,
    /// The one cluster size it is defined for, if any (an `explore` pattern).
    pub exact_nodes: Option<u32>,
}

/// A scenario: built in or custom.
#[derive(Clone, Debug, PartialEq)]
pub enum Scenario {
    /// From the catalog.
    Builtin(Builtin),
    /// From a config file.
    Custom(Custom),
}

/// The selector syntax, for error messages.
pub const SELECTOR_SYNTAX: &str =
    "leader | initial_leader | highest | lowest | random | last_crashed | rest | store | \
lowest_follower | highest_follower | kth_highest:K | kth_lowest:K | kth_lowest_follower:K | \
kth_highest_follower:K | initial_follower | kth_initial_follower:K | id:K";

/// The node-set syntax, for error messages.
pub const SET_SYNTAX: &str =
    "all | SELECTOR | all_except:SELECTOR | above:SELECTOR | below:SELECTOR";

fn parse_sel(s: &str) -> Result<Sel> {
    let s = s.trim();
    let num = |v: &str| -> Result<u32> {
        match v.trim().parse::<u32>() {
            Ok(k) if k >= 1 => Ok(k),
            _ => usage!("selector {s:?}: {v:?} is not a whole number >= 1"),
        }
    };
    Ok(match s {
        "leader" => Selector::Leader,
        "highest" => Selector::Highest,
        "lowest" => Selector::Lowest,
        "random" => Selector::Random,
        "last_crashed" => Selector::LastCrashed,
        "initial_leader" => Selector::InitialLeader,
        "rest" => Selector::Rest,
        "store" => STORE,
        "lowest_follower" => Selector::KthLowestFollower(1),
        "highest_follower" => Selector::KthHighestFollower(1),
        "initial_follower" => Selector::KthInitialFollower(1),
        _ => match s.split_once(':') {
            Some(("kth_highest", k)) => Selector::KthHighest(num(k)?),
            Some(("kth_lowest", k)) => Selector::KthLowest(num(k)?),
            Some(("kth_lowest_follower", k)) => Selector::KthLowestFollower(num(k)?),
            Some(("kth_highest_follower", k)) => Selector::KthHighestFollower(num(k)?),
            Some(("kth_initial_follower", k)) => Selector::KthInitialFollower(num(k)?),
            Some(("id", k)) => Selector::Id(NodeId(num(k)?)),
            _ => return usage!("unknown node selector {s:?}; valid: {SELECTOR_SYNTAX}"),
        },
    })
}

fn parse_set(s: &str) -> Result<SelSet> {
    let s = s.trim();
    Ok(match s {
        "all" => SelSet::All,
        _ => match s.split_once(':') {
            Some(("all_except", v)) => SelSet::AllExcept(parse_sel(v)?),
            Some(("above", v)) => SelSet::Above(parse_sel(v)?),
            Some(("below", v)) => SelSet::Below(parse_sel(v)?),
            _ => match parse_sel(s) {
                Ok(sel) => SelSet::One(sel),
                Err(_) => return usage!("unknown node set {s:?}; valid: {SET_SYNTAX}"),
            },
        },
    })
}

/// A custom scenario as written in TOML (`[scenarios.NAME]`).
#[derive(Clone, Debug, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioDef {
    /// One line on what it shows.
    #[serde(default)]
    pub about: String,
    /// The faults.
    pub faults: Vec<FaultDef>,
}

/// One fault as written in TOML.
#[derive(Clone, Debug, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct FaultDef {
    /// Offset from the fault instant, ms.
    pub at_ms: f64,
    /// Extra random offset U[0, jitter_ms].
    #[serde(default)]
    pub jitter_ms: f64,
    /// `crash`, `recover`, `pause`, `partition`, `cut_link`, `isolate`, `heal`, `set_loss`,
    /// `suspect` or `detection`.
    pub action: String,
    /// The node (crash, recover, pause, isolate, suspect).
    pub node: Option<String>,
    /// The nodes (detection).
    pub nodes: Option<String>,
    /// Senders (cut_link).
    pub from: Option<String>,
    /// Receivers (cut_link).
    pub to: Option<String>,
    /// Groups (partition).
    pub groups: Option<Vec<Vec<String>>>,
    /// Pause length (pause).
    pub ms: Option<f64>,
    /// Loss probability (set_loss).
    pub loss: Option<f64>,
    /// On or off (detection).
    pub enabled: Option<bool>,
    /// Clock rate error in parts per million (clock_rate).
    pub ppm: Option<f64>,
    /// One-way links `[from, to]` (links).
    pub pairs: Option<Vec<[String; 2]>>,
    /// Up or down (links).
    pub up: Option<bool>,
    /// Slow-down factor (slow).
    pub factor: Option<f64>,
    /// Measure from the instant this fault fires instead of the first fault's (at most one
    /// fault of a scenario).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reference: bool,
}

/// The custom fault actions, for error messages.
pub const ACTIONS: &str = "crash, recover, pause, partition, cut_link, isolate, heal, set_loss, \
suspect, detection, cut_resource, clock_jump, clock_rate, links, link_loss, link_delay, slow, amnesia";

impl Custom {
    /// Check a TOML definition and build the scenario.
    pub fn from_def(name: &str, def: &ScenarioDef) -> Result<Custom> {
        crate::config::check_name("scenario", name)?;
        if Scenario::builtin(name).is_some() {
            return usage!("scenario {name:?}: a built-in scenario has that name");
        }
        if def.faults.is_empty() {
            return usage!("scenario {name:?}: needs at least one fault");
        }
        let mut faults = Vec::new();
        let mut reference: Option<usize> = None;
        for (i, f) in def.faults.iter().enumerate() {
            let ctx = format!("scenario {name:?} faults[{i}]");
            if f.reference {
                if let Some(first) = reference {
                    return usage!(
                        "{ctx}: reference = true, but faults[{first}] is already the reference; \
                         at most one fault of a scenario is the reference instant"
                    );
                }
                reference = Some(i);
            }
            let need = |field: &Option<String>, fname: &str| -> Result<String> {
                match field {
                    Some(v) => Ok(v.clone()),
                    None => usage!("{ctx}: action {:?} needs `{fname}`", f.action),
                }
            };
            if !(f.at_ms.is_finite() && f.at_ms >= 0.0 && f.at_ms <= crate::params::MAX_MS) {
                return usage!(
                    "{ctx}: at_ms = {}: expected milliseconds >= 0 (at most 1e12) after the \
                     scenario's fault instant; a fault before it would compress the timeline",
                    f.at_ms
                );
            }
            if !(f.jitter_ms.is_finite()
                && f.jitter_ms >= 0.0
                && f.jitter_ms <= crate::params::MAX_MS)
            {
                return usage!(
                    "{ctx}: jitter_ms = {}: expected milliseconds >= 0 (at most 1e12)",
                    f.jitter_ms
                );
            }
            let action = match f.action.as_str() {
                "crash" => Action::Crash(parse_sel(&need(&f.node, "node")?)?),
                "recover" => Action::Recover(parse_sel(&need(&f.node, "node")?)?),
                "isolate" => Action::Isolate(parse_sel(&need(&f.node, "node")?)?),
                "suspect" => Action::Suspect(parse_sel(&need(&f.node, "node")?)?),
                "pause" => match f.ms {
                    Some(ms) if ms.is_finite() && ms >= 0.0 => {
                        Action::Pause(parse_sel(&need(&f.node, "node")?)?, ms)
                    }
                    _ => return usage!("{ctx}: pause needs `ms` >= 0"),
                },
                "heal" => Action::Heal,
                "set_loss" => match f.loss {
                    Some(p) if (0.0..=1.0).contains(&p) => Action::SetLoss(p),
                    _ => return usage!("{ctx}: set_loss needs `loss` in [0, 1]"),
                },
                "detection" => match f.enabled {
                    Some(e) => Action::Detection(parse_set(&need(&f.nodes, "nodes")?)?, e),
                    None => return usage!("{ctx}: detection needs `enabled`"),
                },
                "cut_resource" => Action::CutResource(parse_set(&need(&f.nodes, "nodes")?)?),
                "clock_jump" => match f.ms {
                    Some(ms) if ms.is_finite() && ms.abs() <= 1e12 => {
                        Action::ClockJump(parse_sel(&need(&f.node, "node")?)?, ms)
                    }
                    _ => {
                        return usage!(
                            "{ctx}: clock_jump needs `ms`, finite, at most 1e12 either way"
                        )
                    }
                },
                "clock_rate" => match f.ppm {
                    Some(ppm) if ppm.is_finite() && ppm > -1e6 && ppm <= 1e6 => {
                        Action::ClockRate(parse_sel(&need(&f.node, "node")?)?, ppm)
                    }
                    _ => {
                        return usage!(
                            "{ctx}: clock_rate needs `ppm` above -1000000 and at most 1000000"
                        )
                    }
                },
                "links" => {
                    let (Some(pairs), Some(up)) = (&f.pairs, f.up) else {
                        return usage!(
                            "{ctx}: links needs `pairs` (a list of [from, to] selectors) and `up`"
                        );
                    };
                    let pairs = pairs
                        .iter()
                        .map(|[a, b]| Ok((parse_sel(a)?, parse_sel(b)?)))
                        .collect::<Result<Vec<_>>>()?;
                    Action::Links(pairs, up)
                }
                "link_loss" => match f.loss {
                    Some(p) if (0.0..=1.0).contains(&p) => Action::LinkLoss(
                        parse_set(&need(&f.from, "from")?)?,
                        parse_set(&need(&f.to, "to")?)?,
                        p,
                    ),
                    _ => return usage!("{ctx}: link_loss needs `loss` in [0, 1]"),
                },
                "link_delay" => match f.ms {
                    Some(ms) if ms.is_finite() && (0.0..=1e9).contains(&ms) => Action::LinkDelay(
                        parse_set(&need(&f.from, "from")?)?,
                        parse_set(&need(&f.to, "to")?)?,
                        ms,
                    ),
                    _ => return usage!("{ctx}: link_delay needs `ms` in [0, 1e9]"),
                },
                "slow" => {
                    let factor = f.factor.unwrap_or(1.0);
                    let ms = f.ms.unwrap_or(0.0);
                    if f.factor.is_none() && f.ms.is_none() {
                        return usage!(
                            "{ctx}: slow needs `factor` (in [1, 1e6]) or `ms` (in [0, 1e12]), or both"
                        );
                    }
                    if !(factor.is_finite() && (1.0..=1e6).contains(&factor)) {
                        return usage!("{ctx}: slow `factor` = {factor} must be in [1, 1e6]");
                    }
                    if !(ms.is_finite() && (0.0..=1e12).contains(&ms)) {
                        return usage!("{ctx}: slow `ms` = {ms} must be in [0, 1e12]");
                    }
                    Action::Slow(parse_sel(&need(&f.node, "node")?)?, factor, ms)
                }
                "amnesia" => Action::Amnesia(parse_sel(&need(&f.node, "node")?)?),
                "cut_link" => Action::CutLink(
                    parse_set(&need(&f.from, "from")?)?,
                    parse_set(&need(&f.to, "to")?)?,
                ),
                "partition" => {
                    let Some(groups) = &f.groups else {
                        return usage!("{ctx}: partition needs `groups`");
                    };
                    let groups = groups
                        .iter()
                        .map(|g| g.iter().map(|s| parse_sel(s)).collect::<Result<Vec<_>>>())
                        .collect::<Result<Vec<_>>>()?;
                    Action::Partition(groups)
                }
                other => return usage!("{ctx}: unknown action {other:?}; valid: {ACTIONS}"),
            };
            faults.push(CustomFault {
                at_ms: f.at_ms,
                jitter_ms: f.jitter_ms,
                action,
                reference: f.reference,
            });
        }
        Ok(Custom {
            name: name.to_string(),
            about: if def.about.is_empty() {
                "custom scenario".into()
            } else {
                def.about.clone()
            },
            faults,
            source: serde_json::to_value(def).expect("serializable"),
            exact_nodes: None,
        })
    }

    fn sels(&self) -> impl Iterator<Item = Sel> + '_ {
        let set = |s: &SelSet| match *s {
            SelSet::All => None,
            SelSet::One(x) | SelSet::AllExcept(x) | SelSet::Above(x) | SelSet::Below(x) => Some(x),
        };
        self.faults.iter().flat_map(move |f| -> Vec<Sel> {
            match &f.action {
                Action::Crash(s)
                | Action::Recover(s)
                | Action::Pause(s, _)
                | Action::ClockJump(s, _)
                | Action::ClockRate(s, _)
                | Action::Slow(s, _, _)
                | Action::Isolate(s)
                | Action::Amnesia(s)
                | Action::Suspect(s) => vec![*s],
                Action::Links(pairs, _) => pairs.iter().flat_map(|&(a, b)| [a, b]).collect(),
                Action::LinkLoss(a, b, _) | Action::LinkDelay(a, b, _) => {
                    set(a).into_iter().chain(set(b)).collect()
                }
                Action::Partition(g) => g.iter().flatten().copied().collect(),
                Action::CutLink(a, b) => set(a).into_iter().chain(set(b)).collect(),
                Action::Detection(a, _) | Action::CutResource(a) => set(a).into_iter().collect(),
                Action::Heal | Action::SetLoss(_) => vec![],
            }
        })
    }
}

impl Scenario {
    /// The parameters whose value this scenario replaces during a trial, each with what it
    /// applies instead: `lossy-leader-crash` sets the loss to `fault_loss` at the fault
    /// instant, so a `net.loss` set for the sweep holds only until then. The sweep warns when
    /// a parameter set for it is one of these ([`crate::SweepPlan::warnings`]).
    pub fn overrides(&self) -> Vec<(&'static str, String)> {
        match self {
            Scenario::Builtin(Builtin::LossyLeaderCrash) => vec![(
                "net.loss",
                "fault_loss from the fault instant to the end of the trial".into(),
            )],
            Scenario::Builtin(_) => vec![],
            Scenario::Custom(c) => c
                .faults
                .iter()
                .filter_map(|f| match &f.action {
                    Action::SetLoss(p) => Some((
                        "net.loss",
                        format!("set_loss = {p} at fault instant + {} ms", f.at_ms),
                    )),
                    _ => None,
                })
                .collect(),
        }
    }

    /// A built-in scenario by name.
    pub fn builtin(name: &str) -> Option<Scenario> {
        BUILTINS
            .iter()
            .find(|b| b.name() == name)
            .map(|&b| Scenario::Builtin(b))
    }

    /// The scenario's name.
    pub fn name(&self) -> &str {
        match self {
            Scenario::Builtin(b) => b.name(),
            Scenario::Custom(c) => &c.name,
        }
    }

    /// One line on what it shows.
    pub fn about(&self) -> &str {
        match self {
            Scenario::Builtin(b) => b.about(),
            Scenario::Custom(c) => &c.about,
        }
    }

    /// A steady-state scenario (`steady-noise`): no fault; the trial runs from the fault
    /// instant, its reference, for `steady_ms` and never ends early (see
    /// [`Resolved::for_scenario`](crate::params::Resolved::for_scenario)).
    pub fn steady(&self) -> bool {
        matches!(self, Scenario::Builtin(Builtin::SteadyNoise))
    }

    /// The fault (an index into [`Scenario::faults`]) whose instant is the reference, when it
    /// is not simply the first fault: a custom fault marked `reference = true`.
    pub fn reference_fault(&self) -> Option<usize> {
        match self {
            Scenario::Builtin(_) => None,
            Scenario::Custom(c) => c.faults.iter().position(|f| f.reference),
        }
    }

    /// Does the scenario force a node's failure detector (`suspect`) or switch detection off
    /// (`detection`)? A family without such a detector cannot run it
    /// ([`crate::protocol::Family::detector`]).
    pub fn needs_detector(&self) -> bool {
        match self {
            Scenario::Builtin(b) => matches!(b, Builtin::LeaderCrashLowestDetects),
            Scenario::Custom(c) => c
                .faults
                .iter()
                .any(|f| matches!(f.action, Action::Suspect(_) | Action::Detection(..))),
        }
    }

    /// Why a family without a failure detector a scenario can drive cannot run this scenario,
    /// if it cannot.
    pub fn detector_skip_reason(&self, family: &str) -> Option<String> {
        self.needs_detector().then(|| {
            format!(
                "{} forces or switches off the failure detector, and {family} has none apart from its protocol (an external failure detector is needed)",
                self.name()
            )
        })
    }

    /// Why an `n`-node cluster of a protocol with `services` service endpoints cannot run this
    /// scenario, if it cannot.
    pub fn skip_reason(&self, n: u32, services: u32) -> Option<String> {
        let store = match self {
            Scenario::Builtin(b) => b.needs_store(),
            Scenario::Custom(c) => c.sels().any(|s| matches!(s, Selector::Service(_))),
        };
        if store && services == 0 {
            return Some(format!(
                "{} acts on the lease store, and this protocol has none",
                self.name()
            ));
        }
        match self {
            Scenario::Builtin(b) => {
                if let Some(k) = b.exact_nodes() {
                    return (n != k).then(|| {
                        format!("{} is defined for exactly {k} nodes, not {n}", b.name())
                    });
                }
                let (min, why) = b.min_nodes();
                (n < min).then(|| format!("{} needs at least {min} nodes: {why}", b.name()))
            }
            Scenario::Custom(c) if c.exact_nodes.is_some_and(|k| k != n) => Some(format!(
                "{} is defined for exactly {} nodes, not {n}",
                c.name,
                c.exact_nodes.unwrap_or_default()
            )),
            Scenario::Custom(c) => {
                let need = c
                    .sels()
                    .map(|s| match s {
                        Selector::KthHighest(k) | Selector::KthLowest(k) => k,
                        // The leader plus k followers.
                        Selector::KthLowestFollower(k)
                        | Selector::KthHighestFollower(k)
                        | Selector::KthInitialFollower(k) => k + 1,
                        Selector::Id(id) => id.0,
                        _ => 1,
                    })
                    .max()
                    .unwrap_or(1);
                (n < need).then(|| {
                    format!(
                        "{} needs at least {need} nodes: its selectors name node {need}",
                        c.name
                    )
                })
            }
        }
    }

    /// The fault timeline of one trial of `n` nodes whose drawn fault instant is `t_ms`, in
    /// the trial's time (the simulator may shift it while it waits for a leader). `rng` is the
    /// trial's fault-time stream, already past the draw of `t_ms`, for custom per-fault jitter.
    pub fn faults(&self, n: u32, r: &Resolved, t_ms: f64, rng: &mut Rng) -> Vec<Fault> {
        match self {
            Scenario::Builtin(b) => b.faults(n, r, t_ms, rng),
            Scenario::Custom(c) => {
                let set = |s: SelSet| match s {
                    SelSet::All => NodeSet::All,
                    SelSet::One(x) => NodeSet::One(x),
                    SelSet::AllExcept(x) => NodeSet::AllExcept(x),
                    SelSet::Above(x) => NodeSet::Above(x),
                    SelSet::Below(x) => NodeSet::Below(x),
                };
                c.faults
                    .iter()
                    .map(|f| {
                        let jitter = draw_ms(rng, f.jitter_ms);
                        let action = match &f.action {
                            Action::Crash(s) => FaultAction::Crash(*s),
                            Action::Recover(s) => FaultAction::Recover(*s),
                            Action::Pause(s, ms) => FaultAction::Pause { node: *s, ms: *ms },
                            Action::Partition(g) => FaultAction::Partition(g.clone()),
                            Action::CutLink(a, b) => FaultAction::CutLink {
                                from: set(*a),
                                to: set(*b),
                            },
                            Action::Isolate(s) => FaultAction::Isolate(*s),
                            Action::Heal => FaultAction::Heal,
                            Action::SetLoss(p) => FaultAction::SetLoss(*p),
                            Action::Suspect(s) => FaultAction::Suspect(*s),
                            Action::Detection(a, e) => FaultAction::Detection {
                                nodes: set(*a),
                                enabled: *e,
                            },
                            Action::CutResource(a) => FaultAction::ResourceCut(set(*a)),
                            Action::ClockJump(s, ms) => {
                                FaultAction::ClockJump { node: *s, ms: *ms }
                            }
                            Action::ClockRate(s, ppm) => FaultAction::ClockRate {
                                node: *s,
                                ppm: *ppm,
                            },
                            Action::Links(pairs, up) => FaultAction::Links {
                                pairs: pairs.clone(),
                                up: *up,
                            },
                            Action::LinkLoss(a, b, p) => FaultAction::LinkLoss {
                                from: set(*a),
                                to: set(*b),
                                loss: *p,
                            },
                            Action::LinkDelay(a, b, ms) => FaultAction::LinkDelay {
                                from: set(*a),
                                to: set(*b),
                                ms: *ms,
                            },
                            Action::Slow(s, k, ms) => FaultAction::Slow {
                                node: *s,
                                factor: *k,
                                ms: *ms,
                            },
                            Action::Amnesia(s) => FaultAction::Amnesia(*s),
                        };
                        Fault::at_ms((t_ms + f.at_ms + jitter).max(0.0), action)
                    })
                    .collect()
            }
        }
    }

    /// What the scenario's faults do, read off its fault timeline at 5 nodes (at its minimum
    /// size if larger) under `r`: so a custom scenario and every built-in are classified by
    /// the same rule. The report uses it to call a failover a failover and an outage an outage.
    pub fn kind(&self, r: &Resolved) -> ScenarioKind {
        let n = (5..=64)
            .find(|&n| self.skip_reason(n, 1).is_none())
            .unwrap_or(5);
        let mut rng = <Rng as election_core::SeedableRng>::seed_from_u64(0);
        let mut k = ScenarioKind::default();
        for f in self.faults(n, r, 0.0, &mut rng) {
            if f.action
                .selectors()
                .iter()
                .any(|s| matches!(s, Selector::Service(_)))
            {
                k.touches_services = true;
            }
            match f.action {
                FaultAction::Crash(s) | FaultAction::Pause { node: s, .. } => {
                    if matches!(s, Selector::Leader | Selector::InitialLeader) {
                        k.takes_leader = true;
                    }
                }
                FaultAction::Partition(_)
                | FaultAction::CutLink { .. }
                | FaultAction::Isolate(_)
                | FaultAction::LinkLoss { .. }
                | FaultAction::Links { up: false, .. } => k.cuts_links = true,
                FaultAction::Recover(_) => k.brings_back = true,
                _ => {}
            }
        }
        k
    }

    /// The scenario as the manifest records it.
    pub fn to_json(&self) -> Value {
        match self {
            Scenario::Builtin(b) => json!({ "name": b.name(), "about": b.about() }),
            Scenario::Custom(c) => json!({ "name": c.name, "about": c.about, "custom": c.source }),
        }
    }
}

/// What a scenario's faults do ([`Scenario::kind`]), as the manifest records it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScenarioKind {
    /// A fault crashes or pauses the node that leads when it fires: the scenario has a
    /// failover, and `failover_ms` is the time to replace the leader.
    pub takes_leader: bool,
    /// A fault cuts links (a partition, a one-way cut, an isolation, a partial partition of
    /// single links, loss on some links): the scenario has an outage, and a leader may be
    /// stranded on the wrong side of it.
    pub cuts_links: bool,
    /// A fault reaches a service endpoint (the lease store): only such a scenario's link cuts
    /// can touch a protocol whose members talk to nothing but that endpoint.
    pub touches_services: bool,
    /// A fault brings a crashed node back: the scenario measures churn on return.
    pub brings_back: bool,
}

impl ScenarioKind {
    /// As the manifest records it.
    pub fn to_json(self) -> Value {
        json!({
            "takes_leader": self.takes_leader,
            "cuts_links": self.cuts_links,
            "brings_back": self.brings_back,
            "touches_services": self.touches_services,
        })
    }
}

/// A uniform draw from `[0, max_ms]` at nanosecond resolution (0 without a draw when
/// `max_ms` is 0, so adding a zero jitter does not shift later draws).
pub fn draw_ms(rng: &mut Rng, max_ms: f64) -> f64 {
    let max_ns = (max_ms * 1e6).round() as u64;
    if max_ns == 0 {
        return 0.0;
    }
    rng.random_range(0..=max_ns) as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = BUILTINS.iter().map(|b| b.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), BUILTINS.len());
        for b in BUILTINS {
            assert_eq!(Scenario::builtin(b.name()), Some(Scenario::Builtin(b)));
        }
    }

    #[test]
    fn partitions_name_the_leader_and_its_followers() {
        let lan = crate::net::NetProfile::builtin("lan").unwrap();
        let r = Resolved::resolve(&lan, &Default::default()).unwrap();
        let mut rng = <election_core::Rng as election_core::SeedableRng>::seed_from_u64(0);
        let mut groups = |b: Builtin, n| match &b.faults(n, &r, 1000.0, &mut rng)[0].action {
            FaultAction::Partition(g) => g[0].clone(),
            other => panic!("{other:?}"),
        };
        use Selector::{KthLowestFollower as F, Leader};
        // 7 nodes: minority of 3.
        assert_eq!(
            groups(Builtin::PartitionLeaderMinority, 7),
            vec![Leader, F(1), F(2)]
        );
        assert_eq!(
            groups(Builtin::PartitionLeaderMajority, 7),
            vec![F(1), F(2), F(3)]
        );
        assert_eq!(groups(Builtin::PartitionLeaderMinority, 3), vec![Leader]);
    }

    #[test]
    fn clock_actions_parse_and_are_checked() {
        let def: ScenarioDef = toml::from_str(
            r#"
faults = [
  { at_ms = 0, action = "clock_jump", node = "leader", ms = -250 },
  { at_ms = 0, action = "clock_rate", node = "lowest_follower", ppm = 2000 },
]
"#,
        )
        .unwrap();
        let c = Custom::from_def("clocks", &def).unwrap();
        assert_eq!(
            c.faults[0].action,
            Action::ClockJump(Selector::Leader, -250.0)
        );
        assert_eq!(
            c.faults[1].action,
            Action::ClockRate(Selector::KthLowestFollower(1), 2000.0)
        );
        let bad: ScenarioDef = toml::from_str(
            r#"faults = [{ at_ms = 0, action = "clock_rate", node = "leader", ppm = 2e6 }]"#,
        )
        .unwrap();
        let e = Custom::from_def("bad", &bad).unwrap_err().to_string();
        assert!(e.contains("ppm") && e.contains("faults[0]"), "{e}");
    }

    #[test]
    fn selectors_parse() {
        assert_eq!(parse_sel("kth_highest:2").unwrap(), Selector::KthHighest(2));
        assert_eq!(parse_sel("id:3").unwrap(), Selector::Id(NodeId(3)));
        assert_eq!(
            parse_sel("lowest_follower").unwrap(),
            Selector::KthLowestFollower(1)
        );
        assert_eq!(
            parse_sel("kth_highest_follower:2").unwrap(),
            Selector::KthHighestFollower(2)
        );
        assert!(parse_sel("boss")
            .unwrap_err()
            .to_string()
            .contains("lowest_follower"));
        assert_eq!(
            parse_set("all_except:leader").unwrap(),
            SelSet::AllExcept(Selector::Leader)
        );
        assert!(parse_set("some").is_err());
    }

    /// The faults a one-fault custom scenario written `fields` (a fault's inline table without
    /// `at_ms`) turns into at 7 nodes, with the fault instant at 1000 ms: what the simulator runs.
    fn parsed(fields: &str) -> Result<Vec<Fault>> {
        let def: ScenarioDef = toml::from_str(&format!("faults = [{{ at_ms = 30, {fields} }}]"))
            .map_err(|e| crate::Error::Usage(e.to_string()))?;
        let c = Custom::from_def("table", &def)?;
        let lan = crate::net::NetProfile::builtin("lan").unwrap();
        let r = Resolved::resolve(&lan, &Default::default()).unwrap();
        let mut rng = <Rng as election_core::SeedableRng>::seed_from_u64(0);
        Ok(Scenario::Custom(c).faults(7, &r, 1000.0, &mut rng))
    }

    /// Which fault action, by an exhaustive match: a new one does not compile until it is here,
    /// and then fails [`every_documented_action_parses_into_the_fault_it_documents`] until the
    /// table below writes it.
    fn variant(a: &FaultAction) -> &'static str {
        use FaultAction::*;
        match a {
            Crash(_) => "Crash",
            Recover(_) => "Recover",
            Pause { .. } => "Pause",
            Partition(_) => "Partition",
            CutLink { .. } => "CutLink",
            Isolate(_) => "Isolate",
            ResourceCut(_) => "ResourceCut",
            Links { .. } => "Links",
            LinkLoss { .. } => "LinkLoss",
            LinkDelay { .. } => "LinkDelay",
            Slow { .. } => "Slow",
            Amnesia(_) => "Amnesia",
            Heal => "Heal",
            ClockJump { .. } => "ClockJump",
            ClockRate { .. } => "ClockRate",
            SetLoss(_) => "SetLoss",
            Suspect(_) => "Suspect",
            Detection { .. } => "Detection",
        }
    }

    /// Every custom-scenario action, written as the runner README documents it (its fields,
    /// the knobs a `slow` leaves out meaning their neutral values), parses into the simulator
    /// fault the README says it is, at the fault instant plus its `at_ms`. The table names every
    /// action of [`ACTIONS`] (the list the README and error messages give) and every
    /// [`FaultAction`] variant.
    #[test]
    fn every_documented_action_parses_into_the_fault_it_documents() {
        use FaultAction as F;
        use NodeSet as Set;
        use Selector as S;
        let table: Vec<(&str, FaultAction)> = vec![
            (r#"action = "crash", node = "leader""#, F::Crash(S::Leader)),
            (
                r#"action = "recover", node = "last_crashed""#,
                F::Recover(S::LastCrashed),
            ),
            (
                r#"action = "isolate", node = "lowest_follower""#,
                F::Isolate(S::KthLowestFollower(1)),
            ),
            (
                r#"action = "suspect", node = "lowest""#,
                F::Suspect(S::Lowest),
            ),
            (
                r#"action = "pause", node = "leader", ms = 600"#,
                F::Pause {
                    node: S::Leader,
                    ms: 600.0,
                },
            ),
            (
                r#"action = "partition", groups = [["leader", "kth_lowest_follower:2"], ["id:1"], ["rest"]]"#,
                F::Partition(vec![
                    vec![S::Leader, S::KthLowestFollower(2)],
                    vec![S::Id(NodeId(1))],
                    vec![S::Rest],
                ]),
            ),
            (
                r#"action = "cut_link", from = "leader", to = "all_except:leader""#,
                F::CutLink {
                    from: Set::One(S::Leader),
                    to: Set::AllExcept(S::Leader),
                },
            ),
            (r#"action = "heal""#, F::Heal),
            (r#"action = "set_loss", loss = 0.25"#, F::SetLoss(0.25)),
            (
                r#"action = "detection", nodes = "all", enabled = false"#,
                F::Detection {
                    nodes: Set::All,
                    enabled: false,
                },
            ),
            (
                r#"action = "cut_resource", nodes = "above:id:2""#,
                F::ResourceCut(Set::Above(S::Id(NodeId(2)))),
            ),
            (
                r#"action = "clock_jump", node = "highest", ms = -250"#,
                F::ClockJump {
                    node: S::Highest,
                    ms: -250.0,
                },
            ),
            (
                r#"action = "clock_rate", node = "kth_highest:2", ppm = -600000"#,
                F::ClockRate {
                    node: S::KthHighest(2),
                    ppm: -600_000.0,
                },
            ),
            (
                r#"action = "links", pairs = [["initial_leader", "initial_follower"], ["kth_initial_follower:2", "random"]], up = false"#,
                F::Links {
                    pairs: vec![
                        (S::InitialLeader, S::KthInitialFollower(1)),
                        (S::KthInitialFollower(2), S::Random),
                    ],
                    up: false,
                },
            ),
            (
                r#"action = "link_loss", from = "below:highest", to = "kth_lowest:2", loss = 0.5"#,
                F::LinkLoss {
                    from: Set::Below(S::Highest),
                    to: Set::One(S::KthLowest(2)),
                    loss: 0.5,
                },
            ),
            (
                r#"action = "link_delay", from = "store", to = "all", ms = 40"#,
                F::LinkDelay {
                    from: Set::One(S::Service(1)),
                    to: Set::All,
                    ms: 40.0,
                },
            ),
            (
                r#"action = "slow", node = "store", ms = 5"#,
                F::Slow {
                    node: S::Service(1),
                    factor: 1.0,
                    ms: 5.0,
                },
            ),
            (
                r#"action = "slow", node = "highest_follower", factor = 1000"#,
                F::Slow {
                    node: S::KthHighestFollower(1),
                    factor: 1000.0,
                    ms: 0.0,
                },
            ),
            (
                r#"action = "amnesia", node = "kth_highest_follower:3""#,
                F::Amnesia(S::KthHighestFollower(3)),
            ),
        ];
        let mut names = std::collections::BTreeSet::new();
        let mut variants = std::collections::BTreeSet::new();
        for (fields, want) in &table {
            let faults = parsed(fields).unwrap_or_else(|e| panic!("{fields}: {e}"));
            assert_eq!(faults, [Fault::at_ms(1030.0, want.clone())], "{fields}");
            let name = fields
                .strip_prefix("action = \"")
                .and_then(|s| s.split('"').next())
                .unwrap();
            names.insert(name);
            variants.insert(variant(want));
        }
        let documented: std::collections::BTreeSet<&str> = ACTIONS.split(", ").collect();
        assert_eq!(names, documented);
        let readme = include_str!("../README.md");
        for name in &documented {
            assert!(readme.contains(&format!("`{name}`")), "README: {name}");
        }
        assert_eq!(variants.len(), 18, "{variants:?}");
    }

    /// Every selector and node set of the documented syntax ([`SELECTOR_SYNTAX`],
    /// [`SET_SYNTAX`], `K` = 3) is the simulator's selector it names, in a fault as run.
    #[test]
    fn every_documented_selector_and_node_set_parses_into_its_simulator_form() {
        use Selector as S;
        let selectors = [
            ("leader", S::Leader),
            ("initial_leader", S::InitialLeader),
            ("highest", S::Highest),
            ("lowest", S::Lowest),
            ("random", S::Random),
            ("last_crashed", S::LastCrashed),
            ("rest", S::Rest),
            ("store", S::Service(1)),
            ("lowest_follower", S::KthLowestFollower(1)),
            ("highest_follower", S::KthHighestFollower(1)),
            ("kth_highest:3", S::KthHighest(3)),
            ("kth_lowest:3", S::KthLowest(3)),
            ("kth_lowest_follower:3", S::KthLowestFollower(3)),
            ("kth_highest_follower:3", S::KthHighestFollower(3)),
            ("initial_follower", S::KthInitialFollower(1)),
            ("kth_initial_follower:3", S::KthInitialFollower(3)),
            ("id:3", S::Id(NodeId(3))),
        ];
        let documented: Vec<String> = SELECTOR_SYNTAX
            .split('|')
            .map(|s| s.trim().replace(":K", ":3"))
            .collect();
        assert_eq!(
            selectors.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
            documented
        );
        for (text, want) in selectors {
            let faults = parsed(&format!(
                r#"action = "partition", groups = [["{text}"], ["leader"]]"#
            ))
            .unwrap();
            assert_eq!(
                faults[0].action,
                FaultAction::Partition(vec![vec![want], vec![S::Leader]]),
                "{text}"
            );
        }
        let sets = [
            ("all", NodeSet::All),
            ("leader", NodeSet::One(S::Leader)),
            ("all_except:leader", NodeSet::AllExcept(S::Leader)),
            ("above:leader", NodeSet::Above(S::Leader)),
            ("below:leader", NodeSet::Below(S::Leader)),
        ];
        let documented: Vec<String> = SET_SYNTAX
            .split('|')
            .map(|s| s.trim().replace("SELECTOR", "leader"))
            .collect();
        assert_eq!(sets.iter().map(|(s, _)| *s).collect::<Vec<_>>(), documented);
        for (text, want) in sets {
            let faults = parsed(&format!(
                r#"action = "detection", nodes = "{text}", enabled = true"#
            ))
            .unwrap();
            assert_eq!(
                faults[0].action,
                FaultAction::Detection {
                    nodes: want,
                    enabled: true
                },
                "{text}"
            );
        }
    }

    /// What the README says a fault is refused for, it is refused for, naming the field.
    #[test]
    fn documented_limits_are_refused_by_field() {
        for (fields, says) in [
            (r#"action = "crash""#, "`node`"),
            (r#"action = "pause", node = "leader""#, "`ms`"),
            (r#"action = "partition""#, "`groups`"),
            (r#"action = "cut_link", from = "leader""#, "`to`"),
            (r#"action = "set_loss", loss = 1.5"#, "`loss`"),
            (r#"action = "detection", nodes = "all""#, "`enabled`"),
            (
                r#"action = "clock_rate", node = "leader", ppm = -1000000"#,
                "`ppm`",
            ),
            (
                r#"action = "links", pairs = [["leader", "lowest"]]"#,
                "`up`",
            ),
            (
                r#"action = "link_delay", from = "all", to = "all", ms = -1"#,
                "`ms`",
            ),
            (r#"action = "slow", node = "leader""#, "`factor`"),
            (
                r#"action = "slow", node = "leader", factor = 0.5"#,
                "`factor`",
            ),
            (r#"action = "crash", node = "kth_lowest:0""#, ">= 1"),
            (r#"action = "crash", node = "boss""#, "lowest_follower"),
            (r#"action = "explode""#, "amnesia"),
        ] {
            let e = parsed(fields).unwrap_err().to_string();
            assert!(e.contains(says), "{fields}: {e}");
        }
    }
}
