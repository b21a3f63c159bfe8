//! The ring's binary encoding: every message, with and without the hop header, encodes to
//! exactly `wire_size()` bytes and decodes back to itself; any other input is an error, never
//! a panic.

use election_core::{Message, NodeId, Wire, WireError};
use election_ring::{Hop, RingMsg};
use proptest::prelude::*;

fn every_message() -> Vec<RingMsg> {
    let mut all = Vec::new();
    for id in [NodeId(1), NodeId(7), NodeId(u32::MAX)] {
        for hop in [
            None,
            Some(Hop { seq: 0, round: 0 }),
            Some(Hop {
                seq: 9,
                round: u64::MAX,
            }),
        ] {
            all.push(RingMsg::Election { id, hop });
            all.push(RingMsg::Elected { leader: id, hop });
        }
        all.push(RingMsg::Heartbeat { leader: id });
    }
    for seq in [0, 1, u32::MAX] {
        all.push(RingMsg::Ack { seq });
    }
    all
}

fn encode(m: &RingMsg) -> Vec<u8> {
    let mut out = Vec::new();
    m.encode(&mut out);
    out
}

#[test]
fn encoding_is_exactly_wire_size_and_round_trips() {
    for m in every_message() {
        let bytes = encode(&m);
        assert_eq!(bytes.len(), m.wire_size(), "{m:?}");
        assert_eq!(RingMsg::decode(&bytes), Ok(m), "{m:?}");
    }
}

#[test]
fn distinct_messages_have_distinct_encodings() {
    let all = every_message();
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            assert_ne!(encode(a), encode(b), "{a:?} and {b:?} collide");
        }
    }
}

#[test]
fn truncated_extended_and_invalid_are_rejected() {
    for m in every_message() {
        let bytes = encode(&m);
        for cut in 0..bytes.len() {
            assert!(
                RingMsg::decode(&bytes[..cut]).is_err(),
                "{m:?} cut at {cut}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(RingMsg::decode(&longer).is_err(), "{m:?} + 1 byte");
    }
    assert_eq!(RingMsg::decode(&[]), Err(WireError::Truncated));
    assert_eq!(
        RingMsg::decode(&[9, 0, 0, 0, 1]),
        Err(WireError::UnknownTag(9))
    );
    // ACK and HEARTBEAT never carry a hop header.
    assert_eq!(
        RingMsg::decode(&[0x14, 0, 0, 0, 1]),
        Err(WireError::UnknownTag(0x14))
    );
    // Node id 0 does not exist.
    assert_eq!(
        RingMsg::decode(&[4, 0, 0, 0, 0]),
        Err(WireError::Invalid("node id 0"))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Arbitrary bytes: decoding never panics, and whatever it accepts re-encodes to the same
    /// bytes (the encoding is canonical).
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..32)) {
        if let Ok(m) = RingMsg::decode(&bytes) {
            prop_assert_eq!(encode(&m), bytes);
        }
    }
}
