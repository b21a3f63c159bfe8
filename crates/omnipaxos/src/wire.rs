//! The library's serde messages as bytes: `bincode` 1.x with fixed-width little-endian
//! integers, a size limit, and trailing bytes refused. Every field of the library's messages is
//! an integer, a bool, an option, an enum tag or a vector, each of which bincode decodes
//! strictly (a bool byte other than 0/1, an option tag other than 0/1 or an unknown variant
//! index is an error), so a decoding that succeeds re-encodes to the same bytes.

use bincode::Options;
use election_core::{NodeId, Wire, WireError};
use omnipaxos::messages::Message as LibMessage;

use crate::node::{OmniEntry, OmniMsg};

/// The largest encoding accepted or produced: a UDP datagram's payload.
pub const MAX_WIRE: u64 = 65_507;

/// The highest ballot round (`Ballot::n`) the decoder accepts and a node sends: 2^31 − 1.
/// One bound for both, so that every ballot a node sends, its peers accept (issue 47: one
/// forged Prepare with a round of 2^31 or more wedged a 3-node cluster). It also keeps the
/// library's unchecked `n + 1` inside a `u32` and the packed epoch (`n << 32 | pid`) below
/// 2^63. No cluster gets near it (a round per election); forged rounds are kept out by the
/// live driver's authentication.
pub const MAX_BALLOT: u32 = (1 << 31) - 1;

fn options() -> impl Options {
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_little_endian()
        .with_limit(MAX_WIRE)
        .reject_trailing_bytes()
}

/// The encoding's length (0 for a message past [`MAX_WIRE`], which no driver can send; the
/// library's messages here stay far below it).
pub(crate) fn size(m: &OmniMsg) -> usize {
    options().serialized_size(&m.0).map_or(0, |n| n as usize)
}

/// The encoding (empty past [`MAX_WIRE`]).
pub(crate) fn to_bytes(m: &OmniMsg) -> Vec<u8> {
    options().serialize(&m.0).unwrap_or_default()
}

impl Wire for OmniMsg {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&to_bytes(self));
    }

    fn decode(bytes: &[u8]) -> Result<Self, WireError> {
        use bincode::ErrorKind;
        match options().deserialize::<LibMessage<OmniEntry>>(bytes) {
            Ok(m) => {
                let m = OmniMsg(m);
                let (from, to) = m.ends();
                if from == 0 || to == 0 || from > u32::MAX as u64 || to > u32::MAX as u64 {
                    return Err(WireError::Invalid("node id 0 or past u32"));
                }
                if !m.ballots_within_bound() {
                    return Err(WireError::Invalid(
                        "ballot round above 2^31 - 1, which no node sends (MAX_BALLOT)",
                    ));
                }
                Ok(m)
            }
            Err(e) => Err(match *e {
                ErrorKind::Io(ref io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
                    WireError::Truncated
                }
                ErrorKind::Custom(ref s) if s.contains("trailing bytes") => {
                    WireError::Trailing(trailing(bytes))
                }
                ErrorKind::SizeLimit => WireError::Invalid("message past the size limit"),
                _ => WireError::Invalid("not an Omni-Paxos message"),
            }),
        }
    }

    /// The sender the library's message names in its own `from` field (the transport's
    /// sender must match it, which the node checks along with every ballot's pid).
    fn named_node(&self) -> Option<NodeId> {
        let (from, _) = self.ends();
        Some(NodeId(from as u32))
    }
}

/// How many bytes follow the first message in `bytes` (for the error only).
fn trailing(bytes: &[u8]) -> usize {
    let lenient = bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_little_endian()
        .with_limit(MAX_WIRE)
        .allow_trailing_bytes();
    lenient
        .deserialize::<LibMessage<OmniEntry>>(bytes)
        .ok()
        .map(|m| bytes.len().saturating_sub(size(&OmniMsg(m))))
        .unwrap_or(0)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use election_core::{wire_contract, Message};
    use omnipaxos::ballot_leader_election::Ballot;
    use omnipaxos::messages::ballot_leader_election::{
        BLEMessage, HeartbeatMsg, HeartbeatReply, HeartbeatRequest,
    };
    use omnipaxos::messages::sequence_paxos::{
        AcceptDecide, Accepted, Decide, PaxosMessage, PaxosMsg, Prepare, PrepareReq,
    };

    fn b(n: u32, pid: u64) -> Ballot {
        Ballot::with(1, n, 0, pid)
    }

    fn paxos(msg: PaxosMsg<OmniEntry>) -> OmniMsg {
        OmniMsg(LibMessage::SequencePaxos(PaxosMessage {
            from: 2,
            to: 3,
            msg,
        }))
    }

    fn samples() -> Vec<OmniMsg> {
        vec![
            OmniMsg(LibMessage::BLE(BLEMessage {
                from: 1,
                to: 2,
                msg: HeartbeatMsg::Request(HeartbeatRequest { round: 7 }),
            })),
            OmniMsg(LibMessage::BLE(BLEMessage {
                from: 2,
                to: 1,
                msg: HeartbeatMsg::Reply(HeartbeatReply {
                    round: 7,
                    ballot: b(1, 2),
                    leader: b(3, 5),
                    happy: true,
                }),
            })),
            paxos(PaxosMsg::PrepareReq(PrepareReq { n: b(2, 4) })),
            paxos(PaxosMsg::Prepare(Prepare {
                n: b(2, 4),
                decided_idx: 3,
                n_accepted: b(1, 5),
                accepted_idx: 4,
            })),
            paxos(PaxosMsg::AcceptDecide(AcceptDecide {
                n: b(2, 4),
                seq_num: Default::default(),
                decided_idx: 3,
                entries: vec![OmniEntry { node: 4, seq: 0 }, OmniEntry { node: 4, seq: 1 }],
            })),
            paxos(PaxosMsg::Accepted(Accepted {
                n: b(2, 4),
                accepted_idx: 5,
            })),
            paxos(PaxosMsg::Decide(Decide {
                n: b(2, 4),
                seq_num: Default::default(),
                decided_idx: 5,
            })),
        ]
    }

    /// Every ballot round a node may send decodes; a round past [`MAX_BALLOT`] (the issue's
    /// forged 2^31, and 2^32 − 1 whose `n + 1` overflows) is refused in every message that
    /// carries a ballot.
    #[test]
    fn ballot_rounds_past_the_ceiling_are_refused() {
        let prepare = |n: u32| {
            paxos(PaxosMsg::Prepare(Prepare {
                n: b(n, 2),
                decided_idx: 0,
                n_accepted: b(1, 2),
                accepted_idx: 0,
            }))
        };
        let reply = |n: u32| {
            OmniMsg(LibMessage::BLE(BLEMessage {
                from: 2,
                to: 1,
                msg: HeartbeatMsg::Reply(HeartbeatReply {
                    round: 1,
                    ballot: b(1, 2),
                    leader: b(n, 2),
                    happy: true,
                }),
            }))
        };
        for m in [prepare(MAX_BALLOT), reply(MAX_BALLOT)] {
            assert_eq!(OmniMsg::decode(&to_bytes(&m)).as_ref(), Ok(&m));
        }
        for n in [MAX_BALLOT + 1, u32::MAX] {
            for m in [prepare(n), reply(n)] {
                assert!(
                    matches!(OmniMsg::decode(&to_bytes(&m)), Err(WireError::Invalid(_))),
                    "{m:?}"
                );
            }
        }
    }

    #[test]
    fn the_wire_contract_holds() {
        let all = samples();
        wire_contract::round_trips(&all);
        wire_contract::rejects_truncated_and_extended(&all);
        let kinds: Vec<&str> = all.iter().map(|m| m.kind()).collect();
        assert_eq!(
            kinds,
            [
                "HB_REQUEST",
                "HB_REPLY",
                "PREPARE_REQ",
                "PREPARE",
                "ACCEPT_DECIDE",
                "ACCEPTED",
                "DECIDE"
            ]
        );
    }

    /// Arbitrary bytes decode to an error or to a message that re-encodes to them; a bool
    /// byte of 2 is refused, not read as `true`.
    #[test]
    fn decoding_is_canonical_and_total() {
        let mut bytes = wire_contract::encode(&samples()[1]);
        assert!(wire_contract::canonical::<OmniMsg>(&bytes).is_ok());
        let last = bytes.len() - 1;
        assert_eq!(bytes[last], 1, "the happy flag");
        bytes[last] = 2;
        assert!(OmniMsg::decode(&bytes).is_err());
        // A vector length far past the limit is refused without allocating it.
        let mut huge = wire_contract::encode(&samples()[4]);
        let at = huge.len() - 2 * 12 - 8;
        huge[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(OmniMsg::decode(&huge).is_err());
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for len in 0..200 {
            let noise: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 7) as u8
                })
                .collect();
            wire_contract::canonical::<OmniMsg>(&noise).unwrap();
        }
    }
}
