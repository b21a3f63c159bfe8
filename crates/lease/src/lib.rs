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
//! With [`LeaseConfig::stores`] > 1 the store is replicated: endpoints `n + 1 ..= n + stores`,
//! built by another crate (`election-store`: a Raft group that applies [`Record::answer`], the
//! same compare-and-swap, in its log's order). A member then sends each request to one endpoint
//! and moves to the next when a request there has gone unanswered for
//! [`LeaseConfig::reconnect`] by the time the next is due: at once by default, as etcd's client
//! balancer moves off an endpoint that fails; 45 s for Kubernetes' clients, which keep a silent
//! API server's HTTP/2 connection until its health check fails. It accepts answers from any
//! endpoint. With one endpoint none of this changes anything.
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
//!   time** (`observedTime`); it never compares the record's timestamps with its clock
//!   (`expiry = renew_time` does: see "Lease variants").
//! - It may write itself in as holder only when nobody holds the lease, when the record names
//!   itself, or when `observedTime + leaseDuration` has passed on its own clock ("the lease is
//!   not valid"); the write is a compare-and-swap on the version it read (a blind write with
//!   `cas = false`), and increments
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
//! # Lease variants (issue #31)
//!
//! Three rules other lease libraries ship, each an option of [`LeaseConfig`] whose default is
//! client-go's rule above:
//!
//! - **`expiry`** ([`Expiry`]). `observed` (default) is client-go's: a member measures the
//!   lease duration on its own clock from the moment it saw the record change, so only its
//!   clock's *rate* matters. `renew_time` is hendrikmaus/kube-leader-election's
//!   (`src/lease.rs`, `LeaseLock::has_lease_expired`: `Utc::now() > renew_time +
//!   lease_duration_seconds`): the member compares the renew time the holder wrote **from its
//!   own clock**, plus the duration, with its own clock, so the clocks' *offset* matters. A
//!   member whose clock is ahead of the holder's by more than the duration finds a lease that
//!   is being renewed expired and takes it: two holders act at once until the old one's next
//!   renewal fails, and only fencing keeps its writes out. A member whose clock is behind waits
//!   the offset longer after a crash. The failure detector ([`LeaseTimer::Expire`]) is then
//!   armed for `renew + duration` on the member's clock (at once if that has passed), and a
//!   newer record that is just as expired on arrival does not re-arm a detector that already
//!   fired.
//! - **`cas`** (default `true`). `false` is kube-leader-election's writes: JSON merge patches
//!   without a `resourceVersion` (`acquire_lease`, `renew_lease`, `step_down`), which the API
//!   server applies whatever the version. An `ACQUIRE` is applied unconditionally, last writer
//!   wins, and both writers are told they won: two members that find the lease expired at once
//!   both lead, with the **same** transitions count (one epoch, two holders: fencing cannot
//!   tell them apart). A `RENEW` or `RELEASE` is applied while the record still names the
//!   writer — the library reads the lease and checks `are_we_leading` first; read and write are
//!   one step here, as client-go's read and compare-and-swap are — and a renewal writes only
//!   the renew time and the duration. So the overwritten winner learns it lost at its next
//!   renewal, a retry later.
//! - **`on_loss`** ([`OnLoss`]). `continue` (default): client-go's `OnStoppedLeading` returns
//!   and the member reads the record again every retry. `exit`: the process exits, as
//!   kube-controller-manager's and kube-scheduler's `OnStoppedLeading` do
//!   (`cmd/kube-controller-manager/app/controllermanager.go`,
//!   `cmd/kube-scheduler/app/server.go`: `klog.FlushAndExit(klog.ExitFlushTimeout, 1)`), after
//!   the release if `release_on_cancel` (client-go releases at the end of `renew`, before `Run`'s
//!   deferred `OnStoppedLeading`), and its supervisor starts it again after `restart` (a
//!   uniform draw from a range; default 100 ms, the kubelet's first restart back-off of 10 s,
//!   `pkg/kubelet/kubelet.go` `backOffPeriod`, divided by 100 like the scaled timings; 10 s
//!   with [`LeaseConfig::k8s`]). While down the member arms no timer, reads nothing and ignores
//!   every message; it reports a follower with no leader and no epoch; its volatile state is
//!   gone (members persist nothing). Then it starts as [`election_core::Protocol::on_start`]
//!   does. The exit is modelled inside the member ([`LeaseTimer::Restart`]) rather than as a
//!   driver crash so that the protocol stays pure and both drivers run it unchanged: to the
//!   network and the store an exited process and a crashed one look the same. The node's
//!   workload is the driver's and stops as for any departure from the leader role
//!   (`leader.stop_lag_ms`; `klog.FlushAndExit` itself lets the other goroutines run while it
//!   flushes, for up to `ExitFlushTimeout`).
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
mod config;
mod message;
mod node;
mod wire;

pub use config::{
    Expiry, LeaseConfig, OnLoss, JITTER_FACTOR, RECONNECT_K8S, RESTART, RESTART_K8S, SERVICES,
};
pub use message::{LeaseMsg, LeaseTimer, Op, Record, RECORD_BYTES};
pub use node::Lease;

#[cfg(test)]
mod tests;
