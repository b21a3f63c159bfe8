//! The turmoil peer of the performance comparison (`benches/peers/compare.sh`, issue #49):
//! the same raft-rs election as election-bench's `raftrs` family under `leader-crash`, run in
//! [turmoil](https://github.com/tokio-rs/turmoil), tokio's deterministic simulator, instead of
//! ours.
//!
//! ```text
//! cargo run --release -- [NODES] [MIN_TRIALS] [MIN_SECONDS] [--key value ...]
//! ```
//!
//! Each of the `NODES` members is a turmoil host (`n1` ... `nN`) running a raft-rs 0.7
//! `RawNode` over `MemStorage` on turmoil's tokio runtime:
//!
//! - it ticks on a `tokio::time::interval` of `--tick-ms` (default 50 ms: our raftrs mapping's
//!   `raftrs.tick_ms` = `heartbeat_ms`), first ticking after a phase drawn from `(0, tick]`
//!   (as `election_core::Ticker::start`), skipping missed ticks (Go's `time.Ticker`);
//! - raft-rs's `Config` has our mapping's ticks (`--heartbeat-ticks` 1, `--election-ticks` 3,
//!   randomized timeout drawn from `--election-ticks` to `--election-max-ticks` 5 inclusive).
//!   raft-rs draws that timeout from `thread_rng`; as in `crates/raftrs`, every draw is
//!   overwritten (`set_randomized_election_timeout`) with one from the node's own generator,
//!   seeded from the trial's seed, so a trial is a function of its seed;
//! - messages are raft-rs's protobuf encoding (`eraftpb::Message`) in one UDP datagram each,
//!   over `turmoil::net::UdpSocket`; votes and append responses leave after the `MemStorage`
//!   write, in raft-rs's `Ready` order (`examples/five_mem_node`).
//!
//! The driver steps the simulation one turmoil tick (`--turmoil-tick-us`, default turmoil's
//! own 1 ms) at a time and reads every member's (role, term, leader) after each step, with our
//! observer's "quorum leader": a member in the leader role named leader by more than n/2 of the
//! n members, itself included. The leader-crash timeline is the runner's:
//!
//! - the fault instant is `--fault-ms` + U[0, `--fault-jitter-ms`] (1200 + U[0, 300] ms with the
//!   runner's defaults), held until there is a quorum leader;
//! - then that leader is crashed with `Sim::crash`;
//! - the trial ends once a quorum leader has led for `--settle-ms` (the longer of the runner's
//!   `settle_ms` and the verdict's hold span: 3000 ms by default) since the later of the crash
//!   and the start of its leadership (converged), or at `--horizon-ms` (not converged).
//!
//! Latency: turmoil draws a message's latency as `min + whole_ms(range_ms * Exp(5))`, in whole
//! milliseconds, and delivers it at a step boundary; our `lan` profile is log-normal with a
//! median of 0.25 ms. The peer sets `min = max = --latency-us` (250 µs, `lan`'s median), so each
//! datagram is delivered at the first step boundary at least 250 µs after it was sent: the
//! next 1 ms step. See `benches/README.md`, "peers/: against turmoil".
//!
//! Trials use seeds 0, 1, 2, ... (turmoil's `rng_seed` and the members' generators), one after
//! another on one thread, until both MIN_TRIALS and MIN_SECONDS are reached (defaults: 20
//! trials, 1 s); one unmeasured trial warms the allocator first. It prints one JSON line.

use std::cell::RefCell;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::time::{Duration, Instant};

use protobuf::Message as _;
use raft::eraftpb::{ConfState, Message};
use raft::storage::MemStorage;
use raft::{RawNode, StateRole};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

const PORT: u16 = 9000;
/// turmoil's version, from Cargo.lock at build time (see build.rs).
const TURMOIL_VERSION: &str = env!("TURMOIL_VERSION");

/// The workload's parameters (defaults: the runner's for `raftrs` `leader-crash`).
#[derive(Clone, Debug)]
struct Params {
    n: u64,
    tick: Duration,
    heartbeat_ticks: usize,
    election_ticks: usize,
    election_max_ticks: usize,
    fault_ms: f64,
    fault_jitter_ms: f64,
    settle_ms: f64,
    horizon_ms: f64,
    latency: Duration,
    turmoil_tick: Duration,
}

impl Params {
    fn defaults(n: u64) -> Params {
        Params {
            n,
            tick: Duration::from_millis(50),
            heartbeat_ticks: 1,
            election_ticks: 3,
            election_max_ticks: 5,
            fault_ms: 1200.0,
            fault_jitter_ms: 300.0,
            settle_ms: 3000.0,
            horizon_ms: 19_500.0,
            latency: Duration::from_micros(250),
            turmoil_tick: Duration::from_millis(1),
        }
    }

    fn set(&mut self, key: &str, v: &str) {
        let f = || -> f64 { v.parse().unwrap_or_else(|_| panic!("--{key}: a number")) };
        let ms = |x: f64| Duration::from_nanos((x * 1e6).round() as u64);
        match key {
            "tick-ms" => self.tick = ms(f()),
            "heartbeat-ticks" => self.heartbeat_ticks = f() as usize,
            "election-ticks" => self.election_ticks = f() as usize,
            "election-max-ticks" => self.election_max_ticks = f() as usize,
            "fault-ms" => self.fault_ms = f(),
            "fault-jitter-ms" => self.fault_jitter_ms = f(),
            "settle-ms" => self.settle_ms = f(),
            "horizon-ms" => self.horizon_ms = f(),
            "latency-us" => self.latency = ms(f() / 1e3),
            "turmoil-tick-us" => self.turmoil_tick = ms(f() / 1e3),
            _ => panic!("unknown option --{key}"),
        }
    }

    fn raft_config(&self, id: u64) -> raft::Config {
        raft::Config {
            id,
            election_tick: self.election_ticks,
            heartbeat_tick: self.heartbeat_ticks,
            min_election_tick: self.election_ticks,
            max_election_tick: self.election_max_ticks + 1,
            ..raft::Config::default()
        }
    }
}

/// What the driver reads of each member after every step, and the messages sent.
#[derive(Default)]
struct Shared {
    /// (is leader, term, leader id) by member index.
    status: Vec<(bool, u64, u64)>,
    sent: u64,
}

/// One member: a raft-rs `RawNode` driven by a tokio interval and a turmoil UDP socket.
struct Member {
    id: u64,
    p: Params,
    node: RawNode<MemStorage>,
    rng: SmallRng,
    sock: turmoil::net::UdpSocket,
    peers: Vec<SocketAddr>,
    shared: Rc<RefCell<Shared>>,
}

impl Member {
    fn term_role(&self) -> (u64, StateRole) {
        (self.node.raft.term, self.node.raft.state)
    }

    /// Overwrites raft-rs's unseeded timeout draw whenever the last call reset it (a change of
    /// term or role to anything but pre-candidate; see `crates/raftrs`).
    fn reseed(&mut self, before: Option<(u64, StateRole)>) {
        let now = self.term_role();
        let reset = match before {
            None => true,
            Some(b) => b != now && now.1 != StateRole::PreCandidate,
        };
        if reset {
            let k = self
                .rng
                .random_range(self.p.election_ticks..=self.p.election_max_ticks);
            self.node.raft.set_randomized_election_timeout(k);
        }
    }

    fn send_all(&self, msgs: Vec<Message>) -> turmoil::Result {
        for m in msgs {
            let to = m.to;
            if to == 0 || to > self.p.n || to == self.id {
                continue;
            }
            let bytes = m.write_to_bytes()?;
            self.sock
                .try_send_to(&bytes, self.peers[(to - 1) as usize])?;
            self.shared.borrow_mut().sent += 1;
        }
        Ok(())
    }

    /// raft-rs's `Ready` loop, as `crates/raftrs` runs it.
    fn drain_ready(&mut self) -> turmoil::Result {
        for _ in 0..16 {
            let before = self.term_role();
            if !self.node.has_ready() {
                break;
            }
            let mut rd = self.node.ready();
            let now = rd.take_messages();
            if !rd.entries().is_empty() {
                let _ = self.node.store().wl().append(rd.entries());
            }
            if let Some(hs) = rd.hs() {
                self.node.store().wl().set_hardstate(hs.clone());
            }
            let _ = rd.take_committed_entries();
            let after_persist = rd.take_persisted_messages();
            let mut light = self.node.advance(rd);
            if let Some(commit) = light.commit_index() {
                self.node.store().wl().mut_hard_state().commit = commit;
            }
            let later = light.take_messages();
            let _ = light.take_committed_entries();
            self.node.advance_apply();
            self.send_all(now)?;
            self.send_all(after_persist)?;
            self.send_all(later)?;
            self.reseed(Some(before));
        }
        let r = &self.node.raft;
        self.shared.borrow_mut().status[(self.id - 1) as usize] =
            (r.state == StateRole::Leader, r.term, r.leader_id);
        Ok(())
    }
}

async fn member(id: u64, p: Params, seed: u64, shared: Rc<RefCell<Shared>>) -> turmoil::Result {
    let sock = turmoil::net::UdpSocket::bind((IpAddr::V4(Ipv4Addr::UNSPECIFIED), PORT)).await?;
    let peers = (1..=p.n)
        .map(|i| SocketAddr::new(turmoil::lookup(format!("n{i}")), PORT))
        .collect();
    let voters: Vec<u64> = (1..=p.n).collect();
    let storage = MemStorage::new_with_conf_state(ConfState::from((voters, vec![])));
    let logger = slog::Logger::root(slog::Discard, slog::o!());
    let node = RawNode::new(&p.raft_config(id), storage, &logger)?;
    let rng = SmallRng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ id);
    let mut m = Member {
        id,
        p,
        node,
        rng,
        sock,
        peers,
        shared,
    };
    m.reseed(None);
    let tick_ns = m.p.tick.as_nanos() as u64;
    let phase = Duration::from_nanos(m.rng.random_range(1..=tick_ns));
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + phase, m.p.tick);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut buf = vec![0u8; 64 * 1024];
    m.drain_ready()?;
    loop {
        let before = m.term_role();
        tokio::select! {
            _ = ticker.tick() => m.node.tick(),
            r = m.sock.recv_from(&mut buf) => {
                let (len, _) = r?;
                let msg = Message::parse_from_bytes(&buf[..len])?;
                let _ = m.node.step(msg);
                false
            }
        };
        m.reseed(Some(before));
        m.drain_ready()?;
    }
}

/// The quorum leader: a member in the leader role named by more than n/2 live members.
fn quorum_leader(status: &[(bool, u64, u64)], up: &[bool]) -> Option<u64> {
    let n = status.len();
    (0..n)
        .filter(|&i| up[i] && status[i].0)
        .map(|i| i as u64 + 1)
        .find(|&l| (0..n).filter(|&j| up[j] && status[j].2 == l).count() > n / 2)
}

struct Trial {
    messages: u64,
    converged: bool,
    steps: u64,
}

fn trial(p: &Params, seed: u64) -> Trial {
    let mut sim = turmoil::Builder::new()
        .tick_duration(p.turmoil_tick)
        .min_message_latency(p.latency)
        .max_message_latency(p.latency)
        .simulation_duration(Duration::from_secs_f64(p.horizon_ms / 1e3 + 1.0))
        .udp_capacity(4096)
        .rng_seed(seed)
        .build();
    let n = p.n as usize;
    let shared = Rc::new(RefCell::new(Shared {
        status: vec![(false, 0, 0); n],
        sent: 0,
    }));
    for id in 1..=p.n {
        let (p, sh) = (p.clone(), shared.clone());
        sim.host(format!("n{id}"), move || {
            member(id, p.clone(), seed, sh.clone())
        });
    }
    let mut up = vec![true; n];
    let mut rng = SmallRng::seed_from_u64(seed);
    let fault_at = p.fault_ms + rng.random_range(0.0..=p.fault_jitter_ms);
    let mut crashed_at: Option<f64> = None;
    // (leader, since) of the current quorum leadership after the crash.
    let mut current: Option<(u64, f64)> = None;
    let mut converged = false;
    let mut steps = 0;
    loop {
        sim.step().expect("the simulation runs");
        steps += 1;
        let now = sim.elapsed().as_secs_f64() * 1e3;
        let leader = quorum_leader(&shared.borrow().status, &up);
        match crashed_at {
            None => {
                if now >= fault_at {
                    if let Some(l) = leader {
                        sim.crash(format!("n{l}"));
                        up[(l - 1) as usize] = false;
                        crashed_at = Some(now);
                    }
                }
            }
            Some(t0) => {
                let leader = leader.filter(|&l| up[(l - 1) as usize]);
                current = match (current, leader) {
                    (Some((c, since)), Some(l)) if c == l => Some((c, since)),
                    (_, Some(l)) => Some((l, now)),
                    (_, None) => None,
                };
                if let Some((_, since)) = current {
                    if now - since.max(t0) >= p.settle_ms {
                        converged = true;
                        break;
                    }
                }
            }
        }
        if now >= p.horizon_ms {
            break;
        }
    }
    let messages = shared.borrow().sent;
    Trial {
        messages,
        converged,
        steps,
    }
}

fn main() {
    let mut pos = Vec::new();
    let mut opts = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.strip_prefix("--") {
            Some(k) => opts.push((k.to_string(), args.next().expect("a value after --option"))),
            None => pos.push(a),
        }
    }
    let n: u64 = pos
        .first()
        .map_or(5, |s| s.parse().expect("NODES: a number"));
    let min_trials: u64 = pos
        .get(1)
        .map_or(20, |s| s.parse().expect("MIN_TRIALS: a number"));
    let min_secs: f64 = pos
        .get(2)
        .map_or(1.0, |s| s.parse().expect("MIN_SECONDS: a number"));
    let mut p = Params::defaults(n);
    for (k, v) in &opts {
        p.set(k, v);
    }
    assert!(n >= 2, "NODES: at least 2");

    // Warm the allocator with one trial, then time the rest.
    trial(&p, u64::MAX);
    let (mut messages, mut converged, mut steps, mut trials) = (0u64, 0u64, 0u64, 0u64);
    let start = Instant::now();
    while trials < min_trials || start.elapsed().as_secs_f64() < min_secs {
        let t = trial(&p, trials);
        trials += 1;
        messages += t.messages;
        steps += t.steps;
        converged += u64::from(t.converged);
    }
    let wall = start.elapsed().as_secs_f64();
    println!(
        "{}",
        json!({
            "model": "turmoil",
            "protocol": "raftrs",
            "scenario": "leader-crash",
            "n": n,
            "trials": trials,
            "messages": messages,
            "messages_per_trial": messages as f64 / trials as f64,
            "converged": converged,
            "steps": steps,
            "wall_s": wall,
            "msgs_per_s": messages as f64 / wall,
            "trials_per_s": trials as f64 / wall,
            "turmoil": TURMOIL_VERSION,
            "params": {
                "tick_ms": p.tick.as_secs_f64() * 1e3,
                "heartbeat_ticks": p.heartbeat_ticks,
                "election_ticks": p.election_ticks,
                "election_max_ticks": p.election_max_ticks,
                "fault_ms": p.fault_ms,
                "fault_jitter_ms": p.fault_jitter_ms,
                "settle_ms": p.settle_ms,
                "horizon_ms": p.horizon_ms,
                "latency_us": p.latency.as_secs_f64() * 1e6,
                "turmoil_tick_us": p.turmoil_tick.as_secs_f64() * 1e6,
            },
        })
    );
}
