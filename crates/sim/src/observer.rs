//! The observer: the only place metrics come from.
//!
//! Protocols never report metrics. The driver (the simulator, or the live UDP driver) tells
//! the observer what it saw — every status a node reports after an input, every message sent,
//! delivered or dropped, every change in which nodes can talk to which — and the observer turns
//! that into the trial's [`Metrics`]. Both drivers use this same code, so a live run and a
//! simulated run are measured identically.
//!
//! # Definitions
//!
//! * **Reference instant** (`t0`): the instant the scenario's first fault fired (after any wait
//!   for a leader, see [`crate::fault`]), or zero for a cold start. A scenario may name another
//!   fault as its reference ([`SimConfig::reference_fault`](crate::SimConfig::reference_fault):
//!   earlier faults set the stage, e.g. a first crash whose successor is then crashed and
//!   measured); `t0` is then the instant that fault fired, shifted with the whole timeline by
//!   any wait for a leader. Every
//!   duration below is measured from it, and only what happens at or after it counts (except
//!   `same_epoch_leaders`, which is checked over the whole trial). "At an instant" means once
//!   every event of that instant has been handled: a fault at `t0` that crashes the leader
//!   leaves no leader at `t0`.
//! * **Live**: not crashed. A paused node is live (it still believes what it believed).
//! * **Reach**: a member `v` reaches a member `l` when `v = l`, or, for a family without
//!   service endpoints, the links `v → l` and `l → v` are both up; for a family with service
//!   endpoints (the lease, whose members talk only to the store: see [`Observer::set_services`]),
//!   when some live service endpoint `s` has the links `v ↔ s` and `s ↔ l` up both ways.
//! * **Quorum leader** at an instant: a live, unpaused member `L` in the leader role that the
//!   family's own rule ([`QuorumRule`], which each protocol states through
//!   `Protocol::quorum_rule` and the drivers pass in with [`Observer::set_quorum_rule`]) makes
//!   the cluster's working leader:
//!   * [`QuorumRule::Members`] (Raft, the bully with its quorum option): more than `n/2` of the
//!     cluster's `n` members (`L` included, crashed members counting against it) name `L` as
//!     their leader, each reaching it;
//!   * [`QuorumRule::LiveMembers`] (the bully, the ring, built to elect among whoever is alive
//!     under crash failures): more than half of the *live* members name `L`, each reaching it;
//!   * [`QuorumRule::Service`] (the lease, whose authority is its store): the store's
//!     *working endpoint* names `L` (its status's `leader`: the holder its record holds) and `L`
//!     has its links to and from that endpoint up, or to and from a working endpoint that has
//!     its links to and from it up (which forwards) — the holder who can renew. A store endpoint
//!     is *working* when it is live and reaches (both ways) more than half of the store's
//!     endpoints, itself included; the working endpoint is, among the working ones that name a
//!     holder, the one with the highest epoch (the lowest id on ties). A single store is its own
//!     majority; a replicated store (`lease.store_nodes`, a Raft group) has only its leader name
//!     the holder, with its term as epoch;
//!   * [`QuorumRule::Voters`]`(k)` (Raft with `raft.voters = k < n`: the members `1..=k` vote,
//!     the others are learners that follow but never vote): more than `k/2` of the `k` voters
//!     (`L` included, crashed voters counting against it) name `L`, each reaching it. What the
//!     learners name does not count; `L` is a voter (only voters campaign).
//!
//!   At most one member is the quorum leader at a time (two majorities of the same members share
//!   one, and a member names one leader). This is the cluster's working leader: it can commit at
//!   a majority (or renew at the store) and serve the clients of every member that follows it.
//!   Members that cannot reach it do not stop it from being one; what they cost is
//!   `stranded_node_ms`.
//! * **Quorum-connected**: a live member that reaches more than half of the members its family's
//!   rule counts (all `n`, or the live ones), itself included; for [`QuorumRule::Service`], one
//!   that reaches a working store endpoint (a member reaches another through such an endpoint); for [`QuorumRule::Voters`]`(k)`, a live *voter* that
//!   reaches more than `k/2` live voters, itself included (a learner never is: it cannot lead).
//!   Some member must be quorum-connected for a quorum leader to be possible.
//! * **Followed by all**: there is a quorum leader and every live member that reaches it names
//!   it (the stricter notion: nobody who could follow it is still looking elsewhere).
//! * **Served**: a live member that names the quorum leader and reaches it (the quorum leader
//!   itself included). A live member that is not served is **stranded**: its clients have no
//!   leader they can reach through it (in a leaderless cluster every live member is stranded).
//!   Learners are members: one that names no leader, or one it cannot reach, is stranded like
//!   any other (a learner that outlived its leader keeps naming it until the next leader's
//!   heartbeat reaches it, and is stranded meanwhile).
//! * `faults_skipped`: fault actions of the scenario that did not apply — a selector found no
//!   node when the action fired (no leader to crash), the timeline gave up waiting for a quorum
//!   leader, or the trial ended before the action's instant. A trial with `faults_skipped > 0`
//!   did not undergo the scenario as described; its other metrics do not measure that scenario.
//! * `detect_ms`: `t0` to the first moment a node leaves the follower role.
//! * `failover_ms`: `t0` to the first instant at or after `t0` with a quorum leader (0 when a
//!   quorum leader was there at `t0`, the fault notwithstanding; empty if there never was one
//!   after `t0`). The one meaning of "failover" in every column, chart and sentence.
//! * `elect_ms`: `t0` to the start of the final interval, lasting to the end of the trial, in
//!   which one and the same quorum leader is followed by all (zero if that interval began before
//!   `t0`; empty if there is none at the end). It includes the time the last members that can
//!   reach the new leader take to hear of it; under partial connectivity it can be much later
//!   than `failover_ms`.
//! * `converged`: there is a quorum leader at the end (and the trial was not cut short by its
//!   budget).
//! * `unavailable_ms`: total time from `t0` to the end without a quorum leader.
//! * `stranded_node_ms`: node-milliseconds from `t0` to the end during which a live member was
//!   stranded: the sum over live members of the time each had no leader it reaches and follows.
//!   A leaderless cluster of `k` live members accrues `k` ms per ms; a quorum leader with one
//!   member cut off from it, 1 ms per ms. `stranded_nodes`: how many live members are stranded
//!   at the end.
//! * `split_brain`: some instant at or after `t0` had two or more **acting** leaders — live nodes
//!   in the leader role that are not paused (a node frozen by a stop-the-world pause cannot act on
//!   its belief while frozen); `split_brain_ms` is the total such time and `max_leaders` the
//!   largest number at once.
//! * `paused_leader_ms`: total time after `t0` during which a paused node still believes it leads
//!   (reported apart from `split_brain_ms`).
//! * Writes (when the workload is on; see [`crate::workload`]): a write *taken* after `t0` (by
//!   the resource, or by a majority) is `writes_ok` if its writer had not been deposed when it was
//!   taken and `writes_stale` if it had — some node was elected after it, with a higher epoch than
//!   the write's token, or (protocols without epochs) by entering the leader role — or becoming
//!   the quorum leader again after another node was elected — after the writer last was. `writes_fenced` counts writes the resource refused for their token.
//!   `stale_window_ms` is the measure of the union of `[w, w + interval)` over the instants `w`
//!   at which stale writes were taken (the time during which a deposed leader's writes were
//!   being taken, at the workload's resolution); `write_unavailable_ms` is the time from `t0` to
//!   the end not covered by `[w, w + interval)` for any taken write (the time during which no
//!   write could be taken).
//! * `minority_leader_ms`: total time from `t0` during which some live member in the leader role
//!   is not quorum-connected — a stranded leader that still believes it leads (a Raft leader cut
//!   off on the minority side without CheckQuorum, a bully coordinator on the small side, a lease
//!   holder cut off from the store), paused or not. It is part of `split_brain_ms` whenever
//!   there is also a quorum leader and the stranded one is not paused; it is reported separately
//!   so the believed and the effective leadership can both be read.
//! * `same_epoch_leaders`: how many times a node took (or kept, under a new epoch) the leader role
//!   while another live leader claimed the same epoch — a safety violation for protocols with terms.
//! * `leader_changes`: entries into the leader role at or after `t0`.
//! * `elections_started`: entries into the candidate role at or after `t0`, plus epoch increases
//!   of a node that stays a candidate (a Raft candidate retrying after a split vote). Protocols
//!   report a Raft pre-candidate as a candidate, so a PreVote round counts as an election started
//!   even when it never raises the term.
//! * Split brain is counted at every instant, including the one message flight during which a
//!   bully node that takes over has declared itself and the old leader has not yet heard it: two
//!   nodes really are in the leader role then, and a client could reach either.
//! * `budget_exceeded`: the driver stopped the trial because it used up its work budget
//!   ([`SimConfig::budget`](crate::SimConfig::budget)) before its horizon or settle window
//!   ended. Such a trial is cut short, so it never counts as `converged` (and has no `leader`
//!   or `elect_ms`); every other metric covers the trial up to the instant it was stopped.
//! * **Calm**: the instant the scenario's last fault action ended — its instant plus what it
//!   [`lasts`](crate::FaultAction::lasts) (a stale connection's keep-alive), shifted with the
//!   timeline by any wait for a leader — or `t0` if that is later. After it nothing but the
//!   protocol changes the cluster (background noise aside).
//! * **Hold span** ([`SimConfig::hold`](crate::SimConfig::hold), given to the observer by
//!   [`Observer::set_verdict_window`]): how long one quorum leadership must last, counted from
//!   the later of its start and the calm, before the cluster counts as settled. The runner
//!   sets it from the protocol's own timing: ten times the longest election timeout it draws
//!   (`detect_timeout_ms + detect_jitter_ms`). Why ten: a cluster in a slow livelock (a member
//!   that cannot hear the leader times out and deposes it, over and over) holds each
//!   leadership for about one election timeout plus an election, and now and then for several:
//!   in 39 livelocked 5-node link patterns of Raft and raft-rs traced for a minute, the
//!   longest hold was 1.5 s, five timeouts, so a span of two (the old 600 ms settle window)
//!   called such clusters settled. Over every 4- and 5-node Raft pattern `explore` runs, a
//!   span of ten and one of sixty disagree on 7 of 29,000 verdicts (five and sixty: 102).
//! * **Settled**: some quorum leadership after `t0` lasted the hold span past the calm. The
//!   first one that did *decides* the verdict, at the instant it completed the span: what
//!   happens after that instant never changes the verdict, so a trial that runs on (a longer
//!   `settle`, a longer horizon) keeps it. A trial with nothing left to decide ends there
//!   (see [`crate::trial::Timeline::deadline`]).
//! * `outcome`, the trial's verdict on liveness after the last fault — the first of these
//!   that holds:
//!   1. `minority-only`: at the end no live member is quorum-connected: no quorum leader is
//!      possible, so none is the correct answer, whatever happened.
//!   2. `stable`: settled, by the quorum leader at `t0` (just before the fault), which never
//!      lost its quorum from `t0` to the deciding instant: at every instant it was the quorum
//!      leader, or nobody was while it was paused (a leader paused for less than the detection
//!      window keeps its followers). A leader that lapses and wins again is not stable.
//!   3. `recovered-after`: settled otherwise: quorum leadership moved, lapsed and came back,
//!      or (in a cold start) was first won, and held the hold span; `recovered_timeouts` says
//!      after how many election timeouts (the failure-detection window's lower bound,
//!      `detect_timeout_ms`): the time from the last fault that fired at or before the
//!      deciding leadership began (or `t0`) to that beginning, divided by the timeout, rounded
//!      up.
//!   4. `livelock`: not settled, and some quorum leadership began at or after the calm:
//!      leadership kept forming and breaking without ever holding the hold span (leader
//!      ping-pong, endless disruptive elections).
//!   5. `no-leader`: not settled, and no quorum leadership began after the calm, although a
//!      member is quorum-connected.
//!
//!   `livelock` and `no-leader` are read at the end of the trial, which runs to the horizon
//!   when it never settles: a cluster that would first hold a leader after the horizon is a
//!   failure at that scale (the runner's default horizon leaves about 60 election timeouts
//!   after the fault).
//! * **Steady window**: from the last instant before `t0` at which every quorum-connected member
//!   came to follow one quorum leader (it became *followed by all*: every live member that
//!   reaches it, a Raft learner included, names it), to `t0`: no fault has fired yet and no election runs
//!   (every member follows the leader), so what is sent in it is the protocol's steady cost
//!   (heartbeats, a lease's renewals and polls). `steady` is the messages sent in it (every
//!   category; never the workload) and its length; none when `t0` came before such an instant
//!   (`cold-start`, or a fault before the boot election settled).
//! * Message counts: `total` counts the whole trial; `window` counts messages sent from `t0` to the
//!   instant `elect_ms` ends (to the end of the trial if there is no such instant).

use std::sync::{Arc, Mutex};

use election_core::{MsgCategory, NodeId, QuorumRule, Role, Status, Time};

use crate::fault::Applied;
use crate::workload::{Coverage, WriteTag};

/// Why a message was not delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// Random loss.
    Loss,
    /// The link was down when it was sent or when it arrived.
    LinkDown,
    /// The receiver was crashed when it arrived.
    Crashed,
}

impl DropReason {
    /// Lowercase name for traces.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Loss => "loss",
            DropReason::LinkDown => "link-down",
            DropReason::Crashed => "crashed",
        }
    }
}

/// One message, as the observer sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsgInfo {
    /// Sender.
    pub from: NodeId,
    /// Receiver.
    pub to: NodeId,
    /// The protocol's name for the message kind.
    pub kind: &'static str,
    /// The common category.
    pub category: MsgCategory,
    /// Encoded size.
    pub bytes: u32,
}

impl MsgInfo {
    /// `msg` from `from` to `to`, as the observer sees it (both drivers describe every message
    /// so).
    #[inline]
    pub fn of<M: election_core::Message>(from: NodeId, to: NodeId, msg: &M) -> MsgInfo {
        MsgInfo {
            from,
            to,
            kind: msg.kind(),
            category: msg.category(),
            bytes: msg.wire_size() as u32,
        }
    }
}

/// What happened, for the full trace.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceKind {
    /// A node booted (first boot or recovery).
    Boot(NodeId),
    /// A message left its sender.
    Send(MsgInfo),
    /// A message reached its receiver's protocol.
    Deliver(MsgInfo),
    /// A message was lost.
    Drop(MsgInfo, DropReason),
    /// A message was addressed to a node that does not exist.
    InvalidDestination {
        /// Sender.
        from: NodeId,
        /// The nonexistent id.
        to: u32,
        /// Message kind.
        kind: &'static str,
    },
    /// A timer fired and was handed to the protocol.
    Timer {
        /// Whose.
        node: NodeId,
        /// `Debug` rendering of the timer.
        timer: String,
    },
    /// A failure-detector firing swallowed because detection is off for this node.
    DetectorSuppressed(NodeId),
    /// A node's status changed (`None`: it crashed).
    Status {
        /// Whose.
        node: NodeId,
        /// The new status.
        status: Option<Status>,
    },
    /// A fault action fired.
    Fault(Applied),
    /// The quorum leader (see the module docs) changed: who it is now, or `None` when the
    /// cluster has none. Recorded by the observer itself, from the same incremental state
    /// `failover_ms` and `unavailable_ms` are measured with, so a timeline drawn from the trace
    /// shows exactly the availability the metrics count.
    QuorumLeader(Option<NodeId>),
    /// A write of the workload took effect or was fenced (at the resource, or by a majority).
    Write {
        /// Who sent it.
        writer: NodeId,
        /// Its fencing token.
        token: Option<u64>,
        /// What became of it.
        outcome: WriteOutcome,
    },
}

/// What became of a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Taken from a leader not deposed.
    Ok,
    /// Taken from a deposed leader: damage.
    Stale,
    /// Refused for its token.
    Fenced,
}

impl WriteOutcome {
    /// Lowercase name for traces.
    pub fn name(self) -> &'static str {
        match self {
            WriteOutcome::Ok => "ok",
            WriteOutcome::Stale => "stale",
            WriteOutcome::Fenced => "fenced",
        }
    }
}

/// One trace record.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent {
    /// When.
    pub at: Time,
    /// What.
    pub what: TraceKind,
}

/// A trial's verdict on liveness (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// The quorum leader at `t0` never lost its quorum and held the hold span.
    Stable,
    /// Quorum leadership moved, lapsed or was first won, and then held the hold span.
    RecoveredAfter,
    /// No quorum leadership began after the calm although a member is quorum-connected.
    NoLeader,
    /// Quorum leadership began after the calm but never held the hold span.
    Livelock,
    /// No member is quorum-connected at the end.
    MinorityOnly,
}

impl Outcome {
    /// Every outcome, in the order the results list them.
    pub const ALL: [Outcome; 5] = [
        Outcome::Stable,
        Outcome::RecoveredAfter,
        Outcome::NoLeader,
        Outcome::Livelock,
        Outcome::MinorityOnly,
    ];

    /// The name in CSV, report and CLI.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Stable => "stable",
            Outcome::RecoveredAfter => "recovered-after",
            Outcome::NoLeader => "no-leader",
            Outcome::Livelock => "livelock",
            Outcome::MinorityOnly => "minority-only",
        }
    }

    /// The outcome named `s`.
    pub fn from_name(s: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.name() == s)
    }

    /// A liveness failure: no settled quorum leader although one was possible.
    pub fn is_failure(self) -> bool {
        matches!(self, Outcome::NoLeader | Outcome::Livelock)
    }
}

/// Message counters by category.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsgCounts {
    /// Messages sent, by [`MsgCategory::index`].
    pub sent: [u64; MsgCategory::COUNT],
    /// Bytes sent, by category.
    pub bytes: [u64; MsgCategory::COUNT],
    /// Messages delivered to a protocol.
    pub delivered: u64,
    /// Messages lost (any reason).
    pub dropped: u64,
}

impl MsgCounts {
    /// Messages of one category.
    pub fn sent_of(&self, c: MsgCategory) -> u64 {
        self.sent[c.index()]
    }
    /// Messages of every category.
    pub fn sent_total(&self) -> u64 {
        self.sent.iter().sum()
    }
    /// Bytes of every category.
    pub fn bytes_total(&self) -> u64 {
        self.bytes.iter().sum()
    }
    /// Election traffic: every category but heartbeats.
    pub fn sent_election(&self) -> u64 {
        MsgCategory::ALL
            .iter()
            .filter(|c| c.is_election_traffic())
            .map(|c| self.sent[c.index()])
            .sum()
    }
    fn minus(&self, earlier: &MsgCounts) -> MsgCounts {
        let mut out = MsgCounts::default();
        for i in 0..MsgCategory::COUNT {
            out.sent[i] = self.sent[i] - earlier.sent[i];
            out.bytes[i] = self.bytes[i] - earlier.bytes[i];
        }
        out.delivered = self.delivered - earlier.delivered;
        out.dropped = self.dropped - earlier.dropped;
        out
    }
}

/// The metrics of one trial. See the [module docs](self) for each definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Metrics {
    /// A quorum leader at the end.
    pub converged: bool,
    /// That leader.
    pub leader: Option<NodeId>,
    /// Reference instant to the first node leaving the follower role.
    pub detect_ms: Option<f64>,
    /// Reference instant to the start of the final interval in which the quorum leader is
    /// followed by all.
    pub elect_ms: Option<f64>,
    /// Time without a quorum leader after the reference instant.
    pub unavailable_ms: f64,
    /// Node-milliseconds after the reference instant during which a live member was stranded.
    pub stranded_node_ms: f64,
    /// Live members stranded at the end.
    pub stranded_nodes: u32,
    /// Two or more live leaders at once, at some point after the reference instant.
    pub split_brain: bool,
    /// Total time with two or more live leaders.
    pub split_brain_ms: f64,
    /// Most live leaders at once.
    pub max_leaders: u32,
    /// Time with a leader-role member that is not quorum-connected.
    pub minority_leader_ms: f64,
    /// Leaders claiming the same epoch at once (safety violations).
    pub same_epoch_leaders: u32,
    /// Entries into the leader role after the reference instant.
    pub leader_changes: u32,
    /// Elections started after the reference instant.
    pub elections_started: u32,
    /// Messages from the reference instant to convergence.
    pub window: MsgCounts,
    /// Messages over the whole trial.
    pub total: MsgCounts,
    /// Messages addressed to nonexistent nodes (a protocol bug, counted rather than fatal).
    pub invalid_destinations: u64,
    /// The reference instant, in ms: when the first fault (or the reference fault) fired (see
    /// the module docs).
    pub reference_ms: f64,
    /// The quorum leader at the reference instant, just before the fault fired there took
    /// effect.
    pub leader_at_reference: Option<NodeId>,
    /// Fault actions that did not apply: their selector found no node, the timeline gave up
    /// waiting for a leader, or the trial ended before they fired.
    pub faults_skipped: u32,
    /// `t0` to the first instant at or after it with a quorum leader (0 if there was one at
    /// `t0`; `None` if there never was one after it).
    pub failover_ms: Option<f64>,
    /// Time after `t0` with a paused node in the leader role.
    pub paused_leader_ms: f64,
    /// The workload's outcome, if there was a workload.
    pub writes: Option<WriteMetrics>,
    /// Workload messages (writes, acknowledgement requests and acknowledgements) over the whole
    /// trial; never part of any election or heartbeat count.
    pub msgs_workload: u64,
    /// The steady window (see the module docs): the messages sent in it and its length in ms.
    pub steady: Option<(u64, f64)>,
    /// Every fault action as it fired (selectors resolved) or was skipped, with its instant.
    pub fault_log: Vec<(Time, Applied)>,
    /// When the trial ended, in ms.
    pub end_ms: f64,
    /// The trial was stopped because it used up its work budget (see the module docs).
    pub budget_exceeded: bool,
    /// Noise bursts that took effect over the whole trial (see [`crate::noise`]): pauses and
    /// disk stalls that paused a node, and latency spikes.
    pub noise_bursts: u64,
    /// The verdict on liveness (see the module docs).
    pub outcome: Outcome,
    /// With `outcome = recovered-after`: after how many election timeouts.
    pub recovered_timeouts: Option<u32>,
    /// The calm the verdict counts holds from, in ms (see the module docs).
    pub calm_ms: f64,
}

/// What the workload's writes did after `t0`. See the module docs for each definition.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WriteMetrics {
    /// Writes taken from a leader that had not been deposed.
    pub ok: u64,
    /// Writes taken from a deposed leader.
    pub stale: u64,
    /// Writes refused for their token.
    pub fenced: u64,
    /// Time during which a deposed leader's writes were being taken.
    pub stale_window_ms: f64,
    /// Time during which no write was taken.
    pub unavailable_ms: f64,
}

/// Which links are up. `down[from * n + to]`; a node's link to itself is always up.
#[derive(Clone, Debug)]
pub struct Links {
    n: usize,
    down: Vec<bool>,
    any_down: bool,
}

impl Links {
    /// How many endpoints the table covers.
    pub fn len(&self) -> usize {
        self.n
    }

    /// No endpoints at all.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// All links up among `n` nodes.
    pub fn new(n: u32) -> Self {
        Links {
            n: n as usize,
            down: Vec::new(),
            any_down: false,
        }
    }
    /// Is the one-way link `from → to` up?
    #[inline]
    pub fn is_up(&self, from: NodeId, to: NodeId) -> bool {
        !self.any_down || !self.down[from.index() * self.n + to.index()]
    }
    /// Set the one-way link `from → to` up or down.
    pub fn set(&mut self, from: NodeId, to: NodeId, up: bool) {
        if from == to {
            return;
        }
        if self.down.is_empty() {
            if up {
                return;
            }
            self.down = vec![false; self.n * self.n];
        }
        self.down[from.index() * self.n + to.index()] = !up;
        if !up {
            self.any_down = true;
        }
    }
    /// Every link up.
    pub fn heal(&mut self) {
        self.down.iter_mut().for_each(|d| *d = false);
        self.any_down = false;
    }
    /// True if some link is down.
    pub fn any_down(&self) -> bool {
        self.any_down
    }
}

/// A destination for trace records as they happen, so that a long trace can be written out
/// instead of buffered (see [`Observer::stream_trace`]). Clones share the destination.
#[derive(Clone)]
pub struct TraceSink(Arc<Mutex<SinkFn>>);

type SinkFn = dyn FnMut(&TraceEvent) + Send;

impl TraceSink {
    /// A sink calling `f` with every record, in order.
    pub fn new(f: impl FnMut(&TraceEvent) + Send + 'static) -> Self {
        TraceSink(Arc::new(Mutex::new(f)))
    }
    fn send(&self, e: &TraceEvent) {
        // A sink that panicked once is still called: the records are independent.
        let mut f = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(e);
    }
}

impl std::fmt::Debug for TraceSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceSink")
    }
}

/// Can a quorum leader exist among `n` members of a family without service endpoints: is some
/// live member *quorum-connected* (see the module docs), linked to enough live others to make,
/// with itself, more than `of / 2` (`of`: `n` for [`QuorumRule::Members`], the live members for
/// [`QuorumRule::LiveMembers`])? For [`QuorumRule::Voters`]`(k)` pass the voters, `n = of = k`:
/// only they can lead and only they count. `live(v)` says whether member `v` (an index) is live, and
/// `linked(a, b)` whether the links between `a` and `b` are up both ways. `explore` uses this to
/// keep the link patterns under which a liveness failure is a failure.
pub fn quorum_possible(
    n: usize,
    of: usize,
    live: impl Fn(usize) -> bool,
    linked: impl Fn(usize, usize) -> bool,
) -> bool {
    (0..n).filter(|&v| live(v)).any(|v| {
        let reach = 1
            + (0..n)
                .filter(|&u| u != v && live(u) && linked(v, u))
                .count();
        reach * 2 > of
    })
}

/// Collects a trial's observations and computes its [`Metrics`]. Drivers call
/// [`Observer::advance`] with the time of each event before reporting anything that happened
/// at that time; times must never go backwards.
///
/// The quorum leader is kept incrementally: each member's named leader is counted in `naming`
/// only while the member reaches it, so a status change costs O(1) (O(service endpoints)) and a
/// topology change O(n); debug builds and a property test check every step against
/// [`Observer::quorum_from_scratch`].
#[derive(Clone, Debug)]
pub struct Observer {
    n: usize,
    t0: Time,
    now: Time,
    crossed_t0: bool,
    status: Vec<Option<Status>>,
    /// The service endpoints' statuses (ids after the members; see [`Observer::set_services`]):
    /// `None` while down; a lock service names the holder its record holds.
    services: Vec<Option<Status>>,
    /// The links as of the last [`Observer::topology_changed`].
    links: Links,
    /// Live members.
    live: u32,
    /// The family's rule (see [`QuorumRule`]).
    rule: QuorumRule,
    /// Per member `v`: the index of the member it names as leader while it reaches it, or
    /// [`NONE`].
    named: Vec<u32>,
    /// Per member `l`: how many members name `l` and reach it (`named`).
    naming: Vec<u32>,
    /// The members the rule counts: the first `counted` (`n`, or the voters for
    /// [`QuorumRule::Voters`]).
    counted: usize,
    /// Per member `l`: how many *counted* members name `l` and reach it (equal to `naming`
    /// when every member is counted).
    voting: Vec<u32>,
    /// Live counted members.
    live_counted: u32,
    /// The member more than half of the rule's base name and reach (counted members only), if
    /// any (at most one).
    majority: Option<usize>,
    /// The quorum leader, since when, and the latest fault that had fired then.
    quorum: Option<NodeId>,
    quorum_since: Time,
    quorum_fault_at: Time,
    /// Live members that reach the quorum leader (valid while there is one).
    reach_quorum: u32,
    /// The quorum leader followed by all, and since when.
    followed: Option<NodeId>,
    followed_since: Time,
    /// The first instant at or after `t0` with a quorum leader.
    first_quorum: Option<Time>,
    /// The first instant at or after `t0` at which the leader at `t0` had lost its quorum:
    /// another member was the quorum leader, or there was none while it was not paused.
    first_lost: Option<Time>,
    /// The quorum leaderships that ended at or after `t0`, in order (the current one is added
    /// at the end of the trial): what the verdict is read from.
    leaderships: Vec<Leadership>,
    leaders_live: u32,
    counts: MsgCounts,
    counts_at_t0: MsgCounts,
    counts_at_followed: MsgCounts,
    /// The steady window, fixed when `t0` is crossed: messages and nanoseconds.
    steady: Option<(u64, u64)>,
    invalid: u64,
    detect: Option<Time>,
    unavailable_ns: u64,
    stranded_ns: u128,
    split_ns: u64,
    minority_ns: u64,
    /// Members in the leader role that are not quorum-connected.
    leaders_outside: u32,
    max_leaders: u32,
    same_epoch: u32,
    leader_changes: u32,
    elections: u32,
    faults_skipped: u32,
    leader_at_t0: Option<NodeId>,
    fault_log: Vec<(Time, Applied)>,
    /// Paused nodes (by index); a paused leader is not counted among acting leaders.
    paused: Vec<bool>,
    leaders_paused: u32,
    paused_leader_ns: u64,
    /// Entries into the leader role so far, numbered in order; each node's latest entry.
    entries: u64,
    node_entry: Vec<u64>,
    /// The highest epoch any node has entered (or kept) the leader role with.
    max_leader_epoch: Option<u64>,
    /// The workload interval, if there is a workload.
    workload: Option<std::time::Duration>,
    writes: WriteMetrics,
    taken: Coverage,
    stale_taken: Coverage,
    msgs_workload: u64,
    budget_exceeded: bool,
    noise_bursts: u64,
    /// The election timeout and the hold span, for the outcome.
    verdict_timeout_ns: u64,
    verdict_hold_ns: u64,
    /// The calm: when the last fault's action ended (see [`Observer::set_calm`]).
    calm: Option<Time>,
    /// When the latest fault that applied fired.
    last_fault_at: Time,
    trace: Option<Vec<TraceEvent>>,
    sink: Option<TraceSink>,
}

/// One quorum leadership: who, from when to when, and the latest fault that had fired when it
/// began.
#[derive(Clone, Copy, Debug)]
struct Leadership {
    leader: NodeId,
    start: Time,
    end: Time,
    fault_at: Time,
}

/// No member (in `named`).
const NONE: u32 = u32::MAX;

impl Observer {
    /// An observer for `n` nodes (all down until their first status), measuring from `t0`.
    pub fn new(n: u32, t0: Time, trace: bool) -> Self {
        let n = n as usize;
        Observer {
            n,
            t0,
            now: Time::ZERO,
            crossed_t0: false,
            status: vec![None; n],
            services: Vec::new(),
            links: Links::new(n as u32),
            live: 0,
            rule: QuorumRule::Members,
            named: vec![NONE; n],
            naming: vec![0; n],
            counted: n,
            voting: vec![0; n],
            live_counted: 0,
            majority: None,
            quorum: None,
            quorum_since: Time::ZERO,
            quorum_fault_at: Time::ZERO,
            reach_quorum: 0,
            followed: None,
            followed_since: Time::ZERO,
            first_quorum: None,
            first_lost: None,
            leaderships: Vec::new(),
            leaders_live: 0,
            counts: MsgCounts::default(),
            counts_at_t0: MsgCounts::default(),
            counts_at_followed: MsgCounts::default(),
            steady: None,
            invalid: 0,
            detect: None,
            unavailable_ns: 0,
            stranded_ns: 0,
            split_ns: 0,
            minority_ns: 0,
            leaders_outside: 0,
            max_leaders: 0,
            same_epoch: 0,
            leader_changes: 0,
            elections: 0,
            faults_skipped: 0,
            leader_at_t0: None,
            fault_log: Vec::new(),
            paused: vec![false; n],
            leaders_paused: 0,
            paused_leader_ns: 0,
            entries: 0,
            node_entry: vec![0; n],
            max_leader_epoch: None,
            workload: None,
            writes: WriteMetrics::default(),
            taken: Coverage::default(),
            stale_taken: Coverage::default(),
            msgs_workload: 0,
            budget_exceeded: false,
            noise_bursts: 0,
            verdict_timeout_ns: 150_000_000,
            verdict_hold_ns: 2_000_000_000,
            calm: None,
            last_fault_at: Time::ZERO,
            sink: None,
            trace: trace.then(Vec::new),
        }
    }

    /// Move the clock to `t`, accounting the time since the last event.
    #[inline]
    pub fn advance(&mut self, t: Time) {
        debug_assert!(t >= self.now, "observer time went backwards");
        if !self.crossed_t0 && t >= self.t0 {
            self.cross_t0();
        }
        if t <= self.now {
            return;
        }
        let from = self.now.max(self.t0);
        if t > from {
            // The state now is the state of every instant in [from, t).
            self.note_lost(from);
            let dt = t.0 - from.0;
            match self.quorum {
                None => {
                    self.unavailable_ns += dt;
                    self.stranded_ns += dt as u128 * self.live as u128;
                }
                Some(q) => {
                    if self.first_quorum.is_none() {
                        self.first_quorum = Some(from);
                    }
                    let stranded = self.live - self.naming[q.index()];
                    if stranded > 0 {
                        self.stranded_ns += dt as u128 * stranded as u128;
                    }
                }
            }
            if self.leaders_live >= 2 {
                self.split_ns += dt;
            }
            if self.leaders_outside > 0 {
                self.minority_ns += dt;
            }
            if self.leaders_paused > 0 {
                self.paused_leader_ns += dt;
            }
        }
        self.now = t;
    }

    /// The election timeout `recovered_timeouts` counts in and the hold span the outcome is
    /// judged with (defaults: 150 ms and 2 s); drivers pass the trial's
    /// ([`SimConfig::election_timeout`](crate::SimConfig::election_timeout) and
    /// [`SimConfig::hold`](crate::SimConfig::hold)).
    pub fn set_verdict_window(&mut self, timeout: std::time::Duration, hold: std::time::Duration) {
        self.verdict_timeout_ns = (timeout.as_nanos() as u64).max(1);
        self.verdict_hold_ns = hold.as_nanos().min(u64::MAX as u128) as u64;
    }

    /// The calm: the instant the last fault's action ended (its instant plus what it
    /// [`lasts`](crate::FaultAction::lasts)), from which a quorum leadership's hold counts.
    /// Drivers pass [`Timeline::calm`](crate::trial::Timeline::calm) before
    /// [`Observer::finish`]; without it, the calm is the instant the latest fault fired.
    pub fn set_calm(&mut self, calm: Time) {
        self.calm = Some(calm);
    }

    /// Set the reference instant to `t0`, which must not be earlier than the current time
    /// (the simulator learns it only when a fault timeline that waited for a leader starts).
    pub fn set_reference(&mut self, t0: Time) {
        debug_assert!(
            !self.crossed_t0 && t0 >= self.now,
            "reference set in the past"
        );
        if self.crossed_t0 {
            return;
        }
        self.t0 = t0.max(self.now);
        if self.now >= self.t0 {
            self.cross_t0();
        }
    }

    fn cross_t0(&mut self) {
        self.crossed_t0 = true;
        self.leader_at_t0 = self.quorum;
        self.counts_at_t0 = self.counts;
        if self.followed.is_some() && self.followed_since < self.t0 {
            self.steady = Some((
                self.counts.sent_total() - self.counts_at_followed.sent_total(),
                self.t0.0 - self.followed_since.0,
            ));
        }
        self.max_leaders = self.max_leaders.max(self.leaders_live);
    }

    #[inline]
    fn after_t0(&self) -> bool {
        self.now >= self.t0
    }

    /// Also hand every trace record, as it is made, to `sink` (whether or not the trace is
    /// buffered too).
    pub fn stream_trace(&mut self, sink: TraceSink) {
        self.sink = Some(sink);
    }

    /// Record an event in the trace, if tracing (buffered, streamed, or both).
    #[inline(always)]
    pub fn record(&mut self, what: impl FnOnce() -> TraceKind) {
        if self.trace.is_none() && self.sink.is_none() {
            return;
        }
        let e = TraceEvent {
            at: self.now,
            what: what(),
        };
        if let Some(sink) = &self.sink {
            sink.send(&e);
        }
        if let Some(trace) = &mut self.trace {
            trace.push(e);
        }
    }

    /// A message left its sender.
    #[inline]
    pub fn on_send(&mut self, m: MsgInfo) {
        let c = m.category.index();
        self.counts.sent[c] += 1;
        self.counts.bytes[c] += m.bytes as u64;
        self.record(|| TraceKind::Send(m));
    }

    /// A message reached its receiver.
    #[inline]
    pub fn on_deliver(&mut self, m: MsgInfo) {
        self.counts.delivered += 1;
        self.record(|| TraceKind::Deliver(m));
    }

    /// A message was lost.
    #[inline]
    pub fn on_drop(&mut self, m: MsgInfo, why: DropReason) {
        self.counts.dropped += 1;
        self.record(|| TraceKind::Drop(m, why));
    }

    /// A protocol addressed a node that does not exist.
    pub fn on_invalid_destination(&mut self, from: NodeId, to: u32, kind: &'static str) {
        self.invalid += 1;
        self.record(|| TraceKind::InvalidDestination { from, to, kind });
    }

    /// The node's status as last reported (`None` if crashed or not yet booted).
    /// Service endpoints (ids past `n`) have none: they are not members.
    pub fn status(&self, node: NodeId) -> Option<Status> {
        self.status.get(node.index()).copied().flatten()
    }

    /// The quorum leader right now (see the module docs).
    pub fn quorum_leader(&self) -> Option<NodeId> {
        self.quorum
    }

    /// Has the reference instant come?
    pub fn past_reference(&self) -> bool {
        self.crossed_t0
    }

    /// The quorum leader when the reference instant came (`None` before it, or if none).
    pub fn leader_at_reference(&self) -> Option<NodeId> {
        self.leader_at_t0
    }

    /// Since when the current quorum leader (or the lack of one) holds.
    pub fn quorum_since(&self) -> Time {
        self.quorum_since
    }

    /// The highest live node in the leader role, if any.
    pub fn highest_leader(&self) -> Option<NodeId> {
        (0..self.n)
            .rev()
            .find(|&i| matches!(self.status[i], Some(s) if s.role == Role::Leader))
            .map(NodeId::from_index)
    }

    /// A node reported its status after an input (`Some`), or crashed (`None`). Call
    /// [`Observer::topology_changed`] too when a node crashes or boots.
    /// A service endpoint's status (id past `n`) says whether it is up and, for a lock service,
    /// whom its record names (see [`Observer::set_services`]): it never leads and is not a
    /// member.
    #[inline]
    pub fn on_status(&mut self, node: NodeId, new: Option<Status>) {
        // Most inputs leave the status as it was: that check stays in the caller.
        let old = if node.index() < self.n {
            self.status[node.index()]
        } else {
            match self.services.get(node.index() - self.n) {
                Some(&s) => s,
                None => return,
            }
        };
        if old == new {
            return;
        }
        self.status_changed(node, new);
    }

    fn status_changed(&mut self, node: NodeId, new: Option<Status>) {
        let i = node.index();
        if i >= self.n {
            let k = i - self.n;
            let liveness = self.services[k].is_some() != new.is_some();
            self.services[k] = new;
            if liveness {
                // Reach through this endpoint changed for every member, the quorum leader's
                // reach included.
                self.rename_all();
                self.count_leaders_outside();
                self.reach_quorum = self.quorum.map_or(0, |q| self.reach_count(q.index()));
            }
            self.update_quorum();
            return;
        }
        let old = self.status[i];
        self.status[i] = new;
        match (old.is_some(), new.is_some()) {
            (false, true) => {
                self.live += 1;
                if i < self.counted {
                    self.live_counted += 1;
                }
                if let Some(q) = self.quorum {
                    if self.reaches(i, q.index()) {
                        self.reach_quorum += 1;
                    }
                }
            }
            (true, false) => {
                self.live -= 1;
                if i < self.counted {
                    self.live_counted -= 1;
                }
                if let Some(q) = self.quorum {
                    if self.reaches(i, q.index()) {
                        self.reach_quorum -= 1;
                    }
                }
            }
            _ => {}
        }
        self.rename(i);
        if self.rule == QuorumRule::LiveMembers && old.is_some() != new.is_some() {
            // The majority's base moved with the live members.
            self.rescan_majority();
        }
        self.record(|| TraceKind::Status { node, status: new });
        let was_leader = matches!(old, Some(s) if s.role == Role::Leader);
        let is_leader = matches!(new, Some(s) if s.role == Role::Leader);
        let after = self.after_t0();
        let paused = self.paused[i];
        let acting = if paused {
            &mut self.leaders_paused
        } else {
            &mut self.leaders_live
        };
        match (was_leader, is_leader) {
            (false, true) => {
                *acting += 1;
                if after {
                    self.leader_changes += 1;
                }
            }
            (true, false) => *acting -= 1,
            _ => {}
        }
        if new.is_none() {
            self.paused[i] = false;
        }
        if was_leader != is_leader || old.is_none() != new.is_none() {
            self.count_leaders_outside();
        }
        if is_leader {
            let epoch = new.and_then(|s| s.epoch);
            if !was_leader || epoch != old.and_then(|s| s.epoch) {
                self.entries += 1;
                self.node_entry[i] = self.entries;
                if let Some(e) = epoch {
                    self.max_leader_epoch = Some(self.max_leader_epoch.map_or(e, |m| m.max(e)));
                    let clash = (0..self.n).any(|j| {
                        j != i && matches!(self.status[j], Some(s) if s.role == Role::Leader && s.epoch == epoch)
                    });
                    if clash {
                        self.same_epoch += 1;
                    }
                }
            }
        }
        if after {
            self.max_leaders = self.max_leaders.max(self.leaders_live);
            let old_role = old.map(|s| s.role);
            let new_role = new.map(|s| s.role);
            if old_role == Some(Role::Follower)
                && matches!(new_role, Some(r) if r != Role::Follower)
                && self.detect.is_none()
            {
                self.detect = Some(self.now);
            }
            if new_role == Some(Role::Candidate)
                && (old_role != Some(Role::Candidate)
                    || new.and_then(|s| s.epoch) > old.and_then(|s| s.epoch))
            {
                self.elections += 1;
            }
        }
        self.update_quorum();
    }

    /// The protocol runs this many service endpoints after the members (ids `n + 1 ..`; see
    /// `SimConfig::services`). They are not members: they never lead and never count among the
    /// `n`. Members of such a family talk *through* them (every lease member talks only to the
    /// store), so reach goes through a live service endpoint, and the first live one is the
    /// family's authority: its status names the holder (see the module docs). With none (every
    /// protocol but lease) members reach each other over their direct links.
    pub fn set_services(&mut self, services: u32) {
        self.services = vec![None; services as usize];
        self.links = Links::new((self.n + services as usize) as u32);
    }

    /// The family's quorum rule (its nodes' [`Protocol::quorum_rule`](election_core::Protocol::quorum_rule)),
    /// which drivers pass when a node boots; [`QuorumRule::Members`] until then.
    pub fn set_quorum_rule(&mut self, rule: QuorumRule) {
        if rule == self.rule {
            return;
        }
        self.rule = rule;
        // Which members count changed: recount the counted ones' names and liveness.
        self.counted = rule.voters(self.n as u32) as usize;
        self.voting.iter_mut().for_each(|c| *c = 0);
        for v in 0..self.counted {
            if self.named[v] != NONE {
                self.voting[self.named[v] as usize] += 1;
            }
        }
        self.live_counted = (0..self.counted)
            .filter(|&v| self.status[v].is_some())
            .count() as u32;
        self.rescan_majority();
        self.count_leaders_outside();
        self.reach_quorum = self.quorum.map_or(0, |q| self.reach_count(q.index()));
        self.update_quorum();
    }

    /// How many members a majority is more than half of: all `n`, the live ones, or the
    /// voters.
    #[inline]
    fn majority_of(&self) -> usize {
        match self.rule {
            QuorumRule::LiveMembers => self.live as usize,
            QuorumRule::Voters(_) => self.counted,
            _ => self.n,
        }
    }

    /// Find the member (if any) named by a majority, from `voting`.
    fn rescan_majority(&mut self) {
        let of = self.majority_of();
        self.majority = (0..self.n).find(|&l| self.voting[l] as usize * 2 > of);
    }

    /// Which nodes can talk to which changed (a link, a crash or a boot): take the links as they
    /// are now. O(1) while every link is up and the family has no service endpoint (a crash or a
    /// boot has already been counted by [`Observer::on_status`]); O(n) otherwise.
    pub fn topology_changed(&mut self, links: &Links) {
        if !links.any_down() && !self.links.any_down() && self.services.is_empty() {
            return;
        }
        self.links.clone_from(links);
        self.rename_all();
        self.count_leaders_outside();
        self.reach_quorum = self.quorum.map_or(0, |q| self.reach_count(q.index()));
        self.update_quorum();
    }

    /// Are both one-way links between nodes `a` and `b` (indices) up?
    #[inline]
    fn both_ways(&self, a: usize, b: usize) -> bool {
        !self.links.any_down()
            || (self
                .links
                .is_up(NodeId::from_index(a), NodeId::from_index(b))
                && self
                    .links
                    .is_up(NodeId::from_index(b), NodeId::from_index(a)))
    }

    /// Does member `v` reach member `l` (see the module docs)?
    #[inline]
    fn reaches(&self, v: usize, l: usize) -> bool {
        if v == l {
            return true;
        }
        if self.services.is_empty() {
            return self.both_ways(v, l);
        }
        (0..self.services.len()).any(|k| {
            let s = self.n + k;
            self.store_ok(k) && self.both_ways(v, s) && self.both_ways(s, l)
        })
    }

    /// Is service endpoint `k` live and does it reach (both ways) more than half of the
    /// service endpoints, itself included? Always true of a live single store; for a
    /// replicated store, the endpoints through which a member can still get an answer.
    #[inline]
    fn store_ok(&self, k: usize) -> bool {
        let s = self.services.len();
        self.services[k].is_some()
            && (s == 1
                || (0..s)
                    .filter(|&j| {
                        j == k
                            || (self.services[j].is_some()
                                && self.both_ways(self.n + k, self.n + j))
                    })
                    .count()
                    * 2
                    > s)
    }

    /// Does member `v` reach the store's endpoint `k`: linked both ways to it, or to a working
    /// endpoint linked both ways to it (which forwards)? For a single store: linked to it.
    fn reaches_store(&self, v: usize, k: usize) -> bool {
        (0..self.services.len()).any(|j| {
            self.both_ways(v, self.n + j)
                && (j == k || (self.store_ok(j) && self.both_ways(self.n + j, self.n + k)))
        })
    }

    /// The store's working endpoint ([`QuorumRule::Service`]): among the endpoints that are
    /// [`Self::store_ok`] and name a holder, the one with the highest epoch (the lowest on
    /// ties). A single store that names a holder; for a replicated store, its leader.
    fn store_authority(&self) -> Option<usize> {
        let mut best: Option<(usize, Option<u64>)> = None;
        for k in 0..self.services.len() {
            let Some(st) = self.services[k] else { continue };
            if st.leader.is_none() || !self.store_ok(k) {
                continue;
            }
            if best.is_none_or(|(_, e)| st.epoch > e) {
                best = Some((k, st.epoch));
            }
        }
        best.map(|(k, _)| k)
    }

    /// How many live members reach member `l`.
    fn reach_count(&self, l: usize) -> u32 {
        if self.services.is_empty() && !self.links.any_down() {
            return self.live;
        }
        (0..self.n)
            .filter(|&v| self.status[v].is_some() && self.reaches(v, l))
            .count() as u32
    }

    /// Is member `v` quorum-connected (see the module docs)?
    fn quorum_connected(&self, v: usize) -> bool {
        if self.rule == QuorumRule::Service {
            return (0..self.services.len())
                .any(|k| self.store_ok(k) && self.both_ways(v, self.n + k));
        }
        if self.counted < self.n {
            // Voters: only a voter can lead, with a majority of the voters.
            return v < self.counted
                && (0..self.counted)
                    .filter(|&u| self.status[u].is_some() && self.reaches(u, v))
                    .count()
                    * 2
                    > self.majority_of();
        }
        self.reach_count(v) as usize * 2 > self.majority_of()
    }

    /// Recount the members in the leader role that are not quorum-connected.
    fn count_leaders_outside(&mut self) {
        let leaders = self.leaders_live + self.leaders_paused;
        self.leaders_outside = if leaders == 0 {
            0
        } else if self.services.is_empty()
            && !self.links.any_down()
            && self.rule != QuorumRule::Service
            && self.counted == self.n
        {
            if self.live as usize * 2 > self.majority_of() {
                0
            } else {
                leaders
            }
        } else {
            (0..self.n)
                .filter(|&i| {
                    matches!(self.status[i], Some(s) if s.role == Role::Leader)
                        && !self.quorum_connected(i)
                })
                .count() as u32
        };
    }

    /// The member `v` names and reaches, or [`NONE`].
    #[inline]
    fn named_target(&self, v: usize) -> u32 {
        match self.status[v].and_then(|s| s.leader) {
            Some(l) if l.0 != 0 && l.index() < self.n && self.reaches(v, l.index()) => {
                l.index() as u32
            }
            _ => NONE,
        }
    }

    /// Recount member `v` in `naming` (and `majority`).
    #[inline]
    fn rename(&mut self, v: usize) {
        let new = self.named_target(v);
        let old = self.named[v];
        if old == new {
            return;
        }
        let of = self.majority_of();
        let counted = v < self.counted;
        if old != NONE {
            self.naming[old as usize] -= 1;
            if counted {
                let c = &mut self.voting[old as usize];
                *c -= 1;
                if self.majority == Some(old as usize) && (*c as usize) * 2 <= of {
                    self.majority = None;
                }
            }
        }
        if new != NONE {
            self.naming[new as usize] += 1;
            if counted {
                let c = &mut self.voting[new as usize];
                *c += 1;
                if (*c as usize) * 2 > of {
                    self.majority = Some(new as usize);
                }
            }
        }
        self.named[v] = new;
    }

    fn rename_all(&mut self) {
        for v in 0..self.n {
            self.rename(v);
        }
    }

    /// The quorum leader by the definition, from `naming`, `majority` and the services.
    fn compute_quorum(&self) -> Option<NodeId> {
        let l = if self.rule != QuorumRule::Service {
            self.majority?
        } else {
            let k = self.store_authority()?;
            let l = self.services[k]?.leader?;
            if l.0 == 0 || l.index() >= self.n || !self.reaches_store(l.index(), k) {
                return None;
            }
            l.index()
        };
        let s = self.status[l]?;
        (s.role == Role::Leader && !self.paused[l]).then_some(NodeId::from_index(l))
    }

    fn update_quorum(&mut self) {
        let q = self.compute_quorum();
        #[cfg(debug_assertions)]
        self.check_quorum(q);
        if q != self.quorum {
            if let Some(l) = q {
                // Becoming the quorum leader again after another node was elected is a new
                // election for the deposed-writer rule (a bully coordinator that re-asserts
                // itself without ever leaving the leader role).
                if self.node_entry[l.index()] < self.entries {
                    self.entries += 1;
                    self.node_entry[l.index()] = self.entries;
                }
                self.reach_quorum = self.reach_count(l.index());
            }
            if let (Some(leader), true) = (self.quorum, self.crossed_t0) {
                self.leaderships.push(Leadership {
                    leader,
                    start: self.quorum_since,
                    end: self.now,
                    fault_at: self.quorum_fault_at,
                });
            }
            self.quorum = q;
            self.quorum_since = self.now;
            self.quorum_fault_at = self.last_fault_at;
            self.record(|| TraceKind::QuorumLeader(q));
        }
        let followed = q.filter(|l| self.naming[l.index()] == self.reach_quorum);
        if followed != self.followed {
            self.followed = followed;
            self.followed_since = self.now;
            if followed.is_some() {
                self.counts_at_followed = self.counts;
            }
        }
    }

    /// The quorum leader, the live members that reach it, the leaders that are not
    /// quorum-connected and the members each live member names and reaches, computed from
    /// scratch by the definitions (which the incremental state must equal).
    #[cfg(any(test, debug_assertions))]
    fn quorum_from_scratch(&self) -> (Option<NodeId>, u32, u32) {
        let n = self.n;
        let bi = |a: usize, b: usize| {
            self.links
                .is_up(NodeId::from_index(a), NodeId::from_index(b))
                && self
                    .links
                    .is_up(NodeId::from_index(b), NodeId::from_index(a))
        };
        let ns = self.services.len();
        let store_ok = |k: usize| {
            self.services[k].is_some()
                && (0..ns)
                    .filter(|&j| j == k || (self.services[j].is_some() && bi(n + k, n + j)))
                    .count()
                    * 2
                    > ns
        };
        let reach = |v: usize, l: usize| {
            v == l
                || if self.services.is_empty() {
                    bi(v, l)
                } else {
                    (0..ns).any(|k| store_ok(k) && bi(v, n + k) && bi(n + k, l))
                }
        };
        let live: Vec<usize> = (0..n).filter(|&v| self.status[v].is_some()).collect();
        // The members the rule counts: the voters (the first k) or every member.
        let voters = self.rule.voters(n as u32) as usize;
        let live_voters: Vec<usize> = live.iter().copied().filter(|&v| v < voters).collect();
        let of = match self.rule {
            QuorumRule::LiveMembers => live.len(),
            QuorumRule::Voters(_) => voters,
            _ => n,
        };
        let connected = |v: usize| {
            if self.rule != QuorumRule::Service {
                v < voters && live_voters.iter().filter(|&&u| reach(u, v)).count() * 2 > of
            } else {
                (0..ns).any(|k| store_ok(k) && bi(v, n + k))
            }
        };
        let outside = (0..n)
            .filter(|&i| {
                matches!(self.status[i], Some(s) if s.role == Role::Leader) && !connected(i)
            })
            .count() as u32;
        let leads = |l: usize| {
            matches!(self.status[l], Some(s) if s.role == Role::Leader) && !self.paused[l]
        };
        let quorum = if self.rule != QuorumRule::Service {
            (0..n).find(|&l| {
                leads(l)
                    && live_voters
                        .iter()
                        .filter(|&&v| {
                            self.status[v].and_then(|s| s.leader) == Some(NodeId::from_index(l))
                                && reach(v, l)
                        })
                        .count()
                        * 2
                        > of
            })
        } else {
            // The highest epoch among the working endpoints that name a holder (the lowest
            // index on ties).
            (0..ns)
                .filter(|&k| store_ok(k) && self.services[k].is_some_and(|s| s.leader.is_some()))
                .fold(None::<usize>, |best, k| match best {
                    Some(b)
                        if self.services[b].map(|s| s.epoch)
                            >= self.services[k].map(|s| s.epoch) =>
                    {
                        Some(b)
                    }
                    _ => Some(k),
                })
                .and_then(|k| {
                    let l = self.services[k]?.leader?;
                    let reaches_store = |v: usize| {
                        (0..ns)
                            .any(|j| bi(v, n + j) && (j == k || (store_ok(j) && bi(n + j, n + k))))
                    };
                    let ok =
                        l.0 != 0 && l.index() < n && leads(l.index()) && reaches_store(l.index());
                    ok.then(|| l.index())
                })
        };
        let reach_q = quorum.map_or(0, |q| live.iter().filter(|&&v| reach(v, q)).count() as u32);
        (quorum.map(NodeId::from_index), reach_q, outside)
    }

    /// Debug builds check every incremental step against [`Self::quorum_from_scratch`].
    #[cfg(debug_assertions)]
    fn check_quorum(&self, q: Option<NodeId>) {
        let (want, reach, outside) = self.quorum_from_scratch();
        assert_eq!(q, want, "incremental quorum leader");
        assert_eq!(
            self.leaders_outside, outside,
            "leaders not quorum-connected"
        );
        if q.is_some() && q == self.quorum {
            assert_eq!(
                self.reach_quorum, reach,
                "members reaching the quorum leader"
            );
        }
    }

    /// Is some live member quorum-connected (a quorum leader possible)?
    fn quorum_possible(&self) -> bool {
        if self.rule == QuorumRule::Service {
            return (0..self.n).any(|v| self.status[v].is_some() && self.quorum_connected(v));
        }
        // The same definition `explore` filters its patterns with, over the counted members
        // (the voters are the first of them).
        quorum_possible(
            self.counted,
            self.majority_of(),
            |v| self.status[v].is_some(),
            |a, b| self.reaches(a, b),
        )
    }

    /// A fault action fired (or was skipped: [`Applied::Skipped`] is counted).
    pub fn on_fault(&mut self, applied: Applied) {
        if matches!(applied, Applied::Skipped(_)) {
            self.faults_skipped += 1;
        } else if !matches!(applied, Applied::Resume(_)) {
            self.last_fault_at = self.now;
        }
        match applied {
            Applied::Pause(id, _) => self.set_paused(id, true),
            Applied::Resume(id) => self.set_paused(id, false),
            _ => {}
        }
        if !matches!(applied, Applied::Resume(_)) {
            self.fault_log.push((self.now, applied.clone()));
        }
        self.record(|| TraceKind::Fault(applied));
    }

    /// A noise pause or disk stall (see [`crate::noise`]) paused a node: like a fault's pause
    /// for the leadership metrics and the trace, but not a fault (it moves no fault instant
    /// and no verdict window). Its end is an `Applied::Resume` through [`Observer::on_fault`].
    pub fn on_noise(&mut self, applied: Applied) {
        self.noise_bursts += 1;
        if let Applied::Pause(id, _) = applied {
            self.set_paused(id, true);
        }
        self.record(|| TraceKind::Fault(applied));
    }

    /// A noise latency spike on every link to and from `node` started (`start`: counted as a
    /// burst) with `extra_ns` more per message, or ended. Traced as [`Applied::Spike`], so that
    /// a trace shows why messages came late.
    pub fn on_noise_spike(&mut self, node: NodeId, start: bool, extra_ns: u64) {
        if start {
            self.noise_bursts += 1;
        }
        let ms = if start { extra_ns as f64 / 1e6 } else { 0.0 };
        self.record(|| TraceKind::Fault(Applied::Spike(node, ms)));
    }

    fn set_paused(&mut self, id: NodeId, paused: bool) {
        let i = id.index();
        if i >= self.n || self.paused[i] == paused || self.status[i].is_none() {
            return;
        }
        self.paused[i] = paused;
        let leads = matches!(self.status[i], Some(s) if s.role == Role::Leader);
        if leads {
            if paused {
                self.leaders_live -= 1;
                self.leaders_paused += 1;
            } else {
                self.leaders_paused -= 1;
                self.leaders_live += 1;
                if self.after_t0() {
                    self.max_leaders = self.max_leaders.max(self.leaders_live);
                }
            }
        }
        if leads {
            self.update_quorum();
        }
    }

    /// The state now holds from `from` on: note `from` as the first instant at or after `t0`
    /// at which the leader at `t0` had lost its quorum, if it has (see `first_lost`). A pause
    /// of that leader is no loss by itself; states that hold for no time (within one instant)
    /// are none either.
    #[inline]
    fn note_lost(&mut self, from: Time) {
        if self.first_lost.is_some() {
            return;
        }
        let lost = match (self.quorum, self.leader_at_t0) {
            (_, None) => true,
            (Some(q), Some(l)) => q != l,
            (None, Some(l)) => !self.paused[l.index()],
        };
        if lost {
            self.first_lost = Some(from);
        }
    }

    /// The workload runs with this interval: write metrics will be reported.
    pub fn set_workload(&mut self, interval: std::time::Duration) {
        self.workload = Some(interval);
    }

    /// The tag of a write `writer` sends now: its token (epoch) and its latest leader entry.
    pub fn write_tag(&self, writer: NodeId) -> WriteTag {
        WriteTag {
            writer,
            token: self.status[writer.index()].and_then(|s| s.epoch),
            entry: self.node_entry[writer.index()],
        }
    }

    /// Had the writer of `tag` been deposed by now? With a token: a leader was elected with a
    /// higher epoch. Without: another node was elected after the writer last was — entered the
    /// leader role, or became the quorum leader again after someone else had been elected.
    pub fn deposed(&self, tag: &WriteTag) -> bool {
        match tag.token {
            Some(t) => self.max_leader_epoch.is_some_and(|m| m > t),
            None => self
                .node_entry
                .iter()
                .enumerate()
                .any(|(j, &e)| j != tag.writer.index() && e > tag.entry),
        }
    }

    /// A workload message (a write, an acknowledgement request or an acknowledgement) was sent.
    #[inline]
    pub fn on_workload_msg(&mut self) {
        self.msgs_workload += 1;
    }

    /// A write took effect now (taken by the resource, or acknowledged by a majority).
    pub fn on_write_taken(&mut self, tag: WriteTag) {
        let stale = self.deposed(&tag);
        let outcome = if stale {
            WriteOutcome::Stale
        } else {
            WriteOutcome::Ok
        };
        self.record(|| TraceKind::Write {
            writer: tag.writer,
            token: tag.token,
            outcome,
        });
        if !self.after_t0() {
            return;
        }
        let len = self.workload.unwrap_or_default();
        self.taken.add(self.now, len);
        if stale {
            self.writes.stale += 1;
            self.stale_taken.add(self.now, len);
        } else {
            self.writes.ok += 1;
        }
    }

    /// A write was refused for its token.
    pub fn on_write_fenced(&mut self, tag: WriteTag) {
        self.record(|| TraceKind::Write {
            writer: tag.writer,
            token: tag.token,
            outcome: WriteOutcome::Fenced,
        });
        if self.after_t0() {
            self.writes.fenced += 1;
        }
    }

    /// The driver is stopping the trial early because it used up its work budget: the trial
    /// will report `budget_exceeded` and never count as converged.
    pub fn budget_exceeded(&mut self) {
        self.budget_exceeded = true;
    }

    /// The time of the latest event (see [`Observer::advance`]).
    pub fn now(&self) -> Time {
        self.now
    }

    /// The verdict (see the module docs), once every quorum leadership up to `end` is in
    /// `leaderships`.
    fn outcome(&self, calm: Time) -> (Outcome, Option<u32>) {
        if !self.quorum_possible() {
            return (Outcome::MinorityOnly, None);
        }
        let held = self
            .leaderships
            .iter()
            .find(|l| l.end.0.saturating_sub(l.start.max(calm).0) >= self.verdict_hold_ns);
        if let Some(l) = held {
            let decided = Time(l.start.max(calm).0.saturating_add(self.verdict_hold_ns));
            if Some(l.leader) == self.leader_at_t0 && self.first_lost.is_none_or(|t| t >= decided) {
                return (Outcome::Stable, None);
            }
            let from = l.fault_at.max(self.t0);
            let took = l.start.0.saturating_sub(from.0);
            let timeouts = took.div_ceil(self.verdict_timeout_ns);
            return (
                Outcome::RecoveredAfter,
                Some(u32::try_from(timeouts).unwrap_or(u32::MAX)),
            );
        }
        if self
            .leaderships
            .iter()
            .any(|l| l.start >= calm && l.end > l.start)
        {
            (Outcome::Livelock, None)
        } else {
            (Outcome::NoLeader, None)
        }
    }

    /// Close the trial at `end` and compute its metrics and trace.
    pub fn finish(mut self, end: Time) -> (Metrics, Vec<TraceEvent>) {
        if self.t0 > end {
            // The reference instant never came (a fault timeline that never started).
            self.t0 = end.max(self.now);
        }
        self.advance(end);
        if !self.crossed_t0 {
            self.cross_t0();
        }
        if self.first_quorum.is_none() && self.quorum.is_some() {
            self.first_quorum = Some(self.now);
        }
        let converged = self.quorum.is_some() && !self.budget_exceeded;
        let followed = self.followed.is_some() && !self.budget_exceeded;
        let ms = |d: u64| d as f64 / 1e6;
        let elect_start = self.followed_since.max(self.t0);
        let window_end = if followed {
            if self.followed_since <= self.t0 {
                self.counts_at_t0
            } else {
                self.counts_at_followed
            }
        } else {
            self.counts
        };
        if let Some(leader) = self.quorum {
            self.leaderships.push(Leadership {
                leader,
                start: self.quorum_since,
                end,
                fault_at: self.quorum_fault_at,
            });
        }
        let calm = self.calm.unwrap_or(self.last_fault_at).max(self.t0);
        let (outcome, recovered_timeouts) = self.outcome(calm);
        let stranded_nodes = self.live - self.quorum.map_or(0, |q| self.naming[q.index()]);
        let metrics = Metrics {
            outcome,
            recovered_timeouts,
            calm_ms: calm.as_millis_f64(),
            converged,
            leader: if converged { self.quorum } else { None },
            detect_ms: self.detect.map(|t| ms(t.0 - self.t0.0)),
            elect_ms: followed.then(|| ms(elect_start.0 - self.t0.0)),
            unavailable_ms: ms(self.unavailable_ns),
            stranded_node_ms: self.stranded_ns as f64 / 1e6,
            stranded_nodes,
            split_brain: self.max_leaders >= 2,
            split_brain_ms: ms(self.split_ns),
            max_leaders: self.max_leaders,
            minority_leader_ms: ms(self.minority_ns),
            same_epoch_leaders: self.same_epoch,
            leader_changes: self.leader_changes,
            elections_started: self.elections,
            window: window_end.minus(&self.counts_at_t0),
            total: self.counts,
            invalid_destinations: self.invalid,
            reference_ms: self.t0.as_millis_f64(),
            leader_at_reference: self.leader_at_t0,
            faults_skipped: self.faults_skipped,
            noise_bursts: self.noise_bursts,
            failover_ms: self.first_quorum.map(|t| ms(t.0 - self.t0.0)),
            paused_leader_ms: ms(self.paused_leader_ns),
            writes: self.workload.map(|_| WriteMetrics {
                stale_window_ms: ms(self.stale_taken.up_to(end)),
                unavailable_ms: ms((end.0 - self.t0.0).saturating_sub(self.taken.up_to(end))),
                ..self.writes
            }),
            msgs_workload: self.msgs_workload,
            steady: self.steady.map(|(k, ns)| (k, ms(ns))),
            fault_log: std::mem::take(&mut self.fault_log),
            end_ms: end.as_millis_f64(),
            budget_exceeded: self.budget_exceeded,
        };
        (metrics, self.trace.unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    //! Each outcome detected on a constructed trial: three nodes, node 3 leads from 10 ms, the
    //! reference instant (a fault) at 100 ms, a 150 ms election timeout and a 2 s hold span.
    use super::*;
    use std::time::Duration;

    const MS: u64 = 1_000_000;

    fn st(role: Role, leader: Option<u32>) -> Option<Status> {
        Some(Status {
            role,
            leader: leader.map(NodeId),
            epoch: None,
        })
    }

    struct Trial {
        o: Observer,
        links: Links,
    }

    impl Trial {
        /// Node 3 the quorum leader from 10 ms; at 100 ms the fault `fault` fires (the reference).
        fn new(fault: Applied) -> Trial {
            let mut o = Observer::new(3, Time(100 * MS), false);
            o.set_verdict_window(Duration::from_millis(150), Duration::from_secs(2));
            let links = Links::new(3);
            o.advance(Time::ZERO);
            for i in 1..=3 {
                o.on_status(NodeId(i), st(Role::Follower, None));
            }
            o.topology_changed(&links);
            let mut t = Trial { o, links };
            t.at(10, 3, Role::Leader, Some(3));
            t.at(10, 1, Role::Follower, Some(3));
            t.at(10, 2, Role::Follower, Some(3));
            t.o.advance(Time(100 * MS));
            let crash = matches!(fault, Applied::Crash(_));
            t.o.on_fault(fault);
            if crash {
                t.o.on_status(NodeId(3), None);
                t.o.topology_changed(&t.links);
            }
            t
        }
        fn at(&mut self, ms: u64, node: u32, role: Role, leader: Option<u32>) {
            self.o.advance(Time(ms * MS));
            self.o.on_status(NodeId(node), st(role, leader));
        }
        fn finish(self, ms: u64) -> Metrics {
            self.o.finish(Time(ms * MS)).0
        }
    }

    #[test]
    fn stable_one_quorum_leader_to_the_end() {
        let m = Trial::new(Applied::Heal).finish(3000);
        assert_eq!((m.outcome, m.recovered_timeouts), (Outcome::Stable, None));
    }

    #[test]
    fn recovered_after_counts_election_timeouts_from_the_fault() {
        let mut t = Trial::new(Applied::Crash(NodeId(3)));
        t.at(250, 2, Role::Candidate, None);
        t.at(420, 2, Role::Leader, Some(2));
        t.at(421, 1, Role::Follower, Some(2));
        let m = t.finish(3000);
        // Agreed again at 421 ms, 321 ms after the crash: within the third timeout.
        assert_eq!(m.outcome, Outcome::RecoveredAfter);
        assert_eq!(m.recovered_timeouts, Some(3));
        assert_eq!(m.failover_ms, Some(321.0));
    }

    #[test]
    fn no_leader_while_a_connected_majority_exists() {
        let mut t = Trial::new(Applied::Crash(NodeId(3)));
        t.at(250, 1, Role::Candidate, None);
        t.at(260, 2, Role::Candidate, None);
        let m = t.finish(5000);
        assert_eq!((m.outcome, m.recovered_timeouts), (Outcome::NoLeader, None));
    }

    #[test]
    fn livelock_leadership_keeps_changing() {
        let mut t = Trial::new(Applied::Crash(NodeId(3)));
        for k in 0..12 {
            let (a, b) = if k % 2 == 0 { (1, 2) } else { (2, 1) };
            let at = 300 + 400 * k;
            t.at(at, a, Role::Leader, Some(a));
            t.at(at + 1, b, Role::Follower, Some(a));
            t.at(at + 200, a, Role::Candidate, None);
        }
        let m = t.finish(5000);
        assert_eq!(m.outcome, Outcome::Livelock);
    }

    #[test]
    fn an_agreement_shorter_than_the_hold_span_is_not_settled() {
        let mut t = Trial::new(Applied::Crash(NodeId(3)));
        t.at(300, 1, Role::Leader, Some(1));
        t.at(301, 2, Role::Follower, Some(1));
        t.at(500, 1, Role::Candidate, None);
        t.at(4500, 2, Role::Leader, Some(2));
        t.at(4501, 1, Role::Follower, Some(2));
        let m = t.finish(5000);
        assert!(m.converged);
        assert_eq!(m.outcome, Outcome::Livelock);
    }

    /// The issue-#43 case in small: the leader at the fault loses its majority (it steps
    /// down), nobody else wins, and it wins again. Leadership never moved to another node, but
    /// it was lost: recovered, not stable.
    #[test]
    fn a_leader_that_lapses_and_wins_again_is_not_stable() {
        let mut t = Trial::new(Applied::Heal);
        t.at(300, 3, Role::Follower, None);
        t.at(400, 3, Role::Leader, Some(3));
        let m = t.finish(5000);
        assert_eq!(m.outcome, Outcome::RecoveredAfter);
        // From the fault at 100 ms to the new leadership at 400 ms: two timeouts of 150 ms.
        assert_eq!(m.recovered_timeouts, Some(2));
        assert_eq!(m.unavailable_ms, 100.0);
    }

    /// A leader paused for less than the detection window keeps its followers: no quorum
    /// leader while it is frozen, and the same one when it wakes. That is no loss of quorum.
    #[test]
    fn a_paused_leader_that_keeps_its_followers_is_stable() {
        let mut t = Trial::new(Applied::Heal);
        t.o.advance(Time(200 * MS));
        t.o.on_fault(Applied::Pause(NodeId(3), Time(250 * MS)));
        t.o.advance(Time(250 * MS));
        t.o.on_fault(Applied::Resume(NodeId(3)));
        let m = t.finish(5000);
        assert_eq!((m.outcome, m.unavailable_ms), (Outcome::Stable, 50.0));
    }

    /// The first leadership that holds the hold span past the calm decides: a trial that runs
    /// on (a longer settle window) and loses that leader afterwards keeps the verdict.
    #[test]
    fn the_first_hold_decides_and_later_events_cannot_change_it() {
        let mut t = Trial::new(Applied::Crash(NodeId(3)));
        t.at(300, 1, Role::Leader, Some(1));
        t.at(301, 2, Role::Follower, Some(1));
        // Held from 300 ms: the 2 s span is complete at 2300 ms.
        t.at(2400, 1, Role::Candidate, None);
        t.at(2401, 2, Role::Candidate, None);
        let m = t.finish(6000);
        assert!(!m.converged);
        assert_eq!(
            (m.outcome, m.recovered_timeouts),
            (Outcome::RecoveredAfter, Some(2))
        );
        // Lost 100 ms too early, the same trial never settles: leadership formed after the
        // calm and broke.
        let mut t = Trial::new(Applied::Crash(NodeId(3)));
        t.at(300, 1, Role::Leader, Some(1));
        t.at(301, 2, Role::Follower, Some(1));
        t.at(2200, 1, Role::Candidate, None);
        t.at(2201, 2, Role::Candidate, None);
        assert_eq!(t.finish(6000).outcome, Outcome::Livelock);
    }

    #[test]
    fn minority_only_when_no_member_is_quorum_connected() {
        let mut t = Trial::new(Applied::Heal);
        for a in 1..=3 {
            for b in 1..=3 {
                t.links.set(NodeId(a), NodeId(b), false);
            }
        }
        t.o.topology_changed(&t.links);
        let m = t.finish(5000);
        assert_eq!(m.outcome, Outcome::MinorityOnly);
        assert_eq!(m.unavailable_ms, 4900.0);
        assert_eq!(m.stranded_node_ms, 3.0 * 4900.0);
        assert_eq!(m.minority_leader_ms, 4900.0, "3 leads with nobody to lead");
    }

    /// The chained shape (the 2020 etcd outage): the leader 3 and node 1 lose their link, 2
    /// still reaches both. 3 keeps 2 (a majority of 3 with itself): a working cluster, with 1
    /// stranded — not a liveness failure.
    #[test]
    fn a_majority_leader_with_a_stranded_member_is_stable() {
        let mut t = Trial::new(Applied::Heal);
        for (a, b) in [(1, 3), (3, 1)] {
            t.links.set(NodeId(a), NodeId(b), false);
        }
        t.o.topology_changed(&t.links);
        t.at(200, 1, Role::Candidate, None);
        let m = t.finish(5000);
        assert_eq!(m.outcome, Outcome::Stable);
        assert_eq!((m.converged, m.leader), (true, Some(NodeId(3))));
        assert_eq!((m.failover_ms, m.unavailable_ms), (Some(0.0), 0.0));
        assert_eq!(m.stranded_nodes, 1);
        assert_eq!(m.stranded_node_ms, 4900.0, "node 1 from the cut to the end");
        // Everyone who reaches 3 (2 and 3) follows it from before the fault.
        assert_eq!(m.elect_ms, Some(0.0));
    }

    /// The leader is cut off from both followers; they elect 2, which a majority (1, 2) names:
    /// recovered, while the stranded 3 still believes it leads (minority leader, split brain).
    #[test]
    fn recovered_after_with_a_stranded_old_leader() {
        let mut t = Trial::new(Applied::Heal);
        for (a, b) in [(1, 3), (3, 1), (2, 3), (3, 2)] {
            t.links.set(NodeId(a), NodeId(b), false);
        }
        t.o.topology_changed(&t.links);
        t.at(300, 2, Role::Candidate, None);
        t.at(310, 2, Role::Leader, Some(2));
        t.at(311, 1, Role::Follower, Some(2));
        let m = t.finish(5000);
        assert_eq!(m.outcome, Outcome::RecoveredAfter);
        assert_eq!(m.failover_ms, Some(211.0));
        assert_eq!(m.recovered_timeouts, Some(2));
        assert_eq!(m.leader, Some(NodeId(2)));
        assert_eq!(m.minority_leader_ms, 4900.0);
        assert!(m.split_brain);
        assert_eq!(m.stranded_nodes, 1, "3 reaches nobody");
    }

    /// Under partial connectivity, a node that cannot reach the leader keeps deposing it (plain
    /// Raft in the omission topology): quorum leadership forms and breaks to the end.
    #[test]
    fn livelock_under_partial_connectivity() {
        let mut t = Trial::new(Applied::Heal);
        for (a, b) in [(1, 3), (3, 1)] {
            t.links.set(NodeId(a), NodeId(b), false);
        }
        t.o.topology_changed(&t.links);
        for k in 0..12 {
            let at = 200 + 400 * k;
            // 1 times out and drags 2 along: 3 loses its majority, then wins it back.
            t.at(at, 1, Role::Candidate, None);
            t.at(at + 1, 2, Role::Follower, None);
            t.at(at + 2, 3, Role::Follower, None);
            t.at(at + 150, 3, Role::Leader, Some(3));
            t.at(at + 151, 2, Role::Follower, Some(3));
        }
        let m = t.finish(5000);
        assert_eq!(m.outcome, Outcome::Livelock);
        assert!(
            m.converged,
            "a quorum leader at the end, won less than the hold span before it"
        );
    }

    #[test]
    fn no_leader_under_partial_connectivity() {
        let mut t = Trial::new(Applied::Crash(NodeId(3)));
        for (a, b) in [(1, 2), (2, 1)] {
            t.links.set(NodeId(a), NodeId(b), false);
        }
        // 1 and 2 cannot reach each other: neither reaches a majority of 3.
        t.o.topology_changed(&t.links);
        let m = t.finish(5000);
        assert_eq!(m.outcome, Outcome::MinorityOnly);
        // With the link up they could: no quorum leader then is a liveness failure.
        let mut t = Trial::new(Applied::Crash(NodeId(3)));
        t.at(300, 1, Role::Candidate, None);
        let m = t.finish(5000);
        assert_eq!(m.outcome, Outcome::NoLeader);
        assert_eq!(m.stranded_node_ms, 2.0 * 4900.0);
    }

    /// A paused leader cannot act: no quorum leader while it is frozen, the same one after.
    #[test]
    fn a_paused_leader_is_not_a_quorum_leader() {
        let mut t = Trial::new(Applied::Pause(NodeId(3), Time(150 * MS)));
        t.o.advance(Time(150 * MS));
        t.o.on_fault(Applied::Resume(NodeId(3)));
        let m = t.finish(5000);
        assert_eq!(m.outcome, Outcome::Stable);
        assert_eq!(m.failover_ms, Some(50.0));
        assert_eq!(m.unavailable_ms, 50.0);
        assert_eq!(m.paused_leader_ms, 50.0);
    }

    /// A family that elects among whoever is alive (the bully, the ring): the survivor of a
    /// two-node cluster leads it alone; a majority family's survivor does not.
    #[test]
    fn live_members_rule_counts_the_survivors() {
        for (rule, leads) in [
            (QuorumRule::LiveMembers, true),
            (QuorumRule::Members, false),
        ] {
            let mut o = Observer::new(2, Time(100 * MS), false);
            o.set_quorum_rule(rule);
            let links = Links::new(2);
            o.advance(Time::ZERO);
            o.on_status(NodeId(1), st(Role::Follower, Some(2)));
            o.on_status(NodeId(2), st(Role::Leader, Some(2)));
            o.topology_changed(&links);
            assert_eq!(o.quorum_leader(), Some(NodeId(2)));
            o.advance(Time(100 * MS));
            o.on_fault(Applied::Crash(NodeId(2)));
            o.on_status(NodeId(2), None);
            o.topology_changed(&links);
            o.advance(Time(300 * MS));
            o.on_status(NodeId(1), st(Role::Leader, Some(1)));
            assert_eq!(o.quorum_leader().is_some(), leads, "{rule:?}");
            let (m, _) = o.finish(Time(3000 * MS));
            let want = if leads {
                Outcome::RecoveredAfter
            } else {
                Outcome::MinorityOnly
            };
            assert_eq!(m.outcome, want, "{rule:?}");
        }
    }

    /// A family whose authority is a service endpoint (the lease store): the holder the store
    /// names leads while it reaches the store, whatever the members' own links.
    #[test]
    fn a_lock_service_names_the_quorum_leader() {
        let mut o = Observer::new(3, Time(100 * MS), false);
        o.set_services(1);
        o.set_quorum_rule(QuorumRule::Service);
        let mut links = Links::new(4);
        o.advance(Time::ZERO);
        for i in 1..=3 {
            o.on_status(NodeId(i), st(Role::Follower, None));
        }
        o.on_status(NodeId(4), Some(Status::FOLLOWER_NO_LEADER));
        o.topology_changed(&links);
        o.advance(Time(10 * MS));
        o.on_status(NodeId(3), st(Role::Leader, Some(3)));
        assert_eq!(o.quorum_leader(), None, "the store names nobody yet");
        o.on_status(NodeId(4), st(Role::Follower, Some(3)));
        assert_eq!(o.quorum_leader(), Some(NodeId(3)));
        // Members never talk to each other: cutting their links changes nothing.
        for a in 1..=3 {
            for b in 1..=3 {
                links.set(NodeId(a), NodeId(b), false);
            }
        }
        o.topology_changed(&links);
        assert_eq!(o.quorum_leader(), Some(NodeId(3)));
        o.advance(Time(100 * MS));
        o.on_fault(Applied::Heal);
        o.advance(Time(200 * MS));
        // The holder loses the store: it cannot renew.
        links.set(NodeId(3), NodeId(4), false);
        o.topology_changed(&links);
        assert_eq!(o.quorum_leader(), None);
        let m = o.finish(Time(300 * MS));
        assert_eq!(m.0.failover_ms, Some(0.0));
        assert_eq!(m.0.unavailable_ms, 100.0);
    }

    /// The majority side keeps its leader through a partition and its heal: failover 0, even
    /// though the minority elected a leader of its own meanwhile.
    #[test]
    fn a_majority_side_that_keeps_its_leader_has_no_failover() {
        let mut o = Observer::new(5, Time(100 * MS), false);
        o.set_verdict_window(Duration::from_millis(150), Duration::from_secs(2));
        let mut links = Links::new(5);
        o.advance(Time::ZERO);
        for i in 1..=5 {
            o.on_status(NodeId(i), st(Role::Follower, Some(5)));
        }
        o.on_status(NodeId(5), st(Role::Leader, Some(5)));
        o.topology_changed(&links);
        o.advance(Time(100 * MS));
        o.on_fault(Applied::Heal);
        for a in [1, 2] {
            for b in [3, 4, 5] {
                links.set(NodeId(a), NodeId(b), false);
                links.set(NodeId(b), NodeId(a), false);
            }
        }
        o.topology_changed(&links);
        o.advance(Time(400 * MS));
        o.on_status(NodeId(2), st(Role::Leader, Some(2)));
        o.on_status(NodeId(1), st(Role::Follower, Some(2)));
        o.advance(Time(1600 * MS));
        links.heal();
        o.topology_changed(&links);
        o.advance(Time(1700 * MS));
        o.on_status(NodeId(2), st(Role::Follower, Some(5)));
        o.on_status(NodeId(1), st(Role::Follower, Some(5)));
        let (m, _) = o.finish(Time(5000 * MS));
        assert_eq!(m.outcome, Outcome::Stable);
        assert_eq!((m.failover_ms, m.unavailable_ms), (Some(0.0), 0.0));
        assert_eq!(m.leader_changes, 1);
        assert_eq!(
            m.minority_leader_ms, 1200.0,
            "2 led the minority until the heal"
        );
        assert_eq!(
            m.stranded_node_ms,
            2.0 * 1600.0,
            "1 and 2 from the cut to 1700 ms"
        );
    }

    /// Non-voting members (Raft learners): the quorum leader is named by a majority of the
    /// voters, not of the members. At n = 7 with voters 1..=3, a leader named by every
    /// learner but by no other voter is not one; named by one other voter and no learner, it
    /// is. Quorum-connected is a voter's property: with the three voters crashed, no live
    /// member is, whatever the learners (`minority-only`); a learner is stranded like any
    /// member without a leader.
    #[test]
    fn voters_rule_counts_a_majority_of_the_voters_only() {
        let setup = |named_by: &[u32]| {
            let mut o = Observer::new(7, Time(100 * MS), false);
            o.set_quorum_rule(QuorumRule::Voters(3));
            o.advance(Time::ZERO);
            o.on_status(NodeId(1), st(Role::Leader, Some(1)));
            for v in 2..=7 {
                let l = named_by.contains(&v).then_some(1);
                o.on_status(NodeId(v), st(Role::Follower, l));
            }
            o.topology_changed(&Links::new(7));
            o
        };
        assert_eq!(setup(&[4, 5, 6, 7]).quorum_leader(), None);
        assert_eq!(setup(&[2]).quorum_leader(), Some(NodeId(1)));
        assert_eq!(setup(&[3, 4]).quorum_leader(), Some(NodeId(1)));
        // Members is the contrast: 5 of 7 name it.
        let mut o = setup(&[4, 5, 6, 7]);
        o.set_quorum_rule(QuorumRule::Members);
        assert_eq!(o.quorum_leader(), Some(NodeId(1)));
        o.set_quorum_rule(QuorumRule::Voters(3));
        assert_eq!(o.quorum_leader(), None);

        // The voters crash; the four learners stay up, following no one.
        let mut o = setup(&[2, 3, 4, 5, 6, 7]);
        assert_eq!(o.quorum_leader(), Some(NodeId(1)));
        o.advance(Time(100 * MS));
        o.on_fault(Applied::Crash(NodeId(1)));
        for v in 1..=3 {
            o.on_status(NodeId(v), None);
        }
        for v in 4..=7 {
            o.on_status(NodeId(v), st(Role::Follower, None));
        }
        o.topology_changed(&Links::new(7));
        assert!(!o.quorum_possible());
        let (m, _) = o.finish(Time(1100 * MS));
        assert_eq!(m.outcome, Outcome::MinorityOnly);
        assert_eq!(m.stranded_nodes, 4);
        assert_eq!(m.stranded_node_ms, 4.0 * 1000.0);
    }

    /// One step of a random observation sequence (node numbers are reduced modulo the size).
    #[derive(Clone, Debug)]
    enum Step {
        Status(u32, u8, Option<u32>, Option<u64>),
        Crash(u32),
        /// A boot as the drivers report it: a status, then the topology.
        Boot(u32, u8, Option<u32>),
        Service(u32, bool, Option<u32>),
        LinkDown(u32, u32),
        Heal,
        Topology,
        Pause(u32, bool),
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        let leader = proptest::option::of(0u32..8);
        prop_oneof![
            4 => (0u32..8, 0u8..3, leader.clone(), proptest::option::of(0u64..3))
                .prop_map(|(a, r, l, e)| Step::Status(a, r, l, e)),
            1 => (0u32..8).prop_map(Step::Crash),
            2 => (0u32..8, 0u8..3, leader).prop_map(|(a, r, l)| Step::Boot(a, r, l)),
            1 => (0u32..2, any::<bool>(), proptest::option::of(0u32..8))
                .prop_map(|(a, up, l)| Step::Service(a, up, l)),
            1 => (0u32..9, 0u32..9).prop_map(|(a, b)| Step::LinkDown(a, b)),
            1 => Just(Step::Heal),
            1 => Just(Step::Topology),
            1 => (0u32..8, any::<bool>()).prop_map(|(a, p)| Step::Pause(a, p)),
        ]
    }

    proptest::proptest! {
        /// The incremental quorum leader, the members reaching it, the leaders that are not
        /// quorum-connected and every member's counted leader equal their from-scratch
        /// computation after every step of random sequences of statuses, crashes, boots,
        /// service endpoints' records, link cuts, heals and pauses.
        #[test]
        fn incremental_quorum_equals_from_scratch(
            n in 1u32..7,
            services in 0u32..2,
            rule in 0usize..6,
            rule_at in 0usize..40,
            steps in proptest::collection::vec(step(), 1..120),
        ) {
            let mut o = Observer::new(n, Time(50 * MS), false);
            o.set_services(services);
            // Drivers pass the rule when a node boots: at some step, after observations.
            let rule = [
                QuorumRule::Members,
                QuorumRule::LiveMembers,
                QuorumRule::Service,
                QuorumRule::Voters(1),
                QuorumRule::Voters(3),
                QuorumRule::Voters(8),
            ][rule];
            let total = n + services;
            let mut links = Links::new(total);
            let role = |r: u8| [Role::Follower, Role::Candidate, Role::Leader][r as usize];
            let status = |r: u8, l: Option<u32>, e: Option<u64>| Some(Status {
                role: role(r),
                leader: l.map(NodeId),
                epoch: e,
            });
            for (k, s) in steps.into_iter().enumerate() {
                o.advance(Time(k as u64 * MS));
                if k == rule_at {
                    o.set_quorum_rule(rule);
                }
                match s {
                    Step::Status(a, r, l, e) => {
                        let id = NodeId(a % n + 1);
                        if o.status(id).is_some() {
                            o.on_status(id, status(r, l, e));
                        }
                    }
                    Step::Crash(a) => {
                        o.on_status(NodeId(a % n + 1), None);
                        o.topology_changed(&links);
                    }
                    Step::Boot(a, r, l) => {
                        let id = NodeId(a % n + 1);
                        o.on_status(id, status(r, l, None));
                        o.topology_changed(&links);
                    }
                    Step::Service(a, up, l) => {
                        if services > 0 {
                            let st = up.then_some(Status {
                                leader: l.map(NodeId),
                                ..Status::FOLLOWER_NO_LEADER
                            });
                            o.on_status(NodeId(n + 1 + a % services), st);
                            o.topology_changed(&links);
                        }
                    }
                    Step::LinkDown(a, b) => {
                        links.set(NodeId(a % total + 1), NodeId(b % total + 1), false);
                    }
                    Step::Heal => links.heal(),
                    Step::Topology => o.topology_changed(&links),
                    Step::Pause(a, p) => {
                        let id = NodeId(a % n + 1);
                        let f = if p { Applied::Pause(id, Time::ZERO) } else { Applied::Resume(id) };
                        o.on_fault(f);
                    }
                }
                let (quorum, reach, outside) = o.quorum_from_scratch();
                proptest::prop_assert_eq!((o.quorum, o.leaders_outside), (quorum, outside));
                if quorum.is_some() {
                    proptest::prop_assert_eq!(o.reach_quorum, reach);
                }
                let mut naming = vec![0u32; n as usize];
                let mut voting = vec![0u32; n as usize];
                let voters = o.rule.voters(n) as usize;
                for v in 0..n as usize {
                    let t = o.named_target(v);
                    proptest::prop_assert_eq!(o.named[v], t);
                    if t != NONE {
                        naming[t as usize] += 1;
                        if v < voters {
                            voting[t as usize] += 1;
                        }
                    }
                }
                proptest::prop_assert_eq!(&o.naming, &naming);
                proptest::prop_assert_eq!(&o.voting, &voting);
                let live_voters = (0..voters).filter(|&v| o.status[v].is_some()).count();
                proptest::prop_assert_eq!(o.live_counted as usize, live_voters);
            }
        }
    }

    #[test]
    fn outcome_names_round_trip() {
        for o in Outcome::ALL {
            assert_eq!(Outcome::from_name(o.name()), Some(o));
        }
        assert_eq!(Outcome::from_name("ok"), None);
    }
}
