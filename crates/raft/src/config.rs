//! The protocol's configuration: timing, the election-timeout range, the two options, the
//! lagging replicas, the voters and the rule sets that real Raft libraries follow ([`Redraw`],
//! [`CheckQuorumEvery`], [`FollowerRule`], [`AppendRule`], [`RepliesRule`], [`LeaderSend`]).

use std::time::Duration;

use election_core::{NodeId, Timing};

/// Configuration shared by every node of one Raft cluster (wrap it in an `Arc`).
///
/// Field names are the names the runner uses for options (`pre_vote`, `check_quorum`).
#[derive(Clone, Debug, PartialEq)]
pub struct RaftConfig {
    /// Shared timing. Only `heartbeat` is read directly (the leader's AppendEntries period);
    /// the election timeout range below defaults to the shared failure-detection window.
    pub timing: Timing,
    /// Lower bound of the election timeout. Also "the election timeout" of CheckQuorum and of
    /// the PreVote leader-contact rule.
    pub timeout_min: Duration,
    /// Upper bound of the election timeout. Equal to `timeout_min` means no randomization.
    pub timeout_max: Duration,
    /// PreVote (thesis §9.6): ask whether a majority would vote before increasing the term.
    pub pre_vote: bool,
    /// CheckQuorum (thesis §6.2): a leader that has not heard from a majority within
    /// `timeout_min` steps down; and, as etcd ties them together, leader stickiness (thesis
    /// §4.2.3): a node that has heard from a current leader within `timeout_min` (or is that
    /// leader) ignores a RequestVote of a higher term instead of adopting the term.
    pub check_quorum: bool,
    /// Lagging replicas: `(node, k)` puts `node`'s log `k ≥ 1` entries behind the leader's
    /// whenever it takes the leader's entries, but never further back than the start of the
    /// leader's term (see the crate docs, "The log"). Each node at most once. Empty by default.
    pub lagging: Vec<(NodeId, u64)>,
    /// The size of the configured cluster (node ids `1..=n`).
    pub n: u32,
    /// Non-voting members: `Some(k)` makes the nodes `1..=k` the **voters** and `k+1..=n`
    /// **learners** (etcd-io/raft's learners, hashicorp/raft's non-voters), which follow the
    /// leader and take its entries but never campaign and never vote; majorities (of votes,
    /// of pre-votes, CheckQuorum's) are of the voters, `k / 2 + 1`. `None` (the default), or
    /// `k >= n`: every node votes, majorities are of `n`. `Some(0)` is refused. See the crate
    /// docs, "Learners".
    pub voters: Option<u32>,
    /// When a fresh election timeout is drawn (default: at every arming).
    pub redraw: Redraw,
    /// How often a CheckQuorum leader checks its majority (default: at the instant it lapses).
    pub check_quorum_every: CheckQuorumEvery,
    /// What a follower does with its election timer (default: reset on every heartbeat).
    pub follower: FollowerRule,
    /// When a leader ships a client entry (default: with the next heartbeat).
    pub append: AppendRule,
    /// Which requests are answered (default: every one, the paper's rule).
    pub replies: RepliesRule,
    /// Whether a leader's messages wait for its own write (default: they do).
    pub leader_send: LeaderSend,
    /// What the election timeout, the leader lease and the CheckQuorum period are counted in
    /// (default: time on the node's clock).
    pub clock: Clock,
}

/// Declares a rule enum with its option names, in one place: the runner's `raft.*` choices
/// and the crate's docs use these names.
macro_rules! rule {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every option name, the default first.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The option's name.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The option called `name`, if any.
            pub fn from_name(name: &str) -> Option<$name> {
                match name {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

rule! {
    /// When a node draws a fresh election timeout from `[timeout_min, timeout_max]`
    /// (`raft.redraw`).
    Redraw {
        /// At every arming: on boot, on every heartbeat from the leader, on granting a vote, at
        /// every (pre-)candidacy. This crate's original rule.
        #[default]
        EveryRearm = "every_rearm",
        /// Once per term and role: etcd-io/raft (`raft.go`: `resetRandomizedElectionTimeout` is
        /// called only from `reset(term)`, which `becomeFollower`, `becomeCandidate` and
        /// `becomeLeader` call; `becomePreCandidate` does not) and tikv/raft-rs (`src/raft.rs`,
        /// `reset` → `reset_randomized_election_timeout`). A heartbeat or a granted vote only
        /// restarts the count (`electionElapsed = 0`) towards the same drawn timeout; the next
        /// draw comes when the node adopts a term or changes role, and `reset(term)` restarts
        /// the count then too: a follower that adopts a higher term (from a RequestVote it may
        /// refuse) waits a whole fresh timeout, where the paper's follower keeps its timer.
        PerTerm = "per_term",
    }
}

rule! {
    /// How a leader with `check_quorum` decides to step down (`raft.check_quorum_every`).
    CheckQuorumEvery {
        /// At the instant `timeout_min` has passed since it last had a majority heard from
        /// (a timer re-armed for that instant). This crate's original rule.
        #[default]
        Rearm = "rearm",
        /// Once per `timeout_min` since it took office: etcd-io/raft (`raft.go`:
        /// `tickHeartbeat` steps `MsgCheckQuorum` whenever `electionElapsed >= electionTimeout`;
        /// `stepLeader` steps down unless `trk.QuorumActive()` and then marks every other
        /// node `RecentActive = false`; only `MsgAppResp`/`MsgHeartbeatResp` set it again) and
        /// tikv/raft-rs (`src/raft.rs`, `tick_heartbeat` → `MsgCheckQuorum`). A leader cut off
        /// just after a check is found out at the second check after: 1 to 2 `timeout_min`
        /// after the cut.
        Timeout = "timeout",
    }
}

rule! {
    /// What a follower's election timer does (`raft.follower`).
    FollowerRule {
        /// The timer restarts, with a fresh timeout, on every valid heartbeat and on granting a
        /// vote (the paper's rule, §5.2). This crate's original rule.
        #[default]
        Reset = "reset",
        /// hashicorp/raft (`raft.go`, `runFollower`): the timer is never reset; it fires every
        /// `randomTimeout(HeartbeatTimeout)` (`util.go`: `HeartbeatTimeout + rand % HeartbeatTimeout`,
        /// here `[timeout_min, timeout_max]`), and the follower campaigns only if its last
        /// contact (a valid AppendEntries, or a vote it granted: `setLastContact` in
        /// `appendEntries` and `requestVote`) is at least `timeout_min` old. And a node that
        /// knows a leader other than the candidate rejects every vote and pre-vote, whatever
        /// its term, without adopting the term (`requestVote`/`requestPreVote`: "rejecting vote
        /// request since we have a leader", checked before the term); it forgets the leader
        /// only when it campaigns.
        Hashicorp = "hashicorp",
    }
}

rule! {
    /// When a leader sends a new client entry to its followers (`raft.append`).
    AppendRule {
        /// With the next heartbeat: the leader's AppendEntries go out every `heartbeat` and
        /// carry whatever the log holds, so followers hear from the leader exactly as often
        /// as every other family's members hear a heartbeat, whatever the workload's rate.
        /// This crate's original rule.
        #[default]
        Heartbeat = "heartbeat",
        /// At once: on every client entry the leader also sends an AppendEntries to every
        /// follower: etcd-io/raft (`raft.go`: `stepLeader` on `MsgProp` → `appendEntry` then
        /// `bcastAppend`) and tikv/raft-rs (`src/raft.rs`, `step_leader` on `MsgPropose` →
        /// `append_entry`, `bcast_append`). The libraries send them before the leader's own
        /// write is durable (a leader's `Ready::messages`, the thesis' §10.2.1); this model
        /// persists first, as before every send, which delays them by one fsync. A follower restarts its election count on each of them, as on a
        /// heartbeat, so under a steady workload it last heard from a crashed leader one
        /// write interval before the crash rather than up to one heartbeat period.
        Immediate = "immediate",
    }
}

rule! {
    /// Which requests a node answers (`raft.replies`).
    RepliesRule {
        /// Every request gets an answer: one of a stale term is refused with the receiver's
        /// term, so the sender adopts it (a stale leader steps down at once; the paper, §5.1:
        /// "if a server receives a request with a stale term number, it rejects the
        /// request"), and with `check_quorum` a pre-vote within the leader lease is refused.
        /// This crate's original rule.
        #[default]
        Paper = "paper",
        /// etcd-io/raft (`raft.go`, `Step`) and tikv/raft-rs (`src/raft.rs`, `step`) stay
        /// silent instead: a message of a stale term is ignored ("ignored a message with lower
        /// term"), except that an append is answered (an empty response of the current term)
        /// when `check_quorum` or `pre_vote` is on; and with `check_quorum` a vote or pre-vote
        /// of a higher term that arrives within the leader lease (`inLease`) is ignored, not
        /// refused. A leader deposed by a term it never hears keeps its role until a
        /// RequestVote of that term reaches it, and a pre-candidate refused by silence asks
        /// again only when its timeout fires.
        Etcd = "etcd",
    }
}

rule! {
    /// Whether a leader's messages leave before its own write is durable (`raft.leader_send`).
    LeaderSend {
        /// After: every message, a leader's included, leaves once the record it depends on
        /// (a new entry, a term) is on stable storage, one fsync after the input that caused
        /// it. This crate's original rule.
        #[default]
        Persisted = "persisted",
        /// Before: a leader sends its AppendEntries at once and writes its own log in
        /// parallel (the thesis, §10.2.1: the leader's entry counts towards a majority only
        /// once it is durable, so this is safe). tikv/raft-rs (`src/raw_node.rs`,
        /// `RawNode::ready`: "Leader can send messages immediately", a leader's `Ready`
        /// carries `messages`, every other role's `persisted_messages`) and etcd's server
        /// (`server/etcdserver/raft.go`, `raftNode.start`: `if islead` the messages are sent
        /// before `storage.Save`). Followers and candidates still write first: a vote, a
        /// new term and an acknowledged entry are durable before anyone hears of them. A new
        /// leader's first AppendEntries reaches its followers one fsync sooner, so after a
        /// failover the cluster has a quorum leader one fsync sooner.
        Parallel = "parallel",
    }
}

rule! {
    /// What a node counts its election timeout, its leader lease and its CheckQuorum period in
    /// (`raft.clock`).
    Clock {
        /// Time on the node's own clock: a timeout drawn in `[timeout_min, timeout_max]` fires
        /// that long after it was armed, and the lease is `timeout_min` since the last contact.
        /// This crate's original rule.
        #[default]
        Time = "time",
        /// Whole ticks of the node's own ticker, as etcd counts them. etcd's server drives
        /// etcd-io/raft with one `Tick` per `--heartbeat-interval` from a Go `time.Ticker` each
        /// member starts at its own boot (etcd-io/etcd `server/etcdserver/raft.go`,
        /// `raftNode.start`: `case <-r.ticker.C: r.tick()`; `newRaftNode`:
        /// `time.NewTicker(heartbeat)`), and etcd-io/raft counts every timeout in those ticks
        /// (`raft.go`):
        ///
        /// - the period is `timing.heartbeat` (etcd's `HeartbeatTick: 1`); each node's ticker
        ///   starts in its own phase ([`election_core::Ticker::start`]) when it boots;
        /// - the election timeout is `E = timeout_min / heartbeat` ticks and the randomized one
        ///   a whole number drawn uniformly from `[E, timeout_max / heartbeat)`, `[E, 2E)` at
        ///   etcd's ratio (both integer divisions, as `ElectionTicks()` in
        ///   `server/embed/config.go`; `resetRandomizedElectionTimeout`: `electionTimeout +
        ///   rand.Intn(electionTimeout)`), drawn when [`Redraw`] says;
        /// - a follower or candidate counts `electionElapsed` up by one per tick and campaigns
        ///   when it reaches the randomized timeout (`tickElection`, `pastElectionTimeout`);
        ///   the count restarts at 0 where this crate re-arms its election timer: on an
        ///   AppendEntries from the leader (`stepFollower`: `r.electionElapsed = 0`), on
        ///   granting a vote (`Step`: "only record real votes", `r.electionElapsed = 0`), at
        ///   every (pre-)candidacy (`tickElection` zeroes it before `MsgHup`) and on a change of
        ///   role or term (`reset`) as [`Redraw`] describes;
        /// - the leader lease of `check_quorum` is `leader known && electionElapsed < E`
        ///   (`Step`, the `m.Term > r.Term` case: `inLease := r.checkQuorum && r.lead != None
        ///   && r.electionElapsed < r.electionTimeout`): a voter whose ticker is behind the
        ///   candidate's ignores a candidate that timed out after exactly `E` ticks ("lease is
        ///   not expired (remaining ticks: 1)");
        /// - the leader sends its AppendEntries on every tick and checks its quorum every `E`
        ///   ticks of its own ticker since it took office (`tickHeartbeat`: `electionElapsed++`
        ///   ... `if r.electionElapsed >= r.electionTimeout { r.electionElapsed = 0; if
        ///   r.checkQuorum { r.Step(MsgCheckQuorum) } }`), so it needs
        ///   [`CheckQuorumEvery::Timeout`];
        /// - PreVote's "heard from a leader within `timeout_min`" is `electionElapsed < E` too.
        ///
        /// hashicorp/raft counts no ticks ([`FollowerRule::Hashicorp`] is refused with it).
        Ticks = "ticks",
    }
}

impl RaftConfig {
    /// The fair defaults for an `n`-node cluster: [`Timing::default()`] (50 ms heartbeats),
    /// election timeouts drawn from `[detect_timeout, detect_timeout + detect_jitter]` =
    /// 150–300 ms (the same window every protocol's failure detector uses, and the range the
    /// Raft paper suggests), PreVote and CheckQuorum off (the paper's basic algorithm, §5.2).
    pub fn new(n: u32) -> RaftConfig {
        RaftConfig::with_timing(n, Timing::default())
    }

    /// Like [`RaftConfig::new`], with the election timeout range derived from `timing`.
    pub fn with_timing(n: u32, timing: Timing) -> RaftConfig {
        RaftConfig {
            timing,
            timeout_min: timing.detect_timeout,
            timeout_max: timing.detect_timeout + timing.detect_jitter,
            pre_vote: false,
            check_quorum: false,
            lagging: Vec::new(),
            n,
            voters: None,
            redraw: Redraw::EveryRearm,
            check_quorum_every: CheckQuorumEvery::Rearm,
            follower: FollowerRule::Reset,
            append: AppendRule::Heartbeat,
            replies: RepliesRule::Paper,
            leader_send: LeaderSend::Persisted,
            clock: Clock::Time,
        }
    }

    /// How many nodes vote: `voters` capped at `n`, or `n` when every node votes.
    pub fn voter_count(&self) -> u32 {
        self.voters.map_or(self.n, |k| k.min(self.n))
    }

    /// Is `node` a voter (one of the `voter_count()` lowest ids), not a learner?
    pub fn is_voter(&self, node: NodeId) -> bool {
        node.0 >= 1 && node.0 <= self.voter_count()
    }

    /// The size of a majority of the voters, `voter_count() / 2 + 1`: what a candidate's
    /// votes, a pre-candidate's pre-votes and a CheckQuorum leader's contacts must reach.
    pub fn quorum(&self) -> u32 {
        election_core::majority(self.voter_count())
    }

    /// Under [`Clock::Ticks`]: the election timeout in whole ticks of `timing.heartbeat`,
    /// `E = timeout_min / heartbeat` (integer division, etcd's `ElectionTicks()`), and the end
    /// of the randomized timeout's half-open range, `timeout_max / heartbeat`, at least `E + 1`
    /// (a timeout is drawn from `[E, end)`; etcd's `[E, 2E)` when `timeout_max = 2 ×
    /// timeout_min`). [`RaftConfig::validate`] guarantees `E >= 1`.
    ///
    /// One departure from plain integer division: a ratio less than 0.6 % below a whole number
    /// counts as that number. Settings written to three significant digits (tune's grid: a
    /// 500 ms timeout at ratio 3 sets a 167 ms heartbeat) would otherwise lose a whole tick
    /// (500 / 167 = 2.994 → 2 ticks, a third shorter than the point); a real etcd flag pair is
    /// whole milliseconds, and one that far from a multiple is unusual.
    pub fn election_ticks(&self) -> (u32, u32) {
        let p = self.timing.heartbeat.as_nanos().max(1);
        let ticks = |d: Duration| {
            (d.as_nanos().saturating_mul(1006) / 1000 / p).min(u128::from(u32::MAX - 1)) as u32
        };
        let e = ticks(self.timeout_min).max(1);
        (e, ticks(self.timeout_max).max(e + 1))
    }

    /// How many entries `node` lags behind the leader's log (0: not lagging).
    pub fn lag(&self, node: NodeId) -> u64 {
        self.lagging
            .iter()
            .find(|&&(id, _)| id == node)
            .map_or(0, |&(_, k)| k)
    }

    /// Checks the configuration; the error names the offending field and its value.
    ///
    /// Besides positivity, Raft's timing requirement (`broadcastTime ≪ electionTimeout`,
    /// §5.6) is enforced in its weakest form: `timing.heartbeat < timeout_min`, without which a
    /// healthy leader cannot keep its followers from timing out.
    pub fn validate(&self) -> Result<(), String> {
        if self.n == 0 {
            return Err("n (0) must be at least 1".into());
        }
        if self.voters == Some(0) {
            return Err("voters (0) must be at least 1 (every node votes unless set)".into());
        }
        if self.timing.heartbeat.is_zero() {
            return Err("timing.heartbeat (0ns) must be positive".into());
        }
        if self.timeout_min.is_zero() {
            return Err("timeout_min (0ns) must be positive".into());
        }
        if self.timeout_max < self.timeout_min {
            return Err(format!(
                "timeout_max ({:?}) must be at least timeout_min ({:?})",
                self.timeout_max, self.timeout_min
            ));
        }
        if self.timing.heartbeat >= self.timeout_min {
            return Err(format!(
                "timing.heartbeat ({:?}) must be shorter than timeout_min ({:?})",
                self.timing.heartbeat, self.timeout_min
            ));
        }
        if self.clock == Clock::Ticks {
            if self.follower == FollowerRule::Hashicorp {
                return Err("clock (ticks) with follower (hashicorp): hashicorp/raft counts time with Go timers, not ticks; use clock = time".into());
            }
            if self.check_quorum && self.check_quorum_every == CheckQuorumEvery::Rearm {
                return Err("clock (ticks) with check_quorum and check_quorum_every (rearm): a leader counting ticks checks its quorum once per election timeout of ticks (etcd-io/raft tickHeartbeat); set check_quorum_every = timeout".into());
            }
        }
        for (i, &(node, k)) in self.lagging.iter().enumerate() {
            if node.0 == 0 || node.0 > self.n {
                return Err(format!(
                    "lagging ({node}:{k}): node {node} is not in the cluster 1..={}",
                    self.n
                ));
            }
            if k == 0 {
                return Err(format!(
                    "lagging ({node}:{k}): a lag must be at least 1 entry"
                ));
            }
            if self.lagging[..i].iter().any(|&(other, _)| other == node) {
                return Err(format!("lagging ({node}:{k}): node {node} is listed twice"));
            }
        }
        Ok(())
    }
}
