//! The ring's messages and timers.

use election_core::{Message, MsgCategory, NodeId, TimerKind};

/// A message of the ring protocol.
///
/// Wire encoding (what [`Message::wire_size`] counts): a 1-byte tag, node ids as `u32`, and,
/// when `hop_acks` is on, a `u32` hop number on ELECTION and ELECTED.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingMsg {
    /// `ELECTION(id)`: the largest id this copy has seen on its way around the ring
    /// (category [`MsgCategory::Election`]).
    Election {
        /// The candidate carried.
        id: NodeId,
        /// The sender's hop number, to be echoed in the ACK (`None` without `hop_acks`).
        hop: Option<u32>,
    },
    /// `ELECTED(leader)`: the announcement travelling once around the ring
    /// (category [`MsgCategory::Leader`]).
    Elected {
        /// The elected leader.
        leader: NodeId,
        /// The sender's hop number, to be echoed in the ACK (`None` without `hop_acks`).
        hop: Option<u32>,
    },
    /// `ACK(hop)`: the receiver of ELECTION or ELECTED acknowledges the hop to its sender
    /// (category [`MsgCategory::Reply`]; only with `hop_acks`).
    Ack {
        /// The acknowledged hop number.
        hop: u32,
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
            RingMsg::Election { .. } => MsgCategory::Election,
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
        }
    }

    fn wire_size(&self) -> usize {
        let hop = |h: &Option<u32>| if h.is_some() { 4 } else { 0 };
        match self {
            RingMsg::Election { hop: h, .. } | RingMsg::Elected { hop: h, .. } => 1 + 4 + hop(h),
            RingMsg::Ack { .. } | RingMsg::Heartbeat { .. } => 1 + 4,
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
            hop: Some(7),
        };
        assert_eq!(
            (e.kind(), e.category(), e.wire_size()),
            ("ELECTED", MsgCategory::Leader, 9)
        );
        let a = RingMsg::Ack { hop: 1 };
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
