//! raft-rs's messages: their categories, and their wire encoding (raft-rs's own protobuf).

use election_core::{Message, MsgCategory, Wire, WireError, WireReader};
use protobuf::Message as _;
use raft::eraftpb::{self, MessageType};

/// The largest encoded message accepted or counted: 64 KiB (a UDP datagram's limit). Entries
/// here are empty, so real messages stay far below it.
pub const MAX_WIRE_BYTES: usize = 65_507;

/// The highest term, log term, index or commit the decoder accepts: 2^48, as our Raft's
/// (`election_raft::MAX_WIRE_TERM`). raft-rs adds one to terms and indexes unchecked, so a
/// forged `u64::MAX` would overflow it.
pub const MAX_WIRE_TERM: u64 = 1 << 48;

/// One raft-rs message (`eraftpb::Message`).
///
/// On the wire: a 4-byte big-endian length, then protobuf 2's `write_to_bytes` of the
/// message. Decoding refuses a length that disagrees with the datagram (a truncated or
/// extended message), a payload over [`MAX_WIRE_BYTES`], a protobuf error, an encoding that
/// is not the one this message writes (canonical: re-encoding gives the same bytes), a
/// sender or recipient id 0, and terms, indexes or commits above [`MAX_WIRE_TERM`].
#[derive(Clone, Debug, PartialEq)]
pub struct RaftrsMsg(pub eraftpb::Message);

impl Message for RaftrsMsg {
    fn category(&self) -> MsgCategory {
        use MessageType::*;
        match self.0.msg_type {
            MsgRequestVote | MsgRequestPreVote | MsgTimeoutNow | MsgHup => MsgCategory::Election,
            MsgRequestVoteResponse | MsgRequestPreVoteResponse => MsgCategory::Reply,
            // Appends (which announce a new leader), heartbeats and everything else a leader
            // and its followers exchange to keep its authority.
            _ => MsgCategory::Heartbeat,
        }
    }

    fn kind(&self) -> &'static str {
        use MessageType::*;
        match self.0.msg_type {
            MsgHup => "HUP",
            MsgBeat => "BEAT",
            MsgPropose => "PROPOSE",
            MsgAppend => "APPEND",
            MsgAppendResponse => "APPEND_RESP",
            MsgRequestVote => "REQUEST_VOTE",
            MsgRequestVoteResponse if self.0.reject => "VOTE_DENIED",
            MsgRequestVoteResponse => "VOTE",
            MsgSnapshot => "SNAPSHOT",
            MsgHeartbeat => "HEARTBEAT",
            MsgHeartbeatResponse => "HEARTBEAT_RESP",
            MsgUnreachable => "UNREACHABLE",
            MsgSnapStatus => "SNAP_STATUS",
            MsgCheckQuorum => "CHECK_QUORUM",
            MsgTransferLeader => "TRANSFER_LEADER",
            MsgTimeoutNow => "TIMEOUT_NOW",
            MsgReadIndex => "READ_INDEX",
            MsgReadIndexResp => "READ_INDEX_RESP",
            MsgRequestPreVote => "PRE_VOTE",
            MsgRequestPreVoteResponse if self.0.reject => "PRE_VOTE_DENIED",
            MsgRequestPreVoteResponse => "PRE_VOTE_GRANT",
        }
    }

    fn wire_size(&self) -> usize {
        4 + self.0.compute_size() as usize
    }
}

impl RaftrsMsg {
    /// Why this message is one no node sends, if it is not.
    pub(crate) fn invalid(&self) -> Option<&'static str> {
        let m = &self.0;
        if m.from == 0 || m.to == 0 {
            return Some("node id 0");
        }
        let big = |v: u64| v > MAX_WIRE_TERM;
        if big(m.term) || big(m.log_term) || big(m.index) || big(m.commit) || big(m.reject_hint) {
            return Some("term or index above 2^48");
        }
        if m.entries.iter().any(|e| big(e.term) || big(e.index)) {
            return Some("entry term or index above 2^48");
        }
        None
    }
}

impl Wire for RaftrsMsg {
    fn encode(&self, out: &mut Vec<u8>) {
        // Writing a message to memory fails only past protobuf's 2 GiB limit; such a message
        // is written as its length alone, which no decoder accepts.
        let body = self.0.write_to_bytes().unwrap_or_default();
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        out.extend_from_slice(&body);
    }

    fn decode(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = WireReader::new(bytes);
        let len = r.u32()? as usize;
        if len > MAX_WIRE_BYTES {
            return Err(WireError::Invalid("message longer than 64 KiB"));
        }
        let body = &bytes[4..];
        if body.len() < len {
            return Err(WireError::Truncated);
        }
        if body.len() > len {
            return Err(WireError::Trailing(body.len() - len));
        }
        let m = eraftpb::Message::parse_from_bytes(body)
            .map_err(|_| WireError::Invalid("not a raft-rs protobuf message"))?;
        if m.write_to_bytes().ok().as_deref() != Some(body) {
            return Err(WireError::Invalid("non-canonical protobuf encoding"));
        }
        let m = RaftrsMsg(m);
        match m.invalid() {
            Some(why) => Err(WireError::Invalid(why)),
            None => Ok(m),
        }
    }
}
