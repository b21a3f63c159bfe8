//! Raft's binary encoding ([`election_core::Wire`]), for drivers on a real network.
//!
//! Every message is exactly [`Message::wire_size`] bytes: a tag that names the kind and folds
//! in the boolean (`granted`, `success`), then the term as a big-endian u64 (9 bytes); the
//! three messages that carry a log position follow it with the position's term and index,
//! big-endian u64s (25 bytes). The sender's id is not part of the message: the transport
//! supplies it.
//!
//! | tag | message | bytes |
//! |---|---|---|
//! | 1 | `REQUEST_VOTE` (term, last log term, last log index) | 25 |
//! | 2 / 3 | `VOTE` / `VOTE_DENIED` | 9 |
//! | 4 | `PRE_VOTE` (term, last log term, last log index) | 25 |
//! | 5 / 6 | `PRE_VOTE_GRANT` / `PRE_VOTE_DENIED` | 9 |
//! | 7 | `APPEND_ENTRIES` (term, log term, log index) | 25 |
//! | 8 / 9 | `APPEND_RESP` success / failure | 9 |
//! | 10 | `TIMEOUT_NOW` | 9 |
//! | 11 | `REQUEST_VOTE` with `transfer` (term, last log term, last log index) | 25 |
//!
//! Tag 0 is unused, so that a zeroed buffer is never a message. A term above
//! [`MAX_WIRE_TERM`](crate::MAX_WIRE_TERM) (2^48, the nodes' own [`MAX_TERM`](crate::MAX_TERM))
//! is invalid: no node sends one, so every term a node can send decodes. Decoding also rejects, as
//! [`WireError::Invalid`], log positions no node ever sends: half-empty ones (term 0 with an
//! index, or an index 0 with a term), a candidate's last log term not below the term it asks
//! for (its log's terms are at most its current term, which the request's term exceeds), and
//! an AppendEntries log term above the leader's term.

use election_core::{Message, Wire, WireError, WireReader};

use crate::message::{LogPos, RaftMsg};

impl Wire for RaftMsg {
    fn encode(&self, out: &mut Vec<u8>) {
        let (tag, log) = match *self {
            RaftMsg::RequestVote {
                last_log, transfer, ..
            } => (if transfer { 11 } else { 1 }, Some(last_log)),
            RaftMsg::Vote { granted, .. } => (3 - granted as u8, None),
            RaftMsg::PreVote { last_log, .. } => (4, Some(last_log)),
            RaftMsg::PreVoteResp { granted, .. } => (6 - granted as u8, None),
            RaftMsg::AppendEntries { log, .. } => (7, Some(log)),
            RaftMsg::AppendResp { success, .. } => (9 - success as u8, None),
            RaftMsg::TimeoutNow { .. } => (10, None),
        };
        out.push(tag);
        out.extend_from_slice(&self.term().to_be_bytes());
        if let Some(log) = log {
            out.extend_from_slice(&log.term.to_be_bytes());
            out.extend_from_slice(&log.index.to_be_bytes());
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = WireReader::new(bytes);
        let tag = r.u8()?;
        if !(1..=11).contains(&tag) {
            return Err(WireError::UnknownTag(tag));
        }
        let term = r.u64()?;
        let mut log = || -> Result<LogPos, WireError> {
            let pos = LogPos {
                term: r.u64()?,
                index: r.u64()?,
            };
            if pos.is_valid() {
                Ok(pos)
            } else {
                Err(WireError::Invalid("log position: term 0 iff index 0"))
            }
        };
        let msg = match tag {
            1 | 4 | 11 => {
                let last_log = log()?;
                if last_log.term >= term {
                    return Err(WireError::Invalid(
                        "last log term must be below the requested term",
                    ));
                }
                if tag != 4 {
                    RaftMsg::RequestVote {
                        term,
                        last_log,
                        transfer: tag == 11,
                    }
                } else {
                    RaftMsg::PreVote { term, last_log }
                }
            }
            2 | 3 => RaftMsg::Vote {
                term,
                granted: tag == 2,
            },
            5 | 6 => RaftMsg::PreVoteResp {
                term,
                granted: tag == 5,
            },
            7 => {
                let log = log()?;
                if log.term > term {
                    return Err(WireError::Invalid(
                        "AppendEntries log term above the leader's term",
                    ));
                }
                RaftMsg::AppendEntries { term, log }
            }
            10 => RaftMsg::TimeoutNow { term },
            _ => RaftMsg::AppendResp {
                term,
                success: tag == 8,
            },
        };
        if term > crate::MAX_WIRE_TERM {
            return Err(WireError::Invalid(
                "term above 2^48, which no cluster reaches (MAX_WIRE_TERM)",
            ));
        }
        r.finish()?;
        debug_assert_eq!(msg.wire_size(), bytes.len());
        Ok(msg)
    }
}
