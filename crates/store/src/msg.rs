//! The messages of a lease cluster with a replicated store, and their encoding.
//!
//! | tag | message | bytes |
//! |---|---|---|
//! | 1 | `Client`: a lease message between a member and a store endpoint | 1 + the lease message |
//! | 2 | `Peer`: a Raft message between store endpoints, with the record an `APPEND_ENTRIES` ships (flag byte, then a 46-byte `RECORD`) and the position a successful `APPEND_RESP` acknowledges (two u64s) | 1 + 1 (+ 46) + 16 + the Raft message |
//! | 3 | `Forward`: a request an endpoint forwards to the store's leader, for the member named | 1 + 4 + the lease message |
//! | 4 | `Reply`: the leader's answer to a forwarded request, for the forwarder to relay | 1 + 4 + the lease message |
//!
//! Categories are the inner message's (a forwarded `RENEW` is still a heartbeat); kinds too,
//! except that the two hops through a follower are `FORWARD` and `RELAY`, so that traces show
//! them.

use election_core::{Message, MsgCategory, NodeId, Wire, WireError, WireReader};
use election_lease::{LeaseMsg, Record, RECORD_BYTES};
use election_raft::{LogPos, RaftMsg};

/// A message of a lease cluster with a replicated store.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StoreMsg {
    /// A lease message between a member and a store endpoint.
    Client(LeaseMsg),
    /// A Raft message between store endpoints.
    Peer {
        /// The Raft message.
        raft: RaftMsg,
        /// On an `APPEND_ENTRIES`: the lease record at the position it ships.
        record: Option<Record>,
        /// On a successful `APPEND_RESP`: the position the sender's log now ends at.
        ack: LogPos,
    },
    /// A request a store endpoint forwards to the store's leader on behalf of `client`.
    Forward {
        /// The member that asked.
        client: NodeId,
        /// Its request.
        msg: LeaseMsg,
    },
    /// The leader's answer to a forwarded request, for the forwarder to relay to `client`.
    Reply {
        /// The member that asked.
        client: NodeId,
        /// The answer.
        msg: LeaseMsg,
    },
}

impl Message for StoreMsg {
    fn category(&self) -> MsgCategory {
        match self {
            StoreMsg::Client(m)
            | StoreMsg::Forward { msg: m, .. }
            | StoreMsg::Reply { msg: m, .. } => m.category(),
            StoreMsg::Peer { raft, .. } => raft.category(),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            StoreMsg::Client(m) => m.kind(),
            StoreMsg::Peer { raft, .. } => raft.kind(),
            StoreMsg::Forward { .. } => "FORWARD",
            StoreMsg::Reply { .. } => "RELAY",
        }
    }

    fn wire_size(&self) -> usize {
        match self {
            StoreMsg::Client(m) => 1 + m.wire_size(),
            StoreMsg::Peer { raft, record, .. } => {
                1 + 1 + record.map_or(0, |_| 1 + RECORD_BYTES) + 16 + raft.wire_size()
            }
            StoreMsg::Forward { msg, .. } | StoreMsg::Reply { msg, .. } => 1 + 4 + msg.wire_size(),
        }
    }
}

fn encode_inner<M: Wire>(m: &M, out: &mut Vec<u8>) {
    m.encode(out)
}

impl Wire for StoreMsg {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            StoreMsg::Client(m) => {
                out.push(1);
                encode_inner(m, out);
            }
            StoreMsg::Peer { raft, record, ack } => {
                out.push(2);
                match record {
                    Some(r) => {
                        out.push(1);
                        encode_inner(&LeaseMsg::Record(*r), out);
                    }
                    None => out.push(0),
                }
                out.extend_from_slice(&ack.term.to_be_bytes());
                out.extend_from_slice(&ack.index.to_be_bytes());
                encode_inner(raft, out);
            }
            StoreMsg::Forward { client, msg } | StoreMsg::Reply { client, msg } => {
                out.push(if matches!(self, StoreMsg::Forward { .. }) {
                    3
                } else {
                    4
                });
                out.extend_from_slice(&client.0.to_be_bytes());
                encode_inner(msg, out);
            }
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, WireError> {
        let (&tag, rest) = bytes.split_first().ok_or(WireError::Truncated)?;
        match tag {
            1 => Ok(StoreMsg::Client(LeaseMsg::decode(rest)?)),
            2 => {
                let (&flag, rest) = rest.split_first().ok_or(WireError::Truncated)?;
                let (record, rest) = match flag {
                    0 => (None, rest),
                    1 => {
                        let n = 1 + RECORD_BYTES;
                        if rest.len() < n {
                            return Err(WireError::Truncated);
                        }
                        let (head, tail) = rest.split_at(n);
                        match LeaseMsg::decode(head)? {
                            LeaseMsg::Record(r) => (Some(r), tail),
                            _ => {
                                return Err(WireError::Invalid(
                                    "a shipped record that is not a RECORD",
                                ))
                            }
                        }
                    }
                    _ => return Err(WireError::Invalid("record flag other than 0 or 1")),
                };
                if rest.len() < 16 {
                    return Err(WireError::Truncated);
                }
                let (head, tail) = rest.split_at(16);
                let mut r = WireReader::new(head);
                let ack = LogPos {
                    term: r.u64()?,
                    index: r.u64()?,
                };
                if !ack.is_valid() {
                    return Err(WireError::Invalid(
                        "an acknowledged position no log ends at",
                    ));
                }
                Ok(StoreMsg::Peer {
                    raft: RaftMsg::decode(tail)?,
                    record,
                    ack,
                })
            }
            3 | 4 => {
                if rest.len() < 4 {
                    return Err(WireError::Truncated);
                }
                let (head, tail) = rest.split_at(4);
                let client = WireReader::new(head).node()?;
                let msg = LeaseMsg::decode(tail)?;
                Ok(if tag == 3 {
                    StoreMsg::Forward { client, msg }
                } else {
                    StoreMsg::Reply { client, msg }
                })
            }
            t => Err(WireError::UnknownTag(t)),
        }
    }

    /// The member a forwarded request or answer is for, else what a lease message names. A
    /// Raft message between endpoints names none: its ids are the store group's own (`1..=s`,
    /// endpoint `n + k` is `k`), not members, so a driver must not check them against `n`.
    fn named_node(&self) -> Option<NodeId> {
        match self {
            StoreMsg::Client(m) => m.named_node(),
            StoreMsg::Peer { .. } => None,
            StoreMsg::Forward { client, .. } | StoreMsg::Reply { client, .. } => Some(*client),
        }
    }
}
