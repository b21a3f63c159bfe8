//! `election-ring`: Chang & Roberts' ring leader election (CACM 22(5), 1979), exact in the
//! classic model and, with `hop_acks`, able to route around crashed nodes.
//!
//! # The algorithm
//!
//! The `n` nodes form a unidirectional logical ring whose layout is the configuration's
//! [`Arrangement`] (`ascending`: the successor of `i` is `i + 1`, wrapping; `descending`: `i −
//! 1`, wrapping; `random`: a permutation drawn from a seed). Every node computes the whole ring
//! order ([`ring_order`]) from the shared [`RingConfig`].
//!
//! - An **initiator** marks itself *participant* and sends `ELECTION(own id)` to its successor.
//! - On `ELECTION(j)`: if `j > own`, the node forwards it and marks itself participant; if
//!   `j < own` and it is not a participant, it replaces the id with its own, marks itself and
//!   forwards; if `j < own` and it is already a participant, it discards the message; if
//!   `j == own`, its id went all the way round, so it is the largest: it becomes **leader** and
//!   sends `ELECTED(own id)` to its successor.
//! - On `ELECTED(l)`: the node records `l` as leader, clears its participant mark and forwards
//!   the message, until it returns to `l`, which stops it.
//!
//! Choices the 1979 paper leaves open, made here:
//! - **Status.** A node reports [`Role::Candidate`](election_core::Role) while it is a
//!   participant, [`Role::Leader`](election_core::Role) from the moment it sees its own id
//!   return, and [`Role::Follower`](election_core::Role) otherwise; its leader is the recorded
//!   one; the epoch is `None`. A node **forgets its leader when it becomes a participant**: it
//!   is taking part in choosing a new one.
//! - **Failure detection and boot**, the same as every protocol of the workbench: the leader
//!   sends `HEARTBEAT` directly to every node every `timing.heartbeat`; a follower arms its
//!   failure detector ([`RingTimer::Detect`]) for `detect_timeout + U[0, detect_jitter]` on boot
//!   and after every `HEARTBEAT` or `ELECTED`, and initiates an election when it fires or when
//!   a scenario forces suspicion. Participants and the leader do not run the detector. A
//!   node that boots (first boot or recovery; no election state survives a crash) **does not
//!   start an election at once**: it waits one detection window for a heartbeat, so a cold
//!   start elects when the first detector fires, and a recovered node simply follows the
//!   current leader (a recovered higher id does not take over, unlike bully).
//! - **Heartbeats teach leaders.** A follower or participant that receives `HEARTBEAT(l)`
//!   records `l`, leaves any election it was in and re-arms its detector. A leader that hears
//!   `HEARTBEAT` or `ELECTED` of a higher leader follows it; of a lower one (two leaders after
//!   a healed partition), it heartbeats everyone at once (and does not pass a lower `ELECTED`
//!   on), so the rival steps down.
//! - **A live leader that receives `ELECTION(j)`** (someone missed its heartbeats): if `j` is
//!   lower, the result is known, so it stops the message and heartbeats every node at once,
//!   which ends every participant's election; if `j` is higher, it steps down and
//!   participates (the higher node will win). `ELECTED` is sent only by a newly elected
//!   leader.
//!
//! # Planned stop (LEAVING)
//!
//! On [`Protocol::on_handover`](election_core::Protocol::on_handover) (the node is about to be
//! stopped on purpose) a leader announces its departure: LEAVING to its successor, which
//! starts an election at once instead of waiting for its detector; the leaving node competes
//! in nothing from then on and relays every ELECTION and ELECTED unchanged, so the ring stays
//! whole until it is stopped. The election costs one LEAVING more than a single initiator's.
//!
//! # What counts as a message
//!
//! Every `ELECTION` hop (category election), every `ELECTED` hop (leader), every `ACK`
//! (reply) and every `HEARTBEAT` (heartbeat) is one message: a send to one node. With
//! `hop_acks` off and every node initiating at the same instant over a fault-free,
//! constant-latency network, Chang & Roberts' counts hold exactly: with ids increasing along
//! the direction of travel ([`Arrangement::Ascending`]) `2n − 1` ELECTION messages (each node's
//! message dies at its successor, `n`'s goes round), with ids decreasing along it
//! ([`Arrangement::Descending`]) `n(n+1)/2` (the message of `i` travels `i` hops), and `n`
//! ELECTED in both. A single initiator `k` costs `n + d(k, n)` ELECTION messages, where
//! `d(k, n)` is the number of hops from `k` to node `n` (its candidacy grows to `n` on the
//! way, then `n`'s travels the full ring), and `n` ELECTED.
//!
//! # Fault tolerance (`hop_acks`, on by default) and its timeouts
//!
//! The 1979 algorithm stops if one node on the ring is dead. With `hop_acks`:
//! - **Hop acknowledgements.** Every `ELECTION` and `ELECTED` carries a hop number, and the
//!   receiver answers `ACK(seq)` to the sender. If no ACK arrives within **`t_hop`** (default
//!   20 ms), the sender skips the silent node and resends to the next one in ring order
//!   (successor + 1, + 2, ...); each attempt waits `t_hop` again. A message that skipped
//!   every other node has come back to its sender: `ELECTION(own id)` makes it leader of its
//!   reachable arc (a partition gives each arc its own leader); anything else is dropped.
//! - **Dead owners.** If the silent node is the one whose id the message carries, the
//!   message is dropped: an `ELECTION` for a dead candidate would circle forever, an
//!   `ELECTED` for a dead leader has reached everyone. A participant that drops a dead
//!   candidate's `ELECTION` starts an election of its own at once.
//! - **Second copies.** A sender that skips a successor whose ACK was only late or lost
//!   leaves two copies of the message on the ring, and the network may duplicate too. So
//!   with `hop_acks` every ELECTION and ELECTED carries an instance number ([`Hop::round`])
//!   chosen by its originator, increasing over its lifetime (the incarnation, persisted as
//!   the node's only stable state, fills the high bits), and a node handles only instances
//!   newer than any it has handled from the same originator. Without this a lossy ring
//!   multiplies copies exponentially.
//! - **Election bound.** A node that sent an `ELECTION` (initiated, forwarded or replaced)
//!   and neither sees an `ELECTED` (or its own id return, or a heartbeat) within
//!   **`2 · n · t_hop`** ([`RingConfig::restart_bound`]) starts again as an initiator. Each
//!   ring position costs at most `t_hop`, and the election a node joins ends within `2n`
//!   positions (the largest live id's message reaches its owner within `n` positions of
//!   wherever the node is, goes round in `n`, and ELECTED reaches the node within `n − d`
//!   more), so on a loss-free network the bound fires only when an election was lost with a
//!   crashed node. Its cost: a crashed node on the ring adds `t_hop` to every lap that passes
//!   it (ELECTION and ELECTED laps alike); a candidate that dies with its id in flight costs
//!   one `t_hop` if the node before it notices, and up to the whole bound otherwise.
//!
//! A lost message is indistinguishable from a dead successor, so under message loss a live
//! node may be skipped, and a lower id than the largest may win; heartbeats then bring every
//! node to that leader. With `hop_acks` off there are no ACKs, no skipping, no instance
//! numbers and no restart: the 1979 algorithm, which assumes reliable channels without
//! duplication. A one-node ring elects itself without sending anything.
//!
//! # Options
//!
//! [`RingConfig`]: `n`, `timing` (shared heartbeat and detection window), `arrangement`,
//! `hop_acks`, `t_hop`.
mod config;
mod message;
mod node;
mod wire;

pub use config::{ring_order, Arrangement, RingConfig};
pub use message::{Hop, RingMsg, RingTimer};
pub use node::Ring;
