//! The store's messages against the wire contract and its configuration's checks (its rules
//! over the simulator: `crates/runner/tests/it/store.rs`).

use std::time::Duration;

use election_core::{wire_contract, NodeId, Time};
use election_lease::{LeaseConfig, LeaseMsg, Op, Record};
use election_raft::{LogPos, RaftConfig, RaftMsg};

use crate::{StoreConfig, StoreMsg};

fn record() -> Record {
    Record {
        holder: Some(NodeId(2)),
        version: 7,
        transitions: 3,
        duration: Duration::from_millis(150),
        acquire: Time::from_millis(10),
        renew: Time::from_millis(30),
    }
}

fn every_message() -> Vec<StoreMsg> {
    let pos = LogPos { term: 4, index: 9 };
    vec![
        StoreMsg::Client(LeaseMsg::Get),
        StoreMsg::Client(LeaseMsg::Record(record())),
        StoreMsg::Peer {
            raft: RaftMsg::AppendEntries { term: 4, log: pos },
            record: Some(record()),
            ack: LogPos::EMPTY,
        },
        StoreMsg::Peer {
            raft: RaftMsg::AppendResp {
                term: 4,
                success: true,
            },
            record: None,
            ack: pos,
        },
        StoreMsg::Peer {
            raft: RaftMsg::Vote {
                term: 5,
                granted: false,
            },
            record: None,
            ack: LogPos::EMPTY,
        },
        StoreMsg::Forward {
            client: NodeId(3),
            msg: LeaseMsg::Update {
                op: Op::Renew,
                record: record(),
            },
        },
        StoreMsg::Reply {
            client: NodeId(3),
            msg: LeaseMsg::Updated {
                op: Op::Renew,
                ok: true,
                record: record(),
            },
        },
    ]
}

#[test]
fn messages_meet_the_wire_contract() {
    wire_contract::round_trips(&every_message());
    wire_contract::rejects_truncated_and_extended(&every_message());
}

fn config(n: u32, stores: u32) -> StoreConfig {
    StoreConfig::new(LeaseConfig::new(n), RaftConfig::new(stores))
}

#[test]
fn a_store_of_one_endpoint_is_refused() {
    let e = config(3, 1).validate().unwrap_err();
    assert!(e.contains("lease.store_nodes = 1"), "{e}");
    assert!(config(3, 3).validate().is_ok());
}
