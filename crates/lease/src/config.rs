//! The lease's timing and options.

use std::time::Duration;

use election_core::NodeId;

/// client-go's `JitterFactor` for a candidate's retries (`leaderelection.JitterFactor`).
pub const JITTER_FACTOR: f64 = 1.2;

/// The default restart delay of an exited process: the kubelet's first container restart
/// back-off, 10 s (`pkg/kubelet/kubelet.go`, `backOffPeriod`), divided by 100 like the other
/// scaled defaults.
pub const RESTART: Duration = Duration::from_millis(100);

/// The restart delay with Kubernetes' own timings: the kubelet's 10 s back-off.
pub const RESTART_K8S: Duration = Duration::from_secs(10);

/// How long a Kubernetes client stays on a connection to an API server that stopped
/// answering: client-go's HTTP/2 health check (`k8s.io/apimachinery/pkg/util/net/http.go`,
/// `SetTransportDefaults` → `configureHTTP2Transport`) pings a connection that has received no
/// frame for `ReadIdleTimeout` (`readIdleTimeoutSeconds()`, 30 s) and closes it when the ping
/// is unanswered for `PingTimeout` (`pingTimeoutSeconds()`, 15 s): 45 s. Until then every
/// request, renewals included, goes out on the dead connection (kubernetes/kubernetes#125530
/// reports leader-election clients stuck about 30 s before they even retry).
pub const RECONNECT_K8S: Duration = Duration::from_secs(45);

/// How many service endpoints the protocol needs besides the `n` members: one, the store.
pub const SERVICES: u32 = 1;

/// The lease protocol's configuration, shared by every node of a cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct LeaseConfig {
    /// The number of members (candidates), ids `1..=n`. The store is `n + 1`.
    pub n: u32,
    /// `LeaseDuration`: how long a non-holder waits, on its own clock, after it last saw the
    /// record change before it may take the lease.
    pub duration: Duration,
    /// `RenewDeadline`: how long the holder keeps trying to renew (from the start of a renewal
    /// round, `retry` after its last success) before it stops leading.
    pub renew_deadline: Duration,
    /// `RetryPeriod`: the holder renews every `retry`; a non-holder reads the record every
    /// `retry × U[1, 1 + jitter]`.
    pub retry: Duration,
    /// `JitterFactor` of a non-holder's retries (client-go: 1.2).
    pub jitter: f64,
    /// `ReleaseOnCancel`: a holder that stops leading writes an empty holder, so that the
    /// others need not wait out the lease.
    pub release_on_cancel: bool,
    /// How many endpoints the store has, ids `n + 1 ..= n + stores`: 1, the store this crate
    /// runs itself; more, a replicated store whose endpoints another crate builds (the
    /// runner's `lease.store_nodes`: a Raft group, `election-store`). A member sends each
    /// request to one endpoint and moves to the next when a request there has gone
    /// unanswered for [`Self::reconnect`] by the time the next one is due.
    pub stores: u32,
    /// How long a member keeps sending over its connection to one store endpoint while a
    /// request there stays unanswered, on its own clock, before it gives the connection up and
    /// moves to the next endpoint. Zero (the default) moves at the next request after one that
    /// went unanswered, as etcd's client balancer moves off an endpoint that fails its
    /// requests. Kubernetes' clients ([`RECONNECT_K8S`]) keep one long-lived HTTP/2
    /// connection to an API server and give it up only when its health check fails: when the
    /// server's node vanishes without closing the connection, every request in between is
    /// lost on it.
    pub reconnect: Duration,
    /// How a non-holder decides that the holder's lease expired ([`Expiry`]).
    pub expiry: Expiry,
    /// Acquisitions are compare-and-swap on the version (client-go); `false`: blind writes
    /// (see the crate docs, "Lease variants").
    pub cas: bool,
    /// What a holder's process does when it stops leading ([`OnLoss`]).
    pub on_loss: OnLoss,
    /// With [`OnLoss::Exit`], how long the process stays down before it starts again: drawn
    /// uniformly from `[restart.0, restart.1]` at each exit, on the node's generator.
    pub restart: (Duration, Duration),
}

/// How a non-holder decides that the holder's lease expired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Expiry {
    /// client-go (`tryAcquireOrRenew`: `le.observedTime.Add(le.config.LeaseDuration)
    /// .After(now)`): a lease duration, on the member's **own** clock, after it last saw the
    /// record change. Only the member's clock *rate* matters.
    #[default]
    Observed,
    /// The record's `renew` time, written from the **holder's** clock, plus the duration,
    /// against the member's own clock (hendrikmaus/kube-leader-election, `src/lease.rs`,
    /// `LeaseLock::has_lease_expired`: `now > renew_time + lease_duration_seconds`). The two
    /// clocks' *offset* matters: a member ahead by more than the duration takes a lease the
    /// holder is still renewing; one behind waits the offset longer after a crash.
    RenewTime,
}

impl Expiry {
    /// The parameter values, in order.
    pub const NAMES: &'static [&'static str] = &["observed", "renew_time"];

    /// The variant named `name`.
    pub fn from_name(name: &str) -> Option<Expiry> {
        match name {
            "observed" => Some(Expiry::Observed),
            "renew_time" => Some(Expiry::RenewTime),
            _ => None,
        }
    }
}

/// What a holder's process does when it stops leading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnLoss {
    /// client-go's `OnStoppedLeading` callback returns and the member goes back to
    /// candidacy (reading the record every retry).
    #[default]
    Continue,
    /// The process exits, as kube-controller-manager and kube-scheduler do
    /// (`OnStoppedLeading`: `klog.FlushAndExit(klog.ExitFlushTimeout, 1)`), and its
    /// supervisor starts it again after [`LeaseConfig::restart`]: down meanwhile (no timers,
    /// every message ignored, its volatile state gone), then a fresh start.
    Exit,
}

impl OnLoss {
    /// The parameter values, in order.
    pub const NAMES: &'static [&'static str] = &["continue", "exit"];

    /// The variant named `name`.
    pub fn from_name(name: &str) -> Option<OnLoss> {
        match name {
            "continue" => Some(OnLoss::Continue),
            "exit" => Some(OnLoss::Exit),
            _ => None,
        }
    }
}

impl LeaseConfig {
    /// The defaults, scaled to the failure-detection window every protocol shares
    /// (`Timing::default()`: suspicion 150–300 ms after the last sign of life): Kubernetes'
    /// defaults divided by 100, so the ratios stay those of production — duration 150 ms
    /// (= `detect_timeout`), renew deadline 100 ms, retry 20 ms.
    pub fn new(n: u32) -> Self {
        LeaseConfig {
            n,
            duration: Duration::from_millis(150),
            renew_deadline: Duration::from_millis(100),
            retry: Duration::from_millis(20),
            jitter: JITTER_FACTOR,
            release_on_cancel: false,
            stores: 1,
            expiry: Expiry::Observed,
            cas: true,
            on_loss: OnLoss::Continue,
            restart: (RESTART, RESTART),
            reconnect: Duration::ZERO,
        }
    }

    /// Kubernetes' defaults (kube-scheduler, kube-controller-manager): 15 s, 10 s, 2 s.
    pub fn k8s(n: u32) -> Self {
        LeaseConfig {
            duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry: Duration::from_secs(2),
            restart: (RESTART_K8S, RESTART_K8S),
            reconnect: RECONNECT_K8S,
            ..LeaseConfig::new(n)
        }
    }

    /// The store's (first) id: the first id after the members.
    pub fn store(&self) -> NodeId {
        NodeId(self.n + 1)
    }

    /// The id of the store's endpoint number `k` (0-based; taken modulo [`Self::stores`]).
    pub fn store_endpoint(&self, k: u32) -> NodeId {
        NodeId(self.n + 1 + k % self.stores.max(1))
    }

    /// Is `id` one of the store's endpoints?
    pub fn is_store_endpoint(&self, id: NodeId) -> bool {
        id.0 > self.n && id.0 - self.n <= self.stores
    }

    /// The slowest holder clock rate (local seconds per real second) at which a holder cut off
    /// from the store is sure to stop leading before anyone else may take the lease:
    /// `(retry + renew_deadline) / duration`. The holder stops `retry + renew_deadline` of its
    /// own time after its last successful renewal, which a clock at rate `r` stretches to
    /// `(retry + renew_deadline) / r` of real time; a member that saw that renewal waits at
    /// least `duration` of its own (rate-1) time, and saw it no earlier than the renewal. So at
    /// `r ≥` this ratio two holders never overlap; below it they can (see the crate docs for
    /// how far below they must). 0.8 for both the defaults and `k8s`.
    pub fn tolerated_clock_rate(&self) -> f64 {
        (self.retry + self.renew_deadline).as_secs_f64() / self.duration.as_secs_f64()
    }

    /// Check client-go's own rules (`NewLeaderElector`): `duration > renew_deadline >
    /// jitter × retry`, every period positive, `n ≥ 1`.
    pub fn validate(&self) -> Result<(), String> {
        if self.n == 0 {
            return Err("n must be at least 1".into());
        }
        if self.stores == 0 {
            return Err("lease.store_nodes must be at least 1".into());
        }
        if self.retry.is_zero() {
            return Err("lease.retry_ms must be positive".into());
        }
        if !(self.jitter.is_finite() && self.jitter >= 0.0) {
            return Err(format!(
                "lease jitter {} must be finite and >= 0",
                self.jitter
            ));
        }
        if self.duration <= self.renew_deadline {
            return Err(format!(
                "lease.duration_ms ({}) must be greater than lease.renew_deadline_ms ({})",
                ms(self.duration),
                ms(self.renew_deadline)
            ));
        }
        if self.renew_deadline.as_secs_f64() <= self.jitter * self.retry.as_secs_f64() {
            return Err(format!(
                "lease.renew_deadline_ms ({}) must be greater than {} × lease.retry_ms ({})",
                ms(self.renew_deadline),
                self.jitter,
                ms(self.retry)
            ));
        }
        if self.restart.0 > self.restart.1 {
            return Err(format!(
                "lease.restart_ms ({}-{}) must have LO <= HI",
                ms(self.restart.0),
                ms(self.restart.1)
            ));
        }
        Ok(())
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
