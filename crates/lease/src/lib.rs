//! `election-lease`: lease-based leader election through a lock service — what Kubernetes'
//! `coordination.k8s.io/Lease` (client-go's `tools/leaderelection`), etcd leases, ZooKeeper
//! ephemeral nodes and Chubby's locks give the teams that use them — as a pure
//! [`election_core::Protocol`] state machine.
//!
//! # The endpoints
//!
//! Members `1..=n` are the candidates; the **store** is one more endpoint, id `n + 1` (a
//! *service endpoint*: see `election_core`'s docs), built by the same factory
//! ([`Lease::new`] decides by id). It holds a single [`Record`] — holder, acquire time, renew
//! time, lease duration, the transitions counter — and applies updates as compare-and-swap on
//! its version (Kubernetes' `resourceVersion`), one at a time: linearizable. In production the
//! store is itself replicated (etcd behind the API server); here it is one endpoint that
//! scenarios can crash, pause, slow or cut off, which is how a replicated store looks to its
//! clients when it loses quorum or stalls. It persists the record on every update (etcd is
//! durable), so a store that crashes and recovers keeps the lease.
//!
//! The store is **not** the workload's shared resource (`election_sim::workload`): a holder
//! that loses the store but still reaches the database is the classic lease split brain, and
//! only two separate endpoints can express it.
//!
//! # The rules (client-go `leaderelection.go`)
//!
//! - A non-holder reads the record every `retry × U[1, 1 + jitter]` (`wait.JitterUntil(…,
//!   RetryPeriod, JitterFactor = 1.2, sliding)`), the first time at once. A read still
//!   unanswered at the next one (a lost `ACQUIRE`, say) counts as timed out.
//! - Each time the record it reads differs from the last one it saw, it notes **its own local
//!   time** (`observedTime`); it never compares the record's timestamps with its clock.
//! - It may write itself in as holder only when nobody holds the lease, when the record names
//!   itself, or when `observedTime + leaseDuration` has passed on its own clock ("the lease is
//!   not valid"); the write is a compare-and-swap on the version it read, and increments
//!   `transitions` when the holder changes (`LeaderTransitions++`). The expiry is the
//!   member's **failure detector** ([`LeaseTimer::Expire`], armed for a lease duration at each
//!   observed change): with detection switched off a member keeps reading and following but
//!   never takes a held lease; a forced suspicion makes it read at once (it still waits out
//!   the lease). Reading is not the detector: it is also how members learn the holder, the
//!   lease's equivalent of receiving heartbeats.
//! - The holder renews every `retry` (the record's renew time changes, so watchers observe a
//!   change). A renewal round starts `retry` after the last success and retries every `retry`
//!   until it succeeds; if `renew_deadline` passes in the round (measured on the holder's own
//!   clock) it stops leading. So it leads for at most `retry + renew_deadline` of local time
//!   after its last successful renewal.
//! - With `release_on_cancel`, a holder that stops leading writes an empty holder (and a
//!   1 ms duration, as client-go's `release` writes 1 s), so that the others need not wait out
//!   the lease. A crashed holder releases nothing.
//! - A planned stop ([`Protocol::on_handover`](election_core::Protocol::on_handover): the
//!   process is about to be stopped, its elector's context cancelled) releases the lease
//!   whatever `release_on_cancel` says, as client-go does with `ReleaseOnCancel` (the setting
//!   a graceful shutdown is for); `release_on_cancel` keeps deciding the unplanned loss at
//!   the renew deadline. The member then neither renews nor acquires until it boots again.
//! - A holder whose renewal comes back with another holder's record is deposed at once.
//! - The fencing token is `transitions`, reported as the epoch: a new holder's epoch is higher
//!   than every earlier holder's, so the workload's fencing works unchanged.
//!
//! # Roles and messages
//!
//! The holder is [`Role::Leader`](election_core::Role); a member with an `ACQUIRE` in flight is
//! a candidate; every other member is a follower that believes in the holder of the record it
//! observed while that record is valid by its own clock. The store always reports a leaderless
//! follower, and drivers leave service endpoints out of every leadership metric.
//!
//! | message | category | why |
//! |---|---|---|
//! | `GET`, `RECORD` | heartbeat | how a member watches the holder's liveness |
//! | `RENEW`, `RENEW_OK`/`_CONFLICT` | heartbeat | the holder keeping its authority alive |
//! | `ACQUIRE` | election | an attempt to become leader |
//! | `ACQUIRE_OK`/`_CONFLICT` | reply | its answer |
//! | `RELEASE` | leader | tells everyone the lease is free (an announcement of no leader) |
//! | `RELEASE_OK`/`_CONFLICT` | reply | its answer |
//!
//! # Clocks: what a lease tolerates
//!
//! client-go's package doc says it: the implementation "is tolerant to arbitrary clock skew,
//! but is not tolerant to arbitrary clock skew rate", and the tolerated ratio is set by
//! `LeaseDuration` against `RenewDeadline`. Counting the renew loop's structure exactly:
//!
//! With its clock at rate `r` (local seconds per real second), a holder cut off from the store
//! keeps leading for `(retry + renew_deadline) / r` of real time after its last successful
//! renewal. A member that observed that renewal did so no earlier than the renewal and then
//! waits `duration` on its own clock, plus up to one poll interval. So with
//! `r ≥ (retry + renew_deadline) / duration` ([`LeaseConfig::tolerated_clock_rate`], 0.8 for
//! the defaults and for Kubernetes' 15 s / 10 s / 2 s) two holders never act at once; below it
//! they can, and once `(retry + renew_deadline) / r` exceeds `duration` plus the observation
//! lag and a poll (two jittered retries, `2 × 2.2 × retry`) plus the store's round trips, they
//! always do.
#![warn(missing_docs, unreachable_pub)]

mod config;
mod message;
mod node;
mod wire;

pub use config::{LeaseConfig, JITTER_FACTOR, SERVICES};
pub use message::{LeaseMsg, LeaseTimer, Op, Record, RECORD_BYTES};
pub use node::Lease;

#[cfg(test)]
mod tests;
