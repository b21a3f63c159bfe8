//! Issue 47: only the cluster's own members can speak in a live run.
//!
//! A forger on loopback sends more than 10,000 datagrams to every endpoint of a live trial of
//! each family (bully, ring, raft, lease, raftrs, omnipaxos) while it elects: random bytes;
//! well-formed messages with the extreme values that once wedged a cluster (terms and epochs
//! of 2^48 and beyond, Omni-Paxos ballots of 2^31 and 2^32 − 1, indices of 2^64 − 1, ids 0
//! and 99), sealed under a guessed key, framed in the old unauthenticated format, and naming
//! a non-member sender; replays of genuine datagrams it peeked off the nodes' sockets, to
//! their receiver and to another node; and the same from an address of its own. All but the
//! last come from the members' own addresses ([`Hooks::on_sockets`]: what spoofing the source
//! address achieves), so it is the tag, not the address check, that has to stop them.
//!
//! Properties, each family, one trial with the forger and one without, same seed:
//! * no node accepts a forged datagram: every delivery the observer saw matches a send by the
//!   trial's own nodes on the same link (a forged message would be a delivery nobody sent);
//! * the trial elects as it does without the forger: the same verdict (`outcome`), a leader
//!   either way, the same leader where the family's ids decide it (bully, ring);
//! * `datagrams_rejected` counts them: at least 10,000, at most what was sent (no genuine
//!   datagram is rejected), each kind of forgery in its own counter.
//!
//! Bounded: 10,400 datagrams paced over about 1.5 s per family, cold-start trials that settle
//! 2 s after their first leader, every socket on 127.0.0.1; the forger stops by itself.

use std::collections::{BTreeMap, HashSet};
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use election_bully::{BullyMsg, MAX_WIRE_EPOCH};
use election_core::{NodeId, Time, Wire};
use election_lease::{LeaseMsg, Op, Record};
use election_live::datagram::{self, Envelope, Key, HEADER, MAX_DATAGRAM};
use election_live::{live_config, run_built, Hooks, LiveReport};
use election_omnipaxos::OmniMsg;
use election_raft::{LogPos, RaftMsg, MAX_WIRE_TERM};
use election_raftrs::RaftrsMsg;
use election_ring::{Hop, RingMsg};
use election_runner::{Cell, SweepSpec};
use election_sim::TraceKind;

/// Datagrams the forger sends per trial: at least 10,000 must be rejected; the margin is for
/// the kernel, which may drop a few when a busy node's socket buffer is full.
const FORGED: usize = 10_400;
/// Datagrams per burst; a burst every millisecond or so keeps every socket buffer far from
/// full (a few datagrams per endpoint per burst).
const BURST: usize = 8;
/// The forger stops after this long whatever it has sent.
const FORGER_LIMIT: Duration = Duration::from_secs(8);

fn cell(protocol: &str, nodes: u32) -> Cell {
    let mut spec = SweepSpec {
        name: Some("forgery".into()),
        params: vec![
            ("settle_ms".into(), vec!["2000".into()]),
            ("horizon_ms".into(), vec!["8000".into()]),
        ],
        ..SweepSpec::default()
    }
    .one_cell(protocol, nodes, "cold-start", "ideal");
    spec.first_seed = Some(0);
    spec.plan()
        .unwrap()
        .runnable_cell(|_, why| why.to_string())
        .unwrap()
}

fn run(cell: &Cell, seed: u64, hooks: Hooks) -> LiveReport {
    let mut cfg = live_config(cell, seed, false, Ipv4Addr::LOCALHOST.into());
    cfg.trial.trace = true;
    run_built(cell.built.as_ref().unwrap(), &cfg, hooks).unwrap()
}

fn encoded<M: Wire>(m: &M) -> Vec<u8> {
    let mut out = Vec::new();
    m.encode(&mut out);
    out
}

/// Well-formed messages of each family carrying the values that wedged, or could wedge, a
/// cluster (issue 47 and the decoders' bounds), for an `n`-member cluster.
fn extreme_payloads(family: &str, n: u32) -> Vec<Vec<u8>> {
    let huge = [
        MAX_WIRE_TERM - 1,
        MAX_WIRE_TERM,
        MAX_WIRE_TERM + 1,
        u64::MAX,
    ];
    let mut out = Vec::new();
    for &v in &huge {
        match family {
            "bully" => {
                let epoch = Some(v.min(MAX_WIRE_EPOCH));
                out.push(encoded(&BullyMsg::Coordinator { epoch }));
                out.push(encoded(&BullyMsg::Election { epoch, stamp: None }));
                out.push(encoded(&BullyMsg::Heartbeat {
                    epoch,
                    stamp: Some(Time(v)),
                }));
            }
            "ring" => {
                let hop = Some(Hop {
                    seq: u32::MAX,
                    round: v,
                });
                out.push(encoded(&RingMsg::Elected {
                    leader: NodeId(n),
                    hop,
                }));
                out.push(encoded(&RingMsg::Election {
                    id: NodeId(99),
                    hop,
                }));
                out.push(encoded(&RingMsg::Heartbeat { leader: NodeId(1) }));
            }
            "raft" => {
                let log = LogPos {
                    term: v,
                    index: u64::MAX,
                };
                out.push(encoded(&RaftMsg::RequestVote {
                    term: v,
                    last_log: log,
                    transfer: true,
                }));
                out.push(encoded(&RaftMsg::AppendEntries { term: v, log }));
                out.push(encoded(&RaftMsg::Vote {
                    term: v,
                    granted: true,
                }));
            }
            "lease" => {
                let record = Record {
                    holder: Some(NodeId(1)),
                    version: v,
                    transitions: v,
                    duration: Duration::from_secs(3600),
                    acquire: Time(v),
                    renew: Time(v),
                };
                out.push(encoded(&LeaseMsg::Record(record)));
                out.push(encoded(&LeaseMsg::Update {
                    op: Op::Acquire,
                    record,
                }));
                out.push(encoded(&LeaseMsg::Updated {
                    op: Op::Renew,
                    ok: true,
                    record,
                }));
            }
            "raftrs" => {
                use raft::eraftpb::MessageType::*;
                for (t, from) in [(MsgRequestVote, 1), (MsgAppend, 2), (MsgHeartbeat, 99)] {
                    let mut m = raft::eraftpb::Message::default();
                    m.set_msg_type(t);
                    m.from = from;
                    m.to = 1;
                    m.term = v;
                    m.log_term = v;
                    m.index = v;
                    m.commit = v;
                    out.push(encoded(&RaftrsMsg(m)));
                }
            }
            "omnipaxos" => {
                use omnipaxos::ballot_leader_election::Ballot;
                use omnipaxos::messages::ballot_leader_election::{
                    BLEMessage, HeartbeatMsg, HeartbeatReply,
                };
                use omnipaxos::messages::sequence_paxos::{PaxosMessage, PaxosMsg, Prepare};
                use omnipaxos::messages::Message;
                let round = [1u32 << 31, u32::MAX, (1 << 31) - 1, 7]
                    [huge.iter().position(|&h| h == v).unwrap()];
                let ballot = Ballot {
                    config_id: 1,
                    n: round,
                    priority: u32::MAX,
                    pid: 1,
                };
                out.push(encoded(&OmniMsg(Message::SequencePaxos(PaxosMessage {
                    from: 1,
                    to: 2,
                    msg: PaxosMsg::Prepare(Prepare {
                        n: ballot,
                        decided_idx: usize::MAX,
                        n_accepted: ballot,
                        accepted_idx: usize::MAX,
                    }),
                }))));
                out.push(encoded(&OmniMsg(Message::BLE(BLEMessage {
                    from: 1,
                    to: 2,
                    msg: HeartbeatMsg::Reply(HeartbeatReply {
                        round,
                        ballot,
                        leader: ballot,
                        happy: false,
                    }),
                }))));
            }
            other => panic!("no payloads for {other}"),
        }
    }
    out
}

/// The old, unauthenticated frame (format version 1): `[1][sender][length][payload]`.
fn v1_frame(sender: u32, payload: &[u8]) -> Vec<u8> {
    let mut b = vec![1u8];
    b.extend_from_slice(&sender.to_be_bytes());
    b.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    b.extend_from_slice(payload);
    b
}

/// The forger's own generator (splitmix64): its choices need no quality, only variety.
struct Mix(u64);
impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A genuine datagram the forger peeked: its bytes, its sender's and its receiver's index.
type Captured = (Vec<u8>, usize, usize);

/// What the forger did.
#[derive(Debug, Default)]
struct Forged {
    /// Datagrams sent, by kind.
    sent: BTreeMap<&'static str, usize>,
    /// Genuine datagrams peeked off the nodes' sockets.
    captured: usize,
}

impl Forged {
    fn total(&self) -> usize {
        self.sent.values().sum()
    }
}

/// Send `bytes` from `socket` to `to`, waiting out a full send buffer (bounded by the caller's
/// deadline); true if it went.
fn send(socket: &UdpSocket, bytes: &[u8], to: SocketAddr, until: Instant) -> bool {
    loop {
        match socket.send_to(bytes, to) {
            Ok(_) => return true,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && Instant::now() < until => {
                std::thread::sleep(Duration::from_micros(200))
            }
            Err(_) => return false,
        }
    }
}

/// The forger: peeks genuine datagrams off the endpoints' sockets (without taking them) and
/// sends [`FORGED`] datagrams of every kind, in bursts, then stops.
fn forge(family: &'static str, members: u32, sockets: Vec<UdpSocket>, out: Arc<Mutex<Forged>>) {
    let started = Instant::now();
    let until = started + FORGER_LIMIT;
    let addrs: Vec<SocketAddr> = sockets.iter().map(|s| s.local_addr().unwrap()).collect();
    let endpoints = addrs.len();
    let own = UdpSocket::bind("127.0.0.1:0").unwrap();
    own.set_nonblocking(true).unwrap();
    let payloads = extreme_payloads(family, members);
    let guessed = Key::from_bytes([0x47; 32]);
    // Genuine datagrams seen; a few dozen suffice.
    let captured: Arc<Mutex<Vec<Captured>>> = Arc::default();
    // What the forger sent, so that it never takes its own datagrams for genuine ones.
    let mine: Arc<Mutex<HashSet<Vec<u8>>>> = Arc::default();
    let done = Arc::new(AtomicBool::new(false));
    let peeker = {
        let captured = Arc::clone(&captured);
        let mine = Arc::clone(&mine);
        let done = Arc::clone(&done);
        let sockets: Vec<UdpSocket> = sockets.iter().map(|s| s.try_clone().unwrap()).collect();
        let addrs = addrs.clone();
        std::thread::spawn(move || {
            // Room for the forger's own oversized datagrams, so that it recognises them whole.
            let mut buf = vec![0u8; 4 * MAX_DATAGRAM];
            while !done.load(Ordering::Relaxed) && Instant::now() < until {
                for (to, s) in sockets.iter().enumerate() {
                    // Non-blocking, shared with the node: usually nothing is waiting.
                    if let Ok((len, from)) = s.peek_from(&mut buf) {
                        if len > MAX_DATAGRAM || mine.lock().unwrap().contains(&buf[..len]) {
                            continue;
                        }
                        let mut c = captured.lock().unwrap();
                        if let Some(from) = addrs.iter().position(|a| *a == from) {
                            if c.len() < 64 && !c.iter().any(|(b, ..)| b[..] == buf[..len]) {
                                c.push((buf[..len].to_vec(), from, to));
                            }
                        }
                    }
                }
                std::thread::sleep(Duration::from_micros(100));
            }
        })
    };
    let mut rng = Mix(0x5eed ^ family.len() as u64);
    let mut forged = Forged::default();
    let mut bytes = Vec::with_capacity(MAX_DATAGRAM);
    let mut i = 0;
    while i < FORGED && Instant::now() < until {
        let to = i % endpoints;
        // A spoofed sender: another endpoint's own socket.
        let from = (to + 1 + rng.below(endpoints - 1)) % endpoints;
        let payload = &payloads[rng.below(payloads.len())];
        let env = Envelope {
            from: NodeId(from as u32 + 1),
            to: NodeId(to as u32 + 1),
            seq: [1, 2, u64::MAX, rng.next()][rng.below(4)],
        };
        let (kind, socket, dest): (&'static str, &UdpSocket, usize) = match i % 6 {
            0 => {
                let len = rng.below(MAX_DATAGRAM + 64);
                bytes.clear();
                bytes.extend((0..len).map(|_| rng.next() as u8));
                if len > HEADER && rng.below(2) == 0 {
                    // Random bytes behind this format's version byte.
                    bytes[0] = datagram::VERSION;
                }
                ("random bytes", &sockets[from], to)
            }
            1 => {
                datagram::seal(&guessed, env, payload, &mut bytes);
                ("extreme values, guessed key", &sockets[from], to)
            }
            2 => {
                bytes = v1_frame(env.from.0, payload);
                ("extreme values, unauthenticated frame", &sockets[from], to)
            }
            3 => {
                datagram::seal(&guessed, env, payload, &mut bytes);
                ("from a non-member address", &own, to)
            }
            4 => {
                let c = captured.lock().unwrap();
                if c.is_empty() {
                    drop(c);
                    datagram::seal(&guessed, env, payload, &mut bytes);
                    ("extreme values, guessed key", &sockets[from], to)
                } else {
                    let (b, f, t) = &c[rng.below(c.len())];
                    bytes.clone_from(b);
                    // To its own receiver (a replay), or to another node (misdirected).
                    let dest = if rng.below(2) == 0 {
                        *t
                    } else {
                        (t + 1) % endpoints
                    };
                    ("replay", &sockets[*f], dest)
                }
            }
            _ => {
                let env = Envelope {
                    from: NodeId([0, 99, members + 7][rng.below(3)]),
                    ..env
                };
                datagram::seal(&guessed, env, payload, &mut bytes);
                ("non-member sender id", &sockets[from], to)
            }
        };
        mine.lock().unwrap().insert(bytes.clone());
        if send(socket, &bytes, addrs[dest], until) {
            *forged.sent.entry(kind).or_default() += 1;
        }
        i += 1;
        if i % BURST == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    done.store(true, Ordering::Relaxed);
    peeker.join().unwrap();
    forged.captured = captured.lock().unwrap().len();
    *out.lock().unwrap() = forged;
}

/// Every delivery the observer saw matches a send on the same link: a delivery more than the
/// sends on a link is a datagram no node of the trial sent, accepted.
fn every_delivery_was_sent(r: &LiveReport) {
    let mut balance: BTreeMap<(u32, u32, &str), i64> = BTreeMap::new();
    for e in &r.trace {
        match e.what {
            TraceKind::Send(m) => *balance.entry((m.from.0, m.to.0, m.kind)).or_default() += 1,
            TraceKind::Deliver(m) => {
                let b = balance.entry((m.from.0, m.to.0, m.kind)).or_default();
                *b -= 1;
                assert!(
                    *b >= 0,
                    "{} -> {} {}: delivered more than sent",
                    m.from,
                    m.to,
                    m.kind
                );
            }
            _ => {}
        }
    }
    assert!(
        r.metrics.total.delivered > 0,
        "the trial's own traffic went through"
    );
}

fn forger_is_shut_out(family: &'static str, protocol: &str, nodes: u32, ids_decide: bool) {
    let cell = cell(protocol, nodes);
    let seed = 1;
    let without = run(&cell, seed, Hooks::default());
    assert_eq!(without.health.rejected(), 0, "{:?}", without.health.notes);

    let forged = Arc::new(Mutex::new(Forged::default()));
    let forger = Arc::new(Mutex::new(None));
    let hooks = Hooks {
        on_sockets: Some(Box::new({
            let forged = Arc::clone(&forged);
            let forger = Arc::clone(&forger);
            move |sockets| {
                let t = std::thread::spawn(move || forge(family, nodes, sockets, forged));
                *forger.lock().unwrap() = Some(t);
            }
        })),
        ..Hooks::default()
    };
    let with = run(&cell, seed, hooks);
    let t = forger.lock().unwrap().take().expect("the forger started");
    t.join().unwrap();
    let forged = std::mem::take(&mut *forged.lock().unwrap());
    let h = &with.health;
    let said = format!("{family}: forger {forged:?}, health {h:?}");

    // No node accepted one.
    every_delivery_was_sent(&with);
    // The trial elected as it does without the forger.
    let (a, b) = (&without.metrics, &with.metrics);
    assert_eq!(b.outcome, a.outcome, "{said}");
    assert_eq!(b.converged, a.converged, "{said}");
    assert!(a.leader.is_some() && b.leader.is_some(), "{said}");
    if ids_decide {
        assert_eq!(b.leader, a.leader, "{said}");
    }
    assert!(!b.split_brain, "{said}");
    // datagrams_rejected counts them, by kind.
    assert!(forged.total() >= 10_000, "{said}");
    assert!(h.rejected() >= 10_000, "{said}");
    assert!(
        h.rejected() <= forged.total() as u64,
        "a genuine datagram was rejected: {said}"
    );
    assert_eq!(
        h.rejected_non_member as usize, forged.sent["from a non-member address"],
        "{said}"
    );
    assert!(h.rejected_frame > 0, "{said}");
    assert!(h.rejected_forged > 0, "{said}");
    assert_eq!(h.rejected_impersonation, 0, "a tag fails first: {said}");
    assert!(forged.captured > 0, "{said}");
    assert!(h.rejected_replay > 0, "{said}");
    assert_eq!(
        h.rejected_payload, 0,
        "no forged payload reached a decoder: {said}"
    );
}

#[test]
fn bully_forger_is_shut_out() {
    forger_is_shut_out("bully", "bully", 3, true);
}

#[test]
fn ring_forger_is_shut_out() {
    forger_is_shut_out("ring", "ring", 3, true);
}

#[test]
fn raft_forger_is_shut_out() {
    forger_is_shut_out("raft", "raft", 3, false);
}

#[test]
fn lease_forger_is_shut_out() {
    forger_is_shut_out("lease", "lease", 3, false);
}

/// At n = 5, where one forged datagram once wedged raft-rs.
#[test]
fn raftrs_forger_is_shut_out() {
    forger_is_shut_out("raftrs", "raftrs", 5, false);
}

/// The 3-node cluster one forged Prepare once wedged.
#[test]
fn omnipaxos_forger_is_shut_out() {
    forger_is_shut_out("omnipaxos", "omnipaxos", 3, false);
}
