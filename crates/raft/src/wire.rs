//! Raft's binary encoding ([`election_core::Wire`]), for drivers on a real network.
//!
//! Every message is exactly [`Message::wire_size`] = 9 bytes: a tag that names the kind and
//! folds in the boolean (`granted`, `success`), then the term as a big-endian u64. The
//! sender's id is not part of the message: the transport supplies it.
//!
//! | tag | message |
//! |---|---|
//! | 1 | `REQUEST_VOTE` |
//! | 2 / 3 | `VOTE` / `VOTE_DENIED` |
//! | 4 | `PRE_VOTE` |
//! | 5 / 6 | `PRE_VOTE_GRANT` / `PRE_VOTE_DENIED` |
//! | 7 | `APPEND_ENTRIES` |
//! | 8 / 9 | `APPEND_RESP` success / failure |
//!
//! Tag 0 is unused, so that a zeroed buffer is never a message. A term above
//! [`MAX_TERM`](crate::MAX_TERM) (that is, `u64::MAX`) is invalid: no node can advance past it.

use election_core::{Message, Wire, WireError, WireReader};

use crate::message::RaftMsg;

impl Wire for RaftMsg {
    fn encode(&self, out: &mut Vec<u8>) {
        let tag = match *self {
            RaftMsg::RequestVote { .. } => 1,
            RaftMsg::Vote { granted, .. } => 3 - granted as u8,
            RaftMsg::PreVote { .. } => 4,
            RaftMsg::PreVoteResp { granted, .. } => 6 - granted as u8,
            RaftMsg::AppendEntries { .. } => 7,
            RaftMsg::AppendResp { success, .. } => 9 - success as u8,
        };
        out.push(tag);
        out.extend_from_slice(&self.term().to_be_bytes());
    }

    fn decode(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = WireReader::new(bytes);
        let tag = r.u8()?;
        let term = r.u64()?;
        r.finish()?;
        let msg = match tag {
            1 => RaftMsg::RequestVote { term },
            2 | 3 => RaftMsg::Vote {
                term,
                granted: tag == 2,
            },
            4 => RaftMsg::PreVote { term },
            5 | 6 => RaftMsg::PreVoteResp {
                term,
                granted: tag == 5,
            },
            7 => RaftMsg::AppendEntries { term },
            8 | 9 => RaftMsg::AppendResp {
                term,
                success: tag == 8,
            },
            other => return Err(WireError::UnknownTag(other)),
        };
        if term > crate::MAX_TERM {
            return Err(WireError::Invalid("term 2^64-1: no term can follow it"));
        }
        debug_assert_eq!(msg.wire_size(), bytes.len());
        Ok(msg)
    }
}
