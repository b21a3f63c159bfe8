//! `election-raft`: Raft's leader election (Ongaro & Ousterhout, *In Search of an
//! Understandable Consensus Algorithm*, 2014, §5.2; Ongaro's thesis, 2014, §6.2 and §9.6) as a
//! pure [`election_core::Protocol`] state machine, without the replicated log.
//!
//! # The algorithm
//!
//! Time is divided into **terms** numbered by consecutive integers; each term begins with an
//! election and has at most one leader. Every node is a *follower*, a *candidate* or the
//! *leader*, and keeps `current_term` and `voted_for` (the [`Stable`] record). Every message
//! carries its sender's term; a node that sees a higher term adopts it (forgetting its vote and
//! its leader) and becomes a follower, and a message with a lower term is answered with the
//! newer term, which makes a stale sender step down. The one exception is PreVote traffic (see
//! below), whose terms are hypothetical.
//!
//! A follower that hears nothing from a leader for an **election timeout** becomes a
//! candidate: it increments its term, votes for itself and sends `REQUEST_VOTE` to every other
//! node. A node grants at most **one vote per term**, first come first served (and not at all
//! in a term whose leader it already knows). Raft's log up-to-date check (§5.4.1) is vacuous
//! here: there is no log, so every candidate's log is "up to date". A candidate that collects
//! votes from a **majority of the configured cluster**, `n / 2 + 1` nodes counting itself — not
//! a majority of the nodes it can reach — becomes leader. Two majorities always share a node,
//! and that node votes once per term, so a term has at most one leader, and a minority side
//! of a partition can never elect one. If the candidate's own (freshly drawn) timeout passes
//! without a winner — a split vote, or lost messages — it starts another election in the next
//! term. A candidate that receives a heartbeat from a leader of its own or a newer term
//! becomes that leader's follower.
//!
//! The leader sends an empty `APPEND_ENTRIES` heartbeat to everyone at once on winning (Raft
//! has no separate leader announcement, so this first heartbeat *is* the announcement; it is
//! still counted in the Heartbeat category) and then every `timing.heartbeat`; followers
//! answer each with `APPEND_RESP`. In a single-node cluster the node elects itself when its
//! first timeout fires: a majority of one is itself.
//!
//! # Timeouts
//!
//! The election timeout is drawn uniformly from `[timeout_min, timeout_max]` and **redrawn
//! every time it is armed**: on boot, on every valid heartbeat from the current leader, on
//! granting a vote, and at the start of each (pre-)candidacy. Equal bounds are allowed and
//! express zero randomness; with every node starting together, the elections then split
//! forever, which is what the randomization exists to prevent. The defaults,
//! `timing.detect_timeout` and `timing.detect_timeout + timing.detect_jitter` (150–300 ms),
//! are the failure-detection window every protocol in the workbench uses. The follower's
//! election timeout is the node's failure detector ([`RaftTimer::Election`]); a
//! (pre-)candidate's retry timeout is a separate timer ([`RaftTimer::ElectionRetry`]) drawn from
//! the same range, so switching a node's automatic detection off does not stop a candidacy
//! from retrying. `on_suspect` makes a follower act as if its election timeout had fired.
//!
//! # Options
//!
//! **`pre_vote`** (thesis §9.6). A follower whose timeout fires first becomes a
//! *pre-candidate* (reported as [`election_core::Role::Candidate`]): it sends `PRE_VOTE` for
//! `current_term + 1` without changing or persisting its term. A node grants a pre-vote when
//! that term is above its own and it has *not* heard from a current leader within
//! `timeout_min` (a leader never grants one); neither side changes its state. Only with
//! pre-votes from a majority does the pre-candidate start a real election; if a majority
//! denies, it returns to being a follower with a fresh timeout, and if too few answer, it asks
//! again when its retry timeout fires. A node cut off from the majority therefore cannot raise
//! its term while isolated, and when it rejoins, the leader's next heartbeat (same term) turns it
//! back into a follower: it does not depose a healthy leader. Without PreVote the isolated node
//! raises its term on every timeout, and on rejoining that higher term makes the healthy
//! leader step down.
//!
//! **`check_quorum`** (thesis §6.2). The leader tracks when it last heard from each node in its
//! term (heartbeat responses and votes) and steps down to follower (same term, no leader) as
//! soon as `timeout_min` has passed without having heard from a majority, itself included; a
//! new leader gets one `timeout_min` of grace. Without it, a leader cut off on a minority side
//! keeps believing it leads (in its old term) until a message with a higher term reaches it.
//!
//! Both options are off by default (the paper's basic algorithm).
//!
//! # Stable storage
//!
//! `current_term` and `voted_for` are written with [`election_core::Io::persist`] whenever
//! they change, and always *before* any message that depends on them is pushed into the same
//! `Io`: the `REQUEST_VOTE`s of a new term follow the record of the self-vote, a `VOTE` follows
//! the record of that vote, and a reply that reveals a newly adopted term follows that term's
//! record. Drivers carry out an input's actions in order, so the record reaches stable storage
//! before the message leaves. On recovery `on_start` restores both, so a restarted node never
//! votes twice in a term. Everything else (role, leader, tallies) is volatile.
//!
//! # Messages
//!
//! | kind | category | meaning |
//! |---|---|---|
//! | `REQUEST_VOTE` | Election | candidate asks for a vote |
//! | `VOTE` / `VOTE_DENIED` | Reply | vote granted / refused (distinct kinds, so a trace shows grants) |
//! | `PRE_VOTE` | Election | pre-candidate asks whether it would get a vote |
//! | `PRE_VOTE_GRANT` / `PRE_VOTE_DENIED` | Reply | pre-vote granted / refused |
//! | `APPEND_ENTRIES` | Heartbeat | leader heartbeat (and, the first time, announcement) |
//! | `APPEND_RESP` | Heartbeat | heartbeat answer |
//!
//! Every message is a one-byte tag and a u64 term (9 bytes on the wire).
#![warn(missing_docs, unreachable_pub)]

mod config;
mod message;
mod node;
mod wire;

pub use config::RaftConfig;
pub use message::{LogPos, RaftMsg, RaftTimer};
pub use node::{Raft, Stable};
