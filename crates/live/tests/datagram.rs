//! The datagram decoder against hostile input: random, truncated, extended, oversized and
//! bit-flipped datagrams are errors, never panics, and decoding allocates nothing on the
//! peer's behalf (it borrows the caller's buffer; the payload is bounded by `MAX_PAYLOAD`).

use election_bully::BullyMsg;
use election_core::{NodeId, Time, Wire};
use election_live::datagram::{self, FrameError, HEADER, MAX_DATAGRAM, VERSION};
use election_raft::{LogPos, RaftMsg};
use proptest::prelude::*;

fn frame<M: Wire>(from: u32, msg: &M) -> Vec<u8> {
    let mut out = Vec::new();
    datagram::encode(NodeId(from), msg, &mut out);
    out
}

fn samples() -> (Vec<BullyMsg>, Vec<RaftMsg>) {
    (
        vec![
            BullyMsg::Election {
                epoch: Some(3),
                stamp: Some(Time(9)),
            },
            BullyMsg::Ok { epoch: None },
            BullyMsg::HeartbeatAck {
                epoch: None,
                stamp: Time(1),
            },
        ],
        vec![
            RaftMsg::RequestVote {
                term: 4,
                last_log: LogPos { term: 3, index: 2 },
                transfer: false,
            },
            RaftMsg::AppendResp {
                term: 7,
                success: false,
            },
        ],
    )
}

#[test]
fn valid_datagrams_round_trip() {
    let (b, r) = samples();
    for m in b {
        let bytes = frame(3, &m);
        assert_eq!(bytes.len(), HEADER + election_core::Message::wire_size(&m));
        assert_eq!(datagram::decode::<BullyMsg>(&bytes, 5), Ok((NodeId(3), m)));
    }
    for m in r {
        assert_eq!(
            datagram::decode::<RaftMsg>(&frame(5, &m), 5),
            Ok((NodeId(5), m))
        );
    }
}

#[test]
fn every_header_check_names_its_failure() {
    let good = frame(
        2,
        &RaftMsg::PreVote {
            term: 1,
            last_log: LogPos::EMPTY,
        },
    );
    assert_eq!(
        datagram::decode::<RaftMsg>(&good[..3], 5),
        Err(FrameError::Short(3))
    );
    let mut v = good.clone();
    v[0] = VERSION + 1;
    assert_eq!(
        datagram::decode::<RaftMsg>(&v, 5),
        Err(FrameError::Version(VERSION + 1))
    );
    // Sender 2 is not a member of a 1-node cluster; sender 0 never is.
    assert_eq!(
        datagram::decode::<RaftMsg>(&good, 1),
        Err(FrameError::Sender(2))
    );
    let mut z = good.clone();
    z[1..5].copy_from_slice(&0u32.to_be_bytes());
    assert_eq!(
        datagram::decode::<RaftMsg>(&z, 5),
        Err(FrameError::Sender(0))
    );
    let mut longer = good.clone();
    longer.push(0);
    assert_eq!(
        datagram::decode::<RaftMsg>(&longer, 5),
        // PRE_VOTE is 25 bytes: tag, term, last log term and index.
        Err(FrameError::Length {
            declared: 25,
            actual: 26
        })
    );
    let huge = vec![VERSION; MAX_DATAGRAM + 1];
    assert_eq!(
        datagram::decode::<RaftMsg>(&huge, 5),
        Err(FrameError::Oversized(MAX_DATAGRAM + 1))
    );
    // A well-framed payload the protocol refuses.
    let mut bad = good.clone();
    bad[HEADER] = 0xee;
    assert!(matches!(
        datagram::decode::<RaftMsg>(&bad, 5),
        Err(FrameError::Payload(_))
    ));
}

#[test]
fn every_truncation_and_bit_flip_is_rejected_or_decodes_to_a_message() {
    let (b, r) = samples();
    for m in b {
        let bytes = frame(4, &m);
        for cut in 0..bytes.len() {
            assert!(datagram::decode::<BullyMsg>(&bytes[..cut], 5).is_err());
        }
        for i in 0..bytes.len() * 8 {
            let mut f = bytes.clone();
            f[i / 8] ^= 1 << (i % 8);
            // The bully payload is checksummed: a flip there never decodes. A flip in the
            // header can still name another valid member; it must not panic either way.
            let res = datagram::decode::<BullyMsg>(&f, 5);
            if i / 8 >= HEADER {
                assert!(res.is_err(), "flip of bit {i} accepted");
            }
        }
    }
    for m in r {
        let bytes = frame(1, &m);
        for cut in 0..bytes.len() {
            assert!(datagram::decode::<RaftMsg>(&bytes[..cut], 5).is_err());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Arbitrary bytes, up to far beyond the largest datagram: no panic, and anything accepted
    /// is a canonical datagram from a member.
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        if let Ok((from, m)) = datagram::decode::<RaftMsg>(&bytes, 7) {
            prop_assert_eq!(frame(from.0, &m), bytes.clone());
        }
        if let Ok((from, m)) = datagram::decode::<BullyMsg>(&bytes, 7) {
            prop_assert_eq!(frame(from.0, &m), bytes);
        }
    }

    /// Random bytes behind a valid header (the interesting case for the protocol decoders).
    #[test]
    fn random_payloads_behind_a_valid_header_never_panic(
        sender in 1u32..=5,
        payload in proptest::collection::vec(any::<u8>(), 0..40),
    ) {
        let mut bytes = vec![VERSION];
        bytes.extend_from_slice(&sender.to_be_bytes());
        bytes.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        bytes.extend_from_slice(&payload);
        let _ = datagram::decode::<RaftMsg>(&bytes, 5);
        let _ = datagram::decode::<BullyMsg>(&bytes, 5);
    }
}

/// A Raft datagram carrying a term no cluster reaches — above 2^48, up to the terms that would
/// leave a node nothing to campaign for (2^64 − 3, 2^64 − 2) and 2^64 − 1 — is refused by the
/// payload decoder (the live driver counts it in `rejected_payload` and never hands it to the
/// protocol); every term up to 2^48 still decodes.
#[test]
fn a_raft_term_no_cluster_reaches_is_refused() {
    use election_core::WireError;
    use election_raft::{LogPos, MAX_TERM, MAX_WIRE_TERM};
    let kinds = |term| {
        [
            RaftMsg::RequestVote {
                term,
                last_log: LogPos::EMPTY,
                transfer: false,
            },
            RaftMsg::Vote {
                term,
                granted: true,
            },
            RaftMsg::PreVote {
                term,
                last_log: LogPos::EMPTY,
            },
            RaftMsg::PreVoteResp {
                term,
                granted: false,
            },
            RaftMsg::AppendEntries {
                term,
                log: LogPos::EMPTY,
            },
            RaftMsg::AppendResp {
                term,
                success: true,
            },
        ]
    };
    for (good, bad) in [
        (0, MAX_WIRE_TERM + 1),
        (1, MAX_TERM - 1),
        (MAX_WIRE_TERM - 1, MAX_TERM),
        (MAX_WIRE_TERM, u64::MAX),
    ] {
        for (ok, forged) in kinds(good).into_iter().zip(kinds(bad)) {
            assert!(
                matches!(
                    datagram::decode::<RaftMsg>(&frame(2, &forged), 5),
                    Err(FrameError::Payload(WireError::Invalid(_)))
                ),
                "{forged:?}"
            );
            // No candidate asks for term 0.
            if good > 0 || !matches!(ok, RaftMsg::RequestVote { .. } | RaftMsg::PreVote { .. }) {
                assert_eq!(
                    datagram::decode::<RaftMsg>(&frame(2, &ok), 5),
                    Ok((NodeId(2), ok))
                );
            }
        }
    }
}
