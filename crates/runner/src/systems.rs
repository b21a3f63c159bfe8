//! Systems as deployed: named bundles of our Raft's rules and a real system's default timings.
//!
//! A **system spec** names one system and version a reviewer would deploy (`etcd@3.4`,
//! `etcd@3.5`, `hashicorp-raft@1.6`, `hashicorp-raft@1.7`, `consul@1.16`). It is our `raft` family with the
//! parameter `raft.system` set to that name ([`SYSTEMS`]), so `etcd@3.4` and
//! `raft+system=etcd@3.4` are the same spec, and the spec is written and read as every other:
//! `etcd@3.4+pre_vote` asks what etcd 3.4 would do with PreVote on. Each system is data: the
//! parameters it sets, each with the value the real system runs and the source file and
//! function that enforce it. The values are *defaults* of the cells that run the spec, as
//! `lease.profile = k8s` sets its timings: anything set explicitly (`--set heartbeat_ms=50`, a
//! varied parameter, an option of the spec) wins ([`with_defaults`], read by
//! [`crate::params::Resolved::resolve`]).
//!
//! The timings are the systems' defaults: etcd's `--heartbeat-interval` 100 ms and
//! `--election-timeout` 1000 ms, hashicorp/raft's `HeartbeatTimeout` and `ElectionTimeout`
//! 1000 ms with a leader heartbeat of a tenth of that, and Consul's: hashicorp/raft's times
//! its `performance.raft_multiplier` (5 by default). The scenario times that derive from the
//! detection window (`fault_at_ms`, `outage_ms`, `horizon_ms`, ...) follow, so a partition
//! outlasts an election timeout as it does at the workbench's own scale.

use crate::params::ParamMap;

/// One parameter a system sets: its key, the value the system runs, and where that rule or
/// default is enforced in the system's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The parameter (`raft.check_quorum`, `heartbeat_ms`).
    pub key: &'static str,
    /// Its value, in canonical form.
    pub value: &'static str,
    /// The source file and function (or flag) that enforce it.
    pub source: &'static str,
}

/// A system as deployed: its name (the spec) and the rules and timings it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct System {
    /// The spec's name, `NAME@VERSION`.
    pub name: &'static str,
    /// One line on what it is.
    pub about: &'static str,
    /// What it sets; every `raft.*` rule it does not name keeps this crate's default.
    pub rules: &'static [Rule],
}

impl System {
    /// The value this system gives `key`, if it sets it.
    pub fn value(&self, key: &str) -> Option<&'static str> {
        self.rules.iter().find(|r| r.key == key).map(|r| r.value)
    }
}

const fn rule(key: &'static str, value: &'static str, source: &'static str) -> Rule {
    Rule { key, value, source }
}

/// etcd's timings and the rules every etcd version here shares. etcd-io/raft is the library
/// (vendored as `raft/` in etcd 3.4, `go.etcd.io/raft/v3` later); its `raft.go` is cited.
macro_rules! etcd_rules {
    ($pre_vote:literal, $pre_vote_source:literal) => {
        &[
            rule(
                "heartbeat_ms",
                "100",
                "etcd embed/config.go: DefaultTickMs = 100 (--heartbeat-interval); etcdserver/raft.go startNode: HeartbeatTick: 1, one tick per heartbeat interval",
            ),
            rule(
                "detect_timeout_ms",
                "1000",
                "etcd embed/config.go: DefaultElectionMs = 1000 (--election-timeout); ElectionTicks() = ElectionMs / TickMs = 10 ticks",
            ),
            rule(
                "detect_jitter_ms",
                "1000",
                "etcd-io/raft raft.go resetRandomizedElectionTimeout: electionTimeout + rand.Intn(electionTimeout), the range [E, 2E) ticks",
            ),
            rule(
                "raft.clock",
                "ticks",
                "etcd etcdserver/raft.go raftNode.start: case <-r.ticker.C: r.tick() on each member's own time.NewTicker(heartbeat); etcd-io/raft raft.go tickElection, tickHeartbeat, pastElectionTimeout, and Step's inLease (electionElapsed < electionTimeout)",
            ),
            rule(
                "raft.check_quorum",
                "true",
                "etcd etcdserver/raft.go startNode (3.5: server/etcdserver/bootstrap.go raftConfig): CheckQuorum: true, not a flag",
            ),
            rule("raft.pre_vote", $pre_vote, $pre_vote_source),
            rule(
                "raft.redraw",
                "per_term",
                "etcd-io/raft raft.go reset(term) → resetRandomizedElectionTimeout, called from becomeFollower, becomeCandidate and becomeLeader only",
            ),
            rule(
                "raft.check_quorum_every",
                "timeout",
                "etcd-io/raft raft.go tickHeartbeat: electionElapsed >= electionTimeout → Step(MsgCheckQuorum); stepLeader MsgCheckQuorum: QuorumActive(), then RecentActive = false",
            ),
            rule(
                "raft.replies",
                "etcd",
                "etcd-io/raft raft.go Step: a message of a lower term ignored (an append answered with checkQuorum or preVote), a vote within the lease ignored",
            ),
            rule(
                "raft.append",
                "immediate",
                "etcd-io/raft raft.go stepLeader MsgProp: appendEntry, then bcastAppend",
            ),
            rule(
                "raft.leader_send",
                "parallel",
                "etcd etcdserver/raft.go raftNode.start: if islead, r.transport.Send(r.processMessages(rd.Messages)) before r.storage.Save",
            ),
        ]
    };
}

/// hashicorp/raft's rules that every spec on it shares (its follower's `lastContact` check, no
/// ticks), at the given timings: hashicorp/raft's own defaults, or Consul's, which scales them
/// by `raft_multiplier`.
macro_rules! hashicorp_rules {
    ($pre_vote:literal, $pre_vote_source:literal) => {
        hashicorp_rules!(
            $pre_vote,
            $pre_vote_source,
            "100",
            "hashicorp/raft replication.go heartbeat: every randomTimeout(HeartbeatTimeout / 10), 100-200 ms at the default",
            "1000",
            "hashicorp/raft config.go DefaultConfig: HeartbeatTimeout = ElectionTimeout = 1000 ms",
            "hashicorp/raft raft.go checkLeaderLease: the leader steps down without contact from a quorum (LeaderLeaseTimeout, 500 ms; this model's window is the election timeout)"
        )
    };
    ($pre_vote:literal, $pre_vote_source:literal, $heartbeat:literal, $heartbeat_source:literal,
     $timeout:literal, $timeout_source:literal, $lease_source:literal) => {
        &[
            rule("heartbeat_ms", $heartbeat, $heartbeat_source),
            rule("detect_timeout_ms", $timeout, $timeout_source),
            rule(
                "detect_jitter_ms",
                $timeout,
                "hashicorp/raft util.go randomTimeout(min): min + rand % min, the range [T, 2T)",
            ),
            rule(
                "raft.follower",
                "hashicorp",
                "hashicorp/raft raft.go runFollower (a timer that is never reset, campaign only without lastContact for HeartbeatTimeout) and requestVote / requestPreVote (rejected while a leader is known)",
            ),
            rule("raft.check_quorum", "true", $lease_source),
            rule("raft.pre_vote", $pre_vote, $pre_vote_source),
        ]
    };
}

/// Every system spec, in catalog order.
pub const SYSTEMS: &[System] = &[
    System {
        name: "etcd@3.4",
        about: "etcd 3.4 with its defaults: CheckQuorum, no PreVote, timeouts in ticks of each member's 100 ms ticker, election timeout 10-19 ticks",
        rules: etcd_rules!(
            "false",
            "etcd 3.4 embed/config.go NewConfig: PreVote: false (--pre-vote, off by default until 3.5)"
        ),
    },
    System {
        name: "etcd@3.5",
        about: "etcd 3.5 with its defaults: as etcd@3.4 with PreVote on",
        rules: etcd_rules!(
            "true",
            "etcd 3.5 server/embed/config.go NewConfig: PreVote: true (CHANGELOG-3.5: --pre-vote defaults to true)"
        ),
    },
    System {
        name: "hashicorp-raft@1.6",
        about: "hashicorp/raft before v1.7.0 with its defaults: the follower's lastContact check, CheckQuorum, no PreVote",
        rules: hashicorp_rules!(
            "false",
            "hashicorp/raft before v1.7.0 has no pre-vote (raft.go electSelf only)"
        ),
    },
    System {
        name: "hashicorp-raft@1.7",
        about: "hashicorp/raft v1.7 with its defaults: as hashicorp-raft@1.6 with PreVote on",
        rules: hashicorp_rules!(
            "true",
            "hashicorp/raft v1.7.0 config.go PreVoteDisabled = false by default; raft.go preElectSelf, requestPreVote"
        ),
    },
    System {
        name: "consul@1.16",
        about: "a Consul 1.16 server group with its defaults: hashicorp/raft v1.5 (as hashicorp-raft@1.6: no PreVote) with every Raft timing scaled by performance.raft_multiplier = 5, so heartbeat 500 ms and election timeout 5000 ms; Consul advises raft_multiplier = 1 in production, which is hashicorp-raft@1.6's timings",
        rules: hashicorp_rules!(
            "false",
            "consul go.mod: github.com/hashicorp/raft v1.5.0 (before v1.7.0, no pre-vote: raft.go electSelf only)",
            "500",
            "hashicorp/raft replication.go heartbeat: every randomTimeout(HeartbeatTimeout / 10); consul agent/config/builder.go: consul.raft.heartbeat_timeout (1000 ms, agent/config/default.go DefaultConsulSource) x performance.raft_multiplier",
            "5000",
            "consul agent/config/default.go DefaultConsulSource: consul.raft.election_timeout = heartbeat_timeout = 1000 ms; agent/config/builder.go: each x performance.raft_multiplier; agent/consul/config.go: DefaultRaftMultiplier = 5",
            "hashicorp/raft raft.go checkLeaderLease: the leader steps down without contact from a quorum (consul.raft.leader_lease_timeout 500 ms x raft_multiplier 5 = 2500 ms; this model's window is the election timeout)"
        ),
    },
];

/// A system that is not our Raft: a family with a bundle of its options, each with where the
/// real system sets it. `k8s-lease` is `lease+profile=k8s`; options written on top win
/// (`k8s-lease+store_nodes=3`: the store as three endpoints, as an HA control plane's API
/// servers), and one written to its parameter's default drops out of the spec's effective
/// options as any default does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bundle {
    /// The spec's name.
    pub name: &'static str,
    /// The family it runs (`lease`).
    pub family: &'static str,
    /// One line on what it is.
    pub about: &'static str,
    /// The options it sets, in canonical form, each with its source.
    pub rules: &'static [Rule],
}

/// Every bundle, in catalog order.
pub const BUNDLES: &[Bundle] = &[Bundle {
    name: "k8s-lease",
    family: "lease",
    about: "a Kubernetes Lease as kube-scheduler and kube-controller-manager run it: client-go's 15 s / 10 s / 2 s, and clients on long-lived HTTP/2 connections that give up a silent API server only after their health check (45 s, lease.reconnect_ms: it matters with a replicated store, k8s-lease+store_nodes=3)",
    rules: &[rule(
        "lease.profile",
        "k8s",
        "client-go tools/leaderelection/leaderelection.go (tryAcquireOrRenew, renew, acquire); k8s.io/component-base/config/v1alpha1/defaults.go RecommendedDefaultLeaderElectionConfiguration: LeaseDuration 15 s, RenewDeadline 10 s, RetryPeriod 2 s; the profile also sets lease.reconnect_ms to 45 s: k8s.io/apimachinery/pkg/util/net/http.go configureHTTP2Transport, ReadIdleTimeout 30 s + PingTimeout 15 s",
    )],
}];

/// The bundle called `name`, if any.
pub fn bundle(name: &str) -> Option<&'static Bundle> {
    BUNDLES.iter().find(|b| b.name == name)
}

/// The values `raft.system` takes: `none`, then every system's name.
pub const SYSTEM_NAMES: &[&str] = &[
    "none",
    "etcd@3.4",
    "etcd@3.5",
    "hashicorp-raft@1.6",
    "hashicorp-raft@1.7",
    "consul@1.16",
];

/// The system called `name`, if any.
pub fn named(name: &str) -> Option<&'static System> {
    SYSTEMS.iter().find(|s| s.name == name)
}

/// `params` with the defaults of the system its `raft.system` names filled in where `params`
/// does not set the key; `None` when no system is named (nothing to add).
pub fn with_defaults(params: &ParamMap) -> Option<ParamMap> {
    let system = named(params.get("raft.system")?)?;
    let mut out = params.clone();
    for r in system.rules {
        out.entry(r.key).or_insert_with(|| r.value.to_string());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{canonical, lookup};

    /// One name for one thing: `raft.system`'s choices are the table's names, each rule's key
    /// is a parameter and its value that parameter's canonical form, and no key is set twice.
    #[test]
    fn the_table_names_parameters_in_canonical_form() {
        let names: Vec<&str> = SYSTEMS.iter().map(|s| s.name).collect();
        assert_eq!(SYSTEM_NAMES[0], "none");
        assert_eq!(&SYSTEM_NAMES[1..], &names[..]);
        for s in SYSTEMS {
            assert!(
                s.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".@-".contains(c)),
                "{}",
                s.name
            );
            for (i, r) in s.rules.iter().enumerate() {
                let def = lookup(r.key).unwrap();
                assert_eq!(
                    canonical(def, r.value).unwrap(),
                    r.value,
                    "{} {}",
                    s.name,
                    r.key
                );
                assert!(!r.source.is_empty());
                assert!(s.rules[..i].iter().all(|q| q.key != r.key), "{}", r.key);
            }
        }
    }
}
