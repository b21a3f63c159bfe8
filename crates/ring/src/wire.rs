//! The ring's binary encoding ([`election_core::Wire`]), for drivers on a real network.
//!
//! Exactly [`Message::wire_size`] bytes: a tag, then big-endian fields (node ids and `seq` as
//! `u32`, `round` as `u64`).
//!
//! | tag | message | fields |
//! |---|---|---|
//! | 1 | `ELECTION` | candidate id, then [`Hop`] (`seq` u32, `round` u64) if tag bit `0x10` is set |
//! | 2 | `ELECTED` | leader id, then [`Hop`] if tag bit `0x10` is set |
//! | 3 | `ACK` | hop `seq` |
//! | 4 | `HEARTBEAT` | leader id |
//! | 5 | `LEAVING` | the leaving leader's id |
//!
//! The hop header is present exactly when the cluster runs with `hop_acks`; the flag makes
//! each datagram self-describing, so a decoder needs no configuration. Node ids are never 0;
//! the decoder cannot know `n`, so [`Wire::named_node`] hands the id to the driver, which
//! refuses one above the cluster's size.

use election_core::{Message, NodeId, Wire, WireError, WireReader};

use crate::message::{Hop, RingMsg};

const HOP: u8 = 0x10;

impl Wire for RingMsg {
    fn encode(&self, out: &mut Vec<u8>) {
        let (tag, first, hop) = match *self {
            RingMsg::Election { id, hop } => (1, id.0, hop),
            RingMsg::Elected { leader, hop } => (2, leader.0, hop),
            RingMsg::Ack { seq } => (3, seq, None),
            RingMsg::Heartbeat { leader } => (4, leader.0, None),
            RingMsg::Leaving { leader } => (5, leader.0, None),
        };
        out.push(if hop.is_some() { tag | HOP } else { tag });
        out.extend_from_slice(&first.to_be_bytes());
        if let Some(h) = hop {
            out.extend_from_slice(&h.seq.to_be_bytes());
            out.extend_from_slice(&h.round.to_be_bytes());
        }
    }

    fn named_node(&self) -> Option<NodeId> {
        match *self {
            RingMsg::Election { id, .. } => Some(id),
            RingMsg::Elected { leader, .. }
            | RingMsg::Heartbeat { leader }
            | RingMsg::Leaving { leader } => Some(leader),
            RingMsg::Ack { .. } => None,
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = WireReader::new(bytes);
        let tag = r.u8()?;
        let with_hop = tag & HOP != 0;
        if with_hop && !matches!(tag & !HOP, 1 | 2) {
            return Err(WireError::UnknownTag(tag));
        }
        let hop = |r: &mut WireReader<'_>| -> Result<Option<Hop>, WireError> {
            Ok(if with_hop {
                Some(Hop {
                    seq: r.u32()?,
                    round: r.u64()?,
                })
            } else {
                None
            })
        };
        let msg = match tag & !HOP {
            1 => {
                let id = r.node()?;
                RingMsg::Election {
                    id,
                    hop: hop(&mut r)?,
                }
            }
            2 => {
                let leader = r.node()?;
                RingMsg::Elected {
                    leader,
                    hop: hop(&mut r)?,
                }
            }
            3 => RingMsg::Ack { seq: r.u32()? },
            4 => RingMsg::Heartbeat { leader: r.node()? },
            5 => RingMsg::Leaving { leader: r.node()? },
            _ => return Err(WireError::UnknownTag(tag)),
        };
        r.finish()?;
        debug_assert_eq!(msg.wire_size(), bytes.len());
        Ok(msg)
    }
}
