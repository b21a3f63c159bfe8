//! The protocol families and protocol specs.
//!
//! A **family** is one entry of [`FAMILIES`]: its name (also the prefix of its parameters),
//! one line on what it is, whether ids carry meaning, how many service endpoints it runs,
//! how its configuration is built from the resolved parameters, how the manifest describes its
//! timing, which knobs `tune` turns and which real systems a tuned point maps onto. Every
//! consumer (plan, tune, the report's tune page, the live driver) reads the entry; nothing
//! else matches on the family. Running a family's nodes is [`Built::drive`]: one dispatch from
//! a configuration to a concrete [`Protocol`] type for every driver (the simulator here, the
//! UDP driver in `election-live`). Adding a family is a crate on `election-core`, its
//! parameters in [`crate::params::PARAMS`], a typed parameter struct, one entry here and one
//! arm in [`Built`].
//!
//! A **spec** is a family name plus options, `bully+quorum`, `raft+pre_vote+check_quorum`,
//! `ring+arrangement=random`. Each spec is its own series in results and charts; its options
//! are parameters of that family (`+quorum` is `bully.quorum=true`, `+rejoin=defer` is
//! `bully.rejoin=defer`) and win over the same parameters set globally. A **system spec**
//! (`etcd@3.4`, [`crate::systems`]) is the `raft` family with `raft.system` set to the
//! system's name, `etcd@3.4+pre_vote` the same with an option on top.

use std::fmt;
use std::sync::Arc;

use election_bully::{Bully, BullyConfig};
use election_core::{NodeId, ThreadedProtocol};
use election_lease::{Lease, LeaseConfig};
use election_omnipaxos::{OmniConfig, OmniPaxos};
use election_raft::{Clock, FollowerRule, Raft, RaftConfig};
use election_raftrs::{RaftRs, RaftrsConfig};
use election_ring::{Arrangement, Ring, RingConfig};
use election_sim::{ConfigError, Sim, SimConfig, TraceSink, TrialReport};
use election_store::{LeaseGroup, StoreConfig};

use crate::error::{usage, Result};
use crate::params::{canonical, lookup, Kind, ParamMap, Resolved, PARAMS};
use crate::tune::mapping::{self, Mapping};
use crate::tune::num;

/// The protocol families the workbench compares; each is one entry of [`FAMILIES`], in
/// catalog order (the enum's discriminant is the entry's index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProtocolKind {
    /// Garcia-Molina's bully election.
    Bully = 0,
    /// Chang-Roberts ring election.
    Ring = 1,
    /// Raft-style randomized-timeout majority election.
    Raft = 2,
    /// Lease-based election through a lock service (client-go's `leaderelection`).
    Lease = 3,
    /// tikv's raft-rs, the production library, behind the same contract.
    Raftrs = 4,
    /// Omni-Paxos (the `omnipaxos` crate): Ballot Leader Election and Sequence Paxos.
    OmniPaxos = 5,
}

/// One protocol family: everything the runner, `tune`, the report and the live driver need to
/// know about it, in one place (see the module docs).
pub struct Family {
    /// Which family.
    pub kind: ProtocolKind,
    /// Its name, which is also the prefix of its parameters.
    pub name: &'static str,
    /// One line on what it is.
    pub about: &'static str,
    /// Does its behaviour depend on which node has which id (the bully's priorities, the
    /// ring's order)? If not (Raft, the lease), patterns that differ only by a permutation of
    /// the followers behave alike, and `explore` runs one per class.
    pub uses_ids: bool,
    /// How many service endpoints (ids after the members) it runs: the lease store.
    pub services: u32,
    /// Does it have a failure detector a scenario can force (`on_suspect`) or switch off (a
    /// failure-detector timer)? Scenarios that do either are skipped for a family without.
    pub detector: bool,
    /// Why it has no planned hand-over (`Protocol::on_handover` left at its default), if it
    /// has none: scenarios with a `handover` action are skipped for it with this reason.
    pub no_handover: Option<&'static str>,
    /// Build and validate its configuration for `n` nodes.
    pub build: fn(n: u32, r: &Resolved) -> Result<Built, String>,
    /// Its timing in one line, for the manifest's `config.timing`.
    pub timing: fn(r: &Resolved) -> String,
    /// The parameters a `tune` point at timeout `t` and period `period` sets beyond the shared
    /// failure detector (`detect_timeout_ms`, `detect_jitter_ms`), as the runner's canonical
    /// form prints them (see [`crate::tune::point_params`]).
    pub tune_knobs: fn(t: f64, period: f64) -> Vec<(&'static str, String)>,
    /// A tuned point `(timeout_ms, ratio)` as the settings of the real systems that ship this
    /// family ([`crate::tune::mapping`]).
    pub systems: fn(timeout_ms: f64, ratio: f64) -> Vec<Mapping>,
}

/// Every family, in catalog order (indexed by [`ProtocolKind`]).
pub const FAMILIES: [Family; 6] = [
    Family {
        kind: ProtocolKind::Bully,
        name: "bully",
        about: "Garcia-Molina's bully election: the highest live id wins",
        uses_ids: true,
        services: 0,
        detector: true,
        no_handover: None,
        build: |n, r| {
            let mut c = BullyConfig::new(n);
            c.timing = r.timing();
            c.t_elec = Resolved::duration(r.bully.t_elec_ms);
            c.t_coord = r.bully.t_coord_ms.map(Resolved::duration);
            c.rejoin = r.bully.rejoin;
            c.quorum = r.bully.quorum;
            c.epoch = r.bully.epoch;
            c.validate()?;
            Ok(Built::Bully(PerNode::shared(c)))
        },
        timing: |r| {
            format!(
                "heartbeat {} ms; suspects after {}-{} ms; t_elec {} ms, t_coord {} ms",
                r.heartbeat_ms,
                r.detect_timeout_ms,
                r.window_ms(),
                r.bully.t_elec_ms,
                r.bully.t_coord_ms.unwrap_or(2.0 * r.bully.t_elec_ms)
            )
        },
        tune_knobs: |_, period| vec![("heartbeat_ms", num(period))],
        systems: |t, k| vec![mapping::hand_written("bully", t, k)],
    },
    Family {
        kind: ProtocolKind::Ring,
        name: "ring",
        about: "Chang-Roberts ring election: the highest id travels the ring",
        uses_ids: true,
        services: 0,
        detector: true,
        no_handover: None,
        build: |n, r| {
            let mut c = RingConfig::new(n);
            c.timing = r.timing();
            c.t_hop = Resolved::duration(r.ring.t_hop_ms);
            c.hop_acks = r.ring.hop_acks;
            let random = r.ring.arrangement == "random";
            c.arrangement = Arrangement::from_name(&r.ring.arrangement, 0)
                .ok_or_else(|| format!("unknown arrangement {:?}", r.ring.arrangement))?;
            c.validate()?;
            Ok(Built::Ring(PerNode::shared(c), random))
        },
        timing: |r| {
            format!(
                "heartbeat {} ms; suspects after {}-{} ms; t_hop {} ms",
                r.heartbeat_ms,
                r.detect_timeout_ms,
                r.window_ms(),
                r.ring.t_hop_ms
            )
        },
        tune_knobs: |_, period| vec![("heartbeat_ms", num(period))],
        systems: |t, k| vec![mapping::hand_written("Chang-Roberts ring", t, k)],
    },
    Family {
        kind: ProtocolKind::Raft,
        name: "raft",
        about: "Raft-style randomized-timeout majority election",
        // A Raft leader is any id; ids only name the nodes.
        uses_ids: false,
        services: 0,
        detector: true,
        no_handover: None,
        build: |n, r| {
            let mut c = RaftConfig::with_timing(n, r.timing());
            c.timeout_min = Resolved::duration(r.raft.timeout_ms.0);
            c.timeout_max = Resolved::duration(r.raft.timeout_ms.1);
            c.pre_vote = r.raft.pre_vote;
            c.check_quorum = r.raft.check_quorum;
            c.redraw = r.raft.redraw;
            c.check_quorum_every = r.raft.check_quorum_every;
            c.follower = r.raft.follower;
            c.append = r.raft.append;
            c.replies = r.raft.replies;
            c.leader_send = r.raft.leader_send;
            c.clock = r.raft.clock;
            c.voters = r.raft.voters;
            c.lagging = r
                .raft
                .lagging
                .iter()
                .map(|&(node, k)| (NodeId(node), k))
                .collect();
            c.validate()?;
            Ok(Built::Raft(PerNode::shared(c)))
        },
        timing: |r| {
            let mut s = format!(
                "heartbeat {} ms; election timeout {}-{} ms",
                r.heartbeat_ms, r.raft.timeout_ms.0, r.raft.timeout_ms.1
            );
            if r.raft.clock == Clock::Ticks {
                let mut c = RaftConfig::with_timing(0, r.timing());
                c.timeout_min = Resolved::duration(r.raft.timeout_ms.0);
                c.timeout_max = Resolved::duration(r.raft.timeout_ms.1);
                let (e, end) = c.election_ticks();
                s.push_str(&format!(
                    "; counted in ticks of {} ms on each node's own ticker: {e}-{} ticks, lease and CheckQuorum {e} ticks",
                    r.heartbeat_ms,
                    end - 1
                ));
            }
            s
        },
        tune_knobs: |t, period| {
            vec![
                ("heartbeat_ms", num(period)),
                ("raft.timeout_ms", format!("{}-{}", num(t), num(2.0 * t))),
            ]
        },
        systems: |t, k| {
            let period = crate::tune::period(t, k);
            vec![
                mapping::etcd(t, period),
                mapping::hashicorp(t, k),
                mapping::consul(t),
            ]
        },
    },
    Family {
        kind: ProtocolKind::Lease,
        name: "lease",
        about: "lease-based election through a lock service (client-go's leaderelection)",
        // Members race for the store by compare-and-swap; ids only name them.
        uses_ids: false,
        services: election_lease::SERVICES,
        detector: true,
        no_handover: None,
        build: |n, r| {
            let mut c = LeaseConfig::new(n);
            c.duration = Resolved::duration(r.lease.duration_ms);
            c.renew_deadline = Resolved::duration(r.lease.renew_deadline_ms);
            c.retry = Resolved::duration(r.lease.retry_ms);
            c.release_on_cancel = r.lease.release_on_cancel;
            c.expiry = r.lease.expiry;
            c.cas = r.lease.cas;
            c.on_loss = r.lease.on_loss;
            c.restart = (
                Resolved::duration(r.lease.restart_ms.0),
                Resolved::duration(r.lease.restart_ms.1),
            );
            c.reconnect = Resolved::duration(r.lease.reconnect_ms);
            if r.lease.store_nodes > 1 {
                let s = r.lease.store_nodes;
                let mut raft = RaftConfig::with_timing(
                    s,
                    election_core::Timing {
                        heartbeat: Resolved::duration(r.lease.store_heartbeat_ms),
                        detect_timeout: Resolved::duration(r.lease.store_election_ms),
                        detect_jitter: Resolved::duration(r.lease.store_election_ms),
                    },
                );
                raft.leader_send = election_raft::LeaderSend::Persisted;
                let sc = StoreConfig::new(c, raft);
                sc.validate()?;
                return Ok(Built::LeaseStore(PerNode::shared(sc)));
            }
            c.validate()?;
            Ok(Built::Lease(PerNode::shared(c)))
        },
        timing: |r| {
            format!(
                "lease duration {} ms; renew deadline {} ms; retry {} ms (x U[1, 2.2] when not holding)",
                r.lease.duration_ms, r.lease.renew_deadline_ms, r.lease.retry_ms
            )
        },
        tune_knobs: |t, period| {
            vec![
                ("lease.duration_ms", num(t)),
                ("lease.renew_deadline_ms", num(t * 2.0 / 3.0)),
                ("lease.retry_ms", num(period)),
            ]
        },
        systems: |t, k| vec![mapping::client_go(t, crate::tune::period(t, k))],
    },
    Family {
        kind: ProtocolKind::Raftrs,
        name: "raftrs",
        about: "tikv's raft-rs (the raft crate 0.7), driven by ticks on each node's clock",
        uses_ids: false,
        services: 0,
        // A raft-rs follower campaigns only when its ticks count out; nothing can force it.
        detector: false,
        no_handover: None,
        build: |n, r| {
            check_tick("raftrs.tick_ms", r.raftrs.tick_ms, r)?;
            let mut c = RaftrsConfig::with_timing(n, r.timing());
            c.tick = Resolved::duration(r.raftrs.tick_ms);
            c.pre_vote = r.raftrs.pre_vote;
            c.check_quorum = r.raftrs.check_quorum;
            c.validate()?;
            Ok(Built::Raftrs(PerNode::shared(c)))
        },
        timing: |r| {
            let mut c = RaftrsConfig::with_timing(0, r.timing());
            c.tick = Resolved::duration(r.raftrs.tick_ms);
            c.describe()
        },
        tune_knobs: |_, period| vec![("heartbeat_ms", num(period))],
        systems: |t, k| vec![mapping::raft_rs(t, crate::tune::period(t, k))],
    },
    Family {
        kind: ProtocolKind::OmniPaxos,
        name: "omnipaxos",
        about: "Omni-Paxos (EuroSys '23): the omnipaxos crate's Ballot Leader Election and Sequence Paxos",
        // Ballots tie-break by pid: the highest id wins the first election.
        uses_ids: true,
        services: 0,
        // BLE's heartbeat rounds are its detector, on the same tick as replication.
        detector: false,
        no_handover: Some(
            "the omnipaxos crate (0.2.4) has no leadership transfer: a leader cannot hand over (its API has try_become_leader, for another server to take over, and set_priority, neither a leader stepping aside)",
        ),
        build: |n, r| {
            check_tick("omnipaxos.tick_ms", r.omnipaxos.tick_ms, r)?;
            let c = omni_config(n, r);
            c.validate()?;
            Ok(Built::OmniPaxos(PerNode::shared(c)))
        },
        timing: |r| omni_config(2, r).describe(),
        tune_knobs: |_, period| vec![("heartbeat_ms", num(period))],
        systems: |t, k| vec![mapping::omnipaxos(t, k)],
    },
];

/// The most ticks of a library adapter (`raftrs.tick_ms`, `omnipaxos.tick_ms`) in one heartbeat
/// interval: 50, a tick of 1 ms at the default 50 ms heartbeat.
pub const MAX_TICKS_PER_HEARTBEAT: f64 = 50.0;

/// A library's tick (`key` = `tick_ms`) against the timing it counts in whole ticks: from
/// `heartbeat_ms / MAX_TICKS_PER_HEARTBEAT` up to `heartbeat_ms` and `detect_timeout_ms`.
///
/// Longer, and raft-rs' `heartbeat_tick` or `election_tick`, or Omni-Paxos' ticks per round,
/// round to 0 and are clamped to 1: the library runs on the tick, not on the timing asked for.
/// Finer, and every node's ticks alone (one timer firing each, one unit of the trial's work
/// budget) spend the budget: by default 5 units a node per simulated ms, so a 0.2 ms tick
/// spends all of it and a 0.001 ms one 1000 times it; the trial stops `budget_exceeded` with no
/// election, which read as the protocol's liveness failure (issue 47).
fn check_tick(key: &str, tick_ms: f64, r: &Resolved) -> Result<(), String> {
    let f = crate::results::fmt_ms;
    let finest = r.heartbeat_ms / MAX_TICKS_PER_HEARTBEAT;
    let (bound, longest) = if r.detect_timeout_ms < r.heartbeat_ms {
        ("detect_timeout_ms", r.detect_timeout_ms)
    } else {
        ("heartbeat_ms", r.heartbeat_ms)
    };
    let range = format!(
        "the tick must be {}-{} ms with heartbeat_ms = {} ms and detect_timeout_ms = {} ms",
        f(finest),
        f(longest),
        f(r.heartbeat_ms),
        f(r.detect_timeout_ms)
    );
    if tick_ms > longest {
        return Err(format!(
            "{key} = {} ms is longer than {bound} = {} ms; {range}: the library counts its heartbeat and election timeout in whole ticks, and a tick longer than either rounds it to one tick, not the timing asked for",
            f(tick_ms),
            f(longest)
        ));
    }
    if tick_ms < finest {
        return Err(format!(
            "{key} = {} ms is finer than heartbeat_ms / {MAX_TICKS_PER_HEARTBEAT} = {} ms; {range}: every tick is a timer firing on every node and one unit of the trial's work budget (by default 5 a node per simulated ms), so a finer tick spends the budget on ticks and stops the trial before the protocol can elect",
            f(tick_ms),
            f(finest)
        ));
    }
    Ok(())
}

/// Omni-Paxos' tick and round from the resolved parameters (`election_omnipaxos` docs).
fn omni_config(n: u32, r: &Resolved) -> OmniConfig {
    OmniConfig::derive(
        n,
        Resolved::duration(r.omnipaxos.tick_ms),
        Resolved::duration(r.detect_timeout_ms),
    )
}

/// Every family name, in catalog order.
pub fn family_names() -> impl Iterator<Item = &'static str> {
    FAMILIES.iter().map(|f| f.name)
}

impl ProtocolKind {
    /// The family's entry in [`FAMILIES`].
    pub fn family(self) -> &'static Family {
        let f = &FAMILIES[self as usize];
        debug_assert_eq!(f.kind, self, "FAMILIES is in ProtocolKind order");
        f
    }

    /// See [`Family::uses_ids`].
    pub fn uses_ids(self) -> bool {
        self.family().uses_ids
    }

    /// The protocol's name, which is also the prefix of its parameters.
    pub fn name(self) -> &'static str {
        self.family().name
    }

    /// How many service endpoints a cell of this family runs with `r`: [`Family::services`],
    /// except the lease's, which has `lease.store_nodes`.
    pub fn services(self, r: &Resolved) -> u32 {
        match self {
            ProtocolKind::Lease => r.lease.store_nodes,
            _ => self.family().services,
        }
    }

    /// See [`Family::detector`].
    pub fn detector(self) -> bool {
        self.family().detector
    }

    /// Does a cell of this family with `r` have a failure detector a scenario can force or
    /// switch off? See [`ProtocolKind::no_detector`].
    pub fn has_detector(self, r: &Resolved) -> bool {
        self.no_detector(r).is_none()
    }

    /// Why a scenario cannot force or switch off the failure detection of a cell of this
    /// family with `r`, if it cannot: a family without a detector ([`Family::detector`]); a
    /// Raft counting ticks (`raft.clock = ticks`: its follower campaigns when its tick count
    /// runs out, as raft-rs does, and there is no detector timer to switch off); a Raft on
    /// hashicorp/raft's follower rule (`raft.follower = hashicorp`), whose heartbeat timer also
    /// decides whether it votes: hashicorp/raft's runFollower clears the known leader only
    /// when that timer fires, and requestVote rejects a candidate while a leader is known, so
    /// a follower whose detection is switched off would reject every candidate forever — a
    /// state a hashicorp/raft server cannot be in, which would read as the protocol's
    /// liveness failure (it did: 2,600 `no-leader` trials of `hashicorp-raft@1.7` in
    /// `leader-crash-lowest-detects` and `cascade-crash`).
    pub fn no_detector(self, r: &Resolved) -> Option<&'static str> {
        if !self.detector() {
            Some("this protocol has no failure detector to force (its timeouts are its own ticks)")
        } else if self == ProtocolKind::Raft && r.raft.clock == Clock::Ticks {
            Some("this Raft counts its timeouts in ticks and has no failure detector to force")
        } else if self == ProtocolKind::Raft && r.raft.follower == FollowerRule::Hashicorp {
            Some(
                "under hashicorp/raft's follower rule the heartbeat timer also decides whether a \
                 node votes (it rejects candidates while it knows a leader), so a node whose \
                 detection is off could never vote: a state hashicorp/raft cannot be in",
            )
        } else {
            None
        }
    }

    /// See [`Family::no_handover`].
    pub fn no_handover(self) -> Option<&'static str> {
        self.family().no_handover
    }

    /// The protocol named `s`, or an error listing the valid names.
    pub fn parse(s: &str) -> Result<ProtocolKind> {
        match FAMILIES.iter().find(|f| f.name == s) {
            Some(f) => Ok(f.kind),
            None => {
                let names: Vec<&str> = family_names().collect();
                Err(crate::Error::Usage(crate::error::unknown_name(
                    &format!("unknown protocol {s:?}"),
                    s,
                    names.iter().copied(),
                    &format!("valid protocols: {}", names.join(", ")),
                )))
            }
        }
    }

    /// The option names a spec of this protocol accepts (its parameters without the prefix).
    pub fn options(self) -> Vec<&'static str> {
        let prefix = format!("{}.", self.name());
        PARAMS
            .iter()
            .filter_map(|d| d.key.strip_prefix(prefix.as_str()))
            .collect()
    }
}

/// A protocol plus options, as written (`raft+pre_vote`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolSpec {
    /// The spec as written; the series name in results.
    pub spec: String,
    /// The protocol.
    pub kind: ProtocolKind,
    /// The options as parameters (`bully.quorum` → `true`).
    pub options: ParamMap,
}

impl ProtocolSpec {
    /// How many service endpoints this spec's cells run when nothing is set globally: its
    /// family's, or for the lease the spec's `store_nodes` option (`lease+store_nodes=3`).
    pub fn services(&self) -> u32 {
        match self.kind {
            ProtocolKind::Lease => self
                .options
                .get("lease.store_nodes")
                .and_then(|v| v.parse().ok())
                .unwrap_or(self.kind.family().services),
            _ => self.kind.family().services,
        }
    }
}

impl fmt::Display for ProtocolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spec)
    }
}

/// Refuse two specs of one list that run the same configuration: the same protocol with the
/// same options once options set to their defaults are dropped (`raft` and
/// `raft+pre_vote=false` would be two identical series).
pub fn check_distinct(specs: &[ProtocolSpec]) -> Result<()> {
    for (i, p) in specs.iter().enumerate() {
        if let Some(q) = specs[..i]
            .iter()
            .find(|q| q.kind == p.kind && q.effective_options() == p.effective_options())
        {
            return usage!(
                "the protocol list gives one spec twice: {:?} and {:?} are the same protocol \
                 with the same options (an option set to its default changes nothing)",
                q.spec,
                p.spec
            );
        }
    }
    Ok(())
}

impl ProtocolSpec {
    /// The options that differ from their parameter's default (a default that is a rule,
    /// such as `raft.timeout_ms`'s, is never dropped).
    ///
    /// Under a system spec (`raft.system`) the default of a parameter the system sets is the
    /// system's value: `etcd@3.4+check_quorum=false` differs from `etcd@3.4`, and
    /// `etcd@3.4+check_quorum` does not.
    pub fn effective_options(&self) -> ParamMap {
        let system = self
            .options
            .get("raft.system")
            .and_then(|s| crate::systems::named(s));
        self.options
            .iter()
            .filter(|(k, v)| {
                let default = match system.and_then(|s| s.value(k)) {
                    Some(value) => Some(value.to_string()),
                    None => lookup(k).ok().and_then(|d| canonical(d, d.default).ok()),
                };
                default.as_ref() != Some(*v)
            })
            .map(|(k, v)| (*k, v.clone()))
            .collect()
    }

    /// Parse `name(+option[=value])*`; `name` is a family, a system spec ([`crate::systems`]:
    /// `etcd@3.4` is `raft+system=etcd@3.4`) or a bundle (`k8s-lease` is
    /// `lease+profile=k8s`).
    pub fn parse(s: &str) -> Result<ProtocolSpec> {
        let s = s.trim();
        let mut parts = s.split('+');
        let first = parts.next().unwrap_or("").trim();
        let mut options = ParamMap::new();
        let bundle = crate::systems::bundle(first);
        let kind = match crate::systems::named(first) {
            Some(system) => {
                options.insert("raft.system", system.name.to_string());
                ProtocolKind::Raft
            }
            None if bundle.is_some() => ProtocolKind::parse(bundle.expect("checked").family)?,
            None if first.contains('@') => {
                let names: Vec<&str> = crate::systems::SYSTEMS.iter().map(|s| s.name).collect();
                return Err(crate::Error::Usage(crate::error::unknown_name(
                    &format!("unknown system {first:?}"),
                    first,
                    names.iter().copied(),
                    &format!("system specs: {}", names.join(", ")),
                )));
            }
            None => ProtocolKind::parse(first)?,
        };
        for opt in parts {
            let (name, value) = match opt.split_once('=') {
                Some((n, v)) => (n.trim(), Some(v.trim())),
                None => (opt.trim(), None),
            };
            let valid = || kind.options().join(", ");
            let key = format!("{}.{name}", kind.name());
            let Ok(def) = lookup(&key) else {
                return Err(crate::Error::Usage(crate::error::unknown_name(
                    &format!(
                        "protocol spec {s:?}: unknown {} option {name:?}",
                        kind.name()
                    ),
                    name,
                    kind.options(),
                    &format!("valid options: {}", valid()),
                )));
            };
            let value = match value {
                Some(v) => canonical(def, v)?,
                None if def.kind == Kind::Bool => "true".to_string(),
                None => {
                    return usage!(
                        "protocol spec {s:?}: option {name:?} needs a value ({name}=VALUE, {})",
                        def.kind.describe()
                    )
                }
            };
            if options.insert(def.key, value).is_some() {
                return usage!("protocol spec {s:?}: option {name:?} given twice");
            }
        }
        // A bundle's options are defaults under the ones written on top of it.
        for r in bundle.map_or(&[][..], |b| b.rules) {
            options
                .entry(lookup(r.key)?.key)
                .or_insert_with(|| r.value.to_string());
        }
        Ok(ProtocolSpec {
            spec: s.to_string(),
            kind,
            options,
        })
    }
}

/// One configuration per node: the shared one, and those of the nodes with a timing
/// multiplier of their own (`node.timing_multiplier`, [`Resolved::multiplied`]). It
/// dereferences to the shared configuration, which is what every node without a multiplier
/// (and everything that describes the cell) reads.
#[derive(Clone, Debug)]
pub struct PerNode<C> {
    shared: Arc<C>,
    own: Vec<(u32, Arc<C>)>,
}

impl<C> PerNode<C> {
    /// Every node runs `c`.
    pub fn shared(c: C) -> PerNode<C> {
        PerNode {
            shared: Arc::new(c),
            own: Vec::new(),
        }
    }

    /// The configuration node `id` runs.
    pub fn of(&self, id: NodeId) -> Arc<C> {
        self.own
            .iter()
            .find(|(node, _)| *node == id.0)
            .map_or_else(|| Arc::clone(&self.shared), |(_, c)| Arc::clone(c))
    }

    /// Does any node run a configuration of its own?
    pub fn mixed(&self) -> bool {
        !self.own.is_empty()
    }

    /// Every configuration changed by `f` (a ring's per-trial arrangement).
    fn map(&self, f: impl Fn(&C) -> C) -> PerNode<C> {
        PerNode {
            shared: Arc::new(f(&self.shared)),
            own: self
                .own
                .iter()
                .map(|(id, c)| (*id, Arc::new(f(c))))
                .collect(),
        }
    }
}

impl<C> std::ops::Deref for PerNode<C> {
    type Target = C;
    fn deref(&self) -> &C {
        &self.shared
    }
}

/// A protocol ready to run: its validated configuration, per node.
#[derive(Clone, Debug)]
pub enum Built {
    /// Bully.
    Bully(PerNode<BullyConfig>),
    /// Ring; a `random` arrangement is drawn per trial from the trial seed.
    Ring(PerNode<RingConfig>, bool),
    /// Raft.
    Raft(PerNode<RaftConfig>),
    /// Lease.
    Lease(PerNode<LeaseConfig>),
    /// Lease with a replicated store (`lease.store_nodes` > 1).
    LeaseStore(PerNode<StoreConfig>),
    /// raft-rs.
    Raftrs(PerNode<RaftrsConfig>),
    /// Omni-Paxos.
    OmniPaxos(PerNode<OmniConfig>),
}

/// A driver that runs one trial of a family's nodes: the simulator ([`Built::simulate`]) or
/// the live UDP driver. [`Built::drive`] hands it the concrete protocol type and the factory
/// of its nodes, so the dispatch from a configuration to a type is written once.
pub trait Drive {
    /// What a trial gives back.
    type Out;
    /// Run a trial whose nodes `new` builds.
    fn drive<P, F>(self, new: F) -> Self::Out
    where
        P: ThreadedProtocol,
        F: Fn(NodeId) -> P + Send + Sync + 'static;

    /// [`Drive::drive`], for a family whose nodes (and factory) can be cloned mid-trial, as
    /// [`Sim::run_all`] does to share the run before the first fault; by default the same as
    /// `drive`. Our own families are cloneable; the production libraries' nodes are not.
    fn drive_cloneable<P, F>(self, new: F) -> Self::Out
    where
        Self: Sized,
        P: ThreadedProtocol + Clone,
        F: Fn(NodeId) -> P + Send + Sync + Clone + 'static,
    {
        self.drive(new)
    }
}

impl Built {
    /// Build and validate `kind`'s configuration for `n` nodes from `r`.
    ///
    /// A node of `node.timing_multiplier` gets the configuration built from
    /// [`Resolved::multiplied`]; a node id past `n` is refused, naming the parameter.
    pub fn new(kind: ProtocolKind, n: u32, r: &Resolved) -> Result<Built, String> {
        let build = kind.family().build;
        let mut built = build(n, r)?;
        for &(id, k) in &r.timing_multiplier {
            if id > n {
                return Err(format!(
                    "node.timing_multiplier = {id}:{k}: node {id} is not in 1..={n}"
                ));
            }
            let own = build(n, &r.multiplied(k)?)
                .map_err(|e| format!("node.timing_multiplier = {id}:{k}: {e}"))?;
            built.set_own(id, own);
        }
        Ok(built)
    }

    /// Node `id` runs `own`'s shared configuration (of the same family).
    fn set_own(&mut self, id: u32, own: Built) {
        fn put<C>(p: &mut PerNode<C>, id: u32, own: PerNode<C>) {
            p.own.retain(|(node, _)| *node != id);
            p.own.push((id, own.shared));
        }
        match (self, own) {
            (Built::Bully(p), Built::Bully(o)) => put(p, id, o),
            (Built::Ring(p, _), Built::Ring(o, _)) => put(p, id, o),
            (Built::Raft(p), Built::Raft(o)) => put(p, id, o),
            (Built::Lease(p), Built::Lease(o)) => put(p, id, o),
            // A member's own timing; the store's endpoints (ids above n) keep the shared one.
            (Built::LeaseStore(p), Built::LeaseStore(o)) => put(p, id, o),
            (Built::Raftrs(p), Built::Raftrs(o)) => put(p, id, o),
            (Built::OmniPaxos(p), Built::OmniPaxos(o)) => put(p, id, o),
            _ => unreachable!("a family builds its own variant"),
        }
    }

    /// Does any node run a timing of its own (`node.timing_multiplier`)?
    pub fn mixed(&self) -> bool {
        match self {
            Built::Bully(p) => p.mixed(),
            Built::Ring(p, _) => p.mixed(),
            Built::Raft(p) => p.mixed(),
            Built::Lease(p) => p.mixed(),
            Built::LeaseStore(p) => p.mixed(),
            Built::Raftrs(p) => p.mixed(),
            Built::OmniPaxos(p) => p.mixed(),
        }
    }

    /// The family this configuration belongs to.
    pub fn kind(&self) -> ProtocolKind {
        match self {
            Built::Bully(_) => ProtocolKind::Bully,
            Built::Ring(..) => ProtocolKind::Ring,
            Built::Raft(_) => ProtocolKind::Raft,
            Built::Lease(_) | Built::LeaseStore(_) => ProtocolKind::Lease,
            Built::Raftrs(_) => ProtocolKind::Raftrs,
            Built::OmniPaxos(_) => ProtocolKind::OmniPaxos,
        }
    }

    /// How many service endpoints it runs (the lease's store endpoints).
    pub fn services(&self) -> u32 {
        match self {
            Built::Lease(c) => c.of(NodeId(1)).stores,
            Built::LeaseStore(c) => c.of(NodeId(1)).lease.stores,
            other => other.kind().family().services,
        }
    }

    /// Does this configuration's behaviour depend on which node has which id: nodes with a
    /// timing of their own, its family's [`Family::uses_ids`], or a Raft whose `voters` are fewer than its nodes (the lowest ids
    /// vote, the others are learners, so permuting the followers changes who can elect)?
    pub fn uses_ids(&self) -> bool {
        if self.mixed() {
            return true;
        }
        match self {
            Built::Raft(c) => c.voter_count() < c.n,
            other => other.kind().uses_ids(),
        }
    }

    /// Run one trial with `driver`, for the trial seeded `seed` (a ring's `random`
    /// arrangement is drawn from it, the same in simulation and live).
    pub fn drive<D: Drive>(&self, seed: u64, driver: D) -> D::Out {
        match self {
            Built::Bully(c) => {
                let c = c.clone();
                driver.drive_cloneable(move |id| Bully::new(id, c.of(id)))
            }
            Built::Ring(c, random) => {
                let c = if *random {
                    c.map(|c| {
                        let mut c2 = RingConfig::clone(c);
                        c2.arrangement = Arrangement::Random { seed };
                        c2
                    })
                } else {
                    c.clone()
                };
                driver.drive_cloneable(move |id| Ring::new(id, c.of(id)))
            }
            Built::Raft(c) => {
                let c = c.clone();
                driver.drive_cloneable(move |id| Raft::new(id, c.of(id)))
            }
            Built::Lease(c) => {
                let c = c.clone();
                driver.drive_cloneable(move |id| Lease::new(id, c.of(id)))
            }
            Built::LeaseStore(c) => {
                let c = c.clone();
                driver.drive_cloneable(move |id| LeaseGroup::new(id, &c.of(id)))
            }
            Built::Raftrs(c) => {
                let c = c.clone();
                driver.drive(move |id| RaftRs::new(id, c.of(id)))
            }
            Built::OmniPaxos(c) => {
                let c = c.clone();
                driver.drive(move |id| OmniPaxos::new(id, c.of(id)))
            }
        }
    }

    /// Run one simulated trial of this protocol.
    pub fn simulate(&self, cfg: SimConfig) -> Result<TrialReport, ConfigError> {
        self.simulate_streaming(cfg, None)
    }

    /// Run one simulated trial of this protocol, handing every trace record to `sink` as it
    /// is made (if given).
    pub fn simulate_streaming(
        &self,
        cfg: SimConfig,
        sink: Option<TraceSink>,
    ) -> Result<TrialReport, ConfigError> {
        struct Simulate(SimConfig, Option<TraceSink>);
        impl Drive for Simulate {
            type Out = Result<TrialReport, ConfigError>;
            fn drive<P, F>(self, new: F) -> Self::Out
            where
                P: ThreadedProtocol,
                F: Fn(NodeId) -> P + Send + Sync + 'static,
            {
                let mut sim = Sim::new(self.0, new)?;
                if let Some(s) = self.1 {
                    sim.stream_trace(s);
                }
                Ok(sim.run())
            }
        }
        let seed = cfg.seed;
        self.drive(seed, Simulate(cfg, sink))
    }

    /// Run one simulated trial per configuration, all with `seed` (every configuration's), and
    /// each exactly as [`Built::simulate`] runs it; a cloneable family shares the run before
    /// the first fault between configurations that differ only in their faults
    /// ([`Sim::run_all`]).
    pub fn simulate_all(
        &self,
        seed: u64,
        cfgs: Vec<SimConfig>,
    ) -> Vec<Result<TrialReport, ConfigError>> {
        debug_assert!(cfgs.iter().all(|c| c.seed == seed));
        struct SimulateAll(Vec<SimConfig>);
        impl Drive for SimulateAll {
            type Out = Vec<Result<TrialReport, ConfigError>>;
            fn drive<P, F>(self, new: F) -> Self::Out
            where
                P: ThreadedProtocol,
                F: Fn(NodeId) -> P + Send + Sync + 'static,
            {
                self.0
                    .into_iter()
                    .map(|cfg| Sim::new(cfg, &new).map(Sim::run))
                    .collect()
            }
            fn drive_cloneable<P, F>(self, new: F) -> Self::Out
            where
                P: ThreadedProtocol + Clone,
                F: Fn(NodeId) -> P + Send + Sync + Clone + 'static,
            {
                Sim::run_all(self.0, new)
            }
        }
        self.drive(seed, SimulateAll(cfgs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        let s = ProtocolSpec::parse("raft+pre_vote+check_quorum").unwrap();
        assert_eq!(s.kind, ProtocolKind::Raft);
        assert_eq!(s.options.get("raft.pre_vote").unwrap(), "true");
        assert_eq!(s.options.get("raft.check_quorum").unwrap(), "true");
        let s = ProtocolSpec::parse("bully+rejoin=defer").unwrap();
        assert_eq!(s.options.get("bully.rejoin").unwrap(), "defer");
        let s = ProtocolSpec::parse("ring+hop_acks=false").unwrap();
        assert_eq!(s.options.get("ring.hop_acks").unwrap(), "false");
        let s = ProtocolSpec::parse("lease+release_on_cancel+profile=k8s").unwrap();
        assert_eq!(s.kind, ProtocolKind::Lease);
        assert_eq!(s.services(), 1, "the store");
        assert_eq!(
            ProtocolSpec::parse("lease+store_nodes=3")
                .unwrap()
                .services(),
            3
        );
        assert_eq!(s.options.get("lease.release_on_cancel").unwrap(), "true");
        assert_eq!(s.options.get("lease.profile").unwrap(), "k8s");
        assert_eq!(ProtocolSpec::parse("raft").unwrap().services(), 0);
        assert!(ProtocolSpec::parse("lease+profile=prod").is_err());
    }

    /// `raft+voters=K`: `raft.voters`, built into the Raft configuration; 0 refused naming
    /// the parameter and the value; below the cluster size the configuration depends on ids
    /// (explore samples instead of canonicalizing), at or above it is plain Raft.
    #[test]
    fn raft_voters_builds_learners_and_zero_is_refused_by_name() {
        let s = ProtocolSpec::parse("raft+pre_vote+check_quorum+voters=5").unwrap();
        assert_eq!(s.options.get("raft.voters").unwrap(), "5");
        let e = ProtocolSpec::parse("raft+voters=0")
            .unwrap_err()
            .to_string();
        assert!(e.contains("raft.voters") && e.contains("\"0\""), "{e}");
        let lan = crate::net::NetProfile::builtin("lan").unwrap();
        let r = Resolved::resolve(&lan, &ParamMap::new()).unwrap();
        assert_eq!(r.raft.voters, None);
        let mut set = ParamMap::new();
        set.insert("raft.voters", "5".into());
        let r = Resolved::resolve(&lan, &set).unwrap();
        assert_eq!(r.raft.voters, Some(5));
        for (n, learners) in [(51, true), (6, true), (5, false), (3, false)] {
            let built = Built::new(ProtocolKind::Raft, n, &r).unwrap();
            let Built::Raft(c) = &built else {
                panic!("not raft")
            };
            assert_eq!(c.voters, Some(5));
            assert_eq!(c.voter_count(), n.min(5));
            assert_eq!(built.uses_ids(), learners, "n = {n}");
        }
        let plain = Resolved::resolve(&lan, &ParamMap::new()).unwrap();
        assert!(!Built::new(ProtocolKind::Raft, 51, &plain)
            .unwrap()
            .uses_ids());
    }

    /// Issue 47: `raftrs.tick_ms=0.001`, or a tick longer than the heartbeat or the timeout,
    /// ran and read as the protocol's liveness failure; now refused, naming the field, the
    /// value and the range. The bounds themselves, a multiplied node and the reference's
    /// `tick_ms=5` build.
    #[test]
    fn a_library_tick_far_from_the_timing_is_refused_by_name() {
        let lan = crate::net::NetProfile::builtin("lan").unwrap();
        let with = |sets: &[(&'static str, &str)]| {
            let mut m = ParamMap::new();
            for (k, v) in sets {
                m.insert(k, v.to_string());
            }
            Resolved::resolve(&lan, &m).unwrap()
        };
        for (kind, key) in [
            (ProtocolKind::Raftrs, "raftrs.tick_ms"),
            (ProtocolKind::OmniPaxos, "omnipaxos.tick_ms"),
        ] {
            for (tick, why) in [
                ("0.001", "is finer than heartbeat_ms / 50 = 1 ms"),
                ("0.99", "is finer than heartbeat_ms / 50 = 1 ms"),
                ("50.5", "is longer than heartbeat_ms = 50 ms"),
                ("1000", "is longer than heartbeat_ms = 50 ms"),
            ] {
                let e = Built::new(kind, 3, &with(&[(key, tick)])).unwrap_err();
                assert!(e.starts_with(&format!("{key} = {tick} ms {why}")), "{e}");
                assert!(e.contains("the tick must be 1-50 ms"), "{e}");
            }
            let e = Built::new(
                kind,
                3,
                &with(&[("detect_timeout_ms", "40"), ("detect_jitter_ms", "40")]),
            )
            .unwrap_err();
            assert!(
                e.contains("is longer than detect_timeout_ms = 40 ms"),
                "{e}"
            );
            for tick in ["1", "5", "50"] {
                Built::new(kind, 3, &with(&[(key, tick)])).unwrap();
            }
            let slow = with(&[(key, "5"), ("node.timing_multiplier", "3:10")]);
            Built::new(kind, 3, &slow).unwrap();
        }
    }

    /// The table is the one definition of a family: indexed by its kind, names unique, every
    /// family has options, builds for 3 nodes from the defaults, and maps onto some system.
    #[test]
    fn the_family_table_is_consistent() {
        let lan = crate::net::NetProfile::builtin("lan").unwrap();
        let r = Resolved::resolve(&lan, &ParamMap::new()).unwrap();
        for (i, f) in FAMILIES.iter().enumerate() {
            assert_eq!(f.kind as usize, i, "{}", f.name);
            assert_eq!(f.kind.family().name, f.name);
            assert_eq!(ProtocolKind::parse(f.name).unwrap(), f.kind);
            assert!(!f.kind.options().is_empty(), "{} has no options", f.name);
            let built = Built::new(f.kind, 3, &r).unwrap();
            assert_eq!(built.kind(), f.kind);
            assert!(!(f.systems)(300.0, 5.0).is_empty(), "{}", f.name);
            assert!(!(f.timing)(&r).is_empty());
            assert!(FAMILIES[..i].iter().all(|g| g.name != f.name));
        }
        assert_eq!(
            ProtocolKind::Lease.family().services,
            election_lease::SERVICES
        );
        assert!(!ProtocolKind::OmniPaxos.family().detector);
    }

    /// A system spec is the Raft family with `raft.system`: `etcd@3.4` expands to etcd 3.4's
    /// documented rules and timings (the table in `crate::systems`), built into the Raft
    /// configuration; what is set explicitly wins; `etcd@3.5` adds PreVote; an option on top
    /// is a what-if, and one that repeats the system's value is the same series.
    #[test]
    fn system_specs_expand_to_their_rules_and_timings() {
        use election_raft::{AppendRule, CheckQuorumEvery, LeaderSend, Redraw, RepliesRule};
        let lan = crate::net::NetProfile::builtin("lan").unwrap();
        let resolve = |spec: &str, global: &[(&'static str, &str)]| {
            let p = ProtocolSpec::parse(spec).unwrap();
            let mut params = ParamMap::new();
            for (k, v) in global {
                params.insert(k, v.to_string());
            }
            params.extend(p.options.iter().map(|(k, v)| (*k, v.clone())));
            (p, Resolved::resolve(&lan, &params).unwrap())
        };
        let (p, r) = resolve("etcd@3.4", &[]);
        assert_eq!(p.kind, ProtocolKind::Raft);
        assert_eq!(p.spec, "etcd@3.4");
        assert_eq!(p.options.get("raft.system").unwrap(), "etcd@3.4");
        assert_eq!(
            (r.heartbeat_ms, r.detect_timeout_ms, r.detect_jitter_ms),
            (100.0, 1000.0, 1000.0)
        );
        assert_eq!(r.raft.timeout_ms, (1000.0, 2000.0));
        let Built::Raft(c) = Built::new(ProtocolKind::Raft, 5, &r).unwrap() else {
            panic!("not raft")
        };
        assert_eq!(c.clock, Clock::Ticks);
        assert!(c.check_quorum && !c.pre_vote);
        assert_eq!(c.redraw, Redraw::PerTerm);
        assert_eq!(c.check_quorum_every, CheckQuorumEvery::Timeout);
        assert_eq!(c.replies, RepliesRule::Etcd);
        assert_eq!(c.append, AppendRule::Immediate);
        assert_eq!(c.leader_send, LeaderSend::Parallel);
        assert_eq!(c.election_ticks(), (10, 20));
        assert_eq!(c.timing.heartbeat, std::time::Duration::from_millis(100));
        // The scenario times derive from the system's window (2 s).
        assert_eq!(r.fault_at_ms, 8000.0);
        assert!(!ProtocolKind::Raft.has_detector(&r));
        assert!(ProtocolKind::Raft.has_detector(&resolve("raft", &[]).1));
        let timing = (ProtocolKind::Raft.family().timing)(&r);
        assert!(timing.contains("10-19 ticks"), "{timing}");
        // The same spec spelt as the family with the option.
        let (q, rq) = resolve("raft+system=etcd@3.4", &[]);
        assert_eq!(rq, r);
        check_distinct(&[p.clone(), q]).unwrap_err();
        // etcd 3.5: PreVote on, nothing else changes.
        let (_, r5) = resolve("etcd@3.5", &[]);
        assert!(r5.raft.pre_vote);
        let mut r5_off = r5.clone();
        r5_off.raft.pre_vote = false;
        assert_eq!(r5_off, r);
        // Explicit values win: a global timing, an option of the spec.
        let (_, r50) = resolve("etcd@3.4", &[("heartbeat_ms", "50")]);
        assert_eq!(r50.heartbeat_ms, 50.0);
        let (w, rw) = resolve("etcd@3.4+pre_vote+clock=time+check_quorum_every=rearm", &[]);
        assert!(rw.raft.pre_vote && rw.raft.clock == Clock::Time);
        assert_eq!(rw.heartbeat_ms, 100.0);
        assert_eq!(w.effective_options().len(), 4);
        // An option equal to the system's value changes nothing; one that differs does.
        let same = ProtocolSpec::parse("etcd@3.4+check_quorum").unwrap();
        check_distinct(&[p.clone(), same]).unwrap_err();
        let off = ProtocolSpec::parse("etcd@3.4+check_quorum=false").unwrap();
        check_distinct(&[p, off]).unwrap();
        // hashicorp/raft: its follower rule, no ticks.
        let (_, h) = resolve("hashicorp-raft@1.7", &[]);
        assert_eq!(h.raft.follower, election_raft::FollowerRule::Hashicorp);
        assert!(h.raft.pre_vote && h.raft.check_quorum && h.raft.clock == Clock::Time);
        Built::new(ProtocolKind::Raft, 3, &h).unwrap();
        // Every system builds; unknown ones are refused with the list.
        for s in crate::systems::SYSTEMS {
            Built::new(ProtocolKind::Raft, 3, &resolve(s.name, &[]).1).unwrap();
        }
        let e = ProtocolSpec::parse("etcd@9.9").unwrap_err().to_string();
        assert!(e.contains("etcd@3.4") && e.contains("etcd@3.5"), "{e}");
    }

    #[test]
    fn bad_specs_list_the_valid_names() {
        let e = ProtocolSpec::parse("paxos").unwrap_err().to_string();
        assert!(e.contains("bully, ring, raft, lease, raftrs"), "{e}");
        let e = ProtocolSpec::parse("bully+fast").unwrap_err().to_string();
        assert!(e.contains("quorum") && e.contains("epoch"), "{e}");
        let e = ProtocolSpec::parse("raft+timeout_ms")
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs a value"), "{e}");
        assert!(ProtocolSpec::parse("raft+pre_vote+pre_vote").is_err());
    }

    /// `raft` and `raft+pre_vote=false` ran as two identical series; `sweep` and `tune` both
    /// refuse specs that differ only by options set to their defaults.
    #[test]
    fn specs_equal_up_to_default_options_are_one_series() {
        let specs = |list: &[&str]| {
            list.iter()
                .map(|s| ProtocolSpec::parse(s).unwrap())
                .collect::<Vec<_>>()
        };
        for dup in [
            &["raft", "raft+pre_vote=false"][..],
            &["raft+pre_vote", "raft+pre_vote=true"],
            &["bully", "bully+quorum=false"],
            &["ring+hop_acks", "ring"],
        ] {
            let e = check_distinct(&specs(dup)).unwrap_err().to_string();
            assert!(e.contains(dup[0]) && e.contains(dup[1]), "{e}");
        }
        check_distinct(&specs(&[
            "raft",
            "raft+pre_vote",
            "raft+pre_vote+check_quorum",
        ]))
        .unwrap();
        let tune = crate::tune::TuneOptions {
            protocols: vec!["raft".into(), "raft+pre_vote=false".into()],
            ..crate::tune::TuneOptions::defaults("dup")
        };
        let e = crate::tune::tune(&tune).unwrap_err().to_string();
        assert!(e.contains("gives one spec twice"), "{e}");
    }
}
