//! The bully's binary encoding ([`election_core::Wire`]), for drivers on a real network.
//!
//! Layout, exactly [`Message::wire_size`] bytes:
//!
//! ```text
//! [tag: u8][check: u32][epoch: u64 if present][stamp: u64 if present]
//! ```
//!
//! * `tag`: the kind in the low nibble (0 ELECTION, 1 OK, 2 ACK, 3 COORDINATOR, 4 HEARTBEAT,
//!   5 HEARTBEAT_ACK, 6 RESIGN), bit 4 set when an epoch follows, bit 5 set when an optional stamp
//!   follows (ELECTION and HEARTBEAT; ACK and HEARTBEAT_ACK always carry their stamp). The
//!   option set is fixed per cluster, but the flags make each datagram self-describing, so a
//!   decoder needs no configuration and a 13-byte ELECTION is never ambiguous.
//! * `check`: the four bytes `wire_size` counts for the sender's id. A real-network driver
//!   carries the sender in its own datagram header (where it is checked against the source
//!   address), so the encoding uses them for an FNV-1a checksum of the other bytes: a datagram
//!   that is not a bully message (another protocol's, or garbage) is rejected rather than
//!   misread.
//! * integers are big-endian; times are nanoseconds.
//! * an epoch above [`MAX_WIRE_EPOCH`](crate::MAX_WIRE_EPOCH) (2^48) is invalid: no cluster
//!   reaches it, and a forged one near 2^64 would be adopted by every node it reached, leaving
//!   the next coordinator no epoch to declare in.

use election_core::{Message, Time, Wire, WireError, WireReader};

use crate::message::BullyMsg;

const EPOCH: u8 = 0x10;
const STAMP: u8 = 0x20;
const KIND_MASK: u8 = 0x0f;

/// FNV-1a (32-bit) over the tag and the fields.
fn check(tag: u8, fields: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in std::iter::once(&tag).chain(fields) {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

impl BullyMsg {
    fn kind_tag(&self) -> u8 {
        match self {
            BullyMsg::Election { .. } => 0,
            BullyMsg::Ok { .. } => 1,
            BullyMsg::Ack { .. } => 2,
            BullyMsg::Coordinator { .. } => 3,
            BullyMsg::Heartbeat { .. } => 4,
            BullyMsg::HeartbeatAck { .. } => 5,
            BullyMsg::Resign { .. } => 6,
        }
    }

    /// The optional stamp (ELECTION, HEARTBEAT) or the mandatory one (ACK, HEARTBEAT_ACK).
    fn stamp(&self) -> Option<Time> {
        match *self {
            BullyMsg::Election { stamp, .. } | BullyMsg::Heartbeat { stamp, .. } => stamp,
            BullyMsg::Ack { stamp, .. } | BullyMsg::HeartbeatAck { stamp, .. } => Some(stamp),
            BullyMsg::Ok { .. } | BullyMsg::Coordinator { .. } | BullyMsg::Resign { .. } => None,
        }
    }
}

impl Wire for BullyMsg {
    fn encode(&self, out: &mut Vec<u8>) {
        let epoch = self.epoch();
        let stamp = self.stamp();
        let mut tag = self.kind_tag();
        if epoch.is_some() {
            tag |= EPOCH;
        }
        let optional_stamp = matches!(self, BullyMsg::Election { .. } | BullyMsg::Heartbeat { .. });
        if optional_stamp && stamp.is_some() {
            tag |= STAMP;
        }
        let mut fields = [0u8; 16];
        let mut len = 0;
        for v in [epoch, stamp.map(|t| t.0)].into_iter().flatten() {
            fields[len..len + 8].copy_from_slice(&v.to_be_bytes());
            len += 8;
        }
        out.push(tag);
        out.extend_from_slice(&check(tag, &fields[..len]).to_be_bytes());
        out.extend_from_slice(&fields[..len]);
    }

    fn decode(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = WireReader::new(bytes);
        let tag = r.u8()?;
        let sum = r.u32()?;
        let kind = tag & KIND_MASK;
        if kind > 6 || tag & !(KIND_MASK | EPOCH | STAMP) != 0 {
            return Err(WireError::UnknownTag(tag));
        }
        let has_stamp_flag = tag & STAMP != 0;
        if has_stamp_flag && !matches!(kind, 0 | 4) {
            return Err(WireError::UnknownTag(tag));
        }
        let fields = bytes.get(5..).unwrap_or(&[]);
        let epoch = if tag & EPOCH != 0 {
            Some(r.u64()?)
        } else {
            None
        };
        let stamp = match kind {
            0 | 4 if has_stamp_flag => Some(Time(r.u64()?)),
            2 | 5 => Some(Time(r.u64()?)),
            _ => None,
        };
        r.finish()?;
        if check(tag, fields) != sum {
            return Err(WireError::Invalid("checksum"));
        }
        if epoch.is_some_and(|e| e > crate::MAX_WIRE_EPOCH) {
            return Err(WireError::Invalid(
                "epoch above 2^48, which no cluster reaches (MAX_WIRE_EPOCH)",
            ));
        }
        let msg = match kind {
            0 => BullyMsg::Election { epoch, stamp },
            1 => BullyMsg::Ok { epoch },
            2 => BullyMsg::Ack {
                epoch,
                stamp: stamp.unwrap_or_default(),
            },
            3 => BullyMsg::Coordinator { epoch },
            6 => BullyMsg::Resign { epoch },
            4 => BullyMsg::Heartbeat { epoch, stamp },
            _ => BullyMsg::HeartbeatAck {
                epoch,
                stamp: stamp.unwrap_or_default(),
            },
        };
        debug_assert_eq!(msg.wire_size(), bytes.len());
        Ok(msg)
    }
}
