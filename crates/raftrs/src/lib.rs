//! `election-raftrs`: tikv's raft-rs (the `raft` crate 0.7, `RawNode` over `MemStorage`)
//! behind the workbench's [`election_core::Protocol`] contract, so the production library runs
//! in the same simulator, under the same faults and the same node-time model, as our own
//! `election-raft`.
//!
//! raft-rs is sans-IO: it has no clock, no network and no disk. This crate supplies them:
//!
//! # Time: one tick timer
//!
//! Every node arms one timer, [`RaftrsTimer::Tick`], at a fixed rate of one per
//! [`RaftrsConfig::tick`] on its own clock ([`election_core::Ticker`]: Go's `time.Ticker`,
//! which etcd uses to drive the same tick-counting rules; so clock drift, timer jitter and CPU
//! time apply to each tick, but one late tick does not delay the later ones, and ticks missed
//! during a pause are dropped) and calls `RawNode::tick` when it fires. Every raft-rs timeout
//! is a whole number of ticks, counted by the library:
//!
//! - `heartbeat_tick = max(1, round(heartbeat / tick))`: a leader broadcasts a heartbeat every
//!   that many ticks;
//! - `election_tick = max(heartbeat_tick + 1, round(detect_timeout / tick))` (raft-rs requires
//!   it above `heartbeat_tick`): the minimum election timeout, and the leader's CheckQuorum
//!   period;
//! - the randomized election timeout is drawn from the half-open `[election_tick,
//!   election_tick + round(detect_jitter / tick))` ticks (`min_election_tick =
//!   election_tick`, `max_election_tick` the top, as raft-rs draws it in
//!   `Raft::reset_randomized_election_timeout`, `src/raft.rs`: `gen_range(min..max)`). With
//!   jitter = timeout, the default, that is raft-rs's own default range `[election_tick, 2 ×
//!   election_tick)` (`Config::min_election_tick` and `max_election_tick`, `src/config.rs`).
//!
//! With the defaults (tick = heartbeat = 50 ms, detection window 150–300 ms) that is a
//! heartbeat every tick and an election timeout of 3–5 ticks. raft-rs counts elapsed ticks
//! from the last reset (a heartbeat, a vote), which falls anywhere within a tick, so a timeout
//! of `k` ticks is `(k - 1) × tick` to `k × tick` of real time: 100–250 ms, the library's
//! granularity, kept as it is.
//!
//! Each node's ticker starts in its own phase ([`election_core::Ticker::start`], drawn from
//! the node's seeded stream), as independent processes' tickers do: a cluster whose members
//! all ticked together would lose the same part of a tick on every node, and never see a vote
//! refused by a member whose count is one tick behind.
//!
//! # Randomness
//!
//! raft-rs draws its randomized election timeout from `rand::thread_rng` in
//! `Raft::reset_randomized_election_timeout` (raft-rs 0.7 `src/raft.rs`), which it calls only
//! from `Raft::reset`, which only `become_follower`, `become_candidate` and `become_leader`
//! call. Each of those changes the node's term or role to a role other than pre-candidate
//! (`become_pre_candidate` does not reset). So after every call into the library this crate
//! compares (term, role) with what it was before and, on such a change, overwrites the draw
//! with `set_randomized_election_timeout(k)`, `k` drawn from the node's seeded generator
//! ([`election_core::Io::rng`]) over the same range. The overwrite happens before the call
//! returns to the driver, so no tick ever reads the unseeded draw: runs are a function of
//! the seed. No patch of the crate is needed.
//!
//! # Stable storage and the fsync model
//!
//! After every input the node drains `RawNode::ready` the way raft-rs documents it (its
//! `examples/five_mem_node`): messages of `Ready::take_messages` leave at once; new entries
//! and a changed `HardState` go into the node's `MemStorage` and then to stable storage with
//! one [`election_core::Io::persist`] of the whole [`Stable`] record; the messages of
//! `Ready::take_persisted_messages` (votes, append responses) are sent only after that
//! persist, so the simulator's fsync latency delays them exactly as it delays our Raft's;
//! then `RawNode::advance` and the messages and commit index of its `LightReady`, and
//! `advance_apply` (nothing is applied: entries are empty). On restart (`on_start` with a
//! record) `MemStorage` is rebuilt from the record: hard state, configuration and log.
//!
//! # The log and the workload
//!
//! A client entry ([`election_core::Protocol::on_client_entry`]) is `RawNode::propose` of an
//! empty entry when the node leads, as our Raft appends one entry of its term; the library
//! replicates and commits it. Every entry this crate creates is an empty `EntryNormal` (the
//! leader's no-op and client entries), so the persisted log is the term of each entry, by
//! index from 1 ([`Stable::terms`]).
//!
//! # Options
//!
//! `pre_vote` and `check_quorum` are raft-rs's own `Config` flags, with raft-rs's rules:
//! CheckQuorum is checked by the leader every `election_tick` ticks (not continuously, as in
//! our Raft), and with it a follower that heard from its leader within `election_tick` ticks
//! ignores a RequestVote of a higher term (raft-rs's leader lease in `Raft::step`).
//!
//! # What it does not do
//!
//! raft-rs has no failure detector a scenario can force: a follower campaigns only when its
//! ticks count out. [`election_core::Protocol::on_suspect`] is ignored, and the tick timer is
//! not a failure-detector timer (switching detection off would also stop the leader's
//! heartbeats), so the runner skips scenarios that force or switch failure detection, with
//! that reason.
//!
//! A planned stop ([`election_core::Protocol::on_handover`]) uses the library's own
//! leadership transfer, `RawNode::transfer_leader`, to the other voter with the highest
//! `matched` index (the lowest id on ties); the adapter admits the `MsgTimeoutNow` it sends.
//!
//! # Wire
//!
//! In live mode a message is raft-rs's own protobuf encoding (`eraftpb::Message`, protobuf
//! 2's `write_to_bytes`/`parse_from_bytes`) after a 4-byte big-endian length; see
//! [`RaftrsMsg`].
mod node;
mod wire;

pub use node::{RaftRs, RaftrsConfig, RaftrsTimer, Stable, Ticks};
pub use wire::{RaftrsMsg, MAX_WIRE_BYTES, MAX_WIRE_TERM};
