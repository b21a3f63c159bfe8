//! A checked sweep: [`SweepPlan`], its grid of [`Cell`]s, and one trial of a cell.
//!
//! # Cell order
//!
//! Cells are ordered protocol (as listed), nodes (as listed), scenario (as listed), net (as
//! listed), then the varied parameters in key order, each over its values as listed, the
//! last key varying fastest. `trials.csv` and `summary.csv` follow this order.
//!
//! # Trial construction
//!
//! The trial seed drives everything: it is the simulator's seed (network, protocol and
//! fault-selector streams), a `random` ring arrangement's seed, and — through its own ChaCha8
//! stream, [`Stream::FaultTime`](election_sim::Stream::FaultTime) — the fault instant's offset `U[0, fault_jitter_ms]`, so the
//! same seed puts the fault at the same instant for every protocol.

use std::collections::BTreeMap;
use std::sync::Arc;

use election_core::NodeId;
use election_sim::{Fault, SimConfig, TraceSink, TrialReport};
use serde_json::{json, Map, Value};

use crate::config::SweepSpec;
use crate::error::{usage, Error, Result};
use crate::net::{net_name, parse_latency, NetProfile, BUILTIN_NETS};
use crate::params::{canonical, lookup, ParamMap, Resolved, PARAMS};
use crate::protocol::{Built, ProtocolSpec, FAMILIES};
use crate::results::{CellKey, TrialRow};
use crate::scenario::{draw_ms, Builtin, Custom, Part, Scenario, CATALOG};

/// The protocol specs of the default sweep. `raft+pre_vote+check_quorum+voters=5` is the same
/// Raft with 5 voters and the other members learners: the same protocol up to 5 nodes, and
/// the answer to "should all 51 nodes vote?" beyond. `k8s-lease` is the lease as Kubernetes
/// runs it ([`crate::systems::BUNDLES`]: client-go's real timings and connections), at
/// Kubernetes' time scale (every scenario time 100×,
/// [`crate::params::K8S_TIME_SCALE`]) beside the scaled `lease`: the report grades it against
/// its own detection window and does not rank it against the others. The system specs
/// (`etcd@3.4`, `etcd@3.5`, `hashicorp-raft@1.7`, `consul@1.16`, [`crate::systems`]) are the rules and
/// default timings of what reviewers deploy, beside the algorithm rows (the textbook
/// baseline); they too run at their own time scale and are graded against their own window.
pub const DEFAULT_PROTOCOLS: [&str; 14] = [
    "bully",
    "bully+quorum",
    "bully+epoch",
    "ring",
    "raft",
    "raft+pre_vote",
    "raft+pre_vote+check_quorum",
    "raft+pre_vote+check_quorum+voters=5",
    "lease",
    "k8s-lease",
    "etcd@3.4",
    "etcd@3.5",
    "hashicorp-raft@1.7",
    "consul@1.16",
];

/// The cluster sizes of the default sweep.
pub const DEFAULT_NODES: [u32; 7] = [3, 5, 7, 9, 15, 25, 51];

/// Seeds per cell in the default sweep.
pub const DEFAULT_SEEDS: u64 = 200;

/// A checked sweep.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    /// The sweep's name (`results/<name>/`).
    pub name: String,
    /// Protocol specs, in order.
    pub protocols: Vec<ProtocolSpec>,
    /// Cluster sizes, in order.
    pub nodes: Vec<u32>,
    /// Scenarios, in order.
    pub scenarios: Vec<Arc<Scenario>>,
    /// Network profiles, in order.
    pub nets: Vec<Arc<NetProfile>>,
    /// The first seed.
    pub first_seed: u64,
    /// Seeds per cell.
    pub seeds: u64,
    /// Parameters fixed for the whole sweep.
    pub fixed: ParamMap,
    /// Varied parameters, sorted by key, each with its values in the order given.
    pub varied: Vec<(&'static str, Vec<String>)>,
    /// Custom scenarios defined (listed or not), for `election-bench scenarios`.
    pub custom_scenarios: Vec<Arc<Scenario>>,
    /// Where a profile configuration came from (its `[profile]` table), if it is one.
    pub profile: Option<crate::config::ProfileSource>,
}

/// One grid point: everything but the seed.
#[derive(Clone, Debug)]
pub struct Cell {
    /// Position in the sweep's cell order.
    pub index: usize,
    /// The protocol spec.
    pub protocol: ProtocolSpec,
    /// Cluster size.
    pub nodes: u32,
    /// The scenario.
    pub scenario: Arc<Scenario>,
    /// The network profile.
    pub net: Arc<NetProfile>,
    /// The network's name, the `net` column: the profile's, plus every fixed `net.*`
    /// parameter that overrides it (see [`crate::net::net_name`]).
    pub net_name: String,
    /// The varied parameters' values (the plan's key order).
    pub values: Vec<String>,
    /// Why the cell is not run, if it is not.
    pub skipped: Option<String>,
    /// Every parameter, typed.
    pub resolved: Resolved,
    /// The protocol's validated configuration (absent for a skipped cell).
    pub built: Option<Built>,
}

fn dedup_check<T: PartialEq + std::fmt::Debug>(what: &str, items: &[T]) -> Result<()> {
    for (i, x) in items.iter().enumerate() {
        if items[..i].contains(x) {
            return usage!("{what} lists {x:?} twice");
        }
    }
    Ok(())
}

/// Every scenario name a spec may use, for error messages.
fn scenario_names(custom: &BTreeMap<String, Arc<Scenario>>) -> String {
    CATALOG
        .iter()
        .map(|b| b.name.to_string())
        .chain(custom.keys().cloned())
        .collect::<Vec<_>>()
        .join(", ")
}

impl SweepSpec {
    /// This spec narrowed to one trial's cell: one protocol, size, scenario and network, and
    /// one seed (its parameters, custom scenarios and networks kept). What `run`, `trace`, the
    /// live driver, `tune` and the report's traces plan, then [`SweepPlan::runnable_cell`].
    pub fn one_cell(mut self, protocol: &str, nodes: u32, scenario: &str, net: &str) -> SweepSpec {
        self.protocols = Some(vec![protocol.to_string()]);
        self.nodes = Some(vec![nodes]);
        self.scenarios = Some(vec![scenario.to_string()]);
        self.nets = Some(vec![net.to_string()]);
        self.seeds = Some(1);
        self
    }

    /// Check everything and resolve names into a plan. Missing fields take the default
    /// sweep's values.
    pub fn plan(&self) -> Result<SweepPlan> {
        let name = self.name.clone().unwrap_or_else(|| "default".into());
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            || name.starts_with('.')
        {
            return usage!(
                "name {name:?}: use letters, digits, '-', '_' and '.' (it names a directory)"
            );
        }
        let protocols: Vec<ProtocolSpec> = match &self.protocols {
            Some(p) => p
                .iter()
                .map(|s| ProtocolSpec::parse(s))
                .collect::<Result<_>>()?,
            None => DEFAULT_PROTOCOLS
                .iter()
                .map(|s| ProtocolSpec::parse(s).expect("default specs are valid"))
                .collect(),
        };
        if protocols.is_empty() {
            return usage!("the protocol list is empty");
        }
        dedup_check(
            "the protocol list",
            &protocols.iter().map(|p| &p.spec).collect::<Vec<_>>(),
        )?;
        crate::protocol::check_distinct(&protocols)?;
        let nodes = self.nodes.clone().unwrap_or_else(|| DEFAULT_NODES.to_vec());
        if nodes.is_empty() {
            return usage!("the node-count list is empty");
        }
        if let Some(n) = nodes.iter().find(|&&n| n == 0 || n > 100_000) {
            return usage!("nodes = {n}: a cluster has 1 to 100000 nodes");
        }
        dedup_check("the node-count list", &nodes)?;

        // Networks: built-ins and custom profiles.
        let mut net_defs: BTreeMap<String, Arc<NetProfile>> = BTreeMap::new();
        for d in &self.custom_nets {
            if BUILTIN_NETS.contains(&d.name.as_str()) {
                return usage!("net profile {:?}: a built-in profile has that name", d.name);
            }
            if d.name.is_empty() || d.name.contains('+') {
                return usage!(
                    "net profile {:?}: a profile name must be non-empty and without '+' \
                     ('+' joins a profile and the net.* parameters that override it in the \
                     net column)",
                    d.name
                );
            }
            let base_name = d.base.as_deref().unwrap_or("lan");
            let Some(mut p) = NetProfile::builtin(base_name) else {
                return usage!(
                    "net profile {:?}: unknown base {base_name:?}; valid: {}",
                    d.name,
                    BUILTIN_NETS.join(", ")
                );
            };
            p.name = d.name.clone();
            p.about = d
                .about
                .clone()
                .unwrap_or_else(|| format!("custom, based on {base_name}"));
            if let Some(l) = &d.latency {
                p.net.latency = parse_latency(l)
                    .map_err(|e| Error::Usage(format!("net profile {:?}: {e}", d.name)))?;
            }
            for (field, v) in [("loss", d.loss), ("duplicate", d.duplicate)] {
                if let Some(v) = v {
                    if !(0.0..=1.0).contains(&v) {
                        return usage!(
                            "net profile {:?}: {field} = {v}: expected a probability in [0, 1]",
                            d.name
                        );
                    }
                }
            }
            for (i, l) in d.links.iter().enumerate() {
                if l.from == 0 || l.to == 0 || l.from == l.to {
                    return usage!(
                        "net profile {:?}: links[{i}] from {} to {}: a link joins two different node ids >= 1",
                        d.name,
                        l.from,
                        l.to
                    );
                }
                let latency = parse_latency(&l.latency).map_err(|e| {
                    Error::Usage(format!("net profile {:?}: links[{i}].latency: {e}", d.name))
                })?;
                p.net.links.push(election_sim::LinkLatency {
                    from: election_core::NodeId(l.from),
                    to: election_core::NodeId(l.to),
                    latency,
                });
            }
            p.net.loss = d.loss.unwrap_or(p.net.loss);
            p.net.duplicate = d.duplicate.unwrap_or(p.net.duplicate);
            p.net.fifo = d.fifo.unwrap_or(p.net.fifo);
            net_defs.insert(d.name.clone(), Arc::new(p));
        }
        let net_names = self.nets.clone().unwrap_or_else(|| vec!["lan".into()]);
        if net_names.is_empty() {
            return usage!("the net-profile list is empty");
        }
        dedup_check("the net-profile list", &net_names)?;
        let nets = net_names
            .iter()
            .map(|n| match NetProfile::builtin(n) {
                Some(p) => Ok(Arc::new(p)),
                None => match net_defs.get(n) {
                    Some(p) => Ok(p.clone()),
                    None if n.contains('+') => usage!(
                        "unknown net profile {n:?}: a net column name such as \
                         \"lan+net.loss=0.05\" is the profile \"lan\" with \
                         `--set net.loss=0.05`; give the profile here and the parameters apart"
                    ),
                    None => {
                        let valid: Vec<&str> = BUILTIN_NETS
                            .iter()
                            .copied()
                            .chain(net_defs.keys().map(String::as_str))
                            .collect();
                        Err(Error::Usage(crate::error::unknown_name(
                            &format!("unknown net profile {n:?}"),
                            n,
                            valid.iter().copied(),
                            &format!("valid: {}", valid.join(", ")),
                        )))
                    }
                },
            })
            .collect::<Result<Vec<_>>>()?;

        // Scenarios: the catalog and custom ones.
        let mut custom: BTreeMap<String, Arc<Scenario>> = BTreeMap::new();
        for (n, def) in &self.custom_scenarios {
            custom.insert(
                n.clone(),
                Arc::new(Scenario::Custom(Custom::from_def(n, def)?)),
            );
        }
        let scenario_list: Vec<String> = match &self.scenarios {
            Some(s) => s.clone(),
            None => vec!["all".into()],
        };
        if scenario_list.is_empty() {
            return usage!("the scenario list is empty");
        }
        let mut scenarios = Vec::new();
        for s in &scenario_list {
            if s == "all" {
                // The gray scenarios are fixed-size topologies with their own sweep
                // (`results/gray`), and `steady-noise` is an hour per trial for `tune`: not
                // part of the default grid.
                scenarios
                    .extend(Builtin::part(Part::Default).map(|b| Arc::new(Scenario::Builtin(b))));
            } else if let Some(b) = Scenario::builtin(s) {
                scenarios.push(Arc::new(b));
            } else if let Some(c) = custom.get(s) {
                scenarios.push(c.clone());
            } else if let Some(p) = crate::explore::Pattern::parse(s) {
                // A link-failure pattern of `explore`, by name: its replay command.
                scenarios.push(Arc::new(p.scenario()));
            } else {
                let names = scenario_names(&custom);
                return Err(Error::Usage(crate::error::unknown_name(
                    &format!("unknown scenario {s:?}"),
                    s,
                    names.split(", "),
                    &format!("valid: all, {names}"),
                )));
            }
        }
        dedup_check(
            "the scenario list",
            &scenarios.iter().map(|s| s.name()).collect::<Vec<_>>(),
        )?;

        let seeds = self.seeds.unwrap_or(DEFAULT_SEEDS);
        if seeds == 0 {
            return usage!("seeds = 0: a cell needs at least one seed");
        }
        crate::memory::check_seeds(seeds)?;
        let first_seed = self.first_seed.unwrap_or(0);
        if first_seed.checked_add(seeds - 1).is_none() {
            return usage!(
                "first_seed = {first_seed} with seeds = {seeds}: the last seed would be past \
                 2^64 - 1 ({})",
                u64::MAX
            );
        }

        let mut fixed = ParamMap::new();
        let mut varied = Vec::new();
        for (i, (key, values)) in self.params.iter().enumerate() {
            let def = lookup(key)?;
            if self.params[..i].iter().any(|(k, _)| k == key) {
                return usage!("parameter {key} is given twice");
            }
            if values.is_empty() {
                return usage!("parameter {key}: the list of values is empty");
            }
            let vals = values
                .iter()
                .map(|v| canonical(def, v))
                .collect::<Result<Vec<_>>>()?;
            dedup_check(&format!("parameter {key}"), &vals)?;
            if vals.len() == 1 {
                fixed.insert(def.key, vals.into_iter().next().expect("one"));
            } else {
                varied.push((def.key, vals));
            }
        }
        varied.sort_by_key(|(k, _)| *k);
        Ok(SweepPlan {
            name,
            protocols,
            nodes,
            scenarios,
            nets,
            first_seed,
            seeds,
            fixed,
            varied,
            custom_scenarios: custom.into_values().collect(),
            profile: self.profile.clone(),
        })
    }
}

impl SweepPlan {
    /// The varied parameters' keys, sorted: the extra CSV columns.
    pub fn varied_keys(&self) -> Vec<&'static str> {
        self.varied.iter().map(|(k, _)| *k).collect()
    }

    /// What the user should know before the sweep runs: a parameter set for the sweep whose
    /// value a listed scenario replaces during its trials (`net.loss` under
    /// `lossy-leader-crash`, which applies `fault_loss` from the fault instant), one line per
    /// parameter and scenario, naming both and what applies instead.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        // A parameter's value as set for the sweep, fixed or varied.
        let set = |key: &str| match self.fixed.get(key) {
            Some(v) => Some(v.clone()),
            None => self
                .varied
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.join(",")),
        };
        for scenario in &self.scenarios {
            for o in scenario.overrides() {
                let key = o.param;
                if let Some(given) = set(key) {
                    let note = match o.vary.map(|v| (v, crate::params::lookup(v))) {
                        Some((vary, Ok(def))) => format!(
                            " ({vary} = {}); to vary the {} under this scenario, vary {vary}",
                            set(vary).unwrap_or_else(|| format!("{}, its default", def.default)),
                            key.rsplit('.').next().unwrap_or(key),
                        ),
                        _ => String::new(),
                    };
                    out.push(format!(
                        "{key}={given} is overridden in scenario {}: it applies {}, so \
                         {key} holds only before the fault{note}",
                        scenario.name(),
                        o.instead
                    ));
                }
            }
        }
        out
    }

    /// The seeds every cell runs.
    pub fn seed_range(&self) -> std::ops::RangeInclusive<u64> {
        self.first_seed..=self.first_seed + (self.seeds - 1)
    }

    /// Whether varied parameter `key` applies to `proto`: a parameter named after a protocol
    /// family (`raft.timeout_ms`) applies only to that family's specs, and a parameter the spec
    /// sets itself (`raft+timeout_ms=300-600`) is the spec's, whatever the sweep varies.
    pub fn varies_for(proto: &ProtocolSpec, key: &str) -> bool {
        let other_family = key.split_once('.').is_some_and(|(fam, _)| {
            crate::protocol::family_names().any(|f| f == fam) && fam != proto.kind.name()
        });
        !other_family && !proto.options.contains_key(key)
    }

    /// The combinations of varied values `proto`'s cells run, in cell order (the cartesian
    /// product, last key fastest). A parameter that does not apply to the spec (see
    /// [`SweepPlan::varies_for`]) takes the empty value and multiplies nothing: a bully spec
    /// runs once under `raft.timeout_ms=150-300,300-600`, not once per value.
    pub fn combos(&self, proto: &ProtocolSpec) -> Vec<Vec<String>> {
        let mut combos: Vec<Vec<String>> = vec![vec![]];
        for (key, vals) in &self.varied {
            let vals: Vec<String> = if Self::varies_for(proto, key) {
                vals.clone()
            } else {
                vec![String::new()]
            };
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    vals.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push(v.clone());
                        c
                    })
                })
                .collect();
        }
        combos
    }

    /// The first cell (the only one of a [`SweepSpec::one_cell`] plan), checked: a cell that
    /// cannot run is a usage error in the caller's words, `skipped(cell, why)`.
    pub fn runnable_cell(&self, skipped: impl FnOnce(&Cell, &str) -> String) -> Result<Cell> {
        let cell = self
            .cells()?
            .into_iter()
            .next()
            .expect("a plan has at least one protocol, size, scenario and net");
        match &cell.skipped {
            Some(why) => Err(Error::Usage(skipped(&cell, why))),
            None => Ok(cell),
        }
    }

    /// Every cell, in order, checked: a protocol configuration the protocol rejects is an
    /// error naming the cell; a size the scenario cannot use is a skipped cell.
    pub fn cells(&self) -> Result<Vec<Cell>> {
        let mut cells = Vec::new();
        for proto in &self.protocols {
            let combos = self.combos(proto);
            for &n in &self.nodes {
                for scenario in &self.scenarios {
                    for net in &self.nets {
                        for combo in &combos {
                            let mut params = self.fixed.clone();
                            for ((k, _), v) in self.varied.iter().zip(combo) {
                                // Empty: the parameter does not apply to this spec.
                                if !v.is_empty() {
                                    params.insert(k, v.clone());
                                }
                            }
                            params.extend(proto.options.iter().map(|(k, v)| (*k, v.clone())));
                            let resolved = Resolved::resolve(net, &params)?
                                .for_scenario(scenario)
                                .for_cluster(scenario, n);
                            if let Some((i, l)) = net
                                .net
                                .links
                                .iter()
                                .enumerate()
                                .find(|(_, l)| l.from.0 > n || l.to.0 > n)
                            {
                                return usage!(
                                    "net profile {:?}: links[{i}] joins nodes {} and {}, but the cluster has {n} nodes",
                                    net.name,
                                    l.from.0,
                                    l.to.0
                                );
                            }
                            let skipped = scenario
                                .skip_reason(n, proto.kind.services(&resolved))
                                .or_else(|| {
                                    scenario
                                        .detector_skip_reason(
                                            proto.kind.no_detector(&resolved),
                                            n,
                                            &resolved,
                                        )
                                        .or_else(|| {
                                            scenario.handover_skip_reason(
                                                proto.kind.no_handover(),
                                                n,
                                                &resolved,
                                            )
                                        })
                                });
                            if skipped.is_none() {
                                crate::memory::check(n, &resolved, false).map_err(|e| {
                                    Error::Usage(format!(
                                        "{} with {n} nodes, {}: {e}",
                                        proto.spec,
                                        scenario.name()
                                    ))
                                })?;
                            }
                            let built = match skipped {
                                Some(_) => None,
                                None => Some(Built::new(proto.kind, n, &resolved).map_err(
                                    |e| {
                                        Error::Usage(format!(
                                            "{} with {n} nodes, {}, {}{}: invalid {} configuration: {e}",
                                            proto.spec,
                                            scenario.name(),
                                            net_name(net, &self.fixed),
                                            self.varied
                                                .iter()
                                                .zip(combo)
                                                .filter(|(_, v)| !v.is_empty())
                                                .map(|((k, _), v)| format!(", {k}={v}"))
                                                .collect::<String>(),
                                            proto.kind.name()
                                        ))
                                    },
                                )?),
                            };
                            cells.push(Cell {
                                index: cells.len(),
                                protocol: proto.clone(),
                                nodes: n,
                                scenario: scenario.clone(),
                                net: net.clone(),
                                net_name: net_name(net, &self.fixed),
                                values: combo.clone(),
                                skipped,
                                resolved,
                                built,
                            });
                        }
                    }
                }
            }
        }
        Ok(cells)
    }

    /// The `config` object of the manifest: everything needed to reproduce the sweep.
    ///
    /// It lists the shared parameters and the timing and parameters of the families the sweep
    /// runs: a family it does not run has nothing to reproduce, and adding a family to the
    /// catalog must not change the manifest (and configuration hash) of a sweep without it.
    pub fn manifest_config(&self) -> Value {
        let runs = |family: &str| self.protocols.iter().any(|p| p.kind.name() == family);
        let listed = |key: &str| {
            key.split_once('.')
                .filter(|(prefix, _)| FAMILIES.iter().any(|f| f.name == *prefix))
                .is_none_or(|(prefix, _)| runs(prefix))
        };
        let mut params = Map::new();
        for d in PARAMS.iter().filter(|d| listed(d.key)) {
            let value = self.fixed.get(d.key).cloned();
            params.insert(
                d.key.to_string(),
                json!({ "default": d.default, "value": value, "about": d.about }),
            );
        }
        let mut varied = Map::new();
        for (k, v) in &self.varied {
            varied.insert(k.to_string(), json!(v));
        }
        let base = Resolved::resolve(&self.nets[0], &self.fixed).ok();
        let timing = base.as_ref().map(|r| {
            let mut t = Map::new();
            t.insert("heartbeat_ms".into(), json!(r.heartbeat_ms));
            t.insert("detect_timeout_ms".into(), json!(r.detect_timeout_ms));
            t.insert("detect_jitter_ms".into(), json!(r.detect_jitter_ms));
            for f in FAMILIES.iter().filter(|f| runs(f.name)) {
                t.insert(f.name.into(), json!((f.timing)(r)));
            }
            // A spec whose options move the detection window (`k8s-lease` runs at
            // Kubernetes' time scale, [`crate::params::K8S_TIME_SCALE`]) has its own timing,
            // so that a report grades it against its own window. Only then is the key there.
            let mut own = Map::new();
            for p in &self.protocols {
                let mut params = self.fixed.clone();
                params.extend(p.options.iter().map(|(k, v)| (*k, v.clone())));
                let Ok(q) = Resolved::resolve(&self.nets[0], &params) else {
                    continue;
                };
                if q.window_ms() != r.window_ms() {
                    let family = p.kind.family();
                    own.insert(
                        p.spec.clone(),
                        json!({
                            "heartbeat_ms": q.heartbeat_ms,
                            "detect_timeout_ms": q.detect_timeout_ms,
                            "detect_jitter_ms": q.detect_jitter_ms,
                            "fault_at_ms": q.fault_at_ms,
                            "horizon_ms": q.horizon_ms,
                            family.name: (family.timing)(&q),
                        }),
                    );
                }
            }
            if !own.is_empty() {
                t.insert("specs".into(), Value::Object(own));
            }
            Value::Object(t)
        });
        let cell_order: Vec<String> = ["protocol", "nodes", "scenario", "net"]
            .iter()
            .map(|s| s.to_string())
            .chain(self.varied.iter().map(|(k, _)| k.to_string()))
            .collect();
        let mut config = json!({
            "mode": "sim",
            "protocols": self.protocols.iter().map(|p| json!({
                "spec": p.spec,
                "protocol": p.kind.name(),
                "options": p.options,
            })).collect::<Vec<_>>(),
            "nodes": self.nodes,
            "scenarios": self.scenarios.iter().map(|s| {
                let mut j = s.to_json();
                if let Some(r) = &base {
                    j["kind"] = s.kind(r).to_json();
                }
                j
            }).collect::<Vec<_>>(),
            "nets": self.nets.iter().map(|n| {
                let mut j = n.to_json();
                // The `net` column's name, when fixed `net.*` parameters override the profile.
                let name = net_name(n, &self.fixed);
                if name != n.name {
                    j["net"] = json!(name);
                }
                j
            }).collect::<Vec<_>>(),
            "seeds": { "first": self.first_seed, "count": self.seeds },
            "timing": timing,
            "params": params,
            "varied": varied,
            "cell_order": cell_order,
            "streams": election_sim::Stream::ALL
                .iter()
                .map(|s| (s.name().to_string(), s.id().into()))
                .collect::<Map<String, Value>>(),
        });
        // Measured distributions and a profile's source only where there are any, so that a
        // configuration without them keeps its hash.
        let empirical = crate::empirical::manifest_entries(
            self.nets
                .iter()
                .flat_map(|n| {
                    std::iter::once(&n.net.latency)
                        .chain(n.net.links.iter().map(|l| &l.latency))
                        .map(crate::net::format_latency)
                })
                .collect::<Vec<_>>()
                .iter()
                .map(String::as_str)
                .chain(self.fixed.values().map(String::as_str))
                .chain(
                    self.varied
                        .iter()
                        .flat_map(|(_, v)| v.iter().map(String::as_str)),
                ),
        );
        if !empirical.is_empty() {
            config["empirical"] = json!(empirical);
        }
        if let Some(p) = &self.profile {
            config["profile"] = p.to_json();
        }
        config
    }
}

/// One trial as run: its row, the simulator's report, and how it was set up.
#[derive(Debug)]
pub struct TrialRun {
    /// The `trials.csv` row.
    pub row: TrialRow,
    /// The simulator's report (metrics, final status, trace if asked for).
    pub report: TrialReport,
    /// The simulator configuration used (its fault timeline included).
    pub sim: SimConfig,
    /// The drawn fault instant, ms (`None` for a scenario without faults).
    pub drawn_fault_ms: Option<f64>,
    /// The instant the first fault fired, ms: the drawn instant, later if the timeline waited
    /// for a leader (`None` for a scenario without faults, or if no fault ever fired). It is
    /// the reference instant unless the scenario has a reference fault
    /// ([`SimConfig::reference_fault`]); the reference is always `report.metrics.reference_ms`.
    pub fault_instant_ms: Option<f64>,
    /// The quorum leader at the reference instant (when the first fault, or the reference
    /// fault, fired).
    pub leader_at_fault: Option<NodeId>,
}

impl Cell {
    /// The trial's fault instant (ms: `fault_at_ms` plus its `U[0, fault_jitter_ms]` offset) and
    /// its faults, drawn from the seed's [`Stream::FaultTime`](election_sim::Stream::FaultTime):
    /// the same for every protocol and for both drivers (the simulator's [`Cell::run`] and the
    /// live driver).
    pub fn timeline(&self, seed: u64) -> (f64, Vec<election_sim::Fault>) {
        let r = &self.resolved;
        let mut rng = election_sim::Stream::FaultTime.rng(seed);
        let t_f = r.fault_at_ms + draw_ms(&mut rng, r.fault_jitter_ms);
        let faults = self.scenario.faults(self.nodes, r, t_f, &mut rng);
        (t_f, faults)
    }

    /// The cell's identity as rows carry it.
    pub fn key(&self) -> CellKey {
        CellKey {
            mode: "sim".into(),
            protocol: self.protocol.spec.clone(),
            nodes: self.nodes,
            scenario: self.scenario.name().to_string(),
            net: self.net_name.clone(),
            params: self.values.clone(),
        }
    }

    /// A one-line description for messages.
    pub fn describe(&self, varied: &[&str]) -> String {
        let mut s = format!(
            "{} / {} nodes / {} / {}",
            self.protocol.spec,
            self.nodes,
            self.scenario.name(),
            self.net_name
        );
        for (k, v) in varied
            .iter()
            .zip(&self.values)
            .filter(|(_, v)| !v.is_empty())
        {
            s.push_str(&format!(" / {k}={v}"));
        }
        s
    }

    /// The trial of this cell with `seed` as the simulator runs it: [`Cell::timeline`]'s faults
    /// and every resolved parameter (the live driver runs the same configuration).
    pub fn trial_config(&self, seed: u64, trace: bool) -> SimConfig {
        let (t_f, faults) = self.timeline(seed);
        self.sim_config(seed, faults, t_f, trace)
    }

    fn sim_config(&self, seed: u64, faults: Vec<Fault>, t_f: f64, trace: bool) -> SimConfig {
        let r = &self.resolved;
        SimConfig {
            nodes: self.nodes,
            services: self.protocol.kind.services(&self.resolved),
            seed,
            net: r.net.clone(),
            faults,
            horizon: Resolved::duration(r.horizon_ms),
            election_timeout: Resolved::duration(r.detect_timeout_ms),
            settle: Resolved::duration(r.settle_ms),
            hold: Resolved::duration(r.hold_ms()),
            run_to_horizon: self.scenario.steady(),
            trace,
            // A steady-state scenario has no fault: its window starts at the fault instant.
            reference_ms: self.scenario.steady().then_some(t_f),
            reference_fault: self.scenario.reference_fault(),
            fault_wait: (r.fault_wait_ms > 0.0).then(|| Resolved::duration(r.fault_wait_ms)),
            workload: r.workload(),
            node: r.node.clone(),
            noise: r.noise.clone(),
            budget: r.budget(self.nodes, r.horizon_ms),
        }
    }

    /// Run the trial of this cell with `seed` (optionally recording a full trace).
    pub fn run(&self, seed: u64, trace: bool) -> Result<TrialRun> {
        self.run_with(seed, trace, None)
    }

    /// Run the trial of this cell with `seed`, handing every trace record of the trial to `sink`
    /// as it is made, without buffering the trace.
    pub fn run_streaming(&self, seed: u64, sink: TraceSink) -> Result<TrialRun> {
        self.run_with(seed, false, Some(sink))
    }

    /// `raft.lagging` names replicas by id, but a lag only acts on followers: the leader ships
    /// its log short to them. When a listed node is the quorum leader at the fault instant (a
    /// Raft leader is any id), the trial did not run the lag it describes; it is counted in
    /// `faults_skipped` with the reason, so it stays out of every statistic and the report
    /// says so, as for a fault that found no target.
    fn flag_lag_on_the_leader(&self, m: &mut election_sim::Metrics) {
        if self.protocol.kind != crate::protocol::ProtocolKind::Raft {
            return;
        }
        let Some(l) = m.leader_at_reference else {
            return;
        };
        if let Some(&(_, k)) = self.resolved.raft.lagging.iter().find(|&&(v, _)| v == l.0) {
            m.faults_skipped += 1;
            let at = election_core::Time((m.reference_ms * 1e6).round() as u64);
            m.fault_log.push((
                at,
                election_sim::Applied::Skipped(format!(
                    "raft.lagging {l}:{k}: node {l} led at the fault instant, and a leader does not lag"
                )),
            ));
        }
    }

    fn run_with(&self, seed: u64, trace: bool, sink: Option<TraceSink>) -> Result<TrialRun> {
        let built = self.runnable()?;
        if trace {
            crate::memory::check(self.nodes, &self.resolved, true)?;
        }
        let (cfg, t_f, n_faults) = self.prepared(seed, trace);
        let report = built
            .simulate_streaming(cfg.clone(), sink)
            .map_err(|e| self.config_error(seed, e))?;
        Ok(self.trial_run(seed, cfg, t_f, n_faults, report))
    }

    /// The cell's protocol, or why the cell is not run.
    fn runnable(&self) -> Result<&Built> {
        match &self.built {
            Some(built) => Ok(built),
            None => usage!(
                "cell {} is skipped: {}",
                self.describe(&[]),
                self.skipped.as_deref().unwrap_or("")
            ),
        }
    }

    /// The simulator's configuration of the trial with `seed`, its drawn fault instant and
    /// its number of faults.
    fn prepared(&self, seed: u64, trace: bool) -> (SimConfig, f64, u32) {
        let (t_f, faults) = self.timeline(seed);
        let n_faults = faults.len() as u32;
        (self.sim_config(seed, faults, t_f, trace), t_f, n_faults)
    }

    fn config_error(&self, seed: u64, e: election_sim::ConfigError) -> Error {
        Error::Usage(format!("{}, seed {seed}: {e}", self.describe(&[])))
    }

    /// The run of the trial with `seed` from the simulator's `report` of `cfg`.
    fn trial_run(
        &self,
        seed: u64,
        cfg: SimConfig,
        t_f: f64,
        n_faults: u32,
        mut report: TrialReport,
    ) -> TrialRun {
        // Whether the scenario's faults fired, before a lag on the leader is counted in.
        let fired = n_faults > 0 && report.metrics.faults_skipped < n_faults;
        self.flag_lag_on_the_leader(&mut report.metrics);
        let row = TrialRow::from_metrics(&self.key(), seed, &report.metrics);
        let m = &report.metrics;
        TrialRun {
            row,
            drawn_fault_ms: (n_faults > 0).then_some(t_f),
            fault_instant_ms: fired
                .then(|| match cfg.reference_fault {
                    None => Some(m.reference_ms),
                    Some(_) => m.fault_log.first().map(|(t, _)| t.as_millis_f64()),
                })
                .flatten(),
            leader_at_fault: if fired { m.leader_at_reference } else { None },
            report,
            sim: cfg,
        }
    }

    /// The trials with `seed` of several cells, each exactly as [`Cell::run`] runs it (without
    /// a trace), in `cells` order. Cells of one protocol configuration (the same [`Built`]) run
    /// together through [`Built::simulate_all`], which shares the run before the first fault
    /// between scenarios whose trials are the same until then; a sweep hands it the cells of
    /// one protocol, size, network and parameters.
    pub fn run_all(cells: &[&Cell], seed: u64) -> Vec<Result<TrialRun>> {
        let mut out: Vec<Option<Result<TrialRun>>> = (0..cells.len()).map(|_| None).collect();
        let mut taken = vec![false; cells.len()];
        // Each cell's protocol configuration as written out (every configuration type prints
        // every field): cells with the same one run together.
        let shapes: Vec<Option<String>> = cells
            .iter()
            .map(|c| c.built.as_ref().map(|b| format!("{b:?}")))
            .collect();
        for i in 0..cells.len() {
            if taken[i] {
                continue;
            }
            let built = match cells[i].runnable() {
                Ok(b) => b,
                Err(e) => {
                    out[i] = Some(Err(e));
                    continue;
                }
            };
            let group: Vec<usize> = (i..cells.len())
                .filter(|&j| !taken[j] && shapes[j].is_some() && shapes[j] == shapes[i])
                .collect();
            let prepared: Vec<(SimConfig, f64, u32)> = group
                .iter()
                .map(|&j| cells[j].prepared(seed, false))
                .collect();
            let reports = built.simulate_all(seed, prepared.iter().map(|p| p.0.clone()).collect());
            for ((&j, (cfg, t_f, n_faults)), report) in group.iter().zip(prepared).zip(reports) {
                taken[j] = true;
                let c = cells[j];
                out[j] = Some(
                    report
                        .map_err(|e| c.config_error(seed, e))
                        .map(|r| c.trial_run(seed, cfg, t_f, n_faults, r)),
                );
            }
        }
        out.into_iter()
            .map(|r| r.expect("every cell ran"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(toml: &str) -> SweepSpec {
        SweepSpec::from_toml(toml).unwrap()
    }

    #[test]
    fn the_default_plan_is_the_issue_grid() {
        let p = SweepSpec::default().plan().unwrap();
        assert_eq!(p.name, "default");
        assert_eq!(p.protocols.len(), DEFAULT_PROTOCOLS.len());
        assert_eq!(p.nodes, DEFAULT_NODES);
        assert_eq!(p.scenarios.len(), 21);
        assert_eq!(p.seeds, 200);
        let cells = p.cells().unwrap();
        assert_eq!(cells.len(), DEFAULT_PROTOCOLS.len() * 7 * 21);
        // The six lease-store scenarios run for the two lease specs only; the other specs'
        // cells say why.
        let store_skips = cells
            .iter()
            .filter(|c| {
                c.skipped
                    .as_deref()
                    .is_some_and(|s| s.contains("lease store"))
            })
            .count();
        assert_eq!(store_skips, (DEFAULT_PROTOCOLS.len() - 2) * 7 * 6);
    }

    /// Omni-Paxos has no failure detector a scenario can force or switch off: such cells are
    /// skipped with the reason, the others run.
    #[test]
    fn detector_scenarios_are_skipped_for_a_family_without_one() {
        let p = spec(
            r#"
protocols = ["omnipaxos", "raft"]
nodes = [5]
scenarios = ["leader-crash-lowest-detects", "leader-crash"]
"#,
        )
        .plan()
        .unwrap();
        let cells = p.cells().unwrap();
        let skipped: Vec<(&str, &str)> = cells
            .iter()
            .filter(|c| c.skipped.is_some())
            .map(|c| (c.protocol.spec.as_str(), c.scenario.name()))
            .collect();
        assert_eq!(skipped, [("omnipaxos", "leader-crash-lowest-detects")]);
        let why = cells.iter().find_map(|c| c.skipped.as_deref()).unwrap();
        assert!(why.contains("failure detector"), "{why}");
    }

    /// The manifest names the timing and parameters of the families the sweep runs only, so a
    /// family added to the catalog leaves the manifest of a sweep without it unchanged.
    #[test]
    fn the_manifest_lists_the_families_it_runs() {
        let config = |protocols: &str| {
            spec(&format!(
                "protocols = [{protocols}]\nnodes = [3]\nscenarios = [\"leader-crash\"]\n"
            ))
            .plan()
            .unwrap()
            .manifest_config()
        };
        let raft = config(r#""raft""#);
        assert!(raft["timing"].get("omnipaxos").is_none());
        assert!(raft["timing"].get("bully").is_none());
        assert!(raft["timing"].get("raft").is_some());
        assert!(raft["params"].get("omnipaxos.tick_ms").is_none());
        assert!(raft["params"].get("raft.pre_vote").is_some());
        assert!(raft["params"].get("heartbeat_ms").is_some());
        let both = config(r#""raft", "omnipaxos""#);
        let timing = both["timing"]["omnipaxos"].as_str().unwrap();
        assert!(
            timing.contains("heartbeat round 3 ticks = 150 ms"),
            "{timing}"
        );
        assert!(both["params"].get("omnipaxos.tick_ms").is_some());
    }

    #[test]
    fn a_family_parameter_varies_only_that_familys_cells() {
        let p = spec(
            r#"
protocols = ["bully", "raft", "raft+timeout_ms=300-600", "ring"]
nodes = [5]
scenarios = ["leader-crash"]
[params]
"raft.timeout_ms" = ["150-300", "200-400"]
"net.loss" = [0, 0.1]
"#,
        )
        .plan()
        .unwrap();
        let cells = p.cells().unwrap();
        let of = |spec: &str| -> Vec<Vec<String>> {
            cells
                .iter()
                .filter(|c| c.protocol.spec == spec)
                .map(|c| c.values.clone())
                .collect()
        };
        let v = |a: &str, b: &str| vec![b.to_string(), a.to_string()];
        // Keys sorted: net.loss, raft.timeout_ms.
        assert_eq!(p.varied_keys(), ["net.loss", "raft.timeout_ms"]);
        assert_eq!(
            of("raft"),
            [
                v("150-300", "0"),
                v("200-400", "0"),
                v("150-300", "0.1"),
                v("200-400", "0.1")
            ]
        );
        // Bully and ring run once per shared value, with the raft column empty.
        assert_eq!(of("bully"), [v("", "0"), v("", "0.1")]);
        assert_eq!(of("ring"), [v("", "0"), v("", "0.1")]);
        // A spec that sets the parameter itself keeps its own value.
        assert_eq!(of("raft+timeout_ms=300-600"), [v("", "0"), v("", "0.1")]);
        let own = cells
            .iter()
            .find(|c| c.protocol.spec == "raft+timeout_ms=300-600")
            .unwrap();
        assert_eq!(own.resolved.raft.timeout_ms, (300.0, 600.0));
        let raft = cells.iter().find(|c| c.protocol.spec == "raft").unwrap();
        assert_eq!(raft.resolved.raft.timeout_ms, (150.0, 300.0));
        assert_eq!(cells.len(), 4 + 2 + 2 + 2);
        assert!(cells.iter().enumerate().all(|(i, c)| c.index == i));
        assert_eq!(
            cells[6].describe(&p.varied_keys()),
            "raft+timeout_ms=300-600 / 5 nodes / leader-crash / lan / net.loss=0"
        );
    }

    #[test]
    fn a_parameter_a_scenario_overrides_is_warned_about() {
        let p = spec(
            r#"
protocols = ["raft"]
nodes = [5]
scenarios = ["leader-crash", "lossy-leader-crash"]
[params]
"net.loss" = [0, 0.05]
"#,
        )
        .plan()
        .unwrap();
        let w = p.warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("net.loss=0,0.05"), "{}", w[0]);
        assert!(w[0].contains("lossy-leader-crash"), "{}", w[0]);
        assert!(w[0].contains("fault_loss"), "{}", w[0]);
        // Nothing set that a scenario overrides: no warning.
        let quiet = spec(
            r#"
scenarios = ["lossy-leader-crash"]
[params]
fault_loss = [0.05, 0.2]
"#,
        )
        .plan()
        .unwrap();
        assert!(quiet.warnings().is_empty());
        // A custom scenario's set_loss is found as well, for a fixed value.
        let custom = spec(
            r#"
scenarios = ["drop"]
[params]
"net.loss" = 0.01
[[scenario]]
name = "drop"
faults = [ { at_ms = 0, action = "set_loss", loss = 0.3 } ]
"#,
        )
        .plan()
        .unwrap();
        let w = custom.warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("net.loss=0.01") && w[0].contains("set_loss = 0.3"),
            "{}",
            w[0]
        );
    }

    #[test]
    fn cells_vary_the_last_key_fastest() {
        let p = spec(
            r#"
protocols = ["raft"]
nodes = [3]
scenarios = ["leader-crash"]
[params]
"net.loss" = [0, 0.1]
detect_jitter_ms = [100, 150]
"#,
        )
        .plan()
        .unwrap();
        assert_eq!(p.varied_keys(), ["detect_jitter_ms", "net.loss"]);
        let vals: Vec<Vec<String>> = p.cells().unwrap().into_iter().map(|c| c.values).collect();
        assert_eq!(
            vals,
            [["100", "0"], ["100", "0.1"], ["150", "0"], ["150", "0.1"]]
                .map(|v| v.map(String::from).to_vec())
        );
    }

    #[test]
    fn small_clusters_are_skipped_with_a_reason() {
        let p =
            spec("protocols=[\"bully\"]\nnodes=[2,3]\nscenarios=[\"partition-leader-minority\"]")
                .plan()
                .unwrap();
        let cells = p.cells().unwrap();
        assert!(cells[0].skipped.as_deref().unwrap().contains("at least 3"));
        assert!(cells[1].skipped.is_none());
    }

    #[test]
    fn one_spec_written_two_ways_is_an_error() {
        for list in [
            r#"["raft+pre_vote+check_quorum", "raft+check_quorum+pre_vote"]"#,
            r#"["bully+quorum", "bully+quorum=true"]"#,
            r#"["bully", "bully"]"#,
        ] {
            let e = spec(&format!("protocols = {list}")).plan().unwrap_err();
            assert!(
                e.is_usage() && e.to_string().contains("twice"),
                "{list}: {e}"
            );
        }
        spec(r#"protocols = ["bully", "bully+quorum"]"#)
            .plan()
            .unwrap();
        // Parameters assembled by hand (live mode's --set) are checked the same way.
        let mut s = spec("");
        s.params = vec![
            ("heartbeat_ms".into(), vec!["40".into()]),
            ("heartbeat_ms".into(), vec!["60".into()]),
        ];
        let e = s.plan().unwrap_err().to_string();
        assert!(e.contains("heartbeat_ms is given twice"), "{e}");
    }

    #[test]
    fn invalid_protocol_timing_names_the_cell() {
        let e = spec("protocols=[\"raft\"]\nnodes=[3]\n[params]\nheartbeat_ms=200")
            .plan()
            .unwrap()
            .cells()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("raft with 3 nodes") && e.contains("heartbeat"),
            "{e}"
        );
    }

    #[test]
    fn the_fault_instant_is_the_same_for_every_protocol() {
        let p = spec(
            "protocols=[\"bully\",\"raft\"]\nnodes=[5]\nscenarios=[\"leader-crash\"]\nseeds=1",
        )
        .plan()
        .unwrap();
        let cells = p.cells().unwrap();
        let a = cells[0].run(42, false).unwrap();
        let b = cells[1].run(42, false).unwrap();
        assert_eq!(a.fault_instant_ms, b.fault_instant_ms);
        let t = a.fault_instant_ms.unwrap();
        assert!((1200.0..=1500.0).contains(&t), "{t}");
        assert_eq!(a.report.metrics.reference_ms, t);
        // And it is a reproducible function of the seed.
        assert_eq!(cells[0].run(42, false).unwrap().row, a.row);
    }

    /// The fault actions of a run as they fired, selectors resolved.
    fn applied(run: &TrialRun) -> Vec<(f64, election_sim::Applied)> {
        run.report
            .metrics
            .fault_log
            .iter()
            .map(|(t, a)| (t.as_millis_f64(), a.clone()))
            .collect()
    }

    /// The links up after every fault of one trial of `scenario` at `n` nodes, as unordered
    /// pairs of **positions** (1..n-1 the followers at the fault in id order, n the leader),
    /// after checking that every pair is cut both ways or neither; and the run.
    fn topology(proto: &str, n: u32, scenario: &str, seed: u64) -> (Vec<(u32, u32)>, TrialRun) {
        use election_sim::Applied;
        let p = spec(&format!(
            "protocols=[\"{proto}\"]\nnodes=[{n}]\nscenarios=[\"{scenario}\"]\nseeds=1"
        ))
        .plan()
        .unwrap();
        let run = p.cells().unwrap()[0].run(seed, false).unwrap();
        assert_eq!(run.row.faults_skipped, 0, "{scenario} {proto} seed {seed}");
        let leader = run.leader_at_fault.unwrap();
        let mut order: Vec<NodeId> = (1..=n).map(NodeId).filter(|&v| v != leader).collect();
        order.push(leader);
        let pos = |id: NodeId| order.iter().position(|&v| v == id).unwrap() as u32 + 1;
        let mut up = vec![vec![true; n as usize + 1]; n as usize + 1];
        for (_, a) in applied(&run) {
            match a {
                Applied::Links { pairs, up: u } => {
                    for (x, y) in pairs {
                        up[pos(x) as usize][pos(y) as usize] = u;
                    }
                }
                // constrained-election's first step delays a link; the topology is what is cut.
                Applied::LinkDelay { .. } => {}
                other => panic!("{scenario}: unexpected fault {other:?}"),
            }
        }
        let mut kept = Vec::new();
        for a in 1..=n {
            for b in a + 1..=n {
                let (ab, ba) = (up[a as usize][b as usize], up[b as usize][a as usize]);
                assert_eq!(ab, ba, "{scenario}: link {a}-{b} cut one way only");
                if ab {
                    kept.push((a, b));
                }
            }
        }
        (kept, run)
    }

    /// Each fixed topology is exactly what its catalog entry says, whoever leads (Raft's leader
    /// is any id; the bully's is the highest, so positions are ids).
    #[test]
    fn gray_topologies_are_what_the_catalog_says() {
        type Case = (&'static str, u32, &'static [(u32, u32)]);
        let cases: [Case; 7] = [
            // Follower 1 reaches everyone; every other pair is cut.
            ("quorum-loss", 5, &[(1, 2), (1, 3), (1, 4), (1, 5)]),
            // In the end the lagging follower 1 is the others' only link; the leader is alone.
            ("constrained-election", 5, &[(1, 2), (1, 3), (1, 4)]),
            // The leader (3) and follower 1 lose their link; 2 reaches both.
            ("chained", 3, &[(1, 2), (2, 3)]),
            // Bridge 1; halves {5, 2} and {3, 4}.
            (
                "bridge",
                5,
                &[(1, 2), (1, 3), (1, 4), (1, 5), (2, 5), (3, 4)],
            ),
            // Halves {6, 2, 3} and {4, 5}.
            (
                "bridge",
                6,
                &[
                    (1, 2),
                    (1, 3),
                    (1, 4),
                    (1, 5),
                    (1, 6),
                    (2, 3),
                    (2, 6),
                    (3, 6),
                    (4, 5),
                ],
            ),
            // The leader (5), 1 and 2 fully connected; 3 reaches only 2; 4 only the leader.
            (
                "liveness-omission",
                5,
                &[(1, 2), (1, 5), (2, 3), (2, 5), (4, 5)],
            ),
            // 1, 2, 3 fully connected; 4 reaches only 2; 5 (the leader) only 3.
            (
                "liveness-omission-leader-out",
                5,
                &[(1, 2), (1, 3), (2, 3), (2, 4), (3, 5)],
            ),
        ];
        for (scenario, n, want) in cases {
            for (proto, seed) in [("bully", 1), ("raft", 1), ("raft", 2), ("raft", 3)] {
                let (kept, run) = topology(proto, n, scenario, seed);
                assert_eq!(kept, want, "{scenario} at {n} nodes, {proto} seed {seed}");
                if proto == "bully" {
                    assert_eq!(run.leader_at_fault, Some(NodeId(n)));
                }
            }
        }
        // constrained-election's first step: follower 1's links to and from the leader are
        // delayed by half an election timeout (not cut: it must not suspect the leader), for
        // outage_ms; then the topology.
        let (_, run) = topology("raft", 5, "constrained-election", 4);
        let log = applied(&run);
        assert_eq!(log.len(), 3);
        let r = Resolved::resolve(
            &crate::net::NetProfile::builtin("lan").unwrap(),
            &Default::default(),
        )
        .unwrap();
        for (_, a) in &log[..2] {
            match a {
                election_sim::Applied::LinkDelay { from, to, ms } => {
                    assert_eq!((from.len(), to.len()), (1, 1));
                    assert_eq!(*ms, r.detect_timeout_ms / 2.0);
                }
                other => panic!("{other:?}"),
            }
        }
        assert!((log[2].0 - log[0].0 - r.outage_ms).abs() < 1e-6);
    }

    #[test]
    fn fixed_topologies_refuse_other_sizes_with_a_reason() {
        let p = spec(
            "protocols=[\"raft\"]\nnodes=[3, 4, 5]\nscenarios=[\"quorum-loss\", \"chained\", \"bridge\"]\nseeds=1",
        )
        .plan()
        .unwrap();
        let skipped: Vec<(u32, String, Option<String>)> = p
            .cells()
            .unwrap()
            .into_iter()
            .map(|c| (c.nodes, c.scenario.name().to_string(), c.skipped))
            .collect();
        for (n, s, why) in skipped {
            let runs = matches!(
                (n, s.as_str()),
                (5, "quorum-loss") | (3, "chained") | (5, "bridge")
            );
            assert_eq!(why.is_none(), runs, "{s} at {n}: {why:?}");
            if let Some(why) = why {
                assert!(
                    why.contains(&s) && (why.contains("exactly") || why.contains("at least 5")),
                    "{why}"
                );
            }
        }
    }

    #[test]
    fn flaky_slow_and_amnesiac_leaders() {
        use election_sim::Applied;
        let r = Resolved::resolve(
            &crate::net::NetProfile::builtin("lan").unwrap(),
            &Default::default(),
        )
        .unwrap();
        for seed in 0..3 {
            let (_, run) = (0, {
                let p = spec(
                    "protocols=[\"raft\"]\nnodes=[5]\nscenarios=[\"flaky-leader-link\"]\nseeds=1",
                )
                .plan()
                .unwrap();
                p.cells().unwrap()[0].run(seed, false).unwrap()
            });
            let l = run.leader_at_fault.unwrap();
            let f = (1..=5).map(NodeId).find(|&v| v != l).unwrap();
            let log = applied(&run);
            assert_eq!(log.len(), 2 * r.flaps as usize);
            for (k, w) in log.windows(2).enumerate() {
                let (t0, t1) = (w[0].0, w[1].0);
                let (mean, down) = if k % 2 == 0 {
                    (r.flap_down_ms, true)
                } else {
                    (r.flap_up_ms, false)
                };
                assert!(
                    t1 - t0 >= 0.5 * mean - 1e-6 && t1 - t0 <= 1.5 * mean + 1e-6,
                    "{log:?}"
                );
                match &w[0].1 {
                    Applied::Links { pairs, up } => {
                        assert_eq!(*up, !down);
                        assert_eq!(pairs, &[(f, l), (l, f)]);
                    }
                    other => panic!("{other:?}"),
                }
            }
        }
        let one = |scenario: &str| {
            let p = spec(&format!(
                "protocols=[\"raft\"]\nnodes=[5]\nscenarios=[\"{scenario}\"]\nseeds=1"
            ))
            .plan()
            .unwrap();
            p.cells().unwrap()[0].run(1, false).unwrap()
        };
        let run = one("slow-leader");
        let l = run.leader_at_fault.unwrap();
        assert_eq!(applied(&run)[0].1, Applied::Slow(l, 1000.0, 0.0));
        let run = one("amnesia-recover");
        let l = run.leader_at_fault.unwrap();
        let log: Vec<Applied> = applied(&run).into_iter().map(|(_, a)| a).collect();
        assert_eq!(
            log,
            vec![Applied::Crash(l), Applied::Amnesia(l), Applied::Recover(l)]
        );
    }

    #[test]
    fn custom_follower_selectors_never_pick_the_leader() {
        use election_sim::Applied;
        let p = spec(
            r#"
protocols = ["raft"]
nodes = [5]
scenarios = ["iso"]
seeds = 1
[[scenario]]
name = "iso"
faults = [
  { at_ms = 0, action = "isolate", node = "lowest_follower" },
  { at_ms = 10, jitter_ms = 5, action = "crash", node = "highest_follower" },
]
"#,
        )
        .plan()
        .unwrap();
        let cell = &p.cells().unwrap()[0];
        for seed in 0..6 {
            let run = cell.run(seed, false).unwrap();
            let l = run.leader_at_fault.expect("a leader by 1 s");
            let t = run.fault_instant_ms.unwrap();
            let log = applied(&run);
            assert_eq!(log.len(), 2, "{log:?}");
            assert_eq!(log[0].0, t);
            assert!(log[1].0 >= t + 10.0 && log[1].0 <= t + 15.0);
            match (&log[0].1, &log[1].1) {
                (Applied::Isolate(a), Applied::Crash(b)) => {
                    assert_ne!(*a, l);
                    assert_ne!(*b, l);
                    // The lowest and the highest of the nodes other than the leader.
                    let others: Vec<_> = (1..=5).map(NodeId).filter(|&v| v != l).collect();
                    assert_eq!(*a, others[0]);
                    assert_eq!(*b, *others.last().unwrap());
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(run.row.faults_skipped, 0);
        }
    }

    #[test]
    fn the_leader_stays_on_the_majority_side_whatever_its_id() {
        use election_sim::Applied;
        let p = spec(
            "protocols=[\"raft\"]\nnodes=[5]\nscenarios=[\"partition-leader-majority\"]\nseeds=1",
        )
        .plan()
        .unwrap();
        let cell = &p.cells().unwrap()[0];
        for seed in 0..5 {
            let run = cell.run(seed, false).unwrap();
            let l = run.leader_at_fault.expect("a raft leader by 1 s");
            match &applied(&run)[0].1 {
                Applied::Partition(g) => {
                    assert!(!g[0].contains(&l));
                    assert!(g[1].contains(&l));
                    assert_eq!(g[0].len(), 2);
                }
                other => panic!("{other:?}"),
            }
            assert!(run.row.converged);
        }
    }

    fn one_cell(toml: &str) -> Cell {
        spec(toml).plan().unwrap().cells().unwrap().remove(0)
    }

    #[test]
    fn a_fault_due_before_any_leader_waits_for_one() {
        // Fault at 0 ms: no leader yet. The crash waits for the first quorum leader and
        // crashes it; the reference instant is when it fired.
        let cell = one_cell(
            "protocols=[\"raft\"]\nnodes=[5]\nscenarios=[\"leader-crash\"]\nseeds=1\n\
             [params]\nfault_at_ms=0\nfault_jitter_ms=0",
        );
        for seed in 0..5 {
            let run = cell.run(seed, false).unwrap();
            assert_eq!(run.drawn_fault_ms, Some(0.0));
            let t = run.fault_instant_ms.expect("the crash fired");
            assert!(t > 0.0, "it waited for a leader");
            let l = run.leader_at_fault.expect("a leader when it fired");
            assert_eq!(applied(&run), vec![(t, election_sim::Applied::Crash(l))]);
            assert_eq!(run.row.faults_skipped, 0);
            assert!(run.row.converged);
            assert_ne!(run.row.leader, Some(l.0));
        }
    }

    #[test]
    fn a_fault_that_finds_no_leader_is_counted_never_silent() {
        // Without the wait, a crash of the leader at 0 ms finds none: it is skipped and the
        // row says so.
        let cell = one_cell(
            "protocols=[\"raft\"]\nnodes=[5]\nscenarios=[\"leader-crash\"]\nseeds=1\n\
             [params]\nfault_at_ms=0\nfault_jitter_ms=0\nfault_wait_ms=0",
        );
        let run = cell.run(1, false).unwrap();
        assert_eq!(run.row.faults_skipped, 1);
        assert_eq!(run.fault_instant_ms, None);
        assert!(!run.row.measured());
        // A cluster that never elects (Raft with no timeout spread, on ideal nodes whose
        // timers fire exactly, splits its vote forever in lockstep): the wait gives up and every
        // fault counts as skipped.
        let cell = one_cell(
            "protocols=[\"raft\"]\nnodes=[5]\nscenarios=[\"leader-recovers\"]\nseeds=1\n\
             [params]\ndetect_jitter_ms=0\nfault_wait_ms=2000\n\"node.profile\"=\"ideal\"",
        );
        let run = cell.run(1, false).unwrap();
        assert_eq!(run.row.faults_skipped, 2, "{:?}", applied(&run));
        assert_eq!(run.fault_instant_ms, None);
        let drawn = run.drawn_fault_ms.unwrap();
        assert!((run.report.metrics.reference_ms - (drawn + 2000.0)).abs() < 1e-6);
    }

    /// Two leader crashes 2 s apart, measured from the second: the reference instant is when
    /// the second crash fired (shifted with the timeline when it waited for a leader), and the
    /// leader at the reference is the one the second crash took.
    #[test]
    fn a_reference_fault_is_the_instant_measured_from() {
        use election_sim::Applied;
        // Waiting for a leader (the default) and not (fault_wait_ms = 0).
        for (fault_at, protocol, wait) in [
            (1000, "bully", 10000),
            (1000, "raft", 10000),
            (0, "raft", 10000),
            (1000, "raft", 0),
        ] {
            let cell = one_cell(&format!(
                r#"
protocols = ["{protocol}"]
nodes = [5]
scenarios = ["second-crash"]
seeds = 1
[params]
fault_at_ms = {fault_at}
fault_wait_ms = {wait}
[[scenario]]
name = "second-crash"
faults = [
  {{ at_ms = 0, action = "crash", node = "leader" }},
  {{ at_ms = 2000, action = "crash", node = "leader", reference = true }},
]
"#
            ));
            assert_eq!(cell.scenario.reference_fault(), Some(1));
            for seed in 0..4 {
                let run = cell.run(seed, false).unwrap();
                let m = &run.report.metrics;
                let log = applied(&run);
                let ctx = format!(
                    "{protocol}, fault_at_ms {fault_at}, wait {wait}, seed {seed}: {log:?}"
                );
                assert_eq!(run.row.faults_skipped, 0, "{ctx}");
                let (Applied::Crash(a), Applied::Crash(b)) = (&log[0].1, &log[1].1) else {
                    panic!("{ctx}");
                };
                assert_ne!(a, b, "{ctx}");
                assert_eq!(m.reference_ms, log[1].0, "{ctx}");
                assert!((log[1].0 - log[0].0 - 2000.0).abs() < 1e-6, "{ctx}");
                assert_eq!(run.fault_instant_ms, Some(log[0].0), "{ctx}");
                if fault_at == 0 {
                    assert!(log[0].0 > 0.0, "the timeline waited for a leader: {ctx}");
                }
                assert_eq!(m.leader_at_reference, Some(*b), "{ctx}");
                assert_eq!(run.leader_at_fault, Some(*b), "{ctx}");
                assert!(run.row.converged, "{ctx}");
                // Times count from the second crash: the first election is before it.
                let elect = run.row.elect_ms.unwrap();
                assert!(elect > 0.0 && elect < 2000.0, "{ctx}");
                assert!(run.row.leader_changes >= 1, "{ctx}");
            }
        }
        // Without the option, the same faults are measured from the first.
        let cell = one_cell(
            r#"
protocols = ["raft"]
nodes = [5]
scenarios = ["two-crashes"]
seeds = 1
[[scenario]]
name = "two-crashes"
faults = [
  { at_ms = 0, action = "crash", node = "leader" },
  { at_ms = 2000, action = "crash", node = "leader" },
]
"#,
        );
        let run = cell.run(1, false).unwrap();
        assert_eq!(run.sim.reference_fault, None);
        assert_eq!(run.report.metrics.reference_ms, applied(&run)[0].0);
    }

    #[test]
    fn at_most_one_fault_is_the_reference() {
        let e = spec(
            r#"
[[scenario]]
name = "twice"
faults = [
  { at_ms = 0, action = "crash", node = "leader", reference = true },
  { at_ms = 10, action = "heal" },
  { at_ms = 20, action = "crash", node = "leader", reference = true },
]
"#,
        )
        .plan()
        .unwrap_err();
        let msg = e.to_string();
        assert!(e.is_usage(), "{msg}");
        assert!(
            msg.contains("scenario \"twice\" faults[2]") && msg.contains("faults[0]"),
            "{msg}"
        );
    }

    #[test]
    fn a_fault_instant_past_the_horizon_is_refused() {
        let e = spec(
            "protocols=[\"raft\"]\nnodes=[5]\nscenarios=[\"leader-crash\"]\nseeds=1\n\
             [params]\nfault_at_ms=30000\nhorizon_ms=20000",
        )
        .plan()
        .and_then(|p| p.cells())
        .unwrap_err()
        .to_string();
        assert!(e.contains("fault_at_ms") && e.contains("horizon_ms"), "{e}");
    }
}
