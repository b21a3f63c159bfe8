//! `election-omnipaxos`: Omni-Paxos (Ng, Haridi & Carbone, *Omni-Paxos: Breaking the
//! Barriers of Partial Connectivity*, EuroSys '23) as an election-bench protocol family — the
//! real `omnipaxos` crate (0.2.4), not a model of it, behind the [`election_core::Protocol`]
//! contract.
//!
//! The library is sans-IO: it has no clock, no sockets and no randomness. It is driven by
//! `tick()`, `handle_incoming(msg)`, `append(entry)` and drained with
//! `take_outgoing_messages`; this crate is the adapter between that API and ours. Everything
//! the protocol decides is the library's (`omnipaxos/src/ballot_leader_election.rs` and
//! `omnipaxos/src/sequence_paxos/`); the adapter only maps time, storage, messages and status.
//!
//! # Time: one tick timer per node
//!
//! Each node arms one [`OmniTimer::Tick`] timer on its own clock and calls `tick()` when it
//! fires, at a fixed rate of one per `tick` ([`election_core::Ticker`], Go's `time.Ticker`
//! rule: a late tick does not delay the later ones; ticks missed in a pause are dropped), so
//! clock drift, timer jitter and CPU time apply to the library exactly as to any other
//! family. Omni-Paxos' Ballot Leader Election (BLE) works in
//! **heartbeat rounds**: every `election_tick_timeout` ticks a node ends its round
//! (`hb_timeout`: take the highest ballot among the replies, decide whether it is *happy* —
//! it sees a leader that is quorum-connected — and, if it is unhappy, every reply it got is
//! unhappy and it reached a quorum, take over with ballot `leader.n + 1`) and starts the next
//! by sending `HeartbeatRequest` to every peer. A leader that dies is therefore noticed (the
//! survivors become unhappy) at the end of the first round that got no reply from it: 1 to 2
//! rounds after its last reply. A survivor takes over only at the end of a round in which every
//! reply it collected was unhappy too, and replies carry the happiness of the round before, so
//! the takeover is one round later: 2 to 3 rounds after the crash. With the default timing that
//! is 300–450 ms (`run -p omnipaxos -n 3 -s leader-crash`: 366 ms at seed 0 in simulation,
//! 363–391 ms over two live trials on loopback), against the 150–300 ms the other families'
//! detectors fire in before their own election round trips.
//!
//! **The derivation.** The other families suspect a leader `detect_timeout +
//! U[0, detect_jitter]` after its last sign of life (150–300 ms by default). With a round of
//! `R` the library notices `R + U[0, R]` after the last reply (the crash lands anywhere in a
//! round), so the round is made `R = detect_timeout_ms`: the detection window is then
//! `[detect_timeout, 2 × detect_timeout]` (the takeover one round later, above), which is the
//! other families' detection window exactly when
//! `detect_jitter = detect_timeout` (the default) — the library has no jitter of its own to
//! set. The tick is `omnipaxos.tick_ms` (by default `heartbeat_ms`, 50 ms) and the round is
//! `election_ticks = max(1, round(detect_timeout_ms / tick_ms))` ticks (3 by default, so
//! exactly 150 ms); the tick also paces the library's message resends
//! (`resend_message_tick_timeout`, kept at the library's default of 100 ticks) and its batch
//! flush (unused: batch size 1). [`OmniConfig::describe`] prints the derived numbers.
//!
//! # Stable storage
//!
//! The library writes its durable state (promised ballot, accepted round, decided index, the
//! log, compaction, stop sign) through its `Storage` trait, synchronously, inside
//! `handle_incoming`/`tick`/`append`, *before* it queues the message that reveals the write: a
//! `Promise` is queued after `set_promise`, an `Accepted` after the entries are appended
//! (`sequence_paxos/follower.rs`). The library does not mark which messages depend on a
//! write, so the adapter treats them all as dependent: the storage here is the library's own
//! `omnipaxos_storage::memory_storage::MemoryStorage` wrapped to notice writes, and after
//! every input that wrote anything the adapter emits one [`election_core::Io::persist`] of
//! the whole record *before* any of that input's messages. Drivers carry out actions in order,
//! so every message leaves after the write it follows reached stable storage, and the fsync
//! model applies to every write. A restart ([`election_core::Protocol::on_start`] with the
//! record) rebuilds `MemoryStorage` from it and builds a fresh `OmniPaxos` on it: the library
//! sees a persisted promise and runs its own fail-recovery (`Phase::Recover`, a `PrepareReq`
//! to every peer; BLE starts from the recovered leader in the recovery round 0 so it cannot
//! keep leadership with its old ballot).
//!
//! # Status and epoch
//!
//! `get_current_leader()` is the pid of the ballot this node has **promised** in Sequence
//! Paxos, with whether its phase is `Accept`. The adapter reports:
//! - [`Role::Leader`] when the promised ballot is its own and it is in the `Accept` phase (it
//!   collected a quorum of promises and synchronised the log: it can replicate);
//! - [`Role::Candidate`] when the promised ballot is its own but it is still in `Prepare`
//!   (BLE elected it; the promises are not in yet) or recovering;
//! - [`Role::Follower`] otherwise, believing in the promised ballot's pid (none before any
//!   promise).
//!
//! The epoch is the promised ballot packed as `(n << 32) | pid` (`Ballot::n` is the round
//! number; custom priorities are never set, so `(n, pid)` orders exactly as the library's
//! `Ballot` does). Two nodes can take over with the same `n` concurrently; packing the pid in
//! keeps every leader's epoch unique, which the fencing token needs. The quorum rule is
//! [`QuorumRule::Members`]: Sequence Paxos needs a majority of the configured nodes.
//!
//! # `reconnected`
//!
//! The library asks its user to call `reconnected(pid)` when "the underlying network
//! implementation indicates that a connection has been re-established" (it then sends the peer
//! a `PrepareReq`, and a follower that lost its leader's session goes to `Phase::Recover` to
//! resynchronise). The simulator and the UDP driver have no sessions, so the adapter defines
//! the session: **a peer's session dropped when nothing arrived from it for longer than two
//! heartbeat rounds** (BLE exchanges a request and a reply with every peer every round, so
//! two silent rounds mean the link or the peer was down), and the first message from it after
//! such a gap re-establishes it: the adapter calls `reconnected(pid)` before handing that
//! message to the library. A node that restarts does not call it: its own recovery (above)
//! already sends `PrepareReq` to every peer, and its peers see its silence as a gap.
//!
//! # The workload
//!
//! A client entry ([`election_core::Protocol::on_client_entry`]) is `append`ed when the node
//! is the leader (as above), like our Raft under majority commit; elsewhere it is dropped (the
//! library would forward it to the leader; the workload hands entries to leaders only).
//!
//! # What it does not have
//!
//! No failure-detector timer a scenario could switch off or force: BLE's rounds *are* the
//! detector and run on the same tick as replication. [`election_core::Protocol::on_suspect`]
//! is ignored, and the runner skips scenarios that force or switch detection (their cells say
//! why). No randomness: the library draws nothing, so a trial is a function of its seed
//! through the network and node model alone.
//!
//! # Messages
//!
//! Each message is the library's `Message<OmniEntry>`, encoded with `bincode` 1.x (fixed-width
//! integers, little-endian, at most [`MAX_WIRE`] bytes, trailing bytes refused); its wire size
//! is its encoding's length. Kinds and categories:
//!
//! | kind | category | library message |
//! |---|---|---|
//! | `HB_REQUEST` / `HB_REPLY` | Heartbeat | BLE heartbeat round request / reply (ballot, leader, happy) |
//! | `PREPARE_REQ` | Election | ask the leader for a `Prepare` (recovery, reconnection) |
//! | `PREPARE` | Election | a new leader's prepare with its ballot |
//! | `PROMISE` | Reply | promise, with the log suffix the leader lacks |
//! | `ACCEPT_SYNC` | Leader | the new leader's synchronised log: it now leads |
//! | `ACCEPT_DECIDE`, `ACCEPTED`, `NOT_ACCEPTED`, `DECIDE` | Heartbeat | replication |
//! | `FORWARD`, `COMPACTION`, `ACCEPT_STOPSIGN`, `FORWARD_STOPSIGN` | Heartbeat | proposals forwarded, trims, reconfiguration (never sent here) |
mod node;
mod wire;

pub use node::{OmniConfig, OmniEntry, OmniMsg, OmniPaxos, OmniTimer, Record};
pub use wire::{MAX_BALLOT, MAX_WIRE};
