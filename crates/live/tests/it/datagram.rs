//! The datagram decoder against hostile input: random, truncated, extended, oversized,
//! bit-flipped and forged datagrams are errors, never panics, and decoding allocates nothing
//! on the peer's behalf (it borrows the caller's buffer; the payload is bounded by
//! `MAX_PAYLOAD`). The replay window accepts each sequence number once.

use election_bully::BullyMsg;
use election_core::{NodeId, Time, Wire};
use election_live::datagram::{
    self, Envelope, FrameError, Key, ReplayWindow, HEADER, MAX_DATAGRAM, REPLAY_WINDOW, TAG,
    VERSION,
};
use election_raft::{LogPos, RaftMsg};
use proptest::prelude::*;

fn key() -> Key {
    Key::from_bytes([0x5a; 32])
}

fn env(from: u32) -> Envelope {
    Envelope {
        from: NodeId(from),
        to: NodeId(1),
        seq: 1,
    }
}

fn frame<M: Wire>(from: u32, msg: &M) -> Vec<u8> {
    let mut out = Vec::new();
    datagram::encode(&key(), env(from), msg, &mut out);
    out
}

/// What the driver does before the replay window: open under the key, decode the payload
/// (every endpoint a member).
fn decode<M: Wire>(bytes: &[u8], n: u32) -> Result<(NodeId, M), FrameError> {
    let (env, body) = datagram::open(&key(), bytes, n)?;
    Ok((env.from, datagram::payload(body, n)?))
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
        assert_eq!(
            bytes.len(),
            HEADER + election_core::Message::wire_size(&m) + TAG
        );
        assert_eq!(decode::<BullyMsg>(&bytes, 5), Ok((NodeId(3), m)));
    }
    for m in r {
        assert_eq!(decode::<RaftMsg>(&frame(5, &m), 5), Ok((NodeId(5), m)));
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
    assert_eq!(decode::<RaftMsg>(&good[..3], 5), Err(FrameError::Short(3)));
    let mut v = good.clone();
    v[0] = VERSION + 1;
    assert_eq!(
        decode::<RaftMsg>(&v, 5),
        Err(FrameError::Version(VERSION + 1))
    );
    // Sender 2 is not a member of a 1-node cluster; sender 0 never is.
    assert_eq!(decode::<RaftMsg>(&good, 1), Err(FrameError::Sender(2)));
    let mut z = Vec::new();
    datagram::seal(&key(), env(0), &good[HEADER..good.len() - TAG], &mut z);
    assert_eq!(decode::<RaftMsg>(&z, 5), Err(FrameError::Sender(0)));
    // The same ids rewritten by hand: the tag no longer verifies.
    let mut rewritten = good.clone();
    rewritten[1..5].copy_from_slice(&3u32.to_be_bytes());
    assert_eq!(decode::<RaftMsg>(&rewritten, 5), Err(FrameError::Tag));
    // Made under another key.
    let mut other = Vec::new();
    datagram::seal(
        &Key::from_bytes([0xa5; 32]),
        env(2),
        &good[HEADER..good.len() - TAG],
        &mut other,
    );
    assert_eq!(decode::<RaftMsg>(&other, 5), Err(FrameError::Tag));
    let mut longer = good.clone();
    longer.push(0);
    assert_eq!(
        decode::<RaftMsg>(&longer, 5),
        // PRE_VOTE is 25 bytes: tag, term, last log term and index.
        Err(FrameError::Length {
            declared: 25,
            actual: 26
        })
    );
    let huge = vec![VERSION; MAX_DATAGRAM + 1];
    assert_eq!(
        decode::<RaftMsg>(&huge, 5),
        Err(FrameError::Oversized(MAX_DATAGRAM + 1))
    );
    // An authentic payload the protocol refuses.
    let mut bad = Vec::new();
    datagram::seal(&key(), env(2), &[0xee; 25], &mut bad);
    assert!(matches!(
        decode::<RaftMsg>(&bad, 5),
        Err(FrameError::Payload(_))
    ));
}

#[test]
fn every_truncation_and_bit_flip_is_rejected_or_decodes_to_a_message() {
    let (b, r) = samples();
    for m in b {
        let bytes = frame(4, &m);
        for cut in 0..bytes.len() {
            assert!(decode::<BullyMsg>(&bytes[..cut], 5).is_err());
        }
        // Every flip, in the header, the payload or the tag, fails the tag (or a check
        // before it).
        for i in 0..bytes.len() * 8 {
            let mut f = bytes.clone();
            f[i / 8] ^= 1 << (i % 8);
            assert!(
                decode::<BullyMsg>(&f, 5).is_err(),
                "flip of bit {i} accepted"
            );
        }
    }
    for m in r {
        let bytes = frame(1, &m);
        for cut in 0..bytes.len() {
            assert!(decode::<RaftMsg>(&bytes[..cut], 5).is_err());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Arbitrary bytes, up to far beyond the largest datagram, and arbitrary bytes behind a
    /// well-formed header of this version: no panic, and nothing verifies without the key.
    #[test]
    fn random_bytes_never_verify(
        bytes in proptest::collection::vec(any::<u8>(), 0..2048),
        framed in proptest::bool::ANY,
    ) {
        let mut bytes = bytes;
        if framed && bytes.len() >= HEADER + TAG && bytes.len() <= MAX_DATAGRAM {
            bytes[0] = VERSION;
            let len = (bytes.len() - HEADER - TAG) as u16;
            bytes[HEADER - 2..HEADER].copy_from_slice(&len.to_be_bytes());
            prop_assert_eq!(datagram::open(&key(), &bytes, 7).map(|_| ()), Err(FrameError::Tag));
        }
        prop_assert!(decode::<RaftMsg>(&bytes, 7).is_err());
        prop_assert!(decode::<BullyMsg>(&bytes, 7).is_err());
    }

    /// Random payloads behind a valid tag (what a member could send; the interesting case for
    /// the protocol decoders): no panic.
    #[test]
    fn random_payloads_behind_a_valid_tag_never_panic(
        sender in 1u32..=5,
        payload in proptest::collection::vec(any::<u8>(), 0..40),
    ) {
        let mut bytes = Vec::new();
        datagram::seal(&key(), env(sender), &payload, &mut bytes);
        let _ = decode::<RaftMsg>(&bytes, 5);
        let _ = decode::<BullyMsg>(&bytes, 5);
    }

    /// The replay window against a model (the set of numbers accepted so far): a number is
    /// accepted exactly when it is new and less than a window behind the highest accepted.
    #[test]
    fn the_replay_window_accepts_each_fresh_number_once(
        seqs in proptest::collection::vec(
            prop_oneof![0u64..3000, Just(u64::MAX), Just(u64::MAX - REPLAY_WINDOW)],
            1..400,
        ),
    ) {
        let mut w = ReplayWindow::default();
        let mut seen = std::collections::BTreeSet::new();
        for s in seqs {
            let top = seen.iter().next_back().copied().unwrap_or(0);
            let fresh = s > 0 && !seen.contains(&s) && (s > top || top - s < REPLAY_WINDOW);
            prop_assert_eq!(w.accept(s).is_ok(), fresh, "seq {} after {:?}", s, seen);
            if fresh {
                seen.insert(s);
            }
        }
    }
}

/// A Raft datagram carrying a term no node sends — above 2^48 (`MAX_TERM`, the nodes' own
/// ceiling), up to 2^64 − 1 — is refused by the payload decoder (the live driver counts it in
/// `rejected_payload` and never hands it to the protocol); every term up to 2^48 decodes.
#[test]
fn a_raft_term_no_cluster_reaches_is_refused() {
    use election_core::WireError;
    use election_raft::{LogPos, MAX_WIRE_TERM};
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
        (1, u64::MAX - 2),
        (MAX_WIRE_TERM - 1, u64::MAX - 1),
        (MAX_WIRE_TERM, u64::MAX),
    ] {
        for (ok, forged) in kinds(good).into_iter().zip(kinds(bad)) {
            assert!(
                matches!(
                    decode::<RaftMsg>(&frame(2, &forged), 5),
                    Err(FrameError::Payload(WireError::Invalid(_)))
                ),
                "{forged:?}"
            );
            // No candidate asks for term 0.
            if good > 0 || !matches!(ok, RaftMsg::RequestVote { .. } | RaftMsg::PreVote { .. }) {
                assert_eq!(decode::<RaftMsg>(&frame(2, &ok), 5), Ok((NodeId(2), ok)));
            }
        }
    }
}

/// A replay of an accepted datagram, and one too old to tell, are refused; reordering within
/// the window is not.
#[test]
fn the_replay_window_refuses_replays_and_keeps_reordering() {
    let mut w = ReplayWindow::default();
    assert_eq!(
        w.accept(0),
        Err(FrameError::Replay(0)),
        "senders start at 1"
    );
    assert_eq!(w.accept(2), Ok(()));
    assert_eq!(w.accept(1), Ok(()), "late, within the window");
    assert_eq!(w.accept(2), Err(FrameError::Replay(2)));
    assert_eq!(w.accept(1), Err(FrameError::Replay(1)));
    assert_eq!(w.accept(5), Ok(()));
    assert_eq!(w.accept(5 + REPLAY_WINDOW), Ok(()));
    assert_eq!(
        w.accept(3),
        Err(FrameError::Replay(3)),
        "never seen, but more than a window behind: too old to tell"
    );
    assert_eq!(w.accept(6), Ok(()), "just inside the window");
    assert_eq!(w.accept(6), Err(FrameError::Replay(6)));
}

/// RUSTSEC-2024-0437 (uncontrolled recursion while parsing unknown fields; fixed in protobuf
/// 3.7.2) names every `protobuf` before 3.7.2, so also the 2.28 that tikv's raft 0.7 needs (its
/// `prost-codec` would replace it by another code generator, not remove it from the graph).
/// Why the live decoder is not reachable by it: (1) the tag is checked before any payload is
/// decoded, so only the trial's own nodes reach the decoder at all; (2) a payload is at most
/// `MAX_PAYLOAD` (512) bytes, refused before decoding otherwise; (3) in 2.28, skipping an
/// unknown group does not descend into a nested one (`rt::skip_group` refuses a start-group
/// inside it), and nested known messages stop at `CodedInputStream`'s recursion limit (100).
/// The check for (2) and (3): the deepest group nesting 512 bytes can hold (an unknown field
/// opening 506 groups, one byte each), terminated or not, is refused in a 32 KiB stack, a
/// sixty-fourth of a Rust thread's default; one byte more never reaches the decoder.
#[test]
fn the_raftrs_decoder_cannot_be_driven_into_the_protobuf_recursion() {
    use election_live::datagram::MAX_PAYLOAD;
    use election_raftrs::RaftrsMsg;
    let deepest = |terminated: bool| {
        // Field 100, wire type 3 (start group): an unknown field of eraftpb::Message.
        let mut body = vec![0xa3, 0x06];
        let room = MAX_PAYLOAD - 4 - body.len();
        if terminated {
            body.extend(std::iter::repeat_n(0x0b, (room - 2) / 2));
            body.extend(std::iter::repeat_n(0x0c, (room - 2) / 2));
            body.extend([0xa4, 0x06]);
        } else {
            body.extend(std::iter::repeat_n(0x0b, room));
        }
        let mut payload = (body.len() as u32).to_be_bytes().to_vec();
        payload.extend(body);
        payload
    };
    for terminated in [false, true] {
        let payload = deepest(terminated);
        assert!(payload.len() <= MAX_PAYLOAD);
        let decoded = std::thread::Builder::new()
            .stack_size(32 * 1024)
            .spawn(move || RaftrsMsg::decode(&payload).is_err())
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert!(decoded, "refused (terminated: {terminated})");
    }
    // One byte more than a payload may hold: refused before any decoder runs.
    let mut bytes = Vec::new();
    datagram::seal(&key(), env(1), &[0x0b; MAX_PAYLOAD + 1], &mut bytes);
    assert_eq!(
        datagram::open(&key(), &bytes, 5).map(|_| ()),
        Err(FrameError::Oversized(MAX_DATAGRAM + 1))
    );
}
