//! Protocol specs: a protocol name plus options, `bully+quorum`, `raft+pre_vote+check_quorum`,
//! `ring+arrangement=random`. Each spec is its own series in results and charts; its options
//! are parameters of that protocol (`+quorum` is `bully.quorum=true`, `+rejoin=defer` is
//! `bully.rejoin=defer`) and win over the same parameters set globally.

use std::fmt;
use std::sync::Arc;

use election_bully::{Bully, BullyConfig};
use election_core::{NodeId, Protocol};
use election_lease::{Lease, LeaseConfig};
use election_raft::{Raft, RaftConfig};
use election_ring::{Arrangement, Ring, RingConfig};
use election_sim::{ConfigError, Sim, SimConfig, TraceSink, TrialReport};

use crate::error::{usage, Result};
use crate::params::{canonical, lookup, Kind, ParamMap, Resolved, PARAMS};

/// The protocols the workbench compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProtocolKind {
    /// Garcia-Molina's bully election.
    Bully,
    /// Chang-Roberts ring election.
    Ring,
    /// Raft-style randomized-timeout majority election.
    Raft,
    /// Lease-based election through a lock service (client-go's `leaderelection`).
    Lease,
}

/// Every protocol name, in catalog order.
pub const PROTOCOLS: [&str; 4] = ["bully", "ring", "raft", "lease"];

impl ProtocolKind {
    /// Does the protocol's behaviour depend on which node has which id (the bully's priorities,
    /// the ring's order)? If not (Raft), patterns that differ only by a permutation of the
    /// followers behave alike, and `explore` runs one per class.
    pub fn uses_ids(self) -> bool {
        match self {
            ProtocolKind::Bully | ProtocolKind::Ring => true,
            // Lease members race for the store by compare-and-swap; ids only name them.
            ProtocolKind::Raft | ProtocolKind::Lease => false,
        }
    }

    /// The protocol's name, which is also the prefix of its parameters.
    pub fn name(self) -> &'static str {
        match self {
            ProtocolKind::Bully => "bully",
            ProtocolKind::Ring => "ring",
            ProtocolKind::Raft => "raft",
            ProtocolKind::Lease => "lease",
        }
    }

    /// How many service endpoints (ids after the members) the protocol runs: the lease store.
    pub fn services(self) -> u32 {
        match self {
            ProtocolKind::Lease => election_lease::SERVICES,
            _ => 0,
        }
    }

    /// The protocol named `s`, or an error listing the valid names.
    pub fn parse(s: &str) -> Result<ProtocolKind> {
        match s {
            "bully" => Ok(ProtocolKind::Bully),
            "ring" => Ok(ProtocolKind::Ring),
            "raft" => Ok(ProtocolKind::Raft),
            "lease" => Ok(ProtocolKind::Lease),
            _ => Err(crate::Error::Usage(crate::error::unknown_name(
                &format!("unknown protocol {s:?}"),
                s,
                PROTOCOLS.iter().copied(),
                &format!("valid protocols: {}", PROTOCOLS.join(", ")),
            ))),
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
    pub fn effective_options(&self) -> ParamMap {
        self.options
            .iter()
            .filter(|(k, v)| {
                let default = lookup(k).ok().and_then(|d| canonical(d, d.default).ok());
                default.as_ref() != Some(*v)
            })
            .map(|(k, v)| (*k, v.clone()))
            .collect()
    }

    /// Parse `name(+option[=value])*`.
    pub fn parse(s: &str) -> Result<ProtocolSpec> {
        let s = s.trim();
        let mut parts = s.split('+');
        let kind = ProtocolKind::parse(parts.next().unwrap_or("").trim())?;
        let mut options = ParamMap::new();
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
        Ok(ProtocolSpec {
            spec: s.to_string(),
            kind,
            options,
        })
    }
}

/// A protocol ready to run: its validated configuration.
#[derive(Clone, Debug)]
pub enum Built {
    /// Bully.
    Bully(Arc<BullyConfig>),
    /// Ring; a `random` arrangement is drawn per trial from the trial seed.
    Ring(Arc<RingConfig>, bool),
    /// Raft.
    Raft(Arc<RaftConfig>),
    /// Lease.
    Lease(Arc<LeaseConfig>),
}

impl Built {
    /// Build and validate `kind`'s configuration for `n` nodes from `r`.
    pub fn new(kind: ProtocolKind, n: u32, r: &Resolved) -> Result<Built, String> {
        let timing = r.timing();
        Ok(match kind {
            ProtocolKind::Bully => {
                let mut c = BullyConfig::new(n);
                c.timing = timing;
                c.t_elec = Resolved::duration(r.bully_t_elec_ms);
                c.t_coord = r.bully_t_coord_ms.map(Resolved::duration);
                c.rejoin = r.bully_rejoin;
                c.quorum = r.bully_quorum;
                c.epoch = r.bully_epoch;
                c.validate()?;
                Built::Bully(Arc::new(c))
            }
            ProtocolKind::Ring => {
                let mut c = RingConfig::new(n);
                c.timing = timing;
                c.t_hop = Resolved::duration(r.ring_t_hop_ms);
                c.hop_acks = r.ring_hop_acks;
                let random = r.ring_arrangement == "random";
                c.arrangement = Arrangement::from_name(&r.ring_arrangement, 0)
                    .ok_or_else(|| format!("unknown arrangement {:?}", r.ring_arrangement))?;
                c.validate()?;
                Built::Ring(Arc::new(c), random)
            }
            ProtocolKind::Raft => {
                let mut c = RaftConfig::with_timing(n, timing);
                c.timeout_min = Resolved::duration(r.raft_timeout_ms.0);
                c.timeout_max = Resolved::duration(r.raft_timeout_ms.1);
                c.pre_vote = r.raft_pre_vote;
                c.check_quorum = r.raft_check_quorum;
                c.lagging = r
                    .raft_lagging
                    .iter()
                    .map(|&(node, k)| (NodeId(node), k))
                    .collect();
                c.validate()?;
                Built::Raft(Arc::new(c))
            }
            ProtocolKind::Lease => {
                let mut c = LeaseConfig::new(n);
                c.duration = Resolved::duration(r.lease_duration_ms);
                c.renew_deadline = Resolved::duration(r.lease_renew_deadline_ms);
                c.retry = Resolved::duration(r.lease_retry_ms);
                c.release_on_cancel = r.lease_release_on_cancel;
                c.validate()?;
                Built::Lease(Arc::new(c))
            }
        })
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
        fn go<P: Protocol>(
            cfg: SimConfig,
            sink: Option<TraceSink>,
            f: impl FnMut(NodeId) -> P,
        ) -> Result<TrialReport, ConfigError> {
            let mut sim = Sim::new(cfg, f)?;
            if let Some(s) = sink {
                sim.stream_trace(s);
            }
            Ok(sim.run())
        }
        match self {
            Built::Bully(c) => go(cfg, sink, |id| Bully::new(id, c.clone())),
            Built::Ring(c, random) => {
                let c = if *random {
                    let mut c2 = RingConfig::clone(c);
                    c2.arrangement = Arrangement::Random { seed: cfg.seed };
                    Arc::new(c2)
                } else {
                    c.clone()
                };
                go(cfg, sink, |id| Ring::new(id, c.clone()))
            }
            Built::Raft(c) => go(cfg, sink, |id| Raft::new(id, c.clone())),
            Built::Lease(c) => go(cfg, sink, |id| Lease::new(id, c.clone())),
        }
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
        assert_eq!(s.kind.services(), 1, "the store");
        assert_eq!(s.options.get("lease.release_on_cancel").unwrap(), "true");
        assert_eq!(s.options.get("lease.profile").unwrap(), "k8s");
        assert_eq!(ProtocolKind::Raft.services(), 0);
        assert!(ProtocolSpec::parse("lease+profile=prod").is_err());
    }

    #[test]
    fn bad_specs_list_the_valid_names() {
        let e = ProtocolSpec::parse("paxos").unwrap_err().to_string();
        assert!(e.contains("bully, ring, raft, lease"), "{e}");
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
