//! Bounded decoder fuzzing, one property per protocol (the production libraries raft-rs and
//! Omni-Paxos included, through their adapters): well-framed datagrams from member
//! addresses carrying random payloads — arbitrary messages of every kind with arbitrary fields
//! (ids outside the cluster, terms up to 2^64 − 1, any record) and random bytes behind a valid
//! message tag — sealed under the trial's key, as only a member could, go through the live
//! driver's checks ([`datagram::open`], [`datagram::payload`]), and whatever they
//! accept is handed to a real protocol instance between timer firings, as a node task would.
//!
//! Properties: nothing panics; whatever is accepted names only members; the node only ever
//! addresses endpoints of the cluster and only ever believes in a member as leader; a Raft node
//! never goes past the term space its peers accept. Bounded in cases (a few seconds in all), so
//! it runs in `cargo test` and therefore in `.ci/run`.

use std::sync::Arc;
use std::time::Duration;

use election_bully::{Bully, BullyConfig, BullyMsg};
use election_core::{Action, Io, NodeId, Protocol, Rng, SeedableRng, Time, TimerKind, Wire};
use election_lease::{Lease, LeaseConfig, LeaseMsg, Op, Record};
use election_live::datagram::{self, Envelope, FrameError, Key};
use election_omnipaxos::{OmniConfig, OmniPaxos};
use election_raft::{LogPos, Raft, RaftConfig, RaftMsg, MAX_TERM, MAX_WIRE_TERM};
use election_raftrs::{RaftRs, RaftrsConfig, RaftrsMsg};
use election_ring::{Hop, Ring, RingConfig, RingMsg};
use proptest::prelude::*;

const N: u32 = 5;
const CASES: u32 = 96;

/// One input: a datagram from member `sender` with `payload`, then maybe a timer firing.
type Input = (u32, Vec<u8>, bool);

/// `payload` from `sender` to node 1, sealed under the trial's key: what a member (or a
/// member's bug) could send; authentication keeps everyone else out, so the payload checks
/// below are the second line of defence.
fn frame(sender: u32, payload: &[u8]) -> Vec<u8> {
    let env = Envelope {
        from: NodeId(sender),
        to: NodeId(1),
        seq: 1,
    };
    let mut bytes = Vec::new();
    datagram::seal(&Key::from_bytes([3; 32]), env, payload, &mut bytes);
    bytes
}

/// The driver's checks on an authentic datagram (the replay window aside).
fn decode_for<M: Wire>(
    bytes: &[u8],
    endpoints: u32,
    members: u32,
) -> Result<(NodeId, M), FrameError> {
    let (env, body) = datagram::open(&Key::from_bytes([3; 32]), bytes, endpoints)?;
    Ok((env.from, datagram::payload(body, members)?))
}

fn encoded<M: Wire>(m: &M) -> Vec<u8> {
    let mut out = Vec::new();
    m.encode(&mut out);
    out
}

/// Drive `node` (of a cluster of `members` members and `endpoints` endpoints) through
/// `inputs`; check the properties after every step.
fn drive<P: Protocol>(
    mut node: P,
    members: u32,
    endpoints: u32,
    inputs: &[Input],
) -> Result<P, TestCaseError>
where
    P::Msg: Wire,
{
    let mut rng = Rng::seed_from_u64(7);
    let mut actions: Vec<Action<P>> = Vec::new();
    let mut timers: Vec<Option<(Time, P::Timer)>> = vec![None; P::Timer::COUNT];
    let mut now = Time::ZERO;
    node.on_start(&mut Io::new(now, &mut rng, &mut actions), None);
    for (sender, payload, fire) in inputs {
        for a in actions.drain(..) {
            match a {
                Action::Send { to, .. } => {
                    prop_assert!((1..=endpoints).contains(&to.0), "sent to {to}");
                }
                Action::SetTimer { timer, at } => timers[timer.index()] = Some((at, timer)),
                Action::CancelTimer(timer) => timers[timer.index()] = None,
                Action::Persist(_) => {}
            }
        }
        let bytes = frame(*sender, payload);
        if let Ok((from, msg)) = decode_for::<P::Msg>(&bytes, endpoints, members) {
            if let Some(id) = msg.named_node() {
                prop_assert!((1..=members).contains(&id.0), "accepted {msg:?}");
            }
            now = now + Duration::from_millis(1);
            node.on_message(&mut Io::new(now, &mut rng, &mut actions), from, msg);
        } else if *fire {
            let next = timers.iter().flatten().min_by_key(|(at, _)| *at).copied();
            if let Some((at, timer)) = next {
                timers[timer.index()] = None;
                now = now.max(at);
                node.on_timer(&mut Io::new(now, &mut rng, &mut actions), timer);
            }
        }
        let st = node.status();
        if let Some(l) = st.leader {
            prop_assert!((1..=members).contains(&l.0), "believes in {l} ({st:?})");
        }
    }
    Ok(node)
}

fn id() -> impl Strategy<Value = u32> {
    prop_oneof![0..=N + 2, Just(99), Just(u32::MAX), any::<u32>()]
}

fn big() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..8,
        Just(MAX_WIRE_TERM),
        Just(MAX_WIRE_TERM + 1),
        Just(MAX_TERM - 1),
        Just(MAX_TERM),
        Just(u64::MAX),
        any::<u64>(),
    ]
}

/// Random bytes behind one of the protocol's tags (or any byte).
fn raw(tags: std::ops::RangeInclusive<u8>) -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![tags, any::<u8>()],
        proptest::collection::vec(any::<u8>(), 0..48),
    )
        .prop_map(|(t, rest)| {
            let mut v = vec![t];
            v.extend(rest);
            v
        })
}

fn inputs(payload: impl Strategy<Value = Vec<u8>>) -> impl Strategy<Value = Vec<Input>> {
    proptest::collection::vec((1..=N, payload, any::<bool>()), 1..60)
}

fn bully_msg() -> impl Strategy<Value = Vec<u8>> {
    let epoch = proptest::option::of(big());
    let stamp = || big().prop_map(Time);
    (0u8..6, epoch, proptest::option::of(stamp()), stamp()).prop_map(|(k, epoch, os, s)| {
        encoded(&match k {
            0 => BullyMsg::Election { epoch, stamp: os },
            1 => BullyMsg::Ok { epoch },
            2 => BullyMsg::Ack { epoch, stamp: s },
            3 => BullyMsg::Coordinator { epoch },
            4 => BullyMsg::Heartbeat { epoch, stamp: os },
            _ => BullyMsg::HeartbeatAck { epoch, stamp: s },
        })
    })
}

fn ring_msg() -> impl Strategy<Value = Vec<u8>> {
    let hop =
        proptest::option::of((any::<u32>(), big()).prop_map(|(seq, round)| Hop { seq, round }));
    (0u8..4, id(), hop, any::<u32>()).prop_map(|(k, id, hop, seq)| {
        let id = NodeId(id);
        encoded(&match k {
            0 => RingMsg::Election { id, hop },
            1 => RingMsg::Elected { leader: id, hop },
            2 => RingMsg::Ack { seq },
            _ => RingMsg::Heartbeat { leader: id },
        })
    })
}

fn raft_msg() -> impl Strategy<Value = Vec<u8>> {
    (0u8..6, big(), big(), big(), any::<bool>()).prop_map(|(k, term, lt, li, b)| {
        let log = LogPos {
            term: lt,
            index: li,
        };
        encoded(&match k {
            0 => RaftMsg::RequestVote {
                term,
                last_log: log,
                transfer: false,
            },
            1 => RaftMsg::Vote { term, granted: b },
            2 => RaftMsg::PreVote {
                term,
                last_log: log,
            },
            3 => RaftMsg::PreVoteResp { term, granted: b },
            4 => RaftMsg::AppendEntries { term, log },
            _ => RaftMsg::AppendResp { term, success: b },
        })
    })
}

fn lease_msg() -> impl Strategy<Value = Vec<u8>> {
    let record = (
        prop_oneof![Just(None), id().prop_map(|h| Some(NodeId(h)))],
        big(),
        big(),
        big(),
        big(),
        big(),
    )
        .prop_map(|(holder, version, transitions, d, a, r)| Record {
            holder,
            version,
            transitions,
            duration: Duration::from_nanos(d),
            acquire: Time(a),
            renew: Time(r),
        });
    (0u8..4, 0usize..3, any::<bool>(), record).prop_map(|(k, op, ok, record)| {
        let op = [Op::Acquire, Op::Renew, Op::Release][op];
        encoded(&match k {
            0 => LeaseMsg::Get,
            1 => LeaseMsg::Record(record),
            2 => LeaseMsg::Update { op, record },
            _ => LeaseMsg::Updated { op, ok, record },
        })
    })
}

/// Random bytes behind a 4-byte big-endian length (the framing of raft-rs's and Omni-Paxos'
/// payloads), the length right or arbitrary.
fn length_prefixed() -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::collection::vec(any::<u8>(), 0..64),
        proptest::option::of(any::<u32>()),
    )
        .prop_map(|(body, len)| {
            let len = len.unwrap_or(body.len() as u32);
            let mut v = len.to_be_bytes().to_vec();
            v.extend(body);
            v
        })
}

/// A well-formed raft-rs message of any type with arbitrary fields (ids outside the cluster,
/// huge terms and indexes, entries of any term).
fn raftrs_msg() -> impl Strategy<Value = Vec<u8>> {
    (
        0i32..20,
        (id(), id()),
        (big(), big(), big(), big()),
        any::<bool>(),
        proptest::collection::vec((big(), big()), 0..3),
    )
        .prop_map(
            |(t, (from, to), (term, log_term, index, commit), reject, ents)| {
                let mut m = raft::eraftpb::Message::default();
                use raft::eraftpb::MessageType::*;
                let types = [
                    MsgHup,
                    MsgBeat,
                    MsgPropose,
                    MsgAppend,
                    MsgAppendResponse,
                    MsgRequestVote,
                    MsgRequestVoteResponse,
                    MsgSnapshot,
                    MsgHeartbeat,
                    MsgHeartbeatResponse,
                    MsgUnreachable,
                    MsgSnapStatus,
                    MsgCheckQuorum,
                    MsgTransferLeader,
                    MsgTimeoutNow,
                    MsgReadIndex,
                    MsgReadIndexResp,
                    MsgRequestPreVote,
                    MsgRequestPreVoteResponse,
                ];
                m.set_msg_type(types[t as usize % types.len()]);
                m.from = u64::from(from);
                m.to = u64::from(to);
                m.term = term;
                m.log_term = log_term;
                m.index = index;
                m.commit = commit;
                m.reject = reject;
                m.set_entries(
                    ents.into_iter()
                        .map(|(term, index)| raft::eraftpb::Entry {
                            term,
                            index,
                            ..Default::default()
                        })
                        .collect::<Vec<_>>()
                        .into(),
                );
                encoded(&RaftrsMsg(m))
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    /// tikv's raft-rs behind our adapter: forged protobuf messages of every type and random
    /// bytes; the library must neither panic nor be made to address or believe in a
    /// non-member.
    #[test]
    fn raftrs_survives_forged_payloads(
        node in 1..=N,
        inputs in inputs(prop_oneof![raftrs_msg(), length_prefixed()]),
        pre_vote in any::<bool>(),
        check_quorum in any::<bool>(),
    ) {
        let mut c = RaftrsConfig::new(N);
        c.pre_vote = pre_vote;
        c.check_quorum = check_quorum;
        drive(RaftRs::new(NodeId(node), Arc::new(c)), N, N, &inputs)?;
    }

    /// Omni-Paxos behind our adapter: random payloads through its decoder.
    #[test]
    fn omnipaxos_survives_forged_payloads(
        node in 1..=N,
        inputs in inputs(length_prefixed()),
    ) {
        let c = OmniConfig::derive(N, Duration::from_millis(50), Duration::from_millis(150));
        drive(OmniPaxos::new(NodeId(node), Arc::new(c)), N, N, &inputs)?;
    }

    #[test]
    fn bully_survives_forged_payloads(
        node in 1..=N,
        inputs in inputs(prop_oneof![bully_msg(), raw(0..=0x35)]),
        epoch in any::<bool>(),
    ) {
        let mut c = BullyConfig::new(N);
        c.epoch = epoch;
        drive(Bully::new(NodeId(node), Arc::new(c)), N, N, &inputs)?;
    }

    #[test]
    fn ring_survives_forged_payloads(
        node in 1..=N,
        inputs in inputs(prop_oneof![ring_msg(), raw(1..=0x14)]),
        hop_acks in any::<bool>(),
    ) {
        let mut c = RingConfig::new(N);
        c.hop_acks = hop_acks;
        drive(Ring::new(NodeId(node), Arc::new(c)), N, N, &inputs)?;
    }

    /// A Raft node never goes past the term space it shares with the decoder: whatever it
    /// adopts or starts, its peers would accept (`MAX_TERM` is `MAX_WIRE_TERM`).
    #[test]
    fn raft_survives_forged_payloads(
        node in 1..=N,
        inputs in inputs(prop_oneof![raft_msg(), raw(1..=9)]),
        pre_vote in any::<bool>(),
        check_quorum in any::<bool>(),
    ) {
        let mut c = RaftConfig::new(N);
        c.pre_vote = pre_vote;
        c.check_quorum = check_quorum;
        let raft = drive(Raft::new(NodeId(node), Arc::new(c)), N, N, &inputs)?;
        let term = raft.status().epoch.unwrap_or(0);
        prop_assert!(term <= MAX_WIRE_TERM, "term {term}");
        prop_assert!(term <= MAX_TERM);
    }

    /// Members and the store (endpoint n + 1).
    #[test]
    fn lease_survives_forged_payloads(
        node in 1..=N + 1,
        inputs in inputs(prop_oneof![lease_msg(), raw(1..=11)]),
    ) {
        let c = Arc::new(LeaseConfig::new(N));
        let lease = drive(Lease::new(NodeId(node), c), N, N + 1, &inputs)?;
        if let Some(r) = lease.record() {
            if let Some(h) = r.holder {
                prop_assert!((1..=N).contains(&h.0), "record names {h}");
            }
        }
    }
}

/// The forged datagrams of the issue, one by one: a ring ELECTION or ELECTED naming node 99,
/// a lease RECORD naming holder 99, are refused by the driver's check, not handed to a node.
#[test]
fn messages_naming_a_non_member_are_refused() {
    let ring = [
        RingMsg::Election {
            id: NodeId(99),
            hop: None,
        },
        RingMsg::Elected {
            leader: NodeId(6),
            hop: Some(Hop { seq: 1, round: 1 }),
        },
        RingMsg::Heartbeat {
            leader: NodeId(u32::MAX),
        },
    ];
    for m in ring {
        let bytes = frame(2, &encoded(&m));
        assert_eq!(
            decode_for::<RingMsg>(&bytes, N, N).map(|_| ()),
            Err(FrameError::Named(m.named_node().unwrap().0)),
            "{m:?}"
        );
    }
    let ok = RingMsg::Election {
        id: NodeId(N),
        hop: None,
    };
    assert!(decode_for::<RingMsg>(&frame(2, &encoded(&ok)), N, N).is_ok());
    let mut record = Record::EMPTY;
    record.version = 3;
    // From the store (endpoint n + 1): the store is an endpoint, never a holder.
    for holder in [N + 1, 99] {
        record.holder = Some(NodeId(holder));
        let forged = LeaseMsg::Record(record);
        assert_eq!(
            decode_for::<LeaseMsg>(&frame(N + 1, &encoded(&forged)), N + 1, N).map(|_| ()),
            Err(FrameError::Named(holder)),
        );
    }
    record.holder = Some(NodeId(N));
    assert!(
        decode_for::<LeaseMsg>(&frame(N + 1, &encoded(&LeaseMsg::Record(record))), N + 1, N)
            .is_ok()
    );
}

/// Behind a driver that did not check (`Wire::named_node`), a ring node handed an ELECTION or
/// ELECTED naming node 99 ignores it instead of indexing its per-node state with it (it
/// panicked: `seen[id.index()]`).
#[test]
fn a_ring_node_ignores_ids_outside_the_cluster() {
    let mut rng = Rng::seed_from_u64(1);
    let mut actions = Vec::new();
    let mut ring = Ring::new(NodeId(2), Arc::new(RingConfig::new(N)));
    ring.on_start(&mut Io::new(Time::ZERO, &mut rng, &mut actions), None);
    let hop = Some(Hop { seq: 1, round: 9 });
    for msg in [
        RingMsg::Election {
            id: NodeId(99),
            hop,
        },
        RingMsg::Elected {
            leader: NodeId(99),
            hop,
        },
        RingMsg::Heartbeat {
            leader: NodeId(N + 1),
        },
    ] {
        actions.clear();
        ring.on_message(
            &mut Io::new(Time(1), &mut rng, &mut actions),
            NodeId(1),
            msg,
        );
        assert!(actions.is_empty(), "{actions:?}");
        assert_eq!(ring.status().leader, None);
    }
}
