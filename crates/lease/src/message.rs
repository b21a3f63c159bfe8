//! The lease record, wire messages and timer names.

use std::time::Duration;

use election_core::{Message, MsgCategory, NodeId, Time, TimerKind};

/// The store's single lease record: Kubernetes' `LeaderElectionRecord` (holder identity, lease
/// duration, acquire time, renew time, leader transitions) plus the store's own
/// `resourceVersion`, which every compare-and-swap names.
///
/// `acquire` and `renew` are written by the client from **its own** clock, as client-go does.
/// Under client-go's rule (`expiry = observed`) nobody decides anything from them (candidates
/// use the local time at which they observed the record change): they are there for traces and
/// to make every renewal a visible change. Under `expiry = renew_time` a candidate compares
/// `renew + duration` with its own clock.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Record {
    /// Who holds the lease (`None`: nobody, or released).
    pub holder: Option<NodeId>,
    /// The store's version of the record, bumped by every successful update; in an update
    /// request, the version the writer read (the compare of compare-and-swap).
    pub version: u64,
    /// How many times the holder changed (`leaderTransitions`). The fencing token: the
    /// holder's epoch.
    pub transitions: u64,
    /// The lease duration the holder asks others to wait (`leaseDurationSeconds`).
    pub duration: Duration,
    /// When the holder acquired the lease, on the holder's clock.
    pub acquire: Time,
    /// When the holder last renewed, on the holder's clock.
    pub renew: Time,
}

impl Record {
    /// The record before anyone took the lease.
    pub const EMPTY: Record = Record {
        holder: None,
        version: 0,
        transitions: 0,
        duration: Duration::ZERO,
        acquire: Time::ZERO,
        renew: Time::ZERO,
    };
}

/// What an update asks the store to do; all three are compare-and-swap on the version (with
/// `cas = false`, see the crate docs' "Lease variants").
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Op {
    /// A candidate takes the lease (`ACQUIRE`, category Election).
    Acquire,
    /// The holder renews it (`RENEW`, category Heartbeat).
    Renew,
    /// The holder gives it up (`RELEASE`, category Leader: it tells everyone there is no
    /// holder, as an announcement does).
    Release,
}

/// A lease message. Members talk only to the store; the store only answers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LeaseMsg {
    /// `GET`: a member reads the record (category Heartbeat: it is how a member keeps
    /// watching the holder's liveness, like a follower receiving heartbeats).
    Get,
    /// `RECORD`: the store's answer to a `GET` (category Heartbeat).
    Record(Record),
    /// `ACQUIRE`, `RENEW` or `RELEASE`: replace the record with `record` if the store's
    /// version is still `record.version`.
    Update {
        /// Which kind of update.
        op: Op,
        /// The new record, carrying the version it was read at.
        record: Record,
    },
    /// The store's answer to an update: `<OP>_OK` (applied; `record` is the new record) or
    /// `<OP>_CONFLICT` (not applied; `record` is the current one). Category Reply for
    /// acquire and release, Heartbeat for renew.
    Updated {
        /// The update answered.
        op: Op,
        /// Whether it was applied.
        ok: bool,
        /// The store's record after the update.
        record: Record,
    },
}

/// Encoded size of a [`Record`]: holder u32, version, transitions, duration (ns), acquire
/// (ns), renew (ns) as u64s.
pub const RECORD_BYTES: usize = 4 + 5 * 8;

impl Message for LeaseMsg {
    fn category(&self) -> MsgCategory {
        match self {
            LeaseMsg::Get | LeaseMsg::Record(_) => MsgCategory::Heartbeat,
            LeaseMsg::Update { op, .. } => match op {
                Op::Acquire => MsgCategory::Election,
                Op::Renew => MsgCategory::Heartbeat,
                Op::Release => MsgCategory::Leader,
            },
            LeaseMsg::Updated { op, .. } => match op {
                Op::Renew => MsgCategory::Heartbeat,
                Op::Acquire | Op::Release => MsgCategory::Reply,
            },
        }
    }

    fn kind(&self) -> &'static str {
        match *self {
            LeaseMsg::Get => "GET",
            LeaseMsg::Record(_) => "RECORD",
            LeaseMsg::Update {
                op: Op::Acquire, ..
            } => "ACQUIRE",
            LeaseMsg::Update { op: Op::Renew, .. } => "RENEW",
            LeaseMsg::Update {
                op: Op::Release, ..
            } => "RELEASE",
            LeaseMsg::Updated { op, ok, .. } => match (op, ok) {
                (Op::Acquire, true) => "ACQUIRE_OK",
                (Op::Acquire, false) => "ACQUIRE_CONFLICT",
                (Op::Renew, true) => "RENEW_OK",
                (Op::Renew, false) => "RENEW_CONFLICT",
                (Op::Release, true) => "RELEASE_OK",
                (Op::Release, false) => "RELEASE_CONFLICT",
            },
        }
    }

    /// A one-byte tag (which folds in the op and `ok`), then the record for every message but
    /// `GET`: 1 or 45 bytes. The sender is not counted: the transport supplies it.
    fn wire_size(&self) -> usize {
        match self {
            LeaseMsg::Get => 1,
            _ => 1 + RECORD_BYTES,
        }
    }
}

/// A member's timers. Only [`LeaseTimer::Expire`] is the failure detector. The store has none.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LeaseTimer {
    /// A non-holder's next read of the record, `retry × U[1, 1 + jitter]` after the last
    /// (client-go's `wait.JitterUntil` in `acquire`). Reading is also how a member learns who
    /// holds the lease, so it keeps running when failure detection is switched off.
    Poll,
    /// The failure detector: a lease duration, on the member's own clock, after it last saw
    /// the record change. When it fires the member has noticed that the holder stopped
    /// renewing, and takes the lease at its next read if the record still has not changed.
    /// Swallowed (detection off), the member never takes a lease someone holds.
    Expire,
    /// The holder's next renewal attempt, every `retry` (client-go's `renew` loop).
    Renew,
    /// The holder's renew deadline: `retry + renew_deadline` after its last successful renewal
    /// it stops leading.
    Deadline,
    /// With `on_loss = exit`, the end of the exited process's down time: it starts afresh, as
    /// [`Protocol::on_start`](election_core::Protocol::on_start) does.
    Restart,
}

impl TimerKind for LeaseTimer {
    const COUNT: usize = 5;

    fn index(self) -> usize {
        self as usize
    }

    fn is_failure_detector(self) -> bool {
        matches!(self, LeaseTimer::Expire)
    }
}
