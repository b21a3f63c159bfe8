//! Raft's binary encoding: every message kind encodes to exactly `wire_size()` (9) bytes and
//! decodes back to itself; any other input is an error, never a panic.

use election_core::{Message, Wire, WireError};
use election_raft::{RaftMsg, MAX_TERM};
use proptest::prelude::*;

/// Every variant, both values of its boolean, and edge terms.
fn every_message() -> Vec<RaftMsg> {
    let mut all = Vec::new();
    for term in [0, 1, 42, MAX_TERM] {
        all.push(RaftMsg::RequestVote { term });
        all.push(RaftMsg::PreVote { term });
        all.push(RaftMsg::AppendEntries { term });
        for b in [true, false] {
            all.push(RaftMsg::Vote { term, granted: b });
            all.push(RaftMsg::PreVoteResp { term, granted: b });
            all.push(RaftMsg::AppendResp { term, success: b });
        }
    }
    all
}

fn encode(m: &RaftMsg) -> Vec<u8> {
    let mut out = Vec::new();
    m.encode(&mut out);
    out
}

#[test]
fn encoding_is_exactly_wire_size_and_round_trips() {
    for m in every_message() {
        let bytes = encode(&m);
        assert_eq!(bytes.len(), m.wire_size(), "{m:?}");
        assert_eq!(RaftMsg::decode(&bytes), Ok(m), "{m:?}");
    }
}

#[test]
fn each_kind_has_its_own_tag() {
    let mut tags: Vec<(u8, &str)> = every_message()
        .iter()
        .map(|m| (encode(m)[0], m.kind()))
        .collect();
    tags.sort();
    tags.dedup();
    assert_eq!(tags.len(), 9, "{tags:?}");
}

#[test]
fn truncated_extended_and_unknown_are_rejected() {
    for m in every_message() {
        let bytes = encode(&m);
        for cut in 0..bytes.len() {
            assert_eq!(RaftMsg::decode(&bytes[..cut]), Err(WireError::Truncated));
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(RaftMsg::decode(&longer), Err(WireError::Trailing(1)));
    }
    for tag in [0u8, 10, 0xff] {
        let mut bytes = vec![tag];
        bytes.extend_from_slice(&[0; 8]);
        assert_eq!(RaftMsg::decode(&bytes), Err(WireError::UnknownTag(tag)));
    }
}

/// A term no node can advance past (2^64 - 1) is rejected for every kind, so a forged datagram
/// cannot push a cluster into a term it can never elect out of.
#[test]
fn a_term_that_cannot_be_advanced_is_invalid() {
    assert_eq!(MAX_TERM, u64::MAX - 1);
    for m in every_message() {
        let mut bytes = encode(&m);
        bytes[1..].copy_from_slice(&u64::MAX.to_be_bytes());
        assert!(
            matches!(RaftMsg::decode(&bytes), Err(WireError::Invalid(_))),
            "{m:?} with term 2^64-1"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Arbitrary bytes: decoding never panics, and whatever it accepts re-encodes to the same
    /// bytes (the encoding is canonical).
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..32)) {
        if let Ok(m) = RaftMsg::decode(&bytes) {
            prop_assert_eq!(encode(&m), bytes);
        }
    }
}
