//! `election-raft`: Raft's leader election (Ongaro & Ousterhout, *In Search of an
//! Understandable Consensus Algorithm*, 2014, §5.2; Ongaro's thesis, 2014, §6.2 and §9.6) as a
//! pure [`election_core::Protocol`] state machine, with the replicated log abstracted to the
//! position of its last entry.
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
//! in a term whose leader it already knows), and only to a candidate whose log is at least as
//! up-to-date as its own (§5.4.1, below). A candidate that collects
//! votes from a **majority of the configured cluster**, `n / 2 + 1` nodes counting itself — not
//! a majority of the nodes it can reach — becomes leader (with learners, a majority of the
//! voters: see "Learners" below). Two majorities always share a node,
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
//! # The log
//!
//! Each node keeps its log as the position of its last entry, [`LogPos`] `(term, index)`,
//! `(0, 0)` when empty; it is stable state, persisted with the term and the vote.
//! `REQUEST_VOTE` and `PRE_VOTE` carry the candidate's position, and a vote (or pre-vote) is
//! granted only if it is at least as up-to-date as the voter's: a later last term wins, and
//! with equal last terms the longer log (§5.4.1; etcd's `isUpToDate`). A refused candidate's
//! higher term is still adopted (§5.1).
//!
//! A new leader appends one no-op entry of its term at `(term, last index + 1)` (Raft §8,
//! thesis §6.4: a leader commits a blank entry at the start of its term), persisted before its
//! first heartbeat leaves, so a leader's last entry is always of its own term. Every
//! `APPEND_ENTRIES` names the position the recipient's log ends at once it holds the entries
//! the message (abstractly) ships; a follower that accepts it takes that position as its
//! own — the entries are taken as shipped with it, conflicting tails of earlier terms are
//! overwritten (§5.3) — and persists it before answering. A follower whose log already ends in
//! the leader's term keeps it if a reordered, older `APPEND_ENTRIES` ships less. A node that
//! misses a leader's heartbeats (partitioned, crashed, paused) therefore lacks that term's
//! no-op and can no longer win against nodes that have it. Nothing is ever committed or
//! applied here: the log exists for the election restriction. Client entries are not modelled
//! yet; a leader that appends them advances its last index in its own term and the same
//! shipping carries them.
//!
//! **Lagging replicas** ([`RaftConfig::lagging`], `(node, k)`): a replica whose replication
//! lags — a slow disk or link. The leader ships it its log only up to `k` entries before its
//! last one, and never further back than the log the leader won its term with (the entry
//! before its no-op): entries of earlier terms count as written, and this abstract log does
//! not know their terms. So a lagging node always lacks the current term's newest `k` entries
//! (with no client entries: just the no-op, whatever `k`). It never catches up while it
//! follows, and a lagging node that leads is up to date with itself. Consequences: a lagging
//! node never wins an election while the up-to-date nodes (crashed ones included) are a
//! majority of the cluster, since every majority then contains one and it refuses; if lagging
//! nodes are a majority, the leader's newest entries were never on a majority (not
//! committed), and a lagging node may win with votes from nodes no more up to date than
//! itself, so elections still complete whenever a majority is up (the most up-to-date live
//! node can always collect every live vote). The bully and the ring have no such rule.
//!
//! # Timeouts
//!
//! The election timeout is drawn uniformly from `[timeout_min, timeout_max]` and, by default,
//! **redrawn every time it is armed**: on boot, on every valid heartbeat from the current
//! leader, on granting a vote, and at the start of each (pre-)candidacy (see "Rule sets" for
//! etcd's once-per-term draw). Equal bounds are allowed and
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
//! `current_term + 1` and its last log position, without changing or persisting its term. A
//! node grants a pre-vote when that term is above its own, the pre-candidate's log is at least
//! as up-to-date as its own (§5.4.1), and it has *not* heard from a current leader within
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
//! soon as `timeout_min` has passed without having heard from a majority (of the voters, see
//! "Learners"), itself included; a
//! new leader gets one `timeout_min` of grace. Without it, a leader cut off on a minority side
//! keeps believing it leads (in its old term) until a message with a higher term reaches it.
//!
//! `check_quorum` also turns on **leader stickiness**, the follower-side rule of thesis §4.2.3,
//! because etcd ties the two together (its `inLease` in `Step`: `checkQuorum && lead != None
//! && electionElapsed < electionTimeout`; the leader-side step-down is what makes it safe to
//! ignore candidates, and a separate option would only allow the unsafe half). A node that
//! leads, or that knows a leader it heard from less than `timeout_min` ago, *ignores* a
//! `REQUEST_VOTE` of a higher term: no reply, no change of term, no vote ("if a server
//! receives a RequestVote request within the minimum election timeout of hearing from a
//! current leader, it does not update its term or grant its vote"). A `PRE_VOTE` in that
//! window is answered negatively (PreVote's own rule, above; etcd ignores it instead: `replies=etcd`). etcd's
//! forced leadership transfer, the exception, does not exist here. Stickiness does not stop a
//! rejoining node whose term rose while it was cut off (without PreVote) from deposing the
//! leader: the leader's next heartbeat reaches it, its answer carries the higher term, and
//! the leader adopts it (Figure 2) — etcd notes that "this disruption is inevitable ... This
//! can be prevented with Pre-Vote phase". What stickiness changes is the election after it:
//! the followers still in their lease ignore the rejoining node's requests.
//!
//! Both options are off by default (the paper's basic algorithm).
//!
//! # Learners
//!
//! **`voters`** ([`RaftConfig::voters`], `K ≥ 1`): the nodes `1..=K` are **voters** and
//! `K+1..=n` **learners** — etcd-io/raft's learners (`raft.go`; a learner's `Progress` has
//! `IsLearner`) and hashicorp/raft's non-voters (`Suffrage: Nonvoter`), the usual answer to
//! "should all 51 nodes vote?": a few voters, many members that only follow. The default, and
//! any `K ≥ n`, makes every node a voter (the rules above, unchanged). The configuration is
//! static: no node is ever promoted or demoted. The rules:
//!
//! 1. **A learner never campaigns.** It arms no election timeout and ignores `on_suspect`:
//!    etcd-io/raft `tickElection` steps `MsgHup` only if `promotable()`, which is false for a
//!    learner (`!pr.IsLearner`), and `hup` refuses again; hashicorp/raft `runFollower`, on a
//!    heartbeat timeout, becomes a candidate only if `hasVote(latest, localID)` ("not part of
//!    a stable configuration or a non-voter, not triggering a leader election"). So a learner
//!    whose leader fails keeps naming it until a leader of a newer term reaches it.
//! 2. **A learner never votes.** A `REQUEST_VOTE` or `PRE_VOTE` that reaches one is *ignored*:
//!    no grant, no refusal, and its term is not adopted. No candidate sends one (rule 3); only
//!    a misconfigured or forged sender could, and then silence is the harmless answer: a
//!    refusal changes no tally (rule 4), and adopting the request's term would make the learner
//!    refuse the current leader's heartbeats and, through its answer's higher term, depose that
//!    leader — the disruption PreVote and stickiness exist to prevent. (etcd-io/raft's `Step`
//!    lets a learner vote — "learners must be allowed to cast votes" — but only for the race
//!    in which a configuration change has promoted it without its knowing; a static
//!    configuration has no such race. hashicorp/raft never asks a non-voter.)
//! 3. **Candidates ask the voters only.** `REQUEST_VOTE` and `PRE_VOTE` go to the other voters
//!    (etcd-io/raft `campaign` sends to `r.trk.Voters.IDs()`; hashicorp/raft `electSelf` and
//!    `preElectSelf` to the servers with `Suffrage == Voter`).
//! 4. **Majorities are of the voters**, `K / 2 + 1` counting itself: votes, pre-votes (and
//!    pre-vote denials: a pre-candidate gives up once more than `K - (K / 2 + 1)` voters deny)
//!    and CheckQuorum's contacts (etcd-io/raft `tracker.go` `QuorumActive` skips learners;
//!    hashicorp/raft `checkLeaderLease` counts voters, `quorumSize` is `voters / 2 + 1`). An
//!    answer from a learner is never counted.
//! 5. **The leader ships AppendEntries to every node**, learners included (etcd-io/raft
//!    `bcastAppend`/`bcastHeartbeat` visit every progress; hashicorp/raft
//!    `startStopReplication` replicates to every server). A learner follows that leader
//!    exactly as a voter does: it adopts newer terms from it, takes its entries and answers.
//!
//! The protocol states its rule as [`election_core::QuorumRule::Voters`]`(K)` (when `K < n`),
//! so the observer counts a quorum leader by a majority of the voters too.
//!
//! # Rule sets
//!
//! Five more options follow the rules of the Raft libraries in production, so that a
//! difference between this model and a library can be traced to one rule. Each defaults to
//! this crate's original rule; each variant's docs cite the source function it follows.
//!
//! - **`redraw`** ([`Redraw`]): `every_rearm` (default) or `per_term` — etcd-io/raft and
//!   tikv/raft-rs draw the randomized timeout only in `reset(term)`, when a node adopts a term
//!   or becomes follower, candidate or leader; heartbeats and granted votes restart the count
//!   towards the same drawn value, and a pre-candidacy keeps it.
//! - **`check_quorum_every`** ([`CheckQuorumEvery`]): `rearm` (default: the leader steps down
//!   the instant `timeout_min` has passed without a majority) or `timeout` — etcd and raft-rs
//!   check once per `timeout_min` whether a majority answered an AppendEntries since the last
//!   check, so a stranded leader steps down 1 to 2 `timeout_min` after it was cut off.
//! - **`follower`** ([`FollowerRule`]): `reset` (default: the paper's timer reset on every
//!   heartbeat) or `hashicorp` — hashicorp/raft's follower wakes every `[timeout_min,
//!   timeout_max]` (its `randomTimeout(HeartbeatTimeout)`, `HeartbeatTimeout` = `timeout_min`)
//!   and campaigns only if its last contact is `timeout_min` old, and a node that knows a
//!   leader rejects every vote and pre-vote without adopting the term. After a leader crash
//!   a hashicorp follower campaigns between `timeout_min` and about `timeout_min +
//!   timeout_max` after the last heartbeat, and its first RequestVote is rejected by every
//!   peer that has not woken since: after a leader crash (5 nodes, `lan`, 500 seeds) the
//!   median failover was 2.5 times `reset`'s without PreVote and 1.7 times with PreVote and
//!   CheckQuorum (their candidates do not raise the term while refused, so fewer split votes).
//! - **`append`** ([`AppendRule`]): `heartbeat` (default: a client entry rides on the next
//!   heartbeat) or `immediate` — etcd and raft-rs send an AppendEntries to every follower as
//!   soon as the leader appends an entry, so under a workload followers hear from the leader
//!   at the write rate and notice its crash sooner (about half a heartbeat period sooner with
//!   the default 10 ms writes and 50 ms heartbeats).
//! - **`replies`** ([`RepliesRule`]): `paper` (default: every request is answered, a stale
//!   one with the receiver's term so a stale leader steps down at once) or `etcd` — etcd and
//!   raft-rs ignore a stale message (a stale append is answered only with `check_quorum` or
//!   `pre_vote` on), and with `check_quorum` ignore a vote or pre-vote within the leader
//!   lease instead of refusing it.
//! - **`leader_send`** ([`LeaderSend`]): `persisted` (default: a leader's messages, like
//!   everyone's, leave once the record they depend on is durable) or `parallel` — raft-rs and
//!   etcd's server send a leader's messages before its own write (the thesis, §10.2.1), so a
//!   new leader is heard one fsync sooner.
//! - **`clock`** ([`Clock`]): `time` (default: timeouts and the leader lease are durations on
//!   the node's clock) or `ticks` — etcd counts them in whole ticks of each member's own
//!   `--heartbeat-interval` ticker (etcd-io/raft `tickElection`, `tickHeartbeat`, `Step`'s
//!   `inLease`; etcd `raftNode.start`'s `r.ticker.C`). The node arms one timer,
//!   [`RaftTimer::Tick`], on an [`election_core::Ticker`] started in its own phase at boot;
//!   the election timeout is a whole number of ticks drawn in `[E, timeout_max / heartbeat)`
//!   with `E = timeout_min / heartbeat`; the leader lease holds while fewer than `E` ticks have
//!   passed since the count last restarted; the leader heartbeats every tick and checks its
//!   quorum every `E` ticks (so `check_quorum_every = timeout`). A timeout of `k` ticks counted
//!   from a reset within a tick lasts `k - 1` to `k` periods, so a voter whose ticker is behind
//!   the first candidate's is still in its lease when a candidate that drew exactly `E` asks:
//!   it ignores the request, and the term is lost when enough voters do (etcd's log: "lease is
//!   not expired (remaining ticks: 1)").
//!
//! # Stable storage
//!
//! `current_term`, `voted_for` and the log's last position are written with
//! [`election_core::Io::persist`] whenever they change, and always *before* any message that depends on them is pushed into the same
//! `Io`: the `REQUEST_VOTE`s of a new term follow the record of the self-vote, a `VOTE` follows
//! the record of that vote, and a reply that reveals a newly adopted term follows that term's
//! record (a leader under [`LeaderSend::Parallel`] is the one exception: its messages go first
//! and its record follows in the same input). Drivers carry out an input's actions in order, so the record reaches stable storage
//! before the message leaves; an accepted `APPEND_ENTRIES` is answered after the shipped log
//! position's record. On recovery `on_start` restores all three, so a restarted node never
//! votes twice in a term and still refuses candidates less up to date than its log.
//! Everything else (role, leader, tallies) is volatile.
//!
//! # Leadership transfer (a planned stop)
//!
//! [`Protocol::on_handover`](election_core::Protocol::on_handover) (the node is about to be
//! stopped on purpose) makes a leader transfer its leadership as the thesis' §3.10 and
//! etcd-io/raft's `MsgTransferLeader` do (etcd's server sends it on a graceful stop,
//! `TryTransferLeadershipOnShutdown`; hashicorp/raft's `LeadershipTransfer`):
//!
//! 1. it picks the transferee: the most up-to-date other voter as far as it knows (the
//!    position its acknowledged AppendEntries of this term left it at; one that has not
//!    answered ranks last), the lowest id on ties, never a learner (hashicorp/raft
//!    `pickServer`);
//! 2. it refuses client entries from then on (etcd drops proposals while `leadTransferee` is
//!    set) and ships the transferee its whole log;
//! 3. when the transferee answers, it sends `TIMEOUT_NOW`; the transferee campaigns at once,
//!    without PreVote or its timeout (etcd `campaignTransfer`), and its RequestVotes carry
//!    `transfer`, which every voter grants even within its leader lease and which
//!    hashicorp's known-leader rejection lets through (`LeadershipTransfer` in the request);
//! 4. the old leader steps down when the new term reaches it.
//!
//! There is no abort timer (etcd aborts after an election timeout): the node is stopped
//! anyway. A node told it will be stopped never campaigns again before it boots.
//!
//! # Messages
//!
//! | kind | category | meaning | bytes |
//! |---|---|---|---|
//! | `REQUEST_VOTE` | Election | candidate asks for a vote; carries its last log position | 25 |
//! | `VOTE` / `VOTE_DENIED` | Reply | vote granted / refused (distinct kinds, so a trace shows grants) | 9 |
//! | `PRE_VOTE` | Election | pre-candidate asks whether it would get a vote; carries its last log position | 25 |
//! | `PRE_VOTE_GRANT` / `PRE_VOTE_DENIED` | Reply | pre-vote granted / refused | 9 |
//! | `APPEND_ENTRIES` | Heartbeat | leader heartbeat (and, the first time, announcement); ships the log up to a position | 25 |
//! | `APPEND_RESP` | Heartbeat | heartbeat answer | 9 |
//! | `TIMEOUT_NOW` | Election | a leader handing over tells the transferee to campaign now | 9 |
//!
//! Every message is a one-byte tag and a u64 term (9 bytes on the wire); the three that carry
//! a log position add its term and index (25 bytes).
mod config;
mod message;
mod node;
mod wire;

pub use config::{
    AppendRule, CheckQuorumEvery, Clock, FollowerRule, LeaderSend, RaftConfig, Redraw, RepliesRule,
};
pub use message::{LogPos, RaftMsg, RaftTimer};
pub use node::{Raft, Stable};

/// The highest term a node ever starts, adopts or sends, and the highest the wire decoder
/// accepts ([`MAX_WIRE_TERM`], the same bound): 2^48. One bound for both, so that every term a
/// node can send is one its peers accept (issue 47: with the decoder stopping at 2^48 and the
/// nodes at 2^64 − 2, a node that adopted 2^48 campaigned for 2^48 + 1, which every peer
/// refused). No cluster reaches it legitimately (one election a millisecond for 8,900 years).
/// A node whose term has reached it stays a follower rather than start an election it has no
/// term for, and a message carrying a larger term is refused by the decoder as
/// [`WireError::Invalid`] and ignored by the node. Forged terms are kept out by the live
/// driver's authentication, not by this bound: a member that sent [`MAX_TERM`] would still
/// end the cluster's elections.
///
/// [`WireError::Invalid`]: election_core::WireError::Invalid
pub const MAX_TERM: u64 = 1 << 48;

/// The highest term the wire decoder accepts: [`MAX_TERM`]. Log positions carry terms below
/// their message's, so they are bounded too.
pub const MAX_WIRE_TERM: u64 = MAX_TERM;
