//! The fault model: a timeline of actions, each picking its nodes by selectors that are
//! resolved when the action fires (so "crash the leader" crashes whoever leads *then*).
//! Selectors, node sets and actions have one text form, the one config files write
//! ([`SELECTOR_SYNTAX`], [`SET_SYNTAX`], [`ACTIONS`]): `FromStr`/`Display` and serde on these
//! types, so a config deserializes straight into a [`FaultAction`] and a new action is one
//! variant here with its name, its fields and its resolution.
//!
//! # When faults fire, and when they do not apply
//!
//! Both drivers (the simulator and the live UDP driver) follow the same two rules:
//!
//! 1. **The timeline waits for a leader.** With a leader wait configured
//!    ([`SimConfig::fault_wait`](crate::SimConfig::fault_wait)), the fault timeline starts at the
//!    first instant at or after its first fault's scheduled instant at which the cluster has a
//!    quorum leader (see the [observer](crate::observer)), waiting at most that long; every fault shifts by the same
//!    delay, so the scenario's shape (an outage of `outage_ms`, a pause, a flap period) is kept.
//!    If there is no quorum leader by then, the timeline is abandoned: no fault fires and every one of
//!    them counts as skipped. Without a wait, faults fire at their scheduled instants. The
//!    reference instant of the metrics is when the first fault fires or, with
//!    [`SimConfig::reference_fault`](crate::SimConfig::reference_fault), when that fault fires:
//!    shifted like the rest, so it follows the wait.
//! 2. **An action that finds no target does nothing and is counted.** [`Resolver::action`]
//!    resolves every selector of an action at the instant it fires; if any selector finds no
//!    node (no leader to crash, no crashed node to recover, a partition group whose named member
//!    is gone), the action is not carried out at all and is recorded as [`Applied::Skipped`]. A
//!    fault still pending when the trial ends (pushed past the horizon by the wait) is skipped
//!    too. The observer counts skipped faults in
//!    [`Metrics::faults_skipped`](crate::Metrics::faults_skipped), so a trial whose scenario did
//!    not happen as described can never pass for one that did.

use election_core::NodeId;

mod syntax;
pub use syntax::{SyntaxError, ACTIONS, SELECTOR_SYNTAX, SET_SYNTAX};

/// Picks one node when an action fires.
///
/// Selectors pick among **live** (not crashed) nodes, except in [`FaultAction::Recover`],
/// where they pick among **crashed** nodes. A selector that finds no node makes the action a
/// no-op, recorded as skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selector {
    /// The quorum leader (see the [observer](crate::observer)); failing that, the highest live
    /// node in the leader role. In `Recover`: the most recently crashed node.
    Leader,
    /// The highest id.
    Highest,
    /// The k-th highest id (1 = highest).
    KthHighest(u32),
    /// The lowest id.
    Lowest,
    /// The k-th lowest id (1 = lowest).
    KthLowest(u32),
    /// A node drawn uniformly from the trial's fault stream.
    Random,
    /// This exact node (in `Recover`, only if it is crashed; elsewhere only if it is live).
    Id(NodeId),
    /// The node most recently crashed by a `Crash` action.
    LastCrashed,
    /// The k-th lowest live node other than the one [`Selector::Leader`] picks (1 = the
    /// lowest follower). Finds no node when there is no leader.
    KthLowestFollower(u32),
    /// The k-th highest live node other than the one [`Selector::Leader`] picks (1 = the
    /// highest follower). Finds no node when there is no leader.
    KthHighestFollower(u32),
    /// The quorum leader at the reference instant (when the trial's first fault fired, or its
    /// [reference fault](crate::SimConfig::reference_fault)), whatever it is doing now: in
    /// `Recover`, only if it is crashed; elsewhere, only if it is live. Before the reference
    /// instant it finds no node.
    InitialLeader,
    /// The k-th lowest live node other than the [`Selector::InitialLeader`] (1 = its lowest
    /// follower then), whoever leads now: a position in a topology that several faults build
    /// step by step, which must not move when the leader changes between them. Finds no node
    /// before the reference instant or when there was no quorum leader then.
    KthInitialFollower(u32),
    /// Inside a partition group only: every node not named by another group.
    Rest,
    /// The k-th service endpoint (1 = the first, id `n + 1`: the lease store), not a member
    /// (see [`SimConfig::services`](crate::SimConfig::services)); live, or in `Recover`
    /// crashed. No other selector ever picks a service endpoint, and node sets other than
    /// [`NodeSet::One`] hold members only.
    Service(u32),
}

/// A set of nodes, for link cuts and detector switches. Resolved over all members, live or
/// not; only `One(Service(k))` names a service endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeSet {
    /// One node.
    One(Selector),
    /// Every node.
    All,
    /// Every node but one.
    AllExcept(Selector),
    /// Every node with a higher id than the selected one.
    Above(Selector),
    /// Every node with a lower id than the selected one.
    Below(Selector),
}

impl NodeSet {
    /// The selector the set is built on, if any (`All` has none).
    pub fn selector(&self) -> Option<Selector> {
        match *self {
            NodeSet::All => None,
            NodeSet::One(s) | NodeSet::AllExcept(s) | NodeSet::Above(s) | NodeSet::Below(s) => {
                Some(s)
            }
        }
    }
}

impl FaultAction {
    /// Every selector the action names (in its node, its sets, its groups and its link pairs),
    /// unresolved: what it could act on.
    pub fn selectors(&self) -> Vec<Selector> {
        use FaultAction::*;
        match self {
            Crash(s) | Recover(s) | Isolate(s) | Amnesia(s) | Suspect(s) | Handover(s) => vec![*s],
            Pause { node, .. }
            | Slow { node, .. }
            | ClockJump { node, .. }
            | ClockRate { node, .. } => vec![*node],
            Partition(groups) => groups.iter().flatten().copied().collect(),
            CutLink { from, to }
            | StaleConnection { from, to, .. }
            | LinkLoss { from, to, .. }
            | LinkDelay { from, to, .. } => [from.selector(), to.selector()]
                .into_iter()
                .flatten()
                .collect(),
            Links { pairs, .. } => pairs.iter().flat_map(|&(a, b)| [a, b]).collect(),
            ResourceCut(nodes) | Detection { nodes, .. } => nodes.selector().into_iter().collect(),
            Heal | SetLoss(_) => Vec::new(),
        }
    }

    /// How long after it fires the action is still under way by itself: the keep-alive of a
    /// [`FaultAction::StaleConnection`], zero for every other action (a pause's end is the
    /// node's, not the timeline's). The end of the trial counts from the end of the last
    /// action ([`Timeline::deadline`](crate::trial::Timeline::deadline)), so a trial sees
    /// the connection come back.
    pub fn lasts(&self) -> std::time::Duration {
        match *self {
            FaultAction::StaleConnection { ms, .. } => {
                std::time::Duration::from_nanos(ms_to_ns(ms))
            }
            _ => std::time::Duration::ZERO,
        }
    }
}

/// One fault action.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultAction {
    /// The node stops: it loses its volatile state, its pending timers and any paused backlog;
    /// it keeps what it persisted. Messages it already sent stay in flight; messages arriving
    /// while it is down are dropped.
    Crash(Selector),
    /// A crashed node boots again (`on_start` with its persisted record).
    Recover(Selector),
    /// A stop-the-world pause: for `ms` the node processes nothing. Messages and timer
    /// firings that arrive meanwhile queue up; when it wakes, it handles that backlog in
    /// arrival order, all at the wake-up instant (late timers, stale messages).
    Pause {
        /// Who pauses.
        node: Selector,
        /// For how long, in ms.
        ms: f64,
    },
    /// Cut every link between nodes of different groups, both directions. Links inside a
    /// group keep their current state. Cuts add to any existing ones; `Heal` undoes all.
    Partition(Vec<Vec<Selector>>),
    /// Cut the links from every node in `from` to every node in `to`, in that direction only.
    CutLink {
        /// Senders whose messages are cut.
        from: NodeSet,
        /// Receivers that no longer hear them.
        to: NodeSet,
    },
    /// A stale connection: every one-way link from `from` to `to` that is up silently drops
    /// every message for `ms` (the transport's keep-alive or read timeout), then comes back by
    /// itself — a half-dead TCP connection that black-holes one direction until the sender or
    /// the receiver notices and dials again. Only the links this action took down come back,
    /// and only those no later link fault (a cut, a partition, an isolation, `links`, `heal`)
    /// has set meanwhile: that fault's word stands. While the connection is stale the link is
    /// down for every purpose (messages in flight on it are dropped on arrival, the observer
    /// sees the topology without it), exactly as [`FaultAction::CutLink`].
    StaleConnection {
        /// Senders whose messages are black-holed.
        from: NodeSet,
        /// Receivers that no longer hear them.
        to: NodeSet,
        /// How long until the connection is re-established, in ms.
        ms: f64,
    },
    /// Cut every link to and from the node.
    Isolate(Selector),
    /// Cut the nodes off the shared resource of the workload (both directions); writes in
    /// flight from them are lost. `Heal` restores these links too.
    ResourceCut(NodeSet),
    /// Set each listed one-way link `(from, to)` down (`up = false`) or back up (`up = true`),
    /// leaving every other link as it is: the building block of partial partitions (a topology
    /// given pair by pair), flaky links (down and up again) and the link-failure patterns of
    /// `explore`. A pair whose selectors pick the same node is ignored (a node's link to itself
    /// is always up).
    Links {
        /// The one-way links, `(sender, receiver)`.
        pairs: Vec<(Selector, Selector)>,
        /// Up or down.
        up: bool,
    },
    /// From now on, a message on any one-way link from `from` to `to` is lost with probability
    /// `loss`, independently of (and in addition to) the network's loss ([`FaultAction::SetLoss`]);
    /// 0 restores the link. Drawn from the network's stream, after the network's own draw.
    LinkLoss {
        /// Senders.
        from: NodeSet,
        /// Receivers.
        to: NodeSet,
        /// Loss probability on those links.
        loss: f64,
    },
    /// From now on, every message on a one-way link from `from` to `to` takes `ms` longer than
    /// its drawn latency (0 restores the link): a degraded link, or, set and reset, a latency
    /// spike. Successive `LinkDelay`s change the latency over time.
    LinkDelay {
        /// Senders.
        from: NodeSet,
        /// Receivers.
        to: NodeSet,
        /// Extra one-way latency, ms.
        ms: f64,
    },
    /// A slow node (alive, answering late), unlike a pause: from now on each input it handles
    /// keeps it busy `factor` times its drawn processing time plus `ms` (a timer that only
    /// re-arms timers stays free), and each message it
    /// sends takes `factor` times its drawn latency; inputs arriving meanwhile queue. `factor`
    /// models a node slowed as a whole (a throttled CPU, a degraded NIC), `ms` a fixed service
    /// time per request (an overloaded lock service, a slow disk under every request). Factor 1
    /// and 0 ms restore it.
    Slow {
        /// Who.
        node: Selector,
        /// The multiplier, >= 1.
        factor: f64,
        /// Extra time per input, ms.
        ms: f64,
    },
    /// A crashed node loses its stable storage (a disk replaced, a volume not re-attached): its
    /// next `Recover` boots it with `on_start(.., None)`, as a brand-new node. For protocols that
    /// persist (Raft's term and vote) this can break safety on purpose; the observer reports what
    /// happens. Selects among crashed nodes.
    Amnesia(Selector),
    /// Restore every link (between nodes, and to the shared resource) and clear every
    /// [`FaultAction::LinkLoss`] and [`FaultAction::LinkDelay`]; slow nodes stay slow.
    Heal,
    /// The node's clock jumps by `ms` (negative: backwards); timers already armed keep their
    /// instants (see [`NodeTime`](crate::NodeTime)).
    ClockJump {
        /// Whose clock.
        node: Selector,
        /// By how much, ms.
        ms: f64,
    },
    /// The node's clock runs at `1 + ppm·10⁻⁶` of real time from now on.
    ClockRate {
        /// Whose clock.
        node: Selector,
        /// Rate error, parts per million (positive: fast).
        ppm: f64,
    },
    /// Change the network's loss probability from now on.
    SetLoss(f64),
    /// Force the node's failure detector to fire now (`Protocol::on_suspect`).
    Suspect(Selector),
    /// Tell the node it is about to be stopped on purpose (`Protocol::on_handover`): a leader
    /// hands its leadership over (a planned restart or a rolling upgrade). The action only
    /// warns the node; the stop itself is a later `Crash` of the scenario's. A paused node
    /// hears nothing (its process is frozen), as for `Suspect`.
    Handover(Selector),
    /// Switch the nodes' automatic failure detection on or off. While off, firings of the
    /// protocol's failure-detector timer are swallowed; forced `Suspect`s still work.
    Detection {
        /// Whose detectors.
        nodes: NodeSet,
        /// On or off.
        enabled: bool,
    },
}

/// An action at an instant.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// When, in ms since the trial's start. Several faults at the same instant fire in list
    /// order, after the nodes' boot at time zero and before any other event at that instant
    /// that was scheduled later.
    pub at_ms: f64,
    /// What.
    pub action: FaultAction,
}

impl Fault {
    /// `action` at `at_ms`.
    pub fn at_ms(at_ms: f64, action: FaultAction) -> Fault {
        Fault { at_ms, action }
    }
}

/// A fault action as it was carried out, with every selector resolved to node ids; this is
/// what traces record.
#[derive(Clone, Debug, PartialEq)]
pub enum Applied {
    /// Crashed this node.
    Crash(NodeId),
    /// Recovered this node.
    Recover(NodeId),
    /// Paused this node until the given instant (ns).
    Pause(NodeId, election_core::Time),
    /// The paused node woke up.
    Resume(NodeId),
    /// Partitioned into these groups.
    Partition(Vec<Vec<NodeId>>),
    /// Cut these one-way links.
    CutLink {
        /// Senders.
        from: Vec<NodeId>,
        /// Receivers.
        to: Vec<NodeId>,
    },
    /// The one-way links from these senders to these receivers that were up black-hole every
    /// message until the given instant; then those the driver took down come back by
    /// themselves, recorded as an [`Applied::Links`] with `up`.
    StaleConnection {
        /// Senders.
        from: Vec<NodeId>,
        /// Receivers.
        to: Vec<NodeId>,
        /// When the connection is re-established.
        until: election_core::Time,
    },
    /// Isolated this node.
    Isolate(NodeId),
    /// Cut these nodes off the shared resource.
    ResourceCut(Vec<NodeId>),
    /// Set these one-way links down or up.
    Links {
        /// `(sender, receiver)` pairs.
        pairs: Vec<(NodeId, NodeId)>,
        /// Up or down.
        up: bool,
    },
    /// Loss probability on these one-way links.
    LinkLoss {
        /// Senders.
        from: Vec<NodeId>,
        /// Receivers.
        to: Vec<NodeId>,
        /// The probability.
        loss: f64,
    },
    /// Extra latency on these one-way links.
    LinkDelay {
        /// Senders.
        from: Vec<NodeId>,
        /// Receivers.
        to: Vec<NodeId>,
        /// Extra ms.
        ms: f64,
    },
    /// This node is slowed: its factor and its extra ms per input.
    Slow(NodeId, f64, f64),
    /// This crashed node lost its stable storage.
    Amnesia(NodeId),
    /// Background noise, not a fault: every message to or from this node now takes this many
    /// ms longer (0: the spike is over; see [`crate::noise`]). It adds to any link delay, and a
    /// message between two spiking nodes takes the larger spike.
    Spike(NodeId, f64),
    /// Restored every link.
    Heal,
    /// This node's clock jumped by this many ms.
    ClockJump(NodeId, f64),
    /// This node's clock runs at this rate error (ppm) from now on.
    ClockRate(NodeId, f64),
    /// Set the loss probability.
    SetLoss(f64),
    /// Forced this node's detector.
    Suspect(NodeId),
    /// Told this node it is about to be stopped on purpose.
    Handover(NodeId),
    /// Switched these nodes' detection.
    Detection {
        /// Whose.
        nodes: Vec<NodeId>,
        /// On or off.
        enabled: bool,
    },
    /// The action found no node to act on (e.g. `Crash(Leader)` with no leader).
    Skipped(String),
}

/// Resolves selectors, node sets and partition groups the same way in every driver (the
/// simulator and the live UDP driver), so a scenario means the same thing in both.
#[derive(Debug)]
pub struct Resolver<'a> {
    /// Which members are up (not crashed), indexed by `id - 1`.
    pub up: &'a [bool],
    /// Which service endpoints are up, indexed by `id - n - 1` (empty: the protocol has none).
    pub services: &'a [bool],
    /// What `Selector::Leader` means now: the quorum leader, else the highest live node in the
    /// leader role (see [`Observer::quorum_leader`](crate::Observer::quorum_leader) and
    /// [`Observer::highest_leader`](crate::Observer::highest_leader)).
    pub leader: Option<NodeId>,
    /// The node most recently crashed by a `Crash` action.
    pub last_crashed: Option<NodeId>,
    /// The quorum leader at the reference instant.
    pub initial_leader: Option<NodeId>,
    /// The trial's fault stream, for `Selector::Random`.
    pub rng: &'a mut election_core::Rng,
}

impl Resolver<'_> {
    /// The node `sel` picks among live nodes, or among crashed ones when `among_crashed`.
    pub fn node(&mut self, sel: Selector, among_crashed: bool) -> Option<NodeId> {
        use election_core::RngExt;
        let up = self.up;
        let n = up.len();
        let eligible = |i: usize| i < n && up[i] != among_crashed;
        let nth = |k: u32, high: bool| -> Option<NodeId> {
            let k = (k as usize).checked_sub(1)?;
            let found = if high {
                (0..n).rev().filter(|&i| eligible(i)).nth(k)
            } else {
                (0..n).filter(|&i| eligible(i)).nth(k)
            };
            found.map(NodeId::from_index)
        };
        let services = self.services;
        let pick = |id: Option<NodeId>| {
            id.filter(|id| {
                id.0 >= 1
                    && (eligible(id.index())
                        || id.index() >= n
                            && services
                                .get(id.index() - n)
                                .is_some_and(|&u| u != among_crashed))
            })
        };
        let follower = |k: u32, high: bool| -> Option<NodeId> {
            let leader = pick(self.leader)?;
            let k = (k as usize).checked_sub(1)?;
            let others = (0..n).filter(|&i| eligible(i) && i != leader.index());
            let found = if high {
                others.rev().nth(k)
            } else {
                others.clone().nth(k)
            };
            found.map(NodeId::from_index)
        };
        match sel {
            Selector::Leader if among_crashed => pick(self.last_crashed),
            Selector::Leader => pick(self.leader),
            Selector::Highest => nth(1, true),
            Selector::KthHighest(k) => nth(k, true),
            Selector::Lowest => nth(1, false),
            Selector::KthLowest(k) => nth(k, false),
            Selector::Random => {
                let pool: Vec<usize> = (0..n).filter(|&i| eligible(i)).collect();
                if pool.is_empty() {
                    None
                } else {
                    let k = self.rng.random_range(0..pool.len());
                    Some(NodeId::from_index(pool[k]))
                }
            }
            Selector::Id(id) => pick(Some(id)),
            Selector::LastCrashed => pick(self.last_crashed),
            Selector::InitialLeader => pick(self.initial_leader),
            Selector::KthLowestFollower(k) if !among_crashed => follower(k, false),
            Selector::KthHighestFollower(k) if !among_crashed => follower(k, true),
            Selector::KthInitialFollower(k) if !among_crashed => {
                let leader = self.initial_leader?;
                let k = (k as usize).checked_sub(1)?;
                (0..n)
                    .filter(|&i| eligible(i) && i != leader.index())
                    .nth(k)
                    .map(NodeId::from_index)
            }
            Selector::KthLowestFollower(_)
            | Selector::KthHighestFollower(_)
            | Selector::KthInitialFollower(_) => None,
            Selector::Rest => None,
            Selector::Service(k) => {
                let k = (k as usize).checked_sub(1)?;
                pick(Some(NodeId::from_index(n + k)))
            }
        }
    }

    /// The nodes of `set` (over all nodes, live or not; its selector picks among live ones), or
    /// `None` when its selector finds no node.
    pub fn set(&mut self, set: NodeSet) -> Option<Vec<NodeId>> {
        let all = election_core::all_nodes(self.up.len() as u32);
        let mut relative = |s: Selector, keep: fn(NodeId, NodeId) -> bool| {
            self.node(s, false)
                .map(|x| all.clone().filter(|&v| keep(v, x)).collect())
        };
        match set {
            NodeSet::All => Some(election_core::all_nodes(self.up.len() as u32).collect()),
            NodeSet::One(s) => self.node(s, false).map(|x| vec![x]),
            NodeSet::AllExcept(s) => relative(s, |v, x| v != x),
            NodeSet::Above(s) => relative(s, |v, x| v > x),
            NodeSet::Below(s) => relative(s, |v, x| v < x),
        }
    }

    /// The groups as resolved (each node in exactly one; [`group_of`] indexes them by node), or
    /// `None` when a selector other than `Rest` finds no node (the partition would not be the
    /// one described). Explicit ids are placed whether or not the node is up; a node picked by two
    /// selectors stays in the first group; nodes no selector picked (crashed ones, say) join the
    /// `rest` group, or the first group when there is none.
    pub fn partition(&mut self, groups: &[Vec<Selector>]) -> Option<Vec<Vec<NodeId>>> {
        let n = self.up.len();
        let mut group_of = vec![usize::MAX; n];
        let mut rest = None;
        for (g, group) in groups.iter().enumerate() {
            for &sel in group {
                let picked = match sel {
                    Selector::Rest => {
                        rest = Some(g);
                        continue;
                    }
                    Selector::Id(id) => Some(id).filter(|id| id.0 >= 1 && id.index() < n),
                    other => self.node(other, false),
                };
                let id = picked?;
                if group_of[id.index()] == usize::MAX {
                    group_of[id.index()] = g;
                }
            }
        }
        let mut resolved = vec![Vec::new(); groups.len()];
        for (i, g) in group_of.iter_mut().enumerate() {
            if *g == usize::MAX {
                *g = rest.unwrap_or(0);
            }
            resolved[*g].push(NodeId::from_index(i));
        }
        Some(resolved)
    }

    /// `action`, firing at `now`, with every selector resolved to node ids: what the driver must
    /// carry out, or [`Applied::Skipped`] (with the reason) when a selector finds no node, in
    /// which case the driver does nothing. The one place both drivers decide what a fault does.
    pub fn action(&mut self, now: election_core::Time, action: &FaultAction) -> Applied {
        let skipped = |what: &str, sel: &dyn std::fmt::Debug| {
            Applied::Skipped(format!("{what}: no node matched {sel:?}"))
        };
        match *action {
            FaultAction::Crash(sel) => match self.node(sel, false) {
                Some(id) => Applied::Crash(id),
                None => skipped("crash", &sel),
            },
            FaultAction::Recover(sel) => match self.node(sel, true) {
                Some(id) => Applied::Recover(id),
                None => Applied::Skipped(format!("recover: no crashed node matched {sel:?}")),
            },
            FaultAction::Pause { node, ms } => match self.node(node, false) {
                Some(id) => Applied::Pause(id, now + std::time::Duration::from_nanos(ms_to_ns(ms))),
                None => skipped("pause", &node),
            },
            FaultAction::Partition(ref groups) => match self.partition(groups) {
                Some(resolved) => Applied::Partition(resolved),
                None => skipped("partition", groups),
            },
            FaultAction::CutLink { from, to } => match (self.set(from), self.set(to)) {
                (Some(from), Some(to)) => Applied::CutLink { from, to },
                (None, _) => skipped("cut_link from", &from),
                (_, None) => skipped("cut_link to", &to),
            },
            FaultAction::StaleConnection { from, to, ms } => match (self.set(from), self.set(to)) {
                (Some(from), Some(to)) => Applied::StaleConnection {
                    from,
                    to,
                    until: now + std::time::Duration::from_nanos(ms_to_ns(ms)),
                },
                (None, _) => skipped("stale_connection from", &from),
                (_, None) => skipped("stale_connection to", &to),
            },
            FaultAction::Isolate(sel) => match self.node(sel, false) {
                Some(id) => Applied::Isolate(id),
                None => skipped("isolate", &sel),
            },
            FaultAction::ResourceCut(nodes) => match self.set(nodes) {
                Some(nodes) => Applied::ResourceCut(nodes),
                None => skipped("cut_resource", &nodes),
            },
            FaultAction::Links { ref pairs, up } => {
                let mut resolved = Vec::with_capacity(pairs.len());
                for &(a, b) in pairs {
                    match (self.node(a, false), self.node(b, false)) {
                        (Some(x), Some(y)) => {
                            if x != y {
                                resolved.push((x, y));
                            }
                        }
                        _ => return skipped("links", &(a, b)),
                    }
                }
                Applied::Links {
                    pairs: resolved,
                    up,
                }
            }
            FaultAction::LinkLoss { from, to, loss } => match (self.set(from), self.set(to)) {
                (Some(from), Some(to)) => Applied::LinkLoss { from, to, loss },
                (None, _) => skipped("link_loss from", &from),
                (_, None) => skipped("link_loss to", &to),
            },
            FaultAction::LinkDelay { from, to, ms } => match (self.set(from), self.set(to)) {
                (Some(from), Some(to)) => Applied::LinkDelay { from, to, ms },
                (None, _) => skipped("link_delay from", &from),
                (_, None) => skipped("link_delay to", &to),
            },
            FaultAction::Slow { node, factor, ms } => match self.node(node, false) {
                Some(id) => Applied::Slow(id, factor, ms),
                None => skipped("slow", &node),
            },
            FaultAction::Amnesia(sel) => match self.node(sel, true) {
                Some(id) => Applied::Amnesia(id),
                None => Applied::Skipped(format!("amnesia: no crashed node matched {sel:?}")),
            },
            FaultAction::Heal => Applied::Heal,
            FaultAction::SetLoss(p) => Applied::SetLoss(p),
            FaultAction::ClockJump { node, ms } => match self.node(node, false) {
                Some(id) => Applied::ClockJump(id, ms),
                None => skipped("clock_jump", &node),
            },
            FaultAction::ClockRate { node, ppm } => match self.node(node, false) {
                Some(id) => Applied::ClockRate(id, ppm),
                None => skipped("clock_rate", &node),
            },
            FaultAction::Suspect(sel) => match self.node(sel, false) {
                Some(id) => Applied::Suspect(id),
                None => skipped("suspect", &sel),
            },
            FaultAction::Handover(sel) => match self.node(sel, false) {
                Some(id) => Applied::Handover(id),
                None => skipped("handover", &sel),
            },
            FaultAction::Detection { nodes, enabled } => match self.set(nodes) {
                Some(nodes) => Applied::Detection { nodes, enabled },
                None => skipped("detection", &nodes),
            },
        }
    }
}

/// Milliseconds to whole nanoseconds, saturating (negative and NaN give 0).
fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1e6).round().clamp(0.0, u64::MAX as f64) as u64
}

/// Which group each node is in, from a resolved partition.
pub fn group_of(n: usize, groups: &[Vec<NodeId>]) -> Vec<usize> {
    let mut of = vec![0; n];
    for (g, members) in groups.iter().enumerate() {
        for id in members {
            if id.index() < n {
                of[id.index()] = g;
            }
        }
    }
    of
}
