//! `election-store`: the lease family with a store that can fail like a real one — a group
//! of `s` endpoints running our Raft (`election-raft`) and applying the lease's
//! compare-and-swap in its log's order, as etcd does behind a Kubernetes Lease.
//!
//! # Why a crate of its own
//!
//! `election-lease` models the store as one endpoint, which is how a replicated store looks
//! to its clients while it works. What it cannot show is the store's own failures: a store
//! group that loses its leader, splits or loses its quorum. This crate composes two families
//! that each depend on `election-core` only: members are `election_lease::Lease` nodes
//! unchanged; store endpoints are [`Replica`]s, each a `election_raft::Raft` node (ids mapped
//! `n + k ↔ k`) plus the lease record. It is a composition, like the runner, so it is the one
//! crate besides the runner that depends on protocol crates; nothing depends on it but the
//! runner.
//!
//! # The rules (etcd's server over Raft)
//!
//! - **Election** among the store's endpoints is our Raft with PreVote and CheckQuorum (etcd
//!   enables both: `embed.Config.PreVote`, `--pre-vote` default true since 3.5; CheckQuorum in
//!   `etcdserver/raft.go`'s `raft.Config{CheckQuorum: true}`), with `AppendRule::Immediate`
//!   (a proposal ships at once, as etcd's leader does in `raft.appendEntry` + `bcastAppend`).
//! - **Writes** (`ACQUIRE`, `RENEW`, `RELEASE`) are proposals: the leader checks the
//!   compare-and-swap against the record at its log's end (the record every earlier entry
//!   produces: applying in log order, as etcd's apply loop does), appends one entry, and
//!   answers once the entry is committed — stored by a majority, in the leader's term
//!   (Raft §5.3, §5.4.2). Our Raft's log is abstract (positions only), so the record rides
//!   with the entries: every `APPEND_ENTRIES` carries the record at the position it ships, and
//!   a follower that accepts it adopts that record; every successful `APPEND_RESP` carries the
//!   position the follower's log now ends at, which is what the leader counts to commit.
//! - **Reads** (`GET`) are linearizable reads by ReadIndex (etcd `linearizableReadLoop`,
//!   Raft thesis §6.4): the leader answers with the record at its log's end once that position
//!   is committed and a majority (itself included) has acknowledged an `APPEND_ENTRIES` since
//!   the read arrived — no log entry, no disk write.
//! - **Forwarding**: an endpoint that is not the leader forwards a request to the leader it
//!   knows (etcd followers forward proposals and read requests to the leader) and relays the
//!   answer; one that knows no leader drops it, and the member's request times out.
//! - **Members** talk to one endpoint and move to the next when a request there went
//!   unanswered (`LeaseConfig::stores`; etcd's client balancer).
//! - **Losing the leadership** drops every request the endpoint was answering: their clients
//!   time out, as etcd's `ErrLeaderChanged` makes them retry.
//!
//! # What the observer sees
//!
//! An endpoint reports a leaderless follower, except the store's leader once it has committed
//! an entry of its term: it names the holder of its committed record, with its term as the
//! epoch. The observer's rule for service endpoints ([`QuorumRule::Service`]) picks, among
//! the live endpoints that name a holder and reach a majority of the store's endpoints, the
//! one with the highest epoch: the store's working leader. With one endpoint this is exactly
//! the single store's rule.
//!
//! Store traffic (the group's heartbeats, votes, forwarded requests) is counted like every
//! message: what a replicated store costs is part of what the lease costs.
mod msg;
mod replica;

use std::sync::Arc;

use election_core::{Action, Io, NodeId, Protocol, QuorumRule, Status, TimerKind};
use election_lease::{Lease, LeaseConfig, LeaseTimer, Record};
use election_raft::{RaftConfig, RaftTimer, Stable};

pub use msg::StoreMsg;
pub use replica::Replica;

/// The configuration of a lease cluster with a replicated store: the members' lease
/// configuration (its `stores` is the number of store endpoints) and the store group's Raft.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// The members' configuration; `lease.stores` endpoints follow the `lease.n` members.
    pub lease: Arc<LeaseConfig>,
    /// The store group's Raft, over `lease.stores` nodes.
    pub raft: Arc<RaftConfig>,
}

impl StoreConfig {
    /// A store of `raft.n` endpoints for `lease`'s members: `lease.stores` is set to match,
    /// and the group runs with PreVote, CheckQuorum and immediate appends (see the crate docs).
    pub fn new(lease: LeaseConfig, raft: RaftConfig) -> StoreConfig {
        let mut raft = raft;
        raft.pre_vote = true;
        raft.check_quorum = true;
        raft.append = election_raft::AppendRule::Immediate;
        raft.lagging.clear();
        raft.voters = None;
        let lease = LeaseConfig {
            stores: raft.n,
            ..lease
        };
        StoreConfig {
            lease: Arc::new(lease),
            raft: Arc::new(raft),
        }
    }

    /// Both configurations' own checks, and at least two store endpoints (one is
    /// `election-lease`'s single store).
    pub fn validate(&self) -> Result<(), String> {
        if self.raft.n < 2 {
            return Err(format!(
                "lease.store_nodes = {}: a replicated store needs at least 2 endpoints (1 is the single store)",
                self.raft.n
            ));
        }
        self.lease.validate()?;
        self.raft.validate()
    }
}

/// A node of a lease cluster with a replicated store: a member (`1..=n`) or a store endpoint
/// (`n + 1 ..= n + s`). Drive it through the [`Protocol`] methods like any node.
#[derive(Clone, Debug)]
pub enum LeaseGroup {
    /// A lease member, unchanged.
    Member(Lease),
    /// A store endpoint.
    Replica(Box<Replica>),
}

impl LeaseGroup {
    /// The node with id `id`.
    pub fn new(id: NodeId, cfg: &StoreConfig) -> LeaseGroup {
        if id.0 <= cfg.lease.n {
            LeaseGroup::Member(Lease::new(id, Arc::clone(&cfg.lease)))
        } else {
            LeaseGroup::Replica(Box::new(Replica::new(id, cfg)))
        }
    }
}

/// The timers of either part.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StoreTimer {
    /// A member's timer.
    Lease(LeaseTimer),
    /// A store endpoint's Raft timer.
    Raft(RaftTimer),
}

impl TimerKind for StoreTimer {
    const COUNT: usize = LeaseTimer::COUNT + RaftTimer::COUNT;

    fn index(self) -> usize {
        match self {
            StoreTimer::Lease(t) => t.index(),
            StoreTimer::Raft(t) => LeaseTimer::COUNT + t.index(),
        }
    }

    fn is_failure_detector(self) -> bool {
        match self {
            StoreTimer::Lease(t) => t.is_failure_detector(),
            StoreTimer::Raft(t) => t.is_failure_detector(),
        }
    }
}

/// What a store endpoint keeps on stable storage: its Raft record and the lease record at its
/// log's end (members keep nothing).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ReplicaStable {
    /// Raft's term, vote and last log position.
    pub raft: Stable,
    /// The lease record the log up to `raft.last_log` produces.
    pub record: Record,
}

/// Run `f` on an inner protocol with a scratch action buffer at `io`'s instant and with its
/// generator, then hand the inner actions back (the caller maps them onto `io`).
pub(crate) fn step<P: Protocol, O: Protocol>(
    io: &mut Io<'_, O>,
    inner: &mut P,
    f: impl FnOnce(&mut P, &mut Io<'_, P>),
) -> Vec<Action<P>> {
    let mut acts = Vec::new();
    let now = io.now();
    let mut sub = Io::new(now, io.rng(), &mut acts);
    f(inner, &mut sub);
    acts
}

/// Carry a member's actions out on `io`.
fn emit_member(io: &mut Io<'_, LeaseGroup>, acts: Vec<Action<Lease>>) {
    let now = io.now();
    for a in acts {
        match a {
            Action::Send { to, msg } => io.send(to, StoreMsg::Client(msg)),
            Action::SetTimer { timer, at } => {
                io.set_timer(StoreTimer::Lease(timer), at.saturating_since(now))
            }
            Action::CancelTimer(t) => io.cancel_timer(StoreTimer::Lease(t)),
            // Members persist nothing (the lease's `Persist` is the single store's record).
            Action::Persist(_) => {}
        }
    }
}

impl Protocol for LeaseGroup {
    type Msg = StoreMsg;
    type Timer = StoreTimer;
    type Persist = ReplicaStable;

    fn on_start(&mut self, io: &mut Io<'_, Self>, stored: Option<&ReplicaStable>) {
        match self {
            LeaseGroup::Member(m) => {
                let acts = step(io, m, |m, io| m.on_start(io, None));
                emit_member(io, acts);
            }
            LeaseGroup::Replica(r) => r.on_start(io, stored),
        }
    }

    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: StoreMsg) {
        match self {
            LeaseGroup::Member(m) => {
                if let StoreMsg::Client(msg) = msg {
                    let acts = step(io, m, |m, io| m.on_message(io, from, msg));
                    emit_member(io, acts);
                }
            }
            LeaseGroup::Replica(r) => r.on_message(io, from, msg),
        }
    }

    fn on_timer(&mut self, io: &mut Io<'_, Self>, timer: StoreTimer) {
        match (self, timer) {
            (LeaseGroup::Member(m), StoreTimer::Lease(t)) => {
                let acts = step(io, m, |m, io| m.on_timer(io, t));
                emit_member(io, acts);
            }
            (LeaseGroup::Replica(r), StoreTimer::Raft(t)) => r.on_timer(io, t),
            _ => {}
        }
    }

    fn on_suspect(&mut self, io: &mut Io<'_, Self>) {
        // Forced suspicion is a member's (the scenarios force members only).
        if let LeaseGroup::Member(m) = self {
            let acts = step(io, m, |m, io| m.on_suspect(io));
            emit_member(io, acts);
        }
    }

    fn on_handover(&mut self, io: &mut Io<'_, Self>) {
        // A member's planned stop releases its lease; a store endpoint's is not modelled (the
        // scenarios hand over members only).
        if let LeaseGroup::Member(m) = self {
            let acts = step(io, m, |m, io| m.on_handover(io));
            emit_member(io, acts);
        }
    }

    fn status(&self) -> Status {
        match self {
            LeaseGroup::Member(m) => m.status(),
            LeaseGroup::Replica(r) => r.status(),
        }
    }

    fn quorum_rule(&self) -> QuorumRule {
        QuorumRule::Service
    }
}

#[cfg(test)]
mod tests;
