//! Wire messages and timer names.

use election_core::{Message, MsgCategory, TimerKind};

/// The position of a log's last entry: its term and its index (`(0, 0)` for the empty log).
///
/// The log is abstract (see the crate docs): only its last entry's position is kept, which is
/// all Raft's election restriction reads. The derived order is exactly the comparison of
/// §5.4.1 ("If the logs have last entries with different terms, then the log with the later
/// term is more up-to-date. If the logs end with the same term, then whichever log is longer
/// is more up-to-date"): the term first, then the index. etcd's `raftLog.isUpToDate` is the
/// same comparison.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct LogPos {
    /// The term of the last entry (0 for the empty log).
    pub term: u64,
    /// The index of the last entry (0 for the empty log; the first entry is index 1).
    pub index: u64,
}

impl LogPos {
    /// The empty log.
    pub const EMPTY: LogPos = LogPos { term: 0, index: 0 };

    /// A position some log can end at: the empty log, or an entry of a term ≥ 1 at an index
    /// ≥ 1 (entries are only created by leaders, whose terms start at 1).
    pub fn is_valid(self) -> bool {
        (self.term == 0) == (self.index == 0)
    }
}

impl std::fmt::Display for LogPos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "(term {}, index {})", self.term, self.index)
    }
}

/// A Raft election message. Every message carries a term; the sender is the driver's `from`.
///
/// The log is abstract (crate docs): RequestVote and PreVote carry the candidate's last log
/// position (`lastLogTerm`/`lastLogIndex` of Figure 2), and AppendEntries carries the position
/// the recipient's log ends at once it holds the entries this message (abstractly) ships.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RaftMsg {
    /// `REQUEST_VOTE`: a candidate asks for a vote in `term` (category Election).
    RequestVote {
        /// The candidate's (new) term.
        term: u64,
        /// The candidate's last log entry (`lastLogTerm`, `lastLogIndex`; §5.4.1).
        last_log: LogPos,
        /// The campaign was started by [`RaftMsg::TimeoutNow`] (a leadership transfer): the
        /// receiver grants it even within its leader lease, which would otherwise make it
        /// ignore the request (thesis §3.10: "servers ignore RequestVote requests within the
        /// minimum election timeout ... unless the request is part of a leadership transfer";
        /// etcd-io/raft `Step`: the vote's context `campaignTransfer` sets `force`;
        /// hashicorp/raft `RequestVoteRequest.LeadershipTransfer`).
        transfer: bool,
    },
    /// `VOTE` when granted, `VOTE_DENIED` otherwise (category Reply). The grant and the
    /// denial are distinct kinds so that a trace shows who granted what.
    Vote {
        /// The voter's current term (equal to the request's term when granted).
        term: u64,
        /// Whether the vote was granted.
        granted: bool,
    },
    /// `PRE_VOTE`: "would you vote for me in `term`?" (category Election). `term` is the
    /// sender's current term + 1; neither side changes its term because of it.
    PreVote {
        /// The term the sender would campaign in.
        term: u64,
        /// The sender's last log entry: pre-votes check up-to-dateness too (thesis §9.6).
        last_log: LogPos,
    },
    /// `PRE_VOTE_GRANT` or `PRE_VOTE_DENIED` (category Reply).
    PreVoteResp {
        /// When granted, the term asked about (one above the asker's current term); when
        /// denied, the responder's current term.
        term: u64,
        /// Whether the pre-vote was granted.
        granted: bool,
    },
    /// `APPEND_ENTRIES`: the leader's heartbeat (category Heartbeat). A new leader's first
    /// heartbeat is also its announcement: Raft has no separate one.
    AppendEntries {
        /// The leader's term.
        term: u64,
        /// Where the recipient's log ends once it has accepted this message: the leader's
        /// last entry, or for a lagging recipient (`RaftConfig::lagging`) an earlier entry of
        /// the leader's log. The entries up to it are taken as shipped with the message.
        log: LogPos,
    },
    /// `TIMEOUT_NOW`: a leader handing over tells the transferee, once it is up to date, to
    /// campaign at once (category Election): thesis §3.10, etcd-io/raft `MsgTimeoutNow`,
    /// hashicorp/raft `TimeoutNowRequest`. The transferee skips PreVote and its election
    /// timeout, and its RequestVotes carry `transfer`.
    TimeoutNow {
        /// The leader's term.
        term: u64,
    },
    /// `APPEND_RESP`: the answer to a heartbeat (category Heartbeat); `success` is false when
    /// the heartbeat's term was stale, and `term` then tells the stale leader the newer term.
    AppendResp {
        /// The responder's current term.
        term: u64,
        /// Whether the heartbeat was accepted.
        success: bool,
    },
}

impl RaftMsg {
    /// The term the message carries.
    pub fn term(&self) -> u64 {
        match *self {
            RaftMsg::RequestVote { term, .. }
            | RaftMsg::Vote { term, .. }
            | RaftMsg::PreVote { term, .. }
            | RaftMsg::PreVoteResp { term, .. }
            | RaftMsg::AppendEntries { term, .. }
            | RaftMsg::TimeoutNow { term }
            | RaftMsg::AppendResp { term, .. } => term,
        }
    }
}

impl Message for RaftMsg {
    fn category(&self) -> MsgCategory {
        match self {
            RaftMsg::RequestVote { .. } | RaftMsg::PreVote { .. } | RaftMsg::TimeoutNow { .. } => {
                MsgCategory::Election
            }
            RaftMsg::Vote { .. } | RaftMsg::PreVoteResp { .. } => MsgCategory::Reply,
            RaftMsg::AppendEntries { .. } | RaftMsg::AppendResp { .. } => MsgCategory::Heartbeat,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            RaftMsg::RequestVote { .. } => "REQUEST_VOTE",
            RaftMsg::Vote { granted: true, .. } => "VOTE",
            RaftMsg::Vote { granted: false, .. } => "VOTE_DENIED",
            RaftMsg::PreVote { .. } => "PRE_VOTE",
            RaftMsg::PreVoteResp { granted: true, .. } => "PRE_VOTE_GRANT",
            RaftMsg::PreVoteResp { granted: false, .. } => "PRE_VOTE_DENIED",
            RaftMsg::AppendEntries { .. } => "APPEND_ENTRIES",
            RaftMsg::AppendResp { .. } => "APPEND_RESP",
            RaftMsg::TimeoutNow { .. } => "TIMEOUT_NOW",
        }
    }

    /// A one-byte tag (which also encodes `granted`/`success`) and a u64 term: 9 bytes; the
    /// messages that carry a log position (`REQUEST_VOTE`, `PRE_VOTE`, `APPEND_ENTRIES`) add
    /// its term and index, two u64s: 25 bytes. The sender's id is not counted: the transport
    /// supplies it as `from`.
    fn wire_size(&self) -> usize {
        match self {
            RaftMsg::RequestVote { .. }
            | RaftMsg::PreVote { .. }
            | RaftMsg::AppendEntries { .. } => 1 + 8 + 16,
            _ => 1 + 8,
        }
    }
}

/// The node's timers. Only [`RaftTimer::Election`] is the failure detector; under
/// [`crate::Clock::Ticks`] [`RaftTimer::Tick`] is the only one armed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RaftTimer {
    /// A follower's election timeout: fires when no valid heartbeat arrived and no vote was
    /// granted for a freshly drawn `U[timeout_min, timeout_max]`. This is the failure detector.
    Election,
    /// A (pre-)candidate's election timeout: the round ended without a winner (split vote or
    /// lost messages), so start a new one. Separate from `Election` so that switching a node's
    /// automatic detection off does not also stop its candidacy from retrying.
    ElectionRetry,
    /// The leader's heartbeat period.
    Heartbeat,
    /// The leader's CheckQuorum deadline: the instant at which it will have gone `timeout_min`
    /// without hearing from a majority, unless someone answers first.
    CheckQuorum,
    /// Under [`crate::Clock::Ticks`], the only timer: one tick of the node's own ticker
    /// ([`election_core::Ticker`], a fixed rate of one per `timing.heartbeat`), which counts
    /// every timeout above in whole ticks. Not a failure detector a scenario can switch off (the
    /// runner skips such scenarios for a Raft counting ticks).
    Tick,
}

impl TimerKind for RaftTimer {
    const COUNT: usize = 5;

    fn index(self) -> usize {
        self as usize
    }

    fn is_failure_detector(self) -> bool {
        matches!(self, RaftTimer::Election)
    }
}
