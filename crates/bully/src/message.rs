//! The bully's messages and timers.
//!
//! Optional fields are present only when the option that needs them is on, so the wire size
//! of the faithful protocol is not inflated by the fixes: `epoch` under the `epoch` option,
//! `stamp` under the `quorum` option.

use election_core::{Message, MsgCategory, Time, TimerKind};

/// A bully message. The sender's id travels in every message's encoding (4 bytes) but is
/// delivered by the driver as `from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BullyMsg {
    /// ELECTION: "I am holding an election." Sent to every higher id; under `quorum` also to
    /// every lower id as a probe, carrying the election's start time as `stamp`.
    Election {
        /// The sender's epoch (`epoch` option).
        epoch: Option<u64>,
        /// The election's start time, echoed by [`BullyMsg::Ack`] (`quorum` option).
        stamp: Option<Time>,
    },
    /// OK (the paper's answer): "I am alive and higher; I take over." Makes the candidate
    /// yield.
    Ok {
        /// The sender's epoch (`epoch` option).
        epoch: Option<u64>,
    },
    /// ACK (`quorum` only): a lower node's answer to a higher candidate's ELECTION probe. It
    /// counts towards the candidate's majority and does not make it yield.
    Ack {
        /// The sender's epoch (`epoch` option).
        epoch: Option<u64>,
        /// The probed election's start time.
        stamp: Time,
    },
    /// COORDINATOR: "I am the leader." Sent to every lower id on declaring, and to a single
    /// lower node that sends a sitting leader an ELECTION.
    Coordinator {
        /// The leader's epoch (`epoch` option).
        epoch: Option<u64>,
    },
    /// HEARTBEAT: the leader's periodic sign of life, to every other id.
    Heartbeat {
        /// The leader's epoch (`epoch` option).
        epoch: Option<u64>,
        /// The leader's send time, echoed by [`BullyMsg::HeartbeatAck`] (`quorum` option).
        stamp: Option<Time>,
    },
    /// HEARTBEAT_ACK (`quorum` only): a follower's acknowledgement that renews the leader's
    /// check-quorum lease.
    HeartbeatAck {
        /// The follower's epoch (`epoch` option).
        epoch: Option<u64>,
        /// The acknowledged heartbeat's send time.
        stamp: Time,
    },
    /// RESIGN: a coordinator about to be stopped on purpose resigns (category Election: it
    /// asks the others to elect now). They elect without waiting for their failure detectors
    /// and leave the resigning node out until they hear from it again.
    Resign {
        /// The sender's epoch (`epoch` option).
        epoch: Option<u64>,
    },
}

impl BullyMsg {
    /// The epoch the message carries, if any.
    pub fn epoch(&self) -> Option<u64> {
        match *self {
            BullyMsg::Election { epoch, .. }
            | BullyMsg::Ok { epoch }
            | BullyMsg::Ack { epoch, .. }
            | BullyMsg::Coordinator { epoch }
            | BullyMsg::Heartbeat { epoch, .. }
            | BullyMsg::HeartbeatAck { epoch, .. }
            | BullyMsg::Resign { epoch } => epoch,
        }
    }
}

/// Bytes of an optional u64 field in the compact encoding (absent fields cost nothing: the
/// option set is fixed per cluster, so no presence flag is needed).
fn opt<T>(field: &Option<T>) -> usize {
    if field.is_some() {
        8
    } else {
        0
    }
}

impl Message for BullyMsg {
    fn category(&self) -> MsgCategory {
        match self {
            BullyMsg::Election { .. } | BullyMsg::Resign { .. } => MsgCategory::Election,
            BullyMsg::Ok { .. } | BullyMsg::Ack { .. } => MsgCategory::Reply,
            BullyMsg::Coordinator { .. } => MsgCategory::Leader,
            BullyMsg::Heartbeat { .. } | BullyMsg::HeartbeatAck { .. } => MsgCategory::Heartbeat,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            BullyMsg::Election { .. } => "ELECTION",
            BullyMsg::Ok { .. } => "OK",
            BullyMsg::Ack { .. } => "ACK",
            BullyMsg::Coordinator { .. } => "COORDINATOR",
            BullyMsg::Heartbeat { .. } => "HEARTBEAT",
            BullyMsg::HeartbeatAck { .. } => "HEARTBEAT_ACK",
            BullyMsg::Resign { .. } => "RESIGN",
        }
    }

    /// 1-byte tag + 4-byte sender id + 8 bytes per present optional field (epoch, stamp).
    fn wire_size(&self) -> usize {
        let fields = match self {
            BullyMsg::Election { epoch, stamp } | BullyMsg::Heartbeat { epoch, stamp } => {
                opt(epoch) + opt(stamp)
            }
            BullyMsg::Ok { epoch }
            | BullyMsg::Coordinator { epoch }
            | BullyMsg::Resign { epoch } => opt(epoch),
            BullyMsg::Ack { epoch, .. } | BullyMsg::HeartbeatAck { epoch, .. } => opt(epoch) + 8,
        };
        1 + 4 + fields
    }
}

/// The bully's timers. Only [`BullyTimer::Detect`] is the failure detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BullyTimer {
    /// A follower's failure detector: `detect_timeout + U[0, detect_jitter]` after the
    /// leader's last sign of life.
    Detect,
    /// A candidate's `t_elec` wait for OK.
    Elect,
    /// A yielded (or quorum-starved) candidate's `t_coord` wait before starting again.
    Coord,
    /// The leader's heartbeat period.
    Heartbeat,
    /// The listen window of a node rejoining under `rejoin = defer`.
    Listen,
    /// The leader's check-quorum lease (`quorum` option).
    Lease,
}

impl TimerKind for BullyTimer {
    const COUNT: usize = 6;
    fn index(self) -> usize {
        self as usize
    }
    fn is_failure_detector(self) -> bool {
        matches!(self, BullyTimer::Detect)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_sizes_count_only_present_fields() {
        assert_eq!(
            BullyMsg::Election {
                epoch: None,
                stamp: None
            }
            .wire_size(),
            5
        );
        assert_eq!(BullyMsg::Ok { epoch: Some(3) }.wire_size(), 13);
        assert_eq!(
            BullyMsg::Heartbeat {
                epoch: Some(1),
                stamp: Some(Time::ZERO)
            }
            .wire_size(),
            21
        );
        assert_eq!(
            BullyMsg::Ack {
                epoch: None,
                stamp: Time::ZERO
            }
            .wire_size(),
            13
        );
    }

    #[test]
    fn categories_and_kinds() {
        assert_eq!(
            BullyMsg::Coordinator { epoch: None }.category(),
            MsgCategory::Leader
        );
        assert_eq!(BullyMsg::Coordinator { epoch: None }.kind(), "COORDINATOR");
        assert_eq!(
            BullyMsg::Ack {
                epoch: None,
                stamp: Time::ZERO
            }
            .category(),
            MsgCategory::Reply
        );
        let all = [
            BullyTimer::Detect,
            BullyTimer::Elect,
            BullyTimer::Coord,
            BullyTimer::Heartbeat,
            BullyTimer::Listen,
            BullyTimer::Lease,
        ];
        for (i, t) in all.iter().enumerate() {
            assert_eq!(t.index(), i);
            assert_eq!(t.is_failure_detector(), i == 0);
        }
        assert_eq!(all.len(), BullyTimer::COUNT);
    }
}
