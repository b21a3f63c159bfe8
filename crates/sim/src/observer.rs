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
//!   `same_epoch_leaders`, which is checked over the whole trial).
//! * **Live**: not crashed. A paused node is live (it still believes what it believed).
//! * **Connected**: two live nodes whose links are up in *both* directions. A **component** is
//!   a connected component of that graph; the **largest component** is the one with the most
//!   nodes, ties going to the one holding the highest id.
//! * **Agreed leader**: a node `L` in the largest component whose role is leader, such that every
//!   node of that component (L included) names `L` as its leader.
//! * `faults_skipped`: fault actions of the scenario that did not apply — a selector found no
//!   node when the action fired (no leader to crash), the timeline gave up waiting for an agreed
//!   leader, or the trial ended before the action's instant. A trial with `faults_skipped > 0`
//!   did not undergo the scenario as described; its other metrics do not measure that scenario.
//! * `detect_ms`: `t0` to the first moment a node leaves the follower role.
//! * `elect_ms`: `t0` to the start of the final interval, lasting to the end of the trial, in
//!   which there is one and the same agreed leader (zero if that interval began before `t0`).
//!   `converged` is whether such an interval exists at the end; if not, `elect_ms` is empty.
//!   For a majority protocol whose majority is gone, `converged = false` is the right answer.
//! * `unavailable_ms`: total time from `t0` to the end during which there is no agreed leader.
//! * `failover_ms`: `t0` to the first instant at or after `t0` at which the largest component has
//!   an agreed leader again after losing it (0 if it never lost one; empty if it never regained
//!   one). Where a scenario's question is "how fast is the leader replaced", this is the answer;
//!   `elect_ms` below is the *final* agreement, which in partition, recovery and rejoin scenarios
//!   includes the outage.
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
//!   the agreed leader again after another node was elected — after the writer last was. `writes_fenced` counts writes the resource refused for their token.
//!   `stale_window_ms` is the measure of the union of `[w, w + interval)` over the instants `w`
//!   at which stale writes were taken (the time during which a deposed leader's writes were
//!   being taken, at the workload's resolution); `write_unavailable_ms` is the time from `t0` to
//!   the end not covered by `[w, w + interval)` for any taken write (the time during which no
//!   write could be taken).
//! * `minority_leader_ms`: total time from `t0` during which some live node *outside* the largest
//!   component is in the leader role — a stranded leader that still believes it leads (a Raft
//!   leader cut off on the minority side without CheckQuorum, a bully coordinator on the small
//!   side), paused or not. It is part of `split_brain_ms` whenever the largest component also has
//!   a leader and the stranded one is not paused; it
//!   is reported separately so the believed and the effective leadership can both be read.
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
//! * **Connected majority**: the largest component has more than `n/2` nodes. This is the
//!   weakest reading of "a majority can talk": its members are connected through each other, not
//!   necessarily pairwise (a star around one hub counts), so a protocol that relays or picks a
//!   quorum-connected leader could elect one there. The outcomes below use it so that a cluster
//!   with no leader while such a majority exists counts as a liveness failure, as the partial
//!   partition studies (and OmniPaxos' `quorum-loss`, `constrained-election`, `chained`) do.
//! * **Settled**: at the end of the trial there is an agreed leader that has been agreed for at
//!   least the settle window ([`SimConfig::settle`](crate::SimConfig::settle), given to the
//!   observer by [`Observer::set_verdict_window`]), and the trial was not cut short by its budget.
//! * `outcome`, the trial's verdict on liveness, the first of these that holds:
//!   1. `minority-only`: at the end there is no connected majority: no leader is a correct
//!      answer for a majority protocol, whatever happened.
//!   2. `stable`: settled, the agreed leader at the end is the one agreed at `t0`, and no node
//!      entered the leader role after `t0` (`leader_changes = 0`): leadership never moved, even
//!      if agreement lapsed for a moment (a follower rejoining at a heal names no leader until
//!      it hears one).
//!   3. `recovered-after`: settled otherwise: leadership moved and settled again (in a cold
//!      start, the first election); `recovered_timeouts` says after how many election timeouts (the
//!      failure-detection window's lower bound, `detect_timeout_ms`): the time from the last
//!      fault that fired at or before the final agreement began (or `t0`) to that beginning,
//!      divided by the timeout, rounded up.
//!   4. `livelock`: not settled, and nodes entered the leader role at least twice since the
//!      last fault fired: leadership kept changing without settling (leader ping-pong, endless
//!      disruptive elections).
//!   5. `no-leader`: not settled otherwise: a connected majority without a settled leader.
//! * Message counts: `total` counts the whole trial; `window` counts messages sent from `t0` to the
//!   instant `elect_ms` ends (to the end of the trial if not converged).

use std::sync::{Arc, Mutex};

use election_core::{MsgCategory, NodeId, Role, Status, Time};

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
    /// One agreed leader from `t0` to the end.
    Stable,
    /// Settled again after losing the agreed leader.
    RecoveredAfter,
    /// No settled leader while a connected majority existed at the end.
    NoLeader,
    /// Leadership kept changing after the last fault without settling.
    Livelock,
    /// No connected majority at the end.
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

    /// A liveness failure: no settled leader although a connected majority existed.
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
    /// An agreed leader held from `elect_ms` to the end.
    pub converged: bool,
    /// That leader.
    pub leader: Option<NodeId>,
    /// Reference instant to the first node leaving the follower role.
    pub detect_ms: Option<f64>,
    /// Reference instant to the start of the final agreed-leader interval.
    pub elect_ms: Option<f64>,
    /// Time without an agreed leader after the reference instant.
    pub unavailable_ms: f64,
    /// Two or more live leaders at once, at some point after the reference instant.
    pub split_brain: bool,
    /// Total time with two or more live leaders.
    pub split_brain_ms: f64,
    /// Most live leaders at once.
    pub max_leaders: u32,
    /// Time with a leader-role node outside the largest component.
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
    /// The agreed leader at the reference instant, just before the fault fired there took
    /// effect.
    pub leader_at_reference: Option<NodeId>,
    /// Fault actions that did not apply: their selector found no node, the timeline gave up
    /// waiting for a leader, or the trial ended before they fired.
    pub faults_skipped: u32,
    /// `t0` to the first instant the largest component has an agreed leader again after it lost
    /// one (0 if it never lost one; `None` if it never regained one).
    pub failover_ms: Option<f64>,
    /// Time after `t0` with a paused node in the leader role.
    pub paused_leader_ms: f64,
    /// The workload's outcome, if there was a workload.
    pub writes: Option<WriteMetrics>,
    /// Workload messages (writes, acknowledgement requests and acknowledgements) over the whole
    /// trial; never part of any election or heartbeat count.
    pub msgs_workload: u64,
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

/// Collects a trial's observations and computes its [`Metrics`]. Drivers call
/// [`Observer::advance`] with the time of each event before reporting anything that happened
/// at that time; times must never go backwards.
#[derive(Clone, Debug)]
pub struct Observer {
    n: usize,
    t0: Time,
    now: Time,
    crossed_t0: bool,
    status: Vec<Option<Status>>,
    /// Which service endpoints (ids after the members) are up (see [`Observer::set_services`]).
    service_up: Vec<bool>,
    /// Component id per node (usize::MAX for crashed nodes), and the largest component's id.
    comp: Vec<usize>,
    largest: usize,
    /// The largest component's members, in no particular order, and each member's position in
    /// it (so that a crash removes one in O(1)).
    largest_members: Vec<NodeId>,
    member_pos: Vec<u32>,
    /// Per node `l`: how many members of the largest component name `l` as their leader.
    naming: Vec<u32>,
    /// Members of the largest component in the leader role.
    leaders_in_largest: u32,
    /// The components were last computed with every link up: every live node is in the one
    /// component `0`, except the nodes of `joined` (booted since) not yet added to it.
    one_component: bool,
    /// Nodes that came up (no status to a status) since the components were last computed.
    joined: Vec<NodeId>,
    agreed: Option<NodeId>,
    agreed_since: Time,
    leaders_live: u32,
    counts: MsgCounts,
    counts_at_t0: MsgCounts,
    counts_at_agree: MsgCounts,
    invalid: u64,
    detect: Option<Time>,
    unavailable_ns: u64,
    split_ns: u64,
    minority_ns: u64,
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
    lost_after_t0: bool,
    regained_at: Option<Time>,
    /// The workload interval, if there is a workload.
    workload: Option<std::time::Duration>,
    writes: WriteMetrics,
    taken: Coverage,
    stale_taken: Coverage,
    msgs_workload: u64,
    budget_exceeded: bool,
    noise_bursts: u64,
    /// The election timeout and the settle window, for the outcome.
    verdict_timeout_ns: u64,
    verdict_settle_ns: u64,
    /// When the latest fault that applied fired, and when the latest one before the current
    /// agreement began did.
    last_fault_at: Time,
    agreement_fault_at: Time,
    /// Entries into the leader role at or after `t0` since the latest fault.
    entries_since_fault: u32,
    trace: Option<Vec<TraceEvent>>,
    sink: Option<TraceSink>,
}

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
            service_up: Vec::new(),
            comp: vec![usize::MAX; n],
            largest: usize::MAX,
            largest_members: Vec::new(),
            member_pos: vec![0; n],
            naming: vec![0; n],
            leaders_in_largest: 0,
            one_component: false,
            joined: Vec::new(),
            agreed: None,
            agreed_since: Time::ZERO,
            leaders_live: 0,
            counts: MsgCounts::default(),
            counts_at_t0: MsgCounts::default(),
            counts_at_agree: MsgCounts::default(),
            invalid: 0,
            detect: None,
            unavailable_ns: 0,
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
            lost_after_t0: false,
            regained_at: None,
            workload: None,
            writes: WriteMetrics::default(),
            taken: Coverage::default(),
            stale_taken: Coverage::default(),
            msgs_workload: 0,
            budget_exceeded: false,
            noise_bursts: 0,
            verdict_timeout_ns: 150_000_000,
            verdict_settle_ns: 2_000_000_000,
            last_fault_at: Time::ZERO,
            agreement_fault_at: Time::ZERO,
            entries_since_fault: 0,
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
            let dt = t.0 - from.0;
            if self.agreed.is_none() {
                self.unavailable_ns += dt;
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

    /// The election timeout and the settle window the outcome is judged with (defaults: 150 ms
    /// and 2 s); drivers pass the trial's.
    pub fn set_verdict_window(
        &mut self,
        timeout: std::time::Duration,
        settle: std::time::Duration,
    ) {
        self.verdict_timeout_ns = (timeout.as_nanos() as u64).max(1);
        self.verdict_settle_ns = settle.as_nanos() as u64;
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
        self.leader_at_t0 = self.agreed;
        if self.agreed.is_none() {
            self.lost_after_t0 = true;
        }
        self.counts_at_t0 = self.counts;
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

    /// The agreed leader right now.
    pub fn agreed(&self) -> Option<NodeId> {
        self.agreed
    }

    /// Has the reference instant come?
    pub fn past_reference(&self) -> bool {
        self.crossed_t0
    }

    /// The agreed leader when the reference instant came (`None` before it, or if none).
    pub fn leader_at_reference(&self) -> Option<NodeId> {
        self.leader_at_t0
    }

    /// Since when the current agreement (or disagreement) holds.
    pub fn agreed_since(&self) -> Time {
        self.agreed_since
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
    /// A service endpoint's status (id past `n`) only says whether it is up (see
    /// [`Observer::set_services`]): it never leads and is not a member.
    #[inline]
    pub fn on_status(&mut self, node: NodeId, new: Option<Status>) {
        // Most inputs leave the status as it was: that check stays in the caller.
        if self.status.get(node.index()) == Some(&new) {
            return;
        }
        self.status_changed(node, new);
    }

    fn status_changed(&mut self, node: NodeId, new: Option<Status>) {
        let i = node.index();
        if i >= self.n {
            if let Some(up) = self.service_up.get_mut(i - self.n) {
                *up = new.is_some();
            }
            return;
        }
        let old = self.status[i];
        if old == new {
            return;
        }
        let member = self.in_largest(i);
        if member {
            self.count_member(old, false);
        }
        self.status[i] = new;
        if new.is_none() {
            // A crashed node leaves its component at once, so that agreement among the
            // survivors is judged without it (a follower's crash must not look like a
            // momentary loss of agreement). `topology_changed` recomputes the rest.
            if member {
                self.remove_member(i);
            }
            self.comp[i] = usize::MAX;
        } else if member {
            self.count_member(new, true);
        } else if old.is_none() {
            self.joined.push(node);
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
                    self.entries_since_fault += 1;
                }
            }
            (true, false) => *acting -= 1,
            _ => {}
        }
        if new.is_none() {
            self.paused[i] = false;
        }
        if is_leader {
            let epoch = new.and_then(|s| s.epoch);
            if !was_leader || epoch != old.and_then(|s| s.epoch) {
                self.entries += 1;
                self.node_entry[i] = self.entries;
                if let Some(e) = epoch {
                    self.max_leader_epoch = Some(self.max_leader_epoch.map_or(e, |m| m.max(e)));
                }
            }
        }
        if is_leader {
            let epoch = new.and_then(|s| s.epoch);
            let old_epoch = old.and_then(|s| s.epoch);
            if epoch.is_some() && (!was_leader || epoch != old_epoch) {
                let clash = (0..self.n).any(|j| {
                    j != i && matches!(self.status[j], Some(s) if s.role == Role::Leader && s.epoch == epoch)
                });
                if clash {
                    self.same_epoch += 1;
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
        self.update_agreed();
    }

    /// The protocol runs this many service endpoints after the members (ids `n + 1 ..`; see
    /// `SimConfig::services`). They are not members: they never count in a component's size or
    /// in agreement. But members talk *through* them (every lease member talks only to the
    /// store), so a live service endpoint relays connectivity: two members are in the same
    /// component when a path of links up in both directions joins them, through members or
    /// live service endpoints. With none (every protocol but lease) components are exactly the
    /// members' own.
    pub fn set_services(&mut self, services: u32) {
        self.service_up = vec![false; services as usize];
    }

    /// Which nodes can talk to which changed (a link, a crash or a boot): recompute the
    /// components from `links` and the nodes' liveness. While every link is up this is
    /// incremental (O(1) per node booted since the last call); otherwise a breadth-first search.
    pub fn topology_changed(&mut self, links: &Links) {
        if !links.any_down() && self.one_component {
            // Every link is up and was at the last computation: the live nodes form one
            // component, which only the nodes booted since have to join (a crash has already
            // left it in `on_status`).
            for k in 0..self.joined.len() {
                let i = self.joined[k].index();
                if self.status[i].is_some() && self.comp[i] == usize::MAX {
                    self.comp[i] = 0;
                    self.add_member(i);
                }
            }
            self.joined.clear();
            self.largest = if self.largest_members.is_empty() {
                usize::MAX
            } else {
                0
            };
            #[cfg(debug_assertions)]
            self.check_components(links);
            self.update_agreed();
            return;
        }
        self.recompute_components(links);
        self.update_agreed();
    }

    /// The components, the largest one and its counts, computed from scratch.
    fn recompute_components(&mut self, links: &Links) {
        self.one_component = !links.any_down();
        self.joined.clear();
        let (comp, largest) = self.components_from_scratch(links);
        self.comp = comp;
        self.largest = largest;
        self.largest_members.clear();
        self.naming.iter_mut().for_each(|c| *c = 0);
        self.leaders_in_largest = 0;
        for i in 0..self.n {
            if self.in_largest(i) {
                self.add_member(i);
            }
        }
    }

    /// Each member's component (`usize::MAX` for crashed nodes) and the largest component, from
    /// `links` and the nodes' liveness.
    #[allow(clippy::needless_range_loop)] // node indices address several per-node vectors
    fn components_from_scratch(&self, links: &Links) -> (Vec<usize>, usize) {
        let n = self.n;
        // Members, then service endpoints (relays only: see `set_services`).
        let vertices = n + self.service_up.len();
        let mut live: Vec<bool> = self.status.iter().map(Option::is_some).collect();
        live.extend_from_slice(&self.service_up);
        let mut relay = vec![usize::MAX; self.service_up.len()];
        let mut comp = vec![usize::MAX; n];
        if !links.any_down() {
            for (c, &l) in comp.iter_mut().zip(&live) {
                if l {
                    *c = 0;
                }
            }
        } else {
            // Breadth-first search over links that are up in both directions.
            let mut next = 0;
            let mut stack = Vec::new();
            for s in 0..n {
                if !live[s] || comp[s] != usize::MAX {
                    continue;
                }
                comp[s] = next;
                stack.push(s);
                while let Some(u) = stack.pop() {
                    for v in 0..vertices {
                        let seen = if v < n { comp[v] } else { relay[v - n] };
                        if live[v]
                            && seen == usize::MAX
                            && links.is_up(NodeId::from_index(u), NodeId::from_index(v))
                            && links.is_up(NodeId::from_index(v), NodeId::from_index(u))
                        {
                            if v < n {
                                comp[v] = next;
                            } else {
                                relay[v - n] = next;
                            }
                            stack.push(v);
                        }
                    }
                }
                next += 1;
            }
        }
        // Largest component; ties go to the component holding the highest id, which is the
        // first one met when scanning ids downwards.
        let mut sizes: Vec<usize> = Vec::new();
        for &c in &comp {
            if c != usize::MAX {
                if sizes.len() <= c {
                    sizes.resize(c + 1, 0);
                }
                sizes[c] += 1;
            }
        }
        let mut best = usize::MAX;
        let mut best_size = 0;
        for i in (0..n).rev() {
            let c = comp[i];
            if c != usize::MAX && sizes[c] > best_size {
                best = c;
                best_size = sizes[c];
            }
        }
        (comp, best)
    }

    /// Is node `i` (a member index) in the largest component?
    #[inline]
    fn in_largest(&self, i: usize) -> bool {
        self.largest != usize::MAX && self.comp[i] == self.largest
    }

    /// Count (`add`) or uncount a largest-component member whose status is `status` in
    /// `naming` and `leaders_in_largest`.
    #[inline]
    fn count_member(&mut self, status: Option<Status>, add: bool) {
        let Some(s) = status else { return };
        if let Some(l) = s.leader {
            if l.0 != 0 && l.index() < self.n {
                let c = &mut self.naming[l.index()];
                *c = if add { *c + 1 } else { *c - 1 };
            }
        }
        if s.role == Role::Leader {
            if add {
                self.leaders_in_largest += 1;
            } else {
                self.leaders_in_largest -= 1;
            }
        }
    }

    /// Add node `i` (its `comp` already the largest's) to the largest component's members.
    fn add_member(&mut self, i: usize) {
        self.member_pos[i] = self.largest_members.len() as u32;
        self.largest_members.push(NodeId::from_index(i));
        self.count_member(self.status[i], true);
    }

    /// Remove node `i`, already uncounted, from the largest component's members.
    fn remove_member(&mut self, i: usize) {
        let p = self.member_pos[i] as usize;
        self.largest_members.swap_remove(p);
        if let Some(&moved) = self.largest_members.get(p) {
            self.member_pos[moved.index()] = p as u32;
        }
    }

    fn update_agreed(&mut self) {
        // Every node in the leader role is live and either in the largest component or not.
        // With no largest component (no live node at the last computation) every node's
        // component is "none" too, the largest's: nobody is outside it.
        self.leaders_outside = if self.largest == usize::MAX {
            0
        } else {
            self.leaders_live + self.leaders_paused - self.leaders_in_largest
        };
        let now_agreed = self.compute_agreed();
        #[cfg(debug_assertions)]
        self.check_agreement(now_agreed);
        if self.after_t0() && self.crossed_t0 {
            if now_agreed.is_none() {
                self.lost_after_t0 = true;
            } else if self.lost_after_t0 && self.regained_at.is_none() {
                self.regained_at = Some(self.now);
            }
        }
        if now_agreed != self.agreed {
            if let Some(l) = now_agreed {
                // Becoming the agreed leader again after another node was elected is a new
                // election for the deposed-writer rule (a bully coordinator that re-asserts
                // itself without ever leaving the leader role).
                if self.node_entry[l.index()] < self.entries {
                    self.entries += 1;
                    self.node_entry[l.index()] = self.entries;
                }
            }
            self.agreed = now_agreed;
            self.agreed_since = self.now;
            self.agreement_fault_at = self.last_fault_at;
            if now_agreed.is_some() {
                self.counts_at_agree = self.counts;
            }
        }
    }

    /// The agreed leader: the leader named by some member of the largest component, if it is in
    /// that component, in the leader role, and named by all of its members (O(1): `naming`).
    fn compute_agreed(&self) -> Option<NodeId> {
        let first = *self.largest_members.first()?;
        let leader = self.status[first.index()]?.leader?;
        if leader.0 == 0 || leader.index() >= self.n || self.comp[leader.index()] != self.largest {
            return None;
        }
        if self.status[leader.index()]?.role != Role::Leader {
            return None;
        }
        (self.naming[leader.index()] as usize == self.largest_members.len()).then_some(leader)
    }

    /// The agreed leader and the leaders outside the largest component computed from scratch
    /// (the definitions in the module docs), which the incremental counts must equal.
    #[cfg(any(test, debug_assertions))]
    fn agreement_from_scratch(&self) -> (Option<NodeId>, u32) {
        let members: Vec<usize> = (0..self.n).filter(|&i| self.in_largest(i)).collect();
        let outside = (0..self.n)
            .filter(|&i| {
                self.comp[i] != self.largest
                    && matches!(self.status[i], Some(s) if s.role == Role::Leader)
            })
            .count() as u32;
        let agreed = (|| {
            let first = *members.first()?;
            let leader = self.status[first]?.leader?;
            if leader.0 == 0 || leader.index() >= self.n || !self.in_largest(leader.index()) {
                return None;
            }
            if self.status[leader.index()]?.role != Role::Leader {
                return None;
            }
            members
                .iter()
                .all(|&v| matches!(self.status[v], Some(s) if s.leader == Some(leader)))
                .then_some(leader)
        })();
        (agreed, outside)
    }

    /// Debug builds check every incremental agreement against [`Self::agreement_from_scratch`].
    #[cfg(debug_assertions)]
    fn check_agreement(&self, agreed: Option<NodeId>) {
        let mut members: Vec<usize> = self.largest_members.iter().map(|v| v.index()).collect();
        members.sort_unstable();
        let expected: Vec<usize> = (0..self.n).filter(|&i| self.in_largest(i)).collect();
        assert_eq!(members, expected, "largest component's members");
        assert_eq!(
            (agreed, self.leaders_outside),
            self.agreement_from_scratch(),
            "incremental agreement"
        );
    }

    /// Debug builds check the incremental components against a from-scratch computation.
    #[cfg(debug_assertions)]
    fn check_components(&self, links: &Links) {
        let (comp, largest) = self.components_from_scratch(links);
        assert_eq!(
            (&self.comp, self.largest),
            (&comp, largest),
            "incremental components"
        );
    }

    /// A fault action fired (or was skipped: [`Applied::Skipped`] is counted).
    pub fn on_fault(&mut self, applied: Applied) {
        if matches!(applied, Applied::Skipped(_)) {
            self.faults_skipped += 1;
        } else if !matches!(applied, Applied::Resume(_)) {
            self.last_fault_at = self.now;
            self.entries_since_fault = 0;
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
            self.update_agreed();
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
    /// leader role, or became the agreed leader again after someone else had been elected.
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

    /// The verdict at `end` (see the module docs).
    fn outcome(&self, end: Time, converged: bool) -> (Outcome, Option<u32>) {
        if self.largest_members.len() * 2 <= self.n {
            return (Outcome::MinorityOnly, None);
        }
        let settled =
            converged && end.0.saturating_sub(self.agreed_since.0) >= self.verdict_settle_ns;
        if settled {
            if self.leader_changes == 0 && self.agreed == self.leader_at_t0 {
                return (Outcome::Stable, None);
            }
            let from = self.agreement_fault_at.max(self.t0);
            let took = self.agreed_since.0.saturating_sub(from.0);
            let timeouts = took.div_ceil(self.verdict_timeout_ns);
            return (
                Outcome::RecoveredAfter,
                Some(u32::try_from(timeouts).unwrap_or(u32::MAX)),
            );
        }
        if self.entries_since_fault >= 2 {
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
        let converged = self.agreed.is_some() && !self.budget_exceeded;
        let ms = |d: u64| d as f64 / 1e6;
        let elect_start = self.agreed_since.max(self.t0);
        let window_end = if converged {
            if self.agreed_since <= self.t0 {
                self.counts_at_t0
            } else {
                self.counts_at_agree
            }
        } else {
            self.counts
        };
        let (outcome, recovered_timeouts) = self.outcome(end, converged);
        let metrics = Metrics {
            outcome,
            recovered_timeouts,
            converged,
            leader: if converged { self.agreed } else { None },
            detect_ms: self.detect.map(|t| ms(t.0 - self.t0.0)),
            elect_ms: converged.then(|| ms(elect_start.0 - self.t0.0)),
            unavailable_ms: ms(self.unavailable_ns),
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
            failover_ms: if self.lost_after_t0 {
                self.regained_at.map(|t| ms(t.0 - self.t0.0))
            } else {
                Some(0.0)
            },
            paused_leader_ms: ms(self.paused_leader_ns),
            writes: self.workload.map(|_| WriteMetrics {
                stale_window_ms: ms(self.stale_taken.up_to(end)),
                unavailable_ms: ms((end.0 - self.t0.0).saturating_sub(self.taken.up_to(end))),
                ..self.writes
            }),
            msgs_workload: self.msgs_workload,
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
    //! reference instant (a fault) at 100 ms, a 150 ms election timeout and a 2 s settle window.
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
        /// Node 3 agreed from 10 ms; at 100 ms the fault `fault` fires (the reference).
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
    fn stable_one_agreed_leader_to_the_end() {
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
        for k in 0..6 {
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
    fn an_agreement_shorter_than_the_settle_window_is_not_settled() {
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

    #[test]
    fn minority_only_when_no_connected_majority_is_left() {
        let mut t = Trial::new(Applied::Heal);
        for a in 1..=3 {
            for b in 1..=3 {
                t.links.set(NodeId(a), NodeId(b), false);
            }
        }
        t.o.topology_changed(&t.links);
        let m = t.finish(5000);
        assert_eq!(m.outcome, Outcome::MinorityOnly);
        // A star is connected: the hub joins the others, so a majority exists.
        let mut t = Trial::new(Applied::Heal);
        for (a, b) in [(1, 3), (3, 1)] {
            t.links.set(NodeId(a), NodeId(b), false);
        }
        t.o.topology_changed(&t.links);
        t.at(200, 1, Role::Candidate, None);
        let m = t.finish(5000);
        assert_eq!(m.outcome, Outcome::NoLeader);
    }

    /// One step of a random observation sequence (node numbers are reduced modulo the size).
    #[derive(Clone, Debug)]
    enum Step {
        Status(u32, u8, Option<u32>, Option<u64>),
        Crash(u32),
        /// A boot as the drivers report it: a status, then the topology.
        Boot(u32, u8, Option<u32>),
        Service(u32, bool),
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
            1 => (0u32..2, any::<bool>()).prop_map(|(a, up)| Step::Service(a, up)),
            1 => (0u32..9, 0u32..9).prop_map(|(a, b)| Step::LinkDown(a, b)),
            1 => Just(Step::Heal),
            1 => Just(Step::Topology),
            1 => (0u32..8, any::<bool>()).prop_map(|(a, p)| Step::Pause(a, p)),
        ]
    }

    proptest::proptest! {
        /// The incremental components, agreement and count of leaders outside the largest
        /// component equal their from-scratch computation after every step of random sequences
        /// of statuses, crashes, boots, link cuts, heals and pauses.
        #[test]
        fn incremental_agreement_equals_from_scratch(
            n in 1u32..7,
            services in 0u32..2,
            steps in proptest::collection::vec(step(), 1..120),
        ) {
            let mut o = Observer::new(n, Time(50 * MS), false);
            o.set_services(services);
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
                    Step::Service(a, up) => {
                        if services > 0 {
                            let st = up.then_some(Status::FOLLOWER_NO_LEADER);
                            o.on_status(NodeId(n + 1 + a % services), st);
                            o.topology_changed(&links);
                        }
                    }
                    Step::LinkDown(a, b) => {
                        links.set(NodeId(a % total + 1), NodeId(b % total + 1), false);
                    }
                    Step::Heal => links.heal(),
                    Step::Topology => {
                        o.topology_changed(&links);
                        let (comp, largest) = o.components_from_scratch(&links);
                        proptest::prop_assert_eq!((&o.comp, o.largest), (&comp, largest));
                    }
                    Step::Pause(a, p) => {
                        let id = NodeId(a % n + 1);
                        let f = if p { Applied::Pause(id, Time::ZERO) } else { Applied::Resume(id) };
                        o.on_fault(f);
                    }
                }
                proptest::prop_assert_eq!(
                    (o.agreed, o.leaders_outside),
                    o.agreement_from_scratch()
                );
                let mut members: Vec<usize> =
                    o.largest_members.iter().map(|v| v.index()).collect();
                members.sort_unstable();
                let expected: Vec<usize> = (0..n as usize).filter(|&i| o.in_largest(i)).collect();
                proptest::prop_assert_eq!(members, expected);
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
