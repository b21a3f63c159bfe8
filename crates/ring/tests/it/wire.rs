//! The ring's binary encoding: every message, with and without the hop header, encodes to
//! exactly `wire_size()` bytes and decodes back to itself; any other input is an error, never
//! a panic.

use election_core::wire_contract;
use election_core::{NodeId, Wire, WireError};
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
        all.push(RingMsg::Leaving { leader: id });
    }
    for seq in [0, 1, u32::MAX] {
        all.push(RingMsg::Ack { seq });
    }
    all
}

#[test]
fn encoding_is_exactly_wire_size_round_trips_and_is_distinct() {
    wire_contract::round_trips(&every_message());
}

#[test]
fn truncated_extended_and_invalid_are_rejected() {
    wire_contract::rejects_truncated_and_extended(&every_message());
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
        prop_assert_eq!(wire_contract::canonical::<RingMsg>(&bytes), Ok(()));
    }
}
