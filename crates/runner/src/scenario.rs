//! The scenario catalog, and custom scenarios written in a TOML config.
//!
//! Every built-in scenario is one entry of [`CATALOG`]: its name, its line in `scenarios`, the
//! sweep it belongs to ([`Part`]), the cluster sizes it is defined for, whether it needs the
//! lease store, the parameters it overrides and the builder of its fault timeline. Everything
//! else (the `all` list, `scenarios`, `--help`, skip reasons, the sweep's warnings, the
//! report's [`ScenarioKind`]) reads the entry, so adding a scenario is adding an entry. A custom
//! scenario's faults are the simulator's own [`FaultAction`]s, read straight from the config's
//! tables (the syntax is [`election_sim::fault`]'s), each at an offset from the fault instant
//! with its own jitter ([`CustomFault`]).
//!
//! Every scenario starts from a cold start (all nodes boot at 0 ms), lets a leader establish
//! itself, and fires its first fault at the trial's **fault instant**: the drawn instant
//! `fault_at_ms + U[0, fault_jitter_ms]` (drawn per trial from the trial seed, the same for
//! every protocol) or, if the cluster has no quorum leader then, the first instant after it at
//! which it has one, waiting at most `fault_wait_ms`; the whole timeline shifts with it. The
//! defaults come from the timing, so the fault hits a **settled** cluster whatever the
//! timeouts: `fault_at_ms` is four of the longest election timeouts (`detect_timeout_ms +
//! detect_jitter_ms`), time for the cold start's election (within one) and for its leader to
//! hold for about three more, and `fault_jitter_ms` one longest timeout, so the fault falls
//! anywhere in the leader's heartbeat and CheckQuorum cycles rather than in phase with its
//! election. (A fixed 1 s instant once met etcd's 1–2 s timeouts before any leader existed:
//! the fault then waited for the first leader and hit it the instant it was elected.) Only
//! `cold-start` deliberately measures an unsettled cluster: it has no fault, and its
//! reference is the boot at 0 ms. A trial whose fault had to wait for a leader shows it: its
//! fault instant is later than the drawn one. A
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
//! have one (the others' cells are skipped and say so). With `lease.store_nodes` ≥ 2 the store
//! is replicated: a Raft group of that many endpoints (`crates/store`), which members talk to
//! one endpoint at a time, moving on when a request has gone unanswered for
//! `lease.reconnect_ms` (0: at the next request; Kubernetes' clients: 45 s). The gray scenario
//! `store-endpoint-vanish` (below the gray ones) crashes, for good, the endpoint every member
//! starts on.
//!
//! - `store-crash`: the store's first endpoint crashes for `outage_ms`, then recovers with its
//!   record. A single store is the whole store: nobody renews or takes the lease meanwhile. A
//!   replicated store loses one endpoint — its leader in about one trial in
//!   `lease.store_nodes`, and then the lease waits for the store's own election.
//! - `store-quorum-loss`: a majority of the store's endpoints (the single store) crash for
//!   `outage_ms`, then recover: the holder stops within `retry + renew_deadline`, before one
//!   lease duration, and nobody holds the lease until the store is back. A lease is as
//!   available as its store.
//! - `store-split` (gray, replicated stores only): the store's first endpoint is cut off from
//!   the other endpoints and from every member but the holder for `outage_ms`: the holder may
//!   be talking to an endpoint that cannot reach the store's quorum. It moves to another
//!   endpoint, or loses the lease and another member takes it once it expired; never two
//!   holders.
//! - `store-cut-holder`: the holder's links to and from the store (every endpoint) fail for
//!   `outage_ms`, then heal. The holder can no longer renew; it stops leading `retry + renew_deadline` after its
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

use election_core::{Rng, RngExt};
use election_sim::{Fault, FaultAction, NodeSet, Selector};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use FaultAction::*;

use crate::error::{usage, Result};
use crate::params::Resolved;

/// Which sweep a built-in scenario belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Part of `all`: the default sweep.
    Default,
    /// A gray failure (partial partitions, flaky links, slow and amnesiac nodes): not in `all`,
    /// swept by `results/gray`.
    Gray,
    /// A steady state (no fault; an hour of a healthy cluster under noise): not in `all`, run
    /// by `election-bench tune`.
    Steady,
}

/// The cluster sizes a built-in scenario is defined for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sizes {
    /// Exactly this many nodes (a fixed topology).
    Exactly(u32),
    /// At least this many, and why.
    AtLeast(u32, &'static str),
}

/// The default [`Sizes`]: a scenario that takes the leader away needs another node to elect.
const TWO: Sizes = Sizes::AtLeast(
    2,
    "it takes the leader away and needs another node to elect",
);

/// A parameter a scenario replaces during its trials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Override<S = &'static str> {
    /// The parameter replaced.
    pub param: &'static str,
    /// What applies instead.
    pub instead: S,
    /// The parameter to vary instead, if there is one.
    pub vary: Option<&'static str>,
}

/// Where a built-in scenario's timeline is built: the cluster size, the resolved parameters
/// and the trial's drawn fault instant (ms).
pub struct At<'a> {
    /// Nodes in the cluster.
    pub n: u32,
    /// The cell's parameters.
    pub r: &'a Resolved,
    /// The fault instant, ms.
    pub t: f64,
}

/// Builds a scenario's fault timeline; `rng` is the trial's fault-time stream, already past
/// the draw of the fault instant, for a scenario that draws per-trial times.
pub type Timeline = fn(&At<'_>, &mut Rng) -> Vec<Fault>;

/// One built-in scenario: everything the tool knows about it. Adding a scenario is one entry
/// of [`CATALOG`].
#[derive(Clone, Copy)]
pub struct Builtin {
    /// Its name.
    pub name: &'static str,
    /// One line on what it does and shows.
    pub about: &'static str,
    /// The sweep it belongs to.
    pub part: Part,
    /// The cluster sizes it is defined for.
    pub sizes: Sizes,
    /// It acts on a service endpoint (the lease store): protocols without one skip it.
    pub store: bool,
    /// It needs a replicated store (`lease.store_nodes` ≥ 2): a single store skips it.
    pub replicated_store: bool,
    /// The parameters whose value it replaces during a trial.
    pub overrides: &'static [Override],
    /// Its fault timeline.
    pub timeline: Timeline,
}

impl PartialEq for Builtin {
    fn eq(&self, other: &Builtin) -> bool {
        self.name == other.name
    }
}

/// The name in CamelCase (`LeaderCrash`): `explore`'s manifest hashes its cells' Debug form
/// (`cells_sha256`), and this is the form it always hashed, so `--resume` keeps chunks written
/// before the catalog was a table.
impl std::fmt::Debug for Builtin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for word in self.name.split('-') {
            let mut c = word.chars();
            if let Some(first) = c.next() {
                write!(f, "{}{}", first.to_ascii_uppercase(), c.as_str())?;
            }
        }
        Ok(())
    }
}

/// A default-sweep scenario defined for `sizes`.
const fn scenario(
    name: &'static str,
    about: &'static str,
    sizes: Sizes,
    timeline: Timeline,
) -> Builtin {
    Builtin {
        name,
        about,
        part: Part::Default,
        sizes,
        store: false,
        replicated_store: false,
        overrides: &[],
        timeline,
    }
}

/// A scenario on the lease store.
const fn store(name: &'static str, about: &'static str, timeline: Timeline) -> Builtin {
    Builtin {
        store: true,
        ..scenario(name, about, TWO, timeline)
    }
}

/// Every built-in scenario, in catalog order (the order of every list, the `scenarios`
/// command and the report).
pub const CATALOG: &[Builtin] = &[
    scenario(
        "cold-start",
        "every node boots at 0 ms with no leader; time to the first quorum leader (the one scenario that measures an unsettled cluster on purpose)",
        Sizes::AtLeast(1, ""),
        |_, _| vec![],
    ),
    scenario(
        "leader-crash",
        "the leader crashes; every follower's own detector notices, with the configured jitter",
        TWO,
        |a, _| vec![at(a.t, Crash(Selector::Leader))],
    ),
    scenario(
        "leader-crash-lowest-detects",
        "the leader crashes and only the lowest id notices (every detector off; the lowest is made to suspect after detect_timeout_ms, then its own detector is back on for retries): the bully's worst case, a single initiator elsewhere",
        TWO,
        |a, _| lowest_detects(a),
    ),
    scenario(
        "cascade-crash",
        "as leader-crash-lowest-detects, then the highest live node (the would-be successor) crashes cascade_delay_ms into the election, after it answered",
        Sizes::AtLeast(3, "it crashes two nodes and needs one left to elect"),
        |a, _| {
            let mut f = lowest_detects(a);
            f.push(at(
                a.t + a.r.detect_timeout_ms + a.r.cascade_delay_ms,
                Crash(Selector::Highest),
            ));
            f
        },
    ),
    scenario(
        "minority-crash",
        "the leader and the lowest followers, floor((n-1)/2) members in all, crash for good: the most a cluster of n voting members survives; with fewer voters (raft.voters = 5 at n = 51) the crashed include a majority of the voters, and no leader can form although most members live",
        Sizes::AtLeast(3, "it crashes floor((n-1)/2) nodes, at least one"),
        // The followers first, each the lowest live one then (a selector that names the
        // leader's followers needs the leader alive), the leader last.
        |a, _| {
            (1..(a.n - 1) / 2)
                .map(|_| Selector::KthLowestFollower(1))
                .chain(std::iter::once(Selector::Leader))
                .map(|s| at(a.t, Crash(s)))
                .collect()
        },
    ),
    scenario(
        "leader-recovers",
        "the leader crashes and comes back outage_ms later, after a new leader was elected: does it take over again?",
        TWO,
        |a, _| {
            vec![
                at(a.t, Crash(Selector::Leader)),
                at(a.t + a.r.outage_ms, Recover(Selector::LastCrashed)),
            ]
        },
    ),
    scenario(
        "flapping-leader",
        "whoever leads at each cycle crashes and recovers, `flaps` times (down flap_down_ms, up flap_up_ms): the cost of losing the leader again and again",
        TWO,
        |a, _| flapping(a, Selector::Leader, Selector::LastCrashed),
    ),
    scenario(
        "flapping-node",
        "the node that led at the fault instant crashes and recovers `flaps` times (down flap_down_ms, up flap_up_ms), whatever it is doing: a flaky node, and the churn its returns cause",
        TWO,
        |a, _| flapping(a, Selector::InitialLeader, Selector::InitialLeader),
    ),
    scenario(
        "partition-leader-minority",
        "the leader and the lowest followers, floor((n-1)/2) nodes in all, are cut off from the majority; heals after outage_ms",
        PARTITION,
        |a, _| {
            let side = std::iter::once(Selector::Leader)
                .chain(lowest_followers((a.n - 1) / 2 - 1))
                .collect();
            partition_then_heal(a, side)
        },
    ),
    scenario(
        "partition-leader-majority",
        "the floor((n-1)/2) lowest followers are cut off from the leader's majority; heals after outage_ms",
        PARTITION,
        |a, _| partition_then_heal(a, lowest_followers((a.n - 1) / 2).collect()),
    ),
    scenario(
        "asymmetric-leader-out",
        "the leader's outgoing links fail for good while it still receives: a half-dead leader",
        TWO,
        |a, _| {
            vec![at(
                a.t,
                CutLink {
                    from: NodeSet::One(Selector::Leader),
                    to: NodeSet::AllExcept(Selector::Leader),
                },
            )]
        },
    ),
    scenario(
        "asymmetric-follower",
        "the lowest follower can no longer reach any higher id while they still reach it, then the leader crashes",
        FOLLOWER,
        |a, _| {
            vec![
                at(
                    a.t,
                    CutLink {
                        from: NodeSet::One(LOWEST_FOLLOWER),
                        to: NodeSet::Above(LOWEST_FOLLOWER),
                    },
                ),
                at(a.t, Crash(Selector::Leader)),
            ]
        },
    ),
    scenario(
        "leader-pause",
        "the leader stops the world for pause_ms (longer than the detection window), then resumes with its stale backlog",
        TWO,
        |a, _| {
            vec![at(
                a.t,
                Pause {
                    node: Selector::Leader,
                    ms: a.r.pause_ms,
                },
            )]
        },
    ),
    scenario(
        "follower-isolation-rejoin",
        "the lowest follower is cut off from everyone for outage_ms (several timeouts), then healed: does its return disturb the leader?",
        FOLLOWER,
        |a, _| {
            vec![
                at(a.t, Isolate(LOWEST_FOLLOWER)),
                at(a.t + a.r.outage_ms, Heal),
            ]
        },
    ),
    Builtin {
        overrides: &[Override {
            param: "net.loss",
            instead: "fault_loss from the fault instant to the end of the trial",
            vary: Some("fault_loss"),
        }],
        ..scenario(
            "lossy-leader-crash",
            "message loss rises to fault_loss and the leader crashes; the loss lasts to the end of the trial",
            TWO,
            |a, _| {
                vec![
                    at(a.t, SetLoss(a.r.fault_loss)),
                    at(a.t, Crash(Selector::Leader)),
                ]
            },
        )
    },
    store(
        "store-cut-holder",
        "lease store only: the holder's links to and from the store fail for outage_ms, then heal; the holder must stop leading before anyone else may take the lease",
        |a, _| {
            let mut f = cut_store(a, a.t);
            f.push(at(a.t + a.r.outage_ms, Heal));
            f
        },
    ),
    store(
        "store-crash",
        "lease store only: the store's first endpoint crashes for outage_ms, then recovers with its record; a single store is the whole store (nobody can renew or take the lease meanwhile), a replicated one (lease.store_nodes) loses one endpoint, its leader in about one trial in lease.store_nodes",
        |a, _| {
            vec![
                at(a.t, Crash(STORE)),
                at(a.t + a.r.outage_ms, Recover(STORE)),
            ]
        },
    ),
    store(
        "store-quorum-loss",
        "lease store only: a majority of the store's endpoints (the store, when it has one) crash for outage_ms, then recover: with no store quorum nobody can renew or take the lease, the holder stops within retry + renew deadline, and nobody leads until the store is back",
        |a, _| {
            let k = store_majority(a);
            let mut f: Vec<Fault> = (1..=k).map(|j| at(a.t, Crash(Selector::Service(j)))).collect();
            f.extend((1..=k).map(|j| at(a.t + a.r.outage_ms, Recover(Selector::Service(j)))));
            f
        },
    ),
    Builtin {
        replicated_store: true,
        part: Part::Gray,
        ..store(
            "store-split",
            "replicated lease store only (lease.store_nodes >= 2): the store's first endpoint is cut off from the other endpoints and from every member but the holder for outage_ms, then healed: the holder talks to an endpoint that cannot reach the store's quorum; the rest of the store elects a leader if it lost one, and the others take the lease once it expires",
            |a, _| {
                let first = NodeSet::One(STORE);
                let mut f = Vec::new();
                let mut cut = |x: NodeSet, y: NodeSet| {
                    f.push(at(a.t, CutLink { from: x, to: y }));
                    f.push(at(a.t, CutLink { from: y, to: x }));
                };
                cut(first, NodeSet::AllExcept(Selector::Leader));
                for k in 2..=a.r.lease.store_nodes {
                    cut(first, NodeSet::One(Selector::Service(k)));
                }
                f.push(at(a.t + a.r.outage_ms, Heal));
                f
            },
        )
    },
    Builtin {
        replicated_store: true,
        part: Part::Gray,
        ..store(
            "store-endpoint-vanish",
            "replicated lease store only (lease.store_nodes >= 2): the store endpoint every member starts on (the first) vanishes for good, silently, as an API server does when its node disappears; a member moves to another endpoint only when it gives that connection up (lease.reconnect_ms; k8s-lease+store_nodes=3: client-go's HTTP/2 health check, 45 s), and every request until then is lost",
            |a, _| vec![at(a.t, Crash(STORE))],
        )
    },
    store(
        "store-slow",
        "lease store only: the store takes store_slow_ms more per request for outage_ms; requests queue, and past its capacity renewals miss the deadline",
        |a, _| {
            let slow = |ms| Slow {
                node: STORE,
                factor: 1.0,
                ms,
            };
            vec![
                at(a.t, slow(a.r.store_slow_ms)),
                at(a.t + a.r.outage_ms, slow(0.0)),
            ]
        },
    ),
    store(
        "store-cut-slow-clock-within",
        "lease store only: the holder's clock slows to 0.9 of real time (within the 0.8 a lease tolerates), then after detect_timeout_ms it loses the store for outage_ms: no two holders",
        |a, _| slow_clock_then_cut_store(a, CLOCK_RATE_WITHIN),
    ),
    store(
        "store-cut-slow-clock-beyond",
        "lease store only: the holder's clock slows to 0.4 of real time (beyond the 0.8 a lease tolerates), then after detect_timeout_ms it loses the store for outage_ms: two holders act at once, and fencing decides whether the old one's writes land",
        |a, _| slow_clock_then_cut_store(a, CLOCK_RATE_BEYOND),
    ),
    scenario(
        "quorum-loss",
        "5 nodes, by position (1-4 the followers in id order, 5 the leader): follower 1 keeps its links to everyone, every other pair is cut both ways, to the end of the trial; only 1 can reach a majority",
        Sizes::Exactly(5),
        // Follower 1 is the hub.
        |a, _| cut_for_good(a, &all_but(&(2..=a.n).map(|b| (1, b)).collect::<Vec<_>>(), a.n)),
    )
    .gray(),
    scenario(
        "constrained-election",
        "5 nodes, by position (Omni-Paxos, EuroSys '23): follower 1's links to and from the leader (5) are delayed by half an election timeout (detect_timeout_ms / 2) for outage_ms, so it falls behind in the log (with workload.commit = majority) without ever suspecting the leader; then followers 2-4 keep only their link to 1 and the leader is cut from them too, to the end: only the lagging 1 reaches a majority",
        Sizes::Exactly(5),
        |a, _| {
            let n = a.n;
            let delay = |from: u32, to: u32| LinkDelay {
                from: NodeSet::One(position(from, n)),
                to: NodeSet::One(position(to, n)),
                ms: a.r.detect_timeout_ms / 2.0,
            };
            let mut f = vec![at(a.t, delay(1, n)), at(a.t, delay(n, 1))];
            let cut = all_but(&[(1, 2), (1, 3), (1, 4)], n);
            f.extend(cut_for_good(&At { t: a.t + a.r.outage_ms, ..*a }, &cut));
            f
        },
    )
    .gray(),
    scenario(
        "chained",
        "3 nodes, by position: the leader (3) and follower 1 lose their link both ways, to the end; follower 2 still reaches both",
        Sizes::Exactly(3),
        |a, _| cut_for_good(a, &[(1, a.n)]),
    )
    .gray(),
    scenario(
        "bridge",
        "n >= 5, by position: follower 1 is the bridge; the leader with followers 2..=ceil((n-1)/2) and the other followers are cut from each other both ways, to the end; only the bridge reaches both halves",
        Sizes::AtLeast(5, "two halves of at least two nodes each, plus the bridge"),
        |a, _| {
            let n = a.n;
            let leader_half: Vec<u32> = std::iter::once(n).chain(2..=(n - 1).div_ceil(2)).collect();
            let other: Vec<u32> = ((n - 1).div_ceil(2) + 1..n).collect();
            let cut: Vec<(u32, u32)> = leader_half
                .iter()
                .flat_map(|&x| other.iter().map(move |&y| (x.min(y), x.max(y))))
                .collect();
            cut_for_good(a, &cut)
        },
    )
    .gray(),
    scenario(
        "liveness-omission",
        "5 nodes, by position (Howard & Abraham 2020): the leader (5), 1 and 2 fully connected; 3 reaches only 2; 4 reaches only the leader; every other pair cut both ways, to the end. The leader keeps a direct majority (1, 2, 4): plain Raft's 3 keeps deposing it, PreVote + CheckQuorum keeps it",
        Sizes::Exactly(5),
        |a, _| cut_for_good(a, &all_but(&[(1, 2), (1, 5), (2, 5), (2, 3), (4, 5)], a.n)),
    )
    .gray(),
    scenario(
        "liveness-omission-leader-out",
        "5 nodes, by position: the same topology with the leader (5) as a poorly connected node: 1, 2, 3 fully connected; 4 reaches only 2; the leader reaches only 3; every other pair cut both ways, to the end. The leader has lost its majority and a new one must be elected inside the clique",
        Sizes::Exactly(5),
        |a, _| cut_for_good(a, &all_but(&[(1, 2), (1, 3), (2, 3), (2, 4), (3, 5)], a.n)),
    )
    .gray(),
    scenario(
        "flaky-leader-link",
        "the link between the leader and the lowest follower goes down and up again, `flaps` times, both ways; each down time is U[0.5, 1.5] x flap_down_ms and each up time U[0.5, 1.5] x flap_up_ms, drawn per trial",
        TWO,
        |a, rng| {
            let (r, pair) = (a.r, both_ways(&[(1, a.n)], a.n));
            let links = |up| Links {
                pairs: pair.clone(),
                up,
            };
            let mut c = a.t;
            let mut f = Vec::new();
            for _ in 0..r.flaps {
                let down = r.flap_down_ms * (0.5 + draw_ms(rng, 1.0));
                let up = r.flap_up_ms * (0.5 + draw_ms(rng, 1.0));
                f.push(at(c, links(false)));
                f.push(at(c + down, links(true)));
                c += down + up;
            }
            f
        },
    )
    .gray(),
    scenario(
        "stale-connection",
        "the leader's connections to its followers go stale: everything it sends them is silently dropped for stale_keepalive_ms (5 election timeouts, as etcd's 5 s peer read timeout against its 1 s election timeout) while it still hears them, then they are re-established by themselves: a half-dead leader for a keep-alive, not for good (the lease's members talk only through the store: nothing changes for it)",
        TWO,
        |a, _| {
            vec![at(
                a.t,
                StaleConnection {
                    from: NodeSet::One(Selector::Leader),
                    to: NodeSet::AllExcept(Selector::Leader),
                    ms: a.r.stale_keepalive_ms,
                },
            )]
        },
    )
    .gray(),
    Builtin {
        overrides: &[Override {
            param: "node.timing_multiplier",
            instead: "the floor(n/2) highest ids run with mixed_multiplier",
            vary: Some("mixed_multiplier"),
        }],
        ..scenario(
            MIXED_MULTIPLIER,
            "the floor(n/2) highest ids run their heartbeat and failure detection mixed_multiplier (5) times slower, like Consul servers left on the default raft_multiplier = 5 beside servers on 1; the leader crashes. Every majority left needs a slow node, so where a node that still knows a leader rejects votes (hashicorp/raft's rule, raft+follower=hashicorp; etcd's stickiness and PreVote, raft+pre_vote+check_quorum) the new leader waits for a slow node to notice, as Consul found; the paper's Raft, the bully and the ring do not",
            Sizes::AtLeast(3, "a slow node is needed for a majority only from 3 nodes on"),
            |a, _| vec![at(a.t, Crash(Selector::Leader))],
        )
        .gray()
    },
    scenario(
        "clock-jump-follower",
        "the lowest follower's clock steps clock_jump_ms ahead (an NTP step; twice the scaled lease duration): nothing for protocols that compare only readings of their own clock (timers already armed keep their instants), but with lease.expiry = renew_time that member finds the holder's renew time expired and takes a lease that is still being renewed: two holders at once",
        TWO,
        |a, _| {
            vec![at(
                a.t,
                ClockJump {
                    node: Selector::KthLowestFollower(1),
                    ms: a.r.clock_jump_ms,
                },
            )]
        },
    )
    .gray(),
    scenario(
        "slow-leader",
        "the leader stays alive but slow, to the end: its processing time and the latency of every message it sends are multiplied by slow_factor",
        TWO,
        |a, _| {
            vec![at(
                a.t,
                Slow {
                    node: Selector::Leader,
                    factor: f64::from(a.r.slow_factor),
                    ms: 0.0,
                },
            )]
        },
    )
    .gray(),
    scenario(
        "amnesia-recover",
        "the leader crashes, loses its stable storage (a replaced disk) and comes back outage_ms later as a blank node (on_start with nothing persisted)",
        TWO,
        |a, _| {
            vec![
                at(a.t, Crash(Selector::Leader)),
                at(a.t, Amnesia(Selector::LastCrashed)),
                at(a.t + a.r.outage_ms, Recover(Selector::LastCrashed)),
            ]
        },
    )
    .gray(),
    scenario(
        "planned-handover",
        "a planned stop (a restart, a rolling upgrade): the leader is told it will be stopped and hands over (Raft transfers leadership with TimeoutNow, the bully coordinator resigns, the ring leader announces its departure, the lease holder releases), then handover_grace_ms later its process stops, and outage_ms after that it comes back: the write unavailability of a planned failover, against leader-crash and leader-recovers",
        TWO,
        |a, _| {
            let stop = a.t + a.r.handover_grace_ms;
            vec![
                at(a.t, Handover(Selector::Leader)),
                at(stop, Crash(Selector::InitialLeader)),
                at(stop + a.r.outage_ms, Recover(Selector::InitialLeader)),
            ]
        },
    )
    .gray(),
    Builtin {
        part: Part::Steady,
        ..scenario(
            "steady-noise",
            "no fault: a healthy cluster runs for steady_ms (an hour) after the fault instant under the noise.* background noise (GC pauses, disk stalls, latency spikes; none unless set); every entry into the leader role there (leader_changes) is an election nobody needed",
            Sizes::AtLeast(1, ""),
            |_, _| vec![],
        )
    },
];

/// `action` at `t` ms.
fn at(t: f64, action: FaultAction) -> Fault {
    Fault::at_ms(t, action)
}

/// The sizes of a leader-minority or -majority partition.
const PARTITION: Sizes = Sizes::AtLeast(
    3,
    "a partition with a minority side of floor((n-1)/2) >= 1 nodes needs at least 3",
);

/// The sizes of a scenario on a follower, besides the leader and one more node.
const FOLLOWER: Sizes = Sizes::AtLeast(
    3,
    "it needs a follower besides the leader and one more node",
);

/// The lowest live node other than the leader when the fault fires.
const LOWEST_FOLLOWER: Selector = Selector::KthLowestFollower(1);

/// The k lowest followers (live nodes other than the leader when the fault fires).
fn lowest_followers(k: u32) -> impl Iterator<Item = Selector> {
    (1..=k).map(Selector::KthLowestFollower)
}

/// The leader crashes and only the lowest node's detector notices.
fn lowest_detects(a: &At<'_>) -> Vec<Fault> {
    let (t, suspect) = (a.t, a.t + a.r.detect_timeout_ms);
    vec![
        at(
            t,
            Detection {
                nodes: NodeSet::All,
                enabled: false,
            },
        ),
        at(t, Crash(Selector::Leader)),
        at(suspect, Suspect(Selector::Lowest)),
        // From then on the lowest node's own detector works again, so an election it started
        // but could not finish (a PreVote refused by followers that heard the leader moments
        // before the crash) is retried as it would be in a real cluster.
        at(
            suspect,
            Detection {
                nodes: NodeSet::One(Selector::Lowest),
                enabled: true,
            },
        ),
    ]
}

/// `down` crashes and `up` recovers, `flaps` times.
fn flapping(a: &At<'_>, down: Selector, up: Selector) -> Vec<Fault> {
    let r = a.r;
    let period = r.flap_down_ms + r.flap_up_ms;
    (0..r.flaps)
        .flat_map(|k| {
            let c = a.t + k as f64 * period;
            [at(c, Crash(down)), at(c + r.flap_down_ms, Recover(up))]
        })
        .collect()
}

/// `side` is cut off from the rest, healed after `outage_ms`.
fn partition_then_heal(a: &At<'_>, side: Vec<Selector>) -> Vec<Fault> {
    vec![
        at(a.t, Partition(vec![side, vec![Selector::Rest]])),
        at(a.t + a.r.outage_ms, Heal),
    ]
}

/// The holder's clock runs at `rate`; after `detect_timeout_ms` it loses the store for
/// `outage_ms`.
fn slow_clock_then_cut_store(a: &At<'_>, rate: f64) -> Vec<Fault> {
    let cut = a.t + a.r.detect_timeout_ms;
    let mut f = vec![at(
        a.t,
        ClockRate {
            node: Selector::Leader,
            ppm: (rate - 1.0) * 1e6,
        },
    )];
    f.extend(cut_store(a, cut));
    f.push(at(cut + a.r.outage_ms, Heal));
    f
}

/// Both directions of every pair of positions in `pairs` go down at the fault instant, to the
/// end of the trial: a fixed partial partition.
fn cut_for_good(a: &At<'_>, pairs: &[(u32, u32)]) -> Vec<Fault> {
    vec![at(
        a.t,
        Links {
            pairs: both_ways(pairs, a.n),
            up: false,
        },
    )]
}

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

/// The name of the scenario whose slowest `⌊n/2⌋` ids run with `mixed_multiplier`
/// ([`Resolved::for_cluster`]).
pub const MIXED_MULTIPLIER: &str = "mixed-multiplier";

/// The holder's clock rate in `store-cut-slow-clock-within`: inside the 0.8 a lease tolerates.
pub const CLOCK_RATE_WITHIN: f64 = 0.9;
/// The holder's clock rate in `store-cut-slow-clock-beyond`: far outside it.
pub const CLOCK_RATE_BEYOND: f64 = 0.4;

impl Builtin {
    /// This scenario, as a gray failure.
    const fn gray(self) -> Builtin {
        Builtin {
            part: Part::Gray,
            ..self
        }
    }

    /// The built-in scenarios of one part of the catalog, in catalog order.
    pub fn part(part: Part) -> impl Iterator<Item = &'static Builtin> {
        CATALOG.iter().filter(move |b| b.part == part)
    }

    /// The built-in scenario named `name`.
    pub fn named(name: &str) -> Option<&'static Builtin> {
        CATALOG.iter().find(|b| b.name == name)
    }

    /// Why an `n`-node cluster cannot run it, if it cannot (besides the store).
    fn size_reason(&self, n: u32) -> Option<String> {
        match self.sizes {
            Sizes::Exactly(k) => {
                (n != k).then(|| format!("{} is defined for exactly {k} nodes, not {n}", self.name))
            }
            Sizes::AtLeast(min, why) => {
                (n < min).then(|| format!("{} needs at least {min} nodes: {why}", self.name))
            }
        }
    }
}

/// The lease store: the first service endpoint.
const STORE: Selector = Selector::Service(1);

/// The holder's links to and from the store fail at `t`: every store endpoint's (one, unless
/// the store is replicated: `lease.store_nodes`).
fn cut_store(a: &At<'_>, t: f64) -> Vec<Fault> {
    (1..=a.r.lease.store_nodes.max(1))
        .flat_map(|k| {
            let store = NodeSet::One(Selector::Service(k));
            let holder = NodeSet::One(Selector::Leader);
            [
                at(
                    t,
                    CutLink {
                        from: holder,
                        to: store,
                    },
                ),
                at(
                    t,
                    CutLink {
                        from: store,
                        to: holder,
                    },
                ),
            ]
        })
        .collect()
}

/// How many of the store's endpoints make a majority (1 for a single store).
fn store_majority(a: &At<'_>) -> u32 {
    a.r.lease.store_nodes.max(1) / 2 + 1
}

/// One fault of a custom scenario: the simulator's action, at an offset from the fault
/// instant. `at_ms`, `jitter_ms` and `reference` are the scenario's; the rest of the table is
/// the action as the simulator reads it ([`FaultAction`]'s serde form).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "WrittenFault")]
pub struct CustomFault {
    /// Offset from the fault instant, ms.
    pub at_ms: f64,
    /// A further random offset U[0, jitter_ms], drawn per trial.
    pub jitter_ms: f64,
    /// What happens.
    #[serde(flatten)]
    pub action: FaultAction,
    /// The reference instant is when this fault fires (at most one fault of a scenario).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reference: bool,
}

/// A custom fault's table: the scenario's keys, and the rest for [`FaultAction`].
#[derive(Deserialize)]
struct WrittenFault {
    at_ms: f64,
    #[serde(default)]
    jitter_ms: f64,
    #[serde(default)]
    reference: bool,
    #[serde(flatten)]
    action: serde_json::Map<String, Value>,
}

impl TryFrom<WrittenFault> for CustomFault {
    type Error = String;

    fn try_from(w: WrittenFault) -> std::result::Result<CustomFault, String> {
        Ok(CustomFault {
            at_ms: w.at_ms,
            jitter_ms: w.jitter_ms,
            action: FaultAction::deserialize(Value::Object(w.action)).map_err(|e| e.to_string())?,
            reference: w.reference,
        })
    }
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
    Builtin(&'static Builtin),
    /// From a config file.
    Custom(Custom),
}

pub use election_sim::{ACTIONS, SELECTOR_SYNTAX, SET_SYNTAX};

/// A custom scenario as written in TOML (`[scenarios.NAME]`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioDef {
    /// One line on what it shows.
    #[serde(default)]
    pub about: String,
    /// The faults.
    pub faults: Vec<CustomFault>,
}

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
        }
        Ok(Custom {
            name: name.to_string(),
            about: if def.about.is_empty() {
                "custom scenario".into()
            } else {
                def.about.clone()
            },
            faults: def.faults.clone(),
            source: serde_json::to_value(def).expect("serializable"),
            exact_nodes: None,
        })
    }

    fn sels(&self) -> impl Iterator<Item = Selector> + '_ {
        self.faults.iter().flat_map(|f| f.action.selectors())
    }
}

impl Scenario {
    /// The parameters whose value this scenario replaces during a trial, each with what it
    /// applies instead: `lossy-leader-crash` sets the loss to `fault_loss` at the fault
    /// instant, so a `net.loss` set for the sweep holds only until then. The sweep warns when
    /// a parameter set for it is one of these ([`crate::SweepPlan::warnings`]).
    pub fn overrides(&self) -> Vec<Override<String>> {
        match self {
            Scenario::Builtin(b) => b
                .overrides
                .iter()
                .map(|o| Override {
                    param: o.param,
                    instead: o.instead.to_string(),
                    vary: o.vary,
                })
                .collect(),
            Scenario::Custom(c) => c
                .faults
                .iter()
                .filter_map(|f| match f.action {
                    SetLoss(p) => Some(Override {
                        param: "net.loss",
                        instead: format!("set_loss = {p} at fault instant + {} ms", f.at_ms),
                        vary: None,
                    }),
                    _ => None,
                })
                .collect(),
        }
    }

    /// A built-in scenario by name.
    pub fn builtin(name: &str) -> Option<Scenario> {
        Builtin::named(name).map(Scenario::Builtin)
    }

    /// The scenario's name.
    pub fn name(&self) -> &str {
        match self {
            Scenario::Builtin(b) => b.name,
            Scenario::Custom(c) => &c.name,
        }
    }

    /// One line on what it shows.
    pub fn about(&self) -> &str {
        match self {
            Scenario::Builtin(b) => b.about,
            Scenario::Custom(c) => &c.about,
        }
    }

    /// A steady-state scenario (`steady-noise`): no fault; the trial runs from the fault
    /// instant, its reference, for `steady_ms` and never ends early (see
    /// [`Resolved::for_scenario`](crate::params::Resolved::for_scenario)).
    pub fn steady(&self) -> bool {
        matches!(self, Scenario::Builtin(b) if b.part == Part::Steady)
    }

    /// The fault (an index into [`Scenario::faults`]) whose instant is the reference, when it
    /// is not simply the first fault: a custom fault marked `reference = true`.
    pub fn reference_fault(&self) -> Option<usize> {
        match self {
            Scenario::Builtin(_) => None,
            Scenario::Custom(c) => c.faults.iter().position(|f| f.reference),
        }
    }

    /// Why a protocol without a failure detector a scenario can force or switch
    /// ([`crate::protocol::Family::detector`] false) cannot run this scenario, if it cannot:
    /// the scenario has `suspect` or `detection` actions.
    pub fn detector_skip_reason(
        &self,
        no_detector: Option<&str>,
        n: u32,
        r: &Resolved,
    ) -> Option<String> {
        let why = no_detector?;
        // Read off the scenario's own timeline (its actions do not depend on the draw), so a
        // catalog entry needs no flag of its own.
        let mut rng = <Rng as election_core::SeedableRng>::seed_from_u64(0);
        let forces = self
            .faults(n, r, 0.0, &mut rng)
            .iter()
            .any(|f| matches!(f.action, Suspect(_) | Detection { .. }));
        forces.then(|| {
            format!(
                "{} forces or switches failure detection, and {why}",
                self.name()
            )
        })
    }

    /// Why a protocol without a planned hand-over (`no_handover`, the family's reason) cannot
    /// run this scenario, if it cannot: the scenario has `handover` actions.
    pub fn handover_skip_reason(
        &self,
        no_handover: Option<&str>,
        n: u32,
        r: &Resolved,
    ) -> Option<String> {
        let why = no_handover?;
        let mut rng = <Rng as election_core::SeedableRng>::seed_from_u64(0);
        let hands_over = self
            .faults(n, r, 0.0, &mut rng)
            .iter()
            .any(|f| matches!(f.action, Handover(_)));
        hands_over.then(|| format!("{} asks the leader to hand over, and {why}", self.name()))
    }

    /// Why an `n`-node cluster of a protocol with `services` service endpoints cannot run this
    /// scenario, if it cannot.
    pub fn skip_reason(&self, n: u32, services: u32) -> Option<String> {
        let store = match self {
            Scenario::Builtin(b) => b.store,
            Scenario::Custom(c) => c.sels().any(|s| matches!(s, Selector::Service(_))),
        };
        if store && services == 0 {
            return Some(format!(
                "{} acts on the lease store, and this protocol has none",
                self.name()
            ));
        }
        if matches!(self, Scenario::Builtin(b) if b.replicated_store) && services < 2 {
            return Some(format!(
                "{} needs a replicated store, and this protocol's store has {services} endpoint (set lease.store_nodes >= 2)",
                self.name()
            ));
        }
        match self {
            Scenario::Builtin(b) => b.size_reason(n),
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
            Scenario::Builtin(b) => (b.timeline)(&At { n, r, t: t_ms }, rng),
            Scenario::Custom(c) => c
                .faults
                .iter()
                .map(|f| {
                    let jitter = draw_ms(rng, f.jitter_ms);
                    Fault::at_ms((t_ms + f.at_ms + jitter).max(0.0), f.action.clone())
                })
                .collect(),
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
                | FaultAction::StaleConnection { .. }
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
            Scenario::Builtin(b) => json!({ "name": b.name, "about": b.about }),
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
    /// A fault cuts links (a partition, a one-way cut, a stale connection, an isolation, a
    /// partial partition of single links, loss on some links): the scenario has an outage, and a leader may be
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

    fn lan() -> Resolved {
        let lan = crate::net::NetProfile::builtin("lan").unwrap();
        Resolved::resolve(&lan, &Default::default()).unwrap()
    }

    /// The catalog: names unique and found by name; every entry builds its timeline at 3 and
    /// 5 nodes (where it is defined for them), a timeline the simulator accepts, whose
    /// selectors are all in the config syntax; the parameters it overrides are parameters.
    #[test]
    fn every_catalog_entry_is_found_by_name_and_builds_a_valid_timeline() {
        let mut names: Vec<_> = CATALOG.iter().map(|b| b.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), CATALOG.len());
        let r = lan();
        let mut built = 0;
        for b in CATALOG {
            let s = Scenario::builtin(b.name).unwrap();
            assert_eq!(s, Scenario::Builtin(b));
            assert!(!b.about.is_empty(), "{}", b.name);
            for o in b.overrides {
                crate::params::lookup(o.param).unwrap();
                if let Some(v) = o.vary {
                    crate::params::lookup(v).unwrap();
                }
            }
            for n in [3, 5] {
                // Every store scenario runs with a replicated store.
                let size = s.skip_reason(n, 3);
                match b.sizes {
                    Sizes::Exactly(k) => assert_eq!(size.is_none(), n == k, "{}", b.name),
                    Sizes::AtLeast(min, _) => assert_eq!(size.is_none(), n >= min, "{}", b.name),
                }
                if size.is_some() {
                    continue;
                }
                let mut rng = <Rng as election_core::SeedableRng>::seed_from_u64(7);
                let faults = s.faults(n, &r, 1000.0, &mut rng);
                // Only the steady state and the cold start have no fault.
                assert_eq!(
                    faults.is_empty(),
                    b.part == Part::Steady || b.name == "cold-start",
                    "{}",
                    b.name
                );
                assert!(faults.iter().all(|f| f.at_ms >= 1000.0), "{}", b.name);
                for f in &faults {
                    for sel in f.action.selectors() {
                        assert_eq!(sel.to_string().parse::<Selector>(), Ok(sel), "{}", b.name);
                    }
                }
                let mut cfg = election_sim::SimConfig::new(n, 0);
                cfg.services = 1;
                cfg.faults = faults;
                cfg.validate()
                    .unwrap_or_else(|e| panic!("{} at {n} nodes: {e}", b.name));
                built += 1;
            }
        }
        assert!(built >= CATALOG.len(), "{built}");
        // The parts keep catalog order and cover the catalog.
        let parts: usize = [Part::Default, Part::Gray, Part::Steady]
            .into_iter()
            .map(|p| Builtin::part(p).count())
            .sum();
        assert_eq!(parts, CATALOG.len());
        assert_eq!(
            format!(
                "{:?}",
                Scenario::builtin("liveness-omission-leader-out").unwrap()
            ),
            "Builtin(LivenessOmissionLeaderOut)"
        );
        assert_eq!(
            Builtin::part(Part::Steady).next().unwrap().name,
            "steady-noise"
        );
    }

    #[test]
    fn partitions_name_the_leader_and_its_followers() {
        let r = lan();
        let mut rng = <election_core::Rng as election_core::SeedableRng>::seed_from_u64(0);
        let mut groups = |name: &str, n| {
            let s = Scenario::builtin(name).unwrap();
            match &s.faults(n, &r, 1000.0, &mut rng)[0].action {
                FaultAction::Partition(g) => g[0].clone(),
                other => panic!("{other:?}"),
            }
        };
        use Selector::{KthLowestFollower as F, Leader};
        // 7 nodes: minority of 3.
        assert_eq!(
            groups("partition-leader-minority", 7),
            vec![Leader, F(1), F(2)]
        );
        assert_eq!(
            groups("partition-leader-majority", 7),
            vec![F(1), F(2), F(3)]
        );
        assert_eq!(groups("partition-leader-minority", 3), vec![Leader]);
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
            ClockJump {
                node: Selector::Leader,
                ms: -250.0
            }
        );
        assert_eq!(
            c.faults[1].action,
            ClockRate {
                node: Selector::KthLowestFollower(1),
                ppm: 2000.0
            }
        );
        let e = toml::from_str::<ScenarioDef>(
            r#"faults = [{ at_ms = 0, action = "clock_rate", node = "leader", ppm = 2e6 }]"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("`ppm` = 2000000"), "{e}");
    }

    /// A custom scenario's manifest record keeps the shape it always had: every key of every
    /// fault, in the same order, `null` where the action has none, `reference` only when set.
    #[test]
    fn the_manifest_records_a_custom_fault_with_every_key() {
        let def: ScenarioDef = toml::from_str(
            r#"
about = "two"
faults = [
  { at_ms = 0, action = "crash", node = "leader" },
  { at_ms = 400, jitter_ms = 50, action = "links", pairs = [["initial_leader", "id:2"]], up = false, reference = true },
]
"#,
        )
        .unwrap();
        let c = Custom::from_def("two", &def).unwrap();
        assert_eq!(
            c.source.to_string(),
            r#"{"about":"two","faults":[{"at_ms":0.0,"jitter_ms":0.0,"action":"crash","node":"leader","nodes":null,"from":null,"to":null,"groups":null,"ms":null,"loss":null,"enabled":null,"ppm":null,"pairs":null,"up":null,"factor":null},{"at_ms":400.0,"jitter_ms":50.0,"action":"links","node":null,"nodes":null,"from":null,"to":null,"groups":null,"ms":null,"loss":null,"enabled":null,"ppm":null,"pairs":[["initial_leader","id:2"]],"up":false,"factor":null,"reference":true}]}"#
        );
        // And reads back as the same scenario (the report rebuilds it from the manifest).
        let back: ScenarioDef = serde_json::from_value(c.source.clone()).unwrap();
        assert_eq!(back, def);
        let unknown = toml::from_str::<ScenarioDef>(
            r#"faults = [{ at_ms = 0, action = "crash", nod = "leader" }]"#,
        )
        .unwrap_err()
        .to_string();
        assert!(unknown.contains("nod"), "{unknown}");
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

    /// Every custom-scenario action, written as the runner README documents it (its fields,
    /// the knobs a `slow` leaves out meaning their neutral values), parses into the simulator
    /// fault the README says it is, at the fault instant plus its `at_ms`, under the name the
    /// simulator gives that action ([`FaultAction::name`]). The table names every action of
    /// [`ACTIONS`] (the list the README and error messages give).
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
                r#"action = "handover", node = "leader""#,
                F::Handover(S::Leader),
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
                    vec![S::Id(election_core::NodeId(1))],
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
                F::ResourceCut(Set::Above(S::Id(election_core::NodeId(2)))),
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
            (
                r#"action = "stale_connection", from = "leader", to = "all_except:leader", ms = 750"#,
                F::StaleConnection {
                    from: Set::One(S::Leader),
                    to: Set::AllExcept(S::Leader),
                    ms: 750.0,
                },
            ),
        ];
        let mut names = std::collections::BTreeSet::new();
        for (fields, want) in &table {
            let faults = parsed(fields).unwrap_or_else(|e| panic!("{fields}: {e}"));
            assert_eq!(faults, [Fault::at_ms(1030.0, want.clone())], "{fields}");
            let name = fields
                .strip_prefix("action = \"")
                .and_then(|s| s.split('"').next())
                .unwrap();
            assert_eq!(name, want.name(), "{fields}");
            names.insert(name);
        }
        let documented: std::collections::BTreeSet<&str> = ACTIONS.split(", ").collect();
        assert_eq!(names, documented);
        let readme = include_str!("../README.md");
        for name in &documented {
            assert!(readme.contains(&format!("`{name}`")), "README: {name}");
        }
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
            ("store:3", S::Service(3)),
            ("lowest_follower", S::KthLowestFollower(1)),
            ("highest_follower", S::KthHighestFollower(1)),
            ("kth_highest:3", S::KthHighest(3)),
            ("kth_lowest:3", S::KthLowest(3)),
            ("kth_lowest_follower:3", S::KthLowestFollower(3)),
            ("kth_highest_follower:3", S::KthHighestFollower(3)),
            ("initial_follower", S::KthInitialFollower(1)),
            ("kth_initial_follower:3", S::KthInitialFollower(3)),
            ("id:3", S::Id(election_core::NodeId(3))),
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
