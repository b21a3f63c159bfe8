//! The differential reference sweep: our Raft model next to the production libraries that run
//! in the same simulator (tikv's raft-rs, Omni-Paxos), defined once here and run by
//! `election-bench reference` into `results/reference/`; the report crate's `reference`
//! module turns it into `reports/reference/REFERENCE.md`.
//!
//! A [`Pairing`] names our model's spec and the library's spec as each ships, and the
//! [`Rule`]s by which they differ. Each rule is one spec option that moves one side towards
//! the other: on our side a Raft rule set option (`redraw=per_term`: etcd's and raft-rs's
//! `reset(term)`), on the library's side a setting that takes away an artefact of how it is
//! driven (`tick_ms=5`: ticks fine enough that whole-tick timeouts approach continuous time).
//! The sweep runs, per pairing:
//!
//! - the model and the library as they ship (the *as shipped* pair);
//! - the model with every model-side rule and the library with every library-side rule (the
//!   *matched* pair);
//! - each rule alone, from the side it belongs to (the *isolating* pairs).
//!
//! A difference of the as-shipped pair is *explained* when it is gone in the matched pair,
//! and attributed to the rules whose isolating pair shows the same change. A difference left
//! in the matched pair is *unexplained*: a rule not modelled yet, or a bug. A pairing without
//! a matched pair (Omni-Paxos: no Raft option turns Raft into Ballot Leader Election) lists
//! named mechanism differences instead, each claiming the metrics, directions and scenarios
//! it explains.

use crate::config::SweepSpec;

/// The results directory's name (`results/reference/`, `reports/reference/`).
pub const NAME: &str = "reference";

/// Cluster sizes of the reference sweep.
pub const NODES: [u32; 3] = [3, 5, 7];

/// Seeds per cell.
pub const SEEDS: u64 = 100;

/// Parameters fixed for the whole sweep: writes commit through the log (a majority), so the
/// write columns measure replication in both our model and the libraries.
pub const FIXED: [(&str, &str); 1] = [("workload.commit", "majority")];

/// The scenarios: every built-in of the default sweep that concerns these families (the
/// lease-store scenarios do not), and the gray scenarios of the gray sweep. Scenarios that
/// force or switch off a failure detector are skipped for the libraries (they have none a
/// scenario can force), and size-specific ones run at their size only.
pub const SCENARIOS: [&str; 21] = [
    "cold-start",
    "leader-crash",
    "leader-recovers",
    "flapping-leader",
    "flapping-node",
    "partition-leader-minority",
    "partition-leader-majority",
    "asymmetric-leader-out",
    "asymmetric-follower",
    "leader-pause",
    "follower-isolation-rejoin",
    "lossy-leader-crash",
    "quorum-loss",
    "constrained-election",
    "chained",
    "bridge",
    "liveness-omission",
    "liveness-omission-leader-out",
    "flaky-leader-link",
    "slow-leader",
    "amnesia-recover",
];

/// Which side of a pairing a rule option is added to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Our model (`raft`): the option switches it to the library's rule.
    Model,
    /// The library: the option takes away an artefact of how it is driven.
    Library,
}

/// One named rule difference between our model and a library.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// Its name on the page.
    pub name: &'static str,
    /// The spec option (`redraw=per_term`) added on [`Rule::side`].
    pub option: &'static str,
    /// Which side the option is added to.
    pub side: Side,
    /// One sentence: what differs and where the library's rule comes from.
    pub sentence: &'static str,
}

/// A mechanism difference of a pairing without a matched pair: which differences it explains.
#[derive(Clone, Copy, Debug)]
pub struct Mechanism {
    /// Its name on the page.
    pub name: &'static str,
    /// One sentence: what differs and why it moves the claimed metrics.
    pub sentence: &'static str,
    /// The compared metrics (the `summary.csv` column names compare uses) it explains.
    pub metrics: &'static [&'static str],
    /// The direction it explains, library minus model: `1` (the library's is larger) or `-1`.
    pub sign: i8,
    /// The scenarios it explains them in (`*`: every scenario).
    pub scenarios: &'static [&'static str],
}

/// Our model against one library.
#[derive(Clone, Copy, Debug)]
pub struct Pairing {
    /// A short title.
    pub title: &'static str,
    /// Our model's spec as it ships.
    pub model: &'static str,
    /// The library's spec as it ships.
    pub library: &'static str,
    /// The rule differences that a spec option removes (empty: no matched pair).
    pub rules: &'static [Rule],
    /// Named mechanism differences (pairings without rules).
    pub mechanisms: &'static [Mechanism],
}

const TICK: Rule = Rule {
    name: "whole ticks",
    option: "tick_ms=5",
    side: Side::Library,
    sentence: "raft-rs counts every timeout in whole ticks of its driver's clock (50 ms by \
               default here): a timeout of k ticks lasts (k - 1) to k ticks from the last \
               reset, and the randomized timeout takes only 3 values (3 to 5 ticks, raft-rs's \
               default [election_tick, 2 × election_tick)), so \
               timeouts are shorter on average and two followers draw the same one more \
               often; 5 ms ticks take the artefact away.",
};

const REDRAW: Rule = Rule {
    name: "reset(term)",
    option: "redraw=per_term",
    side: Side::Model,
    sentence: "etcd-io/raft and raft-rs draw the randomized timeout once per term and role \
               and restart the count whenever a node adopts a higher term (raft.go and \
               src/raft.rs, reset), where the paper's follower redraws at every arming and \
               keeps its timer when a RequestVote raises its term.",
};

const APPEND: Rule = Rule {
    name: "immediate append",
    option: "append=immediate",
    side: Side::Model,
    sentence: "etcd-io/raft and raft-rs send an append to every follower as soon as the \
               leader appends a client entry (stepLeader, bcastAppend), where our model ships \
               entries with the next heartbeat.",
};

const REPLIES: Rule = Rule {
    name: "etcd's silences",
    option: "replies=etcd",
    side: Side::Model,
    sentence: "etcd-io/raft and raft-rs ignore a message of a stale term (an append is \
               answered only with PreVote or CheckQuorum on) and, with CheckQuorum, a vote or \
               pre-vote within the leader lease (raft.go, Step), where the paper's rule \
               answers both, so a stale leader steps down at once and a refused \
               pre-candidate asks again sooner.",
};

const LEADER_SEND: Rule = Rule {
    name: "leader sends first",
    option: "leader_send=parallel",
    side: Side::Model,
    sentence: "raft-rs hands a leader's messages out before its own write is durable (the \
               thesis, section 10.2.1; src/raw_node.rs, RawNode::ready), where our model \
               persists first, so a new leader's first append reaches its followers one \
               fsync later and the cluster is without a quorum leader one fsync longer.",
};

const CHECK_QUORUM_EVERY: Rule = Rule {
    name: "CheckQuorum per timeout",
    option: "check_quorum_every=timeout",
    side: Side::Model,
    sentence: "etcd-io/raft and raft-rs check the leader's quorum once per election timeout \
               (tickHeartbeat, MsgCheckQuorum), so a cut-off leader steps down 1 to 2 \
               timeouts after the cut, where our model steps down the instant a timeout \
               passes without a majority.",
};

/// Every pairing of the reference sweep, in page order.
pub const PAIRINGS: [Pairing; 3] = [
    Pairing {
        title: "raft-rs (tikv), the basic algorithm",
        model: "raft",
        library: "raftrs",
        rules: &[TICK, REDRAW, APPEND, REPLIES, LEADER_SEND],
        mechanisms: &[],
    },
    Pairing {
        title: "raft-rs (tikv) with PreVote and CheckQuorum",
        model: "raft+pre_vote+check_quorum",
        library: "raftrs+pre_vote+check_quorum",
        rules: &[
            TICK,
            REDRAW,
            APPEND,
            REPLIES,
            LEADER_SEND,
            CHECK_QUORUM_EVERY,
        ],
        mechanisms: &[],
    },
    Pairing {
        title: "Omni-Paxos against Raft with PreVote and CheckQuorum",
        model: "raft+pre_vote+check_quorum",
        library: "omnipaxos",
        rules: &[],
        mechanisms: &OMNI_MECHANISMS,
    },
];

/// Scenarios in which the leader is lost (crashed, paused, cut off or slowed).
const LEADER_LOST: &[&str] = &[
    "leader-crash",
    "leader-recovers",
    "flapping-leader",
    "flapping-node",
    "leader-pause",
    "amnesia-recover",
    "asymmetric-leader-out",
    "asymmetric-follower",
    "lossy-leader-crash",
    "partition-leader-minority",
    "quorum-loss",
    "liveness-omission-leader-out",
    "slow-leader",
];

/// Scenarios that cut links.
const LINKS_CUT: &[&str] = &[
    "partition-leader-minority",
    "partition-leader-majority",
    "asymmetric-leader-out",
    "asymmetric-follower",
    "follower-isolation-rejoin",
    "flaky-leader-link",
    "quorum-loss",
    "constrained-election",
    "chained",
    "bridge",
    "liveness-omission",
    "liveness-omission-leader-out",
];

const OMNI_MECHANISMS: [Mechanism; 10] = [
    Mechanism {
        name: "heartbeat rounds",
        sentence: "Ballot Leader Election notices a silent leader at the end of the first \
                   round without its reply and takes over one round later, 2 to 3 rounds of \
                   150 ms after the loss (omnipaxos/src/ballot_leader_election.rs, \
                   hb_timeout), where a Raft follower campaigns 150 to 300 ms after its last \
                   heartbeat.",
        metrics: &["failover_ms_p50", "elect_ms_p50", "unavailable_ms_mean"],
        sign: 1,
        scenarios: LEADER_LOST,
    },
    Mechanism {
        name: "one round to the first leader",
        sentence: "At boot every node runs the same rounds and the highest ballot takes over \
                   at the end of the first (150 ms) with one Prepare round and no split vote, \
                   where Raft's first leader waits for the earliest of n randomized timeouts \
                   and a PreVote round.",
        metrics: &["elect_ms_p50", "unavailable_ms_mean", "msgs_election_mean"],
        sign: -1,
        scenarios: &["cold-start"],
    },
    Mechanism {
        name: "simultaneous takeovers",
        sentence: "Every unhappy quorum-connected node takes over at the end of its own round \
                   (no randomized timeout holds the others back once one has), each with a \
                   Prepare, Promise and AcceptSync exchange per peer, and a recovering node \
                   asks every peer again (PrepareReq), so a lost leader costs more election \
                   messages.",
        metrics: &["msgs_election_mean"],
        sign: 1,
        scenarios: LEADER_LOST,
    },
    Mechanism {
        name: "one exchange per takeover",
        sentence: "One takeover costs a Prepare, a Promise and an AcceptSync per peer, \
                   3(n - 1) messages, where an election with PreVote costs a pre-vote and a \
                   vote round, 4(n - 1): with few survivors, when two takeovers rarely \
                   coincide, a lost leader costs fewer election messages.",
        metrics: &["msgs_election_mean"],
        sign: -1,
        scenarios: LEADER_LOST,
    },
    Mechanism {
        name: "staggered takeovers",
        sentence: "Each node's BLE round ends on its own ticker's phase: after a leader is \
                   lost, the first node whose round ends takes over with the highest ballot it \
                   has heard, and a node with a higher ballot whose round ends later takes over \
                   again, so leadership can pass through several nodes in one failover (leader \
                   crash seed 19 at n = 7: 1, 3, 4, 5, then 6 within 150 ms), each deposed one \
                   acting beside its successor until the higher Prepare reaches it, where a \
                   Raft vote is exclusive per term.",
        metrics: &["split_brain_rate"],
        sign: 1,
        scenarios: LEADER_LOST,
    },
    Mechanism {
        name: "a lost reply ends a leadership",
        sentence: "With two of three nodes left, every BLE round needs the one peer's reply: \
                   under 10 % loss about one round in five has none, a node takes over, and \
                   leadership changes hands every few rounds, rarely holding the verdict's \
                   span of ten election timeouts (n = 3 seed 3: ten hand-overs in 18 s), \
                   where a Raft follower waits out a randomized timeout of several heartbeats.",
        metrics: &["converged_rate"],
        sign: -1,
        scenarios: &["lossy-leader-crash"],
    },
    Mechanism {
        name: "patience of a round",
        sentence: "A follower judges its leader once per round, by whether any reply came \
                   in it, so a slow leader whose replies still arrive within a round keeps \
                   its followers, where a Raft follower campaigns as soon as one heartbeat \
                   gap exceeds its timeout.",
        metrics: &["unavailable_ms_mean"],
        sign: -1,
        scenarios: &["slow-leader"],
    },
    Mechanism {
        name: "no step-down without a higher ballot",
        sentence: "Sequence Paxos has no CheckQuorum: a leader that lost its quorum keeps its \
                   role, unable to commit, until a higher ballot's Prepare reaches it, so it \
                   acts beside its successor (split brain) where Raft's CheckQuorum leader \
                   steps down.",
        metrics: &["split_brain_rate"],
        sign: 1,
        scenarios: &[
            "partition-leader-minority",
            "quorum-loss",
            "flapping-leader",
            "lossy-leader-crash",
            "constrained-election",
            "slow-leader",
            "asymmetric-leader-out",
            "liveness-omission-leader-out",
        ],
    },
    Mechanism {
        name: "quorum-connected takeover",
        sentence: "BLE takes over only from a quorum-connected node whose every reply was \
                   unhappy, so a node cut off from a happy majority starts nothing (no \
                   election messages while cut or on rejoining), and where Raft cannot elect \
                   (the constrained election of the Omni-Paxos paper) the one \
                   quorum-connected node is found.",
        metrics: &["msgs_election_mean", "unavailable_ms_mean"],
        sign: -1,
        scenarios: LINKS_CUT,
    },
    Mechanism {
        name: "quorum-connected takeover (liveness)",
        sentence: "The same rule makes Omni-Paxos converge where a quorum-connected node \
                   exists but Raft's candidates keep failing (the paper's constrained \
                   election).",
        metrics: &["converged_rate"],
        sign: 1,
        scenarios: LINKS_CUT,
    },
];

impl Pairing {
    /// `spec` with the options of `rules` appended, in order.
    fn with(spec: &str, rules: impl IntoIterator<Item = &'static Rule>) -> String {
        let mut s = spec.to_string();
        for r in rules {
            s.push('+');
            s.push_str(r.option);
        }
        s
    }

    /// The options of one side.
    fn side(&self, side: Side) -> impl Iterator<Item = &'static Rule> + '_ {
        self.rules.iter().filter(move |r| r.side == side)
    }

    /// The as-shipped pair: (model, library).
    pub fn shipped(&self) -> (String, String) {
        (self.model.to_string(), self.library.to_string())
    }

    /// The matched pair: the model with every model-side rule, the library with every
    /// library-side rule. `None` without rules.
    pub fn matched(&self) -> Option<(String, String)> {
        (!self.rules.is_empty()).then(|| {
            (
                Pairing::with(self.model, self.side(Side::Model)),
                Pairing::with(self.library, self.side(Side::Library)),
            )
        })
    }

    /// The pair that isolates `rule`, oriented like the as-shipped pair (from the model's
    /// rule to the library's): (model, model + rule) for a model-side rule, (library + rule,
    /// library) for a library-side one.
    pub fn isolating(&self, rule: &'static Rule) -> (String, String) {
        match rule.side {
            Side::Model => (self.model.to_string(), Pairing::with(self.model, [rule])),
            Side::Library => (
                Pairing::with(self.library, [rule]),
                self.library.to_string(),
            ),
        }
    }

    /// Every spec this pairing needs, in a stable order.
    pub fn specs(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut add = |s: String| {
            if !out.contains(&s) {
                out.push(s);
            }
        };
        let (m, l) = self.shipped();
        add(m);
        add(l);
        if let Some((m, l)) = self.matched() {
            add(m);
            add(l);
        }
        for r in self.rules {
            let (a, b) = self.isolating(r);
            add(a);
            add(b);
        }
        out
    }
}

/// Every protocol spec of the reference sweep, each once, in pairing order.
pub fn protocols() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in &PAIRINGS {
        for s in p.specs() {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

/// The reference sweep as a [`SweepSpec`] (what `election-bench reference` runs).
pub fn sweep_spec() -> SweepSpec {
    SweepSpec {
        name: Some(NAME.to_string()),
        protocols: Some(protocols()),
        nodes: Some(NODES.to_vec()),
        scenarios: Some(SCENARIOS.iter().map(|s| s.to_string()).collect()),
        seeds: Some(SEEDS),
        params: FIXED
            .iter()
            .map(|(k, v)| (k.to_string(), vec![v.to_string()]))
            .collect(),
        ..SweepSpec::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_plans_and_every_pairing_has_its_specs() {
        let plan = sweep_spec()
            .plan()
            .expect("the reference sweep is a valid sweep");
        let specs: Vec<String> = plan.protocols.iter().map(|p| p.to_string()).collect();
        for p in &PAIRINGS {
            for s in p.specs() {
                assert!(specs.contains(&s), "{s} is not in the sweep");
            }
        }
        let (m, l) = PAIRINGS[0].matched().unwrap();
        assert_eq!(
            m,
            "raft+redraw=per_term+append=immediate+replies=etcd+leader_send=parallel"
        );
        assert_eq!(l, "raftrs+tick_ms=5");
        assert_eq!(
            PAIRINGS[0].isolating(&TICK),
            ("raftrs+tick_ms=5".to_string(), "raftrs".to_string())
        );
        assert!(PAIRINGS[2].matched().is_none());
    }
}
