//! The configuration, the tick derivation and the adapter node.

use std::sync::Arc;
use std::time::Duration;

use election_core::{
    Io, NodeId, Protocol, QuorumRule, RngExt, Role, Status, Ticker, TimerKind, Timing,
};
use raft::eraftpb::{ConfState, Entry, HardState, Message};
use raft::storage::MemStorage;
use raft::{RawNode, StateRole};

use crate::wire::RaftrsMsg;

/// The most ticks any derived timeout may span: past it a tick is too short for the timeouts
/// (millions of timer firings per timeout) and the configuration is refused.
const MAX_TICKS: f64 = 1e6;

/// Configuration shared by every node of one raft-rs cluster (wrap it in an `Arc`).
#[derive(Clone, Debug, PartialEq)]
pub struct RaftrsConfig {
    /// The size of the configured cluster (node ids `1..=n`, raft-rs ids the same numbers).
    pub n: u32,
    /// Shared timing: the heartbeat period and the failure-detection window the tick counts
    /// are derived from (see [`RaftrsConfig::ticks`]).
    pub timing: Timing,
    /// The tick period: how often each node calls `RawNode::tick`, on its own clock.
    pub tick: Duration,
    /// raft-rs's `Config::pre_vote`.
    pub pre_vote: bool,
    /// raft-rs's `Config::check_quorum` (and with it raft-rs's leader lease).
    pub check_quorum: bool,
}

/// raft-rs's timeouts in ticks, derived from a [`RaftrsConfig`] (see the crate docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticks {
    /// `Config::heartbeat_tick`.
    pub heartbeat: usize,
    /// `Config::election_tick` (= `min_election_tick`).
    pub election: usize,
    /// The largest randomized election timeout, inclusive (`max_election_tick - 1`).
    pub election_max: usize,
}

impl RaftrsConfig {
    /// The fair defaults for an `n`-node cluster: [`Timing::default()`], a tick of one
    /// heartbeat period, both options off.
    pub fn new(n: u32) -> RaftrsConfig {
        RaftrsConfig::with_timing(n, Timing::default())
    }

    /// Like [`RaftrsConfig::new`], with `timing`; the tick is `timing.heartbeat`.
    pub fn with_timing(n: u32, timing: Timing) -> RaftrsConfig {
        RaftrsConfig {
            n,
            timing,
            tick: timing.heartbeat,
            pre_vote: false,
            check_quorum: false,
        }
    }

    /// `d` in ticks, rounded to the nearest whole tick.
    fn in_ticks(&self, d: Duration) -> f64 {
        (d.as_secs_f64() / self.tick.as_secs_f64()).round()
    }

    /// The tick counts raft-rs runs with: `heartbeat_tick = max(1, round(heartbeat / tick))`,
    /// `election_tick = max(heartbeat_tick + 1, round(detect_timeout / tick))`, and the
    /// randomized timeout drawn from the half-open `[election_tick, election_tick +
    /// round(detect_jitter / tick))` (at least `election_tick` itself), as raft-rs draws from
    /// `[min_election_tick, max_election_tick)`. With the defaults (jitter = timeout) that is
    /// raft-rs's own default range `[election_tick, 2 × election_tick)`. Call
    /// [`RaftrsConfig::validate`] first: an invalid tick gives nonsense here.
    pub fn ticks(&self) -> Ticks {
        let heartbeat = (self.in_ticks(self.timing.heartbeat) as usize).max(1);
        let election = (self.in_ticks(self.timing.detect_timeout) as usize).max(heartbeat + 1);
        let jitter = self.in_ticks(self.timing.detect_jitter) as usize;
        let election_max = election + jitter.max(1) - 1;
        Ticks {
            heartbeat,
            election,
            election_max,
        }
    }

    /// Checks the configuration, naming the bad field and value.
    pub fn validate(&self) -> Result<(), String> {
        if self.n == 0 {
            return Err("raftrs: n = 0: a cluster needs at least one node".into());
        }
        if self.tick.is_zero() {
            return Err("raftrs.tick_ms = 0: the tick must be positive".into());
        }
        for (name, d) in [
            ("heartbeat_ms", self.timing.heartbeat),
            ("detect_timeout_ms", self.timing.detect_timeout),
            ("detect_jitter_ms", self.timing.detect_jitter),
        ] {
            let t = self.in_ticks(d);
            if t > MAX_TICKS {
                return Err(format!(
                    "raftrs.tick_ms = {} ms: {name} = {} ms would be {t} ticks, more than {MAX_TICKS}; raise the tick",
                    self.tick.as_secs_f64() * 1e3,
                    d.as_secs_f64() * 1e3
                ));
            }
        }
        self.raft_config(1)
            .validate()
            .map_err(|e| format!("raftrs: {e}"))
    }

    /// raft-rs's `Config` for node `id`.
    fn raft_config(&self, id: u64) -> raft::Config {
        let t = self.ticks();
        raft::Config {
            id,
            election_tick: t.election,
            heartbeat_tick: t.heartbeat,
            min_election_tick: t.election,
            max_election_tick: t.election_max + 1,
            pre_vote: self.pre_vote,
            check_quorum: self.check_quorum,
            ..raft::Config::default()
        }
    }

    /// The manifest's one-line description of this timing.
    pub fn describe(&self) -> String {
        let t = self.ticks();
        let ms = |k: usize| k as f64 * self.tick.as_nanos() as f64 / 1e6;
        format!(
            "tick {} ms; heartbeat every {} tick(s) ({} ms); election timeout {}-{} ticks ({}-{} ms)",
            ms(1),
            t.heartbeat,
            ms(t.heartbeat),
            t.election,
            t.election_max,
            ms(t.election),
            ms(t.election_max)
        )
    }
}

/// The one timer: raft-rs's logical clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaftrsTimer {
    /// Calls `RawNode::tick` and re-arms itself one tick later.
    Tick,
}

impl TimerKind for RaftrsTimer {
    const COUNT: usize = 1;
    fn index(self) -> usize {
        0
    }
    /// The tick also drives the leader's heartbeats: it is no failure detector a scenario may
    /// switch off (the runner skips such scenarios for this family).
    fn is_failure_detector(self) -> bool {
        false
    }
}

/// What a node keeps on stable storage: raft-rs's `HardState` and its log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stable {
    /// `HardState::term`.
    pub term: u64,
    /// `HardState::vote` (0: none).
    pub vote: u64,
    /// `HardState::commit`.
    pub commit: u64,
    /// The term of each log entry, index 1 first. Every entry is an empty `EntryNormal`
    /// (see the crate docs), so this is the whole log.
    pub terms: Vec<u64>,
}

impl Stable {
    fn hard_state(&self) -> HardState {
        HardState {
            term: self.term,
            vote: self.vote,
            commit: self.commit,
            ..HardState::default()
        }
    }

    fn entries(&self) -> Vec<Entry> {
        self.terms
            .iter()
            .enumerate()
            .map(|(i, &term)| Entry {
                term,
                index: i as u64 + 1,
                ..Entry::default()
            })
            .collect()
    }

    /// Takes `entries` (consecutive, as raft-rs hands them) in place of the log from their
    /// first index on.
    fn append(&mut self, entries: &[Entry]) {
        let Some(first) = entries.first() else { return };
        let keep = (first.index.saturating_sub(1) as usize).min(self.terms.len());
        self.terms.truncate(keep);
        self.terms.extend(entries.iter().map(|e| e.term));
    }
}

/// One raft-rs node behind the [`Protocol`] contract.
pub struct RaftRs {
    id: NodeId,
    config: Arc<RaftrsConfig>,
    ticks: Ticks,
    node: Option<RawNode<MemStorage>>,
    stable: Stable,
    /// The fixed-rate tick on the node's clock (`None` before the first start).
    ticker: Option<Ticker>,
    logger: slog::Logger,
}

impl std::fmt::Debug for RaftRs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RaftRs")
            .field("id", &self.id)
            .field("status", &self.status())
            .field("stable", &self.stable)
            .finish()
    }
}

/// Whether a message from the network can be handed to raft-rs. The library trusts its peers:
/// a forged message it would never receive from one aborts the process (`fatal!` in
/// `raft_log.rs`: a commit index past the local log, entries that conflict with committed
/// ones, an acknowledged index past the leader's log). This refuses exactly what no
/// raft-rs peer of this adapter sends:
/// - kinds a peer never sends here: the local ones, proposals and leadership transfer (only
///   a leader proposes), snapshots (nothing is compacted), read-index traffic (unused);
/// - a heartbeat, append or (pre-)vote request of term 0 (raft-rs takes it for a local
///   message, and would answer a request with term 0, which it refuses to send);
/// - a heartbeat whose commit index is past the local log (a leader sends
///   `min(matched, committed)`, at most what this node acknowledged, which it persisted);
/// - an append whose entries are not the consecutive indexes after `index`, that claims a
///   term of 0 for an entry past index 0, or whose entries would replace committed ones;
/// - an append response acknowledging an index past the local log (a follower acknowledges
///   at most what the leader sent), or asking for a snapshot (this adapter never does).
///
/// Nothing a correct peer sends is refused, so simulated runs are unchanged; the live
/// driver's decoder fuzzing (`crates/live/tests/it/fuzz.rs`) feeds it forged messages.
fn admissible(r: &raft::Raft<MemStorage>, m: &Message) -> bool {
    use raft::eraftpb::MessageType::*;
    let log = &r.raft_log;
    let last = log.last_index();
    // A message of a stale term never reaches the log: raft-rs answers or drops it on its term
    // alone (and must, so that a stale leader learns the term), whatever its other fields.
    let stale = m.term >= 1 && m.term < r.term;
    match m.get_msg_type() {
        // A request of term 0 would be answered with term 0, which raft-rs refuses to send.
        MsgRequestVote | MsgRequestPreVote => m.term >= 1,
        MsgRequestVoteResponse | MsgRequestPreVoteResponse | MsgHeartbeatResponse => true,
        // A leadership transfer's last step (sent only by a leader handing over).
        MsgTimeoutNow => m.term >= 1,
        // raft-rs reads a term of 0 as a local message and skips its term checks; a leader's
        // messages always carry its term, at least 1.
        MsgHeartbeat => stale || (m.term >= 1 && m.commit <= last),
        MsgAppend => {
            let ents = m.get_entries();
            // Index 0 is the only entry of term 0 (`term` answers 0 past the log, so a forged
            // `(index, 0)` past it would match); every real entry has a term of at least 1.
            let terms = (m.index == 0 || m.log_term >= 1) && ents.iter().all(|e| e.term >= 1);
            let contiguous = ents
                .iter()
                .enumerate()
                .all(|(i, e)| m.index.checked_add(i as u64 + 1) == Some(e.index));
            let conflicts_committed = ents
                .iter()
                .any(|e| e.index <= log.committed && log.term(e.index) != Ok(e.term));
            stale || (m.term >= 1 && terms && contiguous && !conflicts_committed)
        }
        // Only a response of the leader's own term is read beyond its term.
        MsgAppendResponse => {
            m.term >= 1
                && (m.term != r.term || (m.request_snapshot == 0 && (m.reject || m.index <= last)))
        }
        _ => false,
    }
}

impl RaftRs {
    /// Node `id` of the cluster `config` describes (validated by the caller with
    /// [`RaftrsConfig::validate`]). It starts with `on_start`.
    pub fn new(id: NodeId, config: Arc<RaftrsConfig>) -> RaftRs {
        let ticks = config.ticks();
        RaftRs {
            id,
            config,
            ticks,
            node: None,
            stable: Stable::default(),
            ticker: None,
            logger: slog::Logger::root(slog::Discard, slog::o!()),
        }
    }

    /// The node's (term, role): raft-rs redraws its election timeout exactly when this
    /// changes to a role other than pre-candidate (see the crate docs).
    fn term_role(&self) -> Option<(u64, StateRole)> {
        self.node.as_ref().map(|n| (n.raft.term, n.raft.state))
    }

    /// Overwrites raft-rs's unseeded draw with one from the node's generator if the last call
    /// into the library reset it (`before` is the (term, role) before that call).
    fn reseed(&mut self, io: &mut Io<'_, Self>, before: Option<(u64, StateRole)>) {
        let now = self.term_role();
        let reset = match (before, now) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(b), Some(a)) => a != b && a.1 != StateRole::PreCandidate,
        };
        if reset {
            let k = io
                .rng()
                .random_range(self.ticks.election..=self.ticks.election_max);
            if let Some(node) = self.node.as_mut() {
                node.raft.set_randomized_election_timeout(k);
            }
        }
    }

    /// Calls `f` on the library, reseeds its draw, and drains everything it made ready.
    fn with_node(&mut self, io: &mut Io<'_, Self>, f: impl FnOnce(&mut RawNode<MemStorage>)) {
        let before = self.term_role();
        if let Some(node) = self.node.as_mut() {
            f(node);
        }
        self.reseed(io, before);
        self.drain_ready(io);
    }

    /// Sends the library's messages to their peers; never one its peers' decoders refuse.
    /// raft-rs has no ceiling of its own: a node at term `MAX_WIRE_TERM` campaigns for the
    /// next, which no peer accepts (issue 47). Holding such a message back makes the end of
    /// the term space what it is for our Raft (`election_raft::MAX_TERM`): no election past
    /// it, and nothing sent that a peer would count as malformed. No cluster gets near it.
    fn send_all(&self, io: &mut Io<'_, Self>, msgs: Vec<Message>) {
        for m in msgs {
            let to = m.to;
            let m = RaftrsMsg(m);
            if (1..=u64::from(self.config.n)).contains(&to)
                && to != u64::from(self.id.0)
                && m.invalid().is_none()
            {
                io.send(NodeId(to as u32), m);
            }
        }
    }

    /// Handles `Ready`s until there are none (raft-rs's `examples/five_mem_node` order):
    /// immediate messages, then the persist, then the messages that must follow it.
    fn drain_ready(&mut self, io: &mut Io<'_, Self>) {
        // A Ready's advance can make at most a little more ready; a bound keeps a library
        // bug from spinning forever.
        for _ in 0..16 {
            let before = self.term_role();
            let Some(node) = self.node.as_mut() else {
                return;
            };
            if !node.has_ready() {
                return;
            }
            let mut rd = node.ready();
            let now = rd.take_messages();
            let mut dirty = false;
            if !rd.entries().is_empty() {
                // MemStorage::append refuses only entries that leave a gap or go behind a
                // compaction; this adapter never compacts, and raft-rs hands consecutive
                // entries that follow its log.
                let _ = node.store().wl().append(rd.entries());
                self.stable.append(rd.entries());
                dirty = true;
            }
            if let Some(hs) = rd.hs() {
                node.store().wl().set_hardstate(hs.clone());
                self.stable.term = hs.term;
                self.stable.vote = hs.vote;
                self.stable.commit = hs.commit;
                dirty = true;
            }
            let _ = rd.take_committed_entries();
            let after_persist = rd.take_persisted_messages();
            let mut light = node.advance(rd);
            if let Some(commit) = light.commit_index() {
                node.store().wl().mut_hard_state().commit = commit;
                self.stable.commit = commit;
            }
            let later = light.take_messages();
            let _ = light.take_committed_entries();
            node.advance_apply();
            self.send_all(io, now);
            if dirty {
                io.persist(self.stable.clone());
            }
            self.send_all(io, after_persist);
            self.send_all(io, later);
            self.reseed(io, before);
        }
    }
}

impl Protocol for RaftRs {
    type Msg = RaftrsMsg;
    type Timer = RaftrsTimer;
    type Persist = Stable;

    /// Builds a `RawNode` over a `MemStorage` holding the record (or an empty log with the
    /// cluster's voters `1..=n`), seeds its election timeout and arms the tick.
    fn on_start(&mut self, io: &mut Io<'_, Self>, stored: Option<&Stable>) {
        self.stable = stored.cloned().unwrap_or_default();
        let voters: Vec<u64> = (1..=u64::from(self.config.n)).collect();
        let storage = MemStorage::new_with_conf_state(ConfState::from((voters, vec![])));
        {
            let mut core = storage.wl();
            core.set_hardstate(self.stable.hard_state());
            let _ = core.append(&self.stable.entries());
        }
        let cfg = self.config.raft_config(u64::from(self.id.0));
        // The configuration was validated when it was built; a node whose library refuses it
        // stays down (no node object) rather than panic.
        self.node = RawNode::new(&cfg, storage, &self.logger).ok();
        self.reseed(io, None);
        let (ticker, first) = Ticker::start(io.now(), self.config.tick, io.rng());
        self.ticker = Some(ticker);
        io.set_timer(RaftrsTimer::Tick, first);
        self.drain_ready(io);
    }

    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: RaftrsMsg) {
        if from == self.id || from.0 == 0 || from.0 > self.config.n {
            return;
        }
        let mut m = msg.0;
        // The transport names the sender; the library trusts `from`, so it must be that.
        m.from = u64::from(from.0);
        m.to = u64::from(self.id.0);
        // Local message kinds (MsgHup, MsgBeat, ...) from the network are refused by step;
        // what would break raft-rs's trust in its peers is refused here.
        if !self.node.as_ref().is_some_and(|n| admissible(&n.raft, &m)) {
            return;
        }
        self.with_node(io, |n| {
            let _ = n.step(m);
        });
    }

    fn on_timer(&mut self, io: &mut Io<'_, Self>, timer: RaftrsTimer) {
        match timer {
            RaftrsTimer::Tick => {
                let now = io.now();
                let next = match self.ticker.as_mut() {
                    Some(t) => t.fired(now),
                    None => self.config.tick,
                };
                io.set_timer(RaftrsTimer::Tick, next);
                self.with_node(io, |n| {
                    n.tick();
                });
            }
        }
    }

    /// raft-rs has no failure detector to force: ignored (the runner skips scenarios that
    /// rely on it).
    fn on_suspect(&mut self, io: &mut Io<'_, Self>) {
        let _ = io;
    }

    /// A leader proposes one empty entry (the library drops it while a leadership transfer
    /// is under way); others ignore it.
    fn on_client_entry(&mut self, io: &mut Io<'_, Self>) {
        if self.status().role != Role::Leader {
            return;
        }
        self.with_node(io, |n| {
            let _ = n.propose(vec![], vec![]);
        });
    }

    /// A leader transfers its leadership with the library's own `RawNode::transfer_leader`
    /// (raft-rs `Raft::handle_transfer_leader`: proposals are dropped from then on, the
    /// transferee is brought up to date and sent `MsgTimeoutNow`, which it answers with a
    /// campaign that skips PreVote and leader stickiness), to the other voter with the
    /// highest `matched` index, the lowest id on ties (hashicorp/raft `pickServer`). The
    /// library aborts a transfer that has not finished within an election timeout; the node
    /// is stopped about then anyway. A follower does nothing.
    fn on_handover(&mut self, io: &mut Io<'_, Self>) {
        let Some(node) = self.node.as_ref() else {
            return;
        };
        if node.raft.state != StateRole::Leader {
            return;
        }
        let me = u64::from(self.id.0);
        let prs = node.raft.prs();
        let to = (1..=u64::from(self.config.n))
            .filter(|&v| v != me)
            .filter_map(|v| prs.get(v).map(|p| (p.matched, std::cmp::Reverse(v))))
            .max()
            .map(|(_, std::cmp::Reverse(v))| v);
        if let Some(to) = to {
            self.with_node(io, |n| n.transfer_leader(to));
        }
    }

    fn status(&self) -> Status {
        let Some(node) = self.node.as_ref() else {
            return Status::FOLLOWER_NO_LEADER;
        };
        let r = &node.raft;
        let role = match r.state {
            StateRole::Follower => Role::Follower,
            StateRole::PreCandidate | StateRole::Candidate => Role::Candidate,
            StateRole::Leader => Role::Leader,
        };
        let leader = (r.leader_id != raft::INVALID_ID && r.leader_id <= u64::from(self.config.n))
            .then(|| NodeId(r.leader_id as u32));
        Status {
            role,
            leader,
            epoch: Some(r.term),
        }
    }

    /// A majority of the configured members, like our Raft.
    fn quorum_rule(&self) -> QuorumRule {
        QuorumRule::Members
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_ticks_match_the_detection_window() {
        let c = RaftrsConfig::new(3);
        c.validate().unwrap();
        assert_eq!(
            c.ticks(),
            Ticks {
                heartbeat: 1,
                election: 3,
                election_max: 5
            }
        );
        assert!(c.describe().contains("150-250 ms"), "{}", c.describe());
        let mut fine = c.clone();
        fine.tick = Duration::from_millis(10);
        assert_eq!(
            fine.ticks(),
            Ticks {
                heartbeat: 5,
                election: 15,
                election_max: 29
            }
        );
    }

    #[test]
    fn bad_ticks_are_refused_by_name() {
        let mut c = RaftrsConfig::new(3);
        c.tick = Duration::ZERO;
        assert!(c.validate().unwrap_err().contains("raftrs.tick_ms = 0"));
        c.tick = Duration::from_nanos(1);
        let e = c.validate().unwrap_err();
        assert!(
            e.contains("raftrs.tick_ms") && e.contains("heartbeat_ms"),
            "{e}"
        );
        // A tick longer than the timeouts still keeps election above heartbeat.
        c.tick = Duration::from_secs(1);
        c.validate().unwrap();
        assert_eq!(c.ticks().election, 2);
    }

    #[test]
    fn the_record_keeps_the_log_and_overwrites_a_conflicting_tail() {
        let mut s = Stable::default();
        let e = |index, term| Entry {
            index,
            term,
            ..Entry::default()
        };
        s.append(&[e(1, 1), e(2, 1), e(3, 1)]);
        s.append(&[e(3, 2), e(4, 2)]);
        assert_eq!(s.terms, vec![1, 1, 2, 2]);
        let back = s.entries();
        assert_eq!(back.len(), 4);
        assert_eq!((back[2].index, back[2].term), (3, 2));
    }
}
