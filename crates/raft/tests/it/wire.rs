//! Raft's binary encoding: every message kind encodes to exactly `wire_size()` (9 or 25) bytes
//! and decodes back to itself; any other input, including log positions no node sends, is an
//! error, never a panic.

use election_core::wire_contract::{self, encode};
use election_core::{Message, Wire, WireError};
use election_raft::{LogPos, RaftMsg, MAX_TERM, MAX_WIRE_TERM};
use proptest::prelude::*;

/// Every variant, both values of its boolean, edge terms and edge log positions.
fn every_message() -> Vec<RaftMsg> {
    let mut all = Vec::new();
    for term in [0, 1, 42, MAX_WIRE_TERM] {
        let mut logs = vec![LogPos::EMPTY];
        if term >= 1 {
            logs.push(LogPos { term, index: 1 });
            logs.push(LogPos {
                term,
                index: u64::MAX,
            });
        }
        for log in logs {
            all.push(RaftMsg::AppendEntries { term, log });
            // A candidate's log is of an earlier term than the one it asks for.
            if log.term < term || log == LogPos::EMPTY && term > 0 {
                for transfer in [false, true] {
                    all.push(RaftMsg::RequestVote {
                        term,
                        last_log: log,
                        transfer,
                    });
                }
                all.push(RaftMsg::PreVote {
                    term,
                    last_log: log,
                });
            }
        }
        if term >= 2 {
            let last_log = LogPos {
                term: term - 1,
                index: 7,
            };
            for transfer in [false, true] {
                all.push(RaftMsg::RequestVote {
                    term,
                    last_log,
                    transfer,
                });
            }
            all.push(RaftMsg::PreVote { term, last_log });
        }
        for b in [true, false] {
            all.push(RaftMsg::Vote { term, granted: b });
            all.push(RaftMsg::PreVoteResp { term, granted: b });
            all.push(RaftMsg::AppendResp { term, success: b });
        }
        all.push(RaftMsg::TimeoutNow { term });
    }
    all
}

#[test]
fn encoding_is_exactly_wire_size_round_trips_and_is_distinct() {
    wire_contract::round_trips(&every_message());
}

#[test]
fn each_kind_has_its_own_tag() {
    let mut tags: Vec<(u8, &str)> = every_message()
        .iter()
        .map(|m| (encode(m)[0], m.kind()))
        .collect();
    tags.sort();
    tags.dedup();
    // REQUEST_VOTE has two tags (with and without `transfer`) under one kind.
    assert_eq!(tags.len(), 11, "{tags:?}");
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
    for tag in [0u8, 12, 0xff] {
        let mut bytes = vec![tag];
        bytes.extend_from_slice(&[0; 8]);
        assert_eq!(RaftMsg::decode(&bytes), Err(WireError::UnknownTag(tag)));
    }
}

fn with_log(tag: u8, term: u64, log_term: u64, log_index: u64) -> Vec<u8> {
    let mut bytes = vec![tag];
    bytes.extend_from_slice(&term.to_be_bytes());
    bytes.extend_from_slice(&log_term.to_be_bytes());
    bytes.extend_from_slice(&log_index.to_be_bytes());
    bytes
}

/// Log positions no node sends are rejected: half-empty positions (an entry has a term ≥ 1
/// and an index ≥ 1, the empty log neither), a candidate whose last log term is not below the
/// term it asks for (its log's terms never exceed its current term, which the request's term
/// exceeds), an AppendEntries shipping an entry of a term above the leader's.
#[test]
fn impossible_log_positions_are_rejected() {
    for tag in [1u8, 4, 7, 11] {
        for (lt, li) in [(0, 1), (3, 0)] {
            assert!(
                matches!(
                    RaftMsg::decode(&with_log(tag, 5, lt, li)),
                    Err(WireError::Invalid(_))
                ),
                "tag {tag} ({lt}, {li})"
            );
        }
    }
    for tag in [1u8, 4, 11] {
        assert!(matches!(
            RaftMsg::decode(&with_log(tag, 5, 5, 9)),
            Err(WireError::Invalid(_))
        ));
        assert!(RaftMsg::decode(&with_log(tag, 5, 4, 9)).is_ok());
    }
    assert!(matches!(
        RaftMsg::decode(&with_log(7, 5, 6, 9)),
        Err(WireError::Invalid(_))
    ));
    assert_eq!(
        RaftMsg::decode(&with_log(7, 5, 5, 9)),
        Ok(RaftMsg::AppendEntries {
            term: 5,
            log: LogPos { term: 5, index: 9 }
        })
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Arbitrary bytes: decoding never panics, and whatever it accepts re-encodes to the same
    /// bytes (the encoding is canonical).
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
        prop_assert_eq!(wire_contract::canonical::<RaftMsg>(&bytes), Ok(()));
    }

    /// Well-framed messages with arbitrary fields (the random bytes above rarely reach the
    /// log-carrying kinds): decoding never panics, accepts exactly the valid positions, and
    /// what it accepts re-encodes to the same bytes.
    #[test]
    fn arbitrary_fields_never_panic(
        tag in 0u8..=12,
        term in prop_oneof![
            Just(0u64), Just(1), Just(u64::MAX), Just(MAX_WIRE_TERM), Just(MAX_WIRE_TERM + 1),
            any::<u64>(), 0..=MAX_WIRE_TERM + 1,
        ],
        log_term in prop_oneof![Just(0u64), Just(1), Just(u64::MAX), any::<u64>()],
        log_index in prop_oneof![Just(0u64), Just(1), any::<u64>()],
    ) {
        let bytes = with_log(tag, term, log_term, log_index);
        match RaftMsg::decode(&bytes) {
            Ok(m) => {
                prop_assert!(matches!(tag, 1 | 4 | 7 | 11));
                prop_assert_eq!(encode(&m), bytes);
                let valid = (log_term == 0) == (log_index == 0)
                    && term <= MAX_WIRE_TERM
                    && if tag == 7 { log_term <= term } else { log_term < term };
                prop_assert!(valid);
            }
            Err(WireError::Trailing(16)) => {
                prop_assert!(
                    ((2..=9).contains(&tag) && tag % 3 != 1 || tag == 10) && term <= MAX_WIRE_TERM
                )
            }
            Err(WireError::UnknownTag(t)) => prop_assert!(t == 0 || t == 12),
            // A term no cluster reaches is refused whatever the kind (checked before the
            // trailing bytes).
            Err(WireError::Invalid(_)) => {
                prop_assert!(matches!(tag, 1 | 4 | 7 | 11) || term > MAX_WIRE_TERM)
            }
            Err(e) => prop_assert!(false, "unexpected {e:?}"),
        }
    }
}

/// Every boundary term: up to [`MAX_WIRE_TERM`] (2^48, the nodes' own [`MAX_TERM`]) decodes,
/// so every term a node can send is accepted; above it — 2^48 + 1, 2^64 − 2 and 2^64 − 1,
/// terms no node sends — is refused for every kind.
#[test]
fn terms_no_cluster_reaches_are_invalid() {
    assert_eq!(MAX_WIRE_TERM, 1 << 48);
    assert_eq!(
        MAX_TERM, MAX_WIRE_TERM,
        "what a node sends, its peers accept"
    );
    for m in every_message() {
        for (term, ok) in [
            (MAX_WIRE_TERM - 1, true),
            (MAX_WIRE_TERM, true),
            (MAX_WIRE_TERM + 1, false),
            (u64::MAX - 1, false),
            (u64::MAX, false),
        ] {
            let mut bytes = encode(&m);
            bytes[1..9].copy_from_slice(&term.to_be_bytes());
            let decoded = RaftMsg::decode(&bytes);
            // Lowering a message's term can make its log position impossible: the accepted
            // side is checked on the messages of term 2^48, lowered only where no log follows.
            if ok && m.term() == MAX_WIRE_TERM && (term == m.term() || m.wire_size() == 9) {
                assert_eq!(
                    decoded.map(|d| d.term()),
                    Ok(term),
                    "{m:?} with term {term}"
                );
            } else if !ok {
                assert!(
                    matches!(decoded, Err(WireError::Invalid(_))),
                    "{m:?} with term {term}"
                );
            }
        }
    }
}
