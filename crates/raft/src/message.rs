//! Wire messages and timer names.

use election_core::{Message, MsgCategory, TimerKind};

/// A Raft election message. Every message carries a term; the sender is the driver's `from`.
///
/// There is no log in this workbench, so RequestVote carries no `lastLogIndex`/`lastLogTerm`
/// and AppendEntries carries no entries: it is always the empty heartbeat.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RaftMsg {
    /// `REQUEST_VOTE`: a candidate asks for a vote in `term` (category Election).
    RequestVote {
        /// The candidate's (new) term.
        term: u64,
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
    },
    /// `PRE_VOTE_GRANT` or `PRE_VOTE_DENIED` (category Reply).
    PreVoteResp {
        /// When granted, the term asked about (one above the asker's current term); when
        /// denied, the responder's current term.
        term: u64,
        /// Whether the pre-vote was granted.
        granted: bool,
    },
    /// `APPEND_ENTRIES`: the leader's empty heartbeat (category Heartbeat). A new leader's
    /// first heartbeat is also its announcement: Raft has no separate one.
    AppendEntries {
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
            RaftMsg::RequestVote { term }
            | RaftMsg::Vote { term, .. }
            | RaftMsg::PreVote { term }
            | RaftMsg::PreVoteResp { term, .. }
            | RaftMsg::AppendEntries { term }
            | RaftMsg::AppendResp { term, .. } => term,
        }
    }
}

impl Message for RaftMsg {
    fn category(&self) -> MsgCategory {
        match self {
            RaftMsg::RequestVote { .. } | RaftMsg::PreVote { .. } => MsgCategory::Election,
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
        }
    }

    /// A one-byte tag (which also encodes `granted`/`success`) and a u64 term: 9 bytes for
    /// every message. The sender's id is not counted: the transport supplies it as `from`.
    fn wire_size(&self) -> usize {
        1 + 8
    }
}

/// The node's timers. Only [`RaftTimer::Election`] is the failure detector.
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
}

impl TimerKind for RaftTimer {
    const COUNT: usize = 4;

    fn index(self) -> usize {
        self as usize
    }

    fn is_failure_detector(self) -> bool {
        matches!(self, RaftTimer::Election)
    }
}
