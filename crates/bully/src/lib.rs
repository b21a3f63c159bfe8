//! `election-bully`: the bully election of Garcia-Molina, "Elections in a Distributed
//! Computing System" (IEEE Trans. Computers, 1982), as a pure state machine implementing
//! [`election_core::Protocol`] — faithful by default, with the fixes later protocols added
//! available as options.
//!
//! # The algorithm
//!
//! Ids are `1..=n` and the highest live id must win. The leader sends HEARTBEAT to every other
//! node each `timing.heartbeat`. A follower suspects the leader after
//! `timing.detect_timeout + U[0, timing.detect_jitter]` without a sign of life (jitter 0: every
//! follower notices at once, the thundering herd; large jitter: one notices first); a forced
//! suspicion does the same. A suspecting node **starts an election**: it sends ELECTION to
//! every higher id and waits `t_elec`. If no OK arrives it **declares** itself coordinator:
//! COORDINATOR to every lower id, then heartbeats. If an OK arrives it **yields** and waits
//! `t_coord` for a COORDINATOR; if none comes (the higher node died mid-election) it starts
//! again. A node receiving ELECTION from a lower id answers OK and starts its own election
//! unless it is already in one (electing or yielded). A sitting leader is the outcome of an
//! election already held: it answers OK and re-sends COORDINATOR to that node alone. A
//! COORDINATOR from a higher id is accepted (a leader steps down), and so is a HEARTBEAT from
//! a higher id unless the node follows an even higher leader (whose own detector decides).
//! A COORDINATOR or HEARTBEAT from a lower id makes the node **bully back** by starting an
//! election; this is also how two leaders meet again after a partition heals (the highest
//! declares one message flight before the lower leader hears it, so the handover shows two
//! leaders for that flight). The highest id, having nobody to ask, declares as soon as it
//! starts an election.
//!
//! # Planned stop (RESIGN)
//!
//! On [`Protocol::on_handover`](election_core::Protocol::on_handover) (the node is about to be
//! stopped on purpose) a coordinator sends RESIGN to every other node and from then on takes
//! no part: it answers no ELECTION, so nobody yields to it. A node that receives RESIGN elects
//! at once, without waiting for its failure detector, and leaves the resigner out of its
//! elections until it hears from it again; the next highest id therefore declares at once.
//!
//! # Timeouts
//!
//! * `t_elec` (default 20 ms: a LAN round trip plus slack) — the wait for OK. It must exceed
//!   a round trip, or a candidate declares over a live higher node.
//! * `t_coord` (default 2 × `t_elec`) — the wait for COORDINATOR after yielding; it must cover
//!   the higher node's own `t_elec`. Without it, a candidate whose higher node crashes after
//!   answering OK would wait forever.
//! * the shared [`election_core::Timing`] — heartbeat period and failure-detection window.
//!
//! # Options (all off by default)
//!
//! * `rejoin` — [`Rejoin::Eager`] (the paper): a booting or recovered node starts an election,
//!   so a returning highest id takes leadership back. [`Rejoin::Defer`]: it first listens for
//!   [`BullyConfig::listen_window`] (`detect_timeout`) and joins as follower the leader whose
//!   HEARTBEAT or COORDINATOR it hears, even a lower one; it elects only if it hears none. This
//!   avoids the churn a flapping high id causes; any later election still returns leadership
//!   to the highest id.
//! * `quorum` — *failure mode: split brain under partition* (each side elects its highest
//!   node). A candidate also sends its ELECTION, stamped with the round's start time, to every
//!   lower id as a probe; lower nodes answer ACK (which does not make it yield). It declares
//!   only if a majority of the whole cluster, itself included, answered that round (the
//!   highest id declares as soon as they have); otherwise it waits `t_coord` and tries again.
//!   This is the election half of the fix. The other half is a **check-quorum lease**: followers
//!   answer each accepted HEARTBEAT with HEARTBEAT_ACK echoing its send time, and a leader steps
//!   down (starts an election it cannot win without a majority) once the acknowledgements of a
//!   majority are all older than `detect_timeout`. Since a follower resets its detector on
//!   receiving a heartbeat, which is after its send time, the old leader of a cleanly
//!   partitioned minority steps down before any majority-side follower can suspect it.
//! * `epoch` — *failure mode: a deposed leader acting on stale authority.* Every message
//!   carries the sender's epoch; a node adopts any higher epoch it sees and persists it
//!   ([`Protocol::Persist`](election_core::Protocol::Persist) is the epoch), a declaring node
//!   takes the highest epoch it knows plus one, COORDINATOR and HEARTBEAT from an older epoch
//!   are ignored (a fencing token), and a leader that learns of a newer epoch holds a new
//!   election. The epoch is reported in [`Status::epoch`](election_core::Status::epoch).
//!
//! # Exact message counts (constant latency `L`, reliable network, `t_elec > 2L`, `t_coord > t_elec`)
//!
//! Leader `n` crashed; the live nodes are `1..n-1`; heartbeats are not counted; messages sent
//! to the dead node count (they are sent, the network drops them).
//!
//! * **Only node `n-1` suspects:** it sends ELECTION to `n` (1 message), gets no OK, and sends
//!   COORDINATOR to `1..n-2`: **1 ELECTION, 0 OK, `n-2` COORDINATOR**.
//! * **Only node 1 suspects (no detector fires):** node 1 sends ELECTION to `2..n` at `T`; at
//!   `T+L` every live `j` in `2..n-1` answers OK and starts its own election, sending `n-j`
//!   ELECTIONs; at `T+2L` each `j` receives the ELECTIONs of `2..j-1` and answers OK without
//!   restarting (it is already in an election). So ELECTION = Σ_{j=1}^{n-1} (n-j) =
//!   **n(n-1)/2**, OK = Σ_{j=2}^{n-1} (j-1) = **(n-1)(n-2)/2**, and node `n-1` (no OK) declares
//!   with **n-2** COORDINATOR at `T+L+t_elec`, before any yielded node's `t_coord` runs out.
//!   Total **n² − n − 1** (n = 5: 10 + 6 + 3 = 19).
//! * **Cascade** (node 1 suspects at `T`, node `n-1` crashes after answering OK, i.e. in
//!   `(T+2L, T+L+t_elec)`): node `n-2` yields on `n-1`'s OK at `T+3L`, its `t_coord` runs out
//!   at `T+3L+t_coord`, its second election finds nobody higher and it declares at
//!   `T+3L+t_coord+t_elec`; everyone names it at **`T + 4L + t_coord + t_elec`** (64 ms with
//!   the defaults and `L` = 1 ms).
mod config;
mod message;
mod node;
mod wire;

pub use config::{BullyConfig, Rejoin};
pub use message::{BullyMsg, BullyTimer};
pub use node::Bully;

/// The highest epoch the wire decoder accepts (`epoch` option): 2^48. No cluster reaches it
/// legitimately (one election a millisecond for 8,900 years); without the bound a single
/// forged datagram carrying an epoch near 2^64 would be adopted by every node it reached, and
/// the next coordinator would have no epoch left to declare in. It is also the highest epoch a
/// coordinator declares, so that every epoch a node sends, its peers accept (issue 47: a node
/// at 2^48 declared 2^48 + 1, which every peer refused).
pub const MAX_WIRE_EPOCH: u64 = 1 << 48;

#[cfg(test)]
mod tests;
