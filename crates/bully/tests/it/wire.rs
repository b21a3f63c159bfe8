//! The bully's binary encoding: every message, under every option combination, encodes to
//! exactly `wire_size()` bytes and decodes back to itself; any other input is an error, never
//! a panic.

use election_bully::{BullyMsg, MAX_WIRE_EPOCH};
use election_core::wire_contract::{self, encode};
use election_core::{Time, Wire, WireError};
use proptest::prelude::*;

/// Every variant with every combination of its optional fields.
fn every_message() -> Vec<BullyMsg> {
    let mut all = Vec::new();
    for epoch in [None, Some(0), Some(7), Some(MAX_WIRE_EPOCH)] {
        for stamp in [None, Some(Time(0)), Some(Time(123_456_789))] {
            all.push(BullyMsg::Election { epoch, stamp });
            all.push(BullyMsg::Heartbeat { epoch, stamp });
        }
        let stamp = Time(u64::MAX - 1);
        all.push(BullyMsg::Ok { epoch });
        all.push(BullyMsg::Coordinator { epoch });
        all.push(BullyMsg::Resign { epoch });
        all.push(BullyMsg::Ack { epoch, stamp });
        all.push(BullyMsg::HeartbeatAck { epoch, stamp });
    }
    all
}

#[test]
fn encoding_is_exactly_wire_size_round_trips_and_is_distinct() {
    wire_contract::round_trips(&every_message());
}

#[test]
fn truncated_extended_and_corrupted_encodings_are_rejected() {
    wire_contract::rejects_truncated_and_extended(&every_message());
    for m in every_message() {
        let bytes = encode(&m);
        for i in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[i] ^= 0x01;
            assert!(BullyMsg::decode(&flipped).is_err(), "{m:?} bit flip at {i}");
        }
    }
    assert_eq!(BullyMsg::decode(&[]), Err(WireError::Truncated));
    assert_eq!(
        BullyMsg::decode(&[0x0f, 0, 0, 0, 0]),
        Err(WireError::UnknownTag(0x0f))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Arbitrary bytes: decoding never panics, and whatever it accepts re-encodes to the same
    /// bytes (the encoding is canonical).
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        prop_assert_eq!(wire_contract::canonical::<BullyMsg>(&bytes), Ok(()));
    }
}

/// Epochs no cluster reaches (above 2^48, up to 2^64 − 1) are refused for every kind: a node
/// that adopted one would leave the next coordinator no epoch to declare in (the `+ 1`
/// overflowed); 2^48 itself still decodes.
#[test]
fn epochs_no_cluster_reaches_are_invalid() {
    for m in every_message().into_iter().filter(|m| m.epoch().is_some()) {
        for (epoch, ok) in [
            (MAX_WIRE_EPOCH, true),
            (MAX_WIRE_EPOCH + 1, false),
            (u64::MAX - 1, false),
            (u64::MAX, false),
        ] {
            let forged = match m {
                BullyMsg::Election { stamp, .. } => BullyMsg::Election {
                    epoch: Some(epoch),
                    stamp,
                },
                BullyMsg::Ok { .. } => BullyMsg::Ok { epoch: Some(epoch) },
                BullyMsg::Ack { stamp, .. } => BullyMsg::Ack {
                    epoch: Some(epoch),
                    stamp,
                },
                BullyMsg::Coordinator { .. } => BullyMsg::Coordinator { epoch: Some(epoch) },
                BullyMsg::Resign { .. } => BullyMsg::Resign { epoch: Some(epoch) },
                BullyMsg::Heartbeat { stamp, .. } => BullyMsg::Heartbeat {
                    epoch: Some(epoch),
                    stamp,
                },
                BullyMsg::HeartbeatAck { stamp, .. } => BullyMsg::HeartbeatAck {
                    epoch: Some(epoch),
                    stamp,
                },
            };
            let decoded = BullyMsg::decode(&encode(&forged));
            if ok {
                assert_eq!(decoded, Ok(forged));
            } else {
                assert!(
                    matches!(decoded, Err(WireError::Invalid(_))),
                    "{forged:?}: {decoded:?}"
                );
            }
        }
    }
}

/// What a node sends, its peers accept (issue 47): a coordinator whose stable storage holds
/// the highest epoch the wire carries declares that epoch again, never one past it, and its
/// COORDINATOR decodes.
#[test]
fn a_coordinator_at_the_epoch_ceiling_declares_what_the_wire_accepts() {
    use election_bully::{Bully, BullyConfig};
    use election_core::{Action, Io, NodeId, Protocol, Rng, SeedableRng};
    use std::sync::Arc;
    let mut cfg = BullyConfig::new(2);
    cfg.epoch = true;
    let mut top = Bully::new(NodeId(2), Arc::new(cfg));
    let mut rng = Rng::seed_from_u64(1);
    let mut actions: Vec<Action<Bully>> = Vec::new();
    top.on_start(
        &mut Io::new(Time::ZERO, &mut rng, &mut actions),
        Some(&MAX_WIRE_EPOCH),
    );
    let coordinators: Vec<&BullyMsg> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Send { msg, .. } if matches!(msg, BullyMsg::Coordinator { .. }) => Some(msg),
            _ => None,
        })
        .collect();
    assert_eq!(
        coordinators,
        [&BullyMsg::Coordinator {
            epoch: Some(MAX_WIRE_EPOCH)
        }],
        "{actions:?}"
    );
    assert_eq!(top.status().epoch, Some(MAX_WIRE_EPOCH));
    assert_eq!(
        BullyMsg::decode(&encode(coordinators[0])).as_ref(),
        Ok(coordinators[0])
    );
}
