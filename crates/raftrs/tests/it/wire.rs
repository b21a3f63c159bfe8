//! raft-rs's protobuf messages on the wire: the shared contract
//! (`election_core::wire_contract`) over every message kind, and refusals of what no node sends.

use election_core::wire_contract::{self, encode};
use election_core::{Wire, WireError};
use election_raftrs::{RaftrsMsg, MAX_WIRE_TERM};
use raft::eraftpb::{Entry, Message, MessageType};

fn msg(t: MessageType, term: u64, index: u64, reject: bool, entries: usize) -> RaftrsMsg {
    let mut m = Message::default();
    m.set_msg_type(t);
    m.from = 2;
    m.to = 3;
    m.term = term;
    m.log_term = term.saturating_sub(1);
    m.index = index;
    m.commit = index / 2;
    m.reject = reject;
    for i in 0..entries {
        m.entries.push(Entry {
            term,
            index: index + 1 + i as u64,
            ..Entry::default()
        });
    }
    RaftrsMsg(m)
}

fn every_message() -> Vec<RaftrsMsg> {
    use MessageType::*;
    let mut all = Vec::new();
    for t in [
        MsgAppend,
        MsgAppendResponse,
        MsgRequestVote,
        MsgRequestVoteResponse,
        MsgHeartbeat,
        MsgHeartbeatResponse,
        MsgRequestPreVote,
        MsgRequestPreVoteResponse,
        MsgTimeoutNow,
    ] {
        for term in [1, 42, MAX_WIRE_TERM] {
            all.push(msg(t, term, 7, false, 0));
            all.push(msg(t, term, 7, true, 0));
            if t == MsgAppend {
                all.push(msg(t, term, 7, false, 3));
            }
        }
    }
    all
}

#[test]
fn every_kind_round_trips_at_its_wire_size() {
    wire_contract::round_trips(&every_message());
}

#[test]
fn truncated_and_extended_messages_are_refused() {
    wire_contract::rejects_truncated_and_extended(&every_message());
}

#[test]
fn what_no_node_sends_is_refused() {
    let mut zero = msg(MessageType::MsgHeartbeat, 3, 1, false, 0);
    zero.0.from = 0;
    assert_eq!(
        RaftrsMsg::decode(&encode(&zero)),
        Err(WireError::Invalid("node id 0"))
    );
    let high = msg(MessageType::MsgRequestVote, MAX_WIRE_TERM + 1, 1, false, 0);
    assert!(matches!(
        RaftrsMsg::decode(&encode(&high)),
        Err(WireError::Invalid(_))
    ));
    // A length over the datagram limit, whatever follows.
    assert!(RaftrsMsg::decode(&[0, 1, 0, 0]).is_err());
    // Valid protobuf that is not this message's own encoding (field 2, `to`, written twice).
    let mut dup = vec![0, 0, 0, 4, 0x10, 1, 0x10, 1];
    assert!(RaftrsMsg::decode(&dup).is_err());
    dup.truncate(4);
    assert!(RaftrsMsg::decode(&dup).is_err());
}

#[test]
fn arbitrary_bytes_never_panic_and_accepted_ones_are_canonical() {
    // A deterministic sweep of short inputs and mutations of real messages.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for m in every_message() {
        let bytes = encode(&m);
        for _ in 0..64 {
            let mut b = bytes.clone();
            let i = (next() as usize) % b.len();
            b[i] ^= (next() & 0xff) as u8;
            wire_contract::canonical::<RaftrsMsg>(&b).unwrap();
        }
    }
    for _ in 0..2000 {
        let len = (next() % 24) as usize;
        let b: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        wire_contract::canonical::<RaftrsMsg>(&b).unwrap();
    }
}

/// What a node sends, its peers accept (issue 47): raft-rs has no term ceiling of its own, so
/// a node at `MAX_WIRE_TERM` would campaign for 2^48 + 1, refused by every peer; the adapter
/// holds such messages back. A node one term below still campaigns, for `MAX_WIRE_TERM`.
#[test]
fn a_node_never_sends_a_term_its_peers_refuse() {
    use election_core::{Action, Io, NodeId, Protocol, Rng, SeedableRng, Time};
    use election_raftrs::{RaftRs, RaftrsConfig, RaftrsTimer, Stable};
    use std::sync::Arc;
    // The terms sent over 100 ticks of a lone follower of a 3-node cluster stored at `term`.
    let sent_from = |term: u64| {
        let cfg = Arc::new(RaftrsConfig::new(3));
        let mut node = RaftRs::new(NodeId(1), cfg);
        let mut rng = Rng::seed_from_u64(3);
        let mut actions: Vec<Action<RaftRs>> = Vec::new();
        let stored = Stable {
            term,
            vote: 0,
            commit: 0,
            terms: vec![],
        };
        node.on_start(
            &mut Io::new(Time::ZERO, &mut rng, &mut actions),
            Some(&stored),
        );
        let mut terms = Vec::new();
        for tick in 1..=100u64 {
            for a in actions.drain(..) {
                if let Action::Send { msg, .. } = a {
                    assert_eq!(RaftrsMsg::decode(&encode(&msg)).as_ref(), Ok(&msg));
                    terms.push(msg.0.term);
                }
            }
            let now = Time(tick * 10_000_000);
            node.on_timer(&mut Io::new(now, &mut rng, &mut actions), RaftrsTimer::Tick);
        }
        terms
    };
    let below = sent_from(MAX_WIRE_TERM - 1);
    assert!(below.contains(&MAX_WIRE_TERM), "{below:?}");
    let at = sent_from(MAX_WIRE_TERM);
    assert!(at.iter().all(|&t| t <= MAX_WIRE_TERM), "{at:?}");
}
