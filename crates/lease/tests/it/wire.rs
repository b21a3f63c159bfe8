//! The lease messages' binary encoding: every kind encodes to exactly `wire_size()` bytes and
//! decodes back to itself; any other input is an error, never a panic.

use std::time::Duration;

use election_core::wire_contract;
use election_core::{Message, NodeId, Time, Wire, WireError};
use election_lease::{LeaseMsg, Op, Record};
use proptest::prelude::*;

fn records() -> Vec<Record> {
    let mut v = vec![Record::EMPTY];
    for holder in [None, Some(NodeId(1)), Some(NodeId(u32::MAX))] {
        for version in [1, u64::MAX] {
            v.push(Record {
                holder,
                version,
                transitions: version / 2,
                duration: Duration::from_millis(150),
                acquire: Time(3),
                renew: Time(u64::MAX),
            });
        }
    }
    v
}

fn every_message() -> Vec<LeaseMsg> {
    // The first acquire of all: a holder written over the empty record's version 0.
    let first = Record {
        holder: Some(NodeId(3)),
        version: 0,
        transitions: 1,
        ..records()[1]
    };
    let mut all = vec![
        LeaseMsg::Get,
        LeaseMsg::Update {
            op: Op::Acquire,
            record: first,
        },
    ];
    for record in records() {
        all.push(LeaseMsg::Record(record));
        for op in [Op::Acquire, Op::Renew, Op::Release] {
            if (op == Op::Release) == record.holder.is_none() {
                all.push(LeaseMsg::Update { op, record });
            }
            for ok in [true, false] {
                all.push(LeaseMsg::Updated { op, ok, record });
            }
        }
    }
    all
}

#[test]
fn every_message_round_trips_at_its_wire_size() {
    wire_contract::round_trips(&every_message());
    wire_contract::rejects_truncated_and_extended(&every_message());
    let kinds: std::collections::BTreeSet<_> = every_message().iter().map(|m| m.kind()).collect();
    assert_eq!(kinds.len(), 11, "{kinds:?}");
}

#[test]
fn malformed_input_is_an_error() {
    assert_eq!(LeaseMsg::decode(&[]), Err(WireError::Truncated));
    assert_eq!(LeaseMsg::decode(&[0]), Err(WireError::UnknownTag(0)));
    assert_eq!(LeaseMsg::decode(&[12]), Err(WireError::UnknownTag(12)));
    assert_eq!(LeaseMsg::decode(&[1, 0]), Err(WireError::Trailing(1)));
    let mut buf = Vec::new();
    LeaseMsg::Record(records()[1]).encode(&mut buf);
    assert_eq!(LeaseMsg::decode(&buf[..10]), Err(WireError::Truncated));
    // A release naming a holder, an acquire without one.
    let held = Record {
        holder: Some(NodeId(2)),
        ..records()[1]
    };
    let mut buf = Vec::new();
    LeaseMsg::Update {
        op: Op::Acquire,
        record: held,
    }
    .encode(&mut buf);
    buf[0] = 5;
    assert!(matches!(LeaseMsg::decode(&buf), Err(WireError::Invalid(_))));
    buf[0] = 3;
    buf[1..5].copy_from_slice(&[0, 0, 0, 0]);
    assert!(matches!(LeaseMsg::decode(&buf), Err(WireError::Invalid(_))));
    // A version-0 record that is not the empty one.
    let mut buf = Vec::new();
    LeaseMsg::Record(Record::EMPTY).encode(&mut buf);
    buf[20] = 1; // transitions
    assert!(matches!(LeaseMsg::decode(&buf), Err(WireError::Invalid(_))));
}

proptest! {
    #[test]
    fn decode_never_panics_and_accepts_only_canonical_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        prop_assert_eq!(wire_contract::canonical::<LeaseMsg>(&bytes), Ok(()));
    }

    #[test]
    fn flipping_a_byte_never_panics(i in 0usize..45, b in any::<u8>()) {
        for m in every_message() {
            let mut buf = Vec::new();
            m.encode(&mut buf);
            if i < buf.len() {
                buf[i] = b;
                let _ = LeaseMsg::decode(&buf);
            }
        }
    }
}
