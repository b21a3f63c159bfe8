//! The ring's messages and timers.

use election_core::{Message, MsgCategory, NodeId, TimerKind};

/// The hop-layer header that ELECTION and ELECTED carry when `hop_acks` is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hop {
    /// The sender's hop number, echoed by the receiver's ACK.
    pub seq: u32,
    /// The instance of the message: its originator (the candidate or the leader) numbers
    /// every candidacy and announcement it starts with an increasing number (its
    /// incarnation in the high 32 bits, a counter in the low 32), and forwarders keep the
    /// number. A node passes on only instances newer than any it handled from the same
    /// originator, so a second copy (made by the network, or by a sender that skipped a
    /// successor whose ACK was merely late or lost) or a superseded candidacy stops there.
    pub round: u64,
}

/// A message of the ring protocol.
///
/// Wire encoding (what [`Message::wire_size`] counts): a 1-byte tag, node ids and numbers as
/// `u32`; with `hop_acks` on, ELECTION and ELECTED carry the 12-byte [`Hop`] header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingMsg {
    /// `ELECTION(id)`: the largest id this copy has seen on its way around the ring
    /// (category [`MsgCategory::Election`]).
    Election {
        /// The candidate carried.
        id: NodeId,
        /// The hop header (`None` without `hop_acks`).
        hop: Option<Hop>,
    },
    /// `ELECTED(leader)`: the announcement travelling once around the ring
    /// (category [`MsgCategory::Leader`]).
    Elected {
        /// The elected leader.
        leader: NodeId,
        /// The hop header (`None` without `hop_acks`).
        hop: Option<Hop>,
    },
    /// `ACK(seq)`: the receiver of ELECTION or ELECTED acknowledges the hop to its sender
    /// (category [`MsgCategory::Reply`]; only with `hop_acks`).
    Ack {
        /// The acknowledged hop number ([`Hop::seq`]).
        seq: u32,
    },
    /// `LEAVING(leader)`: a leader about to be stopped on purpose tells its successor to
    /// start an election now, one it does not compete in (category
    /// [`MsgCategory::Election`]): the leader's departure announced instead of detected.
    Leaving {
        /// The leaving leader.
        leader: NodeId,
    },
    /// `HEARTBEAT(leader)`: sent by the leader directly to every node every
    /// `timing.heartbeat` (category [`MsgCategory::Heartbeat`]).
    Heartbeat {
        /// The sender, who believes it leads.
        leader: NodeId,
    },
}

impl Message for RingMsg {
    fn category(&self) -> MsgCategory {
        match self {
            RingMsg::Election { .. } | RingMsg::Leaving { .. } => MsgCategory::Election,
            RingMsg::Elected { .. } => MsgCategory::Leader,
            RingMsg::Ack { .. } => MsgCategory::Reply,
            RingMsg::Heartbeat { .. } => MsgCategory::Heartbeat,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            RingMsg::Election { .. } => "ELECTION",
            RingMsg::Elected { .. } => "ELECTED",
            RingMsg::Ack { .. } => "ACK",
            RingMsg::Heartbeat { .. } => "HEARTBEAT",
            RingMsg::Leaving { .. } => "LEAVING",
        }
    }

    fn wire_size(&self) -> usize {
        let hop = |h: &Option<Hop>| if h.is_some() { 12 } else { 0 };
        match self {
            RingMsg::Election { hop: h, .. } | RingMsg::Elected { hop: h, .. } => 1 + 4 + hop(h),
            RingMsg::Ack { .. } | RingMsg::Heartbeat { .. } | RingMsg::Leaving { .. } => 1 + 4,
        }
    }
}

/// The ring's timers (one pending instance of each per node).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RingTimer {
    /// The failure detector: a follower suspects its leader (or the lack of one) when it
    /// fires. Armed for `detect_timeout + U[0, detect_jitter]` after every sign of life.
    Detect,
    /// The leader's heartbeat period.
    Heartbeat,
    /// The earliest deadline among the hops still waiting for an ACK.
    Hop,
    /// The election bound ([`crate::RingConfig::restart_bound`]) of a participant.
    Restart,
}

impl TimerKind for RingTimer {
    const COUNT: usize = 4;

    fn index(self) -> usize {
        self as usize
    }

    fn is_failure_detector(self) -> bool {
        matches!(self, RingTimer::Detect)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_categories_and_sizes() {
        let e = RingMsg::Election {
            id: NodeId(3),
            hop: None,
        };
        assert_eq!(
            (e.kind(), e.category(), e.wire_size()),
            ("ELECTION", MsgCategory::Election, 5)
        );
        let e = RingMsg::Elected {
            leader: NodeId(3),
            hop: Some(Hop { seq: 7, round: 1 }),
        };
        assert_eq!(
            (e.kind(), e.category(), e.wire_size()),
            ("ELECTED", MsgCategory::Leader, 17)
        );
        let a = RingMsg::Ack { seq: 1 };
        assert_eq!(
            (a.kind(), a.category(), a.wire_size()),
            ("ACK", MsgCategory::Reply, 5)
        );
        let h = RingMsg::Heartbeat { leader: NodeId(1) };
        assert_eq!(
            (h.kind(), h.category(), h.wire_size()),
            ("HEARTBEAT", MsgCategory::Heartbeat, 5)
        );
    }

    #[test]
    fn timer_table() {
        let all = [
            RingTimer::Detect,
            RingTimer::Heartbeat,
            RingTimer::Hop,
            RingTimer::Restart,
        ];
        for (i, t) in all.iter().enumerate() {
            assert_eq!(t.index(), i);
            assert_eq!(t.is_failure_detector(), i == 0);
        }
        assert_eq!(RingTimer::COUNT, all.len());
    }
}
